//! The hardware-prefetch model (`cache::prefetch`) beside a simulated point, nest or trace:
//! which parameters a geometry gets, the model built on the simulated levels, and one stream
//! fed to the simulator and the model together (`sim --prefetch on`). A loop nest's model is
//! `loops_prefetch.rs`.

use crate::cache::geometry::{CacheLevel, ChosenGeometry};
use crate::cache::prefetch::{PrefetchConfig, PrefetchConfigError, PrefetchError, PrefetchModel};
use crate::cache::sim::Engine;

/// The model's parameters for `geometry`: its preset's, else this machine's by CPU vendor.
pub fn prefetch_config(geometry: &ChosenGeometry) -> Result<PrefetchConfig, PrefetchConfigError> {
    match geometry.preset_name() {
        Some(name) => PrefetchConfig::preset(name),
        None => Ok(PrefetchConfig::for_this_machine()),
    }
}

/// The model of `config` on `levels`, when asked for; the plain one beside the reference
/// simulator. Its state counts against `budget` on its own.
pub fn prefetch_model(
    levels: &[CacheLevel],
    config: Option<&PrefetchConfig>,
    budget: u64,
    engine: Engine,
) -> Result<Option<PrefetchModel>, PrefetchError> {
    config
        .map(|config| PrefetchModel::new(levels, config, budget, engine == Engine::Reference))
        .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::sim::{Policy, Simulator};

    #[test]
    fn a_preset_gets_its_parameters_and_the_model_sees_what_the_simulator_sees() {
        let geometry = ChosenGeometry::preset("amd-zen4").unwrap();
        let config = prefetch_config(&geometry).unwrap();
        assert_eq!(config.name, "amd-zen4");
        let levels = &geometry.levels;
        let mut simulator =
            Simulator::new(Engine::Fast, levels, Policy::LRU, false, 1 << 30).unwrap();
        let mut model = prefetch_model(levels, Some(&config), 1 << 30, Engine::Fast)
            .unwrap()
            .unwrap();
        crate::harness::sim::beside::feed_beside(
            simulator.sink(),
            None,
            Some(&mut model),
            |sink| {
                sink.load_run(1 << 32, 4, 1 << 16, 4);
            },
        );
        let l2 = simulator.stats()[1];
        let counts = model.counts();
        assert_eq!(counts.accesses, 1 << 16);
        assert_eq!(
            (counts.fill_accesses, counts.misses_without),
            (l2.accesses(), l2.misses())
        );
        assert!(
            prefetch_model(levels, None, 1 << 30, Engine::Fast)
                .unwrap()
                .is_none()
        );
    }
}
