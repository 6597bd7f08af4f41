//! What the simulator's models beyond sets say of a control: the data TLB for the huge-pages
//! control (the base point's stream translated with 4 KiB and with 2 MiB pages) and the
//! hardware-prefetch model for the streams controls (base and variant with prefetch), each as
//! misses per access beside the caches', so the verdict can say whether a page-size or a
//! prefetch effect was predicted rather than calling it "not modelled".

use std::sync::Arc;

use stridelab_copy::Planner;

use crate::cache::geometry::ChosenGeometry;
use crate::cache::prefetch::PrefetchConfig;
use crate::cache::sim::{Engine, Policy};
use crate::cache::tlb::{PageSize, TlbChoice, choose};
use crate::harness::sim::prefetch::prefetch_config;
use crate::harness::sim::run::{SimRequest, simulate_point_on};

use super::judge::LevelChange;

/// The point's simulation inputs, shared by every extra simulation of a `why` run.
pub(super) struct SimInputs<'a> {
    pub kernel: &'a str,
    pub geometry: &'a ChosenGeometry,
    pub max_accesses: u64,
    pub copies: Arc<Planner>,
}

impl SimInputs<'_> {
    /// The `sim` request of the point `words`, with `tlb` and `prefetch` beside the caches if
    /// given.
    fn request<'a>(
        &'a self,
        words: &'a [String],
        tlb: Option<&'a TlbChoice>,
        prefetch: Option<&'a PrefetchConfig>,
    ) -> SimRequest<'a> {
        SimRequest {
            kernel: self.kernel,
            words,
            geometry: self.geometry,
            policy: Policy::LRU,
            warm: false,
            max_accesses: self.max_accesses,
            max_sim_memory: MAX_SIM_MEMORY,
            copies: Arc::clone(&self.copies),
            tlb,
            prefetch,
        }
    }
}

/// Most memory the extra simulations' state may take up front (as `sim`'s default).
const MAX_SIM_MEMORY: u64 = 1 << 30;

/// Per TLB level, misses per access of the base's stream with 4 KiB pages (`base`) and 2 MiB
/// pages (`variant`): what the simulator predicts of the huge-pages control. An error says why
/// the TLB could not be simulated here (no table for the geometry, a point too large), and the
/// caller says the factor is not modelled, with that reason.
pub(super) fn tlb_change(
    inputs: &SimInputs<'_>,
    base_words: &[String],
) -> Result<Vec<LevelChange>, String> {
    let preset = inputs.geometry.preset_name();
    let small = choose(PageSize::Small, preset).map_err(|e| e.to_string())?;
    let huge = choose(PageSize::Huge, preset).map_err(|e| e.to_string())?;
    let simulate = |choice| {
        simulate_point_on(
            Engine::Fast,
            &inputs.request(base_words, Some(choice), None),
        )
        .map(|report| report.tlb)
    };
    let (base, variant) = match (simulate(&small), simulate(&huge)) {
        (Ok(Some(base)), Ok(Some(variant))) => (base, variant),
        (Err(e), _) | (_, Err(e)) => return Err(e.to_string()),
        _ => return Err("the TLB simulation gave no counts".into()),
    };
    Ok(base
        .levels
        .iter()
        .zip(&variant.levels)
        .map(|(b, v)| LevelChange {
            level: b.name.clone(),
            base: b.misses_per_access,
            variant: v.misses_per_access,
        })
        .collect())
}

/// The prefetch fill level's misses per access with the prefetch model on, for the base point
/// (`base`) and the control's variant (`variant`): what the simulator predicts of a control
/// that changes the walk's streams. An error says why it could not be simulated.
pub(super) fn prefetch_change(
    inputs: &SimInputs<'_>,
    base_words: &[String],
    variant_words: &[String],
) -> Result<Vec<LevelChange>, String> {
    let config = prefetch_config(inputs.geometry).map_err(|e| e.to_string())?;
    let simulate = |words| {
        simulate_point_on(Engine::Fast, &inputs.request(words, None, Some(&config)))
            .map_err(|e| e.to_string())?
            .prefetch
            .ok_or_else(|| "the prefetch model gave no counts".to_string())
    };
    let (base, variant) = (simulate(base_words)?, simulate(variant_words)?);
    let per_access = |misses: u64, accesses: u64| misses as f64 / accesses.max(1) as f64;
    Ok(vec![LevelChange {
        level: format!("{} with prefetch", base.fill_level),
        base: per_access(base.counts.misses_with, base.counts.accesses),
        variant: per_access(variant.counts.misses_with, variant.counts.accesses),
    }])
}
