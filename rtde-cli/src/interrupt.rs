//! Ctrl-C, the same for every command that runs until it: the first asks the command to
//! stop cleanly (finish its files, print its summary, exit 0), a second ends the process
//! at once with status 130.
//!
//! Handled, never left to the signal's default: a non-interactive shell starts a
//! background job with SIGINT ignored, and a command that relied on the default then ran
//! on past every Ctrl-C.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::said;

static ASKED: AtomicBool = AtomicBool::new(false);

/// Installs the handler; call once, before the command starts its work.
pub(crate) fn handle() -> Result<(), String> {
    ctrlc::set_handler(|| {
        if ASKED.swap(true, Ordering::SeqCst) {
            std::process::exit(130);
        }
    })
    .map_err(|e| format!("cannot handle Ctrl-C: {e}", e = said(e)))
}

/// Whether Ctrl-C asked the command to stop.
pub(crate) fn asked() -> bool {
    ASKED.load(Ordering::SeqCst)
}

/// Waits until Ctrl-C asks the command to stop.
pub(crate) fn wait() {
    while !asked() {
        std::thread::sleep(Duration::from_millis(50));
    }
}
