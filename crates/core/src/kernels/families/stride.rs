//! `stride-sum len stride`: read `x[k]` for k = 0, stride, 2·stride, … < len — the classic "time
//! per access vs step" experiment. The n-th element read goes to accumulator `n mod 8`.
//!
//! Elements are f64 (default) or f32 (`dtype=f32`: 16 to a 64-byte line, so the step at which
//! every access fetches a line of its own halves in bytes, not in elements).
//!
//! Up to a step of one line (8 elements) every line is still fetched, so time per access rises
//! with the step; beyond a line each access costs a line of its own, and the textbook curve
//! flattens — measured curves need not (prefetchers, pages and the TLB; the report checks).

use crate::cache::AccessSink;
use crate::kernels::access::{Mem, Strided};
use crate::kernels::common::{
    ACCUMULATORS, cell_value, checked_elements, fold, invalid, size_param,
};
use crate::kernels::spec::SimStart;
use crate::kernels::spec::{
    Family, Instance, KernelError, KernelSpec, ParamSpec, Params, PrepareOptions, Work,
};
use crate::kernels::spec::{Prepared, StridePattern};
use crate::kernels::typed::{DTYPE_PARAM, Dtype, Storage, with_real_mem, with_sim_mem};

const PARAMS: [ParamSpec; 3] = [
    ParamSpec::int("len", 1, 1 << 29, None, "buffer length in elements").in_elements(),
    ParamSpec::int(
        "stride",
        1,
        1 << 29,
        None,
        "step between reads in elements (≤ len)",
    )
    .in_elements(),
    DTYPE_PARAM,
];

pub(crate) const STRIDE_SUM: KernelSpec = KernelSpec {
    name: "stride-sum",
    family: Family::Stride,
    params: &PARAMS,
    summary: "Reads every stride-th element of a buffer: time per element against the step.",
    example: "len=4M stride=16",
    explanation: "Reads every stride-th element of a buffer. Up to a step of one cache line \
                  (8 elements) the same lines are fetched whatever the step, so the time per \
                  access grows with it; beyond a line every access fetches a line of its \
                  own, and the textbook expects the cost per access to level off there — \
                  prefetchers, pages and the TLB decide whether it does on a given machine.",
    prepare,
    plan,
    pattern,
    simulation_note: None,
    accesses: None,
    simulate: SimStart::Cold,
};

fn shape(params: &Params) -> Result<(usize, usize), KernelError> {
    let len = size_param("stride-sum", params, "len")?;
    let stride = size_param("stride-sum", params, "stride")?;
    if stride > len {
        return Err(invalid(
            "stride",
            format!("{stride} is beyond the buffer of {len} elements (only x[0] would be read)"),
        ));
    }
    checked_elements("len", &[len])?;
    Ok((len, stride))
}

fn plan(params: &Params) -> Result<Vec<usize>, KernelError> {
    Ok(vec![shape(params)?.0])
}

/// Elements read by one run: ⌈len / stride⌉.
fn reads(len: usize, stride: usize) -> usize {
    len.div_ceil(stride)
}

/// The `stride-sum` order.
#[inline(always)]
pub fn stride_sum<M: Mem>(m: &mut M, len: usize, stride: usize) -> f64 {
    let mut acc = [0.0; ACCUMULATORS];
    m.sum_run(
        Strided::new(0, 0, stride as isize),
        reads(len, stride),
        &mut acc,
    );
    fold(&acc)
}

struct StrideSum {
    len: usize,
    stride: usize,
    x: Storage<1>,
    expected: f64,
}

fn prepare(params: &Params, options: &PrepareOptions) -> Prepared {
    let (len, stride) = shape(params)?;
    let x = Storage::new(
        Dtype::from_params(params)?,
        [len],
        [true],
        cell_value,
        options,
    )?;
    let checked = if x.has_data() { len } else { 0 };
    let expected = (0..checked).step_by(stride).map(|i| x.value(0, i)).sum();
    Ok(Box::new(StrideSum {
        len,
        stride,
        x,
        expected,
    }))
}

impl Instance for StrideSum {
    fn work(&self) -> Work {
        let n = reads(self.len, self.stride) as u64;
        Work::reads(n, self.x.dtype().bytes())
    }

    fn run(&mut self) -> f64 {
        let (len, stride) = (self.len, self.stride);
        with_real_mem!(&mut self.x, |m| stride_sum(m, len, stride))
    }

    fn expected_checksum(&self) -> f64 {
        self.expected
    }

    fn simulate(&mut self, sink: &mut dyn AccessSink) {
        let (len, stride) = (self.len, self.stride);
        with_sim_mem!(&mut self.x, sink, |m| stride_sum(m, len, stride));
    }
}

fn pattern(params: &Params) -> Result<Option<StridePattern>, KernelError> {
    let (len, stride) = shape(params)?;
    let bytes = Dtype::from_params(params)?.bytes();
    let walk = StridePattern::sized(0, stride as isize, reads(len, stride), bytes, "the walk");
    Ok(Some(walk))
}
