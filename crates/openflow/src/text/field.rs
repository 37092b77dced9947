//! Match fields in ovs-ofctl text: names (Open vSwitch's and the OpenFlow 1.3 ones),
//! values, masks, protocol shorthands (`ip`, `tcp6`, ...), prerequisites, and printing in
//! the order and spelling of Open vSwitch's `match_format`.
//!
//! Parsing collects the fields first and resolves the context-dependent ones at the end,
//! as Open vSwitch does: `tp_src` becomes `tcp_src`, `udp_src` or `sctp_src` by the
//! `ip_proto`; `icmp_type` becomes ICMPv4 or ICMPv6 by the `eth_type`; `nw_src`/`nw_dst`
//! are `arp_spa`/`arp_tpa` and `nw_proto` is `arp_op` in an ARP/RARP match. All VLAN forms
//! (`dl_vlan`, `dl_vlan_pcp`, `vlan_vid`, `vlan_pcp`, `vlan_tci`) merge into one 802.1Q TCI
//! value/mask that is then expressed as `VLAN_VID` and `VLAN_PCP` OXMs. A later setting of
//! a field replaces an earlier one. The resulting [`Match`] holds its OXMs sorted by field
//! number (the canonical order; prerequisites precede the fields that need them). Masks
//! are normalised: value bits outside the mask are cleared, an all-ones mask is dropped,
//! an all-zeros mask drops the field (it matches everything).

use super::error::{Span, TextError};
use super::value::*;
use crate::match13::Match;
use crate::oxm::{Oxm, OxmField};
use crate::wire::MacAddr;
use std::collections::BTreeMap;
use std::net::{Ipv4Addr, Ipv6Addr};

pub(crate) use headers::ethertype::{
    ARP as ETH_ARP, IPV4 as ETH_IP, IPV6 as ETH_IPV6, MPLS as ETH_MPLS, MPLS_MCAST as ETH_MPLSM,
    PBB as ETH_PBB, RARP as ETH_RARP,
};
pub(crate) use headers::ip_proto::{
    ICMP as PROTO_ICMP, ICMPV6 as PROTO_ICMPV6, IGMP as PROTO_IGMP, SCTP as PROTO_SCTP,
    TCP as PROTO_TCP, UDP as PROTO_UDP,
};

/// The protocol shorthands: name, eth_type, ip_proto.
pub(crate) const SHORTHANDS: [(&str, u16, Option<u8>); 16] = [
    ("ip", ETH_IP, None),
    ("ipv6", ETH_IPV6, None),
    ("icmp", ETH_IP, Some(PROTO_ICMP)),
    ("icmp6", ETH_IPV6, Some(PROTO_ICMPV6)),
    ("igmp", ETH_IP, Some(PROTO_IGMP)),
    ("tcp", ETH_IP, Some(PROTO_TCP)),
    ("tcp6", ETH_IPV6, Some(PROTO_TCP)),
    ("udp", ETH_IP, Some(PROTO_UDP)),
    ("udp6", ETH_IPV6, Some(PROTO_UDP)),
    ("sctp", ETH_IP, Some(PROTO_SCTP)),
    ("sctp6", ETH_IPV6, Some(PROTO_SCTP)),
    ("arp", ETH_ARP, None),
    ("rarp", ETH_RARP, None),
    ("mpls", ETH_MPLS, None),
    ("mplsm", ETH_MPLSM, None),
    ("pbb", ETH_PBB, None),
];

/// A field name as written, before context resolves it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FieldName {
    InPort,
    InPhyPort,
    Metadata,
    EthSrc,
    EthDst,
    EthType,
    DlVlan,
    DlVlanPcp,
    VlanVid,
    VlanPcp,
    VlanTci,
    IpDscp,
    NwTos,
    IpEcn,
    NwProto,
    NwSrc,
    NwDst,
    TpSrc,
    TpDst,
    TcpSrc,
    TcpDst,
    UdpSrc,
    UdpDst,
    SctpSrc,
    SctpDst,
    IcmpType,
    IcmpCode,
    Icmpv6Type,
    Icmpv6Code,
    ArpOp,
    ArpSpa,
    ArpTpa,
    ArpSha,
    ArpTha,
    Ipv6Src,
    Ipv6Dst,
    Ipv6Label,
    NdTarget,
    NdSll,
    NdTll,
    MplsLabel,
    MplsTc,
    MplsBos,
    PbbIsid,
    TunId,
    Ipv6Exthdr,
    PbbUca,
}

/// Looks up a field by any of its names.
pub(crate) fn field_by_name(name: &str) -> Option<FieldName> {
    use FieldName::*;
    Some(match name {
        "in_port" => InPort,
        "in_phy_port" => InPhyPort,
        "metadata" => Metadata,
        "dl_src" | "eth_src" => EthSrc,
        "dl_dst" | "eth_dst" => EthDst,
        "dl_type" | "eth_type" => EthType,
        "dl_vlan" => DlVlan,
        "dl_vlan_pcp" => DlVlanPcp,
        "vlan_vid" => VlanVid,
        "vlan_pcp" => VlanPcp,
        "vlan_tci" => VlanTci,
        "ip_dscp" => IpDscp,
        "nw_tos" => NwTos,
        "nw_ecn" | "ip_ecn" => IpEcn,
        "nw_proto" | "ip_proto" => NwProto,
        "nw_src" | "ip_src" => NwSrc,
        "nw_dst" | "ip_dst" => NwDst,
        "tp_src" => TpSrc,
        "tp_dst" => TpDst,
        "tcp_src" => TcpSrc,
        "tcp_dst" => TcpDst,
        "udp_src" => UdpSrc,
        "udp_dst" => UdpDst,
        "sctp_src" => SctpSrc,
        "sctp_dst" => SctpDst,
        "icmp_type" | "icmpv4_type" => IcmpType,
        "icmp_code" | "icmpv4_code" => IcmpCode,
        "icmpv6_type" => Icmpv6Type,
        "icmpv6_code" => Icmpv6Code,
        "arp_op" => ArpOp,
        "arp_spa" => ArpSpa,
        "arp_tpa" => ArpTpa,
        "arp_sha" => ArpSha,
        "arp_tha" => ArpTha,
        "ipv6_src" => Ipv6Src,
        "ipv6_dst" => Ipv6Dst,
        "ipv6_label" => Ipv6Label,
        "nd_target" => NdTarget,
        "nd_sll" => NdSll,
        "nd_tll" => NdTll,
        "mpls_label" => MplsLabel,
        "mpls_tc" => MplsTc,
        "mpls_bos" => MplsBos,
        "pbb_isid" => PbbIsid,
        "tun_id" | "tunnel_id" => TunId,
        "ipv6_exthdr" => Ipv6Exthdr,
        "pbb_uca" => PbbUca,
        _ => return None,
    })
}

/// The OXM field that an ovs-ofctl match field name (`dl_src`, `nw_tos`, `tp_src`, ...,
/// or an OXM name) sets: for the legacy names that stand for several OXM fields, the one
/// Open vSwitch sorts and prints them as (`tp_*` → TCP, `vlan_tci`/`dl_vlan` → VID,
/// `nw_tos` → DSCP).
pub fn oxm_field_named(name: &str) -> Option<crate::oxm::OxmField> {
    use crate::oxm::OxmField as O;
    use FieldName::*;
    Some(match field_by_name(name)? {
        InPort => O::InPort,
        InPhyPort => O::InPhyPort,
        Metadata => O::Metadata,
        EthSrc => O::EthSrc,
        EthDst => O::EthDst,
        EthType => O::EthType,
        DlVlan | VlanVid | VlanTci => O::VlanVid,
        DlVlanPcp | VlanPcp => O::VlanPcp,
        IpDscp | NwTos => O::IpDscp,
        IpEcn => O::IpEcn,
        NwProto => O::IpProto,
        NwSrc => O::Ipv4Src,
        NwDst => O::Ipv4Dst,
        TpSrc | TcpSrc => O::TcpSrc,
        TpDst | TcpDst => O::TcpDst,
        UdpSrc => O::UdpSrc,
        UdpDst => O::UdpDst,
        SctpSrc => O::SctpSrc,
        SctpDst => O::SctpDst,
        IcmpType => O::Icmpv4Type,
        IcmpCode => O::Icmpv4Code,
        Icmpv6Type => O::Icmpv6Type,
        Icmpv6Code => O::Icmpv6Code,
        ArpOp => O::ArpOp,
        ArpSpa => O::ArpSpa,
        ArpTpa => O::ArpTpa,
        ArpSha => O::ArpSha,
        ArpTha => O::ArpTha,
        Ipv6Src => O::Ipv6Src,
        Ipv6Dst => O::Ipv6Dst,
        Ipv6Label => O::Ipv6Flabel,
        NdTarget => O::Ipv6NdTarget,
        NdSll => O::Ipv6NdSll,
        NdTll => O::Ipv6NdTll,
        MplsLabel => O::MplsLabel,
        MplsTc => O::MplsTc,
        MplsBos => O::MplsBos,
        PbbIsid => O::PbbIsid,
        TunId => O::TunnelId,
        Ipv6Exthdr => O::Ipv6Exthdr,
        PbbUca => O::PbbUca,
    })
}

/// Open vSwitch match fields that OpenFlow 1.3 OXM cannot express: named in errors.
pub(crate) fn is_ovs_only_field(name: &str) -> bool {
    name.starts_with("reg")
        || name.starts_with("xreg")
        || name.starts_with("xxreg")
        || name.starts_with("ct_")
        || name.starts_with("tun_")
        || matches!(
            name,
            "nw_ttl"
                | "nw_frag"
                | "tcp_flags"
                | "pkt_mark"
                | "skb_priority"
                | "recirc_id"
                | "dp_hash"
                | "conj_id"
                | "actset_output"
                | "igmp_type"
                | "igmp_code"
                | "mpls_ttl"
                | "dl_vlan1"
                | "packet_type"
        )
}

/// The protocol context that resolves context-dependent names.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Context {
    pub eth_type: Option<u16>,
    pub ip_proto: Option<u8>,
}

impl Context {
    /// The ethertype and IP protocol match `m` gives (the last of each, as in
    /// [`Facts::of`](crate::match13::Facts::of)).
    pub fn of_match(m: &Match) -> Context {
        let f = crate::match13::Facts::of(m);
        Context { eth_type: f.eth_type, ip_proto: f.ip_proto }
    }

    fn is_ip_any(&self) -> bool {
        matches!(self.eth_type, Some(ETH_IP) | Some(ETH_IPV6))
    }

    fn is_arp(&self) -> bool {
        matches!(self.eth_type, Some(ETH_ARP) | Some(ETH_RARP))
    }

    /// The transport field for `tp_src`/`tp_dst`/`mod_tp_*` in this context.
    pub fn transport(&self, src: bool, v: u16) -> Option<Oxm> {
        if !self.is_ip_any() {
            return None;
        }
        Some(match (self.ip_proto?, src) {
            (PROTO_TCP, true) => Oxm::TcpSrc(v),
            (PROTO_TCP, false) => Oxm::TcpDst(v),
            (PROTO_UDP, true) => Oxm::UdpSrc(v),
            (PROTO_UDP, false) => Oxm::UdpDst(v),
            (PROTO_SCTP, true) => Oxm::SctpSrc(v),
            (PROTO_SCTP, false) => Oxm::SctpDst(v),
            _ => return None,
        })
    }
}

/// A parsed field whose OXM may depend on context.
#[derive(Clone, Debug)]
enum Pending {
    Oxm(Oxm),
    NwSrc(Ipv4Addr, Option<Ipv4Addr>),
    NwDst(Ipv4Addr, Option<Ipv4Addr>),
    NwProto(u8),
    Tp { src: bool, v: u16 },
    Icmp { typ: bool, v: u8 },
}

fn norm_mask<T: Copy + PartialEq>(
    v: T,
    m: Option<T>,
    and: impl Fn(T, T) -> T,
    ones: T,
    zero: T,
) -> Option<(T, Option<T>)> {
    match m {
        None => Some((v, None)),
        Some(m) if m == ones => Some((v, None)),
        Some(m) if m == zero => None,
        Some(m) => Some((and(v, m), Some(m))),
    }
}

fn mac_and(a: MacAddr, b: MacAddr) -> MacAddr {
    let mut o = [0u8; 6];
    for (i, x) in o.iter_mut().enumerate() {
        *x = a.0[i] & b.0[i];
    }
    MacAddr(o)
}

fn v4_and(a: Ipv4Addr, b: Ipv4Addr) -> Ipv4Addr {
    Ipv4Addr::from(u32::from(a) & u32::from(b))
}

fn v6_and(a: Ipv6Addr, b: Ipv6Addr) -> Ipv6Addr {
    Ipv6Addr::from(u128::from(a) & u128::from(b))
}

fn num_masked_norm(
    sp: Span<'_>,
    max: u64,
    what: &str,
) -> Result<Option<(u64, Option<u64>)>, TextError> {
    let (v, m) = parse_num_masked(sp, max, what)?;
    Ok(norm_mask(v, m, |a, b| a & b, max, 0))
}

fn no_mask<'a>(name: &str, sp: Span<'a>) -> Result<Span<'a>, TextError> {
    if sp.text.contains('/') {
        return Err(
            sp.err(format!("{name} cannot be masked in OpenFlow 1.3 (an exact value is required)"))
        );
    }
    Ok(sp)
}

/// Collects match fields; [`MatchBuilder::finish`] resolves and checks them.
#[derive(Default)]
pub(crate) struct MatchBuilder<'a> {
    entries: Vec<(Pending, Span<'a>)>,
    /// 802.1Q TCI value and mask, and the last token that set them.
    tci: Option<(u16, u16, Span<'a>)>,
}

impl<'a> MatchBuilder<'a> {
    /// Applies a protocol shorthand (`ip`, `tcp6`, ...); false if `name` is not one.
    pub fn shorthand(&mut self, name: &str, token: Span<'a>) -> bool {
        let Some(&(_, eth, proto)) = SHORTHANDS.iter().find(|s| s.0 == name) else {
            return false;
        };
        self.entries.push((Pending::Oxm(Oxm::EthType(eth)), token));
        if let Some(p) = proto {
            self.entries.push((Pending::Oxm(Oxm::IpProto(p)), token));
        }
        true
    }

    fn tci(&mut self, v: u16, m: u16, token: Span<'a>) {
        let (ov, om) = self.tci.map(|t| (t.0, t.1)).unwrap_or((0, 0));
        self.tci = Some(((ov & !m) | (v & m), om | m, token));
    }

    /// Adds `field=value`; `token` is the whole item, `value` its value.
    pub fn field(
        &mut self,
        f: FieldName,
        name: &str,
        value: Span<'a>,
        token: Span<'a>,
    ) -> Result<(), TextError> {
        use FieldName as F;
        let oxm = |o: Oxm| Some(Pending::Oxm(o));
        let p: Option<Pending> = match f {
            F::InPort => oxm(Oxm::InPort(parse_port(no_mask(name, value)?)?)),
            F::InPhyPort => oxm(Oxm::InPhyPort(parse_port(no_mask(name, value)?)?)),
            F::Metadata => {
                num_masked_norm(value, u64::MAX, name)?.and_then(|(v, m)| oxm(Oxm::Metadata(v, m)))
            }
            F::TunId => {
                num_masked_norm(value, u64::MAX, name)?.and_then(|(v, m)| oxm(Oxm::TunnelId(v, m)))
            }
            F::EthSrc | F::EthDst | F::ArpSha | F::ArpTha => {
                let (v, m) = parse_mac_masked(value)?;
                norm_mask(v, m, mac_and, MacAddr::BROADCAST, MacAddr::ZERO).and_then(|(v, m)| {
                    oxm(match f {
                        F::EthSrc => Oxm::EthSrc(v, m),
                        F::EthDst => Oxm::EthDst(v, m),
                        F::ArpSha => Oxm::ArpSha(v, m),
                        _ => Oxm::ArpTha(v, m),
                    })
                })
            }
            F::NdSll => oxm(Oxm::Ipv6NdSll(parse_mac(no_mask(name, value)?)?)),
            F::NdTll => oxm(Oxm::Ipv6NdTll(parse_mac(no_mask(name, value)?)?)),
            F::EthType => oxm(Oxm::EthType(parse_num(no_mask(name, value)?, 0xffff, name)? as u16)),
            F::DlVlan => {
                let v = parse_num(no_mask(name, value)?, 0xffff, name)? as u16;
                if v == 0xffff {
                    self.tci(0, 0xffff, token);
                } else if v > 0xfff {
                    return Err(value.err(format!(
                        "dl_vlan {v} is out of range (0 to 4095, or 0xffff for no VLAN)"
                    )));
                } else {
                    self.tci(0x1000 | v, 0x1fff, token);
                }
                None
            }
            F::DlVlanPcp | F::VlanPcp => {
                let v = parse_num(no_mask(name, value)?, 7, name)? as u16;
                self.tci((v << 13) | 0x1000, 0xf000, token);
                None
            }
            F::VlanVid => {
                let (v, m) = parse_num_masked(value, 0x1fff, name)?;
                self.tci(v as u16, m.unwrap_or(0x1fff) as u16, token);
                None
            }
            F::VlanTci => {
                let (v, m) = parse_num_masked(value, 0xffff, name)?;
                self.tci(v as u16, m.unwrap_or(0xffff) as u16, token);
                None
            }
            F::IpDscp => oxm(Oxm::IpDscp(parse_num(no_mask(name, value)?, 63, name)? as u8)),
            F::NwTos => {
                let v = parse_num(no_mask(name, value)?, 255, name)? as u8;
                if v & 3 != 0 {
                    return Err(value.err(format!(
                        "nw_tos {v} sets ECN bits: it must be a multiple of 4 \
                         (use nw_ecn for the ECN bits)"
                    )));
                }
                oxm(Oxm::IpDscp(v >> 2))
            }
            F::IpEcn => oxm(Oxm::IpEcn(parse_num(no_mask(name, value)?, 3, name)? as u8)),
            F::NwProto => {
                Some(Pending::NwProto(parse_num(no_mask(name, value)?, 255, name)? as u8))
            }
            F::NwSrc | F::NwDst | F::ArpSpa | F::ArpTpa => {
                let (v, m) = parse_ip_masked(value)?;
                norm_mask(v, m, v4_and, Ipv4Addr::BROADCAST, Ipv4Addr::UNSPECIFIED).map(|(v, m)| {
                    match f {
                        F::NwSrc => Pending::NwSrc(v, m),
                        F::NwDst => Pending::NwDst(v, m),
                        F::ArpSpa => Pending::Oxm(Oxm::ArpSpa(v, m)),
                        _ => Pending::Oxm(Oxm::ArpTpa(v, m)),
                    }
                })
            }
            F::TpSrc | F::TpDst => Some(Pending::Tp {
                src: f == F::TpSrc,
                v: parse_num(no_mask(name, value)?, 0xffff, name)? as u16,
            }),
            F::TcpSrc | F::TcpDst | F::UdpSrc | F::UdpDst | F::SctpSrc | F::SctpDst => {
                let v = parse_num(no_mask(name, value)?, 0xffff, name)? as u16;
                oxm(match f {
                    F::TcpSrc => Oxm::TcpSrc(v),
                    F::TcpDst => Oxm::TcpDst(v),
                    F::UdpSrc => Oxm::UdpSrc(v),
                    F::UdpDst => Oxm::UdpDst(v),
                    F::SctpSrc => Oxm::SctpSrc(v),
                    _ => Oxm::SctpDst(v),
                })
            }
            F::IcmpType | F::IcmpCode => Some(Pending::Icmp {
                typ: f == F::IcmpType,
                v: parse_num(no_mask(name, value)?, 255, name)? as u8,
            }),
            F::Icmpv6Type => {
                oxm(Oxm::Icmpv6Type(parse_num(no_mask(name, value)?, 255, name)? as u8))
            }
            F::Icmpv6Code => {
                oxm(Oxm::Icmpv6Code(parse_num(no_mask(name, value)?, 255, name)? as u8))
            }
            F::ArpOp => oxm(Oxm::ArpOp(parse_num(no_mask(name, value)?, 0xffff, name)? as u16)),
            F::Ipv6Src | F::Ipv6Dst => {
                let (v, m) = parse_ip_masked(value)?;
                norm_mask(v, m, v6_and, Ipv6Addr::from(u128::MAX), Ipv6Addr::UNSPECIFIED).and_then(
                    |(v, m)| {
                        oxm(if f == F::Ipv6Src { Oxm::Ipv6Src(v, m) } else { Oxm::Ipv6Dst(v, m) })
                    },
                )
            }
            F::Ipv6Label => num_masked_norm(value, 0xfffff, name)?
                .and_then(|(v, m)| oxm(Oxm::Ipv6Flabel(v as u32, m.map(|m| m as u32)))),
            F::NdTarget => oxm(Oxm::Ipv6NdTarget(parse_ip(no_mask(name, value)?)?)),
            F::MplsLabel => {
                oxm(Oxm::MplsLabel(parse_num(no_mask(name, value)?, 0xfffff, name)? as u32))
            }
            F::MplsTc => oxm(Oxm::MplsTc(parse_num(no_mask(name, value)?, 7, name)? as u8)),
            F::MplsBos => oxm(Oxm::MplsBos(parse_num(no_mask(name, value)?, 1, name)? as u8)),
            F::PbbIsid => num_masked_norm(value, 0xff_ffff, name)?
                .and_then(|(v, m)| oxm(Oxm::PbbIsid(v as u32, m.map(|m| m as u32)))),
            F::Ipv6Exthdr => num_masked_norm(value, 0x1ff, name)?
                .and_then(|(v, m)| oxm(Oxm::Ipv6Exthdr(v as u16, m.map(|m| m as u16)))),
            F::PbbUca => oxm(Oxm::PbbUca(parse_num(no_mask(name, value)?, 1, name)? as u8)),
        };
        if let Some(p) = p {
            self.entries.push((p, token));
        }
        Ok(())
    }

    /// Resolves context-dependent fields, converts the VLAN TCI, checks prerequisites,
    /// and returns the OXMs sorted by field number.
    pub fn finish(self) -> Result<Match, TextError> {
        let mut ctx = Context::default();
        for (p, _) in &self.entries {
            if let Pending::Oxm(Oxm::EthType(t)) = p {
                ctx.eth_type = Some(*t);
            }
        }
        for (p, _) in &self.entries {
            match p {
                Pending::Oxm(Oxm::IpProto(v)) => ctx.ip_proto = Some(*v),
                Pending::NwProto(v) if !ctx.is_arp() => ctx.ip_proto = Some(*v),
                _ => {}
            }
        }
        let mut out: BTreeMap<OxmField, (Oxm, Span<'a>)> = BTreeMap::new();
        for (p, tok) in self.entries {
            let o = match p {
                Pending::Oxm(o) => o,
                Pending::NwSrc(v, m) | Pending::NwDst(v, m) => {
                    let src = matches!(p, Pending::NwSrc(..));
                    match ctx.eth_type {
                        Some(ETH_IP) if src => Oxm::Ipv4Src(v, m),
                        Some(ETH_IP) => Oxm::Ipv4Dst(v, m),
                        Some(ETH_ARP | ETH_RARP) if src => Oxm::ArpSpa(v, m),
                        Some(ETH_ARP | ETH_RARP) => Oxm::ArpTpa(v, m),
                        _ => {
                            return Err(tok.err(
                                "an IPv4 address match needs ip or arp (write \"ip,\" or \
                                 \"arp,\" or dl_type=0x0800 before it)",
                            ))
                        }
                    }
                }
                Pending::NwProto(v) => {
                    if ctx.is_arp() {
                        Oxm::ArpOp(v as u16)
                    } else if ctx.is_ip_any() {
                        Oxm::IpProto(v)
                    } else {
                        return Err(tok.err(
                            "nw_proto needs ip, ipv6, arp or rarp (write \"ip,\" or \
                             dl_type=0x0800 before it)",
                        ));
                    }
                }
                Pending::Tp { src, v } => ctx.transport(src, v).ok_or_else(|| {
                    tok.err(
                        "a transport port match needs tcp, udp or sctp (write \"tcp,\" \
                         or ip,nw_proto=6 before it)",
                    )
                })?,
                Pending::Icmp { typ, v } => match (ctx.eth_type, ctx.ip_proto) {
                    (Some(ETH_IP), Some(PROTO_ICMP)) if typ => Oxm::Icmpv4Type(v),
                    (Some(ETH_IP), Some(PROTO_ICMP)) => Oxm::Icmpv4Code(v),
                    (Some(ETH_IPV6), Some(PROTO_ICMPV6)) if typ => Oxm::Icmpv6Type(v),
                    (Some(ETH_IPV6), Some(PROTO_ICMPV6)) => Oxm::Icmpv6Code(v),
                    _ => {
                        return Err(tok.err(
                            "an ICMP type/code match needs icmp or icmp6 (write \"icmp,\" \
                             before it)",
                        ))
                    }
                },
            };
            out.insert(oxm_field(&o), (o, tok));
        }
        if let Some((v, m, tok)) = self.tci {
            for o in tci_to_oxms(v, m, tok)? {
                out.insert(oxm_field(&o), (o, tok));
            }
        }
        let fields: BTreeMap<OxmField, Oxm> =
            out.iter().map(|(k, (o, _))| (*k, o.clone())).collect();
        for (o, tok) in out.values() {
            check_prereq(o, &fields).map_err(|msg| tok.err(msg))?;
        }
        Ok(Match { fields: out.into_values().map(|(o, _)| o).collect() })
    }
}

/// Expresses an 802.1Q TCI value/mask as `VLAN_VID` (13 bits, with the present bit
/// 0x1000) and `VLAN_PCP` OXMs.
fn tci_to_oxms(v: u16, m: u16, tok: Span<'_>) -> Result<Vec<Oxm>, TextError> {
    let mut v = v & m;
    let mut m = m;
    let pcp_mask = m & 0xe000;
    let mut out = Vec::new();
    let mut pcp = None;
    if pcp_mask == 0xe000 {
        if m & 0x1000 != 0 && v & 0x1000 == 0 {
            if v & 0xe000 != 0 {
                return Err(tok.err(
                    "matches a VLAN priority on packets without a VLAN header (the \
                     present bit 0x1000 is matched as 0)",
                ));
            }
        } else {
            v |= 0x1000;
            m |= 0x1000;
            pcp = Some((v >> 13) as u8);
        }
    } else if pcp_mask != 0 {
        return Err(tok.err(
            "a VLAN priority can only be matched exactly in OpenFlow 1.3 (mask 0xe000 or \
             none of its bits)",
        ));
    }
    let vid_mask = m & 0x1fff;
    if vid_mask != 0 {
        let mask = if vid_mask == 0x1fff { None } else { Some(vid_mask) };
        out.push(Oxm::VlanVid(v & vid_mask, mask));
    }
    if let Some(p) = pcp {
        out.push(Oxm::VlanPcp(p));
    }
    Ok(out)
}

/// The field number of a basic-class OXM (`Other` sorts last, as field 39).
pub(crate) fn oxm_field(o: &Oxm) -> OxmField {
    use OxmField as F;
    match o {
        Oxm::InPort(_) => F::InPort,
        Oxm::InPhyPort(_) => F::InPhyPort,
        Oxm::Metadata(..) => F::Metadata,
        Oxm::EthDst(..) => F::EthDst,
        Oxm::EthSrc(..) => F::EthSrc,
        Oxm::EthType(_) => F::EthType,
        Oxm::VlanVid(..) => F::VlanVid,
        Oxm::VlanPcp(_) => F::VlanPcp,
        Oxm::IpDscp(_) => F::IpDscp,
        Oxm::IpEcn(_) => F::IpEcn,
        Oxm::IpProto(_) => F::IpProto,
        Oxm::Ipv4Src(..) => F::Ipv4Src,
        Oxm::Ipv4Dst(..) => F::Ipv4Dst,
        Oxm::TcpSrc(_) => F::TcpSrc,
        Oxm::TcpDst(_) => F::TcpDst,
        Oxm::UdpSrc(_) => F::UdpSrc,
        Oxm::UdpDst(_) => F::UdpDst,
        Oxm::SctpSrc(_) => F::SctpSrc,
        Oxm::SctpDst(_) => F::SctpDst,
        Oxm::Icmpv4Type(_) => F::Icmpv4Type,
        Oxm::Icmpv4Code(_) => F::Icmpv4Code,
        Oxm::ArpOp(_) => F::ArpOp,
        Oxm::ArpSpa(..) => F::ArpSpa,
        Oxm::ArpTpa(..) => F::ArpTpa,
        Oxm::ArpSha(..) => F::ArpSha,
        Oxm::ArpTha(..) => F::ArpTha,
        Oxm::Ipv6Src(..) => F::Ipv6Src,
        Oxm::Ipv6Dst(..) => F::Ipv6Dst,
        Oxm::Ipv6Flabel(..) => F::Ipv6Flabel,
        Oxm::Icmpv6Type(_) => F::Icmpv6Type,
        Oxm::Icmpv6Code(_) => F::Icmpv6Code,
        Oxm::Ipv6NdTarget(_) => F::Ipv6NdTarget,
        Oxm::Ipv6NdSll(_) => F::Ipv6NdSll,
        Oxm::Ipv6NdTll(_) => F::Ipv6NdTll,
        Oxm::MplsLabel(_) => F::MplsLabel,
        Oxm::MplsTc(_) => F::MplsTc,
        Oxm::MplsBos(_) => F::MplsBos,
        Oxm::PbbIsid(..) => F::PbbIsid,
        Oxm::TunnelId(..) => F::TunnelId,
        Oxm::Ipv6Exthdr(..) => F::Ipv6Exthdr,
        Oxm::PbbUca(_) => F::PbbUca,
        Oxm::Other { .. } => F::Ipv6Exthdr,
    }
}

/// The OpenFlow 1.3 prerequisites of one field, checked against the whole match (ARP
/// fields also accept RARP, as Open vSwitch does).
fn check_prereq(o: &Oxm, f: &BTreeMap<OxmField, Oxm>) -> Result<(), String> {
    let eth = match f.get(&OxmField::EthType) {
        Some(Oxm::EthType(t)) => Some(*t),
        _ => None,
    };
    let proto = match f.get(&OxmField::IpProto) {
        Some(Oxm::IpProto(p)) => Some(*p),
        _ => None,
    };
    let ip_any = matches!(eth, Some(ETH_IP) | Some(ETH_IPV6));
    let need = |ok: bool, what: &str| -> Result<(), String> {
        if ok {
            Ok(())
        } else {
            Err(format!("prerequisite not met: this field needs {what}"))
        }
    };
    let l4 = |p: u8, what: &str| need(ip_any && proto == Some(p), what);
    let icmp6_type = match f.get(&OxmField::Icmpv6Type) {
        Some(Oxm::Icmpv6Type(t)) => Some(*t),
        _ => None,
    };
    let icmp6 = eth == Some(ETH_IPV6) && proto == Some(PROTO_ICMPV6);
    match o {
        Oxm::IpDscp(_) | Oxm::IpEcn(_) | Oxm::IpProto(_) => {
            need(ip_any, "ip or ipv6 (eth_type 0x0800 or 0x86dd)")
        }
        Oxm::Ipv4Src(..) | Oxm::Ipv4Dst(..) => need(eth == Some(ETH_IP), "ip (eth_type 0x0800)"),
        Oxm::TcpSrc(_) | Oxm::TcpDst(_) => l4(PROTO_TCP, "tcp or tcp6"),
        Oxm::UdpSrc(_) | Oxm::UdpDst(_) => l4(PROTO_UDP, "udp or udp6"),
        Oxm::SctpSrc(_) | Oxm::SctpDst(_) => l4(PROTO_SCTP, "sctp or sctp6"),
        Oxm::Icmpv4Type(_) | Oxm::Icmpv4Code(_) => {
            need(eth == Some(ETH_IP) && proto == Some(PROTO_ICMP), "icmp (ip,nw_proto=1)")
        }
        Oxm::ArpOp(_) | Oxm::ArpSpa(..) | Oxm::ArpTpa(..) | Oxm::ArpSha(..) | Oxm::ArpTha(..) => {
            need(
                matches!(eth, Some(ETH_ARP) | Some(ETH_RARP)),
                "arp or rarp (eth_type 0x0806 or 0x8035)",
            )
        }
        Oxm::Ipv6Src(..) | Oxm::Ipv6Dst(..) | Oxm::Ipv6Flabel(..) | Oxm::Ipv6Exthdr(..) => {
            need(eth == Some(ETH_IPV6), "ipv6 (eth_type 0x86dd)")
        }
        Oxm::Icmpv6Type(_) | Oxm::Icmpv6Code(_) => need(icmp6, "icmp6 (ipv6,nw_proto=58)"),
        Oxm::Ipv6NdTarget(_) => need(
            icmp6 && matches!(icmp6_type, Some(135) | Some(136)),
            "icmp6 with icmp_type=135 or icmp_type=136",
        ),
        Oxm::Ipv6NdSll(_) => need(icmp6 && icmp6_type == Some(135), "icmp6,icmp_type=135"),
        Oxm::Ipv6NdTll(_) => need(icmp6 && icmp6_type == Some(136), "icmp6,icmp_type=136"),
        Oxm::MplsLabel(_) | Oxm::MplsTc(_) | Oxm::MplsBos(_) => need(
            matches!(eth, Some(ETH_MPLS) | Some(ETH_MPLSM)),
            "mpls or mplsm (eth_type 0x8847 or 0x8848)",
        ),
        Oxm::PbbIsid(..) | Oxm::PbbUca(_) => need(eth == Some(ETH_PBB), "pbb (eth_type 0x88e7)"),
        _ => Ok(()),
    }
}
