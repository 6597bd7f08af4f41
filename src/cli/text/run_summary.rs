//! The text summary of a results document as `stridelab run` prints it: one table per run of
//! consecutive points of a kernel, the parameters they share hoisted into its header line, one
//! row per point with its timing (auto-scaled), precision marks and simulated misses (exact,
//! grouped), every line at most [`MAX_WIDTH`] characters; footnotes say what each column is.

use std::fmt::Write as _;

use crate::cli::text::run_blocks::{Block, blocks};
use crate::cli::text::table::{Align, TextTable, wrap};
use crate::harness::measure::precision::{advice, mark, mark_legend, percent, remedy};
use crate::results::{ChecksumOutcome, PointRecord, PrecisionWarning, ResultsDocument, RunStatus};
use crate::units::{format_count, format_duration_ns, format_significant, format_time_ratio};

/// The widest line the summary prints: tables that would be wider put the simulated misses in
/// a second table under the timing one.
pub const MAX_WIDTH: usize = 120;

/// Footnotes wrap narrower than the tables: prose reads badly across 120 columns.
const NOTE_WIDTH: usize = 100;

const INDENT: &str = "  ";
const MISSING: &str = "-";

/// The summary `stridelab run` prints: a headline, and unless `quiet` the tables and their
/// footnotes.
pub fn run_summary(doc: &ResultsDocument, quiet: bool) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "suite {} ({}): {} points in {:.1} s{}",
        doc.suite.name,
        doc.suite.source,
        doc.records.len(),
        doc.wall_s,
        if doc.status == RunStatus::Interrupted {
            " — interrupted"
        } else {
            ""
        }
    );
    if quiet {
        return out;
    }
    let mut seen = Seen::default();
    for block in blocks(&doc.records) {
        out.push('\n');
        out.push_str(&render_block(&block, &mut seen));
    }
    out.push('\n');
    out.push_str(&footnotes(doc, &seen));
    out
}

/// What the tables showed, so the footnotes explain only that.
#[derive(Default)]
struct Seen {
    /// Headers of the timing columns some table kept.
    columns: Vec<String>,
    simulated: bool,
    prefix: bool,
    warnings: Vec<PrecisionWarning>,
}

/// What each timing column is, in the order of the columns.
const TIMING_COLUMNS: [(&str, &str); 6] = [
    ("time/run", "median of the point's samples"),
    (
        "CI",
        "width of the bootstrap 95% CI of that median, relative to it (the width --target-ci \
         sets)",
    ),
    ("time/elem", "time/run per element (per access for probes)"),
    (
        "vs first",
        "time/elem against the table's first row (\"3.58× slower\": each element took 3.58 \
         times as long)",
    ),
    (
        "GB/s",
        "bytes the loads and stores request (element size × accesses, all threads) per second, \
         1 GB = 10⁹ B; a strided walk moves whole cache lines, more than it requests",
    ),
    (
        "vs ref",
        "GB/s against a copy (writing kernels) or read of the same bytes timed in the same run",
    ),
];

/// The header line of a block: the kernel, what its rows share, and what kind of points they
/// are when they come from a geometry sweep.
fn block_header(block: &[PointRecord], shared: &[String]) -> String {
    let first = &block[0];
    // Parameters read as the command line wrote them; the thread count is not one.
    let (params, others): (Vec<&String>, Vec<&String>) =
        shared.iter().partition(|w| w.contains('='));
    let params: Vec<&str> = params.iter().map(|w| w.as_str()).collect();
    let mut parts: Vec<&str> = Vec::new();
    let joined = params.join(" ");
    if !joined.is_empty() {
        parts.push(&joined);
    }
    parts.extend(others.iter().map(|w| w.as_str()));
    let mut header = format!("{}: {}", first.kernel, parts.join(" · "));
    if let Some(sweep) = &first.sweep {
        let on = sweep
            .preset
            .as_ref()
            .map(|p| format!(" on preset {p}"))
            .unwrap_or_default();
        if sweep.timed {
            let _ = write!(header, " · {} sweep", sweep.level);
        } else {
            let _ = write!(header, " · {} sweep, simulated only{on}", sweep.level);
        }
    }
    wrap(&header, MAX_WIDTH, INDENT)
}

/// The levels the block's simulations name, in the order of the first that names each.
fn level_names(block: &[PointRecord]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for level in block
        .iter()
        .filter_map(|r| r.simulated.as_ref())
        .flat_map(|s| &s.levels)
    {
        if !names.contains(&level.name) {
            names.push(level.name.clone());
        }
    }
    names
}

/// One block's table(s): timing and misses side by side when that fits in [`MAX_WIDTH`],
/// else one under the other.
fn render_block(table_of: &Block, seen: &mut Seen) -> String {
    let block = table_of.records;
    let levels = level_names(block);
    let first_per_element = block
        .iter()
        .find_map(|r| r.timing.as_ref().map(|t| t.ns_per_element));
    let timed = block.iter().any(|r| r.timing.is_some());
    let mut timing_columns: Vec<Column> = Vec::new();
    if timed {
        timing_columns = timing_cells(block, first_per_element);
    }
    timing_columns.push(problem_column(block, seen));
    let miss_columns = miss_cells(block, &levels, seen);
    let label = Column::new("point", Align::Left, table_of.labels.clone());
    let keep = |columns: Vec<Column>| -> Vec<Column> {
        columns.into_iter().filter(Column::has_values).collect()
    };
    let (timing_columns, miss_columns) = (keep(timing_columns), keep(miss_columns));
    for column in &timing_columns {
        if !seen.columns.contains(&column.header) {
            seen.columns.push(column.header.clone());
        }
    }
    let with_label = |rest: &[Column]| -> Vec<Column> {
        let mut columns: Vec<Column> = Vec::new();
        if label.has_values() {
            columns.push(label.clone());
        }
        columns.extend(rest.iter().cloned());
        columns
    };
    let mut out = block_header(block, &table_of.shared);
    let together = table(&with_label(
        &[timing_columns.clone(), miss_columns.clone()].concat(),
    ));
    if together.width(INDENT) <= MAX_WIDTH || timing_columns.is_empty() || miss_columns.is_empty() {
        out.push_str(&together.render(INDENT));
    } else {
        out.push_str(&table(&with_label(&timing_columns)).render(INDENT));
        out.push_str(&table(&with_label(&miss_columns)).render(INDENT));
    }
    // What each `expr #k` of the labels stands for (a view expression is too long for one).
    for line in &table_of.legend {
        out.push_str(INDENT);
        out.push_str(&wrap(line, MAX_WIDTH - INDENT.len(), "      "));
    }
    out
}

/// A column before layout: header, alignment and one cell per record.
#[derive(Clone)]
struct Column {
    header: String,
    align: Align,
    cells: Vec<String>,
}

impl Column {
    fn new(header: &str, align: Align, cells: Vec<String>) -> Self {
        Self {
            header: header.into(),
            align,
            cells,
        }
    }

    /// Whether any cell says something (columns of dashes are left out).
    fn has_values(&self) -> bool {
        self.cells.iter().any(|c| !c.is_empty() && c != MISSING)
    }
}

fn table(columns: &[Column]) -> TextTable {
    let heads: Vec<(&str, Align)> = columns
        .iter()
        .map(|c| (c.header.as_str(), c.align))
        .collect();
    let mut t = TextTable::new(&heads);
    let rows = columns.first().map_or(0, |c| c.cells.len());
    for row in 0..rows {
        t.push(columns.iter().map(|c| c.cells[row].clone()).collect());
    }
    t
}

/// Bytes the point's loads and stores request per second of its median (all threads), in
/// GB/s: the recorded figure for bandwidth kernels, the same quotient for the others.
fn requested_gb_per_s(r: &PointRecord) -> Option<f64> {
    let t = r.timing.as_ref()?;
    t.gb_per_s.or_else(|| {
        let w = r.work?;
        let bytes = (w.bytes_read + w.bytes_written).saturating_mul(r.threads as u64);
        (bytes > 0).then(|| bytes as f64 / t.ns_per_run.median)
    })
}

/// time/run, CI, time/elem, vs first, GB/s, vs ref: one column each.
fn timing_cells(block: &[PointRecord], first: Option<f64>) -> Vec<Column> {
    let mut columns = TIMING_COLUMNS.map(|(header, _)| (header, Vec::new()));
    let several = block.iter().filter(|r| r.timing.is_some()).count() > 1;
    for (i, r) in block.iter().enumerate() {
        let t = r.timing.as_ref();
        let is_first = block[..i].iter().all(|r| r.timing.is_none());
        let vs_first = match (t, first) {
            (Some(_), Some(_)) if is_first && several => "(first)".to_string(),
            (Some(t), Some(first)) if several => format_time_ratio(t.ns_per_element / first),
            _ => MISSING.into(),
        };
        let vs_ref = r
            .reference
            .as_ref()
            .map(|c| format_time_ratio(1.0 / c.ratio));
        let cells = [
            t.map(|t| format_duration_ns(t.ns_per_run.median)),
            t.map(|t| percent(t.ns_per_run.relative_ci_width())),
            t.map(|t| format_duration_ns(t.ns_per_element)),
            Some(vs_first),
            requested_gb_per_s(r).map(format_significant),
            vs_ref,
        ];
        for ((_, column), cell) in columns.iter_mut().zip(cells) {
            column.push(cell.unwrap_or_else(|| MISSING.into()));
        }
    }
    columns
        .into_iter()
        .map(|(header, cells)| Column::new(header, Align::Right, cells))
        .collect()
}

/// One column per level: `misses (conflict)`, `≥` before a simulated prefix's counts.
fn miss_cells(block: &[PointRecord], levels: &[String], seen: &mut Seen) -> Vec<Column> {
    levels
        .iter()
        .map(|name| {
            let cells = block
                .iter()
                .map(|r| {
                    let Some(s) = r.simulated.as_ref() else {
                        return MISSING.to_string();
                    };
                    let Some(l) = s.levels.iter().find(|l| &l.name == name) else {
                        return MISSING.to_string();
                    };
                    seen.simulated = true;
                    let prefix = s.scope.kind == "prefix";
                    seen.prefix |= prefix;
                    format!(
                        "{}{} ({})",
                        if prefix { "≥" } else { "" },
                        format_count(l.misses),
                        format_count(l.conflict)
                    )
                })
                .collect();
            Column::new(&format!("{name} miss"), Align::Right, cells)
        })
        .collect()
}

/// The `!` column: precision marks of a timing, or why a point has no numbers.
fn problem_column(block: &[PointRecord], seen: &mut Seen) -> Column {
    let cells = block
        .iter()
        .map(|r| {
            if r.checksum.status == ChecksumOutcome::Mismatch {
                return "WRONG checksum".to_string();
            }
            if let (None, Some(e)) = (&r.timing, &r.error) {
                return format!("error: {}", e.stage);
            }
            let warnings = r
                .timing
                .as_ref()
                .and_then(|t| t.precision.as_ref())
                .map(|p| p.warnings.as_slice())
                .unwrap_or_default();
            for w in warnings {
                if !seen.warnings.contains(w) {
                    seen.warnings.push(*w);
                }
            }
            warnings
                .iter()
                .map(|w| mark(*w))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    Column::new("!", Align::Left, cells)
}

/// What the columns are, the units, and the marks shown; wrapped to [`NOTE_WIDTH`].
fn footnotes(doc: &ResultsDocument, seen: &Seen) -> String {
    let mut notes: Vec<String> = Vec::new();
    let timed: Vec<String> = TIMING_COLUMNS
        .iter()
        .filter(|(header, _)| seen.columns.iter().any(|c| c == header))
        .map(|(header, meaning)| format!("{header} = {meaning}"))
        .collect();
    if !timed.is_empty() {
        notes.push(format!("timed: {}.", timed.join("; ")));
    }
    if seen.simulated {
        let start = doc
            .records
            .iter()
            .find_map(|r| r.simulated.as_ref())
            .map_or("cold", |s| s.start.as_str());
        let mut simulated = format!(
            "simulated: L1d miss … = misses of one {start} run of the kernel's addresses, \
             conflict misses (3C split) in brackets"
        );
        if seen.prefix {
            simulated.push_str("; ≥ = only the first accesses of a long run were simulated");
        }
        simulated.push('.');
        notes.push(simulated);
    }
    notes.push(
        "units: sizes binary (1 KiB = 1,024 B), in bytes when not a whole KiB, MiB or GiB; \
         counts exact, grouped by commas."
            .into(),
    );
    if !seen.warnings.is_empty() {
        let mut warnings = seen.warnings.clone();
        warnings.sort();
        let legend: Vec<&str> = warnings.iter().map(|w| mark_legend(*w)).collect();
        notes.push(format!("!: {}.", legend.join("; ")));
    }
    if let Some(hw) = doc.records.iter().find_map(|r| r.counters.as_ref())
        && !hw.hardware.available
    {
        notes.push(format!(
            "measured: hardware counters unavailable ({}); software counters in the results file.",
            hw.hardware.reason.as_deref().unwrap_or("no reason given")
        ));
    }
    notes.iter().map(|n| wrap(n, NOTE_WIDTH, INDENT)).collect()
}

/// Most points a warning line names before it says how many more there are.
const NAMED_POINTS: usize = 4;

/// Each record's name as its table shows it: the kernel and the parameters that vary in its
/// table (the kernel alone for a table of one).
fn point_names(doc: &ResultsDocument) -> Vec<(usize, String)> {
    blocks(&doc.records)
        .into_iter()
        .flat_map(|block| {
            block
                .records
                .iter()
                .zip(block.full_labels)
                .map(|(r, label)| {
                    let name = format!("{} {label}", r.kernel);
                    (r.index, name.trim_end().to_string())
                })
        })
        .collect()
}

/// One warning line per kind of precision warning any timed point of `doc` carries, as
/// hyperfine warns: what was seen, at which points, and what to do about it.
pub fn precision_warnings(doc: &ResultsDocument) -> Vec<String> {
    let names = point_names(doc);
    let name_of = |index: usize| {
        names
            .iter()
            .find(|(i, _)| *i == index)
            .map_or_else(|| format!("point {index}"), |(_, n)| n.clone())
    };
    let timed = doc.records.iter().filter(|r| r.timing.is_some()).count();
    let kinds = [
        PrecisionWarning::CiTargetMissed,
        PrecisionWarning::Outliers,
        PrecisionWarning::Drift,
    ];
    let mut lines = Vec::new();
    for kind in kinds {
        let flagged: Vec<String> = doc
            .records
            .iter()
            .filter_map(|r| {
                let t = r.timing.as_ref()?;
                let p = t.precision.as_ref()?;
                p.warnings.contains(&kind).then(|| match kind {
                    PrecisionWarning::CiTargetMissed => format!(
                        "{}: CI {} wide, target {}",
                        name_of(r.index),
                        percent(t.ns_per_run.relative_ci_width()),
                        percent(p.target_relative_ci)
                    ),
                    _ => name_of(r.index),
                })
            })
            .collect();
        if flagged.is_empty() {
            continue;
        }
        let (one, several) = advice(kind);
        let mut named: Vec<String> = flagged.iter().take(NAMED_POINTS).cloned().collect();
        if flagged.len() > NAMED_POINTS {
            named.push(format!("and {} more", flagged.len() - NAMED_POINTS));
        }
        let subject = if flagged.len() == 1 && timed == 1 {
            format!("the point {one}")
        } else if flagged.len() == 1 {
            format!("1 of {timed} timed points {one}")
        } else {
            format!("{} of {timed} timed points {several}", flagged.len())
        };
        let line = format!(
            "warning: {subject} ({}). {}",
            named.join("; "),
            remedy(kind)
        );
        lines.push(wrap(&line, NOTE_WIDTH, INDENT).trim_end().to_string());
    }
    lines
}

/// Warnings about error rows, imprecise timings (`harness::measure::precision`) and an interrupted run
/// (the file has the details).
pub fn problems(doc: &ResultsDocument) -> Vec<String> {
    let mut lines: Vec<String> = doc
        .records
        .iter()
        .filter(|r| r.checksum.status != ChecksumOutcome::Ok || r.timing.is_none())
        .filter_map(|r| {
            let e = r.error.as_ref()?;
            Some(format!(
                "warning: point {} ({}): {}: {}",
                r.index, r.kernel, e.stage, e.message
            ))
        })
        .collect();
    lines.extend(precision_warnings(doc));
    if doc.status == RunStatus::Interrupted {
        lines.push(format!(
            "interrupted: kept {} of {} points",
            doc.records.len(),
            doc.suite.points
        ));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::catalogue_link::{find, resolve_params};
    use crate::results::schema::tests::sample_document;
    use crate::results::test_docs::simulated_l1;
    use crate::results::{Precision, Timing};

    fn recorded_fixture() -> ResultsDocument {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/gate/recorded.json"
        );
        ResultsDocument::read(std::path::Path::new(path), &crate::kernels::CATALOGUE_RULES).unwrap()
    }

    fn widest(text: &str) -> usize {
        text.lines().map(|l| l.chars().count()).max().unwrap_or(0)
    }

    /// One timed, simulated record of `kernel` per argument list.
    fn points(kernel: &str, rows: &[&[(&str, &str)]]) -> ResultsDocument {
        let mut doc = sample_document();
        let template = doc.records[0].clone();
        doc.records = rows
            .iter()
            .enumerate()
            .map(|(index, args)| {
                let args: Vec<(String, String)> = args
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect();
                let mut r = template.clone();
                r.index = index;
                r.kernel = kernel.into();
                r.params = resolve_params(find(kernel).unwrap(), &args).unwrap();
                r.simulated = Some(simulated_l1(16));
                r
            })
            .collect();
        doc.suite.points = rows.len();
        doc
    }

    #[test]
    fn a_grid_is_cut_into_tables_whose_labels_name_what_varies() {
        // dtype × stride: one table per dtype, rows labelled by stride alone.
        let grid = points(
            "stride-sum",
            &[
                &[("len", "4M"), ("stride", "1")],
                &[("len", "4M"), ("stride", "8")],
                &[("len", "8M"), ("stride", "1"), ("dtype", "f32")],
                &[("len", "8M"), ("stride", "8"), ("dtype", "f32")],
            ],
        );
        let tables = blocks(&grid.records);
        assert_eq!(tables.len(), 2);
        assert_eq!(tables[0].labels, ["stride=1 (8 B)", "stride=8 (64 B)"]);
        assert_eq!(tables[1].labels, ["stride=1 (4 B)", "stride=8 (32 B)"]);
        assert_eq!(
            tables[1].shared,
            ["dtype=f32", "len=8388608 (32 MiB)", "1 thread"]
        );
        // count × stride fits one label: one table.
        let probes = points(
            "conflict",
            &[
                &[("count", "8"), ("stride", "512")],
                &[("count", "8"), ("stride", "513")],
                &[("count", "16"), ("stride", "512")],
            ],
        );
        let tables = blocks(&probes.records);
        assert_eq!(tables.len(), 1);
        assert_eq!(tables[0].labels[2], "count=16 stride=512 (4 KiB)");
        // Another kernel starts another table; a lone record labels nothing.
        let mut mixed = probes.clone();
        mixed.records.extend(grid.records.into_iter().take(1));
        let tables = blocks(&mixed.records);
        assert_eq!(tables.len(), 2);
        assert_eq!(tables[1].labels, [""]);
        let text = run_summary(&mixed, false);
        assert!(
            text.contains("stride-sum: dtype=f64 len=4194304 (32 MiB) stride=1 (8 B) · 1 thread"),
            "{text}"
        );
    }

    #[test]
    fn a_grid_over_long_expressions_is_one_table_with_aliases_and_a_legend() {
        let a = "arange(1048576).view(1024,1024).T";
        let b = "arange(1048576).view(1024,1024).flip(0)";
        let mut views = points(
            "view-sum",
            &[&[("expr", a)], &[("expr", b)], &[("expr", a)]],
        );
        for (r, ns) in views.records.iter_mut().zip([6.6, 0.25, 6.6]) {
            r.timing.as_mut().unwrap().ns_per_element = ns;
        }
        let tables = blocks(&views.records);
        assert_eq!(tables.len(), 1, "one table for one kernel's grid");
        assert_eq!(tables[0].labels, ["expr #1", "expr #2", "expr #1"]);
        assert_eq!(
            tables[0].legend,
            [format!("expr #1 = {a}"), format!("expr #2 = {b}")]
        );
        assert_eq!(tables[0].full_labels[1], format!("expr={b}"));
        let text = run_summary(&views, false);
        for needle in [
            "expr #2",
            "26.4× faster",
            &format!("  expr #1 = {a}\n"),
            &format!("  expr #2 = {b}\n"),
        ] {
            assert!(text.contains(needle), "missing `{needle}` in\n{text}");
        }
        assert!(widest(&text) <= MAX_WIDTH, "{text}");
        // Labels that fit spelled out are not aliased.
        let fit = points("view-sum", &[&[("expr", a)], &[("expr", "arange(128)")]]);
        assert_eq!(
            blocks(&fit.records)[0].labels,
            [format!("expr={a}"), "expr=arange(128)".to_string()]
        );
        assert!(blocks(&fit.records)[0].legend.is_empty());
    }

    /// Conflict probes at strides 511, 512, 513 timed at `ns_per_run`, with `warnings`.
    fn conflict_probes(ns_per_run: [f64; 3], warnings: &[PrecisionWarning]) -> ResultsDocument {
        let mut doc = points(
            "conflict",
            &[
                &[("stride", "511"), ("count", "16")],
                &[("stride", "512"), ("count", "16")],
                &[("stride", "513"), ("count", "16")],
            ],
        );
        for (r, ns) in doc.records.iter_mut().zip(ns_per_run) {
            let t: &mut Timing = r.timing.as_mut().unwrap();
            t.ns_per_run.median = ns;
            t.ns_per_element = ns / 1600.0;
            t.gb_per_s = None;
            t.precision = Some(Precision {
                target_relative_ci: 0.005,
                outliers: None,
                drift: None,
                warnings: warnings.to_vec(),
            });
        }
        doc.records[1].simulated = Some(simulated_l1(1600));
        doc
    }

    #[test]
    fn shared_parameters_go_to_the_header_and_rows_name_what_varies_in_exact_bytes() {
        let text = run_summary(&conflict_probes([1011.0, 3620.0, 858.0], &[]), false);
        for needle in [
            "conflict: count=16 mode=thr reps=100 seed=1 · 1 thread\n",
            "stride=511 (4,088 B)",
            "stride=512 (4 KiB)",
            "stride=513 (4,104 B)",
            "1.01 µs",
            "858 ns",
            "(first)",
            "3.58× slower",
            "1.18× faster",
            "1,600 (0)",
            "L1d miss",
        ] {
            assert!(text.contains(needle), "missing `{needle}` in\n{text}");
        }
        assert!(!text.contains("4.0 KiB"), "{text}");
        // No precision warnings: no `!` column, no legend.
        assert!(!text.contains("!:"), "{text}");
        assert!(widest(&text) <= MAX_WIDTH, "{text}");
    }

    #[test]
    fn precision_warnings_are_marked_and_explained() {
        let warnings = [PrecisionWarning::CiTargetMissed, PrecisionWarning::Drift];
        let text = run_summary(&conflict_probes([1000.0; 3], &warnings), false);
        assert!(text.contains("ci drift"), "{text}");
        assert!(
            text.contains("ci = the 95% CI ended wider than --target-ci"),
            "{text}"
        );
        assert!(
            text.contains("drift = the samples trend with time"),
            "{text}"
        );
        assert!(!text.contains("out ="), "{text}");
    }

    #[test]
    fn a_warning_line_per_kind_names_the_points_as_their_table_does() {
        let clean = conflict_probes([1000.0; 3], &[]);
        assert!(precision_warnings(&clean).is_empty());
        let missed = conflict_probes([1000.0; 3], &[PrecisionWarning::CiTargetMissed]);
        let lines = precision_warnings(&missed);
        assert_eq!(lines.len(), 1, "{lines:?}");
        let text = lines[0].replace("\n  ", " ");
        for needle in [
            "warning: 3 of 3 timed points missed the CI target",
            "(conflict stride=511 (4,088 B): CI ",
            "wide, target 0.500%;",
            "Raise --sampling-budget",
        ] {
            assert!(text.contains(needle), "missing `{needle}` in {text}");
        }
        assert!(lines[0].lines().all(|l| l.chars().count() <= NOTE_WIDTH));
        let mut one = conflict_probes([1000.0; 3], &[PrecisionWarning::Outliers]);
        one.records.truncate(1);
        let lines = precision_warnings(&one);
        assert!(
            lines[0].starts_with("warning: the point has statistical outliers"),
            "{lines:?}"
        );
    }

    #[test]
    fn a_quiet_summary_is_the_headline_alone() {
        let doc = recorded_fixture();
        let quiet = run_summary(&doc, true);
        assert_eq!(quiet.lines().count(), 1, "{quiet}");
        assert!(
            quiet.starts_with(&format!("suite {} (", doc.suite.name)),
            "{quiet}"
        );
        let full = run_summary(&doc, false);
        assert!(full.lines().count() >= doc.records.len() + 3, "{full}");
        assert!(full.contains("vs first"), "{full}");
    }

    #[test]
    fn a_document_from_an_older_build_renders_within_the_width_without_marks() {
        let doc = recorded_fixture();
        assert!(
            doc.records
                .iter()
                .all(|r| r.timing.as_ref().is_none_or(|t| t.precision.is_none()))
        );
        let text = run_summary(&doc, false);
        assert!(widest(&text) <= MAX_WIDTH, "{text}");
        assert!(!text.contains("!:"), "{text}");
    }
}
