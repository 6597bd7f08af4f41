//! The loop nests of a validated copy: the work items (outer index × column panel × batch
//! chunk), the raw-pointer walk that hands 8-byte elements to the SIMD micro-kernels
//! ([`RawCopy`]), the choice of each transpose panel's kernel ([`PanelKernel`], shared with
//! the replay in `order.rs`), the L1 stage, and the same nest for any other element type in
//! safe code. Everything here trusts the invariants `validate` (in `lib.rs`) established.

use std::ops::Range;

use crate::plan::{BATCH_CHUNK, Cursor, Inner, PanelItem, Plan, Tuning};
use crate::simd::{self, Isa};

/// Runs a validated copy, sequentially or on `pool`.
pub(crate) fn copy_planned<T: Copy + 'static>(
    src: &[T],
    plan: &Plan,
    offset: usize,
    dst: &mut [T],
    tuning: Tuning,
    pool: Option<&rayon::ThreadPool>,
) {
    let mut plan = plan.clone();
    if tuning.stream {
        plan.order_outer_by_source();
    }
    let plan = &plan;
    let items = plan.outer_count() * plan.panels(tuning.panel) * plan.batch_chunks();
    if !crate::is_plain_eight_byte::<T>() {
        // Other element types are correct but not tuned: one thread, safe code.
        copy_items_generic(src, plan, offset, dst, tuning.panel, 0..items);
        return;
    }
    let isa = Isa::detect().limited_to(tuning.kernels);
    let raw = RawCopy {
        src: src.as_ptr().cast::<f64>(),
        src_len: src.len(),
        dst: dst.as_mut_ptr().cast::<f64>(),
        plan,
        offset,
        tuning,
        isa,
    };
    match pool {
        Some(pool) if pool.current_num_threads() > 1 && items > 1 => {
            let threads = pool.current_num_threads();
            // A few chunks per thread: balanced when a neighbour steals a core for a while.
            let chunks = (threads * 4).min(items);
            let raw = &raw;
            pool.scope(|scope| {
                for chunk in 0..chunks {
                    let range = items * chunk / chunks..items * (chunk + 1) / chunks;
                    // SAFETY: invariants 1-3 hold (validated above); the chunks' item ranges are
                    // disjoint and items write disjoint destination elements (see copy_items).
                    scope.spawn(move |_| unsafe { raw.copy_items(range) });
                }
            });
        }
        // SAFETY: invariants 1-3 hold (validated by the caller); one thread writes all items.
        _ => unsafe { raw.copy_items(0..items) },
    }
}

/// A validated copy of 8-byte elements, as raw pointers shared by the worker threads.
struct RawCopy<'a> {
    src: *const f64,
    src_len: usize,
    dst: *mut f64,
    plan: &'a Plan,
    offset: usize,
    tuning: Tuning,
    isa: Isa,
}

// SAFETY: the pointers come from a `&[T]` and a `&mut [T]` borrowed for the whole copy; threads
// only read `src` and write disjoint parts of `dst` (see `RawCopy::copy_items`).
unsafe impl Send for RawCopy<'_> {}
// SAFETY: as for Send.
unsafe impl Sync for RawCopy<'_> {}

impl RawCopy<'_> {
    /// Copies work items `items` (outer combination × transpose panel, row-major).
    ///
    /// # Safety
    /// The view was validated (invariants 1-3 of [`crate::validate`]) against `src_len` and the
    /// destination, which nothing else accesses during the copy except other calls with
    /// disjoint `items`: item `(o, p)` writes exactly the destination elements of outer
    /// combination `o` whose transpose column lies in panel `p`, so disjoint items write
    /// disjoint elements.
    unsafe fn copy_items(&self, items: Range<usize>) {
        let panel = self.tuning.panel;
        let chunks = self.plan.batch_chunks();
        let per_outer = self.plan.panels(panel) * chunks;
        let mut cursor = Cursor::at(
            &self.plan.outer,
            items.start / per_outer,
            self.offset as isize,
        );
        let mut within = items.start % per_outer;
        let stream = self.tuning.stream;
        debug_assert!(self.src_len > 0);
        // Only transposes use the stage; runs get an empty one (small copies stay cheap).
        let stage_rows = match self.plan.inner {
            Inner::Transpose { .. } => stage_columns(panel),
            Inner::Run { .. } => 0,
        };
        let mut stage = Stage::new(stage_rows, self.tuning.tile_rows);
        let batch = self.plan.batch;
        for _ in items {
            let src = self.src.wrapping_offset(cursor.src);
            let dst = self.dst.wrapping_offset(cursor.dst);
            match self.plan.inner {
                Inner::Run { len, src_stride } => {
                    // SAFETY: by invariant 3, src + i·src_stride is in bounds for i < len; the
                    // destination run is this outer combination's own `len` elements.
                    unsafe { copy_run(self.isa, stream, src, src_stride, dst, len) };
                }
                Inner::Transpose {
                    rows,
                    cols,
                    lds,
                    ldd,
                } => {
                    let PanelItem {
                        column: c0,
                        width,
                        first,
                        count,
                    } = self.plan.panel_item(within, panel, cols);
                    let shift = |stride: isize| first as isize * stride;
                    // SAFETY: by invariant 3 every src + b·batch_src + r·lds + c (b < batch,
                    // r < rows, c < cols) is in bounds; the batch chunk's panel columns
                    // c0..c0+width are this item's own destination elements.
                    unsafe {
                        transpose_panel(
                            self.isa,
                            self.tuning,
                            src.wrapping_offset(shift(batch.src_stride))
                                .wrapping_add(c0),
                            lds,
                            dst.wrapping_offset(shift(batch.dst_stride) + c0 as isize * ldd),
                            ldd,
                            rows,
                            width,
                            (count, batch.src_stride, batch.dst_stride),
                            &mut stage,
                        )
                    };
                }
            }
            within += 1;
            if within == per_outer {
                within = 0;
                cursor.advance(&self.plan.outer);
            }
        }
        if stream {
            simd::store_fence();
        }
    }
}

/// `dst[i] = src[i·src_stride]` for `i < len`.
///
/// # Safety
/// Each `src + i·src_stride` readable, `dst..dst+len` writable, no overlap.
unsafe fn copy_run(
    isa: Isa,
    stream: bool,
    src: *const f64,
    src_stride: isize,
    dst: *mut f64,
    len: usize,
) {
    if src_stride == 1 {
        if stream {
            // SAFETY: contiguous ranges of len elements, as the caller guarantees.
            unsafe { simd::stream_run(isa, src, dst, len) };
        } else {
            // SAFETY: as above.
            unsafe { std::ptr::copy_nonoverlapping(src, dst, len) };
        }
        return;
    }
    for i in 0..len {
        // SAFETY: i < len, inside the caller's ranges.
        unsafe { *dst.add(i) = *src.offset(i as isize * src_stride) };
    }
}

/// The widest panel a streaming transpose sweeps 8 rows at a time (2 KiB of each source row,
/// long enough for the prefetchers; wider panels spread single-line writes over more rows).
/// Evidence: `docs/copy-engine.md#misaligned-rows-4097`.
pub(crate) const SWEEP_COLUMNS: usize = 256;

/// The widest staged panel: 64 destination rows × (64 + 8) elements is about an L1 (36 KiB
/// on a 32 KiB L1 — the source lines a step reads are used once and may be evicted first).
const STAGE_COLUMNS: usize = 64;

/// How many columns of a `panel`-column transpose panel the stage takes at a time.
pub(crate) fn stage_columns(panel: usize) -> usize {
    panel.clamp(8, STAGE_COLUMNS)
}

/// Elements per stage row: 8 carried elements, then a tile of `tile_rows`.
pub(crate) fn stage_row_len(tile_rows: usize) -> usize {
    tile_rows + 8
}

/// The staging buffer of a transpose panel: one row per destination row of the panel, each
/// holding 8 carried elements followed by a tile of `tile_rows` elements; 64-byte aligned.
struct Stage {
    storage: Vec<f64>,
    start: usize,
    row_len: usize,
    /// Rows of the stage: the widest panel it takes.
    columns: usize,
    /// The previous 8×8 block's columns of a skewed streaming panel (8 elements per column).
    carried: Vec<f64>,
}

impl Stage {
    fn new(panel: usize, tile_rows: usize) -> Stage {
        let row_len = stage_row_len(tile_rows);
        let storage = vec![0.0f64; panel * row_len + 8];
        let start = storage
            .as_ptr()
            .align_offset(simd::LINE_BYTES)
            .min(storage.len());
        Stage {
            storage,
            start,
            row_len,
            columns: panel,
            carried: Vec::new(),
        }
    }

    fn tile_rows(&self) -> usize {
        self.row_len - 8
    }

    /// Room for the carried columns of a `width`-column skewed panel.
    fn carry(&mut self, width: usize) -> *mut f64 {
        if self.carried.len() < width * 8 {
            self.carried.resize(width * 8, 0.0);
        }
        self.carried.as_mut_ptr()
    }

    /// Start of the aligned rows (row `c` at `c·row_len`).
    fn rows(&mut self) -> *mut f64 {
        self.storage.as_mut_ptr().wrapping_add(self.start)
    }
}

/// Which loop nest moves a transpose panel (one decision, shared by the engine and by
/// [`crate::order::engine_order`], which replays it for the simulator).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PanelKernel {
    /// [`simd::transpose_panel_stream`]: `tuning.batch_rows` rows at a time across a batch
    /// of panels.
    BatchStream,
    /// Streamed to the destination: swept ([`sweeps`]) or in tiles.
    Streamed,
    /// [`transpose_panel_one`]: through the L1 stage.
    Staged,
}

impl PanelKernel {
    /// For `count` panels `batch_dst` apart in the destination, whose first destination row
    /// starts a line when `dst_on_line`.
    pub(crate) fn choose(
        isa: Isa,
        tuning: Tuning,
        (count, batch_dst): (usize, isize),
        dst_on_line: bool,
        ldd: isize,
    ) -> PanelKernel {
        // Every destination row of every panel starts a line.
        let dst_aligned = dst_on_line && ldd % 8 == 0 && (count == 1 || batch_dst % 8 == 0);
        // From registers straight to the destination: AVX-512 and AVX2 both join lines across
        // any row misalignment.
        let registers = match isa {
            Isa::Avx512 | Isa::Avx2 => true,
            Isa::Portable => false,
        };
        let streams = cfg!(target_arch = "x86_64") && tuning.stream && registers;
        if streams && dst_aligned && count > 1 {
            PanelKernel::BatchStream
        } else if streams && !tuning.staged {
            PanelKernel::Streamed
        } else {
            PanelKernel::Staged
        }
    }
}

/// How many panels ahead a batched transpose prefetches its source row streams: the first
/// panel at least `tuning.batch_prefetch_bytes` ahead (panels `batch_src` elements apart).
fn batch_prefetch_panels(tuning: Tuning, batch_src: isize) -> usize {
    let panel_bytes = batch_src.unsigned_abs() * size_of::<f64>();
    if panel_bytes == 0 {
        return 0;
    }
    tuning.batch_prefetch_bytes.div_ceil(panel_bytes)
}

/// Whether a streamed panel (source rows `lds` apart, the first starting a line when
/// `src_on_line`) is swept 8 rows at a time over at most [`SWEEP_COLUMNS`] columns rather
/// than walked in tiles. Source rows off the line grid make every 8-element load straddle two
/// lines; swept tile by tile (column blocks outermost) each line would reach L1 twice, so such
/// panels (e.g. leading dimension 4097) are swept, where neighbouring blocks share their lines.
/// Every tile shape tried lost to the sweep there: `docs/copy-engine.md#misaligned-rows-4097`.
pub(crate) fn sweeps(tuning: Tuning, lds: isize, src_on_line: bool) -> bool {
    let straddling = lds % 8 != 0 || !src_on_line;
    straddling || tuning.tile_rows <= 8
}

/// [`transpose_panel_one`] for `batch.0` consecutive panels, panel `b` shifted by
/// `b·batch.1` in the source and `b·batch.2` in the destination.
///
/// # Safety
/// The ranges of [`transpose_panel_one`] for every panel of the batch, all destination
/// ranges disjoint from each other and from the source.
#[allow(clippy::too_many_arguments)]
unsafe fn transpose_panel(
    isa: Isa,
    tuning: Tuning,
    src: *const f64,
    lds: isize,
    dst: *mut f64,
    ldd: isize,
    rows: usize,
    width: usize,
    batch: (usize, isize, isize),
    stage: &mut Stage,
) {
    let (count, batch_src, batch_dst) = batch;
    #[cfg(target_arch = "x86_64")]
    {
        let on_line = |ptr: *const f64| (ptr as usize).is_multiple_of(simd::LINE_BYTES);
        let kernel = PanelKernel::choose(isa, tuning, (count, batch_dst), on_line(dst), ldd);
        if kernel == PanelKernel::BatchStream {
            // SAFETY: the caller's ranges; the destination is line-aligned (checked by
            // PanelKernel::choose); Isa only names instruction sets the CPU has.
            return unsafe {
                simd::transpose_panel_stream(
                    isa,
                    src,
                    lds,
                    dst,
                    ldd,
                    (rows, width),
                    batch,
                    (
                        tuning.prefetch_steps,
                        tuning.batch_rows,
                        batch_prefetch_panels(tuning, batch_src),
                    ),
                )
            };
        }
        if kernel == PanelKernel::Streamed {
            let carry = stage.carry(width);
            for b in 0..count as isize {
                let src_b = src.wrapping_offset(b * batch_src);
                let dst_b = dst.wrapping_offset(b * batch_dst);
                if sweeps(tuning, lds, on_line(src_b)) {
                    for first in (0..width).step_by(SWEEP_COLUMNS) {
                        // SAFETY: columns first.. of panel b, a part of the caller's ranges;
                        // the carry holds `width`·8 elements; Isa only names instruction sets
                        // the CPU has.
                        unsafe {
                            simd::transpose_panel_swept(
                                isa,
                                src_b.wrapping_add(first),
                                lds,
                                dst_b.wrapping_offset(first as isize * ldd),
                                ldd,
                                (rows, SWEEP_COLUMNS.min(width - first)),
                                tuning.prefetch_steps,
                                carry,
                            )
                        };
                    }
                } else {
                    // SAFETY: panel b of the caller's ranges; the carry holds `width`·8
                    // elements; tile_rows is a positive multiple of 8 (rounded in
                    // copy_into_contiguous_tuned, 8 to 64 from Tuning::for_caches); Isa only
                    // names instruction sets the CPU has.
                    unsafe {
                        simd::transpose_panel_tiled(
                            isa,
                            src_b,
                            lds,
                            dst_b,
                            ldd,
                            (rows, width),
                            (tuning.tile_rows, tuning.tile_prefetch_bytes),
                            carry,
                        )
                    };
                }
            }
            return;
        }
    }
    // Staged panels are cut to the stage's width (a direct panel may be wider).
    let stage_columns = stage.columns;
    for b in 0..count as isize {
        for first in (0..width).step_by(stage_columns) {
            // SAFETY: columns first.. of panel b: a part of the caller's ranges.
            unsafe {
                transpose_panel_one(
                    isa,
                    tuning.stream,
                    tuning.prefetch_steps,
                    src.wrapping_offset(b * batch_src).wrapping_add(first),
                    lds,
                    dst.wrapping_offset(b * batch_dst + first as isize * ldd),
                    ldd,
                    rows,
                    stage_columns.min(width - first),
                    stage,
                )
            };
        }
    }
}

/// `dst[c·ldd + r] = src[r·lds + c]` for `r < rows`, `c < width`: one column panel of a
/// transpose (the panel's `width` columns are `width` destination rows).
///
/// The panel is swept down the rows one tile of `stage.tile_rows()` rows at a time. 8×8
/// micro-kernels transpose the tile into the stage (L1-resident, so the destination's set
/// mapping — a power-of-two leading dimension piles every row into one set — never matters),
/// then each staged row goes to its destination row as one contiguous run. Runs end on the
/// destination's line boundaries: the elements past the last boundary are carried to the front
/// of the stage row and written with the next tile, so with `stream` every line but the row's
/// first and last is written whole by non-temporal stores, whatever the leading dimension.
///
/// # Safety
/// Every `src + r·lds + c` readable, every `dst + c·ldd + r` writable, the two disjoint; the
/// stage has at least `width` rows.
#[allow(clippy::too_many_arguments)]
unsafe fn transpose_panel_one(
    isa: Isa,
    stream: bool,
    prefetch_steps: usize,
    src: *const f64,
    lds: isize,
    dst: *mut f64,
    ldd: isize,
    rows: usize,
    width: usize,
    stage: &mut Stage,
) {
    let full_rows = rows / 8 * 8;
    let full_cols = width / 8 * 8;
    let tile_rows = stage.tile_rows();
    let row_len = stage.row_len;
    let staged = stage.rows();
    let ahead = prefetch_steps as isize * 8;
    let mut r0 = 0;
    while r0 < full_rows {
        let len = tile_rows.min(full_rows - r0);
        for r in (r0..r0 + len).step_by(8) {
            let src_step = src.wrapping_offset(r as isize * lds);
            for c in (0..full_cols).step_by(8) {
                if ahead > 0 {
                    for k in 0..8 {
                        simd::prefetch(src_step.wrapping_offset((ahead + k) * lds + c as isize));
                    }
                }
                // SAFETY: source rows r..r+8, columns c..c+8 lie in the panel; stage rows
                // c..c+8 hold columns 8+(r-r0) .. +8 (r - r0 + 8 <= tile_rows).
                unsafe {
                    simd::transpose8x8(
                        isa,
                        src_step.add(c),
                        lds,
                        staged.add(c * row_len + 8 + (r - r0)),
                        row_len as isize,
                    )
                };
            }
        }
        let last = r0 + len == full_rows;
        for c in 0..full_cols {
            let row = dst.wrapping_offset(c as isize * ldd);
            // Elements before row[0]'s next line boundary.
            let m = (row as usize / size_of::<f64>()) % 8;
            let start = if r0 == 0 { 0 } else { r0 - m };
            let end = if last { r0 + len } else { r0 + len - m };
            // Element e of the row is staged at column 8 + e - r0 (>= 1 since e >= r0 - 7).
            let from = staged.wrapping_add(c * row_len + 8 + start - r0);
            // SAFETY: start <= end <= r0 + len <= rows: destination elements of row c; the
            // stage columns 8+start-r0 .. 8+end-r0 lie inside stage row c.
            unsafe {
                if stream {
                    simd::stream_run(isa, from, row.add(start), end - start);
                } else {
                    std::ptr::copy_nonoverlapping(from, row.add(start), end - start);
                }
            }
            if !last {
                // SAFETY: the last 8 staged columns move to the front of the same stage row.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        staged.add(c * row_len + len),
                        staged.add(c * row_len),
                        8,
                    )
                };
            }
        }
        r0 += len;
    }
    // SAFETY: the caller vouches for the whole panel; full_rows ≤ rows, full_cols ≤ width.
    unsafe {
        simd::transpose_panel_edges(src, lds, dst, ldd, (rows, width), (full_rows, full_cols))
    };
}

/// The loop nest of [`RawCopy::copy_items`] for any element type, in safe code.
fn copy_items_generic<T: Copy>(
    src: &[T],
    plan: &Plan,
    offset: usize,
    dst: &mut [T],
    panel: usize,
    items: Range<usize>,
) {
    let chunks = plan.batch_chunks();
    let per_outer = plan.panels(panel) * chunks;
    let mut cursor = Cursor::at(&plan.outer, items.start / per_outer, offset as isize);
    let mut within = items.start % per_outer;
    // Invariant 3 makes every computed index non-negative and in bounds.
    let at = |pos: isize| pos as usize;
    for _ in items {
        match plan.inner {
            Inner::Run { len, src_stride } => {
                let out = &mut dst[at(cursor.dst)..at(cursor.dst) + len];
                if src_stride == 1 {
                    out.copy_from_slice(&src[at(cursor.src)..at(cursor.src) + len]);
                } else {
                    for (i, slot) in out.iter_mut().enumerate() {
                        *slot = src[at(cursor.src + i as isize * src_stride)];
                    }
                }
            }
            Inner::Transpose {
                rows,
                cols,
                lds,
                ldd,
            } => {
                let p = within / chunks;
                let first = within % chunks * BATCH_CHUNK;
                let columns = p * panel..cols.min((p + 1) * panel);
                for b in first..plan.batch.len.min(first + BATCH_CHUNK) {
                    let src_b = cursor.src + b as isize * plan.batch.src_stride;
                    let dst_b = cursor.dst + b as isize * plan.batch.dst_stride;
                    for r0 in (0..rows).step_by(8) {
                        for c in columns.clone() {
                            for r in r0..rows.min(r0 + 8) {
                                dst[at(dst_b + c as isize * ldd + r as isize)] =
                                    src[at(src_b + r as isize * lds + c as isize)];
                            }
                        }
                    }
                }
            }
        }
        within += 1;
        if within == per_outer {
            within = 0;
            cursor.advance(&plan.outer);
        }
    }
}
