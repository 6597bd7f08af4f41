//! [`Tee`]: one access stream fed to two sinks, in the same order, so a model beside the cache
//! simulator (a prefetcher, a TLB) sees exactly the accesses the simulator counts; [`feed_all`]
//! chains as many as there are.

use super::{AccessSink, Walk};

/// Forwards every access to `first`, then to `second`. Runs and moves stay runs and moves on
/// both sides, so each sink keeps its own fast path for them.
pub struct Tee<'a> {
    pub first: &'a mut dyn AccessSink,
    pub second: &'a mut dyn AccessSink,
}

impl AccessSink for Tee<'_> {
    fn load(&mut self, addr: u64, len: u32) {
        self.first.load(addr, len);
        self.second.load(addr, len);
    }

    fn store(&mut self, addr: u64, len: u32) {
        self.first.store(addr, len);
        self.second.store(addr, len);
    }

    fn modify(&mut self, addr: u64, len: u32) {
        self.first.modify(addr, len);
        self.second.modify(addr, len);
    }

    fn load_run(&mut self, addr: u64, step: i64, count: u64, len: u32) {
        self.first.load_run(addr, step, count, len);
        self.second.load_run(addr, step, count, len);
    }

    fn move_run(&mut self, from: Walk, to: Walk, count: u64, len: u32) {
        self.first.move_run(from, to, count, len);
        self.second.move_run(from, to, count, len);
    }
}

/// Runs `feed` on a sink that passes every access to `sink`, then to each of `beside` in order.
pub fn feed_all<R>(
    sink: &mut dyn AccessSink,
    beside: &mut [&mut dyn AccessSink],
    feed: impl FnOnce(&mut dyn AccessSink) -> R,
) -> R {
    let Some((next, rest)) = beside.split_first_mut() else {
        return feed(sink);
    };
    let mut tee = Tee {
        first: sink,
        second: &mut **next,
    };
    feed_all(&mut tee, rest, feed)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records every access as it arrives, in the default per-access form.
    #[derive(Default)]
    struct Log(Vec<(u64, u32, bool)>);

    impl AccessSink for Log {
        fn load(&mut self, addr: u64, len: u32) {
            self.0.push((addr, len, false));
        }
        fn store(&mut self, addr: u64, len: u32) {
            self.0.push((addr, len, true));
        }
    }

    #[test]
    fn both_sides_see_the_same_accesses_in_the_same_order() {
        let (mut a, mut b, mut alone) = (Log::default(), Log::default(), Log::default());
        let feed = |sink: &mut dyn AccessSink| {
            sink.load(64, 8);
            sink.store(128, 4);
            sink.modify(7, 8);
            sink.load_run(1000, -24, 5, 8);
            sink.move_run(
                Walk { addr: 0, step: 8 },
                Walk {
                    addr: 4096,
                    step: 512,
                },
                3,
                8,
            );
        };
        feed(&mut Tee {
            first: &mut a,
            second: &mut b,
        });
        feed(&mut alone);
        assert_eq!(a.0, alone.0);
        assert_eq!(b.0, alone.0);
        assert_eq!(a.0.len(), 3 + 5 + 6);

        // Any number of sinks beside the first, each seeing the same.
        let (mut first, mut x, mut y) = (Log::default(), Log::default(), Log::default());
        feed_all(&mut first, &mut [&mut x, &mut y], feed);
        assert_eq!((&first.0, &x.0, &y.0), (&alone.0, &alone.0, &alone.0));
        let mut only = Log::default();
        feed_all(&mut only, &mut [], feed);
        assert_eq!(only.0, alone.0);
    }
}
