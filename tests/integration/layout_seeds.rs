//! Every worked example of the seed notes (`docs/seeds/`), as a test of the layout model.
//!
//! Seed 000: `arange(12).reshape(3,4)` and its transpose. Seed 001: a 2×3 tensor, its
//! transpose, `view` failing on it, views vs copies. Seed 002: the `points` tensor (offset of
//! `points[1]`, `t()`, `contiguous()` reordering the storage, `ones(3,4,5).transpose(0,2)`).
//! Seed 003: `.stride()` examples (permute, `x[:, ::2]`, scalars, empty tensors). Seed 004:
//! row/column-major, padded rows, the 6×9 diagonal, the `A[2i, 3j]` sub-sample, negative
//! strides, sub-block contiguity.

use stridelab::kernels::eval::{self as expr, Evaluation};
use stridelab::kernels::tensor::Tensor;
use stridelab::layout::{ErrorKind, Layout};

fn eval(text: &str) -> Evaluation<i64> {
    expr::evaluate(text, crate::common::planner()).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn strides(text: &str) -> Vec<isize> {
    eval(text).layout().strides().to_vec()
}

/// Storage offsets the view visits, in logical C order.
fn visits(text: &str) -> Vec<usize> {
    eval(text).layout().offsets().collect()
}

// ------------------------------------------------------------------ seed 000

#[test]
fn seed000_reshape_3x4_has_strides_4_1() {
    let e = eval("arange(12).reshape(3,4)");
    assert_eq!(e.layout().shape(), &[3, 4]);
    assert_eq!(e.layout().strides(), &[4, 1]);
    assert!(e.shares_storage());
    assert!(e.layout().is_c_contiguous());
}

#[test]
fn seed000_transpose_swaps_strides_and_shares_storage() {
    let e = eval("arange(12).reshape(3,4).T");
    assert_eq!(e.layout().shape(), &[4, 3]);
    assert_eq!(e.layout().strides(), &[1, 4]);
    assert!(e.shares_storage(), "transpose must not copy");
    assert!(!e.layout().is_c_contiguous());
    assert_eq!(e.values(), vec![0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11]);
    assert_eq!(
        strides("arange(12).reshape(3,4).transpose(0, 1)"),
        vec![1, 4]
    );
}

// ------------------------------------------------------------------ seed 001

#[test]
fn seed001_2x3_and_its_transpose() {
    let x = Tensor::from_vec(vec![1, 2, 3, 4, 5, 6], &[2, 3], crate::common::planner()).unwrap();
    assert_eq!(x.layout().strides(), &[3, 1]);
    let y = x.t().unwrap();
    assert_eq!(y.layout().shape(), &[3, 2]);
    assert_eq!(y.layout().strides(), &[1, 3]);
    assert!(y.shares_storage_with(&x));
    assert_eq!(y.values(), vec![1, 4, 2, 5, 3, 6]);
    // x[i, j] lives at storage_offset + i*stride[0] + j*stride[1].
    assert_eq!(x.get(&[1, 2]), Some(6));
    assert_eq!(x.layout().offset_of(&[1, 2]), Some(5));
}

#[test]
fn seed001_row_slice_is_a_writable_view() {
    // y = x[0, :] is a view: it shares storage (so a write through it would change x).
    let e = eval("arange(6).view(2, 3)[0, :]");
    assert!(e.shares_storage());
    assert!(e.tensor().writable());
    assert_eq!((e.layout().shape(), e.layout().offset()), (&[3][..], 0));
    assert_eq!(eval("arange(6).view(2, 3)[:, 1]").values(), vec![1, 4]);
}

#[test]
fn seed001_view_on_transpose_fails_and_suggests_reshape() {
    let err =
        expr::evaluate("arange(6).view(2, 3).T.view(6)", crate::common::planner()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ViewIncompatible);
    let message = err.to_string();
    assert!(message.contains(".reshape(6)"), "{message}");
    // reshape copies instead, and contiguous() makes a contiguous copy.
    let r = eval("arange(6).view(2, 3).T.reshape(6)");
    assert!(!r.shares_storage());
    assert_eq!(r.values(), vec![0, 3, 1, 4, 2, 5]);
    let c = eval("arange(6).view(2, 3).T.contiguous()");
    assert!(!c.shares_storage());
    assert_eq!(c.layout().strides(), &[2, 1]);
    // contiguous() of an already contiguous tensor is the same storage.
    assert!(eval("arange(6).view(2, 3).contiguous()").shares_storage());
    // clone() always copies.
    assert!(!eval("arange(6).view(2, 3).clone()").shares_storage());
}

// ------------------------------------------------------------------ seed 002

fn points() -> Tensor<f64> {
    Tensor::from_vec(
        vec![1.0, 4.0, 2.0, 1.0, 3.0, 5.0],
        &[3, 2],
        crate::common::planner(),
    )
    .unwrap()
}

#[test]
fn seed002_second_point_has_offset_2() {
    let points = points();
    assert_eq!(points.layout().strides(), &[2, 1]);
    let second = points.select(0, 1).unwrap();
    assert_eq!(second.layout().offset(), 2);
    assert_eq!(second.layout().shape(), &[2]);
    assert_eq!(second.layout().strides(), &[1]);
    assert!(second.shares_storage_with(&points));
    assert_eq!(second.values(), vec![2.0, 1.0]);
    // The same through the EXPR language: points[1].
    let e = eval("arange(6).view(3, 2)[1]");
    assert_eq!((e.layout().offset(), e.layout().strides()), (2, &[1][..]));
    // clone() detaches it from the storage.
    let cloned = second.clone_data().unwrap();
    assert!(!cloned.shares_storage_with(&points));
    assert_eq!(cloned.values(), vec![2.0, 1.0]);
}

#[test]
fn seed002_points_t_and_contiguous_reorders_storage() {
    let points = points();
    let points_t = points.t().unwrap();
    assert!(points_t.shares_storage_with(&points));
    assert_eq!(points_t.layout().strides(), &[1, 2]);
    assert_eq!(points_t.values(), vec![1.0, 2.0, 3.0, 4.0, 1.0, 5.0]);
    assert!(points.layout().is_c_contiguous());
    assert!(!points_t.layout().is_c_contiguous());
    // points_t.storage() is still the row-major storage of points.
    assert_eq!(&points_t.storage()[..], &[1.0, 4.0, 2.0, 1.0, 3.0, 5.0]);

    let cont = points_t.contiguous().unwrap();
    assert!(!cont.shares_storage_with(&points));
    assert_eq!(cont.layout().strides(), &[3, 1]);
    assert_eq!(&cont.storage()[..], &[1.0, 2.0, 3.0, 4.0, 1.0, 5.0]);
    assert_eq!(cont.values(), points_t.values());
}

#[test]
fn seed002_ones_3x4x5_transpose_0_2() {
    let e = eval("arange(60).view(3, 4, 5)");
    assert_eq!(e.layout().strides(), &[20, 5, 1]);
    let e = eval("arange(60).view(3, 4, 5).transpose(0, 2)");
    assert_eq!(e.layout().shape(), &[5, 4, 3]);
    assert_eq!(e.layout().strides(), &[1, 5, 20]);
}

// ------------------------------------------------------------------ seed 003

#[test]
fn seed003_transpose_visits_0_3_1_4_2_5() {
    assert_eq!(visits("arange(6).view(2, 3)"), vec![0, 1, 2, 3, 4, 5]);
    assert_eq!(
        visits("arange(6).view(2, 3).transpose(0, 1)"),
        vec![0, 3, 1, 4, 2, 5]
    );
    assert_eq!(
        strides("arange(6).view(2, 3).transpose(0, 1).contiguous()"),
        vec![2, 1]
    );
}

#[test]
fn seed003_permute_3d() {
    assert_eq!(strides("arange(24).view(2, 3, 4)"), vec![12, 4, 1]);
    let e = eval("arange(24).view(2, 3, 4).permute(0, 2, 1)");
    assert_eq!(e.layout().shape(), &[2, 4, 3]);
    assert_eq!(e.layout().strides(), &[12, 1, 4]);
    assert!(!e.layout().is_c_contiguous());
}

#[test]
fn seed003_every_other_column() {
    let e = eval("arange(6).view(2, 3)[:, ::2]");
    assert_eq!(e.layout().shape(), &[2, 2]);
    assert_eq!(e.layout().strides(), &[3, 2]);
    assert!(!e.layout().is_c_contiguous());
    assert_eq!(e.values(), vec![0, 2, 3, 5]);
}

#[test]
fn seed003_scalar_and_empty_strides() {
    // A 0-d view has no strides.
    let e = eval("arange(6).view(2, 3)[1, 2]");
    assert_eq!(e.layout().strides(), &[] as &[isize]);
    assert_eq!(e.values(), vec![5]);
    // The seed claims torch.empty(2, 0).stride() == (0, 1). PyTorch actually gives (1, 1)
    // (stride[k] = stride[k+1] * max(size[k+1], 1)) and NumPy 2 gives (0, 0); they disagree,
    // so we follow PyTorch. The strides of an empty view are never dereferenced.
    let empty = Layout::contiguous(&[2, 0]).unwrap();
    assert_eq!(empty.strides(), &[1, 1]);
    assert!(empty.is_c_contiguous() && empty.is_f_contiguous());
    assert_eq!(strides("arange(0).view(2, 0)"), vec![1, 1]);
}

// ------------------------------------------------------------------ seed 004

#[test]
fn seed004_row_and_column_major_3x4() {
    let row = eval("arange(12).view(3, 4)");
    assert_eq!(row.layout().strides(), &[4, 1]);
    let col = eval("arange(12).as_strided((3, 4), (1, 3))");
    assert!(col.layout().is_f_contiguous() && !col.layout().is_c_contiguous());
    // Column-major order: A[0,0], A[1,0], A[2,0], A[0,1], ... are storage cells 0, 1, 2, 3.
    assert_eq!(col.layout().offset_of(&[2, 0]), Some(2));
    assert_eq!(col.layout().offset_of(&[0, 1]), Some(3));
}

#[test]
fn seed004_padded_rows_only_change_the_row_stride() {
    // 3 rows of 4 elements, each row padded by 1: row stride n + pi = 5.
    let e = eval("arange(15).as_strided((3, 4), (5, 1), 0)");
    assert_eq!(e.values(), vec![0, 1, 2, 3, 5, 6, 7, 8, 10, 11, 12, 13]);
    assert!(!e.layout().is_c_contiguous());
}

#[test]
fn seed004_diagonal_of_6x9_has_stride_10() {
    let e = eval("arange(54).view(6, 9).diagonal()");
    assert_eq!(e.layout().shape(), &[6]);
    assert_eq!(e.layout().strides(), &[10]);
    assert_eq!(e.layout().offset(), 0);
    assert_eq!(e.values(), vec![0, 10, 20, 30, 40, 50]);
    assert!(e.shares_storage());
}

#[test]
fn seed004_subsample_a_2i_3j() {
    // B[i, j] = A[2i, 3j]: strides 2·9 and 3·1.
    let e = eval("arange(54).view(6, 9)[::2, ::3]");
    assert_eq!(e.layout().shape(), &[3, 3]);
    assert_eq!(e.layout().strides(), &[18, 3]);
    assert_eq!(e.values(), vec![0, 3, 6, 18, 21, 24, 36, 39, 42]);
}

#[test]
fn seed004_negative_stride_reverses_an_axis() {
    let e = eval("arange(12).view(3, 4).flip(1)");
    assert_eq!(e.layout().strides(), &[4, -1]);
    assert_eq!(e.layout().offset(), 3);
    assert_eq!(e.values(), vec![3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8]);
    // The slice ::-1 is the same view (NumPy semantics).
    let s = eval("arange(12).view(3, 4)[:, ::-1]");
    assert_eq!(s.layout(), e.layout());
    assert!(s.shares_storage());
}

#[test]
fn seed004_permuting_axes_reorders_strides() {
    assert_eq!(
        strides("arange(24).view(2, 3, 4).permute(2, 0, 1)"),
        vec![1, 12, 4]
    );
}

#[test]
fn seed004_sub_block_contiguity() {
    // Full-width row block: contiguous. A block narrower than the rows: a gap, not contiguous.
    assert!(
        eval("arange(20).view(4, 5)[1:3, :]")
            .layout()
            .is_c_contiguous()
    );
    let block = eval("arange(20).view(4, 5)[1:3, 1:3]");
    assert!(!block.layout().is_c_contiguous());
    assert_eq!(block.values(), vec![6, 7, 11, 12]);
    // A slice of one row is always contiguous.
    assert!(
        eval("arange(20).view(4, 5)[2, 1:4]")
            .layout()
            .is_c_contiguous()
    );
}

/// The layout-only evaluation (no storage values) and the tensor evaluation with values agree
/// on the final layout and storage length, copies included, and on refusals.
#[test]
fn layout_only_evaluation_matches_the_tensor_evaluation() {
    for text in [
        "arange(12).view(3, 4).T",
        "arange(12).view(3, 4).T.reshape(12)",
        "arange(24).view(2, 3, 4).permute(2, 0, 1).flatten(0, 1)",
        "arange(6).view(2, 3).T.contiguous().clone()[::-1]",
        "arange(5).expand(3, 5).clone()",
        "arange(0).view(0, 3).T.contiguous()",
        "arange(6).view(2, 3).T.view(6)",
        "arange(8).as_strided((2, 2), (1, 1)).flatten()",
    ] {
        let with_values = expr::evaluate(text, crate::common::planner())
            .map(|e| (e.layout().clone(), e.storage_len()));
        let layout_only = stridelab::layout::expr::evaluate_layout(text);
        match (with_values, layout_only) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{text}"),
            (Err(a), Err(b)) => {
                assert_eq!(a.kind(), b.kind(), "{text}");
                assert_eq!(a.to_string(), b.to_string(), "{text}");
            }
            (a, b) => panic!("{text}: {a:?} vs {b:?}"),
        }
    }
}
