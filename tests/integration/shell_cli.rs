//! `stridelab completions SHELL`, `stridelab man` and `--help` end to end: generated from the
//! parser's own definitions, so every subcommand appears; an unknown shell exits 2.

use crate::common;
use common::stridelab;

const SUBCOMMANDS: [&str; 9] = [
    "layout",
    "run",
    "gate",
    "report",
    "sim",
    "info",
    "infer",
    "completions",
    "man",
];

#[test]
fn completion_scripts_name_every_subcommand() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = stridelab(&["completions", shell]);
        assert!(out.status.success(), "{shell}");
        let script = String::from_utf8(out.stdout).unwrap();
        for sub in SUBCOMMANDS {
            assert!(script.contains(sub), "{shell} script lacks {sub}");
        }
    }
}

#[test]
fn the_man_page_is_roff_with_every_subcommand() {
    let out = stridelab(&["man"]);
    assert!(out.status.success());
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(page.contains(".TH stridelab 1"), "{page}");
    for sub in SUBCOMMANDS {
        assert!(page.contains(sub), "man page lacks {sub}");
    }
    assert!(
        page.contains("main job"),
        "the man page says what bare stridelab does"
    );
}

#[test]
fn help_says_what_bare_stridelab_runs() {
    let out = stridelab(&["--help"]);
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    assert!(help.contains("Without a subcommand"), "{help}");
    assert!(help.contains("reports/latest/index.html"), "{help}");
}

#[test]
fn an_unknown_shell_is_a_usage_error() {
    let out = stridelab(&["completions", "nosh"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("possible values"));
}
