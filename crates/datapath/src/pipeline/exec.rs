//! Executing one packet through a pipeline version.
//!
//! [`Exec`] runs with a version, the worker's counters (absent when tracing) and an
//! [`Observer`] that the tracer uses to record each step; with the silent observer every
//! `if O::ON` branch compiles away. Nothing here allocates per packet except packet copies
//! (an output that is not the packet's last use, group buckets) and packet-in data.
//!
//! Order of work (OpenFlow 1.3 §5.9–5.10): parse; table 0; for each matched rule its
//! meter, apply-actions, clear-actions, write-actions, write-metadata, goto-table; then
//! the action set. A rewrite reporting `InvalidTtl` ends the packet (packet-in with reason
//! `InvalidTtl` when configured); `MissingHeader` skips the action.
//!
//! A packet-out ([`Exec::packet_out`]) runs its action list like an apply-actions
//! instruction; its `Output(TABLE)` enters the pipeline above at table 0, without the
//! exact-match cache.

use std::ops::ControlFlow;
use std::sync::mpsc::SyncSender;

use super::event::TraceEvent;
use super::rule::Fast;
use super::TableRule;
use super::{ActionSet, PacketIn, PacketInReason, PipelineVersion, Rule, RuleTable, NUM_TABLES};
use super::{NormalPacket, Outputs, PortInfo, PortLiveness, Tx};
use crate::action::{port, Action};
use crate::cache::{key_hash, ExactCache, Path, NO_RULE};
use crate::counters::{Misc, Tally, WorkerCounters, BYTES, PACKETS};
use crate::group::{GroupEnv, MAX_DEPTH};
use crate::key::{Field, FlowKey};
use crate::meter::{remark_dscp, MeterOutcome};
use crate::packet::{Layers, Packet};
use crate::parse::{parse, ParseOutcome};
use crate::rewrite::RewriteError;

/// Receives the steps of a packet's processing (the tracer) or ignores them.
pub(crate) trait Observer {
    /// Whether events are wanted (a constant, so that building them compiles away).
    const ON: bool;
    fn event(&mut self, e: TraceEvent);
}

/// The observer of real forwarding: records nothing.
pub(crate) struct Silent;

impl Observer for Silent {
    const ON: bool = false;
    #[inline]
    fn event(&mut self, _: TraceEvent) {}
}

/// A packet in flight.
#[derive(Clone)]
struct Pkt {
    packet: Packet,
    key: FlowKey,
    layers: Layers,
    in_port: u32,
    queue: Option<u32>,
}

/// The rule an action came from (for packet-in reason, table and cookie).
#[derive(Clone, Copy)]
struct Source {
    table: u8,
    cookie: u64,
    table_miss: bool,
}

/// Everything one packet's execution reads and writes.
pub(crate) struct Exec<'a, C, O> {
    pub v: &'a PipelineVersion<C>,
    pub live: &'a PortLiveness,
    /// None when tracing: no counter, meter bucket or queue is touched.
    pub counters: Option<&'a WorkerCounters>,
    pub packet_in: Option<&'a SyncSender<PacketIn>>,
    pub now_ns: u64,
    pub out: &'a mut Outputs,
    pub obs: &'a mut O,
    /// Counts not yet added to `counters` (see [`Exec::finish`]).
    pub tally: Tally,
    /// The key changed in a way the exact-match cache cannot replay (meter remark).
    remarked: bool,
    /// Every meter passes every packet (a trace of the path a metered flow's
    /// conforming packets take).
    pub meters_pass: bool,
    in_info: Option<&'a PortInfo>,
    /// An apply-actions output to a port (or IN_PORT/LOCAL) not yet sent. It is sent
    /// with a copy of the packet as soon as anything else reads or changes the packet,
    /// or with the packet itself when the pipeline ends without another use of it — so
    /// the common "apply output, done" rule costs no copy. Outputs keep their order.
    pending: Option<PendingOut>,
    /// The last input port looked up and its config (see `in_port_info`).
    last_in: Option<(u32, Option<&'a PortInfo>)>,
}

/// The exact-match cache for one packet: the cache, the key's hash and what the cache
/// holds for the key in the current version.
pub(crate) struct Probe<'c> {
    pub cache: &'c mut ExactCache,
    pub hash: u64,
    pub hit: Option<Path>,
}

/// An output whose packet is the packet as it is now.
#[derive(Clone, Copy)]
struct PendingOut {
    port: u32,
    queue: Option<u32>,
    src: Source,
}

enum Next {
    Goto(u8),
    End,
    Drop,
}

impl<'a, C: RuleTable, O: Observer> Exec<'a, C, O> {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        v: &'a PipelineVersion<C>,
        live: &'a PortLiveness,
        counters: Option<&'a WorkerCounters>,
        packet_in: Option<&'a SyncSender<PacketIn>>,
        now_ns: u64,
        out: &'a mut Outputs,
        obs: &'a mut O,
    ) -> Self {
        Exec {
            v,
            live,
            counters,
            packet_in,
            now_ns,
            out,
            obs,
            tally: Tally::default(),
            remarked: false,
            meters_pass: false,
            in_info: None,
            pending: None,
            last_in: None,
        }
    }

    /// Sends the pending output, if any, with a copy of the packet.
    #[inline]
    fn flush_pending(&mut self, st: &Pkt) {
        if let Some(p) = self.pending.take() {
            let copy = st.packet.clone();
            self.output(p.port, copy, &st.key, st.in_port, p.queue, p.src);
        }
    }

    /// Adds the tallied counts to the worker's counters; call when done with a batch.
    pub fn finish(&mut self) {
        if let Some(c) = self.counters {
            self.tally.flush(c);
        }
    }

    #[inline]
    fn count(&self, f: impl FnOnce(&WorkerCounters)) {
        if let Some(c) = self.counters {
            f(c)
        }
    }

    /// Processes one received frame.
    pub fn run(&mut self, packet: Packet, in_port: u32, cache: Option<&mut ExactCache>) {
        let mut key = FlowKey::ZERO;
        let parsed = parse(packet.data(), in_port, &mut key);
        let probe = match cache {
            Some(c) if parsed.error.is_none() && !self.refuses(in_port) && !self.v.cheap_lookup => {
                let hash = key_hash(&key);
                let hit = c.get_hashed(&key, hash, self.v.version);
                Some(Probe { cache: c, hash, hit })
            }
            _ => None,
        };
        self.run_parsed(packet, &key, &parsed, in_port, None, probe);
    }

    /// Runs an OpenFlow packet-out (1.3.5 §7.3.7): `actions` apply to `packet` in order,
    /// as an apply-actions instruction would, with `in_port` (a port, LOCAL, CONTROLLER
    /// or ANY) as its input port. An output sends the packet as it is at that point;
    /// `Output(TABLE)` runs a copy of it through the pipeline from table 0 (see
    /// [`resubmit`](Self::resubmit)), which an output to TABLE anywhere else (a rule,
    /// a group bucket) does not: there it is dropped as an unknown port.
    ///
    /// A packet-in sent by these actions has reason `Action` (1.3 has no packet-out
    /// reason; 1.4 adds one), table 0 (no table was looked up) and cookie `u64::MAX` (no
    /// rule sent it, §7.4.1). The packet was not received on a port: nothing counts it
    /// as received (port rx, packets seen, parse errors), and its input port's `no_recv`
    /// and `no_packet_in` do not apply. What it sends counts as usual.
    pub fn packet_out(&mut self, packet: Packet, in_port: u32, actions: &[Action]) {
        let mut key = FlowKey::ZERO;
        let parsed = parse(packet.data(), in_port, &mut key);
        if O::ON {
            self.obs.event(TraceEvent::Parsed { key, error: parsed.error });
        }
        self.in_info = None;
        self.remarked = false;
        self.pending = None;
        let src = Source { table: 0, cookie: u64::MAX, table_miss: false };
        let mut st = Pkt { packet, key, layers: parsed.layers, in_port, queue: None };
        for (i, a) in actions.iter().enumerate() {
            if O::ON {
                self.obs.event(TraceEvent::Apply(a.clone()));
            }
            if *a == Action::Output(port::TABLE) {
                self.flush_pending(&st);
                if i + 1 == actions.len() {
                    return self.resubmit(st);
                }
                self.resubmit(st.clone());
                continue;
            }
            if self.action(a, &mut st, src, 0).is_break() {
                break;
            }
        }
        // The packet has no further use: the pending output takes it.
        if let Some(p) = self.pending.take() {
            self.output(p.port, st.packet, &st.key, st.in_port, p.queue, p.src);
        }
    }

    /// A packet-out's output to TABLE: `st` through the tables from table 0 and its
    /// action set, as a received packet would go (rules and tables count it), but
    /// without the exact-match cache (neither read nor filled) and without receive
    /// counts.
    fn resubmit(&mut self, st: Pkt) {
        self.remarked = false;
        let key = st.key;
        self.walk(st, &key, None, None);
    }

    /// Whether packets received on `in_port` are dropped at once (`no_recv`).
    #[inline]
    pub fn refuses(&mut self, in_port: u32) -> bool {
        self.in_port_info(in_port).is_some_and(|p| p.no_recv)
    }

    /// The config of input port `in_port`, remembered for the next packet (those of a
    /// batch mostly come from one port).
    #[inline]
    fn in_port_info(&mut self, in_port: u32) -> Option<&'a PortInfo> {
        match self.last_in {
            Some((no, info)) if no == in_port => info,
            _ => {
                let info = self.v.port(in_port);
                self.last_in = Some((in_port, info));
                info
            }
        }
    }

    /// Processes a parsed frame: `key` and `parsed` are what [`parse`] gave for it.
    /// `first`, when given, is table 0's rule for `key` (looked up ahead, for a batch);
    /// `probe` is the exact-match cache and what it holds for `key` (only for packets
    /// that parsed without error and whose port accepts them).
    #[inline]
    pub fn run_parsed(
        &mut self,
        packet: Packet,
        key: &FlowKey,
        parsed: &ParseOutcome,
        in_port: u32,
        first: Option<Option<&'a TableRule>>,
        probe: Option<Probe<'_>>,
    ) {
        let len = packet.len() as u64;
        self.tally.packets += 1;
        if O::ON {
            self.obs.event(TraceEvent::Parsed { key: *key, error: parsed.error });
        }
        if let Some(e) = parsed.error {
            self.count(|c| c.parse_error(e));
        }
        self.in_info = self.in_port_info(in_port);
        self.remarked = false;
        self.pending = None;
        if let Some(p) = self.in_info {
            self.tally.rx(self.counters, p.slot, len);
            if p.no_recv {
                self.count(|c| c.misc(Misc::NoRecvDrops, 1));
                if O::ON {
                    self.obs.event(TraceEvent::Dropped("port has no_recv"));
                }
                return;
            }
        }
        if let Some(pr) = &probe {
            if pr.hit.is_some() {
                self.tally.cache_hits += 1;
            } else {
                self.tally.cache_misses += 1;
            }
            if let Some((path, port)) = pr.hit.and_then(|p| Some((p, p.decision()?))) {
                self.replay(&path, port, packet, key, in_port);
                return;
            }
        }
        if !O::ON && probe.as_ref().is_none_or(|p| p.hit.is_none()) {
            // Table 0's rule outputs to a port and ends the pipeline: nothing else to run.
            let v: &'a PipelineVersion<C> = self.v;
            let rule = match first {
                Some(r) => r,
                None => v.tables.first().and_then(|t| t.lookup(key)).map(|r| r.1),
            };
            if let Some(rule) = rule {
                if let Some(p) = rule.fast_output() {
                    self.direct(rule, p, packet, key, in_port, probe);
                    return;
                }
            }
            let first = Some(rule.map(|r| &**r));
            let st = Pkt { packet, key: *key, layers: parsed.layers, in_port, queue: None };
            return self.walk(st, key, first, probe);
        }
        let first = first.map(|r| r.map(|r| &**r));
        let st = Pkt { packet, key: *key, layers: parsed.layers, in_port, queue: None };
        self.walk(st, key, first, probe);
    }

    /// A packet whose table-0 rule is `Fast::Output(port_no)`: what [`walk`](Self::walk)
    /// does for it, without its generality (same counts, cache entry and output).
    #[inline]
    fn direct(
        &mut self,
        rule: &'a TableRule,
        port_no: u32,
        packet: Packet,
        key: &FlowKey,
        in_port: u32,
        probe: Option<Probe<'_>>,
    ) {
        let bytes = packet.len() as u64;
        let now = self.now_ns;
        self.count_table(0, true);
        self.credit(rule.id, bytes, now);
        if let Some(pr) = probe {
            let mut path = Path::default();
            path.push(0, rule.id);
            path.set_decision(port_no);
            if pr.hit != Some(path) {
                pr.cache.insert_hashed(key, pr.hash, self.v.version, path);
            }
        }
        if let Some(slot) = self.deliverable(port_no, in_port) {
            return self.tx_slot(port_no, Some(slot), None, packet);
        }
        let src = Source { table: 0, cookie: rule.cookie, table_miss: rule.table_miss };
        self.output(port_no, packet, key, in_port, None, src)
    }

    /// A cache hit with a decision: credits the path and outputs, reading no rule.
    #[inline]
    fn replay(&mut self, path: &Path, port_no: u32, packet: Packet, key: &FlowKey, in_port: u32) {
        let bytes = packet.len() as u64;
        let now = self.now_ns;
        for s in path.steps() {
            self.count_table(s.table, true);
            self.credit(s.rule, bytes, now);
        }
        let src = Source { table: 0, cookie: u64::MAX, table_miss: false };
        self.output_fast(port_no, packet, key, in_port, src);
    }

    /// Credits rule `id` with a packet of `bytes` (held in the tally until the batch ends).
    #[inline]
    fn credit(&mut self, id: u32, bytes: u64, now: u64) {
        if let Some(c) = self.counters {
            self.tally.rule(c, id, bytes, now);
        }
    }

    /// Counts a lookup in `table` (and a match).
    #[inline]
    fn count_table(&mut self, table: u8, matched: bool) {
        if table == 0 {
            self.tally.table0[0] += 1;
            self.tally.table0[1] += matched as u64;
        } else {
            self.count(|c| {
                c.tables.add(table as u32, 0, 1);
                c.tables.add(table as u32, 1, matched as u64);
            });
        }
    }

    /// The tables, from table 0, then the action set.
    fn walk(
        &mut self,
        mut st: Pkt,
        initial: &FlowKey,
        mut first: Option<Option<&'a Rule>>,
        probe: Option<Probe<'_>>,
    ) {
        let cached = probe.as_ref().and_then(|p| p.hit);
        let mut path = Path::default();
        let mut cacheable = probe.is_some();
        // The port of the path's decision while every rule so far allows one.
        let mut decision: Option<Option<u32>> = Some(None);
        let mut follow = cached;
        let mut set: Option<ActionSet> = None;
        let mut last: Option<Source> = None;
        let mut table = 0u8;
        let mut step = 0usize;
        let ended = loop {
            let rule = self.lookup(table, &st.key, &mut follow, step, &mut first);
            step += 1;
            cacheable &= path.push(table, rule.map_or(NO_RULE, |r| r.id));
            self.count_table(table, rule.is_some());
            if O::ON {
                self.obs.event(TraceEvent::Table {
                    table,
                    key: st.key,
                    rule: rule.map(|r| (r.id, r.priority, r.cookie)),
                });
            }
            let Some(rule) = rule else {
                self.miss(&st, table);
                break false;
            };
            let bytes = st.packet.len() as u64;
            let now = self.now_ns;
            self.credit(rule.id, bytes, now);
            let src = Source { table, cookie: rule.cookie, table_miss: rule.table_miss };
            last = Some(src);
            let next = match rule.fast {
                Fast::Output(p) if !O::ON => {
                    decision = decision.filter(|d| d.is_none()).map(|_| Some(p));
                    self.flush_pending(&st);
                    self.pending = Some(PendingOut { port: p, queue: st.queue, src });
                    Next::End
                }
                Fast::Goto => {
                    decision = decision.filter(|d| d.is_none());
                    self.instructions(rule, src, &mut st, &mut set)
                }
                _ => {
                    decision = None;
                    self.instructions(rule, src, &mut st, &mut set)
                }
            };
            match next {
                Next::Goto(t) => {
                    cacheable &= rule.cache_safe;
                    table = t;
                }
                Next::End => break true,
                Next::Drop => break false,
            }
            if self.remarked {
                cacheable = false;
                follow = None;
            }
        };
        if let Some(pr) = probe {
            if let Some(Some(p)) = decision.filter(|_| ended) {
                path.set_decision(p);
            }
            if cacheable && !self.remarked && cached != Some(path) {
                pr.cache.insert_hashed(initial, pr.hash, self.v.version, path);
            }
        }
        if O::ON && ended {
            let actions = set.as_ref().map_or_else(Vec::new, |s| s.to_vec());
            self.obs.event(TraceEvent::ActionSet(actions));
        }
        match (ended, set.as_ref().filter(|s| !s.is_empty()), last) {
            (true, Some(set), Some(src)) => {
                self.flush_pending(&st);
                self.execute_set(set, st, src, 0);
            }
            _ => {
                // The packet has no further use: the pending output takes it.
                if let Some(p) = self.pending.take() {
                    self.output(p.port, st.packet, &st.key, st.in_port, p.queue, p.src);
                }
            }
        }
    }

    /// The rule table `table` gives: from the cached path while it applies, else from
    /// `first` (table 0's rule looked up ahead), else looked up.
    #[inline]
    fn lookup(
        &self,
        table: u8,
        key: &FlowKey,
        follow: &mut Option<Path>,
        step: usize,
        first: &mut Option<Option<&'a Rule>>,
    ) -> Option<&'a Rule> {
        let v: &'a PipelineVersion<C> = self.v;
        if let Some(s) = follow.and_then(|p| p.get(step)) {
            if s.table == table {
                if s.rule == NO_RULE {
                    return None;
                }
                if let Some(r) = v.rule(s.rule) {
                    return Some(r);
                }
            }
        }
        *follow = None;
        if step == 0 {
            if let Some(r) = first.take() {
                return r;
            }
        }
        v.tables.get(table as usize)?.lookup(key).map(|(_, r)| &**r)
    }

    fn miss(&mut self, st: &Pkt, table: u8) {
        match self.v.config.miss {
            super::MissBehaviour::Drop => {
                self.count(|c| c.misc(Misc::TableMissDrops, 1));
                if O::ON {
                    self.obs.event(TraceEvent::Dropped("table miss"));
                }
            }
            super::MissBehaviour::Controller { max_len } => {
                let c = Cause { reason: PacketInReason::NoMatch, table, cookie: u64::MAX };
                let max_len = if max_len == u16::MAX { self.unasked_len() } else { max_len };
                self.packet_in(&st.packet, &st.key, st.in_port, c, max_len)
            }
        }
    }

    fn instructions(
        &mut self,
        rule: &Rule,
        src: Source,
        st: &mut Pkt,
        set: &mut Option<ActionSet>,
    ) -> Next {
        let ins = &rule.instructions;
        if let Some(m) = ins.meter {
            if self.meter(m, st).is_break() {
                return Next::Drop;
            }
        }
        for a in &ins.apply {
            if O::ON {
                self.obs.event(TraceEvent::Apply(a.clone()));
            }
            if self.action(a, st, src, 0).is_break() {
                return Next::Drop;
            }
        }
        if ins.clear_actions {
            if O::ON {
                self.obs.event(TraceEvent::ClearActions);
            }
            if let Some(s) = set {
                s.clear();
            }
        }
        if let Some(w) = &ins.write_actions {
            if O::ON {
                self.obs.event(TraceEvent::WriteActions(w.clone()));
            }
            set.get_or_insert_with(ActionSet::new).merge(w);
        }
        if let Some((value, mask)) = ins.write_metadata {
            let md = st.key.get(Field::Metadata) as u64;
            let md = (md & !mask) | (value & mask);
            st.key.set(Field::Metadata, md as u128);
            if O::ON {
                self.obs.event(TraceEvent::WriteMetadata(md));
            }
        }
        match ins.goto_table {
            Some(t) if t > src.table && (t as usize) < NUM_TABLES => {
                if O::ON {
                    self.obs.event(TraceEvent::Goto(t));
                }
                Next::Goto(t)
            }
            _ => Next::End,
        }
    }

    /// Runs meter `id`; breaks when it drops the packet.
    fn meter(&mut self, id: u32, st: &mut Pkt) -> ControlFlow<()> {
        let v: &'a PipelineVersion<C> = self.v;
        let Some(m) = v.meter(id) else {
            return ControlFlow::Continue(());
        };
        let len = st.packet.len();
        let outcome = if self.meters_pass {
            MeterOutcome::Pass
        } else if self.counters.is_some() {
            m.apply(len, self.now_ns)
        } else {
            m.peek(len, self.now_ns)
        };
        if O::ON {
            self.obs.event(TraceEvent::Meter { meter: id, outcome });
        }
        self.count(|c| {
            c.meters.add(m.counter, PACKETS, 1);
            c.meters.add(m.counter, BYTES, len as u64);
        });
        let band = match outcome {
            MeterOutcome::Pass => return ControlFlow::Continue(()),
            MeterOutcome::Drop { band } | MeterOutcome::Remark { band, .. } => band,
        };
        if let Some(b) = m.state.get(band) {
            self.count(|c| {
                c.bands.add(b.counter, PACKETS, 1);
                c.bands.add(b.counter, BYTES, len as u64);
            });
        }
        match outcome {
            MeterOutcome::Remark { prec_level, .. } => {
                let dscp = st.key.get(Field::IpDscp) as u8;
                let new = remark_dscp(dscp, prec_level);
                if new != dscp {
                    self.remarked = true;
                    self.rewrite(&Action::SetField(Field::IpDscp, new as u128), st, None)
                } else {
                    ControlFlow::Continue(())
                }
            }
            _ => {
                self.count(|c| c.misc(Misc::MeterDrops, 1));
                if O::ON {
                    self.obs.event(TraceEvent::Dropped("meter band"));
                }
                ControlFlow::Break(())
            }
        }
    }

    /// Executes one action on `st`; breaks when the packet is gone (TTL expired).
    fn action(&mut self, a: &Action, st: &mut Pkt, src: Source, depth: usize) -> ControlFlow<()> {
        self.flush_pending(st);
        match *a {
            // Deferred only when not tracing, so a trace shows each output where it happens.
            Action::Output(p)
                if !O::ON && (p <= port::MAX || p == port::IN_PORT || p == port::LOCAL) =>
            {
                self.pending = Some(PendingOut { port: p, queue: st.queue, src });
            }
            Action::Output(p) => {
                let copy = st.packet.clone();
                self.output(p, copy, &st.key, st.in_port, st.queue, src);
            }
            Action::Controller { max_len } => {
                self.packet_in(&st.packet, &st.key, st.in_port, cause(src), max_len)
            }
            Action::Group(g) => self.group(g, st, src, depth),
            Action::SetQueue(q) => st.queue = Some(q),
            _ => return self.rewrite(a, st, Some(src)),
        }
        ControlFlow::Continue(())
    }

    fn rewrite(&mut self, a: &Action, st: &mut Pkt, src: Option<Source>) -> ControlFlow<()> {
        self.flush_pending(st);
        match (self.v.config.rewrite)(&mut st.packet, &mut st.key, &mut st.layers, a) {
            Ok(()) => ControlFlow::Continue(()),
            Err(RewriteError::MissingHeader) => {
                self.count(|c| c.misc(Misc::MissingHeader, 1));
                ControlFlow::Continue(())
            }
            Err(RewriteError::InvalidTtl) => {
                self.count(|c| c.misc(Misc::InvalidTtl, 1));
                if self.v.config.invalid_ttl_to_controller {
                    let (table, cookie) = src.map_or((0, u64::MAX), |s| (s.table, s.cookie));
                    let c = Cause { reason: PacketInReason::InvalidTtl, table, cookie };
                    let max_len = self.unasked_len();
                    self.packet_in(&st.packet, &st.key, st.in_port, c, max_len);
                } else if O::ON {
                    self.obs.event(TraceEvent::Dropped("invalid TTL"));
                }
                ControlFlow::Break(())
            }
            // Not a rewrite, or a field that cannot be set: the action does nothing.
            Err(_) => ControlFlow::Continue(()),
        }
    }

    /// Executes an action set on `st` (the packet's last use).
    fn execute_set(&mut self, set: &ActionSet, mut st: Pkt, src: Source, depth: usize) {
        let mut output: Option<Action> = None;
        let flow = set.for_each(|a| match a {
            Action::Output(_) | Action::Controller { .. } => {
                output = Some(a.clone());
                ControlFlow::Continue(())
            }
            _ => {
                if O::ON {
                    self.obs.event(TraceEvent::SetAction(a.clone()));
                }
                self.action(a, &mut st, src, depth)
            }
        });
        if flow.is_break() {
            return;
        }
        match output {
            Some(Action::Output(p)) => {
                if O::ON {
                    self.obs.event(TraceEvent::SetAction(Action::Output(p)));
                }
                self.output(p, st.packet, &st.key, st.in_port, st.queue, src)
            }
            Some(Action::Controller { max_len }) => {
                if O::ON {
                    self.obs.event(TraceEvent::SetAction(Action::Controller { max_len }));
                }
                self.packet_in(&st.packet, &st.key, st.in_port, cause(src), max_len)
            }
            _ => {}
        }
    }

    fn group(&mut self, id: u32, st: &Pkt, src: Source, depth: usize) {
        let v: &'a PipelineVersion<C> = self.v;
        let g = match v.group(id) {
            Some(g) if depth < MAX_DEPTH => g,
            _ => {
                self.count(|c| c.misc(Misc::GroupDrops, 1));
                return;
            }
        };
        let len = st.packet.len() as u64;
        self.count(|c| {
            c.groups.add(g.counter, PACKETS, 1);
            c.groups.add(g.counter, BYTES, len);
        });
        let env = GroupEnv { groups: &v.groups, config: &v.config, live: self.live };
        env.choose(g, &st.key, depth, |i| {
            let Some(b) = g.buckets.get(i) else { return };
            self.count(|c| {
                c.buckets.add(b.counter, PACKETS, 1);
                c.buckets.add(b.counter, BYTES, len);
            });
            if O::ON {
                self.obs.event(TraceEvent::Bucket { group: id, bucket: i });
            }
            self.execute_set(&b.set, st.clone(), src, depth + 1);
        });
    }

    /// [`output`](Self::output), with the common case (a switch port other than the
    /// input port, which forwards) inline.
    #[inline(always)]
    fn output_fast(
        &mut self,
        port_no: u32,
        packet: Packet,
        key: &FlowKey,
        in_port: u32,
        src: Source,
    ) {
        if let Some(slot) = self.deliverable(port_no, in_port) {
            return self.tx_slot(port_no, Some(slot), None, packet);
        }
        self.output(port_no, packet, key, in_port, None, src)
    }

    /// The counter slot of `port_no` when an output there is a plain send: a port that
    /// exists, forwards and is not the input port (anything else takes [`output`](Self::output)).
    #[inline]
    fn deliverable(&self, port_no: u32, in_port: u32) -> Option<u16> {
        if port_no <= port::MAX && port_no != in_port {
            self.v.port(port_no).filter(|i| !i.no_fwd).map(|i| i.slot)
        } else {
            None
        }
    }

    /// Sends `packet`, whose key is `key`, to `port_no`.
    fn output(
        &mut self,
        port_no: u32,
        packet: Packet,
        key: &FlowKey,
        in_port: u32,
        queue: Option<u32>,
        src: Source,
    ) {
        let cfg: &'a super::DatapathConfig = &self.v.config;
        match port_no {
            // A packet-out's input port may be CONTROLLER or ANY: nowhere to send back to.
            port::IN_PORT if in_port <= port::MAX || in_port == port::LOCAL => {
                self.tx(in_port, queue, packet)
            }
            port::IN_PORT => self.count(|c| c.misc(Misc::OutputDrops, 1)),
            port::LOCAL => self.tx(port::LOCAL, queue, packet),
            port::NORMAL => {
                if O::ON {
                    self.obs.event(TraceEvent::Normal);
                }
                self.out.normal.push(NormalPacket { in_port, key: *key, packet })
            }
            port::FLOOD | port::ALL => {
                for p in &cfg.ports {
                    if p.no != in_port && !p.no_fwd && !(port_no == port::FLOOD && p.no_flood) {
                        self.tx(p.no, queue, packet.clone());
                    }
                }
            }
            port::CONTROLLER => {
                let max_len = self.unasked_len();
                self.packet_in(&packet, key, in_port, cause(src), max_len)
            }
            p if p == in_port => self.count(|c| c.misc(Misc::OutputToInPortDrops, 1)),
            p => match self.v.port(p) {
                Some(info) if !info.no_fwd => self.tx_slot(p, Some(info.slot), queue, packet),
                _ => self.count(|c| c.misc(Misc::OutputDrops, 1)),
            },
        }
    }

    fn tx(&mut self, port_no: u32, queue: Option<u32>, packet: Packet) {
        let slot = self.v.port(port_no).map(|p| p.slot);
        self.tx_slot(port_no, slot, queue, packet)
    }

    /// [`tx`](Self::tx) to a port whose slot (if it is a switch port) is known.
    #[inline(always)]
    fn tx_slot(&mut self, port_no: u32, slot: Option<u16>, queue: Option<u32>, packet: Packet) {
        if O::ON {
            self.obs.event(TraceEvent::Output { port: port_no, queue });
        }
        if let Some(slot) = slot {
            self.tally.tx(self.counters, slot, packet.len() as u64);
        }
        self.out.tx.push(Tx { port: port_no, queue, packet });
    }

    /// The `max_len` of a packet-in that no action gave a length for.
    fn unasked_len(&self) -> u16 {
        self.v.config.packet_in_max_len
    }

    /// Sends the whole frame of `packet` to the controller, asking for `max_len` bytes
    /// (see [`PacketIn::max_len`]). A partial TCP/UDP checksum (the packet's offload
    /// note) is finished in the copy; a super-frame goes as it is, one frame.
    fn packet_in(
        &mut self,
        packet: &Packet,
        key: &FlowKey,
        in_port: u32,
        cause: Cause,
        max_len: u16,
    ) {
        if self.in_info.is_some_and(|p| p.no_packet_in) {
            return;
        }
        let mut data = packet.data().to_vec();
        if packet.partial_csum() {
            crate::rewrite::finish_partial_checksum(&mut data);
        }
        let pi = PacketIn {
            reason: cause.reason,
            table_id: cause.table,
            cookie: cause.cookie,
            in_port,
            key: *key,
            max_len,
            total_len: data.len(),
            data,
        };
        if O::ON {
            self.obs.event(TraceEvent::PacketIn(pi));
            return;
        }
        if let Some(q) = self.packet_in {
            let m = if q.try_send(pi).is_ok() { Misc::PacketIns } else { Misc::PacketInDropped };
            self.count(|c| c.misc(m, 1));
        }
    }
}

/// Why, from where, and for which rule a packet-in is sent.
#[derive(Clone, Copy)]
struct Cause {
    reason: PacketInReason,
    table: u8,
    cookie: u64,
}

/// OpenFlow 1.3 reports packet-ins sent by the table-miss entry as "no match".
fn cause(src: Source) -> Cause {
    Cause {
        reason: if src.table_miss { PacketInReason::NoMatch } else { PacketInReason::Action },
        table: src.table,
        cookie: src.cookie,
    }
}
