//! Progress of `stridelab run` on stderr: a bar on a terminal, a plain line per finished point
//! without one (CI logs), nothing when quiet.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::harness::Progress;

/// Turns the runner's progress events into the bar or the plain log.
pub struct RunProgress {
    bar: ProgressBar,
    plain_log: bool,
    point_started: Instant,
    current: String,
}

impl RunProgress {
    /// A bar over `points` points on a terminal, a plain log without one; silent when `quiet`.
    pub fn new(points: usize, quiet: bool) -> Self {
        let plain_log = !quiet && !std::io::stderr().is_terminal();
        Self {
            bar: progress_bar(points as u64, quiet || plain_log),
            plain_log,
            point_started: Instant::now(),
            current: String::new(),
        }
    }

    /// Records one event of the runner.
    pub fn event(&mut self, event: Progress<'_>) {
        match event {
            Progress::Started { label, .. } => {
                self.point_started = Instant::now();
                self.current = label.to_string();
                self.bar.set_message(self.current.clone());
            }
            Progress::Finished { index, total, .. } => {
                self.bar.inc(1);
                if self.plain_log {
                    eprintln!(
                        "[{}/{total}] {} ({:.2} s)",
                        index + 1,
                        self.current,
                        self.point_started.elapsed().as_secs_f64()
                    );
                }
            }
        }
    }

    /// Clears the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// A bar over `total` steps on stderr (hidden when asked): the one style every long command
/// shows.
pub fn progress_bar(total: u64, hidden: bool) -> ProgressBar {
    if hidden {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} [{elapsed} < {eta}] {wide_msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}
