//! Rate control for a generator that sends in batches: when each batch is due, as a
//! token bucket over a clock the caller reads (nothing here sleeps or reads a clock).
//!
//! Batch `k` (from 0) is due at `start + k · batch / rate` seconds; due times come from
//! `k` each time, so rounding never accumulates into drift. A generator that polls late
//! (it was descheduled, or the ring was full) may send the batches it owes at once, but
//! at most `max_burst` of them: the rest are skipped and counted as missed, so a stall
//! never turns into an unbounded burst and the offered load is known exactly.

/// The send schedule of one generator. Invariants: `rate_pps > 0` and finite,
/// `batch >= 1`, `max_burst >= 1`; `next` counts the batches released or missed so
/// far, and batch `next` is the next one due.
#[derive(Clone, Debug, PartialEq)]
pub struct Pacer {
    start_ns: u64,
    rate_pps: f64,
    /// Nanoseconds between two batches (`batch · 1e9 / rate`).
    interval_ns: f64,
    batch: u32,
    max_burst: u32,
    next: u64,
    released: u64,
    missed: u64,
}

/// What [`Pacer::poll`] allows now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Due {
    /// Batches to send now (at most the pacer's `max_burst`).
    pub batches: u32,
    /// Batches skipped at this poll because the generator was too late to send them
    /// within the burst bound.
    pub missed: u64,
}

/// Why a pacer could not be made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RateError {
    /// The rate was not a positive finite number.
    BadRate,
    /// The batch size or the burst bound was 0.
    ZeroSize,
}

impl Pacer {
    /// A schedule of `batch`-packet batches at `rate_pps` packets per second, the first
    /// due at `start_ns`, with at most `max_burst` batches released by one poll.
    pub fn new(
        rate_pps: f64,
        batch: u32,
        max_burst: u32,
        start_ns: u64,
    ) -> Result<Pacer, RateError> {
        if !(rate_pps > 0.0 && rate_pps.is_finite()) {
            return Err(RateError::BadRate);
        }
        if batch == 0 || max_burst == 0 {
            return Err(RateError::ZeroSize);
        }
        Ok(Pacer {
            start_ns,
            rate_pps,
            interval_ns: f64::from(batch) * 1e9 / rate_pps,
            batch,
            max_burst,
            next: 0,
            released: 0,
            missed: 0,
        })
    }

    /// When batch `k` is due, in the clock's nanoseconds (saturating at `u64::MAX`).
    fn due_ns(&self, k: u64) -> u64 {
        // One rounding (the division) for an integer rate: exact when the due time is a
        // whole nanosecond.
        let off = ((k as f64 * f64::from(self.batch)) * 1e9 / self.rate_pps).ceil();
        if off >= (u64::MAX - self.start_ns) as f64 {
            u64::MAX
        } else {
            self.start_ns + off as u64
        }
    }

    /// When the next batch is due; a generator waits (spins or sleeps) until then.
    pub fn next_due_ns(&self) -> u64 {
        self.due_ns(self.next)
    }

    /// The batches due at `now_ns` that have not been released yet, released now: the
    /// caller sends `batches` batches. A clock earlier than the next due time releases
    /// nothing.
    pub fn poll(&mut self, now_ns: u64) -> Due {
        if now_ns < self.next_due_ns() {
            return Due { batches: 0, missed: 0 };
        }
        // Batches 0..=k are due, where k is the largest with due_ns(k) <= now.
        let elapsed = (now_ns - self.start_ns) as f64;
        let mut upto = (elapsed / self.interval_ns).floor() as u64 + 1;
        // Floating point may put the boundary one off either way; settle it exactly.
        while upto > self.next + 1 && self.due_ns(upto - 1) > now_ns {
            upto -= 1;
        }
        // A due time that saturated at the end of the clock is never reached.
        while upto < u64::MAX && self.due_ns(upto) < u64::MAX && self.due_ns(upto) <= now_ns {
            upto += 1;
        }
        let owed = upto - self.next;
        let batches = owed.min(u64::from(self.max_burst));
        let missed = owed - batches;
        self.next = upto;
        self.released += batches;
        self.missed += missed;
        Due { batches: batches as u32, missed }
    }

    /// Packets released so far (batches released times the batch size).
    pub fn released_packets(&self) -> u64 {
        self.released * u64::from(self.batch)
    }

    /// Packets skipped so far because the generator fell behind.
    pub fn missed_packets(&self) -> u64 {
        self.missed * u64::from(self.batch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steady_polling_follows_the_rate() {
        // 1 Mpps in batches of 32: one batch every 32 µs.
        let mut p = Pacer::new(1e6, 32, 4, 1_000).unwrap();
        assert_eq!(p.next_due_ns(), 1_000);
        assert_eq!(p.poll(999), Due { batches: 0, missed: 0 });
        assert_eq!(p.poll(1_000).batches, 1);
        assert_eq!(p.next_due_ns(), 33_000);
        assert_eq!(p.poll(32_999).batches, 0);
        assert_eq!(p.poll(33_000).batches, 1);
        // Polling every microsecond for one second releases exactly the rate.
        let mut p = Pacer::new(1e6, 32, 4, 0).unwrap();
        let mut sent = 0u64;
        for t in (0..1_000_000_000u64).step_by(1_000) {
            sent += u64::from(p.poll(t).batches) * 32;
        }
        // Batches due in [0, 1 s): k*32 µs < 1 s → 31250 batches.
        assert_eq!(sent, 31_250 * 32);
        assert_eq!(p.released_packets(), sent);
        assert_eq!(p.missed_packets(), 0);
    }

    #[test]
    fn fractional_interval_does_not_drift() {
        // 3 pps in batches of 1: due at 0, 333333334, 666666667, 1e9, ...
        let mut p = Pacer::new(3.0, 1, 1_000_000, 0).unwrap();
        assert_eq!(p.poll(3_000_000_000 - 1).batches, 9);
        assert_eq!(p.poll(3_000_000_000).batches, 1);
        let mut p = Pacer::new(7e6, 1, u32::MAX, 5).unwrap();
        // Batches due in [5, 5 + 1e9]: k/7e6 s <= 1 s → k = 0..=7e6.
        assert_eq!(p.poll(1_000_000_005).batches, 7_000_001);
    }

    #[test]
    fn a_stall_catches_up_only_within_the_burst_bound() {
        let mut p = Pacer::new(1e6, 10, 3, 0).unwrap(); // a batch every 10 µs
        assert_eq!(p.poll(0).batches, 1);
        // Stalled for 1 ms: batches 1..=100 are due; 3 go now, 97 are missed.
        assert_eq!(p.poll(1_000_000), Due { batches: 3, missed: 97 });
        assert_eq!(p.next_due_ns(), 1_010_000);
        assert_eq!(p.poll(1_005_000).batches, 0);
        assert_eq!(p.poll(1_010_000).batches, 1);
        assert_eq!(p.released_packets(), 50);
        assert_eq!(p.missed_packets(), 970);
    }

    #[test]
    fn bad_parameters_and_a_clock_going_back() {
        assert_eq!(Pacer::new(0.0, 1, 1, 0), Err(RateError::BadRate));
        assert_eq!(Pacer::new(f64::NAN, 1, 1, 0), Err(RateError::BadRate));
        assert_eq!(Pacer::new(f64::INFINITY, 1, 1, 0), Err(RateError::BadRate));
        assert_eq!(Pacer::new(1.0, 0, 1, 0), Err(RateError::ZeroSize));
        assert_eq!(Pacer::new(1.0, 1, 0, 0), Err(RateError::ZeroSize));
        let mut p = Pacer::new(1e3, 1, 8, 1_000_000).unwrap();
        assert_eq!(p.poll(0).batches, 0);
        assert_eq!(p.poll(u64::MAX).batches, 8);
    }
}
