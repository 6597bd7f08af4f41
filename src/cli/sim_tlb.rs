//! `sim --tlb 4k|2m|off`: which page size the data TLB beside the caches translates with, and
//! its levels (the `--preset`'s TLB table, else this CPU's, `cache::tlb::choose`).

use crate::cache::tlb::{PageSize, TlbChoice, choose};

/// The `--tlb` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum TlbArg {
    /// No TLB simulation (the output is the caches' alone).
    #[default]
    Off,
    /// 4 KiB pages.
    #[value(name = "4k")]
    Small,
    /// 2 MiB pages.
    #[value(name = "2m")]
    Huge,
}

impl TlbArg {
    /// The levels to simulate, or None for `off`; `preset` is `--preset`'s name.
    pub fn choice(self, preset: Option<&str>) -> anyhow::Result<Option<TlbChoice>> {
        let page = match self {
            TlbArg::Off => return Ok(None),
            TlbArg::Small => PageSize::Small,
            TlbArg::Huge => PageSize::Huge,
        };
        Ok(Some(choose(page, preset)?))
    }
}
