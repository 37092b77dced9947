//! Meters: rate limiters shared by every worker (OpenFlow 1.3 §5.7).
//!
//! Each band is a token bucket, implemented as GCRA (the "virtual scheduling" form of a
//! token bucket) in one `AtomicU64`: the band keeps its theoretical arrival time `tat`
//! in units of 1/16 ns. A packet costing `inc` units (1 packet, or its bits, divided by
//! the rate) conforms when `max(tat, now) + inc - now <= tau`, where `tau` is the burst
//! size over the rate; a conforming packet advances `tat` by one compare-exchange. A bucket
//! that has been idle is full (it holds `burst` worth of tokens), exactly as a token
//! bucket refilled at `rate` and capped at `burst` would be.
//!
//! Several workers share one meter correctly because the whole band state is that one
//! atomic word: this is the one atomic read-modify-write the hot path does, and only for
//! packets of metered rules. Time is passed in (`now_ns`), never read here, so tests are
//! deterministic.
//!
//! A packet exceeds a band when the band's bucket lacks tokens for it. Of the exceeded
//! bands the one with the highest rate applies: `Drop`, or `DscpRemark`, which raises
//! the drop precedence of an AF DSCP (AFxy, y = 1..3) by `prec_level`, capped at 3.
//! Without the burst flag a band's burst is one second of its rate.

use std::sync::atomic::{AtomicU64, Ordering};

/// Units of time per nanosecond in a band's `tat`.
const UNITS_PER_NS: u64 = 16;

/// How a meter measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MeterUnit {
    /// Rates in kbit/s, bursts in kbit.
    Kbps,
    /// Rates in packets/s, bursts in packets.
    Pktps,
}

/// What a band does to a packet that exceeds its rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BandKind {
    Drop,
    DscpRemark { prec_level: u8 },
}

/// One band's configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Band {
    pub kind: BandKind,
    pub rate: u32,
    pub burst_size: u32,
}

/// The shared state of one band.
#[derive(Debug)]
pub(crate) struct BandState {
    tat: AtomicU64,
    /// Units per packet (Pktps) or per bit (Kbps), as a float multiplier.
    inc_unit: f64,
    tau: u64,
    pub(crate) counter: u32,
}

/// A meter: bands and their shared state. Replacing a meter starts its buckets full.
#[derive(Debug)]
pub struct Meter {
    pub id: u32,
    pub unit: MeterUnit,
    /// `OFPMF_BURST`: use the bands' `burst_size`.
    pub burst: bool,
    pub bands: Vec<Band>,
    pub(crate) state: Box<[BandState]>,
    pub(crate) counter: u32,
}

/// The decision for one packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MeterOutcome {
    Pass,
    /// Band `band` (index) applies and drops the packet.
    Drop {
        band: usize,
    },
    /// Band `band` applies: raise the AF drop precedence by `prec_level`.
    Remark {
        band: usize,
        prec_level: u8,
    },
}

impl Meter {
    pub fn new(id: u32, unit: MeterUnit, burst: bool, bands: Vec<Band>) -> Meter {
        let state = bands
            .iter()
            .map(|b| {
                let rate = b.rate.max(1) as f64;
                let per_sec = 1e9 * UNITS_PER_NS as f64;
                let inc_unit = match unit {
                    MeterUnit::Pktps => per_sec / rate,
                    MeterUnit::Kbps => per_sec / (rate * 1000.0),
                };
                let burst_amount = if burst && b.burst_size > 0 {
                    b.burst_size
                } else {
                    b.rate
                };
                // Burst in packets or kbit, over rate per second: seconds of burst.
                let tau = (burst_amount as f64 / rate * per_sec).min(u64::MAX as f64 / 4.0);
                BandState {
                    tat: AtomicU64::new(0),
                    inc_unit: if b.rate == 0 { f64::INFINITY } else { inc_unit },
                    tau: tau as u64,
                    counter: 0,
                }
            })
            .collect();
        Meter {
            id,
            unit,
            burst,
            bands,
            state,
            counter: 0,
        }
    }

    fn cost(&self, band: &BandState, len: usize) -> u64 {
        let amount = match self.unit {
            MeterUnit::Pktps => 1.0,
            MeterUnit::Kbps => (len as f64) * 8.0,
        };
        let c = amount * band.inc_unit;
        if c >= u64::MAX as f64 / 4.0 {
            u64::MAX / 4
        } else {
            c as u64
        }
    }

    /// Meters a packet of `len` bytes at `now_ns`, consuming tokens of the bands it fits.
    #[inline]
    pub fn apply(&self, len: usize, now_ns: u64) -> MeterOutcome {
        self.decide(len, now_ns, true)
    }

    /// What [`apply`](Self::apply) would decide, changing nothing (for the tracer).
    pub fn peek(&self, len: usize, now_ns: u64) -> MeterOutcome {
        self.decide(len, now_ns, false)
    }

    fn decide(&self, len: usize, now_ns: u64, consume: bool) -> MeterOutcome {
        let now = now_ns.saturating_mul(UNITS_PER_NS);
        let mut applied: Option<usize> = None;
        for (i, (band, st)) in self.bands.iter().zip(self.state.iter()).enumerate() {
            let inc = self.cost(st, len);
            let exceeded = if consume {
                !take(&st.tat, inc, st.tau, now)
            } else {
                let tat = st.tat.load(Ordering::Relaxed).max(now);
                tat.saturating_add(inc) - now > st.tau
            };
            if exceeded
                && applied.is_none_or(|a| self.bands.get(a).is_some_and(|b| band.rate > b.rate))
            {
                applied = Some(i);
            }
        }
        match applied.and_then(|i| self.bands.get(i).map(|b| (i, b))) {
            None => MeterOutcome::Pass,
            Some((band, b)) => match b.kind {
                BandKind::Drop => MeterOutcome::Drop { band },
                BandKind::DscpRemark { prec_level } => MeterOutcome::Remark { band, prec_level },
            },
        }
    }
}

/// GCRA conformance test and update: true when the packet fits.
#[inline]
fn take(tat: &AtomicU64, inc: u64, tau: u64, now: u64) -> bool {
    let mut cur = tat.load(Ordering::Relaxed);
    loop {
        let next = cur.max(now).saturating_add(inc);
        if next - now > tau {
            return false;
        }
        match tat.compare_exchange_weak(cur, next, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return true,
            Err(c) => cur = c,
        }
    }
}

/// The DSCP after raising its AF drop precedence by `prec_level` (other code points are
/// left as they are).
pub fn remark_dscp(dscp: u8, prec_level: u8) -> u8 {
    let class = dscp >> 3;
    let prec = (dscp >> 1) & 3;
    if (1..=4).contains(&class) && dscp & 1 == 0 && (1..=3).contains(&prec) {
        let p = (prec as u16 + prec_level as u16).min(3) as u8;
        (class << 3) | (p << 1)
    } else {
        dscp
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    const SEC: u64 = 1_000_000_000;

    fn drop_band(rate: u32, burst_size: u32) -> Band {
        Band {
            kind: BandKind::Drop,
            rate,
            burst_size,
        }
    }

    #[test]
    fn pktps_burst_then_rate() {
        let m = Meter::new(1, MeterUnit::Pktps, true, vec![drop_band(10, 5)]);
        let t0 = 1000 * SEC;
        let passed = (0..8)
            .filter(|_| m.apply(64, t0) == MeterOutcome::Pass)
            .count();
        assert_eq!(passed, 5, "a full bucket lets the burst through");
        // 10 pkt/s: one token every 100 ms.
        assert_eq!(m.apply(64, t0 + SEC / 20), MeterOutcome::Drop { band: 0 });
        assert_eq!(m.apply(64, t0 + SEC / 10), MeterOutcome::Pass);
        assert_eq!(m.apply(64, t0 + SEC / 10), MeterOutcome::Drop { band: 0 });
        // Steady 10 pkt/s passes entirely; 20 pkt/s passes half.
        let mut t = t0 + SEC;
        let mut pass = 0;
        for _ in 0..200 {
            t += SEC / 20;
            pass += (m.apply(64, t) == MeterOutcome::Pass) as usize;
        }
        assert!((99..=106).contains(&pass), "{pass}");
    }

    #[test]
    fn kbps_counts_bits_and_default_burst_is_one_second() {
        // 80 kbit/s = 10,000 bytes/s; no burst flag: bucket holds 80 kbit = 10,000 bytes.
        let m = Meter::new(1, MeterUnit::Kbps, false, vec![drop_band(80, 0)]);
        let t0 = 5 * SEC;
        let passed = (0..20)
            .filter(|_| m.apply(1000, t0) == MeterOutcome::Pass)
            .count();
        assert_eq!(passed, 10);
        // 100 ms later: 1,000 bytes more.
        assert_eq!(m.apply(1000, t0 + SEC / 10), MeterOutcome::Pass);
        assert_eq!(m.apply(100, t0 + SEC / 10), MeterOutcome::Drop { band: 0 });
    }

    #[test]
    fn highest_exceeded_band_applies_and_peek_changes_nothing() {
        let m = Meter::new(
            1,
            MeterUnit::Pktps,
            true,
            vec![
                Band {
                    kind: BandKind::DscpRemark { prec_level: 1 },
                    rate: 10,
                    burst_size: 2,
                },
                drop_band(20, 4),
            ],
        );
        let t = 3 * SEC;
        assert_eq!(m.peek(64, t), MeterOutcome::Pass);
        assert_eq!(m.apply(64, t), MeterOutcome::Pass);
        assert_eq!(m.apply(64, t), MeterOutcome::Pass);
        assert_eq!(
            m.peek(64, t),
            MeterOutcome::Remark {
                band: 0,
                prec_level: 1
            }
        );
        assert_eq!(
            m.apply(64, t),
            MeterOutcome::Remark {
                band: 0,
                prec_level: 1
            }
        );
        assert_eq!(
            m.apply(64, t),
            MeterOutcome::Remark {
                band: 0,
                prec_level: 1
            }
        );
        assert_eq!(m.apply(64, t), MeterOutcome::Drop { band: 1 });
    }

    #[test]
    fn threads_share_one_meter() {
        let m = Arc::new(Meter::new(
            1,
            MeterUnit::Pktps,
            true,
            vec![drop_band(1000, 100)],
        ));
        // One simulated clock shared by the threads: 4000 packets over one second.
        let clock = Arc::new(AtomicU64::new(10 * SEC));
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let (m, clock) = (m.clone(), clock.clone());
                std::thread::spawn(move || {
                    (0..1000)
                        .filter(|_| {
                            let t = clock.fetch_add(SEC / 4000, Ordering::Relaxed);
                            m.apply(64, t) == MeterOutcome::Pass
                        })
                        .count()
                })
            })
            .collect();
        let total: usize = handles.into_iter().map(|h| h.join().unwrap()).sum();
        // At most one second at 1000 pkt/s plus the burst of 100, whatever the
        // interleaving; close to it since the clock is nearly monotonic.
        assert!((1050..=1101).contains(&total), "{total}");
    }

    #[test]
    fn remark_raises_af_precedence_only() {
        assert_eq!(remark_dscp(10, 1), 12); // AF11 -> AF12
        assert_eq!(remark_dscp(10, 5), 14); // capped at AF13
        assert_eq!(remark_dscp(46, 1), 46); // EF untouched
        assert_eq!(remark_dscp(0, 2), 0);
    }
}
