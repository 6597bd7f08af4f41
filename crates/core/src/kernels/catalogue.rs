//! The kernel catalogue: every kernel as data ([`KernelSpec`]), lookup by name, and the one place
//! user-given parameters become validated [`Params`] ([`resolve_params`]).
//!
//! Parameter rules (in this order):
//! 1. Arguments are `(key, value)` pairs; an empty key is a positional value. Positional values
//!    fill the parameters in their declared order, skipping those already named; a positional
//!    value that is not an integer skips an optional integer parameter (so
//!    `transpose 512 512 blocked` leaves `ld` at its default).
//! 2. An unknown name, a parameter given twice, or more positional values than parameters is an
//!    error naming what the kernel takes.
//! 3. Integers accept the binary suffixes K, M, G (`32K` = 32768) and must lie in the
//!    parameter's `min..=max`; choices must be one of their words; text must not be empty.
//! 4. A missing parameter takes its default; a default that names another parameter (`ld`
//!    defaults to `cols`) takes that parameter's value. A missing parameter without a default
//!    is an error.
//! 5. The kernel's own cross-parameter rules (e.g. `ld ≥ cols`) and buffer sizes are checked,
//!    and the buffers together must fit in half of physical memory.

#![forbid(unsafe_code)]

use std::sync::LazyLock;

use crate::kernels::families::{
    blocked, channels, conflict, jagged, latency, matmul, nest, reference, stride, to_nhwc,
    transpose, traverse, view,
};
pub use crate::kernels::spec::StridePattern;
use crate::kernels::spec::{KernelError, KernelSpec, ParamKind, ParamSpec, ParamValue, Params};
use crate::units::format_bytes_tenths;
use crate::vocab::{Family, ParamRules, RuleBreak};

/// The strided pattern of `spec` for resolved parameters.
pub fn stride_pattern(
    spec: &KernelSpec,
    params: &Params,
) -> Result<Option<StridePattern>, KernelError> {
    (spec.pattern)(params)
}

/// Where `spec`'s simulated address stream differs from the timed kernel's, for resolved
/// parameters (see `SimulationNoteFn`); `None` when the simulation replays the same stream.
pub fn simulation_note(spec: &KernelSpec, params: &Params) -> Option<&'static str> {
    spec.simulation_note?(params)
}

/// The cache state `spec`'s simulation starts from.
pub fn simulation_start(spec: &KernelSpec) -> crate::kernels::spec::SimStart {
    spec.simulate
}

/// The loads and stores one run of `spec` makes, estimated from resolved parameters without
/// allocating or walking anything: the kernel's own count where it has one (probes that repeat,
/// views that broadcast), else the elements of its buffers (every other kernel reads or writes
/// each element about once; the copy engine's staging stays within 2×).
pub fn estimate_accesses(spec: &KernelSpec, params: &Params) -> Result<u64, KernelError> {
    match spec.accesses {
        Some(accesses) => accesses(params),
        None => Ok((spec.plan)(params)?
            .iter()
            .fold(0u64, |total, &len| total.saturating_add(len as u64))),
    }
}

/// Every kernel, in the order `run --list` shows them: adding a kernel is its `KernelSpec` in
/// its family's file and one line here.
static CATALOGUE: &[KernelSpec] = &[
    traverse::ROW_SUM,
    traverse::COL_SUM,
    stride::STRIDE_SUM,
    conflict::CONFLICT,
    view::VIEW_SUM,
    transpose::TRANSPOSE,
    blocked::TILED_SUM,
    blocked::TO_TILES,
    reference::COPY,
    reference::READ,
    latency::CHASE,
    matmul::MATMUL,
    jagged::JAGGED,
    channels::CHANNEL_SUM,
    channels::STENCIL3X3,
    to_nhwc::TO_NHWC,
    nest::LOOP,
];

/// Every kernel of the catalogue.
pub fn catalogue() -> &'static [KernelSpec] {
    CATALOGUE
}

/// The kernel called `name`.
pub fn find(name: &str) -> Result<&'static KernelSpec, KernelError> {
    catalogue()
        .iter()
        .find(|spec| spec.name == name)
        .ok_or_else(|| KernelError::UnknownKernel(name.to_string()))
}

/// `key=value` pairs as [`format_params`](crate::vocab::format_params) writes them, with every parameter counted in
/// elements followed by its exact bytes (`stride=512 (4 KiB)`, `stride=513 (4,104 B)`) at the
/// point's element size; a kernel the catalogue does not know gets the plain pairs.
pub fn params_with_bytes(kernel: &str, params: &Params) -> String {
    param_words(kernel, params).join(" ")
}

/// The pairs of [`params_with_bytes`], one per parameter in name order, so a table can hoist
/// the ones every row shares.
pub fn param_words(kernel: &str, params: &Params) -> Vec<String> {
    let Ok(spec) = find(kernel) else {
        return params.iter().map(|(k, v)| format!("{k}={v}")).collect();
    };
    let element_bytes = crate::kernels::typed::Dtype::from_params(params)
        .map(|d| u64::from(d.bytes()))
        .unwrap_or(8);
    params
        .iter()
        .map(|(name, value)| {
            let counted = spec.params.iter().any(|p| p.name == name && p.in_elements);
            match value {
                ParamValue::Int(n) if counted => {
                    let bytes = n.saturating_mul(element_bytes);
                    format!("{name}={n} ({})", crate::units::format_bytes_exact(bytes))
                }
                _ => format!("{name}={value}"),
            }
        })
        .collect()
}

/// Parameters the catalogue no longer has, with the default older documents recorded them at:
/// `row-sum deopt` was the regression gate's de-optimised fixture (`deopt=1`), replaced by an
/// injected slowdown (`kernels::slowdown`), and every real row-sum record carries `deopt=0`.
pub const RETIRED_PARAMS: &[(&str, &str, u64)] = &[("row-sum", "deopt", 0)];

/// The catalogue as the rules a recorded point is checked against on load: the kernel exists,
/// belongs to the recorded family, and its parameters pass [`check_recorded_params`].
#[derive(Debug, Clone, Copy, Default)]
pub struct CatalogueRules;

/// The one instance loaders pass to `ResultsDocument::read`.
pub const CATALOGUE_RULES: CatalogueRules = CatalogueRules;

impl ParamRules for CatalogueRules {
    fn check(&self, kernel: &str, family: Family, params: &Params) -> Result<(), RuleBreak> {
        let spec = find(kernel).map_err(|e| RuleBreak::Kernel(e.to_string()))?;
        if spec.family != family {
            return Err(RuleBreak::Family(format!(
                "`{}` belongs to {:?}",
                spec.name, spec.family
            )));
        }
        check_recorded_params(spec, params).map_err(|e| RuleBreak::Params(e.to_string()))
    }

    /// Only parameters with a literal default are added (`dtype=f64`): a missing parameter
    /// without one is still an error, reported by [`check_recorded_params`]. A retired
    /// parameter ([`RETIRED_PARAMS`]) holding its old default is dropped; any other value of
    /// it stays, and is refused as unknown.
    fn complete(&self, kernel: &str, params: &mut Params) {
        for (retired_from, name, default) in RETIRED_PARAMS {
            if kernel == *retired_from && params.get(*name) == Some(&ParamValue::Int(*default)) {
                params.remove(*name);
            }
        }
        let Ok(spec) = find(kernel) else { return };
        for param in spec.params {
            let literal = param
                .default
                .filter(|default| spec.params.iter().all(|p| p.name != *default));
            if let (false, Some(default)) = (params.contains_key(param.name), literal)
                && let Ok(value) = parse_value(param, default)
            {
                params.insert(param.name.to_string(), value);
            }
        }
    }
}

/// Turns user arguments into validated parameters (see the module doc for the rules).
///
/// `args` are `(key, value)` pairs in the order given; an empty key marks a positional value.
pub fn resolve_params(spec: &KernelSpec, args: &[(String, String)]) -> Result<Params, KernelError> {
    let given = assign_arguments(spec, args)?;
    let mut params = Params::new();
    for (param, value) in spec.params.iter().zip(given) {
        let resolved = match value {
            Some(text) => parse_value(param, &text)?,
            // Rule 4: a default naming an earlier parameter copies its resolved value.
            None => match param.default {
                Some(default) => match params.get(default) {
                    Some(value) => value.clone(),
                    None => parse_value(param, default)?,
                },
                None => {
                    return Err(KernelError::MissingParam {
                        kernel: spec.name.to_string(),
                        param: param.name.to_string(),
                    });
                }
            },
        };
        params.insert(param.name.to_string(), resolved);
    }
    // Rule 5.
    let buffers = (spec.plan)(&params)?;
    check_memory(spec, &buffers)?;
    Ok(params)
}

/// Checks parameters read back from a results document against the same rules as
/// [`resolve_params`] (rules 2, 3 and 5 without the machine's memory): every declared parameter
/// present and within its declared range or words, no unknown names, and the kernel's own
/// cross-parameter rules and buffer limits. A document is data from anywhere; this is what
/// lets the report size its work by the parameters.
pub fn check_recorded_params(spec: &KernelSpec, params: &Params) -> Result<(), KernelError> {
    if let Some(name) = params
        .keys()
        .find(|name| spec.params.iter().all(|p| p.name != name.as_str()))
    {
        return Err(KernelError::UnknownParam {
            kernel: spec.name.to_string(),
            param: name.clone(),
            known: known_names(spec),
        });
    }
    for param in spec.params {
        let value = params
            .get(param.name)
            .ok_or_else(|| KernelError::MissingParam {
                kernel: spec.name.to_string(),
                param: param.name.to_string(),
            })?;
        let text = match (param.kind, value) {
            (ParamKind::Int { .. }, ParamValue::Int(i)) => i.to_string(),
            (ParamKind::Int { .. }, ParamValue::Text(_)) => {
                return Err(KernelError::InvalidParam {
                    param: param.name.to_string(),
                    message: "must be an integer".to_string(),
                });
            }
            (_, ParamValue::Text(t)) => t.clone(),
            (_, ParamValue::Int(_)) => {
                return Err(KernelError::InvalidParam {
                    param: param.name.to_string(),
                    message: "must be text".to_string(),
                });
            }
        };
        parse_value(param, &text)?;
    }
    (spec.plan)(params).map(|_| ())
}

/// Rules 1 and 2: the raw text given for each parameter, in declared order.
fn assign_arguments(
    spec: &KernelSpec,
    args: &[(String, String)],
) -> Result<Vec<Option<String>>, KernelError> {
    let mut given: Vec<Option<String>> = vec![None; spec.params.len()];
    let position_of = |name: &str| spec.params.iter().position(|p| p.name == name);
    // Named arguments first, so positional values skip them wherever they were written.
    for (key, value) in args.iter().filter(|(key, _)| !key.is_empty()) {
        let index = position_of(key).ok_or_else(|| KernelError::UnknownParam {
            kernel: spec.name.to_string(),
            param: key.clone(),
            known: known_names(spec),
        })?;
        if let Some(first) = given[index].replace(value.clone()) {
            return Err(given_twice(key, &first, value));
        }
    }
    let mut next = 0;
    for (_, value) in args.iter().filter(|(key, _)| key.is_empty()) {
        loop {
            let Some(param) = spec.params.get(next) else {
                return Err(KernelError::InvalidParam {
                    param: value.clone(),
                    message: format!(
                        "too many positional values for `{}`; it takes: {}",
                        spec.name,
                        known_names(spec)
                    ),
                });
            };
            let skippable = matches!(param.kind, ParamKind::Int { .. })
                && param.default.is_some()
                && parse_int(value).is_none()
                && next + 1 < spec.params.len();
            if given[next].is_some() || skippable {
                next += 1;
                continue;
            }
            given[next] = Some(value.clone());
            next += 1;
            break;
        }
    }
    Ok(given)
}

fn given_twice(name: &str, first: &str, second: &str) -> KernelError {
    KernelError::InvalidParam {
        param: name.to_string(),
        message: format!("given more than once (`{first}`, then `{second}`); give it once"),
    }
}

fn known_names(spec: &KernelSpec) -> String {
    spec.params
        .iter()
        .map(|p| match p.default {
            Some(default) => format!("{}={default}", p.name),
            None => p.name.to_string(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Rule 3 for one value.
fn parse_value(param: &ParamSpec, text: &str) -> Result<ParamValue, KernelError> {
    let invalid = |message: String| KernelError::InvalidParam {
        param: param.name.to_string(),
        message,
    };
    match param.kind {
        ParamKind::Int { min, max } => {
            let value = parse_int(text).ok_or_else(|| {
                invalid(format!(
                    "`{text}` is not a non-negative integer (suffixes K, M, G allowed)"
                ))
            })?;
            if value < min || value > max {
                let why = if value == 0 {
                    " (zero leaves nothing to measure)"
                } else {
                    ""
                };
                return Err(invalid(format!(
                    "{value} is outside the allowed range {min}..={max}{why}"
                )));
            }
            Ok(ParamValue::Int(value))
        }
        ParamKind::Choice(words) => {
            if words.contains(&text) {
                Ok(ParamValue::Text(text.to_string()))
            } else {
                Err(invalid(format!(
                    "`{text}` is not one of: {}",
                    words.join(", ")
                )))
            }
        }
        ParamKind::Text => {
            if text.trim().is_empty() {
                Err(invalid("must not be empty".to_string()))
            } else {
                Ok(ParamValue::Text(text.to_string()))
            }
        }
    }
}

/// A non-negative integer with an optional binary multiple K, M or G (case-insensitive).
fn parse_int(text: &str) -> Option<u64> {
    crate::units::parse_count(text).ok()
}

/// Rule 5: the buffers together must fit in half of physical memory (when it is known).
fn check_memory(spec: &KernelSpec, buffers: &[usize]) -> Result<(), KernelError> {
    let bytes: u64 = buffers.iter().map(|&len| len as u64 * 8).sum();
    match physical_memory_bytes() {
        Some(total) if bytes > total / 2 => Err(KernelError::InvalidParam {
            param: size_param_names(spec),
            message: format!(
                "the buffers need {}, more than half of physical memory ({})",
                format_bytes_tenths(bytes),
                format_bytes_tenths(total)
            ),
        }),
        _ => Ok(()),
    }
}

fn size_param_names(spec: &KernelSpec) -> String {
    spec.params
        .iter()
        .filter(|p| matches!(p.kind, ParamKind::Int { .. }))
        .map(|p| p.name)
        .collect::<Vec<_>>()
        .join("/")
}

/// Physical memory from /proc/meminfo (`MemTotal`), if readable.
fn physical_memory_bytes() -> Option<u64> {
    static TOTAL: LazyLock<Option<u64>> = LazyLock::new(|| {
        let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
        let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        kib.checked_mul(1024)
    });
    *TOTAL
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::spec::PrepareOptions;

    fn args(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn resolve(kernel: &str, list: &[(&str, &str)]) -> Result<Params, KernelError> {
        resolve_params(find(kernel).unwrap(), &args(list))
    }

    fn int(params: &Params, name: &str) -> u64 {
        match params[name] {
            ParamValue::Int(v) => v,
            ref other => panic!("{name} is {other:?}"),
        }
    }

    #[test]
    fn names_are_unique_and_every_kernel_is_documented() {
        let specs = catalogue();
        for (i, spec) in specs.iter().enumerate() {
            assert!(specs[i + 1..].iter().all(|other| other.name != spec.name));
            assert!(
                spec.explanation.len() > 80,
                "{} needs an explanation",
                spec.name
            );
            for param in spec.params {
                assert!(
                    !param.doc.is_empty(),
                    "{}.{} needs a doc",
                    spec.name,
                    param.name
                );
                if let Some(default) = param.default {
                    let names_param = spec.params.iter().any(|p| p.name == default);
                    assert!(
                        names_param || parse_value(param, default).is_ok(),
                        "{}.{}: bad default",
                        spec.name,
                        param.name
                    );
                }
            }
        }
        assert!(matches!(find("nope"), Err(KernelError::UnknownKernel(_))));
    }

    #[test]
    fn positional_named_and_default_values() {
        let p = resolve("row-sum", &[("", "3"), ("", "5")]).unwrap();
        assert_eq!((int(&p, "rows"), int(&p, "cols"), int(&p, "ld")), (3, 5, 5));
        let p = resolve("row-sum", &[("cols", "5"), ("", "3"), ("ld", "8")]).unwrap();
        assert_eq!((int(&p, "rows"), int(&p, "cols"), int(&p, "ld")), (3, 5, 8));
        let p = resolve(
            "transpose",
            &[("", "4"), ("", "6"), ("", "blocked"), ("", "2")],
        )
        .unwrap();
        assert_eq!(int(&p, "ld"), 6);
        assert_eq!(int(&p, "B"), 2);
        assert_eq!(p["variant"], ParamValue::Text("blocked".into()));
        let p = resolve("read", &[("bytes", "32K")]).unwrap();
        assert_eq!(int(&p, "bytes"), 32768);
    }

    #[test]
    fn table_of_rejected_arguments() {
        type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a str);
        let cases: &[Case] = &[
            ("row-sum", &[("rows", "4")], "needs parameter `cols`"),
            (
                "row-sum",
                &[("rows", "4"), ("cols", "4"), ("lda", "5")],
                "no parameter `lda`",
            ),
            (
                "row-sum",
                &[("rows", "0"), ("cols", "4")],
                "zero leaves nothing",
            ),
            (
                "row-sum",
                &[("rows", "4"), ("cols", "x")],
                "not a non-negative integer",
            ),
            (
                "row-sum",
                &[("rows", "4"), ("cols", "8"), ("ld", "7")],
                "ld",
            ),
            (
                "row-sum",
                &[("rows", "4"), ("", "4"), ("rows", "2")],
                "more than once (`4`, then `2`)",
            ),
            (
                "row-sum",
                &[
                    ("", "1"),
                    ("", "2"),
                    ("", "3"),
                    ("", "0"),
                    ("", "f64"),
                    ("", "9"),
                ],
                "too many",
            ),
            (
                "row-sum",
                &[("rows", "1G"), ("cols", "4")],
                "outside the allowed range",
            ),
            (
                "row-sum",
                &[("rows", "16M"), ("cols", "16M")],
                "exceeds the limit",
            ),
            ("copy", &[("bytes", "12")], "multiple of 8"),
            (
                "jagged",
                &[
                    ("rows", "4"),
                    ("cols", "4"),
                    ("layout", "flat"),
                    ("shuffle", "1"),
                ],
                "a flat block has none",
            ),
            (
                "stencil3x3",
                &[("n", "1"), ("c", "1"), ("h", "2"), ("w", "9")],
                "h ≥ 3 and w ≥ 3",
            ),
            (
                "channel-sum",
                &[("n", "64K"), ("c", "64K"), ("h", "1"), ("w", "1")],
                "exceeds the limit",
            ),
            (
                "stride-sum",
                &[("len", "10"), ("stride", "11")],
                "beyond the buffer",
            ),
        ];
        for (kernel, list, needle) in cases {
            let err = resolve(kernel, list).expect_err(needle).to_string();
            let matched = needle.split('|').any(|n| err.contains(n));
            assert!(matched, "{kernel} {list:?}: `{err}` lacks `{needle}`");
        }
    }

    #[test]
    fn buffers_beyond_half_of_physical_memory_are_rejected() {
        let spec = find("copy").unwrap();
        let huge = vec![crate::kernels::access::MAX_BUFFER_ELEMENTS; 256];
        let err = check_memory(spec, &huge).unwrap_err().to_string();
        assert!(err.contains("half of physical memory"), "{err}");
        assert!(check_memory(spec, &[1000, 1000]).is_ok());
    }

    #[test]
    fn only_copy_engine_replays_carry_a_simulation_note() {
        let note = |kernel: &str, list: &[(&str, &str)]| {
            let spec = find(kernel).unwrap();
            simulation_note(spec, &resolve_params(spec, &args(list)).unwrap())
        };
        let square = [("rows", "64"), ("cols", "64")];
        let transpose = |variant| [square[0], square[1], ("variant", variant)];
        assert!(
            note("transpose", &transpose("fast"))
                .unwrap()
                .contains("8×8 blocks")
        );
        for variant in ["naive-read", "naive-write", "blocked"] {
            assert_eq!(note("transpose", &transpose(variant)), None, "{variant}");
        }
        assert!(note("to-tiles", &[("n", "64"), ("B", "8")]).is_some());
        assert_eq!(note("row-sum", &square), None);
        assert_eq!(note("copy", &[("bytes", "4096")]), None);
    }

    #[test]
    fn stride_patterns_name_the_strided_side() {
        let pattern = |kernel: &str, list: &[(&str, &str)]| {
            let spec = find(kernel).unwrap();
            let params = resolve_params(spec, &args(list)).unwrap();
            stride_pattern(spec, &params)
                .unwrap()
                .map(|p| (p.buffer, p.stride_bytes, p.count))
        };
        let matrix = [("rows", "4"), ("cols", "6"), ("ld", "7")];
        assert_eq!(pattern("col-sum", &matrix), Some((0, 56, 4)));
        assert_eq!(pattern("row-sum", &matrix), Some((0, 8, 6)));
        let naive_read = [matrix.as_slice(), &[("variant", "naive-read")]].concat();
        assert_eq!(pattern("transpose", &naive_read), Some((1, 32, 6)));
        let conflict = [("stride", "512"), ("count", "16")];
        assert_eq!(pattern("conflict", &conflict), Some((0, 4096, 16)));
        let flipped = [("expr", "arange(12).view(3,4).flip(1)")];
        assert_eq!(pattern("view-sum", &flipped), Some((0, -8, 4)));
        assert_eq!(pattern("chase", &[("bytes", "4K")]), None);
    }

    #[test]
    fn integer_suffixes() {
        assert_eq!(parse_int("12"), Some(12));
        assert_eq!(parse_int("4k"), Some(4096));
        assert_eq!(parse_int("2M"), Some(2 << 20));
        assert_eq!(parse_int("1G"), Some(1 << 30));
        for bad in ["", "K", "-1", "1.5", "1KB", "99999999999999999999G"] {
            assert_eq!(parse_int(bad), None, "{bad}");
        }
    }

    #[test]
    fn every_kernel_prepares_and_checks_with_small_parameters() {
        let small: &[(&str, &[(&str, &str)])] = &[
            ("row-sum", &[("rows", "5"), ("cols", "7")]),
            ("col-sum", &[("rows", "5"), ("cols", "7"), ("ld", "9")]),
            ("read", &[("bytes", "1K")]),
            ("stride-sum", &[("", "1001"), ("", "7")]),
            ("copy", &[("bytes", "1K")]),
            ("chase", &[("bytes", "4K")]),
            (
                "conflict",
                &[("stride", "512"), ("count", "13"), ("mode", "lat")],
            ),
            (
                "conflict",
                &[("stride", "513"), ("count", "13"), ("reps", "3")],
            ),
            (
                "transpose",
                &[("", "5"), ("", "7"), ("", "blocked"), ("", "3")],
            ),
            ("tiled-sum", &[("n", "7"), ("B", "3"), ("order", "col")]),
            ("to-tiles", &[("n", "7"), ("B", "3")]),
            ("view-sum", &[("", "arange(64).view(8,8).diagonal()")]),
            ("jagged", &[("rows", "5"), ("cols", "7"), ("order", "col")]),
            (
                "jagged",
                &[
                    ("rows", "9"),
                    ("cols", "3"),
                    ("order", "col"),
                    ("shuffle", "1"),
                ],
            ),
            (
                "jagged",
                &[("rows", "5"), ("cols", "7"), ("layout", "flat")],
            ),
            ("channel-sum", &[("", "2"), ("", "3"), ("", "5"), ("", "3")]),
            (
                "channel-sum",
                &[
                    ("", "2"),
                    ("", "3"),
                    ("", "5"),
                    ("", "3"),
                    ("layout", "nhwc"),
                ],
            ),
            (
                "stencil3x3",
                &[
                    ("", "2"),
                    ("", "3"),
                    ("", "5"),
                    ("", "4"),
                    ("layout", "nhwc"),
                ],
            ),
            ("to-nhwc", &[("", "2"), ("", "3"), ("", "5"), ("", "4")]),
            (
                "to-nhwc",
                &[
                    ("", "2"),
                    ("", "3"),
                    ("", "5"),
                    ("", "4"),
                    ("", "naive-write"),
                    ("", "f32"),
                ],
            ),
        ];
        for (kernel, list) in small {
            let spec = find(kernel).unwrap();
            let params = resolve_params(spec, &args(list)).unwrap();
            let mut instance = (spec.prepare)(
                &params,
                &PrepareOptions::with_planner(crate::kernels::copy_planner::planner_for_tests()),
            )
            .unwrap();
            assert_eq!(instance.run(), instance.expected_checksum(), "{kernel}");
        }
    }

    #[test]
    fn catalogue_rules_name_the_broken_part_of_a_recorded_point() {
        let rules = CATALOGUE_RULES;
        let good = resolve("row-sum", &[("rows", "64"), ("cols", "64")]).unwrap();
        assert_eq!(rules.check("row-sum", Family::Traverse, &good), Ok(()));
        assert!(matches!(
            rules.check("nope", Family::Traverse, &good),
            Err(RuleBreak::Kernel(_))
        ));
        assert!(matches!(
            rules.check("row-sum", Family::Stride, &good),
            Err(RuleBreak::Family(_))
        ));
        let mut huge = good.clone();
        huge.insert("rows".into(), ParamValue::Int(1 << 40));
        assert!(matches!(
            rules.check("row-sum", Family::Traverse, &huge),
            Err(RuleBreak::Params(_))
        ));
    }

    #[test]
    fn a_record_from_before_a_parameter_existed_gains_its_literal_default() {
        let rules = CATALOGUE_RULES;
        let mut old = resolve("col-sum", &[("rows", "64"), ("cols", "8"), ("ld", "512")]).unwrap();
        old.remove("dtype");
        assert!(rules.check("col-sum", Family::Traverse, &old).is_err());
        rules.complete("col-sum", &mut old);
        assert_eq!(old.get("dtype"), Some(&ParamValue::Text("f64".into())));
        assert_eq!(rules.check("col-sum", Family::Traverse, &old), Ok(()));
        // A default naming another parameter (`ld` = `cols`) and a required one stay missing.
        let mut partial = old.clone();
        partial.remove("ld");
        partial.remove("rows");
        rules.complete("col-sum", &mut partial);
        assert!(!partial.contains_key("ld") && !partial.contains_key("rows"));
        rules.complete("no-such-kernel", &mut partial);
    }

    #[test]
    fn parameters_counted_in_elements_show_their_bytes_at_the_element_size() {
        for (kernel, args, want) in [
            (
                "conflict",
                &[("stride", "512"), ("count", "16")][..],
                "count=16 mode=thr reps=100 seed=1 stride=512 (4 KiB)",
            ),
            (
                "stride-sum",
                &[("len", "1M"), ("stride", "16"), ("dtype", "f32")][..],
                "dtype=f32 len=1048576 (4 MiB) stride=16 (64 B)",
            ),
            (
                "col-sum",
                &[("rows", "8"), ("cols", "8"), ("ld", "1025")][..],
                "cols=8 dtype=f64 ld=1025 (8,200 B) rows=8",
            ),
        ] {
            assert_eq!(
                params_with_bytes(kernel, &resolve(kernel, args).unwrap()),
                want
            );
        }
        let params = resolve("row-sum", &[("rows", "2"), ("cols", "2")]).unwrap();
        assert_eq!(
            params_with_bytes("gone", &params),
            crate::vocab::format_params(&params)
        );
    }
}
