//! End-to-end test of groups in the in-kernel fast tier (`peregrine run --fast-path
//! xdp`) between network namespaces, in the manner of `fastpath_netns.rs` (whose
//! helpers this copies: hosts on AF_XDP ports with GRO on their `eth0`, as XDP_REDIRECT
//! into a veth needs NAPI on its peer; AF_PACKET senders and captures; test frames
//! marked with [`MAGIC`] and a sequence number).
//!
//! A select group of two buckets and a fast-failover group run with the tier on and
//! off; the fast-failover group's first port (and a select bucket's) has its link go
//! down mid-stream, then up again. What each host receives must be the same, frame for
//! frame and byte for byte, with the tier on and off, and so must the group and bucket
//! statistics.
//!
//! Needs root, so ignored by default. Names are unique per run and everything is
//! removed on drop, also when an assertion fails.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::fastpath::*;
use serde_json::{json, Value};

/// `ip ARGS` in this process's namespace (where the switch's ends of the veths are).
fn ip(args: &[&str]) {
    let st = Command::new("ip").args(args).status().expect("run ip");
    assert!(st.success(), "ip {args:?}");
}

/// Waits (at most 5 s) until the switch reports port 2's link as `down` or up: the
/// datapath's liveness has changed by then (the agent changes both in one step).
fn wait_port2_link(sw_t: &str, down: bool) {
    let t = Instant::now();
    loop {
        let desc = ctl_json(&["dump-ports-desc", sw_t]);
        let is_down = desc.as_array().and_then(|a| {
            a.iter()
                .find(|p| p["port"] == "2")
                .map(|p| p["state"].as_array().is_some_and(|s| s.iter().any(|w| w == "LINK_DOWN")))
        });
        if is_down == Some(down) {
            return;
        }
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "port 2 not reported link {}: {desc:#}",
            if down { "down" } else { "up" }
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Destination ports of flows through the select group, and of the flow through the
/// fast-failover group.
const SELECT_DPORTS: [u16; 8] = [4001, 4002, 4003, 4004, 4005, 4006, 4007, 4008];
const FF_DPORT: u16 = 4100;
const ROUNDS: u32 = 20;

/// What one run saw (the switch having said its fast path is as asked): the frames
/// captured on ports 2 and 3 (arrival order), the group statistics and (tier on) the
/// last `dump-fastpath`.
struct GroupRun {
    port2: Vec<Vec<u8>>,
    port3: Vec<Vec<u8>>,
    group_stats: Value,
    /// (cookie, packets, bytes) of each flow, sorted.
    flow_stats: Vec<(String, u64, u64)>,
    /// Port 1's received and ports 2 and 3's transmitted packets and bytes.
    port_stats: Vec<(u64, u64)>,
    fastpath: Option<Value>,
}

/// Three phases of interleaved frames from h1 through the groups: port 2's link up,
/// down, up again.
fn run_groups(mode: &str) -> GroupRun {
    let (topo, h, sw, mgmt, banner) = three_hosts(mode, &[]);
    assert!(banner.contains(&format!("fast path {mode}")), "{banner}");
    let sw_t = target(&mgmt);
    ctl(&[
        "add-group",
        &sw_t,
        "group_id=1,type=select,bucket=watch_port:2,actions=output:2,\
         bucket=watch_port:3,actions=mod_dl_dst:02:00:00:00:00:33,output:3",
    ]);
    ctl(&[
        "add-group",
        &sw_t,
        "group_id=2,type=ff,bucket=watch_port:2,actions=mod_dl_dst:02:00:00:00:00:22,output:2,\
         bucket=watch_port:3,actions=set_field:10.7.7.7->ip_dst,output:3",
    ]);
    ctl(&["add-flow", &sw_t, "cookie=0x41,priority=1,udp,in_port=1,actions=group:1"]);
    ctl(&[
        "add-flow",
        &sw_t,
        &format!("cookie=0x42,priority=10,udp,in_port=1,tp_dst={FF_DPORT},actions=dec_ttl,group:2"),
    ]);
    let (c2, c3) = (Capture::start(&h[1].ns), Capture::start(&h[2].ns));
    let dports: Vec<u16> = SELECT_DPORTS.iter().copied().chain([FF_DPORT]).collect();
    let per_phase = dports.len() * ROUNDS as usize;
    let mut sent = 0u64;

    // Phase A: every port up.
    let (frames, next) = interleaved(&dports, ROUNDS, 0);
    sent += send_frames(&h[0].ns, frames);
    // Everything sent is out of the switch before the link changes, in both runs.
    std::thread::sleep(Duration::from_millis(150));

    // Phase B: port 2's link down: both groups send everything to port 3.
    ip(&["link", "set", &h[1].port, "down"]);
    wait_port2_link(&sw_t, true);
    let (frames, next) = interleaved(&dports, ROUNDS, next);
    sent += send_frames(&h[0].ns, frames);
    std::thread::sleep(Duration::from_millis(150));

    // Phase C: up again: the first buckets again.
    ip(&["link", "set", &h[1].port, "up"]);
    wait_port2_link(&sw_t, false);
    // The veth's carrier and NAPI come back with the link.
    std::thread::sleep(Duration::from_millis(300));
    let (frames, _) = interleaved(&dports, ROUNDS, next);
    sent += send_frames(&h[0].ns, frames);
    assert_eq!(sent, 3 * per_phase as u64, "the sender's kernel took {sent}");

    // Every frame goes to exactly one of ports 2 and 3.
    let t = Instant::now();
    while c2.count() + c3.count() < 3 * per_phase && t.elapsed() < Duration::from_secs(3) {
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(200));
    let group_stats = ctl_json(&["dump-group-stats", &sw_t]);
    let flow_stats = flow_stats(&sw_t);
    let ports = ctl_json(&["dump-ports", &sw_t]);
    let port_stats = vec![
        port_counts(&ports, "1", "rx"),
        port_counts(&ports, "2", "tx"),
        port_counts(&ports, "3", "tx"),
    ];
    let (port2, port3, fastpath) = end_run(mode, &sw_t, (c2, c3), sw, topo);
    GroupRun { port2, port3, group_stats, flow_stats, port_stats, fastpath }
}

/// A group's id, packet and byte counts, and its buckets' packet and byte counts.
type GroupCounts = (u64, u64, u64, Vec<(u64, u64)>);

/// The counts of each group, by group id.
fn counts(stats: &Value) -> Vec<GroupCounts> {
    let mut out: Vec<_> = stats
        .as_array()
        .expect("dump-group-stats is a list")
        .iter()
        .map(|g| {
            let n = |v: &Value, k: &str| v[k].as_u64().unwrap_or(u64::MAX);
            let buckets = g["buckets"]
                .as_array()
                .map(|b| b.iter().map(|b| (n(b, "packet_count"), n(b, "byte_count"))).collect())
                .unwrap_or_default();
            (n(g, "group_id"), n(g, "packet_count"), n(g, "byte_count"), buckets)
        })
        .collect();
    out.sort();
    out
}

#[test]
#[ignore = "needs root: network namespaces"]
fn group_flows_are_the_same_with_the_fast_path_on_and_off_across_a_link_down() {
    let (on, off) = xdp_and_off(run_groups);

    let per_phase = (SELECT_DPORTS.len() + 1) * ROUNDS as usize;
    let phase = |f: &Vec<u8>| seq_of(f).unwrap() as usize / per_phase;
    for (mode, run) in [("xdp", &on), ("off", &off)] {
        assert_eq!(
            run.port2.len() + run.port3.len(),
            3 * per_phase,
            "{mode}: every frame reaches one port"
        );
        assert!(
            run.port2.iter().all(|f| phase(f) != 1),
            "{mode}: port 2 got frames while its link was down"
        );
        assert_eq!(
            run.port3.iter().filter(|f| phase(f) == 1).count(),
            per_phase,
            "{mode}: with port 2 down, everything goes to port 3"
        );
        // Both buckets of the select group were taken while port 2 was up, and the
        // fast-failover flow went to port 2 then.
        for p in [0, 2] {
            assert!(run.port2.iter().any(|f| phase(f) == p), "{mode}: phase {p}");
            assert!(run.port3.iter().any(|f| phase(f) == p), "{mode}: phase {p}");
        }
    }

    // Byte for byte, frame for frame, per port, in sequence order.
    for (port, a, b) in [(2, &on.port2, &off.port2), (3, &on.port3, &off.port3)] {
        if let Some(d) = first_difference(port, &by_seq(a), &by_seq(b)) {
            panic!("{d}");
        }
    }

    // The group and bucket statistics count the same traffic.
    assert_eq!(
        counts(&on.group_stats),
        counts(&off.group_stats),
        "group stats: xdp {:#} off {:#}",
        on.group_stats,
        off.group_stats
    );

    // So do the flows' and the ports' (port 1's receive side: hosts 2 and 3 may send
    // frames of their own when their link comes back).
    assert_eq!(on.flow_stats, off.flow_stats, "flow stats");
    assert_eq!(on.flow_stats.len(), 2, "{:?}", on.flow_stats);
    assert_eq!(on.port_stats, off.port_stats, "port stats (1 rx, 2 tx, 3 tx)");
    assert_eq!(on.port_stats[0].0, 3 * per_phase as u64, "port 1 rx");

    // The kernel served flows through both groups, and the link changes took entries
    // out.
    let fp = on.fastpath.as_ref().unwrap();
    for (dport, group) in [(SELECT_DPORTS[0], 1), (FF_DPORT, 2)] {
        let served = entries_for(fp, dport)
            .iter()
            .any(|e| e["packets"].as_u64().unwrap_or(0) > 0 && e["groups"] == json!([group]));
        assert!(
            served,
            "udp_dst={dport} was not served in the kernel through group {group}: {fp:#}"
        );
    }
    assert!(
        fp["tier"]["revalidated"].as_u64().unwrap_or(0) > 0,
        "no entry was taken out by the link changes: {fp:#}"
    );
    eprintln!("fast path events: {}", fp["events"]);
}
