//! The address stream of a nest: where each array sits ([`Placement`]) and every access in
//! program order ([`walk`]), tagged with the reference it comes from. A simulator feeds it to
//! the caches; an executor can walk the same order over real buffers.

use super::check::{index_value, trips};
use super::error::LoopError;
use super::{ArrayDecl, LoopNest};

/// Where the first array starts: 2^32, the address the simulator places a kernel's first
/// buffer at, so a nest and a built-in kernel over the same matrix see the same sets.
pub const FIRST_ADDRESS: u64 = 1 << 32;

/// Each array's first byte (element 0 of its storage) in the simulated address space.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    pub bases: Vec<u64>,
}

impl Placement {
    /// Arrays one after another from [`FIRST_ADDRESS`], each rounded up to its alignment.
    pub fn of(arrays: &[ArrayDecl]) -> Result<Placement, LoopError> {
        let mut next = FIRST_ADDRESS;
        let mut bases = Vec::with_capacity(arrays.len());
        for array in arrays {
            let base = next
                .checked_next_multiple_of(array.align)
                .ok_or_else(|| LoopError::Overflow(format!("the address of {}", array.name)))?;
            bases.push(base);
            next = base
                .checked_add(array.bytes())
                .ok_or_else(|| LoopError::Overflow(format!("the end of {}", array.name)))?;
        }
        Ok(Placement { bases })
    }
}

/// One access of the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AccessEvent {
    /// Index of the reference in [`LoopNest::references`].
    pub reference: usize,
    pub addr: u64,
    pub len: u32,
    pub is_store: bool,
}

/// One innermost run of the nest: `count` iterations, in each of which slot `k`
/// ([`LoopNest::slots`]) touches element `starts[k] + t·steps[k]` of its array's storage
/// (`t` = 0, 1, …). Every index is in bounds once the nest has passed [`super::check()`].
#[derive(Debug, Clone, Copy)]
pub struct InnerRun<'a> {
    pub count: u64,
    pub starts: &'a [i64],
    pub steps: &'a [i64],
}

/// Calls `visit` for every innermost run of `nest`, in program order: the one definition of the
/// order that [`walk`] expands into accesses and an executor runs over real buffers. The nest
/// must have passed [`super::check()`].
pub fn walk_runs<F: FnMut(InnerRun<'_>)>(nest: &LoopNest, visit: &mut F) -> Result<(), LoopError> {
    let mut values = vec![0i64; nest.loops.len()];
    let steps: Vec<i64> = nest
        .slots
        .iter()
        .map(|slot| nest.innermost_stride(slot.reference))
        .collect();
    let elements: Vec<ElementOf> = nest
        .slots
        .iter()
        .map(|slot| ElementOf::new(nest, slot.reference))
        .collect();
    let mut starts = vec![0i64; nest.slots.len()];
    let coalesced = coalesced_rows(nest, &steps, &elements);
    let mut walker = RunWalker {
        nest,
        steps: &steps,
        elements: &elements,
        coalesced,
        starts: &mut starts,
        values: &mut values,
        visit,
    };
    walker.runs_at(0)
}

/// A reference's storage element as one affine function of the loop indices: the array's
/// offset plus each index times its stride, gathered per loop once, so a run's start costs a
/// few multiplications instead of a pass over indices and strides.
struct ElementOf {
    constant: i128,
    per_loop: Vec<i128>,
    array: usize,
}

impl ElementOf {
    fn new(nest: &LoopNest, reference: usize) -> ElementOf {
        let reference = &nest.references[reference];
        let array = &nest.arrays[reference.array];
        let mut constant = array.offset as i128;
        let mut per_loop = vec![0i128; nest.loops.len()];
        for (index, &stride) in reference.indices.iter().zip(&array.strides) {
            let stride = i128::from(stride);
            constant += i128::from(index.constant) * stride;
            for (k, &coeff) in index.coeffs.iter().enumerate() {
                per_loop[k] += i128::from(coeff) * stride;
            }
        }
        ElementOf {
            constant,
            per_loop,
            array: reference.array,
        }
    }

    fn at(&self, values: &[i64]) -> i128 {
        self.per_loop
            .iter()
            .zip(values)
            .fold(self.constant, |acc, (&c, &v)| acc + c * i128::from(v))
    }
}

/// The walk's state: the loop indices so far and the current run's starts.
struct RunWalker<'n, 'v, F> {
    nest: &'n LoopNest,
    steps: &'v [i64],
    elements: &'v [ElementOf],
    /// The innermost loop's constant trip count when every run continues the one before it.
    coalesced: Option<u64>,
    starts: &'v mut [i64],
    values: &'v mut [i64],
    visit: &'v mut F,
}

impl<F: FnMut(InnerRun<'_>)> RunWalker<'_, '_, F> {
    fn runs_at(&mut self, k: usize) -> Result<(), LoopError> {
        let l = &self.nest.loops[k];
        let lo = l.lower.at(&self.values[..k]);
        let count = trips(lo, l.upper.at(&self.values[..k]), l.step);
        let depth = self.nest.loops.len();
        if k + 1 == depth {
            return self.emit(k, count);
        }
        if let Some(per_row) = self.coalesced.filter(|_| k + 2 == depth) {
            // Rows that continue each other: one run of all of them, the same accesses in
            // the same order (a run's cost is paid once, not per row).
            if let Some(all) = count.checked_mul(per_row) {
                if all > 0 {
                    self.values[k] = index_value(lo, &l.var)?;
                    self.emit(k + 1, all)?;
                }
                return Ok(());
            }
        }
        for t in 0..count {
            self.values[k] = index_value(lo + i128::from(t) * i128::from(l.step), &l.var)?;
            self.runs_at(k + 1)?;
        }
        Ok(())
    }

    /// Visits the run of `count` iterations from the innermost loop's (`inner`) first index.
    fn emit(&mut self, inner: usize, count: u64) -> Result<(), LoopError> {
        if count == 0 {
            return Ok(());
        }
        let l = &self.nest.loops[inner];
        self.values[inner] = index_value(l.lower.at(&self.values[..inner]), &l.var)?;
        for (start, element) in self.starts.iter_mut().zip(self.elements) {
            *start = i64::try_from(element.at(self.values)).map_err(|_| {
                LoopError::Overflow(format!(
                    "an element of {}",
                    self.nest.arrays[element.array].name
                ))
            })?;
        }
        (self.visit)(InnerRun {
            count,
            starts: self.starts,
            steps: self.steps,
        });
        Ok(())
    }
}

/// The innermost loop's trip count when its runs continue each other across the loop around
/// it: constant bounds, and every slot's element advancing by exactly one run per step of that
/// loop (the rows of a matrix walked in storage order). Then that loop's runs are one run.
fn coalesced_rows(nest: &LoopNest, steps: &[i64], elements: &[ElementOf]) -> Option<u64> {
    let depth = nest.loops.len();
    if depth < 2 {
        return None;
    }
    let (outer, inner) = (&nest.loops[depth - 2], &nest.loops[depth - 1]);
    let constant = |a: &super::Affine| a.coeffs.iter().all(|&c| c == 0);
    if !constant(&inner.lower) || !constant(&inner.upper) {
        return None;
    }
    let per_row = trips(
        i128::from(inner.lower.constant),
        i128::from(inner.upper.constant),
        inner.step,
    );
    let continues = elements.iter().zip(steps).all(|(element, &step)| {
        element.per_loop[depth - 2] * i128::from(outer.step)
            == i128::from(per_row) * i128::from(step)
    });
    (per_row > 0 && continues).then_some(per_row)
}

/// Calls `visit` for every access of `nest` in program order (its runs, [`walk_runs`],
/// expanded at `placement`). The nest must have passed [`super::check()`] (indices in bounds,
/// work within budget): this walks without checking.
pub fn walk<F: FnMut(AccessEvent)>(
    nest: &LoopNest,
    placement: &Placement,
    visit: &mut F,
) -> Result<(), LoopError> {
    let sizes: Vec<(u64, i64, u32)> = nest
        .slots
        .iter()
        .map(|slot| {
            let array = &nest.arrays[nest.references[slot.reference].array];
            let base = placement.bases[nest.references[slot.reference].array];
            (base, array.itemsize as i64, array.itemsize as u32)
        })
        .collect();
    walk_runs(nest, &mut |run: InnerRun<'_>| {
        for t in 0..run.count as i64 {
            for (k, slot) in nest.slots.iter().enumerate() {
                let (base, itemsize, len) = sizes[k];
                let element = run.starts[k].wrapping_add(t.wrapping_mul(run.steps[k]));
                visit(AccessEvent {
                    reference: slot.reference,
                    addr: base.wrapping_add(element.wrapping_mul(itemsize) as u64),
                    len,
                    is_store: slot.is_store,
                });
            }
        }
    })
}
