//! The figures a trace run counts beside the simulation, while the records stream past: the
//! sets each level's loads map to ([`SetTally`]) and the steps between consecutive data
//! accesses ([`StepTally`]). Both are **counted** from the trace's addresses, not simulated:
//! a load is tallied at every level's geometry whether or not it reaches that level, and the
//! steps are those of the records in trace order.

use serde::Serialize;

use crate::cache::geometry::CacheLevel;

/// Loads per set, for each level: one counter per set (the sets are bounded by the state
/// budget the simulator was built under, so this takes at most an eighth of it).
#[derive(Debug)]
pub struct SetTally {
    levels: Vec<LevelSets>,
}

#[derive(Debug)]
struct LevelSets {
    line_shift: u32,
    sets: u64,
    /// `sets - 1` when the set count is a power of two: a mask instead of a division.
    mask: Option<u64>,
    loads: Vec<u64>,
    /// The line tallied last and its set: consecutive loads of one line skip the division.
    last_line: u64,
    last_set: usize,
}

impl SetTally {
    pub(crate) fn new(levels: &[CacheLevel]) -> Self {
        let levels = levels
            .iter()
            .map(|level| {
                let sets = u64::from(level.sets.max(1));
                LevelSets {
                    line_shift: level.line.trailing_zeros(),
                    sets,
                    mask: sets.is_power_of_two().then_some(sets - 1),
                    loads: vec![0; sets as usize],
                    last_line: u64::MAX,
                    last_set: 0,
                }
            })
            .collect();
        Self { levels }
    }

    /// One load at `addr`, tallied by the set of its first line at every level.
    #[inline]
    pub(crate) fn load(&mut self, addr: u64) {
        for level in &mut self.levels {
            let line = addr >> level.line_shift;
            if line != level.last_line {
                level.last_line = line;
                level.last_set = match level.mask {
                    Some(mask) => (line & mask) as usize,
                    None => (line % level.sets) as usize,
                };
            }
            level.loads[level.last_set] += 1;
        }
    }

    /// Each level's `top` busiest sets, named as `levels` names them.
    pub(crate) fn busiest(&self, levels: &[CacheLevel], top: usize) -> Vec<BusiestSets> {
        self.levels
            .iter()
            .zip(levels)
            .map(|(tally, level)| {
                let mut used: Vec<SetLoads> = tally
                    .loads
                    .iter()
                    .enumerate()
                    .filter(|&(_, &loads)| loads > 0)
                    .map(|(set, &loads)| SetLoads {
                        set: set as u64,
                        loads,
                    })
                    .collect();
                let sets_used = used.len() as u64;
                let order =
                    |a: &SetLoads, b: &SetLoads| b.loads.cmp(&a.loads).then(a.set.cmp(&b.set));
                let top = top.min(used.len());
                if top > 0 && top < used.len() {
                    used.select_nth_unstable_by(top - 1, order);
                }
                used.truncate(top);
                used.sort_unstable_by(order);
                let loads: u64 = tally.loads.iter().sum();
                BusiestSets {
                    level: level.name.clone(),
                    sets: tally.sets,
                    sets_used,
                    loads,
                    even_share: loads as f64 / tally.sets as f64,
                    top: used,
                }
            })
            .collect()
    }
}

/// One level's busiest sets (counted).
#[derive(Debug, Clone, Serialize)]
pub struct BusiestSets {
    pub level: String,
    /// The level's sets.
    pub sets: u64,
    /// Sets at least one load maps to.
    pub sets_used: u64,
    /// Loads tallied (every load of the trace, modifies included).
    pub loads: u64,
    /// Loads per set if they spread evenly over all the level's sets (derived).
    pub even_share: f64,
    /// The busiest sets, most loads first (ties: lower set first).
    pub top: Vec<SetLoads>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SetLoads {
    pub set: u64,
    pub loads: u64,
}

/// Signed address steps between consecutive data accesses, bucketed by size: 0, 1 byte to a
/// line, then each doubling (a line to two, two to four, …), each way.
#[derive(Debug)]
pub struct StepTally {
    line_shift: u32,
    previous: Option<u64>,
    zero: u64,
    /// Bucket k: magnitude up to a line (k = 0), else in (line·2^(k−1), line·2^k].
    up: [u64; 64],
    down: [u64; 64],
}

impl StepTally {
    /// Buckets measured in lines of `line` bytes (a power of two).
    pub(crate) fn new(line: u32) -> Self {
        Self {
            line_shift: line.max(1).trailing_zeros(),
            previous: None,
            zero: 0,
            up: [0; 64],
            down: [0; 64],
        }
    }

    #[inline]
    pub(crate) fn access(&mut self, addr: u64) {
        if let Some(previous) = self.previous.replace(addr) {
            let step = addr.wrapping_sub(previous) as i64;
            if step == 0 {
                self.zero += 1;
                return;
            }
            let magnitude = step.unsigned_abs();
            let bucket = 64 - ((magnitude - 1) >> self.line_shift).leading_zeros() as usize;
            if step > 0 {
                self.up[bucket] += 1;
            } else {
                self.down[bucket] += 1;
            }
        }
    }

    /// The non-empty buckets, from the largest step down to the largest step up.
    pub(crate) fn histogram(&self) -> StepHistogram {
        let line = 1u64 << self.line_shift;
        let range = |k: usize| {
            if k == 0 {
                (1, line)
            } else {
                // Bucket 63 would end at 2^64 × line; no step reaches past 2^63.
                let high = line.checked_shl(k as u32).unwrap_or(u64::MAX);
                ((line << (k - 1)) + 1, high)
            }
        };
        let mut buckets = Vec::new();
        for k in (0..64).rev().filter(|&k| self.down[k] > 0) {
            let (min_bytes, max_bytes) = range(k);
            buckets.push(StepBucket {
                direction: Direction::Down,
                min_bytes,
                max_bytes,
                steps: self.down[k],
            });
        }
        if self.zero > 0 {
            buckets.push(StepBucket {
                direction: Direction::Same,
                min_bytes: 0,
                max_bytes: 0,
                steps: self.zero,
            });
        }
        for k in (0..64).filter(|&k| self.up[k] > 0) {
            let (min_bytes, max_bytes) = range(k);
            buckets.push(StepBucket {
                direction: Direction::Up,
                min_bytes,
                max_bytes,
                steps: self.up[k],
            });
        }
        StepHistogram {
            line,
            steps: buckets.iter().map(|b| b.steps).sum(),
            buckets,
        }
    }
}

/// Steps between consecutive data accesses (counted).
#[derive(Debug, Clone, Serialize)]
pub struct StepHistogram {
    /// The first level's line, which the buckets are measured in.
    pub line: u64,
    /// Steps counted: one fewer than the data accesses.
    pub steps: u64,
    pub buckets: Vec<StepBucket>,
}

/// Steps of `min_bytes..=max_bytes` in one direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct StepBucket {
    pub direction: Direction,
    pub min_bytes: u64,
    pub max_bytes: u64,
    pub steps: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// To a lower address.
    Down,
    /// The same address again.
    Same,
    /// To a higher address.
    Up,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::geometry::parse_cache_override;

    #[test]
    fn steps_fall_in_their_buckets() {
        let mut tally = StepTally::new(64);
        let base = 1u64 << 20;
        let far = (1u64 << 62) + 5;
        // Steps: +8, 0, −8, +64, +65, +128, +129, −4096, +(2^62 + 5), −(2^62 + 5).
        for offset in [0i64, 8, 8, 0, 64, 129, 257, 386, 386 - 4096] {
            tally.access(base.wrapping_add_signed(offset));
        }
        let last = base + 386 - 4096;
        tally.access(last + far);
        tally.access(last);
        let histogram = tally.histogram();
        let seen: Vec<(Direction, u64, u64, u64)> = histogram
            .buckets
            .iter()
            .map(|b| (b.direction, b.min_bytes, b.max_bytes, b.steps))
            .collect();
        use Direction::{Down, Same, Up};
        assert_eq!(
            seen,
            vec![
                (Down, (1 << 62) + 1, 1 << 63, 1),
                (Down, 2049, 4096, 1),
                (Down, 1, 64, 1),
                (Same, 0, 0, 1),
                (Up, 1, 64, 2),
                (Up, 65, 128, 2),
                (Up, 129, 256, 1),
                (Up, (1 << 62) + 1, 1 << 63, 1),
            ]
        );
        assert_eq!(histogram.steps, 10);
    }

    #[test]
    fn sets_are_tallied_per_level_and_the_busiest_listed() {
        let levels = [
            parse_cache_override("L1d=1K,2,64").unwrap(), // 8 sets
            parse_cache_override("L2=3K,1,64").unwrap(),  // 48 sets: not a power of two
        ];
        let mut tally = SetTally::new(&levels);
        // A column walk of stride 512: set 0 of the 8, sets 0, 8, 16, … of the 48.
        for k in 0..12u64 {
            tally.load(k * 512);
            tally.load(k * 512 + 8);
        }
        tally.load(64);
        let busiest = tally.busiest(&levels, 2);
        assert_eq!(
            (busiest[0].sets, busiest[0].sets_used, busiest[0].loads),
            (8, 2, 25)
        );
        assert_eq!(
            busiest[0].top,
            vec![
                SetLoads { set: 0, loads: 24 },
                SetLoads { set: 1, loads: 1 }
            ]
        );
        assert_eq!((busiest[1].sets, busiest[1].sets_used), (48, 7));
        // Lines 0, 8, …, 88 map to sets 0, 8, 16, 24, 32, 40, 0, 8, …: six sets of four loads.
        assert_eq!(
            busiest[1].top,
            vec![SetLoads { set: 0, loads: 4 }, SetLoads { set: 8, loads: 4 }]
        );
    }
}
