//! What the fast tier's end-to-end tests share: the switch's three hosts, frames with a
//! magic marker and a sequence number sent and captured with packet sockets inside the
//! hosts' namespaces, `peregrine ctl` and the fast tier's dump.
//!
//! Every test frame carries [`MAGIC`] and a sequence number in its UDP payload;
//! captures keep only such frames. [`turn`] runs a test binary's fast-tier tests one at
//! a time (the beds are timing-sensitive).

#![allow(dead_code)]

use std::fs::File;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bench::topo::{Host, Topology};
use datapath::packet::Packet;
use nix::sched::{setns, CloneFlags};
use serde_json::Value;

use super::{hosts, MgmtPath, SwitchProc};

/// Marks a test frame's UDP payload; the sequence number follows it.
pub const MAGIC: &[u8; 8] = b"PGFPTEST";
/// Time between two frames sent, so that nothing is dropped for rate.
pub const GAP: Duration = Duration::from_micros(200);

/// One test at a time: each holds the tier to the order and count of frames paced
/// 200 µs apart, which a second switch and sender on the same two CPUs can stall for
/// milliseconds (long enough for a flow's entry to go live while its earlier frames
/// still wait in a worker's ring: the overtaking at flow start the README describes).
pub static TURN: Mutex<()> = Mutex::new(());

pub fn turn() -> MutexGuard<'static, ()> {
    TURN.lock().unwrap_or_else(|e| e.into_inner())
}

/// `peregrine ctl ARGS...`, which must succeed.
pub fn ctl(args: &[&str]) -> Output {
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
pub fn ctl_json(args: &[&str]) -> Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let out = ctl(&all);
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("ctl {args:?}: not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout))
    })
}

/// Three hosts on AF_XDP ports 1..=3 of a switch in secure mode with a management
/// socket and `flows` given at start, the fast path as `fast_path` says. Bind as
/// `let (topo, h, sw, mgmt, banner) = …` so the switch ends before the namespaces go.
pub fn three_hosts(
    fast_path: &str,
    flows: &[&str],
) -> (Topology, Vec<Host>, SwitchProc, MgmtPath, String) {
    let mut extra = vec!["--fail-mode", "secure"];
    for f in flows {
        extra.extend_from_slice(&["--flow", f]);
    }
    three_hosts_with(fast_path, &extra)
}

/// [`three_hosts`] with the fast path on, checking that the switch says so.
pub fn three_hosts_xdp(flows: &[&str]) -> (Topology, Vec<Host>, SwitchProc, MgmtPath) {
    let (topo, h, sw, mgmt, banner) = three_hosts("xdp", flows);
    assert!(banner.contains("fast path xdp"), "{banner}");
    (topo, h, sw, mgmt)
}

/// Runs a bed with the fast path `xdp` and again `off`, holding the [`turn`] for both;
/// their results, in that order.
pub fn xdp_and_off<T>(run: impl Fn(&str) -> T) -> (T, T) {
    let _turn = turn();
    (run("xdp"), run("off"))
}

/// [`hosts`] 1..=`n`, each `eth0` with GRO on: XDP_REDIRECT into a veth needs NAPI on
/// its peer.
pub fn gro_hosts(n: u8) -> (Topology, Vec<Host>) {
    let (topo, h) = hosts(n);
    for host in &h {
        topo.in_ns(&host.ns, "ethtool", &["-K", "eth0", "gro", "on"]).unwrap();
    }
    (topo, h)
}

/// The hosts' switch ports as `--port` values on the AF_XDP backend.
pub fn afxdp_ports(h: &[Host]) -> Vec<String> {
    h.iter().map(|x| format!("{},backend=afxdp", x.port)).collect()
}

/// Three hosts ([`gro_hosts`]) on AF_XDP ports 1..=3 of a switch with a management
/// socket, the fast path as `fast_path` says and `extra` arguments for `peregrine run`
/// (none: standalone mode). Bind as [`three_hosts`]'s result.
pub fn three_hosts_with(
    fast_path: &str,
    extra: &[&str],
) -> (Topology, Vec<Host>, SwitchProc, MgmtPath, String) {
    let (topo, h) = gro_hosts(3);
    let mgmt = MgmtPath::new("fp");
    let ports = afxdp_ports(&h);
    let mut args: Vec<&str> = Vec::new();
    for p in &ports {
        args.extend_from_slice(&["--port", p]);
    }
    args.extend_from_slice(&["--fast-path", fast_path, "--mgmt", mgmt.as_str()]);
    args.extend_from_slice(extra);
    let (sw, banner) = SwitchProc::start_banner(&args);
    (topo, h, sw, mgmt, banner)
}

/// Sends test frames to UDP port `dport` from `h1`, five at a time with sequence numbers
/// from `*seq` on, until `ready` takes the fast tier's dump of switch `sw_t`; at most
/// 3 s, then a panic saying `missing`.
pub fn send_until(
    h1: &Host,
    sw_t: &str,
    dport: u16,
    seq: &mut u32,
    missing: &str,
    ready: impl Fn(&Value) -> bool,
) {
    let t = Instant::now();
    loop {
        let frames: Vec<Vec<u8>> = (0..5).map(|i| test_frame(dport, *seq + i)).collect();
        *seq += 5;
        send_frames(&h1.ns, frames);
        std::thread::sleep(Duration::from_millis(20));
        let fp = ctl_json(&["dump-fastpath", sw_t]);
        if ready(&fp) {
            return;
        }
        assert!(t.elapsed() < Duration::from_secs(3), "{missing}: {fp:#}");
    }
}

/// Ends a bed's run: takes the fast tier's dump of switch `sw_t` if `mode` is `xdp`,
/// finishes the captures of ports 2 and 3, then ends the switch and removes the
/// namespaces, in that order. The captured frames of ports 2 and 3, and the dump.
pub fn end_run(
    mode: &str,
    sw_t: &str,
    captures: (Capture, Capture),
    sw: SwitchProc,
    topo: Topology,
) -> (Vec<Vec<u8>>, Vec<Vec<u8>>, Option<Value>) {
    let fastpath = (mode == "xdp").then(|| ctl_json(&["dump-fastpath", sw_t]));
    let (port2, port3) = (captures.0.finish(), captures.1.finish());
    drop(sw);
    drop(topo);
    (port2, port3, fastpath)
}

/// The management socket as a `ctl` SWITCH argument.
pub fn target(mgmt: &MgmtPath) -> String {
    format!("unix:{}", mgmt.as_str())
}

/// Enters namespace `ns` (this thread only) and opens its `eth0` as an AF_PACKET port.
pub fn open_in_ns(ns: &str) -> ports::OpenPort {
    let netns = File::open(format!("/var/run/netns/{ns}")).expect("open the namespace");
    setns(&netns, CloneFlags::CLONE_NEWNET).expect("setns");
    ports::open("eth0", ports::Backend::AfPacket, 1).expect("open eth0 with AF_PACKET")
}

/// Sends `frames` in order from `eth0` of namespace `ns`, [`GAP`] apart; returns how
/// many the kernel took.
pub fn send_frames(ns: &str, frames: Vec<Vec<u8>>) -> u64 {
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
pub struct Capture {
    stop: Arc<AtomicBool>,
    frames: Arc<Mutex<Vec<Vec<u8>>>>,
    thread: Option<JoinHandle<()>>,
}

impl Capture {
    /// Starts capturing in `ns` and returns once the socket is open.
    pub fn start(ns: &str) -> Capture {
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
        ready_rx.recv_timeout(Duration::from_secs(5)).expect("capture socket did not open");
        Capture { stop, frames, thread: Some(thread) }
    }

    /// How many frames have arrived so far.
    pub fn count(&self) -> usize {
        self.frames.lock().unwrap().len()
    }

    /// What has arrived so far.
    pub fn snapshot(&self) -> Vec<Vec<u8>> {
        self.frames.lock().unwrap().clone()
    }

    /// Waits until at least `n` frames have arrived, at most `limit`; returns whether.
    pub fn wait_for(&self, n: usize, limit: Duration) -> bool {
        let t = Instant::now();
        while t.elapsed() < limit {
            if self.frames.lock().unwrap().len() >= n {
                return true;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        self.frames.lock().unwrap().len() >= n
    }

    /// Waits until the frame with sequence number `seq` has arrived, at most `limit`.
    pub fn wait_for_seq(&self, seq: u32, limit: Duration) -> bool {
        let t = Instant::now();
        while t.elapsed() < limit {
            if has(&self.frames.lock().unwrap(), seq) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        has(&self.frames.lock().unwrap(), seq)
    }

    /// Stops the thread and returns everything captured.
    pub fn finish(mut self) -> Vec<Vec<u8>> {
        self.halt();
        std::mem::take(&mut *self.frames.lock().unwrap())
    }

    pub fn halt(&mut self) {
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
pub fn seq_of(frame: &[u8]) -> Option<u32> {
    let at = frame.windows(MAGIC.len()).position(|w| w == MAGIC)? + MAGIC.len();
    let b = frame.get(at..at + 4)?;
    Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

pub fn csum_add(mut sum: u32, bytes: &[u8]) -> u32 {
    for c in bytes.chunks(2) {
        let hi = c[0] as u32;
        let lo = c.get(1).copied().unwrap_or(0) as u32;
        sum += (hi << 8) | lo;
    }
    sum
}

pub fn csum_fold(mut sum: u32) -> u16 {
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// A UDP/IPv4 frame 02:00:00:00:00:11 -> 02:00:00:00:00:aa, 10.99.0.1:5000 ->
/// 10.99.0.2:`dport`, TTL 64, with [`MAGIC`] and `seq` in a 40-byte payload and correct
/// IPv4 and UDP checksums.
pub fn test_frame(dport: u16, seq: u32) -> Vec<u8> {
    test_frame_from(5000, dport, seq)
}

/// [`test_frame`] from UDP source port `sport`.
pub fn test_frame_from(sport: u16, dport: u16, seq: u32) -> Vec<u8> {
    let mut payload = Vec::with_capacity(40);
    payload.extend_from_slice(MAGIC);
    payload.extend_from_slice(&seq.to_be_bytes());
    payload.extend((0..28u8).map(|i| i.wrapping_mul(7) ^ (seq as u8)));
    let (src, dst) = ([10u8, 99, 0, 1], [10u8, 99, 0, 2]);
    let udp_len = (8 + payload.len()) as u16;
    let mut udp = Vec::with_capacity(udp_len as usize);
    udp.extend_from_slice(&sport.to_be_bytes());
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
    let ip = ipv4_header(src, dst, seq, udp_len);
    let mut f = vec![0x02, 0, 0, 0, 0, 0xaa, 0x02, 0, 0, 0, 0, 0x11, 0x08, 0x00];
    f.extend_from_slice(&ip);
    f.extend_from_slice(&udp);
    f
}

/// The IPv4 header of a UDP datagram of `udp_len` bytes `src` -> `dst`: TTL 64, the
/// identification the low 16 bits of `seq`, the checksum correct.
pub fn ipv4_header(src: [u8; 4], dst: [u8; 4], seq: u32, udp_len: u16) -> Vec<u8> {
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
    ip
}

/// `rounds` rounds of one frame per port in `dports`, interleaved, sequence numbers
/// from `first` on; also returns the next free sequence number.
pub fn interleaved(dports: &[u16], rounds: u32, first: u32) -> (Vec<Vec<u8>>, u32) {
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

pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// `frames` in sequence number order.
pub fn by_seq(frames: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let mut v = frames.to_vec();
    v.sort_by_key(|f| seq_of(f));
    v
}

/// Says where two captures of one port differ: the first frame that is not the same.
pub fn first_difference(port: u32, xdp: &[Vec<u8>], off: &[Vec<u8>]) -> Option<String> {
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
pub fn entries_for(fp: &Value, dport: u16) -> Vec<Value> {
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

/// Whether a frame with sequence number `seq` is in `frames`.
pub fn has(frames: &[Vec<u8>], seq: u32) -> bool {
    frames.iter().any(|f| seq_of(f) == Some(seq))
}

/// Each flow's (cookie, packets, bytes) from `dump-flows` of switch `sw_t`, sorted.
pub fn flow_stats(sw_t: &str) -> Vec<(String, u64, u64)> {
    let flows = ctl_json(&["dump-flows", sw_t]);
    let mut out: Vec<(String, u64, u64)> = flows
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
    out.sort();
    out
}

/// Port `no`'s `what` (`rx` or `tx`) packets and bytes in `dump-ports` reply `ports`.
pub fn port_counts(ports: &Value, no: &str, what: &str) -> (u64, u64) {
    let p = ports
        .as_array()
        .and_then(|a| a.iter().find(|p| p["port"] == no).cloned())
        .unwrap_or_else(|| panic!("no port {no}: {ports:#}"));
    let n = |k: String| p[k.as_str()].as_u64().unwrap_or(u64::MAX);
    (n(format!("{what}_packets")), n(format!("{what}_bytes")))
}
