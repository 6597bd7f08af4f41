//! What the simulator's models beyond sets say of a control: the data TLB for the huge-pages
//! control (the base point's stream translated with 4 KiB and with 2 MiB pages), each level's
//! misses per access beside the caches', so the verdict can say whether a page-size effect was
//! predicted rather than calling it "not modelled".

use std::sync::Arc;

use stridelab_copy::Planner;

use crate::cache::geometry::ChosenGeometry;
use crate::cache::sim::{Engine, Policy};
use crate::cache::tlb::{PageSize, choose};
use crate::harness::sim::run::{SimRequest, simulate_point_on};

use super::judge::LevelChange;

/// The point's simulation inputs, shared by every extra simulation of a `why` run.
pub(super) struct SimInputs<'a> {
    pub kernel: &'a str,
    pub geometry: &'a ChosenGeometry,
    pub max_accesses: u64,
    pub copies: Arc<Planner>,
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
        let request = SimRequest {
            kernel: inputs.kernel,
            words: base_words,
            geometry: inputs.geometry,
            policy: Policy::LRU,
            warm: false,
            max_accesses: inputs.max_accesses,
            max_sim_memory: MAX_SIM_MEMORY,
            copies: Arc::clone(&inputs.copies),
            tlb: Some(choice),
        };
        simulate_point_on(Engine::Fast, &request).map(|report| report.tlb)
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
