//! `view-sum expr=EXPR`: sums any view written in the `stridelab layout` language (the
//! diagonal, the anti-diagonal, `[::2, ::3]` sub-sampling, a transposed or flipped walk) over a
//! storage of the expression's storage length, of f64 (default) or f32 (`dtype=f32`) elements.
//!
//! Order: the view's elements in logical C order (last dimension fastest), each read at
//! `offset + Σ ik·sk`; the innermost dimension is one run, whose k-th element goes to
//! accumulator `k mod 8`. A 0-d view reads its one element.

use crate::cache::AccessSink;
use crate::kernels::access::{Mem, Strided, for_each_view_index};
use crate::kernels::common::{
    ACCUMULATORS, cell_value, checked_elements, fold, invalid, text_param,
};
use crate::kernels::spec::SimStart;
use crate::kernels::spec::{
    Family, Instance, KernelError, KernelSpec, ParamSpec, Params, PrepareOptions, Work,
};
use crate::kernels::spec::{Prepared, StridePattern};
use crate::kernels::typed::{DTYPE_PARAM, Dtype, Storage, with_real_mem, with_sim_mem};
use crate::layout::expr::evaluate_layout;

const PARAMS: [ParamSpec; 2] = [
    ParamSpec::text(
        "expr",
        None,
        "a view in the layout language, e.g. 'arange(1048576).view(1024,1024).diagonal()'",
    ),
    DTYPE_PARAM,
];

pub(crate) const VIEW_SUM: KernelSpec = KernelSpec {
    name: "view-sum",
    family: Family::View,
    params: &PARAMS,
    summary: "Sums any view written in the layout language (`stridelab layout`), in C order.",
    example: "expr=arange(1048576).view(1024,1024).T",
    explanation: "Sums the elements of a strided view (shape, strides, offset over one \
                  storage) in logical order. A view is free to make — only metadata changes \
                  — but not free to walk: a diagonal of an n×n matrix has stride n+1 and uses \
                  one element per cache line, sub-sampling wastes the skipped elements of \
                  each line, a flipped walk runs backwards (prefetchers cope), a transposed \
                  walk is a column walk. Compare with a contiguous walk of the same count.",
    prepare,
    plan,
    pattern,
    simulation_note: None,
    accesses: Some(accesses),
    simulate: SimStart::Cold,
};

/// A strided view over a storage of `storage_len` elements (strides in elements).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewGeometry {
    pub shape: Vec<usize>,
    pub strides: Vec<isize>,
    pub offset: usize,
    pub storage_len: usize,
}

impl ViewGeometry {
    /// Checks that the view is non-empty and every element lies inside the storage.
    pub fn validate(&self) -> Result<(), KernelError> {
        if self.shape.len() != self.strides.len() {
            return Err(invalid("expr", "shape and strides differ in length"));
        }
        checked_elements("expr", &[self.storage_len])?;
        let elements = self
            .shape
            .iter()
            .try_fold(1usize, |acc, &n| acc.checked_mul(n))
            .ok_or_else(|| invalid("expr", "the view's element count overflows"))?;
        if elements == 0 {
            return Err(invalid("expr", "the view has no elements: nothing to sum"));
        }
        let (mut low, mut high) = (self.offset as i128, self.offset as i128);
        for (&n, &s) in self.shape.iter().zip(&self.strides) {
            let span = (n as i128 - 1) * s as i128;
            if span < 0 {
                low += span;
            } else {
                high += span;
            }
        }
        if low < 0 || high >= self.storage_len as i128 {
            return Err(invalid(
                "expr",
                format!(
                    "the view reaches storage indices {low}..={high}, outside 0..{}",
                    self.storage_len
                ),
            ));
        }
        Ok(())
    }

    /// Elements of the view.
    pub fn elements(&self) -> usize {
        self.shape.iter().product()
    }
}

/// The view of a layout expression, over a storage of the expression's length (the layout
/// model validated it; [`ViewGeometry::validate`] checks again, cheaply, before allocating).
fn geometry(params: &Params) -> Result<ViewGeometry, KernelError> {
    let expr = text_param("view-sum", params, "expr")?;
    let (layout, storage_len) =
        evaluate_layout(expr).map_err(|err| invalid("expr", format!("`{expr}`: {err}")))?;
    let view = ViewGeometry {
        shape: layout.shape().to_vec(),
        strides: layout.strides().to_vec(),
        offset: layout.offset(),
        storage_len,
    };
    view.validate()?;
    Ok(view)
}

fn plan(params: &Params) -> Result<Vec<usize>, KernelError> {
    let view = geometry(params)?;
    view.validate()?;
    Ok(vec![view.storage_len])
}

/// Loads of one run: the view's elements (a broadcast view reads its storage many times).
fn accesses(params: &Params) -> Result<u64, KernelError> {
    Ok(geometry(params)?.elements() as u64)
}

/// The `view-sum` order.
#[inline(always)]
pub fn view_sum<M: Mem>(m: &mut M, view: &ViewGeometry) -> f64 {
    let mut acc = [0.0; ACCUMULATORS];
    match (view.shape.split_last(), view.strides.split_last()) {
        (Some((&inner, outer_shape)), Some((&inner_stride, outer_strides))) => {
            for_each_view_index(outer_shape, outer_strides, view.offset, |start| {
                m.sum_run(Strided::new(0, start, inner_stride), inner, &mut acc);
            });
        }
        _ => m.sum_run(Strided::new(0, view.offset, 1), 1, &mut acc),
    }
    fold(&acc)
}

struct ViewSum {
    view: ViewGeometry,
    storage: Storage<1>,
    expected: f64,
}

fn prepare(params: &Params, options: &PrepareOptions) -> Prepared {
    prepare_view(geometry(params)?, Dtype::from_params(params)?, options)
}

/// Prepares `view-sum` for an explicit view geometry.
pub fn prepare_view(view: ViewGeometry, dtype: Dtype, options: &PrepareOptions) -> Prepared {
    view.validate()?;
    let lens = [view.storage_len];
    let storage = Storage::new(dtype, lens, [true], cell_value, options)?;
    // Brute force: decode every flat index into a multi-index and apply the strides.
    let mut expected = 0.0;
    let elements = if storage.has_data() {
        view.elements()
    } else {
        0
    };
    for flat in 0..elements {
        let mut rest = flat;
        let mut position = view.offset as isize;
        for (&n, &s) in view.shape.iter().zip(&view.strides).rev() {
            position += (rest % n) as isize * s;
            rest /= n;
        }
        expected += storage.value(0, position as usize);
    }
    Ok(Box::new(ViewSum {
        view,
        storage,
        expected,
    }))
}

impl Instance for ViewSum {
    fn work(&self) -> Work {
        let n = self.view.elements() as u64;
        Work::reads(n, self.storage.dtype().bytes())
    }

    fn run(&mut self) -> f64 {
        let view = &self.view;
        with_real_mem!(&mut self.storage, |m| view_sum(m, view))
    }

    fn expected_checksum(&self) -> f64 {
        self.expected
    }

    fn simulate(&mut self, sink: &mut dyn AccessSink) {
        let view = &self.view;
        with_sim_mem!(&mut self.storage, sink, |m| view_sum(m, view));
    }
}

/// The innermost dimension: the run the walk repeats.
fn pattern(params: &Params) -> Result<Option<StridePattern>, KernelError> {
    let view = geometry(params)?;
    let bytes = Dtype::from_params(params)?.bytes();
    Ok(match (view.shape.last(), view.strides.last()) {
        (Some(&count), Some(&stride)) => Some(StridePattern::sized(
            0,
            stride,
            count,
            bytes,
            "the innermost dimension",
        )),
        _ => None,
    })
}
