//! The L1 data-TLB parameter of `stridelab infer`: the reach the page-spread probe found
//! (against its packed control), held against the entries CPUID reports for the probe's small
//! pages, with the probe's interval and the confidence floor.

use crate::results::infer_doc::{Parameter, Point, Verdict, tlb_verdict};
use crate::results::tlb::DtlbLevel;
use crate::units::format_bytes as human_bytes;

use super::analysis::TlbEstimate;
use super::probe::SMALL_PAGE_BYTES;

/// The L1 DTLB's reach from the page-spread probe, held against the entries CPUID reports for
/// the probe's pages (`reported`): the probe's interval runs from the last page count that fit
/// to the one before the first slow count.
pub(super) fn tlb_parameter(
    spread: &[Point],
    packed: &[Point],
    tlb: Option<TlbEstimate>,
    reported: Option<&DtlbLevel>,
) -> Parameter {
    let page = SMALL_PAGE_BYTES as f64;
    let near: Vec<String> = tlb
        .map(|t| {
            spread
                .iter()
                .zip(packed)
                .filter(|(p, _)| p.x as usize + 12 >= t.entries && p.x as usize <= t.first_slow + 8)
                .map(|(p, c)| format!("{} pages {:.2} ns (packed {:.2})", p.x, p.ns, c.ns))
                .collect()
        })
        .unwrap_or_default();
    let mut evidence = vec![format!(
        "one line per {} KiB page (lines staggered over the L1 sets) vs the same lines packed: {}",
        SMALL_PAGE_BYTES / 1024,
        near.join(", ")
    )];
    if let Some(t) = tlb {
        evidence.push(format!(
            "{} pages fit, {} slow; packed control {}",
            t.entries,
            t.first_slow,
            if t.is_tlb {
                "stays fast: a TLB effect"
            } else {
                "jumps too: NOT a TLB effect"
            }
        ));
    }
    if let Some(r) = reported {
        evidence.push(format!(
            "CPUID ({}): the first-level data TLB holds {} entries for {} pages, a reach of {}",
            r.source,
            r.entries,
            human_bytes(r.page as f64),
            human_bytes(r.reach() as f64)
        ));
    }
    let found = tlb.filter(|t| t.is_tlb);
    let value = found.map(|t| t.reach_bytes as f64);
    let interval = found.map(|t| {
        let last_fitting = t.entries.max(t.first_slow.saturating_sub(1));
        [t.entries as f64 * page, last_fitting as f64 * page]
    });
    // Only a TLB-sized page compares: the probe spreads its lines over small pages.
    let reported_reach = reported
        .filter(|r| r.page == SMALL_PAGE_BYTES as u64)
        .map(|r| r.reach() as f64);
    let verdict = match (tlb, interval) {
        (Some(t), _) if !t.is_tlb => Verdict::NotInferred,
        (_, Some(i)) => tlb_verdict(value, i, reported_reach),
        _ => Verdict::NotInferred,
    };
    let own = tlb.map_or(0.0, |t| t.confidence);
    let mut p = Parameter {
        key: "l1_dtlb_reach".into(),
        name: "L1 DTLB reach (TLB)".into(),
        unit: "bytes".into(),
        value,
        is_upper_bound: false,
        source: "timed".into(),
        confidence: own,
        reported: reported_reach,
        verdict,
        interval,
        is_tlb: true,
        evidence,
        note: tlb.map(|t| {
            format!(
                "≈ {} entries × {} KiB pages; a TLB, not a cache",
                t.entries,
                SMALL_PAGE_BYTES / 1024
            )
        }),
    };
    p.hold_to_confidence(Some(&format!(
        "the jump's own {own:.2} (one curve of interleaved rounds)"
    )));
    p
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::infer::analysis;

    /// A recorded curve: `tests/data/NAME` (a capacity sweep) or the curves of
    /// `tests/fixtures/infer.json`.
    pub(in crate::infer) fn recorded_points(path: &str, field: &str) -> Vec<Point> {
        // The workspace root holds the test data, two floors above this crate.
        let file = format!("{}/../../{path}", env!("CARGO_MANIFEST_DIR"));
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let at = field.split('.').fold(&doc, |v, key| &v[key]);
        serde_json::from_value(at.clone()).unwrap()
    }

    /// The recorded page-spread probe (72 pages fit, 76 slow, the packed control flat) held
    /// against the L1 DTLB entries CPUID might report.
    #[test]
    fn the_recorded_dtlb_reach_is_held_against_cpuids_entries() {
        use Verdict::*;
        let fixture = "tests/fixtures/infer.json";
        let spread = recorded_points(fixture, "curves.tlb_spread");
        let packed = recorded_points(fixture, "curves.tlb_packed");
        let tlb = analysis::tlb_reach(&spread, &packed, SMALL_PAGE_BYTES);
        assert_eq!(tlb.map(|t| (t.entries, t.first_slow)), Some((72, 76)));
        let cpuid = |page: u64, entries: u64| DtlbLevel {
            level: 1,
            page,
            entries,
            source: "cpuid 0x8000_0005".into(),
        };
        // (what CPUID reports, verdict)
        let table = [
            (Some(cpuid(4096, 72)), Agrees),
            (Some(cpuid(4096, 75)), Agrees),
            (Some(cpuid(4096, 64)), Uncertain),
            (Some(cpuid(4096, 48)), Disagrees),
            (Some(cpuid(4096, 128)), Disagrees),
            (Some(cpuid(2 << 20, 72)), NotReported),
            (None, NotReported),
        ];
        for (reported, verdict) in table {
            let p = tlb_parameter(&spread, &packed, tlb, reported.as_ref());
            assert_eq!(p.verdict, verdict, "{reported:?}: {p:#?}");
            assert_eq!(p.interval, Some([72.0 * 4096.0, 75.0 * 4096.0]));
            if let Some(r) = reported.filter(|r| r.page == 4096) {
                assert_eq!(p.reported, Some(r.entries as f64 * 4096.0));
                let line = format!("holds {} entries for 4 KiB pages", r.entries);
                assert!(
                    p.evidence.iter().any(|e| e.contains(&line)),
                    "{:?}",
                    p.evidence
                );
            }
        }
        // A jump the packed control shares is no TLB: nothing inferred, whatever CPUID says.
        let not_tlb = tlb.map(|t| TlbEstimate {
            is_tlb: false,
            confidence: 0.3,
            ..t
        });
        let p = tlb_parameter(&spread, &packed, not_tlb, Some(&cpuid(4096, 72)));
        assert_eq!((p.verdict, p.value), (NotInferred, None));
    }
}
