//! End-to-end tests of the in-kernel fast tier (`peregrine run --fast-path xdp`) between
//! network namespaces: hosts on AF_XDP ports, a switch in secure mode with flows given
//! at start or through `peregrine ctl`, frames sent and captured with AF_PACKET sockets
//! inside the hosts' namespaces.
//!
//! What they hold the tier to: the frames that come out are the same, byte for byte, as
//! with the tier off (also across flow changes); the statistics count every frame the
//! kernel served; and a rule change is obeyed by the very next frame after the barrier.
//!
//! Frames redirected by XDP into a veth are delivered only when the veth's peer has
//! NAPI, so every host's `eth0` gets GRO on. Every test frame carries [`MAGIC`] and a
//! sequence number in its UDP payload; captures keep only such frames.
//!
//! Needs root (namespaces, XDP, raw sockets, the management socket), so the tests are
//! ignored by default; CI runs them with `cargo test -- --ignored` as root. Names are
//! unique per run and everything (switch, namespaces, sockets' threads, the management
//! socket's file) is removed on drop, also when an assertion fails.

mod common;

use std::time::Duration;

use bench::topo::Host;
use common::fastpath::*;
use serde_json::Value;

/// What one run of the sequence of test 1 saw (the switch having said its fast path is
/// as asked): the frames captured on ports 2 and 3, in arrival order, and (tier on) its
/// last `dump-fastpath`.
struct SequenceRun {
    port2: Vec<Vec<u8>>,
    port3: Vec<Vec<u8>>,
    fastpath: Option<Value>,
}

/// Flows of the sequence test; their cookies tell them apart in dumps.
const SEQ_FLOWS: [&str; 5] = [
    "cookie=0x11,udp,in_port=1,tp_dst=1001,actions=mod_dl_dst:02:00:00:00:00:22,dec_ttl,output:2",
    "cookie=0x12,udp,in_port=1,tp_dst=1002,actions=push_vlan:0x8100,set_field:4101->vlan_vid,output:3",
    "cookie=0x13,udp,in_port=1,tp_dst=1003,actions=set_field:10.1.1.1->ip_src,mod_tp_src:7777,output:2",
    "cookie=0x14,udp,in_port=1,tp_dst=1004,actions=drop",
    "cookie=0x15,udp,in_port=1,tp_dst=1005,actions=output:2,output:3",
];
/// Destination ports sent in each round: the five flows and one that no flow matches.
const SEQ_DPORTS: [u16; 6] = [1001, 1002, 1003, 1004, 1005, 1006];
const SEQ_ROUNDS: u32 = 30;

/// Test 1's sequence with the fast path `mode`: three phases of interleaved frames from
/// h1, with flows changed through `ctl` (which waits for the barrier) between them.
fn run_sequence(mode: &str) -> SequenceRun {
    let (topo, h, sw, mgmt, banner) = three_hosts(mode, &SEQ_FLOWS);
    assert!(banner.contains(&format!("fast path {mode}")), "{banner}");
    let sw_t = target(&mgmt);
    let (c2, c3) = (Capture::start(&h[1].ns), Capture::start(&h[2].ns));
    // Sends the next SEQ_ROUNDS rounds from h1, counting the frames made and those the
    // sender's kernel took.
    let (mut next, mut n, mut sent) = (0u32, 0u64, 0u64);
    let mut send_phase = || {
        let (frames, after) = interleaved(&SEQ_DPORTS, SEQ_ROUNDS, next);
        next = after;
        n += frames.len() as u64;
        sent += send_frames(&h[0].ns, frames);
    };

    // Phase A: the flows as given.
    send_phase();
    // Let the userspace path drain before the rules change (frames sent before the
    // barrier must meet the old rules in both runs).
    std::thread::sleep(Duration::from_millis(100));
    ctl(&[
        "mod-flows",
        &sw_t,
        "udp,in_port=1,tp_dst=1001,actions=set_field:10.1.1.9->ip_dst,output:3",
    ]);
    ctl(&["del-flows", &sw_t, "udp,in_port=1,tp_dst=1003"]);

    // Phase B: 1001 rewritten to port 3, 1003 gone (dropped in secure mode).
    send_phase();
    std::thread::sleep(Duration::from_millis(100));
    ctl(&["mod-flows", &sw_t, "udp,in_port=1,tp_dst=1002,actions=mod_nw_ttl:9,output:2"]);
    ctl(&[
        "add-flow",
        &sw_t,
        "cookie=0x16,udp,in_port=1,tp_dst=1003,actions=mod_tp_dst:9,output:3",
    ]);
    ctl(&[
        "mod-flows",
        &sw_t,
        "udp,in_port=1,tp_dst=1004,actions=mod_dl_src:02:00:00:00:00:44,flood",
    ]);

    // Phase C: 1002 to port 2 with a new TTL, 1003 back with another rewrite, 1004
    // flooded.
    send_phase();
    assert_eq!(sent, n, "the sender's kernel took {sent} of {n} frames");

    let r = SEQ_ROUNDS as usize;
    let (want2, want3) = (7 * r, 9 * r);
    c2.wait_for(want2, Duration::from_secs(3));
    c3.wait_for(want3, Duration::from_secs(3));
    // Anything late or extra has time to show.
    std::thread::sleep(Duration::from_millis(200));
    let (port2, port3, fastpath) = end_run(mode, &sw_t, (c2, c3), sw, topo);
    SequenceRun { port2, port3, fastpath }
}

/// Frames of one flow (by the destination port the sender used, told by sequence
/// number) must leave in the order they were sent: every frame that came after one of
/// its flow with a higher sequence number is listed in the failure.
fn assert_flow_order(mode: &str, port: u32, frames: &[Vec<u8>]) {
    let per_round = SEQ_DPORTS.len() as u32;
    let mut last: std::collections::HashMap<u32, u32> = std::collections::HashMap::new();
    let mut late = Vec::new();
    for f in frames {
        let s = seq_of(f).unwrap();
        let flow = s % per_round;
        match last.get(&flow) {
            Some(&prev) if s < prev => late.push(format!(
                "seq {s} (flow udp_dst={}, round {}) after seq {prev}",
                SEQ_DPORTS[flow as usize],
                s / per_round
            )),
            _ => {
                last.insert(flow, s);
            }
        }
    }
    assert!(
        late.is_empty(),
        "{mode}: port {port}: frames of one flow out of order: {late:?}; arrival order: {:?}",
        frames.iter().map(|f| seq_of(f).unwrap()).collect::<Vec<_>>()
    );
}

#[test]
#[ignore = "needs root: network namespaces"]
fn frames_are_the_same_with_the_fast_path_on_and_off() {
    let (on, off) = xdp_and_off(run_sequence);

    // What the flows say reaches each port: phase A 1001, 1003, 1005 to port 2 and
    // 1002, 1005 to port 3; phase B 1005 to 2 and 1001, 1002, 1005 to 3; phase C 1002,
    // 1004, 1005 to 2 and 1001, 1003, 1004, 1005 to 3.
    let r = SEQ_ROUNDS as usize;
    for (mode, run) in [("xdp", &on), ("off", &off)] {
        assert_eq!(run.port2.len(), 7 * r, "{mode}: frames on port 2");
        assert_eq!(run.port3.len(), 9 * r, "{mode}: frames on port 3");
        assert_flow_order(mode, 2, &run.port2);
        assert_flow_order(mode, 3, &run.port3);
    }

    // Byte for byte, frame for frame, per port. Different flows may interleave
    // differently on one port (the kernel's frames overtake the workers'), so frames
    // are compared in sequence order; the arrival order is reported when it differs.
    for (port, a, b) in [(2, &on.port2, &off.port2), (3, &on.port3, &off.port3)] {
        if let Some(d) = first_difference(port, &by_seq(a), &by_seq(b)) {
            panic!("{d}");
        }
        if let Some(d) = first_difference(port, a, b) {
            eprintln!("note: arrival order differs between xdp and off: {d}");
        }
    }

    let fp = on.fastpath.as_ref().unwrap();
    let hits = fp["events"]["hit"].as_u64().unwrap_or(0);
    assert!(hits > 0, "the kernel served nothing: {fp:#}");
    assert!(
        fp["tier"]["revalidated"].as_u64().unwrap_or(0) > 0,
        "no entry was taken out by the flow changes: {fp:#}"
    );
    // The two-output flow and the flood were served in the kernel, by broadcast.
    for dport in [1004, 1005] {
        let served = entries_for(fp, dport).iter().any(|e| {
            e["live"] == true
                && e["packets"].as_u64().unwrap_or(0) > 0
                && e["out_ports"] == serde_json::json!([2, 3])
        });
        assert!(served, "udp_dst={dport} was not broadcast in the kernel: {fp:#}");
    }
    eprintln!("fast path events: {}", fp["events"]);
}

#[test]
#[ignore = "needs root: network namespaces"]
fn statistics_count_the_frames_the_kernel_served() {
    let _turn = turn();
    let flows = [
        "cookie=0x21,udp,in_port=1,tp_dst=3001,actions=mod_dl_dst:02:00:00:00:00:22,dec_ttl,output:2",
        "cookie=0x22,udp,in_port=1,tp_dst=3002,actions=push_vlan:0x8100,set_field:4101->vlan_vid,output:3",
        "cookie=0x23,udp,in_port=1,tp_dst=3003,actions=drop",
    ];
    let (_topo, h, _sw, mgmt) = three_hosts_xdp(&flows);
    let sw_t = target(&mgmt);
    let (c2, c3) = (Capture::start(&h[1].ns), Capture::start(&h[2].ns));
    const ROUNDS: u32 = 100;
    let (frames, _) = interleaved(&[3001, 3002, 3003], ROUNDS, 0);
    let n = frames.len() as u64;
    assert_eq!(send_frames(&h[0].ns, frames), n);
    assert!(c2.wait_for(ROUNDS as usize, Duration::from_secs(3)));
    assert!(c3.wait_for(ROUNDS as usize, Duration::from_secs(3)));
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(c2.snapshot().len(), ROUNDS as usize, "frames on port 2");
    assert_eq!(c3.snapshot().len(), ROUNDS as usize, "frames on port 3");

    let fp = ctl_json(&["dump-fastpath", &sw_t]);
    for d in [3001, 3002, 3003] {
        let served: u64 =
            entries_for(&fp, d).iter().map(|e| e["packets"].as_u64().unwrap_or(0)).sum();
        assert!(served > 0, "the kernel served no frame to port {d}: {fp:#}");
    }

    let dump = ctl_json(&["dump-flows", &sw_t]);
    let rows = dump.as_array().expect("dump-flows is a list");
    for cookie in ["0x21", "0x22", "0x23"] {
        let row = rows
            .iter()
            .find(|r| r["cookie"] == cookie)
            .unwrap_or_else(|| panic!("no flow with cookie {cookie}: {dump:#}"));
        assert_eq!(
            row["n_packets"].as_u64(),
            Some(ROUNDS as u64),
            "n_packets of cookie {cookie} (fast path {fp:#}): {row:#}"
        );
        assert_eq!(
            row["n_bytes"].as_u64(),
            Some(ROUNDS as u64 * test_frame(3001, 0).len() as u64),
            "n_bytes of cookie {cookie}: {row:#}"
        );
    }

    let ports = ctl_json(&["dump-ports", &sw_t]);
    let port = |no: &str| -> Value {
        ports
            .as_array()
            .and_then(|a| a.iter().find(|p| p["port"] == no).cloned())
            .unwrap_or_else(|| panic!("no port {no}: {ports:#}"))
    };
    assert_eq!(port("1")["rx_packets"].as_u64(), Some(n), "rx on port 1: {ports:#}");
    assert_eq!(port("2")["tx_packets"].as_u64(), Some(ROUNDS as u64), "tx on port 2: {ports:#}");
    assert_eq!(port("3")["tx_packets"].as_u64(), Some(ROUNDS as u64), "tx on port 3: {ports:#}");
}

/// Sends frames of `dport` from `h1` until the fast tier has a live entry for it with
/// hits whose output is `out_port` (None: a drop), at most 3 s.
fn warm_entry(h1: &Host, sw_t: &str, dport: u16, out_port: Option<u64>, seq: &mut u32) {
    let missing = format!("no live entry with hits to {out_port:?} for port {dport}");
    send_until(h1, sw_t, dport, seq, &missing, |fp| {
        entries_for(fp, dport).into_iter().any(|e| {
            e["live"] == true
                && e["packets"].as_u64().unwrap_or(0) > 0
                && e["out_ports"] == serde_json::json!(out_port.into_iter().collect::<Vec<_>>())
        })
    });
}

#[test]
#[ignore = "needs root: network namespaces"]
fn the_next_frame_after_a_rule_change_obeys_it() {
    let _turn = turn();
    const D: u16 = 2001;
    let flow = |out: u32| format!("cookie=0x31,udp,in_port=1,tp_dst={D},actions=output:{out}");
    let (_topo, h, _sw, mgmt) = three_hosts_xdp(&[&flow(2)]);
    let sw_t = target(&mgmt);
    let caps = [Capture::start(&h[1].ns), Capture::start(&h[2].ns)];
    let mut seq = 0u32;
    let matching = format!("udp,in_port=1,tp_dst={D}");

    for round in 0..5 {
        // From port `a` to port `b`, alternating.
        let (a, b) = if round % 2 == 0 { (2u32, 3u32) } else { (3, 2) };
        let (ca, cb) = (&caps[(a - 2) as usize], &caps[(b - 2) as usize]);
        warm_entry(&h[0], &sw_t, D, Some(a as u64), &mut seq);

        ctl(&["mod-flows", &sw_t, &format!("{matching},actions=output:{b}")]);
        let probe = seq;
        seq += 1;
        send_frames(&h[0].ns, vec![test_frame(D, probe)]);
        assert!(
            cb.wait_for_seq(probe, Duration::from_secs(2)),
            "round {round}: the first frame after output:{a} -> output:{b} did not reach port {b}"
        );
        std::thread::sleep(Duration::from_millis(100));
        assert!(
            !has(&ca.snapshot(), probe),
            "round {round}: the first frame after output:{a} -> output:{b} still went to port {a}"
        );

        warm_entry(&h[0], &sw_t, D, Some(b as u64), &mut seq);
        ctl(&["del-flows", &sw_t, &matching]);
        let probe = seq;
        seq += 1;
        send_frames(&h[0].ns, vec![test_frame(D, probe)]);
        std::thread::sleep(Duration::from_millis(200));
        for (port, c) in [(2, &caps[0]), (3, &caps[1])] {
            assert!(
                !has(&c.snapshot(), probe),
                "round {round}: the first frame after del-flows reached port {port}"
            );
        }
        // The flow back, to the port the next round starts from.
        ctl(&["add-flow", &sw_t, &flow(b)]);
    }
    let fp = ctl_json(&["dump-fastpath", &sw_t]);
    assert!(
        fp["tier"]["revalidated"].as_u64().unwrap_or(0) >= 10,
        "the flow changes did not take the entries out: {fp:#}"
    );
}

#[test]
#[ignore = "needs root: network namespaces"]
fn new_flows_under_a_megaflow_are_forwarded_in_the_kernel_from_their_first_frame() {
    let _turn = turn();
    const D: u16 = 4001;
    let flows = [format!("cookie=0x41,udp,in_port=1,tp_dst={D},actions=output:2")];
    let flows: Vec<&str> = flows.iter().map(String::as_str).collect();
    let (_topo, h, _sw, mgmt) = three_hosts_xdp(&flows);
    let sw_t = target(&mgmt);
    let (c2, c3) = (Capture::start(&h[1].ns), Capture::start(&h[2].ns));
    let mut seq = 0u32;
    warm_entry(&h[0], &sw_t, D, Some(2), &mut seq);
    let fp = ctl_json(&["dump-fastpath", &sw_t]);
    let hits_before = fp["events"]["hit"].as_u64().unwrap_or(0);
    let entries = entries_for(&fp, D);
    assert!(
        entries.len() == 1 && entries[0]["megaflow"] == true,
        "one megaflow for the flow's frames: {fp:#}"
    );

    // 50 microflows never seen before (other source ports): every frame in the kernel.
    let first = seq;
    let frames: Vec<Vec<u8>> =
        (0..50u16).map(|i| test_frame_from(6000 + i, D, first + u32::from(i))).collect();
    seq += 50;
    assert_eq!(send_frames(&h[0].ns, frames), 50);
    assert!(
        c2.wait_for_seq(first + 49, Duration::from_secs(3)),
        "the new flows' frames did not reach port 2"
    );
    std::thread::sleep(Duration::from_millis(100));
    let fp = ctl_json(&["dump-fastpath", &sw_t]);
    assert_eq!(
        fp["events"]["hit"].as_u64().unwrap_or(0) - hits_before,
        50,
        "every frame of the new flows is a kernel hit: {fp:#}"
    );
    assert_eq!(entries_for(&fp, D).len(), 1, "still one entry: {fp:#}");

    // A rule for one source port, mid-stream: that flow's next frame obeys it, the
    // others keep going where they went.
    ctl(&[
        "add-flow",
        &sw_t,
        &format!(
            "cookie=0x42,priority=40000,udp,in_port=1,tp_dst={D},tp_src=6010,actions=output:3"
        ),
    ]);
    let (p1, p2) = (seq, seq + 1);
    send_frames(&h[0].ns, vec![test_frame_from(6010, D, p1), test_frame_from(6011, D, p2)]);
    assert!(
        c3.wait_for_seq(p1, Duration::from_secs(2)),
        "the first frame after the new rule did not reach port 3"
    );
    assert!(c2.wait_for_seq(p2, Duration::from_secs(2)));
    std::thread::sleep(Duration::from_millis(100));
    assert!(!has(&c2.snapshot(), p1), "the frame the new rule sends to port 3 reached port 2");
    assert!(!has(&c3.snapshot(), p2));
    let fp = ctl_json(&["dump-fastpath", &sw_t]);
    assert!(
        fp["tier"]["revalidated"].as_u64().unwrap_or(0) >= 1,
        "the overlapping rule did not take the megaflow out: {fp:#}"
    );
}
