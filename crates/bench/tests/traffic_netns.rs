//! `bench::traffic` on a real veth pair: the generator sends from a namespace host's
//! `eth0` and the sink receives on the pair's root-side end, so every frame sent can
//! arrive. The topology is a guard (removed on drop, also when an assertion fails);
//! each run is bounded by its duration and drain.

use std::net::Ipv4Addr;
use std::time::Duration;

use bench::dut::{parse_mac, Target};
use bench::topo::{Host, Topology};
use bench::traffic::{self, Endpoint, Outcome, Spec, Spread, Stream};

fn afxdp() -> ports::Backend {
    ports::Backend::AfXdp {
        mode: ports::afxdp::AttachMode::Auto,
    }
}

/// `n` 64-byte frames from host `h` to a made-up neighbour, ports spread.
fn frames(h: &Host, n: usize, seed: u64) -> Vec<Vec<u8>> {
    let target = Target {
        dst_mac: [0x02, 0, 0x5e, 0, 0, 0x42],
        dst_ip: Ipv4Addr::new(10, 254, 0, 2),
    };
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
    }
}

fn flat_out(backend: ports::Backend) -> Outcome {
    let mut topo = Topology::new();
    let h = topo.add_host(1).expect("host");
    let streams = vec![Stream {
        tx: 0,
        frames: frames(&h, 16, 1),
        rate_pps: None,
    }];
    let o = traffic::run(spec(
        &h,
        backend.clone(),
        streams,
        Duration::from_millis(500),
    ))
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
    assert!(
        o.received() <= o.sent(),
        "{backend}: more arrived than sent: {o:?}"
    );
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
    let mut topo = Topology::new();
    let h = topo.add_host(1).expect("host");
    let rates = [20_000.0, 5_000.0];
    let streams = rates
        .iter()
        .enumerate()
        .map(|(i, &r)| Stream {
            tx: 0,
            frames: frames(&h, 8, 10 + i as u64),
            rate_pps: Some(r),
        })
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
    assert!(
        (3.5..=4.5).contains(&ratio),
        "received ratio {ratio}: {o:?}"
    );
    assert!(o.latency.is_some_and(|l| l.median_ns > 0));
    assert_eq!(o.foreign, 0, "{o:?}");
}

#[test]
#[ignore = "needs root: network namespaces"]
fn max_packets_stops_sending_exactly() {
    let mut topo = Topology::new();
    let h = topo.add_host(1).expect("host");
    let streams = vec![Stream {
        tx: 0,
        frames: frames(&h, 4, 3),
        rate_pps: Some(100_000.0),
    }];
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
    let mut topo = Topology::new();
    let h = topo.add_host(1).expect("host");
    let mut s = spec(
        &h,
        ports::Backend::AfPacket,
        vec![Stream {
            tx: 0,
            frames: frames(&h, 1, 0),
            rate_pps: None,
        }],
        Duration::from_millis(10),
    );
    s.rx = Endpoint::root("pgnosuchif0");
    let e = traffic::run(s).unwrap_err();
    assert!(
        e.starts_with("receive port (pgnosuchif0 in the root namespace)"),
        "{e}"
    );
}
