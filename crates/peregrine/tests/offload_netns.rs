//! Hosts with their default offloads (checksum offload and TSO on, as `ip link add`
//! makes a veth) through AF_PACKET and tap ports: TCP (iperf3) completes, moves a real
//! amount of data, the receiver counts no checksum errors (`nstat TcpInCsumErrors` in
//! its namespace), and the super-frames cross the switch whole (the receiver's average
//! frame is far above the MTU).
//!
//! The bed: a namespace for the switch, holding the root-side veth ends of hosts h1, h2
//! (afpacket ports) and h3 (afpacket, the one host with its offloads turned off, on
//! purpose: the comparison that shows what the others' frames would be without them),
//! and a tap port whose other side is that namespace's own stack (the "tap host", with
//! an address on the tap). So h1 -> h2 is afpacket to afpacket, h1 -> tap host is
//! afpacket in and tap out, tap host -> h1 is tap in and afpacket out. Host h4 is on an
//! AF_XDP port (generic mode), which takes no vnet header: h1 -> h4 gets the switch's
//! own segments (MTU-sized at the receiver), h4 -> h1 gets the frames AF_XDP gathered
//! whole handed to the kernel as super-frames. Last, one UDP_SEGMENT send (a UDP
//! super-frame of 20 datagrams) from h1 reaches h2 (segmented by the kernel) and h4
//! (segmented by the switch) as 20 datagrams of the right size.
//!
//! Needs root (namespaces), `iperf3`, `nstat`, `ethtool` (for h3) and `python3` (the
//! UDP sockets), so the test is ignored by default;
//! CI runs it with `cargo test -- --ignored`. Names are unique per run; everything is
//! removed on drop, also on failure; every wait is bounded. Rates go to stderr
//! (`--nocapture` shows them).

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use bench::topo::{ip, Host, Topology};
use common::SwitchProc;
use serde_json::Value;

/// A namespace made by the test, deleted on drop.
struct Ns(String);

impl Drop for Ns {
    fn drop(&mut self) {
        let _ = ip(&["netns", "del", &self.0]);
    }
}

/// What one iperf3 run measured at the receiver.
struct Transfer {
    bytes: u64,
    mbits: f64,
}

/// Three seconds of one TCP stream from `from` to `to` (iperf3 on `port`). A try that
/// fails or reports nothing received (the server not listening yet) is repeated, for at
/// most ten seconds.
fn iperf(topo: &Topology, from: &str, to: &Host, port: u16) -> Transfer {
    let port = port.to_string();
    let t = Instant::now();
    loop {
        let mut srv = topo.spawn_in(&to.ns, "iperf3", &["-s", "-1", "-p", &port]).unwrap();
        std::thread::sleep(Duration::from_millis(300));
        let o = Command::new("timeout")
            .args(["30", "ip", "netns", "exec", from, "iperf3", "-c", &to.ip])
            .args(["-p", &port, "-t", "3", "-J"])
            .output()
            .expect("run iperf3");
        let _ = srv.kill();
        let _ = srv.wait();
        let text = String::from_utf8_lossy(&o.stdout);
        let sum =
            serde_json::from_str::<Value>(&text).ok().map(|v| v["end"]["sum_received"].clone());
        let got = sum.and_then(|s| Some((s["bytes"].as_u64()?, s["bits_per_second"].as_f64()?)));
        match got {
            Some((bytes, bps)) if o.status.success() => {
                return Transfer { bytes, mbits: bps / 1e6 }
            }
            _ if t.elapsed() > Duration::from_secs(10) => {
                panic!("iperf3 {from} -> {} did not complete: {text}", to.ns)
            }
            _ => std::thread::sleep(Duration::from_millis(200)),
        }
    }
}

/// The namespace's TCP checksum errors so far (`nstat -az TcpInCsumErrors`).
fn csum_errors(ns: &str) -> u64 {
    let out = ip(&["netns", "exec", ns, "nstat", "-azs", "TcpInCsumErrors"]).expect("nstat");
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find_map(|l| {
            let mut w = l.split_whitespace();
            (w.next() == Some("TcpInCsumErrors")).then(|| w.next()?.parse().ok())?
        })
        .unwrap_or_else(|| panic!("no TcpInCsumErrors in: {text}"))
}

/// (rx_packets, rx_bytes) of interface `dev` in namespace `ns`.
fn rx_counts(ns: &str, dev: &str) -> (u64, u64) {
    let read = |what: &str| -> u64 {
        let path = format!("/sys/class/net/{dev}/statistics/{what}");
        let out = ip(&["netns", "exec", ns, "cat", &path]).expect("read statistics");
        String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
    };
    (read("rx_packets"), read("rx_bytes"))
}

/// Runs iperf3 `from` -> `to` and checks it: a real amount moved, no checksum errors
/// at the receiver; returns the rate and the receiver's average frame size meanwhile.
fn checked_run(
    topo: &Topology,
    what: &str,
    from: &str,
    to: &Host,
    dev: &str,
    port: u16,
) -> (f64, u64) {
    let before = rx_counts(&to.ns, dev);
    let t = iperf(topo, from, to, port);
    let after = rx_counts(&to.ns, dev);
    let frames = (after.0 - before.0).max(1);
    let avg = (after.1 - before.1) / frames;
    let errors = csum_errors(&to.ns);
    eprintln!(
        "{what}: {:.0} Mbit/s, {} MB received, average frame at the receiver {avg} B, \
         TcpInCsumErrors {errors}",
        t.mbits,
        t.bytes >> 20
    );
    assert!(t.bytes > 10 << 20, "{what}: only {} bytes received", t.bytes);
    assert_eq!(errors, 0, "{what}: the receiver saw bad TCP checksums");
    (t.mbits, avg)
}

/// Receives UDP on `port` in `ns` until one second passes without any: (datagrams,
/// bytes, datagram sizes seen).
const UDP_RECV: &str = "
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(('0.0.0.0', int(sys.argv[1])))
print('ready', flush=True)
s.settimeout(1.0)
n = total = 0
sizes = set()
try:
    while True:
        d = s.recv(65535)
        n += 1
        total += len(d)
        sizes.add(len(d))
except socket.timeout:
    pass
print(n, total, sorted(sizes))
";

/// Sends `count` bytes as one UDP_SEGMENT super-datagram of `size`-byte segments.
const UDP_GSO_SEND: &str = "
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(17, 103, int(sys.argv[3]))  # SOL_UDP, UDP_SEGMENT
s.sendto(bytes(i % 251 for i in range(int(sys.argv[4]))), (sys.argv[1], int(sys.argv[2])))
";

/// One UDP_SEGMENT send of 20 segments of 1000 bytes from `from` to `to`: what the
/// receiver got (datagrams, bytes, sizes).
fn udp_gso(from: &str, to: &Host, port: u16) -> (u64, u64, String) {
    use std::io::{BufRead, BufReader};
    let port = port.to_string();
    let mut rx = Command::new("ip")
        .args(["netns", "exec", &to.ns, "python3", "-c", UDP_RECV, &port])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3 receiver");
    let mut lines = BufReader::new(rx.stdout.take().unwrap()).lines();
    assert_eq!(lines.next().and_then(Result::ok).as_deref(), Some("ready"));
    let sent =
        ip(&["netns", "exec", from, "python3", "-c", UDP_GSO_SEND, &to.ip, &port, "1000", "20000"])
            .expect("python3 sender");
    assert!(sent.status.success(), "UDP_SEGMENT send failed: {sent:?}");
    let last = lines.next().and_then(Result::ok).unwrap_or_default();
    let _ = rx.wait();
    let mut w = last.splitn(3, ' ');
    let n = w.next().and_then(|x| x.parse().ok()).unwrap_or(0);
    let bytes = w.next().and_then(|x| x.parse().ok()).unwrap_or(0);
    (n, bytes, w.next().unwrap_or("").to_string())
}

#[test]
#[ignore = "needs root: network namespaces, iperf3, nstat, ethtool, python3"]
fn tcp_with_default_offloads_through_afpacket_and_tap_ports() {
    let mut topo = Topology::new();
    let h1 = topo.add_host(1).unwrap();
    let h2 = topo.add_host(2).unwrap();
    let h3 = topo.add_host_offloads_off(3).unwrap();
    let h4 = topo.add_host(4).unwrap();
    let sw_ns = Ns(format!("{}s", topo.prefix()));
    ip(&["netns", "add", &sw_ns.0]).unwrap();
    let in_sw = |args: &[&str]| {
        let mut all = vec!["-n", sw_ns.0.as_str()];
        all.extend_from_slice(args);
        ip(&all).unwrap()
    };
    for h in [&h1, &h2, &h3, &h4] {
        ip(&["link", "set", &h.port, "netns", &sw_ns.0]).unwrap();
        in_sw(&["link", "set", &h.port, "up"]);
    }
    in_sw(&["link", "set", "lo", "up"]);
    let _ =
        topo.in_ns(&sw_ns.0, "sh", &["-c", "echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6"]);
    let tap = format!("{}t", topo.prefix());
    let ports: Vec<String> = [&h1, &h2, &h3]
        .iter()
        .map(|h| format!("{},backend=afpacket", h.port))
        .chain([format!("{},backend=afxdp-generic", h4.port), format!("{tap},backend=tap")])
        .collect();
    // One worker: a veth has one queue, and the AF_XDP port takes one per worker.
    let mut args = vec!["--workers", "1"];
    for p in &ports {
        args.extend_from_slice(&["--port", p]);
    }
    let mut sw = SwitchProc::start_in(&sw_ns.0, &args);
    // The tap host: the switch's namespace, with an address on the tap.
    let tap_host = Host {
        ns: sw_ns.0.clone(),
        port: tap.clone(),
        ip: format!("{}.9", h1.ip.rsplit_once('.').unwrap().0),
        mac: String::new(),
    };
    in_sw(&["addr", "add", &format!("{}/24", tap_host.ip), "dev", &tap]);
    for to in [&h2.ip, &h3.ip, &h4.ip, &tap_host.ip] {
        common::ping_until_ok(&topo, &h1, to);
    }

    let (ap, ap_avg) = checked_run(&topo, "afpacket -> afpacket", &h1.ns, &h2, "eth0", 5301);
    let (at, at_avg) = checked_run(&topo, "afpacket -> tap", &h1.ns, &tap_host, &tap, 5302);
    let (ta, ta_avg) = checked_run(&topo, "tap -> afpacket", &sw_ns.0, &h1, "eth0", 5303);
    // The one host with offloads off on purpose: MTU-sized frames all the way.
    let (off, off_avg) =
        checked_run(&topo, "afpacket -> afpacket, sender offloads off", &h3.ns, &h2, "eth0", 5304);
    let (ax, ax_avg) = checked_run(&topo, "afpacket -> afxdp", &h1.ns, &h4, "eth0", 5305);
    let (xa, xa_avg) = checked_run(&topo, "afxdp -> afpacket", &h4.ns, &h1, "eth0", 5306);

    // Super-frames crossed the switch whole (the receivers run no GRO, so an average
    // above the MTU can only be the sender's super-frames, passed on).
    for (what, avg) in [
        ("afpacket -> afpacket", ap_avg),
        ("afpacket -> tap", at_avg),
        ("tap -> afpacket", ta_avg),
        ("afxdp -> afpacket", xa_avg),
    ] {
        assert!(avg > 3000, "{what}: average frame {avg} B: super-frames were cut");
    }
    assert!(off_avg < 1600, "offloads off: average frame {off_avg} B");
    assert!(ax_avg < 1600, "to AF_XDP: average frame {ax_avg} B, not segmented?");
    // UDP segmentation: passed on to the kernel through an afpacket port, done by the
    // switch for the AF_XDP port; either way the receiver gets 20 datagrams of 1000 B.
    for (what, to, port) in [("afpacket -> afpacket", &h2, 5310), ("afpacket -> afxdp", &h4, 5311)]
    {
        let (n, bytes, sizes) = udp_gso(&h1.ns, to, port);
        eprintln!("UDP_SEGMENT {what}: {n} datagrams, {bytes} B, sizes {sizes}");
        assert_eq!((n, bytes, sizes.as_str()), (20, 20_000, "[1000]"), "{what}");
    }
    assert!(sw.alive(), "the switch died");
    let said = sw.stop();
    eprintln!(
        "rates (Mbit/s): afpacket->afpacket {ap:.0}, afpacket->tap {at:.0}, \
         tap->afpacket {ta:.0}, offloads off {off:.0}, afpacket->afxdp {ax:.0}, \
         afxdp->afpacket {xa:.0}"
    );
    drop(said);
}
