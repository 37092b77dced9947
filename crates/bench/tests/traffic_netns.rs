//! `bench::traffic` on a real veth pair: the generator sends from a namespace host's
//! `eth0` and the sink receives on the pair's root-side end, so every frame sent can
//! arrive (one test puts a Linux bridge between two generator hosts and a sink host).
//! The topology is a guard (removed on drop, also when an assertion fails); each run is
//! bounded by its duration and drain, and the runs of this file take turns (they
//! busy-poll, and paced streams must not compete with each other for the CPUs).

use std::net::Ipv4Addr;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use bench::dut::{parse_mac, Target};
use bench::topo::{ip, run, Host, Topology};
use bench::traffic::{self, Endpoint, Outcome, Spec, Spread, Stream};

/// Held by each test while it runs traffic.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn turn() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

fn afxdp() -> ports::Backend {
    ports::Backend::AfXdp { mode: ports::afxdp::AttachMode::Auto }
}

/// `n` 64-byte frames from host `h` to a made-up neighbour, ports spread.
fn frames(h: &Host, n: usize, seed: u64) -> Vec<Vec<u8>> {
    let target =
        Target { dst_mac: [0x02, 0, 0x5e, 0, 0, 0x42], dst_ip: Ipv4Addr::new(10, 254, 0, 2) };
    frames_to(h, target, n, seed)
}

/// `n` 64-byte frames from host `h` to `target`, ports spread.
fn frames_to(h: &Host, target: Target, n: usize, seed: u64) -> Vec<Vec<u8>> {
    let src_ip: Ipv4Addr = h.ip.parse().expect("host ip");
    let flows = traffic::flows(
        Spread::UdpPorts,
        n,
        parse_mac(&h.mac).expect("host mac"),
        src_ip,
        target,
        (Ipv4Addr::new(10, 254, 0, 0), 24),
        seed,
    );
    flows.iter().map(|f| traffic::frame(f, 64)).collect()
}

fn spec(h: &Host, backend: ports::Backend, streams: Vec<Stream>, duration: Duration) -> Spec {
    Spec {
        tx: vec![Endpoint::in_ns(&h.ns, "eth0")],
        rx: Endpoint::root(&h.port),
        tx_backend: backend.clone(),
        rx_backend: backend,
        streams,
        duration,
        max_packets: None,
        drain: Duration::from_millis(100),
        cpu: None,
        batch: 32,
        tx_queues: 1,
    }
}

fn flat_out(backend: ports::Backend) -> Outcome {
    let _turn = turn();
    let mut topo = Topology::new();
    let h = topo.add_host(1).expect("host");
    let streams = vec![Stream { tx: 0, frames: frames(&h, 16, 1), rate_pps: None }];
    let o = traffic::run(spec(&h, backend.clone(), streams, Duration::from_millis(500)))
        .unwrap_or_else(|e| panic!("{backend}: {e}"));
    println!(
        "{backend} flat out: sent {} ({:.3} Mpps), received {} ({:.3} Mpps), dropped {}, \
         foreign {}, elapsed {:?}, latency {:?}",
        o.sent(),
        o.offered_pps() / 1e6,
        o.received(),
        o.received_pps() / 1e6,
        o.streams[0].tx_dropped,
        o.foreign,
        o.elapsed,
        o.latency
    );
    let s = o.streams[0];
    assert!(o.received() > 0, "{backend}: nothing arrived: {o:?}");
    assert!(o.received() <= o.sent(), "{backend}: more arrived than sent: {o:?}");
    assert_eq!(s.missed, 0, "an unpaced stream misses nothing");
    let l = o.latency.expect("latency of the frames that arrived");
    assert_eq!(l.samples, o.received());
    assert!(l.median_ns > 0 && l.min_ns <= l.median_ns && l.median_ns <= l.p99_ns);
    assert!(l.p99_ns <= l.max_ns);
    assert!(o.elapsed >= Duration::from_millis(500) && o.elapsed < Duration::from_secs(3));
    o
}

#[test]
#[ignore = "needs root: network namespaces"]
fn flat_out_afxdp() {
    flat_out(afxdp());
}

#[test]
#[ignore = "needs root: network namespaces"]
fn flat_out_afpacket() {
    flat_out(ports::Backend::AfPacket);
}

#[test]
#[ignore = "needs root: network namespaces"]
fn two_paced_streams_keep_their_rates() {
    let _turn = turn();
    let mut topo = Topology::new();
    let h = topo.add_host(1).expect("host");
    let rates = [20_000.0, 5_000.0];
    let streams = rates
        .iter()
        .enumerate()
        .map(|(i, &r)| Stream { tx: 0, frames: frames(&h, 8, 10 + i as u64), rate_pps: Some(r) })
        .collect();
    let o = traffic::run(spec(&h, afxdp(), streams, Duration::from_secs(1))).expect("run");
    println!("paced: {o:?}");
    let t = o.elapsed.as_secs_f64();
    for (s, r) in o.streams.iter().zip(rates) {
        let want = r * t;
        assert!(
            (s.sent as f64 - want).abs() <= 0.1 * want,
            "sent {} at {r} pps over {t} s: {o:?}",
            s.sent
        );
        assert_eq!(s.tx_dropped + s.tx_errors, 0, "{o:?}");
        assert!(s.received <= s.sent, "{o:?}");
    }
    let ratio = o.streams[0].received as f64 / o.streams[1].received.max(1) as f64;
    assert!((3.5..=4.5).contains(&ratio), "received ratio {ratio}: {o:?}");
    assert!(o.latency.is_some_and(|l| l.median_ns > 0));
    assert_eq!(o.foreign, 0, "{o:?}");
}

#[test]
#[ignore = "needs root: network namespaces"]
fn flows_spread_over_the_queues_of_a_multi_queue_veth() {
    let _turn = turn();
    let mut topo = Topology::new();
    let h = topo.add_host_with_queues(1, 2).expect("host");
    let before = bench::dut::rx_queue_packets(None, &h.port).expect("queue statistics");
    assert_eq!(before.len(), 2, "{before:?}");
    let streams = vec![Stream { tx: 0, frames: frames(&h, 16, 7), rate_pps: Some(20_000.0) }];
    let spec = Spec { tx_queues: 2, ..spec(&h, afxdp(), streams, Duration::from_millis(500)) };
    let o = traffic::run(spec).expect("run");
    println!("two queues: {o:?}");
    let after = bench::dut::rx_queue_packets(None, &h.port).expect("queue statistics");
    let shares = bench::dut::queue_shares(&before, &after);
    // 16 flows, 8 on each queue, frames sent round-robin: half each.
    assert_eq!(shares.len(), 2, "{before:?} {after:?}");
    assert!(shares.iter().all(|s| (0.4..=0.6).contains(s)), "{shares:?}");
    assert!(o.received() * 10 >= o.sent() * 9, "{o:?}");
}

#[test]
#[ignore = "needs root: network namespaces"]
fn max_packets_stops_sending_exactly() {
    let _turn = turn();
    let mut topo = Topology::new();
    let h = topo.add_host(1).expect("host");
    let streams = vec![Stream { tx: 0, frames: frames(&h, 4, 3), rate_pps: Some(100_000.0) }];
    let mut s = spec(&h, afxdp(), streams, Duration::from_secs(2));
    s.max_packets = Some(1000);
    let o = traffic::run(s).expect("run");
    let st = o.streams[0];
    assert_eq!(st.sent + st.tx_dropped + st.tx_errors, 1000, "{o:?}");
    assert!(o.elapsed < Duration::from_secs(1), "{o:?}");
    assert!(st.received <= st.sent && st.received > 0, "{o:?}");
}

#[test]
#[ignore = "needs root: network namespaces"]
fn a_missing_interface_is_named() {
    let _turn = turn();
    let mut topo = Topology::new();
    let h = topo.add_host(1).expect("host");
    let mut s = spec(
        &h,
        ports::Backend::AfPacket,
        vec![Stream { tx: 0, frames: frames(&h, 1, 0), rate_pps: None }],
        Duration::from_millis(10),
    );
    s.rx = Endpoint::root("pgnosuchif0");
    let e = traffic::run(s).unwrap_err();
    assert!(e.starts_with("receive port (pgnosuchif0 in the root namespace)"), "{e}");
}

#[test]
#[ignore = "needs root: network namespaces"]
fn two_ports_into_one_sink_through_a_bridge() {
    let _turn = turn();
    let mut topo = Topology::new();
    let h1 = topo.add_host(1).expect("host 1");
    let h2 = topo.add_host(2).expect("host 2");
    let h3 = topo.add_host(3).expect("host 3");
    let br = format!("{}br", topo.prefix());
    ip(&["link", "add", "name", &br, "type", "bridge"]).expect("bridge");
    topo.track_link(&br);
    let _ = std::fs::write(format!("/proc/sys/net/ipv6/conf/{br}/disable_ipv6"), "1");
    for h in [&h1, &h2, &h3] {
        ip(&["link", "set", &h.port, "master", &br]).expect("enslave");
    }
    // The sink's MAC is known, so the bridge sends the frames to its port only.
    run("bridge", &["fdb", "replace", &h3.mac, "dev", &h3.port, "master", "static"])
        .expect("static fdb entry");
    ip(&["link", "set", &br, "up"]).expect("bridge up");
    let target =
        Target { dst_mac: parse_mac(&h3.mac).expect("mac"), dst_ip: h3.ip.parse().expect("ip") };
    let rate = 10_000.0;
    let streams = [&h1, &h2]
        .iter()
        .enumerate()
        .map(|(i, h)| Stream {
            tx: i,
            frames: frames_to(h, target, 8, i as u64),
            rate_pps: Some(rate),
        })
        .collect();
    let spec = Spec {
        tx: vec![Endpoint::in_ns(&h1.ns, "eth0"), Endpoint::in_ns(&h2.ns, "eth0")],
        rx: Endpoint::in_ns(&h3.ns, "eth0"),
        ..spec(&h1, afxdp(), streams, Duration::from_millis(500))
    };
    let o = traffic::run(spec).expect("run");
    println!("two ports: {o:?}");
    let want = rate * o.elapsed.as_secs_f64();
    for s in &o.streams {
        assert!((s.sent as f64 - want).abs() <= 0.1 * want, "{o:?}");
        // The bridge may lose a few, not most.
        assert!(s.received <= s.sent && s.received * 10 >= s.sent * 9, "{o:?}");
    }
}
