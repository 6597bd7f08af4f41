//! The time model through the binary: a model file that is not one (corrupt, hostile numbers,
//! too large, in a missing directory) exits 2 naming the problem and is left alone; a run with
//! the model off prints and records no prediction; a run priced by a model file records
//! predictions whose figures follow from the file's numbers and the simulated counts.

use std::fs;
use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};

use crate::common::stridelab_command;

fn run_with_model(model: &str, kernel: &[&str], out: &Path) -> Output {
    stridelab_command()
        .arg("run")
        .arg("--kernel")
        .args(kernel)
        .args(["--no-compare", "--sampling-budget", "0", "--model", model])
        .arg("--out")
        .arg(out)
        .output()
        .expect("run stridelab")
}

#[test]
fn model_files_that_are_not_models_exit_2_naming_the_problem_and_stay() {
    let dir = tempfile::tempdir().unwrap();
    let negative = json!({"format": "stridelab-machine-model", "version": 1, "source": "measured",
        "cpu_model": "x", "geometry": [], "measured_unix_s": 0, "load_average": null,
        "levels": [], "skipped": [],
        "memory": {"name": "memory", "size": 0, "working_set": 1,
            "read_bytes_per_s": {"median": -1.0, "low": -1.0, "high": -1.0},
            "write_bytes_per_s": {"median": 1.0, "low": 1.0, "high": 1.0},
            "copy_bytes_per_s": {"median": 1.0, "low": 1.0, "high": 1.0},
            "latency_ns": {"median": 1.0, "low": 1.0, "high": 1.0}}});
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "corrupt.json",
            "{ not json".into(),
            "is not a stridelab machine model",
        ),
        (
            "wisdom.json",
            json!({"format": "stridelab-wisdom", "version": 3}).to_string(),
            "is not a stridelab machine model",
        ),
        (
            "negative.json",
            negative.to_string(),
            "`model.memory.read_bytes_per_s`",
        ),
        ("huge.json", " ".repeat(2 << 20), "more than a model file's"),
    ];
    for (name, text, expected) in &cases {
        let path = dir.path().join(name);
        fs::write(&path, text).unwrap();
        let out = dir.path().join("r.json");
        for output in [
            stridelab_command()
                .args(["model", "--model"])
                .arg(&path)
                .output()
                .unwrap(),
            run_with_model(path.to_str().unwrap(), &["read", "bytes=64K"], &out),
        ] {
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert_eq!(output.status.code(), Some(2), "{name}: {stderr}");
            assert!(stderr.contains(expected), "{name}: {stderr}");
            assert!(!stderr.contains("panicked"), "{name}: {stderr}");
        }
        assert!(!out.exists(), "{name}: the run measured before refusing");
        assert_eq!(
            &fs::read_to_string(&path).unwrap(),
            text,
            "{name} was changed"
        );
    }
    let missing = dir.path().join("no-such-dir").join("m.json");
    let output = stridelab_command()
        .args(["model", "--model"])
        .arg(&missing)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("does not exist"), "{stderr}");
    assert!(!missing.parent().unwrap().exists());
}

#[test]
fn a_run_with_the_model_off_prints_and_records_no_prediction() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    let output = run_with_model("off", &["read", "bytes=64K"], &out);
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !stdout.contains("÷ model")
            && !stdout.contains("time model")
            && !stderr.contains("probing"),
        "{stdout}{stderr}"
    );
    let doc: Value = serde_json::from_str(&fs::read_to_string(&out).unwrap()).unwrap();
    assert!(doc.get("time_model_probes").is_none());
    assert!(doc["records"][0].get("time_model").is_none());
}

/// Round figures for every probe of `model`, keeping its machine key.
fn round_figures(model: &mut Value) {
    let figures = |read_gb: f64, write_gb: f64, latency: f64| {
        let exact = |v: f64| json!({"median": v, "low": v, "high": v});
        (exact(read_gb * 1e9), exact(write_gb * 1e9), exact(latency))
    };
    let levels = model["levels"].as_array_mut().unwrap();
    for (i, level) in levels.iter_mut().enumerate() {
        let (r, w, l) = figures(
            100.0 / (i + 1) as f64,
            50.0 / (i + 1) as f64,
            2.0 * (i + 1) as f64,
        );
        level["read_bytes_per_s"] = r;
        level["write_bytes_per_s"] = w;
        level["latency_ns"] = l;
    }
    let (r, w, l) = figures(10.0, 5.0, 100.0);
    model["memory"]["read_bytes_per_s"] = r;
    model["memory"]["write_bytes_per_s"] = w;
    model["memory"]["latency_ns"] = l;
}

/// The file's probes for a simulated level: its own, else memory's (a skipped level).
fn probes<'m>(model: &'m Value, name: &str) -> &'m Value {
    model["levels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == name)
        .unwrap_or(&model["memory"])
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap()
}

/// (bandwidth estimate, latency bound) of one record, worked from the file and the counts.
fn expected(model: &Value, record: &Value) -> (f64, f64) {
    let levels = record["simulated"]["levels"].as_array().unwrap();
    let work = &record["work"];
    let l1 = probes(model, levels[0]["name"].as_str().unwrap());
    let read = |p: &Value| f(&p["read_bytes_per_s"]["median"]);
    let write = |p: &Value| f(&p["write_bytes_per_s"]["median"]);
    let lat = |p: &Value| f(&p["latency_ns"]["median"]);
    let core =
        f(&work["bytes_read"]) / read(l1) * 1e9 + f(&work["bytes_written"]) / write(l1) * 1e9;
    // Warm misses: from a cold simulation, a level holding the footprint (L1d's compulsory
    // lines) serves its compulsory misses.
    let footprint = f(&levels[0]["compulsory"]) * f(&levels[0]["line"]);
    let cold = record["simulated"]["start"] == "cold";
    let misses: Vec<(f64, f64)> = levels
        .iter()
        .map(|l| {
            let (lm, sm) = (f(&l["load_misses"]), f(&l["store_misses"]));
            if cold && footprint <= f(&l["size"]) && lm + sm > 0.0 {
                let kept = 1.0 - f(&l["compulsory"]) / (lm + sm);
                (lm * kept, sm * kept)
            } else {
                (lm, sm)
            }
        })
        .collect();
    let mut latency = (f(&levels[0]["loads"]) - misses[0].0) * lat(l1);
    let mut below = 0.0;
    let mut supply = |p: &Value, loads: f64, stores: f64, line: f64| {
        below += loads * line / read(p) * 1e9 + stores * line / write(p) * 1e9;
        latency += loads * lat(p);
    };
    for (i, level) in levels.iter().enumerate().skip(1) {
        let p = probes(model, level["name"].as_str().unwrap());
        supply(
            p,
            misses[i - 1].0 - misses[i].0,
            misses[i - 1].1 - misses[i].1,
            f(&level["line"]),
        );
    }
    let last = levels.last().unwrap();
    let (lm, sm) = misses[misses.len() - 1];
    supply(&model["memory"], lm, sm, f(&last["line"]));
    (core.max(below), latency)
}

#[test]
fn predictions_follow_from_the_model_file_and_the_simulated_counts() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("machine-model.json");
    // Probed once for this machine's key, then given round figures.
    let probed = stridelab_command()
        .args(["model", "--quiet", "--model"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(probed.status.success(), "{probed:?}");
    let mut model: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    round_figures(&mut model);
    fs::write(&path, model.to_string()).unwrap();
    let out = dir.path().join("r.json");
    let path = path.to_str().unwrap();
    // (kernel words, latency rule)
    for (kernel, dependent) in [
        (&["read", "bytes=4M"][..], false),
        (&["copy", "bytes=256K"][..], false),
        (&["chase", "bytes=1M"][..], true),
    ] {
        let output = run_with_model(path, kernel, &out);
        assert!(output.status.success(), "{output:?}");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            stdout.contains("÷ model") && stdout.contains("of the 1 points it claims within 2×"),
            "{stdout}"
        );
        let doc: Value = serde_json::from_str(&fs::read_to_string(&out).unwrap()).unwrap();
        assert_eq!(
            doc["time_model_probes"], model,
            "the probes are recorded once, as read"
        );
        let record = &doc["records"][0];
        let prediction = &record["time_model"];
        assert_eq!(prediction["applies"], true, "{kernel:?}: {prediction}");
        assert_eq!(prediction["source"], "model");
        let (bandwidth, latency) = expected(&model, record);
        let want = if dependent { latency } else { bandwidth };
        assert_eq!(
            prediction["rule"],
            if dependent { "latency" } else { "bandwidth" }
        );
        let estimate = f(&prediction["bounds"]["estimate_ns"]);
        assert!(
            (estimate - want).abs() <= 1e-9 * want,
            "{kernel:?}: {estimate} != {want}"
        );
        assert!((f(&prediction["bounds"]["latency_ns"]) - latency).abs() <= 1e-9 * latency);
        let measured = f(&record["timing"]["ns_per_run"]["median"]);
        let ratio = f(&prediction["measured_over_model"]);
        assert!(
            (ratio - measured / estimate).abs() <= 1e-9 * ratio,
            "{ratio}"
        );
        // Only a point beyond 2x names the controls `why` would run on it.
        let far = !(0.5..=2.0).contains(&ratio);
        assert_eq!(
            prediction.get("why_controls").is_some(),
            far,
            "{prediction}"
        );
    }
    // A model a thousand times too fast puts the point far off: its record names the controls.
    let faster = |level: &mut Value| {
        for key in ["read_bytes_per_s", "write_bytes_per_s", "copy_bytes_per_s"] {
            for end in ["median", "low", "high"] {
                let v = f(&level[key][end]) * 1000.0;
                level[key][end] = json!(v);
            }
        }
    };
    model["levels"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .for_each(faster);
    faster(&mut model["memory"]);
    fs::write(path, model.to_string()).unwrap();
    let output = run_with_model(path, &["read", "bytes=4M"], &out);
    assert!(output.status.success(), "{output:?}");
    let doc: Value = serde_json::from_str(&fs::read_to_string(&out).unwrap()).unwrap();
    let prediction = &doc["records"][0]["time_model"];
    assert!(f(&prediction["measured_over_model"]) > 2.0, "{prediction}");
    let controls: Vec<&str> = prediction["why_controls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    for expected in [
        "huge pages",
        "bytes=2097152",
        "source +64 B",
        "source +4 KiB",
    ] {
        assert!(controls.contains(&expected), "{controls:?}");
    }
}
