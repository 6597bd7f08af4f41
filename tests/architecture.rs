//! The floor plan, enforced: every module of `src/` sits on a floor and may import only from
//! floors below it, so data flows one way (suite → runner → records → report | gate) and a
//! change on a low floor never has to reason about the floors above. `docs/architecture.md`
//! draws the same plan; `src/lib.rs`'s module map says it in words.
//!
//! The test reads the source as text: every `crate::NAME` path and every `super::` path that
//! climbs out of its module is an import of module `NAME`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The floors, ground up. A module may import modules on lower floors only (never sideways).
const FLOORS: &[(&str, u8)] = &[
    ("units", 0),
    ("stats", 0),
    ("mem", 0),
    ("vocab", 0),
    ("layout", 1),
    ("cache", 1),
    ("kernels", 2),
    ("results", 2),
    ("harness", 3),
    ("report", 4),
    ("infer", 4),
    ("cli", 5),
];

/// Narrower than the floors allow: the report draws records and never measures nor re-derives
/// an analysis, so it reads `results` (and the ground floor) only.
const ONLY: &[(&str, &[&str])] = &[("report", &["units", "stats", "mem", "vocab", "results"])];

/// Module edges that break the plan today, each to be removed by moving code to its floor. The
/// list may only shrink: an entry no longer needed fails the test, so it is struck.
const KNOWN_VIOLATIONS: &[(&str, &str)] = &[];

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

/// The top-level modules a file's text refers to through `crate::` or escaping `super::` paths.
fn imported_modules(text: &str, module: &[String]) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        for (i, _) in code.match_indices("crate::") {
            // `stridelab::crate::` does not exist; skip `$crate::` in macros.
            if code[..i].ends_with('$') {
                continue;
            }
            let name = ident(&code[i + "crate::".len()..]);
            if !name.is_empty() {
                found.insert(name);
            }
        }
        for (i, _) in code.match_indices("super::") {
            if code[..i].ends_with("super::") {
                continue; // counted from the first `super::` of the chain
            }
            let mut rest = &code[i..];
            // Each `super` climbs one module; at depth 0 the next name is a top-level module.
            let mut depth = module.len();
            while let Some(r) = rest.strip_prefix("super::") {
                rest = r;
                depth = depth.saturating_sub(1);
            }
            let name = if depth == 0 {
                ident(rest)
            } else {
                module[0].clone()
            };
            if !name.is_empty() && !name.starts_with(char::is_uppercase) {
                found.insert(name);
            }
        }
    }
    found
}

#[test]
fn imports_only_point_down_the_floors() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut violations = Vec::new();
    let mut unplaced = Vec::new();
    for file in &files {
        let module = module_path(&src, file);
        let Some(top) = module.first() else { continue };
        if top == "lib" || top == "main" {
            continue;
        }
        let Some(floor) = floor_of(top) else {
            unplaced.push(format!("{} (module `{top}`)", file.display()));
            continue;
        };
        let text = std::fs::read_to_string(file).unwrap();
        for imported in imported_modules(&text, &module) {
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
    let mut used_exceptions = BTreeSet::new();
    for (file, imported, top, floor, target) in &violations {
        if KNOWN_VIOLATIONS.contains(&(top.as_str(), imported.as_str())) {
            used_exceptions.insert((top.clone(), imported.clone()));
            continue;
        }
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
    for (top, imported) in KNOWN_VIOLATIONS {
        if !used_exceptions.contains(&(top.to_string(), imported.to_string())) {
            messages.push(format!(
                "KNOWN_VIOLATIONS lists {top} → {imported}, which no longer happens: strike it"
            ));
        }
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
    let found = imported_modules(text, &module);
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
    let found = imported_modules("use super::super::super::layout::Layout;", &deep);
    assert!(found.contains("layout"), "{found:?}");
}
