//! `stridelab gate --base`: the candidate build (this binary, or `--candidate-binary`) and a
//! base build (`--base REV`, built by `build`, or `--base-binary`) measured in
//! interleaved rounds on this machine, judged by `results::compare::judge_paired`.
//!
//! A round measures every point still undecided once with each build, each measurement a
//! fresh process of that build running one point: so every round gives one paired ratio per
//! point, and the two processes of a pair run within a second of each other. The order of the
//! points is shuffled every round, and per point the build that goes first alternates in pairs
//! of rounds (drawn at random for the first of each pair), so neither build is favoured by
//! position. Every draw comes from one [`SplitMix64`] seeded with `--seed` (printed).
//!
//! The child protocol is a command every build since the stored-baseline gate understands, so
//! any base revision can be measured: `stridelab gate --suite POINT.toml --save-baseline -
//! --baseline-runs 1 --sample-ms S --samples N --quiet` prints one results document with the
//! point's short samples (the gate's method: huge pages, 0.3 ms samples by default) and its
//! simulated misses on the gate preset. Each build reads the point as written in the suite
//! (`PlannedPoint::args`) and resolves it with its own catalogue; the two records must agree
//! on the resolved parameters. The base's processes never get `STRIDELAB_INJECT_SLOWDOWN`.
//!
//! After `--rounds` rounds the points are judged; inconclusive ones get further rounds until
//! they are decided, `--max-rounds` is reached or the next round would overrun
//! `--time-budget`, except one that shows no slowdown at all after twice the first rounds: it
//! stays inconclusive (and passes), and the time goes to the points that could be slower.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::cache::geometry::Geometry;
use crate::harness::gate::GateError;
use crate::harness::gate::build::build_base;
use crate::harness::gate::child::{Build, measure};
use crate::harness::gate::cost;
use crate::harness::run::stop::stop_flag;
use crate::harness::suite::{PlannedPoint, Suite};
use crate::results::PointRecord;
use crate::results::compare::{
    BaseBuildCost, GateMethod, GateRow, GateVerdict, PairedOptions, PointRounds, RoundsContext,
    StopCause, Undecided, check_judged, geometry_label, judge_paired, same_point, undecided_points,
};
use crate::stats::SplitMix64;
use crate::units::{format_bytes, format_wall_seconds};

/// Relative slowdown the estimate must exceed to be a regression: below the 3% a gate must
/// catch, since a slowdown sitting on the threshold is caught only half the time (docs/gate.md).
pub const PAIRED_THRESHOLD: f64 = 0.025;
/// Relative slowdown the whole interval must exceed.
pub const PAIRED_FLOOR: f64 = 0.01;
/// Family-wise error level over the timed points: the A/A target is one false block in 100
/// runs, and at 0.05 a streak of ten rounds of one slow state blocked one A/A run in six.
pub const PAIRED_ALPHA: f64 = 0.01;
/// Rounds before the first judgement: with Holm over the gate suite's 13 points at α = 0.01,
/// fewer than 11 cannot reach the strictest level (2⁻ⁿ ≤ α/m) at all.
pub const PAIRED_ROUNDS: usize = 12;
/// The most rounds an inconclusive point gets: only undecided points that could still be
/// slower get them (about 0.2 s a round each), and at 100 most misses of a 3% slowdown were
/// still undecided (docs/gate.md).
pub const PAIRED_MAX_ROUNDS: usize = 300;
/// Seconds of measuring after which no further round starts.
pub const PAIRED_BUDGET_S: f64 = 120.0;
/// Sample length of the child processes: under load, 0.3 ms samples left a point's
/// process-to-process spread several times smaller than 5 ms ones (docs/gate.md).
pub const PAIRED_SAMPLE_MS: f64 = 0.3;
/// Minimum samples per child process.
pub const PAIRED_SAMPLES: usize = 20;

/// Where the base build comes from.
#[derive(Debug, Clone)]
pub enum BaseSource {
    /// A git revision of the repository in the current directory, built by the gate.
    Revision(String),
    /// A prebuilt binary.
    Binary(PathBuf),
}

/// What `stridelab gate --base` was asked to do.
#[derive(Debug, Clone)]
pub struct PairedConfig {
    pub base: BaseSource,
    /// The candidate binary; `None`: this one.
    pub candidate: Option<PathBuf>,
    pub suite: String,
    pub options: PairedOptions,
    /// Rounds every point gets before the first judgement.
    pub rounds: usize,
    /// Most rounds any point gets.
    pub max_rounds: usize,
    /// Measuring time after which no further round starts.
    pub budget: Duration,
    pub seed: u64,
    /// The child processes' sample length and minimum samples.
    pub sample_ms: f64,
    pub samples: usize,
    pub quiet: bool,
}

/// One point's measurements so far.
struct Series {
    key: String,
    kernel: String,
    params: String,
    threads: usize,
    file: PathBuf,
    base: Option<PointRecord>,
    candidate: Option<PointRecord>,
    times: Vec<(f64, f64)>,
    failure: Option<String>,
    not_comparable: Option<String>,
    /// Whether the base went first in the first round of the current pair of rounds.
    base_first: bool,
    /// Seconds the point's last pair of processes took.
    last_pair_s: f64,
}

/// What each build's first results document said about how it measured (`info.gate`): its
/// preset and any injected slowdown.
#[derive(Default)]
struct Observed {
    base: Option<serde_json::Value>,
    candidate: Option<serde_json::Value>,
}

/// A temporary directory of the point files, removed when dropped.
struct PointFiles(PathBuf);

impl Drop for PointFiles {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Builds or finds both binaries, runs the rounds and judges them.
pub fn run_paired(config: &PairedConfig) -> Result<GateVerdict, GateError> {
    check_config(config)?;
    // The builds simulate on the gate preset, so a sweep would follow its levels too.
    let levels = Geometry::preset(super::DEFAULT_PRESET)?.data_levels();
    let plan = Suite::load(&config.suite)?.plan(None, &levels)?;
    let (base, candidate, base_build) = builds(config)?;
    // The handler goes in before the directory exists, so a SIGTERM cannot skip its removal;
    // not earlier, so a signal during the base build still ends the gate at once.
    let stop = stop_flag()?;
    let dir = std::env::temp_dir().join(format!(
        "stridelab-gate-{}-{}",
        std::process::id(),
        config.seed
    ));
    std::fs::create_dir_all(&dir).map_err(|e| GateError::WorkFile {
        what: "create".into(),
        path: dir.clone(),
        message: e.to_string(),
    })?;
    let files = PointFiles(dir);
    let mut series = Vec::with_capacity(plan.points.len());
    for (index, point) in plan.points.iter().enumerate() {
        series.push(point_series(point, index, &files.0)?);
    }
    if !config.quiet {
        eprintln!(
            "gate: base {}\ngate: candidate {}\ngate: {} points, {} rounds at least, order seed {}",
            base.label,
            candidate.label,
            series.len(),
            config.rounds,
            config.seed
        );
    }
    let load_before = cost::load_average();
    let started = Instant::now();
    let mut observed = Observed::default();
    let (stopped, cause) = run_rounds(
        config,
        (&base, &candidate),
        &mut series,
        &mut observed,
        &stop,
    )?;
    let measured_s = started.elapsed().as_secs_f64();
    if !config.quiet {
        eprintln!(
            "gate: the rounds took {} (--time-budget {:.0} s)",
            format_wall_seconds(measured_s),
            config.budget.as_secs_f64()
        );
    }
    let rounds = Rounds {
        measured_s,
        stopped,
        observed,
        context: RoundsContext {
            budget_s: config.budget.as_secs_f64(),
            first_rounds: config.rounds,
            max_rounds: config.max_rounds,
            stop: cause,
            load_before,
            load_after: cost::load_average(),
            logical_cpus: cost::logical_cpus(),
        },
        base_build,
    };
    verdict(config, (&base, &candidate), series, rounds)
}

fn check_config(config: &PairedConfig) -> Result<(), GateError> {
    let bad = |m: &str| Err(GateError::Settings(m.to_string()));
    if !(1..=200).contains(&config.rounds) {
        return bad("--rounds must lie in 1..=200");
    }
    if config.max_rounds < config.rounds || config.max_rounds > 500 {
        return bad("--max-rounds must lie between --rounds and 500");
    }
    if config.budget.is_zero() || config.budget > Duration::from_secs(3600) {
        return bad("--time-budget must lie in (0, 3600] seconds");
    }
    let o = &config.options;
    if !(o.alpha > 0.0 && o.alpha < 0.5) {
        return bad("--alpha must lie in (0, 0.5)");
    }
    if !(o.floor >= 0.0 && o.floor <= o.threshold && o.threshold < 1.0) {
        return bad("--floor must lie in [0, --threshold], and --threshold below 100%");
    }
    if !(config.sample_ms > 0.0 && config.sample_ms <= 1000.0) || config.samples == 0 {
        return bad("--sample-ms must lie in (0, 1000] and --samples be at least 1");
    }
    Ok(())
}

/// The base (built or given) and the candidate, each checked to run, and what building the
/// base cost (`--base REV` only).
fn builds(config: &PairedConfig) -> Result<(Build, Build, Option<BaseBuildCost>), GateError> {
    let (base_binary, base_name, base_build) = match &config.base {
        BaseSource::Revision(rev) => {
            let built = build_base(rev, config.quiet)?;
            let how = if built.reused {
                "build reused".to_string()
            } else {
                format!("built in {}", format_wall_seconds(built.build_s))
            };
            let name = format!("commit {} (`{rev}`, {how})", built.commit);
            let build_cost = kept_cost(built.build_s, built.reused, &built.kept_in)?;
            if !config.quiet {
                eprintln!("gate: base {how}; {}", kept_line(&build_cost));
            }
            (built.binary, name, Some(build_cost))
        }
        BaseSource::Binary(path) => (path.clone(), format!("`{}`", path.display()), None),
    };
    let candidate_binary = match &config.candidate {
        Some(path) => path.clone(),
        None => std::env::current_exe().map_err(|e| GateError::BuildUnusable {
            role: "candidate",
            path: PathBuf::from("(this binary)"),
            message: e.to_string(),
        })?,
    };
    let candidate_name = format!("`{}`", candidate_binary.display());
    let base = Build {
        label: format!("{base_name}, {}", version(&base_binary, "base")?),
        role: "base",
        binary: base_binary,
        clear_slowdown: true,
    };
    let candidate = Build {
        label: format!(
            "{candidate_name}, {}",
            version(&candidate_binary, "candidate")?
        ),
        role: "candidate",
        binary: candidate_binary,
        clear_slowdown: false,
    };
    Ok((base, candidate, base_build))
}

/// What a base build took and what the kept builds in `kept_in` take on disk now.
fn kept_cost(build_s: f64, reused: bool, kept_in: &Path) -> Result<BaseBuildCost, GateError> {
    let kept_bytes = cost::disk_usage(kept_in).map_err(|e| GateError::WorkFile {
        what: "measure the disk use of".into(),
        path: kept_in.to_path_buf(),
        message: e.to_string(),
    })?;
    Ok(BaseBuildCost {
        build_s,
        reused,
        kept_in: cost::as_typed(kept_in).display().to_string(),
        kept_bytes,
    })
}

/// Where the kept base builds are, their size, and how to remove them, in one line.
fn kept_line(c: &BaseBuildCost) -> String {
    format!(
        "kept in {} ({} on disk; `rm -rf {}` removes every kept base build)",
        c.kept_in,
        format_bytes(c.kept_bytes as f64),
        c.kept_in
    )
}

/// `stridelab --version` of a binary: proves it runs.
fn version(binary: &Path, role: &'static str) -> Result<String, GateError> {
    let unusable = |message: String| GateError::BuildUnusable {
        role,
        path: binary.to_path_buf(),
        message,
    };
    let out = Command::new(binary)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| unusable(e.to_string()))?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() || !text.starts_with("stridelab") {
        return Err(unusable(format!(
            "`--version` printed `{text}` (exit {:?}), not a stridelab version",
            out.status.code()
        )));
    }
    Ok(text)
}

/// A point's file (a one-point suite of the words it was planned from) and its empty series.
fn point_series(point: &PlannedPoint, index: usize, dir: &Path) -> Result<Series, GateError> {
    let params = crate::vocab::format_params(point.params.iter());
    let key = format!("{} {params} ×{}", point.spec.name, point.threads);
    if point.sweep.is_some() {
        return Err(GateError::SweepPoint(key));
    }
    let mut case = toml::Table::new();
    for (name, value) in &point.args {
        if name.is_empty() {
            // Positional words only come from the command line, never from a suite file.
            return Err(GateError::Settings(format!(
                "point `{key}` has positional parameters"
            )));
        }
        case.insert(name.clone(), toml::Value::String(value.clone()));
    }
    let mut entry = toml::Table::new();
    entry.insert("kernel".into(), point.spec.name.into());
    entry.insert("cases".into(), vec![toml::Value::Table(case)].into());
    entry.insert(
        "threads".into(),
        vec![toml::Value::from(point.threads as i64)].into(),
    );
    let mut suite = toml::Table::new();
    suite.insert("name".into(), format!("gate-point-{index}").into());
    suite.insert("description".into(), key.clone().into());
    suite.insert("point".into(), vec![toml::Value::Table(entry)].into());
    let file = dir.join(format!("point-{index}.toml"));
    let text = toml::to_string(&suite).map_err(|e| GateError::Settings(e.to_string()))?;
    std::fs::write(&file, text).map_err(|e| GateError::WorkFile {
        what: "write".into(),
        path: file.clone(),
        message: e.to_string(),
    })?;
    Ok(Series {
        key,
        kernel: point.spec.name.to_string(),
        params,
        threads: point.threads,
        file,
        base: None,
        candidate: None,
        times: Vec::new(),
        failure: None,
        not_comparable: None,
        base_first: false,
        last_pair_s: 0.0,
    })
}

/// Runs rounds until every point is decided or the rounds or time run out; returns why it
/// stopped early, in words and as a cause, if it did. `stop` set (a signal) ends it with
/// [`GateError::RoundsInterrupted`].
fn run_rounds(
    config: &PairedConfig,
    builds: (&Build, &Build),
    series: &mut [Series],
    observed: &mut Observed,
    stop: &AtomicBool,
) -> Result<(Option<String>, Option<StopCause>), GateError> {
    let mut rng = SplitMix64::new(config.seed);
    let started = Instant::now();
    let mut active: Vec<usize> = (0..series.len()).collect();
    let mut round = 0;
    loop {
        round += 1;
        let mut order = active.clone();
        shuffle(&mut order, &mut rng);
        let round_started = Instant::now();
        for &p in &order {
            let measured = measure_pair(config, builds, &mut series[p], &mut rng, observed);
            // Ctrl-C reaches the child processes too: what failed then was the interruption.
            // (SIGTERM reaches only this process: the pair finishes first.)
            if stop.load(Ordering::SeqCst) {
                return Err(GateError::RoundsInterrupted);
            }
            measured?;
        }
        if !config.quiet {
            eprintln!(
                "gate: round {round}: {} point(s) in {:.1} s",
                order.len(),
                round_started.elapsed().as_secs_f64()
            );
        }
        if round < config.rounds {
            continue;
        }
        let (indices, points) = point_rounds(series);
        let judged = judge_paired(&points, &config.options);
        let (settled, undecided): (Vec<Undecided>, Vec<Undecided>) = judged
            .inconclusive
            .iter()
            .partition(|u| shows_no_slowdown(u, points[u.point].times.len(), config.rounds));
        active = undecided.iter().map(|u| indices[u.point]).collect();
        let stopped = if active.is_empty() {
            None
        } else if round >= config.max_rounds {
            Some((
                StopCause::MaxRounds,
                format!(
                    "Stopped after {round} rounds (--max-rounds) with {} point(s) inconclusive",
                    active.len()
                ),
            ))
        } else if spent_after_next_round(started, &active, series) > config.budget.as_secs_f64() {
            Some((
                StopCause::Budget,
                format!(
                    "Stopped after {round} rounds: another would overrun the {:.0} s time budget \
                 (--time-budget), {} point(s) inconclusive",
                    config.budget.as_secs_f64(),
                    active.len()
                ),
            ))
        } else {
            if !config.quiet {
                let names: Vec<&str> = active.iter().map(|&p| series[p].key.as_str()).collect();
                eprintln!("gate: inconclusive, another round: {}", names.join("; "));
            }
            continue;
        };
        // The points the rule above stopped are named once, whatever else ended the rounds.
        let settled_note = (!settled.is_empty()).then(|| {
            format!(
                "{} point(s) inconclusive without a measured slowdown got no more rounds \
                 (estimate ≤ 0 after {} rounds)",
                settled.len(),
                2 * config.rounds
            )
        });
        let cause = stopped.as_ref().map(|(cause, _)| *cause);
        let words = match (stopped.map(|(_, why)| why), settled_note) {
            (Some(why), Some(note)) => Some(format!("{why}; {note}")),
            (why, note) => why.or(note),
        };
        return Ok((words, cause));
    }
}

/// Measuring time so far plus what the next round of the `active` points is expected to take
/// (each point's last pair).
fn spent_after_next_round(started: Instant, active: &[usize], series: &[Series]) -> f64 {
    let next: f64 = active.iter().map(|&p| series[p].last_pair_s).sum();
    started.elapsed().as_secs_f64() + next
}

/// Whether an inconclusive point gets no more rounds: after twice the first rounds, an
/// estimate of no slowdown at all (≤ 0). More rounds could only narrow its interval around a
/// change the gate does not block, so the time budget goes to the points that could still turn
/// out slower (docs/gate.md: with this rule a 3% slowdown is caught far more often).
fn shows_no_slowdown(point: &Undecided, rounds_so_far: usize, first_rounds: usize) -> bool {
    rounds_so_far >= 2 * first_rounds && point.change <= 0.0
}

/// Fisher–Yates with the gate's generator.
fn shuffle(items: &mut [usize], rng: &mut SplitMix64) {
    for i in (1..items.len()).rev() {
        items.swap(i, rng.below(i + 1));
    }
}

/// One round of one point: both builds, the first alternating in pairs of rounds.
fn measure_pair(
    config: &PairedConfig,
    (base, candidate): (&Build, &Build),
    s: &mut Series,
    rng: &mut SplitMix64,
    observed: &mut Observed,
) -> Result<(), GateError> {
    if s.failure.is_some() || s.not_comparable.is_some() {
        return Ok(());
    }
    let base_first = base_goes_first(s.times.len(), &mut s.base_first, rng);
    let sampling = (config.sample_ms, config.samples);
    let started = Instant::now();
    let (mut base_record, mut candidate_record) = (None, None);
    for base_now in [base_first, !base_first] {
        if base_now {
            let (record, info) =
                measure(base, &s.file, sampling).map_err(|error| GateError::BaseFailed {
                    point: s.key.clone(),
                    error,
                })?;
            observed.base.get_or_insert(info);
            base_record = Some(record);
        } else {
            match measure(candidate, &s.file, sampling) {
                Ok((record, info)) => {
                    observed.candidate.get_or_insert(info);
                    candidate_record = Some(record);
                }
                Err(error) => {
                    s.failure = Some(error.to_string());
                    return Ok(());
                }
            }
        }
    }
    s.last_pair_s = started.elapsed().as_secs_f64();
    let (Some(b), Some(c)) = (base_record, candidate_record) else {
        unreachable!("both builds ran");
    };
    record_pair(s, b, c)
}

/// Whether the base runs first in a point's round number `done` (from 0): drawn at random for
/// the first round of each pair (kept in `pair_draw`), the other way round in the second, so
/// over every two rounds each build goes first once.
fn base_goes_first(done: usize, pair_draw: &mut bool, rng: &mut SplitMix64) -> bool {
    if done.is_multiple_of(2) {
        *pair_draw = rng.below(2) == 1;
        *pair_draw
    } else {
        !*pair_draw
    }
}

/// Adds a pair of records to a point's series, checking they measured the same point and that
/// each build's simulated misses repeat round after round.
fn record_pair(s: &mut Series, b: PointRecord, c: PointRecord) -> Result<(), GateError> {
    let time = |r: &PointRecord| r.timing.as_ref().map(|t| t.ns_per_run.median);
    let (Some(bt), Some(ct)) = (time(&b), time(&c)) else {
        s.not_comparable = Some("a build did not time the point".into());
        return Ok(());
    };
    match (&s.base, &s.candidate) {
        (Some(first_b), Some(first_c)) => {
            if first_b.simulated != b.simulated {
                return Err(GateError::BaseDrift {
                    point: s.key.clone(),
                });
            }
            if first_c.simulated != c.simulated {
                s.failure =
                    Some("the simulated misses differ between rounds of the same build".into());
                return Ok(());
            }
        }
        _ => {
            if let Err(mismatch) = same_point(&b, &c) {
                s.not_comparable = Some(mismatch.to_string());
            }
            s.base = Some(b);
            s.candidate = Some(c);
        }
    }
    s.times.push((bt, ct));
    Ok(())
}

/// The series that have both builds' records, as the judge takes them, with their indices.
fn point_rounds(series: &[Series]) -> (Vec<usize>, Vec<PointRounds>) {
    series
        .iter()
        .enumerate()
        .filter_map(|(index, s)| {
            let (base, candidate) = (s.base.clone()?, s.candidate.clone()?);
            let rounds = PointRounds {
                base,
                candidate,
                times: s.times.clone(),
                failure: s.failure.clone(),
                not_comparable: s.not_comparable.clone(),
            };
            Some((index, rounds))
        })
        .unzip()
}

/// How the rounds went, and what the base build cost.
struct Rounds {
    measured_s: f64,
    stopped: Option<String>,
    observed: Observed,
    context: RoundsContext,
    base_build: Option<BaseBuildCost>,
}

/// `label`, plus the injected slowdown its results recorded, if any.
fn label_with_slowdown(label: &str, info: Option<&serde_json::Value>) -> String {
    match info.and_then(|i| i.get("injected_slowdown")?.as_str()) {
        Some(slowdown) => format!("{label}, injected slowdown {slowdown}"),
        None => label.to_string(),
    }
}

/// The final judgement as a verdict (a point the candidate failed before its first pair keeps
/// a row too).
fn verdict(
    config: &PairedConfig,
    (base, candidate): (&Build, &Build),
    series: Vec<Series>,
    rounds: Rounds,
) -> Result<GateVerdict, GateError> {
    let counts: Vec<usize> = series.iter().map(|s| s.times.len()).collect();
    let preset = rounds
        .observed
        .candidate
        .as_ref()
        .and_then(|i| i.get("preset")?.as_str().map(str::to_string))
        .unwrap_or_else(|| "?".into());
    let geometry = series
        .iter()
        .find_map(|s| s.candidate.as_ref()?.simulated.as_ref())
        .map(|sim| format!("preset {preset}: {}", geometry_label(&sim.levels)))
        .unwrap_or_else(|| "none simulated".into());
    let mut judged = judge_paired(&point_rounds(&series).1, &config.options);
    for s in series
        .iter()
        .filter(|s| s.base.is_none() || s.candidate.is_none())
    {
        let why = s.failure.clone().unwrap_or_else(|| "not measured".into());
        let row = GateRow::failed_point(&s.kernel, &s.params, s.threads, why);
        judged.rows.push(row);
    }
    let method = GateMethod::PairedBuilds {
        base: label_with_slowdown(&base.label, rounds.observed.base.as_ref()),
        candidate: label_with_slowdown(&candidate.label, rounds.observed.candidate.as_ref()),
        options: config.options,
        seed: config.seed,
        rounds_min: counts.iter().copied().min().unwrap_or(0),
        rounds_max: counts.iter().copied().max().unwrap_or(0),
        measured_s: rounds.measured_s,
        stopped: rounds.stopped,
        rounds_context: Some(rounds.context),
        base_build: rounds.base_build,
    };
    let mut verdict =
        GateVerdict::tally(judged.rows, method, config.options.sim_tolerance, geometry);
    check_judged(&verdict, false).map_err(GateError::Compare)?;
    verdict.advice.extend(undecided_points(&verdict));
    Ok(verdict)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::suite::Suite;

    #[test]
    fn only_an_undecided_point_without_a_slowdown_after_twice_the_first_rounds_stops() {
        // (estimate, rounds so far, first rounds, stops)
        let cases = [
            (-0.01, 24, 12, true),
            (0.0, 24, 12, true),
            (0.0, 30, 12, true),
            (0.001, 24, 12, false),
            (0.02, 200, 12, false),
            (-0.05, 23, 12, false),
            (-0.05, 12, 12, false),
            (-0.05, 8, 4, true),
        ];
        for (change, rounds, first, stops) in cases {
            let point = Undecided { point: 0, change };
            assert_eq!(
                shows_no_slowdown(&point, rounds, first),
                stops,
                "{change} after {rounds} of first {first}"
            );
        }
    }

    #[test]
    fn each_build_goes_first_once_in_every_pair_of_rounds_and_the_pairs_vary() {
        let mut rng = SplitMix64::new(11);
        let mut draw = false;
        let order: Vec<bool> = (0..40)
            .map(|done| base_goes_first(done, &mut draw, &mut rng))
            .collect();
        for pair in order.chunks(2) {
            assert_ne!(pair[0], pair[1], "{order:?}");
        }
        let base_first_in_pairs = order.chunks(2).filter(|p| p[0]).count();
        assert!((5..=15).contains(&base_first_in_pairs), "{order:?}");
    }

    #[test]
    fn a_point_file_plans_to_the_same_point_as_the_suite() {
        let dir = tempfile::tempdir().unwrap();
        let plan = Suite::load("gate")
            .unwrap()
            .plan(None, &Geometry::detect().data_levels())
            .unwrap();
        for (index, point) in plan.points.iter().enumerate() {
            let series = point_series(point, index, dir.path()).unwrap();
            let path = series.file.to_str().unwrap();
            let again = Suite::load(path)
                .unwrap()
                .plan(None, &Geometry::detect().data_levels())
                .unwrap();
            assert_eq!(again.points.len(), 1, "{path}");
            assert_eq!(again.points[0].spec.name, point.spec.name);
            assert_eq!(again.points[0].params, point.params, "{path}");
            assert_eq!(again.points[0].threads, point.threads);
        }
    }
}
