//! The text the CLI prints, laid out where it prints: tables ([`table`]), `run`'s summary and
//! progress ([`run_summary`], [`progress`]), a simulated point ([`sim`]), loop nest ([`sim_loop`]) or trace ([`sim_trace`]) with the
//! prefetch model beside it ([`sim_prefetch`]), `layout`'s
//! explanation and its cache section ([`layout`], [`layout_cache`]), the catalogue listing
//! ([`listing`]), `info`'s machine table ([`info`]) and the time model's probes ([`model`]). The verdicts and sentences in them
//! are the library's (`explain`, `harness::run::verdicts`, `harness::sim::model_words`): this
//! floor labels, tabulates and wraps them.

pub(crate) mod history;
pub(crate) mod info;
pub(crate) mod layout;
pub(crate) mod layout_cache;
pub(crate) mod listing;
pub(crate) mod model;
pub(crate) mod progress;
pub(crate) mod run_blocks;
pub(crate) mod run_summary;
pub(crate) mod sim;
pub(crate) mod sim_loop;
pub(crate) mod sim_prefetch;
pub(crate) mod sim_tlb;
pub(crate) mod sim_trace;
pub(crate) mod table;
