//! Set-field prerequisites (`OFPBAC_MATCH_INCONSISTENT`): every settable field that has a
//! prerequisite, set in apply-actions, write-actions and a group bucket, with and without
//! the prerequisite in the match; and how earlier actions change what holds.

use super::frames::{v4, v6};
use super::*;
use openflow::action::Action as OfAction;
use openflow::instruction::Instruction;
use openflow::v13::flow_mod::FlowMod;
use openflow::v13::group_mod::Bucket;

use crate::translate::prereq::check_instructions;

const IP: Oxm = Oxm::EthType(0x0800);
const IP6: Oxm = Oxm::EthType(0x86dd);
const ARP: Oxm = Oxm::EthType(0x0806);
const TAGGED: Oxm = Oxm::VlanVid(0x1000, Some(0x1000));

fn out(port: u32) -> OfAction {
    OfAction::Output { port, max_len: 0 }
}

fn set(oxm: Oxm) -> OfAction {
    OfAction::SetField(oxm)
}

/// Each settable field with a prerequisite: the set-field and the match fields that
/// meet its prerequisite (the last one is what a partial match leaves out).
fn cases() -> Vec<(Oxm, Vec<Oxm>)> {
    let mac = MacAddr([0x00, 0x11, 0x22, 0x33, 0x44, 0x55]);
    let a6 = v6("2001:db8::7");
    let tcp = vec![IP, Oxm::IpProto(6)];
    let tcp6 = vec![IP6, Oxm::IpProto(6)];
    let udp = vec![IP6, Oxm::IpProto(17)];
    let sctp = vec![IP, Oxm::IpProto(132)];
    let icmp = vec![IP, Oxm::IpProto(1)];
    let icmp6 = vec![IP6, Oxm::IpProto(58)];
    let ns = vec![IP6, Oxm::IpProto(58), Oxm::Icmpv6Type(135)];
    let na = vec![IP6, Oxm::IpProto(58), Oxm::Icmpv6Type(136)];
    vec![
        (Oxm::VlanPcp(6), vec![TAGGED]),
        (Oxm::IpDscp(46), vec![IP]),
        (Oxm::IpEcn(2), vec![IP6]),
        (Oxm::IpProto(17), vec![IP]),
        (Oxm::Ipv4Src(v4("10.0.0.9"), None), vec![IP]),
        (Oxm::Ipv4Dst(v4("10.0.0.8"), None), vec![IP]),
        (Oxm::TcpSrc(1), tcp6),
        (Oxm::TcpDst(80), tcp),
        (Oxm::UdpSrc(3), udp.clone()),
        (Oxm::UdpDst(4), udp),
        (Oxm::SctpSrc(5), sctp.clone()),
        (Oxm::SctpDst(6), sctp),
        (Oxm::Icmpv4Type(0), icmp.clone()),
        (Oxm::Icmpv4Code(1), icmp),
        (Oxm::ArpOp(2), vec![ARP]),
        (Oxm::ArpSpa(v4("10.0.0.1"), None), vec![ARP]),
        (Oxm::ArpTpa(v4("10.0.0.2"), None), vec![ARP]),
        (Oxm::ArpSha(mac, None), vec![ARP]),
        (Oxm::ArpTha(mac, None), vec![ARP]),
        (Oxm::Ipv6Src(a6, None), vec![IP6]),
        (Oxm::Ipv6Dst(a6, None), vec![IP6]),
        (Oxm::Ipv6Flabel(0xf_ffff, None), vec![IP6]),
        (Oxm::Icmpv6Type(129), icmp6.clone()),
        (Oxm::Icmpv6Code(4), icmp6),
        (Oxm::Ipv6NdTarget(a6), na.clone()),
        (Oxm::Ipv6NdSll(mac), ns),
        (Oxm::Ipv6NdTll(mac), na),
        (Oxm::MplsLabel(0xf_ffff), vec![Oxm::EthType(0x8847)]),
        (Oxm::MplsTc(7), vec![Oxm::EthType(0x8848)]),
        (Oxm::MplsBos(1), vec![Oxm::EthType(0x8847)]),
        (Oxm::PbbIsid(0xff_fffe, None), vec![Oxm::EthType(0x88e7)]),
    ]
}

/// Settable fields without a prerequisite: accepted on any match.
fn free_cases() -> Vec<Oxm> {
    let mac = MacAddr([0x00, 0x11, 0x22, 0x33, 0x44, 0x55]);
    vec![
        Oxm::EthDst(mac, None),
        Oxm::EthSrc(mac, None),
        Oxm::EthType(0x0800),
        Oxm::VlanVid(0x1005, None),
        Oxm::TunnelId(7, None),
    ]
}

fn flow_mod(m: Vec<Oxm>, instructions: Vec<Instruction>) -> FlowMod {
    FlowMod { match_: Match::new(m), instructions, ..FlowMod::default() }
}

/// Translates the flow-mod (apply/write checks); `Err` holds the error kind.
fn translate(m: Vec<Oxm>, insts: Vec<Instruction>) -> Result<(), ErrorKind> {
    flow_mod_to_rule(&flow_mod(m, insts), 0).map(drop).map_err(|e| e.kind())
}

/// Checks a flow that sends to group 1, whose one bucket is `bucket`.
fn via_group(m: Vec<Oxm>, insts: Vec<Instruction>, bucket: Vec<OfAction>) -> Result<(), ErrorKind> {
    let buckets = [Bucket {
        weight: 0,
        watch_port: openflow::action::port::ANY,
        watch_group: openflow::action::OFPG_ANY,
        actions: bucket,
    }];
    let lookup = |g: u32| (g == 1).then_some(&buckets[..]);
    check_instructions(&Match::new(m), &insts, &lookup).map_err(|e| {
        assert!(e.in_group, "{e:?}");
        e.error.kind
    })
}

const INCONSISTENT: Result<(), ErrorKind> = Err(ErrorKind::BAD_ACTION_MATCH_INCONSISTENT);

#[test]
fn match_inconsistent_is_type_2_code_10() {
    // OFPET_BAD_ACTION / OFPBAC_MATCH_INCONSISTENT in OpenFlow 1.3 numbering.
    let k = ErrorKind::BAD_ACTION_MATCH_INCONSISTENT;
    assert_eq!((k.ty, k.code), (2, 10));
}

#[test]
fn each_prerequisite_is_checked_in_apply_write_and_bucket_actions() {
    for (oxm, prereq) in cases() {
        let partial = prereq[..prereq.len() - 1].to_vec();
        for m in [vec![], partial] {
            let apply = vec![Instruction::ApplyActions(vec![set(oxm.clone()), out(1)])];
            assert_eq!(translate(m.clone(), apply), INCONSISTENT, "apply {oxm:?} on {m:?}");
            let write = vec![Instruction::WriteActions(vec![set(oxm.clone()), out(1)])];
            assert_eq!(translate(m.clone(), write), INCONSISTENT, "write {oxm:?} on {m:?}");
            let bucket = vec![set(oxm.clone()), out(1)];
            for to_group in [
                Instruction::ApplyActions(vec![OfAction::Group(1)]),
                Instruction::WriteActions(vec![OfAction::Group(1)]),
            ] {
                assert_eq!(
                    via_group(m.clone(), vec![to_group], bucket.clone()),
                    INCONSISTENT,
                    "bucket {oxm:?} on {m:?}"
                );
            }
        }
        let m = prereq;
        let apply = vec![Instruction::ApplyActions(vec![set(oxm.clone()), out(1)])];
        assert_eq!(translate(m.clone(), apply), Ok(()), "apply {oxm:?} on {m:?}");
        let write = vec![Instruction::WriteActions(vec![set(oxm.clone()), out(1)])];
        assert_eq!(translate(m.clone(), write), Ok(()), "write {oxm:?} on {m:?}");
        for to_group in [
            Instruction::ApplyActions(vec![OfAction::Group(1)]),
            Instruction::WriteActions(vec![OfAction::Group(1)]),
        ] {
            let bucket = vec![set(oxm.clone()), out(1)];
            assert_eq!(via_group(m.clone(), vec![to_group], bucket), Ok(()), "bucket {oxm:?}");
        }
    }
}

#[test]
fn fields_without_prerequisites_are_settable_on_any_match() {
    for oxm in free_cases() {
        let apply = vec![Instruction::ApplyActions(vec![set(oxm.clone()), out(1)])];
        assert_eq!(translate(vec![], apply), Ok(()), "{oxm:?}");
        let write = vec![Instruction::WriteActions(vec![set(oxm.clone()), out(1)])];
        assert_eq!(translate(vec![], write), Ok(()), "{oxm:?}");
        let to_group = Instruction::ApplyActions(vec![OfAction::Group(1)]);
        assert_eq!(via_group(vec![], vec![to_group], vec![set(oxm)]), Ok(()));
    }
}

#[test]
fn the_error_names_the_field_and_what_it_needs() {
    let fm =
        flow_mod(vec![IP], vec![Instruction::ApplyActions(vec![set(Oxm::TcpDst(80)), out(1)])]);
    let e = OfpError::from(flow_mod_to_rule(&fm, 0).unwrap_err());
    assert_eq!(e.kind, ErrorKind::BAD_ACTION_MATCH_INCONSISTENT);
    assert!(e.detail.contains("tcp_dst") && e.detail.contains("ip_proto 6"), "{e}");
}

#[test]
fn earlier_apply_actions_change_what_holds() {
    let apply = |a: Vec<OfAction>| vec![Instruction::ApplyActions(a)];
    // push_vlan makes vlan_pcp settable on an untagged match; pop_vlan takes it away.
    let pcp = set(Oxm::VlanPcp(3));
    let push = OfAction::PushVlan(0x8100);
    assert_eq!(translate(vec![], apply(vec![push.clone(), pcp.clone()])), Ok(()));
    assert_eq!(translate(vec![], apply(vec![pcp.clone(), push])), INCONSISTENT);
    assert_eq!(translate(vec![TAGGED], apply(vec![OfAction::PopVlan, pcp])), INCONSISTENT);
    // push_mpls makes the packet MPLS: MPLS fields become settable, IP ones do not stay.
    let push_mpls = OfAction::PushMpls(0x8847);
    let label = set(Oxm::MplsLabel(5));
    assert_eq!(translate(vec![IP], apply(vec![push_mpls.clone(), label.clone()])), Ok(()));
    assert_eq!(translate(vec![IP], apply(vec![label.clone()])), INCONSISTENT);
    let tcp = vec![IP, Oxm::IpProto(6)];
    assert_eq!(
        translate(tcp.clone(), apply(vec![push_mpls.clone(), set(Oxm::TcpDst(1))])),
        INCONSISTENT
    );
    assert_eq!(
        translate(tcp.clone(), apply(vec![push_mpls, set(Oxm::Ipv4Src(v4("1.2.3.4"), None))])),
        INCONSISTENT
    );
    // pop_mpls names the ethertype it leaves.
    let mpls = vec![Oxm::EthType(0x8847)];
    let pop = OfAction::PopMpls(0x0800);
    let src = set(Oxm::Ipv4Src(v4("1.2.3.4"), None));
    assert_eq!(translate(mpls.clone(), apply(vec![pop.clone(), src.clone()])), Ok(()));
    assert_eq!(translate(mpls, apply(vec![pop, label])), INCONSISTENT);
    // A changed protocol number does not bring the new protocol's header.
    assert_eq!(
        translate(tcp.clone(), apply(vec![set(Oxm::IpProto(17)), set(Oxm::UdpDst(1))])),
        INCONSISTENT
    );
    assert_eq!(
        translate(tcp.clone(), apply(vec![set(Oxm::IpProto(6)), set(Oxm::TcpDst(1))])),
        Ok(())
    );
    assert_eq!(translate(vec![], apply(vec![set(Oxm::EthType(0x0800)), src])), INCONSISTENT);
}

#[test]
fn write_actions_are_checked_in_action_set_order_after_apply_actions() {
    let pcp = set(Oxm::VlanPcp(3));
    // The action set pushes before it sets, whatever the list's order.
    let write = vec![Instruction::WriteActions(vec![pcp.clone(), OfAction::PushVlan(0x8100)])];
    assert_eq!(translate(vec![], write), Ok(()));
    // ... and pops before it sets.
    let write = vec![Instruction::WriteActions(vec![pcp.clone(), OfAction::PopVlan])];
    assert_eq!(translate(vec![TAGGED], write), INCONSISTENT);
    // The apply-actions run first.
    let insts = vec![
        Instruction::WriteActions(vec![pcp.clone()]),
        Instruction::ApplyActions(vec![OfAction::PushVlan(0x8100)]),
    ];
    assert_eq!(translate(vec![], insts), Ok(()));
    let insts = vec![
        Instruction::ApplyActions(vec![OfAction::PopVlan]),
        Instruction::WriteActions(vec![pcp]),
    ];
    assert_eq!(translate(vec![TAGGED], insts), INCONSISTENT);
    // Set-fields of one set do not meet each other's prerequisites.
    let write = vec![Instruction::WriteActions(vec![
        set(Oxm::EthType(0x0800)),
        set(Oxm::Ipv4Src(v4("1.2.3.4"), None)),
    ])];
    assert_eq!(translate(vec![], write), INCONSISTENT);
}

#[test]
fn buckets_are_checked_from_the_facts_where_the_flow_sends_to_the_group() {
    let pcp = vec![set(Oxm::VlanPcp(3)), out(1)];
    let to_group = |before: Vec<OfAction>| {
        let mut a = before;
        a.push(OfAction::Group(1));
        vec![Instruction::ApplyActions(a)]
    };
    assert_eq!(via_group(vec![], to_group(vec![]), pcp.clone()), INCONSISTENT);
    let push = OfAction::PushVlan(0x8100);
    assert_eq!(via_group(vec![], to_group(vec![push.clone()]), pcp.clone()), Ok(()));
    // A write-actions group runs after the set's pushes.
    let write = vec![Instruction::WriteActions(vec![OfAction::Group(1), push])];
    assert_eq!(via_group(vec![], write, pcp.clone()), Ok(()));
    // The bucket's own action set counts.
    let bucket = vec![set(Oxm::VlanPcp(3)), OfAction::PushVlan(0x8100), out(1)];
    assert_eq!(via_group(vec![], to_group(vec![]), bucket), Ok(()));
    // Without a group lookup, buckets are not followed (the agent's part).
    let fm = flow_mod(vec![], to_group(vec![]));
    assert!(flow_mod_to_rule(&fm, 0).is_ok());
}

#[test]
fn chained_groups_are_followed() {
    let bucket = |actions: Vec<OfAction>| Bucket {
        weight: 0,
        watch_port: openflow::action::port::ANY,
        watch_group: openflow::action::OFPG_ANY,
        actions,
    };
    let g1 = [bucket(vec![out(1)]), bucket(vec![OfAction::Group(2)])];
    let g2 = [bucket(vec![set(Oxm::TcpDst(80)), out(2)])];
    let lookup = |g: u32| match g {
        1 => Some(&g1[..]),
        2 => Some(&g2[..]),
        _ => None,
    };
    let insts = vec![Instruction::ApplyActions(vec![OfAction::Group(1)])];
    let e = check_instructions(&Match::new(vec![IP]), &insts, &lookup).unwrap_err();
    assert!(e.in_group);
    assert_eq!(e.error.kind, ErrorKind::BAD_ACTION_MATCH_INCONSISTENT);
    assert!(e.error.detail.contains("group 1 bucket 1: group 2 bucket 0"), "{}", e.error.detail);
    let tcp = Match::new(vec![IP, Oxm::IpProto(6)]);
    assert_eq!(check_instructions(&tcp, &insts, &lookup), Ok(()));
}
