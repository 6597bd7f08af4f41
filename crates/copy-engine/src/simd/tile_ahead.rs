//! The prefetch walks of the tiled panel kernels (`panel.rs`): which source lines a tiled
//! panel asks L2 for as it walks its tiles, the next tile's or a fixed distance along the walk.

use super::{LINE_BYTES, prefetch};

/// What a tiled panel prefetches as it walks its tiles (column blocks outermost, each swept
/// down the tile's rows).
pub(super) struct TileAhead {
    src: *const f64,
    lds: isize,
    tile_rows: usize,
    /// Rows of the panel in whole 8-row blocks.
    full_rows: usize,
    width: usize,
    /// Rows of the tile being walked.
    height: usize,
    how: Ahead,
}

enum Ahead {
    /// The next tile, row by row, spread evenly over the current tile's blocks.
    NextTile {
        lines: TilePrefetch,
        per_block: usize,
    },
    /// Before each block, the same rows `columns` further on in the walk: past the panel's
    /// last whole block, the next tile's rows from its first column. Every line, not every
    /// second one: the L2's adjacent-line prefetcher does not make up the difference
    /// (`docs/copy-engine.md#prefetch`).
    Walk { columns: usize },
}

impl TileAhead {
    /// Prefetching for a panel of `full_rows` whole-block rows cut into `tile_rows`-row tiles:
    /// `ahead_bytes` along the walk, or (0) tile by tile, whose first tile is fetched now.
    pub(super) fn start(
        src: *const f64,
        lds: isize,
        (tile_rows, full_rows): (usize, usize),
        width: usize,
        ahead_bytes: usize,
    ) -> Self {
        let how = if ahead_bytes > 0 {
            Ahead::Walk {
                columns: ahead_bytes.div_ceil(LINE_BYTES) * 8,
            }
        } else {
            TilePrefetch::new(src, lds, tile_rows.min(full_rows), width).issue(usize::MAX);
            Ahead::NextTile {
                lines: TilePrefetch::new(src, lds, 0, width),
                per_block: 0,
            }
        };
        TileAhead {
            src,
            lds,
            tile_rows,
            full_rows,
            width,
            height: tile_rows,
            how,
        }
    }

    /// The walk enters the tile of `height` rows ending at row `next`.
    pub(super) fn next_tile(&mut self, next: usize, height: usize) {
        self.height = height;
        if let Ahead::NextTile { lines, per_block } = &mut self.how {
            *lines = TilePrefetch::new(
                self.src.wrapping_offset(next as isize * self.lds),
                self.lds,
                self.tile_rows.min(self.full_rows - next),
                self.width,
            );
            let blocks = height / 8 * (self.width / 8);
            *per_block = lines.remaining.div_ceil(blocks.max(1));
        }
    }

    /// The walk is about to read the block of rows `r0..r0+8`, columns `c0..c0+8`.
    #[inline(always)]
    pub(super) fn before_block(&mut self, r0: usize, c0: usize) {
        match &mut self.how {
            Ahead::NextTile { lines, per_block } => lines.issue(*per_block),
            Ahead::Walk { columns } => {
                let full_cols = self.width / 8 * 8;
                let target = c0 + *columns;
                let (row, col) = if target < full_cols {
                    (r0, target)
                } else {
                    (r0 + self.height, target - full_cols)
                };
                if row + 8 <= self.full_rows && col < full_cols {
                    let first = self
                        .src
                        .wrapping_offset(row as isize * self.lds + col as isize);
                    for k in 0..8 {
                        prefetch(first.wrapping_offset(k * self.lds));
                    }
                }
            }
        }
    }
}

/// The next lines of a tile to prefetch, row by row (front to back along each source row, as
/// the hardware prefetchers would), without a division per line.
#[derive(Clone, Copy)]
struct TilePrefetch {
    row: *const f64,
    col: usize,
    width: usize,
    lds: isize,
    remaining: usize,
}

impl TilePrefetch {
    /// The `rows` source rows of `width` columns from `first` (none if `rows == 0`).
    fn new(first: *const f64, lds: isize, rows: usize, width: usize) -> Self {
        TilePrefetch {
            row: first,
            col: 0,
            width,
            lds,
            remaining: rows * width.div_ceil(8),
        }
    }

    /// Requests up to `lines` more prefetches.
    #[inline(always)]
    fn issue(&mut self, lines: usize) {
        for _ in 0..lines.min(self.remaining) {
            prefetch(self.row.wrapping_add(self.col));
            self.col += 8;
            if self.col >= self.width {
                self.col = 0;
                self.row = self.row.wrapping_offset(self.lds);
            }
        }
        self.remaining = self.remaining.saturating_sub(lines);
    }
}
