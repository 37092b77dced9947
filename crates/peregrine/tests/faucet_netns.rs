//! Faucet and Gauge, as they come from PyPI (`faucet==1.10.12` in a venv of their own,
//! with the os-ken they pin), controlling `peregrine run` between namespace hosts, checked
//! as a user would check them: two routed VLANs (pings within and across), an ACL on a
//! port (one TCP port blocked, another allowed), Faucet's learning in the flow table,
//! Faucet killed (secure mode keeps what it installed) and started again (it reprograms
//! the switch), and Gauge polling port and flow statistics into files.
//!
//! Root is needed (namespaces, raw sockets), so it is ignored by default; CI runs it as
//! root with `cargo test -- --ignored`. The venv is `$FAUCET_VENV`, by default the
//! repository's `.venv-faucet` (`.ci/run` makes it); the test fails if it is missing.
//! Everything runs under a name and ports of its own, in a temp directory kept (and
//! named in the failure message) when the test fails.

mod common;

use std::collections::BTreeSet;
use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bench::topo::{Host, Topology};
use common::osken::free_port;
use common::{ctl, spawn_with_lines, wait_for_line, RunDir};

/// The switch's datapath id, as Faucet's configuration names it.
const DPID: &str = "a1";

/// The VLANs: (name, VID, subnet prefix, Faucet's router address and MAC).
const VLANS: [(&str, u16, &str, &str); 2] = [
    ("v100", 100, "10.100.0", "0e:00:00:00:01:01"),
    ("v200", 200, "10.200.0", "0e:00:00:00:02:01"),
];

/// The TCP port the ACL on port 1 drops, and one it lets through.
const BLOCKED: u16 = 5001;
const ALLOWED: u16 = 5002;

/// How often Gauge polls (seconds).
const GAUGE_INTERVAL: u32 = 2;

/// A child process, killed (SIGKILL, by PID) and reaped on drop if still running.
struct Proc(Child);

impl Proc {
    fn alive(&mut self) -> bool {
        matches!(self.0.try_wait(), Ok(None))
    }

    fn kill(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill();
    }
}

/// One run: its directory, Faucet's venv, the switch's management socket and the
/// controllers' private ports (OpenFlow for Faucet and Gauge, Prometheus for Faucet).
struct Bed {
    dir: PathBuf,
    venv: PathBuf,
    mgmt: String,
    faucet_port: u16,
    gauge_port: u16,
    prom_port: u16,
}

impl Bed {
    fn path(&self, f: &str) -> PathBuf {
        self.dir.join(f)
    }

    /// Starts Faucet (or Gauge, `gauge`) from the venv, listening for the switch on
    /// 127.0.0.1 only; output appended to `<which>.out`; waits until it listens.
    fn start_controller(&self, which: &str) -> Proc {
        let port = if which == "gauge" { self.gauge_port } else { self.faucet_port };
        let out = OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.path(&format!("{which}.out")))
            .expect("create the controller's output file");
        let path = format!(
            "{}:{}",
            self.venv.join("bin").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        // `faucet` and `gauge` exec osken-manager from PATH (same PID).
        let child = Command::new(self.venv.join("bin").join(which))
            .arg(format!("--ryu-ofp-tcp-listen-port={port}"))
            .arg("--ryu-ofp-listen-host=127.0.0.1")
            .env("PATH", path)
            .env("FAUCET_CONFIG", self.path("faucet.yaml"))
            .env("FAUCET_LOG", self.path("faucet.log"))
            .env("FAUCET_EXCEPTION_LOG", self.path("faucet_exception.log"))
            .env("FAUCET_PROMETHEUS_ADDR", "127.0.0.1")
            .env("FAUCET_PROMETHEUS_PORT", self.prom_port.to_string())
            .env("GAUGE_CONFIG", self.path("gauge.yaml"))
            .env("GAUGE_LOG", self.path("gauge.log"))
            .env("GAUGE_EXCEPTION_LOG", self.path("gauge_exception.log"))
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .unwrap_or_else(|e| panic!("start {which} from {}: {e}", self.venv.display()));
        let mut p = Proc(child);
        let t = Instant::now();
        while !listening(port) {
            self.ensure(p.alive(), &format!("{which} exited at start"));
            self.ensure(
                t.elapsed() < Duration::from_secs(40),
                &format!("{which} did not listen on 127.0.0.1:{port} within 40 s"),
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        p
    }

    /// Panics with `what`, where the run's files are and their tails (the controllers'
    /// logs, the switch's output) and the switch's flows, unless `ok`.
    fn ensure(&self, ok: bool, what: &str) {
        if ok {
            return;
        }
        let mut s = format!("{what}\n(the run's files are kept in {})", self.dir.display());
        for f in [
            "faucet.log",
            "faucet.out",
            "faucet_exception.log",
            "gauge.log",
            "gauge.out",
            "gauge_exception.log",
            "switch.log",
        ] {
            s += &format!("\n--- {f} (last 30 lines):\n{}", tail(&self.path(f), 30));
        }
        let (_, flows, err) = ctl(&["dump-flows", &self.mgmt]);
        s += &format!("\n--- peregrine ctl dump-flows:\n{flows}{err}");
        panic!("{s}");
    }

    /// The switch's flows (`ctl dump-flows`), one line each.
    fn flows(&self) -> Vec<String> {
        let (ok, out, err) = ctl(&["dump-flows", &self.mgmt]);
        self.ensure(ok, &format!("peregrine ctl dump-flows failed: {err}"));
        out.lines().filter(|l| l.contains("actions=")).map(|l| l.trim().to_string()).collect()
    }

    /// Waits at most `limit` for the flows to pass `test`; the last flows read.
    fn flows_until(
        &self,
        limit: Duration,
        test: impl Fn(&[String]) -> bool,
    ) -> Option<Vec<String>> {
        let t = Instant::now();
        loop {
            let f = self.flows();
            if test(&f) {
                return Some(f);
            }
            if t.elapsed() > limit {
                return None;
            }
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    /// How often `what` occurs in `file` of the run's directory.
    fn count_in(&self, file: &str, what: &str) -> usize {
        std::fs::read_to_string(self.path(file)).unwrap_or_default().matches(what).count()
    }

    /// Waits at most `limit` for `file` to hold at least `n` times `what`.
    fn wait_in_file(&self, file: &str, what: &str, n: usize, limit: Duration) {
        let t = Instant::now();
        while self.count_in(file, what) < n {
            self.ensure(
                t.elapsed() < limit,
                &format!("{file} did not say {what:?} ({n} times) within {limit:?}"),
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Gauge's port statistics for `stat` (e.g. `sw1-h1-packets-in`), oldest first.
    fn gauge_stat(&self, stat: &str) -> Vec<u64> {
        let text = std::fs::read_to_string(self.path("gauge-port-stats.txt")).unwrap_or_default();
        text.lines()
            .filter_map(|l| {
                let mut f = l.split('\t');
                let (_, name, value) = (f.next()?, f.next()?, f.next()?);
                if name == stat {
                    value.trim().parse().ok()
                } else {
                    None
                }
            })
            .collect()
    }
}

/// The last `n` lines of a file, or why there are none.
fn tail(path: &Path, n: usize) -> String {
    match std::fs::read_to_string(path) {
        Ok(s) => {
            let lines: Vec<&str> = s.lines().collect();
            lines[lines.len().saturating_sub(n)..].join("\n")
        }
        Err(e) => format!("({e})"),
    }
}

/// Whether something listens on TCP 127.0.0.1:`port` (from /proc/net/tcp: no probe
/// connection, which the controller would take for a switch).
fn listening(port: u16) -> bool {
    let want = format!("0100007F:{port:04X}");
    std::fs::read_to_string("/proc/net/tcp").unwrap_or_default().lines().any(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        f.len() > 3 && f[1] == want && f[3] == "0A"
    })
}

/// The flow line without its duration and counters, to compare flows over time.
fn flow_key(line: &str) -> String {
    line.split(", ")
        .filter(|f| !["duration=", "n_packets=", "n_bytes="].iter().any(|p| f.starts_with(p)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A flow's `n_packets`.
fn n_packets(line: &str) -> u64 {
    line.split(", ")
        .find_map(|f| f.strip_prefix("n_packets="))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// Whether the flows hold Faucet's learned entries for `h` on `port`: its source in the
/// eth_src table and its destination in the eth_dst table.
fn learned(flows: &[String], h: &Host, port: usize) -> bool {
    let src = flows.iter().any(|f| {
        f.contains(&format!("in_port={port},")) && f.contains(&format!("dl_src={}", h.mac))
    });
    let dst = flows.iter().any(|f| {
        f.contains(&format!("dl_dst={} ", h.mac)) && f.ends_with(&format!("output:{port}"))
    });
    src && dst
}

/// A TCP listener on `ports` in namespace `ns` that accepts and closes; started when
/// it says so.
fn listener(ns: &str, ports: &[u16]) -> Proc {
    const PROG: &str = "import select, socket, sys\n\
        ls = []\n\
        for p in sys.argv[1:]:\n    \
            s = socket.socket()\n    \
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n    \
            s.bind(('0.0.0.0', int(p)))\n    \
            s.listen(16)\n    \
            ls.append(s)\n\
        print('listening', flush=True)\n\
        while True:\n    \
            for s in select.select(ls, [], [])[0]:\n        \
                s.accept()[0].close()\n";
    let mut cmd = Command::new("ip");
    cmd.args(["netns", "exec", ns, "python3", "-c", PROG]).args(ports.iter().map(u16::to_string));
    let (child, lines) = spawn_with_lines(&mut cmd, "the TCP listener");
    let p = Proc(child);
    assert!(
        wait_for_line(&lines, "listening", Duration::from_secs(10)).is_ok(),
        "the TCP listener in {ns} did not start"
    );
    p
}

/// A TCP connect from namespace `ns` to `ip`:`port` within `secs`: "connected",
/// "timed out" or the error.
fn connect(ns: &str, ip: &str, port: u16, secs: u32) -> String {
    const PROG: &str = "import socket, sys\n\
        try:\n    \
            socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=float(sys.argv[3])).close()\n    \
            print('connected')\n\
        except socket.timeout:\n    \
            print('timed out')\n\
        except OSError as e:\n    \
            print(e)\n";
    let out = Command::new("ip")
        .args([
            "netns",
            "exec",
            ns,
            "python3",
            "-c",
            PROG,
            ip,
            &port.to_string(),
            &secs.to_string(),
        ])
        .stdin(Stdio::null())
        .output()
        .expect("run the TCP client");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// `ping -c count` from `h` to `to`: whether a reply came.
fn ping(topo: &Topology, h: &Host, to: &str, count: u32) -> bool {
    topo.in_ns(&h.ns, "ping", &["-c", &count.to_string(), "-i", "0.2", "-W", "1", to]).is_ok()
}

/// Pings (one at a time) until one gets through, at most `limit`.
fn ping_until(topo: &Topology, h: &Host, to: &str, limit: Duration) -> bool {
    let t = Instant::now();
    while t.elapsed() < limit {
        if ping(topo, h, to, 1) {
            return true;
        }
    }
    false
}

/// Faucet's and Gauge's configurations for a run in `dir`.
fn configs(dir: &Path) -> (String, String) {
    let mut vlans = String::new();
    for (name, vid, net, mac) in VLANS {
        vlans += &format!(
            "  {name}:\n    vid: {vid}\n    faucet_vips: [\"{net}.254/24\"]\n    faucet_mac: \"{mac}\"\n"
        );
    }
    let faucet = format!(
        "vlans:\n{vlans}\
         routers:\n  r1:\n    vlans: [v100, v200]\n\
         acls:\n  no-tcp-{BLOCKED}:\n    \
           - rule: {{dl_type: 0x800, nw_proto: 6, tcp_dst: {BLOCKED}, actions: {{allow: 0}}}}\n    \
           - rule: {{actions: {{allow: 1}}}}\n\
         dps:\n  sw1:\n    dp_id: 0x{DPID}\n    hardware: \"Open vSwitch\"\n    interfaces:\n      \
           1: {{name: h1, native_vlan: v100, acls_in: [no-tcp-{BLOCKED}]}}\n      \
           2: {{name: h2, native_vlan: v100}}\n      \
           3: {{name: h3, native_vlan: v200}}\n      \
           4: {{name: h4, native_vlan: v200}}\n"
    );
    let d = dir.display();
    let gauge = format!(
        "faucet_configs:\n  - {d}/faucet.yaml\n\
         watchers:\n  \
           port_stats:\n    type: port_stats\n    all_dps: true\n    interval: {GAUGE_INTERVAL}\n    db: port_file\n  \
           flow_table:\n    type: flow_table\n    all_dps: true\n    interval: {GAUGE_INTERVAL}\n    db: flow_dir\n\
         dbs:\n  \
           port_file:\n    type: text\n    file: {d}/gauge-port-stats.txt\n  \
           flow_dir:\n    type: text\n    path: {d}/gauge-flows\n"
    );
    (faucet, gauge)
}

#[test]
#[ignore = "needs root: network namespaces; Faucet's venv (.ci/run makes it)"]
fn faucet_routes_two_vlans_applies_an_acl_survives_a_restart_and_gauge_polls() {
    let started = Instant::now();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let venv =
        std::env::var_os("FAUCET_VENV").map(PathBuf::from).unwrap_or(root.join(".venv-faucet"));
    assert!(
        venv.join("bin/faucet").exists() && venv.join("bin/gauge").exists(),
        "{} has no faucet and gauge: run .ci/run (or `python3 -m venv .venv-faucet && \
         .venv-faucet/bin/pip install faucet==1.10.12`), or point FAUCET_VENV at such a venv",
        venv.display()
    );
    // The run's directory: configurations, logs, Gauge's output.
    let dir = RunDir::new("faucet");
    std::fs::create_dir_all(dir.path().join("gauge-flows")).expect("create the run's directory");
    let bed = Bed {
        dir: dir.path().to_path_buf(),
        venv,
        mgmt: dir.path().join("switch.mgmt").display().to_string(),
        faucet_port: free_port(),
        gauge_port: free_port(),
        prom_port: free_port(),
    };
    let (faucet_yaml, gauge_yaml) = configs(&bed.dir);
    std::fs::write(bed.path("faucet.yaml"), faucet_yaml).unwrap();
    std::fs::write(bed.path("gauge.yaml"), gauge_yaml).unwrap();

    // Hosts 1 and 2 in VLAN 100, 3 and 4 in VLAN 200, each routing through its VLAN's
    // Faucet address.
    let mut topo = Topology::new();
    let mut h: Vec<Host> = Vec::new();
    for i in 1..=4u8 {
        let mut host = topo.add_host(i).expect("add a namespace host");
        let (_, _, net, _) = VLANS[usize::from(i > 2)];
        host.ip = format!("{net}.{i}");
        let cidr = format!("{}/24", host.ip);
        for args in [
            &["addr", "flush", "dev", "eth0"][..],
            &["addr", "add", &cidr, "dev", "eth0"],
            &["route", "add", "default", "via", &format!("{net}.254")],
        ] {
            topo.in_ns(&host.ns, "ip", args).expect("address a host");
        }
        h.push(host);
    }

    let mut faucet = bed.start_controller("faucet");
    let mut gauge = bed.start_controller("gauge");
    let mut args: Vec<String> = Vec::new();
    for host in &h {
        args.extend(["--port".into(), format!("{},backend=afpacket", host.port)]);
    }
    for port in [bed.faucet_port, bed.gauge_port] {
        args.extend(["--controller".into(), format!("tcp:127.0.0.1:{port}")]);
    }
    args.extend(
        ["--dpid", DPID, "--fail-mode", "secure", "--state-dir", "none", "--mgmt", &bed.mgmt]
            .map(String::from),
    );
    let log = std::fs::File::create(bed.path("switch.log")).unwrap();
    let mut switch = Proc(
        Command::new(env!("CARGO_BIN_EXE_peregrine"))
            .arg("run")
            .args(&args)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("start peregrine"),
    );
    bed.wait_in_file("switch.log", "switching between", 1, Duration::from_secs(15));
    bed.wait_in_file("faucet.log", "Cold start configuring DP", 1, Duration::from_secs(30));
    bed.wait_in_file("gauge.log", "(0xa1) up", 1, Duration::from_secs(30));
    eprintln!("faucet: switch programmed after {:.1} s", started.elapsed().as_secs_f64());

    // Within each VLAN: switched on Faucet's learned flows.
    for (a, b) in [(0, 1), (2, 3)] {
        bed.ensure(
            ping_until(&topo, &h[a], &h[b].ip, Duration::from_secs(15)),
            &format!("no ping within the VLAN from h{} to h{} ({})", a + 1, b + 1, h[b].ip),
        );
    }
    // Across the VLANs: routed by Faucet's FIB flows (the first packets wait for
    // Faucet to resolve the next hop).
    for (a, b) in [(0, 2), (1, 3), (3, 0)] {
        bed.ensure(
            ping_until(&topo, &h[a], &h[b].ip, Duration::from_secs(15)),
            &format!("no routed ping from h{} to h{} ({})", a + 1, b + 1, h[b].ip),
        );
    }
    bed.ensure(
        ping(&topo, &h[0], "10.100.0.254", 2),
        "h1's router address (Faucet's VIP) does not answer ping",
    );

    // Learning: Faucet's eth_src and eth_dst entries for every host.
    let flows = bed.flows_until(Duration::from_secs(10), |f| {
        h.iter().enumerate().all(|(i, x)| learned(f, x, i + 1))
    });
    bed.ensure(flows.is_some(), "Faucet's learned eth_src/eth_dst flows are not all in the switch");
    let routed = bed.flows();
    for x in &h[..] {
        bed.ensure(
            routed.iter().any(|f| {
                f.contains(&format!("nw_dst={} ", x.ip))
                    && f.contains(&format!("{}->eth_dst", x.mac))
            }),
            &format!("no route (FIB flow) to {} via {}", x.ip, x.mac),
        );
    }

    // The ACL on port 1: h1 cannot open TCP port BLOCKED on h2, but can ALLOWED; h3
    // (another port, routed) can open BLOCKED.
    let _server = listener(&h[1].ns, &[BLOCKED, ALLOWED]);
    let r = connect(&h[0].ns, &h[1].ip, ALLOWED, 5);
    bed.ensure(r == "connected", &format!("h1 -> h2:{ALLOWED} (allowed by the ACL): {r}"));
    let r = connect(&h[0].ns, &h[1].ip, BLOCKED, 2);
    bed.ensure(
        r == "timed out",
        &format!("h1 -> h2:{BLOCKED} (dropped by the ACL) should time out: {r}"),
    );
    let r = connect(&h[2].ns, &h[1].ip, BLOCKED, 5);
    bed.ensure(r == "connected", &format!("h3 -> h2:{BLOCKED} (no ACL on port 3): {r}"));
    let acl =
        bed.flows().into_iter().find(|f| f.contains(&format!("tp_dst={BLOCKED} actions=drop")));
    bed.ensure(
        acl.as_ref().is_some_and(|f| n_packets(f) >= 1),
        &format!("the ACL's drop flow counted nothing: {acl:?}"),
    );

    // Gauge: port counters in its file move between two polls.
    let stat = "sw1-h1-packets-in";
    let t = Instant::now();
    while bed.gauge_stat(stat).is_empty() {
        bed.ensure(
            t.elapsed() < Duration::from_secs(15),
            &format!("Gauge wrote no {stat} within 15 s"),
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let before = bed.gauge_stat(stat);
    let (polls, first) = (before.len(), *before.last().unwrap());
    bed.ensure(ping(&topo, &h[0], &h[1].ip, 5), "h1 -> h2 for Gauge's counters");
    let t = Instant::now();
    loop {
        let now = bed.gauge_stat(stat);
        if now.len() > polls && *now.last().unwrap() > first {
            eprintln!(
                "faucet: Gauge's {stat}: {first} -> {} over {} polls",
                now.last().unwrap(),
                now.len() - polls
            );
            break;
        }
        bed.ensure(
            t.elapsed() < Duration::from_secs(6 * u64::from(GAUGE_INTERVAL)),
            &format!("Gauge's {stat} did not grow past {first} after pings: {now:?}"),
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    // Its flow table dumps list h2's learned destination.
    let t = Instant::now();
    loop {
        let newest = std::fs::read_dir(bed.path("gauge-flows"))
            .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).max())
            .ok()
            .flatten();
        let text = newest
            .as_deref()
            .map(|p| std::fs::read_to_string(p).unwrap_or_default())
            .unwrap_or_default();
        if text.contains("\"eth_dst\"")
            && text.contains(&h[1].mac)
            && text.contains("\"packet_count\"")
        {
            break;
        }
        bed.ensure(
            t.elapsed() < Duration::from_secs(6 * u64::from(GAUGE_INTERVAL)),
            &format!("Gauge's flow table dumps do not list h2's MAC {} ({newest:?})", h[1].mac),
        );
        std::thread::sleep(Duration::from_millis(200));
    }

    // Faucet killed: secure mode keeps every flow it installed, so learned and routed
    // paths still forward; what needs the controller (its router address answering
    // ping) does not.
    let kept: BTreeSet<String> = bed.flows().iter().map(|f| flow_key(f)).collect();
    faucet.kill();
    std::thread::sleep(Duration::from_millis(500));
    bed.ensure(switch.alive(), "the switch exited when Faucet was killed");
    let after: BTreeSet<String> = bed.flows().iter().map(|f| flow_key(f)).collect();
    let lost: Vec<&String> = kept.difference(&after).collect();
    bed.ensure(
        lost.is_empty(),
        &format!("flows lost when Faucet was killed (secure mode): {lost:#?}"),
    );
    bed.ensure(ping(&topo, &h[0], &h[1].ip, 3), "h1 -> h2 (learned) stopped while Faucet is down");
    bed.ensure(ping(&topo, &h[0], &h[3].ip, 3), "h1 -> h4 (routed) stopped while Faucet is down");
    bed.ensure(
        !ping(&topo, &h[0], "10.100.0.254", 2),
        "Faucet's router address answered with Faucet down",
    );

    // Faucet again: the switch reconnects, Faucet cold-starts it (deletes every flow and
    // installs its pipeline), and pings work again as it relearns.
    let restarted = Instant::now();
    faucet = bed.start_controller("faucet");
    bed.wait_in_file("faucet.log", "Cold start configuring DP", 2, Duration::from_secs(30));
    for (a, b, to) in [(0, 1, h[1].ip.clone()), (0, 3, h[3].ip.clone()), (2, 0, h[0].ip.clone())] {
        bed.ensure(
            ping_until(&topo, &h[a], &to, Duration::from_secs(15)),
            &format!("no ping from h{} to h{} after Faucet's restart", a + 1, b + 1),
        );
    }
    bed.ensure(
        ping(&topo, &h[0], "10.100.0.254", 2),
        "Faucet's router address silent after its restart",
    );
    let relearned = bed.flows_until(Duration::from_secs(10), |f| {
        [0, 1, 3].iter().all(|&i| learned(f, &h[i], i + 1))
    });
    bed.ensure(relearned.is_some(), "Faucet did not relearn h1, h2 and h4 after its restart");
    eprintln!(
        "faucet: restarted and forwarding again after {:.1} s",
        restarted.elapsed().as_secs_f64()
    );
    bed.ensure(faucet.alive() && gauge.alive(), "Faucet or Gauge exited");
    bed.ensure(switch.alive(), "the switch exited");
    // The switch refused nothing Faucet sent, and answered every poll of Gauge's in time.
    let refused = bed.count_in("faucet.log", "OFError");
    bed.ensure(refused == 0, &format!("Faucet logged {refused} OpenFlow errors from the switch"));
    let missed = bed.count_in("gauge.log", "no response to");
    bed.ensure(missed == 0, &format!("Gauge logged {missed} polls without a reply"));
    for f in ["faucet_exception.log", "gauge_exception.log"] {
        let text = std::fs::read_to_string(bed.path(f)).unwrap_or_default();
        bed.ensure(text.trim().is_empty(), &format!("{f} is not empty"));
    }

    // The switch stops cleanly on SIGTERM.
    let _ = Command::new("kill").args(["-TERM", &switch.0.id().to_string()]).status();
    let t = Instant::now();
    let status = loop {
        if let Ok(Some(s)) = switch.0.try_wait() {
            break s;
        }
        bed.ensure(t.elapsed() < Duration::from_secs(10), "the switch did not stop on SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    };
    bed.ensure(status.success(), &format!("the switch exited with {status} on SIGTERM"));
    eprintln!("faucet: done in {:.1} s", started.elapsed().as_secs_f64());
    drop(gauge);
    drop(faucet);
    drop(topo);
}
