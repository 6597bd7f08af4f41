//! The references every bandwidth figure is normalised by, as instances the runner times
//! interleaved with the kernel under test: a plain copy, a non-temporal copy (the best copy is
//! the faster of the two) and a streaming read of the same bytes.

use crate::cache::AccessSink;
use crate::kernels::spec::{Instance, KernelError, Work};
use crate::mem::AlignedBuffer;
use stridelab_copy::reference::{nt_copy, plain_copy, read_sum};

/// Which reference stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReferenceVariant {
    /// `copy_from_slice` (glibc memcpy).
    PlainCopy,
    /// Streaming stores: the destination bypasses the caches.
    NonTemporalCopy,
    /// A sum with independent accumulators (read bandwidth).
    Read,
}

impl ReferenceVariant {
    pub fn name(self) -> &'static str {
        match self {
            ReferenceVariant::PlainCopy => "plain-copy",
            ReferenceVariant::NonTemporalCopy => "non-temporal-copy",
            ReferenceVariant::Read => "read",
        }
    }

    /// The variants that make up the `copy` or the `read` reference.
    pub fn for_writing_kernel(writes: bool) -> &'static [ReferenceVariant] {
        if writes {
            &[
                ReferenceVariant::PlainCopy,
                ReferenceVariant::NonTemporalCopy,
            ]
        } else {
            &[ReferenceVariant::Read]
        }
    }
}

/// A prepared reference over `elements` f64 values.
#[derive(Debug)]
pub struct ReferenceInstance {
    variant: ReferenceVariant,
    src: AlignedBuffer,
    dst: Option<AlignedBuffer>,
    expected: f64,
}

impl ReferenceInstance {
    /// Allocates and fills the buffers (source values 0, 1, 2, … so copies are checkable).
    pub fn new(
        variant: ReferenceVariant,
        elements: usize,
        huge_pages: bool,
    ) -> Result<Self, KernelError> {
        let elements = elements.max(1);
        let mut src = AlignedBuffer::zeroed(elements, huge_pages)?;
        for (i, x) in src.iter_mut().enumerate() {
            *x = (i % 1024) as f64;
        }
        let (dst, expected) = match variant {
            ReferenceVariant::Read => (None, src.iter().sum()),
            _ => {
                let last = elements - 1;
                (
                    Some(AlignedBuffer::zeroed(elements, huge_pages)?),
                    src[0] + src[last / 2] + src[last],
                )
            }
        };
        Ok(Self {
            variant,
            src,
            dst,
            expected,
        })
    }
}

impl Instance for ReferenceInstance {
    fn work(&self) -> Work {
        let bytes = (self.src.len() * size_of::<f64>()) as u64;
        Work {
            bytes_read: bytes,
            bytes_written: if self.dst.is_some() { bytes } else { 0 },
            elements: self.src.len() as u64,
        }
    }

    fn run(&mut self) -> f64 {
        match (&mut self.dst, self.variant) {
            (Some(dst), ReferenceVariant::NonTemporalCopy) => {
                nt_copy(&self.src, dst);
                probe(dst)
            }
            (Some(dst), _) => {
                plain_copy(&self.src, dst);
                probe(dst)
            }
            (None, _) => read_sum(&self.src),
        }
    }

    fn expected_checksum(&self) -> f64 {
        self.expected
    }

    fn simulate(&mut self, sink: &mut dyn AccessSink) {
        let base_src = 1u64 << 32;
        let base_dst = 2u64 << 32;
        for i in 0..self.src.len() as u64 {
            sink.load(base_src + 8 * i, 8);
            if self.dst.is_some() {
                sink.store(base_dst + 8 * i, 8);
            }
        }
    }
}

/// First, middle and last element: cheap evidence that the whole copy happened.
fn probe(dst: &[f64]) -> f64 {
    let last = dst.len() - 1;
    dst[0] + dst[last / 2] + dst[last]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_returns_its_expected_checksum() {
        for variant in [
            ReferenceVariant::PlainCopy,
            ReferenceVariant::NonTemporalCopy,
            ReferenceVariant::Read,
        ] {
            for n in [1, 7, 5000] {
                let mut r = ReferenceInstance::new(variant, n, false).unwrap();
                assert_eq!(r.run(), r.expected_checksum(), "{variant:?} {n}");
            }
        }
    }
}
