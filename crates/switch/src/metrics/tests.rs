//! [`render`] on an agent whose datapath ran packets (checked line by line and for the
//! format's rules), label escaping, the `WORKERS` request, and the HTTP endpoint served
//! by a [`Shell`] on loopback, through real TCP connections: statuses, headers, bodies,
//! kept connections, garbage, timeouts and the connection limit.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::mpsc::Receiver;
use std::sync::Arc;
use std::time::{Duration, Instant};

use datapath::packet::Packet;
use datapath::pipeline::{Datapath, DatapathConfig, Outputs, PacketIn, WorkerState};
use openflow::framing::Framer;
use openflow::text::{parse_flow_mod, parse_group_mod, parse_meter_mod};
use openflow::v13::flow_mod::FlowModCommand;
use openflow::v13::group_mod::GroupModCommand;
use openflow::v13::meter_mod::MeterModCommand;
use openflow::{v13, Frame, Message, OFP13_VERSION};

use super::*;
use crate::agent::{exp_type, AgentConfig, SessionId, Transmit, PEREGRINE_EXPERIMENTER};
use crate::ports::{BackendStats, PortSpec, PortTable};
use crate::shell::Shell;
use crate::testing::{frame, SEC};

/// Port 3's name: a quote, a backslash and a line feed to escape.
const ODD_NAME: &str = "q\"\\\nx";

struct Discard;

impl Transmit for Discard {
    fn transmit(&mut self, _: &mut Outputs) -> Result<(), crate::agent::TransmitError> {
        Ok(())
    }
}

fn spec(no: u32, name: &str, up: bool) -> PortSpec {
    PortSpec {
        no,
        slot: (no - 1) as u16,
        name: name.to_string(),
        hw_addr: [2, 0, 0, 0, 0, no as u8],
        speed_mbps: None,
        up,
        backend: Some(Arc::new(move || BackendStats {
            rx_dropped: 7 * no as u64,
            ..BackendStats::default()
        })),
    }
}

/// An agent over a real datapath with ports 1 (`eth1`), 2 (`eth2`, link down) and 3
/// ([`ODD_NAME`]), a management connection past its handshake, and a worker of the
/// test's own to run packets.
struct Rig {
    agent: Agent,
    dp: Datapath,
    worker: WorkerState,
    _packet_ins: Receiver<PacketIn>,
    mgmt: SessionId,
    framer: Framer,
    xid: u32,
}

impl Rig {
    fn new() -> Rig {
        let table = PortTable::new(
            vec![spec(1, "eth1", true), spec(2, "eth2", false), spec(3, ODD_NAME, true)],
            0,
        );
        let dcfg = DatapathConfig { ports: table.datapath_ports(), ..DatapathConfig::default() };
        let (dp, writer, packet_ins) = Datapath::new(dcfg, 64);
        let mut agent =
            Agent::new(AgentConfig::default(), dp.clone(), writer, table, Box::new(Discard));
        let worker = dp.worker(64);
        let mgmt = agent.open(SessionKind::Management, "the management socket", 0);
        let hello = Frame::v13(1, v13::Message::Hello(v13::Hello::with_versions(&[OFP13_VERSION])));
        agent.receive(mgmt, &hello.encode().unwrap(), 0);
        let mut r = Rig {
            agent,
            dp,
            worker,
            _packet_ins: packet_ins,
            mgmt,
            framer: Framer::new(),
            xid: 10,
        };
        r.replies();
        r
    }

    /// Every message the switch queued on the management connection.
    fn replies(&mut self) -> Vec<v13::Message> {
        self.framer.push(&self.agent.transmit_all(self.mgmt, 0));
        let mut out = Vec::new();
        while let Some(m) = self.framer.next_message().unwrap() {
            match Frame::decode(m).unwrap().message {
                Message::V13(m) => out.push(m),
                other => panic!("{other:?}"),
            }
        }
        out
    }

    /// Sends `m` and returns the replies, none of them an error.
    fn send(&mut self, m: v13::Message) -> Vec<v13::Message> {
        self.xid += 1;
        let bytes = Frame::v13(self.xid, m).encode().unwrap();
        self.agent.receive(self.mgmt, &bytes, 0);
        let got = self.replies();
        assert!(!got.iter().any(|m| matches!(m, v13::Message::Error(_))), "{got:?}");
        got
    }

    fn packet(&mut self, data: &[u8], in_port: u32) {
        let mut out = Outputs::new();
        self.dp.process(&mut self.worker, Packet::from_slice(data), in_port, SEC, &mut out);
    }

    /// Meter 1 (1 packet/s, burst 1: of packets at one instant the first passes), group
    /// 1 (all: ports 2 and 3), flows: port 1 through the meter to table 1 whose flow
    /// outputs to the group; port 2 to port 1; nothing for port 3 (table miss). Then
    /// three frames in on port 1, one on port 2, one on port 3 and a 10-byte frame (a
    /// parse error, then a table miss) on port 3.
    fn programmed() -> Rig {
        let mut r = Rig::new();
        let mm = parse_meter_mod(
            "meter=1,pktps,burst,bands=type=drop,rate=1,burst_size=1",
            MeterModCommand::Add,
        )
        .unwrap();
        r.send(v13::Message::MeterMod(mm));
        let gm = parse_group_mod(
            "group_id=1,type=all,bucket=output:2,bucket=output:3",
            GroupModCommand::Add,
        )
        .unwrap();
        r.send(v13::Message::GroupMod(gm));
        for f in [
            "table=0,priority=10,in_port=1,actions=meter:1,goto_table:1",
            "table=0,priority=10,in_port=2,actions=output:1",
            "table=1,actions=group:1",
        ] {
            let fm = parse_flow_mod(f, FlowModCommand::Add).unwrap();
            r.send(v13::Message::FlowMod(fm));
        }
        r.send(v13::Message::BarrierRequest);
        for _ in 0..3 {
            r.packet(&frame(), 1);
        }
        r.packet(&frame(), 2);
        r.packet(&frame(), 3);
        r.packet(&frame()[..10], 3);
        r
    }
}

/// Checks the text format's rules: every sample follows its family's `# HELP` and
/// `# TYPE` lines, families are contiguous and appear once, counters end in `_total`
/// and gauges do not, names are `peregrine_*`, label sets parse (with escapes) and
/// values are numbers.
fn check_format(text: &str) {
    assert!(text.ends_with('\n'));
    let mut seen = BTreeSet::new();
    let mut family: Option<String> = None;
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let name = rest.split(' ').next().unwrap().to_string();
            assert!(name.starts_with("peregrine_"), "{line}");
            assert!(seen.insert(name.clone()), "family {name} twice");
            let ty = lines.next().unwrap();
            let kind = ty
                .strip_prefix(&format!("# TYPE {name} "))
                .unwrap_or_else(|| panic!("{ty} after {line}"));
            match kind {
                "counter" => assert!(name.ends_with("_total"), "{name}"),
                "gauge" => assert!(!name.ends_with("_total"), "{name}"),
                k => panic!("type {k}"),
            }
            family = Some(name);
            continue;
        }
        assert!(!line.starts_with('#'), "{line}");
        let name_end = line.find(['{', ' ']).unwrap();
        assert_eq!(Some(&line[..name_end]), family.as_deref(), "{line}");
        let mut rest = &line[name_end..];
        if let Some(r) = rest.strip_prefix('{') {
            rest = skip_labels(r).unwrap_or_else(|| panic!("bad labels: {line}"));
        }
        let value = rest.strip_prefix(' ').unwrap();
        value.parse::<u64>().unwrap();
    }
}

/// Skips `k="v",...}` and returns what follows the `}`.
fn skip_labels(mut s: &str) -> Option<&str> {
    loop {
        let eq = s.find('=')?;
        let key = &s[..eq];
        if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return None;
        }
        s = s[eq..].strip_prefix("=\"")?;
        let mut chars = s.char_indices();
        let end = loop {
            match chars.next()? {
                (_, '\\') => match chars.next()? {
                    (_, '\\' | '"' | 'n') => {}
                    _ => return None,
                },
                (i, '"') => break i,
                (_, '\n') => return None,
                _ => {}
            }
        };
        s = &s[end + 1..];
        if let Some(r) = s.strip_prefix('}') {
            return Some(r);
        }
        s = s.strip_prefix(',')?;
    }
}

#[test]
fn render_reports_ports_tables_groups_meters_workers_and_the_agent() {
    let r = Rig::programmed();
    let text = render(&r.agent, 2 * SEC);
    check_format(&text);
    let lines: BTreeSet<&str> = text.lines().collect();
    let odd = r#"port="3",name="q\"\\\nx""#;
    let thread = std::thread::current().name().unwrap_or("").to_string();
    let mut want = vec![
        // Ports: the datapath's counts, the backend's drops, the link.
        r#"peregrine_port_rx_packets_total{port="1",name="eth1"} 3"#.to_string(),
        r#"peregrine_port_rx_bytes_total{port="1",name="eth1"} 192"#.to_string(),
        r#"peregrine_port_rx_packets_total{port="2",name="eth2"} 1"#.to_string(),
        format!("peregrine_port_rx_packets_total{{{odd}}} 2"),
        format!("peregrine_port_rx_bytes_total{{{odd}}} 74"),
        r#"peregrine_port_tx_packets_total{port="1",name="eth1"} 1"#.to_string(),
        r#"peregrine_port_tx_packets_total{port="2",name="eth2"} 1"#.to_string(),
        r#"peregrine_port_tx_bytes_total{port="2",name="eth2"} 64"#.to_string(),
        format!("peregrine_port_tx_packets_total{{{odd}}} 1"),
        r#"peregrine_port_rx_dropped_total{port="2",name="eth2"} 14"#.to_string(),
        r#"peregrine_port_tx_errors_total{port="1",name="eth1"} 0"#.to_string(),
        r#"peregrine_port_link_up{port="1",name="eth1"} 1"#.to_string(),
        r#"peregrine_port_link_up{port="2",name="eth2"} 0"#.to_string(),
        // Tables: 0 and 1 (the only ones with flows or lookups).
        r#"peregrine_table_active_flows{table="0"} 2"#.to_string(),
        r#"peregrine_table_active_flows{table="1"} 1"#.to_string(),
        r#"peregrine_table_lookups_total{table="0"} 6"#.to_string(),
        r#"peregrine_table_matches_total{table="0"} 4"#.to_string(),
        r#"peregrine_table_lookups_total{table="1"} 1"#.to_string(),
        r#"peregrine_table_matches_total{table="1"} 1"#.to_string(),
        // The one packet the meter passed went through the group's two buckets.
        r#"peregrine_group_packets_total{group="1"} 1"#.to_string(),
        r#"peregrine_group_bytes_total{group="1"} 64"#.to_string(),
        r#"peregrine_group_bucket_packets_total{group="1",bucket="0"} 1"#.to_string(),
        r#"peregrine_group_bucket_bytes_total{group="1",bucket="1"} 64"#.to_string(),
        r#"peregrine_meter_packets_total{meter="1"} 3"#.to_string(),
        r#"peregrine_meter_bytes_total{meter="1"} 192"#.to_string(),
        r#"peregrine_meter_band_packets_total{meter="1",band="0",type="drop"} 2"#.to_string(),
        r#"peregrine_meter_band_bytes_total{meter="1",band="0",type="drop"} 128"#.to_string(),
        // Workers: the agent's own (index 0, packet-outs only) and the test's.
        format!(r#"peregrine_worker_packets_total{{worker="0",thread="{thread}"}} 0"#),
        format!(r#"peregrine_worker_packets_total{{worker="1",thread="{thread}"}} 6"#),
        // The datapath.
        "peregrine_datapath_packets_total 6".to_string(),
        r#"peregrine_datapath_drops_total{reason="table_miss"} 2"#.to_string(),
        r#"peregrine_datapath_drops_total{reason="meter"} 2"#.to_string(),
        r#"peregrine_datapath_drops_total{reason="group"} 0"#.to_string(),
        r#"peregrine_datapath_parse_errors_total{kind="truncated_ethernet"} 1"#.to_string(),
        r#"peregrine_datapath_parse_errors_total{kind="truncated_ipv4"} 0"#.to_string(),
        "peregrine_datapath_packet_ins_total 0".to_string(),
        // The agent.
        r#"peregrine_agent_connections{kind="management",role="equal"} 1"#.to_string(),
        r#"peregrine_agent_connections{kind="controller",role="equal"} 0"#.to_string(),
        r#"peregrine_agent_connections{kind="controller",role="master"} 0"#.to_string(),
        "peregrine_agent_fail_open 0".to_string(),
        "peregrine_agent_flow_mods_total 3".to_string(),
        "peregrine_agent_errors_sent_total 0".to_string(),
        "peregrine_agent_packet_outs_total 0".to_string(),
    ];
    want.push("# TYPE peregrine_port_rx_packets_total counter".into());
    want.push("# TYPE peregrine_port_link_up gauge".into());
    for w in &want {
        assert!(lines.contains(w.as_str()), "missing {w:?} in\n{text}");
    }
    // Cache: of the test worker's 6 packets, the 2nd and 3rd on port 1 hit; the one
    // that failed to parse is not looked up in the cache at all.
    let hits = format!(r#"peregrine_worker_cache_hits_total{{worker="1",thread="{thread}"}} 2"#);
    let misses =
        format!(r#"peregrine_worker_cache_misses_total{{worker="1",thread="{thread}"}} 3"#);
    assert!(lines.contains(hits.as_str()), "{text}");
    assert!(lines.contains(misses.as_str()), "{text}");
    // Only tables 0 and 1 are listed.
    let tables: BTreeSet<&str> =
        text.lines().filter(|l| l.starts_with("peregrine_table_lookups_total")).collect();
    assert_eq!(tables.len(), 2, "{text}");
    // Every drop reason and parse error kind has a line.
    let drops = text.lines().filter(|l| l.starts_with("peregrine_datapath_drops_total{")).count();
    assert_eq!(drops, DROP_REASONS.len());
    let kinds =
        text.lines().filter(|l| l.starts_with("peregrine_datapath_parse_errors_total{")).count();
    assert_eq!(kinds, ParseError::ALL.len());
}

#[test]
fn render_of_a_fresh_agent_has_every_family_and_zero_counts() {
    let r = Rig::new();
    let text = render(&r.agent, 0);
    check_format(&text);
    assert!(text.contains("\nperegrine_datapath_packets_total 0\n"));
    assert!(text.contains("\nperegrine_table_lookups_total{table=\"0\"} 0\n"));
    // No group or meter: their families are there, without samples.
    assert!(text.contains("# TYPE peregrine_group_packets_total counter\n# HELP"));
    assert!(!text.contains("peregrine_meter_packets_total{"));
}

#[test]
fn label_values_and_help_are_escaped() {
    assert_eq!(escape_label(r"a\b"), r"a\\b");
    assert_eq!(escape_label("say \"hi\""), r#"say \"hi\""#);
    assert_eq!(escape_label("two\nlines"), r"two\nlines");
    assert_eq!(escape_label("plain é{}=,"), "plain é{}=,");
    assert_eq!(labels(&[("port", "1"), ("name", "x\"\\\n")]), r#"{port="1",name="x\"\\\n"}"#);
    assert_eq!(labels(&[]), "");
    assert_eq!(escape_help("a\\b\nc \"q\""), "a\\\\b\\nc \"q\"");
}

#[test]
fn workers_request_reports_each_worker() {
    let mut r = Rig::programmed();
    let got = r.send(v13::Message::Experimenter(v13::Experimenter {
        experimenter: PEREGRINE_EXPERIMENTER,
        exp_type: exp_type::WORKERS,
        data: b"{}".to_vec(),
    }));
    let [v13::Message::Experimenter(e)] = got.as_slice() else { panic!("{got:?}") };
    assert_eq!((e.experimenter, e.exp_type), (PEREGRINE_EXPERIMENTER, exp_type::WORKERS));
    let v: serde_json::Value = serde_json::from_slice(&e.data).unwrap();
    let ws = v["workers"].as_array().unwrap();
    assert_eq!(ws.len(), 2, "{v}");
    let thread = std::thread::current().name().map(str::to_string);
    assert_eq!(ws[0]["worker"], 0);
    assert_eq!(ws[0]["packets"], 0);
    let w = &ws[1];
    assert_eq!(w["worker"], 1);
    assert_eq!(w["thread"], serde_json::json!(thread));
    assert_eq!(w["packets"], 6);
    assert_eq!((&w["cache_hits"], &w["cache_misses"]), (&2.into(), &3.into()));
    assert_eq!(w["drops"]["table_miss"], 2);
    assert_eq!(w["drops"]["meter"], 2);
    assert_eq!(w["drops"]["output"], 0);
    assert_eq!(w["parse_errors"], 1);
    assert_eq!(w["parse_errors_by_kind"], serde_json::json!({"truncated_ethernet": 1}));
    assert_eq!((&w["packet_ins"], &w["packet_ins_dropped"]), (&0.into(), &0.into()));
}

/// A [`Shell`] over [`Rig::programmed`]'s agent, serving the metrics on loopback.
struct Served {
    shell: Shell,
    addr: std::net::SocketAddr,
}

impl Served {
    fn start() -> Served {
        let r = Rig::programmed();
        let (_tx, packet_ins) = std::sync::mpsc::channel();
        let shell = Shell::start(r.agent, vec![], None, None, packet_ins, Instant::now()).unwrap();
        let addr = super::serve_on(&shell, "127.0.0.1:0".parse().unwrap()).unwrap();
        assert_ne!(addr.port(), 0);
        Served { shell, addr }
    }

    fn connect(&self) -> Client {
        let s = TcpStream::connect(self.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        Client(BufReader::new(s))
    }

    /// `request` on a fresh connection whose sending side is then shut down: the one
    /// response (`head`: to a HEAD request), after which the server must close.
    fn one(&self, request: &[u8], head: bool) -> Resp {
        let mut c = self.connect();
        c.send(request);
        c.0.get_ref().shutdown(Shutdown::Write).unwrap();
        let r = c.response(head);
        let rest = c.rest();
        assert!(rest.is_empty(), "after the response: {rest:?}");
        r
    }
}

/// One connection to the endpoint; reads time out after 10 s.
struct Client(BufReader<TcpStream>);

/// A response: its head as sent, the status code, and the body.
#[derive(Debug)]
struct Resp {
    head: String,
    code: u16,
    body: String,
}

impl Resp {
    /// The value of header `name` (any case).
    fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().skip(1).find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }
}

impl Client {
    fn send(&mut self, bytes: &[u8]) {
        self.0.get_mut().write_all(bytes).unwrap();
    }

    /// Reads one response (`head`: to a HEAD request, so no body follows whatever its
    /// `Content-Length` says).
    fn response(&mut self, head: bool) -> Resp {
        let mut text = String::new();
        loop {
            let mut line = String::new();
            let n = self.0.read_line(&mut line).unwrap();
            assert!(n > 0, "closed after {text:?}");
            text.push_str(&line);
            if line == "\r\n" {
                break;
            }
        }
        let code = text.split(' ').nth(1).unwrap().parse().unwrap();
        let mut r = Resp { head: text, code, body: String::new() };
        if !head {
            let len: usize = r.header("content-length").unwrap().parse().unwrap();
            let mut body = vec![0; len];
            self.0.read_exact(&mut body).unwrap();
            r.body = String::from_utf8(body).unwrap();
        }
        r
    }

    /// Everything the server still sends until it closes the connection (a reset counts
    /// as closing); fails if it is still open after the read timeout.
    fn rest(&mut self) -> Vec<u8> {
        let mut out = Vec::new();
        match self.0.read_to_end(&mut out) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
            Err(e) => panic!("the server did not close the connection: {e}"),
        }
        out
    }
}

#[test]
fn get_and_head_serve_the_metrics_on_one_kept_connection() {
    let s = Served::start();
    let mut c = s.connect();
    c.send(b"GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n");
    let r = c.response(false);
    assert!(r.head.starts_with("HTTP/1.1 200 OK\r\n"), "{}", r.head);
    assert!(
        r.head.contains("\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"),
        "{}",
        r.head
    );
    assert_eq!(r.header("content-length"), Some(&*r.body.len().to_string()));
    check_format(&r.body);
    assert!(
        r.body.contains("\nperegrine_port_rx_packets_total{port=\"1\",name=\"eth1\"} 3\n"),
        "{}",
        r.body
    );
    // HEAD on the same connection: the same head, and no body (else the next
    // response's status line would not come next).
    c.send(b"HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    let h = c.response(true);
    assert_eq!(h.code, 200, "{}", h.head);
    assert_eq!(h.header("content-type"), Some(CONTENT_TYPE));
    assert_eq!(h.header("content-length"), r.header("content-length"));
    // A 404, then a request that asks to close: the server closes after it.
    c.send(b"GET /nope HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_eq!(c.response(false).code, 404);
    c.send(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    let last = c.response(false);
    assert_eq!(last.code, 200);
    check_format(&last.body);
    assert!(c.rest().is_empty());
    // A busy address is an error for the caller.
    let e = super::serve_on(&s.shell, s.addr).unwrap_err();
    assert!(e.to_string().contains(&format!("listening on {}", s.addr)), "{e}");
    s.shell.stop();
}

#[test]
fn requests_for_the_metrics_in_every_form() {
    let s = Served::start();
    for req in [
        &b"GET /metrics HTTP/1.1\r\nHost: localhost:9464\r\nAccept: */*\r\n\r\n"[..],
        b"GET /metrics HTTP/1.0\r\n\r\n",
        b"GET /metrics HTTP/1.1\n\n",
        b"\r\n\r\nGET /metrics HTTP/1.1\r\n\r\n",
        b"GET /metrics?name[]=x HTTP/1.1\r\n\r\n",
        b"GET http://127.0.0.1:9464/metrics HTTP/1.1\r\n\r\n",
        b"GET HTTP://h/metrics?a HTTP/1.1\r\n\r\n",
        b"GET /metrics HTTP/1.1\r\nX-Empty:\r\nX-Bin: \x80\xff\tz\r\n\r\n",
    ] {
        let r = s.one(req, false);
        let what = String::from_utf8_lossy(req);
        assert_eq!(r.code, 200, "{what:?}: {}", r.head);
        assert_eq!(r.header("content-type"), Some(CONTENT_TYPE), "{what:?}");
        check_format(&r.body);
    }
    let h = s.one(b"HEAD /metrics HTTP/1.1\r\n\r\n", true);
    assert_eq!(h.code, 200, "{}", h.head);
    s.shell.stop();
}

#[test]
fn other_paths_are_404_and_other_methods_405() {
    let s = Served::start();
    for req in [
        &b"GET / HTTP/1.1\r\n\r\n"[..],
        b"GET /metrics/ HTTP/1.1\r\n\r\n",
        b"GET /Metrics HTTP/1.1\r\n\r\n",
        b"GET /favicon.ico HTTP/1.1\r\n\r\n",
        b"POST /other HTTP/1.1\r\nContent-Length: 2\r\n\r\nhi",
        b"GET http://h HTTP/1.1\r\n\r\n",
        b"OPTIONS * HTTP/1.1\r\n\r\n",
        // Targets hyper takes though they are not origin-form ASCII paths (an
        // authority; raw UTF-8): no metrics there either.
        b"GET metrics HTTP/1.1\r\n\r\n",
        b"GET /m\xc3\xa9trics HTTP/1.1\r\n\r\n",
    ] {
        let r = s.one(req, false);
        let what = String::from_utf8_lossy(req);
        assert_eq!(r.code, 404, "{what:?}: {}", r.head);
        assert_eq!(r.body, "not found; the metrics are at /metrics\n");
    }
    for req in [
        &b"POST /metrics HTTP/1.1\r\n\r\n"[..],
        b"DELETE /metrics HTTP/1.1\r\n\r\n",
        b"get /metrics HTTP/1.1\r\n\r\n",
        b"OPTIONS /metrics HTTP/1.1\r\n\r\n",
        b"PUT /metrics HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc",
    ] {
        let r = s.one(req, false);
        let what = String::from_utf8_lossy(req);
        assert_eq!(r.code, 405, "{what:?}: {}", r.head);
        assert_eq!(r.header("allow"), Some("GET, HEAD"), "{what:?}");
        assert_eq!(r.body, "only GET and HEAD are served\n");
    }
    s.shell.stop();
}

#[test]
fn garbage_gets_a_400_or_a_close_at_once() {
    let s = Served::start();
    let mut long = b"GET /metrics HTTP/1.1\r\nX: ".to_vec();
    long.resize(MAX_HEAD + 100, b'a');
    long.extend_from_slice(b"\r\n\r\n");
    for req in [
        &b"hello\r\n\r\n"[..],
        b"GET /metrics\r\n\r\n",
        b"GET /metrics HTTP/2.0\r\n\r\n",
        b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
        b"GET /metrics HTTP/1.1 extra\r\n\r\n",
        b"GET  /metrics HTTP/1.1\r\n\r\n",
        b" GET /metrics HTTP/1.1\r\n\r\n",
        b"G(T /metrics HTTP/1.1\r\n\r\n",
        b"GET /metrics\tHTTP/1.1\r\n\r\n",
        b"GET /metrics HTTP/1.1\r\nHost x\r\n\r\n",
        b"GET /metrics HTTP/1.1\r\nHo st: x\r\n\r\n",
        b"GET /metrics HTTP/1.1\r\n: x\r\n\r\n",
        b"GET /metrics HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n",
        b"GET /metrics HTTP/1.1\r\nX: a\x00b\r\n\r\n",
        b"GET /metrics HTTP/1.1\rHost: x\r\n\r\n",
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\n\n",
        &vec![b'a'; MAX_HEAD + 1],
        &long,
    ] {
        // The client keeps its sending side open: the server must end the exchange.
        let start = Instant::now();
        let mut c = s.connect();
        c.send(req);
        let got = String::from_utf8_lossy(&c.rest()).into_owned();
        let what = String::from_utf8_lossy(req);
        let what = what.get(..60).unwrap_or(&what);
        assert!(
            got.is_empty()
                || got.starts_with("HTTP/1.1 400 Bad Request\r\n")
                || (req.len() > MAX_HEAD
                    && got.starts_with("HTTP/1.1 431 Request Header Fields Too Large\r\n")),
            "{what:?}: {got:?}"
        );
        assert!(start.elapsed() < Duration::from_secs(2), "{what:?}: slow");
    }
    // A client that closes without a request gets nothing.
    let mut c = s.connect();
    c.0.get_ref().shutdown(Shutdown::Write).unwrap();
    assert!(c.rest().is_empty());
    s.shell.stop();
}

#[test]
fn stalled_and_idle_clients_are_closed_and_hold_no_one_up() {
    let s = Served::start();
    let start = Instant::now();
    let mut silent = s.connect();
    let mut partial = s.connect();
    partial.send(b"GET /metrics HTTP/1.1\r\nHost: x\r\n");
    let mut kept = s.connect();
    kept.send(b"GET /metrics HTTP/1.1\r\n\r\n");
    assert_eq!(kept.response(false).code, 200);
    // Meanwhile another client is answered at once.
    let r = s.one(b"GET /metrics HTTP/1.1\r\n\r\n", false);
    assert_eq!(r.code, 200);
    assert!(start.elapsed() < READ_TIMEOUT / 2, "{:?}", start.elapsed());
    // The server closes all three, after READ_TIMEOUT without a request head.
    for (what, c) in [("silent", &mut silent), ("partial", &mut partial), ("kept", &mut kept)] {
        let got = c.rest();
        assert!(got.is_empty(), "{what}: {:?}", String::from_utf8_lossy(&got));
        let t = start.elapsed();
        assert!(
            t >= READ_TIMEOUT - Duration::from_millis(200) && t < READ_TIMEOUT * 2,
            "{what}: closed after {t:?}"
        );
    }
    s.shell.stop();
}

#[test]
fn connections_beyond_the_limit_wait_for_a_free_place() {
    let s = Served::start();
    let start = Instant::now();
    let idle: Vec<Client> = (0..MAX_CONNECTIONS).map(|_| s.connect()).collect();
    // Served only once an idle connection has been closed (READ_TIMEOUT).
    let r = s.one(b"GET /metrics HTTP/1.1\r\n\r\n", false);
    assert_eq!(r.code, 200);
    let t = start.elapsed();
    assert!(
        t >= READ_TIMEOUT - Duration::from_millis(200) && t < READ_TIMEOUT * 2,
        "served after {t:?}"
    );
    drop(idle);
    s.shell.stop();
}

#[test]
fn a_write_that_makes_no_progress_fails_after_the_write_timeout() {
    use tokio::io::AsyncWriteExt;
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        // A client that never reads.
        let _client = tokio::net::TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
        let (stream, _) = l.accept().await.unwrap();
        let mut w = WriteDeadline::new(stream);
        let chunk = vec![0u8; 1 << 16];
        let mut last_progress = Instant::now();
        let e = loop {
            match w.write(&chunk).await {
                Ok(_) => last_progress = Instant::now(),
                Err(e) => break e,
            }
        };
        assert_eq!(e.kind(), std::io::ErrorKind::TimedOut);
        let t = last_progress.elapsed();
        assert!(t >= WRITE_TIMEOUT && t < WRITE_TIMEOUT * 2, "failed after {t:?}");
    });
}
#[test]
fn a_request_body_is_not_waited_for() {
    let s = Served::start();
    let start = Instant::now();
    let mut c = s.connect();
    // A megabyte announced, three bytes sent: answered, then closed at once.
    c.send(b"POST /metrics HTTP/1.1\r\nContent-Length: 1000000\r\n\r\nabc");
    let r = c.response(false);
    assert_eq!(r.code, 405, "{}", r.head);
    assert!(c.rest().is_empty());
    assert!(start.elapsed() < Duration::from_secs(2), "{:?}", start.elapsed());
    s.shell.stop();
}
