//! Printing a match as Open vSwitch's `match_format` does: `priority=`, a protocol
//! shorthand (`ip`, `tcp6`, `arp`, ...) when `eth_type`/`ip_proto` allow, then the fields
//! in Open vSwitch's order and spelling (`dl_src`, `nw_src`, `tp_dst`, `nw_tos` for
//! `ip_dscp`<<2, `icmp_type` for both ICMP versions, VLAN as `dl_vlan`/`dl_vlan_pcp` or
//! `vlan_tci=value/mask`), masks as prefixes where they are prefixes.

use super::field::*;
use super::value::*;
use crate::match13::Match;
use crate::oxm::{Oxm, OxmField};
/// Prints a match as Open vSwitch's `match_format` does, preceded by `priority=N` when
/// `priority` is given and is not the default 32768.
pub(crate) fn format_match_prio(m: &Match, priority: Option<u16>) -> String {
    let mut parts: Vec<String> = Vec::new();
    if let Some(p) = priority.filter(|p| *p != 0x8000) {
        parts.push(format!("priority={p}"));
    }
    let get = |f: OxmField| {
        m.fields.iter().rev().find(|o| !matches!(o, Oxm::Other { .. }) && oxm_field(o) == f)
    };
    let ctx = Context::of_match(m);
    let (mut skip_type, mut skip_proto) = (false, false);
    if let Some(eth) = ctx.eth_type {
        let name = match (eth, ctx.ip_proto) {
            (ETH_IP, p) | (ETH_IPV6, p) => {
                let v6 = eth == ETH_IPV6;
                skip_proto = true;
                match (p, v6) {
                    (Some(PROTO_ICMP), false) => Some("icmp"),
                    (Some(PROTO_TCP), false) => Some("tcp"),
                    (Some(PROTO_UDP), false) => Some("udp"),
                    (Some(PROTO_SCTP), false) => Some("sctp"),
                    (Some(PROTO_ICMPV6), true) => Some("icmp6"),
                    (Some(PROTO_TCP), true) => Some("tcp6"),
                    (Some(PROTO_UDP), true) => Some("udp6"),
                    (Some(PROTO_SCTP), true) => Some("sctp6"),
                    _ => {
                        skip_proto = false;
                        Some(if v6 { "ipv6" } else { "ip" })
                    }
                }
            }
            (ETH_ARP, _) => Some("arp"),
            (ETH_RARP, _) => Some("rarp"),
            (ETH_MPLS, _) => Some("mpls"),
            (ETH_MPLSM, _) => Some("mplsm"),
            _ => None,
        };
        if let Some(n) = name {
            skip_type = true;
            parts.push(n.into());
        }
    }
    let be64 = |name: &str, v: u64, m: Option<u64>| match m {
        Some(m) => format!("{name}={}/{}", hex_or_zero(v), hex_or_zero(m)),
        None => format!("{name}={}", hex_or_zero(v)),
    };
    if let Some(Oxm::TunnelId(v, mk)) = get(OxmField::TunnelId) {
        parts.push(be64("tun_id", *v, *mk));
    }
    if let Some(Oxm::Metadata(v, mk)) = get(OxmField::Metadata) {
        parts.push(be64("metadata", *v, *mk));
    }
    if let Some(Oxm::InPort(p)) = get(OxmField::InPort) {
        parts.push(format!("in_port={}", format_port(*p)));
    }
    if let Some(Oxm::InPhyPort(p)) = get(OxmField::InPhyPort) {
        parts.push(format!("in_phy_port={}", format_port(*p)));
    }
    format_vlan(m, &mut parts);
    if let Some(Oxm::EthSrc(v, mk)) = get(OxmField::EthSrc) {
        parts.push(format!("dl_src={}", format_mac_masked(*v, *mk)));
    }
    if let Some(Oxm::EthDst(v, mk)) = get(OxmField::EthDst) {
        parts.push(format!("dl_dst={}", format_mac_masked(*v, *mk)));
    }
    if !skip_type {
        if let Some(t) = ctx.eth_type {
            parts.push(format!("dl_type=0x{t:04x}"));
        }
    }
    if let Some(Oxm::Ipv6Src(v, mk)) = get(OxmField::Ipv6Src) {
        parts.push(format!("ipv6_src={}", format_ip_masked(*v, *mk)));
    }
    if let Some(Oxm::Ipv6Dst(v, mk)) = get(OxmField::Ipv6Dst) {
        parts.push(format!("ipv6_dst={}", format_ip_masked(*v, *mk)));
    }
    if let Some(Oxm::Ipv6Flabel(v, mk)) = get(OxmField::Ipv6Flabel) {
        parts.push(match mk {
            Some(mk) => format!("ipv6_label=0x{v:05x}/0x{mk:05x}"),
            None => format!("ipv6_label=0x{v:05x}"),
        });
    }
    if let Some(Oxm::Ipv6Exthdr(v, mk)) = get(OxmField::Ipv6Exthdr) {
        parts.push(match mk {
            Some(mk) => format!("ipv6_exthdr={v:#x}/{mk:#x}"),
            None => format!("ipv6_exthdr={v:#x}"),
        });
    }
    if let Some(Oxm::ArpSpa(v, mk)) = get(OxmField::ArpSpa) {
        parts.push(format!("arp_spa={}", format_ip_masked(*v, *mk)));
    }
    if let Some(Oxm::ArpTpa(v, mk)) = get(OxmField::ArpTpa) {
        parts.push(format!("arp_tpa={}", format_ip_masked(*v, *mk)));
    }
    if let Some(Oxm::Ipv4Src(v, mk)) = get(OxmField::Ipv4Src) {
        parts.push(format!("nw_src={}", format_ip_masked(*v, *mk)));
    }
    if let Some(Oxm::Ipv4Dst(v, mk)) = get(OxmField::Ipv4Dst) {
        parts.push(format!("nw_dst={}", format_ip_masked(*v, *mk)));
    }
    if !skip_proto {
        if let Some(p) = ctx.ip_proto {
            parts.push(format!("nw_proto={p}"));
        }
    }
    if let Some(Oxm::ArpOp(v)) = get(OxmField::ArpOp) {
        parts.push(format!("arp_op={v}"));
    }
    if let Some(Oxm::ArpSha(v, mk)) = get(OxmField::ArpSha) {
        parts.push(format!("arp_sha={}", format_mac_masked(*v, *mk)));
    }
    if let Some(Oxm::ArpTha(v, mk)) = get(OxmField::ArpTha) {
        parts.push(format!("arp_tha={}", format_mac_masked(*v, *mk)));
    }
    if let Some(Oxm::IpDscp(v)) = get(OxmField::IpDscp) {
        parts.push(format!("nw_tos={}", (*v as u16) << 2));
    }
    if let Some(Oxm::IpEcn(v)) = get(OxmField::IpEcn) {
        parts.push(format!("nw_ecn={v}"));
    }
    if let Some(Oxm::MplsLabel(v)) = get(OxmField::MplsLabel) {
        parts.push(format!("mpls_label={v}"));
    }
    if let Some(Oxm::MplsTc(v)) = get(OxmField::MplsTc) {
        parts.push(format!("mpls_tc={v}"));
    }
    if let Some(Oxm::MplsBos(v)) = get(OxmField::MplsBos) {
        parts.push(format!("mpls_bos={v}"));
    }
    if let Some(Oxm::PbbIsid(v, mk)) = get(OxmField::PbbIsid) {
        parts.push(match mk {
            Some(mk) => format!("pbb_isid={v:#x}/{mk:#x}"),
            None => format!("pbb_isid={v:#x}"),
        });
    }
    if let Some(Oxm::PbbUca(v)) = get(OxmField::PbbUca) {
        parts.push(format!("pbb_uca={v}"));
    }
    for (f, name) in [
        (OxmField::Icmpv4Type, "icmp_type"),
        (OxmField::Icmpv4Code, "icmp_code"),
        (OxmField::Icmpv6Type, "icmp_type"),
        (OxmField::Icmpv6Code, "icmp_code"),
    ] {
        if let Some(
            Oxm::Icmpv4Type(v) | Oxm::Icmpv4Code(v) | Oxm::Icmpv6Type(v) | Oxm::Icmpv6Code(v),
        ) = get(f)
        {
            parts.push(format!("{name}={v}"));
        }
    }
    if let Some(Oxm::Ipv6NdTarget(v)) = get(OxmField::Ipv6NdTarget) {
        parts.push(format!("nd_target={}", format_ipv6(*v)));
    }
    if let Some(Oxm::Ipv6NdSll(v)) = get(OxmField::Ipv6NdSll) {
        parts.push(format!("nd_sll={v}"));
    }
    if let Some(Oxm::Ipv6NdTll(v)) = get(OxmField::Ipv6NdTll) {
        parts.push(format!("nd_tll={v}"));
    }
    for (f, name) in [
        (OxmField::TcpSrc, "tp_src"),
        (OxmField::UdpSrc, "tp_src"),
        (OxmField::SctpSrc, "tp_src"),
        (OxmField::TcpDst, "tp_dst"),
        (OxmField::UdpDst, "tp_dst"),
        (OxmField::SctpDst, "tp_dst"),
    ] {
        if let Some(
            Oxm::TcpSrc(v)
            | Oxm::UdpSrc(v)
            | Oxm::SctpSrc(v)
            | Oxm::TcpDst(v)
            | Oxm::UdpDst(v)
            | Oxm::SctpDst(v),
        ) = get(f)
        {
            parts.push(format!("{name}={v}"));
        }
    }
    for o in &m.fields {
        if let Oxm::Other { class, field, has_mask, payload } = o {
            parts.push(format!(
                "oxm(class=0x{class:04x},field={field}{},payload=0x{})",
                if *has_mask { ",masked" } else { "" },
                hex_bytes(payload)
            ));
        }
    }
    parts.join(",")
}

pub(crate) fn hex_bytes(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The VLAN part of `match_format`: `dl_vlan`/`dl_vlan_pcp` when they say it exactly,
/// else `vlan_tci=value[/mask]`.
fn format_vlan(m: &Match, parts: &mut Vec<String>) {
    let (mut v, mut mask) = (0u16, 0u16);
    for o in &m.fields {
        match o {
            Oxm::VlanVid(vid, mk) => {
                let mm = mk.unwrap_or(0x1fff) & 0x1fff;
                v = (v & !mm) | (vid & mm);
                mask |= mm;
            }
            Oxm::VlanPcp(p) => {
                v = (v & !0xe000) | (((*p as u16) & 7) << 13) | 0x1000;
                mask |= 0xf000;
            }
            _ => {}
        }
    }
    if mask == 0 {
        return;
    }
    let vid_mask = mask & 0x0fff;
    let pcp_mask = mask & 0xe000;
    if mask & 0x1000 != 0
        && v & 0x1000 != 0
        && (vid_mask == 0 || vid_mask == 0x0fff)
        && (pcp_mask == 0 || pcp_mask == 0xe000)
        && (vid_mask != 0 || pcp_mask != 0)
    {
        if vid_mask != 0 {
            parts.push(format!("dl_vlan={}", v & 0x0fff));
        }
        if pcp_mask != 0 {
            parts.push(format!("dl_vlan_pcp={}", v >> 13));
        }
    } else if mask == 0xffff {
        parts.push(format!("vlan_tci=0x{v:04x}"));
    } else {
        parts.push(format!("vlan_tci=0x{v:04x}/0x{mask:04x}"));
    }
}
