//! Turning a validated strided view into a loop nest: coalescing, choosing the inner kernel,
//! and the analytic tuning, which the measuring planner (`planner.rs`) starts from. Safe code
//! only.

#![forbid(unsafe_code)]

use serde::{Deserialize, Serialize};

/// One loop of the copy: `len` steps, moving `src_stride` elements in the source and
/// `dst_stride` elements in the (contiguous) destination per step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Dim {
    pub len: usize,
    pub src_stride: isize,
    pub dst_stride: isize,
}

/// What the innermost loops do for one combination of the outer indices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub(crate) enum Inner {
    /// `dst[i] = src[i·src_stride]` for `i < len` (a `memcpy` when `src_stride == 1`).
    Run { len: usize, src_stride: isize },
    /// A 2-D transpose: `dst[c·ldd + r] = src[r·lds + c]` for `r < rows`, `c < cols`. The
    /// source is contiguous along `c`, the destination along `r`.
    Transpose {
        rows: usize,
        cols: usize,
        lds: isize,
        ldd: isize,
    },
}

/// The loop nest of a copy: `outer` loops (outermost first), then `batch`, then `inner`.
///
/// `batch` is a loop a transpose's source rows continue across (its source stride is the
/// transpose's column count), e.g. the merged middle dims of a (64,64,64,64) permutation
/// (3,1,2,0). Sweeping it inside each row step turns 512-byte row pieces into long source
/// streams. It has length 1 when there is no such loop.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Plan {
    pub outer: Vec<Dim>,
    pub batch: Dim,
    pub inner: Inner,
}

/// One work item of a transpose: columns `column..column + width` of batch indices
/// `first..first + count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PanelItem {
    pub column: usize,
    pub width: usize,
    pub first: usize,
    pub count: usize,
}

/// Batch indices per work item: long enough for source streams (256 × a 64-column transpose
/// reads 128 KiB of each row), short enough to give threads several items each.
pub(crate) const BATCH_CHUNK: usize = 256;

/// The loop of length 1: no batch.
const NO_BATCH: Dim = Dim {
    len: 1,
    src_stride: 0,
    dst_stride: 0,
};

/// Below this many elements on either side, a transpose tile is mostly edge: copy runs instead.
const MIN_TRANSPOSE_SIDE: usize = 8;

impl Plan {
    /// Builds the loop nest of a non-empty view whose bounds were already validated.
    ///
    /// 1. Destination strides are the C-order strides of `shape`.
    /// 2. Size-1 dimensions are dropped (they never move).
    /// 3. A dimension merges into the next inner one when the source steps over the inner one
    ///    exactly (`s[i] == s[i+1]·n[i+1]`); the destination always does.
    /// 4. The inner kernel is a run along the destination-fast dimension, unless that
    ///    dimension is strided in the source and another dimension has source stride 1: then
    ///    the two form a 2-D transpose tile.
    pub(crate) fn new(shape: &[usize], strides: &[isize]) -> Self {
        let mut dims: Vec<Dim> = Vec::with_capacity(shape.len());
        let mut dst_stride = 1isize;
        for (&len, &src_stride) in shape.iter().zip(strides).rev() {
            if len != 1 {
                dims.push(Dim {
                    len,
                    src_stride,
                    dst_stride,
                });
            }
            // Bounded by the validated element count, which fits in isize (it is a slice length).
            dst_stride = dst_stride.wrapping_mul(len as isize);
        }
        dims.reverse();
        let dims = coalesce(dims);
        Self::choose_inner(dims)
    }

    fn choose_inner(mut dims: Vec<Dim>) -> Self {
        let Some(last) = dims.pop() else {
            return Plan {
                outer: dims,
                batch: NO_BATCH,
                inner: Inner::Run {
                    len: 1,
                    src_stride: 0,
                },
            };
        };
        let partner = dims
            .iter()
            .rposition(|d| d.src_stride == 1 && d.len >= MIN_TRANSPOSE_SIDE);
        match partner {
            Some(k) if last.src_stride != 1 && last.len >= MIN_TRANSPOSE_SIDE => {
                let fast = dims.remove(k);
                let batch = match dims.last() {
                    Some(d) if d.src_stride == fast.len as isize => dims.pop().unwrap_or(NO_BATCH),
                    _ => NO_BATCH,
                };
                Plan {
                    outer: dims,
                    batch,
                    inner: Inner::Transpose {
                        rows: last.len,
                        cols: fast.len,
                        lds: last.src_stride,
                        ldd: fast.dst_stride,
                    },
                }
            }
            _ => Plan {
                outer: dims,
                batch: NO_BATCH,
                inner: Inner::Run {
                    len: last.len,
                    src_stride: last.src_stride,
                },
            },
        }
    }

    /// Reorders the outer loops of a run copy so the source is read in address order (largest
    /// source stride outermost). With non-temporal stores the destination only needs whole
    /// lines, not order, while reads are latency-bound unless the prefetchers see a stream:
    /// to-tiles then reads each source row front to back and writes tile rows as whole runs.
    pub(crate) fn order_outer_by_source(&mut self) {
        if matches!(self.inner, Inner::Run { src_stride: 1, .. }) {
            self.outer
                .sort_by_key(|d| std::cmp::Reverse(d.src_stride.unsigned_abs()));
            self.outer = coalesce(std::mem::take(&mut self.outer));
        }
    }

    /// Number of combinations of the outer indices.
    pub(crate) fn outer_count(&self) -> usize {
        self.outer.iter().map(|d| d.len).product()
    }

    /// Column panels per outer combination: of a transpose, else one run.
    pub(crate) fn panels(&self, panel: usize) -> usize {
        match self.inner {
            Inner::Transpose { cols, .. } => cols.div_ceil(panel),
            Inner::Run { .. } => 1,
        }
    }

    /// Chunks of [`BATCH_CHUNK`] batch indices per panel.
    pub(crate) fn batch_chunks(&self) -> usize {
        self.batch.len.div_ceil(BATCH_CHUNK)
    }

    /// Work item `within` (of one outer combination) of a transpose plan with `panel`-column
    /// panels: panel-major, batch chunks inside.
    pub(crate) fn panel_item(&self, within: usize, panel: usize, cols: usize) -> PanelItem {
        let chunks = self.batch_chunks();
        let column = within / chunks * panel;
        let first = within % chunks * BATCH_CHUNK;
        PanelItem {
            column,
            width: panel.min(cols - column),
            first,
            count: BATCH_CHUNK.min(self.batch.len - first),
        }
    }
}

/// Rule 3 of [`Plan::new`]: merges each dimension into its inner neighbour when both source
/// and destination step over the neighbour exactly.
fn coalesce(dims: Vec<Dim>) -> Vec<Dim> {
    let mut merged: Vec<Dim> = Vec::with_capacity(dims.len());
    for dim in dims.into_iter().rev() {
        match merged.last_mut() {
            Some(inner)
                if dim.src_stride == inner.src_stride.wrapping_mul(inner.len as isize)
                    && dim.dst_stride == inner.dst_stride.wrapping_mul(inner.len as isize) =>
            {
                inner.len *= dim.len;
            }
            _ => merged.push(dim),
        }
    }
    merged.reverse();
    merged
}

/// An odometer over the outer loops that tracks the source and destination offsets.
#[derive(Debug, Clone)]
pub(crate) struct Cursor {
    index: Vec<usize>,
    pub src: isize,
    pub dst: isize,
}

impl Cursor {
    /// The cursor at combination number `linear` (row-major over `outer`).
    pub(crate) fn at(outer: &[Dim], mut linear: usize, src_base: isize) -> Self {
        let mut index = vec![0; outer.len()];
        let (mut src, mut dst) = (src_base, 0isize);
        for (slot, dim) in index.iter_mut().zip(outer).rev() {
            let i = linear % dim.len;
            linear /= dim.len;
            *slot = i;
            src += i as isize * dim.src_stride;
            dst += i as isize * dim.dst_stride;
        }
        Cursor { index, src, dst }
    }

    /// Steps to the next combination (wrapping to the first after the last).
    pub(crate) fn advance(&mut self, outer: &[Dim]) {
        for (slot, dim) in self.index.iter_mut().zip(outer).rev() {
            *slot += 1;
            self.src += dim.src_stride;
            self.dst += dim.dst_stride;
            if *slot < dim.len {
                return;
            }
            *slot = 0;
            self.src -= dim.src_stride * dim.len as isize;
            self.dst -= dim.dst_stride * dim.len as isize;
        }
    }
}

/// Knobs of the engine, derived analytically from the cache sizes by [`Tuning::for_caches`].
/// Public (hidden) so benchmarks can sweep them; results never depend on them. Serialised as
/// a wisdom file's schedule, without `kernels` (a stored plan always takes the best set).
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tuning {
    /// Transpose panel width in columns: the number of destination rows written side by side.
    pub panel: usize,
    /// Transpose tile height: source rows staged per panel before they are written out.
    pub tile_rows: usize,
    /// Write the destination with non-temporal stores.
    pub stream: bool,
    /// With `stream`: stage transpose tiles in a buffer and write each destination row's tile
    /// as one run (true), or stream each 8×8 block's lines straight out (false; needs
    /// line-aligned destination rows, else the tiles are staged anyway).
    pub staged: bool,
    /// How many 8-row steps ahead to prefetch the source (0 = no software prefetch).
    pub prefetch_steps: usize,
    /// Streamed tiles: how far ahead of each 8×8 block, along the walk, to prefetch the same
    /// source rows, in bytes (0 = prefetch the whole next tile instead, spread over this one).
    pub tile_prefetch_bytes: usize,
    /// Batched transposes (panels whose source rows continue from panel to panel): source
    /// rows read at once along the whole batch (a positive multiple of 8).
    pub batch_rows: usize,
    /// Batched transposes: how far ahead along each source row stream to prefetch, in bytes
    /// (0 = not at all).
    pub batch_prefetch_bytes: usize,
    /// The best instruction set the micro-kernels may use (tests force the lesser ones).
    #[serde(skip)]
    pub kernels: KernelSet,
}

/// An upper bound on the micro-kernels' instruction set; the CPU's support still applies.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum KernelSet {
    Portable,
    Avx2,
    #[default]
    Best,
}

/// The cache sizes the engine plans for, in bytes: the caller's, since the engine detects no
/// machine. A level the caller does not trust (a hypervisor's implausible L3) is best left out
/// by naming the largest plausible one as the last level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CacheSizes {
    /// The level-1 data cache.
    pub l1d_bytes: usize,
    /// The level-2 cache.
    pub l2_bytes: usize,
    /// The last-level cache.
    pub llc_bytes: usize,
}

impl Tuning {
    /// The tuning for a copy that writes `dst_bytes` on `threads` threads, for `caches`.
    /// The evidence for each rule, from interleaved A/B runs, is in `docs/copy-engine.md`
    /// (section "The rules and their evidence").
    ///
    /// - stream: non-temporal stores once the destination exceeds an eighth of the last-level
    ///   cache, since a regular store first reads the line it writes
    ///   (`docs/copy-engine.md#streaming-stores`).
    /// - staged: without streaming stores, transposes stage tiles through an L1 buffer, since
    ///   regular stores to a power-of-two leading dimension would pile into one cache set; with
    ///   them, they stream straight from registers in tiles
    ///   (`docs/copy-engine.md#staged-or-streamed-tiles`).
    /// - panel × tile rows (`docs/copy-engine.md#panel-and-tile-shapes`): staged, `panel = L1 /
    ///   512` with 64-row tiles, so the buffer and the 8 source rows a micro-kernel reads sit in
    ///   L1. Streamed, 512-column panels in tiles of an eighth of L2 (8 to 64 rows), the next
    ///   tile prefetched into L2, so destination rows get runs of several lines. Beyond the
    ///   last-level cache, tiles of a sixteenth of L2, since fewer rows in flight stream better
    ///   from DRAM; there one thread (or any number beyond 8 LLCs) walks 1024-column panels and
    ///   prefetches each block's rows 1 KiB along the walk, since a single core is bound by its
    ///   own miss buffers and wants each line just in time.
    /// - prefetch: 8 steps (64 source rows, one staged tile) ahead, into L2.
    /// - batched transposes (e.g. a 4-D (64,64,64,64) → (3,1,2,0) permutation) read 16 rows at
    ///   once along the whole batch and prefetch each row stream 1 KiB ahead, since long
    ///   prefetched streams suit the prefetchers (`docs/copy-engine.md#batched-transposes`).
    ///
    /// Derived from sizes alone; a [`crate::Planner`] with wisdom replaces it with the measured
    /// schedule (`planner.rs`). Public (hidden) for benchmarks and tests that sweep the knobs.
    #[doc(hidden)]
    pub fn for_caches(dst_bytes: usize, threads: usize, caches: CacheSizes) -> Tuning {
        const STREAM_PANEL: usize = 512;
        let stream = dst_bytes > caches.llc_bytes / 8;
        let staged = !stream;
        let beyond_llc = dst_bytes > caches.llc_bytes;
        // Beyond the LLC, one core alone, or any number far beyond it: wide panels walked
        // with a near prefetch.
        let walk = beyond_llc && (threads <= 1 || dst_bytes / 8 > caches.llc_bytes);
        let l2_share = if beyond_llc { 16 } else { 8 };
        Tuning {
            panel: if staged {
                (caches.l1d_bytes / 512).clamp(16, 256) / 8 * 8
            } else if walk {
                2 * STREAM_PANEL
            } else {
                STREAM_PANEL
            },
            tile_rows: if staged {
                64
            } else {
                (caches.l2_bytes / l2_share / (STREAM_PANEL * size_of::<f64>())).clamp(8, 64) / 8
                    * 8
            },
            stream,
            staged,
            prefetch_steps: 8,
            tile_prefetch_bytes: if walk { 1024 } else { 0 },
            batch_rows: 16,
            batch_prefetch_bytes: 1024,
            kernels: KernelSet::Best,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dim(len: usize, src_stride: isize, dst_stride: isize) -> Dim {
        Dim {
            len,
            src_stride,
            dst_stride,
        }
    }

    #[test]
    fn contiguous_views_become_one_run() {
        let plan = Plan::new(&[4, 5, 6], &[30, 6, 1]);
        assert_eq!(plan.outer, vec![]);
        assert_eq!(
            plan.inner,
            Inner::Run {
                len: 120,
                src_stride: 1
            }
        );
    }

    #[test]
    fn a_transposed_matrix_becomes_a_transpose_tile() {
        // The transpose of a 16×12 row-major matrix: shape (12, 16), strides (1, 12).
        let plan = Plan::new(&[12, 16], &[1, 12]);
        assert_eq!(plan.outer, vec![]);
        assert_eq!(
            plan.inner,
            Inner::Transpose {
                rows: 16,
                cols: 12,
                lds: 12,
                ldd: 16
            }
        );
    }

    #[test]
    fn the_4d_permutation_merges_its_middle_dims() {
        // (64,64,64,64) row-major, permuted (3,1,2,0).
        let n = 64isize;
        let plan = Plan::new(&[64, 64, 64, 64], &[1, n * n, n, n * n * n]);
        assert_eq!(plan.outer, vec![]);
        assert_eq!(plan.batch, dim(4096, 64, 64));
        assert_eq!(
            plan.inner,
            Inner::Transpose {
                rows: 64,
                cols: 64,
                lds: n * n * n,
                ldd: n * n * n
            }
        );
    }

    #[test]
    fn size_one_dims_vanish_and_scalars_are_one_element_runs() {
        let plan = Plan::new(&[1, 1], &[7, -3]);
        assert_eq!(plan.outer, vec![]);
        assert_eq!(
            plan.inner,
            Inner::Run {
                len: 1,
                src_stride: 0
            }
        );
    }

    #[test]
    fn to_tiles_runs_read_the_source_in_order_when_asked() {
        // Row-major 8×8 into 4×4 tiles: view (2, 2, 4, 4) with strides (32, 4, 8, 1).
        let mut plan = Plan::new(&[2, 2, 4, 4], &[32, 4, 8, 1]);
        assert_eq!(
            plan.outer,
            vec![dim(2, 32, 32), dim(2, 4, 16), dim(4, 8, 4)]
        );
        plan.order_outer_by_source();
        // Tile row I, row i within it, tile column J: the source in address order.
        assert_eq!(
            plan.outer,
            vec![dim(2, 32, 32), dim(4, 8, 4), dim(2, 4, 16)]
        );
    }

    #[test]
    fn cursor_walks_row_major_offsets() {
        let outer = [dim(2, 100, 6), dim(3, -10, 2)];
        let mut cursor = Cursor::at(&outer, 0, 50);
        let mut seen = vec![];
        for linear in 0..6 {
            let fresh = Cursor::at(&outer, linear, 50);
            assert_eq!((cursor.src, cursor.dst), (fresh.src, fresh.dst));
            seen.push((cursor.src, cursor.dst));
            cursor.advance(&outer);
        }
        assert_eq!(
            seen,
            vec![(50, 0), (40, 2), (30, 4), (150, 6), (140, 8), (130, 10)]
        );
    }

    #[test]
    fn tunings_follow_the_cache_sizes() {
        let kib = 1usize << 10;
        let mib = kib * kib;
        let zen4 = (32 * kib, 1024 * kib, 32 * mib);
        let big_l1 = (48 * kib, 2048 * kib, 32 * mib);
        let mid = (32 * kib, 512 * kib, 16 * mib);
        let small_l2 = (32 * kib, 256 * kib, 8 * mib);
        let huge_l2 = (32 * kib, 64 * mib, 8 * mib);
        // (L1d, L2, LLC, destination bytes) -> (stream, panel, tile rows, tile prefetch bytes)
        let cases = [
            (zen4, mib, (false, 64, 64, 0)),
            (zen4, 8 * mib, (true, 512, 32, 0)),
            (zen4, 32 * mib, (true, 512, 32, 0)),
            (zen4, 32 * mib + 8, (true, 1024, 16, 1024)),
            (zen4, 512 * mib, (true, 1024, 16, 1024)),
            (small_l2, 64 * mib, (true, 1024, 8, 1024)),
            (big_l1, 8 * mib, (true, 512, 64, 0)),
            (big_l1, mib, (false, 96, 64, 0)),
            (mid, 4 * mib, (true, 512, 16, 0)),
            (small_l2, 4 * mib, (true, 512, 8, 0)),
            (huge_l2, 4 * mib, (true, 512, 64, 0)),
        ];
        for ((l1d_bytes, l2_bytes, llc_bytes), dst_bytes, expected) in cases {
            let caches = CacheSizes {
                l1d_bytes,
                l2_bytes,
                llc_bytes,
            };
            let tuning = Tuning::for_caches(dst_bytes, 1, caches);
            assert_eq!(
                (
                    tuning.stream,
                    tuning.panel,
                    tuning.tile_rows,
                    tuning.tile_prefetch_bytes
                ),
                expected,
                "{caches:?} {dst_bytes}"
            );
            assert_eq!(tuning.staged, !tuning.stream);
            // Parallel copies up to 8 LLCs walk tiles of the same height in 512-column panels,
            // prefetching the next tile; beyond, they walk like one thread.
            let parallel = Tuning::for_caches(dst_bytes, 2, caches);
            let (panel, ahead) = if dst_bytes > 8 * llc_bytes {
                (tuning.panel, tuning.tile_prefetch_bytes)
            } else {
                (tuning.panel.min(512), 0)
            };
            assert_eq!(
                (
                    parallel.stream,
                    parallel.panel,
                    parallel.tile_rows,
                    parallel.tile_prefetch_bytes
                ),
                (tuning.stream, panel, tuning.tile_rows, ahead),
                "{caches:?} {dst_bytes} on 2 threads"
            );
        }
    }
}
