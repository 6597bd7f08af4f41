//! Iteration over a layout's storage offsets in logical C order.

use super::strided::Layout;

/// Storage offsets of a [`Layout`]'s elements, last index fastest.
///
/// No per-element bounds checks: the layout was validated when it was built (condition 6 of
/// [`super::strided::validate`]), so every offset the odometer visits is inside the storage.
#[derive(Debug, Clone)]
pub struct Offsets<'a> {
    shape: &'a [usize],
    strides: &'a [isize],
    index: Vec<usize>,
    position: isize,
    remaining: usize,
}

impl<'a> Offsets<'a> {
    pub(crate) fn new(layout: &'a Layout) -> Offsets<'a> {
        Offsets {
            shape: layout.shape(),
            strides: layout.strides(),
            index: vec![0; layout.ndim()],
            position: layout.offset() as isize,
            remaining: layout.numel(),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transposed_3x4_visits_columns_first() {
        let layout = Layout::new(vec![4, 3], vec![1, 4], 0, 12).unwrap();
        let offsets: Vec<usize> = layout.offsets().collect();
        assert_eq!(offsets, vec![0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11]);
    }

    #[test]
    fn zero_d_and_empty_layouts() {
        let scalar = Layout::new(vec![], vec![], 5, 6).unwrap();
        assert_eq!(scalar.offsets().collect::<Vec<_>>(), vec![5]);
        let empty = Layout::new(vec![3, 0], vec![1, 1], 0, 0).unwrap();
        assert_eq!(empty.offsets().count(), 0);
    }

    #[test]
    fn negative_stride_walks_backwards() {
        let layout = Layout::new(vec![4], vec![-1], 3, 4).unwrap();
        assert_eq!(layout.offsets().collect::<Vec<_>>(), vec![3, 2, 1, 0]);
    }
}
