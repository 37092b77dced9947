//! OpenFlow 1.3 matches as OpenFlow 1.0 matches: the inverse of [`Match::to_oxm`], the
//! one conversion the agent (showing its 1.3 flows to 1.0 controllers) and `ctl` (sending
//! ovs-ofctl text to 1.0 switches) both use.
//!
//! 1.3 → 1.0 ([`match_from_v13`]) is the inverse on everything 1.0 can express, and gives
//! the canonical 1.0 form: wildcarded fields are zero, a wildcarded address has the
//! count 32 (as Open vSwitch writes it), no bit above `OFPFW_ALL` is set. So for a
//! canonical 1.0 match `m`, `match_from_v13(&m.to_oxm()) == m`; for any 1.0 match
//! it gives the canonical match that means the same. A 1.3 match 1.0 cannot express
//! (IPv6 addresses and extension headers, MPLS, metadata, masked MACs, non-prefix address masks, "any tagged" without a
//! PCP, ECN, ...) is an error of kind `OFPET_BAD_MATCH`.

use std::net::Ipv4Addr;

use super::{wildcards as fw, Match, OFP_VLAN_NONE};
use crate::match13::Match as Match13;
use crate::oxm::{Oxm, OFPVID_NONE, OFPVID_PRESENT};
use crate::v10::port::port_from_v13;
use crate::{ErrorKind, MacAddr, OfpError};

/// A field as ovs-ofctl writes it (`ipv6_src=::1`), for error messages.
fn field_text(o: &Oxm) -> String {
    crate::text::format_match(&Match13 { fields: vec![o.clone()] })
}

fn unsupported(kind: ErrorKind, what: String) -> OfpError {
    OfpError::new(kind, format!("OpenFlow 1.0 cannot match {what}"))
}

/// The prefix length of an IPv4 mask (`None`: /32), or an error if it is not a prefix.
fn prefix_len(mask: Option<Ipv4Addr>) -> Result<u32, OfpError> {
    let Some(m) = mask else { return Ok(32) };
    let bits = u32::from(m);
    let len = bits.leading_ones();
    if bits.checked_shl(len).unwrap_or(0) != 0 {
        return Err(unsupported(
            ErrorKind::BAD_MATCH_BAD_NW_ADDR_MASK,
            format!("the IPv4 mask {m} (only address prefixes)"),
        ));
    }
    Ok(len)
}

/// An exact MAC, or an error for a mask other than all ones (1.0 cannot mask MACs).
fn exact_mac(a: MacAddr, mask: Option<MacAddr>) -> Result<MacAddr, OfpError> {
    match mask {
        None | Some(MacAddr::BROADCAST) => Ok(a),
        Some(m) => Err(unsupported(
            ErrorKind::BAD_MATCH_BAD_DL_ADDR_MASK,
            format!("a masked Ethernet address ({a:?}/{m:?})"),
        )),
    }
}

/// Sets an address field and its wildcard count (`shift` is `NW_SRC_SHIFT` or
/// `NW_DST_SHIFT`); a /0 stays wildcarded.
fn set_addr(
    m: &mut Match,
    shift: u32,
    a: Ipv4Addr,
    mask: Option<Ipv4Addr>,
) -> Result<Ipv4Addr, OfpError> {
    let len = prefix_len(mask)?;
    let field_mask = ((1u32 << 6) - 1) << shift;
    m.wildcards = m.wildcards & !field_mask | (32 - len) << shift;
    let keep = u32::MAX.checked_shl(32 - len).unwrap_or(0);
    Ok(Ipv4Addr::from(u32::from(a) & keep))
}

/// The canonical 1.0 match equivalent to the 1.3 match `m` (module comment), or an
/// `OFPET_BAD_MATCH` error when 1.0 cannot express it: a field 1.0 lacks
/// (`OFPBMC_BAD_FIELD`), a masked MAC (`OFPBMC_BAD_DL_ADDR_MASK`), a non-prefix IPv4 mask
/// (`OFPBMC_BAD_NW_ADDR_MASK`), a VLAN mask other than "any tagged" with a PCP, an
/// `IN_PORT` without a 1.0 number or an ARP opcode above 255 (`OFPBMC_BAD_VALUE`), or
/// fields 1.0 would ignore for want of prerequisites (`OFPBMC_BAD_PREREQ`: a match that
/// fails 1.3's own prerequisite checks).
pub fn match_from_v13(m: &Match13) -> Result<Match, OfpError> {
    let mut out = Match {
        wildcards: fw::ALL & !(fw::NW_SRC_MASK | fw::NW_DST_MASK) | fw::NW_SRC_ALL | fw::NW_DST_ALL,
        ..Match::all()
    };
    // `VLAN_VID` present/present ("any tagged"): 1.0 says it only through a PCP.
    let mut any_tagged = false;
    for f in &m.fields {
        let clear = |out: &mut Match, bit: u32| out.wildcards &= !bit;
        match *f {
            Oxm::InPort(p) => {
                out.in_port = port_from_v13(p).ok_or_else(|| {
                    unsupported(
                        ErrorKind::BAD_MATCH_BAD_VALUE,
                        format!("in_port={p} (its ports are 16 bits)"),
                    )
                })?;
                clear(&mut out, fw::IN_PORT);
            }
            Oxm::EthDst(a, mask) => {
                out.dl_dst = exact_mac(a, mask)?;
                clear(&mut out, fw::DL_DST);
            }
            Oxm::EthSrc(a, mask) => {
                out.dl_src = exact_mac(a, mask)?;
                clear(&mut out, fw::DL_SRC);
            }
            Oxm::EthType(t) => {
                out.dl_type = t;
                clear(&mut out, fw::DL_TYPE);
            }
            Oxm::VlanVid(v, None) if v == OFPVID_NONE => {
                out.dl_vlan = OFP_VLAN_NONE;
                clear(&mut out, fw::DL_VLAN);
            }
            Oxm::VlanVid(v, None) if v & OFPVID_PRESENT != 0 && v <= 0x1fff => {
                out.dl_vlan = v & 0x0fff;
                clear(&mut out, fw::DL_VLAN);
            }
            Oxm::VlanVid(OFPVID_PRESENT, Some(OFPVID_PRESENT)) => any_tagged = true,
            Oxm::VlanVid(v, mask) => {
                return Err(unsupported(
                    ErrorKind::BAD_MATCH_BAD_VALUE,
                    format!("vlan_vid {v:#x}/{mask:#x?}"),
                ))
            }
            Oxm::VlanPcp(p) => {
                out.dl_vlan_pcp = p;
                clear(&mut out, fw::DL_VLAN_PCP);
            }
            Oxm::IpDscp(d) if d <= 63 => {
                out.nw_tos = d << 2;
                clear(&mut out, fw::NW_TOS);
            }
            Oxm::IpDscp(d) => {
                return Err(unsupported(ErrorKind::BAD_MATCH_BAD_VALUE, format!("ip_dscp {d}")))
            }
            Oxm::IpProto(p) => {
                out.nw_proto = p;
                clear(&mut out, fw::NW_PROTO);
            }
            Oxm::ArpOp(op) => {
                out.nw_proto = u8::try_from(op).map_err(|_| {
                    unsupported(ErrorKind::BAD_MATCH_BAD_VALUE, format!("arp_op {op}"))
                })?;
                clear(&mut out, fw::NW_PROTO);
            }
            Oxm::Ipv4Src(a, mask) | Oxm::ArpSpa(a, mask) => {
                out.nw_src = set_addr(&mut out, fw::NW_SRC_SHIFT, a, mask)?;
            }
            Oxm::Ipv4Dst(a, mask) | Oxm::ArpTpa(a, mask) => {
                out.nw_dst = set_addr(&mut out, fw::NW_DST_SHIFT, a, mask)?;
            }
            Oxm::TcpSrc(p) | Oxm::UdpSrc(p) | Oxm::SctpSrc(p) => {
                out.tp_src = p;
                clear(&mut out, fw::TP_SRC);
            }
            Oxm::TcpDst(p) | Oxm::UdpDst(p) | Oxm::SctpDst(p) => {
                out.tp_dst = p;
                clear(&mut out, fw::TP_DST);
            }
            Oxm::Icmpv4Type(t) | Oxm::Icmpv6Type(t) => {
                out.tp_src = u16::from(t);
                clear(&mut out, fw::TP_SRC);
            }
            Oxm::Icmpv4Code(c) | Oxm::Icmpv6Code(c) => {
                out.tp_dst = u16::from(c);
                clear(&mut out, fw::TP_DST);
            }
            ref other => {
                return Err(unsupported(ErrorKind::BAD_MATCH_BAD_FIELD, field_text(other)))
            }
        }
    }
    if any_tagged && out.is_wildcarded(fw::DL_VLAN_PCP) {
        return Err(unsupported(
            ErrorKind::BAD_MATCH_BAD_VALUE,
            "\"any VLAN tag\" without a VLAN priority".into(),
        ));
    }
    // What 1.0 would read back must be what 1.3 said: a field that 1.0 ignores for want
    // of a prerequisite (or a duplicate) means the 1.3 match was not one 1.0 can state.
    if normalised(&out.to_oxm()) != normalised(m) {
        return Err(unsupported(
            ErrorKind::BAD_MATCH_BAD_PREREQ,
            format!(
                "{}: some of its fields lack their prerequisites",
                crate::text::format_match(m)
            ),
        ));
    }
    Ok(out)
}

/// The fields of a match in a form where equal meaning is equal value: sorted by field,
/// full masks dropped, addresses cleared outside their masks, /0 addresses dropped.
fn normalised(m: &Match13) -> Vec<Oxm> {
    let mut v: Vec<Oxm> = m
        .fields
        .iter()
        .filter_map(|f| match *f {
            Oxm::EthDst(a, Some(MacAddr::BROADCAST)) => Some(Oxm::EthDst(a, None)),
            Oxm::EthSrc(a, Some(MacAddr::BROADCAST)) => Some(Oxm::EthSrc(a, None)),
            Oxm::Ipv4Src(a, m) => norm_addr(a, m, Oxm::Ipv4Src),
            Oxm::Ipv4Dst(a, m) => norm_addr(a, m, Oxm::Ipv4Dst),
            Oxm::ArpSpa(a, m) => norm_addr(a, m, Oxm::ArpSpa),
            Oxm::ArpTpa(a, m) => norm_addr(a, m, Oxm::ArpTpa),
            ref other => Some(other.clone()),
        })
        .collect();
    v.sort_by_key(|f| f.field());
    v
}

/// An IPv4 field with its address cleared outside the mask and a full mask dropped;
/// `None` for a /0 (it matches everything).
fn norm_addr(
    a: Ipv4Addr,
    m: Option<Ipv4Addr>,
    mk: fn(Ipv4Addr, Option<Ipv4Addr>) -> Oxm,
) -> Option<Oxm> {
    match m {
        None | Some(Ipv4Addr::BROADCAST) => Some(mk(a, None)),
        Some(m) if m.is_unspecified() => None,
        Some(m) => Some(mk(Ipv4Addr::from(u32::from(a) & u32::from(m)), Some(m))),
    }
}
