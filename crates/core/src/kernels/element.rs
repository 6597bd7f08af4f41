//! The element types kernels are instantiated with ([`Element`]: f64 and f32), and the
//! accumulator count of every summing kernel.

#![forbid(unsafe_code)]

use std::ops::{Add, Mul};

use crate::mem::Plain;

/// Independent accumulators of every summing kernel: enough to keep two FP add pipes with a
/// 3–4 cycle latency busy, so sums are limited by memory, not by one dependent chain.
pub const ACCUMULATORS: usize = 8;

/// A number type kernels can be instantiated with.
pub trait Element:
    Plain + PartialEq + Add<Output = Self> + Mul<Output = Self> + std::fmt::Debug
{
    /// Bytes per element (the simulated access width).
    const BYTES: u32;
    /// The `dtype` word.
    const NAME: &'static str;
    /// `value`, which callers keep small enough to be exact.
    fn from_f64(value: f64) -> Self;
    fn to_f64(self) -> f64;
    /// The elements as f64 when they are f64 (the reference `read_sum` sums f64 only).
    fn as_f64s(elements: &[Self]) -> Option<&[f64]>;
}

impl Element for f64 {
    const BYTES: u32 = 8;
    const NAME: &'static str = "f64";
    #[inline(always)]
    fn from_f64(value: f64) -> Self {
        value
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self
    }
    #[inline(always)]
    fn as_f64s(elements: &[Self]) -> Option<&[f64]> {
        Some(elements)
    }
}

impl Element for f32 {
    const BYTES: u32 = 4;
    const NAME: &'static str = "f32";
    #[inline(always)]
    fn from_f64(value: f64) -> Self {
        value as f32
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    #[inline(always)]
    fn as_f64s(_: &[Self]) -> Option<&[f64]> {
        None
    }
}
