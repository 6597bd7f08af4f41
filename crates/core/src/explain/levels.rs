//! `stridelab layout`'s cache part over a whole chosen geometry: every data level explained
//! ([`report::explain`](super::report::explain)), each with where it came from and its
//! warnings, and a [`LevelBrief`] for a level below the first that adds nothing to the levels
//! above it — every walk fits it, or every walk counts there what it counted above — so the
//! text can say that in a line. Both briefs are derived from the simulated counts, never
//! assumed from the sizes: a larger level can still conflict where a smaller one did not.

use serde::Serialize;

use crate::cache::geometry::{ChosenGeometry, GeometrySource, level_warnings};
use crate::explain::cache::ViewCacheError;
use crate::explain::padding::ViewChain;
use crate::explain::report::{LevelBrief, LevelReport, explain};
use crate::layout::Layout;

/// One level of the chosen geometry, explained or not.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum LevelEntry {
    Explained(Box<LevelReport>),
    /// A level of the base geometry the analysis cannot take (too many sets or bytes per
    /// way), with why; a level the user gave that way is an error instead.
    Unavailable {
        level: String,
        unavailable: String,
        /// `None` when no level is known at all.
        source: Option<GeometrySource>,
        warnings: Vec<String>,
    },
}

impl LevelEntry {
    pub fn report(&self) -> Option<&LevelReport> {
        match self {
            LevelEntry::Explained(report) => Some(report.as_ref()),
            LevelEntry::Unavailable { .. } => None,
        }
    }
}

/// Every data level of a chosen geometry explained, with where they came from.
#[derive(Debug, Clone, Serialize)]
pub struct GeometryExplanation {
    /// Where each level came from, in words (`L1d, L3 from this machine (sysfs); L2 from
    /// --cache (replacing this machine's 2 MiB 16-way)`), as `sim` says it.
    pub geometry_source: String,
    /// Every level's warnings, each naming its level.
    pub warnings: Vec<String>,
    /// One entry per data level, innermost first.
    pub caches: Vec<LevelEntry>,
}

impl GeometryExplanation {
    /// No level to explain: this machine's geometry is unknown and no option gave one.
    pub fn unknown() -> Self {
        GeometryExplanation {
            geometry_source: "none: this machine's cache geometry is unknown".to_string(),
            warnings: Vec::new(),
            caches: vec![LevelEntry::Unavailable {
                level: "L1d".to_string(),
                unavailable: "this machine's cache geometry is unknown; give one, e.g. --cache \
                              L1d=48K,12,64 or --preset design-vm"
                    .to_string(),
                source: None,
                warnings: Vec::new(),
            }],
        }
    }
}

/// `layout` on every level of `chosen`, each with its brief. A level `--cache` gave that the
/// analysis cannot take, or a stride beyond 64-bit byte addresses, is an error; a base level
/// the analysis cannot take is listed as unavailable, with why.
pub fn explain_geometry(
    layout: &Layout,
    chain: &ViewChain,
    itemsize: u64,
    chosen: &ChosenGeometry,
) -> Result<GeometryExplanation, ViewCacheError> {
    let mut caches: Vec<LevelEntry> = Vec::with_capacity(chosen.levels.len());
    for level in &chosen.levels {
        let entry = match explain(layout, chain, itemsize, level) {
            Ok(mut report) => {
                let above = caches.iter().rev().find_map(LevelEntry::report);
                report.brief = brief(&report, above);
                LevelEntry::Explained(Box::new(report))
            }
            Err(err @ ViewCacheError::TooLarge { .. })
                if level.source != GeometrySource::Override =>
            {
                LevelEntry::Unavailable {
                    level: level.name.clone(),
                    unavailable: err.to_string(),
                    source: Some(level.source),
                    warnings: level.warnings.clone(),
                }
            }
            Err(err) => return Err(err),
        };
        caches.push(entry);
    }
    Ok(GeometryExplanation {
        geometry_source: chosen.describe(),
        warnings: chosen.levels.iter().flat_map(level_warnings).collect(),
        caches,
    })
}

/// The brief of `report` below `above` (the nearest level above that was explained), or
/// `None` when it is to be explained in full: it is the first level, a walk disagrees with
/// its model or was not simulated, padding is advised, or its counts differ from above's.
pub fn brief(report: &LevelReport, above: Option<&LevelReport>) -> Option<LevelBrief> {
    let above = above?;
    let plain = report.padding.is_none()
        && !report.walks.is_empty()
        && report
            .walks
            .iter()
            .all(|w| w.disagreement.is_none() && w.simulated_note.is_none());
    if !plain {
        return None;
    }
    let all_fit = report.cache.fits != Some(false)
        && report.walks.iter().all(|w| {
            !w.capped
                && w.second_pass.is_some_and(|p| p.misses == 0)
                && w.first_pass.is_none_or(|p| p.misses == p.compulsory)
        });
    if all_fit {
        return Some(LevelBrief::AllFit {
            walks: report.walks.len(),
        });
    }
    let same = report.walks.len() == above.walks.len()
        && report.walks.iter().zip(&above.walks).all(|(w, a)| {
            (w.walk, w.capped, w.first_pass, w.second_pass)
                == (a.walk, a.capped, a.first_pass, a.second_pass)
        });
    same.then(|| LevelBrief::SameAs {
        level: match &above.brief {
            Some(LevelBrief::SameAs { level }) => level.clone(),
            _ => above.cache.level.clone(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::geometry::{Geometry, GeometryChoice, parse_cache_override};
    use crate::layout::expr::{StepResult, evaluate_layout};

    /// `layout` of `text` on the levels `--cache` gives (no other level known).
    fn explained(text: &str, caches: &[&str]) -> GeometryExplanation {
        let (layout, _) = evaluate_layout(text).unwrap();
        let steps: Vec<StepResult> = Vec::new();
        let chain = ViewChain {
            text,
            steps: &steps,
        };
        let chosen = GeometryChoice {
            caches: caches
                .iter()
                .map(|c| parse_cache_override(c).unwrap())
                .collect(),
            ..GeometryChoice::default()
        }
        .resolve(&Geometry::default())
        .unwrap();
        explain_geometry(&layout, &chain, 8, &chosen).unwrap()
    }

    fn briefs(e: &GeometryExplanation) -> Vec<Option<LevelBrief>> {
        e.caches
            .iter()
            .map(|c| c.report().unwrap().brief.clone())
            .collect()
    }

    const ZEN3: [&str; 3] = ["L1d=32K,8,64", "L2=512K,8,64", "L3=32M,16,64"];

    #[test]
    fn a_level_is_brief_only_where_its_counts_say_it_adds_nothing() {
        use LevelBrief::{AllFit, SameAs};
        // (view, the brief of each level: L1d, L2, L3 of a Zen 3)
        let table: [(&str, [Option<LevelBrief>; 3]); 4] = [
            // A small transpose fits everywhere: the first level in full, the others brief.
            (
                "arange(12).view(3,4).T",
                [None, Some(AllFit { walks: 3 }), Some(AllFit { walks: 3 })],
            ),
            // A 1024×1024 column walk: capacity in L1d, conflict in L2 (8 sets of 8 ways,
            // padding advised), fits the L3.
            (
                "arange(1024*1024).view(1024,1024)[:, 0]",
                [None, None, Some(AllFit { walks: 1 })],
            ),
            // The same column with rows padded to 1032: capacity in L1d, fits L2 and L3.
            (
                "arange(1024*1032).view(1024,1032)[:, 0]",
                [None, Some(AllFit { walks: 1 }), Some(AllFit { walks: 1 })],
            ),
            // 32 MiB read in order: pass 1 only (capped), the same first touches everywhere.
            (
                "arange(4096*1024)",
                [
                    None,
                    Some(SameAs {
                        level: "L1d".into(),
                    }),
                    Some(SameAs {
                        level: "L1d".into(),
                    }),
                ],
            ),
        ];
        for (view, expected) in table {
            let e = explained(view, &ZEN3);
            assert_eq!(briefs(&e), expected, "{view}");
        }
    }

    #[test]
    fn every_level_is_listed_with_its_source_and_warnings() {
        let e = explained("arange(64).view(8,8)", &["L1d=32K,8,64", "L3=192M,16,64"]);
        assert_eq!(
            e.geometry_source,
            "L1d from --cache (no other level known); L3 from --cache (no other level known)"
        );
        let names: Vec<&str> = e
            .caches
            .iter()
            .map(|c| c.report().unwrap().cache.level.as_str())
            .collect();
        assert_eq!(names, ["L1d", "L3"]);
        // 192 MiB is implausible for one instance: kept, explained, and flagged.
        assert_eq!(e.warnings.len(), 1, "{:?}", e.warnings);
        assert!(e.warnings[0].starts_with("L3 192 MiB 16-way (override): implausible"));
        let l3 = e.caches[1].report().unwrap();
        assert_eq!(l3.warnings.len(), 1);
        assert_eq!(l3.source, GeometrySource::Override);
    }
}
