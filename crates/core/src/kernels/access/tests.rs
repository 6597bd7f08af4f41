//! The accessors' contract: each run on [`RealMem`] equals the provided (reference) order value
//! for value, [`SimMem`] reports exactly the documented stream, and [`AddressMem`] reports the
//! same stream without data, for every element type.

use super::*;
use crate::cache::AccessSink;
use proptest::prelude::*;

#[derive(Default)]
struct Recorder(Vec<(char, u64, u32)>);

impl AccessSink for Recorder {
    fn load(&mut self, addr: u64, len: u32) {
        self.0.push(('L', addr, len));
    }
    fn store(&mut self, addr: u64, len: u32) {
        self.0.push(('S', addr, len));
    }
}

/// Data whose sums depend on which elements were combined, and in which order.
fn distinct_data<T: Element>(len: usize) -> Vec<T> {
    (0..len)
        .map(|i| T::from_f64((1u64 << (i % 20)) as f64 + i as f64 * 0.37))
        .collect()
}

#[test]
fn buffers_are_placed_4gib_apart() {
    assert_eq!(sim_address(0, 0), 1 << 32);
    assert_eq!(sim_address(1, 3), (2 << 32) + 24);
    assert_eq!(
        sim_address(0, MAX_BUFFER_ELEMENTS - 1) + 8,
        sim_address(1, 0)
    );
}

#[test]
fn f32_elements_are_four_bytes_apart() {
    assert_eq!(
        element_address::<f32>(1, 3) - element_address::<f32>(1, 0),
        12
    );
    assert_eq!(element_address::<f64>(0, 1), (1 << 32) + 8);
}

#[test]
fn sim_mem_reads_and_writes_real_data_and_reports_every_access() {
    let mut a = vec![1.0, 2.0, 3.0];
    let mut b = vec![0.0; 3];
    let mut recorder = Recorder::default();
    {
        let mut m = SimMem::new([&mut a, &mut b], &mut recorder);
        let v = m.load(0, 2);
        m.store(1, 1, v);
    }
    assert_eq!(b, [0.0, 3.0, 0.0]);
    assert_eq!(
        recorder.0,
        [('L', (1 << 32) + 16, 8), ('S', (2 << 32) + 8, 8)]
    );
}

#[test]
fn copy_view_is_the_same_on_every_accessor() {
    let shape = [3, 2];
    let strides = [1, 3];
    let view = CopyView {
        shape: &shape,
        strides: &strides,
        offset: 0,
    };
    let planner = crate::kernels::copy_planner::planner_for_tests();
    let mut src: Vec<f64> = (0..6).map(f64::from).collect();
    let mut real_dst = vec![-1.0; 8];
    RealMem::new([&mut src, &mut real_dst]).copy_view(&planner, 0, &view, 1, 1);
    let mut sim_dst = vec![-1.0; 8];
    let mut recorder = Recorder::default();
    SimMem::new([&mut src, &mut sim_dst], &mut recorder).copy_view(&planner, 0, &view, 1, 1);
    assert_eq!(real_dst, [-1.0, 0.0, 3.0, 1.0, 4.0, 2.0, 5.0, -1.0]);
    assert_eq!(real_dst, sim_dst);
    assert_eq!(recorder.0.len(), 12);
    assert_eq!(recorder.0[2], ('L', (1 << 32) + 24, 8));
    let mut addresses = Recorder::default();
    AddressMem::<f64, 2>::new([6, 8], &mut addresses).copy_view(&planner, 0, &view, 1, 1);
    assert_eq!(addresses.0, recorder.0);
}

#[test]
fn spans_are_ascending_runs_on_every_accessor() {
    for len in [0, 1, 15, 16, 17, 100] {
        let mut data: Vec<f64> = (0..len + 3).map(|i| (i % 7) as f64).collect();
        let real = RealMem::new([&mut data]).sum_span(0, len);
        let mut recorder = Recorder::default();
        let simulated = SimMem::new([&mut data], &mut recorder).sum_span(0, len);
        assert_eq!(real, simulated);
        assert_eq!(real, data[..len].iter().sum::<f64>());
        let want: Vec<_> = (0..len).map(|k| ('L', sim_address(0, k), 8)).collect();
        assert_eq!(recorder.0, want);

        let mut copied = vec![-1.0; len + 3];
        RealMem::new([&mut data, &mut copied]).copy_span(0, 1, len);
        assert_eq!(copied[..len], data[..len]);
        assert_eq!(copied[len..], [-1.0; 3]);
        let mut recorder = Recorder::default();
        AddressMem::<f64, 2>::new([len, len], &mut recorder).copy_span(0, 1, len);
        let want: Vec<_> = (0..len)
            .flat_map(|k| [('L', sim_address(0, k), 8), ('S', sim_address(1, k), 8)])
            .collect();
        assert_eq!(recorder.0, want);
    }
}

#[test]
fn view_indices_follow_c_order_with_negative_strides() {
    let mut seen = Vec::new();
    for_each_view_index(&[2, 3], &[-3, 1], 3, |i| seen.push(i));
    assert_eq!(seen, [3, 4, 5, 0, 1, 2]);
    seen.clear();
    for_each_view_index(&[], &[], 7, |i| seen.push(i));
    assert_eq!(seen, [7]);
    seen.clear();
    for_each_view_index(&[4, 0], &[1, 1], 0, |i| seen.push(i));
    assert!(seen.is_empty());
}

#[test]
fn placed_buffers_report_their_table_entry_once_per_run_and_per_single_access() {
    let mut rows: Vec<Box<[f64]>> = vec![vec![1.0, 2.0].into(), vec![3.0, 4.0, 5.0].into()];
    let placement = Placement {
        bases: vec![1000, 5000],
        table: Some(64),
    };
    let mut recorder = Recorder::default();
    let mut acc = [0.0; ACCUMULATORS];
    let row = Strided::new(1, 0, 1);
    {
        let mut m = SimMem::placed(&mut rows, &mut recorder, &placement);
        m.sum_run(row, 3, &mut acc);
        assert_eq!(m.load(0, 1), 2.0);
    }
    assert_eq!(acc.iter().sum::<f64>(), 12.0);
    let want = [
        ('L', 64 + 16, 8),
        ('L', 5000, 8),
        ('L', 5008, 8),
        ('L', 5016, 8),
        ('L', 64, 8),
        ('L', 1008, 8),
    ];
    assert_eq!(recorder.0, want);
    let mut real = [0.0; ACCUMULATORS];
    RealMem::table(&mut rows).sum_run(row, 3, &mut real);
    assert_eq!(real, acc);
}

/// The real sum and move runs equal the provided (reference) order, value for value; the
/// simulated stream is `T::BYTES` wide and `step · T::BYTES` apart, with or without data.
fn sum_and_move_runs_agree<T: Element>(
    len: usize,
    run: Strided,
    count: usize,
    to: Strided,
) -> Result<(), TestCaseError> {
    let mut data: Vec<T> = distinct_data(len);
    let mut real = [0.5; ACCUMULATORS];
    RealMem::new([&mut data]).sum_run(run, count, &mut real);
    let mut reference = [0.5; ACCUMULATORS];
    let mut recorder = Recorder::default();
    SimMem::new([&mut data], &mut recorder).sum_run(run, count, &mut reference);
    prop_assert_eq!(real, reference);
    let want: Vec<_> = (0..count)
        .map(|k| ('L', element_address::<T>(0, run.at(k)), T::BYTES))
        .collect();
    prop_assert_eq!(&recorder.0, &want);
    let mut addresses = Recorder::default();
    AddressMem::<T, 1>::new([len], &mut addresses).sum_run(run, count, &mut [0.0; ACCUMULATORS]);
    prop_assert_eq!(addresses.0, want);
    if run.step > 0 {
        let mut dst = vec![T::default(); to.start + to.step as usize * count + 1];
        let mut reference = dst.clone();
        RealMem::new([&mut data, &mut dst]).move_run(run, to, count);
        let mut recorder = Recorder::default();
        SimMem::new([&mut data, &mut reference], &mut recorder).move_run(run, to, count);
        prop_assert_eq!(dst, reference);
        let want: Vec<_> = (0..count)
            .flat_map(|k| {
                [
                    ('L', element_address::<T>(0, run.at(k)), T::BYTES),
                    ('S', element_address::<T>(1, to.at(k)), T::BYTES),
                ]
            })
            .collect();
        prop_assert_eq!(&recorder.0, &want);
        let mut addresses = Recorder::default();
        AddressMem::<T, 2>::new([len, 0], &mut addresses).move_run(run, to, count);
        prop_assert_eq!(addresses.0, want);
    }
    Ok(())
}

/// The real dot and axpy runs equal the provided (reference) ones, value for value, and the
/// simulated stream is the documented one.
fn multiply_runs_agree<T: Element>(
    (a_step, b_step, a_start, b_start, count): (usize, usize, usize, usize, usize),
    r: f64,
) -> Result<(), TestCaseError> {
    let a = Strided::new(0, a_start, a_step as isize);
    let b = Strided::new(1, b_start, b_step as isize);
    let mut xs: Vec<T> = distinct_data(a_start + count * a_step + 1);
    let mut real: Vec<T> = distinct_data(b_start + count * b_step + 1);
    let mut reference = real.clone();
    let dot = RealMem::new([&mut xs, &mut real]).dot_run(a, b, count);
    let mut recorder = Recorder::default();
    let want = SimMem::new([&mut xs, &mut reference], &mut recorder).dot_run(a, b, count);
    prop_assert_eq!(dot, want);
    let w = T::BYTES;
    let loads = |k: usize| {
        let (x, y) = (
            element_address::<T>(0, a.at(k)),
            element_address::<T>(1, b.at(k)),
        );
        [('L', x, w), ('L', y, w)]
    };
    prop_assert_eq!(&recorder.0, &(0..count).flat_map(loads).collect::<Vec<_>>());
    let r = T::from_f64(r);
    RealMem::new([&mut xs, &mut real]).axpy_run(a, b, count, r);
    let mut recorder = Recorder::default();
    SimMem::new([&mut xs, &mut reference], &mut recorder).axpy_run(a, b, count, r);
    prop_assert_eq!(&real, &reference);
    let with_store = |k: usize| {
        let [x, y] = loads(k);
        [x, y, ('S', y.1, w)]
    };
    prop_assert_eq!(
        recorder.0,
        (0..count).flat_map(with_store).collect::<Vec<_>>()
    );
    Ok(())
}

/// Strides of a C-contiguous layout of `shape` with its dimensions stored in `order` (outermost
/// first), the dimensions in `flipped` walked backwards; and the offset that makes them valid.
fn permuted_layout(shape: &[usize], order: &[usize], flipped: &[bool]) -> (Vec<isize>, usize) {
    let mut strides = vec![0isize; shape.len()];
    let mut step = 1isize;
    for &dim in order.iter().rev() {
        strides[dim] = step;
        step *= shape[dim] as isize;
    }
    let mut offset = 0usize;
    for (dim, &flip) in flipped.iter().enumerate() {
        if flip {
            offset += (shape[dim] - 1) * strides[dim] as usize;
            strides[dim] = -strides[dim];
        }
    }
    (strides, offset)
}

/// Every index of `shape` in C order, as the positions `offset + Σ ik·sk` of two sides.
fn brute_force_positions(shape: &[usize], a: Side<'_>, b: Side<'_>) -> Vec<(usize, usize)> {
    let total: usize = shape.iter().product();
    (0..total)
        .map(|flat| {
            let (mut rest, mut pa, mut pb) = (flat, a.offset as isize, b.offset as isize);
            for dim in (0..shape.len()).rev() {
                let i = (rest % shape[dim]) as isize;
                rest /= shape[dim];
                pa += i * a.strides[dim];
                pb += i * b.strides[dim];
            }
            (pa as usize, pb as usize)
        })
        .collect()
}

/// `copy_strided` on real and simulated memory against the brute-force order, both ways
/// between a permuted side and a C-contiguous one.
fn strided_copies_agree<T: Element>(
    shape: &[usize],
    order: &[usize],
    flipped: &[bool],
) -> Result<(), TestCaseError> {
    let len: usize = shape.iter().product();
    let (permuted, offset) = permuted_layout(shape, order, flipped);
    let identity: Vec<usize> = (0..shape.len()).collect();
    let (contiguous, _) = permuted_layout(shape, &identity, &vec![false; shape.len()]);
    let gather = (
        Side {
            buffer: 0,
            strides: &permuted,
            offset,
        },
        Side {
            buffer: 1,
            strides: &contiguous,
            offset: 0,
        },
    );
    let scatter = (
        Side {
            buffer: 0,
            strides: &contiguous,
            offset: 0,
        },
        Side {
            buffer: 1,
            strides: &permuted,
            offset,
        },
    );
    for (from, to) in [gather, scatter] {
        let positions = brute_force_positions(shape, from, to);
        let src: Vec<T> = distinct_data(len);
        let mut want = vec![T::default(); len];
        for &(read, write) in &positions {
            want[write] = src[read];
        }
        let (mut real_src, mut real_dst) = (src.clone(), vec![T::default(); len]);
        copy_strided(
            &mut RealMem::new([&mut real_src, &mut real_dst]),
            shape,
            from,
            to,
        );
        prop_assert_eq!(&real_dst, &want);
        let (mut sim_src, mut sim_dst) = (src.clone(), vec![T::default(); len]);
        let mut recorder = Recorder::default();
        copy_strided(
            &mut SimMem::new([&mut sim_src, &mut sim_dst], &mut recorder),
            shape,
            from,
            to,
        );
        prop_assert_eq!(&sim_dst, &want);
        let stream: Vec<_> = positions
            .iter()
            .flat_map(|&(read, write)| {
                [
                    ('L', element_address::<T>(0, read), T::BYTES),
                    ('S', element_address::<T>(1, write), T::BYTES),
                ]
            })
            .collect();
        prop_assert_eq!(&recorder.0, &stream);
    }
    Ok(())
}

#[test]
fn a_strided_copy_of_no_dimensions_moves_one_element() {
    let (mut src, mut dst) = (vec![5.0, 7.0], vec![0.0; 3]);
    let from = Side {
        buffer: 0,
        strides: &[],
        offset: 1,
    };
    let to = Side {
        buffer: 1,
        strides: &[],
        offset: 2,
    };
    copy_strided(&mut RealMem::new([&mut src, &mut dst]), &[], from, to);
    assert_eq!(dst, [0.0, 0.0, 7.0]);
    copy_strided(&mut RealMem::new([&mut src, &mut dst]), &[2, 0], from, to);
    assert_eq!(dst, [0.0, 0.0, 7.0]);
}

proptest! {
    #[test]
    fn strided_copies_follow_c_order_both_ways(
        shape in prop::collection::vec(1usize..5, 1..5),
        order_seed in 0u64..1000,
        flips in prop::collection::vec(any::<bool>(), 4),
    ) {
        // A permutation of the dimensions from the seed (a rotation, then a swap).
        let dims = shape.len();
        let mut order: Vec<usize> = (0..dims).map(|d| (d + order_seed as usize) % dims).collect();
        order.swap(0, (order_seed as usize / 7) % dims);
        let flipped = &flips[..dims];
        strided_copies_agree::<f64>(&shape, &order, flipped)?;
        strided_copies_agree::<f32>(&shape, &order, flipped)?;
    }

    #[test]
    fn real_sum_and_move_runs_equal_the_reference_order(
        len in 1usize..300,
        start_frac in 0.0f64..1.0,
        step in -9isize..=9,
        count_frac in 0.0f64..=1.0,
        to in (0usize..20, 1isize..6),
    ) {
        let start = ((len as f64 * start_frac) as usize).min(len - 1);
        // The longest run from `start` with this step that stays inside the buffer.
        let room = match step {
            0 => 40,
            s if s > 0 => (len - 1 - start) / s as usize + 1,
            s => start / s.unsigned_abs() + 1,
        };
        let count = (room as f64 * count_frac) as usize;
        let (run, to) = (Strided::new(0, start, step), Strided::new(1, to.0, to.1));
        sum_and_move_runs_agree::<f64>(len, run, count, to)?;
        sum_and_move_runs_agree::<f32>(len, run, count, to)?;
    }

    #[test]
    fn real_multiply_runs_equal_the_reference_order(
        shape in (1usize..6, 1usize..6, 0usize..20, 0usize..20, 0usize..40),
        r in -3.0f64..3.0,
    ) {
        multiply_runs_agree::<f64>(shape, r)?;
        multiply_runs_agree::<f32>(shape, r)?;
    }
}
