//! The OpenFlow agent, sans-IO: every connection's protocol machine and the switch's
//! authoritative state (flows, groups, meters, ports, packet buffers, roles), driving the
//! datapath. No sockets and no clock: the shell feeds bytes, time (ns on the clock the
//! datapath's batches use) and datapath events in, and takes bytes out.
//!
//! - [`Agent::open`] starts a connection (its HELLO is queued); [`Agent::receive`] feeds
//!   its bytes; [`Agent::poll_transmit`] yields what to write and
//!   [`Agent::transmitted`] says what was written: a connection with too much unsent is
//!   held, and the shell reads its socket only while [`Agent::wants_input`] ([`pace`]);
//!   once [`Agent::is_closed`], the shell writes what is left, closes the socket and
//!   calls [`Agent::remove`] (which it also calls when the peer hung up).
//! - [`Agent::poll_notice`]: what the log should say of the connections (connects with
//!   their version, disconnects and refusals with their reason, role changes),
//!   rate-limited ([`notice`]).
//! - [`Agent::handle_timeout`] at [`Agent::next_timeout`]: echo probes and liveness,
//!   flow expiry (with flow-removed), fail-open.
//! - [`Agent::packet_in`] for each record the datapath queues, [`Agent::link`] for each
//!   link change: asynchronous messages to every connection whose role and
//!   asynchronous configuration want them.
//!
//! Ordering: requests of a connection are handled in arrival order; a barrier publishes
//! every earlier change to the datapath (and waits for the workers to move to it) before
//! its reply is queued. Changes are also published at the end of every
//! [`Agent::receive`], so a flow-mod acts without waiting for a barrier.
//!
//! Fail mode: with [`FailMode::Standalone`] and controllers configured, while no
//! controller connection has negotiated a version the switch forwards as a learning
//! switch: a hidden rule (table 0, priority 65535, match all, NORMAL) that is in the
//! datapath but not in the flow tables, removed as soon as a controller connects. With
//! [`FailMode::Secure`] the flows stay as they are and nothing else forwards.
//!
//! OpenFlow 1.0 connections are served by translating their requests to 1.3 and the
//! replies and asynchronous messages back ([`crate::v10`]).

mod buffers;
mod bundle;
mod compat10;
mod extension;
mod flow_agent;
mod monitor;
mod multipart;
pub mod notice;
mod pace;
mod port_admin;
mod requests;
mod saved;
mod session;
pub mod stats;
#[cfg(test)]
mod tests;
mod trace;

use std::collections::BTreeMap;

use datapath::action::{port as dport, Action as DpAction};
use datapath::key::{Field, FlowKey, FlowMatch};
use datapath::pipeline::{
    Datapath, DatapathConfig, Instructions, MissBehaviour, Outputs, PacketIn as DpPacketIn,
    PacketInReason as DpReason, Rule, WorkerState,
};
use openflow::match13::Match;
use openflow::oxm::Oxm;
use openflow::v13::flow_mod::{FlowMod, OFP_NO_BUFFER};
use openflow::v13::multipart::Desc;
use openflow::v13::packet_in::{FlowRemoved, PacketIn, PacketInReason};
use openflow::v13::port_status::{PortReason, PortStatus};
use openflow::v13::role::ControllerRole;
use openflow::{v13, Frame, Message, OfpError, OFP10_VERSION};

pub use buffers::{Buffered, PacketBuffers, MAX_BUFFERS};
pub use extension::{exp_type, PEREGRINE_EXPERIMENTER};
pub use flow_agent::FlowAgent;
pub use notice::Notice;
pub use pace::{BACKLOG_HIGH, BACKLOG_LOW, BACKLOG_MAX, BACKLOG_NOTICE_NS, DUMP_PART};
pub use port_admin::{AddPort, PortControl, PortRef, ReloadPlan, Reloaded};
pub use saved::Restored;
pub use session::{default_async, AsyncKind, SessionKind};

use std::sync::Arc;

use crate::conn::{CloseReason, ConnConfig, Connection, Event, SwitchFacts};
use crate::fastpath::FastPathView;
use crate::groups::GroupTable;
use crate::meters::MeterTable;
use crate::ports::{PortChange, PortTable};
use session::Session;

/// Identifies a connection within the agent.
pub type SessionId = u64;

/// What the switch does while no controller is connected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailMode {
    /// Keep the flows; forward only by them.
    Secure,
    /// Forward as a learning switch until a controller connects.
    Standalone,
}

/// Where the packets a packet-out produces go: the ports (through the workers) and the
/// learning switch.
pub trait Transmit: Send {
    /// Takes every packet of `out` (leaving it empty), or none of them (leaving it as it
    /// was) and says why.
    fn transmit(&mut self, out: &mut Outputs) -> Result<(), TransmitError>;
}

/// Why [`Transmit::transmit`] took nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TransmitError {
    /// The workers are behind: the same packets may be offered again shortly.
    Busy,
    /// They will never be taken (the workers stopped).
    Failed(String),
}

/// The agent's settings.
#[derive(Clone, Debug)]
pub struct AgentConfig {
    /// What FEATURES_REPLY says (`n_buffers` is taken from `buffers`).
    pub facts: SwitchFacts,
    pub timing: ConnConfig,
    pub fail_mode: FailMode,
    /// Whether controllers are configured (fail-open applies only then).
    pub controllers: bool,
    pub desc: Desc,
    /// Packet buffers (0: every packet-in carries the whole packet).
    pub buffers: usize,
    /// How long a buffered packet is kept.
    pub buffer_timeout_ns: u64,
    /// Flow entries past which the log says how many there are (and at each doubling).
    pub flow_soft_limit: usize,
    /// Connections past which the log says how many there are (and at each doubling).
    pub connection_soft_limit: usize,
    /// Flow entries per part of a flow-stats or aggregate reply ([`DUMP_PART`]; 0 counts
    /// as 1): a part is made in one go, so smaller parts let other connections in sooner.
    pub dump_part: usize,
}

impl Default for AgentConfig {
    fn default() -> Self {
        AgentConfig {
            facts: SwitchFacts::default(),
            timing: ConnConfig::default(),
            fail_mode: FailMode::Secure,
            controllers: true,
            desc: Desc {
                mfr_desc: "peregrine".into(),
                hw_desc: "Linux software switch".into(),
                sw_desc: concat!("peregrine ", env!("CARGO_PKG_VERSION")).into(),
                serial_num: "None".into(),
                dp_desc: "peregrine".into(),
            },
            buffers: 256,
            buffer_timeout_ns: 5_000_000_000,
            flow_soft_limit: 1_000_000,
            connection_soft_limit: 256,
            dump_part: DUMP_PART,
        }
    }
}

/// What the agent counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AgentCounters {
    pub packet_ins_sent: u64,
    pub packet_outs: u64,
    /// Packet-outs whose packets could not be handed to the workers.
    pub packet_out_drops: u64,
    /// Packet-ins not sent to a connection whose backlog was at `BACKLOG_HIGH`.
    pub packet_ins_backlogged: u64,
    pub flow_mods: u64,
    /// `OFPT_ERROR`s sent (from [`Agent::counters`]: on every connection, by whoever
    /// made them; kept in the agent for the connections that have closed).
    pub errors_sent: u64,
}

/// A reply or asynchronous message, in 1.3 form, before translation for a 1.0 peer.
enum Out {
    Msg(v13::Message),
    Err(OfpError),
    /// An error about another message than the request (one in a bundle), whose first
    /// bytes (and so xid) are given.
    ErrAbout(OfpError, Vec<u8>),
}

/// The OpenFlow agent (see the module documentation).
pub struct Agent {
    cfg: AgentConfig,
    flows: FlowAgent,
    groups: GroupTable,
    meters: MeterTable,
    ports: PortTable,
    buffers: PacketBuffers,
    sessions: BTreeMap<SessionId, Session>,
    next_session: SessionId,
    /// The last generation id a master or slave role request carried.
    generation: Option<u64>,
    worker: WorkerState,
    tx: Box<dyn Transmit>,
    /// Whether the fail-open rule is in the datapath.
    fail_open: bool,
    /// Changes not yet published.
    dirty: bool,
    /// For the flow changes a committed bundle recorded: where each message's start
    /// among the recorded changes, and its request (the next report uses them).
    bundle_marks: Vec<(usize, (SessionId, u32))>,
    counters: AgentCounters,
    /// The in-kernel fast tier, if the switch runs one.
    fast_path: Option<Arc<dyn FastPathView>>,
    /// The runner's port control, for ports added and removed at run time.
    port_control: Option<Box<dyn PortControl>>,
    /// What the log should say of the connections.
    notices: notice::Notices,
    /// The soft limits on flow entries and connections (see [`AgentConfig`]).
    flow_limit: notice::SoftLimit,
    connection_limit: notice::SoftLimit,
    /// Packet-outs of the request being handled that the workers could not take yet
    /// (they go to its connection's `stalled`).
    stalled: Vec<Outputs>,
    /// When to offer stalled packet-outs to the workers again.
    stall_retry_at: Option<u64>,
}

/// The most frame bytes a packet-in carries: an OpenFlow message is at most 65535
/// bytes, and the packet-in's own fields and match take at most a few dozen of them
/// (this leaves 256).
pub const PACKET_IN_DATA_MAX: usize = u16::MAX as usize - 256;

impl Agent {
    /// An agent over `dp`/`writer` (a fresh datapath whose config holds `ports`' ports),
    /// sending packet-out traffic to `tx`. Enters fail-open at once if it applies.
    pub fn new(
        cfg: AgentConfig,
        dp: Datapath,
        writer: datapath::pipeline::Writer,
        ports: PortTable,
        tx: Box<dyn Transmit>,
    ) -> Agent {
        let worker = dp.worker(0);
        let mut a = Agent {
            buffers: PacketBuffers::new(cfg.buffers, cfg.buffer_timeout_ns),
            flows: FlowAgent::new(dp, writer),
            groups: GroupTable::new(),
            meters: MeterTable::new(),
            ports,
            sessions: BTreeMap::new(),
            next_session: 1,
            generation: None,
            worker,
            tx,
            fail_open: false,
            dirty: false,
            bundle_marks: Vec::new(),
            counters: AgentCounters::default(),
            fast_path: None,
            port_control: None,
            notices: notice::Notices::default(),
            flow_limit: notice::SoftLimit::new(cfg.flow_soft_limit),
            connection_limit: notice::SoftLimit::new(cfg.connection_soft_limit),
            stalled: Vec::new(),
            stall_retry_at: None,
            cfg: AgentConfig { dump_part: cfg.dump_part.max(1), ..cfg },
        };
        a.cfg.facts.n_buffers = a.buffers.capacity() as u32;
        a.update_fail_open();
        a.publish();
        a
    }

    /// Gives the agent a view of the switch's in-kernel fast tier (for `dump-fastpath`,
    /// the tracer and statistics).
    pub fn set_fast_path(&mut self, v: Arc<dyn FastPathView>) {
        self.fast_path = Some(v);
    }

    /// Credits the fast tier's hits so far, so that counters read next include them.
    pub(crate) fn sync_fast_path(&self) {
        if let Some(f) = &self.fast_path {
            f.sync_counters();
        }
    }

    pub fn flows(&self) -> &FlowAgent {
        &self.flows
    }

    pub fn ports(&self) -> &PortTable {
        &self.ports
    }

    /// The agent's counters; `errors_sent` counts every `OFPT_ERROR` sent on any
    /// connection, closed ones included, whoever made it.
    pub fn counters(&self) -> AgentCounters {
        let live: u64 = self.sessions.values().map(|s| s.conn.counters().tx_errors).sum();
        AgentCounters { errors_sent: self.counters.errors_sent + live, ..self.counters }
    }

    /// Whether the fail-open learning switch is forwarding.
    pub fn in_fail_open(&self) -> bool {
        self.fail_open
    }

    /// Connections: id, kind, negotiated version, role.
    pub fn sessions(&self) -> Vec<(SessionId, SessionKind, Option<u8>, ControllerRole)> {
        self.sessions.iter().map(|(id, s)| (*id, s.kind, s.conn.version(), s.role)).collect()
    }

    /// Applies a flow-mod that does not come from a connection (startup flows).
    pub fn flow_mod(&mut self, fm: &FlowMod, now: u64) -> Result<(), OfpError> {
        self.flow_mod_unpublished(fm, now)?;
        self.publish();
        self.note_growth(now);
        Ok(())
    }

    /// Tells the log when the flow entries or the connections pass their soft limits.
    fn note_growth(&mut self, now: u64) {
        let flows = self.flows.flows().len();
        if self.flow_limit.check(flows) {
            let limit = self.flow_limit.limit();
            self.notices.push(Notice::Grown { what: "flow entries", count: flows, limit }, now);
        }
        let conns = self.sessions.len();
        if self.connection_limit.check(conns) {
            let limit = self.connection_limit.limit();
            self.notices.push(Notice::Grown { what: "connections", count: conns, limit }, now);
        }
    }

    /// [`Agent::flow_mod`] without the publish (a caller applying many publishes once).
    fn flow_mod_unpublished(&mut self, fm: &FlowMod, now: u64) -> Result<(), OfpError> {
        self.check_refs(&fm.instructions)?;
        self.check_group_prereqs(fm)?;
        let removed = self.flows.handle_flow_mod(fm, now)?;
        self.dirty = true;
        self.broadcast_flow_removed(removed);
        Ok(())
    }

    /// Opens a connection with `peer` (who it is, for the log) at `now`; its HELLO is
    /// queued.
    pub fn open(&mut self, kind: SessionKind, peer: &str, now: u64) -> SessionId {
        let id = self.next_session;
        self.next_session += 1;
        let conn = Connection::new(self.facts(), self.cfg.timing, now);
        self.sessions.insert(id, Session::new(conn, kind, peer.to_string(), now));
        self.note_growth(now);
        id
    }

    /// Forgets a connection whose socket is closed at `now`; its work under way (a
    /// reply, held requests) is dropped.
    pub fn remove(&mut self, id: SessionId, now: u64) {
        if let Some(s) = self.sessions.remove(&id) {
            self.counters.errors_sent += s.conn.counters().tx_errors;
            // A packet-out still waiting for the workers goes with its connection.
            if s.stalled.is_some() {
                self.counters.packet_out_drops += 1;
            }
            let secs = now.saturating_sub(s.opened_ns) / crate::conn::NS_PER_SEC;
            let untold = !s.end_noticed;
            if let (true, Some(reason)) = (untold, s.conn.close_reason()) {
                // Closed while its events were held: what ended it was not read yet.
                if let Some(n) = self.close_notice(s.kind, s.peer, secs, reason) {
                    self.notices.push(n, now);
                }
            } else if untold && s.kind == SessionKind::Controller {
                let why = match s.conn.version() {
                    Some(_) => "closed by the peer",
                    None => "closed before a version was agreed",
                };
                self.notices
                    .push(Notice::Disconnected { peer: s.peer, secs, why: why.into() }, now);
            }
            if !s.monitors.is_empty() {
                let watching = self.sessions.values().any(|s| !s.monitors.is_empty());
                self.flows.watch(watching);
            }
        }
        self.update_fail_open();
        self.update_miss();
        self.publish();
    }

    /// The next line for the log about the connections.
    pub fn poll_notice(&mut self) -> Option<Notice> {
        self.notices.pop()
    }

    /// Adds what the shell saw of a connection the agent does not (a failed TLS
    /// handshake, a controller out of reach) to the log's lines, within their rate limit.
    pub fn notice(&mut self, n: Notice, now: u64) {
        self.notices.push(n, now);
    }

    /// Whether the connection is over (the shell drains it and closes the socket).
    pub fn is_closed(&self, id: SessionId) -> bool {
        self.sessions.get(&id).is_none_or(|s| s.conn.is_closed())
    }

    /// The next message to write on connection `id`; its bytes count as unsent until
    /// [`Agent::transmitted`] says they were written.
    pub fn poll_transmit(&mut self, id: SessionId) -> Option<Vec<u8>> {
        let s = self.sessions.get_mut(&id)?;
        let m = s.conn.poll_transmit()?;
        s.in_flight += m.len();
        Some(m)
    }

    /// Says that `bytes` of what [`Agent::poll_transmit`] gave for connection `id` were
    /// written at `now`: work held for its backlog may go on.
    pub fn transmitted(&mut self, id: SessionId, bytes: usize, now: u64) {
        let Some(s) = self.sessions.get_mut(&id) else {
            return;
        };
        s.in_flight = s.in_flight.saturating_sub(bytes);
        self.pace(id, now);
        self.note_refused(id, now);
        self.publish();
    }

    /// Everything connection `id` has to send, as a caller that writes at once would
    /// take it: [`Agent::poll_transmit`] and [`Agent::transmitted`] until nothing is
    /// left (so a long reply comes whole).
    pub fn transmit_all(&mut self, id: SessionId, now: u64) -> Vec<u8> {
        let mut all = Vec::new();
        loop {
            let before = all.len();
            while let Some(m) = self.poll_transmit(id) {
                all.extend_from_slice(&m);
            }
            if all.len() == before {
                return all;
            }
            self.transmitted(id, all.len() - before, now);
        }
    }

    /// Whether the shell should read more from connection `id`: false while it is held
    /// (its backlog is high or a long reply is under way) or closed.
    pub fn wants_input(&self, id: SessionId) -> bool {
        self.sessions.get(&id).is_some_and(|s| !s.conn.is_held() && !s.conn.is_closed())
    }

    /// Feeds bytes read from connection `id` at `now` and handles what they hold, as far
    /// as its backlog allows ([`pace`]).
    pub fn receive(&mut self, id: SessionId, bytes: &[u8], now: u64) {
        let Some(s) = self.sessions.get_mut(&id) else {
            return;
        };
        s.conn.receive(bytes, now);
        self.pace(id, now);
        self.note_refused(id, now);
        self.publish();
        self.note_growth(now);
    }

    /// Tells the log of the last malformed message connection `id` sent, if any since.
    fn note_refused(&mut self, id: SessionId, now: u64) {
        if let Some(s) = self.sessions.get_mut(&id) {
            if let Some(why) = s.conn.take_refused() {
                let peer = s.peer.clone();
                self.notices.push(Notice::Malformed { peer, why }, now);
            }
        }
    }

    /// When [`Agent::handle_timeout`] should next run.
    pub fn next_timeout(&self) -> Option<u64> {
        let conns = self.sessions.values().filter_map(|s| s.conn.next_timeout());
        let bundles = self.sessions.values().filter_map(|s| bundle::next_expiry(&s.bundles));
        let backlogs = self
            .sessions
            .values()
            .filter(|s| s.pressed && !s.backlog_noticed)
            .map(|s| s.pressed_at + BACKLOG_NOTICE_NS);
        conns
            .chain(bundles)
            .chain(backlogs)
            .chain(self.flows.next_check())
            .chain(self.stall_retry_at)
            .min()
    }

    /// Runs the timers due at `now`.
    pub fn handle_timeout(&mut self, now: u64) {
        self.stall_retry_at = None;
        let ids: Vec<SessionId> = self.sessions.keys().copied().collect();
        for id in ids {
            if let Some(s) = self.sessions.get_mut(&id) {
                s.conn.handle_timeout(now);
            }
            self.retry_stalled(id, now);
            self.pace(id, now);
        }
        self.expire_bundles(now);
        if self.flows.next_check().is_some_and(|t| t <= now) {
            // Idle timeouts see the kernel tier's hits up to now.
            self.sync_fast_path();
            let removed = self.flows.expire(now);
            self.broadcast_flow_removed(removed);
            self.report_flow_events(None);
        }
        self.publish();
    }

    /// Sends a datapath packet-in record to the connections that want it. A frame
    /// longer than a message can carry (a TCP super-frame from a port that takes
    /// offloads, up to 64 KiB) is sent cut to [`PACKET_IN_DATA_MAX`] bytes even when the
    /// whole packet was asked for; `total_len` says how long it was (65535 at most).
    pub fn packet_in(&mut self, pi: DpPacketIn, now: u64) {
        let reason = match pi.reason {
            DpReason::NoMatch => PacketInReason::NoMatch,
            DpReason::Action => PacketInReason::Action,
            DpReason::InvalidTtl => PacketInReason::InvalidTtl,
        };
        let total = pi.data.len();
        let max = pi.max_len as usize;
        let (buffer_id, data) = if pi.max_len == openflow::action::OFPCML_NO_BUFFER || max >= total
        {
            (OFP_NO_BUFFER, pi.data)
        } else {
            let cut = pi.data.get(..max).unwrap_or(&pi.data).to_vec();
            match self.buffers.store(Buffered { in_port: pi.in_port, data: pi.data.clone() }, now) {
                Some(id) => (id, cut),
                None => (OFP_NO_BUFFER, pi.data),
            }
        };
        let mut data = data;
        data.truncate(PACKET_IN_DATA_MAX);
        let msg = PacketIn {
            buffer_id,
            total_len: total.min(u16::MAX as usize) as u16,
            reason,
            table_id: pi.table_id,
            cookie: pi.cookie,
            match_: packet_in_match(&pi.key),
            data,
        };
        let r = reason.to_u8();
        let ids: Vec<SessionId> = self.sessions.keys().copied().collect();
        for id in ids {
            if self.send_async(id, AsyncKind::PacketIn, r, v13::Message::PacketIn(msg.clone())) {
                self.counters.packet_ins_sent += 1;
            }
        }
    }

    /// Records a link change of port `no` and reports it.
    pub fn link(&mut self, no: u32, up: bool) {
        if let Some(ch) = self.ports.link(no, up) {
            self.port_changed(ch);
            self.publish();
        }
    }

    fn facts(&self) -> SwitchFacts {
        let mut f = self.cfg.facts.clone();
        f.v10_ports =
            self.ports.desc().iter().filter_map(|p| crate::v10::port_to_v10(p).ok()).collect();
        f
    }

    fn publish(&mut self) {
        if self.dirty {
            self.flows.barrier();
            self.dirty = false;
        }
    }

    /// Handles connection `id`'s events until it has none left.
    fn drain_events(&mut self, id: SessionId, now: u64) {
        while let Some(ev) = self.sessions.get_mut(&id).and_then(|s| s.conn.poll_event()) {
            self.event(id, ev, now);
        }
    }

    /// Handles one event of connection `id`.
    fn event(&mut self, id: SessionId, ev: Event, now: u64) {
        let Some(s) = self.sessions.get_mut(&id) else {
            return;
        };
        match ev {
            Event::Connected { version } => {
                if s.kind == SessionKind::Controller {
                    let peer = s.peer.clone();
                    self.notices.push(Notice::Connected { peer, version }, now);
                }
                self.update_fail_open();
                self.update_miss();
            }
            Event::Closed(reason) => {
                s.end_noticed = true;
                let (kind, peer, secs) = (
                    s.kind,
                    s.peer.clone(),
                    now.saturating_sub(s.opened_ns) / crate::conn::NS_PER_SEC,
                );
                if let Some(n) = self.close_notice(kind, peer, secs, &reason) {
                    self.notices.push(n, now);
                }
                self.update_fail_open();
                self.update_miss();
            }
            Event::Request { frame, head } => self.request(id, frame, &head, now),
        }
    }

    /// What the log says of a connection of `kind` with `peer` that closed for `reason`
    /// after `secs` seconds: a refusal (no version agreed) for every kind, a disconnect
    /// for controllers only.
    fn close_notice(
        &self,
        kind: SessionKind,
        peer: String,
        secs: u64,
        reason: &CloseReason,
    ) -> Option<Notice> {
        let why = match reason {
            CloseReason::Incompatible { peer: theirs } => {
                let ours = self.cfg.timing.versions;
                let no = openflow::versions::NoCommonVersion { ours, theirs: theirs.clone() };
                return Some(Notice::Refused { peer, why: no.to_string() });
            }
            CloseReason::NoHello { msg_type } => {
                let why = format!("its first message was of type {msg_type}, not a HELLO");
                return Some(Notice::Refused { peer, why });
            }
            _ if kind != SessionKind::Controller => return None,
            CloseReason::Framing(e) => format!("its bytes are not OpenFlow messages: {e}"),
            CloseReason::Dead => format!(
                "nothing received for {} s, echo requests unanswered",
                self.cfg.timing.dead_after_ns / crate::conn::NS_PER_SEC
            ),
            CloseReason::Backlog { unsent } => {
                format!("it left {} KiB unread; the switch gave up on it", unsent / 1024)
            }
        };
        Some(Notice::Disconnected { peer, secs, why })
    }

    /// Whether a controller connection has negotiated a version.
    fn controller_connected(&self) -> bool {
        self.sessions.values().any(|s| {
            s.kind == SessionKind::Controller && s.conn.version().is_some() && !s.conn.is_closed()
        })
    }

    fn update_fail_open(&mut self) {
        let want = self.cfg.fail_mode == FailMode::Standalone
            && self.cfg.controllers
            && !self.controller_connected();
        if want == self.fail_open {
            return;
        }
        // A flow entry with the same match and priority owns that datapath rule.
        let any = crate::flows::NormMatch::new(&Match::default());
        let key = crate::flows::FlowKey::new(any.view(), FAIL_OPEN_PRIORITY);
        let taken = self.flows.flows().get(0, &key).is_some();
        let w = self.flows.writer();
        if want {
            if !taken {
                let rule = Rule::new(
                    FlowMatch::ANY,
                    FAIL_OPEN_PRIORITY,
                    Instructions {
                        apply: vec![DpAction::Output(dport::NORMAL)],
                        ..Instructions::default()
                    },
                );
                let _ = w.insert_rule(0, rule);
            }
        } else if !taken {
            w.remove_rule(0, &FlowMatch::ANY, FAIL_OPEN_PRIORITY);
        }
        self.fail_open = want;
        self.dirty = true;
    }

    /// Changes the datapath's config with `f` (published with the next publish).
    fn change_config(&mut self, f: impl FnOnce(&mut DatapathConfig)) {
        let mut cfg = self.flows.writer().pending().config().clone();
        let before = (cfg.miss, cfg.packet_in_max_len, cfg.invalid_ttl_to_controller);
        f(&mut cfg);
        if before != (cfg.miss, cfg.packet_in_max_len, cfg.invalid_ttl_to_controller) {
            cfg.ports = self.ports.datapath_ports();
            self.flows.writer().set_config(cfg);
            self.dirty = true;
        }
    }

    /// SET_CONFIG (one switch-wide setting, whichever connection sets it): the length of
    /// packet-ins no action gave a length for (fragment flags other than normal never
    /// get here: the connection refuses them).
    fn set_config(&mut self, c: v13::SwitchConfig) {
        self.change_config(|cfg| cfg.packet_in_max_len = c.miss_send_len);
    }

    /// OpenFlow 1.0 sends table misses to the controller; 1.3 drops them (its table-miss
    /// entry is an ordinary flow). Misses go to the controller while a 1.0 controller is
    /// connected.
    fn update_miss(&mut self) {
        let v10 = self.sessions.values().any(|s| {
            s.kind == SessionKind::Controller
                && s.conn.version() == Some(OFP10_VERSION)
                && !s.conn.is_closed()
        });
        self.change_config(|cfg| {
            cfg.miss = if v10 {
                MissBehaviour::Controller { max_len: u16::MAX }
            } else {
                MissBehaviour::Drop
            };
        });
    }

    /// Handles one request of connection `id`.
    fn request(&mut self, id: SessionId, frame: Frame, head: &[u8], now: u64) {
        let xid = frame.xid;
        if self.start_dump(id, &frame.message, xid, head) {
            return;
        }
        let forward = self.forwardable(id, &frame);
        let outs = match frame.message {
            Message::V13(v13::Message::BundleControl(c)) => self.bundle_control(id, &c, false, now),
            Message::V13(v13::Message::BundleAdd(a)) => {
                let added = self.bundle_add(id, &a, frame.version, xid, now);
                added.err().map(Out::Err).into_iter().collect()
            }
            Message::V13(v13::Message::Experimenter(e)) if bundle::is_onf(&e) => {
                self.onf_bundle(id, &e, frame.version, xid, now)
            }
            Message::V13(m) => {
                let mut outs = self.request13(id, m, now);
                for o in &mut outs {
                    if let Out::Msg(v13::Message::MultipartReply(r)) = o {
                        if let v13::multipart::MultipartReplyBody::Flow(stats) = &mut r.body {
                            crate::v10::show_flow_stats_to_v13(stats);
                        }
                    }
                }
                outs
            }
            Message::V10(m) => self.request10(id, m, now),
        };
        let refused = outs.iter().any(|o| matches!(o, Out::Err(_) | Out::ErrAbout(..)));
        for o in outs {
            self.reply(id, xid, o, head);
        }
        self.stall(id, now);
        self.report_flow_events(Some((id, xid)));
        if let (Some((reason, rf)), false) = (forward, refused) {
            self.forward_request(id, reason, rf);
        }
    }

    /// For a group-mod or meter-mod of a 1.4 connection that another connection may want
    /// forwarded (`OFPT_REQUESTFORWARD`), the reason and the message to forward.
    fn forwardable(
        &self,
        id: SessionId,
        frame: &Frame,
    ) -> Option<(v13::RequestForwardReason, v13::RequestForward)> {
        use v13::RequestForwardReason as R;
        let reason = match &frame.message {
            Message::V13(v13::Message::GroupMod(_)) => R::GroupMod,
            Message::V13(v13::Message::MeterMod(_)) => R::MeterMod,
            _ => return None,
        };
        let wanted = self.sessions.iter().any(|(other, s)| {
            *other != id
                && s.conn.version().is_some_and(|v| v >= openflow::OFP14_VERSION)
                && s.wants(AsyncKind::RequestForward, reason.to_u8())
        });
        if !wanted || frame.version < openflow::OFP14_VERSION {
            return None;
        }
        v13::RequestForward::new(frame).ok().map(|rf| (reason, rf))
    }

    /// Sends a request connection `id` made (and the switch carried out) to every other
    /// connection that asked for such requests (OpenFlow 1.4.1 §6.1.4).
    fn forward_request(
        &mut self,
        id: SessionId,
        reason: v13::RequestForwardReason,
        rf: v13::RequestForward,
    ) {
        let ids: Vec<SessionId> = self.sessions.keys().copied().filter(|o| *o != id).collect();
        for other in ids {
            let m = v13::Message::RequestForward(rf.clone());
            self.send_async(other, AsyncKind::RequestForward, reason.to_u8(), m);
        }
    }

    /// Queues `o` on connection `id` as an answer to the request with `xid`.
    fn reply(&mut self, id: SessionId, xid: u32, o: Out, head: &[u8]) {
        let Some(s) = self.sessions.get_mut(&id) else {
            return;
        };
        let v = s.conn.version();
        match o {
            Out::Err(e) => {
                let _ = s.conn.send_error(&e, head);
            }
            Out::ErrAbout(e, about) => {
                let _ = s.conn.send_error(&e, &about);
            }
            Out::Msg(m) if v == Some(OFP10_VERSION) => match compat10::reply_to_v10(m) {
                Ok(ms) => {
                    for m in ms {
                        let _ = s.conn.send(Message::V10(m), xid);
                    }
                }
                Err(e) => {
                    let _ = s.conn.send_error(&e, head);
                }
            },
            Out::Msg(m) => {
                let _ = s.conn.send(Message::V13(m), xid);
            }
        }
    }

    /// Sends an asynchronous message to connection `id` if it wants it; true if sent.
    fn send_async(&mut self, id: SessionId, kind: AsyncKind, reason: u8, m: v13::Message) -> bool {
        let Some(s) = self.sessions.get_mut(&id) else {
            return false;
        };
        let Some(v) = s.conn.version() else {
            return false;
        };
        if !s.wants(kind, reason) || (!kind.in_v13() && v < openflow::OFP14_VERSION) {
            return false;
        }
        if kind == AsyncKind::PacketIn && s.backlog() >= BACKLOG_HIGH {
            self.counters.packet_ins_backlogged += 1;
            return false;
        }
        let sent = if v == OFP10_VERSION {
            match compat10::async_to_v10(&m) {
                Some(m10) => s.conn.send_async(Message::V10(m10)).is_ok(),
                None => false,
            }
        } else {
            s.conn.send_async(Message::V13(m)).is_ok()
        };
        let unsent = s.backlog();
        if unsent > BACKLOG_MAX {
            s.conn.abort(CloseReason::Backlog { unsent });
        }
        sent
    }

    fn broadcast_flow_removed(&mut self, removed: Vec<FlowRemoved>) {
        let ids: Vec<SessionId> = self.sessions.keys().copied().collect();
        for fr in removed {
            for id in &ids {
                let r = fr.reason.to_u8();
                self.send_async(
                    *id,
                    AsyncKind::FlowRemoved,
                    r,
                    v13::Message::FlowRemoved(fr.clone()),
                );
            }
        }
    }

    fn port_changed(&mut self, ch: PortChange) {
        let dp = self.flows.datapath().clone();
        dp.set_port_live(ch.slot, ch.live);
        if ch.flags_changed {
            let mut cfg = self.flows.writer().pending().config().clone();
            cfg.ports = self.ports.datapath_ports();
            self.flows.writer().set_config(cfg);
            self.dirty = true;
        }
        let st = PortStatus { reason: PortReason::Modify, port: ch.port };
        let ids: Vec<SessionId> = self.sessions.keys().copied().collect();
        for id in ids {
            self.send_async(
                id,
                AsyncKind::PortStatus,
                PortReason::Modify.to_u8(),
                v13::Message::PortStatus(st.clone()),
            );
        }
    }
}

/// Priority of the fail-open rule (the highest).
const FAIL_OPEN_PRIORITY: u16 = u16::MAX;

/// The match of a packet-in: the input port, and metadata and tunnel id when set.
fn packet_in_match(key: &FlowKey) -> Match {
    let mut f = vec![Oxm::InPort(key.get(Field::InPort) as u32)];
    let phy = key.get(Field::InPhyPort) as u32;
    if phy != 0 && phy != key.get(Field::InPort) as u32 {
        f.push(Oxm::InPhyPort(phy));
    }
    let md = key.get(Field::Metadata) as u64;
    if md != 0 {
        f.push(Oxm::Metadata(md, None));
    }
    let tun = key.get(Field::TunnelId) as u64;
    if tun != 0 {
        f.push(Oxm::TunnelId(tun, None));
    }
    Match::new(f)
}
