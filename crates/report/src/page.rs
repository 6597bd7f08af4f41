//! The HTML page (maud): summary of computed findings, one section per kernel family that the
//! data support (what the kernel does, figures, tables with CIs, what to look for), a
//! comparison of runs given together, the machine manifest, the method and links to the data.
//! Self-contained: inline CSS, images by relative path, no network.
//!
//! Every reading-guide sentence and finding is a [`Claim`] rendered with its id, kind and
//! verdict as attributes (`data-claim`, `data-kind`, `data-verdict`), so a test can find each
//! sentence and hold it against the data.

use maud::{DOCTYPE, Markup, PreEscaped, html};
use serde_json::Value;

use stridelab_core::results::precision_summary::PrecisionSummary;
use stridelab_core::results::{ChecksumOutcome, ResultsDocument, RunStatus};

use super::chart::{format_bytes, format_number};
use super::claims::{Claim, Kind};
use super::figures::{Built, Outcome, Table};
use super::{MachineView, SECTIONS, SectionDef};

const CSS: &str = r#"
:root { --ink:#1d2329; --muted:#5b6670; --line:#dde3e8; --accent:#0072b2; --warn:#b34700; }
* { box-sizing: border-box; }
body { margin:0; font: 15px/1.5 "DejaVu Sans", system-ui, sans-serif; color:var(--ink); background:#f6f8fa; }
header { background:#1d2329; color:#fff; padding:22px 32px; }
header h1 { margin:0 0 4px; font-size:26px; }
header p { margin:0; color:#c9d3dc; }
nav { background:#fff; border-bottom:1px solid var(--line); padding:8px 32px; position:sticky; top:0; z-index:2; display:flex; flex-wrap:wrap; gap:4px 18px; }
nav a { color:var(--accent); text-decoration:none; white-space:nowrap; }
main { max-width:1480px; margin:0 auto; padding:16px 32px 48px; }
section { background:#fff; border:1px solid var(--line); border-radius:8px; padding:18px 24px; margin:20px 0; }
h2 { margin:0 0 10px; font-size:21px; }
h3 { margin:18px 0 6px; font-size:16px; }
.machines { display:grid; gap:20px; }
.machine-label { font-weight:bold; color:var(--muted); margin-bottom:6px; }
.findings { margin:0; padding-left:22px; }
.findings li { margin:6px 0; font-size:16px; }
.explain { color:var(--ink); max-width:1000px; }
.kernel-name { font-family: "DejaVu Sans Mono", monospace; background:#eef2f5; padding:1px 5px; border-radius:3px; }
figure { margin:12px 0; }
figure img { max-width:100%; height:auto; border:1px solid var(--line); border-radius:4px; background:#fff; }
figcaption { color:var(--muted); font-size:13px; }
.look { background:#eef6fb; border-left:4px solid var(--accent); padding:8px 12px; margin:8px 0; max-width:1100px; }
.look ul.claims { margin:4px 0 0; padding-left:20px; }
.look ul.claims li { margin:3px 0; }
.note { background:#fff6ec; border-left:4px solid var(--warn); padding:8px 12px; margin:8px 0; }
.omitted { color:var(--warn); }
.lacks { color:var(--muted); font-size:14px; }
.claim .verdict-agrees { color:#1a7f37; }
.claim .verdict-partly, .claim .verdict-untested { color:var(--warn); }
.claim .verdict-disagrees { color:#b42318; font-weight:bold; }
table { border-collapse:collapse; margin:8px 0 14px; font-size:13px; }
th, td { border:1px solid var(--line); padding:3px 8px; text-align:left; vertical-align:top; }
th { background:#f0f3f6; text-align:center; }
td:first-child, th:first-child { text-align:left; }
caption { text-align:left; font-weight:bold; padding:4px 0; color:var(--muted); }
details > summary { cursor:pointer; color:var(--accent); margin:6px 0; }
.table-wrap { overflow-x:auto; }
.warn { color:var(--warn); }
code { font-family:"DejaVu Sans Mono", monospace; font-size:13px; }
"#;

/// What the time-model section draws, above its figure.
const TIME_MODEL_INTRO: &str = "Every timed point's measured time against the time model's \
    estimate: this machine's bandwidths and latencies per cache level and memory, probed by the \
    lab (`stridelab model`), priced by the point's simulated traffic; dependent loads at the \
    levels' latencies, other points at their bandwidths (docs/time-model.md has the rules).";

/// A comparison of a later run against the first: its sentence and its table.
pub type Comparison = (Claim, Table);

/// Whether any run draws a figure in section `si`.
fn shown(views: &[MachineView<'_>], si: usize) -> bool {
    views.iter().any(|v| {
        v.sections[si]
            .iter()
            .any(|o| matches!(o, Outcome::Drawn(_)))
    })
}

/// `Power-of-two strides and cache sets (no conflict points)`: a section the data do not
/// support, for the one line that lists them.
fn lacking(section: &SectionDef) -> String {
    if section.kernels.is_empty() {
        format!("{} (no simulated misses)", section.title)
    } else {
        format!(
            "{} (no {} points)",
            section.title,
            section.kernels.join("/")
        )
    }
}

/// The whole page.
pub fn render_page(views: &[MachineView<'_>], comparisons: &[Comparison]) -> String {
    let multi = views.len() > 1;
    let columns = format!(
        "grid-template-columns: repeat({}, minmax(0, 1fr));",
        views.len()
    );
    let title = if multi {
        format!("stridelab report — {} runs side by side", views.len())
    } else {
        format!("stridelab report — {}", views[0].label)
    };
    let sections: Vec<(usize, &SectionDef)> = SECTIONS
        .iter()
        .enumerate()
        .filter(|(si, _)| shown(views, *si))
        .collect();
    let any_infer = views.iter().any(|v| v.infer.is_some());
    let mut lacks: Vec<String> = SECTIONS
        .iter()
        .enumerate()
        .filter(|(si, s)| !shown(views, *si) && !s.optional)
        .map(|(_, s)| lacking(s))
        .collect();
    if !any_infer {
        lacks.push("Geometry inferred from timing (no infer.json beside the results file)".into());
    }
    let markup = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) }
                style { (PreEscaped(CSS)) }
            }
            body {
                header {
                    h1 { (title) }
                    @for v in views {
                        p { @if multi { strong { (v.label) } ": " } (run_line(&v.input.doc)) }
                    }
                }
                nav {
                    a href="#summary" { "Summary" }
                    @if !comparisons.is_empty() { a href="#comparison" { "Comparison" } }
                    @for (_, s) in &sections { a href={ "#" (s.anchor) } { (s.title) } }
                    @if any_infer { a href="#infer" { "Inferred geometry" } }
                    a href="#machine" { "Machine" }
                    a href="#method" { "Method" }
                    a href="#data" { "Data" }
                }
                main {
                    section id="summary" {
                        h2 { @if multi { "Summary: what matters most in each run" } @else { "Summary: what matters most on this machine" } }
                        @if !lacks.is_empty() {
                            p.lacks { "Not in this results file, so not shown: " (lacks.join("; ")) "." }
                        }
                        div.machines style=(columns) {
                            @for v in views { div { (summary(v, multi)) } }
                        }
                    }
                    @if !comparisons.is_empty() {
                        section id="comparison" {
                            h2 { "Comparison of the runs" }
                            @for (claim, t) in comparisons {
                                p { (claim_markup(claim)) }
                                (table(t))
                            }
                        }
                    }
                    @for (si, s) in &sections {
                        section id=(s.anchor) {
                            h2 { (s.title) }
                            @if s.anchor == crate::TIME_MODEL_ANCHOR {
                                p.explain { (TIME_MODEL_INTRO) }
                            } @else {
                                (kernel_explanations(s.kernels, views.first().map(|v| &v.input.explanations)))
                            }
                            @for v in views {
                                div {
                                    @if multi { div.machine-label { (v.label) } }
                                    (section_body(&v.sections[*si]))
                                }
                            }
                        }
                    }
                    @if any_infer {
                        section id="infer" {
                            h2 { "Geometry inferred from timing" }
                            p.explain { "stridelab infer measures the line size, cache capacities, L1 ways and sets and the data-TLB reach from timing alone (working-set plateaus, conflict probes with ±1 controls) and holds them against what sysfs/CPUID claim." }
                            @for v in views {
                                div {
                                    @if multi { div.machine-label { (v.label) } }
                                    @match &v.infer {
                                        Some(b) => (infer_block(b)),
                                        None => p.lacks { "No " code { "infer.json" } " beside " code { (v.input.path.display().to_string()) } " (" code { "stridelab infer --json > DIR/infer.json" } " next to the results file adds it)." },
                                    }
                                }
                            }
                        }
                    }
                    section id="machine" {
                        h2 { "Machine manifest" }
                        div.machines style=(columns) {
                            @for v in views { div { @if multi { div.machine-label { (v.label) } } (manifest(&v.input.doc)) } }
                        }
                    }
                    section id="method" {
                        h2 { "Method" }
                        (method_prose())
                        div.machines style=(columns) {
                            @for v in views { div { @if multi { div.machine-label { (v.label) } } (method_table(&v.input.doc)) } }
                        }
                    }
                    section id="data" {
                        h2 { "Data" }
                        @for v in views {
                            p {
                                @if multi { (v.label) ": " }
                                a href=(v.json_name) { (v.json_name) } " (results document, schema "
                                (v.input.doc.schema) ") · "
                                a href=(v.csv_name) { (v.csv_name) } " (one row per point) · rendered from "
                                code { (v.input.path.display().to_string()) }
                            }
                        }
                        p { "Re-render with " code { "stridelab report --in results.json --out DIR" } "; several " code { "--in" } " put runs side by side and compare them." }
                    }
                }
            }
        }
    };
    markup.into_string()
}

/// One run's part of a section: its drawn figures, then one line naming those it lacks.
fn section_body(outcomes: &[Outcome]) -> Markup {
    let missing: Vec<String> = outcomes
        .iter()
        .filter_map(|o| match o {
            Outcome::Omitted { title, reason, .. } => Some(format!("{title} ({reason})")),
            Outcome::Drawn(_) => None,
        })
        .collect();
    html! {
        @for outcome in outcomes {
            @if let Outcome::Drawn(built) = outcome { (built_block(built)) }
        }
        @if !missing.is_empty() {
            p.lacks { "Not drawn: " (missing.join("; ")) "." }
        }
    }
}

/// A claim as the page shows it, with its id, kind and verdict as attributes.
pub fn claim_markup(c: &Claim) -> Markup {
    let kind = match c.kind {
        Kind::Derived => "derived",
        Kind::Textbook { .. } => "textbook",
        Kind::Guide => "guide",
    };
    let verdict = c.verdict().map(|v| v.key()).unwrap_or("");
    html! {
        span.claim data-claim=(c.id) data-kind=(kind) data-verdict=(verdict) {
            @match &c.kind {
                Kind::Textbook { expectation, verdict } => {
                    strong { "Textbook:" } " " (expectation.trim()) " " strong { "Here:" } " "
                    (c.observed.trim().trim_end_matches('.')) " — "
                    span class={ "verdict-" (verdict.key()) } { (verdict.words()) } "."
                }
                _ => (c.observed),
            }
        }
    }
}

fn run_line(doc: &ResultsDocument) -> String {
    let when = super::utc_stamp(doc.started_unix_s, true);
    format!(
        "suite {} ({} points) · {} · {} · {} {} · run took {:.1} s{}",
        doc.suite.name,
        doc.records.len(),
        super::data::machine_label(doc),
        when,
        doc.tool.name,
        doc.tool.version,
        doc.wall_s,
        if doc.status == RunStatus::Interrupted {
            " · INTERRUPTED (partial results)"
        } else {
            ""
        }
    )
}

fn summary(v: &MachineView<'_>, multi: bool) -> Markup {
    let doc = &v.input.doc;
    let failed: Vec<_> = doc
        .records
        .iter()
        .filter(|r| r.error.is_some() || r.checksum.status == ChecksumOutcome::Mismatch)
        .collect();
    html! {
        @if multi { div.machine-label { (v.label) } }
        @if v.findings.is_empty() {
            p.omitted { "No finding could be computed: the results hold no pair of comparable timed points." }
        } @else {
            ol.findings {
                @for f in v.findings.iter().take(3) {
                    li { (claim_markup(&f.claim)) " " a href={ "#" (f.section) } { "→" } }
                }
            }
        }
        @if v.findings.len() > 3 {
            details {
                summary { "More findings (" (v.findings.len() - 3) ")" }
                ul { @for f in v.findings.iter().skip(3) { li { (claim_markup(&f.claim)) } } }
            }
        }
        @if doc.status == RunStatus::Interrupted {
            p.note { "This run was interrupted: " (doc.records.len()) " of " (doc.suite.points) " points were measured." }
        }
        @if !failed.is_empty() {
            details.note {
                summary { (failed.len()) " point(s) have no numbers" }
                ul { @for r in &failed {
                    li { (super::figures::point_label(r)) ": "
                        (r.error.as_ref().map(|e| format!("{}: {}", e.stage, e.message)).unwrap_or_else(|| "checksum mismatch".into())) }
                } }
            }
        }
        (precision(doc))
        p { small { "Findings are ranked by the size of the effect (a same-run ratio); every number is computed from this results file." } }
    }
}

/// The run's precision in a few sentences, and the points whose missing precision could change
/// a comparison.
fn precision(doc: &ResultsDocument) -> Markup {
    let summary = PrecisionSummary::of(doc);
    let sentences = summary.sentences(
        "`stridelab --sampling-budget 1` (the main job) or `stridelab run --sampling-budget S`",
    );
    let open: Vec<String> = summary
        .open
        .iter()
        .filter_map(|i| doc.records.iter().find(|r| r.index == *i))
        .map(super::figures::point_label)
        .collect();
    html! {
        @if !sentences.is_empty() {
            p data-claim="summary.precision" data-kind="derived" { (sentences.join(" ")) }
        }
        @if !open.is_empty() {
            details {
                summary { "Points whose interval leaves a comparison open (" (open.len()) ")" }
                ul { @for label in &open { li { (label) } } }
            }
        }
    }
}

/// What each kernel of a section does, from the explanations the caller handed in: the
/// textbook picture, which the notes under each figure hold against this run.
fn kernel_explanations(kernels: &[&str], known: Option<&super::Explanations>) -> Markup {
    html! {
        @for k in kernels {
            p.explain {
                span.kernel-name { (k) } " — "
                @match known.and_then(|m| m.get(*k)) {
                    Some(text) => { em { "textbook: " } (text) },
                    None => span.omitted { "(this build's catalogue does not describe this kernel)" },
                }
            }
        }
        @if kernels.is_empty() {
            p.explain { "The simulator splits every miss into compulsory (the first touch of a line), capacity (a fully associative cache of the same size would miss too) and conflict (the rest: too many lines mapped to the same sets)." }
        }
    }
}

fn infer_block(b: &Built) -> Markup {
    if b.figure.panels.is_empty() {
        return html! {
            div.look { @for c in &b.look_for { (claim_markup(c)) " " } }
            @for t in &b.tables { (table(t)) }
        };
    }
    built_block(b)
}

/// A drawn figure: the image (its title is drawn in it), the provenance, what to look for,
/// the notes and the tables.
fn built_block(b: &Built) -> Markup {
    let png = format!("{}.png", b.figure.id);
    let svg = format!("{}.svg", b.figure.id);
    html! {
        figure id=(b.figure.id) {
            // The title and provenance are drawn in the image (so a figure file stands alone);
            // the page repeats them only as the image's alternative text.
            a href=(svg) { img src=(png) alt={ (b.figure.title) ". " (b.figure.provenance) }; }
            figcaption { a href=(svg) { "SVG" } " · " a href=(png) { "PNG" } }
        }
        div.look {
            strong { "What to look for" }
            ul.claims { @for c in &b.look_for { li { (claim_markup(c)) } } }
        }
        @for n in &b.notes { p.note { (n) } }
        @for t in &b.tables { (table(t)) }
    }
}

/// A table; any cell that is not a finite number's rendering is passed through as text.
pub fn table(t: &Table) -> Markup {
    html! {
        details open[t.rows.len() <= 12] {
            summary { (t.caption) " (" (t.rows.len()) " rows)" }
            div.table-wrap {
                table {
                    thead { tr { @for h in &t.headers { th { (h) } } } }
                    tbody { @for row in &t.rows { tr { @for c in row { td { (c) } } } } }
                }
            }
        }
    }
}

fn json_str(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => "—".into(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Bool(b)) => if *b { "yes" } else { "no" }.into(),
        Some(Value::Number(n)) => n.to_string(),
        Some(other) => other.to_string(),
    }
}

/// A perf event's recorded availability in words: `available`, or `unavailable: <reason>`
/// (the manifest stores `{"status": .., "reason": ..}`).
fn availability(v: Option<&Value>) -> String {
    let Some(Value::Object(fields)) = v else {
        return json_str(v);
    };
    let status = json_str(fields.get("status"));
    match fields.get("reason").filter(|r| !r.is_null()) {
        Some(reason) => format!("{status}: {}", json_str(Some(reason))),
        None => status,
    }
}

fn manifest(doc: &ResultsDocument) -> Markup {
    let info = &doc.info;
    let caches = super::data::manifest_levels(doc);
    let caches_raw = info.get("caches").and_then(|c| c.as_array());
    let notes: Vec<String> = info
        .get("cache_notes")
        .and_then(|n| n.as_array())
        .map(|a| a.iter().map(|x| json_str(Some(x))).collect())
        .unwrap_or_default();
    let events = info.get("perf_events").and_then(|e| e.as_array());
    let counters_available = doc
        .records
        .iter()
        .find_map(|r| r.counters.as_ref())
        .map(|c| (c.hardware.available, c.hardware.reason.clone()));
    let simulated = info.get("simulated_caches").filter(|v| !v.is_null());
    let build = info.get("build");
    let pinning = info.get("pinning");
    let pinned_points = doc
        .records
        .iter()
        .filter(|r| !r.pinning.threads.is_empty() && r.pinning.threads.iter().all(|t| t.pinned))
        .count();
    let huge: Vec<u64> = doc
        .records
        .iter()
        .filter_map(|r| r.huge_pages.as_ref().and_then(|h| h.anon_huge_bytes))
        .collect();
    html! {
        @if caches_raw.is_none() {
            p.note { "This results file has no cache list in its manifest; the figures use the geometry recorded with the simulated misses." }
        }
        table {
            tbody {
                tr { th { "CPU" } td { (json_str(info.get("cpu_model"))) } }
                tr { th { "logical CPUs" } td { (json_str(info.get("logical_cpus"))) } }
                tr { th { "OS / arch" } td { (json_str(info.get("os"))) " / " (json_str(info.get("arch"))) } }
                tr { th { "page size" } td { (info.get("page_size").and_then(|v| v.as_u64()).map(|p| format_bytes(p as f64)).unwrap_or_else(|| "—".into())) } }
                tr { th { "transparent huge pages" } td { "mode " (json_str(info.get("thp_mode"))) "; requested for buffers: " (if doc.method.huge_pages_requested { "yes" } else { "no" })
                    @if let Some(max) = huge.iter().max() { "; AnonHugePages seen: up to " (format_bytes(*max as f64)) } } }
                tr { th { "pinning" } td {
                    (pinning.and_then(|p| p.get("works")).map(|w| if w.as_bool() == Some(true) { "works" } else { "does not work" }).unwrap_or("—"))
                    ": " (json_str(pinning.and_then(|p| p.get("detail"))))
                    "; " (pinned_points) " of " (doc.records.len()) " points ran with every thread pinned" } }
                tr { th { "counters" } td {
                    @match &counters_available {
                        Some((true, _)) => "hardware counters available: miss rates can be measured",
                        Some((false, reason)) => { "hardware counters unavailable (" (reason.clone().unwrap_or_default()) "): miss rates in this report are simulated" },
                        None => "no counter data in the records: miss rates in this report are simulated",
                    }
                } }
                tr { th { "build" } td {
                    "stridelab " (json_str(build.and_then(|b| b.get("crate_version"))))
                    ", profile " (json_str(build.and_then(|b| b.get("profile"))))
                    ", " (json_str(build.and_then(|b| b.get("rustc"))).replace("—", "rustc unknown"))
                    ", target features: " (build.and_then(|b| b.get("target_features")).and_then(|f| f.as_array()).map(|a| a.iter().map(|x| json_str(Some(x))).collect::<Vec<_>>().join(" ")).filter(|s| !s.is_empty()).unwrap_or_else(|| "baseline".into()))
                } }
            }
        }
        @if !caches.is_empty() {
            table {
                caption { "Cache geometry (as detected)" }
                thead { tr { th { "level" } th { "kind" } th { "size" } th { "ways" } th { "line" } th { "sets" } th { "shared by CPUs" } th { "source" } th { "warnings" } } }
                tbody { @for l in &caches {
                    tr {
                        td { (l.name) } td { (l.kind.to_string()) } td { (format_bytes(l.size as f64)) }
                        td { (l.ways) } td { (l.line) " B" } td { (l.sets) }
                        td { (l.shared_cpus.clone().unwrap_or_else(|| "—".into())) }
                        td { (l.source.to_string()) }
                        td.warn { (l.warnings.join("; ")) }
                    }
                } }
            }
        }
        @if let Some(sim) = simulated { p.note { "Simulated with a different hierarchy than detected: " code { (sim.to_string()) } } }
        @for n in &notes { p.note { (n) } }
        @if let Some(events) = events {
            table {
                caption { "Performance counters (probed at startup)" }
                thead { tr { th { "event" } th { "kind" } th { "availability" } } }
                tbody { @for e in events {
                    tr { td { (json_str(e.get("name"))) } td { (if e.get("hardware") == Some(&Value::Bool(true)) { "hardware" } else { "software" }) } td { (availability(e.get("availability"))) } }
                } }
            }
        }
        @if caches_raw.is_none() && events.is_none() {
            details { summary { "Raw manifest" } pre { (serde_json::to_string_pretty(info).unwrap_or_default()) } }
        }
    }
}

fn method_prose() -> Markup {
    html! {
        p { "Every number says where it came from. " strong { "Timed" } ": wall-clock time of real runs on this machine — warm-up, then repeated samples, each long enough to dwarf the timer; the tables give the median and a bootstrap confidence interval of the median. "
            strong { "Measured" } ": hardware or software performance counters (only where a PMU exists). "
            strong { "Simulated" } ": the address stream of one run fed to a set-associative LRU model of the recorded geometry (cachegrind semantics: write-allocate, a miss looks up the next level, write-backs not counted), with a 3C split. "
            strong { "Model" } ": the analytic set/GCD model — a stride of s bytes over a cache of S sets and L-byte lines uses S / gcd(s/L, S) sets, and a set overflows once more than ways × that many lines are live: a repeated pass then misses by conflict while the lines fit the whole cache, by capacity once they outnumber it (the 3C split's words); drawn dashed next to the data." }
        p { "Bandwidth kernels are compared with a reference copy/read measured interleaved in the same run: the ratio divides out the speed of the machine and of the moment, which GB/s carry. Kernels are memory-bound on purpose (several accumulators), so a dependency chain of adds does not hide the cache effects." }
    }
}

fn method_table(doc: &ResultsDocument) -> Markup {
    let m = &doc.method;
    let prefixes = doc
        .records
        .iter()
        .filter(|r| r.simulated.as_ref().is_some_and(|s| s.scope.kind != "full"))
        .count();
    html! {
        table { tbody {
            tr { th { "warm-up per point" } td { (format_number(m.warmup_ms)) " ms" } }
            tr { th { "minimum sample" } td { (format_number(m.min_sample_ms)) " ms" } }
            tr { th { "samples per point" } td { (m.samples) } }
            tr { th { "confidence interval" } td { (format_number(m.confidence * 100.0)) "% bootstrap percentile, " (m.bootstrap_resamples) " resamples, seed " (m.bootstrap_seed) } }
            tr { th { "simulation cap" } td { (m.simulation_access_cap) " accesses per point (" (prefixes) " point(s) simulated in part)" } }
            tr { th { "suite" } td { (doc.suite.name) " (" (doc.suite.source) "): " (doc.suite.description) } }
        } }
    }
}
