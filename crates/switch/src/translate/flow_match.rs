//! OXM match fields to the datapath's [`FlowMatch`].
//!
//! Every OpenFlow 1.3 basic field has a place in the datapath's flow key (see
//! `datapath::key`); values keep their OXM form there, so a field's value and mask carry
//! over bit for bit: `VLAN_VID` holds `OFPVID_PRESENT | vid` for a tagged packet and 0
//! for an untagged one, exactly as the OXM spells `OFPVID_NONE`, `OFPVID_PRESENT | vid`
//! and the "any tagged" `OFPVID_PRESENT/OFPVID_PRESENT` (1.3.5 §7.2.3.8), so those need
//! no special case. `IP_DSCP` is the 6-bit DSCP, `MPLS_LABEL` the 20-bit label,
//! `PBB_ISID` the 24-bit I-SID, `IPV6_EXTHDR` the `OFPIEH_*` bits, as the parser writes
//! them.
//!
//! Fields that OpenFlow's prerequisites make mutually exclusive share one place:
//! TCP/UDP/SCTP ports (`TpSrc`/`TpDst`), ICMPv4/ICMPv6 type and code, IPv4 and ARP
//! protocol addresses, ARP and ND link-layer addresses. The translation is exact only
//! because the match is validated first ([`Match::validate`]): a `TCP_SRC` is then always
//! accompanied by `ETH_TYPE` and `IP_PROTO = 6`, which the flow match keeps, so it can
//! never match a UDP port; and no two OXMs of one valid match land in the same place.
//!
//! `IN_PHY_PORT`: the datapath has no logical ports, so every packet's physical input port
//! is its input port (the parser leaves the key's `InPhyPort` at zero). An
//! `IN_PHY_PORT` equal to the match's `IN_PORT` (its prerequisite) adds nothing and is
//! dropped; a different one can never hold, and is kept as `InPhyPort = value` (nonzero,
//! as validation requires), which no packet's key has.

use datapath::key::{Field, FlowMatch};
use openflow::match13::Match;
use openflow::oxm::Oxm;
use openflow::MacAddr;

use super::TranslateError;

/// Translates a 1.3 match. The match is validated first ([`Match::validate`]: supported
/// classes, duplicates, value/mask consistency, value ranges, prerequisites); a TLV of a
/// class other than OpenFlow basic is [`TranslateError::UnsupportedField`].
pub fn match_to_flow(m: &Match) -> Result<FlowMatch, TranslateError> {
    if let Some(Oxm::Other { class, field, .. }) =
        m.fields.iter().find(|o| matches!(o, Oxm::Other { .. }))
    {
        return Err(TranslateError::UnsupportedField { class: *class, field: *field });
    }
    m.validate().map_err(TranslateError::Invalid)?;
    let in_port = m.fields.iter().find_map(|o| match *o {
        Oxm::InPort(p) => Some(p),
        _ => None,
    });
    let mut fm = FlowMatch::ANY;
    for oxm in &m.fields {
        if let Oxm::InPhyPort(p) = *oxm {
            if Some(p) == in_port {
                continue;
            }
        }
        let Some(FieldValue { field, value, mask }) = field_value(oxm) else {
            // Unreachable after the class check above; kept total rather than panicking.
            return Err(TranslateError::UnsupportedField {
                class: oxm.class(),
                field: (oxm.header() >> 9 & 0x7f) as u8,
            });
        };
        fm.set(field, value, mask.unwrap_or(field.full()));
    }
    Ok(fm)
}

/// An OXM's datapath place, value and mask, right-aligned as the key holds them.
pub(crate) struct FieldValue {
    pub field: Field,
    pub value: u128,
    /// `None` when the OXM has no mask (all bits of the field matter).
    pub mask: Option<u128>,
}

fn mac(m: MacAddr) -> u128 {
    let [a, b, c, d, e, f] = m.0;
    u128::from(u64::from_be_bytes([0, 0, a, b, c, d, e, f]))
}

/// The datapath field an OXM's value lives in, with the value and mask. `None` for
/// [`Oxm::Other`] (no basic field).
pub(crate) fn field_value(oxm: &Oxm) -> Option<FieldValue> {
    fn fv<T: Into<u128>>(field: Field, value: T, mask: Option<T>) -> FieldValue {
        FieldValue { field, value: value.into(), mask: mask.map(Into::into) }
    }
    fn fmac(field: Field, value: MacAddr, mask: Option<MacAddr>) -> FieldValue {
        FieldValue { field, value: mac(value), mask: mask.map(mac) }
    }
    fn v4(field: Field, value: std::net::Ipv4Addr, mask: Option<std::net::Ipv4Addr>) -> FieldValue {
        fv(field, u32::from(value), mask.map(u32::from))
    }
    fn v6(field: Field, value: std::net::Ipv6Addr, mask: Option<std::net::Ipv6Addr>) -> FieldValue {
        fv(field, u128::from(value), mask.map(u128::from))
    }
    use Field as F;
    Some(match *oxm {
        Oxm::InPort(v) => fv(F::InPort, v, None),
        Oxm::InPhyPort(v) => fv(F::InPhyPort, v, None),
        Oxm::Metadata(v, m) => fv(F::Metadata, v, m),
        Oxm::EthDst(v, m) => fmac(F::EthDst, v, m),
        Oxm::EthSrc(v, m) => fmac(F::EthSrc, v, m),
        Oxm::EthType(v) => fv(F::EthType, v, None),
        Oxm::VlanVid(v, m) => fv(F::VlanVid, v, m),
        Oxm::VlanPcp(v) => fv(F::VlanPcp, v, None),
        Oxm::IpDscp(v) => fv(F::IpDscp, v, None),
        Oxm::IpEcn(v) => fv(F::IpEcn, v, None),
        Oxm::IpProto(v) => fv(F::IpProto, v, None),
        Oxm::Ipv4Src(v, m) | Oxm::ArpSpa(v, m) => v4(F::Ipv4Src, v, m),
        Oxm::Ipv4Dst(v, m) | Oxm::ArpTpa(v, m) => v4(F::Ipv4Dst, v, m),
        Oxm::TcpSrc(v) | Oxm::UdpSrc(v) | Oxm::SctpSrc(v) => fv(F::TpSrc, v, None),
        Oxm::TcpDst(v) | Oxm::UdpDst(v) | Oxm::SctpDst(v) => fv(F::TpDst, v, None),
        Oxm::Icmpv4Type(v) | Oxm::Icmpv6Type(v) => fv(F::IcmpType, v, None),
        Oxm::Icmpv4Code(v) | Oxm::Icmpv6Code(v) => fv(F::IcmpCode, v, None),
        Oxm::ArpOp(v) => fv(F::ArpOp, v, None),
        Oxm::ArpSha(v, m) => fmac(F::ArpSha, v, m),
        Oxm::ArpTha(v, m) => fmac(F::ArpTha, v, m),
        Oxm::Ipv6NdSll(v) => fmac(F::ArpSha, v, None),
        Oxm::Ipv6NdTll(v) => fmac(F::ArpTha, v, None),
        Oxm::Ipv6Src(v, m) => v6(F::Ipv6Src, v, m),
        Oxm::Ipv6Dst(v, m) => v6(F::Ipv6Dst, v, m),
        Oxm::Ipv6Flabel(v, m) => fv(F::Ipv6Flabel, v, m),
        Oxm::Ipv6NdTarget(v) => v6(F::Ipv6NdTarget, v, None),
        Oxm::MplsLabel(v) => fv(F::MplsLabel, v, None),
        Oxm::MplsTc(v) => fv(F::MplsTc, v, None),
        Oxm::MplsBos(v) => fv(F::MplsBos, v, None),
        Oxm::PbbIsid(v, m) => fv(F::PbbIsid, v, m),
        Oxm::TunnelId(v, m) => fv(F::TunnelId, v, m),
        Oxm::Ipv6Exthdr(v, m) => fv(F::Ipv6Exthdr, v, m),
        Oxm::PbbUca(v) => fv(F::PbbUca, v, None),
        Oxm::Other { .. } => return None,
    })
}
