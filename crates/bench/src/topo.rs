//! Network namespace topologies for demos, tests and benchmarks: hosts in namespaces,
//! each joined to the root namespace by a veth pair whose root end becomes a switch port.
//!
//! Names are unique per process and call (`pg<pid>x<n>…`), so parallel runs never clash;
//! every interface name stays within Linux's 15 characters. A [`Topology`] removes what
//! it created when dropped — namespaces (which takes their veth ends, and so the pairs)
//! and any root-side link still there — also when a test panics halfway. Commands run
//! through `ip` (iproute2), bounded by the commands themselves.

use std::io;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

static NEXT: AtomicU32 = AtomicU32::new(0);

/// A host: a namespace with one interface, `eth0`, and an address.
#[derive(Clone, Debug)]
pub struct Host {
    /// The namespace's name.
    pub ns: String,
    /// The root-side end of its veth pair (the switch port).
    pub port: String,
    /// Its IPv4 address (without prefix length).
    pub ip: String,
    /// The MAC address of its `eth0`.
    pub mac: String,
}

impl Host {
    /// [`Host::ip`] parsed; an error naming it if it is no IPv4 address.
    pub fn ipv4(&self) -> Result<std::net::Ipv4Addr, String> {
        self.ip.parse().map_err(|_| format!("bad address {}", self.ip))
    }
}

/// Namespaces and links created for one run; removed on drop.
#[derive(Debug)]
pub struct Topology {
    prefix: String,
    /// The second octet of this topology's addresses.
    net: u8,
    namespaces: Vec<String>,
    links: Vec<String>,
}

/// Runs `ip` with `args`, failing with its stderr when it fails.
pub fn ip(args: &[&str]) -> io::Result<Output> {
    run("ip", args)
}

/// Runs a command to completion, failing with its stderr when it exits non-zero.
pub fn run(cmd: &str, args: &[&str]) -> io::Result<Output> {
    let out = Command::new(cmd)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| io::Error::new(e.kind(), format!("{cmd}: {e}")))?;
    if out.status.success() {
        Ok(out)
    } else {
        Err(io::Error::other(format!(
            "`{cmd} {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )))
    }
}

impl Topology {
    /// An empty topology with a fresh name prefix.
    pub fn new() -> Topology {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let pid = std::process::id();
        Topology {
            prefix: format!("pg{}x{n}", pid % 100_000),
            net: (10 + (pid as usize * 7 + n as usize) % 240) as u8,
            namespaces: Vec::new(),
            links: Vec::new(),
        }
    }

    /// The prefix of every name this topology makes.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// Adds host `i`: namespace `<prefix>h<i>`, veth `<prefix>h<i>` (root side, up, no
    /// IPv6 so the port stays quiet) ↔ `eth0` in the namespace with `10.<net>.0.<i>/24`
    /// (net from the prefix, so parallel topologies use different subnets), IPv6 off,
    /// and `eth0`'s offloads as `ip link add` makes them: checksum and segmentation
    /// offloads on, GRO off (a container's veth).
    pub fn add_host(&mut self, i: u8) -> io::Result<Host> {
        self.host(i, false, 1)
    }

    /// [`Topology::add_host`] with `queues` receive and transmit queues on both ends of
    /// the veth pair (`numrxqueues`/`numtxqueues`; 1 is what `ip link add` makes). A veth
    /// delivers a frame to the peer's receive queue of the number of the transmit queue
    /// it was sent on, so a sender that spreads its frames over the transmit queues
    /// spreads them over the peer's receive queues.
    ///
    /// These are the study's hosts, and their `eth0` has transmit checksum and
    /// segmentation offloads off: a veth whose sender offers TSO hands its frames to the
    /// receiving end outside NAPI, in the backlog of the sending CPU, so the device's
    /// receive work would run on the generator's CPU instead of the device's (threaded
    /// NAPI pinned there, see `dut::thread_napi`), and the bridge would look free. The
    /// generator sends finished frames either way; TCP tests use [`Topology::add_host`].
    pub fn add_host_with_queues(&mut self, i: u8, queues: u32) -> io::Result<Host> {
        self.host(i, true, queues.max(1))
    }

    /// [`Topology::add_host`] with `eth0`'s transmit checksum and segmentation offloads
    /// off (needs `ethtool`): only for a test that compares against hosts which hand
    /// over finished, MTU-sized frames.
    pub fn add_host_offloads_off(&mut self, i: u8) -> io::Result<Host> {
        self.host(i, true, 1)
    }

    fn host(&mut self, i: u8, offloads_off: bool, queues: u32) -> io::Result<Host> {
        let ns = format!("{}h{i}", self.prefix);
        let port = ns.clone();
        let peer = format!("{}p{i}", self.prefix);
        ip(&["netns", "add", &ns])?;
        self.namespaces.push(ns.clone());
        let q = queues.to_string();
        ip(&veth_args(&port, &peer, &q))?;
        self.links.push(port.clone());
        let _ = std::fs::write(format!("/proc/sys/net/ipv6/conf/{port}/disable_ipv6"), "1");
        ip(&["link", "set", &peer, "netns", &ns])?;
        let addr = format!("10.{}.0.{i}", self.net);
        self.in_ns(&ns, "ip", &["link", "set", &peer, "name", "eth0"])?;
        self.in_ns(&ns, "ip", &["addr", "add", &format!("{addr}/24"), "dev", "eth0"])?;
        if offloads_off {
            self.in_ns(&ns, "ethtool", &["-K", "eth0", "tx", "off", "tso", "off", "gso", "off"])?;
        }
        // No IPv6: the host sends only what it is asked to (no router or neighbour
        // solicitations), so a test can count what reaches it.
        self.in_ns(&ns, "sh", &["-c", "echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6"])?;
        self.in_ns(&ns, "ip", &["link", "set", "eth0", "up"])?;
        self.in_ns(&ns, "ip", &["link", "set", "lo", "up"])?;
        ip(&["link", "set", &port, "up"])?;
        let out = self.in_ns(&ns, "cat", &["/sys/class/net/eth0/address"])?;
        let mac = String::from_utf8_lossy(&out.stdout).trim().to_string();
        Ok(Host { ns, port, ip: addr, mac })
    }

    /// Takes root-namespace link `name` (made by the caller, e.g. a bridge) into this
    /// topology: it is deleted with it.
    pub fn track_link(&mut self, name: &str) {
        self.links.push(name.to_string());
    }

    /// Runs `cmd args…` inside namespace `ns`.
    pub fn in_ns(&self, ns: &str, cmd: &str, args: &[&str]) -> io::Result<Output> {
        let mut all = vec!["netns", "exec", ns, cmd];
        all.extend_from_slice(args);
        ip(&all)
    }

    /// Spawns `cmd args…` inside namespace `ns` (for servers such as `iperf3 -s`); the
    /// caller ends it by PID.
    pub fn spawn_in(&self, ns: &str, cmd: &str, args: &[&str]) -> io::Result<std::process::Child> {
        Command::new("ip")
            .args(["netns", "exec", ns, cmd])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
    }
}

/// The `ip` arguments that make veth pair `port` ↔ `peer` with `queues` receive and
/// transmit queues on each end.
fn veth_args<'a>(port: &'a str, peer: &'a str, queues: &'a str) -> Vec<&'a str> {
    let mut v = vec!["link", "add", port];
    if queues != "1" {
        v.extend(["numrxqueues", queues, "numtxqueues", queues]);
    }
    v.extend(["type", "veth", "peer", "name", peer]);
    if queues != "1" {
        v.extend(["numrxqueues", queues, "numtxqueues", queues]);
    }
    v
}

impl Default for Topology {
    fn default() -> Self {
        Topology::new()
    }
}

impl Drop for Topology {
    fn drop(&mut self) {
        for ns in self.namespaces.drain(..).rev() {
            let _ = ip(&["netns", "del", &ns]);
        }
        for l in self.links.drain(..) {
            if std::path::Path::new(&format!("/sys/class/net/{l}")).exists() {
                let _ = ip(&["link", "del", &l]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn veth_pairs_get_their_queues_on_both_ends() {
        assert_eq!(
            veth_args("a", "b", "1"),
            ["link", "add", "a", "type", "veth", "peer", "name", "b"]
        );
        assert_eq!(
            veth_args("a", "b", "2").join(" "),
            "link add a numrxqueues 2 numtxqueues 2 type veth peer name b numrxqueues 2 numtxqueues 2"
        );
    }
}
