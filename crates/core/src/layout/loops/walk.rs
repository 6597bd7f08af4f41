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
    let mut starts = vec![0i64; nest.slots.len()];
    runs_at(nest, &steps, &mut starts, &mut values, 0, visit)
}

fn runs_at<F: FnMut(InnerRun<'_>)>(
    nest: &LoopNest,
    steps: &[i64],
    starts: &mut [i64],
    values: &mut [i64],
    k: usize,
    visit: &mut F,
) -> Result<(), LoopError> {
    let l = &nest.loops[k];
    let lo = l.lower.at(&values[..k]);
    let count = trips(lo, l.upper.at(&values[..k]), l.step);
    if k + 1 < nest.loops.len() {
        for t in 0..count {
            values[k] = index_value(lo + i128::from(t) * i128::from(l.step), &l.var)?;
            runs_at(nest, steps, starts, values, k + 1, visit)?;
        }
        return Ok(());
    }
    if count == 0 {
        return Ok(());
    }
    values[k] = index_value(lo, &l.var)?;
    for (start, slot) in starts.iter_mut().zip(&nest.slots) {
        let reference = &nest.references[slot.reference];
        let array = &nest.arrays[reference.array];
        let element = reference
            .indices
            .iter()
            .zip(&array.strides)
            .fold(array.offset as i128, |acc, (index, &stride)| {
                acc + index.at(values) * i128::from(stride)
            });
        *start = i64::try_from(element)
            .map_err(|_| LoopError::Overflow(format!("an element of {}", array.name)))?;
    }
    visit(InnerRun {
        count,
        starts,
        steps,
    });
    Ok(())
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
