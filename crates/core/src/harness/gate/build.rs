//! The base build of `stridelab gate --base REV`: any git revision of the repository in the
//! current directory, built once and kept, keyed by its commit.
//!
//! Layout, under the target directory (`$CARGO_TARGET_DIR`, else `<repository>/target`):
//! - `gate-base/<commit>/stridelab` — the base binary; present means built (a later run with
//!   the same base reuses it, so CI with a fixed base builds it once per machine);
//! - `gate-base/<commit>/build.log` — the build's output;
//! - `gate-base/<commit>/build-settings` — the settings it was built with ([`BuildSettings`]):
//!   a kept base is reused only under the same settings;
//! - `gate-base/target/` — one cargo target directory for every base build, so dependencies
//!   are built once; when it does not exist yet it is seeded with the dependencies already
//!   built in `target/release` (copied, modification times kept, the lab's own artifacts
//!   left out), so a base build compiles only the lab itself.
//!
//! The source is `git archive` of the commit unpacked into `gate-base/<commit>/src` (removed
//! after a successful build), so the repository's own work tree, index and worktree list are
//! never touched. No path remapping is needed: two builds of one commit in different
//! directories have byte-identical `.text`, `.rodata` and `.data.rel.ro` (measured, docs/gate.md);
//! they differ only in debug sections, which are not loaded. The injected-slowdown variable
//! (`kernels::slowdown`) is removed from the build's environment: a base is never slowed.
//!
//! The base is built with the candidate checkout's rustflags, whatever the base commit's own
//! `.cargo/config.toml` says: a gate compares sources, and without the repository's loop
//! alignment, where the loops landed moved a gated kernel by 40% between two builds of the
//! same kernel source (docs/gate.md). A change of build flags is measured with `--base-binary`.

use std::ffi::OsStr;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use thiserror::Error;

use crate::harness::gate::GateError;
use crate::kernels::slowdown::SLOWDOWN_VAR;

/// Lines of a failed build's output an error shows.
const BUILD_TAIL_LINES: usize = 25;

/// A base binary ready to measure.
#[derive(Debug, Clone)]
pub struct BaseBuild {
    /// The full commit id.
    pub commit: String,
    pub binary: PathBuf,
    /// Built by an earlier run.
    pub reused: bool,
    /// Seconds this run spent building (0 when reused).
    pub build_s: f64,
    /// `gate-base/`: every kept base build and their shared target directory.
    pub kept_in: PathBuf,
}

/// Builds `rev` (or finds its earlier build); progress lines go to stderr unless `quiet`.
pub fn build_base(rev: &str, quiet: bool) -> Result<BaseBuild, GateError> {
    if rev.is_empty() || rev.starts_with('-') {
        return Err(GateError::BadRevision(rev.to_string()));
    }
    let root = repository_root()?;
    let commit = resolve_commit(&root, rev)?;
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let gate_dir = target.join("gate-base");
    let commit_dir = gate_dir.join(&commit);
    let binary = commit_dir.join("stridelab");
    let settings = BuildSettings::of_checkout(&root)?;
    let settings_file = commit_dir.join(SETTINGS_FILE);
    let kept = binary.is_file();
    if kept && std::fs::read_to_string(&settings_file).is_ok_and(|text| text == settings.text()) {
        return Ok(BaseBuild {
            commit,
            binary,
            reused: true,
            build_s: 0.0,
            kept_in: gate_dir,
        });
    }
    let started = Instant::now();
    let io = |what: &str, path: &Path, error: std::io::Error| GateError::WorkFile {
        what: what.to_string(),
        path: path.to_path_buf(),
        message: error.to_string(),
    };
    let src = commit_dir.join("src");
    if src.exists() {
        // Left by an interrupted build of this gate: ours to replace.
        std::fs::remove_dir_all(&src).map_err(|e| io("clear", &src, e))?;
    }
    std::fs::create_dir_all(&src).map_err(|e| io("create", &src, e))?;
    unpack(&root, &commit, &src)?;
    let shared = gate_dir.join("target");
    if !shared.exists() {
        let seeded = seed_dependencies(&target.join("release"), &shared.join("release"))
            .map_err(|e| io("seed", &shared, e))?;
        if !quiet && seeded > 0 {
            eprintln!(
                "gate: seeded the base builds' target directory with {seeded} dependency files from {}",
                target.join("release").display()
            );
        }
    }
    let log = commit_dir.join("build.log");
    if !quiet {
        eprintln!(
            "gate: building base {} ({rev}); output in {}",
            &commit[..12.min(commit.len())],
            log.display()
        );
    }
    if kept && !quiet {
        eprintln!(
            "gate: the kept base was built with other settings (rustflags or CARGO_PROFILE_*); building it again"
        );
    }
    cargo_build(&src, &shared, &log, &commit, &settings)?;
    let built = shared.join("release").join("stridelab");
    let partial = commit_dir.join("stridelab.partial");
    std::fs::copy(&built, &partial).map_err(|e| io("copy", &built, e))?;
    std::fs::rename(&partial, &binary).map_err(|e| io("rename", &partial, e))?;
    crate::results::write_atomic(&settings_file, settings.text().as_bytes()).map_err(|e| {
        GateError::WorkFile {
            what: "write".into(),
            path: settings_file.clone(),
            message: e.to_string(),
        }
    })?;
    std::fs::remove_dir_all(&src).map_err(|e| io("remove", &src, e))?;
    Ok(BaseBuild {
        commit,
        binary,
        reused: false,
        build_s: started.elapsed().as_secs_f64(),
        kept_in: gate_dir,
    })
}

/// Why a `git` command gave no answer.
#[derive(Debug, Error)]
pub enum GitError {
    // Causes are part of the message (fields not named `source`) so error chains do not repeat them.
    /// `git` did not start (not installed, or the directory is gone).
    #[error("cannot run git: {0}")]
    Spawn(io::Error),
    /// `git` ran and failed; its own words (stderr, trimmed) say why.
    #[error("{stderr}")]
    Failed { stderr: String },
}

/// Runs `git` in `dir`; its stdout (trimmed), or why not.
fn git(dir: &Path, args: &[&str]) -> Result<String, GitError> {
    let out = Command::new("git")
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(GitError::Spawn)?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(GitError::Failed {
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        })
    }
}

fn repository_root() -> Result<PathBuf, GateError> {
    let here = std::env::current_dir().map_err(GateError::NoCurrentDir)?;
    git(&here, &["rev-parse", "--show-toplevel"])
        .map(PathBuf::from)
        .map_err(GateError::NotARepository)
}

/// The full commit id of `rev`, or an error that says why it is missing (a shallow clone).
fn resolve_commit(root: &Path, rev: &str) -> Result<String, GateError> {
    let spec = format!("{rev}^{{commit}}");
    match git(root, &["rev-parse", "--verify", "--quiet", &spec]) {
        Ok(commit) if !commit.is_empty() => Ok(commit),
        _ => {
            let shallow = git(root, &["rev-parse", "--is-shallow-repository"])
                .is_ok_and(|answer| answer == "true");
            Err(GateError::UnknownRevision {
                rev: rev.to_string(),
                root: root.to_path_buf(),
                shallow,
            })
        }
    }
}

/// `git archive COMMIT | tar -x -m -C dest`: the files get the time of unpacking, not the
/// commit's, because cargo judges the shared target directory by modification times — a base
/// whose files were older than the previous base's build would get that build's binary.
fn unpack(root: &Path, commit: &str, dest: &Path) -> Result<(), GateError> {
    let failed = |message: String| GateError::BaseSource {
        commit: commit.to_string(),
        message,
    };
    let mut archive = Command::new("git")
        .current_dir(root)
        .args(["archive", "--format=tar", commit])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| failed(format!("cannot run git archive: {e}")))?;
    let stdout = archive.stdout.take().expect("piped");
    let tar = Command::new("tar")
        .args(["-x", "-m", "-C"])
        .arg(dest)
        .stdin(stdout)
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| failed(format!("cannot run tar: {e}")))?;
    let archived = archive
        .wait_with_output()
        .map_err(|e| failed(format!("git archive: {e}")))?;
    if !archived.status.success() {
        return Err(failed(
            String::from_utf8_lossy(&archived.stderr).trim().into(),
        ));
    }
    if !tar.status.success() {
        return Err(failed(String::from_utf8_lossy(&tar.stderr).trim().into()));
    }
    Ok(())
}

/// `cargo build --release --bin stridelab` of the unpacked source into the shared target
/// directory, its output in `log`; a failure names the commit and the output's last lines.
fn cargo_build(
    src: &Path,
    target: &Path,
    log: &Path,
    commit: &str,
    settings: &BuildSettings,
) -> Result<(), GateError> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(&cargo)
        .current_dir(src)
        .args(["build", "--release", "--bin", "stridelab", "--target-dir"])
        .arg(target)
        .env_remove(SLOWDOWN_VAR)
        .env_remove("RUSTFLAGS")
        .env(ENCODED_RUSTFLAGS, settings.rustflags.join(FLAG_SEPARATOR))
        .stdin(Stdio::null())
        .output()
        .map_err(|e| GateError::BaseBuild {
            commit: commit.to_string(),
            tail: format!("cannot run {}: {e}", Path::new(&cargo).display()),
        })?;
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    if let Ok(mut file) = std::fs::File::create(log) {
        let _ = file.write_all(text.as_bytes());
    }
    if out.status.success() {
        return Ok(());
    }
    let lines: Vec<&str> = text.lines().collect();
    let tail = lines[lines.len().saturating_sub(BUILD_TAIL_LINES)..].join("\n");
    Err(GateError::BaseBuild {
        commit: commit.to_string(),
        tail,
    })
}

/// The file beside a kept base binary that names its [`BuildSettings`].
const SETTINGS_FILE: &str = "build-settings";
/// Cargo's rustflags variable that overrides every other source of them, unsplit (0x1f apart).
const ENCODED_RUSTFLAGS: &str = "CARGO_ENCODED_RUSTFLAGS";
const FLAG_SEPARATOR: &str = "\x1f";

/// What shapes a build's machine code besides its source, as the candidate's checkout would
/// build it: the rustflags (by cargo's precedence: `CARGO_ENCODED_RUSTFLAGS`, `RUSTFLAGS`,
/// `CARGO_BUILD_RUSTFLAGS`, then `build.rustflags` of the repository's `.cargo/config.toml`)
/// and the `CARGO_PROFILE_*` overrides of the environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildSettings {
    /// The rustflags, one per entry.
    rustflags: Vec<String>,
    /// `CARGO_PROFILE_*` variables and their values, sorted.
    profile_env: Vec<(String, String)>,
}

impl BuildSettings {
    fn of_checkout(root: &Path) -> Result<Self, GateError> {
        let var = |name: &str| std::env::var(name).ok();
        let rustflags = match (
            var(ENCODED_RUSTFLAGS),
            var("RUSTFLAGS"),
            var("CARGO_BUILD_RUSTFLAGS"),
        ) {
            (Some(encoded), _, _) => encoded
                .split(FLAG_SEPARATOR)
                .filter(|flag| !flag.is_empty())
                .map(String::from)
                .collect(),
            (None, Some(flags), _) | (None, None, Some(flags)) => {
                flags.split_whitespace().map(String::from).collect()
            }
            (None, None, None) => config_rustflags(&root.join(".cargo").join("config.toml"))?,
        };
        let mut profile_env: Vec<(String, String)> = std::env::vars()
            .filter(|(name, _)| name.starts_with("CARGO_PROFILE_"))
            .collect();
        profile_env.sort();
        Ok(Self {
            rustflags,
            profile_env,
        })
    }

    /// One line per setting, as kept in [`SETTINGS_FILE`].
    fn text(&self) -> String {
        let mut text = format!("rustflags {:?}\n", self.rustflags);
        for (name, value) in &self.profile_env {
            text.push_str(&format!("{name}={value:?}\n"));
        }
        text
    }
}

/// `build.rustflags` of a cargo configuration file (a list, or one string split at spaces);
/// none when the file or the key is missing, an error when the file cannot be read as TOML.
fn config_rustflags(path: &Path) -> Result<Vec<String>, GateError> {
    let unusable = |message: String| GateError::WorkFile {
        what: "read the rustflags of".into(),
        path: path.to_path_buf(),
        message,
    };
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(unusable(e.to_string())),
    };
    let table: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| unusable(e.to_string()))?;
    let Some(flags) = table.get("build").and_then(|build| build.get("rustflags")) else {
        return Ok(Vec::new());
    };
    match flags {
        toml::Value::String(flags) => Some(flags.split_whitespace().map(String::from).collect()),
        toml::Value::Array(list) => list
            .iter()
            .map(|flag| flag.as_str().map(String::from))
            .collect(),
        _ => None,
    }
    .ok_or_else(|| unusable("`build.rustflags` must be a string or a list of strings".into()))
}

/// Whether a file or directory in a cargo profile directory belongs to the lab itself (its
/// library, binaries, tests and benches), which a base build compiles anyway.
fn is_own_artifact(name: &OsStr) -> bool {
    let name = name.to_string_lossy();
    name.starts_with("stridelab") || name.starts_with("libstridelab")
}

/// Copies the built dependencies of profile directory `from` (`deps` libraries, `build`
/// script outputs, `.fingerprint`) into `to`, keeping modification times so cargo finds them
/// fresh; executables (the lab's tests and benches) are left out. Returns the files copied
/// (0 when `from` has no dependencies).
fn seed_dependencies(from: &Path, to: &Path) -> std::io::Result<usize> {
    if !from.join("deps").is_dir() {
        return Ok(0);
    }
    let mut copied = 0;
    std::fs::create_dir_all(to.join("deps"))?;
    for entry in std::fs::read_dir(from.join("deps"))? {
        let entry = entry?;
        let path = entry.path();
        let library = path
            .extension()
            .is_some_and(|e| ["rlib", "rmeta", "so", "a", "d"].iter().any(|x| e == *x));
        if library && !is_own_artifact(&entry.file_name()) && entry.file_type()?.is_file() {
            copy_keeping_time(&path, &to.join("deps").join(entry.file_name()))?;
            copied += 1;
        }
    }
    for dir in ["build", ".fingerprint"] {
        if !from.join(dir).is_dir() {
            continue;
        }
        for entry in std::fs::read_dir(from.join(dir))? {
            let entry = entry?;
            if !is_own_artifact(&entry.file_name()) {
                copied += copy_tree(&entry.path(), &to.join(dir).join(entry.file_name()))?;
            }
        }
    }
    Ok(copied)
}

fn copy_tree(from: &Path, to: &Path) -> std::io::Result<usize> {
    if from.is_dir() {
        std::fs::create_dir_all(to)?;
        let mut copied = 0;
        for entry in std::fs::read_dir(from)? {
            let entry = entry?;
            copied += copy_tree(&entry.path(), &to.join(entry.file_name()))?;
        }
        Ok(copied)
    } else if from.is_file() {
        copy_keeping_time(from, to)?;
        Ok(1)
    } else {
        Ok(0)
    }
}

fn copy_keeping_time(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::copy(from, to)?;
    let modified = std::fs::metadata(from)?.modified()?;
    std::fs::File::options()
        .write(true)
        .open(to)?
        .set_modified(modified)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Why `git` gave no answer reads as before: git's own stderr, or why it did not start;
    /// `--base` puts it inside its advice.
    #[test]
    fn git_errors_keep_their_words() {
        let gone = Path::new("/nonexistent/stridelab-repository");
        let Err(spawn @ GitError::Spawn(_)) = git(gone, &["status"]) else {
            panic!("git ran in a directory that does not exist");
        };
        let cause = io::Error::from_raw_os_error(libc::ENOENT);
        assert_eq!(spawn.to_string(), format!("cannot run git: {cause}"));
        let failed = GitError::Failed {
            stderr: "fatal: not a git repository".into(),
        };
        assert_eq!(
            GateError::NotARepository(failed).to_string(),
            "--base needs the git repository of stridelab in the current directory (fatal: not \
             a git repository); give a prebuilt base with --base-binary instead"
        );
    }

    /// `build.rustflags` as cargo reads it: a list, or one string split at spaces; a missing
    /// file or key is no flags; anything else names the file.
    #[test]
    fn config_rustflags_reads_a_list_or_a_string_and_rejects_the_rest() {
        let dir = std::env::temp_dir().join(format!("stridelab-rustflags-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("config.toml");
        let cases: [(&str, Option<&[&str]>); 6] = [
            (
                "[build]\nrustflags = [\"-C\", \"llvm-args=-align-loops=64\"]",
                Some(&["-C", "llvm-args=-align-loops=64"]),
            ),
            (
                "[build]\nrustflags = \"-C  opt-level=3 \"",
                Some(&["-C", "opt-level=3"]),
            ),
            ("[build]\njobs = 2", Some(&[])),
            ("[build]\nrustflags = [1]", None),
            ("[build]\nrustflags = 7", None),
            ("[build\nrustflags", None),
        ];
        for (text, expected) in cases {
            std::fs::write(&file, text).unwrap();
            match (config_rustflags(&file), expected) {
                (Ok(flags), Some(expected)) => assert_eq!(flags, expected, "{text}"),
                (Err(e), None) => assert!(e.to_string().contains("config.toml"), "{e}"),
                (got, _) => panic!("{text}: {got:?}"),
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(
            config_rustflags(&dir.join("config.toml")).unwrap(),
            Vec::<String>::new()
        );
    }

    /// The kept settings name every flag and profile override, so a change of either is seen.
    #[test]
    fn settings_text_names_each_flag_and_override() {
        let settings = BuildSettings {
            rustflags: vec!["-C".into(), "llvm-args=-align-loops=64".into()],
            profile_env: vec![("CARGO_PROFILE_RELEASE_DEBUG".into(), "0".into())],
        };
        assert_eq!(
            settings.text(),
            "rustflags [\"-C\", \"llvm-args=-align-loops=64\"]\nCARGO_PROFILE_RELEASE_DEBUG=\"0\"\n"
        );
        let other = BuildSettings {
            rustflags: Vec::new(),
            ..settings.clone()
        };
        assert_ne!(settings.text(), other.text());
    }

    /// An unpacked base is newer than any earlier build: with the commit's times, cargo took a
    /// base whose commit predates the last base build for built already, and gave its binary.
    #[test]
    fn unpacked_sources_carry_the_time_of_unpacking_not_the_commits() {
        let root = repository_root().expect("the tests run inside the lab's git repository");
        let first = git(&root, &["rev-list", "--max-parents=0", "HEAD"]).unwrap();
        let first = first.lines().next().unwrap().to_string();
        let committed: u64 = git(&root, &["show", "-s", "--format=%ct", &first])
            .unwrap()
            .parse()
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let before = std::time::SystemTime::now() - std::time::Duration::from_secs(2);
        unpack(&root, &first, dir.path()).unwrap();
        let before_secs = before
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        assert!(
            committed < before_secs,
            "the first commit is older than this test"
        );
        let manifest = std::fs::metadata(dir.path().join("Cargo.toml")).unwrap();
        assert!(manifest.modified().unwrap() >= before);
    }

    #[test]
    fn seeding_copies_dependencies_with_their_times_and_leaves_the_lab_out() {
        let dir = tempfile::tempdir().unwrap();
        let from = dir.path().join("release");
        for file in [
            "deps/libserde-1.rlib",
            "deps/libserde-1.rmeta",
            "deps/serde-1.d",
            "deps/libstridelab-2.rlib",
            "deps/stridelab-3",
            "deps/gate_offline-4",
            "build/serde-5/out/private.rs",
            ".fingerprint/serde-1/lib-serde",
            ".fingerprint/stridelab-2/lib-stridelab",
        ] {
            let path = from.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, file).unwrap();
        }
        let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000);
        let rlib = from.join("deps/libserde-1.rlib");
        std::fs::File::options()
            .write(true)
            .open(&rlib)
            .unwrap()
            .set_modified(old)
            .unwrap();
        let to = dir.path().join("seeded/release");
        assert_eq!(seed_dependencies(&from, &to).unwrap(), 5);
        for kept in [
            "deps/libserde-1.rlib",
            "deps/libserde-1.rmeta",
            "deps/serde-1.d",
            "build/serde-5/out/private.rs",
            ".fingerprint/serde-1/lib-serde",
        ] {
            assert!(to.join(kept).is_file(), "{kept}");
        }
        for left in [
            "deps/libstridelab-2.rlib",
            "deps/stridelab-3",
            "deps/gate_offline-4",
            ".fingerprint/stridelab-2",
        ] {
            assert!(!to.join(left).exists(), "{left}");
        }
        let copied = std::fs::metadata(to.join("deps/libserde-1.rlib")).unwrap();
        assert_eq!(copied.modified().unwrap(), old);
        // Nothing built yet: nothing to seed.
        assert_eq!(seed_dependencies(&dir.path().join("none"), &to).unwrap(), 0);
    }
}
