//! The analytic set/GCD model's verdict on a simulated point's stride, in words `stridelab sim`
//! prints beside the simulated counts: how many sets the stride uses (the closed form, or one
//! per access when there are fewer accesses than that), how many of its lines the level holds,
//! and whether a repeated pass misses by capacity, by conflict or not at all — each with the
//! model's numbers as its reason.

use crate::cache::geometry::CacheLevel;
use crate::cache::model::{LevelPrediction, RepeatMisses};
use crate::kernels::StridePattern;
use crate::units::format_count;

/// What the model says of `pattern` on `level`: the sets it uses (and by which count), the
/// lines the level holds of it, and the verdict on a repeated pass with its reason.
pub fn model_sentence(
    model: &LevelPrediction,
    level: &CacheLevel,
    pattern: &StridePattern,
) -> String {
    // The closed form counts the sets the stride cycles through; fewer accesses than that
    // reach only as many sets as they are, so the line says which of the two it prints. Its
    // numbers stay ungrouped: a comma inside gcd(…, …) would read as another argument.
    let closed = match model.closed_form_sets {
        Some(sets) => {
            let formula = format!(
                "S/gcd(s/L, S) = {}/gcd({}, {}) = {sets}",
                level.sets,
                pattern.stride_bytes.unsigned_abs() / u64::from(level.line),
                level.sets
            );
            if model.distinct_sets < sets {
                format!(
                    " (one per access: {} accesses; the stride would cycle through {formula})",
                    format_count(pattern.count)
                )
            } else {
                format!(" ({formula})")
            }
        }
        None => String::new(),
    };
    let verdict = match (model.repeat_misses, model.overflow_onset) {
        (RepeatMisses::Capacity, onset) => format!(
            "its {} lines outnumber the cache's {}, so a repeated pass misses by capacity{}",
            format_count(model.distinct_lines),
            format_count(model.cache_lines),
            onset
                .map(|k| format!(" (a set overflows from access {})", format_count(k)))
                .unwrap_or_default()
        ),
        // A conflict needs an overflow within the count, so its onset is known.
        (RepeatMisses::Conflict, Some(onset)) => format!(
            "a set overflows from access {}: {} lines compete for {} slots, though the cache \
             holds {}, so a repeated pass misses by conflict",
            format_count(onset),
            format_count(model.distinct_lines),
            format_count(model.usable_lines),
            format_count(model.cache_lines)
        ),
        (RepeatMisses::None, Some(onset)) => format!(
            "no set overflows at this count (one would from access {})",
            format_count(onset)
        ),
        (_, None) if model.overflow_searched < pattern.count => format!(
            "no set overflows in the first {} accesses searched",
            format_count(model.overflow_searched)
        ),
        (_, None) => "no set overflows".to_string(),
    };
    format!(
        "uses {} of {} sets{closed}; holds {} of its {} lines; {verdict}",
        format_count(model.distinct_sets),
        format_count(u64::from(level.sets)),
        format_count(model.usable_lines.min(model.distinct_lines)),
        format_count(model.distinct_lines)
    )
}
