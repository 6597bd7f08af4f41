//! The order in which the copy engine moves the elements of an 8-byte copy, replayed without
//! copying anything: what the simulator feeds its caches for the copy engine.
//!
//! [`engine_order`] walks the same plan, tuning, work items and panel loop nests as the engine
//! (the same `PanelKernel` decision), at the granularity of its 8×8 blocks: a block's 64
//! source elements are loaded row by row, then its 8 destination rows are stored; a staged
//! panel's blocks go to the engine's L1 stage and its destination rows come out of it
//! ([`OrderSink::stage_load`]/[`OrderSink::stage_store`]). Not replayed: the carry buffer and
//! the one-block delay of streamed panels whose destination rows start mid-line, software
//! prefetches, and non-temporal stores (reported as ordinary stores, as cachegrind counts
//! them). Both buffers are assumed to start on a cache line.

#![forbid(unsafe_code)]

use crate::loops::{PanelKernel, SWEEP_COLUMNS, stage_columns, stage_row_len, sweeps};
use crate::plan::{Cursor, Inner, Plan, Tuning};
use crate::simd::Isa;
use crate::{CopyError, Planner, validate};

/// What the replay leaves out, for every simulated figure of a copy-engine kernel.
pub const REPLAY_CAVEAT: &str = "the copy engine is replayed in its own order (plan, panels, \
     tiles, 8×8 blocks, its L1 stage) but without the carried lines of streamed panels and \
     its prefetches, and its non-temporal stores count as ordinary stores";

/// Receives the engine's accesses in order, as element indices into the source storage and
/// the destination.
pub trait OrderSink {
    /// The engine reads source element `src`.
    fn load(&mut self, src: usize);
    /// The engine writes destination element `dst` with the value of source element `src`.
    fn store(&mut self, dst: usize, src: usize);
    /// The engine reads element `index` of its L1 stage (a line-aligned scratch buffer of its
    /// own; staged panels only).
    fn stage_load(&mut self, index: usize) {
        let _ = index;
    }
    /// The engine writes element `index` of its L1 stage.
    fn stage_store(&mut self, index: usize) {
        let _ = index;
    }
}

/// Replays the accesses [`crate::copy_into_contiguous`] makes with `planner` for an 8-byte
/// element type on this CPU (the same tuning — the planner's wisdom for the copy's class when
/// it has one, else the analytic one — and instruction set), in order, into `sink`, for a
/// destination that starts at element `dst_start` of a line-aligned buffer (destination
/// indices are reported from the buffer's start). Checks the view as the engine does; never
/// plans (a copy the planner has not planned replays the analytic schedule).
pub fn engine_order(
    planner: &Planner,
    src_len: usize,
    shape: &[usize],
    strides: &[isize],
    offset: usize,
    dst_start: usize,
    sink: &mut impl OrderSink,
) -> Result<(), CopyError> {
    let count = shape
        .iter()
        .try_fold(1usize, |acc, &n| acc.checked_mul(n))
        .ok_or(CopyError::Overflow)?;
    let needed = validate(src_len, shape, strides, offset, count)?;
    if needed == 0 {
        return Ok(());
    }
    let plan = Plan::new(shape, strides);
    let bytes = needed.saturating_mul(size_of::<f64>());
    let tuning = planner.known_tuning(&plan, offset, 1, bytes);
    replay(
        &plan,
        (offset, dst_start),
        tuning,
        Isa::detect().limited_to(tuning.kernels),
        sink,
    );
    Ok(())
}

/// The walk of `RawCopy::copy_items` over every work item.
fn replay(
    plan: &Plan,
    (offset, dst_start): (usize, usize),
    tuning: Tuning,
    isa: Isa,
    sink: &mut impl OrderSink,
) {
    let mut plan = plan.clone();
    if tuning.stream {
        plan.order_outer_by_source();
    }
    let panel = tuning.panel;
    let chunks = plan.batch_chunks();
    let per_outer = plan.panels(panel) * chunks;
    let mut cursor = Cursor::at(&plan.outer, 0, offset as isize);
    cursor.dst += dst_start as isize;
    let at = |index: isize| index as usize;
    for _ in 0..plan.outer_count() {
        for within in 0..per_outer {
            match plan.inner {
                Inner::Run { len, src_stride } => {
                    for i in 0..len as isize {
                        let from = at(cursor.src + i * src_stride);
                        sink.load(from);
                        sink.store(at(cursor.dst + i), from);
                    }
                }
                Inner::Transpose {
                    rows,
                    cols,
                    lds,
                    ldd,
                } => {
                    let item = plan.panel_item(within, panel, cols);
                    let (first, c0) = (item.first as isize, item.column as isize);
                    let panel = Panel {
                        src: cursor.src + first * plan.batch.src_stride + c0,
                        lds,
                        dst: cursor.dst + first * plan.batch.dst_stride + c0 * ldd,
                        ldd,
                        rows,
                        width: item.width,
                    };
                    let batch = (item.count, plan.batch.src_stride, plan.batch.dst_stride);
                    replay_panel(&panel, batch, tuning, isa, sink);
                }
            }
        }
        cursor.advance(&plan.outer);
    }
}

/// One transpose panel, `dst[c·ldd + r] = src[r·lds + c]` for `r < rows`, `c < width`, as
/// storage indices.
#[derive(Debug, Clone, Copy)]
struct Panel {
    src: isize,
    lds: isize,
    dst: isize,
    ldd: isize,
    rows: usize,
    width: usize,
}

impl Panel {
    fn src_at(&self, r: usize, c: usize) -> usize {
        (self.src + r as isize * self.lds + c as isize) as usize
    }

    fn dst_at(&self, r: usize, c: usize) -> usize {
        (self.dst + c as isize * self.ldd + r as isize) as usize
    }

    /// The same panel shifted by `b` batch steps.
    fn batch(&self, b: usize, (src_step, dst_step): (isize, isize)) -> Panel {
        Panel {
            src: self.src + b as isize * src_step,
            dst: self.dst + b as isize * dst_step,
            ..*self
        }
    }

    /// Columns `first..first + width` of this panel.
    fn columns(&self, first: usize, width: usize) -> Panel {
        Panel {
            src: self.src + first as isize,
            dst: self.dst + first as isize * self.ldd,
            width,
            ..*self
        }
    }

    fn full(&self) -> (usize, usize) {
        (self.rows / 8 * 8, self.width / 8 * 8)
    }

    /// One 8×8 block: its source rows loaded, then its destination rows stored.
    fn block(&self, r0: usize, c0: usize, sink: &mut impl OrderSink) {
        self.block_loads(r0, c0, sink);
        for c in c0..c0 + 8 {
            for r in r0..r0 + 8 {
                sink.store(self.dst_at(r, c), self.src_at(r, c));
            }
        }
    }

    fn block_loads(&self, r0: usize, c0: usize, sink: &mut impl OrderSink) {
        for r in r0..r0 + 8 {
            for c in c0..c0 + 8 {
                sink.load(self.src_at(r, c));
            }
        }
    }

    /// `transpose_panel_edges`: the columns past the last block of the full rows, then the
    /// remaining rows whole, column by column.
    fn edges(&self, sink: &mut impl OrderSink) {
        let (full_rows, full_cols) = self.full();
        let pieces = [
            (0..full_rows, full_cols..self.width),
            (full_rows..self.rows, 0..self.width),
        ];
        for (rows, cols) in pieces {
            for c in cols {
                for r in rows.clone() {
                    let from = self.src_at(r, c);
                    sink.load(from);
                    sink.store(self.dst_at(r, c), from);
                }
            }
        }
    }
}

/// `transpose_panel`: the engine's choice of loop nest for a panel, then that loop nest.
fn replay_panel(
    panel: &Panel,
    (count, batch_src, batch_dst): (usize, isize, isize),
    tuning: Tuning,
    isa: Isa,
    sink: &mut impl OrderSink,
) {
    // Both buffers start on a line, so an element index tells where its line starts.
    let line = |index: isize| index.rem_euclid(8) == 0;
    let steps = (batch_src, batch_dst);
    let (full_rows, full_cols) = panel.full();
    match PanelKernel::choose(isa, tuning, (count, batch_dst), line(panel.dst), panel.ldd) {
        PanelKernel::BatchStream => {
            for s0 in (0..full_rows).step_by(tuning.batch_rows) {
                let s1 = full_rows.min(s0 + tuning.batch_rows);
                for b in 0..count {
                    let panel = panel.batch(b, steps);
                    for c0 in (0..full_cols).step_by(8) {
                        for r0 in (s0..s1).step_by(8) {
                            panel.block(r0, c0, sink);
                        }
                    }
                }
            }
            for b in 0..count {
                panel.batch(b, steps).edges(sink);
            }
        }
        PanelKernel::Streamed => {
            for b in 0..count {
                let panel = panel.batch(b, steps);
                if sweeps(tuning, panel.lds, line(panel.src)) {
                    for first in (0..panel.width).step_by(SWEEP_COLUMNS) {
                        let part = panel.columns(first, SWEEP_COLUMNS.min(panel.width - first));
                        let (full_rows, full_cols) = part.full();
                        for r0 in (0..full_rows).step_by(8) {
                            for c0 in (0..full_cols).step_by(8) {
                                part.block(r0, c0, sink);
                            }
                        }
                        part.edges(sink);
                    }
                } else {
                    for t0 in (0..full_rows).step_by(tuning.tile_rows) {
                        let next = full_rows.min(t0 + tuning.tile_rows);
                        for c0 in (0..full_cols).step_by(8) {
                            for r0 in (t0..next).step_by(8) {
                                panel.block(r0, c0, sink);
                            }
                        }
                    }
                    panel.edges(sink);
                }
            }
        }
        PanelKernel::Staged => {
            let stage_columns = stage_columns(tuning.panel);
            for b in 0..count {
                let panel = panel.batch(b, steps);
                for first in (0..panel.width).step_by(stage_columns) {
                    staged(
                        &panel.columns(first, stage_columns.min(panel.width - first)),
                        tuning.tile_rows,
                        sink,
                    );
                }
            }
        }
    }
}

/// `transpose_panel_one`: each tile's blocks transposed into the stage row step by row step,
/// then each destination row's run copied out of the stage, cut at the destination's line
/// boundaries (the 8 elements past the last boundary move to the front of the stage row and go
/// out with the next tile). Stage row `c` holds 8 carried elements, then the tile's elements of
/// destination row `c`.
fn staged(panel: &Panel, tile_rows: usize, sink: &mut impl OrderSink) {
    let (full_rows, full_cols) = panel.full();
    let row_len = stage_row_len(tile_rows);
    let mut r0 = 0;
    while r0 < full_rows {
        let len = tile_rows.min(full_rows - r0);
        for r in (r0..r0 + len).step_by(8) {
            for c in (0..full_cols).step_by(8) {
                panel.block_loads(r, c, sink);
                for j in c..c + 8 {
                    for k in r - r0..r - r0 + 8 {
                        sink.stage_store(j * row_len + 8 + k);
                    }
                }
            }
        }
        let last = r0 + len == full_rows;
        for c in 0..full_cols {
            let row_start = panel.dst + c as isize * panel.ldd;
            let m = row_start.rem_euclid(8) as usize;
            let start = if r0 == 0 { 0 } else { r0 - m };
            let end = if last { r0 + len } else { r0 + len - m };
            for e in start..end {
                sink.stage_load(c * row_len + 8 + e - r0);
                sink.store(panel.dst_at(e, c), panel.src_at(e, c));
            }
            if !last {
                for k in 0..8 {
                    sink.stage_load(c * row_len + len + k);
                    sink.stage_store(c * row_len + k);
                }
            }
        }
        r0 += len;
    }
    panel.edges(sink);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every access, in order.
    #[derive(Default)]
    struct Record {
        loads: Vec<usize>,
        stores: Vec<(usize, usize)>,
        sequence: Vec<(bool, usize)>,
    }

    impl OrderSink for Record {
        fn load(&mut self, src: usize) {
            self.loads.push(src);
            self.sequence.push((false, src));
        }
        fn store(&mut self, dst: usize, src: usize) {
            self.stores.push((dst, src));
            self.sequence.push((true, dst));
        }
    }

    /// The copy's definition: destination element k holds the source element of logical
    /// index k (C order).
    fn definition(shape: &[usize], strides: &[isize], offset: usize) -> Vec<(usize, usize)> {
        let count: usize = shape.iter().product();
        (0..count)
            .map(|k| {
                let (mut rest, mut at) = (k, offset as isize);
                for (&n, &s) in shape.iter().zip(strides).rev() {
                    at += (rest % n) as isize * s;
                    rest /= n;
                }
                (k, at as usize)
            })
            .collect()
    }

    fn replay_with(
        shape: &[usize],
        strides: &[isize],
        offset: usize,
        tuning: Tuning,
        isa: Isa,
    ) -> Record {
        let mut record = Record::default();
        replay(
            &Plan::new(shape, strides),
            (offset, 0),
            tuning,
            isa,
            &mut record,
        );
        record
    }

    fn tunings() -> Vec<Tuning> {
        let base = Tuning::for_caches(1 << 30, 1, crate::TEST_CACHES);
        let mut all = vec![];
        for (stream, staged) in [(true, false), (true, true), (false, true)] {
            for (panel, tile_rows) in [(16, 8), (64, 16), (512, 32)] {
                all.push(Tuning {
                    panel,
                    tile_rows,
                    stream,
                    staged,
                    ..base
                });
            }
        }
        all
    }

    #[test]
    fn every_element_is_stored_once_from_its_source() {
        // Transposes (aligned, a misaligned leading dimension, edges), a batch of panels, a
        // strided run, a permutation with an offset.
        let cases: [(&[usize], &[isize], usize); 6] = [
            (&[24, 40], &[1, 24], 0),
            (&[37, 29], &[1, 41], 3),
            (&[64, 16], &[1, 64], 0),
            (&[3, 16, 16], &[256, 1, 16], 0),
            (&[5, 7], &[9, 2], 1),
            (&[4, 6, 5, 3], &[1, 4 * 6, 4, 4 * 6 * 5], 2),
        ];
        for (shape, strides, offset) in cases {
            let mut want = definition(shape, strides, offset);
            want.sort_unstable();
            for tuning in tunings() {
                for isa in [Isa::Avx512, Isa::Avx2, Isa::Portable] {
                    let record = replay_with(shape, strides, offset, tuning, isa);
                    let mut got = record.stores.clone();
                    got.sort_unstable();
                    assert_eq!(got, want, "{shape:?} {strides:?} {tuning:?} {isa:?}");
                    let mut loaded = record.loads.clone();
                    loaded.sort_unstable();
                    let mut sources: Vec<usize> = want.iter().map(|&(_, s)| s).collect();
                    sources.sort_unstable();
                    assert_eq!(loaded, sources, "{shape:?} {strides:?} {tuning:?} {isa:?}");
                }
            }
        }
    }

    /// 16-column panels of 16-row tiles, streamed or staged.
    fn tiles_of_16(stream: bool) -> Tuning {
        Tuning {
            panel: 16,
            tile_rows: 16,
            stream,
            staged: !stream,
            ..Tuning::for_caches(1 << 30, 1, crate::TEST_CACHES)
        }
    }

    #[test]
    fn a_streamed_tile_walks_blocks_down_each_column_strip() {
        // 16×16 transpose, tiles of 16 rows: block (0,0), block (8,0), then column strip 8.
        let record = replay_with(&[16, 16], &[1, 16], 0, tiles_of_16(true), Isa::Avx512);
        // The plan's transpose reads source rows of the view's last dim: the first block loads
        // source rows 0..8 of columns 0..8, the second rows 8..16 of the same columns.
        let first_loads: Vec<usize> = record.loads[..8].to_vec();
        assert_eq!(first_loads, (0..8).collect::<Vec<_>>());
        assert_eq!(record.loads[64], 8 * 16);
        assert_eq!(record.loads[128], 8);
        // Each block's 64 loads come before its 64 stores.
        assert!(record.sequence[..64].iter().all(|&(store, _)| !store));
        assert!(record.sequence[64..128].iter().all(|&(store, _)| store));
    }

    #[test]
    fn a_staged_tile_loads_all_its_blocks_before_its_row_runs() {
        let record = replay_with(&[16, 16], &[1, 16], 0, tiles_of_16(false), Isa::Avx512);
        // Four blocks (256 loads), then 16 destination rows of 16 elements.
        assert!(record.sequence[..256].iter().all(|&(store, _)| !store));
        let runs: Vec<usize> = record.sequence[256..272].iter().map(|&(_, d)| d).collect();
        assert_eq!(runs, (0..16).collect::<Vec<_>>());
    }

    #[test]
    fn engine_order_checks_the_view_like_the_engine() {
        let planner = Planner::analytic(crate::TEST_CACHES);
        let mut record = Record::default();
        let err = engine_order(&planner, 10, &[4, 4], &[1, 4], 0, 0, &mut record).unwrap_err();
        assert!(matches!(err, CopyError::OutOfBounds { .. }), "{err}");
        assert!(engine_order(&planner, 16, &[4, 0], &[1, 4], 0, 0, &mut record).is_ok());
        assert!(record.sequence.is_empty());
        // Destination indices count from the buffer's start.
        engine_order(&planner, 16, &[2, 2], &[1, 2], 0, 5, &mut record).unwrap();
        let mut stored: Vec<usize> = record.stores.iter().map(|&(d, _)| d).collect();
        stored.sort_unstable();
        assert_eq!(stored, vec![5, 6, 7, 8]);
    }
}
