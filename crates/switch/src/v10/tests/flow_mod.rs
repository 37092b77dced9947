//! Flow-mods: commands, flags, priorities, out port, buffer id; flow-removed; a flow
//! through flow-mod, the 1.3 flow tables' stats and back.

use std::net::Ipv4Addr;

use crate::flows::FlowTables;
use crate::v10::{flow_mod_to_v13, flow_removed_to_v10, stats_reply_to_v10};
use openflow::action::Action as A13;
use openflow::instruction::Instruction;
use openflow::match13::Match as Match13;
use openflow::oxm::Oxm;
use openflow::v10::flow::{flow_mod_flags as f10, FlowModCommand as Cmd10};
use openflow::v10::match10::{wildcards as fw, Match as Match10};
use openflow::v10::stats::StatsReplyBody;
use openflow::v10::{Action as A10, FlowMod as FlowMod10, FlowRemovedReason as R10};
use openflow::v13::flow_mod::{flow_mod_flags as f13, FlowModCommand as Cmd13, OFPTT_ALL};
use openflow::v13::multipart::{FlowStats, FlowStatsRequest, MultipartReply, MultipartReplyBody};
use openflow::v13::packet_in::{FlowRemoved, FlowRemovedReason as R13};
use openflow::ErrorKind;

/// Every field wildcarded, in the canonical form (address counts 32).
const ALL: u32 = fw::ALL & !(fw::NW_SRC_MASK | fw::NW_DST_MASK) | fw::NW_SRC_ALL | fw::NW_DST_ALL;

fn ip_match() -> Match10 {
    Match10 {
        wildcards: ALL & !(fw::IN_PORT | fw::DL_TYPE | fw::NW_PROTO),
        in_port: 1,
        dl_type: 0x0800,
        nw_proto: 6,
        ..Match10::all()
    }
}

fn add() -> FlowMod10 {
    FlowMod10 {
        match_: ip_match(),
        cookie: 0xc0ffee,
        command: Cmd10::Add,
        idle_timeout: 10,
        hard_timeout: 20,
        priority: 100,
        buffer_id: 42,
        out_port: openflow::action::port::ANY,
        flags: f10::SEND_FLOW_REM | f10::CHECK_OVERLAP,
        instructions: vec![A10::SetTpDst(8080), A10::Output { port: 2, max_len: 0 }],
        ..FlowMod10::default()
    }
}

#[test]
fn add_becomes_a_table_0_add_that_resets_counters() {
    let t = flow_mod_to_v13(&add()).unwrap();
    assert_eq!(t.add_if_unmatched, None);
    let fm = t.flow_mod;
    assert_eq!(fm.command, Cmd13::Add);
    assert_eq!(fm.table_id, 0);
    assert_eq!((fm.cookie, fm.cookie_mask), (0xc0ffee, 0));
    assert_eq!((fm.idle_timeout, fm.hard_timeout, fm.priority), (10, 20, 100));
    assert_eq!(fm.buffer_id, 42);
    assert_eq!((fm.out_port, fm.out_group), (0xffff_ffff, 0xffff_ffff));
    assert_eq!(fm.flags, f13::SEND_FLOW_REM | f13::CHECK_OVERLAP | f13::RESET_COUNTS);
    assert_eq!(fm.match_, ip_match().to_oxm());
    assert_eq!(
        fm.instructions,
        vec![Instruction::ApplyActions(vec![
            A13::SetField(Oxm::TcpDst(8080)),
            A13::Output { port: 2, max_len: 0 },
        ])]
    );
    fm.validate().unwrap();
}

#[test]
fn no_actions_is_no_instruction() {
    let fm = flow_mod_to_v13(&FlowMod10 { instructions: vec![], ..add() }).unwrap().flow_mod;
    assert!(fm.instructions.is_empty());
}

#[test]
fn modify_carries_the_add_for_when_nothing_matches() {
    for (c10, c13) in [(Cmd10::Modify, Cmd13::Modify), (Cmd10::ModifyStrict, Cmd13::ModifyStrict)] {
        let t = flow_mod_to_v13(&FlowMod10 { command: c10, ..add() }).unwrap();
        assert_eq!(t.flow_mod.command, c13);
        // The modify itself keeps counters.
        assert_eq!(t.flow_mod.flags & f13::RESET_COUNTS, 0);
        let a = t.add_if_unmatched.expect("a modify carries its add");
        assert_eq!(a.command, Cmd13::Add);
        assert_eq!(a.flags, t.flow_mod.flags | f13::RESET_COUNTS);
        assert_eq!(a.instructions, t.flow_mod.instructions);
        assert_eq!(a.match_, t.flow_mod.match_);
        assert_eq!((a.priority, a.cookie, a.buffer_id), (100, 0xc0ffee, 42));
    }
}

#[test]
fn modify_as_add_installs_when_the_tables_hold_nothing() {
    let mut tables = FlowTables::new();
    let t = flow_mod_to_v13(&FlowMod10 { command: Cmd10::Modify, ..add() }).unwrap();
    // The modify is for every table; 1.3 modifies one table at a time.
    assert_eq!(t.flow_mod.table_id, OFPTT_ALL);
    let changes = tables.apply(&t.per_table(0), 0).unwrap();
    assert!(changes.is_empty(), "a 1.3 modify of nothing changes nothing");
    let add = t.add_if_unmatched.clone().unwrap();
    assert_eq!(add.table_id, 0);
    assert_eq!(tables.apply(&add, 0).unwrap().len(), 1);
    // Now the modify selects the entry, so no add is needed.
    assert_eq!(tables.apply(&t.per_table(0), 1).unwrap().len(), 1);
}

#[test]
fn deletes_ignore_actions_and_filter_by_out_port() {
    for (c10, c13) in [(Cmd10::Delete, Cmd13::Delete), (Cmd10::DeleteStrict, Cmd13::DeleteStrict)] {
        // Deletes ignore their actions: none are translated.
        let t = flow_mod_to_v13(&FlowMod10 {
            command: c10,
            out_port: 3,
            instructions: vec![A10::SetVlanVid(5)],
            ..add()
        })
        .unwrap();
        assert_eq!(t.flow_mod.command, c13);
        assert_eq!(t.flow_mod.table_id, OFPTT_ALL, "1.0 deletes act on every table");
        t.flow_mod.validate().unwrap();
        assert_eq!(t.flow_mod.out_port, 3);
        assert!(t.flow_mod.instructions.is_empty());
        assert_eq!(t.add_if_unmatched, None);
    }
    // OFPP_LOCAL as a 1.0 controller sends it (0xfffe on the wire) is 1.3's LOCAL.
    let mut w = openflow::Writer::new();
    FlowMod10 { command: Cmd10::Delete, ..add() }.encode(&mut w);
    w.buf[60..62].copy_from_slice(&0xfffeu16.to_be_bytes());
    let local = FlowMod10::decode(&mut openflow::Reader::new(&w.buf)).unwrap();
    let t = flow_mod_to_v13(&local).unwrap();
    assert_eq!(t.flow_mod.out_port, 0xffff_fffe);
}

#[test]
fn exact_matches_get_the_highest_priority() {
    let exact = Match10 { wildcards: 0, ..ip_match() };
    for command in [Cmd10::Add, Cmd10::ModifyStrict, Cmd10::DeleteStrict] {
        let t =
            flow_mod_to_v13(&FlowMod10 { match_: exact, command, instructions: vec![], ..add() })
                .unwrap();
        assert_eq!(t.flow_mod.priority, 0xffff, "{command:?}");
    }
    // One wildcard bit (or one wildcarded address bit) keeps the priority.
    for wildcards in [fw::TP_SRC, 1 << fw::NW_DST_SHIFT] {
        let t = flow_mod_to_v13(&FlowMod10 {
            match_: Match10 { wildcards, ..ip_match() },
            instructions: vec![],
            ..add()
        })
        .unwrap();
        assert_eq!(t.flow_mod.priority, 100);
    }
}

#[test]
fn emergency_flows_are_refused() {
    for command in [Cmd10::Add, Cmd10::Modify, Cmd10::Delete] {
        let zero =
            FlowMod10 { command, flags: f10::EMERG, idle_timeout: 0, hard_timeout: 0, ..add() };
        let e = flow_mod_to_v13(&zero).unwrap_err();
        assert_eq!(e.kind, ErrorKind::FLOW_MOD_FAILED_TABLE_FULL);
        assert_eq!(e.kind.to_v10(), (3, 0), "OFPFMFC_ALL_TABLES_FULL");
        let e = flow_mod_to_v13(&FlowMod10 { idle_timeout: 5, ..zero }).unwrap_err();
        assert_eq!(e.kind.to_v10(), (3, 3), "OFPFMFC_BAD_EMERG_TIMEOUT");
    }
}

#[test]
fn undefined_flags_and_commands_are_refused() {
    let e = flow_mod_to_v13(&FlowMod10 { flags: 1 << 3, ..add() }).unwrap_err();
    assert_eq!(e.kind, ErrorKind::FLOW_MOD_FAILED_BAD_FLAGS);
    assert_eq!(e.kind.to_v10(), (3, 5), "OFPFMFC_UNSUPPORTED");
    let e = flow_mod_to_v13(&FlowMod10 { command: Cmd10::Unknown(9), ..add() }).unwrap_err();
    assert_eq!(e.kind.to_v10(), (3, 4), "OFPFMFC_BAD_COMMAND");
    // An action 1.0 itself refuses: so is the add.
    let e = flow_mod_to_v13(&FlowMod10 { instructions: vec![A10::SetVlanVid(4096)], ..add() })
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::BAD_ACTION_BAD_ARGUMENT);
}

#[test]
fn flow_removed_back_to_1_0() {
    let m = ip_match();
    let fr = |reason| FlowRemoved {
        cookie: 7,
        priority: 100,
        reason,
        table_id: 0,
        duration_sec: 3,
        duration_nsec: 4,
        idle_timeout: 10,
        hard_timeout: 20,
        packet_count: 5,
        byte_count: 600,
        match_: m.to_oxm(),
    };
    for (r13, r10) in [
        (R13::IdleTimeout, R10::IdleTimeout),
        (R13::HardTimeout, R10::HardTimeout),
        (R13::Delete, R10::Delete),
        (R13::GroupDelete, R10::Delete),
        (R13::MeterDelete, R10::Delete),
    ] {
        let v = flow_removed_to_v10(&fr(r13)).unwrap();
        assert_eq!(v.reason, r10);
        assert_eq!(v.match_, m);
        assert_eq!((v.cookie, v.priority, v.idle_timeout), (7, 100, 10));
        assert_eq!((v.duration_sec, v.duration_nsec), (3, 4));
        assert_eq!((v.packet_count, v.byte_count), (5, 600));
    }
    let v6 = FlowRemoved {
        match_: Match13::new(vec![
            Oxm::EthType(0x86dd),
            Oxm::Ipv6Dst("::1".parse().unwrap(), None),
        ]),
        ..fr(R13::Delete)
    };
    assert!(flow_removed_to_v10(&v6).is_err());
}

#[test]
fn a_1_0_flow_comes_back_in_flow_stats() {
    let mut tables = FlowTables::new();
    let flows = [
        add(),
        FlowMod10 {
            match_: Match10 {
                wildcards: ALL & !(fw::DL_VLAN | fw::DL_TYPE | fw::NW_SRC_MASK)
                    | 8 << fw::NW_SRC_SHIFT,
                dl_vlan: 0xffff,
                dl_type: 0x0800,
                nw_src: Ipv4Addr::new(10, 1, 2, 0),
                ..Match10::all()
            },
            priority: 7,
            instructions: vec![
                A10::SetVlanVid(30),
                A10::SetNwTos(0x20),
                A10::Enqueue { port: 5, queue_id: 2 },
            ],
            ..add()
        },
    ];
    for f in &flows {
        tables.apply(&flow_mod_to_v13(f).unwrap().flow_mod, 0).unwrap();
    }
    // A 1.3 controller's flow 1.0 cannot express is left out of the 1.0 reply.
    let mut goto = flow_mod_to_v13(&add()).unwrap().flow_mod;
    goto.priority = 1;
    goto.instructions = vec![Instruction::GotoTable(1)];
    tables.apply(&goto, 0).unwrap();

    let stats: Vec<FlowStats> = tables
        .select(&FlowStatsRequest::default())
        .unwrap()
        .map(|(table_id, k, e)| FlowStats {
            table_id,
            duration_sec: 0,
            duration_nsec: 0,
            priority: e.priority,
            idle_timeout: e.idle_timeout,
            hard_timeout: e.hard_timeout,
            flags: e.flags,
            importance: 0,
            cookie: e.cookie,
            packet_count: 0,
            byte_count: 0,
            match_: e.match_(k),
            instructions: e.instructions.to_vec(),
        })
        .collect();
    assert_eq!(stats.len(), 3);
    let reply =
        stats_reply_to_v10(&MultipartReply { flags: 0, body: MultipartReplyBody::Flow(stats) })
            .unwrap();
    let StatsReplyBody::Flow(got) = reply.body else { panic!("not a flow reply: {reply:?}") };
    assert_eq!(got.len(), 2);
    for f in &flows {
        let e = got
            .iter()
            .find(|e| e.priority == f.priority)
            .unwrap_or_else(|| panic!("{f:?} missing from {got:?}"));
        assert_eq!(e.match_, f.match_);
        assert_eq!(e.instructions, f.instructions);
        assert_eq!((e.cookie, e.idle_timeout, e.hard_timeout), (0xc0ffee, 10, 20));
    }
}
