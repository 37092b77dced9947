//! Tests of the rewrites, checked against etherparse and against straightforward
//! full checksum computations written here.
//!
//! Every case starts from the key and offsets that [`crate::parse::parse`] gives for the
//! frame, and after each rewrite checks that parsing the new bytes gives back exactly the
//! key and offsets `apply` left (apart from the fields that are not packet bytes).

mod conditional;
mod offload_note;
mod push_pop;
mod random;
mod set_field;
mod ttl;

use super::apply;
use crate::action::Action;
use crate::key::{Field, FlowKey};
use crate::packet::{Layers, Packet};
use crate::parse::parse;
use etherparse::PacketBuilder;

pub(super) const SRC_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x01];
pub(super) const DST_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x02];
pub(super) const V6_SRC: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
pub(super) const V6_DST: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];

fn be16(d: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([d[at], d[at + 1]])
}

/// What the parser makes of `f`: the key and the offsets.
pub(super) fn parsed(f: &[u8], in_port: u32) -> (FlowKey, Layers) {
    let mut k = FlowKey::ZERO;
    let out = parse(f, in_port, &mut k);
    (k, out.layers)
}

/// A packet with the key and offsets that describe it.
pub(super) struct Case {
    pub pkt: Packet,
    pub key: FlowKey,
    pub layers: Layers,
}

impl Case {
    pub fn new(frame: &[u8]) -> Case {
        let (key, layers) = parsed(frame, 7);
        Case { pkt: Packet::from_slice(frame), key, layers }
    }

    pub fn apply(&mut self, a: &Action) -> Result<(), super::RewriteError> {
        apply(&mut self.pkt, &mut self.key, &mut self.layers, a)
    }

    /// Asserts that key and layers describe the bytes as the parser reads them.
    pub fn assert_consistent(&self) {
        let (mut k, l) = parsed(self.pkt.data(), 7);
        for f in [Field::InPhyPort, Field::TunnelId, Field::Metadata] {
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
            c = if c & 1 != 0 { (c >> 1) ^ 0x82f6_3b78 } else { c >> 1 };
        }
    }
    !c
}

/// Verifies every checksum of an Ethernet/[VLAN]/IPv4|IPv6/L4 frame by full recomputation
/// (the L4 checksum of non-first fragments is not checked: it covers other fragments).
pub(super) fn verify_checksums(f: &[u8]) {
    let (k, l) = parsed(f, 0);
    let Some(l3) = l.l3.map(usize::from) else {
        return;
    };
    let et = k.get(Field::EthType) as u16;
    let proto = k.get(Field::IpProto) as u8;
    let end = match et {
        0x0800 => {
            let ihl = usize::from(f[l3] & 0xf) * 4;
            assert_eq!(ones(&f[l3..l3 + ihl]), 0xffff, "IPv4 header checksum");
            l3 + usize::from(be16(f, l3 + 2))
        }
        0x86dd => l3 + 40 + usize::from(be16(f, l3 + 4)),
        _ => return,
    };
    let Some(l4) = l.l4.map(usize::from) else {
        return;
    };
    // The pseudo-header: addresses, upper-layer length and protocol.
    let mut pseudo = match et {
        0x0800 => f[l3 + 12..l3 + 20].to_vec(),
        _ => f[l3 + 8..l3 + 40].to_vec(),
    };
    pseudo.extend_from_slice(&((end - l4) as u32).to_be_bytes());
    pseudo.extend_from_slice(&[0, 0, 0, proto]);
    let seg = &f[l4..end];
    let with_pseudo = || {
        let mut s = ones(&pseudo) + ones(seg);
        while s > 0xffff {
            s = (s & 0xffff) + (s >> 16);
        }
        s
    };
    match proto {
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

    /// The frame from `SRC_MAC` to `DST_MAC` that the etherparse builder steps written
    /// after `ethernet2(..)` make, with the test payload.
    macro_rules! built {
        ($($step:tt)*) => {{
            let mut v = Vec::new();
            PacketBuilder::ethernet2(SRC_MAC, DST_MAC)
                $($step)*
                .write(&mut v, PAYLOAD)
                .unwrap();
            v
        }};
    }

    pub fn ipv4_tcp() -> Vec<u8> {
        built!(.ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64).tcp(1234, 80, 1, 1000))
    }

    pub fn vlan_ipv4_udp() -> Vec<u8> {
        let vid = etherparse::VlanId::try_new(100).unwrap();
        built!(.single_vlan(vid).ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64).udp(5353, 53))
    }

    pub fn ipv4_udp_nocsum() -> Vec<u8> {
        let mut v = built!(.ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64).udp(5353, 53));
        v[14 + 20 + 6] = 0;
        v[14 + 20 + 7] = 0;
        v
    }

    pub fn ipv6_tcp() -> Vec<u8> {
        built!(.ipv6(V6_SRC, V6_DST, 64).tcp(1234, 443, 7, 1000))
    }

    pub fn ipv6_udp() -> Vec<u8> {
        built!(.ipv6(V6_SRC, V6_DST, 64).udp(1000, 2000))
    }

    pub fn ipv4_icmp() -> Vec<u8> {
        built!(.ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64).icmpv4_echo_request(1, 2))
    }

    pub fn ipv6_icmp() -> Vec<u8> {
        built!(.ipv6(V6_SRC, V6_DST, 64).icmpv6_echo_request(1, 2))
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
    pub fn ip6_raw(nh: u8, l4: Vec<u8>, icmp: bool) -> Vec<u8> {
        ip6_ext(nh, &[], nh, l4, icmp.then_some(2))
    }

    /// Ethernet + IPv6 (first next header `nh`) + extension headers `ext` + an upper-layer
    /// packet `l4` of protocol `upper`, whose checksum at `csum` (if any) is filled in.
    pub fn ip6_ext(nh: u8, ext: &[u8], upper: u8, mut l4: Vec<u8>, csum: Option<usize>) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(&DST_MAC);
        v.extend_from_slice(&SRC_MAC);
        v.extend_from_slice(&[0x86, 0xdd, 0x60, 0, 0, 0]);
        v.extend_from_slice(&((ext.len() + l4.len()) as u16).to_be_bytes());
        v.extend_from_slice(&[nh, 255]);
        v.extend_from_slice(&V6_SRC);
        v.extend_from_slice(&V6_DST);
        if let Some(at) = csum {
            let mut p = v[22..54].to_vec();
            p.extend_from_slice(&(l4.len() as u32).to_be_bytes());
            p.extend_from_slice(&[0, 0, 0, upper]);
            l4[at..at + 2].fill(0);
            let mut s = ones(&p) + ones(&l4);
            while s > 0xffff {
                s = (s & 0xffff) + (s >> 16);
            }
            l4[at..at + 2].copy_from_slice(&(!(s as u16)).to_be_bytes());
        }
        v.extend_from_slice(ext);
        v.extend_from_slice(&l4);
        v
    }

    /// IPv6 with hop-by-hop and destination options headers before TCP.
    pub fn ipv6_ext_tcp() -> Vec<u8> {
        let ext = [60, 0, 1, 4, 0, 0, 0, 0, 6, 0, 1, 4, 0, 0, 0, 0];
        let mut tcp = vec![0x04, 0xd2, 0x01, 0xbb, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x18];
        tcp.extend_from_slice(&[0x10, 0, 0, 0, 0, 0]);
        tcp.extend_from_slice(b"ext payload");
        ip6_ext(0, &ext, 6, tcp, Some(16))
    }

    /// IPv6 first fragment (fragment header, more fragments) of a UDP datagram.
    pub fn ipv6_frag_udp() -> Vec<u8> {
        let ext = [17, 0, 0, 1, 0xca, 0xfe, 0xba, 0xbe];
        let mut udp = vec![0x03, 0xe8, 0x07, 0xd0, 0, 16, 0, 0];
        udp.extend_from_slice(b"fragment");
        ip6_ext(44, &ext, 17, udp, Some(6))
    }

    /// ND solicitation with a code other than 0: not read as ND.
    pub fn nd_bad_code() -> Vec<u8> {
        let mut icmp = vec![135, 1, 0, 0, 0, 0, 0, 0];
        icmp.extend_from_slice(&V6_DST);
        icmp.extend_from_slice(&[1, 1, 0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0xee]);
        ip6_raw(58, icmp, true)
    }

    /// ND solicitation carrying a target link-layer option before its source one.
    pub fn nd_two_options() -> Vec<u8> {
        let mut icmp = vec![135, 0, 0, 0, 0, 0, 0, 0];
        icmp.extend_from_slice(&V6_DST);
        icmp.extend_from_slice(&[2, 1, 0x02, 0x11, 0x11, 0x11, 0x11, 0x11]);
        icmp.extend_from_slice(&[1, 1, 0x02, 0x22, 0x22, 0x22, 0x22, 0x22]);
        ip6_raw(58, icmp, true)
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

    /// `frame` with a 4-byte tag (`tpid`, `tci`) inserted after the MACs.
    pub fn tagged(frame: &[u8], tpid: u16, tci: u16) -> Vec<u8> {
        let mut v = frame[..12].to_vec();
        v.extend_from_slice(&tpid.to_be_bytes());
        v.extend_from_slice(&tci.to_be_bytes());
        v.extend_from_slice(&frame[12..]);
        v
    }

    /// 802.1ad: an S-tag (0x88a8) outside a C-tag, IPv4/UDP.
    pub fn qinq_ipv4_udp() -> Vec<u8> {
        tagged(&vlan_ipv4_udp(), 0x88a8, 0x6005)
    }

    /// Three tags (S, C, C): the parser reads two and stops at the third TPID.
    pub fn three_tags() -> Vec<u8> {
        tagged(&tagged(&vlan_ipv4_udp(), 0x8100, 0x0007), 0x88a8, 0x6005)
    }

    /// A single S-tag (0x88a8) whose inner ethertype is 0x88a8 again.
    pub fn stag_stag() -> Vec<u8> {
        tagged(&tagged(&ipv4_tcp(), 0x88a8, 9), 0x88a8, 3)
    }

    /// 802.3 with an LLC header: a length where the ethertype would be.
    pub fn llc() -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(&DST_MAC);
        v.extend_from_slice(&SRC_MAC);
        v.extend_from_slice(&[0, 46, 0x42, 0x42, 0x03]);
        v.resize(60, 0);
        v
    }

    /// 802.1ah: backbone MACs, I-TAG (I-PCP 3, I-SID 0x0abcde), then a tagged customer
    /// frame.
    pub fn pbb() -> Vec<u8> {
        let customer = vlan_ipv4_udp();
        let mut v = vec![0x02, 0xbb, 0, 0, 0, 0x02, 0x02, 0xbb, 0, 0, 0, 0x01];
        v.extend_from_slice(&[0x88, 0xe7, 0x60, 0x0a, 0xbc, 0xde]);
        v.extend_from_slice(&customer);
        v
    }

    /// Two MPLS label stack entries over IPv4/TCP.
    pub fn mpls2_ipv4() -> Vec<u8> {
        let inner = mpls_ipv4();
        let mut v = inner[..14].to_vec();
        let lse: u32 = (77 << 12) | (2 << 9) | 50;
        v.extend_from_slice(&lse.to_be_bytes());
        v.extend_from_slice(&inner[14..]);
        v
    }

    /// IPv4 with one option word (IHL 6) carrying UDP.
    pub fn ipv4_options_udp() -> Vec<u8> {
        let b = ipv4_udp_nocsum();
        let mut v = b[..14].to_vec();
        let mut ip = b[14..34].to_vec();
        ip[0] = 0x46;
        let total = be16(&ip, 2) + 4;
        ip[2..4].copy_from_slice(&total.to_be_bytes());
        ip.extend_from_slice(&[1, 1, 1, 0]);
        ip[10..12].fill(0);
        let c = !(ones(&ip) as u16);
        ip[10..12].copy_from_slice(&c.to_be_bytes());
        v.extend_from_slice(&ip);
        v.extend_from_slice(&b[34..]);
        v
    }

    /// A later IPv4 fragment (offset 8 bytes) of a TCP segment: no L4 header.
    pub fn ipv4_later_fragment() -> Vec<u8> {
        let mut v = ipv4_tcp();
        v[20..22].copy_from_slice(&[0x00, 0x01]);
        v[24..26].fill(0);
        let c = !(ones(&v[14..34]) as u16);
        v[24..26].copy_from_slice(&c.to_be_bytes());
        v
    }

    /// ARP for a non-Ethernet hardware type: the parser leaves the ARP fields zero.
    pub fn arp_not_ethernet() -> Vec<u8> {
        let mut v = arp();
        v[15] = 6;
        v
    }

    /// Every frame above: valid packets of every kind the parser knows.
    pub fn all() -> Vec<Vec<u8>> {
        vec![
            ipv4_tcp(),
            vlan_ipv4_udp(),
            ipv4_udp_nocsum(),
            ipv6_tcp(),
            ipv6_udp(),
            ipv4_icmp(),
            ipv6_icmp(),
            nd(135),
            nd(136),
            nd_bad_code(),
            nd_two_options(),
            ipv6_ext_tcp(),
            ipv6_frag_udp(),
            ipv4_sctp(),
            arp(),
            arp_not_ethernet(),
            mpls_ipv4(),
            mpls2_ipv4(),
            qinq_ipv4_udp(),
            three_tags(),
            stag_stag(),
            llc(),
            pbb(),
            ipv4_options_udp(),
            ipv4_later_fragment(),
        ]
    }
}
