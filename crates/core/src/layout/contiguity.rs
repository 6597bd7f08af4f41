//! C- and F-contiguity with the PyTorch/NumPy rules, and an explanation of why not.
//!
//! A layout is C-contiguous when, walking dims from last to first and skipping size-1 dims,
//! each stride equals the product of the sizes after it (so the innermost one is 1). F order
//! walks from first to last. Empty layouts are contiguous in both orders.

use super::strided::Layout;

/// Memory order a contiguity check is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Row-major: last index fastest.
    C,
    /// Column-major: first index fastest.
    F,
}

/// The first dimension (in the order's walk) whose stride breaks contiguity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContiguityBreak {
    pub dim: usize,
    pub size: usize,
    pub stride: isize,
    /// The stride the order requires here: the product of the sizes walked so far.
    pub expected: isize,
}

impl ContiguityBreak {
    /// One sentence for people, e.g. "dim 1 (size 3) has stride 4, but C order needs 1".
    pub fn explain(&self, order: Order) -> String {
        let name = match order {
            Order::C => "C",
            Order::F => "F",
        };
        let why = if self.expected == 1 {
            match order {
                Order::C => "the last dim of size > 1 must have stride 1".to_string(),
                Order::F => "the first dim of size > 1 must have stride 1".to_string(),
            }
        } else {
            let side = match order {
                Order::C => "after",
                Order::F => "before",
            };
            format!("the product of the sizes of the dims {side} it")
        };
        format!(
            "dim {} (size {}) has stride {}, but {name} order needs {} ({why})",
            self.dim, self.size, self.stride, self.expected
        )
    }
}

/// `Ok(())` if `layout` is contiguous in `order`, else the first dimension that breaks it.
pub fn check(layout: &Layout, order: Order) -> Result<(), ContiguityBreak> {
    if layout.numel() == 0 {
        return Ok(());
    }
    let dims: Vec<usize> = match order {
        Order::C => (0..layout.ndim()).rev().collect(),
        Order::F => (0..layout.ndim()).collect(),
    };
    // The running product stays <= numel <= isize::MAX (layout validation, condition 4).
    let mut expected: isize = 1;
    for d in dims {
        let (size, stride) = (layout.shape()[d], layout.strides()[d]);
        if size == 1 {
            continue;
        }
        if stride != expected {
            return Err(ContiguityBreak {
                dim: d,
                size,
                stride,
                expected,
            });
        }
        expected *= size as isize;
    }
    Ok(())
}

impl Layout {
    /// Row-major contiguity (PyTorch's `is_contiguous()`, NumPy's `C_CONTIGUOUS`).
    pub fn is_c_contiguous(&self) -> bool {
        check(self, Order::C).is_ok()
    }

    /// Column-major contiguity (NumPy's `F_CONTIGUOUS`).
    pub fn is_f_contiguous(&self) -> bool {
        check(self, Order::F).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(shape: &[usize], strides: &[isize], storage: usize) -> Layout {
        Layout::new(shape.to_vec(), strides.to_vec(), 0, storage).unwrap()
    }

    #[test]
    fn table() {
        /// (shape, strides, storage length, C-contiguous, F-contiguous)
        type Case = (&'static [usize], &'static [isize], usize, bool, bool);
        let cases: &[Case] = &[
            (&[3, 4], &[4, 1], 12, true, false),
            (&[4, 3], &[1, 4], 12, false, true),
            (&[2, 2], &[3, 2], 6, false, false),
            (&[], &[], 1, true, true),
            (&[5], &[1], 5, true, true),
            (&[5], &[2], 9, false, false),
            (&[1, 5], &[99, 1], 5, true, true),
            (&[3, 1], &[1, 7], 3, true, true),
            (&[2, 0], &[7, 7], 0, true, true),
            (&[4], &[0], 1, false, false),
            (&[1], &[0], 1, true, true),
        ];
        for &(shape, strides, storage, c, f) in cases {
            let l = layout(shape, strides, storage);
            assert_eq!(l.is_c_contiguous(), c, "C {shape:?} {strides:?}");
            assert_eq!(l.is_f_contiguous(), f, "F {shape:?} {strides:?}");
        }
    }

    #[test]
    fn explains_transpose() {
        let l = layout(&[4, 3], &[1, 4], 12);
        let broken = check(&l, Order::C).unwrap_err();
        assert_eq!((broken.dim, broken.stride, broken.expected), (1, 4, 1));
        assert!(broken.explain(Order::C).contains("needs 1"));
    }
}
