//! Drivers for the devices under test other than peregrine (which the `peregrine` binary
//! starts itself, this crate never depending on the switch): the Linux bridge, Linux
//! IPv4 routing and Open vSwitch's userspace datapath, all driven the same way.
//!
//! A [`Spec`] says which device and how it is set up; [`Spec::start`] puts it between
//! two [`Host`]s of a [`Topology`] (on the hosts' root-side veth ends) and returns a
//! [`Running`] device, which is torn down when dropped (processes it started ended by
//! PID, namespaces and links it made removed), also when a trial fails halfway. The
//! [`Target`] of a running device says how generated traffic must be addressed for it
//! to reach the sink host (a switch floods an unknown MAC; a router needs its own MAC
//! and a routed destination).
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
        /// The OVS port type of both ports.
        ports: ovs::PortType,
        /// The CPU its daemons are pinned to (`taskset`), if any.
        cpu: Option<usize>,
    },
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
            Spec::Ovs { ports, .. } => format!("ovs-{}", ports.name()),
        }
    }

    /// Starts the device between `a` (the generator side) and `b` (the sink side), two
    /// hosts of `topo` whose root-side ends are not yet used by anything.
    pub fn start(&self, topo: &mut Topology, a: &Host, b: &Host) -> Result<Running, String> {
        match self {
            Spec::Bridge(fdb) => bridge::Bridge::start(topo, *fdb, a, b).map(Running::Bridge),
            Spec::Router { routes } => {
                router::Router::start(topo, *routes, a, b).map(Running::Router)
            }
            Spec::Ovs { ports, cpu } => ovs::Ovs::start(topo, *ports, *cpu, a, b).map(Running::Ovs),
        }
    }
}

impl Running {
    /// How traffic from the first host must be addressed to reach the second.
    pub fn target(&self, b: &Host) -> Target {
        match self {
            Running::Router(r) => r.target(),
            Running::Bridge(_) | Running::Ovs(_) => Target {
                dst_mac: NOBODY,
                dst_ip: b.ip.parse().unwrap_or(Ipv4Addr::UNSPECIFIED),
            },
        }
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

/// A namespace of the device's own, holding the hosts' two former root-side ends under
/// the same names; deleting it on drop deletes those ends (and so the veth pairs).
#[derive(Debug)]
pub struct DutNs {
    /// The namespace's name (`<topology prefix>d`).
    pub name: String,
    /// The two ports inside it, generator side first.
    pub ports: [String; 2],
}

impl DutNs {
    /// Makes namespace `<prefix>d` and moves `a`'s and `b`'s root-side ends into it, up,
    /// IPv6 off (so the ports send nothing of their own).
    pub fn new(topo: &Topology, a: &Host, b: &Host) -> Result<DutNs, String> {
        let name = format!("{}d", topo.prefix());
        ip(&["netns", "add", &name]).map_err(|e| e.to_string())?;
        let ns = DutNs {
            name,
            ports: [a.port.clone(), b.port.clone()],
        };
        ns.exec(
            "sh",
            &["-c", "echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6"],
        )?;
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
        assert_eq!(
            parse_mac("02:00:5e:00:00:99\n"),
            Ok([0x02, 0x00, 0x5e, 0x00, 0x00, 0x99])
        );
        assert!(parse_mac("02:00:5e:00:00").is_err());
        assert!(parse_mac("02:00:5e:00:00:zz").is_err());
    }

    #[test]
    fn names() {
        assert_eq!(Spec::Bridge(bridge::Fdb::Learned).name(), "bridge");
        assert_eq!(Spec::Router { routes: 3 }.name(), "router");
        assert_eq!(
            Spec::Ovs {
                ports: ovs::PortType::Afxdp,
                cpu: None
            }
            .name(),
            "ovs-afxdp"
        );
    }
}
