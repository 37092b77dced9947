//! Processing a batch of packets in stages, so that the memory latency of one packet's
//! lookups hides behind the work on the others.
//!
//! [`Batch::process_batch`] takes up to [`BATCH`] packets at a time through:
//! 1. parse every packet into its flow key (kept in the worker's [`Scratch`]);
//! 2. with an exact-match cache: hash every key once, prefetch its bucket, then probe
//!    (skipped when the version's lookups cost no more than a probe: `cheap_lookup`);
//! 3. table 0 for every packet the cache did not answer, in one classifier call (the
//!    tuple space's `lookup_batch`, which interleaves and prefetches the probes);
//! 4. prefetch what running each packet reads first: the counters of a table-0 rule
//!    that only outputs (the classifier entry holds the rest, see [`TableRule`]), or
//!    the rule itself;
//! 5. run each packet, in order, exactly as [`Batch::process`] would (`Exec::run_parsed`
//!    with table 0's answer given): the results are the same packet for packet, only the
//!    order of memory accesses changes. Later tables are looked up per packet.
//!
//! Counts every packet adds to the same place (packets, cache hits, table 0, the input
//! port) are tallied per batch and added to the worker's counters at its end; so are
//! rule credits, whose counters are prefetched when the credit is held.

use crate::counters::WorkerCounters;
use std::any::Any;
use std::sync::atomic::Ordering;

use super::exec::{Exec, Probe, Silent};
use super::scratch::{Scratch, BATCH};
use super::worker::{Batch, WorkerState};
use super::{Outputs, PipelineVersion, Rule, RuleTable, TableRule};
use crate::cache::key_hash;
use crate::classifier::TupleSpace;
use crate::key::FlowKey;
use crate::mirror::{offer_round, OfferFilter};
use crate::packet::Packet;
use crate::parse::parse;
use crate::prefetch::prefetch;

/// Table `t`'s rule for each key: the tuple space's batch lookup when `C` is one, else
/// one lookup per key.
#[inline]
fn lookup_many<'a, C: RuleTable>(t: &'a C, keys: &[FlowKey], out: &mut [Option<&'a TableRule>]) {
    if let Some(ts) = (t as &dyn Any).downcast_ref::<TupleSpace<TableRule>>() {
        let n = keys.len().min(out.len()).min(BATCH);
        let mut refs = [None; BATCH];
        ts.lookup_batch(&keys[..n], &mut refs[..n]);
        for (o, r) in out.iter_mut().zip(&refs[..n]) {
            *o = r.map(|r| r.value);
        }
    } else {
        for (o, k) in out.iter_mut().zip(keys) {
            *o = t.lookup(k).map(|(_, r)| r);
        }
    }
}

/// Hints the CPU to fetch what running a packet will read for table 0's `t`: for a rule
/// that only outputs to a port, its counters (the table entry holds the rest); for any
/// other, the rule's fields up to the cookie, which span two lines for one rule in four
/// (an `Arc`'s rule starts 16 bytes into its allocation, which is only 16-aligned).
#[inline]
fn prefetch_rule(t: &TableRule, counters: &WorkerCounters) {
    if t.fast_output().is_some() {
        counters.prefetch_rule(t.id);
    } else {
        let p = &**t as *const Rule as *const u8;
        prefetch(p);
        prefetch(p.wrapping_add(std::mem::offset_of!(Rule, cookie) + 7));
    }
}

impl<C: RuleTable> Batch<'_, C> {
    /// Processes every packet of `packets` (frame, in_port) in stages (see the module
    /// comment), leaving `packets` empty (its allocation is kept). Produces exactly what
    /// calling [`process`](Self::process) for each packet in order would.
    pub fn process_batch(&mut self, packets: &mut Vec<(Packet, u32)>, out: &mut Outputs) {
        let WorkerState { counters, cache, scratch, offered } = &mut *self.worker;
        let mirror = self.shared.mirror.get();
        let round = offer_round(self.v.version, self.shared.offer_epoch.load(Ordering::Acquire));
        let v: &PipelineVersion<C> = &self.v;
        let mut obs = Silent;
        let mut exec = Exec::new(
            v,
            &self.shared.live,
            Some(counters),
            Some(&self.shared.packet_in),
            self.now_ns,
            out,
            &mut obs,
        );
        let s: &mut Scratch = scratch;
        for chunk in packets.chunks_mut(BATCH) {
            let n = chunk.len();
            for ((p, port), (k, o)) in chunk.iter().zip(s.keys.iter_mut().zip(&mut s.parsed)) {
                *o = parse(p.data(), *port, k);
            }
            // The cache.
            let mut need = [0u8; BATCH];
            let mut m = 0usize;
            if let Some(c) = cache.as_ref().filter(|_| !v.cheap_lookup) {
                for (i, (_, port)) in chunk.iter().enumerate() {
                    let ok = s.parsed[i].error.is_none() && !exec.refuses(*port);
                    s.cacheable[i] = ok;
                    s.hits[i] = None;
                    if ok {
                        s.hashes[i] = key_hash(&s.keys[i]);
                        c.prefetch(s.hashes[i]);
                    }
                }
                for (i, (_, port)) in chunk.iter().enumerate() {
                    if s.cacheable[i] {
                        s.hits[i] = c.get_hashed(&s.keys[i], s.hashes[i], v.version);
                    }
                    if s.hits[i].is_none() && !exec.refuses(*port) {
                        need[m] = i as u8;
                        m += 1;
                    }
                }
            } else {
                for (i, p) in chunk.iter().enumerate() {
                    if !exec.refuses(p.1) {
                        need[m] = i as u8;
                        m += 1;
                    }
                }
            }
            // Table 0 for the packets that need it.
            let mut first: [Option<Option<&TableRule>>; BATCH] = [None; BATCH];
            if let Some(t0) = v.tables.first().filter(|_| m > 0) {
                let mut found: [Option<&TableRule>; BATCH] = [None; BATCH];
                if m == n {
                    lookup_many(t0, &s.keys[..n], &mut found[..n]);
                    for (f, r) in first.iter_mut().zip(&found[..n]) {
                        *f = Some(*r);
                    }
                } else {
                    for (j, &i) in need[..m].iter().enumerate() {
                        s.lookup_keys[j] = s.keys[i as usize];
                    }
                    lookup_many(t0, &s.lookup_keys[..m], &mut found[..m]);
                    for (&i, r) in need[..m].iter().zip(&found[..m]) {
                        first[i as usize] = Some(*r);
                    }
                }
            }
            // Prefetch what running each packet reads: its rule, or for a rule that
            // only outputs, the rule's counters (written at the end of the batch).
            for r in first[..n].iter().flatten().flatten() {
                prefetch_rule(r, counters);
            }
            for (i, (packet, port)) in chunk.iter_mut().enumerate() {
                let packet = std::mem::take(packet);
                let probe = match cache.as_mut() {
                    Some(c) if s.cacheable[i] && !v.cheap_lookup => {
                        Some(Probe { cache: c, hash: s.hashes[i], hit: s.hits[i] })
                    }
                    _ => None,
                };
                exec.run_parsed(packet, &s.keys[i], &s.parsed[i], *port, first[i], probe);
            }
            if mirror.is_some() {
                // The cache stage hashed the keys it probed.
                let hashed = cache.is_some() && !v.cheap_lookup;
                let f = offered.get_or_insert_with(OfferFilter::new);
                for (i, (_, port)) in chunk.iter().enumerate() {
                    let p = &s.parsed[i];
                    if p.error.is_none() && !p.ip_truncated && !exec.refuses(*port) {
                        let k = &s.keys[i];
                        let hash = if hashed && s.cacheable[i] { s.hashes[i] } else { key_hash(k) };
                        f.hold(k, hash, v.version, round);
                    }
                }
            }
        }
        packets.clear();
        exec.finish();
    }
}
