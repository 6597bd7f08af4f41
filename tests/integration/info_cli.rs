//! `stridelab info` end to end: the JSON manifest, overrides and presets, bad input → exit 2.

use crate::common;
use common::stridelab;

#[test]
fn info_json_describes_caches_and_perf_events() {
    let out = stridelab(&["info", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let info: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(info["logical_cpus"].as_u64().unwrap() >= 1);
    assert!(info["page_size"].as_u64().unwrap() >= 4096);
    let events = info["perf_events"].as_array().unwrap();
    assert_eq!(events.len(), 7);
    for event in events {
        let status = event["availability"]["status"].as_str().unwrap();
        assert!(status == "available" || status == "unavailable", "{event}");
        if status == "unavailable" {
            assert!(!event["availability"]["reason"].as_str().unwrap().is_empty());
        }
    }
    // Every detected level says where it came from and is self-consistent.
    for level in info["caches"].as_array().unwrap() {
        let source = level["source"].as_str().unwrap();
        assert!(source == "sysfs" || source == "cpuid", "{level}");
        let (size, ways, line, sets) = (
            level["size"].as_u64().unwrap(),
            level["ways"].as_u64().unwrap(),
            level["line"].as_u64().unwrap(),
            level["sets"].as_u64().unwrap(),
        );
        assert_eq!(size, ways * line * sets, "{level}");
    }
    assert!(info.get("simulated_caches").is_none());
}

#[test]
fn info_with_preset_and_override_lists_exactly_those_levels() {
    let out = stridelab(&[
        "info",
        "--json",
        "--preset",
        "design-vm",
        "--cache",
        "L3=16M,16,64",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let info: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let levels = info["simulated_caches"].as_array().unwrap();
    let summary: Vec<(String, u64, u64, u64, String)> = levels
        .iter()
        .map(|l| {
            (
                l["name"].as_str().unwrap().to_string(),
                l["size"].as_u64().unwrap(),
                l["ways"].as_u64().unwrap(),
                l["sets"].as_u64().unwrap(),
                l["source"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            ("L1d".into(), 48 << 10, 12, 64, "preset".into()),
            ("L2".into(), 2 << 20, 16, 2048, "preset".into()),
            ("L3".into(), 16 << 20, 16, 16384, "override".into()),
        ]
    );
}

#[test]
fn info_table_marks_counters_as_measured() {
    let out = stridelab(&["info"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("Caches (detected)"), "{text}");
    assert!(text.contains("Perf events (measured counters)"), "{text}");
}

#[test]
fn invalid_geometry_and_unknown_preset_exit_2_naming_the_rule() {
    let out = stridelab(&["info", "--cache", "L1d=48K,7,64"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not divisible by ways × line"), "{err}");
    let out = stridelab(&["info", "--cache", "L1d=48K,12,48"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a power of two"));
    let out = stridelab(&["info", "--preset", "pentium4"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("amd-zen4"));
}

/// On the `design-vm` machine (its sysfs tree as a fixture) the L1d is 48 KiB,
/// 12-way, 64 sets of 64 B lines, and the "480 MiB" L3 is flagged while L1d/L2 are not.
#[test]
fn design_vm_sysfs_tree_shows_48k_l1d_and_flags_the_l3() {
    let root = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/sysfs-design-vm"
    );
    let out = stridelab(&["info", "--json", "--sysfs-root", root]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let info: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let caches = info["caches"].as_array().unwrap();
    let level = |name: &str| {
        caches
            .iter()
            .find(|l| l["name"] == name)
            .unwrap_or_else(|| panic!("no {name} in {caches:?}"))
    };
    let l1d = level("L1d");
    assert_eq!(
        (&l1d["size"], &l1d["ways"], &l1d["sets"], &l1d["line"]),
        (
            &serde_json::json!(48 * 1024),
            &serde_json::json!(12),
            &serde_json::json!(64),
            &serde_json::json!(64)
        )
    );
    assert_eq!(l1d["source"], "sysfs");
    assert!(l1d["warnings"].as_array().unwrap().is_empty());
    assert!(level("L2")["warnings"].as_array().unwrap().is_empty());
    let l3_warnings = level("L3")["warnings"].as_array().unwrap();
    assert!(
        l3_warnings
            .iter()
            .any(|w| w.as_str().unwrap().starts_with("implausible")),
        "{l3_warnings:?}"
    );
}

/// Where the kernel lets a process count its own software events (perf_event_paranoid ≤ 2),
/// task-clock and page-faults must be reported available.
#[test]
fn software_events_are_available_where_the_kernel_allows_them() {
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()
        .and_then(|s| s.trim().parse::<i32>().ok());
    let Some(level) = paranoid.filter(|&p| p <= 2) else {
        common::tool_unusable(
            "perf events: perf_event_paranoid is above 2 or unreadable",
            "the software-event availability check",
        );
        return;
    };
    let out = stridelab(&["info", "--json"]);
    let info: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for event in info["perf_events"].as_array().unwrap() {
        if event["hardware"] == false {
            assert_eq!(
                event["availability"]["status"], "available",
                "paranoid {level}: {event}"
            );
        }
    }
}

/// The table shows the data TLB the JSON manifest has: a row per `dtlb` level (page, entries,
/// source), or says CPUID reported none.
#[test]
fn the_table_shows_every_dtlb_level_the_json_has() {
    let json = stridelab(&["info", "--json"]);
    let table = stridelab(&["info"]);
    assert!(json.status.success() && table.status.success());
    let info: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let text = String::from_utf8_lossy(&table.stdout);
    let section = text
        .split("\nData TLB (CPUID)\n")
        .nth(1)
        .unwrap_or_else(|| panic!("no data TLB section: {text}"));
    let rows: Vec<&str> = section
        .lines()
        .take_while(|l| l.starts_with("  "))
        .collect();
    let levels = info["dtlb"].as_array().unwrap();
    if levels.is_empty() {
        assert_eq!(
            rows,
            ["  (not reported by CPUID on this machine)"],
            "{text}"
        );
        return;
    }
    assert_eq!(
        rows.len(),
        levels.len() + 1,
        "a header and a row per level: {text}"
    );
    for (row, level) in rows[1..].iter().zip(levels) {
        let entries = level["entries"].as_u64().unwrap().to_string();
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cells[0], format!("L{}", level["level"]), "{row}");
        assert!(cells.contains(&entries.as_str()), "{row} vs {level}");
        assert!(
            row.ends_with(level["source"].as_str().unwrap()),
            "{row} vs {level}"
        );
    }
}
