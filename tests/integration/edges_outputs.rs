//! Outputs never destroy: `report`, `run` and `gate` write only files that are theirs, check
//! every output path before measuring, write devices and pipes in place, and leave no temporary
//! files behind — not after an error, not after Ctrl-C, not after a killed run.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::guarded::{leftover_temp_files, run_guarded};
use common::signals::{signal, wait};

const LIMIT: Duration = Duration::from_secs(120);

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
        .display()
        .to_string()
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A one-point kernel run: small and quick.
const SMALL_KERNEL: &[&str] = &["--kernel", "row-sum", "rows=32", "cols=32"];

fn run_args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["run"];
    args.extend_from_slice(SMALL_KERNEL);
    args.extend_from_slice(extra);
    args
}

#[test]
fn report_out_keeps_files_it_did_not_write() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("d");
    fs::create_dir(&d).unwrap();
    fs::write(d.join("thesis.txt"), "years of work").unwrap();
    let q = fixture("results_small.json");
    let out = run_guarded(dir.path(), &["report", "--in", &q, "--out", "d"], LIMIT);
    out.assert_exits(&[2], "report into a directory with a user file");
    assert!(out.stderr.contains("thesis.txt"), "{}", out.stderr);
    assert_eq!(
        fs::read_to_string(d.join("thesis.txt")).unwrap(),
        "years of work"
    );
    assert_eq!(names(&d), ["thesis.txt"], "something was written");

    // The input's own folder: its other files stay too, and so does the input.
    fs::copy(&q, d.join("q.json")).unwrap();
    let out = run_guarded(
        dir.path(),
        &["report", "--in", "d/q.json", "--out", "d"],
        LIMIT,
    );
    out.assert_exits(&[2], "report into the input's folder");
    assert_eq!(names(&d), ["q.json", "thesis.txt"]);
    assert_eq!(fs::read(d.join("q.json")).unwrap(), fs::read(&q).unwrap());
    assert!(leftover_temp_files(dir.path()).is_empty());
}

#[test]
fn report_out_onto_a_regular_file_is_refused_and_the_file_untouched() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("afile"), "mine").unwrap();
    let out = run_guarded(
        dir.path(),
        &[
            "report",
            "--in",
            &fixture("results_small.json"),
            "--out",
            "afile",
        ],
        LIMIT,
    );
    out.assert_exits(&[2], "report onto a file");
    assert!(out.stderr.contains("not a directory"), "{}", out.stderr);
    assert_eq!(names(dir.path()), ["afile"]);
    assert_eq!(
        fs::read_to_string(dir.path().join("afile")).unwrap(),
        "mine"
    );
}

#[test]
fn rerendering_an_owned_report_replaces_only_its_own_files() {
    let dir = tempfile::tempdir().unwrap();
    let q = fixture("results_small.json");
    run_guarded(dir.path(), &["report", "--in", &q, "--out", "r"], LIMIT)
        .assert_exits(&[0], "first report");
    let r = dir.path().join("r");
    assert!(r.join("results.json").is_file());
    assert!(r.join(".stridelab-report.json").is_file());
    // Two machines side by side write `results-m1.json`, … instead of `results.json`.
    run_guarded(
        dir.path(),
        &["report", "--in", &q, "--in", &q, "--out", "r"],
        LIMIT,
    )
    .assert_exits(&[0], "second report");
    assert!(
        !r.join("results.json").exists(),
        "a file of the old report stays"
    );
    assert!(r.join("results-m2.json").is_file());
    let manifest = fs::read_to_string(r.join(".stridelab-report.json")).unwrap();
    for name in names(&r) {
        if name != ".stridelab-report.json" {
            assert!(manifest.contains(&format!("\"{name}\"")), "{name} unlisted");
        }
    }
    // A file the user put there makes the directory theirs: refused, nothing touched.
    fs::write(r.join("notes.txt"), "mine").unwrap();
    let before = names(&r);
    let out = run_guarded(dir.path(), &["report", "--in", &q, "--out", "r"], LIMIT);
    out.assert_exits(&[2], "report over a user's file");
    assert!(out.stderr.contains("notes.txt"), "{}", out.stderr);
    assert_eq!(names(&r), before);
    assert!(leftover_temp_files(dir.path()).is_empty());
}

#[test]
fn report_out_dot_in_an_empty_directory_leaves_no_temporary_directory() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_guarded(
        dir.path(),
        &[
            "report",
            "--in",
            &fixture("results_small.json"),
            "--out",
            ".",
        ],
        LIMIT,
    );
    out.assert_exits(&[0], "report into the current directory");
    assert!(dir.path().join("index.html").is_file());
    assert_eq!(leftover_temp_files(dir.path()), Vec::<String>::new());
}

#[test]
fn run_out_csv_name_is_refused_before_measuring() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_guarded(dir.path(), &run_args(&["--out", "q.csv"]), LIMIT);
    out.assert_exits(&[2], "run --out q.csv");
    assert!(
        out.stderr.contains("--export-csv q.csv") && out.stderr.contains("q.json"),
        "no fix named: {}",
        out.stderr
    );
    assert!(
        !out.stderr.contains("[1/"),
        "measured first: {}",
        out.stderr
    );
    assert!(names(dir.path()).is_empty());
}

#[test]
fn run_out_writes_the_results_and_export_csv_the_csv_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_guarded(
        dir.path(),
        &run_args(&["--quiet", "--out", "only.json"]),
        LIMIT,
    );
    out.assert_exits(&[0], "run --out only.json");
    assert_eq!(
        names(dir.path()),
        ["only.json"],
        "no file the user did not name"
    );
    let out = run_guarded(
        dir.path(),
        &run_args(&["--quiet", "--out", "q.json", "--export-csv", "q.csv"]),
        LIMIT,
    );
    out.assert_exits(&[0], "run --out q.json --export-csv q.csv");
    assert!(
        out.stderr.contains("q.json") && out.stderr.contains("q.csv"),
        "{}",
        out.stderr
    );
    let json = fs::read_to_string(dir.path().join("q.json")).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["schema"], stridelab::results::SCHEMA_VERSION);
    let csv = fs::read_to_string(dir.path().join("q.csv")).unwrap();
    assert!(csv.starts_with("index,kernel,"));
    assert_eq!(names(dir.path()), ["only.json", "q.csv", "q.json"]);
}

#[test]
fn run_out_in_an_impossible_place_is_refused_before_measuring() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("adir")).unwrap();
    fs::write(dir.path().join("afile"), "mine").unwrap();
    for bad in ["/proc/stridelab-none/q.json", "adir", "afile/q.json"] {
        let out = run_guarded(dir.path(), &run_args(&["--out", bad]), LIMIT);
        out.assert_exits(&[2], bad);
        assert!(!out.stderr.contains("[1/"), "{bad}: measured first");
        assert!(out.stderr.contains("--out"), "{bad}: {}", out.stderr);
    }
    assert_eq!(names(dir.path()), ["adir", "afile"]);
    assert!(names(&dir.path().join("adir")).is_empty());
    // The whole quick suite stops just as early.
    let out = run_guarded(
        dir.path(),
        &[
            "run",
            "--suite",
            "quick",
            "--out",
            "/proc/stridelab-none/q.json",
        ],
        LIMIT,
    );
    out.assert_exits(&[2], "quick suite into /proc");
    assert!(
        !out.stderr.contains("[1/"),
        "measured first: {}",
        out.stderr
    );
}

#[test]
fn a_named_output_in_a_missing_directory_is_refused_and_nothing_created() {
    let dir = tempfile::tempdir().unwrap();
    let q = dir.path().join("q.json");
    fs::copy(fixture("results_small.json"), &q).unwrap();
    let gate = [
        "gate",
        "--baseline",
        "q.json",
        "--current",
        "q.json",
        "--quiet",
    ];
    let with = |base: &[&'static str], extra: &[&'static str]| -> Vec<&'static str> {
        [base, extra].concat()
    };
    // (arguments, the directory the message must name)
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (run_args(&["--out", "gone/q.json"]), "gone"),
        (
            run_args(&["--out", "-", "--export-csv", "gone/q.csv"]),
            "gone",
        ),
        (
            vec!["run", "--suite", "quick", "--out", "gone/q.json"],
            "gone",
        ),
        (
            vec!["report", "--in", "q.json", "--out", "gone/deeper/r"],
            "gone/deeper",
        ),
        (with(&gate, &["--export-markdown", "gone/s.md"]), "gone"),
        (with(&gate, &["--export-json", "gone/v.json"]), "gone"),
        (
            vec![
                "gate",
                "--current",
                "q.json",
                "--save-baseline",
                "gone/b.json",
            ],
            "gone",
        ),
        (run_args(&["--out", "-", "--wisdom", "gone/w.json"]), "gone"),
        (
            vec![
                "sim",
                "row-sum",
                "rows=8",
                "cols=8",
                "--wisdom",
                "gone/w.json",
            ],
            "gone",
        ),
        (vec!["wisdom", "--wisdom", "gone/w.json"], "gone"),
    ];
    for (args, missing) in &cases {
        let out = run_guarded(dir.path(), args, LIMIT);
        out.assert_exits(&[2], &format!("{args:?}"));
        let named = [
            format!("`{missing}` does not exist"),
            format!("{missing} does not exist"),
        ];
        assert!(
            named.iter().any(|n| out.stderr.contains(n.as_str())),
            "{args:?}: {}",
            out.stderr
        );
        assert!(!out.stderr.contains("[1/"), "{args:?}: measured first");
        assert_eq!(names(dir.path()), ["q.json"], "{args:?} created something");
    }
}

#[test]
fn the_default_locations_are_created_when_missing() {
    let dir = tempfile::tempdir().unwrap();
    run_guarded(dir.path(), &run_args(&["--quiet"]), LIMIT).assert_exits(&[0], "run");
    let runs = names(&dir.path().join("reports/runs"));
    assert!(
        runs.len() == 1 && runs[0].ends_with(".json"),
        "reports/runs holds {runs:?}"
    );
    let q = fixture("results_small.json");
    run_guarded(dir.path(), &["report", "--in", &q], LIMIT).assert_exits(&[0], "report");
    assert!(dir.path().join("reports/rendered/index.html").is_file());
}

#[test]
fn run_out_over_its_own_suite_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("s.toml");
    fs::copy(fixture("small_suite.toml"), &suite).unwrap();
    let before = fs::read(&suite).unwrap();
    let out = run_guarded(
        dir.path(),
        &["run", "--suite", "s.toml", "--out", "s.toml"],
        LIMIT,
    );
    out.assert_exits(&[2], "run --out over the suite");
    assert_eq!(fs::read(&suite).unwrap(), before);
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success(), "mkfifo failed");
}

#[test]
fn gate_json_to_a_pipe_writes_into_it_without_replacing_it() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("verdict.pipe");
    mkfifo(&fifo);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || fs::read_to_string(fifo).unwrap())
    };
    let q = fixture("results_small.json");
    let out = run_guarded(
        dir.path(),
        &[
            "gate",
            "--baseline",
            &q,
            "--current",
            &q,
            "--quiet",
            "--export-json",
            "verdict.pipe",
        ],
        LIMIT,
    );
    out.assert_exits(&[0, 1], "gate --export-json into a pipe");
    let verdict: serde_json::Value = serde_json::from_str(&reader.join().unwrap()).unwrap();
    assert!(verdict.get("pass").is_some(), "{verdict}");
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    assert_eq!(names(dir.path()), ["verdict.pipe"]);
}

#[test]
fn gate_outputs_may_not_be_an_input_or_each_other() {
    let dir = tempfile::tempdir().unwrap();
    let q = dir.path().join("q.json");
    fs::copy(fixture("results_small.json"), &q).unwrap();
    let before = fs::read(&q).unwrap();
    let base = [
        "gate",
        "--baseline",
        "q.json",
        "--current",
        "q.json",
        "--quiet",
    ];
    let cases: &[&[&str]] = &[
        &["--export-json", "q.json"],
        &["--export-markdown", "./q.json"],
        &["--export-json", "v.json", "--export-markdown", "v.json"],
    ];
    for extra in cases {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        let out = run_guarded(dir.path(), &args, LIMIT);
        out.assert_exits(&[2], &format!("{extra:?}"));
        assert!(
            out.stderr.contains("same file"),
            "{extra:?}: {}",
            out.stderr
        );
    }
    assert_eq!(fs::read(&q).unwrap(), before);
    assert_eq!(names(dir.path()), ["q.json"]);
    // Both on stdout at once is refused as well, and so are two names for the JSON verdict.
    for extra in [
        &["--json", "--export-markdown", "-"][..],
        &["--json", "--export-json", "v.json"][..],
    ] {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        run_guarded(dir.path(), &args, LIMIT).assert_exits(&[2], &format!("{extra:?}"));
    }
    // --json alone: the verdict on stdout, nothing written.
    let mut args = base.to_vec();
    args.push("--json");
    let out = run_guarded(dir.path(), &args, LIMIT);
    out.assert_exits(&[0, 1], "gate --json");
    let verdict: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert!(verdict.get("pass").is_some(), "{verdict}");
    assert_eq!(names(dir.path()), ["q.json"]);
}

fn spawn(dir: &Path, args: &[String]) -> Child {
    common::stridelab_command()
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// A report of many machines side by side: long enough to catch it while it renders.
fn slow_report_args(out: &str) -> Vec<String> {
    let mut args = vec!["report".to_string()];
    for _ in 0..16 {
        args.push("--in".into());
        args.push(fixture("results_small.json"));
    }
    args.extend(["--out".to_string(), out.to_string()]);
    args
}

/// Waits until the report's staging directory exists in `dir` (the rendering has begun).
fn wait_for_staging(dir: &Path, child: &mut Child) -> PathBuf {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(entries) = fs::read_dir(dir) {
            for e in entries.flatten() {
                if e.file_name()
                    .to_string_lossy()
                    .starts_with(".stridelab-render.")
                {
                    return e.path();
                }
            }
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the report finished before it was seen rendering"
        );
        assert!(
            Instant::now() < deadline,
            "the report never started rendering"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn ctrl_c_or_sigterm_during_report_leaves_no_temporary_directory() {
    let dir = tempfile::tempdir().unwrap();
    // A new directory: nothing remains of it.
    let mut child = spawn(dir.path(), &slow_report_args("r"));
    wait_for_staging(&dir.path().join("r"), &mut child);
    signal(&child, "-INT");
    let code = wait(&mut child);
    assert_eq!(code, Some(130), "Ctrl-C during the rendering");
    assert!(!dir.path().join("r").exists(), "a half report stays");
    assert!(leftover_temp_files(dir.path()).is_empty());

    // An earlier report: it stays exactly as it was. SIGTERM this time (a CI runner's timeout,
    // `kill`): the same handler.
    run_guarded(
        dir.path(),
        &[
            "report",
            "--in",
            &fixture("results_small.json"),
            "--out",
            "r",
        ],
        LIMIT,
    )
    .assert_exits(&[0], "the earlier report");
    let r = dir.path().join("r");
    let before = names(&r);
    let page = fs::read(r.join("index.html")).unwrap();
    let mut child = spawn(dir.path(), &slow_report_args("r"));
    wait_for_staging(&r, &mut child);
    signal(&child, "-TERM");
    assert_eq!(wait(&mut child), Some(130));
    assert_eq!(names(&r), before);
    assert_eq!(fs::read(r.join("index.html")).unwrap(), page);
    assert_eq!(leftover_temp_files(dir.path()), Vec::<String>::new());
}

#[test]
fn a_killed_report_leaves_staging_that_the_next_report_removes() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = spawn(dir.path(), &slow_report_args("r"));
    let staging = wait_for_staging(&dir.path().join("r"), &mut child);
    signal(&child, "-KILL");
    wait(&mut child);
    assert!(staging.exists(), "SIGKILL cannot be handled");
    run_guarded(
        dir.path(),
        &[
            "report",
            "--in",
            &fixture("results_small.json"),
            "--out",
            "r",
        ],
        LIMIT,
    )
    .assert_exits(&[0], "the next report");
    assert_eq!(leftover_temp_files(dir.path()), Vec::<String>::new());
}

/// What a killed process left (temporaries nobody holds a lock on) goes with the next report
/// or results file; a temporary another process holds, and files not named as temporaries of
/// that output, stay.
#[test]
fn temporaries_of_killed_processes_are_removed_and_others_kept() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let r = root.join("r");
    let staging = r.join(".stridelab-render.abc123.tmp");
    fs::create_dir_all(&staging).unwrap();
    fs::write(staging.join("index.html"), "half").unwrap();
    let results_tmp = root.join(".q.json.abc123.tmp");
    fs::write(&results_tmp, "half").unwrap();
    // Another output's, not a temporary's name, or held by a live process (this one): kept.
    let kept = [
        root.join(".notes.abc123.tmp"),
        root.join(".q.json.tmp-abc"),
        root.join(".q.json.def456.tmp"),
    ];
    for k in &kept {
        fs::write(k, "keep").unwrap();
    }
    let held = fs::File::open(&kept[2]).unwrap();
    held.try_lock().unwrap();
    run_guarded(
        root,
        &[
            "report",
            "--in",
            &fixture("results_small.json"),
            "--out",
            "r",
        ],
        LIMIT,
    )
    .assert_exits(&[0], "report");
    assert!(!staging.exists());
    assert!(r.join("index.html").is_file());
    run_guarded(root, &run_args(&["--quiet", "--out", "q.json"]), LIMIT).assert_exits(&[0], "run");
    assert!(!results_tmp.exists());
    for k in &kept {
        assert!(k.exists(), "{} removed", k.display());
    }
}

/// A reader that stops early (`stridelab run --list | head -1`) ends the command quietly, as
/// it ends `ls` or `cat`: by SIGPIPE, never a "failed printing to stdout" panic (exit 101).
#[test]
fn a_closed_stdout_ends_the_command_without_a_panic() {
    use std::os::unix::process::ExitStatusExt;
    for args in [
        &["run", "--list"][..],
        &["layout", "arange(4096).view(64,64).T"],
    ] {
        let mut child = common::stridelab_command()
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start stridelab");
        // Closing the read end before the first line is written makes every write fail.
        drop(child.stdout.take());
        let out = child.wait_with_output().expect("wait for stridelab");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(
            out.status.success() || out.status.signal() == Some(13),
            "{args:?}: {:?} {stderr}",
            out.status
        );
    }
}
