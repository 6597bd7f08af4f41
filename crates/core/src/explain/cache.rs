//! What a strided view does to one set-associative cache level: its strides in bytes and
//! lines, the sets a walk along each dimension touches (the seed's `S / gcd(s/L, S)`), the
//! lines the whole view touches and how they spread over the sets, whether they fit the ways.
//! The walks a verdict is about and the padding advice build on it (`report`).
//!
//! Address model: storage element k sits at byte `k · itemsize`, the storage starting on a line
//! boundary, so element k lies in line `⌊k · itemsize / L⌋` and set `line mod S` (an element
//! never straddles two lines when, as on every real cache, the line is at least the item size;
//! with smaller lines an element is counted at its first byte).
//!
//! Counts never enumerate the view's elements: the view is reduced to the distinct addresses it
//! reaches (broadcast and size-1 dimensions dropped, negative strides flipped, contiguous
//! dimensions merged), and the lines are the union of the line intervals of its innermost runs.
//! More than [`MAX_RUNS`] runs is refused with a reason rather than counted slowly.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use crate::cache::geometry::CacheLevel;
use crate::cache::model::{distinct_sets, gcd};
use crate::layout::Layout;

/// Most runs (pieces of consecutive lines) the whole-view counts list: about 16 MiB of work.
pub const MAX_RUNS: u64 = 1 << 20;

/// Most sets a level may have for the analysis: its per-set counts are listed (real caches
/// have at most tens of thousands; a `--cache` of 2^32 sets would ask for 32 GiB).
pub const MAX_SETS: u64 = 1 << 20;

/// Most bytes one way may span (line × sets): a walk's sets repeat with this period, which
/// bounds the work of counting them (real caches span at most a few MiB).
pub const MAX_WAY_SPAN: u64 = 1 << 27;

/// Why a view cannot be analysed on a level.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ViewCacheError {
    #[error(
        "{level} has {sets} sets of {line} B lines; the cache analysis takes at most {MAX_SETS} \
         sets and {MAX_WAY_SPAN} bytes per way"
    )]
    TooLarge { level: String, sets: u64, line: u64 },
    /// The cache model computes byte addresses in 64-bit integers.
    #[error(
        "dim {dim}'s stride of {stride} elements is {bytes} B at {itemsize} B per element, \
         beyond the 64-bit byte addresses of the cache model"
    )]
    StrideOverflow {
        dim: usize,
        stride: isize,
        itemsize: u64,
        bytes: i128,
    },
}

impl ViewCacheError {
    /// The stable category `stridelab layout --json` prints.
    pub fn kind(&self) -> &'static str {
        match self {
            ViewCacheError::TooLarge { .. } => "too_large",
            ViewCacheError::StrideOverflow { .. } => "overflow",
        }
    }
}

/// Element types `--dtype` names, with their item sizes in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dtype {
    F64,
    F32,
    F16,
    Bf16,
    I64,
    I32,
    I16,
    I8,
    U8,
}

impl Dtype {
    pub const NAMES: &'static str = "f64, f32, f16, bf16, i64, i32, i16, i8, u8";

    /// Bytes per element.
    pub fn itemsize(self) -> u64 {
        match self {
            Dtype::F64 | Dtype::I64 => 8,
            Dtype::F32 | Dtype::I32 => 4,
            Dtype::F16 | Dtype::Bf16 | Dtype::I16 => 2,
            Dtype::I8 | Dtype::U8 => 1,
        }
    }
}

/// A dtype name (`--dtype`) that names no element type; the message lists the names that do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown dtype `{0}`; known: {names}", names = Dtype::NAMES)]
pub struct UnknownDtype(pub String);

impl FromStr for Dtype {
    type Err = UnknownDtype;
    fn from_str(text: &str) -> Result<Self, UnknownDtype> {
        Ok(match text.trim().to_ascii_lowercase().as_str() {
            "f64" | "float64" | "double" => Dtype::F64,
            "f32" | "float32" | "float" => Dtype::F32,
            "f16" | "float16" | "half" => Dtype::F16,
            "bf16" | "bfloat16" => Dtype::Bf16,
            "i64" | "int64" => Dtype::I64,
            "i32" | "int32" => Dtype::I32,
            "i16" | "int16" => Dtype::I16,
            "i8" | "int8" => Dtype::I8,
            "u8" | "uint8" => Dtype::U8,
            _ => return Err(UnknownDtype(text.to_string())),
        })
    }
}

impl fmt::Display for Dtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = format!("{self:?}").to_ascii_lowercase();
        f.write_str(&name)
    }
}

/// Distinct lines per set, and their totals.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LineCounts {
    pub sets_touched: u64,
    pub lines_touched: u64,
    pub max_lines_per_set: u64,
    pub set_lines: Vec<u64>,
}

/// One dimension: a walk along it with every other index 0.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DimCache {
    pub size: usize,
    pub stride_bytes: i64,
    /// gcd(stride in lines, sets); `None` where the stride is not a whole number of lines.
    pub gcd_with_sets: Option<u64>,
    pub sets_touched: u64,
    pub lines_touched: u64,
    /// `None` when the walk has more than [`MAX_RUNS`] separate lines.
    pub max_lines_per_set: Option<u64>,
}

/// The set model of a view on one level (`view_report` adds the walks and the advice).
#[derive(Debug, Clone, Serialize)]
pub struct ViewCache {
    pub level: String,
    pub size: u64,
    pub ways: u64,
    pub sets: u64,
    pub line: u64,
    pub itemsize: u64,
    pub strides_bytes: Vec<i64>,
    pub dims: Vec<DimCache>,
    pub sets_touched: Option<u64>,
    pub lines_touched: Option<u64>,
    pub max_lines_per_set: Option<u64>,
    /// Distinct lines per set, set 0 first (`--json` may list only the first sets: see
    /// `set_lines_total` and `set_lines_truncated`).
    pub set_lines: Option<Vec<u64>>,
    /// How many sets `set_lines` has in full (absent with it).
    pub set_lines_total: Option<u64>,
    /// Whether `set_lines` lists only its first sets.
    pub set_lines_truncated: bool,
    /// Every line the view touches can be resident at once (no set holds more than `ways`).
    pub fits: Option<bool>,
    /// Why the whole-view counts are missing (too many runs), else absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counts_note: Option<String>,
}

/// Analyses `layout` with `itemsize`-byte elements on `level`.
pub fn analyse(
    layout: &Layout,
    itemsize: u64,
    level: &CacheLevel,
) -> Result<ViewCache, ViewCacheError> {
    let (line, sets) = (u64::from(level.line), u64::from(level.sets.max(1)));
    if sets > MAX_SETS || sets * line > MAX_WAY_SPAN {
        return Err(ViewCacheError::TooLarge {
            level: level.name.clone(),
            sets,
            line,
        });
    }
    let strides_bytes = byte_strides(layout, itemsize)?;
    let geometry = LineGeometry::of(level, itemsize);
    let dims: Vec<DimCache> = layout
        .shape()
        .iter()
        .zip(&strides_bytes)
        .map(|(&n, &s)| dim_cache(&geometry, layout.offset(), n, s))
        .collect();
    let whole = line_counts(layout.shape(), layout.strides(), layout.offset(), &geometry);
    let ways = u64::from(level.ways);
    let (counts, counts_note) = match whole {
        Ok(c) => (Some(c), None),
        Err(runs) => (
            None,
            Some(format!(
                "the view's lines form {runs} separate runs, more than {MAX_RUNS}: \
                 whole-view counts are not computed"
            )),
        ),
    };
    Ok(ViewCache {
        level: level.name.clone(),
        size: level.size,
        ways,
        sets,
        line,
        itemsize,
        strides_bytes,
        dims,
        sets_touched: counts.as_ref().map(|c| c.sets_touched),
        lines_touched: counts.as_ref().map(|c| c.lines_touched),
        max_lines_per_set: counts.as_ref().map(|c| c.max_lines_per_set),
        fits: counts.as_ref().map(|c| c.max_lines_per_set <= ways),
        set_lines_total: counts.as_ref().map(|c| c.set_lines.len() as u64),
        set_lines_truncated: false,
        set_lines: counts.map(|c| c.set_lines),
        counts_note,
    })
}

/// Each stride in bytes; a typed error where one leaves the 64-bit addresses the model (and
/// the simulator) compute with.
fn byte_strides(layout: &Layout, itemsize: u64) -> Result<Vec<i64>, ViewCacheError> {
    layout
        .strides()
        .iter()
        .enumerate()
        .map(|(dim, &stride)| {
            let bytes = stride as i128 * i128::from(itemsize);
            i64::try_from(bytes).map_err(|_| ViewCacheError::StrideOverflow {
                dim,
                stride,
                itemsize,
                bytes,
            })
        })
        .collect()
}

/// Element size, line size and set count: all the address model needs.
#[derive(Debug, Clone, Copy)]
pub struct LineGeometry {
    pub itemsize: u64,
    pub line: u64,
    pub sets: u64,
}

impl LineGeometry {
    pub fn of(level: &CacheLevel, itemsize: u64) -> LineGeometry {
        LineGeometry {
            itemsize,
            line: u64::from(level.line),
            sets: u64::from(level.sets.max(1)),
        }
    }
}

fn dim_cache(g: &LineGeometry, offset: usize, n: usize, stride_bytes: i64) -> DimCache {
    let gcd_with_sets = (stride_bytes % g.line as i64 == 0)
        .then(|| gcd((stride_bytes.unsigned_abs() / g.line) % g.sets, g.sets));
    // The stride in elements: the byte stride came from it (an exact multiple of itemsize).
    let stride = (stride_bytes / g.itemsize as i64) as isize;
    match line_counts(&[n], &[stride], offset, g) {
        Ok(c) => DimCache {
            size: n,
            stride_bytes,
            gcd_with_sets,
            sets_touched: c.sets_touched,
            lines_touched: c.lines_touched,
            max_lines_per_set: Some(c.max_lines_per_set),
        },
        Err(_) => {
            // Too many separate lines to list: the sets repeat with the period of the byte
            // address modulo L·S, so that many accesses give every set the walk touches.
            let span = g.line * g.sets;
            let step = stride_bytes.rem_euclid(span as i64) as u64;
            let period = span / gcd(step, span);
            let base = offset as u64 * g.itemsize;
            DimCache {
                size: n,
                stride_bytes,
                gcd_with_sets,
                sets_touched: distinct_sets(
                    base,
                    stride_bytes,
                    period.min(n as u64),
                    g.line as u32,
                    g.sets as u32,
                ),
                lines_touched: n as u64,
                max_lines_per_set: None,
            }
        }
    }
}

/// Distinct lines per set of the view `shape`/`strides`/`offset` (strides in elements), from
/// its runs; `Err(runs)` when there are more than [`MAX_RUNS`] runs.
pub fn line_counts(
    shape: &[usize],
    strides: &[isize],
    offset: usize,
    g: &LineGeometry,
) -> Result<LineCounts, u64> {
    let sets = g.sets.max(1);
    if shape.contains(&0) {
        return Ok(counts_from_intervals(&[], sets));
    }
    let (start, dims) = distinct_dims(shape, strides, offset);
    // A run: the innermost dimension when its steps are at most a line (every line between
    // its ends is touched), else a single element.
    let (run_len, run_stride, outer) = match dims.first() {
        Some(&(n, s)) if s * g.itemsize <= g.line => (n, s, &dims[1..]),
        _ => (1, 0, &dims[..]),
    };
    let runs = outer
        .iter()
        .try_fold(1u64, |acc, &(n, _)| acc.checked_mul(n))
        .unwrap_or(u64::MAX);
    if runs > MAX_RUNS {
        return Err(runs);
    }
    let mut intervals = Vec::with_capacity(runs as usize);
    let mut index = vec![0u64; outer.len()];
    let mut position = start;
    for _ in 0..runs {
        let first = position * u128::from(g.itemsize) / u128::from(g.line);
        let last_element = position + u128::from(run_len - 1) * u128::from(run_stride);
        let last = last_element * u128::from(g.itemsize) / u128::from(g.line);
        intervals.push((first, last));
        // Odometer over the outer dimensions.
        for (d, &(n, s)) in outer.iter().enumerate() {
            if index[d] + 1 < n {
                index[d] += 1;
                position += u128::from(s);
                break;
            }
            position -= u128::from(n - 1) * u128::from(s);
            index[d] = 0;
        }
    }
    Ok(counts_from_intervals(&intervals, sets))
}

/// The dimensions that move the address (size > 1, stride ≠ 0) with positive strides, sorted
/// by stride and merged where one continues the other, plus the lowest element: the same set
/// of storage elements as the view (broadcast and order do not change which lines it touches).
fn distinct_dims(shape: &[usize], strides: &[isize], offset: usize) -> (u128, Vec<(u64, u64)>) {
    let mut start = offset as i128;
    let mut dims: Vec<(u64, u64)> = Vec::new();
    for (&n, &s) in shape.iter().zip(strides) {
        if n <= 1 || s == 0 {
            continue;
        }
        if s < 0 {
            start += (n as i128 - 1) * s as i128;
        }
        dims.push((n as u64, s.unsigned_abs() as u64));
    }
    dims.sort_by_key(|&(n, s)| (s, n));
    let mut merged: Vec<(u64, u64)> = Vec::with_capacity(dims.len());
    for (n, s) in dims {
        match merged.last_mut() {
            Some(last) if last.0.checked_mul(last.1) == Some(s) => last.0 *= n,
            _ => merged.push((n, s)),
        }
    }
    (start.max(0) as u128, merged)
}

/// Per-set counts of the union of line intervals `[first, last]`.
fn counts_from_intervals(intervals: &[(u128, u128)], sets: u64) -> LineCounts {
    let mut sorted = intervals.to_vec();
    sorted.sort_unstable();
    let mut union: Vec<(u128, u128)> = Vec::with_capacity(sorted.len());
    for (a, b) in sorted {
        match union.last_mut() {
            Some(last) if a <= last.1 + 1 => last.1 = last.1.max(b),
            _ => union.push((a, b)),
        }
    }
    // Each interval gives every set ⌊len/S⌋ lines and one more to the `len mod S` sets from
    // its first line's set on (a circular range, kept as a difference array).
    let s = u128::from(sets);
    let mut every = 0u64;
    let mut diff = vec![0i64; sets as usize + 1];
    let mut lines_touched = 0u64;
    for (a, b) in union {
        let len = b - a + 1;
        lines_touched += len as u64;
        every += (len / s) as u64;
        let (from, rest) = ((a % s) as usize, (len % s) as usize);
        let to = from + rest;
        if to <= sets as usize {
            diff[from] += 1;
            diff[to] -= 1;
        } else {
            diff[from] += 1;
            diff[sets as usize] -= 1;
            diff[0] += 1;
            diff[to - sets as usize] -= 1;
        }
    }
    let mut running = 0i64;
    let set_lines: Vec<u64> = diff[..sets as usize]
        .iter()
        .map(|d| {
            running += d;
            every + running as u64
        })
        .collect();
    LineCounts {
        sets_touched: set_lines.iter().filter(|&&c| c > 0).count() as u64,
        lines_touched,
        max_lines_per_set: set_lines.iter().copied().max().unwrap_or(0),
        set_lines,
    }
}

#[cfg(test)]
pub mod tests {
    use std::collections::BTreeSet;

    use proptest::prelude::*;

    use super::*;
    use crate::cache::geometry::{CacheKind, GeometrySource};
    use crate::layout::expr::{
        LayoutView, MAX_LAYOUT_ONLY_ELEMENTS, StepResult, parse_bounded, run_steps,
    };

    /// An L1d of the given geometry, as `--cache` would give it.
    pub(crate) fn level(size: u64, ways: u64, line: u64) -> CacheLevel {
        CacheLevel::new(
            "L1d",
            CacheKind::Data,
            size,
            ways,
            line,
            GeometrySource::Override,
        )
        .unwrap()
    }

    /// The steps of `text` (`arange(N)` first) and its final layout, without values: what
    /// `layout` hands the analysis as the view's chain.
    pub(crate) fn steps_of(text: &str) -> (Vec<StepResult>, Layout) {
        let expr = parse_bounded(text, MAX_LAYOUT_ONLY_ELEMENTS).unwrap();
        let base = LayoutView::new(Layout::contiguous(&[expr.arange]).unwrap());
        let (steps, _) = run_steps(&expr, base, MAX_LAYOUT_ONLY_ELEMENTS).unwrap();
        let layout = steps.last().unwrap().layout.clone();
        (steps, layout)
    }

    /// Every element's line, listed.
    fn brute(
        offsets: impl Iterator<Item = usize>,
        itemsize: u64,
        line: u64,
        sets: u64,
    ) -> LineCounts {
        let lines: BTreeSet<u64> = offsets.map(|k| k as u64 * itemsize / line).collect();
        let mut set_lines = vec![0u64; sets as usize];
        for l in &lines {
            set_lines[(l % sets) as usize] += 1;
        }
        LineCounts {
            sets_touched: set_lines.iter().filter(|&&c| c > 0).count() as u64,
            lines_touched: lines.len() as u64,
            max_lines_per_set: set_lines.iter().copied().max().unwrap_or(0),
            set_lines,
        }
    }

    /// A valid random view: sizes, strides (negative and zero included) and a slack before the
    /// lowest element and after the highest.
    fn view() -> impl Strategy<Value = Layout> {
        (
            prop::collection::vec((0usize..7, -40isize..40), 0..4),
            0usize..50,
            0usize..50,
        )
            .prop_map(|(dims, before, after)| {
                let (shape, strides): (Vec<usize>, Vec<isize>) = dims.into_iter().unzip();
                let low: isize = shape
                    .iter()
                    .zip(&strides)
                    .map(|(&n, &s)| {
                        if s < 0 {
                            (n.max(1) as isize - 1) * s
                        } else {
                            0
                        }
                    })
                    .sum();
                let high: isize = shape
                    .iter()
                    .zip(&strides)
                    .map(|(&n, &s)| {
                        if s > 0 {
                            (n.max(1) as isize - 1) * s
                        } else {
                            0
                        }
                    })
                    .sum();
                let offset = before + low.unsigned_abs();
                let storage = offset + high as usize + 1 + after;
                Layout::new(shape, strides, offset, storage).unwrap()
            })
    }

    proptest! {
        #[test]
        fn counts_equal_listing_every_element(
            layout in view(),
            itemsize in prop::sample::select(vec![1u64, 2, 4, 8]),
            (sets, ways, line) in (
                prop::sample::select(vec![1u64, 2, 3, 4, 5, 8, 64]),
                1u64..5,
                prop::sample::select(vec![8u64, 16, 32, 64, 128]),
            ),
        ) {
            let cache = analyse(&layout, itemsize, &level(sets * ways * line, ways, line)).unwrap();
            let expected = brute(layout.offsets(), itemsize, line, sets);
            prop_assert_eq!(cache.sets_touched, Some(expected.sets_touched));
            prop_assert_eq!(cache.lines_touched, Some(expected.lines_touched));
            prop_assert_eq!(cache.max_lines_per_set, Some(expected.max_lines_per_set));
            prop_assert_eq!(cache.fits, Some(expected.max_lines_per_set <= ways));
            prop_assert_eq!(cache.set_lines.as_ref(), Some(&expected.set_lines));
            for (k, dim) in cache.dims.iter().enumerate() {
                let walk = (0..layout.shape()[k])
                    .map(|i| (layout.offset() as isize + i as isize * layout.strides()[k]) as usize);
                let expected = brute(walk, itemsize, line, sets);
                prop_assert_eq!(dim.sets_touched, expected.sets_touched, "dim {}", k);
                prop_assert_eq!(dim.lines_touched, expected.lines_touched, "dim {}", k);
                prop_assert_eq!(dim.max_lines_per_set, Some(expected.max_lines_per_set));
            }
        }
    }

    #[test]
    fn the_seed_example_and_a_matrix_column() {
        // (stride in elements, itemsize, sets, expected gcd, expected sets touched by 64 steps)
        let table: [(isize, u64, u64, u64, u64); 4] = [
            (128, 8, 64, 16, 4),  // 16 lines on 64 sets: 64 / gcd(16, 64) = 4
            (1024, 8, 64, 64, 1), // a column of a 1024×1024 f64 matrix: 128 lines, one set
            (1024, 4, 64, 64, 1), // f32: 64 lines
            (24, 8, 64, 1, 64),   // 3 lines, coprime with 64: every set
        ];
        for (stride, itemsize, sets, gcd_expected, touched) in table {
            let layout = Layout::new(vec![64], vec![stride], 0, 64 * stride as usize).unwrap();
            let cache = analyse(&layout, itemsize, &level(sets * 8 * 64, 8, 64)).unwrap();
            let dim = &cache.dims[0];
            assert_eq!(dim.gcd_with_sets, Some(gcd_expected), "stride {stride}");
            assert_eq!(dim.sets_touched, touched, "stride {stride}");
        }
        let column = Layout::new(vec![1024], vec![1024], 0, 1 << 20).unwrap();
        let cache = analyse(&column, 8, &level(32 << 10, 8, 64)).unwrap();
        assert_eq!(
            (cache.sets_touched, cache.lines_touched),
            (Some(1), Some(1024))
        );
        assert_eq!(cache.fits, Some(false));
        let half_line = Layout::new(vec![8], vec![4], 0, 32).unwrap();
        assert_eq!(
            analyse(&half_line, 8, &level(4096, 1, 64)).unwrap().dims[0].gcd_with_sets,
            None
        );
    }

    #[test]
    fn a_byte_stride_beyond_64_bits_is_a_typed_error() {
        // A size-1 dim may carry any stride; in bytes it leaves the model's integers.
        let layout = Layout::new(vec![1], vec![-(isize::MAX)], 11, 12).unwrap();
        let err = analyse(&layout, 8, &level(32 << 10, 8, 64)).unwrap_err();
        assert!(
            matches!(err, ViewCacheError::StrideOverflow { dim: 0, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("64-bit"), "{err}");
        // One byte per element fits.
        assert!(analyse(&layout, 1, &level(32 << 10, 8, 64)).is_ok());
    }

    #[test]
    fn huge_views_are_counted_from_their_runs_or_refused() {
        // 2^40 elements in one contiguous run, and a 2^60-element broadcast of one element.
        let dense = Layout::new(vec![1 << 20, 1 << 20], vec![1 << 20, 1], 0, 1 << 40).unwrap();
        let cache = analyse(&dense, 8, &level(32 << 10, 8, 64)).unwrap();
        assert_eq!(cache.lines_touched, Some(1 << 37));
        let broadcast = Layout::new(vec![1 << 30, 1 << 30], vec![0, 0], 0, 1).unwrap();
        let cache = analyse(&broadcast, 8, &level(32 << 10, 8, 64)).unwrap();
        assert_eq!(
            (cache.lines_touched, cache.sets_touched),
            (Some(1), Some(1))
        );
        assert_eq!(cache.dims[0].sets_touched, 1);
        // 2^21 rows of 2^10 elements 16 apart: 2^31 single-element runs are refused.
        let sparse = Layout::new(vec![1 << 21, 1 << 10], vec![1 << 14, 16], 0, 1 << 35).unwrap();
        let cache = analyse(&sparse, 8, &level(32 << 10, 8, 64)).unwrap();
        assert!(cache.lines_touched.is_none());
        assert!(cache.counts_note.unwrap().contains("not computed"));
        let huge = CacheLevel::new(
            "L3",
            CacheKind::Unified,
            1 << 36,
            1,
            64,
            GeometrySource::Override,
        );
        let err = analyse(&dense, 8, &huge.unwrap()).unwrap_err();
        assert!(err.to_string().contains("at most 1048576 sets"), "{err}");
        // The walk down dim 0 (2^21 lines) still gets its sets from one period.
        assert_eq!(cache.dims[0].sets_touched, 1);
        assert_eq!(cache.dims[0].max_lines_per_set, None);
    }
}
