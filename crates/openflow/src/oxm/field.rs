//! The OpenFlow 1.3.5 table of basic OXM fields: number, wire width, maskability and
//! spec name of every `OFPXMT_OFB_*` field (spec §7.2.3.7, table 11), and the one 1.4
//! adds (`PBB_UCA`, 41).

use super::OxmField;

impl OxmField {
    /// Every basic field of OpenFlow 1.3, in field-number order (`ALL[n] as u8 == n`).
    pub const ALL: [OxmField; 40] = [
        OxmField::InPort,
        OxmField::InPhyPort,
        OxmField::Metadata,
        OxmField::EthDst,
        OxmField::EthSrc,
        OxmField::EthType,
        OxmField::VlanVid,
        OxmField::VlanPcp,
        OxmField::IpDscp,
        OxmField::IpEcn,
        OxmField::IpProto,
        OxmField::Ipv4Src,
        OxmField::Ipv4Dst,
        OxmField::TcpSrc,
        OxmField::TcpDst,
        OxmField::UdpSrc,
        OxmField::UdpDst,
        OxmField::SctpSrc,
        OxmField::SctpDst,
        OxmField::Icmpv4Type,
        OxmField::Icmpv4Code,
        OxmField::ArpOp,
        OxmField::ArpSpa,
        OxmField::ArpTpa,
        OxmField::ArpSha,
        OxmField::ArpTha,
        OxmField::Ipv6Src,
        OxmField::Ipv6Dst,
        OxmField::Ipv6Flabel,
        OxmField::Icmpv6Type,
        OxmField::Icmpv6Code,
        OxmField::Ipv6NdTarget,
        OxmField::Ipv6NdSll,
        OxmField::Ipv6NdTll,
        OxmField::MplsLabel,
        OxmField::MplsTc,
        OxmField::MplsBos,
        OxmField::PbbIsid,
        OxmField::TunnelId,
        OxmField::Ipv6Exthdr,
    ];

    /// Every basic field of OpenFlow 1.4: 1.3's, then `PBB_UCA`.
    pub const ALL14: [OxmField; 41] = {
        let mut all = [OxmField::PbbUca; 41];
        let mut i = 0;
        while i < 40 {
            all[i] = OxmField::ALL[i];
            i += 1;
        }
        all
    };

    /// The field with wire number `n`, if it is one of the basic fields of 1.3 or 1.4.
    pub fn from_u8(n: u8) -> Option<OxmField> {
        match n {
            41 => Some(OxmField::PbbUca),
            _ => OxmField::ALL.get(usize::from(n)).copied(),
        }
    }

    /// Width of the value on the wire in bytes (the mask, when present, is as wide).
    pub fn value_len(self) -> usize {
        use OxmField as F;
        match self {
            F::VlanPcp
            | F::IpDscp
            | F::IpEcn
            | F::IpProto
            | F::Icmpv4Type
            | F::Icmpv4Code
            | F::Icmpv6Type
            | F::Icmpv6Code
            | F::MplsTc
            | F::MplsBos
            | F::PbbUca => 1,
            F::EthType
            | F::VlanVid
            | F::TcpSrc
            | F::TcpDst
            | F::UdpSrc
            | F::UdpDst
            | F::SctpSrc
            | F::SctpDst
            | F::ArpOp
            | F::Ipv6Exthdr => 2,
            F::PbbIsid => 3,
            F::InPort
            | F::InPhyPort
            | F::Ipv4Src
            | F::Ipv4Dst
            | F::ArpSpa
            | F::ArpTpa
            | F::Ipv6Flabel
            | F::MplsLabel => 4,
            F::EthDst | F::EthSrc | F::ArpSha | F::ArpTha | F::Ipv6NdSll | F::Ipv6NdTll => 6,
            F::Metadata | F::TunnelId => 8,
            F::Ipv6Src | F::Ipv6Dst | F::Ipv6NdTarget => 16,
        }
    }

    /// Whether the spec lets the field carry a mask.
    pub fn maskable(self) -> bool {
        use OxmField as F;
        matches!(
            self,
            F::Metadata
                | F::EthDst
                | F::EthSrc
                | F::VlanVid
                | F::Ipv4Src
                | F::Ipv4Dst
                | F::ArpSpa
                | F::ArpTpa
                | F::ArpSha
                | F::ArpTha
                | F::Ipv6Src
                | F::Ipv6Dst
                | F::Ipv6Flabel
                | F::PbbIsid
                | F::TunnelId
                | F::Ipv6Exthdr
        )
    }

    /// The spec's name without its `OXM_OF_` prefix, in lower case (`OXM_OF_ETH_DST` is
    /// `"eth_dst"`).
    pub fn name(self) -> &'static str {
        use OxmField as F;
        match self {
            F::InPort => "in_port",
            F::InPhyPort => "in_phy_port",
            F::Metadata => "metadata",
            F::EthDst => "eth_dst",
            F::EthSrc => "eth_src",
            F::EthType => "eth_type",
            F::VlanVid => "vlan_vid",
            F::VlanPcp => "vlan_pcp",
            F::IpDscp => "ip_dscp",
            F::IpEcn => "ip_ecn",
            F::IpProto => "ip_proto",
            F::Ipv4Src => "ipv4_src",
            F::Ipv4Dst => "ipv4_dst",
            F::TcpSrc => "tcp_src",
            F::TcpDst => "tcp_dst",
            F::UdpSrc => "udp_src",
            F::UdpDst => "udp_dst",
            F::SctpSrc => "sctp_src",
            F::SctpDst => "sctp_dst",
            F::Icmpv4Type => "icmpv4_type",
            F::Icmpv4Code => "icmpv4_code",
            F::ArpOp => "arp_op",
            F::ArpSpa => "arp_spa",
            F::ArpTpa => "arp_tpa",
            F::ArpSha => "arp_sha",
            F::ArpTha => "arp_tha",
            F::Ipv6Src => "ipv6_src",
            F::Ipv6Dst => "ipv6_dst",
            F::Ipv6Flabel => "ipv6_flabel",
            F::Icmpv6Type => "icmpv6_type",
            F::Icmpv6Code => "icmpv6_code",
            F::Ipv6NdTarget => "ipv6_nd_target",
            F::Ipv6NdSll => "ipv6_nd_sll",
            F::Ipv6NdTll => "ipv6_nd_tll",
            F::MplsLabel => "mpls_label",
            F::MplsTc => "mpls_tc",
            F::MplsBos => "mpls_bos",
            F::PbbIsid => "pbb_isid",
            F::TunnelId => "tunnel_id",
            F::Ipv6Exthdr => "ipv6_exthdr",
            F::PbbUca => "pbb_uca",
        }
    }

    /// The field whose [`name`](Self::name) is `s`.
    pub fn from_name(s: &str) -> Option<OxmField> {
        OxmField::ALL14.into_iter().find(|f| f.name() == s)
    }
}
