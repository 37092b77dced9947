//! Smoke tests of the device drivers in `bench::dut`: each device starts between two
//! namespace hosts, a ping passes, and a one-second flood from host 1 addressed as the
//! device's target says reaches host 2's interface. The topology and the device are
//! guards: both are removed on drop, also when an assertion fails.

use std::time::{Duration, Instant};

use bench::dut::{bridge::Fdb, ovs::PortType, Spec};
use bench::topo::{Host, Topology};

fn rx_packets(topo: &Topology, h: &Host) -> u64 {
    let out = topo
        .in_ns(&h.ns, "cat", &["/sys/class/net/eth0/statistics/rx_packets"])
        .expect("read rx_packets");
    String::from_utf8_lossy(&out.stdout).trim().parse().expect("rx_packets is a number")
}

fn smoke(spec: Spec) {
    let mut topo = Topology::new();
    let h1 = topo.add_host(1).expect("host 1");
    let h2 = topo.add_host(2).expect("host 2");
    let dut = spec.start(&mut topo, &h1, &h2).unwrap_or_else(|e| panic!("{}: {e}", spec.name()));
    let t = Instant::now();
    while topo.in_ns(&h1.ns, "ping", &["-c", "1", "-W", "1", &h2.ip]).is_err() {
        assert!(t.elapsed() < Duration::from_secs(8), "{}: host 1 cannot ping host 2", spec.name());
    }
    let target = dut.target(&h2);
    let src: std::net::Ipv4Addr = h1.ip.parse().unwrap();
    let mut frame = bench::workload::udp_frame(src.into(), target.dst_ip.into(), 9, 9, 64);
    frame[0..6].copy_from_slice(&target.dst_mac);
    frame[6..12].copy_from_slice(&bench::dut::parse_mac(&h1.mac).unwrap());
    let before = rx_packets(&topo, &h2);
    let sent = bench::blast::start(
        ports::Backend::AfPacket,
        &h1.ns,
        "eth0",
        vec![frame],
        Duration::from_secs(1),
        None,
    )
    .join()
    .expect("generator thread")
    .expect("generator");
    std::thread::sleep(Duration::from_millis(200));
    let got = rx_packets(&topo, &h2) - before;
    assert!(sent.packets > 1000, "{}: sent only {}", spec.name(), sent.packets);
    // A device under load may drop, but a good share must pass.
    assert!(
        got * 20 >= sent.packets,
        "{}: {got} of {} frames reached host 2",
        spec.name(),
        sent.packets
    );
    drop(dut);
}

#[test]
#[ignore = "needs root: network namespaces"]
fn bridge_learned() {
    smoke(Spec::Bridge(Fdb::Learned));
}

#[test]
#[ignore = "needs root: network namespaces"]
fn bridge_static() {
    smoke(Spec::Bridge(Fdb::Static));
}

#[test]
#[ignore = "needs root: network namespaces"]
fn router_with_routes() {
    smoke(Spec::Router { routes: 1000 });
}

#[test]
#[ignore = "needs root: network namespaces"]
fn ovs_afpacket() {
    smoke(Spec::Ovs { ports: PortType::Afpacket });
}

#[test]
#[ignore = "needs root: network namespaces"]
fn ovs_afxdp() {
    smoke(Spec::Ovs { ports: PortType::Afxdp });
}
