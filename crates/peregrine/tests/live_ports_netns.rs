//! The switch as a service: ports added and removed while it forwards (`peregrine ctl
//! add-port`/`del-port`, a reload of its configuration on SIGHUP), interfaces deleted
//! and created again, and a restart that restores its tables from its state directory.
//! Real clients watch: an os-ken application and `peregrine ctl monitor`.
//!
//! Root is needed (namespaces, raw sockets), so they are ignored by default; CI runs them
//! as root with `cargo test -- --ignored`.

mod common;

use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use bench::topo::{Host, Topology};
use common::osken::Controller;
use common::{ctl, hosts, ping, ping_until_ok, read_lines, wait_for_line, MgmtPath, SwitchProc};

/// `ctl`, which must succeed; its stdout.
fn ctl_ok(args: &[&str]) -> String {
    let (ok, out, err) = ctl(args);
    assert!(ok, "peregrine ctl {args:?} failed: {err}");
    out
}

/// `peregrine ctl monitor` on a switch, its stderr (where it prints) gathered.
struct Monitor {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl Monitor {
    fn start(mgmt: &str) -> Monitor {
        let mut child = Command::new(env!("CARGO_BIN_EXE_peregrine"))
            .args(["ctl", "-O", "OpenFlow13", "--timeout", "60", "monitor", mgmt])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let lines = read_lines(child.stderr.take().unwrap());
        Monitor { child, lines }
    }

    /// Returns once the monitor hears the switch. `ctl monitor` prints nothing when it
    /// connects, so this asks for a change every connection is told of: port `port`
    /// stops (then again starts) sending packet-ins, which nothing here uses; each
    /// port-mod is a port-status MODIFY. Bounded: 10 tries, 1 s each.
    fn wait_connected(&self, mgmt: &str, port: &str) {
        for i in 0..10 {
            let config = if i % 2 == 0 { "no-packet-in" } else { "packet-in" };
            ctl_ok(&["mod-port", mgmt, port, config]);
            if wait_for_line(&self.lines, "MOD: ", Duration::from_secs(1)).is_ok() {
                if config == "no-packet-in" {
                    ctl_ok(&["mod-port", mgmt, port, "packet-in"]);
                }
                return;
            }
        }
        panic!("ctl monitor heard none of 10 port-mods");
    }

    /// Waits for a line containing `what`.
    fn wait(&self, what: &str) {
        if let Err(seen) = wait_for_line(&self.lines, what, Duration::from_secs(5)) {
            panic!("ctl monitor never printed {what:?}: {seen:?}");
        }
    }
}

impl Drop for Monitor {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `count` echo requests at 500 a second (whether answered or not) from `from` to
/// `to`, run in the background; [`Flood::finish`] gives (sent, answered).
struct Flood(Child);

impl Flood {
    fn start(from: &Host, to: &str, count: u32) -> Flood {
        let c = count.to_string();
        Flood(
            Command::new("ip")
                .args(["netns", "exec", &from.ns, "ping", "-q", "-i", "0.002"])
                .args(["-W", "1", "-c", &c, to])
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .unwrap(),
        )
    }

    fn finish(self) -> (u64, u64) {
        let out = self.0.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let line = text
            .lines()
            .find(|l| l.contains("packets transmitted"))
            .unwrap_or_else(|| panic!("no ping summary: {text}"));
        let n: Vec<u64> =
            line.split(|c: char| !c.is_ascii_digit()).filter_map(|w| w.parse().ok()).collect();
        (n[0], n[1])
    }
}

/// Pings `to` from `from` until one gets through or `limit` passes; whether it did.
fn reaches_within(topo: &Topology, from: &Host, to: &str, limit: Duration) -> bool {
    let t = Instant::now();
    while t.elapsed() < limit {
        if topo.in_ns(&from.ns, "ping", &["-c", "1", "-W", "0.2", to]).is_ok() {
            return true;
        }
    }
    false
}

#[test]
#[ignore = "needs root: network namespaces"]
fn ports_join_and_leave_while_traffic_flows_and_controllers_hear_of_it() {
    let (mut app, target) = Controller::start_free("port_status_13");
    let mgmt = MgmtPath::new("live");
    let (topo, h) = hosts(3);
    let sw = SwitchProc::start(&[
        "--port",
        &h[0].port,
        "--port",
        &h[1].port,
        "--controller",
        &target,
        "--fail-mode",
        "secure",
        "--mgmt",
        mgmt.as_str(),
    ]);
    app.wait_line("switch connected", Duration::from_secs(15));
    let monitor = Monitor::start(mgmt.as_str());
    ping_until_ok(&topo, &h[0], &h[1].ip);
    // 4 s of pings between ports 1 and 2; a port joins in the middle.
    let flood = Flood::start(&h[0], &h[1].ip, 2000);
    std::thread::sleep(Duration::from_millis(1000));
    let t = Instant::now();
    let out = ctl_ok(&["add-port", mgmt.as_str(), &h[2].port]);
    let added = t.elapsed();
    assert!(out.starts_with("added port 3: "), "{out}");
    assert!(
        reaches_within(&topo, &h[0], &h[2].ip, Duration::from_secs(1)),
        "the new port did not forward within 1 s"
    );
    eprintln!(
        "add-port took {:.1} ms; forwarding within {:.1} ms of the command",
        added.as_secs_f64() * 1e3,
        t.elapsed().as_secs_f64() * 1e3
    );
    let (sent, answered) = flood.finish();
    assert_eq!(answered, sent, "pings between the other ports were lost while a port joined");
    app.wait_line("port status ADD 3 ", Duration::from_secs(5));
    monitor.wait("ADD: 3(");
    let list = ctl_ok(&["list-ports", mgmt.as_str()]);
    assert_eq!(
        list.lines().map(|l| l.split_whitespace().next().unwrap()).collect::<Vec<_>>(),
        ["1", "2", "3"],
        "{list}"
    );
    // Deleted: the controller and the monitor hear of it, and the flows the
    // controller installed towards it (they stay) forward nothing.
    let out = ctl_ok(&["del-port", mgmt.as_str(), &h[2].port]);
    assert!(out.starts_with("deleted port 3: "), "{out}");
    app.wait_line("port status DELETE 3 ", Duration::from_secs(5));
    monitor.wait("DEL: 3(");
    let flows = ctl_ok(&["-O", "OpenFlow13", "dump-flows", mgmt.as_str()]);
    assert!(flows.contains("actions=output:3"), "{flows}");
    assert!(!ping(&topo, &h[0], &h[2].ip, 2));
    let (ok, _, err) = ctl(&["del-port", mgmt.as_str(), &h[2].port]);
    assert!(!ok && err.contains("is not a port of this switch"), "{err}");
    // Added again, without asking: its number comes back, and so does forwarding.
    let out = ctl_ok(&["add-port", mgmt.as_str(), &h[2].port]);
    assert!(out.starts_with("added port 3: "), "{out}");
    ping_until_ok(&topo, &h[0], &h[2].ip);
    // Mistakes are said.
    let (ok, _, err) = ctl(&["add-port", mgmt.as_str(), "pgnosuch0"]);
    assert!(!ok && err.contains("pgnosuch0"), "{err}");
    let (ok, _, err) = ctl(&["add-port", mgmt.as_str(), &format!("{},ofport=1", h[2].port)]);
    assert!(!ok && err.contains("already port 3"), "{err}");
    drop(monitor);
    sw.stop();
    drop(app);
}

#[test]
#[ignore = "needs root: network namespaces"]
fn an_interface_deleted_and_created_again_comes_back_under_its_number() {
    let mgmt = MgmtPath::new("live");
    let (topo, h) = hosts(2);
    let mut sw = SwitchProc::start(&[
        "--port",
        &format!("{},ofport=5", h[0].port),
        "--port",
        &h[1].port,
        "--mgmt",
        mgmt.as_str(),
    ]);
    let monitor = Monitor::start(mgmt.as_str());
    monitor.wait_connected(mgmt.as_str(), &h[1].port);
    ping_until_ok(&topo, &h[0], &h[1].ip);
    // The host's end goes (a container deleted): the port is deleted with it.
    topo.in_ns(&h[0].ns, "ip", &["link", "del", "eth0"]).unwrap();
    sw.wait_line("deleted with its interface", Duration::from_secs(5));
    monitor.wait("DEL: 5(");
    // A new pair under the same name (the container back): added as port 5 again.
    bench::topo::ip(&[
        "link", "add", &h[0].port, "type", "veth", "peer", "name", "pgtmp0", "netns", &h[0].ns,
    ])
    .unwrap();
    topo.in_ns(&h[0].ns, "ip", &["link", "set", "pgtmp0", "name", "eth0"]).unwrap();
    topo.in_ns(&h[0].ns, "ip", &["addr", "add", &format!("{}/24", h[0].ip), "dev", "eth0"])
        .unwrap();
    topo.in_ns(&h[0].ns, "ip", &["link", "set", "eth0", "up"]).unwrap();
    bench::topo::ip(&["link", "set", &h[0].port, "up"]).unwrap();
    sw.wait_line("port 5 (", Duration::from_secs(5));
    monitor.wait("ADD: 5(");
    ping_until_ok(&topo, &h[0], &h[1].ip);
    drop(monitor);
    sw.stop();
}

#[test]
#[ignore = "needs root: network namespaces"]
fn sighup_reloads_the_files_ports() {
    let mgmt = MgmtPath::new("live");
    let (topo, h) = hosts(3);
    let file = std::env::temp_dir().join(format!("pg-live-{}.toml", std::process::id()));
    let write = |ports: &[(&str, Option<u32>)]| {
        let mut s = String::new();
        for (name, ofport) in ports {
            s.push_str(&format!("[[port]]\nname = {name:?}\n"));
            if let Some(n) = ofport {
                s.push_str(&format!("ofport = {n}\n"));
            }
        }
        std::fs::write(&file, s).unwrap();
    };
    write(&[(&h[0].port, None), (&h[1].port, None)]);
    let mut sw = SwitchProc::start(&["--config", file.to_str().unwrap(), "--mgmt", mgmt.as_str()]);
    ping_until_ok(&topo, &h[0], &h[1].ip);
    write(&[(&h[0].port, None), (&h[2].port, Some(7))]);
    Command::new("kill").args(["-HUP", &sw.pid().to_string()]).status().unwrap();
    sw.wait_line(&format!("reload: port 2 ({}) removed", h[1].port), Duration::from_secs(5));
    sw.wait_line(&format!("reload: port 7 ({}) added", h[2].port), Duration::from_secs(5));
    let list = ctl_ok(&["list-ports", mgmt.as_str()]);
    assert_eq!(
        list.lines()
            .map(|l| l.split_whitespace().take(2).collect::<Vec<_>>().join(" "))
            .collect::<Vec<_>>(),
        [format!("1 {}", h[0].port), format!("7 {}", h[2].port)],
        "{list}"
    );
    ping_until_ok(&topo, &h[0], &h[2].ip);
    assert!(!ping(&topo, &h[0], &h[1].ip, 1));
    // A file with a mistake changes nothing and says where it is.
    std::fs::write(&file, "workers = \"two\"\n").unwrap();
    let (ok, _, err) = ctl(&["reload", mgmt.as_str()]);
    assert!(!ok && err.contains(":1:"), "{err}");
    assert_eq!(ctl_ok(&["list-ports", mgmt.as_str()]), list);
    let _ = std::fs::remove_file(&file);
    sw.stop();
}

/// A state directory under /tmp, removed on drop.
struct StateDir(std::path::PathBuf);

impl Drop for StateDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
#[ignore = "needs root: network namespaces"]
fn a_secure_switch_restarts_with_its_flows_groups_meters_and_ports() {
    let mgmt = MgmtPath::new("live");
    let state = StateDir(std::env::temp_dir().join(format!("pg-state-{}", std::process::id())));
    let (topo, h) = hosts(3);
    let args = [
        "--port",
        h[0].port.as_str(),
        "--port",
        h[1].port.as_str(),
        "--fail-mode",
        "secure",
        "--mgmt",
        mgmt.as_str(),
        "--state-dir",
        state.0.to_str().unwrap(),
    ];
    let sw = SwitchProc::start(&args);
    let m = mgmt.as_str();
    ctl_ok(&["add-port", m, &format!("{},ofport=9", h[2].port)]);
    ctl_ok(&["-O", "OpenFlow13", "add-meter", m, "meter=1,pktps,bands=type=drop,rate=100000"]);
    ctl_ok(&["-O", "OpenFlow13", "add-group", m, "group_id=1,type=all,bucket=output:2"]);
    ctl_ok(&["-O", "OpenFlow13", "add-flow", m, "cookie=0x77,in_port=1,actions=meter:1,group:1"]);
    ctl_ok(&["-O", "OpenFlow13", "add-flow", m, "in_port=2,actions=output:1"]);
    ctl_ok(&["-O", "OpenFlow13", "add-flow", m, "in_port=9,ip,actions=output:1"]);
    ctl_ok(&[
        "-O",
        "OpenFlow13",
        "add-flow",
        m,
        "in_port=1,ip,nw_dst=10.0.0.0/8,priority=1,actions=output:9",
    ]);
    ping_until_ok(&topo, &h[0], &h[1].ip);
    let dump = |what: &str| {
        let out = ctl_ok(&["-O", "OpenFlow13", what, m]);
        // Without the counters and durations, which start again.
        out.lines()
            .skip(1)
            .map(|l| {
                l.split([',', ' '])
                    .filter(|w| {
                        !w.starts_with("duration=")
                            && !w.starts_with("n_packets=")
                            && !w.starts_with("n_bytes=")
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect::<Vec<_>>()
    };
    let before = (dump("dump-flows"), dump("dump-groups"), dump("dump-meters"));
    // Stopped and started with the same arguments, no controller anywhere: the tables
    // and the port added at run time come back before forwarding starts.
    let out = sw.stop();
    assert!(out.contains(&h[2].port), "{out}");
    let (sw, lines) = SwitchProc::start_lines(&args);
    let said = lines.join("\n");
    assert!(said.contains("restored 4 flow(s), 1 group(s), 1 meter(s)"), "{said}");
    assert!(said.contains(&format!("port 9 ({}): added at run time before", h[2].port)), "{said}");
    assert_eq!((dump("dump-flows"), dump("dump-groups"), dump("dump-meters")), before);
    ping_until_ok(&topo, &h[0], &h[1].ip);
    // Across a restart under traffic, the pings lost are those of the time the switch
    // was down.
    let flood = Flood::start(&h[0], &h[1].ip, 1500);
    std::thread::sleep(Duration::from_millis(1000));
    let t = Instant::now();
    sw.stop();
    let (sw, _) = SwitchProc::start_lines(&args);
    let down = t.elapsed();
    let (sent, answered) = flood.finish();
    let lost = sent - answered;
    eprintln!(
        "restart: down {:.0} ms, {lost} of {sent} pings lost (1 per 2 ms sent)",
        down.as_secs_f64() * 1e3
    );
    assert!(
        lost as f64 * 2.0 <= down.as_secs_f64() * 1000.0 * 1.2 + 40.0,
        "{lost} pings lost in a restart of {down:?}"
    );
    sw.stop();
    drop(topo);
}
