//! Root tests: real interfaces in network namespaces made for the test.
//!
//! Each test makes its own namespaces (named with the process id and a counter, removed
//! by a guard even when the test fails), opens ports from a thread that has entered a
//! namespace with setns(2), and checks frames end to end against a plain AF_PACKET
//! socket on the other side. Every wait is bounded.

mod common;

use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use common::{
    frame, marked, packets, poll_now, recv_all, refuses_bad_lengths, seqs, unique, veth,
    wait_running, Netns, RawSock,
};
use ports::{open, Backend, LinkEvent, LinkMonitor};

#[test]
#[ignore = "needs root: network namespaces"]
fn afpacket_two_workers_share_rx_and_both_transmit() {
    let v = veth(1);
    let mut port = v.open_a(Backend::AfPacket, 2).expect("open afpacket");
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
    assert_eq!(seqs(&all), (0..200).collect::<Vec<_>>(), "each frame exactly once");
    for f in &all {
        assert_eq!(f, &sent[marked(f).unwrap() as usize], "frame bytes unchanged");
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
        let mut tx = packets(base, 50, 9, 100);
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
    assert!(echo.is_empty(), "received own transmissions: {:?}", seqs(&echo));

    // Too long and too short frames are refused and counted, the rest still goes.
    refuses_bad_lengths(&mut port, &mut pool, &peer, &frame(3000, 9, 3000), 3001);
}

/// A veth pair with an AF_PACKET port of `workers` handles on side a (running) and a raw
/// socket on side b.
fn afpacket_with_peer(workers: usize) -> (common::Veth, ports::OpenPort, RawSock) {
    let v = veth(1);
    let port = v.open_a(Backend::AfPacket, workers).expect("open");
    let peer = v.ns_b.run(|| RawSock::bind(&v.b));
    wait_running(&v.ns_a, &v.a);
    (v, port, peer)
}

#[test]
#[ignore = "needs root: network namespaces"]
fn afpacket_ip_fragments_pass_as_they_are() {
    let (_v, mut port, peer) = afpacket_with_peer(2);
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
    let (_v, mut port, peer) = afpacket_with_peer(1);
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
        let mut tx = packets(base, 20, 3, 50);
        h.send(&mut tx, &mut pool);
    }
    let got = host.recv_marked(40, Duration::from_secs(5));
    assert_eq!(seqs(&got), (1000..1020).chain(2000..2020).collect::<Vec<_>>());
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
    let v = veth(1);
    let (monitor, events) = v.ns_a.run(LinkMonitor::channel).expect("monitor");
    let ifindex = v.ns_a.run(|| ports::InterfaceInfo::by_name(&v.a)).unwrap().ifindex;
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
    let ev = wait_event(&events, ifindex, |e| e.removed && !e.up);
    assert_eq!(ev.name.as_deref(), Some(v.a.as_str()));
    monitor.stop();
}

#[test]
#[ignore = "needs root: network namespaces"]
fn deleting_the_interface_under_open_handles_drops_and_counts() {
    let v = veth(1);
    let mut port = v.open_a(Backend::AfPacket, 2).expect("open");
    wait_running(&v.ns_a, &v.a);
    v.ns_a.ip(&["link", "del", &v.a]);
    let mut pool = Vec::new();
    for round in 0..3u32 {
        for h in port.handles.iter_mut() {
            for _ in 0..20 {
                assert_eq!(h.recv(&mut Vec::new(), 64, &mut pool), 0);
            }
            let mut tx = packets(round * 10, 10, 1, 20);
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
        let mut tx = packets(0, 5, 1, 20);
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
    let (v, mut port, peer) = afpacket_with_peer(2);
    v.ns_a.ip(&["link", "set", &v.a, "down"]);
    let mut pool = Vec::new();
    // More than a whole TX ring while down: every frame dropped, none left queued.
    for batch in 0..20u32 {
        let mut tx = packets(batch * 64, 64, 1, 900);
        port.handles[0].send(&mut tx, &mut pool);
    }
    assert_eq!(port.stats().tx_dropped, 20 * 64);
    v.ns_a.ip(&["link", "set", &v.a, "up"]);
    wait_running(&v.ns_a, &v.a);
    let mut tx = packets(10_000, 5, 1, 20);
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

/// Whether `a` (in `ns_a`) takes XDP redirects now, per the kernel.
fn redirect_target(v: &common::Veth) -> Option<bool> {
    v.ns_a.run(|| {
        let ifindex = ports::InterfaceInfo::by_name(&v.a).unwrap().ifindex;
        ports::xdp_features::query(ifindex)
            .expect("query xdp features")
            .map(|f| f.redirect_target())
    })
}

/// A veth end takes XDP redirects only while its peer runs NAPI: not with the peer's
/// GRO off (as `ip link add` makes it), yes once GRO is on there; and the watch
/// announces each change. On kernels without the netdev family there is nothing to see.
#[test]
#[ignore = "needs root: network namespaces"]
fn veth_redirect_target_follows_the_peers_gro_and_is_announced() {
    let v = veth(1);
    if redirect_target(&v).is_none() {
        eprintln!("this kernel announces no XDP features (before 6.3): nothing to check");
        return;
    }
    let (tx, rx) = std::sync::mpsc::channel();
    let watch = v
        .ns_a
        .run(|| {
            ports::xdp_features::FeatureWatch::start(move |i| {
                let _ = tx.send(i);
            })
        })
        .expect("watch")
        .expect("the family exists");
    let ifindex = v.ns_a.run(|| ports::InterfaceInfo::by_name(&v.a)).unwrap().ifindex;
    assert_eq!(redirect_target(&v), Some(false), "peer GRO off");
    let out = std::process::Command::new("ip")
        .args(["netns", "exec", &v.ns_b.0, "ethtool", "-K", &v.b, "gro", "on"])
        .output()
        .expect("ethtool");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let deadline = Instant::now() + Duration::from_secs(3);
    let mut announced = false;
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        if rx.recv_timeout(left) == Ok(ifindex) {
            announced = true;
            break;
        }
    }
    assert!(announced, "no notification for ifindex {ifindex}");
    assert_eq!(redirect_target(&v), Some(true), "peer GRO on");
    watch.stop();
}
