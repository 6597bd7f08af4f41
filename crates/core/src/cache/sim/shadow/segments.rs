//! Arithmetic progressions of line numbers: how the 3C shadow holds what strided runs left
//! in it without a table entry per line, and when two of them share no line.

/// Lines `first + k·step` for k in `0..count`, the last one the most recent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::cache::sim) struct Segment {
    pub(in crate::cache::sim) first: u64,
    pub(in crate::cache::sim) step: i64,
    pub(in crate::cache::sim) count: u64,
}

/// Segments a short run may be checked against before the shadow builds its table instead; a
/// run of n accesses may be checked against n / 4.
pub(super) const MAX_SEGMENTS: usize = 32;

/// Progressions with fewer lines than this are compared line by line when their steps differ.
const SMALL: u64 = 64;

impl Segment {
    /// Line `k` (below `count`).
    #[inline]
    pub(in crate::cache::sim) fn line(&self, k: u64) -> u64 {
        self.first
            .wrapping_add((k as i64).wrapping_mul(self.step) as u64)
    }

    /// Lines `from..count`.
    pub(super) fn from(&self, from: u64) -> Self {
        Self {
            first: self.line(from),
            count: self.count - from,
            ..*self
        }
    }

    /// The lowest and highest line.
    fn bounds(&self) -> (i128, i128) {
        let first = i128::from(self.first);
        let last = i128::from(self.line(self.count - 1));
        (first.min(last), first.max(last))
    }

    /// Whether every line of `other` is one of this one's (steps equal and not zero).
    pub(super) fn covers(&self, other: &Self) -> bool {
        if self.step == 0 || self.step != other.step {
            return false;
        }
        let offset = i128::from(other.first) - i128::from(self.first);
        let step = i128::from(self.step);
        let from = offset / step;
        offset % step == 0 && from >= 0 && from + i128::from(other.count) <= i128::from(self.count)
    }

    fn holds(&self, line: u64) -> bool {
        let offset = i128::from(line) - i128::from(self.first);
        let step = i128::from(self.step);
        if step == 0 {
            return offset == 0;
        }
        offset % step == 0 && (0..i128::from(self.count)).contains(&(offset / step))
    }

    /// True if the two share no line for certain; false if they do, or if telling would
    /// take more than a few operations (the caller then takes the slow, exact path).
    pub(super) fn disjoint(&self, other: &Self) -> bool {
        if self.count == 0 || other.count == 0 {
            return true;
        }
        let (lo, hi) = self.bounds();
        let (other_lo, other_hi) = other.bounds();
        if hi < other_lo || other_hi < lo {
            return true;
        }
        if self.step == other.step && self.step != 0 {
            // Same step: other's lines are self's lines offset..offset + count, if aligned.
            let distance = i128::from(other.first) - i128::from(self.first);
            let step = i128::from(self.step);
            if distance % step != 0 {
                return true;
            }
            let offset = distance / step;
            return offset >= i128::from(self.count) || offset + i128::from(other.count) <= 0;
        }
        let (small, large) = if self.count <= other.count {
            (self, other)
        } else {
            (other, self)
        };
        small.count <= SMALL && (0..small.count).all(|k| !large.holds(small.line(k)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(s: &Segment) -> Vec<u64> {
        (0..s.count).map(|k| s.line(k)).collect()
    }

    /// Disjointness never claims what a brute-force intersection denies.
    #[test]
    fn disjoint_only_when_no_line_is_shared() {
        let mut claims = 0;
        for first in [0u64, 3, 8, 50, 64, 100] {
            for step in [-16i64, -8, -1, 1, 2, 8, 16, 24] {
                for count in [1u64, 2, 5, 13, 70] {
                    let a = Segment {
                        first: first + 1500,
                        step,
                        count,
                    };
                    for other in [
                        (1000u64, 8i64, 13u64),
                        (1024, 8, 100),
                        (1003, 1, 5),
                        (1064, 16, 70),
                        (900, 3, 80),
                    ] {
                        let b = Segment {
                            first: other.0,
                            step: other.1,
                            count: other.2,
                        };
                        let shared = lines(&a).iter().any(|l| lines(&b).contains(l));
                        if a.disjoint(&b) {
                            claims += 1;
                            assert!(!shared, "{a:?} {b:?}");
                        }
                        if step == other.1 {
                            assert_eq!(a.disjoint(&b), !shared, "{a:?} {b:?}");
                        }
                        assert_eq!(a.disjoint(&b), b.disjoint(&a));
                    }
                }
            }
        }
        assert!(claims > 100, "{claims}");
    }
}
