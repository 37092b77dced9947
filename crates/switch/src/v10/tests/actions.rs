//! Actions: each 1.0 action under each relevant fact, both ways; the refusals; the facts
//! of matches and frames; instruction sets.

use std::net::Ipv4Addr;

use super::Rng;
use crate::v10::{actions_from_v13, actions_to_v13, instructions_from_v13, PacketFacts, Tag};
use openflow::action::Action as A13;
use openflow::instruction::Instruction;
use openflow::oxm::Oxm;
use openflow::v10::match10::{wildcards as fw, Match as Match10, OFP_VLAN_NONE};
use openflow::v10::Action as A10;
use openflow::{ErrorKind, MacAddr};

fn facts(tag: Tag, dl_type: Option<u16>, nw_proto: Option<u8>) -> PacketFacts {
    PacketFacts { tag, dl_type, nw_proto }
}

const TAGGED: PacketFacts = PacketFacts { tag: Tag::Tagged, dl_type: None, nw_proto: None };
const UNTAGGED: PacketFacts = PacketFacts { tag: Tag::Untagged, dl_type: None, nw_proto: None };

fn tcp() -> PacketFacts {
    facts(Tag::Unknown, Some(0x0800), Some(6))
}

fn udp() -> PacketFacts {
    facts(Tag::Unknown, Some(0x0800), Some(17))
}

fn ipv4() -> PacketFacts {
    facts(Tag::Unknown, Some(0x0800), None)
}

/// Translates `a10` under `f`, checks the result, and checks it comes back as `a10`.
fn both_ways(a10: Vec<A10>, f: PacketFacts, want: Vec<A13>) {
    let got = actions_to_v13(&a10, f).unwrap_or_else(|e| panic!("{a10:?} {f:?}: {e}"));
    assert_eq!(got, want, "{a10:?} under {f:?}");
    assert_eq!(actions_from_v13(&got, f).unwrap(), a10, "{got:?} back");
}

fn set(oxm: Oxm) -> A13 {
    A13::SetField(oxm)
}

/// Peregrine's conditional action for the 1.0 action of type `ty` with argument `arg`.
fn cond(ty: u16, arg: u32) -> A13 {
    let mut data = ty.to_be_bytes().to_vec();
    data.extend_from_slice(&[0, 0]);
    data.extend_from_slice(&arg.to_be_bytes());
    A13::Experimenter { experimenter: crate::v10::PEREGRINE_EXPERIMENTER, data }
}

#[test]
fn output_to_every_kind_of_port() {
    for (p10, p13) in [
        (1u16, 1u32),
        (0xfeff, 0xfeff),
        (0xff00, 0xffff_ff00),
        (0xfff8, 0xffff_fff8),
        (0xfff9, 0xffff_fff9),
        (0xfffa, 0xffff_fffa),
        (0xfffb, 0xffff_fffb),
        (0xfffc, 0xffff_fffc),
        (0xfffe, 0xffff_fffe),
    ] {
        both_ways(
            vec![A10::Output { port: p10, max_len: 0 }],
            PacketFacts::UNKNOWN,
            vec![A13::Output { port: p13, max_len: 0 }],
        );
    }
    // The controller keeps its max_len.
    both_ways(
        vec![A10::Output { port: 0xfffd, max_len: 128 }],
        PacketFacts::UNKNOWN,
        vec![A13::Output { port: 0xffff_fffd, max_len: 128 }],
    );
    // OFPP_NONE and port 0 are not output ports (1.0's own check).
    for port in [0, 0xffff] {
        let e =
            actions_to_v13(&[A10::Output { port, max_len: 0 }], PacketFacts::UNKNOWN).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BAD_ACTION_BAD_OUT_PORT);
    }
}

#[test]
fn vlan_vid_sets_a_tag_or_pushes_one() {
    both_ways(vec![A10::SetVlanVid(10)], TAGGED, vec![set(Oxm::VlanVid(0x1000 | 10, None))]);
    both_ways(
        vec![A10::SetVlanVid(10)],
        UNTAGGED,
        vec![A13::PushVlan(0x8100), set(Oxm::VlanVid(0x1000 | 10, None)), set(Oxm::VlanPcp(0))],
    );
    // The tag open: peregrine's conditional action (push if untagged, else rewrite).
    both_ways(vec![A10::SetVlanVid(10)], PacketFacts::UNKNOWN, vec![cond(1, 10)]);
    let e = actions_to_v13(&[A10::SetVlanVid(4096)], TAGGED).unwrap_err();
    assert_eq!(e.kind, ErrorKind::BAD_ACTION_BAD_ARGUMENT);
}

#[test]
fn vlan_pcp_sets_a_tag_or_pushes_one() {
    both_ways(vec![A10::SetVlanPcp(5)], TAGGED, vec![set(Oxm::VlanPcp(5))]);
    both_ways(
        vec![A10::SetVlanPcp(5)],
        UNTAGGED,
        vec![A13::PushVlan(0x8100), set(Oxm::VlanVid(0x1000, None)), set(Oxm::VlanPcp(5))],
    );
    both_ways(vec![A10::SetVlanPcp(5)], PacketFacts::UNKNOWN, vec![cond(2, 5)]);
    // After a conditional set the frame is tagged: the next set only sets.
    both_ways(
        vec![A10::SetVlanPcp(5), A10::SetVlanVid(3)],
        PacketFacts::UNKNOWN,
        vec![cond(2, 5), set(Oxm::VlanVid(0x1003, None))],
    );
    let e = actions_to_v13(&[A10::SetVlanPcp(8)], TAGGED).unwrap_err();
    assert_eq!(e.kind, ErrorKind::BAD_ACTION_BAD_ARGUMENT);
    // Both zero on an untagged frame translate alike; they come back as set_vlan_vid:0.
    let pcp0 = actions_to_v13(&[A10::SetVlanPcp(0)], UNTAGGED).unwrap();
    assert_eq!(pcp0, actions_to_v13(&[A10::SetVlanVid(0)], UNTAGGED).unwrap());
    assert_eq!(actions_from_v13(&pcp0, UNTAGGED).unwrap(), vec![A10::SetVlanVid(0)]);
}

#[test]
fn the_tag_is_tracked_along_the_list() {
    // strip_vlan leaves the frame untagged: a later set pushes.
    both_ways(
        vec![A10::StripVlan, A10::SetVlanVid(7)],
        PacketFacts::UNKNOWN,
        vec![
            A13::PopVlan,
            A13::PushVlan(0x8100),
            set(Oxm::VlanVid(0x1007, None)),
            set(Oxm::VlanPcp(0)),
        ],
    );
    // After a push the frame is tagged: the next set only sets.
    both_ways(
        vec![A10::SetVlanVid(7), A10::SetVlanPcp(3)],
        UNTAGGED,
        vec![
            A13::PushVlan(0x8100),
            set(Oxm::VlanVid(0x1007, None)),
            set(Oxm::VlanPcp(0)),
            set(Oxm::VlanPcp(3)),
        ],
    );
    both_ways(vec![A10::StripVlan], PacketFacts::UNKNOWN, vec![A13::PopVlan]);
}

#[test]
fn ethernet_addresses() {
    let m = MacAddr([2, 0, 0, 0, 0, 9]);
    both_ways(
        vec![A10::SetDlSrc(m), A10::SetDlDst(m)],
        PacketFacts::UNKNOWN,
        vec![set(Oxm::EthSrc(m, None)), set(Oxm::EthDst(m, None))],
    );
}

#[test]
fn network_fields_need_ipv4() {
    let a = Ipv4Addr::new(10, 9, 8, 7);
    both_ways(
        vec![A10::SetNwSrc(a), A10::SetNwDst(a), A10::SetNwTos(0xb8)],
        ipv4(),
        vec![set(Oxm::Ipv4Src(a, None)), set(Oxm::Ipv4Dst(a, None)), set(Oxm::IpDscp(46))],
    );
    // Not known to be IPv4 (or known not to be, as Open vSwitch accepts over 1.0): the
    // conditional action, which changes only IP packets.
    for f in [
        PacketFacts::UNKNOWN,
        facts(Tag::Unknown, Some(0x0806), None),
        facts(Tag::Unknown, Some(0x86dd), None),
    ] {
        both_ways(
            vec![A10::SetNwSrc(a), A10::SetNwDst(a), A10::SetNwTos(4)],
            f,
            vec![cond(6, 0x0a09_0807), cond(7, 0x0a09_0807), cond(8, 4)],
        );
    }
    // ECN bits: 1.0's own argument check.
    let e = actions_to_v13(&[A10::SetNwTos(0xb9)], ipv4()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::BAD_ACTION_BAD_ARGUMENT);
}

#[test]
fn transport_ports_need_tcp_or_udp() {
    both_ways(
        vec![A10::SetTpSrc(1000), A10::SetTpDst(80)],
        tcp(),
        vec![set(Oxm::TcpSrc(1000)), set(Oxm::TcpDst(80))],
    );
    both_ways(
        vec![A10::SetTpSrc(1000), A10::SetTpDst(53)],
        udp(),
        vec![set(Oxm::UdpSrc(1000)), set(Oxm::UdpDst(53))],
    );
    for f in [
        ipv4(),
        facts(Tag::Unknown, Some(0x0800), Some(1)),
        facts(Tag::Unknown, Some(0x0800), Some(132)),
        PacketFacts::UNKNOWN,
    ] {
        both_ways(vec![A10::SetTpSrc(1), A10::SetTpDst(2)], f, vec![cond(9, 1), cond(10, 2)]);
    }
}

#[test]
fn enqueue_is_set_queue_and_output() {
    both_ways(
        vec![A10::Enqueue { port: 3, queue_id: 7 }],
        PacketFacts::UNKNOWN,
        vec![A13::SetQueue(7), A13::Output { port: 3, max_len: 0 }],
    );
    both_ways(
        vec![A10::Enqueue { port: 0xfff8, queue_id: 1 }, A10::Output { port: 0xfffd, max_len: 64 }],
        PacketFacts::UNKNOWN,
        vec![
            A13::SetQueue(1),
            A13::Output { port: 0xffff_fff8, max_len: 0 },
            A13::Output { port: 0xffff_fffd, max_len: 64 },
        ],
    );
    // A plain output after an enqueue would use the queue in 1.3.
    let e = actions_to_v13(
        &[A10::Enqueue { port: 3, queue_id: 7 }, A10::Output { port: 4, max_len: 0 }],
        PacketFacts::UNKNOWN,
    )
    .unwrap_err();
    assert_eq!(e.kind, ErrorKind::BAD_ACTION_UNSUPPORTED_ORDER);
    // An output before it is fine.
    both_ways(
        vec![A10::Output { port: 4, max_len: 0 }, A10::Enqueue { port: 3, queue_id: 7 }],
        PacketFacts::UNKNOWN,
        vec![
            A13::Output { port: 4, max_len: 0 },
            A13::SetQueue(7),
            A13::Output { port: 3, max_len: 0 },
        ],
    );
}

#[test]
fn vendor_actions_are_refused() {
    let e =
        actions_to_v13(&[A10::Vendor { vendor: 0x2320, data: vec![0; 8] }], PacketFacts::UNKNOWN)
            .unwrap_err();
    assert_eq!(e.kind, ErrorKind::BAD_ACTION_BAD_EXPERIMENTER);
    assert_eq!(e.kind.to_v10(), (2, 2), "OFPBAC_BAD_VENDOR");
}

#[test]
fn lists_1_0_cannot_say_do_not_come_back() {
    let out = A13::Output { port: 1, max_len: 0 };
    let cases: Vec<(Vec<A13>, PacketFacts)> = vec![
        // A set-field on a frame that may be untagged: 1.0 would push.
        (vec![set(Oxm::VlanVid(0x1005, None))], PacketFacts::UNKNOWN),
        (vec![set(Oxm::VlanVid(0x1005, None))], UNTAGGED),
        // A push on a tagged frame: 1.0 would set.
        (
            vec![A13::PushVlan(0x8100), set(Oxm::VlanVid(0x1005, None)), set(Oxm::VlanPcp(0))],
            TAGGED,
        ),
        (vec![A13::PushVlan(0x8100), out.clone()], UNTAGGED),
        (vec![A13::Group(1)], PacketFacts::UNKNOWN),
        (vec![A13::SetQueue(1)], PacketFacts::UNKNOWN),
        (vec![A13::SetQueue(1), out.clone(), out.clone()], PacketFacts::UNKNOWN),
        (vec![A13::SetQueue(1), A13::Output { port: 1, max_len: 9 }], PacketFacts::UNKNOWN),
        (vec![A13::DecNwTtl], ipv4()),
        (vec![A13::Output { port: 70_000, max_len: 0 }], PacketFacts::UNKNOWN),
        (vec![set(Oxm::Ipv4Src(Ipv4Addr::LOCALHOST, None))], PacketFacts::UNKNOWN),
        (vec![set(Oxm::SctpSrc(1))], facts(Tag::Unknown, Some(0x0800), Some(132))),
        (vec![set(Oxm::UdpSrc(1))], tcp()),
        (vec![set(Oxm::IpEcn(1))], ipv4()),
    ];
    for (list, f) in cases {
        assert!(actions_from_v13(&list, f).is_err(), "{list:?} under {f:?} came back");
    }
}

#[test]
fn random_lists_come_back_as_themselves() {
    let mut rng = Rng::new(0x10_0003);
    let all_facts = [
        PacketFacts::UNKNOWN,
        TAGGED,
        UNTAGGED,
        tcp(),
        udp(),
        ipv4(),
        facts(Tag::Untagged, Some(0x0800), Some(6)),
    ];
    let mut translated = 0;
    for _ in 0..20_000 {
        let f = rng.pick(&all_facts);
        let n = rng.below(5);
        let list: Vec<A10> = (0..n)
            .map(|_| match rng.below(12) {
                0 => A10::Output {
                    port: rng.pick(&[1, 2, 0xfff8, 0xfffb, 0xfffd, 0xfffe]),
                    max_len: rng.u16(),
                },
                1 => A10::SetVlanVid(rng.u16() & 0x0fff),
                2 => A10::SetVlanPcp(rng.u8() & 7),
                3 => A10::StripVlan,
                4 => A10::SetDlSrc(MacAddr([rng.u8(), 1, 2, 3, 4, 5])),
                5 => A10::SetDlDst(MacAddr([rng.u8(), 1, 2, 3, 4, 5])),
                6 => A10::SetNwSrc(Ipv4Addr::from(rng.u32())),
                7 => A10::SetNwDst(Ipv4Addr::from(rng.u32())),
                8 => A10::SetNwTos(rng.u8() & 0xfc),
                9 => A10::SetTpSrc(rng.u16()),
                10 => A10::SetTpDst(rng.u16()),
                _ => A10::Enqueue { port: rng.pick(&[1, 2, 0xfff8]), queue_id: rng.u32() },
            })
            .collect();
        if let Ok(a13) = actions_to_v13(&list, f) {
            let back = actions_from_v13(&a13, f)
                .unwrap_or_else(|e| panic!("{list:?} → {a13:?} under {f:?}: {e}"));
            // Only set_vlan_pcp:0 on an untagged frame comes back as set_vlan_vid:0.
            assert_eq!(actions_to_v13(&back, f).unwrap(), a13);
            if !list.contains(&A10::SetVlanPcp(0)) {
                assert_eq!(back, list);
            }
            translated += 1;
        }
    }
    assert!(translated > 5_000, "only {translated} lists translated");
}

#[test]
fn facts_of_matches() {
    let with = |wildcards, dl_vlan| Match10 {
        wildcards,
        dl_vlan,
        dl_type: 0x0800,
        nw_proto: 17,
        ..Match10::all()
    };
    let m = with(fw::ALL & !fw::DL_VLAN, OFP_VLAN_NONE);
    assert_eq!(PacketFacts::of_match(&m), UNTAGGED);
    let m = with(fw::ALL & !fw::DL_VLAN, 5);
    assert_eq!(PacketFacts::of_match(&m), TAGGED);
    let m = with(fw::ALL & !fw::DL_VLAN_PCP, 0);
    assert_eq!(PacketFacts::of_match(&m).tag, Tag::Tagged);
    assert_eq!(PacketFacts::of_match(&Match10::all()), PacketFacts::UNKNOWN);
    let m = with(fw::ALL & !(fw::DL_TYPE | fw::NW_PROTO), 0);
    assert_eq!(PacketFacts::of_match(&m), udp());
    // nw_proto without dl_type IPv4 says nothing.
    let m = with(fw::ALL & !fw::NW_PROTO, 0);
    assert_eq!(PacketFacts::of_match(&m), PacketFacts::UNKNOWN);
    let m = Match10 { dl_type: 0x0806, ..with(fw::ALL & !(fw::DL_TYPE | fw::NW_PROTO), 0) };
    assert_eq!(PacketFacts::of_match(&m), facts(Tag::Unknown, Some(0x0806), None));
}

/// A frame: MACs, then `tags` (TPID, TCI) pairs, the ethertype and `rest`.
fn frame(tags: &[u16], ethertype: u16, rest: &[u8]) -> Vec<u8> {
    let mut f = vec![0u8; 12];
    for t in tags {
        f.extend_from_slice(&t.to_be_bytes());
        f.extend_from_slice(&[0, 5]);
    }
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.extend_from_slice(rest);
    f
}

#[test]
fn facts_of_frames() {
    let mut ip = vec![0x45, 0, 0, 40, 0, 0, 0, 0, 64, 6, 0, 0];
    ip.resize(20, 0);
    assert_eq!(
        PacketFacts::of_frame(&frame(&[], 0x0800, &ip)),
        facts(Tag::Untagged, Some(0x0800), Some(6))
    );
    assert_eq!(
        PacketFacts::of_frame(&frame(&[0x8100], 0x0800, &ip)),
        facts(Tag::Tagged, Some(0x0800), Some(6))
    );
    assert_eq!(
        PacketFacts::of_frame(&frame(&[0x88a8], 0x0800, &ip)),
        facts(Tag::Unknown, Some(0x88a8), None)
    );
    assert_eq!(
        PacketFacts::of_frame(&frame(&[], 0x0806, &[0; 28])),
        facts(Tag::Untagged, Some(0x0806), None)
    );
    // Too short for the IPv4 protocol, or for an Ethernet header.
    assert_eq!(
        PacketFacts::of_frame(&frame(&[], 0x0800, &ip[..5])),
        facts(Tag::Untagged, Some(0x0800), None)
    );
    assert_eq!(PacketFacts::of_frame(&[0; 13]), PacketFacts::UNKNOWN);
    assert_eq!(
        PacketFacts::of_frame(&frame(&[0x8100], 0x0800, &[])[..16]),
        facts(Tag::Tagged, None, None)
    );
}

#[test]
fn instruction_sets() {
    let out = A13::Output { port: 2, max_len: 0 };
    assert_eq!(instructions_from_v13(&[], PacketFacts::UNKNOWN).unwrap(), vec![]);
    assert_eq!(
        instructions_from_v13(
            &[Instruction::ApplyActions(vec![out.clone()])],
            PacketFacts::UNKNOWN
        )
        .unwrap(),
        vec![A10::Output { port: 2, max_len: 0 }]
    );
    for insts in [
        vec![Instruction::GotoTable(1)],
        vec![Instruction::WriteActions(vec![out.clone()])],
        vec![Instruction::ApplyActions(vec![out.clone()]), Instruction::GotoTable(2)],
        vec![Instruction::Meter(1), Instruction::ApplyActions(vec![out.clone()])],
        vec![Instruction::ClearActions],
    ] {
        let e = instructions_from_v13(&insts, PacketFacts::UNKNOWN).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BAD_INSTRUCTION_UNSUP_INST, "{insts:?}");
    }
}
