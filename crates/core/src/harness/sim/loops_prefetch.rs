//! The hardware-prefetch model fed a user's loop nest (`sim --loop … --prefetch on`): the
//! nest's own stream, walked again for the model alone (a nest's walk is cheap to repeat and
//! feeds the same accesses in the same order as its simulation).

use crate::cache::prefetch::{PrefetchConfig, PrefetchReport};
use crate::cache::sim::Engine;
use crate::layout::loops::Placement;

use super::loops::{LoopSimError, LoopSimRequest, feed};
use super::prefetch::prefetch_model;

/// The model of `config` fed a loop nest's stream (once more, unrecorded, before it with
/// `warm`), as the nest's simulation is: the same accesses in the same order. The nest's
/// bounds were checked by its simulation.
pub fn nest_prefetch(
    request: &LoopSimRequest,
    config: Option<&PrefetchConfig>,
) -> Result<Option<PrefetchReport>, LoopSimError> {
    let levels = &request.geometry.levels;
    let Some(mut model) = prefetch_model(levels, config, request.max_sim_memory, Engine::Fast)?
    else {
        return Ok(None);
    };
    let placement = Placement::of(&request.nest.arrays)?;
    if request.warm {
        feed(request.nest, &placement, &mut model)?;
        model.reset_counts();
    }
    feed(request.nest, &placement, &mut model)?;
    Ok(Some(model.report()))
}
