//! Helpers shared by the root tests (`netns.rs`, `afxdp.rs`): namespaces made for the
//! test, veth pairs between them, a plain AF_PACKET socket as the far end of the wire,
//! and numbered test frames.
//!
//! Names are unique per run (`pg<pid><tag><n>`), every guard cleans up on drop (even
//! when the test fails), and every wait is bounded.

// Each test file uses a part of it.
#![allow(dead_code)]

use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use ports::OpenPort;

/// Marks the test's frames (the payload starts with it).
const MARK: &[u8; 8] = b"PGPORTST";

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// A short unique name (fits an interface name): `pg<pid><tag><n>`.
pub fn unique(tag: &str) -> String {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("pg{}{tag}{n}", std::process::id() % 100_000)
}

/// Runs `ip args...`, panicking on failure; returns its output.
pub fn ip(args: &[&str]) -> String {
    let out = Command::new("ip").args(args).output().expect("run ip");
    assert!(out.status.success(), "ip {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A network namespace, deleted on drop (with the interfaces in it).
pub struct Netns(pub String);

impl Netns {
    pub fn new() -> Netns {
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

    /// `ip -n <ns> args...`, its output.
    pub fn ip(&self, args: &[&str]) -> String {
        let mut all = vec!["-n", self.0.as_str()];
        all.extend_from_slice(args);
        ip(&all)
    }

    /// Runs `f` on a thread that has entered this namespace.
    pub fn run<T: Send>(&self, f: impl FnOnce() -> T + Send) -> T {
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
pub struct Veth {
    pub ns_a: Netns,
    pub ns_b: Netns,
    pub a: String,
    pub b: String,
}

impl Veth {
    /// Opens end `a` (in its namespace) with `backend` and `workers` workers.
    pub fn open_a(
        &self,
        backend: ports::Backend,
        workers: usize,
    ) -> Result<OpenPort, ports::PortError> {
        self.ns_a.run(|| ports::open(&self.a, backend, workers))
    }
}

/// A veth pair between two new namespaces, each end with `queues` rx and tx queues.
pub fn veth(queues: u32) -> Veth {
    let (ns_a, ns_b) = (Netns::new(), Netns::new());
    let (a, b) = (unique("a"), unique("b"));
    let q = queues.to_string();
    ns_a.ip(&[
        "link",
        "add",
        "name",
        &a,
        "numrxqueues",
        &q,
        "numtxqueues",
        &q,
        "type",
        "veth",
        "peer",
        "name",
        &b,
        "numrxqueues",
        &q,
        "numtxqueues",
        &q,
        "netns",
        &ns_b.0,
    ]);
    ns_a.ip(&["link", "set", &a, "up"]);
    ns_b.ip(&["link", "set", &b, "up"]);
    Veth { ns_a, ns_b, a, b }
}

/// A plain AF_PACKET socket on one interface: the test's end of the wire.
pub struct RawSock(OwnedFd);

impl RawSock {
    /// Opens it on `ifname` in the calling thread's namespace.
    pub fn bind(ifname: &str) -> RawSock {
        Self::open(ifname, false)
    }

    /// [`RawSock::bind`] with PACKET_VNET_HDR: a virtio_net_hdr precedes every frame
    /// sent or received (GSO and checksum offload as a host's stack hands them over).
    pub fn bind_vnet_hdr(ifname: &str) -> RawSock {
        Self::open(ifname, true)
    }

    /// The socket's descriptor.
    pub fn fd(&self) -> std::os::fd::RawFd {
        self.0.as_raw_fd()
    }

    fn open(ifname: &str, vnet_hdr: bool) -> RawSock {
        /// <linux/if_packet.h> PACKET_VNET_HDR.
        const PACKET_VNET_HDR: i32 = 15;
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
            if vnet_hdr {
                let one: i32 = 1;
                let r = libc::setsockopt(
                    fd.as_raw_fd(),
                    libc::SOL_PACKET,
                    PACKET_VNET_HDR,
                    (&one as *const i32).cast(),
                    4,
                );
                assert_eq!(r, 0, "PACKET_VNET_HDR: {}", std::io::Error::last_os_error());
            }
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

    pub fn send(&self, frame: &[u8]) {
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
    pub fn recv_marked(&self, want: usize, wait: Duration) -> Vec<Vec<u8>> {
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

/// An IPv4/UDP frame of `14 + 20 + 8 + 12 + payload` bytes carrying MARK and `seq`,
/// from UDP port `sport` (the flow hash spreads these over fanout members and queues).
/// The payload bytes depend on `seq`, so a frame delivered in place of another shows.
pub fn frame(seq: u32, sport: u16, payload: usize) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&[0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01, 0x08, 0x00]);
    let udp_len = 8 + MARK.len() + 4 + payload;
    let ip_len = 20 + udp_len;
    f.extend_from_slice(&[0x45, 0, (ip_len >> 8) as u8, ip_len as u8, 0, 1, 0, 0, 64, 17, 0, 0]);
    f.extend_from_slice(&[10, 77, 0, 1, 10, 77, 0, 2]);
    f.extend_from_slice(&sport.to_be_bytes());
    f.extend_from_slice(&[0x30, 0x39, (udp_len >> 8) as u8, udp_len as u8, 0, 0]);
    f.extend_from_slice(MARK);
    f.extend_from_slice(&seq.to_be_bytes());
    f.extend((0..payload).map(|i| (i * 7 + seq as usize) as u8));
    f
}

/// The sequence number of a test frame (MARK found after the UDP header, with or
/// without one VLAN tag).
pub fn marked(f: &[u8]) -> Option<u32> {
    [42usize, 46].into_iter().find_map(|at| {
        (f.get(at..at + 8)? == MARK)
            .then(|| u32::from_be_bytes(f[at + 8..at + 12].try_into().unwrap()))
    })
}

/// Receives on every handle until `want` test frames arrived in all or `wait` passed;
/// returns each handle's frames.
pub fn recv_all(port: &mut OpenPort, want: usize, wait: Duration) -> Vec<Vec<Vec<u8>>> {
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
            got.extend(rx.iter().filter(|p| marked(p.data()).is_some()).map(|p| p.data().to_vec()));
            pool.append(&mut rx);
        }
        if idle {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    per
}

/// The sorted sequence numbers of `frames` (test frames only).
pub fn seqs(frames: &[Vec<u8>]) -> Vec<u32> {
    let mut s: Vec<u32> = frames.iter().filter_map(|f| marked(f)).collect();
    s.sort_unstable();
    s
}

/// Waits until `ifname` in `ns` has carrier (IFF_RUNNING).
pub fn wait_running(ns: &Netns, ifname: &str) {
    let deadline = Instant::now() + Duration::from_secs(3);
    while Instant::now() < deadline {
        if ns.run(|| ports::InterfaceInfo::by_name(ifname).map(|i| i.running).unwrap_or(false)) {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("{ifname} never got carrier");
}

/// poll(2) result flags of `fd`, not waiting.
pub fn poll_now(fd: i32) -> i16 {
    let mut p = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
    // SAFETY: one live pollfd.
    let r = unsafe { libc::poll(&mut p, 1, 0) };
    assert!(r >= 0);
    p.revents
}

/// Sends `too_long`, a 10-byte runt and the test frame `seq` (`frame(seq, 9, 10)`) on
/// `port`'s first handle: the first two are refused and counted as tx errors (2 in
/// all), and `peer` receives `seq` alone.
pub fn refuses_bad_lengths(
    port: &mut OpenPort,
    pool: &mut Vec<datapath::packet::Packet>,
    peer: &RawSock,
    too_long: &[u8],
    seq: u32,
) {
    let mut tx = vec![
        datapath::packet::Packet::from_slice(too_long),
        datapath::packet::Packet::from_slice(&[0u8; 10]),
        datapath::packet::Packet::from_slice(&frame(seq, 9, 10)),
    ];
    port.handles[0].send(&mut tx, pool);
    assert_eq!(port.stats().tx_errors, 2);
    assert_eq!(seqs(&peer.recv_marked(1, Duration::from_secs(3))), vec![seq]);
}

/// `n` test frames, sequences `first`.., from UDP port `sport` with `payload` bytes.
pub fn packets(first: u32, n: u32, sport: u16, payload: usize) -> Vec<datapath::packet::Packet> {
    (0..n)
        .map(|i| datapath::packet::Packet::from_slice(&frame(first + i, sport, payload)))
        .collect()
}
