//! The element type of a kernel instance (`dtype=f64|f32`, [`Dtype`]) and its buffers in that
//! type ([`Storage`]), with the two macros that run a kernel's generic order on them:
//! `with_real_mem!` (a [`RealMem`]) and `with_sim_mem!` (a [`SimMem`], or an [`AddressMem`]
//! when the storage was prepared `simulate_only` and holds no data).

#![forbid(unsafe_code)]

#[cfg(doc)]
use crate::kernels::access::{AddressMem, RealMem, SimMem};
pub use crate::kernels::element::Element;
use crate::kernels::spec::{KernelError, ParamSpec, Params, PrepareOptions};
use crate::mem::AlignedBuffer;

/// The element type of a kernel instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dtype {
    F64,
    F32,
}

impl Dtype {
    /// Bytes per element.
    pub fn bytes(self) -> u32 {
        match self {
            Dtype::F64 => f64::BYTES,
            Dtype::F32 => f32::BYTES,
        }
    }

    /// The `dtype` parameter of resolved parameters (f64 when the kernel has none).
    pub fn from_params(params: &Params) -> Result<Self, KernelError> {
        match params.get("dtype").map(|v| v.to_string()).as_deref() {
            None | Some("f64") => Ok(Dtype::F64),
            Some("f32") => Ok(Dtype::F32),
            Some(other) => Err(KernelError::InvalidParam {
                param: "dtype".into(),
                message: format!("`{other}` is not one of: f64, f32"),
            }),
        }
    }
}

/// The `dtype` parameter: f64 by default, so records without it read as before.
pub const DTYPE_PARAM: ParamSpec = ParamSpec::choice(
    "dtype",
    &["f64", "f32"],
    Some("f64"),
    "element type: f64 (8 B) or f32 (4 B)",
);

/// A kernel's `N` buffers in the element type its `dtype` chose, or, prepared
/// `simulate_only`, only their lengths (no data: the simulation feeds addresses only).
pub enum Storage<const N: usize> {
    F64([AlignedBuffer<f64>; N]),
    F32([AlignedBuffer<f32>; N]),
    Addresses { dtype: Dtype, lens: [usize; N] },
}

impl<const N: usize> Storage<N> {
    /// `N` buffers of `lens[b]` elements; buffer `b` holds `value(index)` at every index when
    /// `filled[b]`, zeros otherwise.
    pub fn new(
        dtype: Dtype,
        lens: [usize; N],
        filled: [bool; N],
        value: fn(usize) -> f64,
        options: &PrepareOptions,
    ) -> Result<Self, KernelError> {
        Ok(match dtype {
            _ if options.simulate_only => Storage::Addresses { dtype, lens },
            Dtype::F64 => Storage::F64(buffers(lens, filled, value, options)?),
            Dtype::F32 => Storage::F32(buffers(lens, filled, value, options)?),
        })
    }

    /// Whether the storage holds data (not prepared `simulate_only`): a reference checksum
    /// is computed only then.
    pub fn has_data(&self) -> bool {
        !matches!(self, Storage::Addresses { .. })
    }

    /// The element type.
    pub fn dtype(&self) -> Dtype {
        match self {
            Storage::F64(_) => Dtype::F64,
            Storage::F32(_) => Dtype::F32,
            Storage::Addresses { dtype, .. } => *dtype,
        }
    }

    /// Element `index` of buffer `buffer`, widened to f64 (for reference checksums; NaN
    /// without data, which no checksum matches).
    pub fn value(&self, buffer: usize, index: usize) -> f64 {
        match self {
            Storage::F64(b) => b[buffer][index],
            Storage::F32(b) => f64::from(b[buffer][index]),
            Storage::Addresses { .. } => f64::NAN,
        }
    }
}

fn buffers<T: Element, const N: usize>(
    lens: [usize; N],
    filled: [bool; N],
    value: fn(usize) -> f64,
    options: &PrepareOptions,
) -> Result<[AlignedBuffer<T>; N], KernelError> {
    let mut made = Vec::with_capacity(N);
    for (index, (len, fill)) in lens.into_iter().zip(filled).enumerate() {
        let mut buffer =
            AlignedBuffer::<T>::zeroed_shifted(len, options.huge_pages, options.shift_of(index))?;
        if fill {
            for (index, cell) in buffer.iter_mut().enumerate() {
                *cell = T::from_f64(value(index));
            }
        }
        made.push(buffer);
    }
    Ok(made
        .try_into()
        .unwrap_or_else(|_| unreachable!("one buffer per length")))
}

/// Runs `$body` with `$m` bound to a [`RealMem`] of `$storage`'s buffers (NaN, which no
/// checksum matches, when the storage holds no data).
macro_rules! with_real_mem {
    ($storage:expr, |$m:ident| $body:expr) => {
        match $storage {
            $crate::kernels::typed::Storage::F64(buffers) => {
                let $m = &mut $crate::kernels::access::RealMem::new(
                    buffers.each_mut().map(|b| &mut **b),
                );
                $body
            }
            $crate::kernels::typed::Storage::F32(buffers) => {
                let $m = &mut $crate::kernels::access::RealMem::new(
                    buffers.each_mut().map(|b| &mut **b),
                );
                $body
            }
            // Prepared `simulate_only`: nothing to run, and NaN matches no checksum.
            $crate::kernels::typed::Storage::Addresses { .. } => f64::NAN,
        }
    };
}

/// As [`with_real_mem`], with a simulating accessor reporting to `$sink`: a [`SimMem`], or an
/// [`AddressMem`] without data.
macro_rules! with_sim_mem {
    ($storage:expr, $sink:expr, |$m:ident| $body:expr) => {
        match $storage {
            $crate::kernels::typed::Storage::F64(buffers) => {
                let $m = &mut $crate::kernels::access::SimMem::new(
                    buffers.each_mut().map(|b| &mut **b),
                    $sink,
                );
                $body
            }
            $crate::kernels::typed::Storage::F32(buffers) => {
                let $m = &mut $crate::kernels::access::SimMem::new(
                    buffers.each_mut().map(|b| &mut **b),
                    $sink,
                );
                $body
            }
            $crate::kernels::typed::Storage::Addresses { dtype, lens } => match dtype {
                $crate::kernels::typed::Dtype::F64 => {
                    let $m = &mut $crate::kernels::access::AddressMem::<f64, _>::new(*lens, $sink);
                    $body
                }
                $crate::kernels::typed::Dtype::F32 => {
                    let $m = &mut $crate::kernels::access::AddressMem::<f32, _>::new(*lens, $sink);
                    $body
                }
            },
        }
    };
}

pub(crate) use {with_real_mem, with_sim_mem};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dtype_is_f64_unless_named() {
        assert_eq!(Dtype::from_params(&Params::new()), Ok(Dtype::F64));
        assert_eq!(Dtype::F32.bytes(), 4);
        assert_eq!(Dtype::F64.bytes(), 8);
    }
}
