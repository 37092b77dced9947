//! `peregrine demo`: three hosts in network namespaces on one peregrine switch. Builds
//! the topology, starts the switch (standalone learning switch), pings between the
//! hosts, runs a short iperf3, prints the switch's per-port statistics and removes
//! everything again — also after a failure or Ctrl-C (the topology and the switch are
//! guards whose drop undoes them).

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bench::topo::{Host, Topology};

use runner::config::{BackendName, PortConfig, RunConfig};
use runner::run::Switch;

/// Options of `peregrine demo`.
#[derive(Clone, Debug, clap::Args)]
pub struct DemoArgs {
    /// Seconds of iperf3 traffic (0: no iperf3, which then need not be installed).
    #[arg(long, default_value_t = 2)]
    pub iperf_seconds: u32,
    /// Forwarding threads.
    #[arg(long, default_value_t = 1)]
    pub workers: usize,
    /// How the switch opens its ports: auto (what `peregrine run` picks for a port given
    /// no backend, said at start), afpacket, or afxdp (one worker: the demo's veth pairs
    /// have one queue).
    #[arg(long, default_value = "auto", value_parser = ["auto", "afpacket", "afxdp"])]
    pub backend: String,
}

pub fn main(args: &DemoArgs) -> ExitCode {
    let interrupted = Arc::new(AtomicBool::new(false));
    {
        let flag = interrupted.clone();
        // A second handler cannot be installed; then Ctrl-C simply ends the process
        // after the drops of the normal path.
        let _ = ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst));
    }
    match demo(args, &interrupted) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("peregrine demo: {e}");
            if interrupted.load(Ordering::SeqCst) {
                eprintln!("peregrine demo: interrupted; topology removed");
            }
            ExitCode::FAILURE
        }
    }
}

fn step(interrupted: &AtomicBool) -> anyhow::Result<()> {
    if interrupted.load(Ordering::SeqCst) {
        anyhow::bail!("interrupted");
    }
    Ok(())
}

fn demo(args: &DemoArgs, interrupted: &AtomicBool) -> anyhow::Result<()> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let missing = missing_tools(&path, args.iperf_seconds > 0);
    if !missing.is_empty() {
        let tools: Vec<_> = missing.iter().map(|(t, _)| *t).collect();
        let packages: Vec<_> = missing.iter().map(|(_, p)| *p).collect();
        anyhow::bail!(
            "the demo runs {}, not found on PATH (Debian/Ubuntu: `apt-get install {}`; \
             scripts/demo.sh installs what is missing and runs the demo{})",
            tools.join(", "),
            packages.join(" "),
            if tools.contains(&"iperf3") {
                "; `--iperf-seconds 0` does without iperf3"
            } else {
                ""
            }
        );
    }
    runner::run::require_root("demo")?;
    let mut topo = Topology::new();
    println!("topology {}: three hosts, each on a switch port", topo.prefix());
    let hosts: Vec<Host> = (1..=3).map(|i| topo.add_host(i)).collect::<Result<_, _>>()?;
    for (i, h) in hosts.iter().enumerate() {
        println!("  port {}: {:<14} host {} {} ({})", i + 1, h.port, h.ns, h.ip, h.mac);
    }
    step(interrupted)?;
    let ports = hosts
        .iter()
        .map(|h| PortConfig {
            name: h.port.clone(),
            backend: match args.backend.as_str() {
                "afxdp" => BackendName::Afxdp,
                "afpacket" => BackendName::Afpacket,
                _ => BackendName::Auto,
            },
            ofport: None,
        })
        .collect();
    let cfg = RunConfig { workers: args.workers, ..RunConfig::with_ports(ports) };
    let switch = Switch::start(&cfg)?;
    println!(
        "switch started: {} worker(s), {} ports, standalone learning switch (table 0: NORMAL)",
        args.workers, args.backend
    );
    for (a, b) in [(0, 1), (0, 2), (1, 2)] {
        step(interrupted)?;
        let (from, to) = (&hosts[a], &hosts[b]);
        let out = topo.in_ns(&from.ns, "ping", &["-c", "3", "-i", "0.2", "-W", "2", &to.ip])?;
        let text = String::from_utf8_lossy(&out.stdout);
        let summary = text
            .lines()
            .filter(|l| l.contains("packet loss") || l.starts_with("rtt"))
            .collect::<Vec<_>>()
            .join("; ");
        println!("ping {} -> {}: {summary}", from.ip, to.ip);
    }
    if args.iperf_seconds > 0 {
        step(interrupted)?;
        iperf(&topo, &hosts[0], &hosts[2], args.iperf_seconds)?;
    }
    step(interrupted)?;
    println!();
    print!("{}", switch.stats_table());
    switch.stop();
    drop(topo);
    println!("\ntopology removed");
    Ok(())
}

/// A TCP stream from `client` to `server` for `seconds`, its rate printed.
fn iperf(topo: &Topology, client: &Host, server: &Host, seconds: u32) -> anyhow::Result<()> {
    let mut srv = topo.spawn_in(&server.ns, "iperf3", &["-s", "-1"])?;
    // The server needs a moment to listen; the client retries its connect.
    let start = Instant::now();
    let result = loop {
        let r = topo.in_ns(
            &client.ns,
            "iperf3",
            &["-c", &server.ip, "-t", &seconds.to_string(), "-f", "m"],
        );
        match r {
            Ok(out) => break Ok(out),
            Err(_) if start.elapsed() < Duration::from_secs(3) => {
                std::thread::sleep(Duration::from_millis(100))
            }
            Err(e) => break Err(e),
        }
    };
    // The server exits after one test; end it anyway if the client failed.
    let _ = srv.kill();
    let _ = srv.wait();
    let out = result?;
    let text = String::from_utf8_lossy(&out.stdout);
    let rate = text
        .lines()
        .filter(|l| l.contains("receiver") || l.contains("sender"))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>();
    println!("iperf3 {} -> {} ({seconds} s):", client.ip, server.ip);
    for l in rate {
        println!("  {l}");
    }
    Ok(())
}

/// The programs the demo runs and their Debian packages: `ip` builds the topology and
/// runs commands in its namespaces, `ping` and `iperf3` are the traffic. The hosts keep
/// their default offloads: the switch's ports take partial checksums and super-frames.
const TOOLS: [(&str, &str); 3] =
    [("ip", "iproute2"), ("ping", "iputils-ping"), ("iperf3", "iperf3")];

/// The tools of [`TOOLS`] (with their packages) that no directory of `path` holds;
/// iperf3 only if `iperf`.
fn missing_tools(path: &std::ffi::OsStr, iperf: bool) -> Vec<(&'static str, &'static str)> {
    TOOLS
        .into_iter()
        .filter(|(tool, _)| iperf || *tool != "iperf3")
        .filter(|(tool, _)| !std::env::split_paths(path).any(|dir| dir.join(tool).is_file()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_tools_names_exactly_the_absent_ones() {
        let base = std::env::temp_dir().join(format!("peregrine-demo-{}", std::process::id()));
        let (a, b) = (base.join("a"), base.join("b"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        std::fs::write(a.join("ip"), "").unwrap();
        std::fs::write(b.join("ping"), "").unwrap();
        // A directory of that name is not the program.
        std::fs::create_dir_all(b.join("iperf3")).unwrap();
        let path = std::env::join_paths([&a, &b]).unwrap();
        let result = (
            missing_tools(&path, true),
            missing_tools(&path, false),
            missing_tools(std::ffi::OsStr::new(""), false),
        );
        std::fs::remove_dir(b.join("iperf3")).unwrap();
        std::fs::write(b.join("iperf3"), "").unwrap();
        let none_missing = missing_tools(&path, true);
        std::fs::remove_dir_all(&base).unwrap();
        assert_eq!(result.0, [("iperf3", "iperf3")]);
        assert!(result.1.is_empty(), "{:?}", result.1);
        assert_eq!(result.2, [("ip", "iproute2"), ("ping", "iputils-ping")]);
        assert!(none_missing.is_empty(), "{none_missing:?}");
    }
}
