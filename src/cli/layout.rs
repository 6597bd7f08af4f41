//! `stridelab layout EXPR` (to be built).

use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct LayoutArgs {
    /// The view expression, e.g. 'arange(12).view(3,4).T'.
    pub expr: String,
    /// Print one JSON object instead of the explanation.
    #[arg(long)]
    pub json: bool,
}

pub fn run(_args: LayoutArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("layout: not built yet")
}
