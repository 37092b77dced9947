//! The 1.0 form of a 1.3 action or instruction list: the one reading of 1.3 actions as
//! 1.0 ones, which `ctl` uses to send ovs-ofctl text to a 1.0 switch and the agent uses
//! (with its own checks on top) to show its flows to 1.0 controllers.
//!
//! | 1.3 | 1.0 |
//! |---|---|
//! | `output:p` | `output:p` (renumbered; a port 1.0 cannot number is an error) |
//! | `push_vlan:0x8100, set_field:vlan_vid=0x1000\|v, set_field:vlan_pcp=p` | `set_vlan_vid:v`, or `set_vlan_pcp:p` when `v` is 0 and `p` is not |
//! | `push_vlan:0x8100, set_field:vlan_vid=v` | `set_vlan_vid:v` (`mod_vlan_vid`, as ovs-ofctl parses it) |
//! | `push_vlan:0x8100, set_field:vlan_pcp=p` | `set_vlan_pcp:p` (`mod_vlan_pcp`) |
//! | `set_field:vlan_vid=v` / `vlan_pcp=p` | `set_vlan_vid:v` / `set_vlan_pcp:p` |
//! | `pop_vlan` | `strip_vlan` |
//! | `set_queue:q, output:p` | `enqueue:p:q` |
//! | `set_field:eth_src`/`eth_dst` | `set_dl_src`/`set_dl_dst` |
//! | `set_field:ipv4_src`/`ipv4_dst` | `set_nw_src`/`set_nw_dst` |
//! | `set_field:ip_dscp=d` | `set_nw_tos:d<<2` |
//! | `set_field:tcp_*`/`udp_*` | `set_tp_*` |
//!
//! Anything else has no 1.0 form (1.0 knows no SCTP, IPv6, MPLS, groups, masks on a
//! set-field, ...): `OFPBAC_BAD_TYPE`, naming the action in ovs-ofctl's text. Of the
//! instructions only one apply-actions has a 1.0 form (`OFPBIC_UNSUP_INST` otherwise).

use crate::action::Action as Action13;
use crate::error::{ErrorKind, OfpError};
use crate::instruction::Instruction;
use crate::oxm::{Oxm, OFPVID_PRESENT};
use crate::v10::port::port_from_v13;
use crate::v10::Action as Action10;

/// The 802.1Q TPID, the only tag OpenFlow 1.0 knows.
const TPID_8021Q: u16 = 0x8100;

fn no_v10(a: &Action13) -> OfpError {
    OfpError::new(
        ErrorKind::BAD_ACTION_BAD_TYPE,
        format!("{}: OpenFlow 1.0 has no such action", crate::text::format_action(a)),
    )
}

/// A 1.3 port number in 1.0's 16 bits; `OFPBRC_BAD_PORT` for one 1.0 cannot number.
pub fn port10(port: u32) -> Result<u16, OfpError> {
    port_from_v13(port).ok_or_else(|| {
        OfpError::new(
            ErrorKind::BAD_REQUEST_BAD_PORT,
            format!("port {port} does not exist in OpenFlow 1.0 (ports are 16 bits)"),
        )
    })
}

/// Reads the 1.0 action that the 1.3 actions at the front of `rest` spell (module
/// comment); returns it and how many 1.3 actions it took.
pub fn take_action(rest: &[Action13]) -> Result<(Action10, usize), OfpError> {
    use Action13 as A;
    let one = |a| Ok((a, 1));
    match rest {
        [A::PushVlan(TPID_8021Q), A::SetField(Oxm::VlanVid(v, None)), A::SetField(Oxm::VlanPcp(p)), ..]
            if v & OFPVID_PRESENT != 0 =>
        {
            let vid = v & 0x0fff;
            let a = if vid == 0 && *p != 0 {
                Action10::SetVlanPcp(*p)
            } else {
                Action10::SetVlanVid(vid)
            };
            Ok((a, 3))
        }
        [A::PushVlan(TPID_8021Q), A::SetField(Oxm::VlanVid(v, None)), ..] => {
            Ok((Action10::SetVlanVid(v & 0x0fff), 2))
        }
        [A::PushVlan(TPID_8021Q), A::SetField(Oxm::VlanPcp(p)), ..] => {
            Ok((Action10::SetVlanPcp(*p), 2))
        }
        [A::SetQueue(q), A::Output { port, .. }, ..] => {
            Ok((Action10::Enqueue { port: port10(*port)?, queue_id: *q }, 2))
        }
        [A::Output { port, max_len }, ..] => {
            one(Action10::Output { port: port10(*port)?, max_len: *max_len })
        }
        [A::SetField(Oxm::VlanVid(v, None)), ..] => one(Action10::SetVlanVid(v & 0x0fff)),
        [A::SetField(Oxm::VlanPcp(p)), ..] => one(Action10::SetVlanPcp(*p)),
        [A::PopVlan, ..] => one(Action10::StripVlan),
        [A::SetField(Oxm::EthSrc(m, None)), ..] => one(Action10::SetDlSrc(*m)),
        [A::SetField(Oxm::EthDst(m, None)), ..] => one(Action10::SetDlDst(*m)),
        [A::SetField(Oxm::Ipv4Src(ip, None)), ..] => one(Action10::SetNwSrc(*ip)),
        [A::SetField(Oxm::Ipv4Dst(ip, None)), ..] => one(Action10::SetNwDst(*ip)),
        [A::SetField(Oxm::IpDscp(d)), ..] if *d <= 63 => one(Action10::SetNwTos(d << 2)),
        [A::SetField(Oxm::TcpSrc(p) | Oxm::UdpSrc(p)), ..] => one(Action10::SetTpSrc(*p)),
        [A::SetField(Oxm::TcpDst(p) | Oxm::UdpDst(p)), ..] => one(Action10::SetTpDst(*p)),
        [other, ..] => Err(no_v10(other)),
        [] => Err(OfpError::new(
            ErrorKind::BAD_ACTION_BAD_TYPE,
            "no OpenFlow 1.0 action is spelled by an empty list",
        )),
    }
}

/// The 1.0 actions a 1.3 action list spells, front to back ([`take_action`]).
pub fn actions_from_v13(actions: &[Action13]) -> Result<Vec<Action10>, OfpError> {
    read_actions(actions, take_action)
}

/// Reads a 1.3 list front to back with `take`, which reads one 1.0 action off the front
/// of what is left and says how many 1.3 actions it took ([`take_action`], or a reader
/// that knows more actions).
pub fn read_actions(
    actions: &[Action13],
    take: impl Fn(&[Action13]) -> Result<(Action10, usize), OfpError>,
) -> Result<Vec<Action10>, OfpError> {
    let mut out = Vec::with_capacity(actions.len());
    let mut at = 0;
    while at < actions.len() {
        let (a, n) = take(&actions[at..])?;
        out.push(a);
        at += n;
    }
    Ok(out)
}

/// The action list of a 1.3 instruction set that 1.0 can carry: none (drop) or a single
/// apply-actions. Any other instruction (goto, write-actions, metadata, meter, ...) has
/// no 1.0 form: `OFPBIC_UNSUP_INST`, naming it in ovs-ofctl's text.
pub fn apply_actions(insts: &[Instruction]) -> Result<&[Action13], OfpError> {
    match insts {
        [] => Ok(&[]),
        [Instruction::ApplyActions(a)] => Ok(a),
        _ => Err(OfpError::new(
            ErrorKind::BAD_INSTRUCTION_UNSUP_INST,
            format!(
                "{}: instructions need OpenFlow 1.1 or later",
                crate::text::format_instructions(insts)
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::parse_actions;

    fn from_text(s: &str) -> Result<Vec<Action10>, OfpError> {
        actions_from_v13(&parse_actions(s).unwrap_or_else(|e| panic!("{s}: {e}")))
    }

    #[test]
    fn each_row_of_the_table() {
        use Action10 as A;
        for (text, want) in [
            ("output:3", vec![A::Output { port: 3, max_len: 0 }]),
            ("output:LOCAL", vec![A::Output { port: 0xfffe, max_len: 0 }]),
            ("mod_vlan_vid:5", vec![A::SetVlanVid(5)]),
            ("mod_vlan_pcp:3", vec![A::SetVlanPcp(3)]),
            ("set_field:4->vlan_vid", vec![A::SetVlanVid(4)]),
            ("strip_vlan", vec![A::StripVlan]),
            ("set_queue:7,output:2", vec![A::Enqueue { port: 2, queue_id: 7 }]),
            (
                "mod_dl_src:00:00:00:00:00:01",
                vec![A::SetDlSrc("00:00:00:00:00:01".parse().unwrap())],
            ),
            ("mod_nw_dst:10.0.0.1", vec![A::SetNwDst([10, 0, 0, 1].into())]),
            ("mod_nw_tos:8", vec![A::SetNwTos(8)]),
            ("set_field:80->tcp_dst", vec![A::SetTpDst(80)]),
            ("set_field:53->udp_src", vec![A::SetTpSrc(53)]),
        ] {
            assert_eq!(from_text(text).unwrap(), want, "{text}");
        }
        // The three-action form the agent translates a 1.0 VLAN set on an untagged
        // packet into.
        let push = vec![
            Action13::PushVlan(TPID_8021Q),
            Action13::SetField(Oxm::VlanVid(OFPVID_PRESENT, None)),
            Action13::SetField(Oxm::VlanPcp(5)),
        ];
        assert_eq!(actions_from_v13(&push).unwrap(), vec![Action10::SetVlanPcp(5)]);
    }

    #[test]
    fn what_1_0_cannot_say() {
        for text in [
            "set_field:5->sctp_src",
            "set_field:::1->ipv6_src",
            "group:1",
            "push_mpls:0x8847",
            "dec_ttl",
        ] {
            let e = from_text(text).unwrap_err();
            assert_eq!(e.kind, ErrorKind::BAD_ACTION_BAD_TYPE, "{text}");
            assert!(e.detail.contains("OpenFlow 1.0 has no such action"), "{text}: {e:?}");
        }
        let e = from_text("output:70000").unwrap_err();
        assert_eq!(e.kind, ErrorKind::BAD_REQUEST_BAD_PORT);
        let goto = [Instruction::GotoTable(1)];
        assert_eq!(apply_actions(&goto).unwrap_err().kind, ErrorKind::BAD_INSTRUCTION_UNSUP_INST);
        assert_eq!(apply_actions(&[]).unwrap(), &[]);
    }
}
