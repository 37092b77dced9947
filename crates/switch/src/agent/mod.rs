//! The OpenFlow agent, sans-IO: every connection's protocol machine and the switch's
//! authoritative state (flows, groups, meters, ports, packet buffers, roles), driving the
//! datapath. No sockets and no clock: the shell feeds bytes, time (ns on the clock the
//! datapath's batches use) and datapath events in, and takes bytes out.
//!
//! - [`Agent::open`] starts a connection (its HELLO is queued); [`Agent::receive`] feeds
//!   its bytes; [`Agent::poll_transmit`] yields what to write; once
//!   [`Agent::is_closed`], the shell writes what is left, closes the socket and calls
//!   [`Agent::remove`] (which it also calls when the peer hung up).
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
mod compat10;
mod flow_agent;
mod multipart;
mod session;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use datapath::action::{port as dport, Action as DpAction};
use datapath::key::{Field, FlowKey, FlowMatch};
use datapath::packet::Packet;
use datapath::pipeline::{
    Datapath, DatapathConfig, Instructions, MissBehaviour, Outputs, PacketIn as DpPacketIn,
    PacketInReason as DpReason, Rule, WorkerState,
};
use openflow::action::{port, Action, OFPG_ANY};
use openflow::instruction::Instruction;
use openflow::match13::Match;
use openflow::oxm::Oxm;
use openflow::v13::flow_mod::{FlowMod, OFP_NO_BUFFER};
use openflow::v13::multipart::Desc;
use openflow::v13::packet_in::{FlowRemoved, PacketIn, PacketInReason};
use openflow::v13::packet_out::PacketOut;
use openflow::v13::port_status::{PortMod, PortReason, PortStatus};
use openflow::v13::role::{ControllerRole, Role};
use openflow::v13::switch_config::TableMod;
use openflow::{v10, v13, ErrorKind, Frame, Message, OfpError, OFP10_VERSION};

pub use buffers::{Buffered, PacketBuffers, MAX_BUFFERS};
pub use flow_agent::FlowAgent;
pub use session::{default_async, AsyncKind, SessionKind};

use crate::conn::{ConnConfig, Connection, Event, SwitchFacts};
use crate::groups::GroupTable;
use crate::meters::MeterTable;
use crate::ports::{PortChange, PortTable};
use crate::translate::actions_to_datapath;
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
    fn transmit(&mut self, out: Outputs) -> Result<(), String>;
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
    pub flow_mods: u64,
    pub errors_sent: u64,
}

/// A reply or asynchronous message, in 1.3 form, before translation for a 1.0 peer.
enum Out {
    Msg(v13::Message),
    Err(OfpError),
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
    counters: AgentCounters,
}

impl Agent {
    /// An agent over `dp`/`writer` (a fresh datapath whose config holds `ports`' ports),
    /// sending packet-out traffic to `tx`. Enters fail-open at once if it applies.
    pub fn new(
        cfg: AgentConfig,
        dp: Datapath,
        writer: datapath::pipeline::Writer,
        ports: PortTable,
        tx: Box<dyn Transmit>,
        now: u64,
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
            counters: AgentCounters::default(),
            cfg,
        };
        a.cfg.facts.n_buffers = a.buffers.capacity() as u32;
        a.update_fail_open();
        a.publish();
        let _ = now;
        a
    }

    pub fn flows(&self) -> &FlowAgent {
        &self.flows
    }

    pub fn ports(&self) -> &PortTable {
        &self.ports
    }

    pub fn counters(&self) -> AgentCounters {
        self.counters
    }

    /// Whether the fail-open learning switch is forwarding.
    pub fn in_fail_open(&self) -> bool {
        self.fail_open
    }

    /// Connections: id, kind, negotiated version, role.
    pub fn sessions(&self) -> Vec<(SessionId, SessionKind, Option<u8>, ControllerRole)> {
        self.sessions
            .iter()
            .map(|(id, s)| (*id, s.kind, s.conn.version(), s.role))
            .collect()
    }

    /// Applies a flow-mod that does not come from a connection (startup flows).
    pub fn flow_mod(&mut self, fm: &FlowMod, now: u64) -> Result<(), OfpError> {
        self.check_refs(&fm.instructions)?;
        let removed = self.flows.handle_flow_mod(fm, now)?;
        self.dirty = true;
        self.broadcast_flow_removed(removed);
        self.publish();
        Ok(())
    }

    /// Opens a connection at `now`; its HELLO is queued.
    pub fn open(&mut self, kind: SessionKind, now: u64) -> SessionId {
        let id = self.next_session;
        self.next_session += 1;
        let conn = Connection::new(self.facts(), self.cfg.timing, now);
        self.sessions.insert(id, Session::new(conn, kind));
        id
    }

    /// Forgets a connection whose socket is closed.
    pub fn remove(&mut self, id: SessionId) {
        self.sessions.remove(&id);
        self.update_fail_open();
        self.update_miss();
        self.publish();
    }

    /// Whether the connection is over (the shell drains it and closes the socket).
    pub fn is_closed(&self, id: SessionId) -> bool {
        self.sessions.get(&id).is_none_or(|s| s.conn.is_closed())
    }

    /// The next message to write on connection `id`.
    pub fn poll_transmit(&mut self, id: SessionId) -> Option<Vec<u8>> {
        self.sessions.get_mut(&id)?.conn.poll_transmit()
    }

    /// Feeds bytes read from connection `id` at `now` and handles what they hold.
    pub fn receive(&mut self, id: SessionId, bytes: &[u8], now: u64) {
        let Some(s) = self.sessions.get_mut(&id) else {
            return;
        };
        s.conn.receive(bytes, now);
        self.drain_events(id, now);
        self.publish();
    }

    /// When [`Agent::handle_timeout`] should next run.
    pub fn next_timeout(&self) -> Option<u64> {
        let conns = self.sessions.values().filter_map(|s| s.conn.next_timeout());
        conns.chain(self.flows.next_expiry()).min()
    }

    /// Runs the timers due at `now`.
    pub fn handle_timeout(&mut self, now: u64) {
        let ids: Vec<SessionId> = self.sessions.keys().copied().collect();
        for id in ids {
            if let Some(s) = self.sessions.get_mut(&id) {
                s.conn.handle_timeout(now);
            }
            self.drain_events(id, now);
        }
        if self.flows.next_expiry().is_some_and(|t| t <= now) {
            let removed = self.flows.expire(now);
            self.broadcast_flow_removed(removed);
        }
        self.publish();
    }

    /// Sends a datapath packet-in record to the connections that want it.
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
            match self.buffers.store(
                Buffered {
                    in_port: pi.in_port,
                    data: pi.data.clone(),
                },
                now,
            ) {
                Some(id) => (id, cut),
                None => (OFP_NO_BUFFER, pi.data),
            }
        };
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
            if self.send_async(
                id,
                AsyncKind::PacketIn,
                r,
                v13::Message::PacketIn(msg.clone()),
            ) {
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
        f.v10_ports = self
            .ports
            .desc()
            .iter()
            .filter_map(|p| crate::v10::port_to_v10(p).ok())
            .collect();
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
        loop {
            let Some(s) = self.sessions.get_mut(&id) else {
                return;
            };
            let Some(ev) = s.conn.poll_event() else {
                return;
            };
            match ev {
                Event::Connected { .. } | Event::Closed(_) => {
                    self.update_fail_open();
                    self.update_miss();
                }
                Event::Request { frame, head } => self.request(id, frame, &head, now),
            }
        }
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
        let key = crate::flows::FlowKey {
            match_: crate::flows::NormMatch::new(&Match::default()),
            priority: FAIL_OPEN_PRIORITY,
        };
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
        let before = (
            cfg.miss,
            cfg.packet_in_max_len,
            cfg.invalid_ttl_to_controller,
        );
        f(&mut cfg);
        if before
            != (
                cfg.miss,
                cfg.packet_in_max_len,
                cfg.invalid_ttl_to_controller,
            )
        {
            cfg.ports = self.ports.datapath_ports();
            self.flows.writer().set_config(cfg);
            self.dirty = true;
        }
    }

    /// SET_CONFIG (one switch-wide setting, whichever connection sets it): the length of
    /// packet-ins no action gave a length for, and `OFPC_INVALID_TTL_TO_CONTROLLER`.
    fn set_config(&mut self, c: v13::SwitchConfig) {
        const INVALID_TTL_TO_CONTROLLER: u16 = 1 << 2;
        self.change_config(|cfg| {
            cfg.packet_in_max_len = c.miss_send_len;
            cfg.invalid_ttl_to_controller = c.flags & INVALID_TTL_TO_CONTROLLER != 0;
        });
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
        let outs = match frame.message {
            Message::V13(m) => self.request13(id, m, now),
            Message::V10(m) => self.request10(id, m, now),
        };
        for o in outs {
            self.reply(id, xid, o, head);
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
                self.counters.errors_sent += 1;
                let _ = s.conn.send_error(&e, head);
            }
            Out::Msg(m) if v == Some(OFP10_VERSION) => match compat10::reply_to_v10(m) {
                Ok(ms) => {
                    for m in ms {
                        let _ = s.conn.send(Message::V10(m), xid);
                    }
                }
                Err(e) => {
                    self.counters.errors_sent += 1;
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
        if !s.wants(kind, reason) {
            return false;
        }
        if v == OFP10_VERSION {
            match compat10::async_to_v10(&m) {
                Some(m10) => s.conn.send_async(Message::V10(m10)).is_ok(),
                None => false,
            }
        } else {
            s.conn.send_async(Message::V13(m)).is_ok()
        }
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
        let st = PortStatus {
            reason: PortReason::Modify,
            port: ch.port,
        };
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

    /// Refuses instructions that name a group or meter the switch lacks.
    fn check_refs(&self, insts: &[Instruction]) -> Result<(), OfpError> {
        for i in insts {
            match i {
                Instruction::Meter(m) if !self.meters.contains(*m) => {
                    return Err(OfpError::new(
                        ErrorKind::METER_MOD_FAILED_UNKNOWN_METER,
                        format!("meter {m} does not exist"),
                    ))
                }
                Instruction::ApplyActions(a) | Instruction::WriteActions(a) => {
                    self.check_actions(a)?
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn check_actions(&self, actions: &[Action]) -> Result<(), OfpError> {
        for a in actions {
            if let Action::Group(g) = a {
                if !self.groups.contains(*g) {
                    return Err(OfpError::new(
                        ErrorKind::BAD_ACTION_BAD_OUT_GROUP,
                        format!("group {g} does not exist"),
                    ));
                }
            }
        }
        Ok(())
    }

    fn is_slave(&self, id: SessionId) -> bool {
        self.sessions.get(&id).is_some_and(Session::is_slave)
    }

    /// Handles a 1.3 request; returns the replies and errors, in order.
    fn request13(&mut self, id: SessionId, m: v13::Message, now: u64) -> Vec<Out> {
        use v13::Message as M;
        let modifies = matches!(
            m,
            M::FlowMod(_)
                | M::GroupMod(_)
                | M::MeterMod(_)
                | M::PortMod(_)
                | M::TableMod(_)
                | M::PacketOut(_)
        );
        if modifies && self.is_slave(id) {
            return vec![Out::Err(OfpError::new(
                ErrorKind::BAD_REQUEST_IS_SLAVE,
                "a slave controller may not change the switch".to_string(),
            ))];
        }
        let r: Result<Vec<v13::Message>, OfpError> = match m {
            M::FlowMod(fm) => return self.flow_mod_request(&fm, now),
            M::GroupMod(gm) => self.group_mod(&gm, now).map(|()| vec![]),
            M::MeterMod(mm) => self.meter_mod(&mm, now).map(|()| vec![]),
            M::PortMod(pm) => self.port_mod(&pm).map(|()| vec![]),
            M::TableMod(tm) => table_mod(&tm).map(|()| vec![]),
            M::PacketOut(po) => self.packet_out(&po, now).map(|()| vec![]),
            M::MultipartRequest(req) => self.multipart(&req, now),
            M::BarrierRequest => {
                self.flows.barrier();
                self.dirty = false;
                Ok(vec![M::BarrierReply])
            }
            M::RoleRequest(r) => self.role_request(id, r).map(|r| vec![M::RoleReply(r)]),
            M::GetAsyncRequest => Ok(self
                .sessions
                .get(&id)
                .map(|s| vec![M::GetAsyncReply(s.async_cfg)])
                .unwrap_or_default()),
            M::SetAsync(c) => {
                if let Some(s) = self.sessions.get_mut(&id) {
                    s.async_cfg = c;
                }
                Ok(vec![])
            }
            M::SetConfig(c) => {
                self.set_config(c);
                Ok(vec![])
            }
            M::QueueGetConfigRequest(p) => self.queue_config(p),
            // The peer's errors and replies to our echo need no answer.
            M::Error(_) | M::EchoReply(_) => Ok(vec![]),
            M::Experimenter(e) => Err(OfpError::new(
                ErrorKind::BAD_REQUEST_BAD_EXPERIMENTER,
                format!("experimenter {:#x} is not supported", e.experimenter),
            )),
            other => Err(OfpError::new(
                ErrorKind::BAD_REQUEST_BAD_TYPE,
                format!("{} is not a request a switch serves", msg_name(&other)),
            )),
        };
        match r {
            Ok(ms) => ms.into_iter().map(Out::Msg).collect(),
            Err(e) => vec![Out::Err(e)],
        }
    }

    /// A flow-mod from a connection: applied, then its buffered packet (if any) runs
    /// through the tables as a packet-out to `OFPP_TABLE` would.
    fn flow_mod_request(&mut self, fm: &FlowMod, now: u64) -> Vec<Out> {
        self.counters.flow_mods += 1;
        if let Err(e) = self.check_refs(&fm.instructions) {
            return vec![Out::Err(e)];
        }
        match self.flows.handle_flow_mod(fm, now) {
            Ok(removed) => {
                self.dirty = true;
                self.broadcast_flow_removed(removed);
            }
            Err(e) => return vec![Out::Err(e)],
        }
        let adds = matches!(
            fm.command,
            v13::flow_mod::FlowModCommand::Add
                | v13::flow_mod::FlowModCommand::Modify
                | v13::flow_mod::FlowModCommand::ModifyStrict
        );
        if fm.buffer_id == OFP_NO_BUFFER || !adds {
            return vec![];
        }
        let r = self.buffers.take(fm.buffer_id, now).and_then(|b| {
            self.publish();
            self.run_packet_out(b.data, b.in_port, &[DpAction::Output(dport::TABLE)], now)
        });
        match r {
            Ok(()) => vec![],
            Err(e) => vec![Out::Err(e)],
        }
    }

    fn group_mod(&mut self, gm: &v13::group_mod::GroupMod, now: u64) -> Result<(), OfpError> {
        let ch = self.groups.apply(gm, self.flows.writer(), now)?;
        self.dirty = true;
        for g in ch.deleted {
            let removed = self.flows.delete_where(
                |e| e.outputs_to_group(g),
                v13::packet_in::FlowRemovedReason::GroupDelete,
                now,
            );
            self.broadcast_flow_removed(removed);
        }
        Ok(())
    }

    fn meter_mod(&mut self, mm: &v13::meter_mod::MeterMod, now: u64) -> Result<(), OfpError> {
        let ch = self.meters.apply(mm, self.flows.writer(), now)?;
        self.dirty = true;
        for m in ch.deleted {
            let removed = self.flows.delete_where(
                |e| e.instructions.contains(&Instruction::Meter(m)),
                v13::packet_in::FlowRemovedReason::MeterDelete,
                now,
            );
            self.broadcast_flow_removed(removed);
        }
        Ok(())
    }

    fn port_mod(&mut self, pm: &PortMod) -> Result<(), OfpError> {
        if let Some(ch) = self.ports.port_mod(pm)? {
            self.port_changed(ch);
        }
        Ok(())
    }

    fn packet_out(&mut self, po: &PacketOut, now: u64) -> Result<(), OfpError> {
        self.counters.packet_outs += 1;
        let valid_in = po.in_port == port::CONTROLLER
            || po.in_port == port::ANY
            || po.in_port == port::LOCAL
            || self.ports.contains(po.in_port);
        if !valid_in {
            return Err(OfpError::new(
                ErrorKind::BAD_REQUEST_BAD_PORT,
                format!("in_port {} is not a port of the switch", po.in_port),
            ));
        }
        self.check_actions(&po.actions)?;
        let actions =
            actions_to_datapath(&po.actions).map_err(|e| OfpError::new(e.kind(), e.to_string()))?;
        let data = if po.buffer_id != OFP_NO_BUFFER {
            self.buffers.take(po.buffer_id, now)?.data
        } else {
            po.data.clone()
        };
        // The packet-out sees every earlier change (OFPP_TABLE, groups).
        self.publish();
        self.run_packet_out(data, po.in_port, &actions, now)
    }

    fn run_packet_out(
        &mut self,
        data: Vec<u8>,
        in_port: u32,
        actions: &[DpAction],
        now: u64,
    ) -> Result<(), OfpError> {
        let mut out = Outputs::new();
        {
            let dp = self.flows.datapath().clone();
            let mut b = dp.batch(&mut self.worker, now);
            b.packet_out(Packet::from_slice(&data), in_port, actions, &mut out);
        }
        if out.tx.is_empty() && out.normal.is_empty() {
            return Ok(());
        }
        if self.tx.transmit(out).is_err() {
            self.counters.packet_out_drops += 1;
        }
        Ok(())
    }

    /// OpenFlow 1.3.5 §6.3.5.
    fn role_request(&mut self, id: SessionId, r: Role) -> Result<Role, OfpError> {
        let current = |a: &Agent| Role {
            role: a
                .sessions
                .get(&id)
                .map_or(ControllerRole::Equal, |s| s.role),
            generation_id: a.generation.unwrap_or(0),
        };
        match r.role {
            ControllerRole::NoChange => return Ok(current(self)),
            ControllerRole::Equal => {}
            ControllerRole::Master | ControllerRole::Slave => {
                if let Some(g) = self.generation {
                    if (r.generation_id.wrapping_sub(g) as i64) < 0 {
                        return Err(OfpError::new(
                            ErrorKind::ROLE_REQUEST_FAILED_STALE,
                            format!("generation id {} is older than {g}", r.generation_id),
                        ));
                    }
                }
                self.generation = Some(r.generation_id);
            }
            ControllerRole::Unknown(n) => {
                return Err(OfpError::new(
                    ErrorKind::ROLE_REQUEST_FAILED_BAD_ROLE,
                    format!("role {n} does not exist"),
                ))
            }
        }
        if r.role == ControllerRole::Master {
            for (other, s) in self.sessions.iter_mut() {
                if *other != id && s.role == ControllerRole::Master {
                    s.role = ControllerRole::Slave;
                }
            }
        }
        if let Some(s) = self.sessions.get_mut(&id) {
            s.role = r.role;
        }
        Ok(current(self))
    }

    fn queue_config(&self, p: u32) -> Result<Vec<v13::Message>, OfpError> {
        if p != port::ANY && !self.ports.contains(p) {
            return Err(OfpError::new(
                ErrorKind::QUEUE_OP_FAILED_BAD_PORT,
                format!("port {p} does not exist"),
            ));
        }
        Ok(vec![v13::Message::QueueGetConfigReply(
            v13::queue_config::QueueGetConfigReply {
                port: p,
                queues: Vec::new(),
            },
        )])
    }

    /// Handles a 1.0 request by translating it to 1.3.
    fn request10(&mut self, id: SessionId, m: v10::Message, now: u64) -> Vec<Out> {
        match compat10::request_to_v13(m) {
            Ok(compat10::Request10::Plain(m13)) => self.request13(id, m13, now),
            Ok(compat10::Request10::FlowMod(t)) => {
                if self.is_slave(id) {
                    return self.request13(id, v13::Message::FlowMod(t.flow_mod), now);
                }
                match t.add_if_unmatched {
                    Some(add) if !self.modify_selects_any(&t.flow_mod) => {
                        self.flow_mod_request(&add, now)
                    }
                    _ => self.flow_mod_request(&t.flow_mod, now),
                }
            }
            Ok(compat10::Request10::None) => vec![],
            Err(e) => vec![Out::Err(e)],
        }
    }

    /// Whether a modify flow-mod selects at least one entry.
    fn modify_selects_any(&self, fm: &FlowMod) -> bool {
        let strict = fm.command == v13::flow_mod::FlowModCommand::ModifyStrict;
        let req = v13::multipart::FlowStatsRequest {
            table_id: fm.table_id,
            out_port: port::ANY,
            out_group: OFPG_ANY,
            cookie: fm.cookie,
            cookie_mask: fm.cookie_mask,
            match_: fm.match_.clone(),
        };
        match self.flows.flows().select(&req) {
            Ok(mut it) => it.any(|(_, _, e)| !strict || e.priority == fm.priority),
            Err(_) => false,
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

/// Table-mod (1.3.5 §7.3.3): tables take no configuration in 1.3 but the deprecated
/// miss bits, which are accepted and have no effect.
fn table_mod(tm: &TableMod) -> Result<(), OfpError> {
    const DEPRECATED_MASK: u32 = 3;
    if tm.table_id != v13::flow_mod::OFPTT_ALL && tm.table_id as usize >= crate::flows::NUM_TABLES {
        return Err(OfpError::new(
            ErrorKind::TABLE_MOD_FAILED_BAD_TABLE,
            format!("table {} does not exist", tm.table_id),
        ));
    }
    if tm.config & !DEPRECATED_MASK != 0 {
        return Err(OfpError::new(
            ErrorKind::TABLE_MOD_FAILED_BAD_CONFIG,
            format!("table config {:#x} is not supported", tm.config),
        ));
    }
    Ok(())
}

fn msg_name(m: &v13::Message) -> String {
    let s = format!("{m:?}");
    s.split(['(', ' ', '{'])
        .next()
        .unwrap_or("message")
        .to_string()
}
