//! The OpenFlow agent end to end: `peregrine run` between namespace hosts, programmed
//! by a real client (`ovs-ofctl`, OpenFlow 1.3 and 1.0) over its `ptcp:` listener and by
//! real controllers (os-ken applications in this directory, started through
//! `os_ken.base.app_manager`), checked with ping.
//!
//! Root is needed (namespaces, raw sockets), so they are ignored by default; CI runs them
//! as root with `cargo test -- --ignored`. os-ken comes from the repository's `.venv`
//! (`.ci/run` installs it); a test that needs it says so if it is missing.

mod common;

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use bench::topo::{Host, Topology};
use common::osken::{free_port, Controller};
use common::{ctl, hosts_on_switch, ping, ping_until_ok, SwitchProc};

/// Runs `ovs-ofctl -O VERSION CMD tcp:127.0.0.1:PORT ARGS…`; its stdout, or a panic with
/// its stderr.
fn ofctl(version: &str, cmd: &str, port: u16, args: &[&str]) -> String {
    let out = try_ofctl(version, cmd, port, args);
    match out {
        Ok(s) => s,
        Err(e) => panic!("ovs-ofctl {cmd} {args:?}: {e}"),
    }
}

fn try_ofctl(version: &str, cmd: &str, port: u16, args: &[&str]) -> Result<String, String> {
    let out = Command::new("ovs-ofctl")
        .args(["-O", version, "--timeout=10", cmd, &format!("tcp:127.0.0.1:{port}")])
        .args(args)
        .output()
        .map_err(|e| format!("cannot run ovs-ofctl: {e} (install openvswitch-switch)"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// Two hosts on a switch in secure mode that listens for OpenFlow on
/// `ptcp:PORT:127.0.0.1`, PORT free. Bind as `let (topo, h, _sw, PORT) = …` so that the
/// switch is ended before the namespaces are removed.
fn listening_switch() -> (Topology, Vec<Host>, SwitchProc, u16) {
    let port = free_port();
    let listen = format!("ptcp:{port}:127.0.0.1");
    let (topo, h, sw) = hosts_on_switch(2, &["--listen", &listen, "--fail-mode", "secure"]);
    (topo, h, sw, port)
}

/// The flow lines of a dump-flows output, without durations and counters' times.
fn flow_lines(dump: &str) -> Vec<String> {
    dump.lines()
        .filter(|l| l.contains("actions="))
        .map(|l| {
            l.split(", ")
                .filter(|f| !f.trim_start().starts_with("duration="))
                .collect::<Vec<_>>()
                .join(", ")
                .trim()
                .to_string()
        })
        .collect()
}

#[test]
#[ignore = "needs root: network namespaces"]
fn ovs_ofctl_13_programs_flows_groups_meters_and_ports() {
    let (topo, h, _sw, port) = listening_switch();
    let v = "OpenFlow13";
    // Secure mode without flows forwards nothing.
    assert!(!ping(&topo, &h[0], &h[1].ip, 1));
    ofctl(v, "add-flow", port, &["in_port=1,actions=output:2"]);
    ofctl(v, "add-flow", port, &["in_port=2,actions=output:1"]);
    ping_until_ok(&topo, &h[0], &h[1].ip);
    let flows = flow_lines(&ofctl(v, "dump-flows", port, &[]));
    assert_eq!(flows.len(), 2, "{flows:?}");
    assert!(flows[0].contains("in_port=1") && flows[0].ends_with("actions=output:2"), "{flows:?}");
    let n_packets: u64 =
        flows[0].split(", ").find_map(|f| f.strip_prefix("n_packets=")).unwrap().parse().unwrap();
    assert!(n_packets >= 1, "{flows:?}");
    // Port statistics count what went through.
    let ports = ofctl(v, "dump-ports", port, &["1"]);
    assert!(ports.contains("port  1: rx pkts="), "{ports}");
    assert!(!ports.contains("rx pkts=0,"), "{ports}");
    // Groups and meters.
    ofctl(v, "add-group", port, &["group_id=5,type=all,bucket=output:1,bucket=output:2"]);
    let groups = ofctl(v, "dump-groups", port, &[]);
    assert!(
        groups.contains("group_id=5,type=all,bucket=actions=output:1,bucket=actions=output:2"),
        "{groups}"
    );
    ofctl(v, "add-meter", port, &["meter=3,kbps,band=type=drop,rate=1000"]);
    let meters = ofctl(v, "dump-meters", port, &[]);
    assert!(
        meters.contains("meter=3 kbps bands=\ntype=drop rate=1000")
            || meters.contains("meter=3 kbps bands=type=drop rate=1000"),
        "{meters}"
    );
    // A flow to a missing group is refused with the right error; the connection lives.
    let e = try_ofctl(v, "add-flow", port, &["in_port=1,actions=group:99"]).unwrap_err();
    assert!(e.contains("OFPBAC_BAD_OUT_GROUP"), "{e}");
    // Deleting the flows stops forwarding.
    ofctl(v, "del-flows", port, &[]);
    assert!(flow_lines(&ofctl(v, "dump-flows", port, &[])).is_empty());
    assert!(!ping(&topo, &h[0], &h[1].ip, 1));
    // mod-port down shows in the port description.
    ofctl(v, "mod-port", port, &["1", "down"]);
    let desc = ofctl(v, "dump-ports-desc", port, &[]);
    assert!(desc.contains("config:     PORT_DOWN"), "{desc}");
    drop(topo);
}

#[test]
#[ignore = "needs root: network namespaces"]
fn ovs_ofctl_10_programs_flows_on_the_same_state() {
    let (topo, h, _sw, port) = listening_switch();
    let (v10, v13) = ("OpenFlow10", "OpenFlow13");
    ofctl(v10, "add-flow", port, &["in_port=1,actions=output:2"]);
    ofctl(v10, "add-flow", port, &["in_port=2,actions=output:1"]);
    ping_until_ok(&topo, &h[0], &h[1].ip);
    let flows10 = flow_lines(&ofctl(v10, "dump-flows", port, &[]));
    assert_eq!(flows10.len(), 2, "{flows10:?}");
    // A 1.3 client sees the flows a 1.0 client made.
    let flows13 = flow_lines(&ofctl(v13, "dump-flows", port, &[]));
    assert_eq!(flows13.len(), 2, "{flows13:?}");
    let ports = ofctl(v10, "dump-ports", port, &[]);
    assert!(ports.contains("port  2: rx pkts="), "{ports}");
    // Open vSwitch's 1.0 port descriptions (stats type 13).
    let desc = ofctl(v10, "dump-ports-desc", port, &[]);
    assert!(desc.starts_with("OFPST_PORT_DESC reply") && desc.contains("\n 2("), "{desc}");
    ofctl(v10, "del-flows", port, &["in_port=1"]);
    assert_eq!(flow_lines(&ofctl(v10, "dump-flows", port, &[])).len(), 1);
    drop(topo);
}

#[test]
#[ignore = "needs root: network namespaces"]
fn ovs_ofctl_10_reaches_every_table_counts_what_it_lists_and_tags_frames() {
    let (topo, h, _sw, port) = listening_switch();
    let (v10, v13) = ("OpenFlow10", "OpenFlow13");
    for f in [
        "table=0,priority=1,actions=goto_table:1",
        "table=0,priority=5,ip,actions=output:2",
        "table=1,priority=5,ip,actions=output:2",
    ] {
        ofctl(v13, "add-flow", port, &[f]);
    }
    // 1.0 cannot express the goto: its dump leaves it out, and so does its aggregate.
    assert_eq!(flow_lines(&ofctl(v10, "dump-flows", port, &[])).len(), 2);
    let agg = ofctl(v10, "dump-aggregate", port, &[]);
    assert!(agg.contains("flow_count=2"), "{agg}");
    // A 1.0 modify and delete act on both tables.
    ofctl(v10, "mod-flows", port, &["ip,actions=output:1"]);
    let flows13 = flow_lines(&ofctl(v13, "dump-flows", port, &[]));
    let ip: Vec<_> = flows13.iter().filter(|l| l.contains(" ip ") || l.contains(",ip ")).collect();
    assert_eq!(ip.len(), 2, "{flows13:?}");
    assert!(ip.iter().all(|l| l.ends_with("actions=output:1")), "{flows13:?}");
    ofctl(v10, "del-flows", port, &["ip"]);
    let flows13 = flow_lines(&ofctl(v13, "dump-flows", port, &[]));
    assert_eq!(flows13.len(), 1, "{flows13:?}");
    assert!(flows13[0].contains("goto_table:1"), "{flows13:?}");
    // set_vlan_vid on a flow that leaves the tag open: h1's untagged frames reach h2
    // with a tag of VID 5 and PCP 0.
    ofctl(v13, "del-flows", port, &[]);
    ofctl(v10, "add-flow", port, &["in_port=1,actions=mod_vlan_vid:5,output:2"]);
    let text = first_seen(&h[1].ns, "vlan 5", || ping(&topo, &h[0], &h[1].ip, 1));
    assert!(text.contains("vlan 5, p 0"), "tcpdump saw: {text}");
    let dump = flow_lines(&ofctl(v10, "dump-flows", port, &[]));
    assert!(dump[0].ends_with("actions=mod_vlan_vid:5,output:2"), "{dump:?}");
    // A 1.3 client decodes the dump: the action as push_vlan and a set-field.
    let dump13 = ofctl(v13, "dump-flows", port, &[]);
    assert!(!dump13.contains("decode error"), "{dump13}");
    assert!(
        flow_lines(&dump13)[0]
            .ends_with("actions=push_vlan:0x8100,set_field:4101->vlan_vid,output:2"),
        "{dump13}"
    );
    // A tagged frame (VID 7, PCP 3, written by a packet socket on h1) gets its VID
    // rewritten and keeps its PCP: no second tag.
    let send_tagged = "import socket; s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW); \
                       s.bind(('eth0', 0)); \
                       s.send(b'\\xff' * 6 + b'\\x02\\x00\\x00\\x00\\x00\\x07' \
                       + b'\\x81\\x00\\x60\\x07\\x88\\xb5' + b'\\x00' * 46)";
    let text =
        first_seen(&h[1].ns, "vlan 5", || topo.in_ns(&h[0].ns, "python3", &["-c", send_tagged]));
    assert!(
        text.contains("vlan 5, p 3, ethertype") && text.contains("(0x88b5)"),
        "tcpdump saw: {text}"
    );
    assert_eq!(text.matches("vlan").count(), 1, "one tag: {text}");
    // set_nw_tos and set_tp_dst where the match leaves the protocol open: ICMP gets the
    // ToS and keeps its type and code, UDP gets both; ARP passes unchanged.
    ofctl(v13, "del-flows", port, &[]);
    ofctl(v10, "add-flow", port, &["in_port=1,actions=mod_nw_tos:32,mod_tp_dst:9999,output:2"]);
    ofctl(v10, "add-flow", port, &["in_port=2,actions=output:1"]);
    let text = first_seen(&h[1].ns, "icmp", || ping(&topo, &h[0], &h[1].ip, 1));
    assert!(text.contains("tos 0x20") && text.contains("ICMP echo request"), "tcpdump saw: {text}");
    let send_udp = format!("echo hello > /dev/udp/{}/5000", h[1].ip);
    let text = first_seen(&h[1].ns, "udp", || {
        let _ = topo.in_ns(&h[0].ns, "bash", &["-c", &send_udp]);
    });
    assert!(text.contains(".9999:") && text.contains("tos 0x20"), "tcpdump saw: {text}");
    assert!(ping(&topo, &h[0], &h[1].ip, 2), "ARP and ICMP still get through");
    drop(topo);
}

/// The first frame tcpdump sees on `eth0` in namespace `ns` that passes `filter`
/// (verbose, with link-level headers), while `send` runs every 300 ms; empty after 7 s.
fn first_seen<T>(ns: &str, filter: &str, mut send: impl FnMut() -> T) -> String {
    let (ns, filter) = (ns.to_string(), filter.to_string());
    let capture = std::thread::spawn(move || {
        Command::new("ip")
            .args(["netns", "exec", &ns, "timeout", "8", "tcpdump", "-i", "eth0"])
            .args(["-e", "-n", "-v", "-l", "-c", "1", &filter])
            .output()
            .expect("run tcpdump")
    });
    std::thread::sleep(Duration::from_millis(1500));
    let t = Instant::now();
    while !capture.is_finished() && t.elapsed() < Duration::from_secs(7) {
        let _ = send();
        std::thread::sleep(Duration::from_millis(300));
    }
    let out = capture.join().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
#[ignore = "needs root: network namespaces"]
fn os_ken_13_learning_switch_and_controller_restart_in_secure_mode() {
    let port = free_port();
    let target = format!("tcp:127.0.0.1:{port}");
    let ofport = free_port();
    let listen = format!("ptcp:{ofport}:127.0.0.1");
    let mut ctl = Controller::start("learning_switch_13", port);
    let (topo, h, _sw) = hosts_on_switch(
        3,
        &["--controller", &target, "--listen", &listen, "--fail-mode", "secure"],
    );
    ctl.wait_line("switch connected", Duration::from_secs(15));
    ping_until_ok(&topo, &h[0], &h[1].ip);
    ping_until_ok(&topo, &h[2], &h[1].ip);
    let flows = flow_lines(&ofctl("OpenFlow13", "dump-flows", ofport, &[]));
    let learned: Vec<&String> = flows.iter().filter(|f| f.contains("dl_dst=")).collect();
    assert!(learned.len() >= 2, "the controller installed no flows: {flows:?}");
    // The controller goes away: secure mode keeps every flow, learned paths still work.
    drop(ctl);
    std::thread::sleep(Duration::from_millis(500));
    let after = flow_lines(&ofctl("OpenFlow13", "dump-flows", ofport, &[]));
    assert_eq!(after.len(), flows.len(), "flows lost: {flows:?} -> {after:?}");
    assert!(ping(&topo, &h[0], &h[1].ip, 3));
    // A new controller process: the switch reconnects to it.
    let mut ctl = Controller::start("learning_switch_13", port);
    ctl.wait_line("switch connected", Duration::from_secs(20));
    ping_until_ok(&topo, &h[1], &h[2].ip);
    drop(ctl);
    drop(topo);
}

#[test]
#[ignore = "needs root: network namespaces"]
fn os_ken_10_learning_switch() {
    let (mut ctl, target) = Controller::start_free("learning_switch_10");
    let (topo, h, _sw) = hosts_on_switch(2, &["--controller", &target, "--fail-mode", "secure"]);
    ctl.wait_line("switch connected", Duration::from_secs(15));
    ping_until_ok(&topo, &h[0], &h[1].ip);
    assert!(ping(&topo, &h[1], &h[0].ip, 3));
    drop(ctl);
    drop(topo);
}

#[test]
#[ignore = "needs root: network namespaces"]
fn standalone_mode_learns_while_the_controller_is_away() {
    let port = free_port();
    let target = format!("tcp:127.0.0.1:{port}");
    // No controller listens: standalone falls back to learning.
    let (topo, h, _sw) =
        hosts_on_switch(2, &["--controller", &target, "--fail-mode", "standalone"]);
    ping_until_ok(&topo, &h[0], &h[1].ip);
    drop(topo);
}

/// An Open vSwitch style PKI made with `ovs-pki` in a fresh directory: a switch CA and a
/// controller CA, a switch identity (`sc-*`) and a controller identity (`ctl-*`).
struct Pki {
    dir: PathBuf,
}

impl Pki {
    fn new() -> Pki {
        let dir = std::env::temp_dir().join(format!("pg-pki-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let pki = dir.join("pki");
        let run = |args: &[&str]| {
            let out = Command::new("ovs-pki")
                .arg(format!("--dir={}", pki.display()))
                .args(args)
                .current_dir(&dir)
                .output()
                .expect("ovs-pki (openvswitch-common) is needed");
            assert!(
                out.status.success(),
                "ovs-pki {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        run(&["init", "--force"]);
        run(&["req+sign", "sc", "switch"]);
        run(&["req+sign", "ctl", "controller"]);
        Pki { dir }
    }

    fn path(&self, p: &str) -> String {
        self.dir.join(p).display().to_string()
    }
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[test]
#[ignore = "needs root: network namespaces"]
fn pssl_serves_ovs_ofctl_with_a_controller_certificate_only() {
    let pki = Pki::new();
    let port = free_port();
    let listen = format!("pssl:{port}:127.0.0.1");
    let (key, cert, ca) = (
        pki.path("sc-privkey.pem"),
        pki.path("sc-cert.pem"),
        pki.path("pki/controllerca/cacert.pem"),
    );
    let (topo, _h, _sw) = hosts_on_switch(
        2,
        &["--listen", &listen, "--private-key", &key, "--certificate", &cert, "--ca-cert", &ca],
    );
    let ofctl_ssl = |key: &str, cert: &str| {
        Command::new("ovs-ofctl")
            .args(["-O", "OpenFlow13", "--timeout=5"])
            .arg(format!("--private-key={key}"))
            .arg(format!("--certificate={cert}"))
            .arg(format!("--ca-cert={}", pki.path("pki/switchca/cacert.pem")))
            .args(["dump-flows", &format!("ssl:127.0.0.1:{port}")])
            .output()
            .unwrap()
    };
    let ok = ofctl_ssl(&pki.path("ctl-privkey.pem"), &pki.path("ctl-cert.pem"));
    assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
    assert!(String::from_utf8_lossy(&ok.stdout).contains("OFPST_FLOW reply"));
    // The switch's own identity is not signed by the controller CA: refused.
    let refused = ofctl_ssl(&key, &cert);
    assert!(!refused.status.success());
    drop(topo);
}

#[test]
#[ignore = "needs root: network namespaces"]
fn standalone_falls_back_to_learning_when_the_controller_dies() {
    let (ctl, target) = Controller::start_free("learning_switch_13");
    let (topo, h, mut sw) =
        hosts_on_switch(3, &["--controller", &target, "--fail-mode", "standalone"]);
    let mut ctl = ctl;
    ctl.wait_line("switch connected", Duration::from_secs(15));
    ping_until_ok(&topo, &h[0], &h[1].ip);
    drop(ctl);
    // Pairs the controller never saw still reach each other: the learning switch forwards.
    ping_until_ok(&topo, &h[2], &h[1].ip);
    assert!(sw.alive());
    drop(topo);
}

#[test]
#[ignore = "needs root: network namespaces"]
fn peregrine_ctl_drives_the_switch_through_its_management_socket() {
    let dir = std::env::temp_dir().join(format!("pg-ctl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mgmt = dir.join("br.mgmt").display().to_string();
    let (topo, h, _sw) = hosts_on_switch(2, &["--mgmt", &mgmt, "--fail-mode", "secure"]);
    let flows = dir.join("flows.txt");
    std::fs::write(
        &flows,
        "# both directions\nin_port=1,actions=output:2\n\npriority=5,in_port=2,actions=output:1\n",
    )
    .unwrap();
    let (ok, _, err) = ctl(&["add-flows", &mgmt, &flows.display().to_string()]);
    assert!(ok, "{err}");
    ping_until_ok(&topo, &h[0], &h[1].ip);
    let (ok, out, _) = ctl(&["dump-flows", &mgmt]);
    assert!(ok);
    assert_eq!(flow_lines(&out).len(), 2, "{out}");
    let (ok, json, _) = ctl(&["--json", "dump-flows", &mgmt, "in_port=2"]);
    assert!(ok);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v.as_array().map(Vec::len), Some(1), "{json}");
    assert_eq!(v[0]["priority"], 5);
    assert!(v[0]["n_packets"].as_u64().unwrap() >= 1, "{json}");
    // A bad line is named, and nothing of the file is sent.
    std::fs::write(&flows, "in_port=1,actions=output:2\nin_port=1,actions=frobnicate\n").unwrap();
    let (ok, _, err) = ctl(&["add-flows", &mgmt, &flows.display().to_string()]);
    assert!(!ok && err.contains("flows.txt:2"), "{err}");
    // A refused flow-mod is reported with the switch's error.
    let (ok, _, err) = ctl(&["add-flow", &mgmt, "actions=group:7"]);
    assert!(!ok, "refused");
    assert!(err.contains("OFPBAC_BAD_OUT_GROUP"), "{err}");
    // A set-field whose prerequisite the match lacks is refused by the switch (ovs-ofctl
    // would refuse it before sending); with the prerequisite it installs.
    let (ok, _, err) = ctl(&["add-flow", &mgmt, "ip,actions=set_field:80->tcp_dst,output:1"]);
    assert!(!ok, "refused");
    assert!(err.contains("OFPBAC_MATCH_INCONSISTENT"), "{err}");
    let (ok, _, err) = ctl(&["add-flow", &mgmt, "tcp,actions=set_field:80->tcp_dst,output:1"]);
    assert!(ok, "{err}");
    let (ok, _, _) = ctl(&["mod-port", &mgmt, "2", "down"]);
    assert!(ok);
    assert!(!ping(&topo, &h[0], &h[1].ip, 1), "port 2 is down");
    let (_, desc, _) = ctl(&["dump-ports-desc", &mgmt]);
    assert!(desc.contains("PORT_DOWN"), "{desc}");
    let (ok, _, _) = ctl(&["del-flows", &mgmt]);
    assert!(ok);
    let (_, agg, _) = ctl(&["dump-aggregate", &mgmt]);
    assert!(agg.contains("flow_count=0"), "{agg}");
    drop(topo);
    let _ = std::fs::remove_dir_all(&dir);
}
