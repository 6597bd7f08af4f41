//! Pieces the subcommands share, kept here so no subcommand file imports another: the Ctrl-C
//! stop flag and exit code, the count and percentage parsers, the geometry options (`--cache`, `--preset`)
//! of every subcommand that simulates, the copy planner's `--wisdom`, the time model's `--model`, `--list [KERNEL]`, and
//! the value parsers that give shell completions their words (kernel and preset names).

use std::ffi::OsStr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use anyhow::Context;
use clap::builder::{PossibleValue, StringValueParser, TypedValueParser};
use stridelab_copy::{Planner, WisdomChoice};

use crate::cache::geometry::{
    CacheLevel, ChosenGeometry, Geometry, GeometryChoice, PRESET_NAMES, parse_cache_override,
};
use crate::cli::text::listing::{kernel_detail, kernel_list};
use crate::harness::time_model::ModelChoice;
use crate::kernels::copy_planner::{copy_planner, default_wisdom_path};

/// `--cache` / `--preset`: the geometry `sim`, `run`, the main job, `info` and `layout`
/// simulate, defined once so every subcommand reads the flags the same way.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct CacheArgs {
    /// One cache level, NAME=SIZE,WAYS,LINE (NAME: L1d, L2, L3 or L4; SIZE takes K/M/G), e.g.
    /// L2=1M,8,64. It replaces that level of the base geometry (--preset's, else this
    /// machine's) or adds it; the other levels stay. Repeatable, each level once. A level this
    /// machine reports implausibly (a VM's "480 MiB" L3) is simulated as given and marked
    /// until replaced this way.
    #[arg(long = "cache", value_name = "NAME=SIZE,WAYS,LINE", value_parser = parse_cache_arg)]
    pub caches: Vec<CacheLevel>,
    /// Simulate a named machine's caches instead of this machine's: the base geometry that
    /// --cache levels replace or add to. At most one --preset.
    #[arg(long, value_name = "NAME", value_parser = preset_parser())]
    pub preset: Option<String>,
    /// Read this machine's cache geometry from DIR, a tree of `index*/` entries like
    /// /sys/devices/system/cpu/cpu0/cache (no CPUID cross-check then: it is not this CPU).
    #[arg(long, value_name = "DIR", hide = true)]
    pub sysfs_root: Option<PathBuf>,
}

/// `--baseline`, `--save-baseline`, `--no-compare`: what a measuring run (`run`, the main job)
/// compares itself with afterwards, and what it keeps.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct HistoryArgs {
    /// Compare with the baseline NAME (saved earlier with --save-baseline) instead of the
    /// previous run of the same points on this machine. Read before anything is measured.
    #[arg(long, value_name = "NAME")]
    pub baseline: Option<String>,
    /// Keep this run as baseline NAME (reports/baselines/NAME.json), replacing an earlier
    /// baseline of that name.
    #[arg(long, value_name = "NAME")]
    pub save_baseline: Option<String>,
    /// Do not compare with earlier runs.
    #[arg(long, conflicts_with = "baseline")]
    pub no_compare: bool,
}

impl HistoryArgs {
    pub fn request(&self) -> crate::harness::history::HistoryRequest {
        crate::harness::history::HistoryRequest {
            baseline: self.baseline.clone(),
            save_baseline: self.save_baseline.clone(),
            no_compare: self.no_compare,
        }
    }
}

/// `--wisdom`: where the copy planner keeps the schedules it measured, for every subcommand
/// that runs or replays copies.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct WisdomArgs {
    /// The copy planner's wisdom file (the schedules it timed on this machine), or `off` for
    /// the analytic schedules with no planning. Default: $STRIDELAB_WISDOM, else
    /// $XDG_CACHE_HOME/stridelab/wisdom.json (~/.cache/stridelab/wisdom.json).
    #[arg(long, value_name = "FILE|off")]
    pub wisdom: Option<PathBuf>,
}

impl WisdomArgs {
    /// The flag, else `STRIDELAB_WISDOM`, else the user's cache directory (in memory only
    /// when there is none).
    pub fn choice(&self) -> WisdomChoice {
        let from_env = std::env::var_os("STRIDELAB_WISDOM").filter(|v| !v.is_empty());
        match self.wisdom.clone().or(from_env.map(PathBuf::from)) {
            Some(path) if path.as_os_str() == "off" => WisdomChoice::Off,
            Some(path) => WisdomChoice::File(path),
            None => default_wisdom_path().map_or(WisdomChoice::Memory, WisdomChoice::DefaultFile),
        }
    }

    /// The planner chosen, for the command's run to own; an unusable wisdom file is a warning
    /// (plans kept in memory, the file left alone), a named one in a missing directory an error.
    pub fn planner(&self, machine: &Geometry) -> anyhow::Result<Arc<Planner>> {
        let planner = copy_planner(self.choice(), machine)?;
        if let Some(problem) = planner.wisdom_problem() {
            eprintln!("warning: wisdom ignored, plans kept in memory only: {problem}");
        }
        Ok(Arc::new(planner))
    }
}

/// `--model`: where the time model's probes of this machine are kept (`run`, `model`).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ModelArgs {
    /// The time model's probes of this machine (per-level bandwidths and latencies), or `off`
    /// for no predictions. Default: $STRIDELAB_MODEL, else
    /// $XDG_CACHE_HOME/stridelab/machine-model.json (~/.cache/stridelab/machine-model.json);
    /// probed (a few seconds) when missing or of another machine.
    #[arg(long, value_name = "FILE|off")]
    pub model: Option<PathBuf>,
}

impl ModelArgs {
    /// The flag, else `STRIDELAB_MODEL`, else the user's cache directory.
    pub fn choice(&self) -> ModelChoice {
        let from_env = std::env::var_os("STRIDELAB_MODEL").filter(|v| !v.is_empty());
        ModelChoice::from_flag(self.model.clone().or(from_env.map(PathBuf::from)))
    }
}

fn parse_cache_arg(text: &str) -> Result<CacheLevel, String> {
    parse_cache_override(text).map_err(|err| err.to_string())
}

/// A preset name, refused with the list of known ones; completions offer the names.
pub fn preset_parser() -> impl TypedValueParser<Value = String> {
    Offered(|| PRESET_NAMES.to_vec()).try_map(|name: String| {
        if PRESET_NAMES.contains(&name.as_str()) {
            Ok(name)
        } else {
            Err(format!("known presets: {}", PRESET_NAMES.join(", ")))
        }
    })
}

/// A kernel name (checked where it is used, whose error names close matches); completions
/// offer the catalogue's names.
pub fn kernel_name_parser() -> Offered {
    Offered(|| {
        crate::kernels::catalogue()
            .iter()
            .map(|spec| spec.name)
            .collect()
    })
}

/// A free-form value whose usual words completions offer (clap's `possible_values`), without
/// refusing others: the code that reads the value checks it with a better message.
#[derive(Clone)]
pub struct Offered(fn() -> Vec<&'static str>);

impl TypedValueParser for Offered {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<String, clap::Error> {
        StringValueParser::new().parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new((self.0)().into_iter().map(PossibleValue::new)))
    }
}

impl CacheArgs {
    /// Whether the user replaced any of the detected hierarchy.
    pub fn is_given(&self) -> bool {
        self.choice().is_given()
    }

    /// The flags' meaning, without their syntax.
    pub fn choice(&self) -> GeometryChoice {
        GeometryChoice {
            preset: self.preset.clone(),
            caches: self.caches.clone(),
            sysfs_root: self.sysfs_root.clone(),
        }
    }

    /// The geometry to simulate (this machine's detected only when no preset replaces it).
    pub fn choose(&self) -> anyhow::Result<ChosenGeometry> {
        self.choice()
            .choose()
            .context("choosing the cache levels to simulate")
    }

    /// The data levels to simulate on top of `detected` (used when no preset is given).
    pub fn resolve(&self, detected: &Geometry) -> anyhow::Result<Vec<CacheLevel>> {
        let chosen = self
            .choice()
            .resolve(detected)
            .context("choosing the cache levels to simulate")?;
        Ok(chosen.levels)
    }
}

/// `--list [KERNEL]` of `run` and `sim`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ListArgs {
    /// List the kernels (parameters and what each does), or describe KERNEL in full (every
    /// parameter's range, unit and default, and examples), then exit.
    #[arg(
        long,
        value_name = "KERNEL",
        num_args = 0..=1,
        default_missing_value = "",
        value_parser = kernel_name_parser(),
        hide_possible_values = true
    )]
    pub list: Option<String>,
}

impl ListArgs {
    /// Prints the list, or one kernel's description, when `--list` was given; whether it was.
    pub fn print(&self) -> anyhow::Result<bool> {
        match self.list.as_deref() {
            None => return Ok(false),
            Some("") => print!("{}", kernel_list()),
            Some(name) => print!("{}", kernel_detail(name)?),
        }
        Ok(true)
    }
}

/// Exit code of every command stopped by Ctrl-C, SIGTERM or SIGHUP (128 + SIGINT, as a shell
/// reports a command Ctrl-C ended), after whatever it had finished was written.
pub const EXIT_INTERRUPTED: u8 = 130;

/// The process-wide stop flag set by Ctrl-C, SIGTERM or SIGHUP (see `harness::run::stop`).
pub fn stop_flag() -> anyhow::Result<Arc<AtomicBool>> {
    Ok(crate::harness::run::stop::stop_flag()?)
}

/// A count for an option (`--max-accesses 1G`): K, M and G are binary multiples, as in kernel
/// parameters and sizes.
pub fn parse_count_arg(text: &str) -> Result<u64, String> {
    crate::units::parse_count(text).map_err(|e| e.to_string())
}

/// `10%` → 0.10; a bare number is a fraction (`0.1`) and must lie in 0..=1.
pub fn parse_fraction(text: &str) -> Result<f64, String> {
    let text = text.trim();
    let (number, scale) = match text.strip_suffix('%') {
        Some(n) => (n.trim(), 0.01),
        None => (text, 1.0),
    };
    let value: f64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a number or a percentage like 10%"))?;
    let fraction = value * scale;
    if !fraction.is_finite() || fraction < 0.0 {
        return Err(format!("`{text}` must be a non-negative amount"));
    }
    if scale == 1.0 && fraction > 1.0 {
        return Err(format!(
            "`{text}` is a fraction above 1; write a percentage like {text}%"
        ));
    }
    Ok(fraction)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractions_and_percentages() {
        let cases: &[(&str, Result<f64, ()>)] = &[
            ("10%", Ok(0.10)),
            ("0.1", Ok(0.1)),
            ("0", Ok(0.0)),
            (" 2.5% ", Ok(0.025)),
            ("10", Err(())),
            ("-5%", Err(())),
            ("ten", Err(())),
        ];
        for (text, expected) in cases {
            match (parse_fraction(text), expected) {
                (Ok(v), Ok(e)) => assert!((v - e).abs() < 1e-12, "{text}: {v}"),
                (Err(_), Err(())) => {}
                (got, _) => panic!("{text}: {got:?}"),
            }
        }
    }
}
