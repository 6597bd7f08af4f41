//! The same view chain over storage laid out with longer rows: which step of an expression
//! shapes the storage into rows (its *leading dimension* is the quantity a user pads), the
//! padded layout of that step, and the later steps run again on it.
//!
//! A padded leading dimension `ld' > ld` keeps every row's elements and moves the rows apart:
//! row `r` starts at `offset + r·ld'`. Slices, transposes, diagonals and `view`s that split
//! rows follow the rows there; `as_strided` keeps the strides it was given, and a step that
//! would need a copy on padded rows is reported rather than copied (the padded chain would
//! then index a different storage).

use super::parse::Expr;
use super::{LayoutView, StepResult, ViewSubject, apply_step, budget_limits};
use crate::layout::error::LayoutError;
use crate::layout::strided::{Layout, checked_numel, contiguous_strides};

/// The step that shapes the storage into rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowsStep {
    /// Index into the step list (0 is `arange(N)`).
    pub step: usize,
    /// The step's source text, e.g. `.view(256,256)`.
    pub text: String,
    /// The layout that step made.
    pub layout: Layout,
    /// Its innermost dimension of size > 1: the row.
    pub row_dim: usize,
    /// Elements from one row's start to the next's: the leading dimension.
    pub ld: usize,
}

/// The first step after the last copy whose layout is C-contiguous with at least two
/// dimensions of size > 1: the storage as the user shaped it, before any view of it. `None`
/// when no step does (a 1-D storage sliced, or strides written by `as_strided` only).
pub fn rows_step(steps: &[StepResult]) -> Option<RowsStep> {
    let after_copy = steps.iter().rposition(|s| s.copied).unwrap_or(0);
    steps
        .iter()
        .enumerate()
        .skip(after_copy)
        .find_map(|(index, step)| {
            let layout = &step.layout;
            let big: Vec<usize> = (0..layout.ndim())
                .filter(|&k| layout.shape()[k] > 1)
                .collect();
            if big.len() < 2 || !layout.is_c_contiguous() {
                return None;
            }
            let row_dim = *big.last()?;
            let outer = big[big.len() - 2];
            Some(RowsStep {
                step: index,
                text: step.text.clone(),
                layout: layout.clone(),
                row_dim,
                ld: layout.strides()[outer].unsigned_abs(),
            })
        })
}

/// The rows step's layout with rows `ld` elements apart (its offset kept, the storage grown
/// to hold the last padded row).
pub fn padded_rows(rows: &RowsStep, ld: usize) -> Result<Layout, LayoutError> {
    let base = &rows.layout;
    let mut pitched: Vec<usize> = base.shape().to_vec();
    pitched[rows.row_dim] = ld;
    // Dimensions inside the row keep their strides; the row and those outside it step over
    // `ld`-element rows.
    let strides = contiguous_strides(&pitched)?;
    let storage = checked_numel(&pitched)?
        .checked_add(base.offset())
        .ok_or_else(|| LayoutError::overflow("the padded storage"))?;
    Layout::new(base.shape().to_vec(), strides, base.offset(), storage)
}

/// Why a chain could not be run again on padded rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplayStop {
    /// A step failed on the padded layout (the error names the step).
    Failed(LayoutError),
    /// A step would copy the padded view into a fresh storage.
    Copied { step: String },
}

/// Runs the steps of `expr` after step `from` (step list numbering: 0 is `arange(N)`) on
/// `layout` in place of the layout step `from` made, and returns the final layout.
pub fn replay_from(expr: &Expr, from: usize, layout: Layout) -> Result<Layout, ReplayStop> {
    let mut subject = LayoutView::new(layout);
    let limits = budget_limits(super::MAX_LAYOUT_ONLY_ELEMENTS);
    for step in expr.steps.iter().skip(from) {
        let next = apply_step(&subject, &step.kind, limits).map_err(|e| {
            ReplayStop::Failed(LayoutView::in_step(
                e,
                step.text.trim().to_string(),
                step.column,
            ))
        })?;
        if !next.shares_storage_with(&subject) {
            return Err(ReplayStop::Copied {
                step: step.text.trim().to_string(),
            });
        }
        subject = next;
    }
    Ok(subject.layout().clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::expr::{parse_bounded, run_steps};

    /// The steps of `text`, its parsed form and the rows step.
    fn rows_of(text: &str) -> (Expr, Vec<StepResult>, Option<RowsStep>) {
        let expr = parse_bounded(text, 1 << 24).unwrap();
        let base = LayoutView::new(Layout::contiguous(&[expr.arange]).unwrap());
        let (steps, _) = run_steps(&expr, base, 1 << 24).unwrap();
        let rows = rows_step(&steps);
        (expr, steps, rows)
    }

    #[test]
    fn the_rows_step_is_the_first_matrix_after_the_last_copy() {
        // (expression, rows step index, its leading dimension), or None.
        let table: [(&str, Option<(usize, usize)>); 7] = [
            ("arange(65536).view(256,256)[::16, :96]", Some((1, 256))),
            ("arange(65536).view(256,256)[:, 0]", Some((1, 256))),
            ("arange(65536).view(256,256).T", Some((1, 256))),
            ("arange(24).view(2,3,4)[:, ::-1, 1]", Some((1, 4))),
            (
                "arange(4096).view(64,64).T.contiguous()[::2]",
                Some((3, 64)),
            ),
            ("arange(4096)[::64]", None),
            ("arange(4096).as_strided((64,), (64,))", None),
        ];
        for (text, expected) in table {
            let (_, _, rows) = rows_of(text);
            assert_eq!(rows.map(|r| (r.step, r.ld)), expected, "{text}");
        }
    }

    #[test]
    fn padded_rows_move_every_view_of_them() {
        // (expression, padded ld, expected final shape, strides, offset)
        type Case<'a> = (&'a str, usize, &'a [usize], &'a [isize], usize);
        let table: [Case; 5] = [
            (
                "arange(65536).view(256,256)[::16, :96]",
                264,
                &[16, 96],
                &[16 * 264, 1],
                0,
            ),
            ("arange(65536).view(256,256)[:, 3]", 264, &[256], &[264], 3),
            (
                "arange(65536).view(256,256).T",
                257,
                &[256, 256],
                &[1, 257],
                0,
            ),
            (
                "arange(65536).view(256,256).diagonal()",
                260,
                &[256],
                &[261],
                0,
            ),
            (
                "arange(24).view(2,3,4)[1, ::-1, 1]",
                5,
                &[3],
                &[-5],
                15 + 10 + 1,
            ),
        ];
        for (text, ld, shape, strides, offset) in table {
            let (expr, _, rows) = rows_of(text);
            let rows = rows.unwrap();
            let padded = padded_rows(&rows, ld).unwrap();
            let layout = replay_from(&expr, rows.step, padded).unwrap();
            assert_eq!(
                (layout.shape(), layout.strides(), layout.offset()),
                (shape, strides, offset),
                "{text}"
            );
        }
    }

    #[test]
    fn a_step_that_needs_contiguous_rows_stops_the_replay() {
        let (expr, _, rows) = rows_of("arange(64).view(8,8).view(64)[::9]");
        let rows = rows.unwrap();
        let padded = padded_rows(&rows, 9).unwrap();
        match replay_from(&expr, rows.step, padded) {
            Err(ReplayStop::Failed(e)) => assert!(e.to_string().contains("view(64)"), "{e}"),
            other => panic!("{other:?}"),
        }
        let (expr, _, rows) = rows_of("arange(64).view(8,8).reshape(64)[::9]");
        let rows = rows.unwrap();
        let padded = padded_rows(&rows, 9).unwrap();
        assert_eq!(
            replay_from(&expr, rows.step, padded),
            Err(ReplayStop::Copied {
                step: ".reshape(64)".into()
            })
        );
    }
}
