//! Action, instruction and flow-mod translation, and their errors.

use super::frames::{v4, v6};
use super::*;
use datapath::action::{port as dport, Action};
use datapath::pipeline::Instructions;
use openflow::action::{port, Action as OfAction, OFPCML_NO_BUFFER, OFPG_ANY};
use openflow::instruction::Instruction;
use openflow::oxm::OxmField;
use openflow::v13::flow_mod::{flow_mod_flags, FlowMod};
use openflow::v13::meter_mod::{OFPM_CONTROLLER, OFPM_MAX, OFPM_SLOWPATH};

fn out(port: u32) -> OfAction {
    OfAction::Output { port, max_len: 0 }
}

fn set(oxm: Oxm) -> OfAction {
    OfAction::SetField(oxm)
}

/// Every set-field a switch may accept, and the datapath set-field it must become.
fn set_field_cases() -> Vec<(Oxm, Field, u128)> {
    use Field as F;
    let mac = MacAddr([0x00, 0x11, 0x22, 0x33, 0x44, 0x55]);
    let macv = 0x0011_2233_4455;
    let a6 = v6("2001:db8::7");
    vec![
        (Oxm::EthDst(mac, None), F::EthDst, macv),
        (Oxm::EthSrc(mac, None), F::EthSrc, macv),
        (Oxm::EthType(0x0800), F::EthType, 0x0800),
        (Oxm::VlanVid(0x1005, None), F::VlanVid, 0x1005),
        (Oxm::VlanPcp(6), F::VlanPcp, 6),
        (Oxm::IpDscp(46), F::IpDscp, 46),
        (Oxm::IpEcn(2), F::IpEcn, 2),
        (Oxm::IpProto(17), F::IpProto, 17),
        (Oxm::Ipv4Src(v4("10.0.0.9"), None), F::Ipv4Src, 0x0a00_0009),
        (Oxm::Ipv4Dst(v4("10.0.0.8"), None), F::Ipv4Dst, 0x0a00_0008),
        (Oxm::TcpSrc(1), F::TpSrc, 1),
        (Oxm::TcpDst(2), F::TpDst, 2),
        (Oxm::UdpSrc(3), F::TpSrc, 3),
        (Oxm::UdpDst(4), F::TpDst, 4),
        (Oxm::SctpSrc(5), F::TpSrc, 5),
        (Oxm::SctpDst(6), F::TpDst, 6),
        (Oxm::Icmpv4Type(0), F::IcmpType, 0),
        (Oxm::Icmpv4Code(1), F::IcmpCode, 1),
        (Oxm::ArpOp(2), F::ArpOp, 2),
        (Oxm::ArpSpa(v4("10.0.0.1"), None), F::Ipv4Src, 0x0a00_0001),
        (Oxm::ArpTpa(v4("10.0.0.2"), None), F::Ipv4Dst, 0x0a00_0002),
        (Oxm::ArpSha(mac, None), F::ArpSha, macv),
        (Oxm::ArpTha(mac, None), F::ArpTha, macv),
        (Oxm::Ipv6Src(a6, None), F::Ipv6Src, u128::from(a6)),
        (Oxm::Ipv6Dst(a6, None), F::Ipv6Dst, u128::from(a6)),
        (Oxm::Ipv6Flabel(0xf_ffff, None), F::Ipv6Flabel, 0xf_ffff),
        (Oxm::Icmpv6Type(129), F::IcmpType, 129),
        (Oxm::Icmpv6Code(4), F::IcmpCode, 4),
        (Oxm::Ipv6NdTarget(a6), F::Ipv6NdTarget, u128::from(a6)),
        (Oxm::Ipv6NdSll(mac), F::ArpSha, macv),
        (Oxm::Ipv6NdTll(mac), F::ArpTha, macv),
        (Oxm::MplsLabel(0xf_ffff), F::MplsLabel, 0xf_ffff),
        (Oxm::MplsTc(7), F::MplsTc, 7),
        (Oxm::MplsBos(1), F::MplsBos, 1),
        (Oxm::PbbIsid(0xff_fffe, None), F::PbbIsid, 0xff_fffe),
        (Oxm::PbbUca(1), F::PbbUca, 1),
        (Oxm::TunnelId(u64::MAX - 1, None), F::TunnelId, u128::from(u64::MAX - 1)),
    ]
}

/// Fields set-field may not write (not packet header fields).
const NOT_SETTABLE: [OxmField; 4] =
    [OxmField::InPort, OxmField::InPhyPort, OxmField::Metadata, OxmField::Ipv6Exthdr];

#[test]
fn every_action_kind_translates_in_order() {
    let mut of = vec![
        out(2),
        out(port::IN_PORT),
        out(port::TABLE),
        out(port::NORMAL),
        out(port::FLOOD),
        out(port::ALL),
        out(port::LOCAL),
        OfAction::Output { port: port::CONTROLLER, max_len: 128 },
        OfAction::Output { port: port::CONTROLLER, max_len: OFPCML_NO_BUFFER },
        // max_len only matters for the controller.
        OfAction::Output { port: 5, max_len: 64 },
        OfAction::CopyTtlOut,
        OfAction::CopyTtlIn,
        OfAction::SetMplsTtl(9),
        OfAction::DecMplsTtl,
        OfAction::PushVlan(0x8100),
        OfAction::PushVlan(0x88a8),
        OfAction::PopVlan,
        OfAction::PushMpls(0x8847),
        OfAction::PushMpls(0x8848),
        OfAction::PopMpls(0x0800),
        OfAction::SetQueue(3),
        OfAction::Group(7),
        OfAction::SetNwTtl(33),
        OfAction::DecNwTtl,
        OfAction::PushPbb(0x88e7),
        OfAction::PopPbb,
    ];
    let mut want = vec![
        Action::Output(2),
        Action::Output(dport::IN_PORT),
        Action::Output(dport::TABLE),
        Action::Output(dport::NORMAL),
        Action::Output(dport::FLOOD),
        Action::Output(dport::ALL),
        Action::Output(dport::LOCAL),
        Action::Controller { max_len: 128 },
        Action::Controller { max_len: 0xffff },
        Action::Output(5),
        Action::CopyTtlOut,
        Action::CopyTtlIn,
        Action::SetMplsTtl(9),
        Action::DecMplsTtl,
        Action::PushVlan(0x8100),
        Action::PushVlan(0x88a8),
        Action::PopVlan,
        Action::PushMpls(0x8847),
        Action::PushMpls(0x8848),
        Action::PopMpls(0x0800),
        Action::SetQueue(3),
        Action::Group(7),
        Action::SetNwTtl(33),
        Action::DecNwTtl,
        Action::PushPbb(0x88e7),
        Action::PopPbb,
    ];
    for (oxm, f, v) in set_field_cases() {
        of.push(set(oxm));
        want.push(Action::SetField(f, v));
    }
    assert_eq!(actions_to_datapath(&of).unwrap(), want);
    assert_eq!(actions_to_datapath(&[]).unwrap(), vec![]);
}

#[test]
fn set_field_cases_cover_every_header_field() {
    let cases = set_field_cases();
    for n in 0..=39u8 {
        let f = OxmField::from_u8(n).expect("basic field");
        let covered = cases.iter().any(|(o, _, _)| o.field() == Some(f));
        assert_eq!(covered, !NOT_SETTABLE.contains(&f), "{}", f.name());
    }
}

#[test]
fn action_errors_carry_their_kinds() {
    let kind = |a: OfAction| actions_to_datapath(&[out(1), a]).unwrap_err().kind();
    let err =
        actions_to_datapath(&[OfAction::Experimenter { experimenter: 0x2320, data: vec![0; 4] }])
            .unwrap_err();
    assert_eq!(err, TranslateError::ExperimenterAction { experimenter: 0x2320 });
    assert_eq!(err.kind(), ErrorKind::BAD_ACTION_BAD_EXPERIMENTER);
    assert_eq!(kind(out(0)), ErrorKind::BAD_ACTION_BAD_OUT_PORT);
    assert_eq!(kind(out(port::ANY)), ErrorKind::BAD_ACTION_BAD_OUT_PORT);
    assert_eq!(kind(out(port::MAX + 1)), ErrorKind::BAD_ACTION_BAD_OUT_PORT);
    assert_eq!(kind(OfAction::Group(OFPG_ANY)), ErrorKind::BAD_ACTION_BAD_OUT_GROUP);
    assert_eq!(kind(OfAction::PushVlan(0x0800)), ErrorKind::BAD_ACTION_BAD_ARGUMENT);
    assert_eq!(kind(OfAction::PushMpls(0x0800)), ErrorKind::BAD_ACTION_BAD_ARGUMENT);
    assert_eq!(kind(OfAction::PushPbb(0x8100)), ErrorKind::BAD_ACTION_BAD_ARGUMENT);
    for f in NOT_SETTABLE {
        let oxm = match f {
            OxmField::InPort => Oxm::InPort(1),
            OxmField::InPhyPort => Oxm::InPhyPort(1),
            OxmField::Metadata => Oxm::Metadata(1, None),
            _ => Oxm::Ipv6Exthdr(1, None),
        };
        assert_eq!(kind(set(oxm)), ErrorKind::BAD_ACTION_BAD_SET_TYPE, "{}", f.name());
    }
    let other =
        Oxm::Other { class: 0xffff, field: 1, has_mask: false, payload: vec![0, 0, 0, 1, 9] };
    assert_eq!(kind(set(other)), ErrorKind::BAD_ACTION_BAD_SET_TYPE);
    assert_eq!(
        kind(set(Oxm::Ipv4Src(v4("10.0.0.0"), Some(v4("255.0.0.0"))))),
        ErrorKind::BAD_ACTION_BAD_SET_ARGUMENT
    );
    assert_eq!(kind(set(Oxm::VlanVid(5, None))), ErrorKind::BAD_ACTION_BAD_SET_ARGUMENT);
    assert_eq!(kind(set(Oxm::VlanPcp(8))), ErrorKind::BAD_ACTION_BAD_SET_ARGUMENT);
    assert_eq!(kind(set(Oxm::MplsLabel(1 << 20))), ErrorKind::BAD_ACTION_BAD_SET_ARGUMENT);
}

#[test]
fn action_sets_hold_one_action_per_slot() {
    // Distinct slots pass, in the order written.
    let ok = action_set_to_datapath(&[
        set(Oxm::Ipv4Src(v4("1.2.3.4"), None)),
        set(Oxm::Ipv4Dst(v4("1.2.3.5"), None)),
        OfAction::Group(1),
        out(3),
    ])
    .unwrap();
    assert_eq!(
        ok,
        vec![
            Action::SetField(Field::Ipv4Src, 0x0102_0304),
            Action::SetField(Field::Ipv4Dst, 0x0102_0305),
            Action::Group(1),
            Action::Output(3),
        ]
    );
    let kind = |a: &[OfAction]| action_set_to_datapath(a).unwrap_err().kind();
    assert_eq!(kind(&[out(1), out(2)]), ErrorKind::BAD_ACTION_TOO_MANY);
    assert_eq!(
        kind(&[out(1), OfAction::Output { port: port::CONTROLLER, max_len: 0 }]),
        ErrorKind::BAD_ACTION_TOO_MANY
    );
    // Two OXM fields that share a place in the key would share the datapath's slot.
    let err = action_set_to_datapath(&[
        set(Oxm::Ipv4Src(v4("1.2.3.4"), None)),
        set(Oxm::ArpSpa(v4("1.2.3.5"), None)),
    ])
    .unwrap_err();
    assert_eq!(err, TranslateError::SharedSetField(Field::Ipv4Src));
    assert_eq!(err.kind(), ErrorKind::BAD_ACTION_TOO_MANY);
    assert_eq!(kind(&[set(Oxm::TcpSrc(1)), set(Oxm::UdpSrc(2))]), ErrorKind::BAD_ACTION_TOO_MANY);
    // An apply-actions list may repeat anything.
    assert!(
        actions_to_datapath(&[out(1), out(2), set(Oxm::TcpSrc(1)), set(Oxm::UdpSrc(2))]).is_ok()
    );
}

fn all_instructions() -> Vec<Instruction> {
    vec![
        Instruction::Meter(5),
        Instruction::ApplyActions(vec![
            set(Oxm::EthDst(MacAddr([0, 1, 2, 3, 4, 5]), None)),
            out(2),
        ]),
        Instruction::ClearActions,
        Instruction::WriteActions(vec![OfAction::SetQueue(1), out(4)]),
        Instruction::WriteMetadata { metadata: 0xab, mask: 0xff },
        Instruction::GotoTable(3),
    ]
}

#[test]
fn every_instruction_kind_translates() {
    let want = Instructions {
        meter: Some(5),
        apply: vec![Action::SetField(Field::EthDst, 0x0001_0203_0405), Action::Output(2)],
        clear_actions: true,
        write_actions: Some(vec![Action::SetQueue(1), Action::Output(4)]),
        write_metadata: Some((0xab, 0xff)),
        goto_table: Some(3),
    };
    let mut insts = all_instructions();
    assert_eq!(instructions_to_datapath(&insts).unwrap(), want);
    // The list's order does not matter: the datapath runs them in the spec's order.
    insts.reverse();
    assert_eq!(instructions_to_datapath(&insts).unwrap(), want);
    // Each alone.
    for i in all_instructions() {
        let got = instructions_to_datapath(std::slice::from_ref(&i)).unwrap();
        let alone = match i {
            Instruction::Meter(_) => Instructions { meter: want.meter, ..Instructions::default() },
            Instruction::ApplyActions(_) => {
                Instructions { apply: want.apply.clone(), ..Instructions::default() }
            }
            Instruction::ClearActions => {
                Instructions { clear_actions: true, ..Instructions::default() }
            }
            Instruction::WriteActions(_) => Instructions {
                write_actions: want.write_actions.clone(),
                ..Instructions::default()
            },
            Instruction::WriteMetadata { .. } => {
                Instructions { write_metadata: want.write_metadata, ..Instructions::default() }
            }
            Instruction::GotoTable(_) => {
                Instructions { goto_table: want.goto_table, ..Instructions::default() }
            }
            Instruction::Experimenter { .. } => unreachable!("not in the list"),
        };
        assert_eq!(got, alone, "{i:?}");
    }
    // No instructions: drop. An empty write-actions is an empty set, not no instruction.
    assert_eq!(instructions_to_datapath(&[]).unwrap(), Instructions::default());
    assert_eq!(
        instructions_to_datapath(&[Instruction::WriteActions(vec![])]).unwrap().write_actions,
        Some(vec![])
    );
    assert_eq!(
        instructions_to_datapath(&[Instruction::GotoTable(253)]).unwrap().goto_table,
        Some(253)
    );
}

#[test]
fn instruction_errors_carry_their_kinds() {
    let kind = |i: &[Instruction]| instructions_to_datapath(i).unwrap_err().kind();
    let err = instructions_to_datapath(&[Instruction::Experimenter {
        experimenter: 0x2320,
        data: vec![],
    }])
    .unwrap_err();
    assert_eq!(err, TranslateError::ExperimenterInstruction { experimenter: 0x2320 });
    assert_eq!(err.kind(), ErrorKind::BAD_INSTRUCTION_BAD_EXPERIMENTER);
    assert_eq!(
        kind(&[Instruction::ClearActions, Instruction::ClearActions]),
        ErrorKind::BAD_INSTRUCTION_DUP_INST
    );
    assert_eq!(
        kind(&[Instruction::ApplyActions(vec![]), Instruction::ApplyActions(vec![])]),
        ErrorKind::BAD_INSTRUCTION_DUP_INST
    );
    // Table 254 is OFPTT_MAX, a table in OpenFlow 1.3, but the datapath has 0..=253.
    let err = instructions_to_datapath(&[Instruction::GotoTable(254)]).unwrap_err();
    assert_eq!(err, TranslateError::GotoTable(254));
    assert_eq!(err.kind(), ErrorKind::BAD_INSTRUCTION_BAD_TABLE_ID);
    assert_eq!(kind(&[Instruction::GotoTable(255)]), ErrorKind::BAD_INSTRUCTION_BAD_TABLE_ID);
    assert_eq!(kind(&[Instruction::Meter(0)]), ErrorKind::METER_MOD_FAILED_INVALID_METER);
    assert_eq!(
        kind(&[Instruction::Meter(OFPM_MAX + 1)]),
        ErrorKind::METER_MOD_FAILED_INVALID_METER
    );
    for virtual_meter in [OFPM_SLOWPATH, OFPM_CONTROLLER] {
        let err = instructions_to_datapath(&[Instruction::Meter(virtual_meter)]).unwrap_err();
        assert_eq!(err, TranslateError::VirtualMeter(virtual_meter));
        assert_eq!(err.kind(), ErrorKind::METER_MOD_FAILED_INVALID_METER);
    }
    assert_eq!(
        instructions_to_datapath(&[Instruction::Meter(OFPM_MAX)]).unwrap().meter,
        Some(OFPM_MAX)
    );
    // Errors inside action lists keep the action's kind.
    assert_eq!(
        kind(&[Instruction::ApplyActions(vec![OfAction::Experimenter {
            experimenter: 1,
            data: vec![]
        }])]),
        ErrorKind::BAD_ACTION_BAD_EXPERIMENTER
    );
    assert_eq!(
        kind(&[Instruction::WriteActions(vec![out(1), out(2)])]),
        ErrorKind::BAD_ACTION_TOO_MANY
    );
    assert_eq!(
        kind(&[Instruction::ApplyActions(vec![out(0)])]),
        ErrorKind::BAD_ACTION_BAD_OUT_PORT
    );
}

fn sample_flow_mod() -> FlowMod {
    FlowMod {
        cookie: 0x1122_3344_5566_7788,
        cookie_mask: u64::MAX,
        table_id: 2,
        idle_timeout: 30,
        hard_timeout: 300,
        priority: 1000,
        flags: flow_mod_flags::SEND_FLOW_REM | flow_mod_flags::NO_BYT_COUNTS,
        match_: Match::new(vec![Oxm::InPort(4), Oxm::EthType(0x0800)]),
        instructions: all_instructions(),
        ..FlowMod::default()
    }
}

#[test]
fn flow_mod_fills_every_rule_field() {
    let fm = sample_flow_mod();
    let r = flow_mod_to_rule(&fm, 2).unwrap();
    assert_eq!(r.priority, 1000);
    assert_eq!(r.cookie, 0x1122_3344_5566_7788);
    assert_eq!(r.idle_timeout, 30);
    assert_eq!(r.hard_timeout, 300);
    assert_eq!(r.flags, flow_mod_flags::SEND_FLOW_REM | flow_mod_flags::NO_BYT_COUNTS);
    assert_eq!(
        r.flow_match(),
        Some(FlowMatch::ANY.exact(Field::InPort, 4).exact(Field::EthType, 0x0800))
    );
    assert_eq!(*r.instructions, instructions_to_datapath(&all_instructions()).unwrap());
    assert!(!r.is_table_miss());
    // A priority-0 match-all rule is the table-miss entry.
    let miss = FlowMod {
        priority: 0,
        match_: Match::default(),
        instructions: vec![Instruction::ApplyActions(vec![OfAction::Output {
            port: port::CONTROLLER,
            max_len: OFPCML_NO_BUFFER,
        }])],
        ..FlowMod::default()
    };
    let r = flow_mod_to_rule(&miss, 0).unwrap();
    assert!(r.is_table_miss());
    assert_eq!(r.instructions.apply, vec![Action::Controller { max_len: 0xffff }]);
}

#[test]
fn flow_mod_errors_carry_their_kinds() {
    let fm = sample_flow_mod();
    let kind = |fm: &FlowMod, table: u8| flow_mod_to_rule(fm, table).unwrap_err().kind();
    assert_eq!(flow_mod_to_rule(&fm, 254).unwrap_err(), TranslateError::Table(254));
    assert_eq!(kind(&fm, 254), ErrorKind::FLOW_MOD_FAILED_BAD_TABLE_ID);
    assert_eq!(kind(&fm, 255), ErrorKind::FLOW_MOD_FAILED_BAD_TABLE_ID);
    let bad_flags = FlowMod { flags: 0x20, ..fm.clone() };
    assert_eq!(kind(&bad_flags, 2), ErrorKind::FLOW_MOD_FAILED_BAD_FLAGS);
    // goto-table must go forward from the rule's table.
    assert_eq!(kind(&fm, 3), ErrorKind::BAD_INSTRUCTION_BAD_TABLE_ID);
    assert_eq!(kind(&fm, 4), ErrorKind::BAD_INSTRUCTION_BAD_TABLE_ID);
    assert!(flow_mod_to_rule(&fm, 0).is_ok());
    let bad_match = FlowMod { match_: Match::new(vec![Oxm::IpProto(6)]), ..fm.clone() };
    assert_eq!(kind(&bad_match, 2), ErrorKind::BAD_MATCH_BAD_PREREQ);
    let bad_action = FlowMod {
        instructions: vec![Instruction::ApplyActions(vec![OfAction::Group(OFPG_ANY)])],
        ..fm.clone()
    };
    assert_eq!(kind(&bad_action, 2), ErrorKind::BAD_ACTION_BAD_OUT_GROUP);
    let goto_254 = FlowMod { instructions: vec![Instruction::GotoTable(254)], ..fm.clone() };
    assert_eq!(flow_mod_to_rule(&goto_254, 2).unwrap_err(), TranslateError::GotoTable(254));
    // Output to TABLE is for packet-out only.
    for instructions in [
        vec![Instruction::ApplyActions(vec![out(port::TABLE)])],
        vec![Instruction::WriteActions(vec![out(port::TABLE)])],
    ] {
        let to_table = FlowMod { instructions, ..fm.clone() };
        assert_eq!(flow_mod_to_rule(&to_table, 2).unwrap_err(), TranslateError::OutputToTable);
        assert_eq!(kind(&to_table, 2), ErrorKind::BAD_ACTION_BAD_OUT_PORT);
    }
    // The error converts into the OfpError the agent sends.
    let e: openflow::OfpError = flow_mod_to_rule(&goto_254, 2).unwrap_err().into();
    assert_eq!(e.kind, ErrorKind::BAD_INSTRUCTION_BAD_TABLE_ID);
    assert!(e.detail.contains("254"), "{e}");
}
