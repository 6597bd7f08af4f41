//! How a record is named in tables and legends: the kernel and the parameters that tell
//! points apart.

use crate::data;
use stridelab_core::results::PointRecord;
use stridelab_core::vocab::format_params;

/// `kernel key=value …` without the parameters that do not change what is measured.
pub fn point_label(r: &PointRecord) -> String {
    let params = format_params(
        r.params
            .iter()
            .filter(|(k, _)| !matches!(k.as_str(), "seed" | "reps" | "deopt" | "line")),
    );
    format!("{} {params}", r.kernel).trim().to_string()
}

/// A compact name for a point in a long list (figure 11): the parameters that tell points
/// of the suite apart, defaults left out.
pub fn short_label(r: &PointRecord) -> String {
    let int = |k: &str| data::int(r, k).unwrap_or(0);
    match r.kernel.as_str() {
        "row-sum" | "col-sum" => {
            let ld = data::int(r, "ld").filter(|&ld| ld != int("cols"));
            format!(
                "{} {}×{}{}",
                r.kernel,
                int("rows"),
                int("cols"),
                ld.map(|ld| format!(" ld={ld}")).unwrap_or_default()
            )
        }
        "transpose" => {
            let variant = data::text(r, "variant").unwrap_or("?");
            format!(
                "transpose {variant} {}×{}{}",
                int("rows"),
                int("cols"),
                if variant == "blocked" {
                    format!(" B={}", int("B"))
                } else {
                    String::new()
                }
            )
        }
        "view-sum" => {
            let expr = data::text(r, "expr").unwrap_or("");
            format!(
                "view {}",
                view_label(r).0.split("  ").next().unwrap_or(expr)
            )
        }
        _ => point_label(r),
    }
}

/// A short name for a view record's expression and its shape/strides, with whether it is
/// C-contiguous (from the layout model's facts recorded with the point; `None` without them).
pub(super) fn view_label(r: &PointRecord) -> (String, Option<bool>) {
    let expr = data::text(r, "expr").unwrap_or("");
    let short = expr
        .find(".view(")
        .and_then(|i| expr[i..].find(')').map(|j| &expr[i + j + 1..]))
        .filter(|rest| !rest.is_empty())
        .unwrap_or(expr);
    match data::view_facts(r) {
        Some(view) => (
            format!("{short}  shape {:?} strides {:?}", view.shape, view.strides),
            Some(view.c_contiguous),
        ),
        None => (short.to_string(), None),
    }
}
