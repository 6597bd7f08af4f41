//! Signalling a running binary under test and waiting, bounded, for it to end: the checks that
//! a stopped command cleans up after itself.

use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// Sends the signal `name` (`-INT`, `-TERM`, `-KILL`) to `child` with kill(1), so the tests
/// need no unsafe FFI.
pub fn signal(child: &Child, name: &str) {
    let status = Command::new("kill")
        .args([name, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill {name} failed");
}

/// Waits for `child` to end and returns its exit code (`None` when a signal ended it); a
/// minute after the signal it is killed and the test fails, rather than hanging.
pub fn wait(child: &mut Child) -> Option<i32> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("still running a minute after the signal");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}
