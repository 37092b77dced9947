//! Actions in ovs-ofctl text (OpenFlow 1.3): parsing the `ovs-actions` forms into
//! [`Action`]s and printing them as `ovs-ofctl -O OpenFlow13 dump-flows` does.
//!
//! Open vSwitch's legacy actions map onto 1.3 actions as it encodes them: `mod_dl_src`,
//! `mod_nw_src`, `mod_tp_src`, `mod_vlan_vid`, ... become set-field actions (`mod_tp_*`
//! picks TCP, UDP or SCTP from the match; `mod_nw_tos` sets `ip_dscp` to tos>>2);
//! `mod_vlan_vid`/`mod_vlan_pcp` first push an 802.1Q tag when the packet may have none at
//! that point (the match does not require a VLAN, or a `pop_vlan` came before), exactly
//! as Open vSwitch does; `strip_vlan` is `pop_vlan`. Printing uses Open vSwitch's
//! spelling: `output:N`, reserved ports by name (`NORMAL`, `CONTROLLER:65535`, ...),
//! `set_field:VALUE->FIELD`, `set_mpls_ttl(N)`. OpenFlow 1.3 actions that Open vSwitch
//! has no text for are written `copy_ttl_in`, `copy_ttl_out`, `push_pbb:0x88e7`,
//! `pop_pbb`, and experimenter actions `experimenter(id=0x2320,data=0x...)`; all parse
//! back. Nicira extension actions (`load`, `move`, `resubmit`, ...) are rejected.

use super::error::{Span, TextError};
use super::field::{field_by_name, Context, FieldName};
use super::lexer::{Item, Lexer};
use super::value::*;
use crate::action::{port, Action, OFPCML_NO_BUFFER};
use crate::oxm::Oxm;
use crate::wire::MacAddr;
use std::net::Ipv4Addr;

/// What action parsing needs to know about the flow: the match's protocol context and
/// whether a VLAN header is present at this point of the action list.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ActState {
    pub ctx: Context,
    pub has_vlan: bool,
}

impl ActState {
    pub fn of_match(m: &crate::match13::Match) -> ActState {
        let has_vlan = m.fields.iter().any(|o| match o {
            Oxm::VlanVid(v, mk) => v & 0x1000 != 0 && mk.is_none_or(|mk| mk & 0x1000 != 0),
            _ => false,
        });
        ActState { ctx: Context::of_match(m), has_vlan }
    }
}

const NX_ACTIONS: [&str; 30] = [
    "load",
    "move",
    "resubmit",
    "learn",
    "ct",
    "ct_clear",
    "note",
    "multipath",
    "bundle",
    "bundle_load",
    "output_reg",
    "set_tunnel",
    "set_tunnel64",
    "pop_queue",
    "fin_timeout",
    "exit",
    "sample",
    "clone",
    "conjunction",
    "enqueue",
    "mod_nw_ttl_nx",
    "dec_nsh_ttl",
    "encap",
    "decap",
    "check_pkt_larger",
    "nat",
    "meter_nx",
    "debug_recirc",
    "set_mpls_label",
    "set_mpls_tc",
];

/// The ethertype of a push action `name`: one of `allowed`, else an error saying it is
/// not `kind`.
fn push_ethertype(
    it: &Item<'_>,
    name: &str,
    allowed: [u16; 2],
    kind: &str,
) -> Result<u16, TextError> {
    let v = it.need_value()?;
    let t = parse_num(v, 0xffff, &format!("{name} ethertype"))? as u16;
    if !allowed.contains(&t) {
        let [a, b] = allowed;
        return Err(
            v.err(format!("{name} ethertype {t:#06x} is not {kind} ({a:#06x} or {b:#06x})"))
        );
    }
    Ok(t)
}

/// Parses one action item into `out`.
pub(crate) fn parse_action(
    it: &Item<'_>,
    st: &mut ActState,
    out: &mut Vec<Action>,
) -> Result<(), TextError> {
    let key = it.key.text;
    let lkey = key.to_ascii_lowercase();
    let num = |max: u64, what: &str| -> Result<u64, TextError> {
        let v = it.need_value()?;
        parse_num(v, max, what)
    };
    let mac = || -> Result<MacAddr, TextError> { parse_mac(it.need_value()?) };
    let ipv4 = || -> Result<Ipv4Addr, TextError> { parse_ip(it.need_value()?) };
    let bare = |a: Action, out: &mut Vec<Action>| -> Result<(), TextError> {
        it.no_value()?;
        out.push(a);
        Ok(())
    };
    match lkey.as_str() {
        "output" => {
            let p = parse_port(it.need_value()?)?;
            out.push(output(p));
        }
        "controller" => {
            let max_len = match it.value {
                None => OFPCML_NO_BUFFER,
                Some(v) if v.text.contains('=') => {
                    let mut max_len = OFPCML_NO_BUFFER;
                    for kv in Lexer::new(v).collect_all()? {
                        match kv.key.text {
                            "max_len" => {
                                max_len = parse_num(kv.need_value()?, 0xffff, "max_len")? as u16
                            }
                            k => {
                                return Err(kv.err(format!(
                                    "controller option \"{k}\" is an Open vSwitch extension \
                                     that OpenFlow 1.3 cannot express (only max_len is)"
                                )))
                            }
                        }
                    }
                    max_len
                }
                Some(v) => parse_num(v, 0xffff, "controller max_len")? as u16,
            };
            out.push(Action::Output { port: port::CONTROLLER, max_len });
        }
        "normal" | "flood" | "all" | "local" | "in_port" | "table" => {
            it.no_value()?;
            out.push(output(parse_port(it.key)?));
        }
        "mod_vlan_vid" => {
            let v = num(0xfff, "mod_vlan_vid")? as u16;
            push_vlan_if_needed(st, out);
            out.push(Action::SetField(Oxm::VlanVid(0x1000 | v, None)));
        }
        "mod_vlan_pcp" => {
            let v = num(7, "mod_vlan_pcp")? as u8;
            push_vlan_if_needed(st, out);
            out.push(Action::SetField(Oxm::VlanPcp(v)));
        }
        "strip_vlan" | "pop_vlan" => {
            bare(Action::PopVlan, out)?;
            st.has_vlan = false;
        }
        "push_vlan" => {
            let t = push_ethertype(it, "push_vlan", [0x8100, 0x88a8], "a VLAN TPID")?;
            out.push(Action::PushVlan(t));
            st.has_vlan = true;
        }
        "push_mpls" => {
            let t = push_ethertype(it, "push_mpls", [0x8847, 0x8848], "an MPLS ethertype")?;
            out.push(Action::PushMpls(t));
        }
        "pop_mpls" => out.push(Action::PopMpls(num(0xffff, "pop_mpls ethertype")? as u16)),
        "set_mpls_ttl" => out.push(Action::SetMplsTtl(num(255, "set_mpls_ttl")? as u8)),
        "dec_mpls_ttl" => bare(Action::DecMplsTtl, out)?,
        "mod_dl_src" => out.push(Action::SetField(Oxm::EthSrc(mac()?, None))),
        "mod_dl_dst" => out.push(Action::SetField(Oxm::EthDst(mac()?, None))),
        "mod_nw_src" => out.push(Action::SetField(Oxm::Ipv4Src(ipv4()?, None))),
        "mod_nw_dst" => out.push(Action::SetField(Oxm::Ipv4Dst(ipv4()?, None))),
        "mod_nw_tos" => {
            let v = num(255, "mod_nw_tos")? as u8;
            if v & 3 != 0 {
                return Err(it.err(format!(
                    "mod_nw_tos {v} sets ECN bits: it must be a multiple of 4 \
                     (use mod_nw_ecn for the ECN bits)"
                )));
            }
            out.push(Action::SetField(Oxm::IpDscp(v >> 2)));
        }
        "mod_nw_ecn" => out.push(Action::SetField(Oxm::IpEcn(num(3, "mod_nw_ecn")? as u8))),
        "mod_nw_ttl" | "set_nw_ttl" => out.push(Action::SetNwTtl(num(255, "mod_nw_ttl")? as u8)),
        "dec_ttl" => {
            if it.value.is_some() {
                return Err(it.err(
                    "dec_ttl with controller ids is an Open vSwitch extension that OpenFlow \
                     1.3 cannot express (write plain dec_ttl)",
                ));
            }
            out.push(Action::DecNwTtl);
        }
        "copy_ttl_in" => bare(Action::CopyTtlIn, out)?,
        "copy_ttl_out" => bare(Action::CopyTtlOut, out)?,
        "mod_tp_src" | "mod_tp_dst" => {
            let v = num(0xffff, &lkey)? as u16;
            let o = st.ctx.transport(lkey == "mod_tp_src", v).ok_or_else(|| {
                it.err(format!("{lkey} needs a tcp, udp or sctp match to know which port to set"))
            })?;
            out.push(Action::SetField(o));
        }
        "set_queue" => out.push(Action::SetQueue(num(u32::MAX as u64, "set_queue")? as u32)),
        "group" => out.push(Action::Group(num(u32::MAX as u64, "group")? as u32)),
        "push_pbb" => {
            let t = match it.value {
                Some(v) => parse_num(v, 0xffff, "push_pbb ethertype")? as u16,
                None => 0x88e7,
            };
            out.push(Action::PushPbb(t));
        }
        "pop_pbb" => bare(Action::PopPbb, out)?,
        "set_field" => out.push(Action::SetField(parse_set_field(it, st)?)),
        "experimenter" => {
            let (experimenter, data) = parse_experimenter(it)?;
            out.push(Action::Experimenter { experimenter, data });
        }
        "load" => {
            return Err(it.err(
                "load is a Nicira extension action that OpenFlow 1.3 cannot express; use \
                 set_field:VALUE->FIELD",
            ))
        }
        "drop" => return Err(it.err("drop must be the only action")),
        k if NX_ACTIONS.contains(&k) => {
            return Err(it.err(format!(
                "{k} is an Open vSwitch extension action that OpenFlow 1.3 cannot express"
            )))
        }
        _ => {
            if it.value.is_none() {
                if let Ok(p) = parse_port(it.key) {
                    out.push(output(p));
                    return Ok(());
                }
            }
            return Err(it.err(format!("unknown action \"{key}\"")));
        }
    }
    Ok(())
}

fn output(p: u32) -> Action {
    Action::Output { port: p, max_len: if p == port::CONTROLLER { OFPCML_NO_BUFFER } else { 0 } }
}

fn push_vlan_if_needed(st: &mut ActState, out: &mut Vec<Action>) {
    if !st.has_vlan {
        out.push(Action::PushVlan(0x8100));
        st.has_vlan = true;
    }
}

/// `experimenter(id=N,data=0xHEX)`.
pub(crate) fn parse_experimenter(it: &Item<'_>) -> Result<(u32, Vec<u8>), TextError> {
    let v = it.need_value()?;
    let (mut id, mut data) = (None, Vec::new());
    for kv in Lexer::new(v).collect_all()? {
        let val = kv.need_value()?;
        match kv.key.text {
            "id" => id = Some(parse_num(val, u32::MAX as u64, "experimenter id")? as u32),
            "data" => data = parse_hex_bytes(val)?,
            k => return Err(kv.err(format!("unknown experimenter option \"{k}\""))),
        }
    }
    let id = id.ok_or_else(|| it.err("experimenter needs id=N"))?;
    Ok((id, data))
}

pub(crate) fn parse_hex_bytes(sp: Span<'_>) -> Result<Vec<u8>, TextError> {
    let h = sp.text.strip_prefix("0x").unwrap_or(sp.text);
    decode_hex(h).ok_or_else(|| sp.err("data must be an even number of hex digits after 0x"))
}

/// `set_field:VALUE->FIELD`.
fn parse_set_field(it: &Item<'_>, st: &ActState) -> Result<Oxm, TextError> {
    let v = it.need_value()?;
    let Some(arrow) = v.text.rfind("->") else {
        return Err(v.err("set_field needs VALUE->FIELD"));
    };
    let value = v.slice(0, arrow);
    let name = v.slice(arrow + 2, v.text.len());
    let f = field_by_name(name.text)
        .ok_or_else(|| name.err(format!("unknown field \"{}\"", name.text)))?;
    if value.text.contains('/') {
        return Err(value.err(
            "set_field with a mask cannot be expressed in OpenFlow 1.3 (its set-field \
             action carries no mask; Open vSwitch would turn it into a Nicira load)",
        ));
    }
    let n = name.text;
    let num = |max: u64| parse_num(value, max, n);
    use FieldName as F;
    Ok(match f {
        F::InPort => Oxm::InPort(parse_port(value)?),
        F::InPhyPort => Oxm::InPhyPort(parse_port(value)?),
        F::Metadata => Oxm::Metadata(num(u64::MAX)?, None),
        F::TunId => Oxm::TunnelId(num(u64::MAX)?, None),
        F::EthSrc => Oxm::EthSrc(parse_mac(value)?, None),
        F::EthDst => Oxm::EthDst(parse_mac(value)?, None),
        F::ArpSha => Oxm::ArpSha(parse_mac(value)?, None),
        F::ArpTha => Oxm::ArpTha(parse_mac(value)?, None),
        F::NdSll => Oxm::Ipv6NdSll(parse_mac(value)?),
        F::NdTll => Oxm::Ipv6NdTll(parse_mac(value)?),
        F::EthType => Oxm::EthType(num(0xffff)? as u16),
        F::DlVlan => Oxm::VlanVid(0x1000 | num(0xfff)? as u16, None),
        F::VlanVid => Oxm::VlanVid(num(0x1fff)? as u16, None),
        F::DlVlanPcp | F::VlanPcp => Oxm::VlanPcp(num(7)? as u8),
        F::VlanTci => {
            return Err(name
                .err("vlan_tci cannot be set in OpenFlow 1.3; set vlan_vid and vlan_pcp instead"))
        }
        F::IpDscp => Oxm::IpDscp(num(63)? as u8),
        F::NwTos => {
            let t = num(255)? as u8;
            if t & 3 != 0 {
                return Err(value.err(format!("nw_tos {t} sets ECN bits: use a multiple of 4")));
            }
            Oxm::IpDscp(t >> 2)
        }
        F::IpEcn => Oxm::IpEcn(num(3)? as u8),
        F::NwProto => Oxm::IpProto(num(255)? as u8),
        F::NwSrc => Oxm::Ipv4Src(parse_ip(value)?, None),
        F::NwDst => Oxm::Ipv4Dst(parse_ip(value)?, None),
        F::ArpSpa => Oxm::ArpSpa(parse_ip(value)?, None),
        F::ArpTpa => Oxm::ArpTpa(parse_ip(value)?, None),
        F::TpSrc | F::TpDst => {
            let p = num(0xffff)? as u16;
            st.ctx.transport(f == F::TpSrc, p).ok_or_else(|| {
                name.err(format!(
                    "{n} needs a tcp, udp or sctp match; name the field (tcp_src, udp_src, \
                     sctp_src, ...)"
                ))
            })?
        }
        F::TcpSrc => Oxm::TcpSrc(num(0xffff)? as u16),
        F::TcpDst => Oxm::TcpDst(num(0xffff)? as u16),
        F::UdpSrc => Oxm::UdpSrc(num(0xffff)? as u16),
        F::UdpDst => Oxm::UdpDst(num(0xffff)? as u16),
        F::SctpSrc => Oxm::SctpSrc(num(0xffff)? as u16),
        F::SctpDst => Oxm::SctpDst(num(0xffff)? as u16),
        F::IcmpType => Oxm::Icmpv4Type(num(255)? as u8),
        F::IcmpCode => Oxm::Icmpv4Code(num(255)? as u8),
        F::Icmpv6Type => Oxm::Icmpv6Type(num(255)? as u8),
        F::Icmpv6Code => Oxm::Icmpv6Code(num(255)? as u8),
        F::ArpOp => Oxm::ArpOp(num(0xffff)? as u16),
        F::Ipv6Src => Oxm::Ipv6Src(parse_ip(value)?, None),
        F::Ipv6Dst => Oxm::Ipv6Dst(parse_ip(value)?, None),
        F::Ipv6Label => Oxm::Ipv6Flabel(num(0xfffff)? as u32, None),
        F::NdTarget => Oxm::Ipv6NdTarget(parse_ip(value)?),
        F::MplsLabel => Oxm::MplsLabel(num(0xfffff)? as u32),
        F::MplsTc => Oxm::MplsTc(num(7)? as u8),
        F::MplsBos => Oxm::MplsBos(num(1)? as u8),
        F::PbbIsid => Oxm::PbbIsid(num(0xff_ffff)? as u32, None),
        F::Ipv6Exthdr => Oxm::Ipv6Exthdr(num(0x1ff)? as u16, None),
        F::PbbUca => Oxm::PbbUca(num(1)? as u8),
    })
}

/// Parses a comma-separated action list (`drop` or empty means no actions).
pub(crate) fn parse_action_list(sp: Span<'_>, st: &mut ActState) -> Result<Vec<Action>, TextError> {
    let items = Lexer::new(sp).collect_all()?;
    parse_action_items(&items, st)
}

pub(crate) fn parse_action_items(
    items: &[Item<'_>],
    st: &mut ActState,
) -> Result<Vec<Action>, TextError> {
    if let [only] = items {
        if only.key.text.eq_ignore_ascii_case("drop") {
            only.no_value()?;
            return Ok(Vec::new());
        }
    }
    let mut out = Vec::new();
    for it in items {
        parse_action(it, st, &mut out)?;
    }
    Ok(out)
}

/// A set-field's name and value as Open vSwitch prints them.
fn set_field_parts(o: &Oxm) -> (&'static str, String) {
    let ip6 = |a: &std::net::Ipv6Addr| format_ipv6(*a);
    let (name, v) = match o {
        Oxm::InPort(p) => ("in_port", format_port(*p)),
        Oxm::InPhyPort(p) => ("in_phy_port", format_port(*p)),
        Oxm::Metadata(v, _) => ("metadata", hex_or_zero(*v)),
        Oxm::EthDst(v, _) => ("eth_dst", v.to_string()),
        Oxm::EthSrc(v, _) => ("eth_src", v.to_string()),
        Oxm::EthType(v) => ("eth_type", hex_or_zero(*v as u64)),
        Oxm::VlanVid(v, _) => ("vlan_vid", v.to_string()),
        Oxm::VlanPcp(v) => ("vlan_pcp", v.to_string()),
        Oxm::IpDscp(v) => ("ip_dscp", v.to_string()),
        Oxm::IpEcn(v) => ("nw_ecn", v.to_string()),
        Oxm::IpProto(v) => ("ip_proto", v.to_string()),
        Oxm::Ipv4Src(v, _) => ("ip_src", v.to_string()),
        Oxm::Ipv4Dst(v, _) => ("ip_dst", v.to_string()),
        Oxm::TcpSrc(v) => ("tcp_src", v.to_string()),
        Oxm::TcpDst(v) => ("tcp_dst", v.to_string()),
        Oxm::UdpSrc(v) => ("udp_src", v.to_string()),
        Oxm::UdpDst(v) => ("udp_dst", v.to_string()),
        Oxm::SctpSrc(v) => ("sctp_src", v.to_string()),
        Oxm::SctpDst(v) => ("sctp_dst", v.to_string()),
        Oxm::Icmpv4Type(v) => ("icmp_type", v.to_string()),
        Oxm::Icmpv4Code(v) => ("icmp_code", v.to_string()),
        Oxm::ArpOp(v) => ("arp_op", v.to_string()),
        Oxm::ArpSpa(v, _) => ("arp_spa", v.to_string()),
        Oxm::ArpTpa(v, _) => ("arp_tpa", v.to_string()),
        Oxm::ArpSha(v, _) => ("arp_sha", v.to_string()),
        Oxm::ArpTha(v, _) => ("arp_tha", v.to_string()),
        Oxm::Ipv6Src(v, _) => ("ipv6_src", ip6(v)),
        Oxm::Ipv6Dst(v, _) => ("ipv6_dst", ip6(v)),
        Oxm::Ipv6Flabel(v, _) => ("ipv6_label", hex_or_zero(*v as u64)),
        Oxm::Icmpv6Type(v) => ("icmpv6_type", v.to_string()),
        Oxm::Icmpv6Code(v) => ("icmpv6_code", v.to_string()),
        Oxm::Ipv6NdTarget(v) => ("nd_target", ip6(v)),
        Oxm::Ipv6NdSll(v) => ("nd_sll", v.to_string()),
        Oxm::Ipv6NdTll(v) => ("nd_tll", v.to_string()),
        Oxm::MplsLabel(v) => ("mpls_label", v.to_string()),
        Oxm::MplsTc(v) => ("mpls_tc", v.to_string()),
        Oxm::MplsBos(v) => ("mpls_bos", v.to_string()),
        Oxm::PbbIsid(v, _) => ("pbb_isid", hex_or_zero(*v as u64)),
        Oxm::TunnelId(v, _) => ("tun_id", hex_or_zero(*v)),
        Oxm::Ipv6Exthdr(v, _) => ("ipv6_exthdr", hex_or_zero(*v as u64)),
        Oxm::PbbUca(v) => ("pbb_uca", v.to_string()),
        Oxm::Other { .. } => ("oxm", String::new()),
    };
    (name, v)
}

/// The mask of a masked set-field OXM (only from the wire; the text form cannot say it).
fn set_field_mask(o: &Oxm) -> Option<String> {
    Some(match o {
        Oxm::Metadata(_, Some(m)) | Oxm::TunnelId(_, Some(m)) => hex_or_zero(*m),
        Oxm::EthDst(_, Some(m))
        | Oxm::EthSrc(_, Some(m))
        | Oxm::ArpSha(_, Some(m))
        | Oxm::ArpTha(_, Some(m)) => m.to_string(),
        Oxm::VlanVid(_, Some(m)) => m.to_string(),
        Oxm::Ipv4Src(_, Some(m))
        | Oxm::Ipv4Dst(_, Some(m))
        | Oxm::ArpSpa(_, Some(m))
        | Oxm::ArpTpa(_, Some(m)) => m.to_string(),
        Oxm::Ipv6Src(_, Some(m)) | Oxm::Ipv6Dst(_, Some(m)) => format_ipv6(*m),
        Oxm::Ipv6Flabel(_, Some(m)) | Oxm::PbbIsid(_, Some(m)) => hex_or_zero(*m as u64),
        Oxm::Ipv6Exthdr(_, Some(m)) => hex_or_zero(*m as u64),
        _ => return None,
    })
}

/// Prints one action as Open vSwitch does.
pub fn format_action(a: &Action) -> String {
    match a {
        Action::Output { port: p, max_len } => {
            if *p == port::CONTROLLER {
                format!("CONTROLLER:{max_len}")
            } else if *p < port::MAX {
                format!("output:{p}")
            } else {
                format_port(*p)
            }
        }
        Action::CopyTtlOut => "copy_ttl_out".into(),
        Action::CopyTtlIn => "copy_ttl_in".into(),
        Action::SetMplsTtl(t) => format!("set_mpls_ttl({t})"),
        Action::DecMplsTtl => "dec_mpls_ttl".into(),
        Action::PushVlan(t) => format!("push_vlan:{t:#x}"),
        Action::PopVlan => "pop_vlan".into(),
        Action::PushMpls(t) => format!("push_mpls:0x{t:04x}"),
        Action::PopMpls(t) => format!("pop_mpls:0x{t:04x}"),
        Action::SetQueue(q) => format!("set_queue:{q}"),
        Action::Group(g) => format!("group:{g}"),
        Action::SetNwTtl(t) => format!("mod_nw_ttl:{t}"),
        Action::DecNwTtl => "dec_ttl".into(),
        Action::SetField(Oxm::Other { class, field, has_mask, payload }) => format!(
            "set_field:oxm(class=0x{class:04x},field={field}{},payload=0x{})",
            if *has_mask { ",masked" } else { "" },
            super::match_format::hex_bytes(payload)
        ),
        Action::SetField(o) => {
            let (name, v) = set_field_parts(o);
            match set_field_mask(o) {
                Some(m) => format!("set_field:{v}/{m}->{name}"),
                None => format!("set_field:{v}->{name}"),
            }
        }
        Action::PushPbb(t) => format!("push_pbb:{t:#x}"),
        Action::PopPbb => "pop_pbb".into(),
        Action::Experimenter { experimenter, data } => format!(
            "experimenter(id={experimenter:#x},data=0x{})",
            super::match_format::hex_bytes(data)
        ),
    }
}

/// Prints an action list as Open vSwitch does (`drop` when empty).
pub fn format_actions(actions: &[Action]) -> String {
    if actions.is_empty() {
        return "drop".into();
    }
    actions.iter().map(format_action).collect::<Vec<_>>().join(",")
}
