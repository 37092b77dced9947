//! The zero-loss throughput search of RFC 2544 (section 26.1): the highest offered rate
//! a device forwards without loss, found by binary search over trials at fixed rates.
//!
//! The search is generic over the trial: a closure that offers traffic at a rate for
//! the trial's duration and reports what was offered and delivered. It first tries the
//! high rate (a device that forwards line rate needs one trial), then the low rate (a
//! device that fails even there has no zero-loss rate in range), then halves the
//! bracket `[highest pass, lowest fail]` until it is no wider than the resolution or
//! the trial budget is spent.
//!
//! A trial passes when its loss ratio is at most `acceptable_loss`. RFC 2544 asks for 0,
//! the default. Software paths over veth drop a few packets now and then for reasons
//! other than capacity (a timer softirq, a page allocation), which turns the search into
//! a random walk downwards; a study may then accept a small loss (say 1e-4) and must
//! state it next to the result, since that is no longer the RFC's figure.

use super::stats::loss_ratio;

/// What one trial measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TrialOutcome {
    /// Packets the generator offered (sent into the device).
    pub offered: u64,
    /// Packets the sink received back.
    pub delivered: u64,
}

impl TrialOutcome {
    /// The trial's loss ratio ([`loss_ratio`]).
    pub fn loss_ratio(&self) -> f64 {
        loss_ratio(self.offered, self.delivered)
    }
}

/// One trial of a search: the rate asked for, what it measured, and the verdict.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Trial {
    /// The rate the generator was asked to offer, packets per second.
    pub rate_pps: f64,
    /// What was measured.
    pub outcome: TrialOutcome,
    /// Whether the loss ratio was within the acceptable loss.
    pub passed: bool,
}

/// The search's parameters. Invariants (checked by [`zero_loss_search`]):
/// `0 < low_pps <= high_pps`, `resolution_pps > 0`, `0 <= acceptable_loss < 1`,
/// `max_trials >= 2`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SearchConfig {
    /// The lowest rate tried, packets per second.
    pub low_pps: f64,
    /// The highest rate tried (the line rate, or the generator's maximum).
    pub high_pps: f64,
    /// The search stops when the bracket between the highest passing and the lowest
    /// failing rate is at most this wide.
    pub resolution_pps: f64,
    /// The largest loss ratio a passing trial may show (0: RFC 2544's zero loss).
    pub acceptable_loss: f64,
    /// The most trials the search makes, counting the first two.
    pub max_trials: usize,
}

impl SearchConfig {
    /// A search between `low_pps` and `high_pps` to 1% of `high_pps`, with zero loss
    /// acceptable and at most 20 trials (enough for a 1% resolution from any range).
    pub fn new(low_pps: f64, high_pps: f64) -> SearchConfig {
        SearchConfig {
            low_pps,
            high_pps,
            resolution_pps: high_pps / 100.0,
            acceptable_loss: 0.0,
            max_trials: 20,
        }
    }

    fn check(&self) -> Result<(), &'static str> {
        if !(self.low_pps > 0.0 && self.low_pps <= self.high_pps && self.high_pps.is_finite()) {
            return Err("rates must satisfy 0 < low <= high < infinity");
        }
        if self.resolution_pps.is_nan() || self.resolution_pps <= 0.0 {
            return Err("resolution must be positive");
        }
        if !(0.0..1.0).contains(&self.acceptable_loss) {
            return Err("acceptable loss must be in [0, 1)");
        }
        if self.max_trials < 2 {
            return Err("the search needs at least two trials");
        }
        Ok(())
    }
}

/// What a search found.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchResult {
    /// The highest rate that passed, or `None` when even the low rate failed.
    pub rate_pps: Option<f64>,
    /// The lowest rate that failed, or `None` when the high rate passed.
    pub lowest_fail_pps: Option<f64>,
    /// Whether the bracket closed to the resolution (false: the trial budget ran out,
    /// and the true rate lies somewhere between the two bounds above).
    pub converged: bool,
    /// Every trial, in the order made.
    pub trials: Vec<Trial>,
}

/// Why a search stopped without a result.
#[derive(Debug, PartialEq)]
pub enum SearchError<E> {
    /// The configuration broke an invariant of [`SearchConfig`].
    BadConfig(&'static str),
    /// A trial failed to run; the trials made before it are kept.
    Trial { error: E, trials: Vec<Trial> },
}

/// Runs the RFC 2544 search described in the module comment, calling `trial(rate_pps)`
/// for each trial.
pub fn zero_loss_search<E, F>(
    cfg: &SearchConfig,
    mut trial: F,
) -> Result<SearchResult, SearchError<E>>
where
    F: FnMut(f64) -> Result<TrialOutcome, E>,
{
    cfg.check().map_err(SearchError::BadConfig)?;
    let mut trials = Vec::new();
    let mut run = |rate: f64, trials: &mut Vec<Trial>| -> Result<bool, SearchError<E>> {
        match trial(rate) {
            Ok(outcome) => {
                let passed = outcome.loss_ratio() <= cfg.acceptable_loss;
                trials.push(Trial { rate_pps: rate, outcome, passed });
                Ok(passed)
            }
            Err(error) => Err(SearchError::Trial { error, trials: std::mem::take(trials) }),
        }
    };
    if run(cfg.high_pps, &mut trials)? {
        return Ok(SearchResult {
            rate_pps: Some(cfg.high_pps),
            lowest_fail_pps: None,
            converged: true,
            trials,
        });
    }
    if cfg.low_pps == cfg.high_pps || !run(cfg.low_pps, &mut trials)? {
        return Ok(SearchResult {
            rate_pps: None,
            lowest_fail_pps: Some(cfg.low_pps),
            converged: true,
            trials,
        });
    }
    let (mut pass, mut fail) = (cfg.low_pps, cfg.high_pps);
    while fail - pass > cfg.resolution_pps && trials.len() < cfg.max_trials {
        let mid = pass + (fail - pass) / 2.0;
        if run(mid, &mut trials)? {
            pass = mid;
        } else {
            fail = mid;
        }
    }
    Ok(SearchResult {
        rate_pps: Some(pass),
        lowest_fail_pps: Some(fail),
        converged: fail - pass <= cfg.resolution_pps,
        trials,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Rng;

    /// A simulated device: forwards up to `capacity` pps, drops the excess, for a
    /// one-second trial.
    fn device(capacity: f64) -> impl FnMut(f64) -> Result<TrialOutcome, ()> {
        move |rate| {
            let offered = rate as u64;
            Ok(TrialOutcome { offered, delivered: offered.min(capacity as u64) })
        }
    }

    #[test]
    fn converges_to_a_known_capacity() {
        let cfg = SearchConfig::new(10_000.0, 1_000_000.0);
        let r = zero_loss_search(&cfg, device(437_000.0)).unwrap();
        let rate = r.rate_pps.unwrap();
        assert!(rate <= 437_000.0 && 437_000.0 - rate <= cfg.resolution_pps, "{rate}");
        assert!(r.converged);
        assert!(r.lowest_fail_pps.unwrap() > 437_000.0);
        assert!(r.trials.len() <= cfg.max_trials);
        assert!(r.trials.iter().all(|t| t.passed == (t.rate_pps <= 437_000.0)));
    }

    #[test]
    fn high_passing_takes_one_trial_and_low_failing_gives_none() {
        let cfg = SearchConfig::new(1_000.0, 100_000.0);
        let r = zero_loss_search(&cfg, device(1e9)).unwrap();
        assert_eq!((r.rate_pps, r.trials.len()), (Some(100_000.0), 1));
        let r = zero_loss_search(&cfg, device(500.0)).unwrap();
        assert_eq!((r.rate_pps, r.trials.len()), (None, 2));
    }

    #[test]
    fn budget_exhaustion_is_reported() {
        let cfg =
            SearchConfig { resolution_pps: 1.0, max_trials: 5, ..SearchConfig::new(1.0, 1e6) };
        let r = zero_loss_search(&cfg, device(123_456.0)).unwrap();
        assert_eq!(r.trials.len(), 5);
        assert!(!r.converged);
        let (p, f) = (r.rate_pps.unwrap(), r.lowest_fail_pps.unwrap());
        assert!(p <= 123_456.0 && f > 123_456.0);
    }

    #[test]
    fn noisy_device_with_acceptable_loss() {
        // Random background loss of up to 5e-5 at every rate, plus the capacity limit:
        // with zero loss acceptable nothing passes; with 1e-4 the capacity is found.
        let capacity = 250_000.0;
        let mk = |seed| {
            let mut rng = Rng::new(seed);
            move |rate: f64| -> Result<TrialOutcome, ()> {
                let offered = rate as u64;
                let noise = 1 + rng.below(offered / 20_000 + 1);
                let delivered = offered.min(capacity as u64).saturating_sub(noise);
                Ok(TrialOutcome { offered, delivered })
            }
        };
        let strict = SearchConfig::new(50_000.0, 1_000_000.0);
        assert_eq!(zero_loss_search(&strict, mk(1)).unwrap().rate_pps, None);
        for seed in 1..20 {
            let cfg = SearchConfig { acceptable_loss: 1e-4, ..strict };
            let r = zero_loss_search(&cfg, mk(seed)).unwrap();
            let rate = r.rate_pps.unwrap();
            // Within the resolution, allowing the accepted loss above capacity.
            assert!(rate <= capacity * (1.0 + 1e-4) + 1.0, "{seed}: {rate}");
            assert!(capacity - rate <= cfg.resolution_pps, "{seed}: {rate}");
        }
    }

    #[test]
    fn bad_config_and_trial_errors() {
        let bad = SearchConfig::new(10.0, 5.0);
        assert!(matches!(zero_loss_search(&bad, device(1.0)), Err(SearchError::BadConfig(_))));
        let nan = SearchConfig { resolution_pps: f64::NAN, ..SearchConfig::new(1.0, 5.0) };
        assert!(matches!(zero_loss_search(&nan, device(1.0)), Err(SearchError::BadConfig(_))));
        let cfg = SearchConfig::new(1_000.0, 100_000.0);
        let mut calls = 0;
        let r = zero_loss_search(&cfg, |rate| {
            calls += 1;
            if calls == 3 {
                Err("generator died")
            } else {
                device(40_000.0)(rate).map_err(|_| "unreachable")
            }
        });
        match r {
            Err(SearchError::Trial { error, trials }) => {
                assert_eq!(error, "generator died");
                assert_eq!(trials.len(), 2);
            }
            other => panic!("{other:?}"),
        }
    }
}
