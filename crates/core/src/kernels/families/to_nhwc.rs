//! `to-nhwc n c h w variant dtype`: the NCHW tensor (buffer 0) converted to NHWC (buffer 1), a
//! permuted 4-D copy: element (n, c, h, w) moves from `((n·C + c)·H + h)·W + w` to
//! `((n·H + h)·W + w)·C + c`.
//!
//! Orders (each element: read the source, then write the destination):
//! - `fast` (default): the copy engine on the source as one 4-D strided view of shape
//!   (N, H, W, C) with strides (C·H·W, W, 1, H·W). Its simulated stream is the engine's own
//!   order ([`stridelab_copy::order`]), with [`REPLAY_CAVEAT`]'s omissions.
//! - `naive-write`: what a framework's generic strided copy does, element by element with no
//!   blocking: an odometer over the destination in C order (for n, h, w, c), reading the source
//!   through the permuted strides ([`copy_strided`]); the destination is written contiguously,
//!   each pixel's channels are read H·W elements apart.
//! - `naive-read`: the same over the source in C order (for n, c, h, w): the source is read
//!   contiguously, a row's pixels are written C elements apart.
//!
//! Elements are f64 (default) or f32 (`dtype=f32`, the naive variants only: the copy engine's
//! fast path and its simulated order are for 8-byte elements, as for `transpose fast`).
//!
//! Every variant then reads back the sampled checksum cells of the destination
//! ([`crate::kernels::common::sampled_sum`]).

use std::sync::Arc;

use stridelab_copy::Planner;
use stridelab_copy::order::REPLAY_CAVEAT;

use crate::cache::AccessSink;
use crate::kernels::access::{CopyView, Mem, Side, copy_strided};
use crate::kernels::common::{cell_value, check_indices, invalid, sampled_sum, text_param};
use crate::kernels::families::channels::{DIMS, Tensor4};
use crate::kernels::spec::SimStart;
use crate::kernels::spec::{
    Family, Instance, KernelError, KernelSpec, ParamSpec, Params, PrepareOptions, Work,
};
use crate::kernels::spec::{Prepared, StridePattern};
use crate::kernels::typed::{DTYPE_PARAM, Dtype, Storage, with_real_mem, with_sim_mem};

const PARAMS: [ParamSpec; 6] = [
    DIMS[0],
    DIMS[1],
    DIMS[2],
    DIMS[3],
    ParamSpec::choice(
        "variant",
        &["fast", "naive-write", "naive-read"],
        Some("fast"),
        "fast (the copy engine), naive-write (element by element in the destination's order) \
         or naive-read (in the source's order)",
    ),
    DTYPE_PARAM,
];

pub(crate) const TO_NHWC: KernelSpec = KernelSpec {
    name: "to-nhwc",
    family: Family::Tensor,
    params: &PARAMS,
    summary: "Converts an NCHW tensor to NHWC: the copy engine, or naive element-by-element copies.",
    example: "n=2 c=64 h=56 w=56 variant=naive-write",
    explanation: "Converts an NCHW tensor to NHWC, a permuted 4-D strided copy: the price of \
                  switching layouts, paid once. The fast variant is the copy engine (f64); \
                  naive-write is what a framework's generic copy does, element by element \
                  in the destination's order, reading each pixel's channels H·W elements \
                  apart, and naive-read walks the source in order and scatters the writes. \
                  Compare the variants at one shape; figures are fractions of the same-run \
                  copy of the same bytes.",
    prepare,
    plan,
    pattern,
    simulation_note: Some(simulation_note),
    accesses: None,
    simulate: SimStart::Cold,
};

/// The loop order of a conversion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    Fast,
    NaiveWrite,
    NaiveRead,
}

fn variant(params: &Params) -> Result<Variant, KernelError> {
    let variant = match params.get("variant") {
        Some(_) => text_param("to-nhwc", params, "variant")?,
        None => "fast",
    };
    if variant == "fast" && Dtype::from_params(params)? != Dtype::F64 {
        return Err(invalid(
            "dtype",
            "variant=fast is the copy engine, which moves f64 only: use dtype=f64, or \
             variant=naive-write or naive-read",
        ));
    }
    Ok(match variant {
        "naive-write" => Variant::NaiveWrite,
        "naive-read" => Variant::NaiveRead,
        _ => Variant::Fast,
    })
}

fn plan(params: &Params) -> Result<Vec<usize>, KernelError> {
    let len = Tensor4::from_params("to-nhwc", params)?.elements()?;
    variant(params)?;
    Ok(vec![len, len])
}

const SRC: usize = 0;
const DST: usize = 1;

/// The conversion in `variant`'s order: buffer 0 (nchw) into buffer 1 (nhwc), then the sampled
/// read-back (`fast` only on f64: see the module doc; it copies with `planner`).
#[inline(always)]
pub fn to_nhwc<M: Mem>(m: &mut M, planner: &Planner, t: Tensor4, variant: Variant) -> f64 {
    let (c, h, w) = (t.c as isize, t.h as isize, t.w as isize);
    // The source (nchw) and destination (nhwc) strides of the dimensions (N, H, W, C).
    let nchw_by_nhwc = [c * h * w, w, 1, h * w];
    let nhwc_by_nhwc = [h * w * c, w * c, c, 1];
    match variant {
        Variant::Fast => {
            let shape = [t.n, t.h, t.w, t.c];
            let view = CopyView {
                shape: &shape,
                strides: &nchw_by_nhwc,
                offset: 0,
            };
            m.copy_view(planner, SRC, &view, DST, 0);
        }
        Variant::NaiveWrite => {
            let from = Side {
                buffer: SRC,
                strides: &nchw_by_nhwc,
                offset: 0,
            };
            let to = Side {
                buffer: DST,
                strides: &nhwc_by_nhwc,
                offset: 0,
            };
            copy_strided(m, &[t.n, t.h, t.w, t.c], from, to);
        }
        Variant::NaiveRead => {
            // The same strides over the dimensions (N, C, H, W).
            let from = Side {
                buffer: SRC,
                strides: &[c * h * w, h * w, w, 1],
                offset: 0,
            };
            let to = Side {
                buffer: DST,
                strides: &[h * w * c, 1, w * c, c],
                offset: 0,
            };
            copy_strided(m, &[t.n, t.c, t.h, t.w], from, to);
        }
    }
    sampled_sum(m, DST, t.n * t.c * t.h * t.w)
}

struct Conversion {
    tensor: Tensor4,
    variant: Variant,
    /// src (nchw), then dst (nhwc).
    buffers: Storage<2>,
    expected: f64,
    /// The planner `fast` copies with.
    copies: Arc<Planner>,
}

fn prepare(params: &Params, options: &PrepareOptions) -> Prepared {
    let tensor = Tensor4::from_params("to-nhwc", params)?;
    let variant = variant(params)?;
    let len = tensor.elements()?;
    let buffers = Storage::new(
        Dtype::from_params(params)?,
        [len, len],
        [true, false],
        cell_value,
        options,
    )?;
    let nhwc = Tensor4 {
        nhwc: true,
        ..tensor
    };
    // Destination cell k holds element coords(k) of the nchw source.
    let expected = check_indices(len)
        .map(|k| {
            let (n, c, h, w) = nhwc.coords(k);
            buffers.value(SRC, tensor.index(n, c, h, w))
        })
        .sum();
    Ok(Box::new(Conversion {
        tensor,
        variant,
        buffers,
        expected,
        copies: Arc::clone(&options.copies),
    }))
}

impl Instance for Conversion {
    fn work(&self) -> Work {
        let t = self.tensor;
        let elements = (t.n * t.c * t.h * t.w) as u64;
        Work::copies(elements, self.buffers.dtype().bytes())
    }

    fn run(&mut self) -> f64 {
        let (tensor, variant, copies) = (self.tensor, self.variant, &self.copies);
        with_real_mem!(&mut self.buffers, |m| to_nhwc(m, copies, tensor, variant))
    }

    fn expected_checksum(&self) -> f64 {
        self.expected
    }

    fn simulate(&mut self, sink: &mut dyn AccessSink) {
        let (tensor, variant, copies) = (self.tensor, self.variant, &self.copies);
        with_sim_mem!(&mut self.buffers, sink, |m| to_nhwc(
            m, copies, tensor, variant
        ));
    }
}

/// `fast` is the copy engine, replayed with [`REPLAY_CAVEAT`]'s omissions; the naive variants
/// are simulated in their own order.
fn simulation_note(params: &Params) -> Option<&'static str> {
    matches!(variant(params), Ok(Variant::Fast)).then_some(REPLAY_CAVEAT)
}

/// The strided side of each variant.
fn pattern(params: &Params) -> Result<Option<StridePattern>, KernelError> {
    let t = Tensor4::from_params("to-nhwc", params)?;
    let bytes = Dtype::from_params(params)?.bytes();
    Ok(Some(match variant(params)? {
        Variant::Fast | Variant::NaiveWrite => StridePattern::sized(
            SRC,
            (t.h * t.w) as isize,
            t.c,
            bytes,
            "one pixel's channels in the source",
        ),
        Variant::NaiveRead => StridePattern::sized(
            DST,
            t.c as isize,
            t.w,
            bytes,
            "one source row's pixels in the destination",
        ),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::spec::ParamValue;

    /// The (1, 8, 4, 4) tensor's parameters with `variant` and `dtype`.
    fn params(variant: &str, dtype: &str) -> Params {
        let mut params: Params = [("n", 1), ("c", 8), ("h", 4), ("w", 4)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), ParamValue::Int(v)))
            .collect();
        params.insert("variant".into(), ParamValue::Text(variant.into()));
        params.insert("dtype".into(), ParamValue::Text(dtype.into()));
        params
    }

    #[test]
    fn the_engine_is_f64_only_and_the_only_variant_replayed_with_a_note() {
        let err = plan(&params("fast", "f32")).unwrap_err().to_string();
        assert!(err.contains("moves f64 only"), "{err}");
        assert!(simulation_note(&params("fast", "f64")).is_some());
        for variant in ["naive-write", "naive-read"] {
            assert_eq!(plan(&params(variant, "f32")).unwrap(), [128, 128]);
            assert_eq!(simulation_note(&params(variant, "f32")), None, "{variant}");
        }
    }

    #[test]
    fn each_variant_names_its_strided_side() {
        // (variant, dtype, buffer, stride in bytes, count): the source strides H·W elements,
        // the naive-read destination C.
        let cases = [
            ("fast", "f64", 0, 128, 8),
            ("naive-write", "f32", 0, 64, 8),
            ("naive-read", "f32", 1, 32, 4),
        ];
        for (variant, dtype, buffer, stride_bytes, count) in cases {
            let got = pattern(&params(variant, dtype)).unwrap().unwrap();
            assert_eq!(
                (got.buffer, got.stride_bytes, got.count),
                (buffer, stride_bytes, count),
                "{variant} {dtype}"
            );
        }
    }
}
