//! Ratios that hold on a noisy machine: every case is timed in short batches, the batches
//! of all cases interleaved round by round, and a ratio is the median over rounds of the
//! two cases' times *in the same round*, so that a slow moment of the machine slows both.

use std::time::{Duration, Instant};

/// One operation to time: `run(n)` performs it `n` times.
struct Case<'a> {
    name: &'static str,
    run: Box<dyn FnMut(u64) + 'a>,
    iterations: u64,
    /// Nanoseconds per operation, one sample per round.
    samples: Vec<f64>,
}

/// A set of cases timed together.
pub struct Interleaved<'a> {
    cases: Vec<Case<'a>>,
}

impl std::fmt::Debug for Interleaved<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.cases.iter().map(|c| c.name))
            .finish()
    }
}

impl Default for Interleaved<'_> {
    fn default() -> Self {
        Self::new()
    }
}

#[allow(clippy::cast_precision_loss)] // nanoseconds and counts far below 2^53
fn per_op(elapsed: Duration, n: u64) -> f64 {
    elapsed.as_nanos() as f64 / n as f64
}

impl<'a> Interleaved<'a> {
    /// No cases yet.
    #[must_use]
    pub fn new() -> Self {
        Interleaved { cases: Vec::new() }
    }

    /// Adds a case: `run(n)` must perform the operation `n` times, passing its input
    /// through `black_box` and its output into `black_box`.
    pub fn case(&mut self, name: &'static str, run: impl FnMut(u64) + 'a) {
        self.cases.push(Case {
            name,
            run: Box::new(run),
            iterations: 1,
            samples: Vec::new(),
        });
    }

    /// Calibrates each case to batches of about `batch`, then times `rounds` rounds, each
    /// running one batch of every case, starting from a different case each round.
    pub fn run(&mut self, rounds: usize, batch: Duration) {
        for case in &mut self.cases {
            let mut n = 1;
            loop {
                let start = Instant::now();
                (case.run)(n);
                if start.elapsed() >= batch || n >= 1 << 40 {
                    break;
                }
                n *= 2;
            }
            case.iterations = n;
            case.samples = Vec::with_capacity(rounds);
        }
        let len = self.cases.len();
        for round in 0..rounds {
            for k in 0..len {
                let case = &mut self.cases[(round + k) % len];
                let n = case.iterations;
                let start = Instant::now();
                (case.run)(n);
                case.samples.push(per_op(start.elapsed(), n));
            }
        }
    }

    fn samples(&self, name: &str) -> &[f64] {
        self.cases
            .iter()
            .find(|c| c.name == name)
            .map_or(&[], |c| &c.samples)
    }

    /// The median time of one operation, in nanoseconds.
    #[must_use]
    pub fn median(&self, name: &str) -> f64 {
        median(self.samples(name).to_vec())
    }

    /// The fastest round's time of one operation, in nanoseconds.
    #[must_use]
    pub fn min(&self, name: &str) -> f64 {
        self.samples(name)
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min)
    }

    /// The median over rounds of `name`'s time divided by `base`'s time in the same round.
    #[must_use]
    pub fn ratio(&self, name: &str, base: &str) -> f64 {
        let ratios = self
            .samples(name)
            .iter()
            .zip(self.samples(base))
            .map(|(a, b)| a / b)
            .collect();
        median(ratios)
    }

    /// The cases' names, in the order added.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.cases.iter().map(|c| c.name)
    }
}

/// The order in which round `round` runs `N` cases that are `N / 2` pairs (cases `2k` and
/// `2k + 1`, a floor and what is measured against it): the pairs start from a different
/// one each round, and within each pair the first case leads in even rounds and the
/// second in odd ones. The two of a pair stay neighbours, so they share the machine's
/// drift, and neither always follows the same case.
///
/// A fixed order had each case always follow the same one, and in the drivers bench what
/// ran just before a case moved its ratio by about a tenth (`docs/performance.md` gives the
/// runs, at `dcd78b5`).
#[must_use]
pub fn paired_order<const N: usize>(round: usize) -> [usize; N] {
    const { assert!(N.is_multiple_of(2), "cases come in pairs") };
    let pairs = N / 2;
    let mut order = [0; N];
    for (k, slot) in order.chunks_exact_mut(2).enumerate() {
        let first = 2 * ((round + k) % pairs);
        if round.is_multiple_of(2) {
            slot.copy_from_slice(&[first, first + 1]);
        } else {
            slot.copy_from_slice(&[first + 1, first]);
        }
    }
    order
}

/// The median of `v` (the mean of the two middle values for an even count); NaN if empty.
#[must_use]
pub fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    if v.len().is_multiple_of(2) {
        f64::midpoint(v[mid - 1], v[mid])
    } else {
        v[mid]
    }
}

/// The `q` quantile (0 to 1) of `v` by the nearest rank; NaN if empty.
#[must_use]
pub fn quantile(mut v: Vec<f64>, q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss
    )] // a rank between 0 and len - 1
    let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1;
    v[rank]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_and_quantiles() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(quantile(v.clone(), 0.5), 50.0);
        assert_eq!(quantile(v.clone(), 0.99), 99.0);
        assert_eq!(quantile(v, 1.0), 100.0);
    }

    #[test]
    fn pairs_stay_neighbours_and_take_both_places_and_every_turn() {
        let rounds: Vec<[usize; 6]> = (0..6).map(paired_order::<6>).collect();
        for order in &rounds {
            let mut seen = *order;
            seen.sort_unstable();
            assert_eq!(
                seen,
                [0, 1, 2, 3, 4, 5],
                "each case once a round: {order:?}"
            );
            for pair in order.chunks_exact(2) {
                assert_eq!(pair[0] / 2, pair[1] / 2, "a pair split: {order:?}");
            }
        }
        // Over six rounds, each pair leads each round's order in both of its orders.
        let leads: std::collections::BTreeSet<[usize; 2]> =
            rounds.iter().map(|o| [o[0], o[1]]).collect();
        assert_eq!(leads.len(), 6, "{rounds:?}");
        // Each case runs first in its pair in half the rounds.
        for case in 0..6 {
            let first = rounds
                .iter()
                .filter(|o| o.chunks_exact(2).any(|p| p[0] == case))
                .count();
            assert_eq!(first, 3, "case {case}: {rounds:?}");
        }
    }

    #[test]
    fn ratios_compare_rounds() {
        let mut bench = Interleaved::new();
        bench.case("one", |n| {
            for i in 0..n {
                std::hint::black_box(i);
            }
        });
        bench.case("four", |n| {
            for i in 0..4 * n {
                std::hint::black_box(i);
            }
        });
        bench.run(5, Duration::from_micros(50));
        assert!(bench.ratio("four", "one") > 1.5);
        assert_eq!(bench.names().count(), 2);
    }
}
