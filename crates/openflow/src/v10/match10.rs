//! The OpenFlow 1.0 match (`ofp_match`, a fixed 40-byte structure).
//!
//! Wire form: `wildcards:u32, in_port:u16, dl_src[6], dl_dst[6], dl_vlan:u16,
//! dl_vlan_pcp:u8, pad[1], dl_type:u16, nw_tos:u8, nw_proto:u8, pad[2], nw_src:u32,
//! nw_dst:u32, tp_src:u16, tp_dst:u16`.
//!
//! [`Match`] stores the raw wildcard word and every field, wildcarded or not, so a decoded
//! match re-encodes byte for byte (the pad bytes are always written as zeros). The
//! meaning of a field depends on the wildcard bits and, as in the 1.0 specification, on
//! the fields before it: `nw_*` only mean something for IPv4 and ARP frames, `tp_*` only
//! for TCP, UDP, SCTP and ICMP. [`Match::to_oxm`] applies those rules and gives the
//! equivalent OpenFlow 1.3 match, and [`match_from_v13`] the way back.

mod from_oxm;

pub use from_oxm::match_from_v13;

use super::port::port_to_v13;
use crate::match13;
use crate::oxm::{Oxm, OFPVID_NONE, OFPVID_PRESENT};
use crate::wire::MacAddr;
use std::net::Ipv4Addr;

/// Length of `ofp_match` on the wire.
pub const MATCH_LEN: usize = 40;

/// `OFP_VLAN_NONE`: `dl_vlan` of an untagged frame.
pub const OFP_VLAN_NONE: u16 = 0xffff;

/// Ethertypes whose network-layer fields a 1.0 match understands.
pub use headers::ethertype::{ARP as ETH_TYPE_ARP, IPV4 as ETH_TYPE_IP};

/// IP protocol numbers whose transport fields a 1.0 match understands.
pub use headers::ip_proto::{
    ICMP as IP_PROTO_ICMP, SCTP as IP_PROTO_SCTP, TCP as IP_PROTO_TCP, UDP as IP_PROTO_UDP,
};

spec_table! {
    /// `ofp_flow_wildcards` bits. A set bit means the field is not matched.
    ///
    /// `NW_SRC` and `NW_DST` are 6-bit counts, not single bits: the number of low-order
    /// address bits that are wildcarded (32 or more wildcards the whole address). They
    /// take places 8 to 19, between the single bits.
    pub mod wildcards: u32 as bits {
        IN_PORT, DL_VLAN, DL_SRC, DL_DST, DL_TYPE, NW_PROTO, TP_SRC, TP_DST,
        DL_VLAN_PCP = 20, NW_TOS;
        pub const NW_SRC_SHIFT: u32 = 8;
        pub const NW_SRC_BITS: u32 = 6;
        pub const NW_SRC_MASK: u32 = ((1 << NW_SRC_BITS) - 1) << NW_SRC_SHIFT;
        pub const NW_SRC_ALL: u32 = 32 << NW_SRC_SHIFT;
        pub const NW_DST_SHIFT: u32 = 14;
        pub const NW_DST_BITS: u32 = 6;
        pub const NW_DST_MASK: u32 = ((1 << NW_DST_BITS) - 1) << NW_DST_SHIFT;
        pub const NW_DST_ALL: u32 = 32 << NW_DST_SHIFT;
        /// `OFPFW_ALL`: every field wildcarded.
        pub const ALL: u32 = (1 << 22) - 1;
    }
}

record! {
    /// An OpenFlow 1.0 `ofp_match`, lossless: the raw wildcard word and all fields.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub struct Match {
        pub wildcards: u32,
        pub in_port: u16,
        pub dl_src: MacAddr,
        pub dl_dst: MacAddr,
        /// VLAN id, or [`OFP_VLAN_NONE`] to match untagged frames.
        pub dl_vlan: u16,
        pub dl_vlan_pcp: u8 [pad 1],
        pub dl_type: u16,
        /// IP ToS byte (the DSCP in its upper six bits).
        pub nw_tos: u8,
        /// IP protocol, or the low 8 bits of the ARP opcode.
        pub nw_proto: u8 [pad 2],
        /// IPv4 source, or the ARP sender protocol address.
        pub nw_src: Ipv4Addr,
        /// IPv4 destination, or the ARP target protocol address.
        pub nw_dst: Ipv4Addr,
        /// TCP/UDP source port, or the ICMP type.
        pub tp_src: u16,
        /// TCP/UDP destination port, or the ICMP code.
        pub tp_dst: u16,
    }
}

impl Default for Match {
    /// The match-everything match: every wildcard bit set ([`wildcards::ALL`]), every
    /// field zero.
    fn default() -> Self {
        Match::all()
    }
}

impl Match {
    /// The match-everything match ([`wildcards::ALL`], fields zero).
    pub fn all() -> Self {
        Match {
            wildcards: wildcards::ALL,
            in_port: 0,
            dl_src: MacAddr::ZERO,
            dl_dst: MacAddr::ZERO,
            dl_vlan: 0,
            dl_vlan_pcp: 0,
            dl_type: 0,
            nw_tos: 0,
            nw_proto: 0,
            nw_src: Ipv4Addr::UNSPECIFIED,
            nw_dst: Ipv4Addr::UNSPECIFIED,
            tp_src: 0,
            tp_dst: 0,
        }
    }

    /// Whether the single-bit wildcard `bit` (one of the [`wildcards`] flags other than
    /// the `NW_SRC`/`NW_DST` counts) is set. For the address counts use
    /// [`Match::nw_src_prefix_len`] and [`Match::nw_dst_prefix_len`].
    pub fn is_wildcarded(&self, bit: u32) -> bool {
        self.wildcards & bit != 0
    }

    /// How many leading bits of `nw_src` are matched: 32 − the wildcarded count, 0 when
    /// 32 or more bits are wildcarded.
    pub fn nw_src_prefix_len(&self) -> u8 {
        prefix_len(self.wildcards, wildcards::NW_SRC_MASK, wildcards::NW_SRC_SHIFT)
    }

    /// How many leading bits of `nw_dst` are matched (see [`Match::nw_src_prefix_len`]).
    pub fn nw_dst_prefix_len(&self) -> u8 {
        prefix_len(self.wildcards, wildcards::NW_DST_MASK, wildcards::NW_DST_SHIFT)
    }

    /// The equivalent OpenFlow 1.3 match, fields in OXM field-number order.
    ///
    /// Wildcarded fields are omitted. `in_port` is renumbered (reserved 1.0 ports
    /// `0xff00..` become `0xffffff00..`). `dl_vlan` [`OFP_VLAN_NONE`] becomes
    /// `VLAN_VID = OFPVID_NONE` (and the PCP is ignored, an untagged frame has none); any
    /// other VID becomes `OFPVID_PRESENT | (vid & 0xfff)`; a PCP matched with the VID wildcarded
    /// adds `VLAN_VID = present/present` (any tagged frame), its 1.3 prerequisite.
    /// Network fields appear only when `dl_type` is matched and is IPv4 (ToS → DSCP,
    /// proto, masked addresses), IPv6 (ToS → DSCP, proto; 1.0's addresses are IPv4 ones)
    /// or ARP (`nw_proto` → `ARP_OP`, addresses → `ARP_SPA` / `ARP_TPA`); transport
    /// fields only when `nw_proto` is matched and is TCP, UDP, SCTP (ports) or the IP
    /// version's ICMP (`tp_src` → type, `tp_dst` → code). IPv6 is read as Open vSwitch
    /// reads a 1.0 match. Masked address values are cleared outside their mask.
    pub fn to_oxm(&self) -> match13::Match {
        use wildcards as fw;
        let mut f = Vec::new();
        if !self.is_wildcarded(fw::IN_PORT) {
            f.push(Oxm::InPort(port_to_v13(self.in_port)));
        }
        if !self.is_wildcarded(fw::DL_DST) {
            f.push(Oxm::EthDst(self.dl_dst, None));
        }
        if !self.is_wildcarded(fw::DL_SRC) {
            f.push(Oxm::EthSrc(self.dl_src, None));
        }
        let dl_type = (!self.is_wildcarded(fw::DL_TYPE)).then_some(self.dl_type);
        if let Some(t) = dl_type {
            f.push(Oxm::EthType(t));
        }
        let pcp = !self.is_wildcarded(fw::DL_VLAN_PCP);
        if !self.is_wildcarded(fw::DL_VLAN) {
            if self.dl_vlan == OFP_VLAN_NONE {
                f.push(Oxm::VlanVid(OFPVID_NONE, None));
            } else {
                f.push(Oxm::VlanVid(OFPVID_PRESENT | (self.dl_vlan & 0x0fff), None));
                if pcp {
                    f.push(Oxm::VlanPcp(self.dl_vlan_pcp & 0x07));
                }
            }
        } else if pcp {
            f.push(Oxm::VlanVid(OFPVID_PRESENT, Some(OFPVID_PRESENT)));
            f.push(Oxm::VlanPcp(self.dl_vlan_pcp & 0x07));
        }
        let proto = (!self.is_wildcarded(fw::NW_PROTO)).then_some(self.nw_proto);
        let src = masked(self.nw_src, self.nw_src_prefix_len());
        let dst = masked(self.nw_dst, self.nw_dst_prefix_len());
        match dl_type {
            Some(ETH_TYPE_IP) => {
                if !self.is_wildcarded(fw::NW_TOS) {
                    f.push(Oxm::IpDscp(self.nw_tos >> 2));
                }
                if let Some(p) = proto {
                    f.push(Oxm::IpProto(p));
                }
                if let Some((a, m)) = src {
                    f.push(Oxm::Ipv4Src(a, m));
                }
                if let Some((a, m)) = dst {
                    f.push(Oxm::Ipv4Dst(a, m));
                }
                self.push_transport(proto, false, &mut f);
            }
            Some(headers::ethertype::IPV6) => {
                if !self.is_wildcarded(fw::NW_TOS) {
                    f.push(Oxm::IpDscp(self.nw_tos >> 2));
                }
                if let Some(p) = proto {
                    f.push(Oxm::IpProto(p));
                }
                self.push_transport(proto, true, &mut f);
            }
            Some(ETH_TYPE_ARP) => {
                if let Some(p) = proto {
                    f.push(Oxm::ArpOp(u16::from(p)));
                }
                if let Some((a, m)) = src {
                    f.push(Oxm::ArpSpa(a, m));
                }
                if let Some((a, m)) = dst {
                    f.push(Oxm::ArpTpa(a, m));
                }
            }
            _ => {}
        }
        match13::Match { fields: f }
    }

    /// The transport fields of an IPv4 (`v6` false) or IPv6 packet of protocol `proto`.
    fn push_transport(&self, proto: Option<u8>, v6: bool, f: &mut Vec<Oxm>) {
        let src = (!self.is_wildcarded(wildcards::TP_SRC)).then_some(self.tp_src);
        let dst = (!self.is_wildcarded(wildcards::TP_DST)).then_some(self.tp_dst);
        let (mk_src, mk_dst): (MakeOxm, MakeOxm) = match proto {
            Some(IP_PROTO_TCP) => (Oxm::TcpSrc, Oxm::TcpDst),
            Some(IP_PROTO_UDP) => (Oxm::UdpSrc, Oxm::UdpDst),
            Some(IP_PROTO_SCTP) => (Oxm::SctpSrc, Oxm::SctpDst),
            // ICMP type and code are 8 bits; the 1.0 fields carry them in the low byte.
            Some(IP_PROTO_ICMP) if !v6 => {
                (|v| Oxm::Icmpv4Type((v & 0xff) as u8), |v| Oxm::Icmpv4Code((v & 0xff) as u8))
            }
            Some(headers::ip_proto::ICMPV6) if v6 => {
                (|v| Oxm::Icmpv6Type((v & 0xff) as u8), |v| Oxm::Icmpv6Code((v & 0xff) as u8))
            }
            _ => return,
        };
        f.extend(src.map(mk_src));
        f.extend(dst.map(mk_dst));
    }
}

// OpenFlow 1.0's match as the match of version-neutral messages (`crate::model`).
wire_by_methods!(WireMatch for Match, crate::header::OFP10_VERSION);

/// Builds the OXM of a transport field from the 16-bit 1.0 value.
type MakeOxm = fn(u16) -> Oxm;

fn prefix_len(wildcards: u32, mask: u32, shift: u32) -> u8 {
    let wild = (wildcards & mask) >> shift;
    // `wild` is at most 63 (a 6-bit field), so the subtraction cannot underflow.
    32u32.saturating_sub(wild) as u8
}

/// The address cleared outside a `/len` prefix and its mask (`None` for /32); `None`
/// altogether when nothing is matched (/0).
fn masked(addr: Ipv4Addr, len: u8) -> Option<(Ipv4Addr, Option<Ipv4Addr>)> {
    match len {
        0 => None,
        32.. => Some((addr, None)),
        n => {
            let mask = u32::MAX << (32 - u32::from(n));
            Some((Ipv4Addr::from(u32::from(addr) & mask), Some(Ipv4Addr::from(mask))))
        }
    }
}

/// proptest strategies for 1.0 matches (any bit pattern: the codec is lossless).
#[cfg(test)]
pub(crate) mod strategy {
    use super::*;
    use proptest::prelude::*;

    pub fn arb_match() -> impl Strategy<Value = Match> {
        Match::arb()
    }
}

#[cfg(test)]
mod tests {
    use super::wildcards as fw;
    use super::*;
    use crate::wire::assert_roundtrip;
    use crate::wire::{Reader, Writer};
    use proptest::prelude::*;

    fn tcp_match() -> Match {
        Match {
            wildcards: 0,
            in_port: 3,
            dl_src: MacAddr([0, 1, 2, 3, 4, 5]),
            dl_dst: MacAddr([6, 7, 8, 9, 10, 11]),
            dl_vlan: 100,
            dl_vlan_pcp: 5,
            dl_type: ETH_TYPE_IP,
            nw_tos: 0xb8,
            nw_proto: IP_PROTO_TCP,
            nw_src: Ipv4Addr::new(10, 0, 0, 1),
            nw_dst: Ipv4Addr::new(10, 0, 0, 2),
            tp_src: 1234,
            tp_dst: 80,
        }
    }

    proptest! {
        #[test]
        fn roundtrip(m in strategy::arb_match()) {
            let bytes = assert_roundtrip(&m, Match::encode, Match::decode);
            prop_assert_eq!(bytes.len(), MATCH_LEN);
        }

        #[test]
        fn to_oxm_never_panics_and_has_no_duplicates(m in strategy::arb_match()) {
            let fields = m.to_oxm().fields;
            let mut kinds: Vec<_> = fields.iter().map(std::mem::discriminant).collect();
            let n = kinds.len();
            kinds.dedup();
            prop_assert_eq!(kinds.len(), n);
        }
    }

    #[test]
    fn exact_bytes() {
        let mut w = Writer::new();
        tcp_match().encode(&mut w);
        let want: [u8; 40] = [
            0, 0, 0, 0, 0, 3, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0, 100, 5, 0, 0x08, 0x00, 0xb8,
            6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2, 0x04, 0xd2, 0, 80,
        ];
        assert_eq!(w.buf, want);
    }

    #[test]
    fn truncated_errors() {
        let mut w = Writer::new();
        tcp_match().encode(&mut w);
        for n in 0..MATCH_LEN {
            let e = Match::decode(&mut Reader::new(&w.buf[..n])).unwrap_err();
            assert_eq!(e.kind, crate::ErrorKind::BAD_REQUEST_BAD_LEN);
        }
    }

    #[test]
    fn pads_are_written_as_zero() {
        let mut w = Writer::new();
        tcp_match().encode(&mut w);
        w.buf[21] = 0xaa;
        w.buf[26] = 0xbb;
        w.buf[27] = 0xcc;
        let m = Match::decode(&mut Reader::new(&w.buf)).unwrap();
        assert_eq!(m, tcp_match());
        let mut again = Writer::new();
        m.encode(&mut again);
        assert_eq!(again.buf[21], 0);
        assert_eq!(&again.buf[26..28], &[0, 0]);
    }

    #[test]
    fn prefix_lengths_and_bits() {
        let mut m = Match::all();
        assert_eq!(m.nw_src_prefix_len(), 0);
        assert_eq!(m.nw_dst_prefix_len(), 0);
        m.wildcards = 8 << fw::NW_SRC_SHIFT | 63 << fw::NW_DST_SHIFT | fw::TP_DST;
        assert_eq!(m.nw_src_prefix_len(), 24);
        assert_eq!(m.nw_dst_prefix_len(), 0);
        assert!(m.is_wildcarded(fw::TP_DST));
        assert!(!m.is_wildcarded(fw::TP_SRC));
        m.wildcards = 0;
        assert_eq!(m.nw_src_prefix_len(), 32);
        m.wildcards = 31 << fw::NW_DST_SHIFT;
        assert_eq!(m.nw_dst_prefix_len(), 1);
        assert_eq!(m.nw_src_prefix_len(), 32);
    }

    #[test]
    fn wildcard_all_is_empty_match() {
        let m = Match { wildcards: fw::ALL, ..tcp_match() };
        assert!(m.to_oxm().fields.is_empty());
        assert_eq!(Match::default(), Match::all());
        assert!(Match::all().to_oxm().fields.is_empty());
    }

    #[test]
    fn exact_tcp_match_converts_every_field() {
        let fields = tcp_match().to_oxm().fields;
        assert_eq!(
            fields,
            vec![
                Oxm::InPort(3),
                Oxm::EthDst(MacAddr([6, 7, 8, 9, 10, 11]), None),
                Oxm::EthSrc(MacAddr([0, 1, 2, 3, 4, 5]), None),
                Oxm::EthType(ETH_TYPE_IP),
                Oxm::VlanVid(OFPVID_PRESENT | 100, None),
                Oxm::VlanPcp(5),
                Oxm::IpDscp(0xb8 >> 2),
                Oxm::IpProto(6),
                Oxm::Ipv4Src(Ipv4Addr::new(10, 0, 0, 1), None),
                Oxm::Ipv4Dst(Ipv4Addr::new(10, 0, 0, 2), None),
                Oxm::TcpSrc(1234),
                Oxm::TcpDst(80),
            ]
        );
    }

    #[test]
    fn nw_src_slash_24() {
        let m = Match {
            wildcards: fw::ALL & !fw::DL_TYPE & !fw::NW_SRC_MASK | 8 << fw::NW_SRC_SHIFT,
            dl_type: ETH_TYPE_IP,
            nw_src: Ipv4Addr::new(192, 168, 7, 99),
            ..Match::all()
        };
        assert_eq!(m.nw_src_prefix_len(), 24);
        assert_eq!(
            m.to_oxm().fields,
            vec![
                Oxm::EthType(ETH_TYPE_IP),
                Oxm::Ipv4Src(Ipv4Addr::new(192, 168, 7, 0), Some(Ipv4Addr::new(255, 255, 255, 0))),
            ]
        );
    }

    #[test]
    fn untagged_vlan_ignores_pcp() {
        let m = Match {
            wildcards: fw::ALL & !fw::DL_VLAN & !fw::DL_VLAN_PCP,
            dl_vlan: OFP_VLAN_NONE,
            dl_vlan_pcp: 3,
            ..Match::all()
        };
        assert_eq!(m.to_oxm().fields, vec![Oxm::VlanVid(OFPVID_NONE, None)]);
    }

    #[test]
    fn pcp_without_vid_requires_a_tag() {
        let m = Match { wildcards: fw::ALL & !fw::DL_VLAN_PCP, dl_vlan_pcp: 6, ..Match::all() };
        assert_eq!(
            m.to_oxm().fields,
            vec![Oxm::VlanVid(OFPVID_PRESENT, Some(OFPVID_PRESENT)), Oxm::VlanPcp(6)]
        );
    }

    #[test]
    fn arp_fields_map_to_arp_oxms() {
        let m = Match {
            wildcards: fw::ALL
                & !(fw::DL_TYPE
                    | fw::NW_PROTO
                    | fw::NW_SRC_MASK
                    | fw::NW_DST_MASK
                    | fw::NW_TOS
                    | fw::TP_SRC),
            dl_type: ETH_TYPE_ARP,
            nw_proto: 2,
            nw_src: Ipv4Addr::new(10, 1, 1, 1),
            nw_dst: Ipv4Addr::new(10, 1, 1, 2),
            ..tcp_match()
        };
        assert_eq!(
            m.to_oxm().fields,
            vec![
                Oxm::EthType(ETH_TYPE_ARP),
                Oxm::ArpOp(2),
                Oxm::ArpSpa(Ipv4Addr::new(10, 1, 1, 1), None),
                Oxm::ArpTpa(Ipv4Addr::new(10, 1, 1, 2), None),
            ]
        );
    }

    #[test]
    fn network_fields_need_ip_or_arp_dl_type() {
        // dl_type wildcarded: every network and transport field is dropped.
        let m = Match { wildcards: fw::DL_TYPE, ..tcp_match() };
        let fields = m.to_oxm().fields;
        assert!(!fields.iter().any(|f| matches!(
            f,
            Oxm::IpProto(_) | Oxm::Ipv4Src(..) | Oxm::TcpSrc(_) | Oxm::IpDscp(_)
        )));
        assert!(fields.contains(&Oxm::EthSrc(MacAddr([0, 1, 2, 3, 4, 5]), None)));
        // IPv6 dl_type, as Open vSwitch reads it: ToS, protocol and ports, not the
        // (IPv4) addresses; ICMPv6's type and code.
        let m = Match { dl_type: 0x86dd, ..tcp_match() };
        let fields = m.to_oxm().fields;
        assert!(fields.contains(&Oxm::EthType(0x86dd)));
        let l3: Vec<&Oxm> =
            fields.iter().skip_while(|f| !matches!(f, Oxm::VlanPcp(_))).skip(1).collect();
        assert_eq!(
            l3,
            [&Oxm::IpDscp(m.nw_tos >> 2), &Oxm::IpProto(6), &Oxm::TcpSrc(1234), &Oxm::TcpDst(80)]
        );
        let icmp6 = Match { dl_type: 0x86dd, nw_proto: 58, ..tcp_match() }.to_oxm().fields;
        assert!(icmp6.ends_with(&[Oxm::Icmpv6Type(1234u16 as u8), Oxm::Icmpv6Code(80)]));
        let icmp4_in_v6 = Match { dl_type: 0x86dd, nw_proto: 1, ..tcp_match() }.to_oxm().fields;
        assert_eq!(icmp4_in_v6.last(), Some(&Oxm::IpProto(1)));
    }

    #[test]
    fn transport_ports_only_with_known_proto() {
        let with =
            |wildcards, nw_proto| Match { wildcards, nw_proto, ..tcp_match() }.to_oxm().fields;
        assert!(with(0, 6).contains(&Oxm::TcpDst(80)));
        let udp = with(0, 17);
        assert!(udp.contains(&Oxm::UdpSrc(1234)) && udp.contains(&Oxm::UdpDst(80)));
        assert!(with(0, 132).contains(&Oxm::SctpSrc(1234)));
        let icmp = with(0, 1);
        assert!(icmp.contains(&Oxm::Icmpv4Type((1234u16 & 0xff) as u8)));
        assert!(icmp.contains(&Oxm::Icmpv4Code(80)));
        // nw_proto wildcarded: no transport fields even though tp_* are matched.
        let wild = with(fw::NW_PROTO, 6);
        assert!(!wild.iter().any(|f| matches!(f, Oxm::TcpSrc(_) | Oxm::TcpDst(_))));
        assert!(!wild.iter().any(|f| matches!(f, Oxm::IpProto(_))));
        // Another protocol: no transport fields.
        let gre = with(0, 47);
        assert_eq!(gre.last(), Some(&Oxm::Ipv4Dst(Ipv4Addr::new(10, 0, 0, 2), None)));
        // TP_SRC wildcarded alone: only the destination port.
        let dst_only = with(fw::TP_SRC, 6);
        assert!(!dst_only.contains(&Oxm::TcpSrc(1234)));
        assert!(dst_only.contains(&Oxm::TcpDst(80)));
    }

    #[test]
    fn reserved_in_port_is_renumbered() {
        let m = Match { wildcards: fw::ALL & !fw::IN_PORT, in_port: 0xfffe, ..Match::all() };
        assert_eq!(m.to_oxm().fields, vec![Oxm::InPort(0xffff_fffe)]);
    }
}
