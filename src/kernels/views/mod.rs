//! What a strided view does to one set-associative cache level, as data for `stridelab layout`:
//! the view's strides and the sets they reach ([`cache`]), the walks simulated and judged
//! ([`walks`]), padding advice for a walk with conflict misses ([`padding`]) and everything for
//! one level together ([`report`]). The words are the CLI's (`cli::text::layout_cache`).

#![forbid(unsafe_code)]

pub(crate) mod cache;
pub(crate) mod padding;
pub(crate) mod report;
pub(crate) mod walks;
