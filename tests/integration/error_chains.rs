//! Every cause is said once: an error either writes its cause into its own message or hands it
//! on as `source()`, never both, because `main` prints the whole chain (`{:#}`) and a cause in
//! both places reads twice ("--threads: thread count `x` is …: thread count `x` is …").

use std::error::Error;
use std::path::PathBuf;

use stridelab::kernels::spec::KernelError;
use stridelab::kernels::tensor::TensorError;
use stridelab::layout::LayoutError;
use stridelab::mem::BufferError;
use stridelab::report::ReportError;
use stridelab::results::infer_doc::InferDocError;
use stridelab_copy::{CopyError, WisdomError};

use crate::common::stridelab;

/// The first place in `error`'s chain where a message repeats its source's, if any.
fn cause_said_twice(error: &(dyn Error + 'static)) -> Option<String> {
    let mut current = error;
    while let Some(source) = current.source() {
        let (outer, inner) = (current.to_string(), source.to_string());
        if outer.contains(&inner) {
            return Some(format!("`{outer}` also names its source `{inner}`"));
        }
        current = source;
    }
    None
}

fn io_error() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::PermissionDenied, "denied by the test")
}

fn json_error() -> serde_json::Error {
    serde_json::from_str::<u32>("{").unwrap_err()
}

#[test]
fn errors_that_carry_a_cause_say_it_once() {
    let path = || PathBuf::from("/nowhere/file.json");
    let (io, json) = (io_error().to_string(), json_error().to_string());
    let buffer = BufferError::AllocationFailed { bytes: 1 << 40 };
    let step = LayoutError::Overflow("a test's product".into());
    let copy = CopyError::Overflow;
    let (step_text, copy_text, buffer_text) =
        (step.to_string(), copy.to_string(), buffer.to_string());
    // Each error beside the text of the cause it wraps.
    let errors: Vec<(Box<dyn Error>, &str)> = vec![
        (
            Box::new(WisdomError::Read {
                path: path(),
                cause: io_error(),
            }),
            &io,
        ),
        (
            Box::new(WisdomError::Parse {
                path: path(),
                cause: json_error(),
            }),
            &json,
        ),
        (
            Box::new(WisdomError::Write {
                path: path(),
                cause: io_error(),
            }),
            &io,
        ),
        (
            Box::new(ReportError::Io {
                action: "read",
                path: path(),
                cause: io_error(),
            }),
            &io,
        ),
        (
            Box::new(InferDocError::Io {
                path: path(),
                cause: io_error(),
            }),
            &io,
        ),
        (Box::new(step.clone().in_op(".view(3,4)")), &step_text),
        (
            Box::new(TensorError::Copy {
                op: Some(".contiguous()".into()),
                cause: copy.clone(),
            }),
            &copy_text,
        ),
        (Box::new(KernelError::from(buffer.clone())), &buffer_text),
    ];
    for (error, cause) in &errors {
        assert_eq!(cause_said_twice(error.as_ref()), None);
        assert!(
            format!("{error}").contains(cause),
            "`{error}` lost its cause `{cause}`"
        );
    }
}

#[test]
fn the_finder_sees_a_cause_said_twice() {
    #[derive(Debug, thiserror::Error)]
    #[error("cannot read: {0}")]
    struct Twice(#[source] std::io::Error);
    assert!(cause_said_twice(&Twice(io_error())).is_some());
}

#[test]
fn a_bad_thread_list_is_named_once_on_stderr() {
    let out = stridelab(&["run", "--kernel", "row-sum", "--threads", "abc"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.matches("is neither a number nor `all`").count(),
        1,
        "{stderr}"
    );
}
