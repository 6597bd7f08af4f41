//! `jagged rows cols order=row|col layout=jagged|flat shuffle=0|1`: the same rows·cols values
//! stored as separately allocated rows behind a table of row pointers, or as one flat
//! row-major block, summed in row or column order.
//!
//! Storage: element (r, j) holds `cell_value(r·cols + j)` in both layouts. `jagged` allocates
//! each row on its own (`Box<[f64]>`, the global allocator) and keeps them in a table
//! (`Vec<Box<[f64]>>`, 16 bytes per row: pointer and length); with `shuffle=1` the rows are
//! allocated in a seeded random order (splitmix64, seed [`SHUFFLE_SEED`]), so consecutive rows
//! land in scattered places. `flat` is one 2 MiB-aligned buffer, element (r, j) at `r·cols + j`.
//! `--huge-pages` applies to the flat block only: the rows are ordinary heap allocations.
//!
//! Access orders (the contract the simulator replays):
//! - `order=row`: for r, for j: load (r, j). Jagged: one table entry per row walk, then the row.
//! - `order=col`: for j, for r: load (r, j). Jagged: one table entry per element, then the
//!   element (the real code reloads the row pointer for every element of a column walk).
//!
//! Within each row (row order) or column (column order) the k-th element goes to accumulator
//! `k mod 8`.
//!
//! Simulated placement (jagged): the table is at `sim_address(0, 0)`; rows are placed where
//! glibc's malloc puts consecutive allocations of one size, in allocation order from
//! `sim_address(1, 0)`: below the mmap threshold (128 KiB) chunks of `max(32, ⌈(8·cols + 8)/16⌉·16)`
//! bytes with the row 16 bytes into its chunk; above it, pages of `⌈(8·cols + 16)/4096⌉·4096`
//! bytes with the row 16 bytes into its first page. The timed run uses whatever the allocator
//! really did (usually this, on a fresh heap).

use crate::cache::AccessSink;
use crate::kernels::access::{Mem, Placement, RealMem, SimMem, Strided, sim_address};
use crate::kernels::common::{
    ACCUMULATORS, cell_value, checked_elements, filled_buffer, fold, int_param, invalid,
    size_param, text_param,
};
use crate::kernels::spec::SimStart;
use crate::kernels::spec::{
    Family, Instance, KernelError, KernelSpec, ParamSpec, Params, PrepareOptions, Work,
};
use crate::kernels::spec::{Prepared, StridePattern};
use crate::mem::AlignedBuffer;
use crate::stats::SplitMix64;

/// The seed of `shuffle=1`'s allocation order.
pub const SHUFFLE_SEED: u64 = 0x5EED_1A66;

/// The most rows a jagged array may have: each is its own allocation, made at prepare time.
const MAX_ROWS: u64 = 1 << 20;

/// glibc's default mmap threshold: larger allocations get their own pages.
const MMAP_THRESHOLD: u64 = 128 << 10;

const PARAMS: [ParamSpec; 5] = [
    ParamSpec::int(
        "rows",
        1,
        MAX_ROWS,
        None,
        "number of rows (each its own allocation)",
    ),
    ParamSpec::int("cols", 1, 1 << 24, None, "elements per row"),
    ParamSpec::choice(
        "order",
        &["row", "col"],
        Some("row"),
        "row (for r, for j) or col (for j, for r)",
    ),
    ParamSpec::choice(
        "layout",
        &["jagged", "flat"],
        Some("jagged"),
        "jagged: a table of separately allocated rows; flat: one row-major block",
    ),
    ParamSpec::int(
        "shuffle",
        0,
        1,
        Some("0"),
        "1 = allocate the rows in a seeded random order (jagged only)",
    ),
];

pub(crate) const JAGGED: KernelSpec = KernelSpec {
    name: "jagged",
    family: Family::Tensor,
    params: &PARAMS,
    summary: "Sums separately allocated rows behind a pointer table, or one flat block, in row or column order.",
    example: "rows=512 cols=512 order=col layout=jagged",
    explanation: "Sums the same values stored as a jagged array (a table of row pointers, \
                  each row its own allocation) or as one flat block, in row or column order. \
                  Row order pays one pointer load per row and streams each row; column order \
                  pays a pointer load per element and touches one line in every row, so the \
                  rows' placement decides whether those lines survive until the next \
                  column. shuffle=1 allocates the rows in a random order.",
    prepare,
    plan,
    pattern,
    simulation_note: Some(simulation_note),
    accesses: Some(accesses),
    simulate: SimStart::Cold,
};

/// A jagged-array point's shape and traversal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Jagged {
    pub rows: usize,
    pub cols: usize,
    pub column: bool,
    pub flat: bool,
    pub shuffle: bool,
}

impl Jagged {
    fn from_params(params: &Params) -> Result<Self, KernelError> {
        let shape = Self {
            rows: size_param("jagged", params, "rows")?,
            cols: size_param("jagged", params, "cols")?,
            column: text_param("jagged", params, "order")? == "col",
            flat: text_param("jagged", params, "layout")? == "flat",
            shuffle: int_param("jagged", params, "shuffle")? == 1,
        };
        if shape.flat && shape.shuffle {
            return Err(invalid(
                "shuffle",
                "shuffle=1 scatters separately allocated rows; a flat block has none",
            ));
        }
        checked_elements("rows", &[shape.rows, shape.cols])?;
        Ok(shape)
    }

    /// Simulated bytes from one row's start to the next allocation's (the allocator model).
    pub fn row_pitch(&self) -> u64 {
        let bytes = self.cols as u64 * 8;
        if bytes + 16 >= MMAP_THRESHOLD {
            (bytes + 16).div_ceil(4096) * 4096
        } else {
            ((bytes + 8).div_ceil(16) * 16).max(32)
        }
    }
}

fn plan(params: &Params) -> Result<Vec<usize>, KernelError> {
    let shape = Jagged::from_params(params)?;
    let len = shape.rows * shape.cols;
    Ok(if shape.flat {
        vec![len]
    } else {
        vec![2 * shape.rows, len]
    })
}

fn accesses(params: &Params) -> Result<u64, KernelError> {
    let s = Jagged::from_params(params)?;
    let elements = (s.rows * s.cols) as u64;
    Ok(match (s.flat, s.column) {
        (true, _) => elements,
        (false, false) => elements + s.rows as u64,
        (false, true) => 2 * elements,
    })
}

fn simulation_note(params: &Params) -> Option<&'static str> {
    let shape = Jagged::from_params(params).ok()?;
    (!shape.flat).then_some(
        "the rows are simulated where glibc's malloc places consecutive allocations of their \
         size; the timed run uses the rows wherever the allocator really put them",
    )
}

/// The `jagged` orders (see the module doc). Jagged: buffer r is row r; flat: buffer 0.
pub fn jagged_sum<M: Mem<Elem = f64>>(m: &mut M, s: Jagged) -> f64 {
    let mut acc = [0.0; ACCUMULATORS];
    match (s.flat, s.column) {
        (true, false) => {
            for r in 0..s.rows {
                m.sum_run(Strided::new(0, r * s.cols, 1), s.cols, &mut acc);
            }
        }
        (true, true) => {
            for j in 0..s.cols {
                m.sum_run(Strided::new(0, j, s.cols as isize), s.rows, &mut acc);
            }
        }
        (false, false) => {
            for r in 0..s.rows {
                m.sum_run(Strided::new(r, 0, 1), s.cols, &mut acc);
            }
        }
        (false, true) => {
            for j in 0..s.cols {
                for r in 0..s.rows {
                    acc[r % ACCUMULATORS] += m.load(r, j);
                }
            }
        }
    }
    fold(&acc)
}

/// The order `shuffle=1` allocates rows in: a seeded Fisher–Yates shuffle of `0..rows`.
pub fn allocation_order(rows: usize, shuffle: bool) -> Vec<usize> {
    let mut order: Vec<usize> = (0..rows).collect();
    if shuffle {
        let mut rng = SplitMix64::new(SHUFFLE_SEED);
        for i in (1..rows).rev() {
            let j = (rng.next_u64() % (i as u64 + 1)) as usize;
            order.swap(i, j);
        }
    }
    order
}

enum Storage {
    Flat(AlignedBuffer),
    Rows {
        table: Vec<Box<[f64]>>,
        placement: Placement,
    },
}

struct JaggedSum {
    shape: Jagged,
    storage: Storage,
    expected: f64,
}

/// The rows, allocated one by one in `allocation_order`, and their simulated placement.
fn allocate_rows(s: Jagged) -> (Vec<Box<[f64]>>, Placement) {
    let order = allocation_order(s.rows, s.shuffle);
    let mut slots: Vec<Option<Box<[f64]>>> = (0..s.rows).map(|_| None).collect();
    let mut bases = vec![0; s.rows];
    let pitch = s.row_pitch();
    for (slot, &r) in order.iter().enumerate() {
        let row: Box<[f64]> = (0..s.cols).map(|j| cell_value(r * s.cols + j)).collect();
        slots[r] = Some(row);
        bases[r] = sim_address(1, 0) + 16 + slot as u64 * pitch;
    }
    let table = slots
        .into_iter()
        .map(|row| row.expect("every row allocated"))
        .collect();
    let placement = Placement {
        bases,
        table: Some(sim_address(0, 0)),
    };
    (table, placement)
}

fn prepare(params: &Params, options: &PrepareOptions) -> Prepared {
    let shape = Jagged::from_params(params)?;
    let len = shape.rows * shape.cols;
    let storage = if shape.flat {
        Storage::Flat(filled_buffer(len, options)?)
    } else {
        let (table, placement) = allocate_rows(shape);
        Storage::Rows { table, placement }
    };
    // Straightforward reference: the values of every cell.
    let expected = (0..len).map(cell_value).sum();
    Ok(Box::new(JaggedSum {
        shape,
        storage,
        expected,
    }))
}

impl Instance for JaggedSum {
    fn work(&self) -> Work {
        Work::reads_f64((self.shape.rows * self.shape.cols) as u64)
    }

    fn run(&mut self) -> f64 {
        match &mut self.storage {
            Storage::Flat(x) => jagged_sum(&mut RealMem::new([x]), self.shape),
            Storage::Rows { table, .. } => jagged_sum(&mut RealMem::table(table), self.shape),
        }
    }

    fn expected_checksum(&self) -> f64 {
        self.expected
    }

    fn simulate(&mut self, sink: &mut dyn AccessSink) {
        match &mut self.storage {
            Storage::Flat(x) => jagged_sum(&mut SimMem::new([x], sink), self.shape),
            Storage::Rows { table, placement } => {
                jagged_sum(&mut SimMem::placed(table, sink, placement), self.shape)
            }
        };
    }
}

fn pattern(params: &Params) -> Result<Option<StridePattern>, KernelError> {
    let s = Jagged::from_params(params)?;
    Ok(match (s.flat, s.column, s.shuffle) {
        (true, false, _) => Some(StridePattern::elements(0, 1, s.cols, "one row")),
        (true, true, _) => Some(StridePattern::elements(
            0,
            s.cols as isize,
            s.rows,
            "one column",
        )),
        (false, false, _) => Some(StridePattern::elements(1, 1, s.cols, "one row")),
        (false, true, false) => Some(StridePattern {
            buffer: 1,
            stride_bytes: s.row_pitch() as i64,
            count: s.rows as u64,
            description: format!(
                "one column across rows allocated in order: {} elements {} B apart",
                crate::units::format_count(s.rows as u64),
                crate::units::format_count(s.row_pitch())
            ),
        }),
        // Shuffled rows have no common stride.
        (false, true, true) => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Recorder(Vec<u64>);

    impl AccessSink for Recorder {
        fn load(&mut self, addr: u64, len: u32) {
            assert_eq!(len, 8);
            self.0.push(addr);
        }
        fn store(&mut self, _: u64, _: u32) {
            panic!("a sum stores nothing");
        }
    }

    fn stream(args: &[(&str, &str)]) -> (Vec<u64>, f64, f64) {
        let mut params = Params::new();
        for (name, value) in args {
            let value = match value.parse::<u64>() {
                Ok(v) => crate::vocab::ParamValue::Int(v),
                Err(_) => crate::vocab::ParamValue::Text(value.to_string()),
            };
            params.insert(name.to_string(), value);
        }
        let mut instance = prepare(
            &params,
            &PrepareOptions::with_planner(crate::kernels::copy_planner::planner_for_tests()),
        )
        .unwrap();
        let mut recorder = Recorder::default();
        instance.simulate(&mut recorder);
        (recorder.0, instance.run(), instance.expected_checksum())
    }

    #[test]
    fn jagged_streams_load_a_row_pointer_per_row_walk_or_per_element() {
        let (rows, cols) = (3u64, 5u64);
        let shape = |order: &'static str, shuffle: &'static str| {
            [
                ("rows", "3"),
                ("cols", "5"),
                ("order", order),
                ("layout", "jagged"),
                ("shuffle", shuffle),
            ]
        };
        // 5 elements of 8 B: chunks of 48 B, each row 16 B into its chunk.
        let row_base = |r: u64| sim_address(1, 0) + 16 + r * 48;
        let entry = |r: u64| sim_address(0, 0) + 16 * r;
        let (row_order, sum, expected) = stream(&shape("row", "0"));
        assert_eq!(sum, expected);
        let want: Vec<u64> = (0..rows)
            .flat_map(|r| {
                std::iter::once(entry(r)).chain((0..cols).map(move |j| row_base(r) + 8 * j))
            })
            .collect();
        assert_eq!(row_order, want);
        let (col_order, sum, expected) = stream(&shape("col", "0"));
        assert_eq!(sum, expected);
        let want: Vec<u64> = (0..cols)
            .flat_map(|j| (0..rows).flat_map(move |r| [entry(r), row_base(r) + 8 * j]))
            .collect();
        assert_eq!(col_order, want);
        // Shuffled: the same table loads; each row where its allocation slot puts it.
        let order = allocation_order(3, true);
        let (shuffled, sum, expected) = stream(&shape("col", "1"));
        assert_eq!(sum, expected);
        let slot = |r: u64| order.iter().position(|&x| x as u64 == r).unwrap() as u64;
        let want: Vec<u64> = (0..cols)
            .flat_map(|j| {
                let slot = &slot;
                (0..rows).flat_map(move |r| [entry(r), row_base(slot(r)) + 8 * j])
            })
            .collect();
        assert_eq!(shuffled, want);
        let (flat, _, _) = stream(&[
            ("rows", "3"),
            ("cols", "5"),
            ("order", "col"),
            ("layout", "flat"),
            ("shuffle", "0"),
        ]);
        let want: Vec<u64> = (0..cols)
            .flat_map(|j| (0..rows).map(move |r| sim_address(0, (r * cols + j) as usize)))
            .collect();
        assert_eq!(flat, want);
    }

    #[test]
    fn allocation_order_is_a_seeded_permutation() {
        assert_eq!(allocation_order(5, false), [0, 1, 2, 3, 4]);
        let shuffled = allocation_order(100, true);
        assert_eq!(shuffled, allocation_order(100, true));
        assert_ne!(shuffled, allocation_order(100, false));
        let mut sorted = shuffled.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, allocation_order(100, false));
    }

    #[test]
    fn row_pitch_follows_the_allocator_model() {
        let pitch = |cols| {
            Jagged {
                rows: 1,
                cols,
                column: false,
                flat: false,
                shuffle: false,
            }
            .row_pitch()
        };
        assert_eq!(pitch(1), 32);
        assert_eq!(pitch(8), 80);
        assert_eq!(pitch(64), 528);
        assert_eq!(pitch(16384), 135168);
    }
}
