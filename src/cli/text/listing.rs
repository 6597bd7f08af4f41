//! `stridelab run --list [KERNEL]` (and `sim --list`): the catalogue described from its own data: one line per
//! kernel with its parameters and what it does, or one kernel in full (every parameter's kind,
//! range, unit and default, and an example for `run` and `sim`), as likwid-bench's `-a`/`-l`.

use std::fmt::Write as _;

use crate::kernels::catalogue::{catalogue, find};
use crate::kernels::spec::{KernelError, KernelSpec, ParamKind};

/// Width of the name column in the compact list.
const NAME_WIDTH: usize = 12;

/// One line per kernel: its name, its parameters (defaults in brackets), what it does.
pub fn kernel_list() -> String {
    let mut text = String::new();
    for spec in catalogue() {
        let _ = writeln!(text, "{:<NAME_WIDTH$} {}", spec.name, signature(spec));
        let _ = writeln!(text, "{:<NAME_WIDTH$} {}", "", spec.summary);
    }
    text.push_str(
        "\n`stridelab run --list KERNEL` (or `sim --list KERNEL`) describes one kernel's \
         parameters, with examples.\n",
    );
    text
}

/// One kernel in full: what it does, each parameter, and examples for `run` and `sim`.
pub fn kernel_detail(name: &str) -> Result<String, KernelError> {
    let spec = find(name)?;
    let mut text = String::new();
    let _ = writeln!(text, "{} {}\n", spec.name, signature(spec));
    let _ = writeln!(text, "{}\n", spec.explanation);
    let _ = writeln!(
        text,
        "parameters (`key=value`, or plain values in this order; integers take K, M, G):"
    );
    let width = spec.params.iter().map(|p| p.name.len()).max().unwrap_or(0);
    let kinds: Vec<String> = spec.params.iter().map(|p| kind_text(&p.kind)).collect();
    let kind_width = kinds.iter().map(|k| k.chars().count()).max().unwrap_or(0);
    for (p, kind) in spec.params.iter().zip(&kinds) {
        let default = match p.default {
            Some(d) => format!("default {d}"),
            None => "required".to_string(),
        };
        let _ = writeln!(
            text,
            "  {:<width$}  {:<kind_width$}  {:<12} {}",
            p.name, kind, default, p.doc
        );
    }
    let words = shell_words(&spec.example_words());
    let _ = writeln!(text, "\nexamples:");
    let _ = writeln!(text, "  stridelab run --kernel {} {words}", spec.name);
    let _ = writeln!(text, "  stridelab sim {} {words}", spec.name);
    Ok(text)
}

/// `rows cols [ld=cols] [dtype=f64]`.
fn signature(spec: &KernelSpec) -> String {
    spec.params
        .iter()
        .map(|p| match p.default {
            Some(d) => format!("[{}={d}]", p.name),
            None => p.name.to_string(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `integer 1..=16777216`, `one of ijk|jik`, `text`.
fn kind_text(kind: &ParamKind) -> String {
    match kind {
        ParamKind::Int { min, max } => format!("integer {min}..={max}"),
        ParamKind::Choice(words) => words.join("|"),
        ParamKind::Text => "text".to_string(),
    }
}

/// The example's words as a shell reads them: values with parentheses, brackets or spaces quoted.
fn shell_words(words: &[String]) -> String {
    words
        .iter()
        .map(|w| {
            if w.contains(['(', ')', '[', ']', '*', ' ', ';']) {
                format!("'{w}'")
            } else {
                w.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_names_every_kernel_with_bracketed_defaults_and_a_summary() {
        let list = kernel_list();
        for spec in catalogue() {
            assert!(
                list.lines()
                    .any(|l| l.starts_with(&format!("{} ", spec.name))),
                "{list}"
            );
            assert!(list.contains(spec.summary), "{}", spec.name);
            assert!(!spec.summary.is_empty() && !spec.summary.contains('\n'));
        }
        assert!(list.contains("[ld=cols]"), "{list}");
    }

    #[test]
    fn every_example_resolves_under_its_kernels_rules() {
        for spec in catalogue() {
            let words: Vec<(String, String)> = spec
                .example_words()
                .iter()
                .map(|w| {
                    let (k, v) = w.split_once('=').expect("examples name their parameters");
                    (k.to_string(), v.to_string())
                })
                .collect();
            let params = crate::kernels::resolve_params(spec, &words)
                .unwrap_or_else(|e| panic!("{}: {e}", spec.name));
            let accesses = crate::kernels::estimate_accesses(spec, &params).unwrap();
            // Within `run`'s default per-run limit, so the example runs as printed.
            assert!(accesses <= 1 << 28, "{}: {accesses}", spec.name);
        }
    }

    #[test]
    fn a_kernels_detail_lists_every_parameter_and_quotes_its_example() {
        let detail = kernel_detail("view-sum").unwrap();
        assert!(detail.contains("  expr   text"), "{detail}");
        assert!(detail.contains("  dtype  f64|f32  default f64"), "{detail}");
        assert!(
            detail.contains("stridelab sim view-sum 'expr=arange(1048576).view(1024,1024).T'"),
            "{detail}"
        );
        let detail = kernel_detail("loop").unwrap();
        assert!(
            detail.contains("stridelab run --kernel loop name=col-sum 'nest=for j in 0..512: "),
            "{detail}"
        );
        let detail = kernel_detail("matmul").unwrap();
        assert!(
            detail.contains("ijk|jik|ikj|kij|jki|kji|blocked"),
            "{detail}"
        );
        assert!(detail.contains("default 32"), "{detail}");
        assert!(kernel_detail("nope").is_err());
    }
}
