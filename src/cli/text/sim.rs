//! The text form of a simulated point ([`SimReport`]): counts per level, the 3C split of the
//! misses, and the analytic set/GCD model's verdict beside them (`harness::sim::model_words`). Counts print exact and grouped
//! (`16,777,216`), sizes exact (`4,104 B`, `48 KiB`), in columns as wide as their cells. A level
//! whose geometry has warnings gets a `warning:` line saying why, and its rows and model line
//! are marked [`DOUBTED`].

use std::fmt::Write as _;

use crate::cache::geometry::{CacheLevel, warning_lines};
use crate::cache::model::LevelPrediction;
use crate::cli::text::table::{Align, TextTable};
use crate::harness::catalogue_link::params_with_bytes;
use crate::harness::sim::model_words::model_sentence;
use crate::harness::sim::run::{LevelOutput, SimReport};
use crate::kernels::StridePattern;
use crate::units::{format_bytes_exact, format_count, format_share as percent};

/// The mark after a level's name on every row that uses a geometry with warnings.
pub const DOUBTED: &str = "!";

/// `L3!` for a level with warnings, `L1d` otherwise.
pub(crate) fn marked_name(name: &str, warnings: &[String]) -> String {
    if warnings.is_empty() {
        name.to_string()
    } else {
        format!("{name}{DOUBTED}")
    }
}

/// The tables a person reads: counts per level, the 3C split, and the model beside it.
pub fn sim_text(report: &SimReport) -> String {
    let mut text = String::new();
    let start = if report.warm { "warm" } else { "cold" };
    let _ = writeln!(
        text,
        "{} {} — simulated ({} replacement, {start} start, cachegrind semantics)",
        report.kernel,
        params_with_bytes(report.kernel, &report.params),
        report.policy.title()
    );
    let _ = writeln!(text, "caches: {}", report.geometry_source);
    let uses = format!("the rows marked {DOUBTED} simulate these levels");
    for line in warning_lines(&report.warnings, &uses) {
        let _ = writeln!(text, "{line}");
    }
    if let Some(note) = report.simulation_note {
        let _ = writeln!(text, "note: {note}");
    }
    let _ = writeln!(
        text,
        "{} accesses reach the first level\n",
        format_count(report.accesses)
    );
    counts_table(&mut text, &report.levels);
    causes_table(&mut text, &report.levels);
    match &report.pattern {
        None => {
            let _ = writeln!(
                text,
                "\nmodel: this kernel's order is random; the set/GCD model does not apply"
            );
        }
        Some(pattern) => {
            let _ = writeln!(text, "\nmodel (analytic) for {}", pattern.description);
            for (level, geometry) in report.levels.iter().zip(&report.geometry) {
                if let Some(model) = &level.model {
                    let _ = writeln!(text, "{}", model_line(model, geometry, pattern));
                }
            }
        }
    }
    text
}

/// Counts per level: the table `sim` prints for a kernel and for a trace.
pub(crate) fn counts_table(text: &mut String, levels: &[LevelOutput]) {
    let right = |h| (h, Align::Right);
    let mut table = TextTable::new(&[
        ("level", Align::Left),
        right("size"),
        right("ways"),
        right("line"),
        right("sets"),
        right("loads"),
        right("stores"),
        right("load miss"),
        right("store miss"),
        right("miss"),
    ]);
    for (level, warnings) in levels.iter().map(|l| (&l.counts, &l.warnings)) {
        table.push(vec![
            marked_name(&level.name, warnings),
            format_bytes_exact(level.size),
            format_count(level.ways),
            format!("{} B", format_count(level.line)),
            format_count(level.sets),
            format_count(level.loads),
            format_count(level.stores),
            format_count(level.load_misses),
            format_count(level.store_misses),
            percent(level.misses, level.loads + level.stores),
        ]);
    }
    text.push_str(&table.render(""));
}

/// The 3C split of each level's misses.
pub(crate) fn causes_table(text: &mut String, levels: &[LevelOutput]) {
    let _ = writeln!(text, "\nmisses by cause (3C, simulated)");
    let right = |h| (h, Align::Right);
    let mut table = TextTable::new(&[
        ("level", Align::Left),
        right("misses"),
        right("compulsory"),
        right("capacity"),
        right("conflict"),
    ]);
    for (level, warnings) in levels.iter().map(|l| (&l.counts, &l.warnings)) {
        let cell = |n: u64| format!("{} ({})", format_count(n), percent(n, level.misses));
        table.push(vec![
            marked_name(&level.name, warnings),
            format_count(level.misses),
            cell(level.compulsory),
            cell(level.capacity),
            cell(level.conflict),
        ]);
    }
    text.push_str(&table.render(""));
}

fn model_line(model: &LevelPrediction, level: &CacheLevel, pattern: &StridePattern) -> String {
    format!(
        "{:<5} {}",
        marked_name(&level.name, &level.warnings),
        model_sentence(model, level, pattern)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::geometry::{ChosenGeometry, GeometryChoice, parse_cache_override};
    use crate::cache::sim::Policy;
    use crate::harness::sim::run::{DEFAULT_MAX_ACCESSES, SimRequest, simulate_point};

    fn simulate(geometry: &ChosenGeometry, words: &[String], policy: Policy, warm: bool) -> String {
        let report = simulate_point(&SimRequest {
            kernel: "conflict",
            words,
            geometry,
            policy,
            warm,
            max_accesses: DEFAULT_MAX_ACCESSES,
            max_sim_memory: 1 << 30,
            copies: crate::kernels::copy_planner::planner_for_tests(),
            tlb: None,
            prefetch: None,
        })
        .unwrap();
        sim_text(&report)
    }

    #[test]
    fn the_text_names_the_policy_the_start_and_the_model() {
        let words = vec!["stride=4096".to_string(), "count=16".to_string()];
        let geometry = ChosenGeometry::preset("design-vm").unwrap();
        let text = simulate(&geometry, &words, Policy::random(7), true);
        assert!(
            text.contains("random (seed 7) replacement, warm start"),
            "{text}"
        );
        assert!(text.contains("misses by cause (3C, simulated)"), "{text}");
        assert!(text.contains("model (analytic) for"), "{text}");
        assert!(!text.contains("warning"), "{text}");
    }

    #[test]
    fn the_model_line_says_which_set_count_it_prints_and_where_the_caches_came_from() {
        // 16 slots 4 KiB apart: the L1d's 64 sets collapse to 1; the L2's 2048 to 32 by the
        // closed form, of which 16 accesses reach 16.
        let words = vec!["stride=512".to_string(), "count=16".to_string()];
        let with_l1d = |preset: &str| GeometryChoice {
            caches: vec![parse_cache_override("L1d=32K,8,64").unwrap()],
            ..GeometryChoice::preset(preset)
        };
        // The L2's 32 sets of 8 (amd-zen4) or 16 (design-vm) ways hold 256 or 512 lines.
        let cases = [
            (
                GeometryChoice::preset("amd-zen4"),
                "caches: L1d, L2, L3 from preset amd-zen4\n",
                257,
            ),
            (
                with_l1d("design-vm"),
                "caches: L2 from preset design-vm; L1d from --cache (replacing the preset's \
                 48 KiB 12-way)\n",
                513,
            ),
        ];
        for (choice, source, l2_onset) in cases {
            let geometry = choice.choose().unwrap();
            let text = simulate(&geometry, &words, Policy::LRU, false);
            assert!(text.contains(source), "{text}");
            assert!(
                text.contains("L1d   uses 1 of 64 sets (S/gcd(s/L, S) = 64/gcd(64, 64) = 1)"),
                "{text}"
            );
            assert!(
                text.contains(
                    "L2    uses 16 of 2,048 sets (one per access: 16 accesses; the stride \
                     would cycle through S/gcd(s/L, S) = 2048/gcd(64, 2048) = 32)"
                ),
                "{text}"
            );
            assert!(
                text.contains(&format!("(one would from access {l2_onset})")),
                "{text}"
            );
        }
    }

    #[test]
    fn a_level_with_warnings_is_named_with_the_reason_and_marked_on_every_row() {
        let words = vec!["stride=512".to_string(), "count=16".to_string()];
        // A 192 MiB L3 breaks rule 2 (no instance above 128 MiB).
        let geometry = GeometryChoice {
            caches: vec![parse_cache_override("L3=192M,16,64").unwrap()],
            ..GeometryChoice::preset("design-vm")
        }
        .choose()
        .unwrap();
        let text = simulate(&geometry, &words, Policy::LRU, false);
        assert!(
            text.contains("\nwarning: L3 192 MiB 16-way (override): implausible: 192 MiB"),
            "{text}"
        );
        assert!(
            text.contains("the rows marked ! simulate these levels as given"),
            "{text}"
        );
        let marked: Vec<&str> = text.lines().filter(|l| l.starts_with("L3!")).collect();
        assert_eq!(marked.len(), 3, "counts, causes, model: {text}");
        assert!(marked[2].starts_with("L3!   uses "), "{text}");
        assert!(!text.contains("L2!") && !text.contains("L1d!"), "{text}");
    }
}
