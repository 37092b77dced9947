//! Per-handle port counters, written by one worker and read by anyone.
//!
//! Every [`crate::PortIo`](datapath::port::PortIo) handle this crate opens has its own
//! [`PortCounters`], shared through an `Arc` with whoever reports statistics. The
//! handle's worker is the only writer: it adds with a relaxed load and a relaxed store
//! (no read-modify-write, so no locked instruction on the hot path); readers take
//! relaxed loads and may see one counter a batch ahead of another. A second writer would
//! lose increments (never corrupt memory), so the `add_*` methods are for the owning
//! handle only.
//!
//! A port's totals are the sum of its handles' [`PortStats`] (`+=`).

use std::ops::AddAssign;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Live counters of one port handle. See the module comment for the one-writer rule.
#[derive(Debug, Default)]
pub struct PortCounters {
    rx_packets: AtomicU64,
    rx_bytes: AtomicU64,
    rx_dropped: AtomicU64,
    rx_errors: AtomicU64,
    tx_packets: AtomicU64,
    tx_bytes: AtomicU64,
    tx_dropped: AtomicU64,
    tx_errors: AtomicU64,
}

/// Adds `n` to a counter that only this thread writes.
#[inline]
fn bump(counter: &AtomicU64, n: u64) {
    counter.store(counter.load(Relaxed).wrapping_add(n), Relaxed);
}

impl PortCounters {
    /// Frames handed to the worker, and their bytes.
    #[inline]
    pub fn add_rx(&self, packets: u64, bytes: u64) {
        bump(&self.rx_packets, packets);
        bump(&self.rx_bytes, bytes);
    }

    /// Frames accepted for transmission, and their bytes.
    #[inline]
    pub fn add_tx(&self, packets: u64, bytes: u64) {
        bump(&self.tx_packets, packets);
        bump(&self.tx_bytes, bytes);
    }

    /// Frames that arrived but were lost before the worker saw them (kernel ring
    /// overflow, a full in-memory queue).
    #[inline]
    pub fn add_rx_dropped(&self, n: u64) {
        bump(&self.rx_dropped, n);
    }

    /// Frames received damaged (truncated, malformed ring entries) or receive failures.
    #[inline]
    pub fn add_rx_errors(&self, n: u64) {
        bump(&self.rx_errors, n);
    }

    /// Frames given to `send` that could not be queued (ring full, link down, gone).
    #[inline]
    pub fn add_tx_dropped(&self, n: u64) {
        bump(&self.tx_dropped, n);
    }

    /// Frames given to `send` that the backend rejected (too long, too short, a write
    /// error other than congestion).
    #[inline]
    pub fn add_tx_errors(&self, n: u64) {
        bump(&self.tx_errors, n);
    }

    /// One `recv` call's outcome: `packets` frames of `bytes` bytes handed over, and
    /// `errors` as for [`add_rx_errors`](Self::add_rx_errors) (not written when zero).
    #[inline]
    pub fn add_rx_batch(&self, packets: u64, bytes: u64, errors: u64) {
        self.add_rx(packets, bytes);
        if errors > 0 {
            self.add_rx_errors(errors);
        }
    }

    /// One `send` call's outcome: `packets` frames of `bytes` bytes accepted, and
    /// `dropped` and `errors` as for [`add_tx_dropped`](Self::add_tx_dropped) and
    /// [`add_tx_errors`](Self::add_tx_errors) (neither written when zero).
    #[inline]
    pub fn add_tx_batch(&self, packets: u64, bytes: u64, dropped: u64, errors: u64) {
        self.add_tx(packets, bytes);
        if dropped > 0 {
            self.add_tx_dropped(dropped);
        }
        if errors > 0 {
            self.add_tx_errors(errors);
        }
    }

    /// The counters' current values.
    pub fn snapshot(&self) -> PortStats {
        PortStats {
            rx_packets: self.rx_packets.load(Relaxed),
            rx_bytes: self.rx_bytes.load(Relaxed),
            rx_dropped: self.rx_dropped.load(Relaxed),
            rx_errors: self.rx_errors.load(Relaxed),
            tx_packets: self.tx_packets.load(Relaxed),
            tx_bytes: self.tx_bytes.load(Relaxed),
            tx_dropped: self.tx_dropped.load(Relaxed),
            tx_errors: self.tx_errors.load(Relaxed),
        }
    }
}

/// A snapshot of port counters (one handle's, or a sum of several).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortStats {
    pub rx_packets: u64,
    pub rx_bytes: u64,
    pub rx_dropped: u64,
    pub rx_errors: u64,
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub tx_dropped: u64,
    pub tx_errors: u64,
}

impl AddAssign for PortStats {
    fn add_assign(&mut self, o: PortStats) {
        self.rx_packets = self.rx_packets.wrapping_add(o.rx_packets);
        self.rx_bytes = self.rx_bytes.wrapping_add(o.rx_bytes);
        self.rx_dropped = self.rx_dropped.wrapping_add(o.rx_dropped);
        self.rx_errors = self.rx_errors.wrapping_add(o.rx_errors);
        self.tx_packets = self.tx_packets.wrapping_add(o.tx_packets);
        self.tx_bytes = self.tx_bytes.wrapping_add(o.tx_bytes);
        self.tx_dropped = self.tx_dropped.wrapping_add(o.tx_dropped);
        self.tx_errors = self.tx_errors.wrapping_add(o.tx_errors);
    }
}

impl std::iter::Sum for PortStats {
    fn sum<I: Iterator<Item = PortStats>>(iter: I) -> PortStats {
        let mut total = PortStats::default();
        for s in iter {
            total += s;
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_add_and_stats_sum() {
        let a = PortCounters::default();
        a.add_rx(2, 120);
        a.add_rx(1, 60);
        a.add_tx(4, 400);
        a.add_rx_dropped(3);
        a.add_tx_errors(1);
        let b = PortCounters::default();
        b.add_tx_dropped(5);
        b.add_rx_errors(7);
        b.add_rx(1, 1);
        let sa = a.snapshot();
        assert_eq!((sa.rx_packets, sa.rx_bytes), (3, 180));
        assert_eq!((sa.tx_packets, sa.tx_bytes), (4, 400));
        let total: PortStats = [sa, b.snapshot()].into_iter().sum();
        assert_eq!(
            total,
            PortStats {
                rx_packets: 4,
                rx_bytes: 181,
                rx_dropped: 3,
                rx_errors: 7,
                tx_packets: 4,
                tx_bytes: 400,
                tx_dropped: 5,
                tx_errors: 1,
            }
        );
    }

    #[test]
    fn batch_adds_are_the_single_adds() {
        let c = PortCounters::default();
        c.add_rx_batch(3, 300, 0);
        c.add_rx_batch(1, 64, 2);
        c.add_tx_batch(5, 500, 0, 0);
        c.add_tx_batch(0, 0, 4, 1);
        assert_eq!(
            c.snapshot(),
            PortStats {
                rx_packets: 4,
                rx_bytes: 364,
                rx_dropped: 0,
                rx_errors: 2,
                tx_packets: 5,
                tx_bytes: 500,
                tx_dropped: 4,
                tx_errors: 1,
            }
        );
    }
}
