//! Conformance: the quick subsets of os-ken's OpenFlow switch test tool (the OF1.3 cases
//! of `os_ken/tests/switch/of13`, the OF1.0 ones of `of10` and the OF1.4 ones of `of14`)
//! against `peregrine run`, through `scripts/conformance/run.sh --quick [--version 10|14]`
//! (a private namespace, veth
//! pairs, a private Open vSwitch netdev bridge as the tester switch; see the script's
//! header).
//!
//! Root is needed (namespace, veths, OVS), so it is ignored by default; CI runs it as root
//! with `cargo test -- --ignored`. os-ken comes from the repository's `.venv`, Open vSwitch
//! from the system (`ovs-vswitchd`, `ovsdb-server`).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::RunDir;

/// Cases of the quick subset that must pass. Measured: 63 of 63 in each of three runs
/// (release and debug builds, 2-core box, switch agent of commit ab2d292), so the floor is
/// all of them. That is safe because the subset holds no throughput case (group and
/// meter cases depend on the tester's Python packet generator, which the box's load
/// slows): every case is one packet and its expected output or packet-in, which does
/// not depend on speed. Lower it only with a reason (a case found wrong in os-ken, as
/// its SCTP checksum is); a pass count below it is a regression.
const QUICK_PASS_FLOOR: usize = 63;

/// The cases the quick subset holds (QUICK in scripts/conformance/osken_conformance.py).
const QUICK_CASES: usize = 63;

/// The cases of the OpenFlow 1.0 quick subset, all of which must pass: each is one packet
/// and its expected output or packet-in (the whole 1.0 suite, 192 cases, passes).
const QUICK10_CASES: usize = 43;

/// The cases of the OpenFlow 1.4 quick subset (1.3's cases, sent as 1.4), all of which
/// must pass, for the same reason.
const QUICK14_CASES: usize = 63;

/// The runner, stopped with SIGTERM (so that it tears its namespace and daemons down) and
/// then killed, by PID, on drop if it is still running.
struct Runner {
    child: Child,
}

impl Runner {
    fn stop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status();
            let t = Instant::now();
            while t.elapsed() < Duration::from_secs(30) {
                if !matches!(self.child.try_wait(), Ok(None)) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(200));
            }
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

impl Drop for Runner {
    fn drop(&mut self) {
        self.stop();
    }
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| format!("({}: {e})", path.display()))
}

#[test]
#[ignore = "needs root: network namespaces"]
fn os_ken_switch_tester_quick_subset() {
    quick_subset("13", QUICK_CASES, QUICK_PASS_FLOOR);
}

#[test]
#[ignore = "needs root: network namespaces"]
fn os_ken_switch_tester_quick_subset_of_openflow10() {
    quick_subset("10", QUICK10_CASES, QUICK10_CASES);
}

#[test]
#[ignore = "needs root: network namespaces"]
fn os_ken_switch_tester_quick_subset_of_openflow14() {
    quick_subset("14", QUICK14_CASES, QUICK14_CASES);
}

/// Runs the quick subset of the suite of OpenFlow `version` (13, 10 or 14): all `cases` must
/// run, at least `floor` pass.
fn quick_subset(version: &str, cases: usize, floor: usize) {
    let py = root().join(".venv/bin/python");
    assert!(
        py.exists(),
        "{} is missing: run .ci/run (or `python3 -m venv .venv && .venv/bin/pip install os-ken==4.2.2`)",
        py.display()
    );
    let out = RunDir::new("conformance");
    let log = std::fs::File::create(out.path().join("run.log")).expect("create run.log");
    let child = Command::new("bash")
        .arg(root().join("scripts/conformance/run.sh"))
        .args(["--quick", "--version", version, "--timeout", "240", "--stall", "90", "--out"])
        .arg(out.path())
        .env("PEREGRINE", env!("CARGO_BIN_EXE_peregrine"))
        .env("OSKEN_PYTHON", &py)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("start scripts/conformance/run.sh");
    let mut runner = Runner { child };
    let t = Instant::now();
    while matches!(runner.child.try_wait(), Ok(None)) && t.elapsed() < Duration::from_secs(360) {
        std::thread::sleep(Duration::from_millis(500));
    }
    runner.stop();
    let status = runner.child.wait().expect("wait for run.sh");
    assert!(
        status.success(),
        "run.sh failed ({status}) (output kept in {}):\n{}",
        out.path().display(),
        read(&out.path().join("run.log"))
    );

    let summary = read(&out.path().join("summary.txt"));
    let results = read(&out.path().join("results.txt"));
    let ran: Vec<&str> =
        results.lines().filter(|l| l.starts_with("OK ") || l.starts_with("ERROR ")).collect();
    let passed = ran.iter().filter(|l| l.starts_with("OK ")).count();
    let where_ = format!("(output kept in {})\n{summary}", out.path().display());
    assert!(
        summary.lines().any(|l| l.starts_with("run: complete")),
        "the tester did not finish the subset {where_}"
    );
    assert_eq!(ran.len(), cases, "cases run {where_}");
    assert!(
        passed >= floor,
        "{passed} of {cases} cases passed, fewer than the floor {floor} {where_}"
    );
}
