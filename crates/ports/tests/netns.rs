//! Root tests: real interfaces in network namespaces made for the test.
//!
//! Each test makes its own namespaces (named with the process id and a counter, removed
//! by a guard even when the test fails), opens ports from a thread that has entered a
//! namespace with setns(2), and checks frames end to end against a plain AF_PACKET
//! socket on the other side. Every wait is bounded.

use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use datapath::packet::Packet;
use ports::{open, Backend, LinkEvent, LinkMonitor, OpenPort};

/// Marks the test's frames (the payload starts with it).
const MARK: &[u8; 8] = b"PGPORTST";

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// A short unique name (fits an interface name): `pg<pid><tag><n>`.
fn unique(tag: &str) -> String {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("pg{}{tag}{n}", std::process::id() % 100_000)
}

fn ip(args: &[&str]) {
    let out = Command::new("ip").args(args).output().expect("run ip");
    assert!(
        out.status.success(),
        "ip {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A network namespace, deleted on drop (with the interfaces in it).
struct Netns(String);

impl Netns {
    fn new() -> Netns {
        let name = unique("ns");
        ip(&["netns", "add", &name]);
        let ns = Netns(name);
        // Quiet namespaces: no IPv6 chatter on the test links.
        for key in ["all", "default"] {
            let _ = Command::new("ip")
                .args(["netns", "exec", &ns.0, "sysctl", "-qw"])
                .arg(format!("net.ipv6.conf.{key}.disable_ipv6=1"))
                .output();
        }
        ns
    }

    /// `ip -n <ns> args...`
    fn ip(&self, args: &[&str]) {
        let mut all = vec!["-n", self.0.as_str()];
        all.extend_from_slice(args);
        ip(&all);
    }

    /// Runs `f` on a thread that has entered this namespace.
    fn run<T: Send>(&self, f: impl FnOnce() -> T + Send) -> T {
        let path = format!("/var/run/netns/{}", self.0);
        std::thread::scope(|s| {
            s.spawn(|| {
                let file = File::open(&path).expect("open netns");
                // SAFETY: setns(2) on an open namespace file; it changes only this
                // thread's network namespace, which is what the test wants.
                let r = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
                assert_eq!(r, 0, "setns: {}", std::io::Error::last_os_error());
                f()
            })
            .join()
            .expect("namespace thread")
        })
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.0]).output();
    }
}

/// Two namespaces joined by a veth pair (`a` in the first, `b` in the second), both up.
struct Veth {
    ns_a: Netns,
    ns_b: Netns,
    a: String,
    b: String,
}

fn veth() -> Veth {
    let (ns_a, ns_b) = (Netns::new(), Netns::new());
    let (a, b) = (unique("a"), unique("b"));
    ns_a.ip(&[
        "link", "add", "name", &a, "type", "veth", "peer", "name", &b, "netns", &ns_b.0,
    ]);
    ns_a.ip(&["link", "set", &a, "up"]);
    ns_b.ip(&["link", "set", &b, "up"]);
    Veth { ns_a, ns_b, a, b }
}

/// A plain AF_PACKET socket on one interface: the test's end of the wire.
struct RawSock(OwnedFd);

impl RawSock {
    /// Opens it on `ifname` in the calling thread's namespace.
    fn bind(ifname: &str) -> RawSock {
        let cname = std::ffi::CString::new(ifname).unwrap();
        // SAFETY: plain C calls with valid arguments; the new descriptor is owned below.
        unsafe {
            let ifindex = libc::if_nametoindex(cname.as_ptr());
            assert!(ifindex > 0, "no interface {ifname}");
            let fd = libc::socket(
                libc::AF_PACKET,
                libc::SOCK_RAW | libc::SOCK_NONBLOCK,
                (libc::ETH_P_ALL as u16).to_be() as i32,
            );
            assert!(fd >= 0, "socket: {}", std::io::Error::last_os_error());
            let fd = OwnedFd::from_raw_fd(fd);
            let mut addr: libc::sockaddr_ll = std::mem::zeroed();
            addr.sll_family = libc::AF_PACKET as u16;
            addr.sll_protocol = (libc::ETH_P_ALL as u16).to_be();
            addr.sll_ifindex = ifindex as i32;
            let r = libc::bind(
                fd.as_raw_fd(),
                (&addr as *const libc::sockaddr_ll).cast(),
                std::mem::size_of::<libc::sockaddr_ll>() as u32,
            );
            assert_eq!(r, 0, "bind: {}", std::io::Error::last_os_error());
            RawSock(fd)
        }
    }

    fn send(&self, frame: &[u8]) {
        for _ in 0..1000 {
            // SAFETY: sends from a live slice of its own length.
            let n =
                unsafe { libc::send(self.0.as_raw_fd(), frame.as_ptr().cast(), frame.len(), 0) };
            if n == frame.len() as isize {
                return;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        panic!("raw send failed: {}", std::io::Error::last_os_error());
    }

    /// Received test frames (those carrying MARK), until `want` of them or `wait`.
    fn recv_marked(&self, want: usize, wait: Duration) -> Vec<Vec<u8>> {
        let deadline = Instant::now() + wait;
        let mut got = Vec::new();
        let mut buf = vec![0u8; 65536];
        while got.len() < want && Instant::now() < deadline {
            // SAFETY: receives into our own buffer, at most its length.
            let n =
                unsafe { libc::recv(self.0.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
            if n < 0 {
                std::thread::sleep(Duration::from_millis(1));
                continue;
            }
            let f = &buf[..n as usize];
            if marked(f).is_some() {
                got.push(f.to_vec());
            }
        }
        got
    }
}

/// An IPv4/UDP frame carrying MARK and `seq`, from UDP port `sport` (the flow hash
/// spreads these over fanout members).
fn frame(seq: u32, sport: u16, payload: usize) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&[0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01, 0x08, 0x00]);
    let udp_len = 8 + MARK.len() + 4 + payload;
    let ip_len = 20 + udp_len;
    f.extend_from_slice(&[
        0x45,
        0,
        (ip_len >> 8) as u8,
        ip_len as u8,
        0,
        1,
        0,
        0,
        64,
        17,
        0,
        0,
    ]);
    f.extend_from_slice(&[10, 77, 0, 1, 10, 77, 0, 2]);
    f.extend_from_slice(&sport.to_be_bytes());
    f.extend_from_slice(&[0x30, 0x39, (udp_len >> 8) as u8, udp_len as u8, 0, 0]);
    f.extend_from_slice(MARK);
    f.extend_from_slice(&seq.to_be_bytes());
    f.extend(std::iter::repeat_n(0xab, payload));
    f
}

/// The sequence number of a test frame (MARK found after the UDP header, with or
/// without one VLAN tag).
fn marked(f: &[u8]) -> Option<u32> {
    [42usize, 46].into_iter().find_map(|at| {
        (f.get(at..at + 8)? == MARK)
            .then(|| u32::from_be_bytes(f[at + 8..at + 12].try_into().unwrap()))
    })
}

/// Receives on every handle until `want` test frames arrived in all or `wait` passed;
/// returns each handle's frames.
fn recv_all(port: &mut OpenPort, want: usize, wait: Duration) -> Vec<Vec<Vec<u8>>> {
    let deadline = Instant::now() + wait;
    let mut per: Vec<Vec<Vec<u8>>> = vec![Vec::new(); port.handles.len()];
    let mut pool = Vec::new();
    while per.iter().map(Vec::len).sum::<usize>() < want && Instant::now() < deadline {
        let mut idle = true;
        for (h, got) in port.handles.iter_mut().zip(per.iter_mut()) {
            let mut rx = Vec::new();
            if h.recv(&mut rx, 64, &mut pool) > 0 {
                idle = false;
            }
            got.extend(
                rx.iter()
                    .filter(|p| marked(p.data()).is_some())
                    .map(|p| p.data().to_vec()),
            );
            pool.append(&mut rx);
        }
        if idle {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    per
}

fn seqs(frames: &[Vec<u8>]) -> Vec<u32> {
    let mut s: Vec<u32> = frames.iter().filter_map(|f| marked(f)).collect();
    s.sort_unstable();
    s
}

/// Waits until `ifname` in `ns` has carrier (IFF_RUNNING).
fn wait_running(ns: &Netns, ifname: &str) {
    let deadline = Instant::now() + Duration::from_secs(3);
    while Instant::now() < deadline {
        if ns.run(|| {
            ports::InterfaceInfo::by_name(ifname)
                .map(|i| i.running)
                .unwrap_or(false)
        }) {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("{ifname} never got carrier");
}

#[test]
#[ignore = "needs root: network namespaces"]
fn afpacket_two_workers_share_rx_and_both_transmit() {
    let v = veth();
    let mut port = v
        .ns_a
        .run(|| open(&v.a, Backend::AfPacket, 2))
        .expect("open afpacket");
    assert_eq!(port.handles.len(), 2);
    assert_eq!(port.counters.len(), 2);
    assert!(port.handles.iter().all(|h| h.rx_fd().is_some()));
    assert_eq!(port.info.name, v.a);
    assert!(port.info.ifindex > 0 && port.info.mtu == 1500);
    let peer = v.ns_b.run(|| RawSock::bind(&v.b));
    wait_running(&v.ns_a, &v.a);

    // Peer -> port: 200 flows spread over the two workers, each frame once.
    let sent: Vec<Vec<u8>> = (0..200u32).map(|i| frame(i, 1000 + i as u16, 64)).collect();
    for f in &sent {
        peer.send(f);
    }
    let per = recv_all(&mut port, 200, Duration::from_secs(5));
    let all: Vec<Vec<u8>> = per.concat();
    assert_eq!(
        seqs(&all),
        (0..200).collect::<Vec<_>>(),
        "each frame exactly once"
    );
    for f in &all {
        assert_eq!(
            f,
            &sent[marked(f).unwrap() as usize],
            "frame bytes unchanged"
        );
    }
    assert!(
        per.iter().all(|p| !p.is_empty()),
        "both workers got a share: {:?}",
        per.iter().map(Vec::len).collect::<Vec<_>>()
    );
    for (c, p) in port.counters.iter().zip(&per) {
        assert!(c.snapshot().rx_packets >= p.len() as u64);
    }

    // A VLAN-tagged frame arrives with its tag in place.
    let mut tagged = frame(500, 7, 10);
    tagged.splice(12..12, [0x81, 0x00, 0x20, 0x05]);
    peer.send(&tagged);
    let got = recv_all(&mut port, 1, Duration::from_secs(3)).concat();
    assert_eq!(got, vec![tagged]);

    // Port -> peer: both handles transmit on their own sockets.
    let mut pool = Vec::new();
    for (h, base) in port.handles.iter_mut().zip([1000u32, 2000]) {
        let mut tx: Vec<Packet> = (0..50)
            .map(|i| Packet::from_slice(&frame(base + i, 9, 100)))
            .collect();
        h.send(&mut tx, &mut pool);
        assert!(tx.is_empty());
    }
    assert_eq!(pool.len(), 100, "sent buffers return to the pool");
    let out = peer.recv_marked(100, Duration::from_secs(5));
    let expect: Vec<u32> = (1000..1050).chain(2000..2050).collect();
    assert_eq!(seqs(&out), expect);
    let st = port.stats();
    assert_eq!(st.tx_packets, 100);
    assert_eq!(st.tx_bytes, 100 * frame(0, 9, 100).len() as u64);
    // Our own transmissions do not come back in.
    let echo = recv_all(&mut port, 1, Duration::from_millis(300)).concat();
    assert!(
        echo.is_empty(),
        "received own transmissions: {:?}",
        seqs(&echo)
    );

    // Too long and too short frames are refused and counted, the rest still goes.
    let mut tx = vec![
        Packet::from_slice(&frame(3000, 9, 3000)),
        Packet::from_slice(&[0u8; 10]),
        Packet::from_slice(&frame(3001, 9, 10)),
    ];
    port.handles[0].send(&mut tx, &mut pool);
    assert_eq!(port.stats().tx_errors, 2);
    assert_eq!(
        seqs(&peer.recv_marked(1, Duration::from_secs(3))),
        vec![3001]
    );
}

#[test]
#[ignore = "needs root: network namespaces"]
fn afpacket_ip_fragments_pass_as_they_are() {
    let v = veth();
    let mut port = v
        .ns_a
        .run(|| open(&v.a, Backend::AfPacket, 2))
        .expect("open");
    let peer = v.ns_b.run(|| RawSock::bind(&v.b));
    wait_running(&v.ns_a, &v.a);
    // Two fragments of one datagram (offsets 0 and 8 bytes, MF on the first).
    let mut first = frame(1, 5, 0);
    first[20] = 0x20; // MF
    let mut second = frame(2, 5, 0);
    second[21] = 1; // offset 1 (8 bytes)
    peer.send(&first);
    peer.send(&second);
    let got = recv_all(&mut port, 2, Duration::from_secs(3)).concat();
    assert_eq!(got.len(), 2, "fragments must not be reassembled");
    assert!(got.contains(&first) && got.contains(&second));
}

#[test]
#[ignore = "needs root: network namespaces"]
fn afpacket_counts_kernel_ring_drops() {
    let v = veth();
    let mut port = v
        .ns_a
        .run(|| open(&v.a, Backend::AfPacket, 1))
        .expect("open");
    let peer = v.ns_b.run(|| RawSock::bind(&v.b));
    wait_running(&v.ns_a, &v.a);
    // Far more than a 2 MiB ring holds, while nobody reads.
    let f = frame(0, 1, 1400);
    for _ in 0..6000 {
        peer.send(&f);
    }
    let got = recv_all(&mut port, 6000, Duration::from_millis(1500)).concat();
    // An empty poll or two lets the handle read the kernel's statistics.
    let mut pool = Vec::new();
    for _ in 0..40 {
        port.handles[0].recv(&mut Vec::new(), 64, &mut pool);
    }
    let st = port.stats();
    assert!(st.rx_dropped > 0, "{st:?}");
    assert!(st.rx_packets as usize >= got.len());
    assert!(st.rx_packets + st.rx_dropped <= 6000, "{st:?}");
}

#[test]
#[ignore = "needs root: network namespaces"]
fn tap_in_another_namespace_carries_frames_both_ways() {
    let (ns_a, ns_b) = (Netns::new(), Netns::new());
    let name = unique("t");
    let mut port = ns_a.run(|| open(&name, Backend::Tap, 2)).expect("open tap");
    assert_eq!(port.handles.len(), 2);
    assert!(port.info.admin_up);
    ns_a.ip(&["link", "set", &name, "netns", &ns_b.0]);
    ns_b.ip(&["link", "set", &name, "up"]);
    let host = ns_b.run(|| RawSock::bind(&name));

    // Host stack side -> port: spread over the two queues.
    for i in 0..100u32 {
        host.send(&frame(i, 2000 + i as u16, 32));
    }
    let per = recv_all(&mut port, 100, Duration::from_secs(5));
    assert_eq!(seqs(&per.concat()), (0..100).collect::<Vec<_>>());

    // Port -> host stack, from both queues.
    let mut pool = Vec::new();
    for (h, base) in port.handles.iter_mut().zip([1000u32, 2000]) {
        let mut tx: Vec<Packet> = (0..20)
            .map(|i| Packet::from_slice(&frame(base + i, 3, 50)))
            .collect();
        h.send(&mut tx, &mut pool);
    }
    let got = host.recv_marked(40, Duration::from_secs(5));
    assert_eq!(
        seqs(&got),
        (1000..1020).chain(2000..2020).collect::<Vec<_>>()
    );
    assert_eq!(port.stats().tx_packets, 40);
}

#[test]
#[ignore = "needs root: network namespaces"]
fn tap_is_created_and_reused() {
    let ns = Netns::new();
    let name = unique("t");
    ns.run(|| {
        let first = open(&name, Backend::Tap, 1).expect("create");
        assert!(first.info.admin_up);
        // A second opener attaches more queues to the same device.
        let second = open(&name, Backend::Tap, 2).expect("reuse");
        assert_eq!(second.info.ifindex, first.info.ifindex);
        // A name taken by a non-tap interface is refused with a reason.
        let err = open("lo", Backend::Tap, 1).unwrap_err();
        assert!(err.to_string().contains("not a multi-queue tap"), "{err}");
        // afpacket on a missing interface names it.
        let err = open("nosuch0", Backend::AfPacket, 1).unwrap_err();
        assert!(err.to_string().contains("nosuch0"), "{err}");
    });
}

/// Waits for an event about `ifindex` that satisfies `pred`.
fn wait_event(
    rx: &std::sync::mpsc::Receiver<LinkEvent>,
    ifindex: u32,
    pred: impl Fn(&LinkEvent) -> bool,
) -> LinkEvent {
    let deadline = Instant::now() + Duration::from_secs(3);
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        match rx.recv_timeout(left) {
            Ok(ev) if ev.ifindex == ifindex && pred(&ev) => return ev,
            Ok(_) => {}
            Err(_) => break,
        }
    }
    panic!("no matching link event for ifindex {ifindex}");
}

#[test]
#[ignore = "needs root: network namespaces"]
fn link_monitor_reports_down_up_and_removal() {
    let v = veth();
    let (monitor, events) = v.ns_a.run(LinkMonitor::channel).expect("monitor");
    let ifindex = v
        .ns_a
        .run(|| ports::InterfaceInfo::by_name(&v.a))
        .unwrap()
        .ifindex;
    wait_running(&v.ns_a, &v.a);
    v.ns_a.ip(&["link", "set", &v.a, "down"]);
    let ev = wait_event(&events, ifindex, |e| !e.up);
    assert_eq!(ev.name.as_deref(), Some(v.a.as_str()));
    assert!(!ev.removed);
    v.ns_a.ip(&["link", "set", &v.a, "up"]);
    wait_event(&events, ifindex, |e| e.up);
    // Carrier loss at the peer is a down event too.
    v.ns_b.ip(&["link", "set", &v.b, "down"]);
    wait_event(&events, ifindex, |e| !e.up);
    v.ns_a.ip(&["link", "del", &v.a]);
    wait_event(&events, ifindex, |e| e.removed && !e.up);
    monitor.stop();
}

/// poll(2) result flags of `fd`, not waiting.
fn poll_now(fd: i32) -> i16 {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one live pollfd.
    let r = unsafe { libc::poll(&mut p, 1, 0) };
    assert!(r >= 0);
    p.revents
}

#[test]
#[ignore = "needs root: network namespaces"]
fn deleting_the_interface_under_open_handles_drops_and_counts() {
    let v = veth();
    let mut port = v
        .ns_a
        .run(|| open(&v.a, Backend::AfPacket, 2))
        .expect("open");
    wait_running(&v.ns_a, &v.a);
    v.ns_a.ip(&["link", "del", &v.a]);
    let mut pool = Vec::new();
    for round in 0..3u32 {
        for h in port.handles.iter_mut() {
            for _ in 0..20 {
                assert_eq!(h.recv(&mut Vec::new(), 64, &mut pool), 0);
            }
            let mut tx: Vec<Packet> = (0..10)
                .map(|i| Packet::from_slice(&frame(round * 10 + i, 1, 20)))
                .collect();
            h.send(&mut tx, &mut pool);
            assert!(tx.is_empty());
            // The socket error was read, so an idle worker would sleep in poll.
            assert_eq!(poll_now(h.rx_fd().unwrap().as_raw_fd()) & libc::POLLERR, 0);
        }
    }
    let st = port.stats();
    assert_eq!(st.tx_dropped, 60, "{st:?}");
    assert_eq!(st.tx_packets, 0);

    // The same for a tap whose device is deleted.
    let ns = Netns::new();
    let name = unique("t");
    let mut tap = ns.run(|| open(&name, Backend::Tap, 2)).expect("open tap");
    ns.ip(&["link", "del", &name]);
    for h in tap.handles.iter_mut() {
        assert_eq!(h.recv(&mut Vec::new(), 64, &mut pool), 0);
        let mut tx: Vec<Packet> = (0..5)
            .map(|i| Packet::from_slice(&frame(i, 1, 20)))
            .collect();
        h.send(&mut tx, &mut pool);
        assert!(tx.is_empty());
    }
    let st = tap.stats();
    assert_eq!(st.tx_packets, 0);
    assert_eq!(st.tx_dropped + st.tx_errors, 10, "{st:?}");
}

#[test]
#[ignore = "needs root: network namespaces"]
fn afpacket_across_link_down_and_up() {
    let v = veth();
    let mut port = v
        .ns_a
        .run(|| open(&v.a, Backend::AfPacket, 2))
        .expect("open");
    let peer = v.ns_b.run(|| RawSock::bind(&v.b));
    wait_running(&v.ns_a, &v.a);
    v.ns_a.ip(&["link", "set", &v.a, "down"]);
    let mut pool = Vec::new();
    // More than a whole TX ring while down: every frame dropped, none left queued.
    for batch in 0..20u32 {
        let mut tx: Vec<Packet> = (0..64)
            .map(|i| Packet::from_slice(&frame(batch * 64 + i, 1, 900)))
            .collect();
        port.handles[0].send(&mut tx, &mut pool);
    }
    assert_eq!(port.stats().tx_dropped, 20 * 64);
    v.ns_a.ip(&["link", "set", &v.a, "up"]);
    wait_running(&v.ns_a, &v.a);
    let mut tx: Vec<Packet> = (0..5)
        .map(|i| Packet::from_slice(&frame(10_000 + i, 1, 20)))
        .collect();
    port.handles[0].send(&mut tx, &mut pool);
    let got = peer.recv_marked(6, Duration::from_secs(2));
    assert_eq!(
        seqs(&got),
        (10_000..10_005).collect::<Vec<_>>(),
        "only the new frames, none of the dropped"
    );
    let st = port.stats();
    assert_eq!((st.tx_packets, st.tx_dropped), (5, 20 * 64));
    // The fanout group receives again after the link came back.
    for i in 0..50u32 {
        peer.send(&frame(i, 4000 + i as u16, 8));
    }
    let per = recv_all(&mut port, 50, Duration::from_secs(3));
    assert_eq!(seqs(&per.concat()), (0..50).collect::<Vec<_>>());
}
