//! Summaries of repeated runs and the loss and fairness figures reported next to every
//! throughput.

use serde::{Deserialize, Serialize};

/// Median, minimum and maximum of repeated measurements of one quantity.
///
/// Invariants: `n >= 1` and `min <= median <= max`; the median of an even number of
/// samples is the mean of the two middle ones. NaN samples are left out (and not
/// counted in `n`), so a summary never holds NaN.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// The middle sample (mean of the middle two for an even count).
    pub median: f64,
    /// The smallest sample.
    pub min: f64,
    /// The largest sample.
    pub max: f64,
    /// How many samples were summarised.
    pub n: usize,
}

impl Summary {
    /// A single run.
    pub fn single(value: f64) -> Summary {
        Summary { median: value, min: value, max: value, n: 1 }
    }

    /// The summary of `samples`, or `None` when there is no sample other than NaN.
    pub fn of(samples: &[f64]) -> Option<Summary> {
        let mut v: Vec<f64> = samples.iter().copied().filter(|x| !x.is_nan()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            // Halves first: the sum of two large finite values must not overflow.
            v[n / 2 - 1] / 2.0 + v[n / 2] / 2.0
        };
        Some(Summary { median, min: v[0], max: v[n - 1], n })
    }
}

/// The fraction of `offered` packets that were not delivered, in `[0, 1]`.
///
/// Nothing offered means nothing lost: `offered == 0` gives 0. More delivered than
/// offered (duplicates, or counters read at slightly different times) is clamped to 0.
pub fn loss_ratio(offered: u64, delivered: u64) -> f64 {
    if offered == 0 || delivered >= offered {
        return 0.0;
    }
    (offered - delivered) as f64 / offered as f64
}

/// The loss difference between flows (or ports) that share a device: the largest loss
/// ratio minus the smallest, each from [`loss_ratio`] of an `(offered, delivered)`
/// pair. 0 for fewer than two flows; a fair device keeps it near 0.
pub fn loss_difference(flows: &[(u64, u64)]) -> f64 {
    let losses = flows.iter().map(|&(o, d)| loss_ratio(o, d));
    let (lo, hi) =
        losses.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), l| (lo.min(l), hi.max(l)));
    if flows.len() < 2 {
        0.0
    } else {
        hi - lo
    }
}

/// Jain's fairness index of the allocations `xs` (for example each flow's delivered
/// rate): `(Σx)² / (n · Σx²)`, from `1/n` (one flow gets everything) to 1 (all equal).
///
/// Negative and NaN allocations count as 0. An empty slice, or all allocations 0, is
/// perfectly fair (1): nobody got more than anyone else.
pub fn jain_index(xs: &[f64]) -> f64 {
    let clean = xs.iter().map(|&x| if x > 0.0 { x } else { 0.0 });
    let (sum, sum_sq) = clean.fold((0.0, 0.0), |(s, q), x| (s + x, q + x * x));
    if xs.is_empty() || sum_sq == 0.0 {
        return 1.0;
    }
    sum * sum / (xs.len() as f64 * sum_sq)
}

/// Max-min fair shares of `demands` on a link of `capacity`: the smallest demands are
/// met first, what is left is split evenly among the rest (water filling).
pub fn max_min_shares(demands: &[f64], capacity: f64) -> Vec<f64> {
    let mut share = vec![0.0; demands.len()];
    let mut left = capacity.max(0.0);
    let mut order: Vec<usize> = (0..demands.len()).collect();
    order.sort_by(|&a, &b| demands[a].total_cmp(&demands[b]));
    let mut remaining = order.len();
    for i in order {
        let s = demands[i].min(left / remaining as f64).max(0.0);
        share[i] = s;
        left -= s;
        remaining -= 1;
    }
    share
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_odd_even_and_nan() {
        let s = Summary::of(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((s.median, s.min, s.max, s.n), (2.0, 1.0, 3.0, 3));
        for even in [[4.0, 1.0, 3.0, 2.0], [4.0, 1.0, 2.0, 3.0]] {
            let s = Summary::of(&even).unwrap();
            assert_eq!((s.median, s.min, s.max, s.n), (2.5, 1.0, 4.0, 4), "{even:?}");
        }
        // Not-a-number runs are left out.
        let s = Summary::of(&[f64::NAN, 5.0]).unwrap();
        assert_eq!((s.median, s.min, s.max, s.n), (5.0, 5.0, 5.0, 1));
        assert_eq!(Summary::of(&[]), None);
        assert_eq!(Summary::of(&[f64::NAN]), None);
        let s = Summary::of(&[f64::MAX, f64::MAX]).unwrap();
        assert_eq!(s.median, f64::MAX);
    }

    #[test]
    fn summary_round_trips_through_json() {
        let s = Summary::of(&[1.5, 2.5, 9.0]).unwrap();
        let j = serde_json::to_string(&s).unwrap();
        assert_eq!(serde_json::from_str::<Summary>(&j).unwrap(), s);
    }

    #[test]
    fn loss() {
        assert_eq!(loss_ratio(0, 0), 0.0);
        assert_eq!(loss_ratio(0, 5), 0.0);
        assert_eq!(loss_ratio(100, 110), 0.0);
        assert_eq!(loss_ratio(100, 75), 0.25);
        assert_eq!(loss_ratio(100, 0), 1.0);
        assert!((loss_difference(&[(100, 90), (100, 70), (0, 0)]) - 0.3).abs() < 1e-12);
        assert_eq!(loss_difference(&[(100, 50)]), 0.0);
    }

    #[test]
    fn jain() {
        assert_eq!(jain_index(&[5.0, 5.0, 5.0, 5.0]), 1.0);
        assert!((jain_index(&[1.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
        // (1+3)^2 / (2 * 10) = 0.8
        assert!((jain_index(&[1.0, 3.0]) - 0.8).abs() < 1e-12);
        assert_eq!(jain_index(&[]), 1.0);
        assert_eq!(jain_index(&[0.0, 0.0]), 1.0);
        assert!((jain_index(&[-2.0, 4.0]) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn max_min_fills_small_demands_first() {
        assert_eq!(max_min_shares(&[1.0, 9.0], 4.0), vec![1.0, 3.0]);
        assert_eq!(max_min_shares(&[9.0, 1.0], 20.0), vec![9.0, 1.0]);
        assert_eq!(max_min_shares(&[5.0, 5.0], 4.0), vec![2.0, 2.0]);
        assert!(max_min_shares(&[], 4.0).is_empty());
    }
}
