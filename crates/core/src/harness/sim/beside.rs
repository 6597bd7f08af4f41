//! The models fed beside the simulated caches: the data TLB (`--tlb`) and the hardware-prefetch
//! model (`--prefetch on`), each given the very stream the caches count, access by access.

use crate::cache::AccessSink;
use crate::cache::prefetch::PrefetchModel;
use crate::cache::tee::feed_all;
use crate::cache::tlb::TlbSim;

/// Runs `feed` on a sink that passes every access to `sink` (the caches), then to `tlb` and
/// `prefetch` where given.
pub fn feed_beside<R>(
    sink: &mut dyn AccessSink,
    tlb: Option<&mut TlbSim>,
    prefetch: Option<&mut PrefetchModel>,
    feed: impl FnOnce(&mut dyn AccessSink) -> R,
) -> R {
    let mut beside: Vec<&mut dyn AccessSink> = Vec::with_capacity(2);
    if let Some(tlb) = tlb {
        beside.push(tlb);
    }
    if let Some(model) = prefetch {
        beside.push(model.sink());
    }
    feed_all(sink, &mut beside, feed)
}
