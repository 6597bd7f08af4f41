//! `stridelab layout`'s verdicts held against the numbers printed beside them, on the real
//! binary: for a C-contiguous matrix, a sub-sampled block, a single column, a transpose and a
//! diagonal, every verdict and model expectation must agree with the simulated pass it sits
//! beside, and the padding advice's claimed sets must be those of the padded layout, counted
//! here element by element.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};

/// "This machine": the design-vm sysfs tree (L1d 48 KiB 12-way, L2 2 MiB, a "480 MiB" L3).
const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/sysfs-design-vm"
);

/// A matrix of 256 × 256 f64 whose rows are `ld` elements apart.
const BASE: &str = "arange(65536).view(256,256)";

/// The views, and for each walk the padding advice may name (by its number in the output),
/// the storage elements it visits when the rows are `ld` apart.
type Walk = fn(u64) -> Vec<u64>;

fn views() -> Vec<(String, Vec<(usize, Walk)>)> {
    vec![
        (
            BASE.to_string(),
            vec![(2, |ld| (0..256).map(|r| r * ld).collect())],
        ),
        (
            format!("{BASE}[::16, :96]"),
            vec![
                (2, |ld| (0..16).map(|r| 16 * r * ld).collect()),
                (1, |ld| {
                    (0..16)
                        .flat_map(|r| (0..96).map(move |c| 16 * r * ld + c))
                        .collect()
                }),
            ],
        ),
        (
            format!("{BASE}[:, 0]"),
            vec![(1, |ld| (0..256).map(|r| r * ld).collect())],
        ),
        (
            format!("{BASE}.T"),
            vec![
                (3, |ld| (0..256).map(|r| r * ld).collect()),
                (1, |ld| {
                    (0..256)
                        .flat_map(|c| (0..256).map(move |r| r * ld + c))
                        .collect()
                }),
            ],
        ),
        (format!("{BASE}.diagonal()"), vec![]),
    ]
}

fn layout(args: &[&str]) -> String {
    let out = common::stridelab_command()
        .arg("layout")
        .args(args)
        .output()
        .expect("the stridelab binary runs");
    assert_eq!(out.status.code(), Some(0), "{args:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// One simulated pass as printed: accesses, misses, compulsory, capacity, conflict.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Pass {
    accesses: u64,
    misses: u64,
    compulsory: u64,
    capacity: u64,
    conflict: u64,
}

/// The numbers of a text, grouping commas removed, in order.
fn numbers(text: &str) -> Vec<u64> {
    text.split(|c: char| !c.is_ascii_digit() && c != ',')
        .map(|t| t.replace(',', ""))
        .filter(|t| !t.is_empty())
        .map(|t| t.parse().unwrap())
        .collect()
}

fn pass(text: &str) -> Pass {
    let n = numbers(text);
    match n[..] {
        [accesses, 0] => Pass {
            accesses,
            ..Pass::default()
        },
        [accesses, misses, compulsory, capacity, conflict] => Pass {
            accesses,
            misses,
            compulsory,
            capacity,
            conflict,
        },
        _ => panic!("unreadable pass: {text}"),
    }
}

/// A walk block of one level's section.
#[derive(Debug, Default)]
struct WalkBlock {
    title: String,
    model: String,
    first: Option<Pass>,
    second: Option<Pass>,
    verdicts: Vec<String>,
    differs: bool,
}

/// One level's section: its sets and ways, the walks, and the padding lines.
#[derive(Debug, Default)]
struct Section {
    header: String,
    sets: u64,
    ways: u64,
    /// The one line of a level that adds nothing to the levels above, instead of its walks.
    brief: Option<String>,
    walks: Vec<WalkBlock>,
    padding: Vec<String>,
}

fn sections(text: &str) -> Vec<Section> {
    let mut out: Vec<Section> = Vec::new();
    let mut in_padding = false;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        if let Some(rest) = line.strip_prefix("cache     ") {
            // `L1d 48 KiB, 12-way, 64 sets of 64 B lines (768 lines); …`
            let ways = rest
                .split("-way")
                .next()
                .unwrap()
                .rsplit(' ')
                .next()
                .unwrap();
            let sets = rest
                .split(" sets of")
                .next()
                .unwrap()
                .rsplit(' ')
                .next()
                .unwrap();
            out.push(Section {
                header: rest.to_string(),
                sets: sets.parse().unwrap(),
                ways: ways.parse().unwrap(),
                ..Section::default()
            });
            in_padding = false;
            continue;
        }
        let Some(section) = out.last_mut() else {
            continue;
        };
        if let Some(rest) = line.strip_prefix("walks     ") {
            if !rest.starts_with("each simulated on") {
                section.brief = Some(rest.to_string());
            }
        } else if line.starts_with("walk ") {
            section.walks.push(WalkBlock {
                title: line.to_string(),
                ..WalkBlock::default()
            });
            in_padding = false;
        } else if line.starts_with("padding") || line.starts_with("instead") {
            in_padding = true;
            section.padding.push(line.to_string());
        } else if in_padding {
            section.padding.push(line.to_string());
        } else if let Some(walk) = section.walks.last_mut() {
            if let Some(rest) = line.strip_prefix("  model   ") {
                walk.model = rest.to_string();
            } else if let Some(rest) = line.strip_prefix("  pass 1  ") {
                walk.first = Some(pass(rest));
            } else if let Some(rest) = line.strip_prefix("  pass 2  ") {
                walk.second = Some(pass(rest));
            } else if let Some(rest) = line.strip_prefix("  verdict ") {
                walk.verdicts.push(rest.to_string());
            } else if line.starts_with("  differs") {
                walk.differs = true;
            }
        }
    }
    out
}

/// Every verdict and expectation of `walk` against its simulated passes.
fn check_walk(context: &str, w: &WalkBlock) {
    let ctx = format!("{context} / {}", w.title);
    assert!(!w.differs, "{ctx}: the simulator disagrees with the model");
    for v in &w.verdicts {
        if v.starts_with("pass 1: every miss is a first touch") {
            let p = w.first.expect("pass 1 printed");
            assert_eq!(p.misses, p.compulsory, "{ctx}: {v}");
            assert_eq!(numbers(v)[1], p.compulsory, "{ctx}: {v}");
        } else if v.starts_with("pass 1: besides") {
            let p = w.first.expect("pass 1 printed");
            let n = numbers(v);
            assert_eq!(
                (n[1], n[2]),
                (p.compulsory, p.misses - p.compulsory),
                "{ctx}: {v}"
            );
            assert_eq!(v.contains("conflict"), p.conflict > 0, "{ctx}: {v}");
            assert_eq!(v.contains("capacity"), p.capacity > 0, "{ctx}: {v}");
        } else {
            let p = w.second.expect("a pass-2 verdict has a pass 2 beside it");
            if v.starts_with("pass 2 hits on every access") {
                assert_eq!(p.misses, 0, "{ctx}: {v}");
            } else if v.starts_with("every access of pass 2 is a conflict miss") {
                assert!(p.conflict > 0 && p.conflict == p.accesses, "{ctx}: {v}");
            } else if v.starts_with("every access of pass 2 misses") {
                assert_eq!(p.misses, p.accesses, "{ctx}: {v}");
            } else if let Some(rest) = v.strip_prefix("pass 2 misses ") {
                let n = numbers(rest);
                assert_eq!((n[0], n[1]), (p.misses, p.accesses), "{ctx}: {v}");
            } else {
                panic!("{ctx}: a verdict this test does not know: {v}");
            }
            if v.contains("conflict") {
                assert!(p.conflict > 0, "{ctx}: {v} beside {p:?}");
            }
        }
    }
    // The model's expectation, where exact, is what the simulator counted.
    let second = w.second;
    if w.model.contains("pass 2 should hit on every access") {
        assert_eq!(second.map(|p| p.misses), Some(0), "{ctx}: {}", w.model);
    } else if let Some(rest) = w.model.split("pass 2 should miss on ").nth(1) {
        let p = second.expect("pass 2");
        // `all 256 lines (256 conflict)` or `the 192 lines of the 12 sets over 12 ways (…)`
        assert_eq!(p.misses, numbers(rest)[0], "{ctx}: {}", w.model);
        if rest.contains("conflict") {
            assert!(p.conflict > 0, "{ctx}: {}", w.model);
        }
    }
}

/// Distinct sets and most lines per set of the elements `elements` (f64, 64 B lines).
fn brute(elements: &[u64], sets: u64) -> (u64, u64) {
    let lines: BTreeSet<u64> = elements.iter().map(|e| e * 8 / 64).collect();
    let mut per_set: BTreeMap<u64, u64> = BTreeMap::new();
    for l in lines {
        *per_set.entry(l % sets).or_default() += 1;
    }
    (per_set.len() as u64, *per_set.values().max().unwrap())
}

/// The padding lines' claims: the leading dimension, and each padded walk's sets and most
/// lines per set, against a count of the padded layout's elements.
fn check_padding(context: &str, s: &Section, walks: &[(usize, Walk)]) {
    let Some(head) = s.padding.first() else {
        return;
    };
    assert!(
        head.contains("are 256 elements (2 KiB = 32 lines) apart: its leading dimension"),
        "{context}: {head}"
    );
    let ld = numbers(head.split("With ").nth(1).expect("a padded ld"))[0];
    for line in &s.padding[1..] {
        let line = line.trim_start();
        let number: usize = numbers(line)[0] as usize;
        let (_, elements) = walks
            .iter()
            .find(|(n, _)| *n == number)
            .unwrap_or_else(|| panic!("{context}: advice for an unexpected walk: {line}"));
        // `… 256 lines in 64 of 64 sets, at most 4 per set for 12 ways; …`
        let claim = line
            .split(" lines in ")
            .nth(1)
            .expect("the padded walk's sets");
        let n = numbers(claim);
        let (claimed_sets, sets, most, ways) = (n[0], n[1], n[2], n[3]);
        assert_eq!((sets, ways), (s.sets, s.ways), "{context}: {line}");
        assert_eq!(
            (claimed_sets, most),
            brute(&elements(ld), s.sets),
            "{context}: {line} (ld {ld})"
        );
        let after = pass(
            line.split("pass 2 simulated: ")
                .nth(1)
                .unwrap()
                .split(" (was")
                .next()
                .unwrap(),
        );
        if line.contains("a step is") {
            // A walk the advice is for: within the ways, and a pass 2 without misses.
            assert!(most <= ways, "{context}: {line}");
            assert_eq!(after.misses, 0, "{context}: {line}");
        } else {
            // The view's own order, shown for what the padding does to it: fewer misses.
            let before = numbers(line.split("(was ").nth(1).expect("the misses before"))[0];
            assert!(after.misses < before, "{context}: {line}");
        }
    }
}

#[test]
fn verdicts_and_advice_agree_with_the_numbers_beside_them() {
    // (cache options, the levels they give); the first on the design-vm sysfs tree, whose L1d
    // the option replaces by the same geometry.
    for (args, levels_given) in [
        (vec!["--cache", "L1d=48K,12,64", "--sysfs-root", FIXTURE], 3),
        (vec!["--preset", "amd-zen4"], 3),
        (
            vec![
                "--preset",
                "design-vm",
                "--cache",
                "L1d=32K,8,64",
                "--cache",
                "L2=1M,8,64",
            ],
            2,
        ),
    ] {
        for (view, walks) in views() {
            let mut all = args.clone();
            all.push(&view);
            let text = layout(&all);
            let levels = sections(&text);
            assert_eq!(levels.len(), levels_given, "{all:?}: one section per level");
            assert!(
                levels[0].brief.is_none(),
                "{all:?}: the first level in full"
            );
            for s in &levels {
                let context = format!("{all:?} {}", s.header);
                if let Some(brief) = &s.brief {
                    // Its walks are the JSON's; the line names no walk of its own.
                    assert!(s.walks.is_empty() && s.padding.is_empty(), "{context}");
                    assert!(
                        brief.starts_with("every walk fits")
                            || brief.starts_with("the same counts as on "),
                        "{context}: {brief}"
                    );
                    continue;
                }
                assert!(!s.walks.is_empty(), "{context}");
                assert!(
                    s.walks[0].title.contains("the view's own order"),
                    "{context}"
                );
                for w in &s.walks {
                    check_walk(&context, w);
                }
                check_padding(&context, s, &walks);
            }
        }
    }
}

#[test]
fn the_bad_cases_get_the_verdict_and_the_contiguous_matrix_only_for_its_column() {
    let l1 = ["--preset", "design-vm", "--cache", "L1d=48K,12,64"];
    let sections_of = |view: String| {
        let mut args = l1.to_vec();
        args.push(&view);
        sections(&layout(&args)).remove(0)
    };
    // C order over a C-contiguous matrix: first touches only, no conflict verdict about it.
    let contiguous = sections_of(BASE.to_string());
    let own = &contiguous.walks[0];
    assert!(
        own.verdicts.iter().all(|v| !v.contains("conflict")),
        "{own:?}"
    );
    assert_eq!(own.first.unwrap().conflict, 0);
    // Its column, repeated, is the one that conflicts, and the advice is about that walk.
    assert!(contiguous.walks[1].title.contains("down a column"));
    assert!(
        contiguous.walks[1].verdicts[0].starts_with("every access of pass 2 is a conflict miss")
    );
    assert!(contiguous.padding[1].trim_start().starts_with("walk 2"));
    // The single column: its own walk repeated conflicts, and it gets advice.
    let column = sections_of(format!("{BASE}[:, 0]"));
    assert!(column.walks[0].verdicts[1].starts_with("every access of pass 2 is a conflict miss"));
    assert!(
        column.padding[0].contains("With 264 instead"),
        "{:?}",
        column.padding
    );
    // The diagonal spreads over the sets: no conflict, no advice.
    let diagonal = sections_of(format!("{BASE}.diagonal()"));
    assert!(diagonal.padding.is_empty());
    assert_eq!(diagonal.walks[0].second.unwrap().misses, 0);
}

#[test]
fn json_answers_are_one_object_even_for_errors() {
    for args in [
        vec![
            "--json",
            "arange(12).as_strided((1,), (-9223372036854775807,), 11)",
        ],
        vec!["--json", "--cache", "L1d=33K,8", "arange(4)"],
        vec!["--json", "--frobnicate", "arange(4)"],
        vec!["--json", "arange(4).view(3)"],
        vec!["--json", "--cache", "L1d=48K,12,64", "arange(4)"],
    ] {
        let out = common::stridelab_command()
            .arg("layout")
            .args(&args)
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        assert_eq!(text.lines().count(), 1, "{args:?}: {text}");
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        let code = out.status.code();
        assert_eq!(
            code == Some(2),
            value.get("error").is_some(),
            "{args:?}: {value}"
        );
        assert!(matches!(code, Some(0) | Some(2)), "{args:?}");
    }
}
