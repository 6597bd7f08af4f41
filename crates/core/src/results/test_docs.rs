//! Pieces of results documents shared by the test modules of `results` and the command line.

use crate::results::{Provenance, SimulatedLevel, SimulatedMisses, SimulationCut, SimulationScope};

/// A full, uncut simulation of 100 loads on one 48K 12-way L1d with `l1_misses` misses, all
/// compulsory.
pub fn simulated_l1(l1_misses: u64) -> SimulatedMisses {
    SimulatedMisses {
        source: Provenance::Simulated,
        scope: SimulationScope {
            run_accesses: Some(100),
            simulated_accesses: 100,
            kind: "full".into(),
            cut: Some(SimulationCut::None),
            note: None,
        },
        start: "cold".into(),
        levels: vec![SimulatedLevel {
            name: "L1d".into(),
            size: 48 << 10,
            ways: 12,
            line: 64,
            sets: 64,
            loads: 100,
            stores: 0,
            load_misses: l1_misses,
            store_misses: 0,
            misses: l1_misses,
            miss_rate: l1_misses as f64 / 100.0,
            compulsory: l1_misses,
            capacity: 0,
            conflict: 0,
        }],
    }
}
