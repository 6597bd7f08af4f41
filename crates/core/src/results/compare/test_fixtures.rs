//! Results documents the comparison tests are built from: a kernel and its `read` reference
//! with chosen samples and miss counts.

use std::collections::BTreeMap;

use crate::results::schema::tests::sample_document;
use crate::results::test_docs::simulated_l1;
use crate::results::{ReferenceComparison, ResultsDocument};
use crate::stats::SplitMix64;

/// A two-point document: `row-sum` and the `read` reference, with the given samples.
pub(super) fn document(
    kernel_samples: &[f64],
    read_samples: &[f64],
    l1_misses: u64,
) -> ResultsDocument {
    let mut doc = sample_document();
    let mut kernel = doc.records[0].clone();
    kernel.simulated = Some(simulated_l1(l1_misses));
    kernel.timing.as_mut().unwrap().samples_ns_per_run = kernel_samples.to_vec();
    let mut read = kernel.clone();
    read.index = 1;
    read.kernel = "read".into();
    read.timing.as_mut().unwrap().samples_ns_per_run = read_samples.to_vec();
    doc.records = vec![kernel, read];
    doc.suite.points = 2;
    doc
}

pub(super) fn noisy(center: f64, n: usize, seed: u64) -> Vec<f64> {
    let mut rng = SplitMix64::new(seed);
    (0..n)
        .map(|_| center * (1.0 + (rng.next_u64() % 1000) as f64 / 50_000.0))
        .collect()
}

/// An interleaved read reference with the given ratio and per-round samples.
pub(super) fn read_reference(ratio: f64, samples_ns_per_run: Vec<f64>) -> ReferenceComparison {
    ReferenceComparison {
        reference: "read".into(),
        bytes: 8,
        variants: BTreeMap::new(),
        best_variant: "plain".into(),
        reference_gb_per_s: 1.0,
        ratio,
        samples_ns_per_run,
    }
}
