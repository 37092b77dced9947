//! Root tests of the AF_XDP backend on veth pairs between namespaces made for the test.
//!
//! Each test makes its own namespaces (named with the process id and a counter, removed
//! by a guard even when the test fails), opens the port from a thread that has entered
//! the port's namespace with setns(2), and checks frames end to end against a plain
//! AF_PACKET socket on the peer. Every wait is bounded.

mod common;

use std::os::fd::AsRawFd;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{
    frame, marked, packets, poll_now, recv_all, refuses_bad_lengths, seqs, veth, wait_running,
    Netns, RawSock, Veth,
};
use datapath::packet::Packet;
use ports::afxdp::{self, AttachMode};
use ports::{open, Backend, OpenPort, PortError};

impl Netns {
    /// Interface `ifname`'s drop counters from /proc/net/dev: (rx drop, tx drop).
    fn drops(&self, ifname: &str) -> (u64, u64) {
        let out = Command::new("ip")
            .args(["netns", "exec", &self.0, "cat", "/proc/net/dev"])
            .output()
            .expect("read /proc/net/dev");
        let text = String::from_utf8_lossy(&out.stdout);
        for line in text.lines() {
            if let Some((name, rest)) = line.split_once(':') {
                if name.trim() == ifname {
                    let v: Vec<u64> = rest.split_whitespace().map(|x| x.parse().unwrap()).collect();
                    return (v[3], v[11]);
                }
            }
        }
        panic!("{ifname} not in /proc/net/dev: {text}");
    }
}

/// The XDP attachment `ip link` shows on `ifname`: "xdp" (native), "xdpgeneric", or
/// None.
fn xdp_shown(ns: &Netns, ifname: &str) -> Option<&'static str> {
    let out = ns.ip(&["link", "show", "dev", ifname]);
    let first = out.lines().next().unwrap_or("");
    if first.contains(" xdpgeneric") {
        Some("xdpgeneric")
    } else if first.contains(" xdp") || out.contains("prog/xdp") {
        Some("xdp")
    } else {
        None
    }
}

/// A test frame of exactly `len` bytes (at least 54).
fn frame_of_len(seq: u32, len: usize) -> Vec<u8> {
    frame(seq, 7, len - 54)
}

/// Polls `fd` until readable or `wait` passes.
fn wait_readable(fd: i32, wait: Duration) -> bool {
    let deadline = Instant::now() + wait;
    while Instant::now() < deadline {
        if poll_now(fd) & libc::POLLIN != 0 {
            return true;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    false
}

/// Frames both ways through one port opened with `backend`, byte-exact; returns the
/// port for further checks.
fn round_trip(v: &Veth, backend: &str) -> OpenPort {
    let backend: Backend = backend.parse().unwrap();
    let mut port = v.open_a(backend, 1).expect("open afxdp");
    assert_eq!(port.handles.len(), 1);
    assert_eq!(port.info.name, v.a);
    let peer = v.ns_b.run(|| RawSock::bind(&v.b));
    wait_running(&v.ns_a, &v.a);

    // Peer -> port: small frames, a 1500-byte frame and a full-MTU (1514-byte) one.
    let mut sent: Vec<Vec<u8>> = (0..100u32).map(|i| frame(i, 1000 + i as u16, 20)).collect();
    sent.push(frame_of_len(100, 1500));
    sent.push(frame_of_len(101, 1514));
    sent.push(frame_of_len(102, 60));
    let fd = port.handles[0].rx_fd().expect("rx fd").as_raw_fd();
    assert_eq!(poll_now(fd) & libc::POLLIN, 0, "nothing waiting yet");
    for f in &sent {
        peer.send(f);
    }
    assert!(wait_readable(fd, Duration::from_secs(3)), "rx_fd became readable");
    let got = recv_all(&mut port, sent.len(), Duration::from_secs(5)).concat();
    assert_eq!(seqs(&got), (0..sent.len() as u32).collect::<Vec<_>>());
    for f in &got {
        assert_eq!(f, &sent[marked(f).unwrap() as usize], "frame bytes unchanged");
    }
    assert_eq!(poll_now(fd) & libc::POLLIN, 0, "drained: not readable");
    let st = port.stats();
    assert_eq!(st.rx_packets, sent.len() as u64, "{st:?}");
    assert_eq!(st.rx_bytes, sent.iter().map(|f| f.len() as u64).sum::<u64>());

    // Port -> peer, byte-exact, including a full-MTU frame.
    let mut out: Vec<Vec<u8>> = (0..50u32).map(|i| frame(1000 + i, 9, 100)).collect();
    out.push(frame_of_len(1050, 1514));
    let mut pool = Vec::new();
    let mut tx: Vec<Packet> = out.iter().map(|f| Packet::from_slice(f)).collect();
    port.handles[0].send(&mut tx, &mut pool);
    assert!(tx.is_empty());
    assert_eq!(pool.len(), out.len(), "sent buffers return to the pool");
    let arrived = peer.recv_marked(out.len(), Duration::from_secs(5));
    assert_eq!(seqs(&arrived), (1000..1051).collect::<Vec<_>>());
    for f in &arrived {
        assert_eq!(f, &out[(marked(f).unwrap() - 1000) as usize]);
    }
    let st = port.stats();
    assert_eq!(st.tx_packets, out.len() as u64, "{st:?}");
    assert_eq!(st.tx_bytes, out.iter().map(|f| f.len() as u64).sum::<u64>());
    assert_eq!((st.tx_dropped, st.tx_errors), (0, 0), "{st:?}");

    // Too long and too short frames are refused and counted; the rest still goes.
    refuses_bad_lengths(&mut port, &mut pool, &peer, &frame_of_len(2000, 1519), 2001);
    // Our own transmissions do not come back in.
    let echo = recv_all(&mut port, 1, Duration::from_millis(200)).concat();
    assert!(echo.is_empty(), "received own frames: {:?}", seqs(&echo));
    port
}

#[test]
#[ignore = "needs root: network namespaces"]
fn afxdp_native_frames_both_ways_byte_exact() {
    let v = veth(1);
    // Opened directly to see the modes it got: veth has native XDP, no zero-copy.
    let (info, handles) = v.ns_a.run(|| afxdp::open(&v.a, 4, AttachMode::Auto)).expect("open");
    assert_eq!(handles.len(), 1, "one queue: one handle, extra workers get none");
    assert_eq!(handles[0].attach_mode(), AttachMode::Native);
    assert!(!handles[0].zero_copy(), "veth has no zero-copy AF_XDP");
    assert_eq!(handles[0].queues(), vec![0]);
    assert!(handles[0].max_rx_frame() >= info.mtu + 18);
    assert_eq!(xdp_shown(&v.ns_a, &v.a), Some("xdp"));
    drop(handles);
    assert_eq!(xdp_shown(&v.ns_a, &v.a), None);

    let port = round_trip(&v, "afxdp");
    assert_eq!(xdp_shown(&v.ns_a, &v.a), Some("xdp"));
    drop(port);
}

#[test]
#[ignore = "needs root: network namespaces"]
fn afxdp_generic_frames_both_ways_byte_exact() {
    let v = veth(1);
    let modes = v
        .ns_a
        .run(|| afxdp::open(&v.a, 1, AttachMode::Generic))
        .map(|(_, h)| (h[0].attach_mode(), h[0].zero_copy()))
        .expect("open generic");
    assert_eq!(modes, (AttachMode::Generic, false));
    let port = round_trip(&v, "afxdp-generic");
    assert_eq!(xdp_shown(&v.ns_a, &v.a), Some("xdpgeneric"));
    drop(port);
    assert_eq!(xdp_shown(&v.ns_a, &v.a), None);
}

#[test]
#[ignore = "needs root: network namespaces"]
fn afxdp_bursts_arrive_or_are_counted() {
    let v = veth(1);
    let mut port = v.open_a("afxdp".parse().unwrap(), 1).expect("open");
    let peer = v.ns_b.run(|| RawSock::bind(&v.b));
    wait_running(&v.ns_a, &v.a);
    let mut pool = Vec::new();
    let drops = |p: &mut OpenPort, pool: &mut Vec<Packet>| {
        // Empty polls let the handle read the kernel's statistics.
        for _ in 0..40 {
            p.handles[0].recv(&mut Vec::new(), 64, pool);
        }
        // Frames the peer's veth could not pass on (its ring full) never reached XDP.
        // (The port's veth counts XDP's drops as its rx drops too: not added, they are
        // the socket's.)
        let (_, b_tx) = v.ns_b.drops(&v.b);
        (p.stats(), b_tx)
    };

    // 2000 frames while nobody reads: the UMEM (2048 RX frames) holds them all, or
    // what is lost is counted by the socket or by the veth before it.
    for i in 0..2000u32 {
        peer.send(&frame(i, 1 + (i % 500) as u16, 64));
    }
    let got = recv_all(&mut port, 2000, Duration::from_secs(5)).concat();
    let (st, link) = drops(&mut port, &mut pool);
    assert_eq!(
        got.len() as u64 + st.rx_dropped + link,
        2000,
        "received {} {st:?} link drops {link}",
        got.len()
    );
    assert_eq!(st.rx_packets, got.len() as u64);
    let mut s = seqs(&got);
    s.dedup();
    assert_eq!(s.len(), got.len(), "no frame twice");

    // 5000 more while nobody reads: more than the UMEM and the veth's ring hold, so
    // some are lost, and every one is either received or counted.
    for i in 0..5000u32 {
        peer.send(&frame(10_000 + i, 2, 64));
    }
    let got2 = recv_all(&mut port, 5000, Duration::from_secs(1)).concat();
    let (st2, link2) = drops(&mut port, &mut pool);
    let lost = (st2.rx_dropped - st.rx_dropped) + (link2 - link);
    assert!(lost > 0, "{st2:?}");
    assert_eq!(got2.len() as u64 + lost, 5000, "received {} {st2:?}", got2.len());
    assert!(
        st2.rx_dropped > st.rx_dropped,
        "the socket counted its fill ring running dry: {st2:?}"
    );
}

#[test]
#[ignore = "needs root: network namespaces"]
fn afxdp_queues_handles_and_detach_on_last_drop() {
    let v = veth(2);
    let peer = v.ns_b.run(|| RawSock::bind(&v.b));
    wait_running(&v.ns_a, &v.a);

    // Two queues, three workers: two handles, one queue each.
    let (_, handles) = v.ns_a.run(|| afxdp::open(&v.a, 3, AttachMode::Auto)).expect("open");
    assert_eq!(handles.len(), 2);
    assert_eq!(handles[0].queues(), vec![0]);
    assert_eq!(handles[1].queues(), vec![1]);
    let mut port = OpenPort {
        info: v.ns_a.run(|| ports::InterfaceInfo::by_name(&v.a)).unwrap(),
        counters: handles.iter().map(|h| h.counters().clone()).collect(),
        handles: handles
            .into_iter()
            .map(|h| Box::new(h) as Box<dyn datapath::port::PortIo>)
            .collect(),
    };
    for i in 0..200u32 {
        peer.send(&frame(i, 3000 + i as u16, 16));
    }
    let per = recv_all(&mut port, 200, Duration::from_secs(5));
    assert_eq!(seqs(&per.concat()), (0..200).collect::<Vec<_>>());
    assert!(
        per.iter().all(|p| !p.is_empty()),
        "both queues delivered: {:?}",
        per.iter().map(Vec::len).collect::<Vec<_>>()
    );
    // The program stays while any handle lives.
    let last = port.handles.pop().unwrap();
    drop(port);
    assert!(xdp_shown(&v.ns_a, &v.a).is_some(), "detached too early");
    drop(last);
    assert_eq!(xdp_shown(&v.ns_a, &v.a), None, "detached with the last handle");

    // One worker: one handle serving both queues, polled through one descriptor.
    let mut port = v.open_a("afxdp".parse().unwrap(), 1).expect("reopen");
    assert_eq!(port.handles.len(), 1);
    let fd = port.handles[0].rx_fd().unwrap().as_raw_fd();
    assert_eq!(poll_now(fd) & libc::POLLIN, 0);
    for i in 0..200u32 {
        peer.send(&frame(i, 5000 + i as u16, 16));
    }
    assert!(wait_readable(fd, Duration::from_secs(3)));
    let got = recv_all(&mut port, 200, Duration::from_secs(5)).concat();
    assert_eq!(seqs(&got), (0..200).collect::<Vec<_>>());
    assert_eq!(poll_now(fd) & libc::POLLIN, 0);
    drop(port);
    assert_eq!(xdp_shown(&v.ns_a, &v.a), None);
}

/// Clears CAP_NET_RAW, CAP_NET_ADMIN, CAP_SYS_ADMIN and CAP_BPF from the calling
/// thread's effective set (capabilities are per thread: the rest of the process keeps
/// them).
fn drop_net_caps() {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy, Default)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const VERSION_3: u32 = 0x2008_0522;
    let mut header = Header { version: VERSION_3, pid: 0 };
    let mut data = [Data::default(); 2];
    // SAFETY: capget/capset with a v3 header and room for the two data words they use.
    unsafe {
        let r = libc::syscall(libc::SYS_capget, &mut header, data.as_mut_ptr());
        assert_eq!(r, 0, "capget: {}", std::io::Error::last_os_error());
        for cap in [12u32, 13, 21, 39] {
            data[(cap / 32) as usize].effective &= !(1 << (cap % 32));
        }
        let r = libc::syscall(libc::SYS_capset, &mut header, data.as_ptr());
        assert_eq!(r, 0, "capset: {}", std::io::Error::last_os_error());
    }
}

#[test]
#[ignore = "needs root: network namespaces"]
fn afxdp_open_errors_are_named() {
    let v = veth(1);
    v.ns_a.run(|| {
        let err = open("nosuchxdp1", "afxdp".parse().unwrap(), 1).unwrap_err();
        assert!(matches!(err, PortError::NoSuchInterface { .. }), "{err}");
        assert!(err.to_string().contains("nosuchxdp1"), "{err}");

        // A second port on an interface that already has our program is refused, and
        // the first keeps its program.
        let first = open(&v.a, "afxdp".parse().unwrap(), 1).expect("first");
        let err = open(&v.a, "afxdp".parse().unwrap(), 1).unwrap_err();
        let text = err.to_string();
        assert!(text.contains(&v.a), "{text}");
        assert!(text.contains("XDP"), "{text}");
        drop(first);
    });
    assert_eq!(xdp_shown(&v.ns_a, &v.a), None);
    // Without the capabilities (dropped on the opening thread only): not permitted,
    // naming what is needed.
    let err = v
        .ns_a
        .run(|| {
            drop_net_caps();
            open(&v.a, "afxdp".parse().unwrap(), 1)
        })
        .unwrap_err();
    assert!(matches!(err, PortError::NotPermitted { .. }), "{err}");
    assert!(err.to_string().contains("CAP_BPF"), "{err}");
    assert_eq!(xdp_shown(&v.ns_a, &v.a), None);
    // Too large an MTU for the UMEM frames is refused with the limit.
    v.ns_a.ip(&["link", "set", &v.a, "mtu", "9000"]);
    let err = v.open_a("afxdp".parse().unwrap(), 1).unwrap_err();
    assert!(err.to_string().contains("MTU 9000"), "{err}");
}

#[test]
#[ignore = "needs root: network namespaces"]
fn afxdp_link_down_and_removal_drop_and_count() {
    let v = veth(1);
    let mut port = v.open_a("afxdp".parse().unwrap(), 1).expect("open");
    wait_running(&v.ns_a, &v.a);
    let mut pool = Vec::new();

    // No carrier (the peer is down): the device drops what it is given, counted.
    v.ns_b.ip(&["link", "set", &v.b, "down"]);
    let deadline = Instant::now() + Duration::from_secs(3);
    while v.ns_a.run(|| ports::InterfaceInfo::by_name(&v.a).unwrap().running) {
        assert!(Instant::now() < deadline, "carrier never went");
        std::thread::sleep(Duration::from_millis(10));
    }
    for batch in 0..4u32 {
        let mut tx = packets(batch * 64, 64, 1, 200);
        port.handles[0].send(&mut tx, &mut pool);
    }
    let st = port.stats();
    assert_eq!((st.tx_packets, st.tx_dropped), (0, 256), "{st:?}");
    v.ns_b.ip(&["link", "set", &v.b, "up"]);
    wait_running(&v.ns_a, &v.a);
    let peer = v.ns_b.run(|| RawSock::bind(&v.b));
    let mut tx = packets(10_000, 5, 1, 20);
    port.handles[0].send(&mut tx, &mut pool);
    let mut got = peer.recv_marked(5, Duration::from_secs(2));
    got.extend(peer.recv_marked(1, Duration::from_millis(200)));
    assert_eq!(seqs(&got), (10_000..10_005).collect::<Vec<_>>(), "none sent late");
    assert_eq!(port.stats().tx_packets, 5);

    // Administratively down: the batch that meets it stays on the ring (the kernel
    // keeps it) and goes when the link is back; every later packet is dropped and
    // counted, never sent.
    v.ns_a.ip(&["link", "set", &v.a, "down"]);
    let before = port.stats();
    for batch in 0..10u32 {
        let mut tx = packets(20_000 + batch * 64, 64, 1, 200);
        port.handles[0].send(&mut tx, &mut pool);
    }
    let st = port.stats();
    assert_eq!(st.tx_dropped - before.tx_dropped, 9 * 64, "{st:?}");
    assert_eq!(st.tx_packets, before.tx_packets, "{st:?}");
    v.ns_a.ip(&["link", "set", &v.a, "up"]);
    wait_running(&v.ns_a, &v.a);
    let mut tx = packets(30_000, 5, 1, 20);
    port.handles[0].send(&mut tx, &mut pool);
    let mut got = peer.recv_marked(69, Duration::from_secs(2));
    got.extend(peer.recv_marked(1, Duration::from_millis(200)));
    let expect: Vec<u32> = (20_000..20_064).chain(30_000..30_005).collect();
    assert_eq!(seqs(&got), expect, "the first batch late, the new ones, no others");
    let st = port.stats();
    assert_eq!(st.tx_packets - before.tx_packets, 64 + 5, "{st:?}");
    assert_eq!(
        st.tx_packets + st.tx_dropped,
        256 + 5 + 640 + 5,
        "every packet counted once: {st:?}"
    );

    // Interface removed: recv gives nothing, send drops and counts, poll stays quiet.
    v.ns_a.ip(&["link", "del", &v.a]);
    let before = port.stats();
    for round in 0..3u32 {
        for _ in 0..20 {
            assert_eq!(port.handles[0].recv(&mut Vec::new(), 64, &mut pool), 0);
        }
        let mut tx = packets(round * 10, 10, 1, 20);
        port.handles[0].send(&mut tx, &mut pool);
        assert!(tx.is_empty());
        let fd = port.handles[0].rx_fd().unwrap().as_raw_fd();
        assert_eq!(poll_now(fd) & (libc::POLLERR | libc::POLLIN), 0);
    }
    let st = port.stats();
    assert_eq!(st.tx_dropped - before.tx_dropped, 30, "{st:?}");
    assert_eq!(st.tx_packets, before.tx_packets);
}

/// An AF_PACKET socket with PACKET_VNET_HDR on one interface: sends TCP frames as GSO
/// super-frames (what a host stack with TSO hands its interface) and receives frames.
struct GsoSock(common::RawSock);

impl GsoSock {
    fn bind(ifname: &str) -> GsoSock {
        GsoSock(common::RawSock::bind_vnet_hdr(ifname))
    }

    /// Sends an untagged IPv4/TCP `frame` (20-byte IP and TCP headers, its checksum
    /// field holding the pseudo-header sum) as one TCPv4 GSO frame of `mss` segments.
    fn send_gso(&self, frame: &[u8], mss: u16) {
        // struct virtio_net_hdr, little-endian: NEEDS_CSUM, GSO_TCPV4, hdr_len,
        // gso_size, csum_start, csum_offset.
        let mut buf = vec![1u8, 1];
        for v in [54u16, mss, 34, 16] {
            buf.extend_from_slice(&v.to_le_bytes());
        }
        buf.extend_from_slice(frame);
        // SAFETY: sends from a live buffer of its own length.
        let n = unsafe { libc::send(self.0.fd(), buf.as_ptr().cast(), buf.len(), 0) };
        assert_eq!(n, buf.len() as isize, "send: {}", std::io::Error::last_os_error());
    }

    /// Incoming IPv4/TCP frames (without their virtio header) until `want` of them or
    /// `wait` passed.
    fn recv_tcp(&self, want: usize, wait: Duration) -> Vec<Vec<u8>> {
        let deadline = Instant::now() + wait;
        let mut got = Vec::new();
        let mut buf = vec![0u8; 70000];
        while got.len() < want && Instant::now() < deadline {
            // SAFETY: a zeroed sockaddr_ll is valid; recvfrom writes at most the lengths
            // given into our own buffer and address.
            let (n, from) = unsafe {
                let mut from: libc::sockaddr_ll = std::mem::zeroed();
                let mut len = std::mem::size_of::<libc::sockaddr_ll>() as u32;
                let n = libc::recvfrom(
                    self.0.fd(),
                    buf.as_mut_ptr().cast(),
                    buf.len(),
                    0,
                    (&mut from as *mut libc::sockaddr_ll).cast(),
                    &mut len,
                );
                (n, from)
            };
            if n < 0 {
                std::thread::sleep(Duration::from_millis(1));
                continue;
            }
            let f = &buf[10..n as usize];
            if from.sll_pkttype != libc::PACKET_OUTGOING && f.len() > 34 && f[23] == 6 {
                got.push(f.to_vec());
            }
        }
        got
    }
}

/// One's-complement checksum over `parts` (each of even length but the last).
fn inet_csum(parts: &[&[u8]]) -> u16 {
    let mut acc = 0u64;
    for p in parts {
        for (i, b) in p.iter().enumerate() {
            acc += if i % 2 == 0 { u64::from(*b) << 8 } else { u64::from(*b) };
        }
    }
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    !(acc as u16)
}

/// An untagged IPv4/TCP frame with `payload` bytes, both checksums correct.
fn tcp_frame(payload: usize) -> Vec<u8> {
    let mut f = vec![0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01, 0x08, 0x00];
    let ip_len = (40 + payload) as u16;
    f.extend_from_slice(&[0x45, 0, (ip_len >> 8) as u8, ip_len as u8, 0x12, 0x34, 0x40, 0]);
    f.extend_from_slice(&[64, 6, 0, 0, 10, 77, 0, 1, 10, 77, 0, 2]);
    let check = inet_csum(&[&f[14..34]]);
    f[24..26].copy_from_slice(&check.to_be_bytes());
    f.extend_from_slice(&[0x30, 0x39, 0x14, 0x51, 0, 0, 0x10, 0, 0, 0, 0, 1, 0x50, 0x18]);
    f.extend_from_slice(&[0x01, 0x00, 0, 0, 0, 0]);
    f.extend((0..payload).map(|i| (i * 13 + 5) as u8));
    let tcp_len = ((20 + payload) as u32).to_be_bytes();
    let check = inet_csum(&[&f[26..34], &tcp_len, &[0, 0, 0, 6], &f[34..]]);
    f[50..52].copy_from_slice(&check.to_be_bytes());
    f
}

#[test]
#[ignore = "needs root: network namespaces"]
fn afxdp_generic_gso_super_frames_are_gathered_and_segmented() {
    let v = veth(1);
    let gso = v.ns_b.run(|| GsoSock::bind(&v.b));
    wait_running(&v.ns_a, &v.a);
    let (info, mut handles) =
        v.ns_a.run(|| afxdp::open(&v.a, 1, AttachMode::Generic)).expect("open generic");
    let port = &mut handles[0];
    assert!(port.multi_buffer(), "bound with XDP_USE_SG (kernel 6.6+)");
    assert!(port.max_rx_frame() >= 65536);
    assert_eq!(info.mtu, 1500);

    // A 7240-byte TCP payload (5 x 1448) and a 60000-byte one, sent as GSO super-frames
    // with the checksum left to the device: each arrives whole (over several UMEM
    // frames), its checksum finished.
    let mut pool = Vec::new();
    let mut rx = Vec::new();
    for payload in [7240usize, 60000] {
        let good = tcp_frame(payload);
        let mut partial = good.clone();
        let tcp_len = ((20 + payload) as u32).to_be_bytes();
        let pseudo = !inet_csum(&[&good[26..34], &tcp_len, &[0, 0, 0, 6]]);
        partial[50..52].copy_from_slice(&pseudo.to_be_bytes());
        gso.send_gso(&partial, 1448);
        let deadline = Instant::now() + Duration::from_secs(5);
        while rx.is_empty() && Instant::now() < deadline {
            datapath::port::PortIo::recv(port, &mut rx, 64, &mut pool);
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(rx.len(), 1, "payload {payload}: {:?}", port.counters().snapshot());
        assert_eq!(rx[0].data(), &good[..], "payload {payload}");
        pool.append(&mut rx);
    }
    let st = port.counters().snapshot();
    assert_eq!(st.rx_packets, 2, "{st:?}");
    assert_eq!((st.rx_dropped, st.rx_errors), (0, 0), "{st:?}");

    // Sending it back out: cut into segments that fit the MTU, checksums correct.
    let good = tcp_frame(7240);
    let mut tx = vec![Packet::from_slice(&good)];
    datapath::port::PortIo::send(port, &mut tx, &mut pool);
    let segs = gso.recv_tcp(5, Duration::from_secs(5));
    assert_eq!(segs.len(), 5, "{:?}", port.counters().snapshot());
    let mut joined = Vec::new();
    for (i, s) in segs.iter().enumerate() {
        assert!(s.len() <= 1514, "segment {i}: {} bytes", s.len());
        assert_eq!(inet_csum(&[&s[14..34]]), 0, "IP checksum of segment {i}");
        let tcp_len = ((s.len() - 34) as u32).to_be_bytes();
        assert_eq!(
            inet_csum(&[&s[26..34], &tcp_len, &[0, 0, 0, 6], &s[34..]]),
            0,
            "TCP checksum of segment {i}"
        );
        let seq = u32::from_be_bytes(s[38..42].try_into().unwrap());
        assert_eq!(seq, 0x1000 + 1460 * i as u32);
        joined.extend_from_slice(&s[54..]);
    }
    assert_eq!(joined, good[54..]);
    let st = port.counters().snapshot();
    assert_eq!((st.tx_packets, st.tx_errors, st.tx_dropped), (5, 0, 0), "{st:?}");
}
