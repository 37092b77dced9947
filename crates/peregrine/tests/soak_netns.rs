//! The soak, `scripts/soak.sh`, for 60 seconds with the binary under test: the switch
//! forwarding between two namespace hosts while a client churns its flow table, its
//! flows are dumped every second and misbehaving clients come and go. It must end with
//! no panic, a clean stop on SIGTERM, loss under 0.1 % and RSS growth under the
//! script's bound for short runs (see the script's header).
//!
//! Needs root (network namespaces) and python3: `sudo -E cargo test -p peregrine --test
//! soak_netns -- --ignored --nocapture` (about 75 s; `--nocapture` shows the summary).

mod common;

use std::process::Command;

use common::RunDir;

/// Frames a second offered: a fixed rate instead of the script's zero-loss search, whose
/// trials would add half a minute. On a 2-CPU development VM the debug binary forwarded
/// about 245,000 frames/s without loss in the search's 3-second trials, and 168,000/s
/// without loss through a soak with 10,000 flow-mods/s of churn; 20,000 leaves room for
/// slower or busier machines.
const RATE: &str = "20000";

#[test]
#[ignore = "needs root: network namespaces"]
fn a_minute_of_load_churn_and_misbehaving_clients() {
    let dir = RunDir::new("soak");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/soak.sh");
    // The script bounds itself; `timeout` is the backstop (SIGTERM: the script removes
    // its namespaces and stops the switch).
    let out = Command::new("timeout")
        .args(["--kill-after=20", "200", "bash", script])
        .args(["--binary", env!("CARGO_BIN_EXE_peregrine")])
        .args(["--duration", "60", "--rate", RATE, "--out"])
        .arg(dir.path())
        .output()
        .expect("run scripts/soak.sh");
    let summary = std::fs::read_to_string(dir.path().join("summary.txt")).unwrap_or_default();
    eprintln!("{summary}");
    assert!(
        out.status.success(),
        "the soak failed ({}); its files are in {}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        dir.path().display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(summary.contains("RESULT: PASS"), "{summary}");
}
