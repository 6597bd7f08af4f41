//! `stridelab layout`'s output for an evaluated expression: the explanation a person reads
//! (built from `layout::describe`'s pieces plus the values this floor evaluates), the `--json`
//! object, and the error text with a caret under a parse error.

use std::fmt::Write as _;
use std::sync::Arc;

use serde::Serialize;
use stridelab_copy::Planner;

use crate::explain::levels::GeometryExplanation;
use crate::explain::listing::{ListedValues, Listing, check_all, list_values};
use crate::kernels::eval::{self as expr, Evaluation};
use crate::kernels::tensor::TensorError;
use crate::layout::contiguity::Order;
use crate::layout::describe::{
    STRIP_MAX_CELLS, STRIP_MAX_VISITS, VALUES_MAX_SHOWN, caret, chain_table, contiguity_line,
    formula, nested_values, ranges, storage_strip,
};
use crate::layout::{ErrorKind, LayoutError};
use crate::units::format_count_from_five_digits as grouped;

#[derive(Serialize)]
struct JsonView<'a> {
    expr: &'a str,
    shape: &'a [usize],
    strides: &'a [isize],
    offset: usize,
    storage_len: usize,
    shares_storage: bool,
    c_contiguous: bool,
    f_contiguous: bool,
    #[serde(flatten)]
    values: ListedValues<i64>,
    /// `layout`'s cache analysis: where the levels came from, their warnings and `caches`,
    /// one object per level (absent in `--batch` lines).
    #[serde(flatten)]
    caches: Option<&'a GeometryExplanation>,
}

#[derive(Serialize)]
struct JsonErrorBody<'a> {
    kind: &'a str,
    message: &'a str,
}

#[derive(Serialize)]
struct JsonError<'a> {
    error: JsonErrorBody<'a>,
}

/// The `--json` object for one expression of `--batch`: the view with every value, or
/// `{"error": {...}}` (also when listing every value would be too large).
pub fn json_line(text: &str, copies: &Arc<Planner>) -> (String, bool) {
    match expr::evaluate(text, Arc::clone(copies)) {
        Ok(evaluation) => {
            let largest = evaluation.storage_len().saturating_sub(1) as u64;
            match check_all(evaluation.layout().numel() as u64, largest, &[]) {
                Ok(()) => (view_json(text, &evaluation, None, Listing::All), true),
                Err(err) => (
                    error_object(ErrorKind::TooLarge.as_str(), &err.to_string()),
                    false,
                ),
            }
        }
        Err(err) => (error_json(&err), false),
    }
}

/// The `--json` object of an evaluated view, its values as `listing` says, with the view ×
/// cache analysis of every level when given.
pub fn view_json(
    text: &str,
    evaluation: &Evaluation<i64>,
    caches: Option<&GeometryExplanation>,
    listing: Listing,
) -> String {
    let layout = evaluation.layout();
    serde_json::to_string(&JsonView {
        expr: text,
        shape: layout.shape(),
        strides: layout.strides(),
        offset: layout.offset(),
        storage_len: evaluation.storage_len(),
        shares_storage: evaluation.shares_storage(),
        c_contiguous: layout.is_c_contiguous(),
        f_contiguous: layout.is_f_contiguous(),
        values: list_values(evaluation.layout(), evaluation.storage(), listing),
        caches,
    })
    .expect("serialising plain data to JSON cannot fail")
}

/// The `--json` object of an expression that does not evaluate.
pub fn error_json(err: &TensorError) -> String {
    error_object(err.kind().as_str(), &err.to_string())
}

/// `{"error": {"kind": KIND, "message": MESSAGE}}`.
pub fn error_object(kind: &str, message: &str) -> String {
    serde_json::to_string(&JsonError {
        error: JsonErrorBody { kind, message },
    })
    .expect("serialising plain data to JSON cannot fail")
}

/// The error lines printed on stderr: `error: ...`, and for an error at a column of the text
/// (a parse error, arithmetic that overflows) the expression with a caret under it.
pub fn error_text(text: &str, err: &TensorError) -> String {
    let mut message = format!("error: {err}\n");
    if let Some(column) = err.layout_root().and_then(LayoutError::column) {
        message.push_str(&caret(text, column));
    }
    message
}

/// The whole explanation `stridelab layout EXPR` prints.
pub fn explain(evaluation: &Evaluation<i64>) -> String {
    let layout = evaluation.layout();
    let mut out = String::new();
    let _ = writeln!(out, "{}\n", evaluation.expr.trim());

    out.push_str(&chain_table(&evaluation.steps));
    out.push('\n');

    let numel = layout.numel();
    let noun = if numel == 1 { "element" } else { "elements" };
    let _ = writeln!(
        out,
        "shape     {:?}  ({} {noun})",
        layout.shape(),
        grouped(numel as u64)
    );
    let _ = writeln!(
        out,
        "strides   {:?}  (in elements: +1 on index k moves strides[k] cells)",
        layout.strides()
    );
    let _ = writeln!(out, "offset    {}", layout.offset());
    let _ = writeln!(out, "formula   {}", formula(layout));
    let _ = writeln!(out, "          {}", ranges(layout));
    let storage_note = if evaluation.shares_storage() {
        format!(
            "{} elements, shared with arange({}) — no data was copied",
            grouped(evaluation.storage_len() as u64),
            evaluation.steps[0].layout.numel()
        )
    } else {
        let copier = evaluation
            .steps
            .iter()
            .rev()
            .find(|s| s.copied)
            .map_or("a step".to_string(), |s| format!("`{}`", s.text));
        format!(
            "{} elements, a copy made by {copier} (the values below are that copy)",
            grouped(evaluation.storage_len() as u64)
        )
    };
    let _ = writeln!(out, "storage   {storage_note}");
    let writable = if evaluation.tensor().writable() {
        "yes".to_string()
    } else {
        "no: several elements may share one storage cell (stride 0 or overlap), \
         so the view is read-only"
            .to_string()
    };
    let _ = writeln!(out, "writable  {writable}");
    let _ = writeln!(out, "C-contiguous  {}", contiguity_line(layout, Order::C));
    let _ = writeln!(out, "F-contiguous  {}", contiguity_line(layout, Order::F));
    out.push('\n');

    out.push_str(&cells_and_values(evaluation));
    out
}

/// The strip of storage cells (or the range the view reads) and the view's values.
fn cells_and_values(evaluation: &Evaluation<i64>) -> String {
    let layout = evaluation.layout();
    let numel = layout.numel();
    let mut out = String::new();
    if evaluation.storage_len() <= STRIP_MAX_CELLS
        && evaluation.storage_len() > 0
        && numel <= STRIP_MAX_VISITS
    {
        out.push_str(&storage_strip(evaluation.storage(), layout));
        out.push('\n');
    } else if let Some((low, high)) = layout.reachable_range() {
        let _ = writeln!(
            out,
            "storage cells: the view reads cells {low}..={high} of {} (a strip of cells is \
             drawn for storages of at most {STRIP_MAX_CELLS} cells read by at most \
             {STRIP_MAX_VISITS} elements)\n",
            grouped(evaluation.storage_len() as u64)
        );
    }

    if numel <= VALUES_MAX_SHOWN {
        let values = evaluation.values();
        let _ = writeln!(
            out,
            "values (logical C order)\n  {}",
            nested_values(layout.shape(), &values).replace('\n', "\n  ")
        );
    } else {
        let head: Vec<String> = layout
            .offsets()
            .take(16)
            .map(|o| evaluation.storage()[o].to_string())
            .collect();
        let _ = writeln!(
            out,
            "values (logical C order, first 16 of {})\n  {}, ...",
            grouped(numel as u64),
            head.join(", ")
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::copy_planner::planner_for_tests;

    #[test]
    fn json_gives_the_view_or_the_error_kind() {
        let (line, ok) = json_line("arange(12).view(3,4).T", &planner_for_tests());
        assert!(ok);
        assert!(line.contains("\"shape\":[4,3],\"strides\":[1,4]"), "{line}");
        let (line, ok) = json_line("arange(12).view(5,3)", &planner_for_tests());
        assert!(!ok);
        assert!(line.starts_with("{\"error\":{\"kind\":"), "{line}");
    }

    #[test]
    fn a_parse_error_gets_a_caret_and_a_copy_is_named() {
        let err = expr::evaluate("arange(12).view(3,4", planner_for_tests()).unwrap_err();
        let text = error_text("arange(12).view(3,4", &err);
        assert!(
            text.starts_with("error: ") && text.ends_with("^\n"),
            "{text}"
        );
        let evaluation =
            expr::evaluate("arange(12).view(3,4).T.contiguous()", planner_for_tests()).unwrap();
        let text = explain(&evaluation);
        assert!(text.contains("a copy made by `.contiguous()`"), "{text}");
        assert!(text.contains("COPY (new storage)"), "{text}");
    }
}
