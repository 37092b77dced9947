//! The delivery rule against the kernel (needs root): a native port's hits are
//! forwarded only where the kernel says it takes XDP frames (else sent to user space), a
//! change is followed without touching the entries, and what the kernel drops after the
//! program let a frame go is counted per output port.
//!
//! Frames are real: written into one veth's far end with a packet socket, served by the
//! program on the near end in native mode, redirected to a second veth pair.

mod common;

use std::os::fd::{FromRawFd, OwnedFd};
use std::sync::Arc;
use std::time::{Duration, Instant};

use datapath::action::Action;
use datapath::key::{Field, FlowMatch};
use datapath::pipeline::{Instructions, Rule};
use ports::afxdp::AttachMode;
use xdp::delivery::Delivery;
use xdp::layout::event;
use xdp::tier::Verdict;
use xdp::FastPath;

use common::in_fresh_netns;

/// `CMD ARGS` in the calling thread's namespace, which must succeed; its stdout.
fn run(cmd: &str, args: &[&str]) -> String {
    let out = std::process::Command::new(cmd).args(args).output().unwrap();
    assert!(out.status.success(), "{cmd} {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Packets interface `name` has received, as `ip -s link` reports them.
fn rx_packets(name: &str) -> u64 {
    let text = run("ip", &["-s", "link", "show", name]);
    let mut lines = text.lines();
    lines.find(|l| l.trim_start().starts_with("RX:"));
    lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no RX counts in {text}"))
}

/// Sends `frame` `n` times out of interface `ifindex` with a packet socket.
fn send(ifindex: u32, frame: &[u8], n: usize) {
    // SAFETY: socket(2) with integer arguments; a non-negative result is ours to own.
    let fd = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
    assert!(fd >= 0, "socket: {}", std::io::Error::last_os_error());
    // SAFETY: `fd` is the fresh descriptor returned above.
    let sock = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: sockaddr_ll is plain integers; all zeroes is valid.
    let mut addr: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    addr.sll_family = libc::AF_PACKET as u16;
    addr.sll_ifindex = ifindex as i32;
    addr.sll_halen = 6;
    for _ in 0..n {
        // SAFETY: sends our own buffer, its exact length, to the address above, whose
        // exact size is passed; `sock` is open.
        let r = unsafe {
            libc::sendto(
                std::os::fd::AsRawFd::as_raw_fd(&sock),
                frame.as_ptr().cast(),
                frame.len(),
                0,
                (&addr as *const libc::sockaddr_ll).cast(),
                std::mem::size_of::<libc::sockaddr_ll>() as u32,
            )
        };
        assert_eq!(r, frame.len() as isize, "{}", std::io::Error::last_os_error());
    }
}

/// Waits until `ok` holds (at most 2 s).
fn eventually(what: &str, ok: impl Fn() -> bool) {
    let t = Instant::now();
    while !ok() {
        assert!(t.elapsed() < Duration::from_secs(2), "{what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
#[ignore = "needs root: network namespaces, native XDP"]
fn native_outputs_follow_the_peers_napi_and_kernel_drops_are_counted() {
    in_fresh_netns(|| {
        let (dia, doa) = (common::veth("dia", "dib"), common::veth("doa", "dob"));
        let dib = ports::InterfaceInfo::by_name("dib").unwrap().ifindex;
        let fp = Arc::new(FastPath::load(64, 4).expect("load"));
        let _in = fp.attach("dia", dia, 1, 1, AttachMode::Native).unwrap();
        let _out = fp.attach("doa", doa, 2, 1, AttachMode::Native).unwrap();
        let of = |p: u32| fp.ports().into_iter().find(|u| u.of_port == p).unwrap();
        if of(2).delivery == Delivery::Unknown {
            eprintln!("this kernel announces no XDP features (before 6.3): nothing to check");
            return;
        }
        assert!(of(1).native && of(2).native);
        // dob as `ip link add` made it: no NAPI, so nothing may be sent there.
        assert_eq!(of(2).delivery, Delivery::Dropped);
        assert!(fp.delivers(1, 2).unwrap_err().contains("NAPI"));

        let (dp, mut wr, _rx) = common::datapath(2);
        let rule = Rule::new(
            FlowMatch::ANY.exact(Field::InPort, 1),
            10,
            Instructions { apply: vec![Action::Output(2)], ..Instructions::default() },
        );
        wr.insert_rule(0, rule).unwrap();
        wr.publish();
        let tier = common::mirrored(&fp, &dp, Instant::now());
        let frame = common::udp_frame(1000);
        let key = common::key_of(&frame);
        match tier.verdict(&key) {
            Verdict::Refused(why) => assert!(why.contains("NAPI"), "{why}"),
            other => panic!("mirrored into a port that drops: {other:?}"),
        }
        // Written all the same: the program sends its hits to user space while dob
        // takes no XDP frames.
        tier.consider(&key);
        assert_eq!(fp.entries().unwrap().len(), 1);
        let undelivered = || fp.events()[event::UNDELIVERED as usize];
        let rx = rx_packets("dob");
        send(dib, &frame, 10);
        eventually("10 hits sent to user space", || undelivered() == 10);
        assert_eq!(fp.events()[event::HIT as usize], 0);
        assert_eq!(rx_packets("dob"), rx, "nothing forwarded into dob by the kernel");
        let lost = |p: u32| fp.lost_of(p).expect("drops are counted");
        assert_eq!(lost(2), 0);

        // GRO on at dob: the kernel now takes XDP frames for doa, and the same entry
        // forwards from the next frame on.
        run("ethtool", &["-K", "dob", "gro", "on"]);
        let (port, before) = fp.refresh(doa).expect("a change");
        assert_eq!((before, port.delivery), (Delivery::Dropped, Delivery::Delivered));
        assert!(matches!(tier.verdict(&key), Verdict::Served { .. }));
        let rx = rx_packets("dob");
        send(dib, &frame, 10);
        eventually("10 frames served in the kernel reach dob", || rx_packets("dob") >= rx + 10);
        assert_eq!(fp.events()[event::HIT as usize], 10);
        assert_eq!(lost(2), 0);

        // GRO off again, the program not yet told: what the entry sends is dropped by
        // the kernel, and counted against port 2.
        run("ethtool", &["-K", "dob", "gro", "off"]);
        let rx = rx_packets("dob");
        send(dib, &frame, 7);
        eventually("7 kernel drops counted", || lost(2) == 7);
        assert_eq!(rx_packets("dob"), rx);
        assert_eq!(lost(1), 0);

        // Told: the frames go to user space again; the entry stays.
        fp.refresh(doa).expect("a change");
        send(dib, &frame, 4);
        eventually("4 more hits sent to user space", || undelivered() == 14);
        assert_eq!(rx_packets("dob"), rx);
        assert_eq!(fp.entries().unwrap().len(), 1);
        match tier.verdict(&key) {
            Verdict::Refused(why) => assert!(why.contains("NAPI"), "{why}"),
            other => panic!("served into a port that drops: {other:?}"),
        }

        // GRO on once more: served in the kernel again, nothing written.
        let installed = tier.dump().1.installed;
        run("ethtool", &["-K", "dob", "gro", "on"]);
        fp.refresh(doa).expect("a change");
        let rx = rx_packets("dob");
        send(dib, &frame, 5);
        eventually("5 more frames reach dob", || rx_packets("dob") >= rx + 5);
        assert_eq!(lost(2), 7);
        assert_eq!(tier.dump().1.installed, installed);
    });
}
