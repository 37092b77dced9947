//! Drivers for the devices under test other than peregrine (which the `peregrine` binary
//! starts itself, this crate never depending on the switch): the Linux bridge, Linux
//! IPv4 routing and Open vSwitch's userspace datapath, all driven the same way.
//!
//! A [`Spec`] says which device; a [`Setup`] where it sits (generator-side input hosts,
//! one sink host, the CPU it is pinned to) and what it is loaded with (OpenFlow meters,
//! groups and flows, static FDB entries). [`Spec::start_on`] puts the device on the
//! hosts' root-side veth ends and returns a [`Running`] device, which is torn down when
//! dropped (processes it started ended by PID, namespaces and links it made removed),
//! also when a trial fails halfway. The [`Target`] of a running device says how generated traffic from an input
//! must be addressed to reach the sink host (a switch floods an unknown MAC; a router
//! needs its own MAC on that input and a routed destination).
//!
//! Pinning: OVS's daemons are pinned with `taskset` (and its PMD thread with
//! `pmd-cpu-mask`) to [`Setup::cpu`]. The kernel's receive work for a veth port (the
//! bridge's and the router's forwarding, an AF_PACKET socket's copy, an XDP program)
//! runs in the softirq of the CPU that sent the frame, the generator's; [`thread_napi`]
//! gives a port a NAPI instance per receive queue (GRO on, which veth serves through NAPI),
//! each in a kernel thread pinned to the device's CPUs. The study does that for every
//! device port, so each device does all its work, in the kernel and out, on its own
//! CPUs. [`wire`] joins two ports with a tc redirect, the least a device can do (the
//! packet-time experiment's baseline); [`rx_queue_packets`] reads how many frames each
//! receive queue of a veth took.
//!
//! Devices that must not touch the root namespace (the router's forwarding sysctl, the
//! `ovs-netdev` tap of OVS) run in a namespace of their own ([`DutNs`]) into which the
//! hosts' root-side ends are moved; the bridge stays in the root namespace, where the
//! topology puts those ends.

pub mod bridge;
pub mod ovs;
pub mod router;

use std::net::Ipv4Addr;

use crate::topo::{ip, Host, Topology};

/// The destination MAC of flooded traffic: locally administered, no host's.
pub const NOBODY: [u8; 6] = [0x02, 0x00, 0x5e, 0x00, 0x00, 0x99];

/// A device under test and its setup.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Spec {
    /// The Linux bridge in the root namespace.
    Bridge(bridge::Fdb),
    /// Linux IPv4 forwarding in a namespace of its own, with this many extra routes.
    Router {
        /// Extra random prefixes routed towards the sink host.
        routes: usize,
    },
    /// Open vSwitch's userspace (netdev) datapath, private daemons in a namespace.
    Ovs {
        /// The OVS port type of every port.
        ports: ovs::PortType,
    },
}

/// Where a device sits and what it holds. Invariant: at least one input; hosts distinct.
#[derive(Clone, Debug)]
pub struct Setup<'a> {
    /// The generator-side hosts, in port order (OpenFlow ports 1..=n).
    pub inputs: Vec<&'a Host>,
    /// The sink host (OpenFlow port n+1).
    pub sink: &'a Host,
    /// The CPU the device works on (see the module comment), if pinned.
    pub cpu: Option<usize>,
    /// OpenFlow devices: the flows (ovs-ofctl syntax) replacing the default
    /// `in_port=i,actions=output:n+1` for every input and `in_port=n+1,actions=output:1`.
    pub flows: Option<Vec<String>>,
    /// OpenFlow devices: groups (ovs-ofctl `add-group` syntax, OpenFlow 1.3) installed
    /// before the flows, which may point at them.
    pub groups: Vec<String>,
    /// OpenFlow devices: meters (ovs-ofctl `add-meter` syntax, OpenFlow 1.3) installed
    /// before the groups and the flows, which may use them.
    pub meters: Vec<String>,
    /// The bridge: static FDB entries for these MACs on the sink's port.
    pub fdb: Vec<[u8; 6]>,
    /// Receive queues of every port (at least 1): Open vSwitch's AF_XDP ports read
    /// that many (`options:n_rxq`), so no queue's frames bypass it.
    pub queues: u32,
}

impl<'a> Setup<'a> {
    /// One input `a`, sink `b`, unpinned, default rules.
    pub fn pair(a: &'a Host, b: &'a Host) -> Setup<'a> {
        Setup {
            inputs: vec![a],
            sink: b,
            cpu: None,
            flows: None,
            groups: Vec::new(),
            meters: Vec::new(),
            fdb: Vec::new(),
            queues: 1,
        }
    }

    /// The default flows of an OpenFlow device (see [`Setup::flows`]).
    pub fn default_flows(inputs: usize) -> Vec<String> {
        let sink = inputs + 1;
        let mut v: Vec<String> =
            (1..=inputs).map(|i| format!("in_port={i},actions=output:{sink}")).collect();
        v.push(format!("in_port={sink},actions=output:1"));
        v
    }

    /// The flows the device is to hold.
    pub fn openflow(&self) -> Vec<String> {
        self.flows.clone().unwrap_or_else(|| Setup::default_flows(self.inputs.len()))
    }

    /// Whether the device needs OpenFlow 1.3 for its load (meters and groups are not in
    /// OpenFlow 1.0).
    pub fn needs_openflow13(&self) -> bool {
        !self.meters.is_empty() || !self.groups.is_empty()
    }

    /// Every host, inputs first.
    pub fn hosts(&self) -> Vec<&'a Host> {
        let mut v = self.inputs.clone();
        v.push(self.sink);
        v
    }
}

/// How traffic from host 1 must be addressed to reach host 2 through a device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Target {
    /// Destination MAC of the generated frames.
    pub dst_mac: [u8; 6],
    /// Destination IPv4 address of the generated frames.
    pub dst_ip: Ipv4Addr,
}

/// A started device; dropping it tears it down.
#[derive(Debug)]
pub enum Running {
    /// See [`bridge::Bridge`].
    Bridge(bridge::Bridge),
    /// See [`router::Router`].
    Router(router::Router),
    /// See [`ovs::Ovs`].
    Ovs(ovs::Ovs),
}

impl Spec {
    /// A short name for tables.
    pub fn name(&self) -> String {
        match self {
            Spec::Bridge(bridge::Fdb::Learned) => "bridge".into(),
            Spec::Bridge(bridge::Fdb::Static) => "bridge-static".into(),
            Spec::Router { .. } => "router".into(),
            Spec::Ovs { ports } => format!("ovs-{}", ports.name()),
        }
    }

    /// Starts the device between `a` (the generator side) and `b` (the sink side), two
    /// hosts of `topo` whose root-side ends are not yet used by anything, unpinned and
    /// with its default rules.
    pub fn start(&self, topo: &mut Topology, a: &Host, b: &Host) -> Result<Running, String> {
        self.start_on(topo, &Setup::pair(a, b))
    }

    /// Starts the device as `setup` says, on hosts of `topo` whose root-side ends are
    /// not yet used by anything.
    pub fn start_on(&self, topo: &mut Topology, setup: &Setup) -> Result<Running, String> {
        match self {
            Spec::Bridge(fdb) => bridge::Bridge::start(topo, *fdb, setup).map(Running::Bridge),
            Spec::Router { routes } => {
                router::Router::start(topo, *routes, setup).map(Running::Router)
            }
            Spec::Ovs { ports } => ovs::Ovs::start(topo, *ports, setup).map(Running::Ovs),
        }
    }
}

impl Running {
    /// How traffic from the first input must be addressed to reach sink host `b`.
    pub fn target(&self, b: &Host) -> Target {
        self.target_from(0, b)
    }

    /// How traffic from input `i` (from 0) must be addressed to reach sink host `b`.
    pub fn target_from(&self, i: usize, b: &Host) -> Target {
        match self {
            Running::Router(r) => r.target(i),
            Running::Bridge(_) | Running::Ovs(_) => {
                Target { dst_mac: NOBODY, dst_ip: b.ip.parse().unwrap_or(Ipv4Addr::UNSPECIFIED) }
            }
        }
    }

    /// The namespace the device's ports are in (`None`: the root namespace).
    pub fn namespace(&self) -> Option<&str> {
        match self {
            Running::Bridge(_) => None,
            Running::Router(r) => Some(r.namespace()),
            Running::Ovs(o) => Some(o.namespace()),
        }
    }

    /// The OpenFlow connection of an OpenFlow device (for flow installation), in
    /// `ovs-ofctl`'s syntax.
    pub fn openflow_target(&self) -> Option<String> {
        match self {
            Running::Ovs(o) => Some(o.openflow_target()),
            _ => None,
        }
    }
}

/// Runs `cmd args…` with `input` on its standard input (an iproute2 `-batch -`),
/// failing with `what` and its stderr when it fails.
pub fn run_batch(cmd: &str, args: &[&str], input: &str, what: &str) -> Result<(), String> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(cmd)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{what}: {cmd}: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(input.as_bytes()).map_err(|e| format!("{what}: {cmd}: {e}"))?;
    }
    let out = child.wait_with_output().map_err(|e| format!("{what}: {cmd}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("{what}: {}", String::from_utf8_lossy(&out.stderr).trim()))
    }
}

/// Parses `aa:bb:cc:dd:ee:ff`.
pub fn parse_mac(s: &str) -> Result<[u8; 6], String> {
    let mut m = [0u8; 6];
    let parts: Vec<&str> = s.trim().split(':').collect();
    if parts.len() != 6 {
        return Err(format!("bad MAC address {s:?}"));
    }
    for (b, x) in m.iter_mut().zip(parts) {
        *b = u8::from_str_radix(x, 16).map_err(|_| format!("bad MAC address {s:?}"))?;
    }
    Ok(m)
}

/// Whether `prog` is an executable file in `$PATH` (or the sbin directories, which a
/// non-login root shell may lack).
pub fn have(prog: &str) -> bool {
    let path = std::env::var("PATH").unwrap_or_default();
    let found = path
        .split(':')
        .chain(["/usr/sbin", "/sbin", "/usr/local/sbin"])
        .any(|d| std::path::Path::new(d).join(prog).is_file());
    found
}

/// Gives each of `ports` (veth ends in namespace `ns`, or the root namespace) a NAPI
/// instance per receive queue (GRO on: veth then receives through NAPI, as it does
/// while XDP is attached), runs them threaded, and pins the NAPI threads of names
/// starting with `napi/<prefix>` (kernel thread names are cut at 15 characters, so the
/// topology's prefix is what tells them apart, not the queue) to `cpus` (one CPU, or a
/// set the scheduler places them in). Returns the PIDs of the threads pinned. A NAPI
/// instance made so lives as long as the port.
pub fn thread_napi(
    ns: Option<&str>,
    ports: &[String],
    prefix: &str,
    cpus: &[usize],
) -> Result<Vec<u32>, String> {
    for p in ports {
        let cmd = format!("ethtool -K {p} gro on && echo 1 > /sys/class/net/{p}/threaded");
        match ns {
            None => crate::topo::run("sh", &["-c", &cmd]),
            Some(ns) => ip(&["netns", "exec", ns, "sh", "-c", &cmd]),
        }
        .map_err(|e| format!("threaded NAPI on {p}: {e}"))?;
    }
    let list: Vec<String> = cpus.iter().map(|c| c.to_string()).collect();
    let list = list.join(",");
    let mut pinned = Vec::new();
    for pid in napi_threads(prefix) {
        if crate::topo::run("taskset", &["-p", "-c", &list, &pid.to_string()]).is_ok() {
            pinned.push(pid);
        }
    }
    Ok(pinned)
}

/// Joins `from` to `to` (ports in namespace `ns`, or the root namespace) with nothing
/// between them: every frame received on `from` is sent out of `to` by a tc ingress
/// filter (`u32` matching all, `mirred egress redirect`), the least a device can do.
/// The kernel's receive work on `from` is the only work. Removed with the port.
pub fn wire(ns: Option<&str>, from: &str, to: &str) -> Result<(), String> {
    let cmds = [
        vec!["qdisc", "add", "dev", from, "clsact"],
        vec![
            "filter", "add", "dev", from, "ingress", "protocol", "all", "prio", "1", "u32",
            "match", "u32", "0", "0", "action", "mirred", "egress", "redirect", "dev", to,
        ],
    ];
    for args in cmds {
        match ns {
            None => crate::topo::run("tc", &args),
            Some(ns) => {
                let mut all = vec!["netns", "exec", ns, "tc"];
                all.extend(args);
                ip(&all)
            }
        }
        .map_err(|e| format!("wiring {from} to {to}: {e}"))?;
    }
    Ok(())
}

/// The packets each receive queue of a veth took (its `rx_queue_N_xdp_packets` in
/// `ethtool -S`, which counts every frame its NAPI instance received, XDP or not), in
/// queue order, from the text `ethtool -S` printed. Empty when it has no such lines.
pub fn parse_rx_queue_packets(text: &str) -> Vec<u64> {
    let mut v: Vec<(usize, u64)> = text
        .lines()
        .filter_map(|l| {
            let (k, n) = l.trim().split_once(':')?;
            let q = k.strip_prefix("rx_queue_")?.strip_suffix("_xdp_packets")?;
            Some((q.parse().ok()?, n.trim().parse().ok()?))
        })
        .collect();
    v.sort_unstable();
    v.into_iter().map(|(_, n)| n).collect()
}

/// [`parse_rx_queue_packets`] of port `port` in namespace `ns` (or the root namespace).
pub fn rx_queue_packets(ns: Option<&str>, port: &str) -> Result<Vec<u64>, String> {
    let out = match ns {
        None => crate::topo::run("ethtool", &["-S", port]),
        Some(ns) => ip(&["netns", "exec", ns, "ethtool", "-S", port]),
    }
    .map_err(|e| format!("queue statistics of {port}: {e}"))?;
    Ok(parse_rx_queue_packets(&String::from_utf8_lossy(&out.stdout)))
}

/// Each queue's share of `after − before` (two [`rx_queue_packets`] readings of one
/// port); empty when the readings differ in length, cover one queue or nothing came.
pub fn queue_shares(before: &[u64], after: &[u64]) -> Vec<f64> {
    if before.len() != after.len() || after.len() < 2 {
        return Vec::new();
    }
    let d: Vec<u64> = before.iter().zip(after).map(|(a, b)| b.saturating_sub(*a)).collect();
    let total: u64 = d.iter().sum();
    if total == 0 {
        return Vec::new();
    }
    d.iter().map(|&n| n as f64 / total as f64).collect()
}

/// The NAPI kernel threads of ports whose names start with `prefix` (names are cut at
/// 15 characters: `napi/` and the first 10 of the port's).
pub fn napi_threads(prefix: &str) -> Vec<u32> {
    let want = format!("napi/{prefix}");
    let want = &want[..want.len().min(15)];
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .is_ok_and(|c| c.trim_end().starts_with(want))
        })
        .collect()
}

/// A namespace of the device's own, holding the hosts' former root-side ends under the
/// same names; deleting it on drop deletes those ends (and so the veth pairs).
#[derive(Debug)]
pub struct DutNs {
    /// The namespace's name (`<topology prefix>d`).
    pub name: String,
    /// The ports inside it, in the order of the hosts given (inputs first, sink last).
    pub ports: Vec<String>,
}

impl DutNs {
    /// Makes namespace `<prefix>d` and moves the `hosts`' root-side ends into it, up,
    /// IPv6 off (so the ports send nothing of their own).
    pub fn new(topo: &Topology, hosts: &[&Host]) -> Result<DutNs, String> {
        let name = format!("{}d", topo.prefix());
        ip(&["netns", "add", &name]).map_err(|e| e.to_string())?;
        let ns = DutNs { name, ports: hosts.iter().map(|h| h.port.clone()).collect() };
        ns.exec("sh", &["-c", "echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6"])?;
        ns.exec("ip", &["link", "set", "lo", "up"])?;
        for p in &ns.ports {
            ip(&["link", "set", p, "netns", &ns.name]).map_err(|e| e.to_string())?;
            ns.exec("ip", &["link", "set", p, "up"])?;
        }
        Ok(ns)
    }

    /// Runs `cmd args…` inside the namespace, failing with its stderr.
    pub fn exec(&self, cmd: &str, args: &[&str]) -> Result<std::process::Output, String> {
        let mut all = vec!["netns", "exec", &self.name, cmd];
        all.extend_from_slice(args);
        ip(&all).map_err(|e| e.to_string())
    }

    /// The MAC address of `port` inside the namespace.
    pub fn mac(&self, port: &str) -> Result<[u8; 6], String> {
        let out = self.exec("cat", &[&format!("/sys/class/net/{port}/address")])?;
        parse_mac(&String::from_utf8_lossy(&out.stdout))
    }
}

impl Drop for DutNs {
    fn drop(&mut self) {
        let _ = ip(&["netns", "del", &self.name]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn macs_parse() {
        assert_eq!(parse_mac("02:00:5e:00:00:99\n"), Ok([0x02, 0x00, 0x5e, 0x00, 0x00, 0x99]));
        assert!(parse_mac("02:00:5e:00:00").is_err());
        assert!(parse_mac("02:00:5e:00:00:zz").is_err());
    }

    #[test]
    fn queue_statistics_parse_and_share() {
        let text = "NIC statistics:\n     peer_ifindex: 11556\n     rx_queue_0_xdp_packets: 300\n     rx_queue_0_xdp_bytes: 19200\n     rx_queue_1_xdp_packets: 100\n     rx_queue_1_drops: 7\n     tx_queue_0_xdp_xmit: 5\n";
        assert_eq!(parse_rx_queue_packets(text), [300, 100]);
        // Lines in any order come out in queue order.
        assert_eq!(
            parse_rx_queue_packets("rx_queue_1_xdp_packets: 2\nrx_queue_0_xdp_packets: 1\n"),
            [1, 2]
        );
        assert!(parse_rx_queue_packets("NIC statistics:\n rx_packets: 3\n").is_empty());
        assert_eq!(queue_shares(&[300, 100], &[1300, 1100]), [0.5, 0.5]);
        assert_eq!(queue_shares(&[0, 0], &[30, 10]), [0.75, 0.25]);
        // Nothing came, one queue, or readings that do not match: no shares.
        assert!(queue_shares(&[5, 5], &[5, 5]).is_empty());
        assert!(queue_shares(&[1], &[9]).is_empty());
        assert!(queue_shares(&[1, 2], &[9]).is_empty());
    }

    #[test]
    fn names() {
        assert_eq!(Spec::Bridge(bridge::Fdb::Learned).name(), "bridge");
        assert_eq!(Spec::Router { routes: 3 }.name(), "router");
        assert_eq!(Spec::Ovs { ports: ovs::PortType::Afxdp }.name(), "ovs-afxdp");
    }

    #[test]
    fn default_flows_send_every_input_to_the_sink_and_back_to_the_first() {
        assert_eq!(
            Setup::default_flows(2),
            [
                "in_port=1,actions=output:3",
                "in_port=2,actions=output:3",
                "in_port=3,actions=output:1"
            ]
        );
    }
}
