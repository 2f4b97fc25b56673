//! Running the `rtde` binary from tests: every wait bounded, every child reaped.

#![allow(dead_code, unreachable_pub)] // each test binary uses a different part

use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// The longest any command may run before the test fails.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

/// What a finished command printed.
#[derive(Debug)]
pub struct Run {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// Asserts success and returns stderr.
    pub fn ok(&self) -> &str {
        assert!(self.status.success(), "failed: {self:#?}");
        &self.stderr
    }

    /// Asserts failure with exactly one line on stderr, and no panic; returns that line.
    pub fn one_line_error(&self) -> &str {
        assert!(!self.status.success(), "succeeded: {self:#?}");
        assert_eq!(self.status.code(), Some(1), "{self:#?}");
        assert!(!self.stderr.contains("panicked"), "{self:#?}");
        let lines: Vec<&str> = self.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "not one line: {self:#?}");
        assert!(lines[0].starts_with("error: "), "{self:#?}");
        lines[0]
    }
}

/// The `rtde` command.
pub fn rtde() -> Command {
    Command::new(env!("CARGO_BIN_EXE_rtde"))
}

/// `rtde view` of a deterministic simulator on a free loopback port, for `duration` at most.
pub fn view_on_any_port(duration: &str) -> Spawned {
    let mut cmd = rtde();
    cmd.args([
        "view",
        "--deterministic",
        "--listen",
        "127.0.0.1:0",
        "--duration",
        duration,
    ]);
    Spawned::new(cmd)
}

/// Runs `rtde ARGS` in `dir` to the end, within [`COMMAND_TIMEOUT`].
pub fn run_in(dir: &Path, args: &[&str]) -> Run {
    let mut cmd = rtde();
    cmd.args(args).current_dir(dir);
    finish(Spawned::new(cmd), COMMAND_TIMEOUT)
}

/// Runs `rtde ARGS` to the end, within [`COMMAND_TIMEOUT`].
pub fn run(args: &[&str]) -> Run {
    run_in(Path::new("."), args)
}

/// A child process, killed and reaped when dropped.
pub struct Spawned {
    pub child: Child,
    stdout: Option<mpsc::Receiver<String>>,
    stderr: Option<thread::JoinHandle<String>>,
}

impl Spawned {
    /// Starts `cmd` with piped output: stdout line by line, stderr collected.
    pub fn new(mut cmd: Command) -> Spawned {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start rtde");
        let out = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let mut err = child.stderr.take().unwrap();
        let stderr = thread::spawn(move || {
            let mut s = String::new();
            let _ = err.read_to_string(&mut s);
            s
        });
        Spawned {
            child,
            stdout: Some(rx),
            stderr: Some(stderr),
        }
    }

    /// The next line on stdout, within `timeout`.
    pub fn line(&mut self, timeout: Duration) -> String {
        self.stdout
            .as_ref()
            .unwrap()
            .recv_timeout(timeout)
            .unwrap_or_else(|e| panic!("no line on stdout within {timeout:?}: {e}"))
    }

    /// The address a `rtde sim` or `rtde replay` prints first: `…: listening on ADDR`.
    pub fn listening_on(&mut self) -> SocketAddr {
        let line = self.line(Duration::from_secs(10));
        let addr = line
            .split_once("listening on ")
            .unwrap_or_else(|| panic!("no address in {line:?}"))
            .1;
        addr.parse().unwrap()
    }

    /// Waits for the process to exit, at most `timeout`.
    pub fn wait(&mut self, timeout: Duration) -> ExitStatus {
        self.wait_at_most(timeout)
            .unwrap_or_else(|| panic!("rtde still running after {timeout:?}"))
    }

    /// The exit status if the process ends within `timeout`; `None` if it still runs.
    pub fn wait_at_most(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// Sends SIGINT, as Ctrl-C does.
    pub fn interrupt(&self) {
        let status = Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status()
            .expect("run kill");
        assert!(status.success());
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

/// Waits for `child` to end within `timeout` and collects its output.
pub fn finish(mut child: Spawned, timeout: Duration) -> Run {
    let status = child.wait(timeout);
    let mut stdout = Vec::new();
    if let Some(rx) = child.stdout.take() {
        while let Ok(line) = rx.recv_timeout(Duration::from_secs(5)) {
            stdout.push(line);
        }
    }
    let stderr = child.stderr.take().unwrap().join().unwrap();
    Run {
        status,
        stdout: stdout.join("\n"),
        stderr,
    }
}

/// An empty directory of its own for a test.
pub fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("rtde-cli-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The names of the files in `dir`, sorted.
pub fn files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A CSV from `rtde record`: the header and the rows as numbers.
pub struct Csv {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<f64>>,
}

impl Csv {
    pub fn read(path: &Path) -> Csv {
        let text = std::fs::read_to_string(path).unwrap();
        let mut lines = text.lines();
        let columns = lines.next().unwrap().split(',').map(String::from).collect();
        let rows = lines
            .map(|l| l.split(',').map(|x| x.parse().unwrap()).collect())
            .collect();
        Csv { columns, rows }
    }

    pub fn column(&self, name: &str) -> Vec<f64> {
        let i = self
            .columns
            .iter()
            .position(|c| c == name)
            .unwrap_or_else(|| panic!("no column {name} in {:?}", self.columns));
        self.rows.iter().map(|r| r[i]).collect()
    }
}

/// The `packages` and `skipped` counts of a capture's header (bytes 49 and 57).
pub fn capture_counts(path: &Path) -> (u64, u64) {
    let bytes = std::fs::read(path).unwrap();
    let at = |i: usize| u64::from_be_bytes(bytes[i..i + 8].try_into().unwrap());
    (at(49), at(57))
}
