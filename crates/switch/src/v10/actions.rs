//! Action lists between OpenFlow 1.0 and 1.3, with the exact 1.0 meaning.
//!
//! Some 1.0 actions mean different things on different packets, where 1.3 needs one
//! action per case: `set_vlan_vid`/`set_vlan_pcp` change the tag of a tagged frame but
//! push a new tag (priority or VID zero) onto an untagged one; `set_nw_*` act only on
//! IP packets and `set_tp_*` only on TCP, UDP and SCTP, where the datapath's set-field
//! also writes ARP addresses. The translation therefore takes [`PacketFacts`]: what the
//! rule's match (or a packet-out's frame) says about the packet, updated as the list runs
//! (`strip_vlan` leaves it untagged, a VLAN set leaves it tagged). With the facts:
//!
//! | 1.0 | 1.3 |
//! |---|---|
//! | `output:p` (`max_len`) | `output:p'` (same `max_len`; `p'` renumbered) |
//! | `set_vlan_vid:v` on a tagged packet | `set_field:vlan_vid=0x1000\|v` |
//! | `set_vlan_vid:v` on an untagged one | `push_vlan:0x8100, set_field:vlan_vid=0x1000\|v, set_field:vlan_pcp=0` |
//! | `set_vlan_pcp:p` on a tagged packet | `set_field:vlan_pcp=p` |
//! | `set_vlan_pcp:p` on an untagged one | `push_vlan:0x8100, set_field:vlan_vid=0x1000, set_field:vlan_pcp=p` |
//! | `strip_vlan` | `pop_vlan` (a no-op on an untagged frame in both) |
//! | `set_dl_src`/`set_dl_dst` | `set_field:eth_src`/`eth_dst` |
//! | `set_nw_src`/`set_nw_dst` (IPv4) | `set_field:ipv4_src`/`ipv4_dst` |
//! | `set_nw_tos:t` (IPv4) | `set_field:ip_dscp=t>>2` (1.0 refuses ECN bits in `t`) |
//! | `set_tp_src`/`set_tp_dst` (TCP, UDP over IPv4) | `set_field:tcp_*` / `udp_*` |
//! | `enqueue:p:q` | `set_queue:q, output:p'` |
//! | a VLAN, `set_nw_*` or `set_tp_*` set otherwise | peregrine's conditional action |
//!
//! Where the facts do not pin what the action needs (a VLAN set where the match leaves
//! the tag open, a `set_nw_*` unless the packet is known to be IPv4, a `set_tp_*` unless
//! it is known to be TCP or UDP over IPv4), the action keeps its 1.0 meaning for every
//! packet as Open vSwitch gives it, in peregrine's experimenter action
//! (`conditional.rs`): a VLAN set rewrites a tag or pushes one, `set_nw_*`/`set_tp_*`
//! change only packets that have the header. That includes a match that pins the header
//! absent (`dl_type=0x0806` with `set_nw_src`): Open vSwitch accepts it over 1.0 and the
//! action does nothing to such packets. Refused as `OFPBAC_UNSUPPORTED_ORDER` (1.0
//! `OFPBAC_BAD_ARGUMENT`): an output other than to the controller after an `enqueue`
//! (1.3's `set_queue` would send it to the queue too, 1.0's plain output does not).
//! Vendor actions: `OFPBAC_BAD_VENDOR`. Before all that, 1.0's own argument checks
//! ([`Action10::validate`]).
//!
//! Back, 1.3 → 1.0 ([`actions_from_v13`]): a 1.3 list is reported as the 1.0 list whose
//! translation under the same facts is exactly that 1.3 list; any other list (from a 1.3
//! controller, or needing other facts) is an error. So a 1.0 list always comes back as
//! itself, except `set_vlan_vid:0` and `set_vlan_pcp:0` on an untagged packet, which
//! translate alike and come back as `set_vlan_vid:0`.

use openflow::action::{port as p13, Action as Action13};
use openflow::instruction::Instruction;
use openflow::oxm::{Oxm, OFPVID_PRESENT};
use openflow::v10::match10::{
    wildcards as fw, Match as Match10, ETH_TYPE_IP, IP_PROTO_TCP, IP_PROTO_UDP, OFP_VLAN_NONE,
};
use openflow::v10::translate::{apply_actions, read_actions, take_action};
use openflow::v10::Action as Action10;
use openflow::{ErrorKind, OfpError};

use super::conditional::{conditional_from_v13, conditional_to_v13};
use super::ports::port_no_to_v13;

/// The 802.1Q TPID, the only tag OpenFlow 1.0 knows.
const TPID_8021Q: u16 = 0x8100;
/// The 802.1ad TPID: the datapath reads it as a tag, OpenFlow 1.0 as an ethertype.
const TPID_8021AD: u16 = 0x88a8;

/// Whether a packet carries an 802.1Q tag, as far as is known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tag {
    Tagged,
    Untagged,
    Unknown,
}

/// What is known about a packet before (or while) an action list runs: its tag, its
/// 1.0 `dl_type` and, for IPv4, its `nw_proto`. Invariant: `nw_proto` is `Some` only when
/// `dl_type` is `Some(0x0800)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketFacts {
    pub tag: Tag,
    pub dl_type: Option<u16>,
    pub nw_proto: Option<u8>,
}

impl PacketFacts {
    /// Nothing known (a buffered packet-out).
    pub const UNKNOWN: PacketFacts =
        PacketFacts { tag: Tag::Unknown, dl_type: None, nw_proto: None };

    /// What a 1.0 match says about every packet it matches: the tag from `dl_vlan`
    /// (`OFP_VLAN_NONE` untagged, another VID tagged) or from a matched PCP (tagged, as
    /// [`Match10::to_oxm`] requires a tag for it); `dl_type` if matched; `nw_proto` if
    /// matched with `dl_type` IPv4.
    pub fn of_match(m: &Match10) -> PacketFacts {
        let tag = if !m.is_wildcarded(fw::DL_VLAN) {
            if m.dl_vlan == OFP_VLAN_NONE {
                Tag::Untagged
            } else {
                Tag::Tagged
            }
        } else if !m.is_wildcarded(fw::DL_VLAN_PCP) {
            Tag::Tagged
        } else {
            Tag::Unknown
        };
        let dl_type = (!m.is_wildcarded(fw::DL_TYPE)).then_some(m.dl_type);
        let nw_proto =
            (dl_type == Some(ETH_TYPE_IP) && !m.is_wildcarded(fw::NW_PROTO)).then_some(m.nw_proto);
        PacketFacts { tag, dl_type, nw_proto }
    }

    /// What a frame's bytes say (a packet-out with data). An 802.1Q tag makes it tagged
    /// and the ethertype after the tag its `dl_type`; an 802.1ad outer tag leaves the tag
    /// unknown (the datapath sees a tag, 1.0 does not) and `dl_type` 0x88a8 (as 1.0 reads
    /// it); a frame shorter than an Ethernet header says nothing.
    pub fn of_frame(data: &[u8]) -> PacketFacts {
        let be16 = |at: usize| data.get(at..at + 2).map(|b| u16::from_be_bytes([b[0], b[1]]));
        let Some(outer) = be16(12) else {
            return PacketFacts::UNKNOWN;
        };
        let (tag, dl_type, l3) = match outer {
            TPID_8021Q => (Tag::Tagged, be16(16), 18),
            TPID_8021AD => (Tag::Unknown, Some(outer), 14),
            t => (Tag::Untagged, Some(t), 14),
        };
        let nw_proto = if dl_type == Some(ETH_TYPE_IP) { data.get(l3 + 9).copied() } else { None };
        PacketFacts { tag, dl_type, nw_proto }
    }

    fn is_ipv4(&self) -> bool {
        self.dl_type == Some(ETH_TYPE_IP)
    }
}

/// The conditional form of `a`, a VLAN, `set_nw_*` or `set_tp_*` set (whose argument
/// [`Action10::validate`] checked already; kept total).
fn conditional(a: &Action10) -> Result<Action13, OfpError> {
    conditional_to_v13(a).ok_or_else(|| {
        OfpError::new(ErrorKind::BAD_ACTION_BAD_ARGUMENT, format!("{a:?}: argument out of range"))
    })
}

/// The 1.3 actions for one VLAN set: the set-field alone on a tagged packet, a push with
/// both TCI fields on an untagged one, the conditional action when it may be either.
fn vlan_set(
    facts: &PacketFacts,
    a: &Action10,
    vid: u16,
    pcp: u8,
) -> Result<Vec<Action13>, OfpError> {
    let only = match a {
        Action10::SetVlanVid(_) => Oxm::VlanVid(OFPVID_PRESENT | vid, None),
        _ => Oxm::VlanPcp(pcp),
    };
    Ok(match facts.tag {
        Tag::Tagged => vec![Action13::SetField(only)],
        Tag::Untagged => vec![
            Action13::PushVlan(TPID_8021Q),
            Action13::SetField(Oxm::VlanVid(OFPVID_PRESENT | vid, None)),
            Action13::SetField(Oxm::VlanPcp(pcp)),
        ],
        Tag::Unknown => vec![conditional(a)?],
    })
}

/// Translates a 1.0 action list for packets described by `facts` (module comment).
pub fn actions_to_v13(actions: &[Action10], facts: PacketFacts) -> Result<Vec<Action13>, OfpError> {
    Action10::validate_list(actions)?;
    let mut facts = facts;
    let mut queued = false;
    let mut out = Vec::with_capacity(actions.len());
    for a in actions {
        match *a {
            Action10::Output { port, max_len } => {
                let port = port_no_to_v13(port);
                if queued && port != p13::CONTROLLER {
                    return Err(OfpError::new(
                        ErrorKind::BAD_ACTION_UNSUPPORTED_ORDER,
                        format!("{a:?} after an enqueue: OpenFlow 1.3 would send it to that queue"),
                    ));
                }
                out.push(Action13::Output { port, max_len });
            }
            Action10::Enqueue { port, queue_id } => {
                out.push(Action13::SetQueue(queue_id));
                out.push(Action13::Output { port: port_no_to_v13(port), max_len: 0 });
                queued = true;
            }
            Action10::SetVlanVid(vid) => {
                out.extend(vlan_set(&facts, a, vid, 0)?);
                facts.tag = Tag::Tagged;
            }
            Action10::SetVlanPcp(pcp) => {
                out.extend(vlan_set(&facts, a, 0, pcp)?);
                facts.tag = Tag::Tagged;
            }
            Action10::StripVlan => {
                out.push(Action13::PopVlan);
                facts.tag = Tag::Untagged;
            }
            Action10::SetDlSrc(m) => out.push(Action13::SetField(Oxm::EthSrc(m, None))),
            Action10::SetDlDst(m) => out.push(Action13::SetField(Oxm::EthDst(m, None))),
            Action10::SetNwSrc(_) | Action10::SetNwDst(_) | Action10::SetNwTos(_)
                if !facts.is_ipv4() =>
            {
                out.push(conditional(a)?)
            }
            Action10::SetNwSrc(ip) => out.push(Action13::SetField(Oxm::Ipv4Src(ip, None))),
            Action10::SetNwDst(ip) => out.push(Action13::SetField(Oxm::Ipv4Dst(ip, None))),
            Action10::SetNwTos(tos) => out.push(Action13::SetField(Oxm::IpDscp(tos >> 2))),
            Action10::SetTpSrc(p) | Action10::SetTpDst(p) => {
                let src = matches!(a, Action10::SetTpSrc(_));
                let set = |oxm| Action13::SetField(oxm);
                out.push(match (facts.is_ipv4(), facts.nw_proto) {
                    (true, Some(IP_PROTO_TCP)) if src => set(Oxm::TcpSrc(p)),
                    (true, Some(IP_PROTO_TCP)) => set(Oxm::TcpDst(p)),
                    (true, Some(IP_PROTO_UDP)) if src => set(Oxm::UdpSrc(p)),
                    (true, Some(IP_PROTO_UDP)) => set(Oxm::UdpDst(p)),
                    _ => conditional(a)?,
                });
            }
            Action10::Vendor { vendor, .. } => {
                return Err(OfpError::new(
                    ErrorKind::BAD_ACTION_BAD_EXPERIMENTER,
                    format!("vendor action of vendor {vendor:#x} is not supported"),
                ))
            }
        }
    }
    Ok(out)
}

fn no_v10(what: String) -> OfpError {
    OfpError::new(
        ErrorKind::BAD_ACTION_BAD_TYPE,
        format!("no OpenFlow 1.0 action list translates to {what}"),
    )
}

/// Reads one 1.0 action off the front of a 1.3 list (the inverse of one row of the
/// module's table, before the facts are checked): peregrine's conditional action, or
/// what `openflow` reads as 1.0 ([`take_action`]); returns it and how many 1.3 actions it
/// took.
fn take_one(rest: &[Action13]) -> Result<(Action10, usize), OfpError> {
    match rest.first().and_then(conditional_from_v13) {
        Some(a) => Ok((a, 1)),
        None => take_action(rest),
    }
}

/// The 1.0 action list whose translation for packets described by `facts` is exactly
/// `actions` (module comment), or an error (`OFPBAC_BAD_TYPE`, or the port's
/// `OFPBRC_BAD_PORT`) when there is none.
pub fn actions_from_v13(
    actions: &[Action13],
    facts: PacketFacts,
) -> Result<Vec<Action10>, OfpError> {
    let out = read_actions(actions, take_one)?;
    match actions_to_v13(&out, facts) {
        Ok(back) if back == actions => Ok(out),
        _ => Err(no_v10(format!("{actions:?} for {facts:?}"))),
    }
}

/// The 1.0 action list of a 1.3 instruction set: none (drop) or a single apply-actions
/// ([`actions_from_v13`]). Any other instruction (goto, write-actions, metadata, meter,
/// ...) has no 1.0 form: `OFPBIC_UNSUP_INST` ([`apply_actions`]).
pub fn instructions_from_v13(
    insts: &[Instruction],
    facts: PacketFacts,
) -> Result<Vec<Action10>, OfpError> {
    actions_from_v13(apply_actions(insts)?, facts)
}
