//! What a strided view does to each set-associative cache level, as data for `stridelab layout`
//! and the records' model predictions: the view's strides and the sets they reach ([`cache`]),
//! the walks simulated and judged ([`walks`]), padding advice for a walk with conflict misses
//! ([`padding`]), everything for one level together ([`report`]), every level of a chosen
//! geometry with what each adds to the levels above ([`levels`]), how much of its long lists
//! `--json` prints ([`listing`]) and the strip of sets drawn under a level ([`strip`]); and
//! the sentences that say it all, labelled by topic so a renderer only lays them out: a walk's
//! ([`words`]), a level's padding advice ([`padding_words`]) and a whole level's
//! ([`sentences`]).
//!
//! It stands on the layout model and the cache model alone (floor 2, beside the kernels): a
//! view's explanation needs its offsets and a level's geometry, never a kernel or a buffer.

#![forbid(unsafe_code)]

pub mod cache;
pub mod levels;
pub mod listing;
pub mod padding;
pub mod padding_words;
pub mod report;
pub mod sentences;
pub mod strip;
pub mod walks;
pub mod words;
