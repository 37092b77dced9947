//! Peregrine's experimenter action for the OpenFlow 1.0 actions whose effect depends on
//! the packet, where the rule's match leaves that open: `set_vlan_vid` / `set_vlan_pcp`
//! (rewrite a tag, or push one onto an untagged frame), `set_nw_src` / `set_nw_dst` /
//! `set_nw_tos` (only on IP packets) and `set_tp_src` / `set_tp_dst` (only on TCP, UDP
//! and SCTP). OpenFlow 1.3 has no action that means that, and the agent keeps 1.3
//! instructions, so such an action is kept as an `OFPAT_EXPERIMENTER` of
//! [`PEREGRINE_EXPERIMENTER`] whose 8 data bytes are the 1.0 action's type (16 bits),
//! two zero bytes and its argument (32 bits, right-aligned: VID, PCP, IPv4 address, ToS
//! or port), all big-endian.
//!
//! A 1.3 flow dump shows such an action as Open vSwitch shows the same 1.0 action to a
//! 1.3 client ([`show_flow_stats_to_v13`]): `push_vlan` and a set-field for a VLAN set
//! (the tag is pushed only where the frame has none), a set-field for the others (the
//! UDP port unless the match names TCP or SCTP). Every 1.3 client decodes that; the
//! entry itself keeps the exact action, and a 1.0 dump shows the 1.0 action. A 1.3
//! controller may also send the experimenter action: it means the same in an
//! apply-actions list, and is refused (`OFPBAC_BAD_EXPERIMENTER`) in write-actions and
//! group buckets, which are action sets.
//!
//! In the datapath each becomes a conditional rewrite ([`DpAction::ModVlanVid`],
//! [`DpAction::ModVlanPcp`], [`DpAction::SetFieldIfPresent`]), with the semantics of
//! Open vSwitch: on an untagged frame the VID set pushes VID/PCP 0 then sets the VID, the
//! PCP set pushes and sets the PCP; `set_nw_src`/`set_nw_dst` act on IPv4 only (not ARP),
//! `set_nw_tos` on IPv4 and IPv6, `set_tp_*` on TCP, UDP and SCTP only (not ICMP).

use std::net::Ipv4Addr;

use datapath::action::Action as DpAction;
use datapath::key::Field;
use openflow::action::Action as Action13;
use openflow::instruction::Instruction;
use openflow::oxm::Oxm;
use openflow::v10::action10::action_type as t;
use openflow::v10::Action as Action10;
use openflow::v13::multipart::FlowStats;

pub use crate::agent::PEREGRINE_EXPERIMENTER;

/// The experimenter action for `a`, if `a` is one of the actions this module carries
/// (with a valid argument: VID ≤ 0xfff, PCP ≤ 7, ToS without ECN bits).
pub fn conditional_to_v13(a: &Action10) -> Option<Action13> {
    let (ty, arg) = match *a {
        Action10::SetVlanVid(v) if v <= 0x0fff => (t::SET_VLAN_VID, u32::from(v)),
        Action10::SetVlanPcp(p) if p <= 7 => (t::SET_VLAN_PCP, u32::from(p)),
        Action10::SetNwSrc(ip) => (t::SET_NW_SRC, u32::from(ip)),
        Action10::SetNwDst(ip) => (t::SET_NW_DST, u32::from(ip)),
        Action10::SetNwTos(tos) if tos & 3 == 0 => (t::SET_NW_TOS, u32::from(tos)),
        Action10::SetTpSrc(p) => (t::SET_TP_SRC, u32::from(p)),
        Action10::SetTpDst(p) => (t::SET_TP_DST, u32::from(p)),
        _ => return None,
    };
    let mut data = Vec::with_capacity(8);
    data.extend_from_slice(&ty.to_be_bytes());
    data.extend_from_slice(&[0, 0]);
    data.extend_from_slice(&arg.to_be_bytes());
    Some(Action13::Experimenter { experimenter: PEREGRINE_EXPERIMENTER, data })
}

/// The 1.0 action a 1.3 action carries, if it is this module's experimenter action
/// (exactly as [`conditional_to_v13`] makes it).
pub fn conditional_from_v13(a: &Action13) -> Option<Action10> {
    let Action13::Experimenter { experimenter: PEREGRINE_EXPERIMENTER, data } = a else {
        return None;
    };
    let [t0, t1, 0, 0, a0, a1, a2, a3] = data[..] else {
        return None;
    };
    let arg = u32::from_be_bytes([a0, a1, a2, a3]);
    let a10 = match u16::from_be_bytes([t0, t1]) {
        t::SET_VLAN_VID => Action10::SetVlanVid(u16::try_from(arg).ok()?),
        t::SET_VLAN_PCP => Action10::SetVlanPcp(u8::try_from(arg).ok()?),
        t::SET_NW_SRC => Action10::SetNwSrc(Ipv4Addr::from(arg)),
        t::SET_NW_DST => Action10::SetNwDst(Ipv4Addr::from(arg)),
        t::SET_NW_TOS => Action10::SetNwTos(u8::try_from(arg).ok()?),
        t::SET_TP_SRC => Action10::SetTpSrc(u16::try_from(arg).ok()?),
        t::SET_TP_DST => Action10::SetTpDst(u16::try_from(arg).ok()?),
        _ => return None,
    };
    (conditional_to_v13(&a10).as_ref() == Some(a)).then_some(a10)
}

/// The datapath's conditional rewrite for a 1.3 action, if it is this module's
/// experimenter action (module comment).
pub fn conditional_to_datapath(a: &Action13) -> Option<DpAction> {
    Some(match conditional_from_v13(a)? {
        Action10::SetVlanVid(v) => DpAction::ModVlanVid(v),
        Action10::SetVlanPcp(p) => DpAction::ModVlanPcp(p),
        Action10::SetNwSrc(ip) => DpAction::SetFieldIfPresent(Field::Ipv4Src, u32::from(ip).into()),
        Action10::SetNwDst(ip) => DpAction::SetFieldIfPresent(Field::Ipv4Dst, u32::from(ip).into()),
        Action10::SetNwTos(tos) => DpAction::SetFieldIfPresent(Field::IpDscp, (tos >> 2).into()),
        Action10::SetTpSrc(p) => DpAction::SetFieldIfPresent(Field::TpSrc, p.into()),
        Action10::SetTpDst(p) => DpAction::SetFieldIfPresent(Field::TpDst, p.into()),
        _ => return None,
    })
}

/// The standard 1.3 actions a flow dump shows for `a`, this module's experimenter
/// action, in a rule whose match names IP protocol `ip_proto` (module comment).
fn shown_to_v13(a: &Action10, ip_proto: Option<u8>) -> Vec<Action13> {
    let push = Action13::PushVlan(0x8100);
    let set = |o: Oxm| Action13::SetField(o);
    match *a {
        Action10::SetVlanVid(v) => vec![push, set(Oxm::VlanVid(0x1000 | v, None))],
        Action10::SetVlanPcp(p) => vec![push, set(Oxm::VlanPcp(p))],
        Action10::SetNwSrc(ip) => vec![set(Oxm::Ipv4Src(ip, None))],
        Action10::SetNwDst(ip) => vec![set(Oxm::Ipv4Dst(ip, None))],
        Action10::SetNwTos(tos) => vec![set(Oxm::IpDscp(tos >> 2))],
        Action10::SetTpSrc(p) => vec![set(match ip_proto {
            Some(6) => Oxm::TcpSrc(p),
            Some(132) => Oxm::SctpSrc(p),
            _ => Oxm::UdpSrc(p),
        })],
        Action10::SetTpDst(p) => vec![set(match ip_proto {
            Some(6) => Oxm::TcpDst(p),
            Some(132) => Oxm::SctpDst(p),
            _ => Oxm::UdpDst(p),
        })],
        _ => Vec::new(),
    }
}

/// Rewrites the flow-stats entries of a reply to a 1.3 client so that this module's
/// experimenter actions show as standard ones (module comment).
pub fn show_flow_stats_to_v13(stats: &mut [FlowStats]) {
    for fs in stats {
        let ip_proto = fs.match_.fields.iter().find_map(|o| match o {
            Oxm::IpProto(p) => Some(*p),
            _ => None,
        });
        for ins in &mut fs.instructions {
            let Instruction::ApplyActions(actions) = ins else {
                continue;
            };
            if !actions.iter().any(|a| conditional_from_v13(a).is_some()) {
                continue;
            }
            *actions = actions
                .iter()
                .flat_map(|a| match conditional_from_v13(a) {
                    Some(a10) => shown_to_v13(&a10, ip_proto),
                    None => vec![a.clone()],
                })
                .collect();
        }
    }
}
