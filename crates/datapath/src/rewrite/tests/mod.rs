//! Tests of the rewrites, checked against etherparse and against straightforward
//! full checksum computations written here.
//!
//! `scan` is a small reference reader of the frames these tests build, giving the key and
//! offsets that `apply` starts from and must keep true.

mod push_pop;
mod random;
mod set_field;
mod ttl;

use super::apply;
use crate::action::Action;
use crate::key::{Field, FlowKey};
use crate::packet::{Layers, Packet};
use etherparse::PacketBuilder;

pub(super) const SRC_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x01];
pub(super) const DST_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x02];
pub(super) const V6_SRC: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
pub(super) const V6_DST: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];

fn be16(d: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([d[at], d[at + 1]])
}

fn be_u128(b: &[u8]) -> u128 {
    b.iter().fold(0, |a, &x| (a << 8) | u128::from(x))
}

/// Reads a frame the way the parser does (for the frames these tests build).
pub(super) fn scan(f: &[u8], in_port: u32) -> (FlowKey, Layers) {
    let mut k = FlowKey::ZERO;
    let mut l = Layers::default();
    k.set(Field::InPort, u128::from(in_port));
    if f.len() < 14 {
        return (k, l);
    }
    k.set(Field::EthDst, be_u128(&f[0..6]));
    k.set(Field::EthSrc, be_u128(&f[6..12]));
    let mut at = 12;
    while f.len() >= at + 6 && matches!(be16(f, at), 0x8100 | 0x88a8) {
        if l.vlan.is_none() {
            let tci = be16(f, at + 2);
            l.vlan = Some(at as u16);
            k.set(Field::VlanVid, 0x1000 | u128::from(tci & 0xfff));
            k.set(Field::VlanPcp, u128::from(tci >> 13));
        }
        at += 4;
    }
    l.ethertype = at as u16;
    let et = be16(f, at);
    k.set(Field::EthType, u128::from(et));
    let p = at + 2;
    match et {
        0x8847 | 0x8848 if f.len() >= p + 4 => {
            let w = u32::from_be_bytes([f[p], f[p + 1], f[p + 2], f[p + 3]]);
            l.mpls = Some(p as u16);
            k.set(Field::MplsLabel, u128::from(w >> 12));
            k.set(Field::MplsTc, u128::from((w >> 9) & 7));
            k.set(Field::MplsBos, u128::from((w >> 8) & 1));
        }
        0x88e7 if f.len() >= p + 4 => {
            k.set(Field::PbbIsid, be_u128(&f[p + 1..p + 4]));
        }
        0x0806 if f.len() >= p + 28 => {
            l.l3 = Some(p as u16);
            k.set(Field::ArpOp, u128::from(be16(f, p + 6)));
            k.set(Field::ArpSha, be_u128(&f[p + 8..p + 14]));
            k.set(Field::Ipv4Src, be_u128(&f[p + 14..p + 18]));
            k.set(Field::ArpTha, be_u128(&f[p + 18..p + 24]));
            k.set(Field::Ipv4Dst, be_u128(&f[p + 24..p + 28]));
        }
        0x0800 if f.len() >= p + 20 => {
            l.l3 = Some(p as u16);
            let ihl = usize::from(f[p] & 0xf) * 4;
            k.set(Field::IpDscp, u128::from(f[p + 1] >> 2));
            k.set(Field::IpEcn, u128::from(f[p + 1] & 3));
            k.set(Field::IpTtl, u128::from(f[p + 8]));
            k.set(Field::IpProto, u128::from(f[p + 9]));
            k.set(Field::Ipv4Src, be_u128(&f[p + 12..p + 16]));
            k.set(Field::Ipv4Dst, be_u128(&f[p + 16..p + 20]));
            l4(f, p + ihl, f[p + 9], &mut k, &mut l);
        }
        0x86dd if f.len() >= p + 40 => {
            l.l3 = Some(p as u16);
            let w = u32::from_be_bytes([f[p], f[p + 1], f[p + 2], f[p + 3]]);
            let tc = (w >> 20) as u8;
            k.set(Field::IpDscp, u128::from(tc >> 2));
            k.set(Field::IpEcn, u128::from(tc & 3));
            k.set(Field::Ipv6Flabel, u128::from(w & 0xfffff));
            k.set(Field::IpTtl, u128::from(f[p + 7]));
            k.set(Field::IpProto, u128::from(f[p + 6]));
            k.set(Field::Ipv6Src, be_u128(&f[p + 8..p + 24]));
            k.set(Field::Ipv6Dst, be_u128(&f[p + 24..p + 40]));
            l4(f, p + 40, f[p + 6], &mut k, &mut l);
        }
        _ => {}
    }
    (k, l)
}

fn l4(f: &[u8], at: usize, proto: u8, k: &mut FlowKey, l: &mut Layers) {
    match proto {
        6 | 17 | 132 if f.len() >= at + 4 => {
            l.l4 = Some(at as u16);
            k.set(Field::TpSrc, u128::from(be16(f, at)));
            k.set(Field::TpDst, u128::from(be16(f, at + 2)));
            if proto == 6 && f.len() >= at + 14 {
                k.set(Field::TcpFlags, u128::from(be16(f, at + 12) & 0xfff));
            }
        }
        1 | 58 if f.len() >= at + 4 => {
            l.l4 = Some(at as u16);
            k.set(Field::IcmpType, u128::from(f[at]));
            k.set(Field::IcmpCode, u128::from(f[at + 1]));
            if proto == 58 && matches!(f[at], 135 | 136) && f[at + 1] == 0 && f.len() >= at + 24 {
                k.set(Field::Ipv6NdTarget, be_u128(&f[at + 8..at + 24]));
                let mut o = at + 24;
                while o + 8 <= f.len() && f[o + 1] != 0 {
                    let len = usize::from(f[o + 1]) * 8;
                    if len == 8 && f[o] == 1 && f[at] == 135 {
                        k.set(Field::ArpSha, be_u128(&f[o + 2..o + 8]));
                    }
                    if len == 8 && f[o] == 2 && f[at] == 136 {
                        k.set(Field::ArpTha, be_u128(&f[o + 2..o + 8]));
                    }
                    o += len;
                }
            }
        }
        _ => {}
    }
}

/// A packet with the key and offsets that describe it.
pub(super) struct Case {
    pub pkt: Packet,
    pub key: FlowKey,
    pub layers: Layers,
}

impl Case {
    pub fn new(frame: &[u8]) -> Case {
        let (key, layers) = scan(frame, 7);
        Case {
            pkt: Packet::from_slice(frame),
            key,
            layers,
        }
    }

    pub fn apply(&mut self, a: &Action) -> Result<(), super::RewriteError> {
        apply(&mut self.pkt, &mut self.key, &mut self.layers, a)
    }

    /// Asserts that key and layers describe the bytes as `scan` reads them.
    pub fn assert_consistent(&self) {
        let (mut k, l) = scan(self.pkt.data(), 7);
        for f in [Field::TunnelId, Field::Metadata] {
            k.set(f, self.key.get(f));
        }
        assert_eq!(self.layers, l, "layers");
        assert_eq!(self.key, k, "key");
    }
}

/// One's-complement sum of big-endian words.
pub(super) fn ones(d: &[u8]) -> u32 {
    let mut s: u32 = 0;
    for c in d.chunks(2) {
        s += u32::from(c[0]) << 8 | u32::from(*c.get(1).unwrap_or(&0));
    }
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    s
}

/// Bitwise CRC32c (Castagnoli, reflected 0x82f63b78).
pub(super) fn crc32c_bitwise(d: &[u8]) -> u32 {
    let mut c = !0u32;
    for &b in d {
        c ^= u32::from(b);
        for _ in 0..8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0x82f6_3b78
            } else {
                c >> 1
            };
        }
    }
    !c
}

/// Verifies every checksum of an Ethernet/[VLAN]/IPv4|IPv6/L4 frame by full recomputation.
pub(super) fn verify_checksums(f: &[u8]) {
    let (k, l) = scan(f, 0);
    let Some(l3) = l.l3.map(usize::from) else {
        return;
    };
    let et = k.get(Field::EthType) as u16;
    let (end, pseudo): (usize, Vec<u8>) = match et {
        0x0800 => {
            let ihl = usize::from(f[l3] & 0xf) * 4;
            assert_eq!(ones(&f[l3..l3 + ihl]), 0xffff, "IPv4 header checksum");
            let end = l3 + usize::from(be16(f, l3 + 2));
            let mut p = f[l3 + 12..l3 + 20].to_vec();
            p.extend_from_slice(&[0, f[l3 + 9]]);
            p.extend_from_slice(&((end - l3 - ihl) as u16).to_be_bytes());
            (end, p)
        }
        0x86dd => {
            let end = l3 + 40 + usize::from(be16(f, l3 + 4));
            let mut p = f[l3 + 8..l3 + 40].to_vec();
            p.extend_from_slice(&((end - l3 - 40) as u32).to_be_bytes());
            p.extend_from_slice(&[0, 0, 0, f[l3 + 6]]);
            (end, p)
        }
        _ => return,
    };
    let Some(l4) = l.l4.map(usize::from) else {
        return;
    };
    let seg = &f[l4..end];
    let with_pseudo = || {
        let mut s = ones(&pseudo) + ones(seg);
        while s > 0xffff {
            s = (s & 0xffff) + (s >> 16);
        }
        s
    };
    match k.get(Field::IpProto) {
        6 => assert_eq!(with_pseudo(), 0xffff, "TCP checksum"),
        17 if be16(seg, 6) != 0 => assert_eq!(with_pseudo(), 0xffff, "UDP checksum"),
        58 => assert_eq!(with_pseudo(), 0xffff, "ICMPv6 checksum"),
        1 => assert_eq!(ones(seg), 0xffff, "ICMPv4 checksum"),
        132 => {
            let mut z = seg.to_vec();
            z[8..12].fill(0);
            assert_eq!(
                u32::from_le_bytes([seg[8], seg[9], seg[10], seg[11]]),
                crc32c_bitwise(&z),
                "SCTP CRC32c"
            );
        }
        _ => {}
    }
}

/// Frames the tests start from.
pub(super) mod frames {
    use super::*;

    const PAYLOAD: &[u8] = b"peregrine payload!";

    pub fn ipv4_tcp() -> Vec<u8> {
        let mut v = Vec::new();
        PacketBuilder::ethernet2(SRC_MAC, DST_MAC)
            .ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64)
            .tcp(1234, 80, 1, 1000)
            .write(&mut v, PAYLOAD)
            .unwrap();
        v
    }

    pub fn vlan_ipv4_udp() -> Vec<u8> {
        let mut v = Vec::new();
        PacketBuilder::ethernet2(SRC_MAC, DST_MAC)
            .single_vlan(etherparse::VlanId::try_new(100).unwrap())
            .ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64)
            .udp(5353, 53)
            .write(&mut v, PAYLOAD)
            .unwrap();
        v
    }

    pub fn ipv4_udp_nocsum() -> Vec<u8> {
        let mut v = Vec::new();
        PacketBuilder::ethernet2(SRC_MAC, DST_MAC)
            .ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64)
            .udp(5353, 53)
            .write(&mut v, PAYLOAD)
            .unwrap();
        v[14 + 20 + 6] = 0;
        v[14 + 20 + 7] = 0;
        v
    }

    pub fn ipv6_tcp() -> Vec<u8> {
        let mut v = Vec::new();
        PacketBuilder::ethernet2(SRC_MAC, DST_MAC)
            .ipv6(V6_SRC, V6_DST, 64)
            .tcp(1234, 443, 7, 1000)
            .write(&mut v, PAYLOAD)
            .unwrap();
        v
    }

    pub fn ipv6_udp() -> Vec<u8> {
        let mut v = Vec::new();
        PacketBuilder::ethernet2(SRC_MAC, DST_MAC)
            .ipv6(V6_SRC, V6_DST, 64)
            .udp(1000, 2000)
            .write(&mut v, PAYLOAD)
            .unwrap();
        v
    }

    pub fn ipv4_icmp() -> Vec<u8> {
        let mut v = Vec::new();
        PacketBuilder::ethernet2(SRC_MAC, DST_MAC)
            .ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64)
            .icmpv4_echo_request(1, 2)
            .write(&mut v, PAYLOAD)
            .unwrap();
        v
    }

    pub fn ipv6_icmp() -> Vec<u8> {
        let mut v = Vec::new();
        PacketBuilder::ethernet2(SRC_MAC, DST_MAC)
            .ipv6(V6_SRC, V6_DST, 64)
            .icmpv6_echo_request(1, 2)
            .write(&mut v, PAYLOAD)
            .unwrap();
        v
    }

    /// Ethernet + IPv6 + an ICMPv6 neighbor solicitation (135) or advertisement (136)
    /// with a source (1) or target (2) link-layer address option.
    pub fn nd(icmp_type: u8) -> Vec<u8> {
        let opt = if icmp_type == 135 { 1 } else { 2 };
        let mut icmp = vec![icmp_type, 0, 0, 0, 0, 0, 0, 0];
        icmp.extend_from_slice(&V6_DST);
        icmp.extend_from_slice(&[opt, 1, 0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0xee]);
        ip6_raw(58, icmp, true)
    }

    /// Ethernet + IPv6 + `l4` (next header `nh`), with the ICMPv6 checksum filled in.
    pub fn ip6_raw(nh: u8, mut l4: Vec<u8>, icmp: bool) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(&DST_MAC);
        v.extend_from_slice(&SRC_MAC);
        v.extend_from_slice(&[0x86, 0xdd, 0x60, 0, 0, 0]);
        v.extend_from_slice(&(l4.len() as u16).to_be_bytes());
        v.extend_from_slice(&[nh, 255]);
        v.extend_from_slice(&V6_SRC);
        v.extend_from_slice(&V6_DST);
        if icmp {
            let mut p = v[22..54].to_vec();
            p.extend_from_slice(&(l4.len() as u32).to_be_bytes());
            p.extend_from_slice(&[0, 0, 0, nh]);
            let mut s = ones(&p) + ones(&l4);
            while s > 0xffff {
                s = (s & 0xffff) + (s >> 16);
            }
            l4[2..4].copy_from_slice(&(!(s as u16)).to_be_bytes());
        }
        v.extend_from_slice(&l4);
        v
    }

    /// Ethernet + IPv4 + SCTP (common header and one DATA chunk), padded to 64 bytes.
    pub fn ipv4_sctp() -> Vec<u8> {
        let mut sctp = vec![0x13, 0x88, 0x0b, 0xb8, 0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 0];
        sctp.extend_from_slice(&[
            0, 3, 0, 20, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, b'a', b'b', 0, 0,
        ]);
        let crc = crc32c_bitwise(&sctp);
        sctp[8..12].copy_from_slice(&crc.to_le_bytes());
        let mut ip = etherparse::Ipv4Header::new(
            sctp.len() as u16,
            64,
            etherparse::IpNumber(132),
            [10, 0, 0, 1],
            [10, 0, 0, 2],
        )
        .unwrap();
        ip.header_checksum = ip.calc_header_checksum();
        let mut v = Vec::new();
        v.extend_from_slice(&DST_MAC);
        v.extend_from_slice(&SRC_MAC);
        v.extend_from_slice(&[0x08, 0x00]);
        ip.write(&mut v).unwrap();
        v.extend_from_slice(&sctp);
        v.resize(v.len().max(64), 0);
        v
    }

    pub fn arp() -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(&[0xff; 6]);
        v.extend_from_slice(&SRC_MAC);
        v.extend_from_slice(&[0x08, 0x06, 0, 1, 0x08, 0, 6, 4, 0, 1]);
        v.extend_from_slice(&SRC_MAC);
        v.extend_from_slice(&[10, 0, 0, 1]);
        v.extend_from_slice(&[0; 6]);
        v.extend_from_slice(&[10, 0, 0, 2]);
        v.resize(60, 0);
        v
    }

    /// Ethernet + MPLS (label 1000, TC 5, bottom of stack, TTL 33) + IPv4/TCP.
    pub fn mpls_ipv4() -> Vec<u8> {
        let inner = ipv4_tcp();
        let mut v = inner[..12].to_vec();
        v.extend_from_slice(&[0x88, 0x47]);
        let lse: u32 = (1000 << 12) | (5 << 9) | (1 << 8) | 33;
        v.extend_from_slice(&lse.to_be_bytes());
        v.extend_from_slice(&inner[14..]);
        v
    }
}
