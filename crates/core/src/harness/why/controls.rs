//! Which controlled variants a point gets: each changes one factor of the base point (its
//! pages, its leading dimension, its working set, its loads' independence, its threads), chosen
//! from the kernel's own parameters by the table below, and the factors a kernel cannot vary
//! yet, each with its reason.

use serde::Serialize;

use crate::kernels::spec::BufferShift;
use crate::kernels::typed::Dtype;
use crate::vocab::{ParamValue, Params};

/// The factor a control isolates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Factor {
    /// 2 MiB pages instead of 4 KiB: fewer TLB misses and page walks.
    Tlb,
    /// The leading dimension (or the conflict stride) one element longer: other sets.
    SetsElement,
    /// The leading dimension one cache line longer: other sets, rows still line-aligned.
    SetsLine,
    /// Half the working set, every access the same kind.
    Capacity,
    /// Each load waiting for the one before: no overlap of misses, no useful prefetch.
    MemoryParallelism,
    /// Two threads, each its own instance: whether they share a bandwidth limit.
    Bandwidth,
    /// Source or destination offset by 64 B or 4 KiB.
    Alignment,
}

impl Factor {
    /// The factor in a verdict's words.
    pub fn words(self) -> &'static str {
        match self {
            Factor::Tlb => "the TLB and physical page placement (page size)",
            Factor::SetsElement | Factor::SetsLine => "cache sets (the leading dimension)",
            Factor::Capacity => "capacity (the working set)",
            Factor::MemoryParallelism => "the walk's streams (prefetch, memory-level parallelism)",
            Factor::Bandwidth => "what two threads share (bandwidth, or CPUs busy with other work)",
            Factor::Alignment => "alignment (where a buffer starts: lines, 4K aliasing)",
        }
    }
}

/// One variant of the base point.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Control {
    pub factor: Factor,
    /// What changed, in the point's own words (`ld=1025`, `huge pages`, `2 threads`).
    pub change: String,
    /// The variant's `key=value` words (the base's with one changed).
    #[serde(skip)]
    pub words: Vec<(String, String)>,
    pub threads: usize,
    pub huge_pages: bool,
    /// The buffer started past its boundary (none but for an alignment control).
    #[serde(skip)]
    pub shift: BufferShift,
}

/// A factor no control varies for this point, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NotRun {
    pub factor: Factor,
    pub reason: String,
}

/// The parameter whose value sets the rows' distance in elements, per kernel (`*`: any kernel
/// with it): a change of it moves the same accesses to other sets.
const SET_PARAMS: &[(&str, &str)] = &[("*", "ld"), ("conflict", "stride")];

/// The parameter that scales the working set and may be halved, per kernel.
const SIZE_PARAMS: &[(&str, &str)] = &[
    ("row-sum", "rows"),
    ("col-sum", "rows"),
    ("transpose", "rows"),
    ("stride-sum", "len"),
    ("copy", "bytes"),
    ("read", "bytes"),
    ("conflict", "count"),
];

/// The buffer an alignment control shifts, per kernel, and its role: the destination where the
/// kernel writes one (moved against its source: 4K aliasing of loads and stores), else its only
/// buffer. Kernels not listed keep buffers the harness's allocator does not place.
const SHIFTED_BUFFER: &[(&str, usize, &str)] = &[
    ("copy", 1, "destination"),
    ("transpose", 1, "destination"),
    ("to-tiles", 1, "destination"),
    ("to-nhwc", 1, "destination"),
    ("stencil3x3", 1, "destination"),
    ("row-sum", 0, "source"),
    ("col-sum", 0, "source"),
    ("stride-sum", 0, "source"),
    ("view-sum", 0, "source"),
    ("conflict", 0, "source"),
    ("read", 0, "source"),
    ("chase", 0, "source"),
    ("tiled-sum", 0, "source"),
    ("channel-sum", 0, "source"),
];

/// The shifts an alignment control tries, in bytes, and their names: one line (other sets
/// against the other buffers) and one 4 KiB page (the distance of 4K aliasing).
const SHIFTS: &[(usize, &str)] = &[(64, "64 B"), (4096, "4 KiB")];

/// Kernels with a parameter that makes each load wait for the one before: (kernel, parameter,
/// its dependent value).
const DEPENDENT_LOADS: &[(&str, &str, &str)] = &[("conflict", "mode", "lat")];

/// Kernels whose view can be walked as the same elements in storage order (one stream, what
/// prefetchers follow best): (kernel, the view parameter, the layout operation that does it).
const STORAGE_ORDER: &[(&str, &str, &str)] = &[("view-sum", "expr", ".contiguous()")];

fn int(params: &Params, name: &str) -> Option<u64> {
    match params.get(name) {
        Some(ParamValue::Int(v)) => Some(*v),
        _ => None,
    }
}

/// The base words with `key` set to `value`.
fn with(words: &[(String, String)], key: &str, value: String) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = words.iter().filter(|(k, _)| k != key).cloned().collect();
    out.push((key.to_string(), value));
    out
}

fn lookup(table: &[(&str, &'static str)], kernel: &str) -> Option<&'static str> {
    table
        .iter()
        .find(|(k, _)| *k == kernel)
        .or_else(|| table.iter().find(|(k, _)| *k == "*"))
        .map(|(_, p)| *p)
}

/// The controls of a point of `kernel` with resolved `params`, planned from `words`; `line`
/// is the L1d line in bytes, `cpus` the CPUs a second thread could run on.
pub fn controls_for(
    kernel: &str,
    params: &Params,
    words: &[(String, String)],
    line: u64,
    cpus: usize,
) -> (Vec<Control>, Vec<NotRun>) {
    let mut run = Vec::new();
    let mut not_run = Vec::new();
    let control = |factor, change: String, words: Vec<(String, String)>| Control {
        factor,
        change,
        words,
        threads: 1,
        huge_pages: false,
        shift: BufferShift::default(),
    };
    run.push(Control {
        huge_pages: true,
        ..control(Factor::Tlb, "huge pages".into(), words.to_vec())
    });
    let set_param = SET_PARAMS
        .iter()
        .filter(|(k, _)| *k == kernel || *k == "*")
        .map(|(_, p)| *p)
        .find(|p| params.contains_key(*p));
    match set_param.and_then(|p| int(params, p).map(|v| (p, v))) {
        Some((param, value)) => {
            let element = Dtype::from_params(params).map_or(8, |d| u64::from(d.bytes()));
            let per_line = (line / element).max(1);
            for (factor, plus) in [(Factor::SetsElement, 1), (Factor::SetsLine, per_line)] {
                let changed = format!("{param}={}", value + plus);
                let variant = with(words, param, (value + plus).to_string());
                run.push(control(factor, changed, variant));
            }
        }
        None => not_run.push(NotRun {
            factor: Factor::SetsElement,
            reason: format!("{kernel} has no leading dimension or stride to pad"),
        }),
    }
    match lookup(SIZE_PARAMS, kernel).and_then(|p| int(params, p).map(|v| (p, v))) {
        Some((param, value)) if value >= 2 => {
            let half = value / 2;
            let variant = with(words, param, half.to_string());
            run.push(control(
                Factor::Capacity,
                format!("{param}={half}"),
                variant,
            ));
        }
        _ => not_run.push(NotRun {
            factor: Factor::Capacity,
            reason: format!("{kernel} has no size parameter this command halves"),
        }),
    }
    let dependent = DEPENDENT_LOADS.iter().find(|(k, _, _)| *k == kernel);
    let in_order = STORAGE_ORDER.iter().find(|(k, _, _)| *k == kernel);
    let view = in_order.and_then(|(_, param, op)| match params.get(*param) {
        Some(ParamValue::Text(expr)) if !expr.ends_with(op) => Some((*param, expr, *op)),
        _ => None,
    });
    if let Some((param, expr, op)) = view {
        let variant = with(words, param, format!("{expr}{op}"));
        run.push(control(
            Factor::MemoryParallelism,
            "in storage order".into(),
            variant,
        ));
    }
    match dependent {
        Some((_, param, value))
            if params.get(*param).map(ToString::to_string).as_deref() != Some(*value) =>
        {
            let variant = with(words, param, value.to_string());
            run.push(control(
                Factor::MemoryParallelism,
                format!("{param}={value}"),
                variant,
            ));
        }
        _ if view.is_some() => {}
        _ => {
            not_run.push(NotRun {
                factor: Factor::MemoryParallelism,
                reason: format!("{kernel} has no dependent-load variant (or runs it already)"),
            });
        }
    }
    if cpus >= 2 {
        run.push(Control {
            threads: 2,
            ..control(Factor::Bandwidth, "2 threads".into(), words.to_vec())
        });
    } else {
        not_run.push(NotRun {
            factor: Factor::Bandwidth,
            reason: "this machine offers one CPU".into(),
        });
    }
    match SHIFTED_BUFFER.iter().find(|(k, _, _)| *k == kernel) {
        Some(&(_, buffer, role)) => {
            for &(bytes, name) in SHIFTS {
                run.push(Control {
                    shift: BufferShift { buffer, bytes },
                    ..control(Factor::Alignment, format!("{role} +{name}"), words.to_vec())
                });
            }
        }
        None => not_run.push(NotRun {
            factor: Factor::Alignment,
            reason: format!("{kernel}'s buffers are not placed by the lab's aligned allocator"),
        }),
    }
    (run, not_run)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(pairs: &[(&str, ParamValue)]) -> Params {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    }

    #[test]
    fn each_kernel_gets_the_controls_its_parameters_allow() {
        use ParamValue::{Int, Text};
        let col = params(&[
            ("rows", Int(1024)),
            ("cols", Int(1024)),
            ("ld", Int(1024)),
            ("dtype", Text("f32".into())),
        ]);
        let conflict = params(&[
            ("stride", Int(512)),
            ("count", Int(16)),
            ("mode", Text("thr".into())),
        ]);
        let view = params(&[("expr", Text("arange(8)".into()))]);
        // (kernel, params, cpus, the changes run)
        let cases: [(&str, &Params, usize, &[&str]); 6] = [
            (
                "col-sum",
                &col,
                2,
                &[
                    "huge pages",
                    "ld=1025",
                    "ld=1040",
                    "rows=512",
                    "2 threads",
                    "source +64 B",
                    "source +4 KiB",
                ],
            ),
            (
                "conflict",
                &conflict,
                2,
                &[
                    "huge pages",
                    "stride=513",
                    "stride=520",
                    "count=8",
                    "mode=lat",
                    "2 threads",
                    "source +64 B",
                    "source +4 KiB",
                ],
            ),
            (
                "view-sum",
                &view,
                2,
                &[
                    "huge pages",
                    "in storage order",
                    "2 threads",
                    "source +64 B",
                    "source +4 KiB",
                ],
            ),
            (
                "view-sum",
                &view,
                1,
                &[
                    "huge pages",
                    "in storage order",
                    "source +64 B",
                    "source +4 KiB",
                ],
            ),
            (
                "copy",
                &params(&[("bytes", Int(1 << 20))]),
                1,
                &[
                    "huge pages",
                    "bytes=524288",
                    "destination +64 B",
                    "destination +4 KiB",
                ],
            ),
            ("jagged", &params(&[]), 1, &["huge pages"]),
        ];
        for (kernel, p, cpus, expected) in cases {
            let (run, not_run) = controls_for(kernel, p, &[], 64, cpus);
            let changes: Vec<&str> = run.iter().map(|c| c.change.as_str()).collect();
            assert_eq!(changes, expected, "{kernel}");
            // Every factor is either run or said not to be.
            for factor in [
                Factor::Capacity,
                Factor::MemoryParallelism,
                Factor::Alignment,
            ] {
                assert!(
                    run.iter().any(|c| c.factor == factor)
                        || not_run.iter().any(|n| n.factor == factor),
                    "{kernel}: {factor:?}"
                );
            }
        }
    }

    #[test]
    fn a_variant_changes_one_word_and_keeps_the_rest() {
        let words = vec![
            ("rows".to_string(), "64".to_string()),
            ("ld".to_string(), "64".to_string()),
        ];
        let p = params(&[("rows", ParamValue::Int(64)), ("ld", ParamValue::Int(64))]);
        let (run, _) = controls_for("col-sum", &p, &words, 64, 1);
        let padded = run
            .iter()
            .find(|c| c.factor == Factor::SetsElement)
            .unwrap();
        assert_eq!(
            padded.words,
            [
                ("rows".to_string(), "64".to_string()),
                ("ld".to_string(), "65".to_string())
            ]
        );
    }
}
