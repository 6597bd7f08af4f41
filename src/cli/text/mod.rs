//! The text the CLI prints, kept where it prints: tables ([`table`]), `run`'s summary and
//! progress ([`run_summary`], [`progress`]), a simulated point ([`sim`]), `layout`'s
//! explanation and its cache section ([`layout`], [`layout_cache`]) and the catalogue listing
//! ([`listing`]).

pub mod layout;
pub mod layout_cache;
pub mod listing;
pub mod progress;
pub mod run_summary;
pub mod sim;
pub mod table;
