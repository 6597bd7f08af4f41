//! The per-reference and padding parts of a simulated loop nest (`harness::sim::loops`): the
//! data its sentences (`loops_words`) are built from, in a file both import.

use serde::Serialize;

/// One reference's counts on one level.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ReferenceLevel {
    pub level: String,
    pub loads: u64,
    pub stores: u64,
    pub misses: u64,
    pub compulsory: u64,
    pub capacity: u64,
    pub conflict: u64,
    /// The sets its conflict misses fell in most, with their counts (most first).
    pub top_conflict_sets: Vec<(u64, u64)>,
    /// Distinct sets its conflict misses fell in.
    pub conflict_sets: u64,
}

/// One array reference: where it is, its innermost stride and the model of it, its counts.
#[derive(Debug, Clone, Serialize)]
pub struct ReferenceOutput {
    pub reference: String,
    /// 1-based.
    pub statement: usize,
    pub array: String,
    pub loads_per_iteration: usize,
    pub stores_per_iteration: usize,
    /// Bytes between two consecutive iterations of the innermost loop.
    pub stride_bytes: i64,
    /// What the stride is, in words.
    pub stride: String,
    /// The set/GCD model's verdict on one innermost run, per level (analytic).
    pub model: Vec<String>,
    /// Simulated, per level; empty when the nest was too long to attribute.
    pub levels: Vec<ReferenceLevel>,
}

/// One leading dimension tried for an array, re-simulated.
#[derive(Debug, Clone, Serialize)]
pub struct PaddingCandidate {
    pub ld: usize,
    /// Conflict misses of the whole nest per level, simulated.
    pub conflict: Vec<u64>,
    pub misses: Vec<u64>,
}

/// The padding search for one array.
#[derive(Debug, Clone, Serialize)]
pub struct PaddingOutput {
    pub array: String,
    pub ld: usize,
    /// The nest as declared, per level (simulated).
    pub conflict_before: Vec<u64>,
    pub misses_before: Vec<u64>,
    pub candidates: Vec<PaddingCandidate>,
    /// Index into `candidates` of the one that removes the most conflict misses, if any does
    /// (of those that remove as many, the one with the fewest misses, then the least padding).
    pub best: Option<usize>,
    pub sentence: String,
}
