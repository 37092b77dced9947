//! Drives the sans-IO agent with a sequence of steps over up to three connections
//! (open with a 1.0, 1.3 or 1.4 handshake; flow-mods, bundles, group-mods, role
//! requests, echoes, barriers and length-correct raw messages; flows enough for a
//! dump of several parts, dumped while another connection deletes them; a client that
//! stops reading (a flood of large echoes left unread) and later reads only part of
//! what waits; advancing time; closing) and checks after every step:
//!
//! - nothing panics;
//! - every byte the agent queues frames and decodes as an OpenFlow message;
//! - a connection with nothing left unsent takes input; one left unread past the
//!   backlog limit takes none;
//! - every barrier is answered once its connection's earlier output is read (at once
//!   when it is read as it comes), and no reply to a request sent before a barrier comes
//!   after that barrier's reply;
//! - a connection left unread delays no other: an echo on a connection read as it comes
//!   is answered at once;
//! - a dump read in part while its entries are deleted ends, lists no entry twice,
//!   none that never existed, and every one the delete left alone;
//! - the flow tables equal a model kept from the flow-mods (and committed bundles) the
//!   switch did not refuse: after every flow-mod, bundle message or raw message the
//!   target sends a barrier, then dumps the flows over a 1.3/1.4 connection and compares
//!   (table, priority, match) with the model.
//!
//! Raw messages never carry the types that can change flows (experimenter, flow-mod,
//! bundle control and add), and flows carry no timeouts, so only the modelled messages
//! change the tables.

#![no_main]

use std::collections::{BTreeMap, BTreeSet};

use datapath::pipeline::{Datapath, DatapathConfig, Outputs};
use libfuzzer_sys::arbitrary::{Result as AResult, Unstructured};
use libfuzzer_sys::fuzz_target;
use openflow::framing::Framer;
use openflow::match13::Match;
use openflow::text::parse_flow_mod;
use openflow::v13::bundle::{BundleAdd, BundleControl, BundleCtrlType};
use openflow::v13::flow_mod::{FlowMod, FlowModCommand};
use openflow::v13::group_mod::{GroupMod, GroupModCommand, GroupType};
use openflow::v13::multipart::{
    FlowStatsRequest, MultipartReplyBody, MultipartRequest, MultipartRequestBody, OFPMPF_REPLY_MORE,
};
use openflow::v13::role::{ControllerRole, Role};
use openflow::v13::{self, ErrorMsg};
use openflow::{ErrorKind, Frame, Message, Writer};
use switch::agent::{Agent, AgentConfig, SessionKind, Transmit};
use switch::ports::{PortSpec, PortTable};

const MS: u64 = 1_000_000;
/// How long the switch keeps an idle bundle.
const BUNDLE_IDLE_NS: u64 = 10_000 * MS;
/// The target's xids start above this; the switch numbers its own requests (echo) from 1,
/// so replies are told from them by xid.
const FIRST_XID: u32 = 1000;
/// Flow entries per part of a dump.
const DUMP_PART: usize = 4;

/// A flow's identity in the model: table, priority and its match as sorted OXM TLVs.
type Key = (u8, u16, Vec<Vec<u8>>);

struct Discard;

impl Transmit for Discard {
    fn transmit(&mut self, _: &mut Outputs) -> Result<(), switch::agent::TransmitError> {
        Ok(())
    }
}

struct Conn {
    id: u64,
    version: u8,
    framer: Framer,
    /// Each open bundle: when the target last sent a message for it, and the flow-mods it
    /// took without an error, in order.
    bundles: BTreeMap<u32, (u64, Vec<FlowMod>)>,
    /// The xid of the last barrier answered.
    barrier_done: u32,
    /// Whether the target leaves this connection's output unread (a stalled client) until
    /// a step reads it in full.
    unread: bool,
}

struct World {
    agent: Agent,
    conns: [Option<Conn>; 3],
    model: BTreeSet<Key>,
    now: u64,
    xid: u32,
}

fn key_of(fm: &FlowMod) -> Key {
    (fm.table_id, fm.priority, norm(&fm.match_))
}

fn norm(m: &Match) -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = m
        .fields
        .iter()
        .map(|o| {
            let mut w = Writer::new();
            o.encode(&mut w);
            w.into_vec()
        })
        .collect();
    v.sort();
    v
}

/// A flow-stats request for every flow.
fn all_flows() -> v13::Message {
    v13::Message::MultipartRequest(MultipartRequest {
        flags: 0,
        body: MultipartRequestBody::Flow(FlowStatsRequest::default()),
    })
}

fn apply(model: &mut BTreeSet<Key>, fm: &FlowMod) {
    match fm.command {
        FlowModCommand::Add => {
            model.insert(key_of(fm));
        }
        FlowModCommand::DeleteStrict => {
            model.remove(&key_of(fm));
        }
        FlowModCommand::Delete => {
            assert!(fm.match_.fields.is_empty(), "the model deletes only whole tables");
            model.retain(|k| k.0 != fm.table_id);
        }
        _ => {}
    }
}

fn new_agent() -> Agent {
    let specs = (1..=3u32)
        .map(|no| PortSpec {
            no,
            slot: (no - 1) as u16,
            name: format!("eth{no}"),
            hw_addr: [2, 0, 0, 0, 0, no as u8],
            speed_mbps: Some(10_000),
            up: true,
            backend: None,
        })
        .collect();
    let table = PortTable::new(specs, 0);
    let config = DatapathConfig { ports: table.datapath_ports(), ..DatapathConfig::default() };
    let (dp, writer, _packet_ins) = Datapath::new(config, 64);
    // Dumps of a few entries a part, so that the fuzzer's handfuls of flows make
    // dumps of several parts.
    let cfg = AgentConfig { dump_part: DUMP_PART, ..AgentConfig::default() };
    Agent::new(cfg, dp, writer, table, Box::new(Discard))
}

/// A flow-mod from a small vocabulary, as ovs-ofctl text; `None` when the text does not
/// parse (a combination the parser refuses).
fn arb_flow_mod(u: &mut Unstructured) -> AResult<Option<FlowMod>> {
    let command = *u.choose(&[
        FlowModCommand::Add,
        FlowModCommand::Add,
        FlowModCommand::ModifyStrict,
        FlowModCommand::DeleteStrict,
        FlowModCommand::Delete,
    ])?;
    let table = u.int_in_range(0..=2u8)?;
    if command == FlowModCommand::Delete {
        return Ok(parse_flow_mod(&format!("table={table}"), command).ok());
    }
    let priority = *u.choose(&[0u16, 1, 100])?;
    let mut text = format!("table={table},priority={priority}");
    match u.int_in_range(0..=2u8)? {
        1 => text.push_str(",in_port=1"),
        2 => text.push_str(",in_port=2"),
        _ => {}
    }
    match u.int_in_range(0..=2u8)? {
        1 => text.push_str(",ip"),
        2 => text.push_str(",arp"),
        _ => {}
    }
    match u.int_in_range(0..=3u8)? {
        1 => text.push_str(",nw_src=10.0.0.1"),
        2 => text.push_str(",nw_src=10.0.0.2"),
        3 => text.push_str(",nw_proto=17"),
        _ => {}
    }
    if command != FlowModCommand::DeleteStrict {
        let out = u.int_in_range(1..=3u8)?;
        text.push_str(&format!(",actions=output:{out}"));
    }
    Ok(parse_flow_mod(&text, command).ok())
}

impl World {
    fn next_xid(&mut self) -> u32 {
        self.xid += 1;
        self.xid
    }

    fn send(&mut self, c: usize, m: v13::Message) -> u32 {
        let xid = self.next_xid();
        let conn = self.conns[c].as_ref().unwrap();
        let bytes = Frame { version: conn.version, xid, message: Message::V13(m) }
            .encode()
            .expect("the target's message encodes");
        self.agent.receive(conn.id, &bytes, self.now);
        xid
    }

    /// Every frame queued on connection `c`, decoded; checks barrier order, and that a
    /// connection with nothing left unsent takes input again.
    fn read(&mut self, c: usize) -> Vec<Frame> {
        let now = self.now;
        let Some(conn) = self.conns[c].as_mut() else { return Vec::new() };
        conn.framer.push(&self.agent.transmit_all(conn.id, now));
        conn.unread = false;
        assert!(
            self.agent.is_closed(conn.id) || self.agent.wants_input(conn.id),
            "connection {c}: all its output read, yet it takes no input"
        );
        self.frames(c)
    }

    /// Up to `n` of the messages queued on connection `c`, as a client that reads slowly
    /// would take them; the connection stays unread.
    fn read_some(&mut self, c: usize, n: usize) -> Vec<Frame> {
        let now = self.now;
        let Some(id) = self.conns[c].as_ref().map(|k| k.id) else { return Vec::new() };
        let mut bytes = Vec::new();
        for _ in 0..n {
            match self.agent.poll_transmit(id) {
                Some(m) => bytes.extend_from_slice(&m),
                None => break,
            }
        }
        self.agent.transmitted(id, bytes.len(), now);
        self.conns[c].as_mut().unwrap().framer.push(&bytes);
        self.frames(c)
    }

    /// The whole frames connection `c`'s framer holds, decoded; checks barrier order.
    fn frames(&mut self, c: usize) -> Vec<Frame> {
        let now = self.now;
        let Some(conn) = self.conns[c].as_mut() else { return Vec::new() };
        let mut out = Vec::new();
        loop {
            let m = match conn.framer.next_message() {
                Ok(Some(m)) => m,
                Ok(None) => break,
                Err(e) => panic!("connection {c}: the switch sent bytes that do not frame: {e}"),
            };
            let f = Frame::decode(m).unwrap_or_else(|e| {
                panic!(
                    "connection {c}: the switch sent a message that does not decode: {e}: {m:02x?}"
                )
            });
            if f.xid > FIRST_XID && f.xid < conn.barrier_done {
                panic!(
                    "connection {c}: reply {f:?} to a request sent before barrier {} came after its reply",
                    conn.barrier_done
                );
            }
            if let Message::V13(v13::Message::BarrierReply)
            | Message::V10(openflow::v10::Message::BarrierReply) = &f.message
            {
                conn.barrier_done = conn.barrier_done.max(f.xid);
            }
            if let Message::V13(v13::Message::Error(ErrorMsg::Standard { kind, data })) = &f.message
            {
                if *kind == ErrorKind::BUNDLE_FAILED_TIMEOUT && data.is_empty() {
                    conn.bundles.retain(|_, b| b.0 + BUNDLE_IDLE_NS > now);
                }
            }
            out.push(f);
        }
        out
    }

    /// Reads every connection but those left unread; forgets those the switch closed.
    fn drain_all(&mut self) {
        for c in 0..3 {
            if self.conns[c].as_ref().is_some_and(|k| !k.unread) {
                self.read(c);
            }
            if let Some(conn) = &self.conns[c] {
                if self.agent.is_closed(conn.id) {
                    self.agent.remove(conn.id, self.now);
                    self.conns[c] = None;
                }
            }
        }
    }

    /// Sends a barrier on `c` behind whatever came before; the frames that came back,
    /// or `None` if the switch closed the connection.
    fn barrier(&mut self, c: usize) -> Option<Vec<Frame>> {
        let version = self.conns[c].as_ref()?.version;
        let xid = self.next_xid();
        let id = self.conns[c].as_ref().unwrap().id;
        let bytes = if version == openflow::OFP10_VERSION {
            Frame::v10(xid, openflow::v10::Message::BarrierRequest).encode().unwrap()
        } else {
            Frame { version, xid, message: Message::V13(v13::Message::BarrierRequest) }
                .encode()
                .unwrap()
        };
        self.agent.receive(id, &bytes, self.now);
        let got = self.read(c);
        if self.agent.is_closed(id) {
            self.drain_all();
            return None;
        }
        let pos = got
            .iter()
            .position(|f| f.xid == xid)
            .unwrap_or_else(|| panic!("connection {c}: barrier {xid} not answered: {got:?}"));
        assert!(
            matches!(
                got[pos].message,
                Message::V13(v13::Message::BarrierReply)
                    | Message::V10(openflow::v10::Message::BarrierReply)
            ),
            "connection {c}: barrier {xid} answered with {:?}",
            got[pos]
        );
        assert!(
            got[pos + 1..].iter().all(|f| f.xid <= FIRST_XID || f.xid > xid),
            "connection {c}: replies after barrier {xid}: {got:?}"
        );
        self.drain_all();
        Some(got)
    }

    fn error_for(got: &[Frame], xid: u32) -> bool {
        got.iter()
            .any(|f| f.xid == xid && matches!(f.message, Message::V13(v13::Message::Error(_))))
    }

    /// The kind of the standard error answering `xid`, if any.
    fn error_kind_for(got: &[Frame], xid: u32) -> Option<ErrorKind> {
        got.iter().find_map(|f| match &f.message {
            Message::V13(v13::Message::Error(ErrorMsg::Standard { kind, .. })) if f.xid == xid => {
                Some(*kind)
            }
            _ => None,
        })
    }

    /// Dumps the flows over a 1.3/1.4 connection (one read as it comes if there is one)
    /// and compares with the model.
    fn check_model(&mut self) {
        let v13 = |k: &Conn| k.version != openflow::OFP10_VERSION;
        let Some(c) = (0..3)
            .find(|&c| self.conns[c].as_ref().is_some_and(|k| v13(k) && !k.unread))
            .or_else(|| (0..3).find(|&c| self.conns[c].as_ref().is_some_and(v13)))
        else {
            return;
        };
        let xid = self.send(c, all_flows());
        let got = self.read(c);
        let mut seen = BTreeSet::new();
        let mut answered = false;
        for f in got.iter().filter(|f| f.xid == xid) {
            match &f.message {
                Message::V13(v13::Message::MultipartReply(r)) => {
                    answered = true;
                    let MultipartReplyBody::Flow(flows) = &r.body else {
                        panic!("flow stats answered with {f:?}")
                    };
                    for s in flows {
                        let k = (s.table_id, s.priority, norm(&s.match_));
                        assert!(seen.insert(k.clone()), "flow {k:?} reported twice");
                    }
                }
                other => panic!("flow stats request answered with {other:?}"),
            }
        }
        if !answered {
            assert!(
                self.agent.is_closed(self.conns[c].as_ref().unwrap().id),
                "flow stats not answered: {got:?}"
            );
            self.drain_all();
            return;
        }
        if seen != self.model {
            let extra: Vec<_> = seen.difference(&self.model).collect();
            let missing: Vec<_> = self.model.difference(&seen).collect();
            panic!("flow tables differ from the model: the switch has {extra:?} the model lacks; the model has {missing:?} the switch lacks");
        }
        self.drain_all();
    }

    fn live(&self, u: &mut Unstructured, need13: bool, need14: bool) -> AResult<Option<usize>> {
        let c = u.int_in_range(0..=2usize)?;
        Ok(self.conns[c]
            .as_ref()
            .filter(|k| (!need13 || k.version >= 4) && (!need14 || k.version >= 5))
            .map(|_| c))
    }

    fn step(&mut self, u: &mut Unstructured) -> AResult<()> {
        match u.int_in_range(0..=13u8)? {
            0 => {
                let c = u.int_in_range(0..=2usize)?;
                if self.conns[c].is_some() {
                    return Ok(());
                }
                let version = *u.choose(&[1u8, 4, 5])?;
                let kind =
                    if u.ratio(1, 4)? { SessionKind::Management } else { SessionKind::Controller };
                let id = self.agent.open(kind, "fuzz", self.now);
                self.conns[c] = Some(Conn {
                    id,
                    version,
                    framer: Framer::new(),
                    bundles: BTreeMap::new(),
                    barrier_done: 0,
                    unread: false,
                });
                let mut hello =
                    Frame::v13(0, v13::Message::Hello(v13::Hello::with_versions(&[version])))
                        .encode()
                        .unwrap();
                hello[0] = version;
                self.agent.receive(id, &hello, self.now);
                let got = self.read(c);
                assert!(
                    got.first().is_some_and(|f| matches!(
                        f.message,
                        Message::V13(v13::Message::Hello(_))
                            | Message::V10(openflow::v10::Message::Hello(_))
                    )),
                    "the switch did not say hello first: {got:?}"
                );
                self.drain_all();
            }
            1 => {
                let Some(c) = self.live(u, true, false)? else { return Ok(()) };
                let Some(fm) = arb_flow_mod(u)? else { return Ok(()) };
                let xid = self.send(c, v13::Message::FlowMod(fm.clone()));
                let Some(got) = self.barrier(c) else { return Ok(()) };
                if !Self::error_for(&got, xid) {
                    apply(&mut self.model, &fm);
                }
                self.check_model();
            }
            2 => {
                let Some(c) = self.live(u, true, true)? else { return Ok(()) };
                let Some(fm) = arb_flow_mod(u)? else { return Ok(()) };
                let bid = u.int_in_range(1..=2u32)?;
                let version = self.conns[c].as_ref().unwrap().version;
                let inner = Frame {
                    version,
                    xid: self.xid + 1,
                    message: Message::V13(v13::Message::FlowMod(fm.clone())),
                }
                .encode()
                .unwrap();
                let add =
                    BundleAdd { bundle_id: bid, flags: 3, message: inner, properties: Vec::new() };
                let xid = self.send(c, v13::Message::BundleAdd(add));
                let Some(got) = self.barrier(c) else { return Ok(()) };
                let now = self.now;
                // The switch's bundle counts as used by every add it takes up, refused
                // messages included; not by one refused before (a slave's, or one past
                // the connection's bundles).
                let kind = Self::error_kind_for(&got, xid);
                let untouched = matches!(
                    kind,
                    Some(ErrorKind::BAD_REQUEST_IS_SLAVE | ErrorKind::BUNDLE_FAILED_OUT_OF_BUNDLES)
                );
                if let Some(b) = self.conns[c].as_mut().and_then(|k| k.bundles.get_mut(&bid)) {
                    if !untouched {
                        b.0 = now;
                    }
                }
                if !Self::error_for(&got, xid) {
                    if let Some(conn) = self.conns[c].as_mut() {
                        let b = conn.bundles.entry(bid).or_default();
                        b.0 = now;
                        b.1.push(fm);
                    }
                }
                self.check_model();
            }
            3 => {
                let Some(c) = self.live(u, true, true)? else { return Ok(()) };
                let bid = u.int_in_range(1..=2u32)?;
                let ctrl_type = *u.choose(&[
                    BundleCtrlType::OpenRequest,
                    BundleCtrlType::CloseRequest,
                    BundleCtrlType::CommitRequest,
                    BundleCtrlType::DiscardRequest,
                ])?;
                let m =
                    BundleControl { bundle_id: bid, ctrl_type, flags: 3, properties: Vec::new() };
                let xid = self.send(c, v13::Message::BundleControl(m));
                let Some(got) = self.barrier(c) else { return Ok(()) };
                let failed = Self::error_for(&got, xid);
                let now = self.now;
                let Some(conn) = self.conns[c].as_mut() else { return Ok(()) };
                // Of the control messages only a close the switch takes counts as use
                // (a refused open of an open bundle does not).
                if let (Some(b), BundleCtrlType::CloseRequest, false) =
                    (conn.bundles.get_mut(&bid), ctrl_type, failed)
                {
                    b.0 = now;
                }
                match ctrl_type {
                    BundleCtrlType::OpenRequest if !failed => {
                        conn.bundles.insert(bid, (now, Vec::new()));
                    }
                    BundleCtrlType::CommitRequest => {
                        let fms = conn.bundles.remove(&bid).unwrap_or_default().1;
                        if !failed {
                            fms.iter().for_each(|fm| apply(&mut self.model, fm));
                        }
                    }
                    BundleCtrlType::DiscardRequest => {
                        conn.bundles.remove(&bid);
                    }
                    _ => {}
                }
                self.check_model();
            }
            4 => {
                let Some(c) = self.live(u, true, false)? else { return Ok(()) };
                let command = *u.choose(&[
                    GroupModCommand::Add,
                    GroupModCommand::Delete,
                    GroupModCommand::Modify,
                ])?;
                let group_id = u.int_in_range(1..=2u32)?;
                let m =
                    GroupMod { command, group_type: GroupType::All, group_id, buckets: Vec::new() };
                self.send(c, v13::Message::GroupMod(m));
                self.barrier(c);
                self.check_model();
            }
            5 => {
                let Some(c) = self.live(u, true, false)? else { return Ok(()) };
                let role = *u.choose(&[
                    ControllerRole::NoChange,
                    ControllerRole::Equal,
                    ControllerRole::Master,
                    ControllerRole::Slave,
                ])?;
                let generation_id = u.int_in_range(0..=3u64)?;
                self.send(c, v13::Message::RoleRequest(Role { role, generation_id }));
                self.barrier(c);
            }
            6 => {
                let Some(c) = self.live(u, true, false)? else { return Ok(()) };
                let n = u.int_in_range(0..=8usize)?;
                let data = u.bytes(n)?.to_vec();
                let xid = self.send(c, v13::Message::EchoRequest(data.clone()));
                let got = self.read(c);
                if !self.conns[c].as_ref().is_some_and(|k| self.agent.is_closed(k.id)) {
                    assert!(
                        got.iter().any(|f| f.xid == xid
                            && f.message == Message::V13(v13::Message::EchoReply(data.clone()))),
                        "echo {xid} not answered with its data: {got:?}"
                    );
                }
                self.drain_all();
            }
            7 => {
                let Some(c) = self.live(u, false, false)? else { return Ok(()) };
                self.barrier(c);
                self.check_model();
            }
            8 => {
                let Some(c) = self.live(u, false, false)? else { return Ok(()) };
                let conn = self.conns[c].as_ref().unwrap();
                let version = if u.ratio(1, 8)? { u.arbitrary::<u8>()? } else { conn.version };
                let ty = u.arbitrary::<u8>()?;
                if matches!(ty, 4 | 14 | 33 | 34) {
                    return Ok(());
                }
                let n = u.int_in_range(0..=48usize)?;
                let body = u.bytes(n)?;
                let id = conn.id;
                let xid = self.next_xid();
                let mut bytes = vec![version, ty];
                bytes.extend_from_slice(&((8 + body.len()) as u16).to_be_bytes());
                bytes.extend_from_slice(&xid.to_be_bytes());
                bytes.extend_from_slice(body);
                self.agent.receive(id, &bytes, self.now);
                self.barrier(c);
                self.check_model();
            }
            11 => {
                // A flood of echoes (behind up to two flow dumps) left unread: past the
                // backlog limit the connection takes no more input, whatever it sends.
                let Some(c) = self.live(u, true, false)? else { return Ok(()) };
                let n = u.int_in_range(1..=24usize)?;
                let len = *u.choose(&[0usize, 1000, 65_000])?;
                let fill = u.arbitrary::<u8>()?;
                let dumps = u.int_in_range(0..=2usize)?;
                self.conns[c].as_mut().unwrap().unread = true;
                let id = self.conns[c].as_ref().unwrap().id;
                for i in 0..n {
                    let m = if i < dumps {
                        all_flows()
                    } else {
                        v13::Message::EchoRequest(vec![fill; len])
                    };
                    self.send(c, m);
                }
                if (n - n.min(dumps)) * (len + 8) > switch::agent::BACKLOG_HIGH + len + 8
                    && !self.agent.is_closed(id)
                {
                    assert!(
                        !self.agent.wants_input(id),
                        "connection {c}: {n} echoes of {len} bytes left unread, yet it takes input"
                    );
                }
                self.drain_all();
            }
            12 => {
                let Some(c) = self.live(u, false, false)? else { return Ok(()) };
                if !self.conns[c].as_ref().unwrap().unread {
                    return Ok(());
                }
                let n = u.int_in_range(1..=8usize)?;
                self.read_some(c, n);
                self.drain_all();
            }
            13 => {
                // Flows enough for several dump parts, a dump of them read in part, the table emptied
                // (from this or another connection) before the rest is read: the dump
                // lists no entry twice, nothing that never existed, and every entry the
                // delete left alone.
                let Some(c) = self.live(u, true, false)? else { return Ok(()) };
                let n = u.int_in_range(1..=3 * DUMP_PART as u32)?;
                let k = u.int_in_range(0..=4usize)?;
                let d = u.int_in_range(0..=2usize)?;
                let mut sent = Vec::new();
                for i in 0..n {
                    let text = format!(
                        "table=2,priority=5,ip,nw_src=10.1.{}.{},actions=output:1",
                        i / 256,
                        i % 256
                    );
                    let fm = parse_flow_mod(&text, FlowModCommand::Add).unwrap();
                    sent.push((self.send(c, v13::Message::FlowMod(fm.clone())), fm));
                }
                let Some(got) = self.barrier(c) else { return Ok(()) };
                for (xid, fm) in &sent {
                    if !Self::error_for(&got, *xid) {
                        apply(&mut self.model, fm);
                    }
                }
                let before = self.model.clone();
                self.conns[c].as_mut().unwrap().unread = true;
                let dump = self.send(c, all_flows());
                let mut got = self.read_some(c, k);
                if self.conns[d].as_ref().is_some_and(|k| k.version != openflow::OFP10_VERSION) {
                    let del = parse_flow_mod("table=2", FlowModCommand::Delete).unwrap();
                    let xid = self.send(d, v13::Message::FlowMod(del.clone()));
                    let Some(got_d) = self.barrier(d) else { return Ok(()) };
                    if !Self::error_for(&got_d, xid) {
                        apply(&mut self.model, &del);
                    }
                    if d == c {
                        got.extend(got_d);
                    }
                }
                got.extend(self.read(c));
                let mut seen = BTreeSet::new();
                let mut last = false;
                for f in got.iter().filter(|f| f.xid == dump) {
                    let Message::V13(v13::Message::MultipartReply(r)) = &f.message else {
                        panic!("flow stats request answered with {f:?}")
                    };
                    assert!(!last, "dump goes on after its last part");
                    last = r.flags & OFPMPF_REPLY_MORE == 0;
                    let MultipartReplyBody::Flow(flows) = &r.body else {
                        panic!("flow stats answered with {f:?}")
                    };
                    for s in flows {
                        let k = (s.table_id, s.priority, norm(&s.match_));
                        assert!(before.contains(&k), "dump lists {k:?}, never installed");
                        assert!(seen.insert(k.clone()), "dump lists {k:?} twice");
                    }
                }
                if self.conns[c].as_ref().is_some_and(|k| !self.agent.is_closed(k.id)) {
                    assert!(last, "dump not finished once its connection was read");
                    let kept: BTreeSet<_> = before.iter().filter(|k| k.0 != 2).cloned().collect();
                    let missing: Vec<_> = kept.difference(&seen).collect();
                    assert!(missing.is_empty(), "dump leaves out {missing:?}");
                }
                self.drain_all();
                self.check_model();
            }
            9 => {
                self.now += u.int_in_range(0..=4000u64)? * MS;
                self.agent.handle_timeout(self.now);
                self.drain_all();
                self.check_model();
            }
            _ => {
                let c = u.int_in_range(0..=2usize)?;
                if let Some(conn) = self.conns[c].take() {
                    self.agent.remove(conn.id, self.now);
                    self.drain_all();
                }
            }
        }
        Ok(())
    }
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let mut w = World {
        agent: new_agent(),
        conns: [None, None, None],
        model: BTreeSet::new(),
        now: 0,
        xid: FIRST_XID,
    };
    for _ in 0..64 {
        if u.is_empty() || w.step(&mut u).is_err() {
            break;
        }
    }
});
