//! The process-wide stop flag that Ctrl-C sets: a run checks it between points and keeps what
//! it measured. A handler can only be installed once, so every caller shares one flag.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use thiserror::Error;

/// The Ctrl-C handler could not be installed.
#[derive(Debug, Error)]
#[error("cannot install the Ctrl-C handler")]
pub struct StopError(#[source] ctrlc::Error);

/// The flag Ctrl-C sets; the handler is installed on the first call.
pub fn stop_flag() -> Result<Arc<AtomicBool>, StopError> {
    static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    if let Some(flag) = FLAG.get() {
        return Ok(Arc::clone(flag));
    }
    let flag = Arc::new(AtomicBool::new(false));
    let in_handler = Arc::clone(&flag);
    ctrlc::set_handler(move || in_handler.store(true, Ordering::SeqCst)).map_err(StopError)?;
    Ok(Arc::clone(FLAG.get_or_init(|| flag)))
}
