//! What a kernel is, as data: its name, family, parameters, explanation, and the prepared
//! [`Instance`] the harness times and the simulator counts.
//!
//! This is the contract between `kernels` (which defines access orders) and `harness`
//! (which times them): a kernel neither times nor prints its runs; the harness never knows an
//! access order. The one timing in `kernels` is the copy engine's planner (`copy/planner.rs`),
//! which times candidate schedules to choose one and warns on stderr when its wisdom file cannot
//! be written.

#![forbid(unsafe_code)]

use std::sync::Arc;

use stridelab_copy::Planner;
use thiserror::Error;

use crate::cache::AccessSink;
use crate::units::{format_count, format_count_signed};
// The plain-data vocabulary lives on the ground floor, shared with the records.
pub use crate::vocab::{Family, ParamValue, Params, Work, format_params};

/// The type and validation rule of one parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    /// An integer in `min..=max`.
    Int { min: u64, max: u64 },
    /// One of a fixed set of words.
    Choice(&'static [&'static str]),
    /// Free text (for example a layout expression), validated by the kernel itself.
    Text,
}

/// One parameter of a kernel. `default: None` means the parameter is required.
#[derive(Debug, Clone, Copy)]
pub struct ParamSpec {
    pub name: &'static str,
    pub kind: ParamKind,
    pub default: Option<&'static str>,
    pub doc: &'static str,
    /// An integer counted in elements: shown with its bytes (the seeds count strides in
    /// elements; the cache sees bytes).
    pub in_elements: bool,
}

impl ParamSpec {
    /// An integer parameter in `min..=max` (the catalogue is data: one line a parameter).
    pub const fn int(
        name: &'static str,
        min: u64,
        max: u64,
        default: Option<&'static str>,
        doc: &'static str,
    ) -> Self {
        let kind = ParamKind::Int { min, max };
        Self {
            name,
            kind,
            default,
            doc,
            in_elements: false,
        }
    }

    /// A parameter that takes one of `words`.
    pub const fn choice(
        name: &'static str,
        words: &'static [&'static str],
        default: Option<&'static str>,
        doc: &'static str,
    ) -> Self {
        let kind = ParamKind::Choice(words);
        Self {
            name,
            kind,
            default,
            doc,
            in_elements: false,
        }
    }

    /// The same parameter, counted in elements (shown with its bytes).
    pub const fn in_elements(self) -> Self {
        Self {
            in_elements: true,
            ..self
        }
    }

    /// A free-text parameter the kernel validates itself.
    pub const fn text(
        name: &'static str,
        default: Option<&'static str>,
        doc: &'static str,
    ) -> Self {
        let kind = ParamKind::Text;
        Self {
            name,
            kind,
            default,
            doc,
            in_elements: false,
        }
    }
}

/// Options that apply to every kernel's buffers, and the planner its copies go through.
#[derive(Debug, Clone)]
pub struct PrepareOptions {
    /// Ask for transparent huge pages on the kernel's buffers.
    pub huge_pages: bool,
    /// The instance is only simulated, never run: a kernel whose address stream does not
    /// depend on its data may then allocate no buffers and feed addresses only
    /// (`kernels::access::AddressMem`); its `run` returns NaN, which no checksum matches.
    pub simulate_only: bool,
    /// The copy engine's planner the kernels that copy keep and copy with (run and
    /// simulated): the run's, whose plans the harness drains into the point's record.
    pub copies: Arc<Planner>,
    /// One buffer started past its 2 MiB boundary (default: none).
    pub shift: BufferShift,
}

/// Buffer `buffer` of an instance starts `bytes` past its 2 MiB boundary, every other buffer on
/// one: a controlled experiment's alignment change (64 B: other lines and sets against the
/// other buffers; 4 KiB: another page offset). Timed only: the simulator places buffers where
/// it always does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BufferShift {
    pub buffer: usize,
    pub bytes: usize,
}

impl PrepareOptions {
    /// The shift of buffer `buffer` in bytes (0 for every buffer but the shifted one).
    pub fn shift_of(&self, buffer: usize) -> usize {
        if buffer == self.shift.buffer {
            self.shift.bytes
        } else {
            0
        }
    }

    /// Run and simulated, no huge pages, every copy through `copies` (the caller's planner:
    /// the kernels floor never detects the machine or builds a planner of its own).
    pub fn with_planner(copies: Arc<Planner>) -> Self {
        PrepareOptions {
            huge_pages: false,
            simulate_only: false,
            copies,
            shift: BufferShift::default(),
        }
    }
}

/// Why a kernel could not be prepared or run.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum KernelError {
    #[error("unknown kernel `{0}` (see `stridelab run --list`)")]
    UnknownKernel(String),
    #[error("kernel `{kernel}` has no parameter `{param}`; it takes: {known}")]
    UnknownParam {
        kernel: String,
        param: String,
        known: String,
    },
    #[error("kernel `{kernel}` needs parameter `{param}`")]
    MissingParam { kernel: String, param: String },
    #[error("parameter `{param}`: {message}")]
    InvalidParam { param: String, message: String },
    #[error("checksum mismatch: expected {expected}, got {actual}")]
    Checksum { expected: f64, actual: f64 },
    #[error(transparent)]
    Buffer(#[from] crate::mem::BufferError),
}

/// A kernel with its buffers allocated and initialised, ready to run many times.
///
/// `Send` so the harness can run one instance per pinned thread.
pub trait Instance: Send {
    /// The work one call of [`Instance::run`] does.
    fn work(&self) -> Work;
    /// Runs the kernel once on real memory and returns its checksum.
    fn run(&mut self) -> f64;
    /// The checksum a correct run returns (derived from the data, not hard-coded).
    fn expected_checksum(&self) -> f64;
    /// Feeds the address stream of exactly one run to `sink`, with buffer k placed at
    /// `(k+1)·2^32`. The order is the one [`Instance::run`] uses: both come from one definition.
    fn simulate(&mut self, sink: &mut dyn AccessSink);
    /// Feeds the accesses that leave the caches as the timed runs find them, for a kernel
    /// simulated warm ([`SimStart::Warm`]): by default one run. A kernel whose run covers only
    /// part of its buffers (the long pointer chase) feeds all the runs that cover them once.
    fn simulate_warm_up(&mut self, sink: &mut dyn AccessSink) {
        self.simulate(sink);
    }
}

/// The cache state a point's simulation starts from: the state its timed runs see.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SimStart {
    /// From empty caches: one run's compulsory misses are counted (every kernel whose figures
    /// read the 3C split of one run, and the cachegrind checks, which run once).
    Cold,
    /// After [`Instance::simulate_warm_up`], unrecorded: the timed runs follow a warm-up, so a
    /// working set that fits a level hits there.
    Warm,
}

/// Allocates and initialises an instance for resolved parameters.
pub type PrepareFn = fn(&Params, &PrepareOptions) -> Prepared;

/// A prepared instance ready to run and simulate, or why the parameters cannot make one.
pub type Prepared = Result<Box<dyn Instance>, KernelError>;

/// A kernel, whole: its name, family, parameters and words, and every function the lab asks of
/// it. One value per kernel in its family's file and one line in the catalogue's list add it.
#[derive(Clone, Copy)]
pub struct KernelSpec {
    pub name: &'static str,
    pub family: Family,
    /// Parameters in the order they are accepted positionally.
    pub params: &'static [ParamSpec],
    /// One line for `run --list`: what the kernel does.
    pub summary: &'static str,
    /// Parameter words of a typical point, as `run --kernel NAME` and `sim NAME` take them.
    pub example: &'static str,
    /// One paragraph for the report: what the kernel does and what to look for.
    pub explanation: &'static str,
    /// Allocates and initialises an instance for resolved parameters.
    pub prepare: PrepareFn,
    /// The buffer plan that validates parameters (see [`PlanFn`]).
    pub(crate) plan: PlanFn,
    /// The strided pattern the analytic model is asked about.
    pub(crate) pattern: PatternFn,
    /// Where the simulation differs from the timed kernel, if it can.
    pub(crate) simulation_note: Option<SimulationNoteFn>,
    /// `None`: one run touches about every element of its buffers once (see
    /// `catalogue::estimate_accesses`).
    pub(crate) accesses: Option<AccessesFn>,
    /// Where the harness starts the point's simulation (see [`SimStart`]).
    pub(crate) simulate: SimStart,
}

impl KernelSpec {
    /// The example's words as a shell reads them: whitespace separates words, except inside
    /// single quotes (a nest's text is one word: `'nest=for i in 0..8: s += a[i]'`), which are
    /// dropped.
    pub fn example_words(&self) -> Vec<String> {
        let mut words = Vec::new();
        let mut word = String::new();
        let mut quoted = false;
        for c in self.example.chars() {
            match c {
                '\'' => quoted = !quoted,
                c if c.is_whitespace() && !quoted => {
                    if !word.is_empty() {
                        words.push(std::mem::take(&mut word));
                    }
                }
                c => word.push(c),
            }
        }
        if !word.is_empty() {
            words.push(word);
        }
        words
    }
}

impl std::fmt::Debug for KernelSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelSpec")
            .field("name", &self.name)
            .field("family", &self.family)
            .finish()
    }
}

/// Buffer lengths (in f64 elements) an instance needs for resolved parameters; checks the
/// kernel's cross-parameter rules on the way.
pub(crate) type PlanFn = fn(&Params) -> Result<Vec<usize>, KernelError>;

/// The kernel's characteristic strided pattern for resolved parameters (see [`StridePattern`]).
pub(crate) type PatternFn = fn(&Params) -> Result<Option<StridePattern>, KernelError>;

/// Where the simulated address stream is not exactly the one the timed kernel makes, for
/// resolved parameters: a sentence saying how it differs (`None`: the same stream).
pub(crate) type SimulationNoteFn = fn(&Params) -> Option<&'static str>;

/// Loads and stores of one run for resolved parameters, computed from the parameters alone.
pub(crate) type AccessesFn = fn(&Params) -> Result<u64, KernelError>;

/// The access pattern that decides how a kernel uses the cache sets: `count` accesses
/// `stride_bytes` apart in buffer `buffer`, which the kernel repeats (one column of `col-sum`,
/// the K slots of `conflict`, …). The analytic set/GCD model predicts from it how many sets
/// the kernel really uses; `None` for kernels without one (the random pointer chase).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct StridePattern {
    pub buffer: usize,
    pub stride_bytes: i64,
    pub count: u64,
    /// What the pattern is, in words ("one column: 512 elements 4096 B apart").
    pub description: String,
}

impl StridePattern {
    /// `count` f64 elements `stride` elements apart in `buffer`, described as `what`.
    pub(crate) fn elements(buffer: usize, stride: isize, count: usize, what: &str) -> Self {
        Self::sized(buffer, stride, count, 8, what)
    }

    /// `count` elements of `bytes` each, `stride` elements apart in `buffer`, described as
    /// `what` in elements and bytes (the seeds count strides in elements; caches see bytes).
    pub(crate) fn sized(
        buffer: usize,
        stride: isize,
        count: usize,
        bytes: u32,
        what: &str,
    ) -> Self {
        let stride_bytes = stride as i64 * i64::from(bytes);
        Self {
            buffer,
            stride_bytes,
            count: count as u64,
            description: format!(
                "{what}: {} elements {} B apart",
                format_count(count as u64),
                format_count_signed(stride_bytes)
            ),
        }
    }
}
