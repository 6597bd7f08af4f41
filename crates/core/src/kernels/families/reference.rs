//! The references every bandwidth figure is normalised by: `read bytes` (a multi-accumulator sum
//! of one buffer) and `copy bytes` (the platform copy of one buffer into another).
//!
//! Both run on the copy engine's reference streams (`stridelab_copy::reference`): `read_sum`
//! (16 accumulators) and `plain_copy` (`memcpy`), the same ones the harness normalises by.
//!
//! Orders: `read` reads `x[k]` for k ascending; `copy` copies `src[k]` to `dst[k]` for k
//! ascending (one load then one store per element in the simulated stream), then reads back
//! the sampled checksum cells of dst ([`crate::kernels::common::sampled_sum`]).

use crate::cache::AccessSink;
use crate::kernels::access::{Mem, RealMem, SimMem};
use crate::kernels::common::{
    cell_value, check_indices, checked_elements, filled_buffer, invalid, sampled_sum, size_param,
    zeroed_buffer,
};
use crate::kernels::spec::SimStart;
use crate::kernels::spec::{
    Family, Instance, KernelError, KernelSpec, ParamSpec, Params, PrepareOptions, Work,
};
use crate::kernels::spec::{Prepared, StridePattern};
use crate::mem::AlignedBuffer;

const BYTES_PARAMS: [ParamSpec; 1] = [ParamSpec::int(
    "bytes",
    8,
    1 << 32,
    None,
    "bytes per buffer (a multiple of 8; K, M, G suffixes)",
)];

pub(crate) const READ: KernelSpec = KernelSpec {
    name: "read",
    family: Family::Reference,
    params: &BYTES_PARAMS,
    summary: "Reads a buffer sequentially with independent accumulators: the read-bandwidth reference.",
    example: "bytes=32M",
    explanation: "Reads one buffer sequentially with sixteen independent accumulators: the \
                  read bandwidth of this machine at this working-set size, the reference \
                  read-only kernels are normalised by (their same-run fraction of it).",
    prepare: prepare_read,
    plan: plan_read,
    pattern: read_pattern,
    simulation_note: None,
    accesses: None,
    simulate: SimStart::Cold,
};

pub(crate) const COPY: KernelSpec = KernelSpec {
    name: "copy",
    family: Family::Reference,
    params: &BYTES_PARAMS,
    summary: "Copies a buffer with the platform copy: the reference every copy is measured against.",
    example: "bytes=32M",
    explanation: "Copies one buffer into another with the platform copy: the copy bandwidth \
                  of this machine at this size, the reference every transpose and layout \
                  conversion is normalised by (a transpose at 0.5 of copy moves its bytes at \
                  half the speed memory allows).",
    prepare: prepare_copy,
    plan: plan_copy,
    pattern: copy_pattern,
    simulation_note: None,
    accesses: None,
    simulate: SimStart::Cold,
};

fn elements(kernel: &str, params: &Params) -> Result<usize, KernelError> {
    let bytes = size_param(kernel, params, "bytes")?;
    if bytes % 8 != 0 {
        return Err(invalid(
            "bytes",
            format!("{bytes} is not a multiple of 8 (the kernels move whole f64 elements)"),
        ));
    }
    checked_elements("bytes", &[bytes / 8])
}

fn plan_read(params: &Params) -> Result<Vec<usize>, KernelError> {
    Ok(vec![elements("read", params)?])
}

fn plan_copy(params: &Params) -> Result<Vec<usize>, KernelError> {
    let n = elements("copy", params)?;
    Ok(vec![n, n])
}

/// The `read` order: `x[k]` for k ascending ([`Mem::sum_span`]).
#[inline(always)]
pub fn read_sum<M: Mem>(m: &mut M, len: usize) -> f64 {
    m.sum_span(0, len)
}

/// The `copy` order: buffer 0 into buffer 1, then the sampled checksum of buffer 1.
pub fn copy<M: Mem>(m: &mut M, len: usize) -> f64 {
    m.copy_span(0, 1, len);
    sampled_sum(m, 1, len)
}

struct Read {
    x: AlignedBuffer,
    expected: f64,
}

fn prepare_read(params: &Params, options: &PrepareOptions) -> Prepared {
    let x = filled_buffer(elements("read", params)?, options)?;
    let expected = x.iter().sum();
    Ok(Box::new(Read { x, expected }))
}

impl Instance for Read {
    fn work(&self) -> Work {
        Work::reads_f64(self.x.len() as u64)
    }

    fn run(&mut self) -> f64 {
        let len = self.x.len();
        read_sum(&mut RealMem::new([&mut self.x]), len)
    }

    fn expected_checksum(&self) -> f64 {
        self.expected
    }

    fn simulate(&mut self, sink: &mut dyn AccessSink) {
        let len = self.x.len();
        read_sum(&mut SimMem::new([&mut self.x], sink), len);
    }
}

struct Copy {
    src: AlignedBuffer,
    dst: AlignedBuffer,
    expected: f64,
}

fn prepare_copy(params: &Params, options: &PrepareOptions) -> Prepared {
    let n = elements("copy", params)?;
    let src = filled_buffer(n, options)?;
    let dst = zeroed_buffer(n, 1, options)?;
    let expected = check_indices(n).map(cell_value).sum();
    Ok(Box::new(Copy { src, dst, expected }))
}

impl Instance for Copy {
    fn work(&self) -> Work {
        let n = self.src.len() as u64;
        Work::copies_f64(n)
    }

    fn run(&mut self) -> f64 {
        let len = self.src.len();
        copy(&mut RealMem::new([&mut self.src, &mut self.dst]), len)
    }

    fn expected_checksum(&self) -> f64 {
        self.expected
    }

    fn simulate(&mut self, sink: &mut dyn AccessSink) {
        let len = self.src.len();
        copy(&mut SimMem::new([&mut self.src, &mut self.dst], sink), len);
    }
}

fn read_pattern(params: &Params) -> Result<Option<StridePattern>, KernelError> {
    let n = elements("read", params)?;
    Ok(Some(StridePattern::elements(0, 1, n, "the buffer")))
}

fn copy_pattern(params: &Params) -> Result<Option<StridePattern>, KernelError> {
    let n = elements("copy", params)?;
    Ok(Some(StridePattern::elements(0, 1, n, "the source")))
}
