//! `peregrine ctl` end to end against a tiny fake OpenFlow 1.3 (or 1.4) switch run by
//! the test: a thread that accepts connections, answers the hello, and replies to
//! requests with canned messages (multipart replies split over several messages, an
//! echo request in the middle of a dump, an error for one flow-mod, bundle control
//! replies in 1.4's and in 1.3's ONF form). Checks the printed output, the JSON, the
//! exit status and what went over the wire. Needs no Open vSwitch and no privileges.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::os::unix::net::UnixListener;
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use ctl::target::Stream;
use openflow::framing::Framer;
use openflow::v13::bundle::{BundleAdd, BundleControl, BundleCtrlType};
use openflow::v13::multipart::{
    FlowStats, MultipartReply, MultipartReplyBody, MultipartRequestBody, OFPMPF_REPLY_MORE,
};
use openflow::v13::port::Port;
use openflow::v13::{ErrorMsg, Experimenter, FeaturesReply, Hello, Message as M, SwitchConfig};
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
        M::FlowMod(f) if f.priority == 666 => vec![overlap(x, raw)],
        M::BundleControl(c) => vec![Frame::v13(x, M::BundleControl(control_reply(c)))],
        M::BundleAdd(a) if refused(a) => vec![overlap(x, raw)],
        M::Experimenter(e) => {
            match (BundleControl::from_experimenter(e), BundleAdd::from_experimenter(e)) {
                (Some(Ok(c)), _) => {
                    vec![Frame::v13(x, M::Experimenter(control_reply(&c).to_experimenter()))]
                }
                (_, Some(Ok(a))) if refused(&a) => vec![overlap(x, raw)],
                _ => vec![],
            }
        }
        _ => vec![],
    }
}

/// The error the fake switch refuses a flow-mod of priority 666 with.
fn overlap(xid: u32, raw: &[u8]) -> Frame {
    Frame::v13(
        xid,
        M::Error(ErrorMsg::Standard { kind: ErrorKind { ty: 5, code: 3 }, data: raw.to_vec() }),
    )
}

/// The reply to a bundle control request: the next type, the same id and flags.
fn control_reply(c: &BundleControl) -> BundleControl {
    BundleControl {
        ctrl_type: BundleCtrlType::from_u16(c.ctrl_type.to_u16() + 1),
        properties: vec![],
        ..c.clone()
    }
}

/// Whether the fake switch refuses a bundle add: its flow-mod has priority 666.
fn refused(a: &BundleAdd) -> bool {
    matches!(a.decode_message(), Ok(Frame { message: Message::V13(M::FlowMod(f)), .. }) if f.priority == 666)
}

/// Serves one connection: a hello offering `versions`, then canned answers (in the
/// request's version) until the client hangs up.
fn serve(mut s: impl Read + Write, log: Log, versions: &[u8]) {
    let hello = Frame::v13(1, M::Hello(Hello::with_versions(versions)));
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
            for mut a in answer(&f, &raw) {
                a.version = f.version;
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
    versions: &'static [u8],
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
                thread::spawn(move || serve(s, log, versions));
            }
            Err(_) => thread::sleep(Duration::from_millis(5)),
        }
    }
}

/// Starts a fake switch of OpenFlow 1.0 and 1.3 on a free TCP port; returns
/// `tcp:127.0.0.1:PORT`.
fn fake_tcp(log: Log) -> String {
    fake_tcp_speaking(log, &[1, 4])
}

/// [`fake_tcp`] for a switch that offers `versions` (wire numbers).
fn fake_tcp_speaking(log: Log, versions: &'static [u8]) -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.set_nonblocking(true).unwrap();
    let addr = l.local_addr().unwrap();
    thread::spawn(move || accept_loop(8, log, versions, || l.accept().map(|(s, _)| s)));
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
    thread::spawn(move || accept_loop(1, l2, &[1, 4], || l.accept().map(|(s, _)| s)));
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

/// What the fake switch received after the hello, one word each: `open`, `commit`,
/// `discard` (bundle controls, in 1.4's form or `onf-...` in 1.3's), `add:CMD:PRIO`
/// (a bundle add, `onf-add` in 1.3's form, whose flow-mod carries the add's own xid),
/// `flow_mod:CMD:PRIO`, `barrier`, `dump`, `echo` (a reply: the fake's flow dump
/// holds an echo request); and the wire version of each.
fn sequence(log: &Log) -> Vec<(u8, String)> {
    let flow = |f: &openflow::v13::FlowMod| format!("{:?}:{}", f.command, f.priority);
    let add = |a: &BundleAdd, xid: u32| {
        let inner = a.decode_message().unwrap();
        assert_eq!(inner.xid, xid, "the bundled message carries the add's xid");
        match inner.message {
            Message::V13(M::FlowMod(f)) => flow(&f),
            Message::V13(M::GroupMod(g)) => format!("group:{:?}:{}", g.command, g.group_id),
            other => format!("{other:?}"),
        }
    };
    let ctrl = |c: &BundleControl| format!("{:?}", c.ctrl_type).replace("Request", "");
    log.lock()
        .unwrap()
        .iter()
        .filter(|f| !matches!(f.message, Message::V13(M::Hello(_))))
        .map(|f| {
            let word = match &f.message {
                Message::V13(M::BundleControl(c)) => ctrl(c).to_lowercase(),
                Message::V13(M::BundleAdd(a)) => format!("add:{}", add(a, f.xid)),
                Message::V13(M::Experimenter(e @ Experimenter { exp_type: 2300, .. })) => {
                    format!("onf-{}", ctrl(&BundleControl::from_experimenter(e).unwrap().unwrap()))
                        .to_lowercase()
                }
                Message::V13(M::Experimenter(e @ Experimenter { exp_type: 2301, .. })) => {
                    format!(
                        "onf-add:{}",
                        add(&BundleAdd::from_experimenter(e).unwrap().unwrap(), f.xid)
                    )
                }
                Message::V13(M::FlowMod(m)) => format!("flow_mod:{}", flow(m)),
                Message::V13(M::BarrierRequest) => "barrier".into(),
                Message::V13(M::MultipartRequest(_)) => "dump".into(),
                Message::V13(M::EchoReply(_)) => "echo".into(),
                other => format!("{other:?}"),
            };
            (f.version, word)
        })
        .collect()
}

/// A file under a fresh directory for this test (`name`), with `text`.
fn flow_file(name: &str, text: &str) -> (std::path::PathBuf, String) {
    let dir = std::env::temp_dir().join(format!("ctl-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("flows.txt");
    std::fs::write(&file, text).unwrap();
    let f = file.to_str().unwrap().to_string();
    (dir, f)
}

#[test]
fn bundle_add_flows_over_14_opens_adds_and_commits() {
    let log = Log::default();
    let sw = fake_tcp_speaking(log.clone(), &[1, 4, 5]);
    let (dir, f) =
        flow_file("bundle14", "priority=1,actions=drop\nip,priority=2,actions=output:1\n");
    let o = ctl(&["--bundle", "add-flows", &sw, &f]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(text(&o.stderr), "");
    let seq = sequence(&log);
    assert!(seq.iter().all(|(v, _)| *v == 5), "{seq:?}");
    let words: Vec<&str> = seq.iter().map(|(_, w)| w.as_str()).collect();
    assert_eq!(words, ["open", "add:Add:1", "add:Add:2", "barrier", "commit"]);

    // mod-flows and del-flows too, one flow-mod each.
    log.lock().unwrap().clear();
    let o = ctl(&["--bundle", "--strict", "del-flows", &sw, "priority=1"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = ctl(&["--bundle", "mod-flows", &sw, "ip,actions=drop"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let words: Vec<String> = sequence(&log).into_iter().map(|(_, w)| w).collect();
    assert_eq!(
        words,
        [
            "open",
            "add:DeleteStrict:1",
            "barrier",
            "commit",
            "open",
            "add:Modify:32768",
            "barrier",
            "commit"
        ]
    );

    // Groups go in bundles too.
    log.lock().unwrap().clear();
    let o = ctl(&["--bundle", "add-group", &sw, "group_id=7,type=all,bucket=output:1"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let words: Vec<String> = sequence(&log).into_iter().map(|(_, w)| w).collect();
    assert_eq!(words, ["open", "add:group:Add:7", "barrier", "commit"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bundle_over_13_uses_the_onf_form_and_discards_on_a_refusal() {
    let log = Log::default();
    let sw = fake_tcp(log.clone());
    let (dir, f) = flow_file(
        "bundle13",
        "# three flows\npriority=1,actions=drop\n\npriority=666,ip,actions=output:2\npriority=3,actions=drop\n",
    );
    let o = ctl(&["-O", "OpenFlow13", "--bundle", "add-flows", &sw, &f]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(
        err.starts_with(&format!("{f}:4: OFPT_ERROR (OF1.3) (xid=0x4): OFPFMFC_OVERLAP\n")),
        "{err}"
    );
    assert!(
        err.ends_with(&format!(
            "peregrine ctl: {sw}: the bundle was not committed: nothing was changed\n"
        )),
        "{err}"
    );
    let seq = sequence(&log);
    assert!(seq.iter().all(|(v, _)| *v == 4), "{seq:?}");
    let words: Vec<&str> = seq.iter().map(|(_, w)| w.as_str()).collect();
    assert_eq!(
        words,
        ["onf-open", "onf-add:Add:1", "onf-add:Add:666", "onf-add:Add:3", "barrier", "onf-discard"]
    );
    // With --json: the error with its line, and not ok.
    let j = ctl(&["-O", "OpenFlow13", "--json", "--bundle", "add-flows", &sw, &f]);
    assert_eq!(j.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&j.stdout).unwrap();
    assert_eq!(v["ok"], false);
    assert_eq!(v["errors"][0]["line"], 4);
    assert_eq!(v["errors"][0]["error"], "OFPFMFC_OVERLAP");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bundle_needs_13_and_a_flow_or_group_command() {
    let o = ctl(&["-O", "OpenFlow10", "--bundle", "add-flow", "tcp:127.0.0.1:1", "actions=drop"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        text(&o.stderr),
        "peregrine ctl: --bundle: bundles need OpenFlow 1.3 or later, but -O OpenFlow10 \
         allows only OpenFlow10 (use -O OpenFlow14 or -O OpenFlow13)\n"
    );
    let o = ctl(&["--bundle", "dump-flows", "tcp:127.0.0.1:1"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).starts_with("peregrine ctl: --bundle: 'dump-flows' cannot be bundled"),
        "{}",
        text(&o.stderr)
    );
    // A switch that picks 1.0 (ours offer 1.0 too) gets no bundle.
    let log = Log::default();
    let sw = fake_tcp_speaking(log.clone(), &[1]);
    let o = ctl(&["--bundle", "add-flow", &sw, "actions=drop"]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(err.contains("bundles need OpenFlow 1.3 or later, but"), "{err}");
    assert!(err.contains("speaks OpenFlow 1.0"), "{err}");
    assert!(
        log.lock().unwrap().iter().all(|f| matches!(f.message, Message::V10(_))
            || matches!(f.message, Message::V13(M::Hello(_)))),
        "nothing but the hello was sent"
    );
}

#[test]
fn replace_flows_deletes_what_the_file_lacks_and_adds_what_the_switch_lacks() {
    // The fake switch holds priority=10,ip,actions=output:1 and
    // priority=20,tcp,tp_dst=80,actions=drop.
    let (dir, f) = flow_file(
        "replace",
        "priority=10,ip,actions=output:1\n# new\npriority=30,in_port=2,actions=output:1\n",
    );
    let log = Log::default();
    let sw = fake_tcp(log.clone());
    let o = ctl(&["-O", "OpenFlow13", "replace-flows", &sw, &f]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let words: Vec<String> = sequence(&log).into_iter().map(|(_, w)| w).collect();
    assert_eq!(words, ["dump", "echo", "flow_mod:DeleteStrict:20", "flow_mod:Add:30", "barrier"]);
    // The delete names the switch's flow exactly.
    let del = log.lock().unwrap().iter().find_map(|f| match &f.message {
        Message::V13(M::FlowMod(m)) if m.priority == 20 => Some(m.clone()),
        _ => None,
    });
    let want = openflow::text::parse_flow("priority=20,tcp,tp_dst=80,actions=drop").unwrap();
    assert_eq!(del.unwrap().match_, want.match_);

    // With --bundle over 1.4: the same changes in one bundle, after the dump.
    let log = Log::default();
    let sw = fake_tcp_speaking(log.clone(), &[1, 4, 5]);
    let o = ctl(&["--bundle", "replace-flows", &sw, &f]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let words: Vec<String> = sequence(&log).into_iter().map(|(_, w)| w).collect();
    assert_eq!(
        words,
        ["dump", "echo", "open", "add:DeleteStrict:20", "add:Add:30", "barrier", "commit"]
    );
    // A command word other than add is refused before any request is sent.
    std::fs::write(&f, "priority=10,ip,actions=output:1\ndelete ip\n").unwrap();
    let log = Log::default();
    let sw = fake_tcp(log.clone());
    let o = ctl(&["replace-flows", &sw, &f]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr)
            .starts_with(&format!("peregrine ctl: {f}:2: replace-flows reads flows, not commands")),
        "{}",
        text(&o.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
