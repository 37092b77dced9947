//! Crediting the kernel tier's hits (see the module comment of [`crate::mirror`]).

use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use super::Credit;
use crate::counters::{
    Misc, Tally, WorkerCounters, BYTES, PACKETS, RX_BYTES, RX_PACKETS, TX_BYTES, TX_PACKETS,
};
use crate::normal::MacTable;
use crate::pipeline::{Datapath, RuleTable};

impl<C: RuleTable> Datapath<C> {
    /// A counter set for hits counted outside the workers (the kernel tier), registered
    /// for reading like a worker's.
    pub fn kernel_counters(&self) -> KernelCounters {
        KernelCounters {
            counters: Mutex::new(self.register_counters(WorkerCounters::named("kernel"))),
            normal: self.shared.normal.clone(),
        }
    }
}

/// Counters for the kernel tier's hits (see the module comment). The lock keeps them
/// single-writer, as a worker's are.
pub struct KernelCounters {
    counters: Mutex<Arc<WorkerCounters>>,
    /// The datapath's MAC table, once attached (NORMAL's counters).
    normal: Arc<OnceLock<MacTable>>,
}

impl KernelCounters {
    /// Credits `hits` (received frames and bytes, and how many of them the decision's
    /// meter dropped), the last at `now_ns` (the workers' clock), where `credit` says.
    pub fn credit(&self, credit: &Credit, hits: Hits, now_ns: u64) {
        self.credit_many([(credit, hits)], now_ns);
    }

    /// [`credit`](Self::credit) for each `(credit, hits)`, under one lock and one tally.
    pub fn credit_many<'a>(&self, hits: impl IntoIterator<Item = (&'a Credit, Hits)>, now_ns: u64) {
        let c = self.counters.lock().unwrap_or_else(PoisonError::into_inner);
        let c: &WorkerCounters = &c;
        let mut tally = Tally::default();
        let mut total = 0;
        let mut miss_drops = 0;
        let mut meter_drops = 0;
        let mut normal = [0u64; 3];
        for (credit, h) in hits {
            if h.packets == 0 {
                continue;
            }
            total += h.packets;
            // Past its meter only what the meter passed goes on.
            let (dropped, dropped_bytes) = match credit.meter {
                Some(_) => (h.dropped.min(h.packets), h.dropped_bytes.min(h.bytes)),
                None => (0, 0),
            };
            let passed = h.packets - dropped;
            let passed_bytes = h.bytes - dropped_bytes;
            let with = |packets: u64, bytes: u64, delta: i32| {
                bytes.wrapping_add_signed(i64::from(delta) * packets as i64)
            };
            let metered_at = credit.meter.map_or(usize::MAX, |m| m.step);
            for (i, s) in credit.steps.iter().enumerate() {
                let (packets, bytes) =
                    if i <= metered_at { (h.packets, h.bytes) } else { (passed, passed_bytes) };
                let matched = s.rule.is_some() as u64;
                if s.table == 0 {
                    tally.table0[0] += packets;
                    tally.table0[1] += matched * packets;
                } else {
                    c.tables.add(u32::from(s.table), 0, packets);
                    c.tables.add(u32::from(s.table), 1, matched * packets);
                }
                if let Some(r) = s.rule {
                    if packets > 0 {
                        c.credit_rule(r, packets, with(packets, bytes, s.len_delta), now_ns);
                    }
                }
            }
            if let Some(m) = credit.meter {
                c.meters.add(m.counter, PACKETS, h.packets);
                c.meters.add(m.counter, BYTES, h.bytes);
                meter_drops += dropped;
            }
            for g in &credit.groups {
                let b = with(passed, passed_bytes, g.len_delta);
                c.groups.add(g.counter, PACKETS, passed);
                c.groups.add(g.counter, BYTES, b);
                for &s in &g.buckets {
                    c.buckets.add(s, PACKETS, passed);
                    c.buckets.add(s, BYTES, b);
                }
            }
            if let Some(slot) = credit.in_slot.map(u32::from) {
                c.ports.add(slot, RX_PACKETS, h.packets);
                c.ports.add(slot, RX_BYTES, h.bytes);
            }
            for &slot in &credit.out_slots {
                c.ports.add(u32::from(slot), TX_PACKETS, passed);
                c.ports.add(
                    u32::from(slot),
                    TX_BYTES,
                    with(passed, passed_bytes, credit.out_delta),
                );
            }
            if credit.out_slots.is_empty() && credit.steps.last().is_some_and(|s| s.rule.is_none())
            {
                miss_drops += passed
            }
            if let Some(n) = &credit.normal {
                normal[n.outcome as usize] += passed;
            }
        }
        if let Some(m) = self.normal.get() {
            m.credit_elsewhere(normal[0], normal[1], normal[2]);
        }
        if total == 0 {
            return;
        }
        tally.packets = total;
        tally.flush(c);
        c.misc(Misc::KernelHits, total);
        if miss_drops > 0 {
            c.misc(Misc::TableMissDrops, miss_drops);
        }
        if meter_drops > 0 {
            c.misc(Misc::MeterDrops, meter_drops);
        }
    }
}

/// Kernel hits of one decision: frames received and their bytes, and of those the ones
/// its meter dropped (zero without a meter).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Hits {
    pub packets: u64,
    pub bytes: u64,
    pub dropped: u64,
    pub dropped_bytes: u64,
}

impl Hits {
    /// `packets` frames of `bytes` in all, none dropped by a meter.
    pub fn new(packets: u64, bytes: u64) -> Hits {
        Hits { packets, bytes, ..Hits::default() }
    }
}
