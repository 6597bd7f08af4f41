//! What a strided view does to one set-associative cache level, as data for `stridelab layout`:
//! the view's strides and the sets they reach ([`cache`]), the walks simulated and judged
//! ([`walks`]), padding advice for a walk with conflict misses ([`padding`]), everything for
//! one level together ([`report`]), every level of a chosen geometry with what each adds to
//! the levels above ([`levels`]), how much of its long lists `--json` prints
//! ([`listing`]) and the strip of sets drawn under a level ([`strip`]). The words are the CLI's (`cli::text::layout_cache`).

#![forbid(unsafe_code)]

pub(crate) mod cache;
pub(crate) mod levels;
pub(crate) mod listing;
pub(crate) mod padding;
pub(crate) mod report;
pub(crate) mod strip;
pub(crate) mod walks;
