//! `stridelab completions SHELL` and `stridelab man`: shell completion scripts and the man page,
//! generated from the same clap definitions the parser uses, so they never drift from it.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, CommandFactory};
use clap_complete::Shell;

use super::Cli;

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to write a completion script for (to stdout), e.g.
    /// `stridelab completions bash > /etc/bash_completion.d/stridelab`.
    #[arg(value_enum)]
    pub shell: Shell,
}

#[derive(Debug, Args)]
pub struct ManArgs {}

/// Writes the completion script of `args.shell` to stdout.
pub fn completions(args: CompletionsArgs) -> anyhow::Result<ExitCode> {
    let mut command = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut command, "stridelab", &mut out);
    write_stdout(&out)
}

/// Writes the man page (roff) to stdout: `stridelab man | man -l -`.
pub fn man(_: ManArgs) -> anyhow::Result<ExitCode> {
    let mut out = Vec::new();
    clap_mangen::Man::new(Cli::command())
        .render(&mut out)
        .context("cannot render the man page")?;
    write_stdout(&out)
}

fn write_stdout(bytes: &[u8]) -> anyhow::Result<ExitCode> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(bytes)
        .and_then(|()| stdout.flush())
        .context("cannot write to stdout")?;
    Ok(ExitCode::SUCCESS)
}
