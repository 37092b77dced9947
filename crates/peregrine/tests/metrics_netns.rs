//! End-to-end test of `peregrine run --metrics`: the switch between two namespace hosts,
//! pings through it, then the Prometheus endpoint fetched with a plain TCP stream.
//!
//! Needs root (namespaces, raw sockets), so it is ignored by default; CI runs it with
//! `cargo test -- --ignored` as root. Names are unique per run and everything is removed
//! on drop, also when an assertion fails.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use common::{hosts_on_switch, ping, ping_until_ok};

/// One request for `path` on a fresh connection to `addr` that asks the server to close
/// it after the response (it keeps connections open otherwise): (status line, headers,
/// body).
fn get(addr: &str, path: &str) -> (String, String, String) {
    let mut s = TcpStream::connect(addr).unwrap_or_else(|e| panic!("connect {addr}: {e}"));
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.set_write_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nHost: {addr}\r\nAccept: */*\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let (status, headers) = head.split_once("\r\n").unwrap_or((head, ""));
    (status.to_string(), headers.to_string(), body.to_string())
}

/// The value of the sample whose name and labels are exactly `series`.
fn value(body: &str, series: &str) -> u64 {
    body.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or_else(|| panic!("no sample {series} in\n{body}"))
}

#[test]
#[ignore = "needs root: network namespaces"]
fn metrics_endpoint_counts_the_pings() {
    // Port 0: the switch binds a free port and says which.
    let (topo, h, mut sw) = hosts_on_switch(2, &["--metrics", "127.0.0.1:0"]);
    let line = sw.wait_line("metrics on http://", Duration::from_secs(5));
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|a| a.strip_suffix("/metrics"))
        .unwrap_or_else(|| panic!("{line}"))
        .to_string();
    ping_until_ok(&topo, &h[0], &h[1].ip);
    assert!(ping(&topo, &h[0], &h[1].ip, 5), "5 pings h1 -> h2");

    let (status, headers, body) = get(&addr, "/metrics");
    assert_eq!(status, "HTTP/1.1 200 OK", "{headers}");
    assert!(headers.contains("Content-Type: text/plain; version=0.0.4"), "{headers}");
    assert!(headers.contains(&format!("Content-Length: {}", body.len())), "{headers}");
    for (no, host) in [(1, &h[0]), (2, &h[1])] {
        let labels = format!("{{port=\"{no}\",name=\"{}\"}}", host.port);
        let rx = value(&body, &format!("peregrine_port_rx_packets_total{labels}"));
        let tx = value(&body, &format!("peregrine_port_tx_packets_total{labels}"));
        // At least the five echo requests (port 1) or replies (port 2), and what went
        // the other way.
        assert!(rx >= 5 && tx >= 5, "port {no}: rx {rx} tx {tx}\n{body}");
        assert!(value(&body, &format!("peregrine_port_rx_bytes_total{labels}")) > 0);
        assert_eq!(value(&body, &format!("peregrine_port_link_up{labels}")), 1);
    }
    // The learning switch is table 0's NORMAL flow.
    assert!(value(&body, "peregrine_table_lookups_total{table=\"0\"}") >= 10);
    assert!(value(&body, "peregrine_table_matches_total{table=\"0\"}") >= 10);
    assert_eq!(value(&body, "peregrine_table_active_flows{table=\"0\"}"), 1);
    // The runtime's one worker did the forwarding.
    let worker = body
        .lines()
        .find(|l| {
            l.starts_with("peregrine_worker_packets_total{") && l.contains("thread=\"worker0\"")
        })
        .unwrap_or_else(|| panic!("no worker0 in\n{body}"));
    let n: u64 = worker.rsplit(' ').next().unwrap().parse().unwrap();
    assert!(n >= 10, "{worker}");
    assert!(value(&body, "peregrine_datapath_packets_total") >= 10);

    let (status, _, _) = get(&addr, "/nothing");
    assert_eq!(status, "HTTP/1.1 404 Not Found");
    let table = sw.stop();
    assert!(table.contains("MACs learned"), "{table}");
}
