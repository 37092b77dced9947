//! Linux IPv4 routing as a device under test, in a namespace of its own ([`DutNs`]) so
//! the root namespace's `ip_forward` is never touched.
//!
//! Layout, with the topology's hosts `10.N.0.x`: the router's port towards input `i`
//! (from 0) gets `10.N.0.(254 − 2i)/32`, its sink-side port `10.N.0.253/32`; each host's
//! `/24` becomes a `/32` with a route to its router address
//! and a default route through it, so every packet between them is routed. All
//! neighbour entries (hosts' and router's) are static and permanent: no ARP runs during
//! a trial. Generated traffic goes to [`SINK_NET`] inside `10.N.0.0/16`, a `/24` routed
//! via the sink host, which receives it on its interface (counted there) and drops it
//! at once as not its own (forwarding is off in the host), so the sink's IP stack never
//! runs in the router's softirq. `routes` extra random `/24` and `/32` prefixes (outside
//! `10.0.0.0/8`) also point at the sink host, to size the routing table.

use std::net::Ipv4Addr;

use super::{DutNs, Setup, Target};
use crate::topo::Topology;

/// The third octet of the `/24` the generated traffic is sent to.
pub const SINK_NET: u8 = 200;

/// A running router.
#[derive(Debug)]
pub struct Router {
    ns: DutNs,
    /// Per input, in order; never empty.
    targets: Vec<Target>,
}

/// `count` distinct prefixes, `/24` or `/32` at random (seeded with `seed`), none in
/// `10.0.0.0/8`, `127.0.0.0/8`, `0.0.0.0/8` or at/above `224.0.0.0`.
pub fn random_prefixes(count: usize, seed: u64) -> Vec<(Ipv4Addr, u8)> {
    let mut s = seed | 1;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let mut seen = std::collections::HashSet::with_capacity(count);
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        let r = next();
        let addr = (r >> 16) as u32;
        let first = addr >> 24;
        if first == 0 || first == 10 || first == 127 || first >= 224 {
            continue;
        }
        let len = if r & 1 == 0 { 24 } else { 32 };
        let addr = if len == 24 { addr & 0xffff_ff00 } else { addr };
        if seen.insert((addr, len)) {
            out.push((Ipv4Addr::from(addr), len));
        }
    }
    out
}

/// The `ip -batch` lines routing `prefixes` via `via` on `dev`.
pub fn route_batch(prefixes: &[(Ipv4Addr, u8)], via: Ipv4Addr, dev: &str) -> String {
    let mut s = String::with_capacity(prefixes.len() * 48);
    for (p, len) in prefixes {
        s.push_str(&format!("route replace {p}/{len} via {via} dev {dev}\n"));
    }
    s
}

/// `10.N.0.x` with the topology's `N` taken from host address `h`.
fn sibling(h: Ipv4Addr, third: u8, fourth: u8) -> Ipv4Addr {
    let o = h.octets();
    Ipv4Addr::new(o[0], o[1], third, fourth)
}

fn parse_ip(s: &str) -> Result<Ipv4Addr, String> {
    s.parse().map_err(|_| format!("bad IPv4 address {s:?}"))
}

impl Router {
    /// Moves the setup's hosts' root-side ends into the router's namespace and sets up
    /// forwarding, addresses, static neighbours and `routes` extra routes
    /// ([`extra_prefixes`]).
    pub fn start(topo: &mut Topology, routes: usize, setup: &Setup) -> Result<Router, String> {
        let hosts = setup.hosts();
        let ns = DutNs::new(topo, &hosts)?;
        let first = parse_ip(&setup.inputs[0].ip)?;
        // Router address of each host's port: the sink's .253, input i's .254 - 2i.
        let n = setup.inputs.len();
        let mine = |k: usize| {
            if k == n {
                sibling(first, 0, 253)
            } else {
                sibling(first, 0, 254u8.saturating_sub(2 * k as u8))
            }
        };
        for k in ["all", "default"] {
            ns.exec("sh", &["-c", &format!("echo 0 > /proc/sys/net/ipv4/conf/{k}/rp_filter")])?;
        }
        ns.exec("sh", &["-c", "echo 1 > /proc/sys/net/ipv4/ip_forward"])?;
        let mut macs = Vec::with_capacity(hosts.len());
        for (k, (h, port)) in hosts.iter().zip(&ns.ports).enumerate() {
            let hip = parse_ip(&h.ip)?;
            let r = mine(k);
            ns.exec("sh", &["-c", &format!("echo 0 > /proc/sys/net/ipv4/conf/{port}/rp_filter")])?;
            ns.exec("ip", &["addr", "add", &format!("{r}/32"), "dev", port])?;
            ns.exec("ip", &["route", "add", &format!("{hip}/32"), "dev", port])?;
            ns.exec(
                "ip",
                &[
                    "neigh",
                    "replace",
                    &hip.to_string(),
                    "lladdr",
                    &h.mac,
                    "dev",
                    port,
                    "nud",
                    "permanent",
                ],
            )?;
            let rmac = ns.mac(port)?;
            macs.push(rmac);
            let run = |args: &[&str]| topo.in_ns(&h.ns, "ip", args).map_err(|e| e.to_string());
            run(&["addr", "del", &format!("{hip}/24"), "dev", "eth0"])?;
            run(&["addr", "add", &format!("{hip}/32"), "dev", "eth0"])?;
            run(&["route", "add", &format!("{r}/32"), "dev", "eth0"])?;
            run(&["route", "add", "default", "via", &r.to_string(), "dev", "eth0"])?;
            run(&[
                "neigh",
                "replace",
                &r.to_string(),
                "lladdr",
                &fmt_mac(rmac),
                "dev",
                "eth0",
                "nud",
                "permanent",
            ])?;
        }
        let hb = parse_ip(&setup.sink.ip)?;
        let pb = &ns.ports[n];
        let sink = sibling(first, SINK_NET, 0);
        let mut batch = route_batch(&[(sink, 24)], hb, pb);
        batch.push_str(&route_batch(&extra_prefixes(routes), hb, pb));
        super::run_batch("ip", &["-n", &ns.name, "-batch", "-"], &batch, "installing routes")?;
        let targets = macs[..n]
            .iter()
            .map(|&dst_mac| Target { dst_mac, dst_ip: sibling(first, SINK_NET, 9) })
            .collect();
        Ok(Router { ns, targets })
    }

    /// Traffic from input `i` to the sink: the router's MAC on that input, an address in
    /// [`SINK_NET`] (the first input's when `i` is out of range).
    pub fn target(&self, i: usize) -> Target {
        self.targets.get(i).unwrap_or(&self.targets[0]).to_owned()
    }

    /// The router's namespace.
    pub fn namespace(&self) -> &str {
        &self.ns.name
    }
}

/// `aa:bb:…` of a MAC.
fn fmt_mac(m: [u8; 6]) -> String {
    m.iter().map(|x| format!("{x:02x}")).collect::<Vec<_>>().join(":")
}

/// The extra prefixes a router with `routes` extra routes holds (the same for the same
/// count), for traffic that must hit them.
pub fn extra_prefixes(routes: usize) -> Vec<(Ipv4Addr, u8)> {
    random_prefixes(routes, 0x9e37_79b9_7f4a_7c15 ^ routes as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_are_distinct_aligned_and_outside_reserved_space() {
        let p = random_prefixes(5000, 7);
        assert_eq!(p.len(), 5000);
        let set: std::collections::HashSet<_> = p.iter().collect();
        assert_eq!(set.len(), 5000);
        let mut lens = [0usize; 2];
        for (a, len) in &p {
            let o = a.octets();
            assert!(o[0] != 0 && o[0] != 10 && o[0] != 127 && o[0] < 224, "{a}");
            match len {
                24 => {
                    assert_eq!(o[3], 0, "{a}/24 not aligned");
                    lens[0] += 1;
                }
                32 => lens[1] += 1,
                _ => panic!("length {len}"),
            }
        }
        assert!(lens[0] > 1000 && lens[1] > 1000, "{lens:?}");
        assert_eq!(random_prefixes(10, 3), random_prefixes(10, 3));
        assert!(random_prefixes(0, 3).is_empty());
    }

    #[test]
    fn batch_lines() {
        let b = route_batch(
            &[(Ipv4Addr::new(1, 2, 3, 0), 24), (Ipv4Addr::new(5, 6, 7, 8), 32)],
            Ipv4Addr::new(10, 9, 0, 2),
            "p2",
        );
        assert_eq!(
            b,
            "route replace 1.2.3.0/24 via 10.9.0.2 dev p2\nroute replace 5.6.7.8/32 via 10.9.0.2 dev p2\n"
        );
    }
}
