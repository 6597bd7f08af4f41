//! Everything `stridelab layout` says about a view on one cache level: the set model
//! (`cache`), the walks its verdicts are about with their simulated passes
//! (`walks`), and padding advice for the walks that conflict (`padding`). Serialises
//! to an element of `layout --json`'s `caches` list (`levels` lists every level).

use serde::Serialize;

use crate::cache::geometry::{CacheLevel, GeometrySource};
use crate::explain::cache::{LineCounts, ViewCache, ViewCacheError, analyse};
use crate::explain::padding::{PaddingAdvice, ViewChain, advise};
use crate::explain::walks::{WalkReport, walks};
use crate::layout::Layout;

/// What a level adds to the levels above it, judged from its simulated walks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LevelBrief {
    /// Every walk was simulated in full and its pass 2 hit on every access (the view's own
    /// pass 1 missing on first touches only): the walks fit this level.
    AllFit { walks: usize },
    /// Every walk's simulated passes counted exactly what they counted on `level` (the
    /// nearest level above that is explained in full or fits), and nothing needs padding here.
    SameAs { level: String },
}

/// One level's explanation of a view.
#[derive(Debug, Clone, Serialize)]
pub struct LevelReport {
    #[serde(flatten)]
    pub cache: ViewCache,
    /// Where the level's geometry came from (sysfs, cpuid, preset, override).
    pub source: GeometrySource,
    /// Why the level's geometry is doubtful (a VM's "480 MiB" L3); it is explained as given.
    pub warnings: Vec<String>,
    /// The walks a verdict is about: the view's own order, then one per moving dimension.
    pub walks: Vec<WalkReport>,
    /// What padding the storage's rows would do for the walks with conflict misses.
    pub padding: Option<PaddingAdvice>,
    /// What the level adds to the levels above, where a line says it all (`None`: the level
    /// is explained in full; see `levels`).
    pub brief: Option<LevelBrief>,
}

/// The set model of `layout` on `level`, its walks simulated, and padding advice for the ones
/// that conflict (`chain`: the expression the view came from, for the storage's rows).
pub fn explain(
    layout: &Layout,
    chain: &ViewChain,
    itemsize: u64,
    level: &CacheLevel,
) -> Result<LevelReport, ViewCacheError> {
    let cache = analyse(layout, itemsize, level)?;
    let counts = cache.set_lines.clone().map(|set_lines| LineCounts {
        sets_touched: cache.sets_touched.unwrap_or(0),
        lines_touched: cache.lines_touched.unwrap_or(0),
        max_lines_per_set: cache.max_lines_per_set.unwrap_or(0),
        set_lines,
    });
    let walks = walks(layout, itemsize, level, counts.as_ref());
    let padding = advise(chain, layout, itemsize, level, &walks);
    Ok(LevelReport {
        cache,
        source: level.source,
        warnings: level.warnings.clone(),
        walks,
        padding,
        brief: None,
    })
}
