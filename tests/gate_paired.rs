//! `stridelab gate --base-binary` with real binaries: the test binary compared with itself
//! passes, and the same binary run as a candidate with a 40% injected slowdown of `row-sum`
//! (`STRIDELAB_INJECT_SLOWDOWN` at run time: building a second binary would take minutes)
//! fails naming row-sum. Thresholds are wide (10%, floor 5%): the test pins the mechanism on a
//! shared machine; the calibrated defaults are `scripts/gate-calibrate.sh`'s business. Plus the
//! base-build errors that must exit 2 with the fix named: an unknown revision, a shallow clone,
//! a commit that does not build. And SIGTERM during the rounds: exit 130, no temporary files.
//!
//! The measuring gates run one after the other (a lock): they pin their processes to the same
//! CPU, and two at once would measure each other.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;

use common::signals::{signal, wait};

static MEASURING: Mutex<()> = Mutex::new(());

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_stridelab")
}

fn suite() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/gate/tiny.toml")
        .to_string_lossy()
        .into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The gate of this binary against itself on the tiny suite; `slowdown` goes to the
/// candidate's environment. Returns the output and the JSON verdict.
fn paired(slowdown: Option<&str>) -> (Output, Value) {
    let _serial = MEASURING.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let verdict = dir.path().join("verdict.json");
    let mut command = Command::new(bin());
    command
        .args(["gate", "--base-binary", bin(), "--suite", &suite()])
        // Up to 40 rounds: under the test suite's own load two wild rounds in 12 left the
        // +40% point undecided at 12; α stated, so a change of the default keeps this test.
        .args(["--rounds", "8", "--max-rounds", "40", "--time-budget", "60"])
        .args([
            "--threshold",
            "10%",
            "--floor",
            "5%",
            "--alpha",
            "0.05",
            "--seed",
            "7",
        ])
        .args(["--quiet", "--export-json"])
        .arg(&verdict)
        .env_remove("STRIDELAB_INJECT_SLOWDOWN");
    if let Some(spec) = slowdown {
        command.env("STRIDELAB_INJECT_SLOWDOWN", spec);
    }
    let out = command.output().unwrap();
    let text = std::fs::read_to_string(&verdict)
        .unwrap_or_else(|e| panic!("no verdict ({e}): {}", stderr(&out)));
    (out, serde_json::from_str(&text).unwrap())
}

fn timing_row<'a>(verdict: &'a Value, kernel: &str) -> &'a Value {
    verdict["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["kernel"] == kernel && r["track"] == "timing")
        .unwrap_or_else(|| panic!("no {kernel} timing row: {verdict:#}"))
}

#[test]
fn a_slowed_candidate_fails_against_its_base_and_the_same_build_passes_against_itself() {
    let (out, verdict) = paired(Some("row-sum:40"));
    assert_eq!(out.status.code(), Some(1), "{}\n{verdict:#}", stderr(&out));
    let regressed: Vec<&str> = verdict["regressed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(regressed.len(), 1, "{regressed:?}");
    // A timing regression, not a failed point: the re-reads leave the checksum alone.
    assert_eq!(verdict["failures"], 0, "{verdict:#}");
    assert!(
        regressed[0].starts_with("row-sum ")
            && regressed[0].ends_with("| time per run, paired rounds (timed)"),
        "{regressed:?}"
    );
    let row = timing_row(&verdict, "row-sum");
    assert!(row["change"].as_f64().unwrap() > 0.15, "{row:#}");
    assert!(row["ci"][0].as_f64().unwrap() > 0.05, "{row:#}");
    assert!(row["rounds"].as_u64().unwrap() >= 8, "{row:#}");
    // Real extra loads: the candidate's simulation sees them, its misses stay the same.
    assert_eq!(verdict["deterministic_regressions"], 0, "{verdict:#}");
    // The default test, named in the verdict.
    assert_eq!(
        verdict["method"]["options"]["statistic"], "sign",
        "{verdict:#}"
    );
    let candidate = verdict["method"]["candidate"].as_str().unwrap();
    assert!(
        candidate.contains("injected slowdown row-sum +40% (from the environment)"),
        "{candidate}"
    );
    assert!(
        !verdict["method"]["base"]
            .as_str()
            .unwrap()
            .contains("injected"),
        "the base never runs slowed: {verdict:#}"
    );
    assert!(
        stderr(&out).contains("regression: row-sum "),
        "{}",
        stderr(&out)
    );

    let (out, verdict) = paired(None);
    assert_eq!(out.status.code(), Some(0), "{}\n{verdict:#}", stderr(&out));
    assert_eq!(verdict["timing_judged"], 3, "{verdict:#}");
    assert_eq!(verdict["simulated_judged"], 6, "{verdict:#}");
    let headline = stderr(&out);
    assert!(
        headline.contains("gate: PASS; timing: 3 of 3 point(s) judged"),
        "{headline}"
    );
}

/// Two rounds cannot decide any point (the sign test's interval cannot close): the verdict
/// says so from its own numbers, with what would decide them, and says what the rounds took; a
/// prebuilt base has no build to account for.
#[test]
fn when_most_points_stay_undecided_the_verdict_says_what_would_decide_them() {
    let _serial = MEASURING.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let (json, summary) = (
        dir.path().join("verdict.json"),
        dir.path().join("summary.md"),
    );
    let out = Command::new(bin())
        .args(["gate", "--base-binary", bin(), "--suite", &suite()])
        .args(["--rounds", "2", "--max-rounds", "2", "--time-budget", "60"])
        .args(["--seed", "7", "--quiet", "--export-json"])
        .arg(&json)
        .arg("--export-markdown")
        .arg(&summary)
        .env_remove("STRIDELAB_INJECT_SLOWDOWN")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let verdict: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(verdict["inconclusive"], 3, "{verdict:#}");
    let context = &verdict["method"]["rounds_context"];
    assert_eq!(context["stop"], "max-rounds", "{verdict:#}");
    assert_eq!(context["budget_s"], 60.0, "{verdict:#}");
    assert!(verdict["method"]["base_build"].is_null(), "{verdict:#}");
    let advice = verdict["advice"]
        .as_array()
        .and_then(|a| a.iter().find(|a| a["kind"] == "points-undecided"))
        .unwrap_or_else(|| panic!("no advice on the undecided points: {verdict:#}"));
    let text = advice["text"].as_str().unwrap();
    assert!(
        text.starts_with(
            "3 of 3 timed points are still inconclusive (they pass) after 2 rounds each"
        ),
        "{text}"
    );
    assert!(text.contains("the 2 rounds --max-rounds allows"), "{text}");
    assert!(text.contains("below the 2.5% threshold"), "{text}");
    assert_eq!(advice["try_next"], serde_json::json!(["--max-rounds 500"]));
    let md = std::fs::read_to_string(&summary).unwrap();
    assert!(
        md.contains("**Time.** A prebuilt base binary; rounds "),
        "{md}"
    );
    assert!(md.contains("(--time-budget 60 s)"), "{md}");
    assert!(md.contains("**What to do.** 3 of 3 timed points"), "{md}");
    assert!(md.contains("Try: `--max-rounds 500`."), "{md}");
}

/// SIGTERM, what a CI runner's timeout and `kill` send, stops the rounds as Ctrl-C does: exit
/// 130, nothing judged or written, and the point files' temporary directory removed.
#[test]
fn sigterm_during_the_rounds_exits_130_and_leaves_no_temporary_directory() {
    let _serial = MEASURING.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let verdict = dir.path().join("verdict.json");
    let log = dir.path().join("stderr.txt");
    let seed = "424242";
    // More rounds than the test will wait for: only the signal ends this gate.
    let mut child = Command::new(bin())
        .args(["gate", "--base-binary", bin(), "--suite", &suite()])
        .args([
            "--rounds",
            "200",
            "--max-rounds",
            "500",
            "--time-budget",
            "3600",
        ])
        .args(["--seed", seed, "--quiet", "--export-json"])
        .arg(&verdict)
        .env_remove("STRIDELAB_INJECT_SLOWDOWN")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let work = std::env::temp_dir().join(format!("stridelab-gate-{}-{seed}", child.id()));
    let deadline = Instant::now() + Duration::from_secs(60);
    while !work.exists() {
        let ended = child.try_wait().unwrap();
        if ended.is_some() || Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "no {} while the gate ran ({ended:?}): {}",
                work.display(),
                std::fs::read_to_string(&log).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // A round under way, so the signal lands while pairs are measured.
    std::thread::sleep(Duration::from_millis(500));
    signal(&child, "-TERM");
    let code = wait(&mut child);
    let err = std::fs::read_to_string(&log).unwrap();
    assert_eq!(code, Some(130), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    assert!(!work.exists(), "{} was left behind", work.display());
    assert!(
        !verdict.exists(),
        "a verdict was written for rounds never finished"
    );
}

/// Runs `git` in `dir` with a fixed identity; panics on failure.
fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .output()
        .expect("git");
    assert!(out.status.success(), "git {args:?}: {}", stderr(&out));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn git_available() -> bool {
    common::tool_available("git", &["--version"], "the --base revision tests")
}

/// `stridelab gate ARGS` in `dir`, its base builds under `dir/target`.
fn gate_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(bin())
        .current_dir(dir)
        .arg("gate")
        .args(args)
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .output()
        .unwrap()
}

/// A repository of a crate that does not compile, with `commits` commits.
fn broken_repository(commits: usize) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(repo.join("src")).unwrap();
    git(&repo, &["init", "-q"]);
    std::fs::write(
        repo.join("Cargo.toml"),
        "[package]\nname = \"stridelab\"\nversion = \"0.0.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    for i in 0..commits {
        let source = format!("fn main() {{ let x: u32 = \"commit {i}\"; }}\n");
        std::fs::write(repo.join("src/main.rs"), source).unwrap();
        git(&repo, &["add", "."]);
        git(&repo, &["commit", "-q", "-m", &format!("commit {i}")]);
    }
    (dir, repo)
}

#[test]
fn a_base_that_does_not_build_exits_2_naming_the_commit_and_the_build_output() {
    if !git_available() {
        return;
    }
    let (_dir, repo) = broken_repository(1);
    let commit = git(&repo, &["rev-parse", "HEAD"]);
    let out = gate_in(&repo, &["--base", "HEAD", "--quiet"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("the base commit {commit} cannot be built")),
        "{err}"
    );
    assert!(
        err.contains("mismatched types"),
        "the build's own lines: {err}"
    );
    assert!(
        !repo
            .join("target/gate-base")
            .join(&commit)
            .join("stridelab")
            .exists()
    );
    // The repository itself is untouched: no worktree, nothing staged.
    assert_eq!(
        git(&repo, &["status", "--porcelain", "--untracked-files=no"]),
        ""
    );
}

#[test]
fn an_unknown_revision_and_a_shallow_clone_exit_2_saying_what_is_missing() {
    if !git_available() {
        return;
    }
    let (dir, repo) = broken_repository(2);
    let out = gate_in(&repo, &["--base", "no-such-branch", "--quiet"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--base no-such-branch: no such commit"),
        "{err}"
    );
    assert!(!err.contains("shallow"), "{err}");

    let clone = dir.path().join("clone");
    let url = format!("file://{}", repo.display());
    git(
        dir.path(),
        &["clone", "-q", "--depth", "1", &url, clone.to_str().unwrap()],
    );
    let out = gate_in(&clone, &["--base", "HEAD~1", "--quiet"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("this clone is shallow"), "{err}");
    assert!(err.contains("fetch-depth: 0"), "{err}");

    let out = gate_in(&repo, &["--base", "--all", "--quiet"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn unusable_base_binaries_and_flags_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-binary");
    let cases: &[(&[&str], &str)] = &[
        (
            &["--base-binary", missing.to_str().unwrap()],
            "the base binary",
        ),
        (&["--base-binary", "/bin/true"], "not a stridelab version"),
        (&["--base-binary", bin(), "--out", "x.json"], "--out writes"),
        (
            &["--base", "HEAD", "--base-binary", bin()],
            "cannot be used with",
        ),
        (&["--base-binary", bin(), "--rounds", "0"], "--rounds"),
        (
            &["--base-binary", bin(), "--statistic", "mean"],
            "unknown statistic `mean`",
        ),
    ];
    for (args, expected) in cases {
        let out = Command::new(bin())
            .arg("gate")
            .args(*args)
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(expected), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}
