//! The agent driven directly, without sockets: connections are byte streams the tests
//! write OpenFlow messages into and decode replies from; the datapath is real (packets
//! run through it with injected times); packet-out traffic is captured.

use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex};

use datapath::pipeline::WorkerState;
use openflow::framing::Framer;
use openflow::v13::flow_mod::FlowModCommand;
use openflow::v13::multipart::{FlowStatsRequest, MultipartReplyBody, MultipartRequestBody};
use openflow::v13::role::AsyncConfig;
use openflow::{ErrorKind, OFP13_VERSION};

use super::*;
use crate::ports::PortSpec;
use crate::testing::{flow_mod, frame, send_frame, three_port_datapath, SEC};
use datapath::packet::Packet;
use openflow::action::{port, Action, OFPG_ANY};
use openflow::v13::packet_out::PacketOut;
use openflow::v13::port_status::PortMod;
use openflow::v13::role::Role;
use openflow::v13::switch_config::TableMod;

#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<Outputs>>>);

impl Transmit for Capture {
    fn transmit(&mut self, out: &mut Outputs) -> Result<(), crate::agent::TransmitError> {
        self.0.lock().unwrap().push(std::mem::take(out));
        Ok(())
    }
}

impl Capture {
    /// The ports the captured packets went to, in order.
    fn ports(&self) -> Vec<u32> {
        self.0.lock().unwrap().iter().flat_map(|o| o.tx.iter().map(|t| t.port)).collect()
    }
}

struct Rig {
    agent: Agent,
    dp: Datapath,
    worker: WorkerState,
    packet_ins: Receiver<DpPacketIn>,
    sent: Capture,
    framers: BTreeMap<SessionId, Framer>,
    xid: u32,
}

impl Rig {
    fn with(cfg: AgentConfig) -> Rig {
        let sent = Capture::default();
        let mut r = Rig::with_tx(cfg, Box::new(sent.clone()));
        r.sent = sent;
        r
    }

    /// A rig whose packet-outs go to `tx` (`sent` then captures nothing).
    fn with_tx(cfg: AgentConfig, tx: Box<dyn Transmit>) -> Rig {
        let (table, dp, writer, packet_ins, worker) = three_port_datapath();
        let agent = Agent::new(cfg, dp.clone(), writer, table, tx);
        let sent = Capture::default();
        Rig { agent, dp, worker, packet_ins, sent, framers: BTreeMap::new(), xid: 100 }
    }

    fn new() -> Rig {
        Rig::with(AgentConfig::default())
    }

    /// Opens a connection and completes the 1.3 handshake; the switch's HELLO is read.
    fn connect(&mut self, kind: SessionKind, version: u8) -> SessionId {
        let id = self.agent.open(kind, "tcp:192.0.2.9:6653", 0);
        self.framers.insert(id, Framer::new());
        let hello = Frame::v13(1, v13::Message::Hello(v13::Hello::with_versions(&[version])));
        let mut bytes = hello.encode().unwrap();
        bytes[0] = version;
        self.agent.receive(id, &bytes, 0);
        let got = self.read(id);
        assert!(matches!(got[0].message, Message::V13(v13::Message::Hello(_))));
        id
    }

    fn send13(&mut self, id: SessionId, m: v13::Message, now: u64) -> u32 {
        self.send_v(id, OFP13_VERSION, m, now)
    }

    /// Sends `m` in a frame of wire `version` (1.3 or 1.4); its xid.
    fn send_v(&mut self, id: SessionId, version: u8, m: v13::Message, now: u64) -> u32 {
        self.xid += 1;
        let bytes = Frame { version, xid: self.xid, message: Message::V13(m) }.encode().unwrap();
        self.agent.receive(id, &bytes, now);
        self.xid
    }

    /// Every message the switch queued on `id`.
    fn read(&mut self, id: SessionId) -> Vec<Frame> {
        let f = self.framers.get_mut(&id).unwrap();
        f.push(&self.agent.transmit_all(id, 0));
        let mut out = Vec::new();
        while let Some(m) = f.next_message().unwrap() {
            out.push(Frame::decode(m).unwrap());
        }
        out
    }

    fn flow(&mut self, id: SessionId, s: &str, cmd: FlowModCommand) {
        self.send13(id, v13::Message::FlowMod(flow_mod(s, cmd)), 0);
    }

    /// Sends a request and returns the error the switch answered it with.
    fn error_of(&mut self, id: SessionId, m: v13::Message) -> ErrorKind {
        let xid = self.send13(id, m, 0);
        let got = self.read(id);
        match got.as_slice() {
            [Frame {
                xid: x,
                message: Message::V13(v13::Message::Error(v13::ErrorMsg::Standard { kind, .. })),
                ..
            }] if *x == xid => *kind,
            other => panic!("expected one error, got {other:?}"),
        }
    }

    fn dump_flows(&mut self, id: SessionId) -> Vec<Frame> {
        let req = v13::multipart::MultipartRequest {
            flags: 0,
            body: MultipartRequestBody::Flow(FlowStatsRequest::default()),
        };
        let version = self.agent.version_of(id);
        self.send_v(id, version, v13::Message::MultipartRequest(req), 0);
        self.read(id)
    }

    /// Runs the test frame in on `in_port` through the datapath.
    fn packet(&mut self, in_port: u32, now: u64) -> Vec<u32> {
        send_frame(&self.dp, &mut self.worker, in_port, now)
    }

    /// Hands the datapath's queued packet-ins to the agent.
    fn deliver_packet_ins(&mut self, now: u64) {
        while let Ok(pi) = self.packet_ins.try_recv() {
            self.agent.packet_in(pi, now);
        }
    }
}

fn flows_in(frames: &[Frame]) -> Vec<v13::multipart::FlowStats> {
    frames
        .iter()
        .flat_map(|f| match &f.message {
            Message::V13(v13::Message::MultipartReply(r)) => match &r.body {
                MultipartReplyBody::Flow(v) => v.clone(),
                _ => vec![],
            },
            _ => vec![],
        })
        .collect()
}

#[test]
fn a_flow_mod_forwards_without_a_barrier_and_shows_in_flow_stats() {
    let mut r = Rig::new();
    let c = r.connect(SessionKind::Controller, OFP13_VERSION);
    r.flow(c, "in_port=1,actions=output:2", FlowModCommand::Add);
    assert!(r.read(c).is_empty(), "a good flow-mod has no reply");
    assert_eq!(r.packet(1, SEC), vec![2]);
    let flows = flows_in(&r.dump_flows(c));
    assert_eq!(flows.len(), 1);
    assert_eq!(flows[0].packet_count, 1);
    assert_eq!(flows[0].byte_count, 64);
}

#[test]
fn barrier_replies_after_the_changes_before_it() {
    let mut r = Rig::new();
    let c = r.connect(SessionKind::Controller, OFP13_VERSION);
    r.flow(c, "in_port=1,actions=output:3", FlowModCommand::Add);
    let xid = r.send13(c, v13::Message::BarrierRequest, 0);
    let got = r.read(c);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].xid, xid);
    assert!(matches!(got[0].message, Message::V13(v13::Message::BarrierReply)));
    assert_eq!(r.packet(1, SEC), vec![3]);
}

#[test]
fn errors_keep_the_connection_and_name_the_request() {
    let mut r = Rig::new();
    let c = r.connect(SessionKind::Controller, OFP13_VERSION);
    let fm = flow_mod("table=0,actions=group:7", FlowModCommand::Add);
    assert_eq!(r.error_of(c, v13::Message::FlowMod(fm)), ErrorKind::BAD_ACTION_BAD_OUT_GROUP);
    let fm = flow_mod("table=0,actions=meter:7,output:1", FlowModCommand::Add);
    assert_eq!(r.error_of(c, v13::Message::FlowMod(fm)), ErrorKind::METER_MOD_FAILED_UNKNOWN_METER);
    let tm = TableMod { table_id: 0, config: 8, properties: Vec::new() };
    assert_eq!(r.error_of(c, v13::Message::TableMod(tm)), ErrorKind::TABLE_MOD_FAILED_BAD_CONFIG);
    let fr = v13::FeaturesReply { datapath_id: 1, n_tables: 1, ..Default::default() };
    assert_eq!(r.error_of(c, v13::Message::FeaturesReply(fr)), ErrorKind::BAD_REQUEST_BAD_TYPE);
    let po = PacketOut { buffer_id: OFP_NO_BUFFER, in_port: 9, actions: vec![], data: frame() };
    assert_eq!(r.error_of(c, v13::Message::PacketOut(po)), ErrorKind::BAD_REQUEST_BAD_PORT);
    let po =
        PacketOut { buffer_id: 0x1234, in_port: port::CONTROLLER, actions: vec![], data: vec![] };
    assert_eq!(r.error_of(c, v13::Message::PacketOut(po)), ErrorKind::BAD_REQUEST_BUFFER_UNKNOWN);
    // Still serving.
    r.flow(c, "actions=output:2", FlowModCommand::Add);
    assert_eq!(flows_in(&r.dump_flows(c)).len(), 1);
    assert!(!r.agent.is_closed(c));
}

#[test]
fn packet_in_buffers_and_packet_out_releases_the_buffer() {
    let mut r = Rig::new();
    let c = r.connect(SessionKind::Controller, OFP13_VERSION);
    r.flow(c, "priority=0,actions=CONTROLLER:32", FlowModCommand::Add);
    assert!(r.packet(1, SEC).is_empty());
    r.deliver_packet_ins(SEC);
    let got = r.read(c);
    let Message::V13(v13::Message::PacketIn(pi)) = &got[0].message else {
        panic!("expected a packet-in, got {got:?}")
    };
    assert_eq!(pi.data, frame()[..32]);
    assert_eq!(pi.total_len, 64);
    assert_ne!(pi.buffer_id, OFP_NO_BUFFER);
    assert_eq!(pi.match_.get(openflow::oxm::OxmField::InPort), Some(&Oxm::InPort(1)));
    let po = PacketOut {
        buffer_id: pi.buffer_id,
        in_port: 1,
        actions: vec![Action::Output { port: 3, max_len: 0 }],
        data: vec![],
    };
    r.send13(c, v13::Message::PacketOut(po.clone()), SEC);
    assert!(r.read(c).is_empty());
    assert_eq!(r.sent.ports(), vec![3]);
    let captured = r.sent.0.lock().unwrap()[0].tx[0].packet.data().to_vec();
    assert_eq!(captured, frame(), "the whole buffered frame goes out");
    assert_eq!(r.error_of(c, v13::Message::PacketOut(po)), ErrorKind::BAD_REQUEST_BUFFER_EMPTY);
}

#[test]
fn a_packet_in_of_a_super_frame_is_cut_to_fit_a_message() {
    let mut r = Rig::new();
    let c = r.connect(SessionKind::Controller, OFP13_VERSION);
    let mut key = datapath::key::FlowKey::ZERO;
    key.set(datapath::key::Field::InPort, 1);
    let big = vec![0x5a; 65_500];
    r.agent.packet_in(
        DpPacketIn {
            reason: datapath::pipeline::PacketInReason::Action,
            table_id: 0,
            cookie: 0,
            in_port: 1,
            key,
            max_len: openflow::action::OFPCML_NO_BUFFER,
            total_len: big.len(),
            data: big.clone(),
        },
        SEC,
    );
    let got = r.read(c);
    let Message::V13(v13::Message::PacketIn(pi)) = &got[0].message else {
        panic!("expected a packet-in, got {got:?}")
    };
    assert_eq!(pi.data.len(), PACKET_IN_DATA_MAX);
    assert_eq!(pi.data[..], big[..PACKET_IN_DATA_MAX]);
    assert_eq!(usize::from(pi.total_len), big.len());
    assert_eq!(pi.buffer_id, OFP_NO_BUFFER);
}

#[test]
fn packet_out_to_table_runs_the_pipeline() {
    let mut r = Rig::new();
    let c = r.connect(SessionKind::Controller, OFP13_VERSION);
    r.flow(c, "in_port=2,actions=output:1", FlowModCommand::Add);
    let po = PacketOut {
        buffer_id: OFP_NO_BUFFER,
        in_port: 2,
        actions: vec![Action::Output { port: port::TABLE, max_len: 0 }],
        data: frame(),
    };
    r.send13(c, v13::Message::PacketOut(po), 0);
    assert_eq!(r.sent.ports(), vec![1]);
    assert_eq!(flows_in(&r.dump_flows(c))[0].packet_count, 1);
}

#[test]
fn roles_generation_ids_and_slave_restrictions() {
    let mut r = Rig::new();
    let a = r.connect(SessionKind::Controller, OFP13_VERSION);
    let b = r.connect(SessionKind::Controller, OFP13_VERSION);
    let role = |role, generation_id| v13::Message::RoleRequest(Role { role, generation_id });
    r.send13(a, role(ControllerRole::Master, 5), 0);
    let got = r.read(a);
    assert!(
        matches!(&got[0].message, Message::V13(v13::Message::RoleReply(x)) if x.role == ControllerRole::Master && x.generation_id == 5)
    );
    r.send13(b, role(ControllerRole::Master, 6), 0);
    r.read(b);
    // a was demoted.
    r.send13(a, role(ControllerRole::NoChange, 0), 0);
    let got = r.read(a);
    assert!(
        matches!(&got[0].message, Message::V13(v13::Message::RoleReply(x)) if x.role == ControllerRole::Slave && x.generation_id == 6)
    );
    assert_eq!(
        r.error_of(a, role(ControllerRole::Master, 4)),
        ErrorKind::ROLE_REQUEST_FAILED_STALE
    );
    let fm = flow_mod("actions=output:2", FlowModCommand::Add);
    assert_eq!(r.error_of(a, v13::Message::FlowMod(fm)), ErrorKind::BAD_REQUEST_IS_SLAVE);
    // Only the master gets packet-ins.
    r.flow(b, "priority=0,actions=CONTROLLER:65535", FlowModCommand::Add);
    r.packet(1, SEC);
    r.deliver_packet_ins(SEC);
    assert!(r.read(a).is_empty());
    assert_eq!(r.read(b).len(), 1);
    // A slave that asks for packet-ins through its async config gets them.
    let cfg = AsyncConfig { packet_in_mask: [0, 0b11], ..default_async() };
    r.send13(a, v13::Message::SetAsync(cfg), 0);
    r.packet(1, SEC);
    r.deliver_packet_ins(SEC);
    assert_eq!(r.read(a).len(), 1);
    assert_eq!(
        r.error_of(a, role(ControllerRole::Unknown(9), 0)),
        ErrorKind::ROLE_REQUEST_FAILED_BAD_ROLE
    );
}

#[test]
fn long_flow_stats_replies_are_split() {
    let mut r = Rig::new();
    let c = r.connect(SessionKind::Controller, OFP13_VERSION);
    for i in 0..1500u32 {
        let s = format!("tcp,nw_src=10.0.{}.{},tp_dst={},actions=output:2", i / 256, i % 256, i);
        r.flow(c, &s, FlowModCommand::Add);
    }
    let frames = r.dump_flows(c);
    assert!(frames.len() > 1, "{} messages", frames.len());
    for (i, f) in frames.iter().enumerate() {
        let Message::V13(v13::Message::MultipartReply(m)) = &f.message else {
            panic!("not a reply")
        };
        let more = m.flags & v13::multipart::OFPMPF_REPLY_MORE != 0;
        assert_eq!(more, i + 1 < frames.len());
    }
    assert_eq!(flows_in(&frames).len(), 1500);
}

#[test]
fn port_mod_reports_port_status_and_bad_ports_are_refused() {
    let mut r = Rig::new();
    let c = r.connect(SessionKind::Controller, OFP13_VERSION);
    let m = r.connect(SessionKind::Management, OFP13_VERSION);
    let pm = PortMod {
        port_no: 2,
        hw_addr: openflow::wire::MacAddr([2, 0, 0, 0, 0, 2]),
        config: v13::port::port_config::NO_FWD,
        mask: v13::port::port_config::NO_FWD,
        advertise: 0,
        properties: None,
    };
    r.send13(m, v13::Message::PortMod(pm.clone()), 0);
    for id in [c, m] {
        let got = r.read(id);
        assert!(
            matches!(&got[0].message, Message::V13(v13::Message::PortStatus(s)) if s.port.port_no == 2 && s.port.config == v13::port::port_config::NO_FWD),
            "{got:?}"
        );
    }
    r.flow(c, "in_port=1,actions=output:2", FlowModCommand::Add);
    assert!(r.packet(1, SEC).is_empty(), "no-fwd port gets nothing");
    let bad = PortMod { port_no: 9, ..pm };
    assert_eq!(r.error_of(c, v13::Message::PortMod(bad)), ErrorKind::PORT_MOD_FAILED_BAD_PORT);
    r.agent.link(3, false);
    let got = r.read(c);
    assert!(
        matches!(&got[0].message, Message::V13(v13::Message::PortStatus(s)) if s.port.port_no == 3)
    );
}

#[test]
fn standalone_fails_open_while_no_controller_is_connected() {
    let cfg = AgentConfig { fail_mode: FailMode::Standalone, ..AgentConfig::default() };
    let mut r = Rig::with(cfg);
    assert!(r.agent.in_fail_open());
    let mut out = Outputs::new();
    r.dp.process(&mut r.worker, Packet::from_slice(&frame()), 1, 0, &mut out);
    assert_eq!(out.normal.len(), 1, "fail-open hands packets to the learning switch");
    let m = r.connect(SessionKind::Management, OFP13_VERSION);
    assert!(r.agent.in_fail_open(), "the management socket is no controller");
    let c = r.connect(SessionKind::Controller, OFP13_VERSION);
    assert!(!r.agent.in_fail_open());
    assert!(flows_in(&r.dump_flows(m)).is_empty(), "the fail-open rule is hidden");
    let mut out = Outputs::new();
    r.dp.process(&mut r.worker, Packet::from_slice(&frame()), 1, 0, &mut out);
    assert!(out.normal.is_empty(), "a connected controller's (empty) tables decide");
    r.agent.remove(c, 0);
    assert!(r.agent.in_fail_open());
    // Secure mode never fails open.
    let r = Rig::new();
    assert!(!r.agent.in_fail_open());
}

#[test]
fn deleting_everything_clears_the_tables_yet_reports_and_keeps_the_fail_open_rule() {
    let cfg = AgentConfig { fail_mode: FailMode::Standalone, ..AgentConfig::default() };
    let mut r = Rig::with(cfg);
    let m = r.connect(SessionKind::Management, OFP13_VERSION);
    r.flow(m, "in_port=1,send_flow_rem,actions=output:2", FlowModCommand::Add);
    r.flow(m, "in_port=3,actions=output:2", FlowModCommand::Add);
    r.flow(m, "table=1,in_port=3,actions=output:1", FlowModCommand::Add);
    r.read(m);
    // Table 0 also holds the hidden fail-open rule: its entries go one by one.
    r.flow(m, "", FlowModCommand::Delete);
    let got = r.read(m);
    let removed: Vec<u64> = got
        .iter()
        .filter_map(|f| match &f.message {
            Message::V13(v13::Message::FlowRemoved(fr)) => Some(fr.packet_count),
            _ => None,
        })
        .collect();
    assert_eq!(removed, [0], "the flow-removed is sent");
    let mut out = Outputs::new();
    r.dp.process(&mut r.worker, Packet::from_slice(&frame()), 1, 0, &mut out);
    assert_eq!(out.normal.len(), 1, "fail-open still forwards");
    assert_eq!(r.agent.flows().datapath().current().table_len(1), 0, "table 1 cleared");
    // Without the hidden rule, table 0 is cleared whole, and its flow-removed still goes.
    let c = r.connect(SessionKind::Controller, OFP13_VERSION);
    r.flow(c, "in_port=1,send_flow_rem,actions=output:2", FlowModCommand::Add);
    r.read(c);
    assert_eq!(r.agent.flows().datapath().current().table_len(0), 1);
    r.dp.process(&mut r.worker, Packet::from_slice(&frame()), 1, 0, &mut Outputs::new());
    r.flow(c, "", FlowModCommand::Delete);
    assert!(r.read(c).iter().any(|f| matches!(
        &f.message,
        Message::V13(v13::Message::FlowRemoved(fr)) if fr.packet_count == 1
    )));
    assert_eq!(r.agent.flows().datapath().current().table_len(0), 0);
}

#[test]
fn dead_peers_close_and_flows_expire_with_flow_removed() {
    let mut r = Rig::new();
    let c = r.connect(SessionKind::Controller, OFP13_VERSION);
    r.flow(c, "hard_timeout=2,send_flow_rem,actions=output:2", FlowModCommand::Add);
    let t = r.agent.next_timeout().unwrap();
    assert!(t <= 2 * SEC);
    r.agent.handle_timeout(2 * SEC);
    let got = r.read(c);
    assert!(got.iter().any(|f| matches!(&f.message, Message::V13(v13::Message::FlowRemoved(_)))));
    r.agent.handle_timeout(60 * SEC);
    assert!(r.agent.is_closed(c));
}

#[test]
fn startup_flows_forward_at_once_and_show_to_controllers() {
    let mut r = Rig::new();
    let fm = flow_mod("in_port=1,actions=output:3", FlowModCommand::Add);
    r.agent.flow_mod(&fm, 0).unwrap();
    assert_eq!(r.packet(1, SEC), vec![3]);
    let c = r.connect(SessionKind::Controller, OFP13_VERSION);
    assert_eq!(flows_in(&r.dump_flows(c)).len(), 1);
    let bad = flow_mod("actions=group:1", FlowModCommand::Add);
    assert_eq!(r.agent.flow_mod(&bad, 0).unwrap_err().kind, ErrorKind::BAD_ACTION_BAD_OUT_GROUP);
}

#[test]
fn peregrine_requests_answer_with_json_and_unknown_types_are_refused() {
    let mut r = Rig::new();
    let m = r.connect(SessionKind::Management, OFP13_VERSION);
    r.flow(m, "table=3,actions=output:2", FlowModCommand::Add);
    let req = |t| {
        v13::Message::Experimenter(v13::Experimenter {
            experimenter: PEREGRINE_EXPERIMENTER,
            exp_type: t,
            data: b"{}".to_vec(),
        })
    };
    let xid = r.send13(m, req(exp_type::STATUS), 0);
    let got = r.read(m);
    let Message::V13(v13::Message::Experimenter(e)) = &got[0].message else { panic!("{got:?}") };
    assert_eq!(got[0].xid, xid);
    let v: serde_json::Value = serde_json::from_slice(&e.data).unwrap();
    assert_eq!(v["flows_per_table"]["3"], 1);
    assert_eq!(v["connections"][0]["kind"], "management");
    assert_eq!(v["connections"][0]["version"], "OF1.3");
    assert_eq!(r.error_of(m, req(999)), ErrorKind::BAD_REQUEST_BAD_EXP_TYPE);
}

/// A fast tier whose dump is a document of `entries` entries (about 100 bytes each); it
/// counts the agent's requests to credit its hits.
struct BigTier {
    entries: usize,
    syncs: std::sync::atomic::AtomicUsize,
}

impl crate::fastpath::FastPathView for BigTier {
    fn dump(&self) -> serde_json::Value {
        let entries: Vec<serde_json::Value> = (0..self.entries)
            .map(|i| serde_json::json!({"key": format!("in_port=1,tp_src={i}"), "packets": i}))
            .collect();
        serde_json::json!({"enabled": true, "entries": entries})
    }
    fn verdict(&self, _: &datapath::key::FlowKey) -> String {
        String::new()
    }
    fn sync_counters(&self) {
        self.syncs.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
}

#[test]
fn a_fast_path_dump_of_any_size_comes_back_as_a_multipart_reply() {
    let mut r = Rig::new();
    let tier = Arc::new(BigTier { entries: 5000, syncs: Default::default() });
    r.agent.set_fast_path(tier.clone());
    let m = r.connect(SessionKind::Management, OFP13_VERSION);
    let ask = |body| {
        v13::Message::MultipartRequest(openflow::v13::multipart::MultipartRequest {
            flags: 0,
            body,
        })
    };
    // Too long for one OFPT_EXPERIMENTER: refused, saying how to ask.
    let plain = v13::Message::Experimenter(v13::Experimenter {
        experimenter: PEREGRINE_EXPERIMENTER,
        exp_type: exp_type::FAST_PATH,
        data: b"{}".to_vec(),
    });
    assert_eq!(r.error_of(m, plain), ErrorKind::BAD_REQUEST_MULTIPART_BUFFER_OVERFLOW);

    let xid = r.send13(
        m,
        ask(MultipartRequestBody::Experimenter(v13::Experimenter {
            experimenter: PEREGRINE_EXPERIMENTER,
            exp_type: exp_type::FAST_PATH,
            data: b"{}".to_vec(),
        })),
        0,
    );
    let got = r.read(m);
    assert!(got.len() > 1, "{} messages", got.len());
    let mut data = Vec::new();
    for (i, f) in got.iter().enumerate() {
        assert_eq!(f.xid, xid);
        let Message::V13(v13::Message::MultipartReply(mp)) = &f.message else { panic!("{f:?}") };
        let more = mp.flags & openflow::v13::multipart::OFPMPF_REPLY_MORE != 0;
        assert_eq!(more, i + 1 < got.len(), "part {i}");
        let MultipartReplyBody::Experimenter(v13::Experimenter {
            experimenter,
            exp_type: t,
            data: d,
        }) = &mp.body
        else {
            panic!("{:?}", mp.body)
        };
        assert_eq!((*experimenter, *t), (PEREGRINE_EXPERIMENTER, exp_type::FAST_PATH));
        data.extend_from_slice(d);
    }
    let v: serde_json::Value = serde_json::from_slice(&data).unwrap();
    assert_eq!(v["entries"].as_array().unwrap().len(), 5000);
    assert_eq!(v["entries"][4999]["packets"], 4999);
    // The dump credits the tier's hits itself; a statistics request has the agent do it.
    let syncs = || tier.syncs.load(std::sync::atomic::Ordering::Relaxed);
    assert_eq!(syncs(), 0);
    r.send13(m, ask(MultipartRequestBody::Table), 0);
    assert!(!r.read(m).is_empty());
    assert_eq!(syncs(), 1);

    // Another experimenter's multipart request is still refused.
    let other = ask(MultipartRequestBody::Experimenter(v13::Experimenter {
        experimenter: 0x1234,
        exp_type: 1,
        data: vec![],
    }));
    assert_eq!(r.error_of(m, other), ErrorKind::BAD_REQUEST_BAD_EXPERIMENTER);
}

#[test]
fn set_field_without_its_prerequisite_is_refused_and_the_connection_lives() {
    use openflow::text::parse_group_mod;
    use openflow::v13::group_mod::GroupModCommand;
    let mut r = Rig::new();
    let c = r.connect(SessionKind::Controller, OFP13_VERSION);
    let inconsistent = ErrorKind::BAD_ACTION_MATCH_INCONSISTENT;
    for s in [
        "ip,actions=set_field:80->tcp_dst,output:1",
        "actions=set_field:80->tcp_dst,output:1",
        "ip,actions=write_actions(set_field:80->tcp_dst,output:1)",
        "arp,actions=set_field:10.0.0.1->ip_src,output:1",
        "actions=set_field:3->vlan_pcp,output:1",
    ] {
        let fm = flow_mod(s, FlowModCommand::Add);
        assert_eq!(r.error_of(c, v13::Message::FlowMod(fm)), inconsistent, "{s}");
    }
    assert!(flows_in(&r.dump_flows(c)).is_empty());
    // With the prerequisite (or a push that makes it hold) the same actions install.
    for s in [
        "tcp,actions=set_field:80->tcp_dst,output:1",
        "tcp6,actions=write_actions(set_field:80->tcp_dst,output:1)",
        "in_port=2,actions=push_vlan:0x8100,set_field:3->vlan_pcp,output:1",
        "in_port=3,actions=set_field:00:11:22:33:44:55->eth_dst,output:1",
    ] {
        r.flow(c, s, FlowModCommand::Add);
        assert!(r.read(c).is_empty(), "{s}: refused");
    }
    assert_eq!(flows_in(&r.dump_flows(c)).len(), 4);
    // A group whose bucket sets tcp_dst: accepted alone (no flow leads there yet), and
    // for flows that match TCP; a flow matching only IP may not send to it.
    // The group-mod of ovs-ofctl text `s` with `command`.
    let group_mod = |s: &str, command| v13::Message::GroupMod(parse_group_mod(s, command).unwrap());
    let add = group_mod(
        "group_id=1,type=all,bucket=set_field:80->tcp_dst,output:1",
        GroupModCommand::Add,
    );
    r.send13(c, add, 0);
    assert!(r.read(c).is_empty(), "group refused");
    let fm = flow_mod("ip,actions=group:1", FlowModCommand::Add);
    assert_eq!(r.error_of(c, v13::Message::FlowMod(fm)), inconsistent);
    let fm = flow_mod("ip,actions=write_actions(group:1)", FlowModCommand::Add);
    assert_eq!(r.error_of(c, v13::Message::FlowMod(fm)), inconsistent);
    r.flow(c, "priority=9,tcp,actions=group:1", FlowModCommand::Add);
    assert!(r.read(c).is_empty(), "tcp flow to group 1 refused");
    // Modifying the group to set a field the TCP flow cannot have is refused; the group
    // keeps its buckets.
    let modify = group_mod(
        "group_id=1,type=all,bucket=set_field:5->udp_dst,output:1",
        GroupModCommand::Modify,
    );
    assert_eq!(r.error_of(c, modify), inconsistent);
    let modify = group_mod(
        "group_id=1,type=all,bucket=set_field:10.0.0.7->ip_dst,output:2",
        GroupModCommand::Modify,
    );
    r.send13(c, modify, 0);
    assert!(r.read(c).is_empty(), "consistent modify refused");
    // Still serving.
    assert_eq!(flows_in(&r.dump_flows(c)).len(), 5);
    assert!(!r.agent.is_closed(c));
}

mod of14;
mod pace;
mod port_admin;
mod saved;
mod v10;

#[test]
fn the_log_hears_of_connects_roles_disconnects_and_refusals() {
    let mut r = Rig::new();
    let notices = |r: &mut Rig| std::iter::from_fn(|| r.agent.poll_notice()).collect::<Vec<_>>();
    let m = r.connect(SessionKind::Management, OFP13_VERSION);
    let c1 = r.connect(SessionKind::Controller, OFP13_VERSION);
    let c2 = r.connect(SessionKind::Controller, openflow::OFP10_VERSION);
    let peer = "tcp:192.0.2.9:6653".to_string();
    assert_eq!(
        notices(&mut r),
        vec![
            Notice::Connected { peer: peer.clone(), version: 4 },
            Notice::Connected { peer: peer.clone(), version: 1 },
        ],
        "a management connection is not a controller's"
    );
    let master =
        |g| v13::Message::RoleRequest(Role { role: ControllerRole::Master, generation_id: g });
    r.send13(c1, master(1), 0);
    r.send13(c1, master(1), 0);
    let master_line =
        Notice::Role { peer: peer.clone(), role: ControllerRole::Master, demoted_by: None };
    assert_eq!(notices(&mut r), vec![master_line.clone()], "no change, no line");
    // Another master makes the first a slave.
    let c3 = r.connect(SessionKind::Controller, OFP13_VERSION);
    r.send13(c3, master(2), 0);
    let demoted = Notice::Role {
        peer: peer.clone(),
        role: ControllerRole::Slave,
        demoted_by: Some(peer.clone()),
    };
    assert_eq!(
        notices(&mut r),
        vec![Notice::Connected { peer: peer.clone(), version: 4 }, demoted, master_line]
    );
    r.agent.remove(c2, 7 * SEC);
    r.agent.remove(m, 7 * SEC);
    assert_eq!(
        notices(&mut r),
        vec![Notice::Disconnected {
            peer: peer.clone(),
            secs: 7,
            why: "closed by the peer".into()
        }]
    );
    // A peer offering only 1.5 is refused, and told why.
    let id = r.agent.open(SessionKind::Controller, "tcp:192.0.2.7:40000", 0);
    let hello = Frame {
        version: 6,
        xid: 1,
        message: Message::V13(v13::Message::Hello(v13::Hello::with_versions(&[6]))),
    };
    r.agent.receive(id, &hello.encode().unwrap(), 0);
    assert!(r.agent.is_closed(id));
    r.agent.remove(id, 0);
    let got = notices(&mut r);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(
        got[0].to_string(),
        "connection from tcp:192.0.2.7:40000 refused: version negotiation failed \
         (we support versions 0x01, 0x04, 0x05, peer supports version 0x06)"
    );
}

#[test]
fn the_error_counter_counts_every_error_sent_also_on_closed_connections() {
    let mut r = Rig::new();
    let c = r.connect(SessionKind::Controller, OFP13_VERSION);
    // A message the codec refuses (a flow-mod cut short), answered by the connection.
    let mut bad =
        Frame::v13(7, v13::Message::FlowMod(flow_mod("actions=drop", FlowModCommand::Add)))
            .encode()
            .unwrap();
    bad.truncate(20);
    bad[2..4].copy_from_slice(&20u16.to_be_bytes());
    r.agent.receive(c, &bad, 0);
    // One the agent refuses.
    let fm = flow_mod("table=0,actions=group:7", FlowModCommand::Add);
    r.send13(c, v13::Message::FlowMod(fm), 0);
    let errors = r
        .read(c)
        .iter()
        .filter(|f| matches!(f.message, Message::V13(v13::Message::Error(_))))
        .count();
    assert_eq!(errors, 2);
    assert_eq!(r.agent.counters().errors_sent, 2);
    // The log names the malformed one (the refused flow-mod is no news for it).
    let said: Vec<String> =
        std::iter::from_fn(|| r.agent.poll_notice()).map(|n| n.to_string()).collect();
    let bad: Vec<&String> = said.iter().filter(|l| l.contains("malformed")).collect();
    assert_eq!(bad.len(), 1, "{said:?}");
    assert!(
        bad[0].starts_with(
            "connection tcp:192.0.2.9:6653: malformed message refused (message type 14: "
        ),
        "{}",
        bad[0]
    );
    // A peer offering no common version is refused with an error, then closed.
    let other = r.agent.open(SessionKind::Controller, "tcp:192.0.2.8:1", 0);
    let hello = Frame::v13(1, v13::Message::Hello(v13::Hello::with_versions(&[6])));
    let mut bytes = hello.encode().unwrap();
    bytes[0] = 6;
    r.agent.receive(other, &bytes, 0);
    while r.agent.poll_transmit(other).is_some() {}
    r.agent.remove(other, 0);
    assert_eq!(r.agent.counters().errors_sent, 3, "the closed connection's error still counts");
}

#[test]
fn the_log_says_when_flows_and_connections_pass_their_soft_limits() {
    let cfg = AgentConfig { flow_soft_limit: 3, connection_soft_limit: 2, ..Default::default() };
    let mut r = Rig::with(cfg);
    let c = r.connect(SessionKind::Controller, OFP13_VERSION);
    let said = |r: &mut Rig| -> Vec<String> {
        std::iter::from_fn(|| r.agent.poll_notice())
            .map(|n| n.to_string())
            .filter(|l| l.contains("soft limit"))
            .collect()
    };
    for i in 0..7 {
        r.flow(c, &format!("priority={i},actions=output:2"), FlowModCommand::Add);
    }
    assert_eq!(
        said(&mut r),
        vec![
            "3 flow entries, past the soft limit of 3 (said again at each doubling)",
            "6 flow entries, past the soft limit of 3 (said again at each doubling)",
        ]
    );
    r.connect(SessionKind::Controller, OFP13_VERSION);
    assert_eq!(
        said(&mut r),
        vec!["2 connections, past the soft limit of 2 (said again at each doubling)"]
    );
}
