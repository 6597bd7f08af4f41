//! Runs the real `stridelab` binary the way a careless or hostile user would be contained: with
//! a wall-clock limit and an address-space limit, so a hang or a runaway allocation fails the
//! test instead of the machine.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Address-space limit for guarded runs: far above what any bounded command needs, far below
/// what a runaway allocation asks for.
pub const ADDRESS_SPACE_KIB: u64 = 4 * 1024 * 1024;

/// What one guarded run did.
#[derive(Debug)]
pub struct Outcome {
    /// The exit code; `None` when a signal ended the process (abort, kill on timeout).
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
    pub timed_out: bool,
}

impl Outcome {
    /// Fails unless the run ended by itself with one of `codes`, without a panic or an abort.
    #[track_caller]
    pub fn assert_exits(&self, codes: &[i32], what: &str) {
        assert!(
            !self.timed_out,
            "{what}: still running after {:?}\nstderr: {}",
            self.elapsed, self.stderr
        );
        assert!(
            !self.stderr.contains("panicked at") && !self.stderr.contains("memory allocation"),
            "{what}: panicked or aborted (code {:?})\nstderr: {}",
            self.code,
            self.stderr
        );
        match self.code {
            Some(c) if codes.contains(&c) => {}
            other => panic!(
                "{what}: exit {other:?}, expected one of {codes:?}\nstdout: {}\nstderr: {}",
                tail(&self.stdout),
                self.stderr
            ),
        }
    }
}

fn tail(text: &str) -> &str {
    let start = text.len().saturating_sub(2000);
    let start = (start..=text.len())
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(text.len());
    &text[start..]
}

/// Runs `stridelab ARGS` in `dir` under [`ADDRESS_SPACE_KIB`] and `limit`; the process is killed
/// when the limit passes.
pub fn run_guarded(dir: &Path, args: &[&str], limit: Duration) -> Outcome {
    let bin = env!("CARGO_BIN_EXE_stridelab");
    // `ulimit -v` through sh keeps the tests free of unsafe pre_exec code.
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {ADDRESS_SPACE_KIB}; exec \"$0\" \"$@\""))
        .arg(bin)
        .args(args)
        .current_dir(dir)
        .env(super::WISDOM_OFF.0, super::WISDOM_OFF.1)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cannot start the stridelab binary");
    let mut stdout = child.stdout.take().expect("piped stdout");
    let mut stderr = child.stderr.take().expect("piped stderr");
    let out_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let started = Instant::now();
    let mut timed_out = false;
    // Short polls first: most runs end within milliseconds, and fuzzing makes thousands.
    let mut pause = Duration::from_micros(200);
    let status = loop {
        if let Some(status) = child.try_wait().expect("cannot wait for stridelab") {
            break status;
        }
        if started.elapsed() > limit {
            timed_out = true;
            let _ = child.kill();
            break child.wait().expect("cannot reap stridelab");
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    };
    Outcome {
        code: status.code(),
        stdout: out_reader.join().unwrap_or_default(),
        stderr: err_reader.join().unwrap_or_default(),
        elapsed: started.elapsed(),
        timed_out,
    }
}

/// Every entry under `dir` (recursively) whose name marks a temporary file or directory.
pub fn leftover_temp_files(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.contains(".tmp") || name.contains(".old-") {
                found.push(entry.path().display().to_string());
            }
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(entry.path());
            }
        }
    }
    found
}
