//! `stridelab completions SHELL` and `stridelab man [SUBCOMMAND]`: shell completion scripts and
//! man pages, generated from the same clap definitions the parser uses, so they never drift
//! from it. Hidden (test-only) options are left out of both; the main page's list of
//! subcommand pages names pages `stridelab man SUBCOMMAND` prints.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Command, CommandFactory};
use clap_complete::Shell;

use super::Cli;

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to write a completion script for (to stdout), e.g.
    /// `stridelab completions bash > /etc/bash_completion.d/stridelab`.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// The subcommands with a page of their own (every subcommand but `help`).
const PAGES: &[&str] = &[
    "layout",
    "run",
    "gate",
    "report",
    "sim",
    "why",
    "info",
    "infer",
    "wisdom",
    "model",
    "completions",
    "man",
];

#[derive(Debug, Args)]
pub struct ManArgs {
    /// The subcommand whose page (stridelab-SUBCOMMAND(1)) to print; without it, stridelab(1).
    #[arg(value_name = "SUBCOMMAND", value_parser = clap::builder::PossibleValuesParser::new(PAGES))]
    pub subcommand: Option<String>,
}

/// Why the main page lists pages of its own name: where they come from.
const SUBPAGES_HELP: &str = "Each subcommand has its own page, stridelab-SUBCOMMAND(1): \
     `stridelab man SUBCOMMAND` prints it (`stridelab man sim | man -l -`; to install all of \
     them, write each to a man1 directory as stridelab-SUBCOMMAND.1).";

/// Writes the completion script of `args.shell` to stdout.
pub fn completions(args: CompletionsArgs) -> anyhow::Result<ExitCode> {
    let mut command = without_hidden(&Cli::command());
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut command, "stridelab", &mut out);
    write_stdout(&out)
}

/// `command` without its hidden options and subcommands: clap_complete's scripts list hidden
/// arguments, and a completion must not offer what `--help` does not show.
fn without_hidden(command: &Command) -> Command {
    let mut visible = Command::new(command.get_name().to_string());
    if let Some(version) = command.get_version() {
        visible = visible.version(version.to_string());
    }
    if let Some(about) = command.get_about() {
        visible = visible.about(about.clone());
    }
    for arg in command.get_arguments().filter(|a| !a.is_hide_set()) {
        visible = visible.arg(arg.clone());
    }
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        visible = visible.subcommand(without_hidden(sub));
    }
    visible
}

/// Writes stridelab(1), or stridelab-SUBCOMMAND(1), as roff to stdout.
pub fn man(args: ManArgs) -> anyhow::Result<ExitCode> {
    let mut out = Vec::new();
    render_page(args.subcommand.as_deref(), &mut out).context("cannot render the man page")?;
    write_stdout(&out)
}

/// Renders one page: the main one (with [`SUBPAGES_HELP`]) or a subcommand's, named as the
/// main page's list names it.
fn render_page(subcommand: Option<&str>, out: &mut Vec<u8>) -> anyhow::Result<()> {
    let mut command = Cli::command().disable_help_subcommand(true);
    let main_help = command
        .get_after_help()
        .map(|h| h.to_string())
        .unwrap_or_default();
    command = command.after_long_help(format!("{main_help}\n\n{SUBPAGES_HELP}"));
    command.build();
    let page = match subcommand {
        None => command,
        Some(name) => command
            .find_subcommand(name)
            .cloned()
            .with_context(|| format!("no subcommand `{name}`"))?,
    };
    let source = format!("stridelab {}", env!("CARGO_PKG_VERSION"));
    clap_mangen::Man::new(page).source(source).render(out)?;
    Ok(())
}

fn write_stdout(bytes: &[u8]) -> anyhow::Result<ExitCode> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(bytes)
        .and_then(|()| stdout.flush())
        .context("cannot write to stdout")?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_page_the_main_page_lists_can_be_printed() {
        let mut command = Cli::command().disable_help_subcommand(true);
        command.build();
        let names: Vec<&str> = command.get_subcommands().map(|s| s.get_name()).collect();
        assert_eq!(names, PAGES);
        let mut main = Vec::new();
        render_page(None, &mut main).unwrap();
        let main = String::from_utf8(main).unwrap();
        for name in PAGES {
            assert!(main.contains(&format!("stridelab\\-{name}(1)")), "{name}");
            let mut page = Vec::new();
            render_page(Some(name), &mut page).unwrap();
            let page = String::from_utf8(page).unwrap();
            assert!(
                page.contains(&format!("\n.TH stridelab-{name} 1 ")),
                "{name}: {}",
                &page[..page.len().min(200)]
            );
        }
        assert!(!main.contains("stridelab\\-help"), "{main}");
    }

    #[test]
    fn completions_leave_out_hidden_options() {
        let visible = without_hidden(&Cli::command());
        let sim = visible.find_subcommand("sim").unwrap();
        assert!(sim.get_arguments().any(|a| a.get_id() == "preset"));
        assert!(!sim.get_arguments().any(|a| a.get_id() == "sysfs_root"));
    }
}
