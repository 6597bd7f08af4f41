//! Iteration over a layout's storage offsets in logical C order.

/// Storage offsets of a layout's elements, last index fastest.
///
/// No per-element bounds checks: the layout was validated when it was built (condition 6 of
/// `strided::validate`), so every offset the odometer visits is inside the storage.
#[derive(Debug, Clone)]
pub struct Offsets<'a> {
    shape: &'a [usize],
    strides: &'a [isize],
    index: Vec<usize>,
    position: isize,
    remaining: usize,
}

impl<'a> Offsets<'a> {
    /// The walk over a validated layout's `shape`, `strides` and `offset` (`numel` elements);
    /// takes the parts, not the layout, so the iterator does not depend on `Layout`.
    pub(crate) fn new(
        shape: &'a [usize],
        strides: &'a [isize],
        offset: usize,
        numel: usize,
    ) -> Offsets<'a> {
        Offsets {
            shape,
            strides,
            index: vec![0; shape.len()],
            position: offset as isize,
            remaining: numel,
        }
    }
}

impl Iterator for Offsets<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let current = self.position as usize;
        if self.remaining > 0 {
            for d in (0..self.shape.len()).rev() {
                if self.index[d] + 1 < self.shape[d] {
                    self.index[d] += 1;
                    self.position += self.strides[d];
                    break;
                }
                // Rewind this dim: |(n-1)·s| < storage_len by validation condition 6.
                self.position -= (self.shape[d] as isize - 1) * self.strides[d];
                self.index[d] = 0;
            }
        }
        Some(current)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl ExactSizeIterator for Offsets<'_> {}
