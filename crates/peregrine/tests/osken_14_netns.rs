//! OpenFlow 1.4 end to end with a real controller: `peregrine run` between two
//! namespace hosts, connected twice to one os-ken 1.4 application
//! (`tests/osken/of14_features_14.py`, started through `tests/osken/run_app.py`), which
//! checks negotiation, 1.4 port and table descriptions, flow monitors, bundles (a
//! committed one that makes the hosts reach each other, a failing one that changes
//! nothing), request forwarding and role status, and prints each check as `PASS NAME`
//! or `FAIL NAME: why`. This test waits for each, compares the ports the application
//! saw with the interfaces, and pings once the bundle is committed and again at the end.
//!
//! Root is needed (namespaces), so it is ignored by default; CI runs it as root with
//! `cargo test -- --ignored`. os-ken comes from the repository's `.venv` (`.ci/run`
//! installs it).

mod common;

use std::path::PathBuf;
use std::process::{Child, Command};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::osken::free_port;
use common::{hosts_on_switch, ping, ping_until_ok, spawn_with_lines};

/// The application's checks, in the order it runs them.
const CHECKS: [&str; 15] = [
    "negotiation",
    "port-desc",
    "port-stats",
    "table-desc",
    "monitor-initial",
    "bundle-commit",
    "monitor-own-bundle",
    "bundle-fail",
    "bundle-nothing-installed",
    "monitor-abbrev",
    "monitor-modify-remove",
    "request-forward",
    "request-forward-off",
    "role-status",
    "slave-refused",
];

/// The os-ken process running the checking application, with what it printed;
/// killed by PID on drop.
struct App {
    child: Child,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl App {
    /// Starts `run_app.py PORT of14_features_14` and waits until it listens.
    fn start(port: u16) -> App {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let python = root.join("../../.venv/bin/python");
        assert!(
            python.exists(),
            "{} is missing: run .ci/run (or `python3 -m venv .venv && .venv/bin/pip install os-ken==4.2.2`)",
            python.display()
        );
        let dir = root.join("tests/osken");
        let mut cmd = Command::new(python);
        cmd.arg(dir.join("run_app.py")).arg(port.to_string()).arg("of14_features_14");
        let (child, lines) = spawn_with_lines(cmd.current_dir(&dir), "os-ken");
        let mut app = App { child, lines, seen: Vec::new() };
        app.wait(|l| l == "listening", "listening", Duration::from_secs(20));
        app
    }

    /// Waits at most `limit` for a line for which `want` holds; panics, with everything
    /// the application printed, on a failed check, on its end, or when time runs out.
    fn wait(&mut self, want: impl Fn(&str) -> bool, what: &str, limit: Duration) {
        let t = Instant::now();
        while let Some(left) = limit.checked_sub(t.elapsed()) {
            let Ok(line) = self.lines.recv_timeout(left) else { break };
            self.seen.push(line.clone());
            if want(&line) {
                return;
            }
            if line.starts_with("FAIL") || line == "END" {
                break;
            }
        }
        panic!("no {what:?} from the application; it printed: {:#?}", self.seen);
    }

    /// Waits for `PASS check`.
    fn pass(&mut self, check: &str, limit: Duration) {
        let want = format!("PASS {check}");
        self.wait(|l| l == want, &want, limit);
    }

    /// The lines printed so far that start with `prefix`, without it.
    fn printed(&self, prefix: &str) -> Vec<String> {
        self.seen.iter().filter_map(|l| l.strip_prefix(prefix)).map(String::from).collect()
    }
}

impl Drop for App {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What the switch should report of interface `name` as port `no`: "NO NAME
/// CURR_SPEED_KBPS HW_ADDR", the speed from sysfs (0 where unknown).
fn port_line(no: u32, name: &str) -> String {
    let read = |f: &str| {
        std::fs::read_to_string(format!("/sys/class/net/{name}/{f}"))
            .unwrap_or_default()
            .trim()
            .to_string()
    };
    let kbps = read("speed").parse::<i64>().ok().filter(|s| *s > 0).map_or(0, |s| s * 1000);
    format!("{no} {name} {kbps} {}", read("address"))
}

#[test]
#[ignore = "needs root: network namespaces"]
fn os_ken_14_bundles_monitors_roles_and_request_forward() {
    let port = free_port();
    let mut app = App::start(port);
    let target = format!("tcp:127.0.0.1:{port}");
    // Two connections to the same application, the datapath id and the one flow it
    // expects (its DPID and STARTUP_FLOW).
    let (topo, h, _sw) = hosts_on_switch(
        2,
        &[
            "--controller",
            &target,
            "--controller",
            &target,
            "--dpid",
            "0x14",
            "--fail-mode",
            "secure",
            "--flow",
            "priority=1,dl_type=0x88b5,actions=output:2",
        ],
    );
    app.pass("negotiation", Duration::from_secs(20));
    for check in CHECKS.iter().skip(1) {
        app.pass(check, Duration::from_secs(10));
        match *check {
            "port-desc" => {
                let mut ports = app.printed("PORT ");
                ports.sort();
                let want = vec![port_line(1, &h[0].port), port_line(2, &h[1].port)];
                assert_eq!(ports, want, "ports as os-ken decoded them");
            }
            "bundle-commit" => {
                ping_until_ok(&topo, &h[0], &h[1].ip);
                assert!(ping(&topo, &h[1], &h[0].ip, 1));
            }
            _ => {}
        }
    }
    app.wait(|l| l == "END", "END", Duration::from_secs(5));
    // Neither the failed bundle nor the slave's refused flow-mod changed forwarding.
    assert!(ping(&topo, &h[0], &h[1].ip, 2));
}
