//! `peregrine trace`: runs a flow (ovs-ofctl match syntax) or a packet from a pcap file
//! through a running switch's pipeline and prints every step.
//!
//! The command is a thin client: it connects to the switch's management socket (or an
//! OpenFlow listener), says HELLO for OpenFlow 1.3, sends peregrine's `TRACE`
//! experimenter request (see `switch::agent` `trace.rs` for the request and the reply)
//! and prints the reply's `text`, or the whole reply with `--json`. The SWITCH argument
//! and the connection are `peregrine ctl`'s ([`Target`], [`Conn`]): blocking sockets
//! with a deadline for the whole exchange; echo requests that arrive meanwhile are
//! answered, messages with other xids (port status, packet-ins) are skipped. What is
//! trace's own is the wording of its failures: how to start a switch that is not
//! there, and what a refused TRACE request means.
//!
//! A `--pcap` packet is read by `ports::pcap::nth_packet` (classic pcap, microsecond or
//! nanosecond, either byte order, Ethernet link type); pcapng is refused with a hint to
//! convert it.

use std::cell::Cell;
use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::rc::Rc;
use std::time::{Duration, Instant};

use openflow::{v13, Frame, Message};
use serde_json::{json, Value};
use switch::agent::{exp_type, PEREGRINE_EXPERIMENTER};

use ctl::conn::{Conn, Limits};
use ctl::target::{self, Stream, Target};
use ctl::CtlError;
use openflow::text::print;
use openflow::Versions;

/// How long the whole exchange with the switch may take.
const DEADLINE: Duration = Duration::from_secs(10);

/// Options of `peregrine trace`.
#[derive(Clone, Debug, clap::Args)]
pub struct TraceArgs {
    /// Print the switch's JSON reply instead of the text.
    #[arg(long)]
    pub json: bool,
    /// The switch: unix:PATH, tcp:HOST[:PORT], a socket path (with a '/'), or a switch
    /// NAME (its management socket /run/peregrine/NAME.mgmt).
    pub switch: String,
    /// The packet as a flow in ovs-ofctl match syntax, with in_port; also nw_ttl,
    /// tcp_flags and nw_frag. Example: tcp,in_port=1,nw_dst=10.0.0.2,tcp_dst=80
    #[arg(required_unless_present = "pcap", conflicts_with = "pcap")]
    pub flow: Option<String>,
    /// Trace a packet from this capture (classic pcap, Ethernet) instead of a flow.
    #[arg(long, value_name = "FILE")]
    pub pcap: Option<PathBuf>,
    /// Which packet of the capture, counting from 1.
    #[arg(long, value_name = "N")]
    pub packet: Option<usize>,
    /// The port the captured packet arrives on (default 1).
    #[arg(long = "in-port", value_name = "P")]
    pub in_port: Option<u32>,
}

pub fn main(args: &TraceArgs) -> ExitCode {
    match run(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("peregrine trace: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &TraceArgs) -> Result<ExitCode, String> {
    let req = request(args)?;
    let (t, name) = target(&args.switch)?;
    let reply = ask(&t, name, req.to_string().into_bytes())?;
    let v: Value =
        serde_json::from_slice(&reply).map_err(|e| format!("{t}: the reply is not JSON ({e})"))?;
    let error = v.get("error").and_then(Value::as_str);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&v).unwrap_or_else(|_| v.to_string()));
    } else if let Some(e) = error {
        let column = v.get("column").and_then(Value::as_u64);
        eprintln!("peregrine trace: {}", error_message(e, args.flow.as_deref(), column));
    } else {
        let text = v.get("text").and_then(Value::as_str).unwrap_or_default();
        let mut out = io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    }
    Ok(if error.is_some() { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

/// The TRACE request's data.
fn request(args: &TraceArgs) -> Result<Value, String> {
    if args.pcap.is_none() && (args.packet.is_some() || args.in_port.is_some()) {
        return Err("--packet and --in-port go with --pcap (a flow names its own in_port)".into());
    }
    match (&args.flow, &args.pcap) {
        (Some(flow), None) => Ok(json!({ "flow": flow })),
        (None, Some(path)) => {
            let n = args.packet.unwrap_or(1);
            let pkt = ports::pcap::packet_of_file(path, n)?;
            if pkt.data.len() < pkt.orig_len {
                eprintln!(
                    "peregrine trace: packet {n} of {} was captured cut to {} of its {} bytes; \
                     tracing the bytes captured",
                    path.display(),
                    pkt.data.len(),
                    pkt.orig_len
                );
            }
            let hex: String = pkt.data.iter().map(|b| format!("{b:02x}")).collect();
            Ok(json!({ "packet": hex, "in_port": args.in_port.unwrap_or(1) }))
        }
        _ => Err("give either a FLOW or --pcap FILE".into()),
    }
}

/// The switch's message, with the flow and a caret under `column` when there is one.
fn error_message(e: &str, flow: Option<&str>, column: Option<u64>) -> String {
    match (flow, column) {
        (Some(flow), Some(c)) if c >= 1 && (c as usize) <= flow.len() + 1 => {
            let pad: String = flow
                .get(..c as usize - 1)
                .unwrap_or("")
                .chars()
                .map(|ch| if ch == '\t' { '\t' } else { ' ' })
                .collect();
            format!("{e}\n  {flow}\n  {pad}^")
        }
        _ => e.to_string(),
    }
}

/// The SWITCH argument, parsed as `peregrine ctl` parses it (a bare name is the
/// management socket `peregrine run --name NAME` makes under /run/peregrine), and the
/// switch name when it was one (for the hint when nothing listens there).
fn target(s: &str) -> Result<(Target, Option<&str>), String> {
    let name = target::bare_name(s);
    let ok = name.is_none_or(|n| {
        !n.starts_with('.') && n.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    });
    if !ok {
        return Err(format!(
            "{s:?}: expected unix:PATH, tcp:HOST[:PORT], a socket path or a switch name"
        ));
    }
    Ok((Target::parse(s, target::DEFAULT_RUNDIR)?, name))
}

/// Connects to the switch at `t`; when nothing listens there, says how to start it.
fn connect(t: &Target, name: Option<&str>) -> Result<Box<dyn Stream>, String> {
    t.connect(DEADLINE).map_err(|e| {
        let hint = match (t, name) {
            (Target::Unix(_), _) if e.kind() == io::ErrorKind::PermissionDenied => {
                return format!(
                    "cannot connect to {t}: {e} (the management socket is root's: run as root)"
                )
            }
            (Target::Unix(_), Some(name)) => format!(
                "is the switch running? start it with `peregrine run --name {name} ...`, or \
                 check the name (or give the socket's path)"
            ),
            (Target::Unix(_), None) => "is the switch running (`peregrine run --mgmt PATH ...`)? \
                                        check the path"
                .to_string(),
            (Target::Tcp { .. }, _) => "is the switch running with a listener there \
                                        (`peregrine run --listen ptcp:PORT ...`)?"
                .to_string(),
        };
        format!("cannot connect to {t}: {e}; {hint}")
    })
}

/// Sends a TRACE request with `data` to the switch at `t` (`name`: see [`target`]) over
/// OpenFlow 1.3 and returns the reply's data.
fn ask(t: &Target, name: Option<&str>, data: Vec<u8>) -> Result<Vec<u8>, String> {
    let stream = connect(t, name)?;
    let ep = t.to_string();
    let limits = Limits { deadline: Some(Instant::now() + DEADLINE), idle: DEADLINE };
    let only13 = Versions::parse("OpenFlow13")?;
    let xids = Rc::new(Cell::new(1));
    let mut conn = Conn::handshake(stream, &ep, only13, xids, limits)
        .map_err(|e| failure(&ep, e, "the switch refused the connection"))?;
    let request = Message::V13(v13::Message::Experimenter(v13::Experimenter {
        experimenter: PEREGRINE_EXPERIMENTER,
        exp_type: exp_type::TRACE,
        data,
    }));
    let reply = conn
        .transact(request)
        .map_err(|e| failure(&ep, e, "the switch refused the trace request"))?;
    match reply.message {
        Message::V13(v13::Message::Experimenter(e)) if e.experimenter == PEREGRINE_EXPERIMENTER => {
            Ok(e.data)
        }
        other => Err(format!("{ep}: unexpected reply {other:?}")),
    }
}

/// The message for a failed exchange with the switch at `ep`; `refused` says what a
/// refusal by the switch means at this step.
fn failure(ep: &str, e: CtlError, refused: &str) -> String {
    match e {
        CtlError::Timeout(_) => format!("{ep}: no answer within {} s", DEADLINE.as_secs()),
        CtlError::Fatal(m) => m,
        CtlError::Reported(text) => format!("{ep}: {refused}:\n{}", text.trim_end()),
        CtlError::Switch(r) => match r.frame {
            Ok(Frame {
                message: Message::V13(v13::Message::Error(v13::ErrorMsg::Standard { kind, .. })),
                ..
            }) if kind == openflow::ErrorKind::BAD_REQUEST_BAD_EXP_TYPE
                || kind == openflow::ErrorKind::BAD_REQUEST_BAD_EXPERIMENTER =>
            {
                format!("{ep}: the switch does not serve trace requests ({kind})")
            }
            Ok(Frame {
                message: Message::V13(v13::Message::Error(v13::ErrorMsg::Standard { kind, .. })),
                ..
            }) => format!("{ep}: {refused}: {kind}"),
            _ => format!("{ep}: {refused}:\n{}", print::raw(&r.bytes, 1).trim_end()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn switch_names_paths_and_targets() {
        assert_eq!(
            target("br0").unwrap(),
            (Target::Unix("/run/peregrine/br0.mgmt".into()), Some("br0"))
        );
        assert_eq!(target("/tmp/x.mgmt").unwrap(), (Target::Unix("/tmp/x.mgmt".into()), None));
        assert_eq!(target("unix:x.mgmt").unwrap(), (Target::Unix("x.mgmt".into()), None));
        let (tcp, name) = target("tcp:127.0.0.1").unwrap();
        assert_eq!(name, None);
        assert_eq!(tcp.to_string(), "tcp:127.0.0.1:6653");
        assert!(target("ptcp:6653").is_err());
        assert!(target("a b").unwrap_err().contains("a switch name"));
        assert!(target(".hidden").is_err());
        assert!(target("").is_err());
    }

    #[test]
    fn a_missing_switch_says_how_to_start_it() {
        let name = format!("no-such-switch-{}", std::process::id());
        let (t, n) = target(&name).unwrap();
        let e = connect(&t, n).err().unwrap();
        assert!(e.contains(&format!("peregrine run --name {name}")), "{e}");
        let (t, n) = target("/nonexistent/x.mgmt").unwrap();
        let e = connect(&t, n).err().unwrap();
        assert!(e.contains("cannot connect to unix:/nonexistent/x.mgmt"), "{e}");
        assert!(e.contains("--mgmt PATH"), "{e}");
    }

    /// A peer that answers the hello with a 1.3 hello, then `answer(xid of the request)`.
    fn scripted_switch(
        answer: impl FnOnce(u32) -> Vec<Frame> + Send + 'static,
    ) -> (PathBuf, std::thread::JoinHandle<()>) {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let path = std::env::temp_dir().join(format!(
            "peregrine-trace-peer-{}-{}.sock",
            std::process::id(),
            N.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
        ));
        let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let h = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            let hello = Frame::v13(1, v13::Message::Hello(v13::Hello::with_versions(&[4])));
            s.write_all(&hello.encode().unwrap()).unwrap();
            let mut framer = openflow::framing::Framer::new();
            let mut buf = [0u8; 4096];
            // The client's hello, then its request.
            let mut got = Vec::new();
            while got.len() < 2 {
                let n = s.read(&mut buf).unwrap();
                assert!(n > 0, "the client hung up early");
                framer.push(&buf[..n]);
                while let Ok(Some(m)) = framer.next_message() {
                    got.push(Frame::decode(m).unwrap());
                }
            }
            for r in answer(got[1].xid) {
                s.write_all(&r.encode().unwrap()).unwrap();
            }
        });
        (path, h)
    }

    #[test]
    fn refusals_keep_their_messages_and_other_xids_are_skipped() {
        let refuse = |kind| {
            move |xid| {
                vec![Frame::v13(
                    xid,
                    v13::Message::Error(v13::ErrorMsg::Standard { kind, data: vec![] }),
                )]
            }
        };
        let cases = [
            (openflow::ErrorKind::BAD_REQUEST_BAD_EXPERIMENTER, "does not serve trace requests"),
            (
                openflow::ErrorKind::BAD_REQUEST_EPERM,
                "the switch refused the trace request: OFPET_BAD_REQUEST/OFPBRC_EPERM",
            ),
        ];
        for (kind, want) in cases {
            let (path, h) = scripted_switch(refuse(kind));
            let e = ask(&Target::Unix(path.clone()), None, b"{}".to_vec()).unwrap_err();
            h.join().unwrap();
            let _ = std::fs::remove_file(&path);
            assert!(e.contains(want), "{e}");
        }
        // Replies with other xids are skipped; the one with the request's xid counts.
        let (path, h) = scripted_switch(|xid| {
            let exp = |xid, data: &[u8]| {
                Frame::v13(
                    xid,
                    v13::Message::Experimenter(v13::Experimenter {
                        experimenter: PEREGRINE_EXPERIMENTER,
                        exp_type: exp_type::TRACE,
                        data: data.to_vec(),
                    }),
                )
            };
            vec![exp(xid + 7, b"other"), exp(xid, b"ours")]
        });
        let got = ask(&Target::Unix(path.clone()), None, b"{}".to_vec());
        h.join().unwrap();
        let _ = std::fs::remove_file(&path);
        assert_eq!(got.unwrap(), b"ours");
    }

    /// A switch (agent, datapath and shell, no port backends) serving a management
    /// socket; stopped and its socket removed on drop.
    struct LocalSwitch {
        shell: Option<switch::shell::Shell>,
        path: PathBuf,
    }

    impl Drop for LocalSwitch {
        fn drop(&mut self) {
            if let Some(s) = self.shell.take() {
                s.stop();
            }
            let _ = std::fs::remove_file(&self.path);
        }
    }

    struct Discard;

    impl switch::agent::Transmit for Discard {
        fn transmit(
            &mut self,
            _: &mut datapath::pipeline::Outputs,
        ) -> Result<(), switch::agent::TransmitError> {
            Ok(())
        }
    }

    fn local_switch(flows: &[&str]) -> LocalSwitch {
        use datapath::pipeline::{Datapath, DatapathConfig};
        use switch::agent::{Agent, AgentConfig};
        use switch::ports::{PortSpec, PortTable};
        let specs = (1..=2)
            .map(|no| PortSpec {
                no,
                slot: (no - 1) as u16,
                name: format!("p{no}"),
                hw_addr: [2, 0, 0, 0, 0, no as u8],
                speed_mbps: None,
                up: true,
                backend: None,
            })
            .collect();
        let table = PortTable::new(specs, 0);
        let cfg = DatapathConfig { ports: table.datapath_ports(), ..DatapathConfig::default() };
        let (dp, writer, packet_ins) = Datapath::new(cfg, 64);
        let mut agent = Agent::new(AgentConfig::default(), dp, writer, table, Box::new(Discard));
        for f in flows {
            let fm =
                openflow::text::parse_flow_mod(f, openflow::v13::flow_mod::FlowModCommand::Add)
                    .unwrap();
            agent.flow_mod(&fm, 0).unwrap();
        }
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let path = std::env::temp_dir().join(format!(
            "peregrine-trace-{}-{}.mgmt",
            std::process::id(),
            N.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
        ));
        let shell = switch::shell::Shell::start(
            agent,
            vec![],
            None,
            Some(path.clone()),
            packet_ins,
            Instant::now(),
        )
        .unwrap();
        LocalSwitch { shell: Some(shell), path }
    }

    #[test]
    fn traces_through_a_switch_on_its_management_socket() {
        let sw = local_switch(&["priority=10,in_port=1,ip,actions=output:2"]);
        let arg = format!("unix:{}", sw.path.display());
        let (t, name) = target(&arg).unwrap();
        let reply =
            ask(&t, name, json!({ "flow": "udp,in_port=1" }).to_string().into_bytes()).unwrap();
        let v: Value = serde_json::from_slice(&reply).unwrap();
        assert_eq!(v["outputs"], json!([2]));
        let text = v["text"].as_str().unwrap();
        assert!(
            text.contains("table 0: priority 10, cookie 0x0: ip,in_port=1 actions=output:2"),
            "{text}"
        );
        assert!(text.contains("-> output to port 2 (p2)"), "{text}");
        // A pcap packet, by path this time.
        let dir = std::env::temp_dir().join(format!("peregrine-trace-pcap-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("one.pcap");
        let frame = hex_bytes(v["packet"].as_str().unwrap());
        ports::pcap::write_frames(&file, &[&frame]).unwrap();
        let args = TraceArgs {
            json: false,
            switch: sw.path.display().to_string(),
            flow: None,
            pcap: Some(file),
            packet: Some(1),
            in_port: Some(1),
        };
        let req = request(&args).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        let (t, name) = target(&args.switch).unwrap();
        let by_pcap: Value =
            serde_json::from_slice(&ask(&t, name, req.to_string().into_bytes()).unwrap()).unwrap();
        assert_eq!(by_pcap["text"], v["text"]);
        // A mistake comes back as an error reply.
        let bad: Value = serde_json::from_slice(
            &ask(&t, name, json!({ "flow": "in_port=1,nw_scr=1" }).to_string().into_bytes())
                .unwrap(),
        )
        .unwrap();
        assert_eq!(bad["column"], 11);
    }

    fn hex_bytes(s: &str) -> Vec<u8> {
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    #[test]
    fn pcap_options_need_a_pcap() {
        let args = TraceArgs {
            json: false,
            switch: "br0".into(),
            flow: Some("in_port=1".into()),
            pcap: None,
            packet: Some(2),
            in_port: None,
        };
        assert!(request(&args).unwrap_err().contains("--pcap"));
        let args = TraceArgs { packet: None, ..args };
        assert_eq!(request(&args).unwrap(), json!({ "flow": "in_port=1" }));
    }

    #[test]
    fn errors_point_at_their_column() {
        let m = error_message("bad", Some("in_port=1,nw_scr=1"), Some(11));
        assert_eq!(m, "bad\n  in_port=1,nw_scr=1\n            ^");
        assert_eq!(error_message("bad", Some("x"), None), "bad");
        assert_eq!(error_message("bad", None, Some(3)), "bad");
    }
}
