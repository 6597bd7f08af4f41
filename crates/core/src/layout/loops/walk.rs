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

/// Calls `visit` for every access of `nest` in program order. The nest must have passed
/// [`super::check()`] (indices in bounds, work within budget): this walks without checking.
pub fn walk<F: FnMut(AccessEvent)>(
    nest: &LoopNest,
    placement: &Placement,
    visit: &mut F,
) -> Result<(), LoopError> {
    let mut values = vec![0i64; nest.loops.len()];
    level(nest, placement, &mut values, 0, visit)
}

fn level<F: FnMut(AccessEvent)>(
    nest: &LoopNest,
    placement: &Placement,
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
            level(nest, placement, values, k + 1, visit)?;
        }
        return Ok(());
    }
    if count == 0 {
        return Ok(());
    }
    values[k] = index_value(lo, &l.var)?;
    // Each slot's address at the run's first iteration and its step per iteration, in bytes.
    let starts: Vec<(u64, i64, u32)> = nest
        .slots
        .iter()
        .map(|slot| {
            let reference = &nest.references[slot.reference];
            let array = &nest.arrays[reference.array];
            let element = reference
                .indices
                .iter()
                .zip(&array.strides)
                .fold(array.offset as i128, |acc, (index, &stride)| {
                    acc + index.at(values) * i128::from(stride)
                });
            let addr = placement.bases[reference.array] as i128 + element * array.itemsize as i128;
            let step = nest.innermost_stride(slot.reference) * array.itemsize as i64;
            (addr as u64, step, array.itemsize as u32)
        })
        .collect();
    for t in 0..count {
        for (slot, &(addr, step, len)) in nest.slots.iter().zip(&starts) {
            visit(AccessEvent {
                reference: slot.reference,
                addr: addr.wrapping_add((t as i64).wrapping_mul(step) as u64),
                len,
                is_store: slot.is_store,
            });
        }
    }
    Ok(())
}
