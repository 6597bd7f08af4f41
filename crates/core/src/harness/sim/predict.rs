//! The model predictions a record carries (`results::ModelPrediction`), computed when the point
//! is measured: the set/GCD model of the kernel's strided pattern on each simulated data-cache
//! level, at the address the simulator places the pattern's buffer; the layout model's facts of
//! a view kernel's view; the catalogue's note on where the simulation differs from the timed
//! run. Readers draw these instead of re-deriving them, so a report never runs a model.

use std::collections::{BTreeMap, HashMap};

use crate::cache::geometry::CacheLevel;
use crate::cache::model::{closed_form_sets, distinct_sets, gcd, set_overflow_onset};
use crate::explain::cache::analyse;
use crate::kernels::access::sim_address;
use crate::kernels::spec::{KernelSpec, ParamValue, Params, StridePattern};
use crate::kernels::{simulation_note, stride_pattern};
use crate::results::model::LONG_RUN_ACCESSES;
use crate::results::{
    LevelModel, ModelPrediction, PatternPrediction, Provenance, ViewFacts, ViewSets,
};
use crate::vocab::Family;

/// The model named in every prediction.
const MODEL: &str = "set/GCD model (sets used, conflict onset, LRU cyclic pass) on the \
                     simulated geometry; views: layout model";

/// Most accesses the cyclic-pass prediction enumerates (longer patterns get none).
const MAX_CYCLIC_ACCESSES: u64 = 1 << 16;

/// Most accesses a conflict-onset search walks (it keeps every line in a hash set).
const MAX_ONSET_SEARCH: u64 = 1 << 21;

/// What the models predict for `spec` with resolved `params` on `levels` (the data-cache
/// levels the simulator uses, innermost first).
pub fn predict(spec: &KernelSpec, params: &Params, levels: &[CacheLevel]) -> ModelPrediction {
    let pattern = stride_pattern(spec, params)
        .ok()
        .flatten()
        .filter(|_| !levels.is_empty())
        .map(|p| pattern_prediction(&p, levels));
    ModelPrediction {
        source: Provenance::Model,
        model: MODEL.into(),
        pattern,
        view: (spec.family == Family::View)
            .then(|| view_facts(params, levels.first()))
            .flatten(),
        simulation_note: simulation_note(spec, params).map(String::from),
    }
}

/// The set model of `pattern` at every level, placed where the simulator puts its buffer.
fn pattern_prediction(pattern: &StridePattern, levels: &[CacheLevel]) -> PatternPrediction {
    let base = sim_address(pattern.buffer, 0);
    let (stride, count) = (pattern.stride_bytes, pattern.count);
    let cyclic = (count <= MAX_CYCLIC_ACCESSES).then(|| cyclic_misses(levels, base, stride, count));
    PatternPrediction {
        description: pattern.description.clone(),
        buffer: pattern.buffer as u64,
        base,
        stride_bytes: stride,
        count,
        levels: levels
            .iter()
            .enumerate()
            .map(|(i, level)| {
                let cyclic = cyclic.as_ref().and_then(|c| c.get(i).copied());
                level_model(level, base, stride, count, cyclic)
            })
            .collect(),
    }
}

fn level_model(
    level: &CacheLevel,
    base: u64,
    stride: i64,
    count: u64,
    cyclic: Option<f64>,
) -> LevelModel {
    let line = i64::from(level.line);
    let stride_lines = (line > 0 && stride % line == 0).then(|| stride / line);
    let bound = count
        .max(level.lines())
        .saturating_add(1)
        .min(MAX_ONSET_SEARCH);
    LevelModel {
        name: level.name.clone(),
        size: level.size,
        ways: u64::from(level.ways),
        line: u64::from(level.line),
        sets: u64::from(level.sets),
        sets_used: distinct_sets(base, stride, count, level.line, level.sets),
        stride_lines,
        gcd: stride_lines.map(|l| gcd(l.unsigned_abs(), u64::from(level.sets))),
        closed_form_sets: closed_form_sets(stride, level.line, level.sets),
        long_run_sets: distinct_sets(base, stride, LONG_RUN_ACCESSES, level.line, level.sets),
        conflict_onset: set_overflow_onset(base, stride, level.line, level.sets, level.ways, bound),
        cyclic_misses_per_access: cyclic,
    }
}

/// Predicted misses per access at each level for a warm, repeated cyclic pass over `count`
/// accesses `stride` bytes apart from `base` under LRU: a line misses at a level iff its set
/// there holds more lines (among those that reached the level) than the level has ways.
pub fn cyclic_misses(levels: &[CacheLevel], base: u64, stride: i64, count: u64) -> Vec<f64> {
    let line_of = |i: u64, line: u32| {
        base.wrapping_add((i as i64).wrapping_mul(stride) as u64) >> line.trailing_zeros()
    };
    let mut reaching: Vec<u64> = (0..count).collect();
    let mut out = Vec::new();
    for level in levels {
        let sets = u64::from(level.sets.max(1));
        let mut lines_of: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
        for &i in &reaching {
            lines_of.entry(line_of(i, level.line)).or_default().push(i);
        }
        let mut per_set: HashMap<u64, u64> = HashMap::new();
        for line in lines_of.keys() {
            *per_set.entry(line % sets).or_default() += 1;
        }
        let mut missing = Vec::new();
        for (line, accesses) in &lines_of {
            if per_set[&(line % sets)] > u64::from(level.ways) {
                missing.extend(accesses);
            }
        }
        out.push(if count == 0 {
            0.0
        } else {
            missing.len() as f64 / count as f64
        });
        reaching = missing;
    }
    out
}

/// Bytes per element of a view kernel's storage (`view-sum` sums f64s).
const VIEW_ITEMSIZE: u64 = 8;

/// Shape, strides and contiguity of a view kernel's `expr`, as the layout model evaluates it,
/// and the sets of `innermost` its elements touch.
fn view_facts(params: &Params, innermost: Option<&CacheLevel>) -> Option<ViewFacts> {
    let ParamValue::Text(expr) = params.get("expr")? else {
        return None;
    };
    let (layout, _) = crate::layout::expr::evaluate_layout(expr).ok()?;
    Some(ViewFacts {
        shape: layout.shape().iter().map(|&n| n as u64).collect(),
        strides: layout.strides().iter().map(|&s| s as i64).collect(),
        c_contiguous: layout.is_c_contiguous(),
        sets: innermost.and_then(|level| view_sets(&layout, level)),
    })
}

/// The whole-view set counts of `layout` on `level` (`None` when the level is too large to
/// list or the view has too many runs to count).
fn view_sets(layout: &crate::layout::Layout, level: &CacheLevel) -> Option<ViewSets> {
    let analysis = analyse(layout, VIEW_ITEMSIZE, level).ok()?;
    Some(ViewSets {
        level: analysis.level,
        sets: analysis.sets,
        ways: analysis.ways,
        // A 0-d view has no dimension: its one element touches one set.
        inner_sets_touched: analysis.dims.last().map_or(1, |d| d.sets_touched),
        sets_touched: analysis.sets_touched?,
        lines_touched: analysis.lines_touched?,
        max_lines_per_set: analysis.max_lines_per_set?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::geometry::parse_cache_override;
    use crate::results::model::check_model;

    fn levels() -> Vec<CacheLevel> {
        // 32 KiB 8-way, 64 sets, 64 B lines: 4096 B uses one set.
        vec![
            parse_cache_override("L1d=32K,8,64").unwrap(),
            parse_cache_override("L2=1M,8,64").unwrap(),
        ]
    }

    #[test]
    fn cyclic_prediction_follows_the_set_model() {
        let levels = levels();
        // (stride, K, expected L1, expected L2)
        let cases: &[(i64, u64, f64, f64)] = &[
            (4096, 8, 0.0, 0.0),
            (4096, 9, 1.0, 0.0),
            (4104, 24, 0.0, 0.0),
            (4088, 24, 0.0, 0.0),
            (64, 512, 0.0, 0.0),
            (4096, 16, 1.0, 0.0),
        ];
        for &(s, k, e1, e2) in cases {
            let p = cyclic_misses(&levels, 1 << 32, s, k);
            assert_eq!(p, vec![e1, e2], "stride {s} K {k}");
        }
        // 4096 lines at a stride of one line overflow a 512-line L1 in every set.
        assert_eq!(cyclic_misses(&levels, 1 << 32, 64, 4096)[0], 1.0);
    }

    #[test]
    fn a_conflict_probe_is_predicted_at_its_buffer_and_passes_validation() {
        let spec = crate::kernels::find("conflict").unwrap();
        let params = crate::kernels::resolve_params(
            spec,
            &[
                ("stride".to_string(), "512".to_string()),
                ("count".to_string(), "16".to_string()),
            ],
        )
        .unwrap();
        let m = predict(spec, &params, &levels());
        check_model(&m, "model").unwrap();
        let p = m.pattern.unwrap();
        assert_eq!((p.base, p.stride_bytes, p.count), (1 << 32, 4096, 16));
        let l1 = &p.levels[0];
        assert_eq!(
            (l1.sets_used, l1.stride_lines, l1.gcd),
            (1, Some(64), Some(64))
        );
        assert_eq!((l1.closed_form_sets, l1.conflict_onset), (Some(1), Some(9)));
        assert_eq!(l1.cyclic_misses_per_access, Some(1.0));
        assert_eq!(p.levels[1].cyclic_misses_per_access, Some(0.0));
    }

    #[test]
    fn a_view_kernel_records_its_layout() {
        let spec = crate::kernels::find("view-sum").unwrap();
        let params = crate::kernels::resolve_params(
            spec,
            &[("expr".to_string(), "arange(64).view(8,8).T".to_string())],
        )
        .unwrap();
        let view = predict(spec, &params, &levels()).view.unwrap();
        assert_eq!(view.shape, vec![8, 8]);
        assert_eq!(view.strides, vec![1, 8]);
        assert!(!view.c_contiguous);
    }

    #[test]
    fn a_view_records_the_l1_sets_its_inner_walk_and_its_elements_touch() {
        let spec = crate::kernels::find("view-sum").unwrap();
        // (expr, sets one inner walk touches, sets of the whole view, most lines in one set)
        // on 64 sets of 64 B: a 4 KiB stride stays in one set; 32 KiB fill every set 8 deep.
        let cases = [
            ("arange(4096).view(8,512).T", 1, 64, 8),
            ("arange(4096).view(8,512)", 64, 64, 8),
            ("arange(4096).view(64,64)[:, 0]", 8, 8, 8),
            ("arange(32768).view(64,512)[:, 0]", 1, 1, 64),
            ("arange(4096).view(64,64).diagonal()", 64, 64, 1),
        ];
        for (expr, inner, whole, deepest) in cases {
            let params =
                crate::kernels::resolve_params(spec, &[("expr".to_string(), expr.to_string())])
                    .unwrap();
            let sets = predict(spec, &params, &levels())
                .view
                .unwrap()
                .sets
                .unwrap();
            assert_eq!(
                (
                    sets.inner_sets_touched,
                    sets.sets_touched,
                    sets.max_lines_per_set
                ),
                (inner, whole, deepest),
                "{expr}"
            );
            assert_eq!((sets.level.as_str(), sets.sets, sets.ways), ("L1d", 64, 8));
        }
    }
}
