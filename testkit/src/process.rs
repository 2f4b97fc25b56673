//! What the servers the tests start share: stopping one as an operator would.

use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// Stops `child` with SIGTERM, so that it saves its state and closes its connections, and
/// reaps it; SIGKILL when it has not ended within `grace`.
pub(crate) fn terminate(mut child: Child, grace: Duration) {
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
}
