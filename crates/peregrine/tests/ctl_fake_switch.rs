//! `peregrine ctl` end to end against a tiny fake OpenFlow 1.3 switch run by the test:
//! a thread that accepts connections, answers the hello, and replies to requests with
//! canned messages (multipart replies split over several messages, an echo request in
//! the middle of a dump, an error for one flow-mod). Checks the printed output, the
//! JSON, the exit status and what went over the wire. Needs no Open vSwitch and no
//! privileges.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::os::unix::net::UnixListener;
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use ctl::target::Stream;
use openflow::framing::Framer;
use openflow::v13::multipart::{
    FlowStats, MultipartReply, MultipartReplyBody, MultipartRequestBody, OFPMPF_REPLY_MORE,
};
use openflow::v13::port::Port;
use openflow::v13::{ErrorMsg, FeaturesReply, Hello, Message as M, SwitchConfig};
use openflow::{ErrorKind, Frame, Message};

/// What the fake switch received, in order.
type Log = Arc<Mutex<Vec<Frame>>>;

fn port(no: u32, name: &str) -> Port {
    Port {
        port_no: no,
        hw_addr: format!("aa:55:aa:55:00:{no:02x}").parse().unwrap(),
        name: name.into(),
        state: 4,
        ..Port::default()
    }
}

fn flow(prio: u16, text: &str) -> FlowStats {
    let fm = openflow::text::parse_flow(text).unwrap();
    FlowStats {
        table_id: 0,
        duration_sec: 1,
        duration_nsec: 500_000_000,
        priority: prio,
        idle_timeout: 0,
        hard_timeout: 0,
        flags: 0,
        importance: 0,
        cookie: 0,
        packet_count: 3,
        byte_count: 180,
        match_: fm.match_,
        instructions: fm.instructions,
    }
}

fn mp(xid: u32, flags: u16, body: MultipartReplyBody) -> Frame {
    Frame::v13(xid, M::MultipartReply(MultipartReply { flags, body }))
}

/// The canned answers to one request.
fn answer(req: &Frame, raw: &[u8]) -> Vec<Frame> {
    let x = req.xid;
    let Message::V13(m) = &req.message else {
        return vec![];
    };
    match m {
        M::FeaturesRequest => vec![Frame::v13(
            x,
            M::FeaturesReply(FeaturesReply {
                datapath_id: 0xabc,
                n_buffers: 0,
                n_tables: 16,
                auxiliary_id: 0,
                capabilities: 0x7,
                ..Default::default()
            }),
        )],
        M::GetConfigRequest => {
            vec![Frame::v13(x, M::GetConfigReply(SwitchConfig { flags: 0, miss_send_len: 128 }))]
        }
        M::BarrierRequest => vec![Frame::v13(x, M::BarrierReply)],
        M::MultipartRequest(r) => match &r.body {
            MultipartRequestBody::PortDesc => vec![
                mp(x, OFPMPF_REPLY_MORE, MultipartReplyBody::PortDesc(vec![port(2, "eth2")])),
                mp(x, 0, MultipartReplyBody::PortDesc(vec![port(1, "eth1")])),
            ],
            MultipartRequestBody::Flow(_) => vec![
                mp(
                    x,
                    OFPMPF_REPLY_MORE,
                    MultipartReplyBody::Flow(vec![flow(10, "priority=10,ip,actions=output:1")]),
                ),
                // Something the client must answer in the middle of a dump.
                Frame::v13(0x7777, M::EchoRequest(b"ping".to_vec())),
                mp(
                    x,
                    0,
                    MultipartReplyBody::Flow(vec![flow(
                        20,
                        "priority=20,tcp,tp_dst=80,actions=drop",
                    )]),
                ),
            ],
            _ => vec![],
        },
        M::FlowMod(f) if f.priority == 666 => vec![Frame::v13(
            x,
            M::Error(ErrorMsg::Standard { kind: ErrorKind { ty: 5, code: 3 }, data: raw.to_vec() }),
        )],
        _ => vec![],
    }
}

/// Serves one connection: hello, then canned answers until the client hangs up.
fn serve(mut s: impl Read + Write, log: Log) {
    let hello = Frame::v13(1, M::Hello(Hello::with_versions(&[1, 4])));
    if s.write_all(&hello.encode().unwrap()).is_err() {
        return;
    }
    let mut framer = Framer::new();
    let mut buf = [0u8; 4096];
    for _ in 0..10_000 {
        let n = match s.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        framer.push(&buf[..n]);
        while let Ok(Some(m)) = framer.next_message() {
            let raw = m.to_vec();
            let Ok(f) = Frame::decode(&raw) else { return };
            log.lock().unwrap().push(f.clone());
            for a in answer(&f, &raw) {
                if s.write_all(&a.encode().unwrap()).is_err() {
                    return;
                }
            }
        }
    }
}

/// How long a fake switch waits for connections before it stops listening.
const LISTEN_FOR: Duration = Duration::from_secs(60);

/// Accepts up to `max` connections for [`LISTEN_FOR`] from a non-blocking listener,
/// serving each on its own thread (blocking, with a 20 s read timeout).
fn accept_loop<S: Stream + Send + 'static>(
    max: usize,
    log: Log,
    mut accept: impl FnMut() -> std::io::Result<S>,
) {
    let until = Instant::now() + LISTEN_FOR;
    let mut n = 0;
    while n < max && Instant::now() < until {
        let accepted = accept().and_then(|s| {
            s.set_nonblocking(false)?;
            s.set_read_timeout(Some(Duration::from_secs(20)))?;
            Ok(s)
        });
        match accepted {
            Ok(s) => {
                n += 1;
                let log = log.clone();
                thread::spawn(move || serve(s, log));
            }
            Err(_) => thread::sleep(Duration::from_millis(5)),
        }
    }
}

/// Starts a fake switch on a free TCP port; returns `tcp:127.0.0.1:PORT`.
fn fake_tcp(log: Log) -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.set_nonblocking(true).unwrap();
    let addr = l.local_addr().unwrap();
    thread::spawn(move || accept_loop(8, log, || l.accept().map(|(s, _)| s)));
    format!("tcp:127.0.0.1:{}", addr.port())
}

fn ctl(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_peregrine"))
        .arg("ctl")
        .args(["--timeout", "20"])
        .args(args)
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn show_gathers_port_desc_parts_and_prints_like_ovs_ofctl() {
    let log = Log::default();
    let sw = fake_tcp(log.clone());
    let o = ctl(&["show", &sw]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(
        text(&o.stdout),
        "OFPT_FEATURES_REPLY (OF1.3) (xid=0x2): dpid:0000000000000abc\n\
         n_tables:16, n_buffers:0\n\
         capabilities: FLOW_STATS TABLE_STATS PORT_STATS\n\
         OFPST_PORT_DESC reply (OF1.3) (xid=0x3): flags=[more]\n \
         2(eth2): addr:aa:55:aa:55:00:02\n     config:     0\n     state:      LIVE\n     speed: 0 Mbps now, 0 Mbps max\n\
         OFPST_PORT_DESC reply (OF1.3) (xid=0x3):\n \
         1(eth1): addr:aa:55:aa:55:00:01\n     config:     0\n     state:      LIVE\n     speed: 0 Mbps now, 0 Mbps max\n\
         OFPT_GET_CONFIG_REPLY (OF1.3) (xid=0x5): frags=normal miss_send_len=128\n"
    );
    let j = ctl(&["--json", "show", &sw]);
    assert!(j.status.success(), "{}", text(&j.stderr));
    let v: serde_json::Value = serde_json::from_slice(&j.stdout).unwrap();
    assert_eq!(v["features"]["datapath_id"], "0000000000000abc");
    let names: Vec<&str> =
        v["ports"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(names, vec!["eth2", "eth1"]);
    assert_eq!(v["config"]["miss_send_len"], 128);
}

#[test]
fn dump_flows_answers_echo_and_joins_parts() {
    let log = Log::default();
    let sw = fake_tcp(log.clone());
    let o = ctl(&["-O", "OpenFlow13", "dump-flows", &sw, "table=0"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(
        text(&o.stdout),
        "OFPST_FLOW reply (OF1.3) (xid=0x2): flags=[more]\n \
         cookie=0x0, duration=1.500s, table=0, n_packets=3, n_bytes=180, priority=10,ip actions=output:1\n\
         OFPST_FLOW reply (OF1.3) (xid=0x2):\n \
         cookie=0x0, duration=1.500s, table=0, n_packets=3, n_bytes=180, priority=20,tcp,tp_dst=80 actions=drop\n"
    );
    // The request carried the filter, and the echo was answered with its payload (the
    // server thread may still be reading it when ctl has exited: wait, bounded).
    let seen = log.lock().unwrap().clone();
    assert!(seen.iter().any(|f| matches!(&f.message,
        Message::V13(M::MultipartRequest(r)) if matches!(&r.body, MultipartRequestBody::Flow(q) if q.table_id == 0))));
    let echoed = |log: &Log| {
        log.lock().unwrap().iter().any(|f| {
            f.xid == 0x7777 && matches!(&f.message, Message::V13(M::EchoReply(d)) if d == b"ping")
        })
    };
    let t = std::time::Instant::now();
    while !echoed(&log) && t.elapsed() < std::time::Duration::from_secs(5) {
        thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(echoed(&log), "no echo reply with the request's payload");

    let s = ctl(&["--rsort", "--no-stats", "dump-flows", &sw]);
    assert_eq!(
        text(&s.stdout),
        " priority=20,tcp,tp_dst=80 actions=drop\n priority=10,ip actions=output:1\n"
    );
    let j = ctl(&["--json", "--rsort=priority", "dump-flows", &sw]);
    let v: serde_json::Value = serde_json::from_slice(&j.stdout).unwrap();
    let flows = v.as_array().unwrap();
    assert_eq!(flows.len(), 2);
    assert_eq!(flows[0]["priority"], 20);
    assert_eq!(flows[0]["match"]["tp_dst"], "80");
    assert_eq!(flows[0]["match"]["nw_proto"], "6");
    assert_eq!(flows[1]["actions"], serde_json::json!(["output:1"]));
    assert_eq!(flows[1]["n_bytes"], 180);
}

#[test]
fn add_flows_sends_all_then_one_barrier_and_reports_each_error_line() {
    let log = Log::default();
    let sw = fake_tcp(log.clone());
    let dir = std::env::temp_dir().join(format!("ctl-flows-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("flows.txt");
    std::fs::write(
        &file,
        "# three flows\npriority=1,actions=drop\n\npriority=666,ip,actions=output:2\npriority=3,actions=drop # last\n",
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let o = ctl(&["add-flows", &sw, f]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert_eq!(
        err,
        format!(
            "{f}:4: OFPT_ERROR (OF1.3) (xid=0x3): OFPFMFC_OVERLAP\n\
             OFPT_FLOW_MOD (OF1.3) (xid=0x3): ADD priority=666,ip actions=output:2\n"
        )
    );
    let seen = log.lock().unwrap().clone();
    let kinds: Vec<String> = seen
        .iter()
        .filter(|f| !matches!(f.message, Message::V13(M::Hello(_))))
        .map(|f| match &f.message {
            Message::V13(M::FlowMod(m)) => format!("flow_mod:{}", m.priority),
            Message::V13(M::BarrierRequest) => "barrier".into(),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(kinds, vec!["flow_mod:1", "flow_mod:666", "flow_mod:3", "barrier"]);

    // The same with --json: the error as data, with its line.
    let j = ctl(&["--json", "add-flows", &sw, f]);
    assert_eq!(j.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&j.stdout).unwrap();
    assert_eq!(v["ok"], false);
    assert_eq!(v["errors"][0]["line"], 4);
    assert_eq!(v["errors"][0]["error"], "OFPFMFC_OVERLAP");

    // A bad line stops everything before anything is sent, and says where.
    std::fs::write(&file, "priority=1,actions=drop\nip,nw_scr=1.2.3.4,actions=drop\n").unwrap();
    let before = log.lock().unwrap().len();
    let b = ctl(&["add-flows", &sw, f]);
    assert_eq!(b.status.code(), Some(1));
    let msg = text(&b.stderr);
    assert!(msg.starts_with(&format!("peregrine ctl: {f}:2: at column 4 (")), "{msg}");
    assert!(msg.contains("nw_scr"), "{msg}");
    assert_eq!(log.lock().unwrap().len(), before);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bare_switch_names_use_the_management_socket() {
    let dir = std::env::temp_dir().join(format!("ctl-rundir-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("sw9.mgmt");
    let _ = std::fs::remove_file(&path);
    let l = UnixListener::bind(&path).unwrap();
    l.set_nonblocking(true).unwrap();
    let log = Log::default();
    let l2 = log.clone();
    thread::spawn(move || accept_loop(1, l2, || l.accept().map(|(s, _)| s)));
    let o = Command::new(env!("CARGO_BIN_EXE_peregrine"))
        .env("PEREGRINE_RUNDIR", &dir)
        .args([
            "ctl",
            "--timeout",
            "20",
            "-O",
            "OpenFlow13",
            "add-flow",
            "sw9",
            "priority=666,actions=drop",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("OFPFMFC_OVERLAP"), "{}", text(&o.stderr));
    assert!(log
        .lock()
        .unwrap()
        .iter()
        .any(|f| matches!(&f.message, Message::V13(M::FlowMod(m)) if m.priority == 666)));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn argument_errors_exit_1_with_a_reason() {
    let bad = ctl(&["add-flow", "tcp:127.0.0.1:1", "ip,frob=1,actions=drop"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(text(&bad.stderr).contains("unknown field \"frob\""), "{}", text(&bad.stderr));
    let few = ctl(&["mod-port", "tcp:127.0.0.1:1"]);
    assert_eq!(few.status.code(), Some(1));
    assert_eq!(
        text(&few.stderr),
        "peregrine ctl: 'mod-port' command requires at least 3 arguments\n"
    );
    let proto = ctl(&["-O", "OpenFlow12", "show", "br0"]);
    assert_eq!(proto.status.code(), Some(1));
    assert!(text(&proto.stderr).contains("OpenFlow12"));
    let refused = ctl(&["show", "unix:/nonexistent/peregrine-ctl-test.sock"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(text(&refused.stderr).contains("failed to connect"));
}
