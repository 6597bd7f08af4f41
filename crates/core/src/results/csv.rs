//! CSV export of a results document: one row per point under a fixed header, for spreadsheets.
//!
//! The header never depends on the data (the first and last simulated cache levels fill the
//! `sim_first_*` / `sim_last_*` columns), so files from different runs line up; columns added
//! later go at the end, so older files line up with newer ones as far as they reach.

use super::schema::{ChecksumOutcome, PointRecord, ResultsDocument};
use crate::vocab::format_params;

/// The fixed CSV header.
pub const CSV_HEADER: &[&str] = &[
    "index",
    "kernel",
    "family",
    "params",
    "threads",
    "cpus",
    "checksum",
    "samples",
    "median_ns_per_run",
    "ci_low_ns_per_run",
    "ci_high_ns_per_run",
    "min_ns_per_run",
    "max_ns_per_run",
    "mad_ns_per_run",
    "ns_per_element",
    "gb_per_s",
    "reference",
    "reference_gb_per_s",
    "reference_ratio",
    "sim_first_level",
    "sim_first_miss_rate",
    "sim_first_compulsory",
    "sim_first_capacity",
    "sim_first_conflict",
    "sim_last_level",
    "sim_last_misses",
    "error",
    "precision_warnings",
];

/// Renders the document as CSV (header + one row per record), quoted where RFC 4180 needs it
/// by the `csv` crate.
pub fn to_csv(doc: &ResultsDocument) -> String {
    let mut writer = csv::Writer::from_writer(Vec::new());
    // Cannot fail: the sink is memory and every row has the header's width (a fixed array).
    writer.write_record(CSV_HEADER).expect("CSV into memory");
    for record in &doc.records {
        writer
            .write_record(record_fields(record))
            .expect("CSV into memory");
    }
    let bytes = writer.into_inner().expect("CSV into memory");
    String::from_utf8(bytes).expect("CSV of UTF-8 fields")
}

fn record_fields(r: &PointRecord) -> [String; CSV_HEADER.len()] {
    let opt = |v: Option<f64>| v.map(|x| x.to_string()).unwrap_or_default();
    let params = format_params(&r.params);
    let cpus = r
        .pinning
        .threads
        .iter()
        .map(|t| t.cpu.map(|c| c.to_string()).unwrap_or_else(|| "-".into()))
        .collect::<Vec<_>>()
        .join(" ");
    let checksum = match r.checksum.status {
        ChecksumOutcome::Ok => "ok",
        ChecksumOutcome::Mismatch => "mismatch",
        ChecksumOutcome::NotRun => "not-run",
    };
    let t = r.timing.as_ref();
    let s = t.map(|t| t.ns_per_run);
    let first = r.simulated.as_ref().and_then(|s| s.levels.first());
    let last = r.simulated.as_ref().and_then(|s| s.levels.last());
    [
        r.index.to_string(),
        r.kernel.clone(),
        serde_json::to_value(r.family)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default(),
        params,
        r.threads.to_string(),
        cpus,
        checksum.into(),
        s.map(|s| s.n.to_string()).unwrap_or_default(),
        opt(s.map(|s| s.median)),
        opt(s.map(|s| s.ci_low)),
        opt(s.map(|s| s.ci_high)),
        opt(s.map(|s| s.min)),
        opt(s.map(|s| s.max)),
        opt(s.map(|s| s.mad)),
        opt(t.map(|t| t.ns_per_element)),
        opt(t.and_then(|t| t.gb_per_s)),
        r.reference
            .as_ref()
            .map(|c| format!("{}:{}", c.reference, c.best_variant))
            .unwrap_or_default(),
        opt(r.reference.as_ref().map(|c| c.reference_gb_per_s)),
        opt(r.reference.as_ref().map(|c| c.ratio)),
        first.map(|l| l.name.clone()).unwrap_or_default(),
        opt(first.map(|l| l.miss_rate)),
        first.map(|l| l.compulsory.to_string()).unwrap_or_default(),
        first.map(|l| l.capacity.to_string()).unwrap_or_default(),
        first.map(|l| l.conflict.to_string()).unwrap_or_default(),
        last.map(|l| l.name.clone()).unwrap_or_default(),
        last.map(|l| l.misses.to_string()).unwrap_or_default(),
        r.error
            .as_ref()
            .map(|e| format!("{}: {}", e.stage, e.message))
            .unwrap_or_default(),
        t.and_then(|t| t.precision.as_ref())
            .map(|p| {
                let names: Vec<String> = p
                    .warnings
                    .iter()
                    .filter_map(|w| serde_json::to_value(w).ok()?.as_str().map(str::to_string))
                    .collect();
                names.join(" ")
            })
            .unwrap_or_default(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_has_the_header_width_and_quotes_commas() {
        let mut doc = crate::results::schema::tests::sample_document();
        doc.records[0].error = Some(crate::results::PointError {
            stage: "run".into(),
            message: "a, \"b\"".into(),
        });
        let csv = to_csv(&doc);
        let lines: Vec<_> = csv.lines().collect();
        assert_eq!(lines[0], CSV_HEADER.join(","));
        assert_eq!(lines.len(), 2);
        assert!(lines[1].ends_with("\"run: a, \"\"b\"\"\","), "{}", lines[1]);
        let timing = doc.records[0].timing.as_mut().unwrap();
        timing.precision.as_mut().unwrap().warnings = vec![
            crate::results::PrecisionWarning::Outliers,
            crate::results::PrecisionWarning::Drift,
        ];
        assert!(to_csv(&doc).trim_end().ends_with(",outliers drift"));
        assert!(lines[1].starts_with("0,row-sum,traverse,rows=1024,1,0,ok,3,1,"));
    }
}
