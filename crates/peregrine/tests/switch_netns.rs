//! End-to-end tests of `peregrine run` between network namespaces: real veth pairs and
//! taps, real ping and iperf3, the switch as a separate process ended by PID.
//!
//! They need root (namespaces, raw sockets), so they are ignored by default; CI runs them
//! with `cargo test -- --ignored` as root. Every name is unique per run and everything
//! is removed on drop, also when an assertion fails.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use bench::topo::{ip, Host, Topology};
use common::{hosts, hosts_on_switch, ping, ping_until_ok, SwitchProc, SECURE_1_TO_2_AND_BACK};

/// One second of TCP from `client` to an iperf3 server started in `server_ns` at
/// `server_ip`; the receiver's rate in Mbit/s.
fn iperf(topo: &Topology, client: &Host, server_ns: &str, server_ip: &str) -> f64 {
    let mut srv = topo.spawn_in(server_ns, "iperf3", &["-s", "-1"]).unwrap();
    let t = Instant::now();
    let out = loop {
        match topo.in_ns(&client.ns, "iperf3", &["-c", server_ip, "-t", "1", "-f", "m"]) {
            Ok(o) => break o,
            Err(e) if t.elapsed() > Duration::from_secs(5) => {
                let _ = srv.kill();
                let _ = srv.wait();
                panic!("iperf3: {e}")
            }
            Err(_) => std::thread::sleep(Duration::from_millis(100)),
        }
    };
    let _ = srv.kill();
    let _ = srv.wait();
    let text = String::from_utf8_lossy(&out.stdout);
    let receiver = text.lines().find(|l| l.contains("receiver")).unwrap();
    receiver
        .split_whitespace()
        .collect::<Vec<_>>()
        .windows(2)
        .find(|w| w[1] == "Mbits/sec")
        .map(|w| w[0].parse().unwrap())
        .unwrap()
}

/// The row of the stats table for port `no`: (rx pkts, tx pkts).
fn port_row(table: &str, no: u32) -> (u64, u64) {
    let row = table
        .lines()
        .find(|l| l.split_whitespace().next() == Some(&no.to_string()))
        .unwrap_or_else(|| panic!("no row for port {no} in\n{table}"));
    let f: Vec<&str> = row.split_whitespace().collect();
    (f[3].parse().unwrap(), f[5].parse().unwrap())
}

#[test]
#[ignore = "needs root: network namespaces"]
fn ping_iperf_and_learning_through_afpacket() {
    let (topo, h, sw) = hosts_on_switch(3, &["--workers", "2"]);
    ping_until_ok(&topo, &h[0], &h[1].ip);
    assert!(ping(&topo, &h[0], &h[1].ip, 20), "20 pings h1 -> h2");
    let mbits = iperf(&topo, &h[0], &h[1].ns, &h[1].ip);
    assert!(mbits > 1.0, "iperf3 through the switch: {mbits} Mbit/s");
    let table = sw.stop();
    // Learning: h3 saw the first broadcasts (ARP) and at most the first unknown
    // unicast; not the 20 pings, nor the iperf3 stream.
    let (_, tx3) = port_row(&table, 3);
    let (rx1, _) = port_row(&table, 1);
    assert!(rx1 > 1000, "{table}");
    assert!(tx3 < 10, "port 3 got {tx3} frames: still flooding?\n{table}");
    assert!(table.contains("MACs learned"), "{table}");
}

/// A numbered tap port, and a tap as the LOCAL port, each moved into a namespace after
/// the switch made it.
#[test]
#[ignore = "needs root: network namespaces"]
fn tap_and_local_ports_reach_a_namespace() {
    let mut topo = Topology::new();
    let h1 = topo.add_host(1).unwrap();
    let tap = format!("{}t", topo.prefix());
    // A namespace for the tap's side: host 2 without its veth.
    let h2 = topo.add_host(2).unwrap();
    let local = format!("{}l", topo.prefix());
    let h3 = topo.add_host(3).unwrap();
    let sw = SwitchProc::start(&[
        "--port",
        &h1.port,
        "--port",
        &format!("{tap},backend=tap"),
        "--local",
        &local,
    ]);
    // Moves interface `dev` into namespace `ns` and brings it up there with `addr`/24.
    let move_in = |dev: &str, ns: &str, addr: &str| {
        ip(&["link", "set", dev, "netns", ns]).unwrap();
        topo.in_ns(ns, "ip", &["addr", "add", &format!("{addr}/24"), "dev", dev]).unwrap();
        topo.in_ns(ns, "ip", &["link", "set", dev, "up"]).unwrap();
    };
    // LOCAL: host 3 gets the LOCAL tap instead of its veth.
    let local_addr = h1.ip.rsplit_once('.').unwrap().0.to_string() + ".33";
    topo.in_ns(&h3.ns, "ip", &["link", "set", "eth0", "down"]).unwrap();
    move_in(&local, &h3.ns, &local_addr);
    // The switch made the tap; move it into host 2's namespace as its second interface.
    let addr = h1.ip.rsplit_once('.').unwrap().0.to_string() + ".22";
    move_in(&tap, &h2.ns, &addr);
    // Host 2's veth has an address in the same subnet; take it out of the way.
    topo.in_ns(&h2.ns, "ip", &["link", "set", "eth0", "down"]).unwrap();
    ping_until_ok(&topo, &h1, &addr);
    assert!(ping(&topo, &h1, &addr, 5));
    let mbits = iperf(&topo, &h1, &h2.ns, &addr);
    assert!(mbits > 1.0, "iperf3 through the tap: {mbits} Mbit/s");
    ping_until_ok(&topo, &h1, &local_addr);
    assert!(ping(&topo, &h1, &local_addr, 5));
    let table = sw.stop();
    let (rx2, tx2) = port_row(&table, 2);
    assert!(rx2 >= 5 && tx2 >= 5, "{table}");
    let local_row = table.lines().find(|l| l.starts_with("LOCAL")).unwrap();
    let f: Vec<&str> = local_row.split_whitespace().collect();
    let (rx, tx): (u64, u64) = (f[3].parse().unwrap(), f[5].parse().unwrap());
    assert!(rx >= 5 && tx >= 5, "{table}");
}

#[test]
#[ignore = "needs root: network namespaces"]
fn link_down_up_and_removal_do_not_stop_the_switch() {
    let (topo, h, mut sw) = hosts_on_switch(3, &[]);
    ping_until_ok(&topo, &h[0], &h[1].ip);
    ip(&["link", "set", &h[1].port, "down"]).unwrap();
    sw.wait_line(&format!("port 2 ({}) link down", h[1].port), Duration::from_secs(5));
    assert!(!ping(&topo, &h[0], &h[1].ip, 2), "a down port forwards nothing");
    ip(&["link", "set", &h[1].port, "up"]).unwrap();
    sw.wait_line(&format!("port 2 ({}) link up", h[1].port), Duration::from_secs(5));
    ping_until_ok(&topo, &h[0], &h[1].ip);
    // Remove port 3's interface while the switch runs.
    ip(&["link", "del", &h[2].port]).unwrap();
    sw.wait_line("link removed", Duration::from_secs(5));
    ping_until_ok(&topo, &h[0], &h[1].ip);
    assert!(sw.alive());
    sw.stop();
}

#[test]
#[ignore = "needs root: network namespaces"]
fn an_idle_switch_uses_almost_no_cpu() {
    let (topo, h, sw) = hosts_on_switch(2, &["--workers", "2"]);
    ping_until_ok(&topo, &h[0], &h[1].ip);
    std::thread::sleep(Duration::from_millis(500));
    let before = sw.cpu_seconds();
    std::thread::sleep(Duration::from_secs(3));
    let used = sw.cpu_seconds() - before;
    assert!(used < 0.15, "idle switch used {used:.2} CPU-s in 3 s (limit 5% of a core)");
    // And it still forwards at once after idling.
    assert!(ping(&topo, &h[0], &h[1].ip, 1));
    sw.stop();
}

#[test]
fn bad_flags_say_what_is_wrong() {
    let out = Command::new(env!("CARGO_BIN_EXE_peregrine"))
        .args(["run", "--port", "x", "--cpus", "9999"])
        .output()
        .unwrap();
    // A configuration error: the status a service manager does not restart on.
    assert_eq!(out.status.code(), Some(78));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--cpus: CPU 9999 does not exist"), "{err}");
    let out = Command::new(env!("CARGO_BIN_EXE_peregrine")).args(["run"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("no port given"));
}

/// The row of the stats table for port `no`: its drops column.
fn port_drops(table: &str, no: u32) -> u64 {
    let row = table.lines().find(|l| l.split_whitespace().next() == Some(&no.to_string())).unwrap();
    row.split_whitespace().nth(7).unwrap().parse().unwrap()
}

fn mac_bytes(mac: &str) -> [u8; 6] {
    let mut m = [0u8; 6];
    for (b, h) in m.iter_mut().zip(mac.split(':')) {
        *b = u8::from_str_radix(h, 16).unwrap();
    }
    m
}

/// A 64-byte UDP frame from host `a` to host `b`.
fn udp(a: &Host, b: &Host) -> Vec<u8> {
    let ip = |h: &Host| -> u32 { h.ip.parse::<std::net::Ipv4Addr>().unwrap().into() };
    let mut f = bench::workload::udp_frame(ip(a), ip(b), 9, 9, 64);
    f[0..6].copy_from_slice(&mac_bytes(&b.mac));
    f[6..12].copy_from_slice(&mac_bytes(&a.mac));
    f
}

#[test]
#[ignore = "needs root: network namespaces"]
fn two_overloading_inputs_get_equal_shares() {
    // One worker, on the last CPU; both sources share the first.
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let last = (cpus - 1).to_string();
    let (topo, h, sw) = hosts_on_switch(3, &["--cpus", &last]);
    ping_until_ok(&topo, &h[0], &h[2].ip);
    ping_until_ok(&topo, &h[1], &h[2].ip);
    let secs = Duration::from_secs(2);
    let [a, b] = [0, 1].map(|i| {
        let frames = vec![udp(&h[i], &h[2])];
        bench::blast::start(ports::Backend::AfPacket, &h[i].ns, "eth0", frames, secs, Some(0))
    });
    let (sa, sb) = (a.join().unwrap().unwrap(), b.join().unwrap().unwrap());
    let table = sw.stop();
    let ((rx1, _), (rx2, _)) = (port_row(&table, 1), port_row(&table, 2));
    let drops = port_drops(&table, 1) + port_drops(&table, 2);
    let msg = format!("sent {sa:?} {sb:?}\n{table}");
    eprintln!("{msg}");
    assert!(drops > 0, "the switch was not overloaded: {msg}");
    let (lo, hi) = (rx1.min(rx2) as f64, rx1.max(rx2) as f64);
    assert!(lo >= 0.9 * hi, "shares {rx1} and {rx2} differ by more than 10%: {msg}");
}

#[test]
#[ignore = "needs root: network namespaces"]
fn missing_interface_and_missing_privileges_are_named() {
    // Runs `cmd`, which must fail; its stderr.
    let failure = |cmd: &mut Command| {
        let out = cmd.output().unwrap();
        assert!(!out.status.success());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let err =
        failure(Command::new(env!("CARGO_BIN_EXE_peregrine")).args(["run", "--port", "pgnosuch0"]));
    assert!(err.contains("port 1 (pgnosuch0, afpacket): no such network interface"), "{err}");
    // The same binary as an unprivileged user (setpriv from util-linux).
    let err = failure(
        Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(env!("CARGO_BIN_EXE_peregrine"))
            .args(["run", "--port", "x"]),
    );
    assert!(err.contains("needs root (CAP_NET_RAW and CAP_NET_ADMIN;"), "{err}");
}

/// Namespaces whose name starts with `prefix`.
fn namespaces_named(prefix: &str) -> Vec<String> {
    let out = Command::new("ip").args(["netns", "list"]).output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| n.starts_with(prefix))
        .map(str::to_string)
        .collect()
}

#[test]
#[ignore = "needs root: network namespaces"]
fn demo_runs_and_removes_everything() {
    let out = Command::new(env!("CARGO_BIN_EXE_peregrine"))
        .args(["demo", "--iperf-seconds", "1"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(text.matches(" 0% packet loss").count(), 3, "{text}");
    assert!(text.contains("learning switch: 3 MACs learned"), "{text}");
    let prefix = text.split_whitespace().nth(1).unwrap().trim_end_matches(':');
    assert!(prefix.starts_with("pg"), "{text}");
    assert!(namespaces_named(prefix).is_empty(), "{prefix} left behind");
}

#[test]
#[ignore = "needs root: network namespaces"]
fn demo_cleans_up_on_ctrl_c() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_peregrine"))
        .args(["demo", "--iperf-seconds", "1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let prefix = first.split_whitespace().nth(1).unwrap().trim_end_matches(':').to_string();
    for l in lines.by_ref() {
        if l.unwrap().starts_with("switch started") {
            break;
        }
    }
    assert!(!namespaces_named(&prefix).is_empty());
    Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    let t = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(t.elapsed() < Duration::from_secs(15), "demo did not end on SIGINT");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(!status.success(), "an interrupted demo reports failure");
    assert!(namespaces_named(&prefix).is_empty(), "{prefix} left behind");
}

#[test]
#[ignore = "needs root: network namespaces"]
fn ping_and_iperf_through_afxdp() {
    let (topo, h) = hosts(2);
    let p1 = format!("{},backend=afxdp", h[0].port);
    let p2 = format!("{},backend=afxdp", h[1].port);
    let sw = SwitchProc::start(&["--port", &p1, "--port", &p2]);
    ping_until_ok(&topo, &h[0], &h[1].ip);
    assert!(ping(&topo, &h[0], &h[1].ip, 10), "10 pings h1 -> h2");
    let mbits = iperf(&topo, &h[0], &h[1].ns, &h[1].ip);
    assert!(mbits > 1.0, "iperf3 through AF_XDP ports: {mbits} Mbit/s");
    let table = sw.stop();
    let ((rx1, tx1), (rx2, tx2)) = (port_row(&table, 1), port_row(&table, 2));
    assert!(rx1 > 1000 && tx2 > 1000 && rx2 > 10 && tx1 > 10, "{table}");
    assert!(table.contains("afxdp"), "{table}");
}

#[test]
#[ignore = "needs root: network namespaces"]
fn flows_given_at_start_forward_and_secure_mode_adds_no_normal() {
    let (topo, h, sw) = hosts_on_switch(3, &SECURE_1_TO_2_AND_BACK);
    ping_until_ok(&topo, &h[0], &h[1].ip);
    assert!(ping(&topo, &h[0], &h[1].ip, 5));
    // No flow reaches port 3 and secure mode installs no NORMAL rule.
    assert!(!ping(&topo, &h[0], &h[2].ip, 2));
    let table = sw.stop();
    assert_eq!(port_row(&table, 3).1, 0, "nothing was sent to port 3:\n{table}");
    assert!(table.contains("0 MACs learned"), "{table}");
}

/// A bridge in the root namespace, deleted on drop.
struct Bridge(String);

impl Bridge {
    fn new(name: String) -> Bridge {
        ip(&["link", "add", &name, "type", "bridge"]).expect("add a bridge");
        ip(&["link", "set", &name, "up"]).expect("bridge up");
        Bridge(name)
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        let _ = ip(&["link", "del", &self.0]);
    }
}

/// What the switch said about port `name`'s backend.
fn backend_line(said: &[String], name: &str) -> String {
    said.iter()
        .find(|l| l.contains(&format!("({name}): ")))
        .unwrap_or_else(|| panic!("nothing said about {name}: {said:?}"))
        .clone()
}

/// The default backend: AF_XDP only where the driver has native XDP and zero-copy
/// AF_XDP (no such device here: `ports::auto`'s unit tests choose for them), so veths
/// and a bridge get AF_PACKET, each with its reason, and forward, with one worker or
/// two on veths of one queue.
#[test]
#[ignore = "needs root: network namespaces"]
fn ports_given_no_backend_say_which_they_got_and_why() {
    let (topo, h) = hosts(2);
    let br = Bridge::new(format!("{}b", topo.prefix()));
    for workers in ["1", "2"] {
        let (sw, said) = SwitchProc::start_lines(&[
            "--port",
            &h[0].port,
            "--port",
            &h[1].port,
            "--port",
            &br.0,
            "--workers",
            workers,
        ]);
        for x in &h {
            let line = backend_line(&said, &x.port);
            assert!(line.contains(": afpacket (no zero-copy AF_XDP on this driver"), "{line}");
        }
        let line = backend_line(&said, &br.0);
        assert!(line.contains(": afpacket (the driver has no native XDP"), "{line}");
        ping_until_ok(&topo, &h[0], &h[1].ip);
        assert!(ping(&topo, &h[0], &h[1].ip, 10), "10 pings h1 -> h2");
        drop(sw);
    }
}

/// The management socket under umask 0 (issue: it was bound before its mode was set, and
/// an unprivileged local user could connect in that window): started five times, each
/// time while an unprivileged process tries to connect as fast as it can from before
/// the switch starts until after it is up, it is never reached by that user, and it
/// and its directory have their final modes.
#[test]
#[ignore = "needs root: network namespaces"]
fn the_management_socket_is_never_open_to_others_even_under_umask_0() {
    use std::os::unix::fs::PermissionsExt;
    let (_topo, hs) = hosts(2);
    let dir = common::RunDir::new("umask0");
    // World-searchable, as /run is, so that only the socket's own mode guards it.
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let mgmt = dir.path().join("sub/m.mgmt");
    let attacker = r#"
import socket, sys, time
path, until = sys.argv[1], time.monotonic() + float(sys.argv[2])
tries = reached = 0
while time.monotonic() < until:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
        reached += 1
    except OSError:
        pass
    finally:
        s.close()
    tries += 1
print(tries, reached)
"#;
    for round in 0..5 {
        let _ = std::fs::remove_dir_all(dir.path().join("sub"));
        let probe = Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c"])
            .arg(attacker)
            .arg(&mgmt)
            .arg("4")
            .stdout(Stdio::piped())
            .spawn()
            .expect("run python3 as nobody");
        std::thread::sleep(Duration::from_millis(300));
        let script = r#"umask 0; exec "$0" run "$@""#;
        let mut child = Command::new("sh")
            .args(["-c", script, env!("CARGO_BIN_EXE_peregrine")])
            .args(["--port", &hs[0].port, "--port", &hs[1].port])
            .args(["--mgmt", mgmt.to_str().unwrap(), "--state-dir", "none"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start peregrine");
        let lines = common::read_lines(child.stderr.take().unwrap());
        let up = common::wait_for_line(&lines, "switching between", Duration::from_secs(10));
        let out = probe.wait_with_output().expect("the probe ends");
        let mode =
            |p: &std::path::Path| std::fs::metadata(p).map(|m| m.permissions().mode() & 0o777);
        let (sock_mode, dir_mode) = (mode(&mgmt), mode(&dir.path().join("sub")));
        let _ = Command::new("kill").arg(child.id().to_string()).status();
        let _ = child.wait();
        assert!(up.is_ok(), "round {round}: the switch did not come up");
        let said = String::from_utf8_lossy(&out.stdout);
        let counts: Vec<u64> = said.split_whitespace().filter_map(|n| n.parse().ok()).collect();
        assert_eq!(counts.len(), 2, "round {round}: the probe said {said:?}");
        assert!(counts[0] > 100, "round {round}: only {} tries", counts[0]);
        assert_eq!(counts[1], 0, "round {round}: nobody reached the socket {} times", counts[1]);
        assert_eq!(sock_mode.ok(), Some(0o600), "round {round}: the socket's mode");
        assert_eq!(dir_mode.ok(), Some(0o755), "round {round}: the directory's mode");
    }
}
