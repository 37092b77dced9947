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

use std::fs::File;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bench::topo::{Host, Topology};
use common::{MgmtPath, SwitchProc};
use datapath::packet::Packet;
use nix::sched::{setns, CloneFlags};
use serde_json::{json, Value};

/// Marks a test frame's UDP payload; the sequence number follows it.
const MAGIC: &[u8; 8] = b"PGFPTEST";
/// Time between two frames sent, so that nothing is dropped for rate.
const GAP: Duration = Duration::from_micros(200);

/// One test at a time: each holds the tier to the order and count of frames paced
/// 200 µs apart, which a second switch and sender on the same two CPUs can stall for
/// milliseconds (long enough for a flow's entry to go live while its earlier frames
/// still wait in a worker's ring: the overtaking at flow start the README describes).
static TURN: Mutex<()> = Mutex::new(());

fn turn() -> MutexGuard<'static, ()> {
    TURN.lock().unwrap_or_else(|e| e.into_inner())
}

/// `peregrine ctl ARGS...`, which must succeed.
fn ctl(args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_peregrine"))
        .arg("ctl")
        .args(args)
        .output()
        .expect("run peregrine ctl");
    assert!(
        out.status.success(),
        "peregrine ctl {args:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// `peregrine ctl --json ARGS...`, parsed.
fn ctl_json(args: &[&str]) -> Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let out = ctl(&all);
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "ctl {args:?}: not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// Three hosts on AF_XDP ports 1..=3 of a switch in secure mode with a management
/// socket and `flows` given at start, the fast path as `fast_path` says. Bind as
/// `let (topo, h, sw, mgmt, banner) = …` so the switch ends before the namespaces go.
fn three_hosts(
    fast_path: &str,
    flows: &[&str],
) -> (Topology, Vec<Host>, SwitchProc, MgmtPath, String) {
    let mut topo = Topology::new();
    let h: Vec<Host> = (1..=3).map(|i| topo.add_host(i).unwrap()).collect();
    for host in &h {
        // XDP_REDIRECT into a veth needs NAPI on its peer.
        topo.in_ns(&host.ns, "ethtool", &["-K", "eth0", "gro", "on"])
            .unwrap();
    }
    let mgmt = MgmtPath::new("fp");
    let ports: Vec<String> = h
        .iter()
        .map(|x| format!("{},backend=afxdp", x.port))
        .collect();
    let mut args: Vec<&str> = Vec::new();
    for p in &ports {
        args.extend_from_slice(&["--port", p]);
    }
    args.extend_from_slice(&[
        "--fail-mode",
        "secure",
        "--fast-path",
        fast_path,
        "--mgmt",
        mgmt.as_str(),
    ]);
    for f in flows {
        args.extend_from_slice(&["--flow", f]);
    }
    let (sw, banner) = SwitchProc::start_banner(&args);
    (topo, h, sw, mgmt, banner)
}

/// The management socket as a `ctl` SWITCH argument.
fn target(mgmt: &MgmtPath) -> String {
    format!("unix:{}", mgmt.as_str())
}

/// Enters namespace `ns` (this thread only) and opens its `eth0` as an AF_PACKET port.
fn open_in_ns(ns: &str) -> ports::OpenPort {
    let netns = File::open(format!("/var/run/netns/{ns}")).expect("open the namespace");
    setns(&netns, CloneFlags::CLONE_NEWNET).expect("setns");
    ports::open("eth0", ports::Backend::AfPacket, 1).expect("open eth0 with AF_PACKET")
}

/// Sends `frames` in order from `eth0` of namespace `ns`, [`GAP`] apart; returns how
/// many the kernel took.
fn send_frames(ns: &str, frames: Vec<Vec<u8>>) -> u64 {
    let ns = ns.to_string();
    std::thread::spawn(move || {
        let mut port = open_in_ns(&ns);
        let io = &mut port.handles[0];
        let mut pool: Vec<Packet> = Vec::new();
        let mut tx: Vec<Packet> = Vec::with_capacity(1);
        for f in &frames {
            let mut p = pool.pop().unwrap_or_default();
            p.refill(f);
            tx.push(p);
            io.send(&mut tx, &mut pool);
            std::thread::sleep(GAP);
        }
        port.stats().tx_packets
    })
    .join()
    .expect("sender thread")
}

/// Frames with [`MAGIC`] received on `eth0` of a namespace, in arrival order, by a
/// thread that runs until the capture is finished or dropped.
struct Capture {
    stop: Arc<AtomicBool>,
    frames: Arc<Mutex<Vec<Vec<u8>>>>,
    thread: Option<JoinHandle<()>>,
}

impl Capture {
    /// Starts capturing in `ns` and returns once the socket is open.
    fn start(ns: &str) -> Capture {
        let stop = Arc::new(AtomicBool::new(false));
        let frames = Arc::new(Mutex::new(Vec::new()));
        let (ready_tx, ready_rx) = mpsc::channel();
        let (ns, st, fr) = (ns.to_string(), stop.clone(), frames.clone());
        let thread = std::thread::spawn(move || {
            let mut port = open_in_ns(&ns);
            let _ = ready_tx.send(());
            let io = &mut port.handles[0];
            let (mut rx, mut pool) = (Vec::<Packet>::new(), Vec::<Packet>::new());
            while !st.load(Ordering::Relaxed) {
                let n = io.recv(&mut rx, 64, &mut pool);
                if n == 0 {
                    std::thread::sleep(Duration::from_micros(100));
                    continue;
                }
                let mut got = fr.lock().unwrap();
                for p in rx.drain(..) {
                    if seq_of(p.data()).is_some() {
                        got.push(p.data().to_vec());
                    }
                    pool.push(p);
                }
            }
        });
        ready_rx
            .recv_timeout(Duration::from_secs(5))
            .expect("capture socket did not open");
        Capture {
            stop,
            frames,
            thread: Some(thread),
        }
    }

    /// Stops the thread and returns everything captured.
    fn finish(mut self) -> Vec<Vec<u8>> {
        self.halt();
        std::mem::take(&mut *self.frames.lock().unwrap())
    }

    fn halt(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        self.halt();
    }
}

/// The sequence number of a test frame (the 4 bytes after [`MAGIC`]), if it is one.
fn seq_of(frame: &[u8]) -> Option<u32> {
    let at = frame.windows(MAGIC.len()).position(|w| w == MAGIC)? + MAGIC.len();
    let b = frame.get(at..at + 4)?;
    Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

fn csum_add(mut sum: u32, bytes: &[u8]) -> u32 {
    for c in bytes.chunks(2) {
        let hi = c[0] as u32;
        let lo = c.get(1).copied().unwrap_or(0) as u32;
        sum += (hi << 8) | lo;
    }
    sum
}

fn csum_fold(mut sum: u32) -> u16 {
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// A UDP/IPv4 frame 02:00:00:00:00:11 -> 02:00:00:00:00:aa, 10.99.0.1:5000 ->
/// 10.99.0.2:`dport`, TTL 64, with [`MAGIC`] and `seq` in a 40-byte payload and correct
/// IPv4 and UDP checksums.
fn test_frame(dport: u16, seq: u32) -> Vec<u8> {
    let mut payload = Vec::with_capacity(40);
    payload.extend_from_slice(MAGIC);
    payload.extend_from_slice(&seq.to_be_bytes());
    payload.extend((0..28u8).map(|i| i.wrapping_mul(7) ^ (seq as u8)));
    let (src, dst) = ([10u8, 99, 0, 1], [10u8, 99, 0, 2]);
    let udp_len = (8 + payload.len()) as u16;
    let mut udp = Vec::with_capacity(udp_len as usize);
    udp.extend_from_slice(&5000u16.to_be_bytes());
    udp.extend_from_slice(&dport.to_be_bytes());
    udp.extend_from_slice(&udp_len.to_be_bytes());
    udp.extend_from_slice(&[0, 0]);
    udp.extend_from_slice(&payload);
    let mut pseudo = Vec::with_capacity(12);
    pseudo.extend_from_slice(&src);
    pseudo.extend_from_slice(&dst);
    pseudo.extend_from_slice(&[0, 17]);
    pseudo.extend_from_slice(&udp_len.to_be_bytes());
    let mut c = csum_fold(csum_add(csum_add(0, &pseudo), &udp));
    if c == 0 {
        c = 0xffff;
    }
    udp[6..8].copy_from_slice(&c.to_be_bytes());
    let mut ip = vec![0u8; 20];
    ip[0] = 0x45;
    ip[2..4].copy_from_slice(&(20 + udp_len).to_be_bytes());
    ip[4..6].copy_from_slice(&(seq as u16).to_be_bytes());
    ip[8] = 64;
    ip[9] = 17;
    ip[12..16].copy_from_slice(&src);
    ip[16..20].copy_from_slice(&dst);
    let c = csum_fold(csum_add(0, &ip));
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    let mut f = vec![0x02, 0, 0, 0, 0, 0xaa, 0x02, 0, 0, 0, 0, 0x11, 0x08, 0x00];
    f.extend_from_slice(&ip);
    f.extend_from_slice(&udp);
    f
}

/// `rounds` rounds of one frame per port in `dports`, interleaved, sequence numbers
/// from `first` on; also returns the next free sequence number.
fn interleaved(dports: &[u16], rounds: u32, first: u32) -> (Vec<Vec<u8>>, u32) {
    let mut seq = first;
    let mut out = Vec::new();
    for _ in 0..rounds {
        for &d in dports {
            out.push(test_frame(d, seq));
            seq += 1;
        }
    }
    (out, seq)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Says where two captures of one port differ: the first frame that is not the same.
fn first_difference(port: u32, xdp: &[Vec<u8>], off: &[Vec<u8>]) -> Option<String> {
    let n = xdp.len().max(off.len());
    (0..n).find_map(|i| {
        let (a, b) = (xdp.get(i), off.get(i));
        (a != b).then(|| {
            format!(
                "port {port}: frame {i} differs (xdp has {} frames, off has {}):\n  xdp seq {:?}: {}\n  off seq {:?}: {}",
                xdp.len(),
                off.len(),
                a.and_then(|f| seq_of(f)),
                a.map_or("(none)".into(), |f| hex(f)),
                b.and_then(|f| seq_of(f)),
                b.map_or("(none)".into(), |f| hex(f)),
            )
        })
    })
}

/// The fast tier's entries whose key is for UDP destination port `dport`.
fn entries_for(fp: &Value, dport: u16) -> Vec<Value> {
    let tail = format!(",tp_dst={dport}");
    fp["entries"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter(|e| e["key"].as_str().is_some_and(|k| k.ends_with(&tail)))
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

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
            a.iter().find(|p| p["port"] == "2").map(|p| {
                p["state"]
                    .as_array()
                    .is_some_and(|s| s.iter().any(|w| w == "LINK_DOWN"))
            })
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

/// What one run saw: the frames captured on ports 2 and 3 (arrival order), the group
/// statistics, the banner and (tier on) the last `dump-fastpath`.
struct GroupRun {
    port2: Vec<Vec<u8>>,
    port3: Vec<Vec<u8>>,
    group_stats: Value,
    /// (cookie, packets, bytes) of each flow, sorted.
    flow_stats: Vec<(String, u64, u64)>,
    /// Port 1's received and ports 2 and 3's transmitted packets and bytes.
    port_stats: Vec<(u64, u64)>,
    banner: String,
    fastpath: Option<Value>,
}

/// Three phases of interleaved frames from h1 through the groups: port 2's link up,
/// down, up again.
fn run_groups(mode: &str) -> GroupRun {
    let (topo, h, sw, mgmt, banner) = three_hosts(mode, &[]);
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
    ctl(&[
        "add-flow",
        &sw_t,
        "cookie=0x41,priority=1,udp,in_port=1,actions=group:1",
    ]);
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
    assert_eq!(
        sent,
        3 * per_phase as u64,
        "the sender's kernel took {sent}"
    );

    // Every frame goes to exactly one of ports 2 and 3.
    let t = Instant::now();
    while c2.frames.lock().unwrap().len() + c3.frames.lock().unwrap().len() < 3 * per_phase
        && t.elapsed() < Duration::from_secs(3)
    {
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(200));
    let group_stats = ctl_json(&["dump-group-stats", &sw_t]);
    let flows = ctl_json(&["dump-flows", &sw_t]);
    let mut flow_stats: Vec<(String, u64, u64)> = flows
        .as_array()
        .expect("dump-flows is a list")
        .iter()
        .map(|r| {
            (
                r["cookie"].as_str().unwrap_or_default().to_string(),
                r["n_packets"].as_u64().unwrap_or(u64::MAX),
                r["n_bytes"].as_u64().unwrap_or(u64::MAX),
            )
        })
        .collect();
    flow_stats.sort();
    let ports = ctl_json(&["dump-ports", &sw_t]);
    let port = |no: &str, what: &str| -> (u64, u64) {
        let p = ports
            .as_array()
            .and_then(|a| a.iter().find(|p| p["port"] == no).cloned())
            .unwrap_or_else(|| panic!("no port {no}: {ports:#}"));
        let n = |k: String| p[k.as_str()].as_u64().unwrap_or(u64::MAX);
        (n(format!("{what}_packets")), n(format!("{what}_bytes")))
    };
    let port_stats = vec![port("1", "rx"), port("2", "tx"), port("3", "tx")];
    let fastpath = (mode == "xdp").then(|| ctl_json(&["dump-fastpath", &sw_t]));
    let (port2, port3) = (c2.finish(), c3.finish());
    drop(sw);
    drop(topo);
    GroupRun {
        port2,
        port3,
        group_stats,
        flow_stats,
        port_stats,
        banner,
        fastpath,
    }
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
                .map(|b| {
                    b.iter()
                        .map(|b| (n(b, "packet_count"), n(b, "byte_count")))
                        .collect()
                })
                .unwrap_or_default();
            (
                n(g, "group_id"),
                n(g, "packet_count"),
                n(g, "byte_count"),
                buckets,
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
#[ignore = "needs root: network namespaces"]
fn group_flows_are_the_same_with_the_fast_path_on_and_off_across_a_link_down() {
    let _turn = turn();
    let on = run_groups("xdp");
    let off = run_groups("off");
    assert!(on.banner.contains("fast path xdp"), "{}", on.banner);
    assert!(off.banner.contains("fast path off"), "{}", off.banner);

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
        let mut sa = a.clone();
        let mut sb = b.clone();
        sa.sort_by_key(|f| seq_of(f));
        sb.sort_by_key(|f| seq_of(f));
        if let Some(d) = first_difference(port, &sa, &sb) {
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
    assert_eq!(
        on.port_stats, off.port_stats,
        "port stats (1 rx, 2 tx, 3 tx)"
    );
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
