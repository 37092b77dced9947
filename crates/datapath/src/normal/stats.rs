//! Counters of the learning switch: one set per handler, written only by its worker,
//! summed when read (see `counters.rs` for the pattern: relaxed load and store, no
//! read-modify-write on the packet path).

use std::sync::atomic::{AtomicU64, Ordering};

/// A summed snapshot of the learning switch's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NormalStats {
    /// Entries created (a new MAC, or one whose entry had expired).
    pub learned: u64,
    /// Entries that changed port.
    pub moved: u64,
    /// Packets flooded (unknown, multicast or broadcast destination).
    pub flooded: u64,
    /// Packets sent to the one port their destination was learned on.
    pub forwarded: u64,
    /// Packets dropped because their destination was learned on their input port.
    pub dropped: u64,
    /// Live entries removed to make room.
    pub evicted: u64,
    /// Expired entries removed.
    pub aged_out: u64,
}

/// Which counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Counter {
    Learned,
    Moved,
    Flooded,
    Forwarded,
    Dropped,
    Evicted,
    AgedOut,
}

const COUNTERS: usize = 7;

/// One handler's counters, on a cache line of their own so that workers never share
/// one. Written by one thread (`bump`) or under the registry's lock (`add`).
#[repr(align(64))]
#[derive(Debug, Default)]
pub(super) struct Counters {
    values: [AtomicU64; COUNTERS],
}

impl Counters {
    /// Adds `n` to `c`. Only the owning worker calls this, so load and store do not race
    /// with another writer.
    #[inline]
    pub(super) fn bump(&self, c: Counter, n: u64) {
        let v = &self.values[c as usize];
        v.store(v.load(Ordering::Relaxed).wrapping_add(n), Ordering::Relaxed);
    }

    /// Adds `n` to `c` when several threads may write (not on the packet path).
    pub(super) fn add(&self, c: Counter, n: u64) {
        self.values[c as usize].fetch_add(n, Ordering::Relaxed);
    }

    /// Adds every counter of `other` into these (several writers allowed).
    pub(super) fn absorb(&self, other: &Counters) {
        for (a, b) in self.values.iter().zip(other.values.iter()) {
            a.fetch_add(b.load(Ordering::Relaxed), Ordering::Relaxed);
        }
    }

    /// Adds these counters to `s`.
    pub(super) fn sum_into(&self, s: &mut NormalStats) {
        let v = |c: Counter| self.values[c as usize].load(Ordering::Relaxed);
        s.learned += v(Counter::Learned);
        s.moved += v(Counter::Moved);
        s.flooded += v(Counter::Flooded);
        s.forwarded += v(Counter::Forwarded);
        s.dropped += v(Counter::Dropped);
        s.evicted += v(Counter::Evicted);
        s.aged_out += v(Counter::AgedOut);
    }
}

/// Counts of one locked operation on the table, to be credited to whoever ran it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Tally {
    pub learned: u64,
    pub moved: u64,
    pub evicted: u64,
    pub aged_out: u64,
}

impl Tally {
    /// Credits these counts with `f(counter, n)` (skipping zeros).
    pub(super) fn credit(&self, mut f: impl FnMut(Counter, u64)) {
        for (c, n) in [
            (Counter::Learned, self.learned),
            (Counter::Moved, self.moved),
            (Counter::Evicted, self.evicted),
            (Counter::AgedOut, self.aged_out),
        ] {
            if n != 0 {
                f(c, n);
            }
        }
    }
}
