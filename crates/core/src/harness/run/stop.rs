//! The process-wide stop flag that Ctrl-C (SIGINT), SIGTERM and SIGHUP set: a run checks it
//! between points and keeps what it measured, and temporary files are removed on the way out
//! (SIGTERM is what CI runners and `kill` send). A handler can only be installed once, so every
//! caller shares one flag.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use thiserror::Error;

/// The signal handler could not be installed.
#[derive(Debug, Error)]
#[error("cannot install the Ctrl-C/SIGTERM handler")]
pub struct StopError(#[source] ctrlc::Error);

/// The flag Ctrl-C, SIGTERM and SIGHUP set; the handler is installed on the first call.
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
