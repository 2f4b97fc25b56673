//! What the streaming benchmarks share to read their flags and print their figures.

use std::time::Duration;

/// The number after `flag` on the command line (`--seconds 30`), or `default` when the flag
/// is absent or its value is not a number.
#[must_use]
pub fn arg(flag: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == flag)
        .and_then(|i| args.get(i + 1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// How a figure is printed against its target.
#[must_use]
pub fn verdict(pass: bool) -> &'static str {
    if pass { "met" } else { "MISSED" }
}

/// `d` shared over `n` packages, in microseconds each (none counts as one).
#[must_use]
#[allow(clippy::cast_precision_loss)] // counts and nanoseconds far below 2^53
pub fn per_us(d: Duration, n: u64) -> f64 {
    d.as_nanos() as f64 / n.max(1) as f64 / 1e3
}

/// The machine's CPU model, as `/proc/cpuinfo` names it: every figure says where it was
/// taken.
#[must_use]
pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, m)| m.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned())
}

/// The commit the figures are of: `git rev-parse --short HEAD`, or `unknown`.
#[must_use]
pub fn commit() -> String {
    std::process::Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map_or_else(|| "unknown".to_owned(), |s| s.trim().to_owned())
}
