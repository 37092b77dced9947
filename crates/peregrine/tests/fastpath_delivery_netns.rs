//! The XDP fast tier never drops what the flow table forwards, tried as a new user
//! would: hosts on veths as `ip link add` makes them (checksum and segmentation
//! offloads on, GRO off, so the kernel cannot deliver XDP frames to them), a switch
//! with `--port …,backend=afxdp` (native XDP on veth) or `afxdp-generic` and flows both
//! ways; then the same with GRO on at the hosts, where the kernel serves the flows; and
//! a host that turns GRO off and on while traffic runs.
//!
//! Needs root (namespaces, XDP, the management socket) and `ping`, `iperf3`, `ethtool`,
//! so the tests are ignored by default; CI runs them with `cargo test -- --ignored`.
//! Names are unique per run and everything is removed on drop, also on failure.

mod common;

use std::process::Command;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use bench::topo::{Host, Topology};
use common::fastpath::{ctl_json, gro_hosts};
use common::{hosts, MgmtPath, SwitchProc, SECURE_1_TO_2_AND_BACK};
use serde_json::Value;

/// One bed at a time: each counts lost pings and measures TCP, which a second bed's
/// traffic on the same two CPUs would disturb.
static TURN: Mutex<()> = Mutex::new(());

fn turn() -> MutexGuard<'static, ()> {
    TURN.lock().unwrap_or_else(|e| e.into_inner())
}

/// Two hosts with default settings (`gro`: GRO turned on at both) on a switch in
/// secure mode with `backend` ports and a flow each way. Bind as
/// `let (topo, h, sw, mgmt, said) = …` so the switch ends before the namespaces go.
fn bed(backend: &str, gro: bool) -> (Topology, Vec<Host>, SwitchProc, MgmtPath, Vec<String>) {
    let (topo, h) = if gro { gro_hosts(2) } else { hosts(2) };
    let mgmt = MgmtPath::new("delivery");
    let p1 = format!("{},backend={backend}", h[0].port);
    let p2 = format!("{},backend={backend}", h[1].port);
    let mut args = vec!["--port", &p1, "--port", &p2, "--mgmt", mgmt.as_str()];
    args.extend_from_slice(&SECURE_1_TO_2_AND_BACK);
    let (sw, said) = SwitchProc::start_lines(&args);
    (topo, h, sw, mgmt, said)
}

/// `count` pings from `from` to `to`, 2 ms apart: how many were lost.
fn pings_lost(topo: &Topology, from: &Host, to: &str, count: u32) -> u32 {
    let out = Command::new("ip")
        .args(["netns", "exec", &from.ns, "ping", "-q", "-i", "0.002", "-W", "1"])
        .args(["-c", &count.to_string(), to])
        .output()
        .expect("run ping");
    let text = String::from_utf8_lossy(&out.stdout);
    let received = text
        .lines()
        .find(|l| l.contains("received"))
        .and_then(|l| {
            l.split(',')
                .find(|p| p.contains("received"))
                .and_then(|p| p.split_whitespace().next())
                .and_then(|n| n.parse::<u32>().ok())
        })
        .unwrap_or_else(|| panic!("ping from {}: {text}", from.ns));
    let _ = topo;
    count - received
}

/// 1,000 pings each way, none lost.
fn thousand_pings_each_way(topo: &Topology, h: &[Host]) {
    for (a, b) in [(&h[0], &h[1]), (&h[1], &h[0])] {
        let lost = pings_lost(topo, a, &b.ip, 1000);
        assert_eq!(lost, 0, "{} -> {}: {lost} of 1000 pings lost", a.ns, b.ns);
    }
}

/// Two seconds of TCP from h1 to h2 (iperf3): the receiver's Mbit/s.
fn iperf(topo: &Topology, h: &[Host]) -> f64 {
    let mut srv = topo.spawn_in(&h[1].ns, "iperf3", &["-s", "-1", "-p", "5399"]).unwrap();
    let t = Instant::now();
    let out = loop {
        let o = Command::new("timeout")
            .args(["20", "ip", "netns", "exec", &h[0].ns, "iperf3", "-c", &h[1].ip])
            .args(["-p", "5399", "-t", "2", "-f", "m"])
            .output()
            .expect("run iperf3");
        if o.status.success() || t.elapsed() > Duration::from_secs(5) {
            break o;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let _ = srv.kill();
    let _ = srv.wait();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "iperf3 did not complete: {text}");
    text.lines()
        .find(|l| l.contains("receiver"))
        .and_then(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            w.windows(2).find(|p| p[1] == "Mbits/sec").and_then(|p| p[0].parse().ok())
        })
        .unwrap_or_else(|| panic!("no receiver rate in: {text}"))
}

/// `peregrine ctl --json dump-fastpath`.
fn fastpath(mgmt: &MgmtPath) -> Value {
    ctl_json(&["dump-fastpath", mgmt.as_str()])
}

/// Port `no`'s record in a dump.
fn port(dump: &Value, no: u64) -> Value {
    dump["ports"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["port"] == no))
        .cloned()
        .unwrap_or_else(|| panic!("no port {no} in {dump}"))
}

fn lines_with<'a>(said: &'a [String], what: &str) -> Vec<&'a String> {
    said.iter().filter(|l| l.contains(what)).collect()
}

/// Nothing the kernel took was dropped, by its own count.
fn nothing_lost(dump: &Value) {
    assert_eq!(dump["lost_counted"], Value::Bool(true), "{dump}");
    for no in [1, 2] {
        assert_eq!(port(dump, no)["lost"], 0, "port {no}: {dump}");
    }
}

#[test]
#[ignore = "needs root: network namespaces, XDP"]
fn native_ports_to_hosts_without_napi_stay_in_user_space_and_lose_nothing() {
    let _turn = turn();
    let (topo, h, sw, mgmt, said) = bed("afxdp", false);
    let stay = lines_with(&said, "stay in user space");
    assert_eq!(stay.len(), 2, "one line per port: {said:?}");
    assert!(stay.iter().all(|l| l.contains("native XDP") && l.contains("gro on")), "{said:?}");
    thousand_pings_each_way(&topo, &h);
    let mbits = iperf(&topo, &h);
    assert!(mbits > 10.0, "iperf3: {mbits} Mbit/s");
    let dump = fastpath(&mgmt);
    for no in [1, 2] {
        assert_eq!(port(&dump, no)["delivery"], "dropped", "{dump}");
    }
    // Entries are written; their hits all go to user space.
    assert_eq!(dump["events"]["hit"], 0, "{dump}");
    assert!(
        dump["events"]["undelivered"].as_u64().unwrap_or(0) > 1500,
        "the pings' hits went to user space: {dump}"
    );
    nothing_lost(&dump);
    drop(sw);
}

/// What a bed whose flows the kernel may serve shows: a start-up line per port that
/// says so (attached as `mode`), 1,000 pings each way and an iperf3 run get through, most
/// pings in the kernel, nothing lost by it. The dump at the end.
fn served_in_the_kernel(
    topo: &Topology,
    h: &[Host],
    mgmt: &MgmtPath,
    said: &[String],
    mode: &str,
) -> Value {
    assert!(lines_with(said, "stay in user space").is_empty(), "{said:?}");
    let serves = format!("{mode}: the kernel forwards flows into it");
    assert_eq!(lines_with(said, &serves).len(), 2, "{said:?}");
    thousand_pings_each_way(topo, h);
    let mbits = iperf(topo, h);
    assert!(mbits > 10.0, "iperf3: {mbits} Mbit/s");
    let dump = fastpath(mgmt);
    let hits = dump["events"]["hit"].as_u64().unwrap_or(0);
    assert!(hits > 1500, "pings served in the kernel: {dump}");
    nothing_lost(&dump);
    dump
}

#[test]
#[ignore = "needs root: network namespaces, XDP"]
fn generic_ports_are_served_in_the_kernel_and_lose_nothing() {
    let _turn = turn();
    let (topo, h, sw, mgmt, said) = bed("afxdp-generic", false);
    served_in_the_kernel(&topo, &h, &mgmt, &said, "generic XDP)");
    drop(sw);
}

#[test]
#[ignore = "needs root: network namespaces, XDP"]
fn with_gro_on_at_the_hosts_the_kernel_serves_the_flows() {
    let _turn = turn();
    let (topo, h, sw, mgmt, said) = bed("afxdp", true);
    assert!(lines_with(&said, "NAPI").is_empty(), "{said:?}");
    let dump = served_in_the_kernel(&topo, &h, &mgmt, &said, "native XDP)");
    for no in [1, 2] {
        assert_eq!(port(&dump, no)["delivery"], "delivered", "{dump}");
    }
    drop(sw);
}

/// Polls the dump until `ok` holds (at most 3 s).
fn wait_dump(mgmt: &MgmtPath, what: &str, ok: impl Fn(&Value) -> bool) -> Value {
    let t = Instant::now();
    loop {
        let d = fastpath(mgmt);
        if ok(&d) {
            return d;
        }
        assert!(t.elapsed() < Duration::from_secs(3), "{what}: {d}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
#[ignore = "needs root: network namespaces, XDP"]
fn a_host_turning_gro_off_and_on_moves_its_flows_between_the_tiers() {
    let _turn = turn();
    let (topo, h, mut sw, mgmt, _) = bed("afxdp", true);
    thousand_pings_each_way(&topo, &h);
    let before = fastpath(&mgmt);
    assert!(before["events"]["hit"].as_u64().unwrap_or(0) > 1500, "{before}");
    topo.in_ns(&h[1].ns, "ethtool", &["-K", "eth0", "gro", "off"]).unwrap();
    let said = sw.wait_line("stay in user space", Duration::from_secs(3));
    assert!(said.contains("port 2"), "{said}");
    let off = wait_dump(&mgmt, "port 2 undeliverable", |d| port(d, 2)["delivery"] == "dropped");
    let hits = off["events"]["hit"].as_u64().unwrap_or(0);
    let undelivered = off["events"]["undelivered"].as_u64().unwrap_or(0);
    thousand_pings_each_way(&topo, &h);
    let still = fastpath(&mgmt);
    // Only what goes to h1 (into port 1, whose host has NAPI) is served in the kernel
    // now: h2's requests and its replies, 2,000 frames.
    let served = still["events"]["hit"].as_u64().unwrap_or(0) - hits;
    assert!((1900..=2010).contains(&served), "{served} hits: {still}");
    // h1's requests and replies into port 2 hit the same entries and go to user space.
    let up = still["events"]["undelivered"].as_u64().unwrap_or(0) - undelivered;
    assert!((1900..=2010).contains(&up), "{up} hits sent to user space: {still}");
    nothing_lost(&still);
    topo.in_ns(&h[1].ns, "ethtool", &["-K", "eth0", "gro", "on"]).unwrap();
    sw.wait_line("port 2", Duration::from_secs(3));
    wait_dump(&mgmt, "port 2 deliverable again", |d| port(d, 2)["delivery"] == "delivered");
    thousand_pings_each_way(&topo, &h);
    let again = fastpath(&mgmt);
    let served =
        again["events"]["hit"].as_u64().unwrap_or(0) - still["events"]["hit"].as_u64().unwrap_or(0);
    assert!(served > 1500, "{served} hits after GRO on again: {again}");
    drop(sw);
}
