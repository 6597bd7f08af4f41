//! Helpers shared by integration tests: running the binary under test, and the rule for a
//! test whose external tool is missing. Each test crate uses a subset, hence the allow.
#![allow(dead_code)]

pub mod cachegrind;
pub mod guarded;
pub mod signals;

use std::process::{Command, Output};

/// Set (to anything) by `.ci/run`: a missing external tool then fails the test that needs it
/// instead of skipping it, so CI cannot pass without the comparisons it claims to run.
pub const REQUIRE_TOOLS: &str = "STRIDELAB_REQUIRE_TOOLS";

/// A command for the binary under test, with the copy planner off (see [`WISDOM_OFF`]).
pub fn stridelab_command() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_stridelab"));
    command.env(WISDOM_OFF.0, WISDOM_OFF.1);
    command
}

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
    assert!(
        std::env::var_os(REQUIRE_TOOLS).is_none(),
        "{tool} failed or is missing, and {REQUIRE_TOOLS} is set: {what_is_skipped} must run"
    );
    eprintln!("note: {tool} failed or is missing; skipping {what_is_skipped}");
}
