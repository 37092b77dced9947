//! The flows of a stream and their frames.
//!
//! A stream's frames differ in one header field, as the classic evaluations vary them per
//! kind of device: UDP ports for a switch that matches 5-tuples, destination IPv4
//! addresses for a router, destination MACs for a learning bridge. The values are drawn
//! uniformly at random from a seeded [`Rng`], so a stream is reproducible, and they are
//! distinct whenever the space holds enough values.

use std::collections::HashSet;
use std::net::Ipv4Addr;

use crate::dut::Target;
use crate::workload::{udp_frame, Rng};

/// How the flows of a stream differ (the classic study's choice per device kind).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spread {
    /// Random UDP source and destination ports in `1024..=65535`.
    UdpPorts,
    /// Random destination IPv4 addresses inside a given prefix.
    DstIps,
    /// Random locally administered unicast destination MACs (`02:xx:xx:xx:xx:xx`).
    DstMacs,
}

/// The header fields of one generated flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FlowHeader {
    pub src_mac: [u8; 6],
    pub dst_mac: [u8; 6],
    pub src_ip: Ipv4Addr,
    pub dst_ip: Ipv4Addr,
    pub sport: u16,
    pub dport: u16,
}

/// The ports of flows whose ports are not what varies (the discard service).
const FIXED_PORT: u16 = 9;

/// `n` flows (n >= 1; 0 is taken as 1) from `src_mac`/`src_ip` towards `target`, spread
/// uniformly at random (seeded) as `spread` says:
/// - `UdpPorts`: random sport and dport in `1024..=65535`, dst IP/MAC the target's;
/// - `DstIps`: random dst IPv4 addresses inside `ip_space` (`base/prefix_len`, prefix
///   lengths above 32 taken as 32), leaving out the prefix's network and broadcast
///   addresses when it has them (prefix length up to 30), with the target's MAC and
///   ports 9/9;
/// - `DstMacs`: random `02:xx:xx:xx:xx:xx` dst MACs (never the target's), dst IP the
///   target's, ports 9/9.
///
/// Flows are distinct when the space allows; a space smaller than `n` is used whole
/// (in random order) and then repeated. `n == 1` gives exactly the base flow: the
/// target's MAC and IP, ports 9/9.
pub fn flows(
    spread: Spread,
    n: usize,
    src_mac: [u8; 6],
    src_ip: Ipv4Addr,
    target: Target,
    ip_space: (Ipv4Addr, u8),
    seed: u64,
) -> Vec<FlowHeader> {
    let base = FlowHeader {
        src_mac,
        dst_mac: target.dst_mac,
        src_ip,
        dst_ip: target.dst_ip,
        sport: FIXED_PORT,
        dport: FIXED_PORT,
    };
    let n = n.max(1);
    if n == 1 {
        return vec![base];
    }
    let mut rng = Rng::new(seed);
    match spread {
        Spread::UdpPorts => {
            const LOW: u64 = 1024;
            const COUNT: u64 = 65536 - LOW;
            distinct(n, COUNT * COUNT, None, &mut rng)
                .into_iter()
                .map(|i| FlowHeader {
                    sport: (LOW + i / COUNT) as u16,
                    dport: (LOW + i % COUNT) as u16,
                    ..base
                })
                .collect()
        }
        Spread::DstIps => {
            let len = u32::from(ip_space.1.min(32));
            let host_bits = 32 - len;
            let mask = if len == 0 { 0 } else { u32::MAX << host_bits };
            let net = u32::from(ip_space.0) & mask;
            // Up to /30 the all-zeros and all-ones host parts are not hosts.
            let (first, count) = if host_bits >= 2 {
                (1u64, (1u64 << host_bits) - 2)
            } else {
                (0u64, 1u64 << host_bits)
            };
            distinct(n, count, None, &mut rng)
                .into_iter()
                .map(|i| FlowHeader { dst_ip: Ipv4Addr::from(net | (first + i) as u32), ..base })
                .collect()
        }
        Spread::DstMacs => {
            let mac_index = |m: [u8; 6]| -> Option<u64> {
                (m[0] == 0x02).then(|| m[1..].iter().fold(0u64, |a, &b| a << 8 | u64::from(b)))
            };
            distinct(n, 1 << 40, mac_index(target.dst_mac), &mut rng)
                .into_iter()
                .map(|i| {
                    let b = i.to_be_bytes();
                    FlowHeader { dst_mac: [0x02, b[3], b[4], b[5], b[6], b[7]], ..base }
                })
                .collect()
        }
    }
}

/// `n` values drawn uniformly from `0..space` (space >= 1), leaving out `avoid` when
/// other values exist: distinct while the space lasts, then the space again.
fn distinct(n: usize, space: u64, avoid: Option<u64>, rng: &mut Rng) -> Vec<u64> {
    let avoid = avoid.filter(|&a| a < space && space > 1);
    let usable = space - u64::from(avoid.is_some());
    // Map 0..usable onto 0..space without `avoid`.
    let lift = |v: u64| match avoid {
        Some(a) if v >= a => v + 1,
        _ => v,
    };
    let mut out = Vec::with_capacity(n);
    if (n as u64).saturating_mul(2) >= usable {
        // A dense draw: shuffle the whole space (small here, at most 2n values) and
        // repeat it as often as needed.
        let mut all: Vec<u64> = (0..usable).map(lift).collect();
        while out.len() < n {
            for i in (1..all.len()).rev() {
                all.swap(i, rng.below(i as u64 + 1) as usize);
            }
            out.extend(all.iter().take(n - out.len()));
        }
    } else {
        // A sparse draw: rejection of repeats ends quickly, at least half is free.
        let mut seen = HashSet::with_capacity(n);
        while out.len() < n {
            let v = lift(rng.below(usable));
            if seen.insert(v) {
                out.push(v);
            }
        }
    }
    out
}

/// A frame of `size` bytes (clamped to 64..=1518, counting the 4-byte FCS the wire adds,
/// as [`udp_frame`]: the buffer is `size - 4` bytes) for flow `h`: Ethernet, IPv4 with a
/// valid header checksum, UDP with checksum 0, a zero payload.
pub fn frame(h: &FlowHeader, size: usize) -> Vec<u8> {
    let mut f = udp_frame(h.src_ip.into(), h.dst_ip.into(), h.sport, h.dport, size);
    f[0..6].copy_from_slice(&h.dst_mac);
    f[6..12].copy_from_slice(&h.src_mac);
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC_MAC: [u8; 6] = [0x02, 0, 0, 0, 1, 1];
    const SRC_IP: Ipv4Addr = Ipv4Addr::new(10, 1, 0, 1);

    fn target() -> Target {
        Target { dst_mac: [0x02, 0xaa, 0, 0, 0, 2], dst_ip: Ipv4Addr::new(10, 2, 0, 2) }
    }

    fn make(spread: Spread, n: usize, space: (Ipv4Addr, u8), seed: u64) -> Vec<FlowHeader> {
        flows(spread, n, SRC_MAC, SRC_IP, target(), space, seed)
    }

    const SPACE: (Ipv4Addr, u8) = (Ipv4Addr::new(10, 2, 7, 9), 16);

    #[test]
    fn one_flow_is_the_base_flow() {
        for spread in [Spread::UdpPorts, Spread::DstIps, Spread::DstMacs] {
            for n in [0, 1] {
                let f = make(spread, n, SPACE, 7);
                assert_eq!(
                    f,
                    vec![FlowHeader {
                        src_mac: SRC_MAC,
                        dst_mac: target().dst_mac,
                        src_ip: SRC_IP,
                        dst_ip: target().dst_ip,
                        sport: 9,
                        dport: 9,
                    }]
                );
            }
        }
    }

    #[test]
    fn udp_ports_vary_only_the_ports() {
        let f = make(Spread::UdpPorts, 5000, SPACE, 1);
        assert_eq!(f.len(), 5000);
        assert_eq!(f.iter().collect::<HashSet<_>>().len(), 5000);
        for h in &f {
            assert!(h.sport >= 1024 && h.dport >= 1024);
            assert_eq!((h.dst_mac, h.dst_ip), (target().dst_mac, target().dst_ip));
            assert_eq!((h.src_mac, h.src_ip), (SRC_MAC, SRC_IP));
        }
        // Uniform-ish: both halves of the port range are used.
        assert!(f.iter().any(|h| h.sport > 40_000) && f.iter().any(|h| h.sport < 20_000));
        assert!(f.iter().any(|h| h.dport > 40_000) && f.iter().any(|h| h.dport < 20_000));
    }

    /// How many distinct values `key` takes over `flows`.
    fn distinct_keys<K: Eq + std::hash::Hash>(
        flows: &[FlowHeader],
        key: impl Fn(&FlowHeader) -> K,
    ) -> usize {
        flows.iter().map(key).collect::<HashSet<_>>().len()
    }

    #[test]
    fn dst_ips_stay_in_the_prefix_and_skip_network_and_broadcast() {
        let f = make(Spread::DstIps, 3000, SPACE, 2);
        assert_eq!(distinct_keys(&f, |h| h.dst_ip), 3000);
        for h in &f {
            let o = h.dst_ip.octets();
            assert_eq!((o[0], o[1]), (10, 2));
            assert_ne!((o[2], o[3]), (0, 0));
            assert_ne!((o[2], o[3]), (255, 255));
            assert_eq!((h.dst_mac, h.sport, h.dport), (target().dst_mac, 9, 9));
        }
        // A /24 has 254 hosts: 254 flows use each once; more repeat them.
        let f = make(Spread::DstIps, 254, (Ipv4Addr::new(192, 168, 3, 0), 24), 3);
        let ips: HashSet<_> = f.iter().map(|h| h.dst_ip).collect();
        assert_eq!(ips.len(), 254);
        assert!(!ips.contains(&Ipv4Addr::new(192, 168, 3, 0)));
        assert!(!ips.contains(&Ipv4Addr::new(192, 168, 3, 255)));
        let f = make(Spread::DstIps, 600, (Ipv4Addr::new(192, 168, 3, 0), 24), 3);
        assert_eq!(f.len(), 600);
        assert_eq!(distinct_keys(&f, |h| h.dst_ip), 254);
        // A /32 is one address, used by every flow.
        let f = make(Spread::DstIps, 4, (Ipv4Addr::new(1, 2, 3, 4), 40), 3);
        assert!(f.iter().all(|h| h.dst_ip == Ipv4Addr::new(1, 2, 3, 4)));
    }

    #[test]
    fn dst_macs_are_local_unicast_and_distinct() {
        let f = make(Spread::DstMacs, 4000, SPACE, 4);
        assert_eq!(distinct_keys(&f, |h| h.dst_mac), 4000);
        for h in &f {
            assert_eq!(h.dst_mac[0], 0x02);
            assert_ne!(h.dst_mac, target().dst_mac);
            assert_eq!((h.dst_ip, h.sport, h.dport), (target().dst_ip, 9, 9));
        }
    }

    #[test]
    fn the_seed_decides_the_flows() {
        for spread in [Spread::UdpPorts, Spread::DstIps, Spread::DstMacs] {
            let a = make(spread, 100, SPACE, 11);
            assert_eq!(a, make(spread, 100, SPACE, 11));
            assert_ne!(a, make(spread, 100, SPACE, 12));
        }
    }

    #[test]
    fn distinct_avoids_the_excluded_value() {
        let mut rng = Rng::new(5);
        let v = distinct(10, 4, Some(2), &mut rng);
        assert_eq!(v.len(), 10);
        assert!(v.iter().all(|&x| x < 4 && x != 2));
        assert_eq!(v.iter().collect::<HashSet<_>>().len(), 3);
        // The only value is used even when it is the one to avoid.
        assert_eq!(distinct(3, 1, Some(0), &mut rng), vec![0, 0, 0]);
    }

    #[test]
    fn frames_carry_the_flow_and_the_size() {
        let h = make(Spread::UdpPorts, 3, SPACE, 9)[2];
        for (size, buf) in [(64, 60), (1518, 1514), (10, 60), (9000, 1514), (100, 96)] {
            let f = frame(&h, size);
            assert_eq!(f.len(), buf);
            assert_eq!(f[0..6], h.dst_mac);
            assert_eq!(f[6..12], h.src_mac);
            assert_eq!(f[12..14], [0x08, 0x00]);
            assert_eq!(f[23], 17);
            assert_eq!(f[26..30], h.src_ip.octets());
            assert_eq!(f[30..34], h.dst_ip.octets());
            assert_eq!(u16::from_be_bytes([f[34], f[35]]), h.sport);
            assert_eq!(u16::from_be_bytes([f[36], f[37]]), h.dport);
            assert_eq!(usize::from(u16::from_be_bytes([f[16], f[17]])), buf - 14);
            assert_eq!(usize::from(u16::from_be_bytes([f[38], f[39]])), buf - 34);
        }
    }
}
