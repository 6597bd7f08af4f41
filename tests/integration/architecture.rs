//! The floor plan, enforced: every module of the lab's crates sits on a floor and may import
//! only from floors below it, so data flows one way (suite → runner → records → report | gate)
//! and a change on a low floor never has to reason about the floors above.
//! `docs/architecture.md` draws the same plan; `crates/core/src/lib.rs`'s module map says it in
//! words. The modules live in three crates ([`ROOTS`]): the core (`crates/core`, floors 0–4
//! but the report), the report (`crates/report`) and the command line (`src/`, which
//! re-exports the others under their module names); a module is named the same wherever its
//! crate puts it.
//!
//! The copy engine is a crate of its own (`crates/copy-engine`, `stridelab_copy`) on floor 1:
//! a `stridelab_copy::` path is an import of it, and the crate itself imports nothing of the lab
//! and keeps no global state (its planner is a value its caller owns).
//!
//! The test reads the source as text: every `crate::NAME` path and every `super::` path that
//! climbs out of its module is an import of module `NAME`. A second test draws the same imports
//! file to file and fails on a circle, because two files that need each other are one concept
//! in two places.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The floors, ground up. A module may import modules on lower floors only (never sideways).
const FLOORS: &[(&str, u8)] = &[
    ("units", 0),
    ("stats", 0),
    ("mem", 0),
    ("vocab", 0),
    ("layout", 1),
    ("cache", 1),
    // A user's memory trace, streamed and parsed: the ground floor only.
    ("trace", 1),
    // The copy engine's crate: beneath `kernels`, beside `layout` and `cache`.
    (ENGINE, 1),
    ("kernels", 2),
    ("explain", 2),
    ("results", 2),
    ("harness", 3),
    ("report", 4),
    ("infer", 4),
    ("cli", 5),
];

/// The copy engine's crate, as lab code names it.
const ENGINE: &str = "stridelab_copy";

/// Narrower than the floors allow: the report draws records and never measures nor re-derives
/// an analysis, so it reads `results` (and the ground floor) only.
const ONLY: &[(&str, &[&str])] = &[("report", &["units", "stats", "mem", "vocab", "results"])];

/// Where each crate's modules live: its source directory, the module path of its root file
/// (the report crate's `lib.rs` is the module `report`), and the names its code uses for the
/// crates whose modules it imports.
struct Root {
    dir: &'static str,
    module: &'static [&'static str],
}

const ROOTS: &[Root] = &[
    Root {
        dir: "crates/core/src",
        module: &[],
    },
    Root {
        dir: "crates/report/src",
        module: &["report"],
    },
    Root {
        dir: "src",
        module: &[],
    },
];

/// A path of one of these crates names modules from the root of the whole lab: the core's
/// modules under `stridelab_core::`, the report's under `stridelab_report::`.
const LAB_CRATES: &[(&str, &[&str])] =
    &[("stridelab_core", &[]), ("stridelab_report", &["report"])];

/// Every source file of the lab with its module path (crate roots other than the report's are
/// no module: they only declare and re-export).
fn lab_files() -> Vec<(PathBuf, ModPath, ModPath)> {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for root in ROOTS {
        let dir = workspace.join(root.dir);
        let base: ModPath = root.module.iter().map(|s| s.to_string()).collect();
        let mut files = Vec::new();
        rust_files(&dir, &mut files);
        files.sort();
        for file in files {
            let rel = module_path(&dir, &file);
            if matches!(rel.first().map(String::as_str), Some("lib" | "main")) && rel.len() == 1 {
                if base.is_empty() {
                    continue;
                }
                out.push((file, base.clone(), base.clone()));
                continue;
            }
            let mut module = base.clone();
            module.extend(rel);
            out.push((file, module, base.clone()));
        }
    }
    out
}

/// The modules `module` may import.
fn allowed(module: &str) -> Vec<&'static str> {
    if let Some((_, only)) = ONLY.iter().find(|(m, _)| *m == module) {
        return only.to_vec();
    }
    let floor = floor_of(module).unwrap_or(0);
    FLOORS
        .iter()
        .filter(|(_, f)| *f < floor)
        .map(|(m, _)| *m)
        .collect()
}

fn floor_of(module: &str) -> Option<u8> {
    FLOORS.iter().find(|(m, _)| *m == module).map(|&(_, f)| f)
}

/// The module path of a source file: `src/a/b.rs` → [a, b], `src/a/mod.rs` → [a].
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap();
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level modules a file's text refers to through `crate::`, a lab crate's name or
/// escaping `super::` paths, and the copy engine's crate when it names a `stridelab_copy::`
/// path. `crate_base` is the module path of the file's crate root.
fn imported_modules(text: &str, module: &[String], crate_base: &[String]) -> BTreeSet<String> {
    // The first segment of every path a file names, groups included: `crate::{harness::x,
    // report::y}` names `harness` and `report`, however the group is spread over lines.
    let mut modules: BTreeSet<String> = imported_paths(text, module, crate_base)
        .into_iter()
        .filter_map(|path| path.into_iter().next())
        .filter(|name| !name.starts_with(char::is_uppercase))
        .collect();
    if names_crate(&code_of(text), ENGINE) {
        modules.insert(ENGINE.to_string());
    }
    modules
}

/// Whether `code` names a path of the crate `name` (`name::…`, not `other_name::…`).
fn names_crate(code: &str, name: &str) -> bool {
    code.match_indices(&format!("{name}::"))
        .any(|(i, _)| !code[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':'))
}

/// `text` without comments, on one line, so that a `use` group spread over lines reads as one.
fn code_of(text: &str) -> String {
    text.lines()
        .map(|line| line.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The items of the group whose `{` was just passed, split at its top-level commas, up to its
/// matching `}`: `a::{b, c}, d}` → [`a::{b, c}`, `d`].
fn group_items(group: &str) -> Vec<&str> {
    let (mut depth, mut start, mut items) = (0usize, 0, Vec::new());
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                items.push(&group[start..i]);
                return items;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&group[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&group[start..]);
    items
}

#[test]
fn imports_only_point_down_the_floors() {
    let mut violations = Vec::new();
    let mut unplaced = Vec::new();
    for (file, module, crate_base) in &lab_files() {
        let Some(top) = module.first() else { continue };
        let Some(floor) = floor_of(top) else {
            unplaced.push(format!("{} (module `{top}`)", file.display()));
            continue;
        };
        let text = std::fs::read_to_string(file).unwrap();
        for imported in imported_modules(&text, module, crate_base) {
            if &imported == top {
                continue;
            }
            let Some(target) = floor_of(&imported) else {
                continue; // a crate-local item re-exported at the root, not a module
            };
            if !allowed(top).contains(&imported.as_str()) {
                let rel = file.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap();
                violations.push((
                    rel.display().to_string(),
                    imported,
                    top.clone(),
                    floor,
                    target,
                ));
            }
        }
    }
    assert!(
        unplaced.is_empty(),
        "modules on no floor (add them to FLOORS and docs/architecture.md): {unplaced:?}"
    );
    let mut messages = Vec::new();
    for (file, imported, top, floor, target) in &violations {
        let direction = match target.cmp(floor) {
            std::cmp::Ordering::Greater => "points up",
            std::cmp::Ordering::Equal => "points sideways",
            std::cmp::Ordering::Less => "is not one of its edges",
        };
        messages.push(format!(
            "{file}: `{top}` (floor {floor}) imports `{imported}` (floor {target}), which \
             {direction}; `{top}` may import only {:?}. Move the shared piece down a floor \
             (see docs/architecture.md).",
            allowed(top)
        ));
    }
    assert!(messages.is_empty(), "{}", messages.join("\n"));
}

#[test]
fn the_scanner_sees_crate_and_escaping_super_paths() {
    let module = vec!["kernels".to_string(), "common".to_string()];
    let text = "use crate::harness::buffer::AlignedBuffer;\n\
                use super::spec::Params; // kernels itself\n\
                // use crate::report::x; a comment is no import\n\
                fn f() { crate::cache::model::sets_used(1, 2); }\n";
    let found = imported_modules(text, &module, &[]);
    let expected: BTreeSet<String> = ["harness", "kernels", "cache"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(found, expected);
    let deep = vec![
        "kernels".to_string(),
        "copy".to_string(),
        "simd".to_string(),
    ];
    let found = imported_modules("use super::super::super::layout::Layout;", &deep, &[]);
    assert!(found.contains("layout"), "{found:?}");
    // A group at the crate root, spread over lines, names each of its modules.
    let grouped = "use crate::{\n    harness::x, // a comment\n    report::{chart, y},\n};\n";
    let found = imported_modules(grouped, &module, &[]);
    let expected: BTreeSet<String> = ["harness", "report"].map(String::from).into();
    assert_eq!(found, expected);
    // In the report's crate, `crate::` is the report itself and the core is named by its crate.
    let report: ModPath = vec!["report".into(), "page".into()];
    let text = "use crate::chart::x;\nuse stridelab_core::results::{self, R};\n";
    let found = imported_modules(text, &report, &["report".to_string()]);
    let expected: BTreeSet<String> = ["report", "results"].map(String::from).into();
    assert_eq!(found, expected);
    // The copy engine's crate, by name only: not a crate whose name ends in it, not a comment.
    let engine = "use stridelab_copy::{Planner, order};\n// stridelab_copy::x\n";
    assert_eq!(
        imported_modules(engine, &module, &[]),
        [ENGINE.to_string()].into()
    );
    assert!(imported_modules("use my_stridelab_copy::X;", &module, &[]).is_empty());
    assert!(imported_modules("use stridelab::kernels::X;", &module, &[]).is_empty());
}

/// The copy engine's crate directory.
fn engine_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/copy-engine")
}

/// `text` up to its unit-test module (the code a build without tests compiles).
fn non_test_code(text: &str) -> &str {
    text.split("#[cfg(test)]\nmod tests").next().unwrap_or("")
}

#[test]
fn the_copy_engine_crate_imports_nothing_of_the_lab() {
    let dir = engine_dir();
    let manifest: toml::Table = std::fs::read_to_string(dir.join("Cargo.toml"))
        .unwrap()
        .parse()
        .unwrap();
    for table in ["dependencies", "dev-dependencies", "build-dependencies"] {
        let names: Vec<&String> = manifest
            .get(table)
            .and_then(|t| t.as_table())
            .map(|t| t.keys().collect())
            .unwrap_or_default();
        assert!(
            !names.iter().any(|n| n.as_str() == "stridelab"),
            "crates/copy-engine/Cargo.toml's {table} name the lab: {names:?}"
        );
    }
    let mut files = Vec::new();
    for sub in ["src", "tests", "benches", "examples"] {
        if dir.join(sub).is_dir() {
            rust_files(&dir.join(sub), &mut files);
        }
    }
    assert!(files.len() > 5, "the engine's sources: {files:?}");
    let lab_paths: Vec<String> = files
        .iter()
        .filter(|f| names_crate(&code_of(&std::fs::read_to_string(f).unwrap()), "stridelab"))
        .map(|f| f.display().to_string())
        .collect();
    assert!(
        lab_paths.is_empty(),
        "the copy engine names the lab in {lab_paths:?}"
    );
}

/// The dependency names of every table of a crate's manifest.
fn manifest_dependencies(crate_dir: &str) -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(crate_dir)
        .join("Cargo.toml");
    let manifest: toml::Table = std::fs::read_to_string(path).unwrap().parse().unwrap();
    ["dependencies", "dev-dependencies", "build-dependencies"]
        .iter()
        .filter_map(|table| manifest.get(*table).and_then(|t| t.as_table()))
        .flat_map(|t| t.keys().cloned())
        .collect()
}

#[test]
fn the_crates_depend_one_way() {
    // The core builds without the report's drawing and rasterising stack (so a fresh build
    // compiles the two side by side) and without the command line above it.
    let core = manifest_dependencies("crates/core");
    for above in [
        "stridelab",
        "stridelab-report",
        "plotters",
        "tiny-skia",
        "maud",
        "clap",
    ] {
        assert!(
            !core.iter().any(|d| d == above),
            "crates/core depends on {above}: {core:?}"
        );
    }
    assert!(core.iter().any(|d| d == "stridelab-copy"), "{core:?}");
    // The report reads the core's records and nothing of the command line.
    let report = manifest_dependencies("crates/report");
    assert!(!report.iter().any(|d| d == "stridelab"), "{report:?}");
    assert!(report.iter().any(|d| d == "stridelab-core"), "{report:?}");
}

/// A line declaring a `static` item (not a `'static` lifetime).
fn declares_static(line: &str) -> bool {
    let line = line.trim_start();
    let line = line
        .strip_prefix("pub(crate) ")
        .or(line.strip_prefix("pub "))
        .unwrap_or(line);
    line.starts_with("static ")
}

#[test]
fn no_global_planner_state() {
    // The engine's library code has no static at all: two planners share nothing.
    let mut files = Vec::new();
    rust_files(&engine_dir().join("src"), &mut files);
    let mut found = Vec::new();
    for file in files.iter().filter(|f| !f.ends_with("tests.rs")) {
        let text = std::fs::read_to_string(file).unwrap();
        for line in non_test_code(&text).lines().filter(|l| declares_static(l)) {
            found.push(format!("{}: {}", file.display(), line.trim()));
        }
    }
    // The lab keeps no planner or lock in a static either: the harness owns its planner.
    for (file, _, _) in &lab_files() {
        let text = std::fs::read_to_string(file).unwrap();
        for line in text.lines().filter(|l| declares_static(l)) {
            if ["Planner", "PlanEvent", "Mutex", "RwLock"]
                .iter()
                .any(|t| line.contains(t))
            {
                found.push(format!("{}: {}", file.display(), line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "global state: {found:#?}");
    assert!(declares_static(
        "    pub static X: Mutex<u8> = Mutex::new(0);"
    ));
    assert!(!declares_static("fn f() -> &'static str {"));
}

/// A file's module path: `["kernels", "copy", "simd"]`; the crate root is `[]`.
type ModPath = Vec<String>;

/// The module paths a file names, from every `crate::a::b` and `super::a` path, with `{x, y::z}`
/// groups expanded at any depth and across lines (`use crate::kernels::{blocked, spec::Entry}`
/// names both).
fn imported_paths(text: &str, module: &[String], crate_base: &[String]) -> Vec<ModPath> {
    let mut paths = Vec::new();
    let joined = code_of(text);
    {
        let code = joined.as_str();
        let own = ("crate", crate_base.to_vec());
        let named = LAB_CRATES
            .iter()
            .map(|(name, base)| (*name, base.iter().map(|s| s.to_string()).collect()));
        for (name, base) in std::iter::once(own).chain(named) {
            let prefix = format!("{name}::");
            for (i, _) in code.match_indices(&prefix) {
                let before = &code[..i];
                if before.ends_with('$')
                    || before.ends_with(|c: char| c.is_alphanumeric() || c == '_')
                {
                    continue;
                }
                paths.extend(path_segments(&code[i + prefix.len()..], base.clone()));
            }
        }
        for (i, _) in code.match_indices("super::") {
            let before = &code[..i];
            if before.ends_with("super::") || before.ends_with(|c: char| c.is_alphanumeric()) {
                continue; // counted from the first `super::` of the chain
            }
            let mut rest = &code[i..];
            let mut base = module.to_vec();
            while let Some(r) = rest.strip_prefix("super::") {
                rest = r;
                base.pop();
            }
            paths.extend(path_segments(rest, base));
        }
    }
    paths
}

/// The segments of the path at the start of `rest`, after `base`.
fn path_segments(mut rest: &str, mut base: ModPath) -> Vec<ModPath> {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    loop {
        let name: String = rest.chars().take_while(|&c| is_ident(c)).collect();
        if name.is_empty() {
            let Some(group) = rest.strip_prefix('{') else {
                return vec![base];
            };
            return group_items(group)
                .into_iter()
                .map(|item| item.split(" as ").next().unwrap_or("").trim())
                .filter(|item| !item.is_empty())
                .flat_map(|item| match item {
                    "self" => vec![base.clone()],
                    _ => path_segments(item, base.clone()),
                })
                .collect();
        }
        rest = &rest[name.len()..];
        base.push(name);
        match rest.strip_prefix("::") {
            Some(r) => rest = r,
            None => return vec![base],
        }
    }
}

/// The file-to-file import graph of the lab (code before each file's test module), leaving
/// out edges between a module and its own submodules: a parent re-exporting its children and a
/// child using its parent's items is one unit, not a circle.
fn file_graph() -> BTreeMap<ModPath, BTreeSet<ModPath>> {
    let files = lab_files();
    let modules: BTreeMap<ModPath, (PathBuf, ModPath)> = files
        .into_iter()
        .map(|(file, module, base)| (module, (file, base)))
        .collect();
    let mut graph = BTreeMap::new();
    for (module, (file, crate_base)) in &modules {
        let text = std::fs::read_to_string(file).unwrap();
        let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or("");
        let mut targets = BTreeSet::new();
        for path in imported_paths(code, module, crate_base) {
            let deepest = (1..=path.len())
                .rev()
                .map(|n| path[..n].to_vec())
                .find(|prefix| modules.contains_key(prefix));
            if let Some(target) = deepest {
                let related = target.starts_with(module) || module.starts_with(&target);
                if !related {
                    targets.insert(target);
                }
            }
        }
        graph.insert(module.clone(), targets);
    }
    graph
}

/// Every import circle of `graph`, each as the files along it (first file repeated at the end).
fn circles(graph: &BTreeMap<ModPath, BTreeSet<ModPath>>) -> Vec<Vec<ModPath>> {
    let mut found: Vec<Vec<ModPath>> = Vec::new();
    for start in graph.keys() {
        // Breadth-first from `start`'s imports back to `start`: the shortest circle through it.
        let mut came_from: BTreeMap<ModPath, ModPath> = BTreeMap::new();
        let mut queue: std::collections::VecDeque<ModPath> = graph[start].iter().cloned().collect();
        for next in &graph[start] {
            came_from.insert(next.clone(), start.clone());
        }
        while let Some(at) = queue.pop_front() {
            if &at == start {
                let mut circle = vec![start.clone()];
                let mut step = came_from[start].clone();
                while &step != start {
                    circle.push(step.clone());
                    step = came_from[&step].clone();
                }
                circle.push(start.clone());
                circle.reverse();
                let mut members = circle[1..].to_vec();
                members.sort();
                if !found.iter().any(|c| {
                    let mut m = c[1..].to_vec();
                    m.sort();
                    m == members
                }) {
                    found.push(circle);
                }
                break;
            }
            for next in graph.get(&at).into_iter().flatten() {
                if !came_from.contains_key(next) {
                    came_from.insert(next.clone(), at.clone());
                    queue.push_back(next.clone());
                }
            }
        }
    }
    found
}

#[test]
fn no_import_circle_between_files() {
    let shown: Vec<String> = circles(&file_graph())
        .iter()
        .map(|circle| {
            circle
                .iter()
                .map(|m| m.join("::"))
                .collect::<Vec<_>>()
                .join(" → ")
        })
        .collect();
    assert!(
        shown.is_empty(),
        "import circles between files (move what both sides need into a file both import, \
         see docs/architecture.md):\n{}",
        shown.join("\n")
    );
}

#[test]
fn the_circle_finder_finds_a_circle_and_only_one() {
    let m = |s: &str| -> ModPath { s.split("::").map(String::from).collect() };
    let mut graph = BTreeMap::new();
    graph.insert(m("cli::gate"), [m("cli::run")].into_iter().collect());
    graph.insert(
        m("cli::run"),
        [m("cli::gate"), m("units")].into_iter().collect(),
    );
    graph.insert(m("units"), BTreeSet::new());
    assert_eq!(
        circles(&graph),
        vec![vec![m("cli::gate"), m("cli::run"), m("cli::gate")]]
    );
    graph.insert(m("cli::run"), [m("units")].into_iter().collect());
    assert!(circles(&graph).is_empty());
}

#[test]
fn file_paths_resolve_groups_and_climbing_super() {
    let module: ModPath = vec!["infer".into(), "run".into()];
    let text = "use crate::kernels::{blocked, spec::Entry};\nuse super::stages::Reported;\n\
                use crate::{\n    cache::{self, sim::Hierarchy},\n    stats as s,\n};\n";
    let paths = imported_paths(text, &module, &[]);
    let want: Vec<ModPath> = [
        &["kernels", "blocked"][..],
        &["kernels", "spec", "Entry"],
        &["cache"],
        &["cache", "sim", "Hierarchy"],
        &["stats"],
        &["infer", "stages", "Reported"],
    ]
    .iter()
    .map(|p| p.iter().map(|s| s.to_string()).collect())
    .collect();
    assert_eq!(paths, want);
}
