//! Workers: per-thread state (counters, exact-match cache) and batches.
//!
//! A worker processes packets in batches: [`Datapath::batch`] read-locks the published
//! version for the batch, and dropping the [`Batch`] releases it. Between batches — in
//! particular while waiting for packets — a worker holds no version, which is how it
//! tells the writer it is quiescent: `Writer::publish` waits only for batches in
//! progress. A worker must therefore not keep a `Batch` alive while idle.

use std::sync::{Arc, PoisonError, RwLockReadGuard};

use super::exec::{Exec, Silent};
use super::scratch::Scratch;
use super::version::Shared;
use super::{Datapath, Outputs, PipelineVersion, RuleTable, Tx};
use crate::action::Action;
use crate::cache::ExactCache;
use crate::counters::{Tally, WorkerCounters};
use crate::mirror::OfferFilter;
use crate::packet::Packet;

/// One forwarding thread's state.
pub struct WorkerState {
    pub(crate) counters: Arc<WorkerCounters>,
    pub(crate) cache: Option<ExactCache>,
    pub(crate) scratch: Box<Scratch>,
    /// The keys offered to the in-kernel tier lately (made when first needed), and the
    /// offers held until the worker's output is sent.
    pub(crate) offered: Option<OfferFilter>,
}

impl<C: RuleTable> Datapath<C> {
    /// A new worker, its counters registered for reading, with an exact-match cache of
    /// `cache_entries` entries (0: no cache).
    pub fn worker(&self, cache_entries: usize) -> WorkerState {
        WorkerState {
            counters: self.register_counters(WorkerCounters::default()),
            cache: (cache_entries > 0).then(|| ExactCache::new(cache_entries)),
            scratch: Scratch::new(),
            offered: None,
        }
    }

    /// Registers `counters` for reading (with the workers') and returns them, shared.
    pub(crate) fn register_counters(&self, counters: WorkerCounters) -> Arc<WorkerCounters> {
        let counters = Arc::new(counters);
        self.shared.workers.lock().unwrap_or_else(PoisonError::into_inner).push(counters.clone());
        counters
    }

    /// Starts a batch on the published version at time `now_ns` (used by meters and
    /// rule last-used times). Never waits for the writer.
    pub fn batch<'a>(&'a self, worker: &'a mut WorkerState, now_ns: u64) -> Batch<'a, C> {
        Batch { v: self.shared.read(), shared: &self.shared, worker, now_ns }
    }

    /// Counts in the ports' transmit counters packets sent outside the pipeline on its
    /// behalf (what the NORMAL handler produced for packets the pipeline gave it).
    pub fn count_tx(&self, worker: &WorkerState, sent: &[Tx]) {
        if sent.is_empty() {
            return;
        }
        let v = self.shared.read();
        let mut tally = Tally::default();
        for t in sent {
            if let Some(p) = v.port(t.port) {
                tally.tx(Some(&worker.counters), p.slot, t.packet.len() as u64);
            }
        }
        tally.flush(&worker.counters);
    }

    /// Hands the in-kernel tier the flows this worker processed since the last call
    /// (see [`crate::mirror`]). A worker calls it once the output of those packets has
    /// been given to the ports, so that a flow's kernel entry cannot start forwarding
    /// while earlier packets of the flow still wait in the worker.
    pub fn flush_offers(&self, worker: &mut WorkerState) {
        if let (Some(m), Some(f)) = (self.shared.mirror.get(), worker.offered.as_mut()) {
            f.flush(|k, v| m.offer(k, v));
        }
    }

    /// Processes one packet in a batch of its own.
    pub fn process(
        &self,
        worker: &mut WorkerState,
        packet: Packet,
        in_port: u32,
        now_ns: u64,
        out: &mut Outputs,
    ) {
        self.batch(worker, now_ns).process(packet, in_port, out);
    }
}

/// A batch in progress: holds one pipeline version until dropped.
pub struct Batch<'a, C: RuleTable> {
    pub(crate) v: RwLockReadGuard<'a, PipelineVersion<C>>,
    pub(crate) shared: &'a Shared<C>,
    pub(crate) worker: &'a mut WorkerState,
    pub(crate) now_ns: u64,
}

/// The executor of a batch's worker (`$b`): on its version, counting in the worker's
/// counters and queueing packet-ins, observed by `$obs`. A macro, not a function, so
/// that the hot path compiles exactly as if written out (a helper moved the counts).
macro_rules! worker_exec {
    ($b:ident, $out:expr, $obs:expr) => {
        Exec::new(
            &$b.v,
            &$b.shared.live,
            Some(&$b.worker.counters),
            Some(&$b.shared.packet_in),
            $b.now_ns,
            $out,
            $obs,
        )
    };
}

impl<C: RuleTable> Batch<'_, C> {
    /// The version this batch runs on.
    pub fn version(&self) -> u64 {
        self.v.version
    }

    /// Processes one received packet, adding what it produces to `out`.
    #[inline]
    pub fn process(&mut self, packet: Packet, in_port: u32, out: &mut Outputs) {
        let mut obs = Silent;
        let mut exec = worker_exec!(self, out, &mut obs);
        exec.run(packet, in_port, self.worker.cache.as_mut());
        exec.finish();
    }

    /// Runs an OpenFlow packet-out (1.3.5 §7.3.7), adding what it produces to `out`:
    /// `actions` apply to `packet` in order like an apply-actions instruction, with
    /// `in_port` (a switch port, LOCAL, CONTROLLER or ANY) as its input port.
    ///
    /// - An output sends the packet as it is at that point (set-field, push/pop and TTL
    ///   actions before it have changed it); a group action runs the group.
    /// - `Output(IN_PORT)` sends it to `in_port` when that is a port (or LOCAL); FLOOD
    ///   and ALL leave out `in_port` only when it is one (CONTROLLER and ANY are not).
    ///   NORMAL packets land in `out.normal`, as in ordinary processing.
    /// - `Output(TABLE)` runs the packet as it is then through the pipeline from table
    ///   0 with `in_port` as its input port: tables and rules count it; the exact-match
    ///   cache is neither used nor filled.
    /// - Controller (the action or output to CONTROLLER) sends a packet-in with reason
    ///   `Action` (1.3 has no packet-out reason), table 0 and cookie `u64::MAX` (no rule
    ///   sent it, §7.4.1).
    ///
    /// The packet is not counted as received anywhere (no port rx, packets seen or parse
    /// error counts; the input port's `no_recv` and `no_packet_in` do not apply); what it
    /// sends counts as tx on its ports as usual. To be run by the agent on a
    /// [`WorkerState`] of its own; like any batch, drop it before publishing.
    pub fn packet_out(
        &mut self,
        packet: Packet,
        in_port: u32,
        actions: &[Action],
        out: &mut Outputs,
    ) {
        let mut obs = Silent;
        let mut exec = worker_exec!(self, out, &mut obs);
        exec.packet_out(packet, in_port, actions);
        exec.finish();
    }

    /// Processes every packet of `packets` (frame, in_port), one at a time (see
    /// [`process_batch`](Self::process_batch) for the staged way).
    pub fn process_all(
        &mut self,
        packets: impl IntoIterator<Item = (Packet, u32)>,
        out: &mut Outputs,
    ) {
        for (p, port) in packets {
            self.process(p, port, out);
        }
    }
}
