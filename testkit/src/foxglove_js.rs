//! Foxglove's own TypeScript libraries (`@foxglove/ws-protocol`, `@mcap/core`), run by
//! node: the scripts in `tests/interop/foxglove`, started as a child process whose stdout
//! is read as JSON lines, every wait bounded, the child killed and reaped when dropped.
//!
//! The tests that use them are ignored in a plain `cargo test`. `.ci/run` runs
//! `tests/interop/foxglove/setup.sh`, which installs the packages and prints a `node`
//! that finds them, and runs those tests with [`NODE_VAR`] naming it.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// What [`Script::event`] returns: for the tests whose crate has no `serde_json` of its own.
pub use serde_json::Value as Json;

/// The environment variable naming the `node` that `tests/interop/foxglove/setup.sh`
/// printed.
pub const NODE_VAR: &str = "RTDE_FOXGLOVE_NODE";

/// The folder of the scripts and their `package.json`.
#[must_use]
pub fn scripts() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/interop/foxglove")
}

/// A script running under node.
#[derive(Debug)]
pub struct Script {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Option<JoinHandle<String>>,
}

impl Script {
    /// Starts `node SCRIPT ARGS` with the node that [`NODE_VAR`] names.
    ///
    /// # Panics
    /// When [`NODE_VAR`] is not set, or node cannot be started: the test fails, it does
    /// not skip.
    #[must_use]
    pub fn start(script: &str, args: &[&str]) -> Script {
        let node = std::env::var(NODE_VAR).unwrap_or_else(|_| {
            panic!(
                "{NODE_VAR} must name the node that tests/interop/foxglove/setup.sh prints (it installs Foxglove's libraries)"
            )
        });
        let mut child = Command::new(&node)
            .arg(scripts().join(script))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {node}: {e}"));
        let out = child.stdout.take().expect("piped stdout");
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let mut err = child.stderr.take().expect("piped stderr");
        let stderr = thread::spawn(move || {
            let mut s = String::new();
            let _ = err.read_to_string(&mut s);
            s
        });
        Script {
            stdin: child.stdin.take(),
            child,
            lines,
            stderr: Some(stderr),
        }
    }

    /// The next line the script prints, as JSON, within `timeout`.
    ///
    /// # Panics
    /// When none comes in time, or it is not JSON: with what the script said on stderr.
    pub fn event(&mut self, timeout: Duration) -> Json {
        match self.lines.recv_timeout(timeout) {
            Ok(line) => serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("the script printed {line:?}, not JSON: {e}")),
            Err(e) => {
                let _ = self.child.kill();
                let status = self.child.wait();
                panic!(
                    "no line from the script within {timeout:?} ({e}), it ended with {status:?}:\n{}",
                    self.stderr()
                )
            }
        }
    }

    /// Writes one line to the script's stdin.
    ///
    /// # Panics
    /// When the script no longer reads it.
    pub fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        writeln!(stdin, "{line}").expect("the script reads its stdin");
    }

    /// Waits for the script to end, at most `timeout`; its exit status and stderr.
    ///
    /// # Panics
    /// When it is still running after `timeout`.
    pub fn finish(mut self, timeout: Duration) -> (ExitStatus, String) {
        drop(self.stdin.take());
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait for node") {
                return (status, self.stderr());
            }
            assert!(
                Instant::now() < deadline,
                "the script still runs after {timeout:?}"
            );
            thread::sleep(Duration::from_millis(10));
        }
    }

    fn stderr(&mut self) -> String {
        self.stderr
            .take()
            .map(|h| h.join().unwrap_or_default())
            .unwrap_or_default()
    }
}

impl Drop for Script {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}
