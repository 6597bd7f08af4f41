//! The text the CLI prints, kept where it prints: tables ([`table`]), `run`'s summary and
//! progress ([`run_summary`], [`progress`]), a simulated point ([`sim`]), `layout`'s
//! explanation and its cache section ([`layout`], [`layout_cache`]), the catalogue listing
//! ([`listing`]) and `info`'s machine table ([`info`]).

pub(crate) mod history;
pub(crate) mod info;
pub(crate) mod layout;
pub(crate) mod layout_cache;
pub(crate) mod listing;
pub(crate) mod progress;
pub(crate) mod run_blocks;
pub(crate) mod run_summary;
pub(crate) mod sim;
pub(crate) mod table;
