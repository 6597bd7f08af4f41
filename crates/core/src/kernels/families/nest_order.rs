//! The order of a user's loop nest (the LOOP language, [`crate::layout::loops`]) over real
//! buffers: its innermost runs ([`walk_runs`], the order `sim --loop` simulates) executed
//! through the lab's accessor, the buffers placed where `sim --loop` places them, so a timed
//! run of the `loop` kernel and `sim --loop` see one stream.
//!
//! A one-statement body runs as the accessor's strided runs (`s += a[…]` a sum, `t = x` a
//! move, `t += x` an update, `s += a[…] * b[…]` a dot product), the loops a compiler would
//! vectorise; any other body runs access by access, in the slots' order. The language computes
//! no values: an update stores the value it loaded (an update by zero), an assignment the first
//! value its right side read.

#![forbid(unsafe_code)]

use std::marker::PhantomData;

use crate::kernels::access::{ACCUMULATORS, Element, Mem, Strided};
use crate::layout::loops::{InnerRun, LoopError, LoopNest, NestFacts, Placement, walk_runs};
use crate::vocab::Work;

/// How one innermost run executes, chosen once from the body's slots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// `s += a[…]`, `read a[…]`: one load.
    Sum,
    /// `t = x`: a load, then a store.
    Move,
    /// `t += x`: a load of `x`, a load and a store of `t`.
    Update,
    /// `s += a[…] * b[…]`: two loads.
    Dot,
    /// Anything else: access by access.
    Each,
}

/// A checked loop nest over arrays of one element type `T`: its buffers and its order.
#[derive(Debug, Clone)]
pub struct NestOrder<T> {
    nest: LoopNest,
    facts: NestFacts,
    bases: Vec<u64>,
    /// The array each slot touches.
    arrays: Vec<usize>,
    shape: Shape,
    elem: PhantomData<T>,
}

impl<T: Element> NestOrder<T> {
    /// `nest` (already checked: `facts` are [`crate::layout::loops::check()`]'s) over `T`
    /// elements; every array must be of `T` (`dtype` and size), as one accessor serves them all.
    pub fn new(nest: LoopNest, facts: NestFacts) -> Result<Self, LoopError> {
        if let Some(array) = nest
            .arrays
            .iter()
            .find(|a| a.dtype != T::NAME || a.itemsize != u64::from(T::BYTES))
        {
            return Err(LoopError::Declaration {
                array: array.name.clone(),
                message: format!(
                    "is {}, but a timed nest runs one element type over every array ({} here)",
                    array.dtype,
                    T::NAME
                ),
            });
        }
        let bases = Placement::of(&nest.arrays)?.bases;
        let arrays = nest
            .slots
            .iter()
            .map(|slot| nest.references[slot.reference].array)
            .collect();
        let shape = shape_of(&nest);
        Ok(NestOrder {
            nest,
            facts,
            bases,
            arrays,
            shape,
            elem: PhantomData,
        })
    }

    fn strided(&self, run: &InnerRun<'_>, k: usize) -> Strided {
        Strided::new(
            self.arrays[k],
            run.starts[k] as usize,
            run.steps[k] as isize,
        )
    }

    /// One innermost run, access by access in the slots' order.
    fn each<M: Mem<Elem = T>>(&self, m: &mut M, run: &InnerRun<'_>, acc: &mut f64) {
        let slots = &self.nest.slots;
        for t in 0..run.count as i64 {
            let mut first: Option<T> = None;
            let mut last = T::default();
            for (k, slot) in slots.iter().enumerate() {
                let index = (run.starts[k] + t * run.steps[k]) as usize;
                if slot.is_store {
                    m.store(self.arrays[k], index, first.unwrap_or(last));
                    first = None;
                } else {
                    last = m.load(self.arrays[k], index);
                    first.get_or_insert(last);
                    *acc += last.to_f64();
                }
            }
        }
    }
}

/// What a run's loads add up to: the accumulators of sums, a scalar, and dot products.
#[derive(Default)]
struct Sums<T> {
    acc: [f64; ACCUMULATORS],
    scalar: f64,
    total: T,
}

/// The run being extended: slot k at `starts[k] + t·steps[k]`, `count` iterations so far.
struct Pending {
    starts: Vec<i64>,
    steps: Vec<i64>,
    count: u64,
}

impl Pending {
    /// Whether `run` is this run's next iterations, slot by slot.
    fn continues_with(&self, run: &InnerRun<'_>) -> bool {
        self.count > 0
            && self.steps.as_slice() == run.steps
            && self.starts.iter().zip(&self.steps).zip(run.starts).all(
                |((&start, &step), &next)| {
                    i128::from(start) + i128::from(step) * i128::from(self.count)
                        == i128::from(next)
                },
            )
    }

    fn as_run(&self) -> InnerRun<'_> {
        InnerRun {
            count: self.count,
            starts: &self.starts,
            steps: &self.steps,
        }
    }
}

impl<T: Element> NestOrder<T> {
    /// One (joined) innermost run, as the accessor's strided run where its shape has one.
    fn execute<M: Mem<Elem = T>>(&self, m: &mut M, run: &InnerRun<'_>, sums: &mut Sums<T>) {
        if run.count == 0 {
            return;
        }
        let count = run.count as usize;
        let forward = run.steps.iter().all(|&s| s >= 1);
        let apart = self.arrays.first() != self.arrays.get(1);
        match self.shape {
            Shape::Sum => {
                // Summed into a local, as the built-in kernels do: through `sums` the compiler
                // stored the accumulators on every element (2x the time of an L2-resident sum).
                let mut acc = sums.acc;
                m.sum_run(self.strided(run, 0), count, &mut acc);
                sums.acc = acc;
            }
            Shape::Move if forward && apart => {
                m.move_run(self.strided(run, 0), self.strided(run, 1), count)
            }
            Shape::Update if forward && apart => m.axpy_run(
                self.strided(run, 0),
                self.strided(run, 1),
                count,
                T::default(),
            ),
            Shape::Dot if forward => {
                sums.total =
                    sums.total + m.dot_run(self.strided(run, 0), self.strided(run, 1), count)
            }
            _ => self.each(m, run, &mut sums.scalar),
        }
    }
}

/// The run shape of a one-statement body whose runs the accessor has, else [`Shape::Each`]
/// (a two-sided run also needs steps ≥ 1, and a move or update two arrays: checked per run).
fn shape_of(nest: &LoopNest) -> Shape {
    if nest.statements.len() != 1 {
        return Shape::Each;
    }
    let refs: Vec<usize> = nest.slots.iter().map(|s| s.reference).collect();
    let stores: Vec<bool> = nest.slots.iter().map(|s| s.is_store).collect();
    match (refs.as_slice(), stores.as_slice()) {
        ([_], [false]) => Shape::Sum,
        ([_, _], [false, true]) => Shape::Move,
        ([_, t, u], [false, false, true]) if t == u => Shape::Update,
        ([_, _], [false, false]) => Shape::Dot,
        _ => Shape::Each,
    }
}

impl<T: Element> NestOrder<T> {
    /// Each array's storage, in elements.
    pub fn buffers(&self) -> Vec<usize> {
        self.nest.arrays.iter().map(|a| a.storage_len).collect()
    }

    /// What one run loads, stores and visits (every access one element).
    pub fn work(&self) -> Work {
        let stores = self.nest.slots.iter().filter(|s| s.is_store).count();
        let loads = self.nest.slots.len() - stores;
        let per_iteration = |n: usize| n as u64 * self.facts.iterations * u64::from(T::BYTES);
        Work {
            bytes_read: per_iteration(loads),
            bytes_written: per_iteration(stores),
            elements: self.facts.accesses,
        }
    }

    /// One run of the nest; returns what its loads add up to (which keeps them).
    pub fn run<M: Mem<Elem = T>>(&self, m: &mut M) -> f64 {
        let mut sums = Sums::default();
        let slots = self.nest.slots.len();
        // Runs that continue where the last one stopped (rows of a matrix whose leading
        // dimension is its width) are joined into one: the same iterations in the same order,
        // with the per-run cost paid once.
        let mut pending = Pending {
            starts: vec![0; slots],
            steps: vec![0; slots],
            count: 0,
        };
        // The nest passed its check before this kernel was made: the walk cannot fail.
        let _ = walk_runs(&self.nest, &mut |run: InnerRun<'_>| {
            if !pending.continues_with(&run) {
                self.execute(m, &pending.as_run(), &mut sums);
                pending.starts.copy_from_slice(run.starts);
                pending.steps.copy_from_slice(run.steps);
                pending.count = 0;
            }
            pending.count += run.count;
        });
        self.execute(m, &pending.as_run(), &mut sums);
        sums.acc.iter().sum::<f64>() + sums.scalar + sums.total.to_f64()
    }

    /// Each array's first byte in the simulated address space (`sim --loop`'s placement).
    pub fn bases(&self) -> &[u64] {
        &self.bases
    }

    /// The nest, as checked.
    pub fn nest(&self) -> &LoopNest {
        &self.nest
    }

    /// Its counts, as checked.
    pub fn facts(&self) -> &NestFacts {
        &self.facts
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::AccessSink;
    use crate::kernels::access::{Placement as BufferPlacement, SimMem};
    use crate::layout::loops::{check, walk};

    /// Accesses in order: (address, bytes, store).
    type Stream = Vec<(u64, u32, bool)>;

    /// Every access, expanded.
    #[derive(Default)]
    struct Log(Stream);

    impl AccessSink for Log {
        fn load(&mut self, addr: u64, len: u32) {
            self.0.push((addr, len, false));
        }
        fn store(&mut self, addr: u64, len: u32) {
            self.0.push((addr, len, true));
        }
    }

    fn streams(loop_text: &str, arrays: &[&str]) -> (Stream, Stream) {
        let arrays: Vec<String> = arrays.iter().map(|s| s.to_string()).collect();
        let nest = LoopNest::parse(loop_text, &arrays).unwrap();
        let facts = check(&nest, 1 << 24).unwrap();
        let placement = Placement::of(&nest.arrays).unwrap();
        let mut walked = Vec::new();
        walk(&nest, &placement, &mut |e| {
            walked.push((e.addr, e.len, e.is_store))
        })
        .unwrap();
        let kernel = NestOrder::<f64>::new(nest, facts).unwrap();
        let mut buffers: Vec<Box<[f64]>> = kernel
            .buffers()
            .iter()
            .map(|&n| vec![1.0; n].into_boxed_slice())
            .collect();
        let bases = BufferPlacement {
            bases: kernel.bases().to_vec(),
            table: None,
        };
        let mut log = Log::default();
        kernel.run(&mut SimMem::placed(&mut buffers, &mut log, &bases));
        (walked, log.0)
    }

    #[test]
    fn the_executor_makes_the_stream_sim_loop_simulates() {
        let f64s = |decl: &str| decl.to_string();
        let cases: &[(&str, &[&str])] = &[
            // Each run shape, then bodies that run access by access.
            (
                "for j in 0..16: for i in 0..12: s += a[i, j]",
                &["a = f64[12, 16]"],
            ),
            // Rows that continue each other, joined into one run (one with a fixed cell).
            (
                "for i in 0..8: for j in 0..8: s += a[i, j]",
                &["a = f64[8, 8]"],
            ),
            (
                "for i in 0..4: for j in 0..8: b[i, j] = a[i, j]",
                &["a = f64[4, 8]", "b = f64[4, 8]"],
            ),
            (
                "for i in 0..4: for j in 0..8: s += a[i, j] * c[0]",
                &["a = f64[4, 8]", "c = f64[1]"],
            ),
            (
                "for i in 0..8: for j in 0..8: a[j, i] = b[i, j]",
                &["a = f64[8, 8]", "b = f64[8, 8]"],
            ),
            (
                "for i in 0..8: for j in 0..8: a[j, i] += b[i, j]",
                &["a = f64[8, 8] ld=9", "b = f64[8, 8]"],
            ),
            (
                "for i in 0..8: for j in 0..8: s += a[i, j] * b[j, i]",
                &["a = f64[8, 8]", "b = f64[8, 8]"],
            ),
            (
                "for i in 0..6: for j in i..6: a[i, j] = a[j, i]",
                &["a = f64[6, 6]"],
            ),
            (
                "for i in 0..8: a[7 - i] += b[i]; c[i] = a[i] + b[i]",
                &["a = f64[8]", "b = f64[8]", "c = f64[8]"],
            ),
            (
                "for i in 0..4: for j in 0..9 step 3: read a[i, j], a[i, 8 - j]",
                &["a = f64[4, 9]"],
            ),
        ];
        for (text, arrays) in cases {
            let arrays: Vec<String> = arrays.iter().map(|a| f64s(a)).collect();
            let arrays: Vec<&str> = arrays.iter().map(String::as_str).collect();
            let (walked, executed) = streams(text, &arrays);
            assert!(!walked.is_empty(), "{text}");
            assert_eq!(walked, executed, "{text}");
        }
    }

    #[test]
    fn one_element_type_runs_over_every_array() {
        let arrays = ["a = f64[4]".to_string(), "b = f32[4]".to_string()];
        let nest = LoopNest::parse("for i in 0..4: a[i] = b[i]", &arrays).unwrap();
        let facts = check(&nest, 1 << 20).unwrap();
        let err = NestOrder::<f64>::new(nest, facts).unwrap_err().to_string();
        assert!(
            err.contains("f32") && err.contains("one element type"),
            "{err}"
        );
    }

    #[test]
    fn the_work_counts_every_access_once() {
        let arrays = ["a = f64[8, 8]".to_string(), "b = f64[8, 8]".to_string()];
        let nest =
            LoopNest::parse("for i in 0..8: for j in 0..8: a[j, i] += b[i, j]", &arrays).unwrap();
        let facts = check(&nest, 1 << 20).unwrap();
        let work = NestOrder::<f64>::new(nest, facts).unwrap().work();
        assert_eq!(work.elements, 3 * 64);
        assert_eq!((work.bytes_read, work.bytes_written), (2 * 64 * 8, 64 * 8));
    }
}
