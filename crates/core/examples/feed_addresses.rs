//! Addresses of your own, fed straight to the cache simulator: a column walk of a 1024 × 1024
//! f64 matrix at two leading dimensions, every load given as (address, bytes), on this
//! machine's cache levels with the 3C split. This is what `stridelab sim --trace` does with a
//! file; here the stream is a loop.
//!
//! Run: `cargo run --release -p stridelab-core --example feed_addresses`

use stridelab_core::cache::AccessSink;
use stridelab_core::cache::geometry::Geometry;
use stridelab_core::cache::sim::{Hierarchy, Policy};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let levels = Geometry::detect().data_levels();
    if levels.is_empty() {
        return Err("this machine reports no cache levels".into());
    }
    for ld in [1024u64, 1032] {
        // LRU, with compulsory / capacity / conflict classified.
        let mut caches = Hierarchy::new(&levels, Policy::LRU, true)?;
        let base = 1u64 << 32;
        for j in 0..1024u64 {
            for i in 0..1024u64 {
                caches.load(base + (i * ld + j) * 8, 8);
            }
        }
        println!("ld = {ld} (simulated):");
        for level in caches.report() {
            let s = &level.stats;
            println!(
                "  {:<4} {:>9} accesses {:>9} misses: {} compulsory, {} capacity, {} conflict",
                level.name,
                s.accesses(),
                s.misses(),
                s.compulsory,
                s.capacity,
                s.conflict
            );
        }
    }
    Ok(())
}
