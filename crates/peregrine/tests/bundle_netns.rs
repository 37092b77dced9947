//! Bundles end to end: `peregrine run` between two namespace hosts, listening on
//! `ptcp:`, programmed in bundles by `ovs-ofctl --bundle` (OpenFlow 1.4, and 1.3 in the
//! ONF extension's form) and by `peregrine ctl --bundle`, and by `peregrine ctl
//! replace-flows`; checked with dump-flows and ping. A bundle with one bad flow must
//! change nothing.
//!
//! Root is needed (namespaces), so they are ignored by default; CI runs them as root
//! with `cargo test -- --ignored`.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use bench::topo::{Host, Topology};
use common::osken::free_port;
use common::{ctl, hosts_on_switch, ping, ping_until_ok, RunDir, SwitchProc};

/// Two hosts on a switch in secure mode that listens for OpenFlow on
/// `ptcp:PORT:127.0.0.1`, PORT free; the switch's address for clients. Bind as
/// `let (topo, h, _sw, sw) = …` so that the switch is ended before the namespaces are
/// removed.
fn listening_switch() -> (Topology, Vec<Host>, SwitchProc, String) {
    let port = free_port();
    let listen = format!("ptcp:{port}:127.0.0.1");
    let (topo, h, sw) = hosts_on_switch(2, &["--listen", &listen, "--fail-mode", "secure"]);
    (topo, h, sw, format!("tcp:127.0.0.1:{port}"))
}

/// Runs `ovs-ofctl -O VERSION --timeout=10 ARGS…` (the switch address among them):
/// success, stdout, stderr.
fn ofctl(version: &str, args: &[&str]) -> (bool, String, String) {
    let out = Command::new("ovs-ofctl")
        .args(["-O", version, "--timeout=10"])
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run ovs-ofctl: {e} (install openvswitch-switch)"));
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The switch's flows as `peregrine ctl --no-stats dump-flows` prints them, one per
/// line without the leading space, sorted.
fn flows(sw: &str) -> Vec<String> {
    let (ok, out, err) = ctl(&["--timeout", "10", "--no-stats", "dump-flows", sw]);
    assert!(ok, "dump-flows: {err}");
    let mut v: Vec<String> = out.lines().map(|l| l.trim().to_string()).collect();
    v.sort();
    v
}

/// `lines` sorted, as owned strings (to compare with [`flows`]).
fn sorted(lines: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    v.sort();
    v
}

/// One flow's `duration=` in seconds, from a dump with statistics.
fn duration_of(sw: &str, filter: &str) -> f64 {
    let (ok, out, err) = ctl(&["--timeout", "10", "dump-flows", sw, filter]);
    assert!(ok, "dump-flows: {err}");
    let d = out.split(", ").find_map(|f| f.trim().strip_prefix("duration="));
    let d = d.unwrap_or_else(|| panic!("no flow for {filter}: {out}"));
    d.trim_end_matches('s').parse().unwrap()
}

/// Writes `text` to `name` in `dir`; its path.
fn write(dir: &RunDir, name: &str, text: &str) -> String {
    let p = dir.path().join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

/// Forwarding both ways at priority 10, and two flows that touch no ping.
const FORWARD: &str = "# forwarding\n\
                       priority=10,in_port=1,actions=output:2\n\
                       priority=10,in_port=2,actions=output:1\n\
                       priority=5,ip,nw_dst=10.9.9.9,actions=drop\n\
                       table=1,priority=5,ip,actions=drop\n";

/// [`FORWARD`] as dump-flows shows it.
const FORWARD_DUMP: [&str; 4] = [
    "priority=10,in_port=1 actions=output:2",
    "priority=10,in_port=2 actions=output:1",
    "priority=5,ip,nw_dst=10.9.9.9 actions=drop",
    "table=1, priority=5,ip actions=drop",
];

#[test]
#[ignore = "needs root: network namespaces"]
fn ovs_ofctl_bundle_add_flows_over_14_and_13_installs_every_flow() {
    let (topo, h, _sw, sw) = listening_switch();
    let dir = RunDir::new("bundle-ofctl");
    let file = write(&dir, "forward.txt", FORWARD);
    assert!(!ping(&topo, &h[0], &h[1].ip, 1), "secure mode without flows forwards nothing");
    for version in ["OpenFlow14", "OpenFlow13"] {
        let (ok, _, err) = ofctl(version, &["--bundle", "add-flows", &sw, &file]);
        assert!(ok, "{version}: {err}");
        assert_eq!(flows(&sw), sorted(&FORWARD_DUMP), "{version}");
        ping_until_ok(&topo, &h[0], &h[1].ip);
        let (ok, _, err) = ofctl(version, &["--bundle", "del-flows", &sw]);
        assert!(ok, "{version}: {err}");
        assert!(flows(&sw).is_empty(), "{version}");
        assert!(!ping(&topo, &h[0], &h[1].ip, 1), "{version}: flows deleted");
    }
    drop(topo);
}

/// A file that would cut both directions at a higher priority, then a flow that
/// fails: the bundle must change nothing.
fn cutting_then(bad: &str) -> String {
    format!(
        "priority=100,in_port=1,actions=drop\n\
         priority=100,in_port=2,actions=drop\n\
         {bad}\n"
    )
}

#[test]
#[ignore = "needs root: network namespaces"]
fn a_bundle_with_one_bad_flow_changes_nothing() {
    let (topo, h, _sw, sw) = listening_switch();
    let dir = RunDir::new("bundle-bad");
    let (ok, _, err) = ctl(&["--timeout", "10", "add-flows", &sw, &write(&dir, "f", FORWARD)]);
    assert!(ok, "{err}");
    ping_until_ok(&topo, &h[0], &h[1].ip);
    let before = flows(&sw);
    // Refused when added (a goto to an earlier table) and when committed (an output to
    // a group that does not exist), over 1.4 and 1.3. ovs-ofctl refuses the goto itself
    // before sending anything; ctl leaves it to the switch.
    let cases = [
        ("OpenFlow14", "table=2,priority=1,actions=goto_table:1", "OFPBIC_BAD_TABLE_ID"),
        ("OpenFlow13", "table=2,priority=1,actions=goto_table:1", "OFPBIC_BAD_TABLE_ID"),
        ("OpenFlow14", "priority=1,actions=group:99", "OFPBAC_BAD_OUT_GROUP"),
        ("OpenFlow13", "priority=1,actions=group:99", "OFPBAC_BAD_OUT_GROUP"),
    ];
    for (version, bad, error) in cases {
        let file = write(&dir, "bad.txt", &cutting_then(bad));
        let (ok, _, err) = ofctl(version, &["--bundle", "add-flows", &sw, &file]);
        assert!(!ok, "{version} {bad}: ovs-ofctl succeeded");
        assert!(err.contains(error), "{version} {bad}: {err}");
        assert_eq!(flows(&sw), before, "{version} {bad}: the bundle changed the flows");
        assert!(ping(&topo, &h[0], &h[1].ip, 1), "{version} {bad}: forwarding was cut");

        // peregrine ctl: the same, the error after the bad flow's line.
        let (ok, _, err) =
            ctl(&["--timeout", "10", "-O", version, "--bundle", "add-flows", &sw, &file]);
        assert!(!ok, "{version} {bad}: ctl succeeded");
        assert!(err.starts_with(&format!("{file}:3: OFPT_ERROR")), "{version} {bad}: {err}");
        assert!(err.contains(error), "{version} {bad}: {err}");
        assert!(
            err.ends_with(&format!(
                "peregrine ctl: {sw}: the bundle was not committed: nothing was changed\n"
            )),
            "{version} {bad}: {err}"
        );
        assert_eq!(flows(&sw), before, "{version} {bad}: ctl's bundle changed the flows");
        assert!(ping(&topo, &h[0], &h[1].ip, 1), "{version} {bad}: forwarding was cut");
    }
    // Without --bundle the good flows of the same file do go in (and cut forwarding):
    // what the bundle prevented.
    let file = write(&dir, "bad.txt", &cutting_then("priority=1,actions=group:99"));
    let (ok, _, _) = ctl(&["--timeout", "10", "add-flows", &sw, &file]);
    assert!(!ok);
    assert_eq!(flows(&sw).len(), before.len() + 2);
    assert!(!ping(&topo, &h[0], &h[1].ip, 1), "the drops went in");
    drop(topo);
}

/// [`FORWARD`] with the forwarding at priority 20 instead of 10, the first other flow
/// unchanged and the table-1 flow gone.
const SWAPPED: &str = "priority=20,in_port=1,actions=output:2\n\
                       priority=20,in_port=2,actions=output:1\n\
                       priority=5,ip,nw_dst=10.9.9.9,actions=drop\n";

const SWAPPED_DUMP: [&str; 3] = [
    "priority=20,in_port=1 actions=output:2",
    "priority=20,in_port=2 actions=output:1",
    "priority=5,ip,nw_dst=10.9.9.9 actions=drop",
];

#[test]
#[ignore = "needs root: network namespaces"]
fn peregrine_ctl_bundle_add_flows_and_replace_flows() {
    let (topo, h, _sw, sw) = listening_switch();
    let dir = RunDir::new("bundle-ctl");
    let forward = write(&dir, "forward.txt", FORWARD);
    let swapped = write(&dir, "swapped.txt", SWAPPED);
    let run = |args: &[&str]| {
        let mut all = vec!["--timeout", "10"];
        all.extend_from_slice(args);
        let (ok, out, err) = ctl(&all);
        assert!(ok, "ctl {args:?}: {err}");
        out
    };

    // --bundle add-flows, over 1.4 (what the switch picks) and 1.3.
    for v in ["OpenFlow14", "OpenFlow13"] {
        run(&["-O", v, "--bundle", "add-flows", &sw, &forward]);
        assert_eq!(flows(&sw), sorted(&FORWARD_DUMP), "{v}");
        ping_until_ok(&topo, &h[0], &h[1].ip);
        run(&["-O", v, "--bundle", "del-flows", &sw]);
        assert!(flows(&sw).is_empty(), "{v}");
    }
    run(&["--bundle", "add-flows", &sw, &forward]);
    ping_until_ok(&topo, &h[0], &h[1].ip);

    // replace-flows without a bundle: the forwarding moves to priority 20, the table-1
    // flow goes, and the unchanged flow stays as it was (its duration goes on).
    std::thread::sleep(Duration::from_millis(1100));
    run(&["replace-flows", &sw, &swapped]);
    assert_eq!(flows(&sw), sorted(&SWAPPED_DUMP));
    assert!(duration_of(&sw, "ip,nw_dst=10.9.9.9") >= 1.0, "the unchanged flow was re-added");
    ping_until_ok(&topo, &h[0], &h[1].ip);
    // Nothing to do the second time.
    run(&["replace-flows", &sw, &swapped]);
    assert_eq!(flows(&sw), sorted(&SWAPPED_DUMP));

    // --bundle replace-flows back and forth, over 1.4 and 1.3, while h1 pings h2: each
    // swap happens at once, so no ping is lost.
    let pinger = Command::new("ip")
        .args(["netns", "exec", &h[0].ns, "ping", "-c", "40", "-i", "0.05", "-W", "1", &h[1].ip])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    for (v, file, want) in [
        ("OpenFlow14", &forward, &FORWARD_DUMP[..]),
        ("OpenFlow13", &swapped, &SWAPPED_DUMP[..]),
        ("OpenFlow14", &forward, &FORWARD_DUMP[..]),
        ("OpenFlow13", &swapped, &SWAPPED_DUMP[..]),
    ] {
        run(&["-O", v, "--bundle", "replace-flows", &sw, file]);
        assert_eq!(flows(&sw), sorted(want), "{v} {file}");
    }
    assert!(t.elapsed() < Duration::from_secs(30));
    let out = pinger.wait_with_output().unwrap();
    let summary = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(summary.contains(" 0% packet loss"), "pings lost during the swaps: {summary}");
    ping_until_ok(&topo, &h[0], &h[1].ip);

    // A --bundle replace-flows with a bad flow changes nothing.
    let bad = write(&dir, "bad.txt", &format!("{FORWARD}priority=1,actions=group:99\n"));
    let (ok, _, err) = ctl(&["--timeout", "10", "--bundle", "replace-flows", &sw, &bad]);
    assert!(!ok);
    assert!(err.contains(&format!("{bad}:6: OFPT_ERROR")), "{err}");
    assert!(err.contains("OFPBAC_BAD_OUT_GROUP"), "{err}");
    assert_eq!(flows(&sw), sorted(&SWAPPED_DUMP));
    ping_until_ok(&topo, &h[0], &h[1].ip);
    drop(topo);
}
