//! The TRACE request driven through the agent as a management client would: flows and
//! groups installed by flow-mods and group-mods, the trace asked for in an experimenter
//! message, the JSON reply checked; the datapath is real.

use datapath::pipeline::{Datapath, Outputs, WorkerState};
use openflow::framing::Framer;
use openflow::text::{parse_flow_mod, parse_group_mod, parse_meter_mod};
use openflow::v13::flow_mod::FlowModCommand;
use openflow::v13::group_mod::GroupModCommand;
use openflow::v13::meter_mod::MeterModCommand;
use openflow::v13::multipart::{FlowStatsRequest, MultipartReplyBody, MultipartRequestBody};
use openflow::{v13, Frame, Message};
use serde_json::Value;

use super::*;
use crate::agent::{
    exp_type, AgentConfig, FailMode, SessionId, SessionKind, Transmit, PEREGRINE_EXPERIMENTER,
};
use crate::testing::three_port_datapath;

struct Discard;

impl Transmit for Discard {
    fn transmit(&mut self, _: &mut Outputs) -> Result<(), crate::agent::TransmitError> {
        Ok(())
    }
}

/// An agent over a datapath with ports 1..=3 (eth1..eth3) and one connection.
struct Rig {
    agent: Agent,
    dp: Datapath,
    worker: WorkerState,
    conn: SessionId,
    framer: Framer,
    xid: u32,
}

impl Rig {
    fn new(fail_mode: FailMode, kind: SessionKind) -> Rig {
        let (table, dp, writer, _packet_ins, worker) = three_port_datapath();
        let cfg = AgentConfig { fail_mode, ..AgentConfig::default() };
        let mut agent = Agent::new(cfg, dp.clone(), writer, table, Box::new(Discard));
        let conn = agent.open(kind, "tcp:192.0.2.9:6653", 0);
        let hello = Frame::v13(1, v13::Message::Hello(v13::Hello::with_versions(&[4])));
        agent.receive(conn, &hello.encode().unwrap(), 0);
        let mut r = Rig { agent, dp, worker, conn, framer: Framer::new(), xid: 100 };
        assert!(matches!(r.read()[0].message, Message::V13(v13::Message::Hello(_))));
        r
    }

    fn send(&mut self, m: v13::Message) -> u32 {
        self.xid += 1;
        let bytes = Frame::v13(self.xid, m).encode().unwrap();
        self.agent.receive(self.conn, &bytes, 0);
        self.xid
    }

    fn read(&mut self) -> Vec<Frame> {
        self.framer.push(&self.agent.transmit_all(self.conn, 0));
        let mut out = Vec::new();
        while let Some(m) = self.framer.next_message().unwrap() {
            out.push(Frame::decode(m).unwrap());
        }
        out
    }

    fn flow(&mut self, s: &str) {
        let fm = parse_flow_mod(s, FlowModCommand::Add).unwrap();
        self.send(v13::Message::FlowMod(fm));
        assert!(self.read().is_empty(), "flow {s} refused");
    }

    fn group(&mut self, s: &str) {
        let gm = parse_group_mod(s, GroupModCommand::Add).unwrap();
        self.send(v13::Message::GroupMod(gm));
        assert!(self.read().is_empty(), "group {s} refused");
    }

    /// Sends a TRACE request with `data` and returns the reply's frame.
    fn request(&mut self, data: &[u8]) -> Frame {
        let xid = self.send(v13::Message::Experimenter(v13::Experimenter {
            experimenter: PEREGRINE_EXPERIMENTER,
            exp_type: exp_type::TRACE,
            data: data.to_vec(),
        }));
        let mut got = self.read();
        assert_eq!(got.len(), 1, "{got:?}");
        let f = got.remove(0);
        assert_eq!(f.xid, xid);
        f
    }

    /// Traces `req` (a JSON value) and returns the reply's JSON.
    fn trace(&mut self, req: Value) -> Value {
        let f = self.request(req.to_string().as_bytes());
        let Message::V13(v13::Message::Experimenter(e)) = &f.message else {
            panic!("not a reply: {f:?}")
        };
        assert_eq!(e.experimenter, PEREGRINE_EXPERIMENTER);
        assert_eq!(e.exp_type, exp_type::TRACE);
        serde_json::from_slice(&e.data).unwrap()
    }

    fn trace_flow(&mut self, flow: &str) -> Value {
        self.trace(json!({ "flow": flow }))
    }

    /// Every flow entry's packet count, by cookie.
    fn packet_counts(&mut self) -> Vec<(u64, u64)> {
        let req = v13::multipart::MultipartRequest {
            flags: 0,
            body: MultipartRequestBody::Flow(FlowStatsRequest {
                table_id: v13::flow_mod::OFPTT_ALL,
                out_port: port::ANY,
                out_group: openflow::action::OFPG_ANY,
                cookie: 0,
                cookie_mask: 0,
                match_: Match::default(),
            }),
        };
        self.send(v13::Message::MultipartRequest(req));
        let mut v: Vec<(u64, u64)> = self
            .read()
            .iter()
            .flat_map(|f| match &f.message {
                Message::V13(v13::Message::MultipartReply(r)) => match &r.body {
                    MultipartReplyBody::Flow(v) => {
                        v.iter().map(|s| (s.cookie, s.packet_count)).collect()
                    }
                    _ => vec![],
                },
                _ => vec![],
            })
            .collect();
        v.sort();
        v
    }
}

fn controller_rig() -> Rig {
    Rig::new(FailMode::Secure, SessionKind::Controller)
}

fn steps_of<'a>(v: &'a Value, kind: &str) -> Vec<&'a Value> {
    v["steps"].as_array().unwrap().iter().filter(|s| s["step"] == kind).collect()
}

/// Table 0 sends IP from port 1 to table 1; table 1 sends 10.0.0.2 to group 1 (all:
/// ports 2 and 3) and 10.0.0.3 to port 3 through the action set; group 1 exists.
fn two_tables_and_a_group(r: &mut Rig) {
    r.group("group_id=1,type=all,bucket=output:2,bucket=output:3");
    r.flow("table=0,priority=100,cookie=0x1,in_port=1,ip,actions=goto_table:1");
    r.flow("table=1,priority=10,cookie=0x2,ip,nw_dst=10.0.0.2,actions=group:1");
    r.flow(
        "table=1,priority=10,cookie=0x3,ip,nw_dst=10.0.0.3,\
         actions=mod_nw_tos:32,write_actions(output:3)",
    );
}

#[test]
fn a_flow_through_two_tables_and_a_group_names_flows_and_outputs() {
    let mut r = controller_rig();
    two_tables_and_a_group(&mut r);
    let v = r.trace_flow("ip,in_port=1,nw_dst=10.0.0.2");
    assert_eq!(v["in_port"], 1);
    assert_eq!(v["outputs"], json!([2, 3]));
    assert_eq!(v["normal"], 0);
    assert_eq!(v["drops"], json!([]));
    let tables = steps_of(&v, "table");
    assert_eq!(tables.len(), 2);
    assert_eq!(tables[0]["table"], 0);
    assert_eq!(tables[0]["rule"]["cookie"], 1);
    assert_eq!(tables[0]["rule"]["priority"], 100);
    assert_eq!(tables[0]["rule"]["entry"], "flow");
    assert_eq!(tables[0]["rule"]["match"], "ip,in_port=1");
    assert_eq!(tables[0]["rule"]["instructions"], "goto_table:1");
    assert_eq!(tables[1]["table"], 1);
    assert_eq!(tables[1]["rule"]["cookie"], 2);
    assert_eq!(tables[1]["rule"]["instructions"], "group:1");
    assert_eq!(steps_of(&v, "goto")[0]["table"], 1);
    assert_eq!(steps_of(&v, "apply")[0]["action"], "group:1");
    let buckets = steps_of(&v, "bucket");
    assert_eq!(buckets.len(), 2);
    assert_eq!(buckets[0]["actions"], "output:2");
    assert_eq!(buckets[1]["actions"], "output:3");
    let text = v["text"].as_str().unwrap();
    assert!(
        text.contains("table 0: priority 100, cookie 0x1: ip,in_port=1 actions=goto_table:1"),
        "{text}"
    );
    assert!(
        text.contains("table 1: priority 10, cookie 0x2: ip,nw_dst=10.0.0.2 actions=group:1"),
        "{text}"
    );
    assert!(text.contains("group:1 bucket 0: output:2"), "{text}");
    assert!(text.contains("-> output to port 2 (eth2)"), "{text}");
    assert!(text.contains("Result: output to ports 2 (eth2), 3 (eth3)"), "{text}");
    let parsed = v["parsed"]["key"].as_str().unwrap();
    assert!(parsed.starts_with("ip,in_port=1,"), "{parsed}");
    assert!(parsed.contains("nw_dst=10.0.0.2"), "{parsed}");
    assert!(parsed.contains("nw_ttl=64"), "{parsed}");
}

#[test]
fn the_action_set_and_a_changed_key_are_shown() {
    let mut r = controller_rig();
    two_tables_and_a_group(&mut r);
    let v = r.trace_flow("ip,in_port=1,nw_dst=10.0.0.3");
    assert_eq!(v["outputs"], json!([3]));
    assert_eq!(steps_of(&v, "apply")[0]["action"], "set_field:8->ip_dscp");
    assert_eq!(steps_of(&v, "write_actions")[0]["actions"], json!(["output:3"]));
    assert_eq!(steps_of(&v, "action_set")[0]["actions"], json!(["output:3"]));
    assert_eq!(steps_of(&v, "execute")[0]["action"], "output:3");
    let text = v["text"].as_str().unwrap();
    assert!(text.contains("action set: output:3"), "{text}");
    assert!(steps_of(&v, "table")[1].get("key").is_none(), "unchanged");

    // A rewrite before a goto: the next table shows the key it looked up.
    r.flow("table=0,priority=100,in_port=2,ip,actions=mod_nw_dst:10.0.0.3,goto_table:1");
    let v = r.trace_flow("ip,in_port=2,nw_dst=10.0.0.9");
    assert_eq!(v["outputs"], json!([3]));
    let key = steps_of(&v, "table")[1]["key"].as_str().unwrap().to_string();
    assert!(key.contains("nw_dst=10.0.0.3"), "{key}");
    let text = v["text"].as_str().unwrap();
    assert!(text.contains(&format!("packet now: {key}")), "{text}");
}

#[test]
fn a_trace_changes_no_counter() {
    let mut r = controller_rig();
    two_tables_and_a_group(&mut r);
    let before = r.packet_counts();
    assert_eq!(before, vec![(1, 0), (2, 0), (3, 0)]);
    for _ in 0..3 {
        r.trace_flow("ip,in_port=1,nw_dst=10.0.0.2");
    }
    assert_eq!(r.packet_counts(), before);
    // A real packet is counted: the counters work, and the trace left them alone.
    let frame =
        compose(&FlowMatch::ANY.exact(Field::EthType, 0x0800).exact(Field::Ipv4Dst, 0x0a00_0002))
            .unwrap();
    let mut out = Outputs::new();
    r.dp.process(&mut r.worker, datapath::packet::Packet::from_slice(&frame), 1, 1, &mut out);
    assert_eq!(out.ports(), vec![2, 3]);
    assert_eq!(r.packet_counts(), vec![(1, 1), (2, 1), (3, 0)]);
}

#[test]
fn a_packet_in_hex_traces_like_its_flow() {
    let mut r = controller_rig();
    two_tables_and_a_group(&mut r);
    let by_flow = r.trace_flow("ip,in_port=1,nw_dst=10.0.0.2");
    let hex = by_flow["packet"].as_str().unwrap().to_string();
    assert_eq!(hex.len(), 128, "a 64-byte frame");
    let spaced: String = hex
        .as_bytes()
        .chunks(2)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect::<Vec<_>>()
        .join(" ");
    let by_packet = r.trace(json!({ "packet": spaced, "in_port": 1 }));
    assert_eq!(by_packet["steps"], by_flow["steps"]);
    assert_eq!(by_packet["text"], by_flow["text"]);
    // Tracing the parsed key's text gives the same frame back.
    let again = r.trace_flow(by_flow["parsed"]["key"].as_str().unwrap());
    assert_eq!(again["packet"], by_flow["packet"]);
}

#[test]
fn misses_and_outputs_that_send_nothing_say_why() {
    let mut r = controller_rig();
    r.flow("in_port=2,actions=output:2,output:7");
    let v = r.trace_flow("in_port=3");
    assert_eq!(v["drops"], json!(["table miss"]));
    assert_eq!(steps_of(&v, "table")[0]["rule"], Value::Null);
    let text = v["text"].as_str().unwrap();
    assert!(text.contains("table 0: no match (table miss)"), "{text}");
    assert!(text.contains("Result: dropped (table miss)"), "{text}");

    let v = r.trace_flow("in_port=2");
    let drops = steps_of(&v, "drop");
    assert_eq!(drops.len(), 2, "{v}");
    assert_eq!(drops[0]["port"], 2);
    assert!(drops[0]["reason"].as_str().unwrap().contains("input port"));
    assert_eq!(drops[1]["port"], 7);
    assert!(drops[1]["reason"].as_str().unwrap().contains("port 7 does not exist"));
    assert_eq!(v["outputs"], json!([]));
}

#[test]
fn trace_only_fields_reach_the_packet() {
    let mut r = controller_rig();
    r.flow("in_port=1,ip,actions=dec_ttl,output:2");
    let v = r.trace_flow("tcp,in_port=1,nw_ttl=1,tcp_flags=+syn+ack,tcp_dst=80");
    let key = v["parsed"]["key"].as_str().unwrap();
    assert!(key.contains("nw_ttl=1"), "{key}");
    assert!(key.contains("tcp_flags=0x12"), "{key}");
    assert!(key.contains("tp_dst=80"), "{key}");
    assert_eq!(v["outputs"], json!([]), "dec_ttl at TTL 1 sends nothing: {v}");
    let v = r.trace_flow("tcp,in_port=1,nw_ttl=5");
    assert_eq!(v["outputs"], json!([2]));
    let v = r.trace_flow("ip,in_port=1,nw_frag=later");
    assert!(v["parsed"]["key"].as_str().unwrap().contains("nw_frag=later"));
}

#[test]
fn the_fail_open_rule_shows_as_such() {
    let mut r = Rig::new(FailMode::Standalone, SessionKind::Management);
    assert!(r.agent.in_fail_open());
    let v = r.trace_flow("in_port=1");
    let rule = &steps_of(&v, "table")[0]["rule"];
    assert_eq!(rule["entry"], "fail-open");
    assert_eq!(rule["priority"], 65535);
    assert_eq!(v["normal"], 1);
    assert!(v["text"].as_str().unwrap().contains("fail-open rule"));
}

/// The `{"error", "column"}` reply of a flow.
fn error_of(r: &mut Rig, req: Value) -> (String, Option<u64>) {
    let v = r.trace(req);
    assert!(v.get("steps").is_none(), "{v}");
    (v["error"].as_str().unwrap().to_string(), v.get("column").and_then(Value::as_u64))
}

#[test]
fn mistakes_are_answered_with_an_error_reply() {
    let mut r = controller_rig();
    let (e, col) = error_of(&mut r, json!({ "flow": "in_port=1,nw_scr=1.2.3.4" }));
    assert!(e.contains("unknown field \"nw_scr\""), "{e}");
    assert_eq!(col, Some(11));
    let (e, col) = error_of(&mut r, json!({ "flow": "ip,in_port=1 nw_ttl=300" }));
    assert!(e.contains("nw_ttl"), "{e}");
    assert_eq!(col, Some(14));
    let (e, _) = error_of(&mut r, json!({ "flow": "ip,nw_dst=10.0.0.1" }));
    assert!(e.contains("in_port"), "{e}");
    let (e, _) = error_of(&mut r, json!({ "flow": "in_port=9" }));
    assert!(e.contains("in_port 9 is not a port"), "{e}");
    assert!(e.contains("1, 2, 3"), "{e}");
    let (e, _) = error_of(&mut r, json!({ "flow": "in_port=1,tcp_dst=80" }));
    assert!(e.to_lowercase().contains("tcp"), "{e}");
    let (e, _) = error_of(&mut r, json!({ "flow": "in_port=1,nw_ttl=3" }));
    assert!(e.contains("nw_ttl"), "{e}");
    let (e, _) = error_of(&mut r, json!({ "packet": "0102zz", "in_port": 1 }));
    assert!(e.contains("\"zz\""), "{e}");
    let (e, _) = error_of(&mut r, json!({ "packet": "010203" }));
    assert!(e.contains("in_port"), "{e}");
    let (e, _) = error_of(&mut r, json!({}));
    assert!(e.contains("\"flow\""), "{e}");
    // Data that is not JSON is a client bug: an OpenFlow error.
    let f = r.request(b"not json");
    assert!(
        matches!(
            &f.message,
            Message::V13(v13::Message::Error(v13::ErrorMsg::Standard { kind, .. }))
                if *kind == ErrorKind::BAD_REQUEST_BAD_LEN
        ),
        "{f:?}"
    );
}

#[test]
fn a_short_frame_shows_where_the_parser_stopped() {
    let mut r = controller_rig();
    r.flow("in_port=1,actions=output:2");
    // Ethernet with type IPv4 and only 4 bytes of IPv4 header.
    let v = r.trace(json!({
        "packet": "020000000002 020000000001 0800 45000014",
        "in_port": 1,
    }));
    assert_eq!(v["parsed"]["error"], "truncated_ipv4");
    assert_eq!(v["packet_len"], 18);
    assert_eq!(v["outputs"], json!([2]));
}

#[test]
fn trace_field_parsing() {
    assert_eq!(tcp_flags("0x12"), Some(0x12));
    assert_eq!(tcp_flags("+syn-ack+fin"), Some(0x3));
    assert_eq!(tcp_flags("+bogus"), None);
    assert_eq!(tcp_flags("0x1000"), None);
    let (rest, extra) = trace_fields("tcp,nw_ttl=7 in_port=2,nw_frag=first").unwrap();
    assert_eq!(rest, format!("tcp,{:8} in_port=2,{:13}", "", ""));
    assert_eq!(extra, vec![(Field::IpTtl, 7), (Field::IpFrag, 1)]);
}

#[test]
fn a_trace_too_long_for_one_message_is_cut_to_fit() {
    let mut r = controller_rig();
    let buckets: Vec<String> = (0..1000).map(|_| "bucket=output:2".to_string()).collect();
    r.group(&format!("group_id=1,type=all,{}", buckets.join(",")));
    r.flow("in_port=1,actions=group:1");
    let v = r.trace_flow("in_port=1");
    assert_eq!(v["truncated"], true);
    assert_eq!(v["steps"], Value::Null);
    assert_eq!(v["outputs"].as_array().unwrap().len(), 1000);
    let text = v["text"].as_str().unwrap();
    assert!(text.starts_with("Packet: 64 bytes on port 1 (eth1)"), "{text}");
    assert!(text.ends_with("cut here)\n"), "{text}");
    assert!(v.to_string().len() <= MAX_REPLY);
}

#[test]
fn meters_show_what_they_would_decide() {
    let mut r = controller_rig();
    let mm =
        parse_meter_mod("meter=1,pktps,bands=type=drop,rate=10", MeterModCommand::Add).unwrap();
    r.send(v13::Message::MeterMod(mm));
    assert!(r.read().is_empty());
    r.flow("in_port=1,actions=meter:1,output:2");
    for _ in 0..3 {
        let v = r.trace_flow("in_port=1");
        let m = steps_of(&v, "meter");
        assert_eq!(m.len(), 1, "{v}");
        assert_eq!(m[0]["meter"], 1);
        assert_eq!(m[0]["outcome"], "pass", "a trace takes no token: {v}");
        assert_eq!(v["outputs"], json!([2]));
        assert!(v["text"].as_str().unwrap().contains("  meter:1: pass\n"));
    }
}
