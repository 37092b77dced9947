//! End-to-end test of the in-kernel fast tier under the learning switch: `peregrine run`
//! in standalone mode (no controller, the NORMAL flow only) with `--fast-path xdp`,
//! three namespace hosts on AF_XDP ports, frames sent and captured with AF_PACKET
//! sockets inside the hosts' namespaces.
//!
//! What it holds the tier to: steady traffic between two hosts is served in the kernel
//! (at least [`KERNEL_SHARE`] of it), and counted in the NORMAL flow's statistics; a
//! MAC that moves to another port takes its traffic along at once, nothing more going
//! to the old port; and every host receives the same frames as with the tier off. The tracer says which NORMAL flows the kernel serves, and why
//! not the others. A flow's frames still in a worker's receive ring when its entry
//! becomes live may be overtaken by the kernel's (at flow start only, as the README
//! says); the order is held past the first [`FLOW_START`] frames of each flow.
//!
//! The test frames carry MACs of their own ([`A`], [`B`]), not the hosts'. Frames
//! redirected by XDP into a veth are delivered only when the veth's peer has NAPI, so
//! every host's `eth0` gets GRO on, as in `fastpath_netns.rs`. Every test frame carries
//! [`MAGIC`] and a sequence number in its UDP payload; captures keep only such frames.
//!
//! Needs root (namespaces, XDP, raw sockets, the management socket), so it is ignored by
//! default. Names are unique per run and everything (switch, namespaces, capture
//! threads, the management socket's file) is removed on drop, also when an assertion
//! fails.

mod common;

use std::process::Command;
use std::time::Duration;

use bench::topo::{Host, Topology};
use common::fastpath::{
    by_seq, ctl_json, ipv4_header, send_frames, seq_of, three_hosts_with, xdp_and_off, Capture,
    MAGIC,
};
use common::{MgmtPath, SwitchProc};
use serde_json::Value;

/// The MAC of the test traffic's first end (sent from host 1).
const A: [u8; 6] = [0x02, 0, 0, 0, 0x0a, 0x01];
/// The MAC of its other end (host 2's, until it moves to host 3).
const B: [u8; 6] = [0x02, 0, 0, 0, 0x0b, 0x02];
/// Frames of the steady phase.
const STEADY: u32 = 500;
/// Frames after the move.
const AFTER_MOVE: u32 = 200;
/// The least share of the steady traffic the kernel must serve.
const KERNEL_SHARE: f64 = 0.9;

/// `peregrine trace SWITCH FLOW`, which must succeed: what it printed.
fn trace(switch: &str, flow: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_peregrine"))
        .args(["trace", switch, flow])
        .output()
        .expect("run peregrine trace");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    text
}

/// Three hosts on AF_XDP ports 1..=3 of a switch in standalone mode with a management
/// socket, the fast path as `fast_path` says. Bind as `let (topo, h, sw, mgmt) = …` so
/// the switch ends before the namespaces go.
fn three_hosts(fast_path: &str) -> (Topology, Vec<Host>, SwitchProc, MgmtPath) {
    let (topo, h, sw, mgmt, banner) = three_hosts_with(fast_path, &[]);
    assert!(banner.contains("standalone"), "{banner}");
    if fast_path == "xdp" {
        assert!(banner.contains("fast path xdp"), "{banner}");
    }
    (topo, h, sw, mgmt)
}

/// A UDP/IPv4 frame `src` -> `dst`, 10.98.0.1:5000 -> 10.98.0.2:6000, with [`MAGIC`] and
/// `seq` in its payload and correct checksums (UDP's left zero: none).
fn frame(src: [u8; 6], dst: [u8; 6], seq: u32) -> Vec<u8> {
    let mut payload = Vec::with_capacity(32);
    payload.extend_from_slice(MAGIC);
    payload.extend_from_slice(&seq.to_be_bytes());
    payload.extend((0..20u8).map(|i| i.wrapping_mul(5) ^ (seq as u8)));
    let udp_len = (8 + payload.len()) as u16;
    let ip = ipv4_header([10, 98, 0, 1], [10, 98, 0, 2], seq, udp_len);
    let mut f = Vec::with_capacity(14 + 20 + udp_len as usize);
    f.extend_from_slice(&dst);
    f.extend_from_slice(&src);
    f.extend_from_slice(&[0x08, 0x00]);
    f.extend_from_slice(&ip);
    f.extend_from_slice(&5000u16.to_be_bytes());
    f.extend_from_slice(&6000u16.to_be_bytes());
    f.extend_from_slice(&udp_len.to_be_bytes());
    f.extend_from_slice(&[0, 0]);
    f.extend_from_slice(&payload);
    f
}

/// Frames `src` -> `dst` with sequence numbers `seqs`.
fn frames(src: [u8; 6], dst: [u8; 6], seqs: std::ops::Range<u32>) -> Vec<Vec<u8>> {
    seqs.map(|s| frame(src, dst, s)).collect()
}

/// What one run saw: the frames captured on each host, in arrival order, and (tier on)
/// the kernel's share of the steady phase and of the phase after the move, and the
/// NORMAL flow's packet count.
struct Run {
    got: [Vec<Vec<u8>>; 3],
    steady_share: f64,
    moved_share: f64,
    normal_packets: u64,
}

/// Kernel hits, summed over the tier's NORMAL entries from `in_port` with destination
/// MAC `dst`.
fn kernel_hits(fp: &Value, in_port: u32, dst: [u8; 6]) -> u64 {
    let dst = dst.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(":");
    let (port, dst) = (format!("in_port={in_port},"), format!("dl_dst={dst}"));
    fp["entries"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| {
            e["normal"] == true
                && e["key"].as_str().is_some_and(|k| k.contains(&port) && k.contains(&dst))
        })
        .map(|e| e["packets"].as_u64().unwrap_or(0))
        .sum()
}

/// The scenario with the fast path `mode`: B on host 2 speaks once; steady traffic
/// A -> B from host 1; B appears on host 3; traffic A -> B again.
fn run(mode: &str) -> Run {
    let (topo, h, sw, mgmt) = three_hosts(mode);
    let sw_t = format!("unix:{}", mgmt.as_str());
    let caps = [Capture::start(&h[0].ns), Capture::start(&h[1].ns), Capture::start(&h[2].ns)];
    let xdp = mode == "xdp";
    let dump = || xdp.then(|| ctl_json(&["dump-fastpath", &sw_t]));

    // B speaks on port 2: A is unknown, so it is flooded to hosts 1 and 3.
    assert_eq!(send_frames(&h[1].ns, frames(B, A, 0..1)), 1);
    caps[0].wait_for(1, Duration::from_secs(2));
    caps[2].wait_for(1, Duration::from_secs(2));
    std::thread::sleep(Duration::from_millis(50));

    // Steady A -> B: to host 2 only.
    let n = STEADY;
    assert_eq!(send_frames(&h[0].ns, frames(A, B, 1..1 + n)), u64::from(n));
    caps[1].wait_for(n as usize, Duration::from_secs(3));
    std::thread::sleep(Duration::from_millis(100));
    let steady = dump().map_or(0, |fp| kernel_hits(&fp, 1, B));
    if xdp {
        // The tracer says which NORMAL flows the kernel serves, and why not the others.
        let flow = |src: &str| {
            format!(
                "udp,in_port=1,dl_src={src},dl_dst=02:00:00:00:0b:02,nw_src=10.98.0.1,\
                 nw_dst=10.98.0.2,udp_src=5000,udp_dst=6000"
            )
        };
        // dump-fastpath marks the entries copied from NORMAL.
        let out = Command::new(env!("CARGO_BIN_EXE_peregrine"))
            .args(["ctl", "dump-fastpath", &sw_t])
            .output()
            .expect("run peregrine ctl");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.lines()
                .any(|l| l.contains("dl_dst=02:00:00:00:0b:02") && l.ends_with("output:2 (NORMAL)")),
            "{text}"
        );
        let served = trace(&sw_t, &flow("02:00:00:00:0a:01"));
        assert!(served.contains("fast path: served in the kernel"), "{served}");
        let unknown = trace(&sw_t, &flow("02:00:00:00:0c:03"));
        assert!(
            unknown.contains(
                "fast path: handled in user space only: it goes to NORMAL and its source MAC \
                 is not learned yet"
            ),
            "{unknown}"
        );
    }

    // B moves: it speaks on port 3 (to A, now known on port 1).
    let at = 1 + n;
    assert_eq!(send_frames(&h[2].ns, frames(B, A, at..at + 1)), 1);
    caps[0].wait_for(2, Duration::from_secs(2));
    std::thread::sleep(Duration::from_millis(100));

    // A -> B again: to host 3 only, nothing more to host 2.
    let (from, m) = (at + 1, AFTER_MOVE);
    assert_eq!(send_frames(&h[0].ns, frames(A, B, from..from + m)), u64::from(m));
    caps[2].wait_for(1 + m as usize, Duration::from_secs(3));
    // Anything late or extra has time to show.
    std::thread::sleep(Duration::from_millis(200));
    let fp = dump();
    let after = fp.as_ref().map_or(0, |fp| kernel_hits(fp, 1, B));
    if let Some(fp) = &fp {
        eprintln!("{mode}: fast path {:#}", fp["tier"]);
        eprintln!("{mode}: events {}", fp["events"]);
    }
    let flows = ctl_json(&["dump-flows", &sw_t]);
    let normal_packets = flows
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["actions"].to_string().contains("NORMAL")))
        .and_then(|r| r["n_packets"].as_u64())
        .unwrap_or_else(|| panic!("no NORMAL flow: {flows:#}"));
    let [c1, c2, c3] = caps;
    let got = [c1.finish(), c2.finish(), c3.finish()];
    drop(sw);
    drop(topo);
    Run {
        got,
        steady_share: steady as f64 / f64::from(n),
        // The hits of the new entry (port 3) are all those after the move: the old
        // entry's were credited before it went and are not in the dump any more.
        moved_share: after as f64 / f64::from(m),
        normal_packets,
    }
}

/// Frames a flow's entry may overtake when it becomes live: those still in a worker's
/// receive ring then (the overtaking at flow start the README describes).
const FLOW_START: usize = 32;

/// `got` holds exactly the sequence numbers of `want`, in its order except that a frame
/// among the first [`FLOW_START`] of `want`'s runs (the steady flow's start, the flow's
/// start again after the move) may arrive after later ones.
fn assert_in_order_past_flow_start(got: &[u32], want: &[u32], what: &str) {
    let mut sorted = got.to_vec();
    sorted.sort_unstable();
    assert_eq!(sorted, want, "{what}: frames lost or duplicated");
    let starts: Vec<u32> = want
        .iter()
        .enumerate()
        .filter(|(i, s)| *i == 0 || want[i - 1] + 1 != **s)
        .map(|(_, s)| *s)
        .collect();
    let early = |s: u32| starts.iter().any(|&b| s >= b && s < b + FLOW_START as u32);
    let mut highest = 0;
    for &s in got {
        assert!(
            s >= highest || early(s),
            "{what}: frame {s} came after {highest}, past its flow's start: {got:?}"
        );
        highest = highest.max(s);
    }
}

fn seqs(frames: &[Vec<u8>]) -> Vec<u32> {
    frames.iter().filter_map(|f| seq_of(f)).collect()
}

#[test]
#[ignore = "needs root: network namespaces"]
fn the_learning_switch_is_served_in_the_kernel_and_follows_a_move() {
    let (xdp, off) = xdp_and_off(run);
    let n = STEADY;
    let after = 2 + n..2 + n + AFTER_MOVE;
    // What the learning switch does, with the tier off and on alike.
    let want: [Vec<u32>; 3] =
        [vec![0, 1 + n], (1..1 + n).collect(), std::iter::once(0).chain(after).collect()];
    for (i, w) in want.iter().enumerate() {
        assert_eq!(&seqs(&off.got[i]), w, "tier off: host {}", i + 1);
        assert_in_order_past_flow_start(&seqs(&xdp.got[i]), w, &format!("tier on: host {}", i + 1));
        assert!(
            by_seq(&xdp.got[i]) == by_seq(&off.got[i]),
            "host {}: the frames differ between tier on and off",
            i + 1
        );
    }
    eprintln!(
        "kernel share: steady {:.3}, after the move {:.3}",
        xdp.steady_share, xdp.moved_share
    );
    assert!(
        xdp.steady_share >= KERNEL_SHARE,
        "only {:.3} of the steady traffic was served in the kernel",
        xdp.steady_share
    );
    assert!(
        xdp.moved_share >= KERNEL_SHARE,
        "only {:.3} of the traffic after the move was served in the kernel",
        xdp.moved_share
    );
    // Every test frame counts in the NORMAL flow, wherever it was served (the hosts'
    // own frames add to both runs).
    let frames = u64::from(2 + n + AFTER_MOVE);
    assert!(
        xdp.normal_packets >= frames,
        "the NORMAL flow counted {} packets of at least {frames}",
        xdp.normal_packets
    );
    assert!(off.normal_packets >= frames);
}
