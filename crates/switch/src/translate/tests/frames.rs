//! Hand-built frames for the tests: Ethernet (optionally 802.1Q-tagged), IPv4, IPv6, ARP,
//! TCP, UDP, SCTP, ICMP, IPv6 neighbour discovery, MPLS and PBB, laid out byte by byte
//! as the standards give them. IPv4 header checksums are correct; L4 checksums are zero
//! (the datapath's parser does not verify them, and its rewrites update them
//! incrementally).

use std::net::{Ipv4Addr, Ipv6Addr};

pub const MAC_A: [u8; 6] = [0x02, 0, 0, 0, 0, 0x0a];
pub const MAC_B: [u8; 6] = [0x02, 0, 0, 0, 0, 0x0b];

pub const ETH_IPV4: u16 = 0x0800;
pub const ETH_ARP: u16 = 0x0806;
pub const ETH_IPV6: u16 = 0x86dd;
pub const ETH_MPLS: u16 = 0x8847;
pub const ETH_PBB: u16 = 0x88e7;

/// Pads a frame to the Ethernet minimum of 60 bytes (without FCS).
fn pad(mut f: Vec<u8>) -> Vec<u8> {
    if f.len() < 60 {
        f.resize(60, 0);
    }
    f
}

pub fn eth(dst: [u8; 6], src: [u8; 6], ty: u16, payload: &[u8]) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&dst);
    f.extend_from_slice(&src);
    f.extend_from_slice(&ty.to_be_bytes());
    f.extend_from_slice(payload);
    pad(f)
}

/// An IPv4 frame from [`MAC_A`] to [`MAC_B`] carrying `payload`.
pub fn eth_ipv4(payload: &[u8]) -> Vec<u8> {
    eth(MAC_B, MAC_A, ETH_IPV4, payload)
}

/// An 802.1Q-tagged frame with tag control `tci`.
pub fn eth_vlan(dst: [u8; 6], src: [u8; 6], tci: u16, ty: u16, payload: &[u8]) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&dst);
    f.extend_from_slice(&src);
    f.extend_from_slice(&0x8100u16.to_be_bytes());
    f.extend_from_slice(&tci.to_be_bytes());
    f.extend_from_slice(&ty.to_be_bytes());
    f.extend_from_slice(payload);
    pad(f)
}

fn ones_complement(b: &[u8]) -> u16 {
    let mut sum = 0u32;
    for c in b.chunks(2) {
        let w = u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]);
        sum += u32::from(w);
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// An IPv4 packet (no options, TTL 64) with type of service `tos`.
pub fn ipv4(tos: u8, proto: u8, src: Ipv4Addr, dst: Ipv4Addr, payload: &[u8]) -> Vec<u8> {
    let total = (20 + payload.len()) as u16;
    let mut h = vec![0x45, tos];
    h.extend_from_slice(&total.to_be_bytes());
    h.extend_from_slice(&[0, 1, 0, 0, 64, proto, 0, 0]);
    h.extend_from_slice(&src.octets());
    h.extend_from_slice(&dst.octets());
    let c = ones_complement(&h);
    h[10..12].copy_from_slice(&c.to_be_bytes());
    h.extend_from_slice(payload);
    h
}

/// An IPv6 packet (hop limit 64) with traffic class `tc` and flow label `flabel`.
pub fn ipv6(tc: u8, flabel: u32, nh: u8, src: Ipv6Addr, dst: Ipv6Addr, payload: &[u8]) -> Vec<u8> {
    let w0 = (6u32 << 28) | (u32::from(tc) << 20) | (flabel & 0xf_ffff);
    let mut h = w0.to_be_bytes().to_vec();
    h.extend_from_slice(&(payload.len() as u16).to_be_bytes());
    h.extend_from_slice(&[nh, 64]);
    h.extend_from_slice(&src.octets());
    h.extend_from_slice(&dst.octets());
    h.extend_from_slice(payload);
    h
}

/// A hop-by-hop options header (8 bytes, PadN) followed by protocol `nh`.
pub fn hop_by_hop(nh: u8, payload: &[u8]) -> Vec<u8> {
    let mut h = vec![nh, 0, 1, 4, 0, 0, 0, 0];
    h.extend_from_slice(payload);
    h
}

/// A TCP header of 20 bytes (ACK set).
pub fn tcp(sport: u16, dport: u16) -> Vec<u8> {
    let mut h = Vec::new();
    h.extend_from_slice(&sport.to_be_bytes());
    h.extend_from_slice(&dport.to_be_bytes());
    h.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x10, 0xff, 0xff, 0, 0, 0, 0]);
    h
}

/// A UDP header with 4 bytes of data.
pub fn udp(sport: u16, dport: u16) -> Vec<u8> {
    let mut h = Vec::new();
    h.extend_from_slice(&sport.to_be_bytes());
    h.extend_from_slice(&dport.to_be_bytes());
    h.extend_from_slice(&[0, 12, 0, 0, 1, 2, 3, 4]);
    h
}

/// An SCTP common header (no chunks).
pub fn sctp(sport: u16, dport: u16) -> Vec<u8> {
    let mut h = Vec::new();
    h.extend_from_slice(&sport.to_be_bytes());
    h.extend_from_slice(&dport.to_be_bytes());
    h.extend_from_slice(&[0, 0, 0, 7, 0, 0, 0, 0]);
    h
}

/// An ICMP (v4 or v6) header of 8 bytes.
pub fn icmp(ty: u8, code: u8) -> Vec<u8> {
    vec![ty, code, 0, 0, 0, 0, 0, 1]
}

/// An Ethernet/IPv4 ARP packet.
pub fn arp(op: u16, sha: [u8; 6], spa: Ipv4Addr, tha: [u8; 6], tpa: Ipv4Addr) -> Vec<u8> {
    let mut h = vec![0, 1, 0x08, 0x00, 6, 4];
    h.extend_from_slice(&op.to_be_bytes());
    h.extend_from_slice(&sha);
    h.extend_from_slice(&spa.octets());
    h.extend_from_slice(&tha);
    h.extend_from_slice(&tpa.octets());
    h
}

/// An ICMPv6 neighbor solicitation (135) or advertisement (136) for `target`, with a
/// source (NS) or target (NA) link-layer address option carrying `ll`.
pub fn nd(ty: u8, target: Ipv6Addr, ll: [u8; 6]) -> Vec<u8> {
    let mut h = vec![ty, 0, 0, 0, 0, 0, 0, 0];
    h.extend_from_slice(&target.octets());
    h.extend_from_slice(&[if ty == 135 { 1 } else { 2 }, 1]);
    h.extend_from_slice(&ll);
    h
}

/// One MPLS label stack entry (TTL 64) and the payload after it.
pub fn mpls(label: u32, tc: u8, bos: bool, payload: &[u8]) -> Vec<u8> {
    let lse = (label << 12) | (u32::from(tc) << 9) | (u32::from(bos) << 8) | 64;
    let mut h = lse.to_be_bytes().to_vec();
    h.extend_from_slice(payload);
    h
}

/// A PBB I-TAG with service id `isid`, and an inner Ethernet header.
pub fn pbb_itag(isid: u32) -> Vec<u8> {
    let mut h = (isid & 0x00ff_ffff).to_be_bytes().to_vec();
    h.extend_from_slice(&MAC_B);
    h.extend_from_slice(&MAC_A);
    h.extend_from_slice(&ETH_IPV4.to_be_bytes());
    h
}

pub fn v4(s: &str) -> Ipv4Addr {
    s.parse().unwrap_or(Ipv4Addr::UNSPECIFIED)
}

pub fn v6(s: &str) -> Ipv6Addr {
    s.parse().unwrap_or(Ipv6Addr::UNSPECIFIED)
}

/// The common IPv4/TCP frame: 10.1.2.3:1234 → 192.168.0.1:80, DSCP 46, ECN 1.
pub fn tcp4(dport: u16) -> Vec<u8> {
    eth_ipv4(&ipv4((46 << 2) | 1, 6, v4("10.1.2.3"), v4("192.168.0.1"), &tcp(1234, dport)))
}
