//! End-to-end test of `peregrine trace` against `peregrine run` between network
//! namespaces: the switch is a separate process with flows given at start and its own
//! management socket; the tracer is the real binary.
//!
//! Needs root (namespaces, raw sockets, the management socket's mode), so it is ignored
//! by default; CI runs it with `cargo test -- --ignored` as root. Names are unique per
//! run and everything is removed on drop, also when an assertion fails.

mod common;

use std::path::PathBuf;
use std::process::{Command, Output};

use common::{hosts_on_switch, ping_until_ok, MgmtPath};

fn trace(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_peregrine"))
        .arg("trace")
        .args(args)
        .output()
        .expect("run peregrine trace")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
#[ignore = "needs root: network namespaces"]
fn trace_names_the_flow_and_the_output_port_of_a_running_switch() {
    let mgmt = MgmtPath::new("trace");
    let (topo, h, _sw) = hosts_on_switch(
        2,
        &[
            "--fail-mode",
            "secure",
            "--mgmt",
            mgmt.as_str(),
            "--flow",
            "priority=100,cookie=0x7,in_port=1,ip,actions=output:2",
            "--flow",
            "priority=50,cookie=0x8,in_port=1,actions=output:2",
            "--flow",
            "in_port=2,actions=output:1",
        ],
    );
    // The switch forwards by those flows (and the trace below changes nothing of it).
    ping_until_ok(&topo, &h[0], &h[1].ip);

    let flow = format!("udp,in_port=1,nw_dst={},udp_dst=53", h[1].ip);
    let out = trace(&[mgmt.as_str(), &flow]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("table 0: priority 100, cookie 0x7: ip,in_port=1 actions=output:2"),
        "{stdout}"
    );
    let port2 = format!("-> output to port 2 ({})", h[1].port);
    assert!(stdout.contains(&port2), "{stdout}");
    assert!(stdout.contains(&format!("Result: output to port 2 ({})", h[1].port)), "{stdout}");

    // The same as JSON, given as unix:PATH.
    let out = trace(&["--json", &format!("unix:{}", mgmt.as_str()), &flow]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["outputs"], serde_json::json!([2]));
    assert_eq!(v["steps"][0]["rule"]["cookie"], 7);
    assert_eq!(v["steps"][0]["rule"]["match"], "ip,in_port=1");

    // An ARP frame from a capture takes the lower-priority flow.
    let arp = format!("arp,in_port=1,arp_tpa={}", h[1].ip);
    let out = trace(&["--json", mgmt.as_str(), &arp]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let hex = v["packet"].as_str().unwrap();
    let frame: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    let pcap = PathBuf::from(format!("{}.pcap", mgmt.as_str()));
    let mut file = Vec::new();
    file.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
    file.extend_from_slice(&2u16.to_le_bytes());
    file.extend_from_slice(&4u16.to_le_bytes());
    file.extend_from_slice(&[0; 8]);
    file.extend_from_slice(&65535u32.to_le_bytes());
    file.extend_from_slice(&1u32.to_le_bytes());
    file.extend_from_slice(&[0; 8]);
    file.extend_from_slice(&(frame.len() as u32).to_le_bytes());
    file.extend_from_slice(&(frame.len() as u32).to_le_bytes());
    file.extend_from_slice(&frame);
    std::fs::write(&pcap, &file).unwrap();
    let out = trace(&[mgmt.as_str(), "--pcap", pcap.to_str().unwrap(), "--in-port", "1"]);
    let _ = std::fs::remove_file(&pcap);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("table 0: priority 50, cookie 0x8: in_port=1 actions=output:2"),
        "{stdout}"
    );
    assert!(stdout.contains(&port2), "{stdout}");

    // A mistake in the flow: the message and a caret under it, and a failure status.
    let out = trace(&[mgmt.as_str(), "in_port=1,nw_scr=10.0.0.1"]);
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(stderr.contains("unknown field \"nw_scr\""), "{stderr}");
    assert!(stderr.contains("\n            ^"), "{stderr}");

    // A switch that is not there.
    let out = trace(&[&format!("{}.none", mgmt.as_str()), "in_port=1"]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("cannot connect"));
}
