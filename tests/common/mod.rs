//! Helpers shared by integration tests: running the binary under test, and the rules for a
//! test whose external tool is missing or unusable here, or whose case this machine cannot run. Each test crate uses a subset, hence the allow.
#![allow(dead_code)]

pub mod cachegrind;
pub mod guarded;
pub mod signals;

use std::process::{Command, Output};

/// Set (to anything) by `.ci/run`: a missing external tool then fails the test that needs it
/// instead of skipping it, so CI cannot pass without the comparisons it claims to run.
pub const REQUIRE_TOOLS: &str = "STRIDELAB_REQUIRE_TOOLS";

/// A command for the binary under test, with the copy planner off (see [`WISDOM_OFF`]) and
/// the time model off (see [`MODEL_OFF`]).
pub fn stridelab_command() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_stridelab"));
    command.env(WISDOM_OFF.0, WISDOM_OFF.1);
    command.env(MODEL_OFF.0, MODEL_OFF.1);
    command
}

/// The time model off: a test's run probes nothing and never writes the user's model file; the
/// model's own tests name a file of their own.
pub const MODEL_OFF: (&str, &str) = ("STRIDELAB_MODEL", "off");

/// The copy planner off: tests get the analytic schedules, reproducible on every machine, and
/// never write the user's wisdom file; the planner's own tests name a file of their own.
pub const WISDOM_OFF: (&str, &str) = ("STRIDELAB_WISDOM", "off");

/// Runs the binary under test with `args` and returns what it printed and its status.
pub fn stridelab(args: &[&str]) -> Output {
    stridelab_command()
        .args(args)
        .output()
        .expect("run stridelab")
}

/// Words as a shell reads them: whitespace separates them, except inside single quotes, which
/// are dropped (a catalogue example's `'nest=for i in 0..8: s += a[i]'` is one word).
pub fn shell_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    for c in text.chars() {
        match c {
            '\'' => quoted = !quoted,
            c if c.is_whitespace() && !quoted => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            c => word.push(c),
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// Whether `program args…` runs and succeeds here. When it does not, the test that needs it
/// skips with a note naming `what_is_skipped`, or fails when [`REQUIRE_TOOLS`] is set.
pub fn tool_available(program: &str, args: &[&str], what_is_skipped: &str) -> bool {
    let ok = Command::new(program)
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        tool_missing(&format!("`{program} {}`", args.join(" ")), what_is_skipped);
    }
    ok
}

/// Reports a missing tool: a note, or a test failure when [`REQUIRE_TOOLS`] is set.
pub fn tool_missing(tool: &str, what_is_skipped: &str) {
    tool_unusable(&format!("{tool} failed or is missing"), what_is_skipped);
}

/// Reports a tool that is here but cannot do what the test needs on this machine (`why`:
/// cachegrind refuses the geometry, the kernel withholds perf events): a note, or a test
/// failure when [`REQUIRE_TOOLS`] is set, like a missing tool.
pub fn tool_unusable(why: &str, what_is_skipped: &str) {
    assert!(
        std::env::var_os(REQUIRE_TOOLS).is_none(),
        "{why}, and {REQUIRE_TOOLS} is set: {what_is_skipped} must run"
    );
    skip_note(why, what_is_skipped);
}

/// Reports one case left out because of what this machine is (not its tools: the copy engine
/// streams a copy that size here, so the fixture's order no longer matches). A note only, even
/// with [`REQUIRE_TOOLS`]: no setup could make the case run on this machine.
pub fn case_skipped(why: &str, what_is_skipped: &str) {
    skip_note(why, what_is_skipped);
}

/// Every skip prints this one line.
fn skip_note(why: &str, what_is_skipped: &str) {
    eprintln!("note: {why}; skipping {what_is_skipped}");
}

/// This machine's data-cache levels, as the binary detects them once per process.
pub fn detected_levels() -> Vec<stridelab::cache::geometry::CacheLevel> {
    stridelab::cache::geometry::Geometry::detect().data_levels()
}

/// The analytic copy planner for this machine, as a command builds it from its one detection.
pub fn planner() -> std::sync::Arc<stridelab_copy::Planner> {
    std::sync::Arc::new(stridelab::kernels::copy_planner::analytic_planner(
        &stridelab::cache::geometry::Geometry::detect(),
    ))
}
