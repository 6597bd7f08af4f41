//! What a kernel is, as data: its name, family, parameters, explanation, and the prepared
//! [`Instance`] the harness times and the simulator counts.
//!
//! This is the contract between `kernels` (which defines access orders) and `harness`
//! (which times them): kernels never time or print; the harness never knows an access order.

use thiserror::Error;

use crate::cache::AccessSink;
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
}

/// Options that apply to every kernel's buffers.
#[derive(Debug, Clone, Copy, Default)]
pub struct PrepareOptions {
    /// Ask for transparent huge pages on the kernel's buffers.
    pub huge_pages: bool,
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
    #[error("{0}")]
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
}

/// Allocates and initialises an instance for resolved parameters.
pub type PrepareFn = fn(&Params, PrepareOptions) -> Result<Box<dyn Instance>, KernelError>;

/// A catalogue entry: the kernel as data, plus the function that prepares an instance.
#[derive(Clone, Copy)]
pub struct KernelSpec {
    pub name: &'static str,
    pub family: Family,
    /// Parameters in the order they are accepted positionally.
    pub params: &'static [ParamSpec],
    /// One paragraph for the report: what the kernel does and what to look for.
    pub explanation: &'static str,
    /// Allocates and initialises an instance for resolved parameters.
    pub prepare: PrepareFn,
}

impl std::fmt::Debug for KernelSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelSpec")
            .field("name", &self.name)
            .field("family", &self.family)
            .finish()
    }
}
