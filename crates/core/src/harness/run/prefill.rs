//! Prefilling the copy planner's wisdom: every timed point of a suite prepared and run once,
//! untimed, so each copy it makes is planned now rather than during a later measurement.

#![forbid(unsafe_code)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use stridelab_copy::{PlanEvent, Planner};

use crate::harness::run::session::point_label;
use crate::harness::suite::Plan;
use crate::kernels::spec::PrepareOptions;

/// What one point's run planned (or found in the wisdom).
#[derive(Debug)]
pub struct PrefilledPoint {
    pub label: String,
    pub plans: Vec<PlanEvent>,
    /// Why the point could not be prepared, if it could not.
    pub error: Option<String>,
}

/// Runs each timed point of `plan` once on this thread with `planner` (threads do not change a
/// copy's class here: each measuring thread copies on its own), calling `progress` after each;
/// stops between points when `stop` is set.
pub fn prefill_plans(
    plan: &Plan,
    planner: &Arc<Planner>,
    stop: &AtomicBool,
    mut progress: impl FnMut(&PrefilledPoint),
) -> Vec<PrefilledPoint> {
    let mut done = Vec::new();
    let options = PrepareOptions {
        huge_pages: false,
        simulate_only: false,
        copies: Arc::clone(planner),
        shift: Default::default(),
    };
    drop(planner.take_events());
    for point in plan.points.iter().filter(|p| p.timed()) {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let error = match (point.spec.prepare)(&point.params, &options) {
            Ok(mut instance) => {
                instance.run();
                None
            }
            Err(err) => Some(err.to_string()),
        };
        let prefilled = PrefilledPoint {
            label: point_label(point),
            plans: planner.take_events(),
            error,
        };
        progress(&prefilled);
        done.push(prefilled);
    }
    done
}
