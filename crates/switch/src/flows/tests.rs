//! Tests of the flow tables: every command and flag, cookie masks, out_port/out_group
//! filters, OFPTT_ALL deletes, overlap, strict vs non-strict, timeouts with injected
//! time, flow-stats selection and error kinds.

use super::norm::norm;
use super::*;
use openflow::action::Action;
use openflow::match13::Match;
use openflow::oxm::Oxm;
use openflow::v13::flow_mod::flow_mod_flags as ff;
use std::net::Ipv4Addr;

const SEC: u64 = 1_000_000_000;

fn ip(a: u8, b: u8, c: u8, d: u8) -> Ipv4Addr {
    Ipv4Addr::new(a, b, c, d)
}

/// `eth_type=0x0800,ipv4_dst=addr/mask`.
fn v4dst(addr: Ipv4Addr, mask: Option<Ipv4Addr>) -> Vec<Oxm> {
    vec![Oxm::EthType(0x0800), Oxm::Ipv4Dst(addr, mask)]
}

fn out(port: u32) -> Vec<Instruction> {
    vec![Instruction::ApplyActions(vec![Action::Output { port, max_len: 0 }])]
}

fn fm(command: FlowModCommand, priority: u16, fields: Vec<Oxm>) -> FlowMod {
    FlowMod { command, priority, match_: Match { fields }, ..FlowMod::default() }
}

fn add(priority: u16, fields: Vec<Oxm>, instructions: Vec<Instruction>) -> FlowMod {
    FlowMod { instructions, ..fm(FlowModCommand::Add, priority, fields) }
}

fn key(priority: u16, fields: Vec<Oxm>) -> FlowKey {
    FlowKey::new(norm(fields).view(), priority)
}

fn err_kind(t: &mut FlowTables, f: &FlowMod) -> ErrorKind {
    t.apply(f, 0).unwrap_err().kind
}

/// The (table, priority) of each removal, in order.
fn removed(changes: &[FlowChange]) -> Vec<(u8, u16)> {
    changes
        .iter()
        .map(|c| match c {
            FlowChange::Remove { table, key, .. } => (*table, key.priority()),
            other => panic!("expected only removals, got {other:?}"),
        })
        .collect()
}

#[test]
fn add_installs_an_entry() {
    let mut t = FlowTables::new();
    let f = FlowMod {
        cookie: 7,
        idle_timeout: 10,
        hard_timeout: 20,
        flags: ff::SEND_FLOW_REM,
        table_id: 3,
        ..add(100, vec![Oxm::InPort(1)], out(2))
    };
    let ch = t.apply(&f, 5 * SEC).unwrap();
    let k = key(100, vec![Oxm::InPort(1)]);
    assert_eq!(ch, vec![FlowChange::Add { table: 3, key: k.clone() }]);
    let e = t.get(3, &k).unwrap();
    assert_eq!(
        (e.cookie, e.idle_timeout, e.hard_timeout, e.flags, e.installed_at),
        (7, 10, 20, ff::SEND_FLOW_REM, 5 * SEC)
    );
    assert_eq!(*e.instructions, out(2));
    assert_eq!(e.rule, None);
    assert!(t.set_rule(3, &k, 42));
    assert_eq!(t.get(3, &k).unwrap().rule, Some(42));
    assert!(!t.set_rule(2, &k, 43), "no such entry in table 2");
    assert_eq!((t.len(), t.table_len(3), t.table_len(0)), (1, 1, 0));
}

#[test]
fn add_replaces_identical_entry_whatever_the_spelling() {
    let mut t = FlowTables::new();
    let first = FlowMod {
        cookie: 1,
        flags: ff::SEND_FLOW_REM,
        ..add(10, v4dst(ip(10, 0, 0, 1), None), out(1))
    };
    t.apply(&first, SEC).unwrap();
    let k = key(10, v4dst(ip(10, 0, 0, 1), None));
    t.set_rule(0, &k, 9);
    // Same constraints: other TLV order, an all-ones mask, an all-zero masked field.
    let second = FlowMod {
        cookie: 2,
        ..add(
            10,
            vec![
                Oxm::Ipv4Dst(ip(10, 0, 0, 1), Some(ip(255, 255, 255, 255))),
                Oxm::EthSrc(Default::default(), Some(Default::default())),
                Oxm::EthType(0x0800),
            ],
            out(2),
        )
    };
    let ch = t.apply(&second, 3 * SEC).unwrap();
    assert_eq!(ch.len(), 1);
    let FlowChange::Replace { table, key: k2, old, reset_counts } = &ch[0] else {
        panic!("expected a replace, got {ch:?}");
    };
    assert_eq!((*table, k2, *reset_counts), (0, &k, false));
    assert_eq!((old.cookie, old.rule, old.installed_at), (1, Some(9), SEC));
    assert!(!ch[0].sends_flow_removed(), "a replaced entry is not removed");
    let e = t.get(0, &k).unwrap();
    assert_eq!((e.cookie, e.flags, e.installed_at), (2, 0, 3 * SEC));
    assert_eq!((e.instructions.to_vec(), e.rule), (out(2), Some(9)));
    assert_eq!(t.len(), 1);

    let third =
        FlowMod { flags: ff::RESET_COUNTS, ..add(10, v4dst(ip(10, 0, 0, 1), None), out(3)) };
    let ch = t.apply(&third, 4 * SEC).unwrap();
    assert!(matches!(ch[..], [FlowChange::Replace { reset_counts: true, .. }]));
}

#[test]
fn add_at_other_priority_or_table_is_another_entry() {
    let mut t = FlowTables::new();
    t.apply(&add(10, vec![Oxm::InPort(1)], out(1)), 0).unwrap();
    t.apply(&add(11, vec![Oxm::InPort(1)], out(1)), 0).unwrap();
    t.apply(&FlowMod { table_id: 1, ..add(10, vec![Oxm::InPort(1)], out(1)) }, 0).unwrap();
    assert_eq!((t.table_len(0), t.table_len(1)), (2, 1));
}

#[test]
fn check_overlap() {
    let overlap = |f: FlowMod| FlowMod { flags: ff::CHECK_OVERLAP, ..f };
    let mut t = FlowTables::new();
    t.apply(&add(10, v4dst(ip(10, 0, 0, 0), Some(ip(255, 0, 0, 0))), out(1)), 0).unwrap();
    // 10.1.0.0/16 lies inside 10.0.0.0/8 at the same priority.
    let inside = overlap(add(10, v4dst(ip(10, 1, 0, 0), Some(ip(255, 255, 0, 0))), out(2)));
    assert_eq!(err_kind(&mut t, &inside), ErrorKind::FLOW_MOD_FAILED_OVERLAP);
    assert_eq!(t.len(), 1, "a refused add changes nothing");
    // An identical match overlaps too.
    let same = overlap(add(10, v4dst(ip(10, 0, 0, 0), Some(ip(255, 0, 0, 0))), out(2)));
    assert_eq!(err_kind(&mut t, &same), ErrorKind::FLOW_MOD_FAILED_OVERLAP);
    // A field only one side constrains leaves it free: in_port=1 + 10/8 overlaps.
    let mut fields = v4dst(ip(10, 2, 0, 0), Some(ip(255, 255, 0, 0)));
    fields.push(Oxm::InPort(1));
    assert_eq!(
        err_kind(&mut t, &overlap(add(10, fields, out(2)))),
        ErrorKind::FLOW_MOD_FAILED_OVERLAP
    );
    // Disjoint: 11.0.0.0/8, and a different eth_type.
    t.apply(&overlap(add(10, v4dst(ip(11, 0, 0, 0), Some(ip(255, 0, 0, 0))), out(2))), 0).unwrap();
    t.apply(&overlap(add(10, vec![Oxm::EthType(0x86dd)], out(2))), 0).unwrap();
    // 10.0.0.0/255.0.0.255 and 0.0.0.1/0.0.0.255 disagree in the last byte: disjoint.
    t.apply(
        &overlap(FlowMod {
            table_id: 1,
            ..add(10, v4dst(ip(10, 0, 0, 0), Some(ip(255, 0, 0, 255))), out(1))
        }),
        0,
    )
    .unwrap();
    t.apply(
        &overlap(FlowMod {
            table_id: 1,
            ..add(10, v4dst(ip(0, 0, 0, 1), Some(ip(0, 0, 0, 255))), out(1))
        }),
        0,
    )
    .unwrap();
    // ...while 0.0.0.0/0.0.0.255 agrees with 10.0.0.0/255.0.0.255 on the last byte.
    assert_eq!(
        err_kind(
            &mut t,
            &overlap(FlowMod {
                table_id: 1,
                ..add(10, v4dst(ip(0, 0, 0, 0), Some(ip(0, 0, 0, 255))), out(1))
            })
        ),
        ErrorKind::FLOW_MOD_FAILED_OVERLAP
    );
    // Different priorities never overlap.
    t.apply(&overlap(add(11, vec![], out(3))), 0).unwrap();
    // Another table is not checked.
    t.apply(&overlap(FlowMod { table_id: 2, ..add(10, vec![], out(3)) }), 0).unwrap();
    // Without the flag an overlapping add is accepted.
    let plain = FlowMod { flags: 0, ..inside };
    assert!(matches!(t.apply(&plain, 0).unwrap()[..], [FlowChange::Add { .. }]));
}

/// Tables whose table 0 holds three entries of eth_type=0x0800 at priorities 10, 20, 30
/// with cookies 0x11, 0x12, 0x21, one of eth_type=0x86dd (cookie 0x11) and a catch-all
/// (cookie 0).
fn five_entries() -> FlowTables {
    let mut t = FlowTables::new();
    let entries = [
        (10, v4dst(ip(10, 0, 0, 1), None), 0x11),
        (20, v4dst(ip(10, 0, 0, 2), None), 0x12),
        (30, vec![Oxm::EthType(0x0800)], 0x21),
        (10, vec![Oxm::EthType(0x86dd)], 0x11),
        (0, vec![], 0),
    ];
    for (p, fields, cookie) in entries {
        let f = FlowMod {
            cookie,
            idle_timeout: 5,
            hard_timeout: 50,
            flags: ff::SEND_FLOW_REM,
            ..add(p, fields, out(1))
        };
        t.apply(&f, SEC).unwrap();
    }
    t
}

fn modified(changes: &[FlowChange]) -> Vec<u16> {
    changes
        .iter()
        .map(|c| match c {
            FlowChange::Modify { key, .. } => key.priority(),
            other => panic!("expected only modifies, got {other:?}"),
        })
        .collect()
}

#[test]
fn modify_changes_instructions_of_covered_entries_only() {
    let mut t = five_entries();
    let f = FlowMod {
        cookie: 0x99,
        idle_timeout: 1,
        hard_timeout: 1,
        flags: ff::SEND_FLOW_REM,
        instructions: out(7),
        // Ignored by modify.
        out_port: 5,
        ..fm(FlowModCommand::Modify, 1, vec![Oxm::EthType(0x0800)])
    };
    let ch = t.apply(&f, 9 * SEC).unwrap();
    let mut prios = modified(&ch);
    prios.sort();
    assert_eq!(prios, vec![10, 20, 30], "any priority, eth_type=0x0800 only");
    assert!(ch
        .iter()
        .all(|c| matches!(c, FlowChange::Modify { reset_counts: false, table: 0, .. })));
    for (k, e) in t.table(0) {
        let v4 = e.match_(k).fields.first() == Some(&Oxm::EthType(0x0800));
        let expect = if v4 { out(7) } else { out(1) };
        assert_eq!(*e.instructions, expect, "{k:?}");
        // Cookie, timeouts, flags and duration are left as they were.
        assert_ne!(e.cookie, 0x99);
        assert_eq!((e.idle_timeout, e.hard_timeout), (5, 50));
        assert_eq!((e.flags, e.installed_at), (ff::SEND_FLOW_REM, SEC));
    }
    // An empty match covers everything.
    let all = FlowMod { instructions: out(8), ..fm(FlowModCommand::Modify, 0, vec![]) };
    assert_eq!(t.apply(&all, 0).unwrap().len(), 5);
}

#[test]
fn modify_strict_needs_identical_match_and_priority() {
    let mut t = five_entries();
    let strict =
        |p, fields| FlowMod { instructions: out(7), ..fm(FlowModCommand::ModifyStrict, p, fields) };
    // A covering match is not enough.
    assert!(t.apply(&strict(10, vec![Oxm::EthType(0x0800)]), 0).unwrap().is_empty());
    // Wrong priority.
    assert!(t.apply(&strict(11, v4dst(ip(10, 0, 0, 1), None)), 0).unwrap().is_empty());
    let ch = t.apply(&strict(10, v4dst(ip(10, 0, 0, 1), None)), 0).unwrap();
    assert_eq!(modified(&ch), vec![10]);
    let k = key(10, v4dst(ip(10, 0, 0, 1), None));
    assert_eq!(*t.get(0, &k).unwrap().instructions, out(7));
    // RESET_COUNTS on the modify is reported.
    let f = FlowMod { flags: ff::RESET_COUNTS, ..strict(10, v4dst(ip(10, 0, 0, 1), None)) };
    assert!(matches!(t.apply(&f, 0).unwrap()[..], [FlowChange::Modify { reset_counts: true, .. }]));
    assert_eq!(t.get(0, &k).unwrap().flags, ff::SEND_FLOW_REM, "flags kept");
}

#[test]
fn modify_filters_by_cookie_mask() {
    let mut t = five_entries();
    let f = FlowMod {
        cookie: 0x01,
        cookie_mask: 0x0f,
        instructions: out(7),
        ..fm(FlowModCommand::Modify, 0, vec![])
    };
    let mut prios = modified(&t.apply(&f, 0).unwrap());
    prios.sort();
    // Cookies 0x11 (v4 prio 10, v6 prio 10) and 0x21 (prio 30) end in 1.
    assert_eq!(prios, vec![10, 10, 30]);
    // Strict with a cookie that does not match.
    let f = FlowMod {
        cookie: 0x12,
        cookie_mask: 0xff,
        instructions: out(7),
        ..fm(FlowModCommand::ModifyStrict, 10, v4dst(ip(10, 0, 0, 1), None))
    };
    assert!(t.apply(&f, 0).unwrap().is_empty());
}

#[test]
fn modify_that_matches_nothing_adds_nothing() {
    let mut t = FlowTables::new();
    for cmd in [FlowModCommand::Modify, FlowModCommand::ModifyStrict] {
        let f = FlowMod { instructions: out(1), ..fm(cmd, 5, vec![Oxm::InPort(1)]) };
        assert!(t.apply(&f, 0).unwrap().is_empty());
        assert!(t.is_empty());
    }
}

#[test]
fn delete_non_strict_ignores_priority_and_reports_removals() {
    let mut t = five_entries();
    t.apply(&FlowMod { table_id: 1, ..add(1, vec![], out(1)) }, 0).unwrap();
    let f = fm(FlowModCommand::Delete, 999, vec![Oxm::EthType(0x0800)]);
    let ch = t.apply(&f, 3 * SEC).unwrap();
    let mut r = removed(&ch);
    r.sort();
    assert_eq!(r, vec![(0, 10), (0, 20), (0, 30)]);
    for c in &ch {
        let FlowChange::Remove { key, reason, entry, .. } = c else { unreachable!() };
        assert_eq!(*reason, FlowRemovedReason::Delete);
        assert!(c.sends_flow_removed());
        let msg = entry.flow_removed(key, 0, *reason, 3 * SEC + 5, 4, 400);
        assert_eq!((msg.duration_sec, msg.duration_nsec, msg.packet_count), (2, 5, 4));
        assert_eq!((msg.priority, &msg.match_), (entry.priority, &entry.match_(key)));
    }
    assert_eq!((t.table_len(0), t.table_len(1)), (2, 1));
    // An empty match deletes the rest of the table; no flag, no flow-removed.
    t.apply(&add(40, vec![Oxm::InPort(3)], out(1)), 0).unwrap();
    let ch = t.apply(&fm(FlowModCommand::Delete, 0, vec![]), 0).unwrap();
    assert_eq!(ch.len(), 3);
    let quiet: Vec<_> = ch.iter().filter(|c| !c.sends_flow_removed()).collect();
    assert!(matches!(quiet[..], [FlowChange::Remove { key, .. }] if key.priority() == 40));
    assert_eq!((t.table_len(0), t.table_len(1)), (0, 1));
}

#[test]
fn delete_strict() {
    let mut t = five_entries();
    // Covering match, or right match at the wrong priority: nothing.
    for f in [
        fm(FlowModCommand::DeleteStrict, 10, vec![Oxm::EthType(0x0800)]),
        fm(FlowModCommand::DeleteStrict, 20, v4dst(ip(10, 0, 0, 1), None)),
    ] {
        assert!(t.apply(&f, 0).unwrap().is_empty());
    }
    let f = fm(FlowModCommand::DeleteStrict, 30, vec![Oxm::EthType(0x0800)]);
    assert_eq!(removed(&t.apply(&f, 0).unwrap()), vec![(0, 30)]);
    // The catch-all at priority 0 by strict empty match.
    let f = fm(FlowModCommand::DeleteStrict, 0, vec![]);
    assert_eq!(removed(&t.apply(&f, 0).unwrap()), vec![(0, 0)]);
    assert_eq!(t.table_len(0), 3);
}

#[test]
fn delete_filters_by_out_port_and_out_group() {
    let mut t = FlowTables::new();
    let insts = [
        (1, out(2)),
        (
            2,
            vec![Instruction::WriteActions(vec![
                Action::DecNwTtl,
                Action::Output { port: 3, max_len: 0 },
            ])],
        ),
        (3, vec![Instruction::ApplyActions(vec![Action::Group(7)])]),
        (4, vec![Instruction::GotoTable(1)]),
    ];
    for (p, i) in insts {
        t.apply(&add(p, vec![], i), 0).unwrap();
    }
    let del = |port, group| FlowMod {
        out_port: port,
        out_group: group,
        ..fm(FlowModCommand::Delete, 0, vec![])
    };
    assert!(t.apply(&del(9, OFPG_ANY), 0).unwrap().is_empty());
    assert_eq!(removed(&t.apply(&del(3, OFPG_ANY), 0).unwrap()), vec![(0, 2)]);
    assert!(t.apply(&del(port::ANY, 8), 0).unwrap().is_empty());
    assert_eq!(removed(&t.apply(&del(port::ANY, 7), 0).unwrap()), vec![(0, 3)]);
    // Both filters must hold.
    assert!(t.apply(&del(2, 7), 0).unwrap().is_empty());
    // Strict deletes filter too.
    let strict = FlowMod { out_port: 5, ..fm(FlowModCommand::DeleteStrict, 1, vec![]) };
    assert!(t.apply(&strict, 0).unwrap().is_empty());
    let strict = FlowMod { out_port: 2, ..strict };
    assert_eq!(removed(&t.apply(&strict, 0).unwrap()), vec![(0, 1)]);
    assert_eq!(t.table_len(0), 1, "goto_table entry remains");
}

#[test]
fn delete_all_tables_with_cookie_mask() {
    let mut t = FlowTables::new();
    for (table, cookie) in [(0, 0xa1), (5, 0xa2), (253, 0xb1), (7, 0xa3)] {
        let f = FlowMod { table_id: table, cookie, ..add(1, vec![Oxm::InPort(1)], out(2)) };
        t.apply(&f, 0).unwrap();
    }
    let f = FlowMod {
        table_id: OFPTT_ALL,
        cookie: 0xa0,
        cookie_mask: 0xf0,
        ..fm(FlowModCommand::Delete, 0, vec![])
    };
    assert_eq!(removed(&t.apply(&f, 0).unwrap()), vec![(0, 1), (5, 1), (7, 1)]);
    assert_eq!((t.len(), t.table_len(253)), (1, 1));
    let f = FlowMod {
        table_id: OFPTT_ALL,
        ..fm(FlowModCommand::DeleteStrict, 1, vec![Oxm::InPort(1)])
    };
    assert_eq!(removed(&t.apply(&f, 0).unwrap()), vec![(253, 1)]);
    assert!(t.is_empty());
}

#[test]
fn errors_pass_through_and_change_nothing() {
    let mut t = FlowTables::new();
    t.apply(&add(1, vec![], out(1)), 0).unwrap();
    let cases = [
        (
            FlowMod { table_id: 254, ..add(1, vec![], out(1)) },
            ErrorKind::FLOW_MOD_FAILED_BAD_TABLE_ID,
        ),
        (
            FlowMod { table_id: OFPTT_ALL, ..add(1, vec![], out(1)) },
            ErrorKind::FLOW_MOD_FAILED_BAD_TABLE_ID,
        ),
        (
            FlowMod { table_id: OFPTT_ALL, ..fm(FlowModCommand::Modify, 1, vec![]) },
            ErrorKind::FLOW_MOD_FAILED_BAD_TABLE_ID,
        ),
        (
            FlowMod { table_id: 254, ..fm(FlowModCommand::ModifyStrict, 1, vec![]) },
            ErrorKind::FLOW_MOD_FAILED_BAD_TABLE_ID,
        ),
        (
            FlowMod { table_id: 254, ..fm(FlowModCommand::Delete, 1, vec![]) },
            ErrorKind::FLOW_MOD_FAILED_BAD_TABLE_ID,
        ),
        (fm(FlowModCommand::Unknown(9), 1, vec![]), ErrorKind::FLOW_MOD_FAILED_BAD_COMMAND),
        (FlowMod { flags: 0x40, ..add(1, vec![], out(1)) }, ErrorKind::FLOW_MOD_FAILED_BAD_FLAGS),
        (add(1, vec![Oxm::TcpDst(80)], out(1)), ErrorKind::BAD_MATCH_BAD_PREREQ),
        (
            FlowMod { table_id: 253, ..add(1, vec![], vec![Instruction::GotoTable(254)]) },
            ErrorKind::BAD_INSTRUCTION_BAD_TABLE_ID,
        ),
        (
            add(1, vec![], vec![Instruction::GotoTable(254)]),
            ErrorKind::BAD_INSTRUCTION_BAD_TABLE_ID,
        ),
        (
            FlowMod {
                instructions: vec![Instruction::GotoTable(254)],
                ..fm(FlowModCommand::Modify, 1, vec![])
            },
            ErrorKind::BAD_INSTRUCTION_BAD_TABLE_ID,
        ),
    ];
    for (f, kind) in cases {
        assert_eq!(err_kind(&mut t, &f), kind, "{f:?}");
        assert_eq!(t.len(), 1);
        assert_eq!(*t.table(0).next().unwrap().1.instructions, out(1));
    }
}

#[test]
fn hard_timeout() {
    let mut t = FlowTables::new();
    let f = FlowMod {
        hard_timeout: 10,
        flags: ff::SEND_FLOW_REM,
        ..add(1, vec![Oxm::InPort(1)], out(2))
    };
    t.apply(&f, 100 * SEC).unwrap();
    let k = key(1, vec![Oxm::InPort(1)]);
    t.set_rule(0, &k, 5);
    // Packets do not extend a hard timeout.
    let busy = |_| Some(109 * SEC);
    assert!(t.expire(110 * SEC - 1, busy).is_empty());
    let ch = t.expire(110 * SEC, busy);
    assert!(matches!(
        &ch[..],
        [FlowChange::Remove { table: 0, reason: FlowRemovedReason::HardTimeout, entry, .. }]
            if entry.rule == Some(5)
    ));
    assert!(ch[0].sends_flow_removed());
    assert!(t.is_empty());
}

#[test]
fn idle_timeout_counts_from_last_packet() {
    let mut t = FlowTables::new();
    let f = FlowMod { idle_timeout: 5, ..add(1, vec![Oxm::InPort(1)], out(2)) };
    t.apply(&f, 0).unwrap();
    // No rule set yet: idles from installation.
    assert!(t.expire(5 * SEC - 1, |_| None).is_empty());
    let k = key(1, vec![Oxm::InPort(1)]);
    t.set_rule(0, &k, 3);
    let last = |r: RuleId| (r == 3).then_some(4 * SEC);
    assert!(t.expire(9 * SEC - 1, last).is_empty());
    let ch = t.expire(9 * SEC, last);
    assert!(matches!(&ch[..], [FlowChange::Remove { reason: FlowRemovedReason::IdleTimeout, .. }]));
    assert!(!ch[0].sends_flow_removed(), "added without SEND_FLOW_REM");

    // A last use from before a replace does not count: the replace restarts the entry.
    t.apply(&f, 20 * SEC).unwrap();
    t.set_rule(0, &k, 3);
    assert!(t.expire(24 * SEC, |_| Some(SEC)).is_empty());
    assert_eq!(t.expire(25 * SEC, |_| Some(SEC)).len(), 1);
}

#[test]
fn zero_timeouts_never_expire_and_hard_wins_ties() {
    let mut t = FlowTables::new();
    t.apply(&add(1, vec![], out(1)), 0).unwrap();
    let both = FlowMod { idle_timeout: 3, hard_timeout: 3, ..add(2, vec![], out(1)) };
    t.apply(&both, 0).unwrap();
    let ch = t.expire(u64::MAX, |_| None);
    assert!(matches!(
        &ch[..],
        [FlowChange::Remove { key, reason: FlowRemovedReason::HardTimeout, .. }] if key.priority() == 2
    ));
    assert_eq!(t.len(), 1);
}

#[test]
fn select_for_flow_stats() {
    let mut t = five_entries();
    t.apply(
        &FlowMod { table_id: 4, cookie: 0x11, ..add(5, v4dst(ip(10, 0, 0, 9), None), out(6)) },
        0,
    )
    .unwrap();
    let pick = |t: &FlowTables, req: FlowStatsRequest| -> Vec<(u8, u16)> {
        let mut v: Vec<_> = t
            .select(&req)
            .unwrap()
            .map(|(table, k, e)| {
                assert_eq!(k.priority(), e.priority);
                (table, k.priority())
            })
            .collect();
        v.sort();
        v
    };
    assert_eq!(pick(&t, FlowStatsRequest::default()).len(), 6);
    let v4 = Match { fields: vec![Oxm::EthType(0x0800)] };
    assert_eq!(
        pick(&t, FlowStatsRequest { match_: v4.clone(), ..Default::default() }),
        vec![(0, 10), (0, 20), (0, 30), (4, 5)]
    );
    assert_eq!(
        pick(
            &t,
            FlowStatsRequest { table_id: 0, cookie: 0x11, cookie_mask: 0xff, ..Default::default() }
        ),
        vec![(0, 10), (0, 10)]
    );
    assert_eq!(pick(&t, FlowStatsRequest { out_port: 6, ..Default::default() }), vec![(4, 5)]);
    assert!(pick(&t, FlowStatsRequest { out_group: 1, ..Default::default() }).is_empty());
    let e = t.select(&FlowStatsRequest { table_id: 254, ..Default::default() }).err().unwrap();
    assert_eq!(e.kind, ErrorKind::BAD_REQUEST_BAD_TABLE_ID);
}

mod normal_form {
    use super::*;

    #[test]
    fn equal_spellings() {
        assert_eq!(
            norm(vec![Oxm::VlanVid(0x1005, Some(0xffff))]),
            norm(vec![Oxm::VlanVid(0x1005, None)])
        );
        assert_eq!(norm(vec![Oxm::Ipv4Src(ip(1, 2, 3, 4), Some(ip(0, 0, 0, 0)))]), norm(vec![]));
        assert_eq!(
            norm(vec![Oxm::InPort(1), Oxm::EthType(0x800)]),
            norm(vec![Oxm::EthType(0x800), Oxm::InPort(1)])
        );
        assert_ne!(
            norm(vec![Oxm::VlanVid(0x1000, Some(0x1000))]),
            norm(vec![Oxm::VlanVid(0x1000, None)])
        );
    }

    #[test]
    fn full_masks_are_not_stored_and_narrow_fields_read_theirs() {
        // An exact IPv4 5-tuple's constraints: a 4-byte word and the value each.
        let exact = norm(vec![
            Oxm::EthType(0x800),
            Oxm::IpProto(6),
            Oxm::Ipv4Src(ip(10, 0, 0, 1), None),
            Oxm::TcpDst(80),
        ]);
        assert_eq!(exact.packed_len(), 4 * 4 + 2 + 1 + 4 + 2);
        // A narrow field's full mask is its meaningful bits, however it was spelt.
        for (full, partial) in [
            (Oxm::VlanVid(0x1005, Some(0x1fff)), Oxm::VlanVid(0x1005, Some(0x0fff))),
            (Oxm::Ipv6Flabel(5, Some(0xf_ffff)), Oxm::Ipv6Flabel(5, Some(0xf_fff0))),
            (Oxm::Ipv6Exthdr(3, Some(0x1ff)), Oxm::Ipv6Exthdr(3, Some(0xff))),
        ] {
            let unmasked = match &full {
                Oxm::VlanVid(v, _) => Oxm::VlanVid(*v, None),
                Oxm::Ipv6Flabel(v, _) => Oxm::Ipv6Flabel(*v, None),
                Oxm::Ipv6Exthdr(v, _) => Oxm::Ipv6Exthdr(*v, None),
                _ => unreachable!(),
            };
            let (a, b) = (norm(vec![full.clone()]), norm(vec![unmasked]));
            assert_eq!(a, b, "{full:?}");
            assert_eq!(a.packed_len(), 4 + full.value_bytes().len(), "{full:?}: mask stored");
            let p = norm(vec![partial.clone()]);
            assert_ne!(p, a, "{partial:?}");
            assert!(a.covers(a.view()) && p.covers(a.view()) && !a.covers(p.view()), "{partial:?}");
        }
    }

    #[test]
    fn covers() {
        let net8 = norm(v4dst(ip(10, 0, 0, 0), Some(ip(255, 0, 0, 0))));
        let net16 = norm(v4dst(ip(10, 1, 0, 0), Some(ip(255, 255, 0, 0))));
        let other16 = norm(v4dst(ip(11, 1, 0, 0), Some(ip(255, 255, 0, 0))));
        assert!(net8.covers(net16.view()));
        assert!(!net16.covers(net8.view()));
        assert!(!net8.covers(other16.view()));
        assert!(net8.covers(net8.view()));
        assert!(norm(vec![]).covers(net8.view()));
        assert!(!net8.covers(norm(vec![]).view()));
        // A field the entry lacks is wildcarded there: not covered.
        assert!(!net8.covers(norm(vec![Oxm::EthType(0x800)]).view()));
        assert!(norm(vec![Oxm::EthType(0x800)]).covers(net16.view()));
    }

    #[test]
    fn overlaps() {
        let net8 = norm(v4dst(ip(10, 0, 0, 0), Some(ip(255, 0, 0, 0))));
        let net16 = norm(v4dst(ip(10, 1, 0, 0), Some(ip(255, 255, 0, 0))));
        let other8 = norm(v4dst(ip(11, 0, 0, 0), Some(ip(255, 0, 0, 0))));
        let low = norm(v4dst(ip(0, 0, 0, 1), Some(ip(0, 0, 0, 255))));
        for (a, b, want) in [
            (&net8, &net16, true),
            (&net8, &other8, false),
            (&net16, &other8, false),
            (&net8, &low, true),
            (&other8, &low, true),
        ] {
            assert_eq!(a.overlaps(b.view()), want, "{a:?} {b:?}");
            assert_eq!(b.overlaps(a.view()), want, "symmetric");
        }
        assert!(norm(vec![Oxm::InPort(1)]).overlaps(net8.view()));
        assert!(!norm(vec![Oxm::InPort(1)]).overlaps(norm(vec![Oxm::InPort(2)]).view()));
    }
}

#[test]
fn next_expiry_is_the_earliest_deadline() {
    let mut t = FlowTables::new();
    t.apply(&add(1, vec![], out(1)), 0).unwrap();
    assert_eq!(t.next_expiry(|_| None), None);
    let f = FlowMod { idle_timeout: 5, hard_timeout: 30, ..add(2, vec![], out(1)) };
    t.apply(&f, 10 * SEC).unwrap();
    t.set_rule(0, &key(2, vec![]), 1);
    assert_eq!(t.next_expiry(|_| None), Some(15 * SEC));
    // A packet at 27 s pushes the idle deadline past the hard one.
    assert_eq!(t.next_expiry(|_| Some(27 * SEC)), Some(32 * SEC));
    assert_eq!(t.next_expiry(|_| Some(37 * SEC)), Some(40 * SEC));
    assert!(t.expire(40 * SEC - 1, |_| Some(37 * SEC)).is_empty());
    assert_eq!(t.expire(40 * SEC, |_| Some(37 * SEC)).len(), 1);
    assert_eq!(t.next_expiry(|_| None), None);
}

#[test]
fn a_packed_match_gives_back_the_match_as_sent() {
    let mut fields = vec![Oxm::InPort(3), Oxm::EthType(0x0800)];
    fields.extend(v4dst(ip(10, 0, 0, 0), Some(ip(255, 0, 0, 0))));
    fields.push(Oxm::VlanVid(0x1005, None));
    for m in [Match::default(), Match::new(fields)] {
        let packed = PackedMatch::new(&m);
        assert_eq!(packed.get(), m);
        assert!(packed.0.len() <= m.unpadded_len(), "no padding kept");
    }
}

#[test]
fn entries_give_back_the_match_as_sent_keeping_only_its_order_when_they_can() {
    let net = |a, m| Oxm::Ipv4Src(a, Some(m));
    let clean_sorted =
        vec![Oxm::EthType(0x800), Oxm::IpProto(6), Oxm::Ipv4Src(ip(10, 0, 0, 1), None)];
    let clean_shuffled = vec![
        Oxm::EthType(0x800),
        net(ip(10, 1, 0, 0), ip(255, 255, 0, 0)),
        Oxm::IpProto(6),
        Oxm::TcpDst(80),
        Oxm::InPort(3),
    ];
    let full_mask_spelt = vec![Oxm::VlanVid(0x1005, Some(0x1fff))];
    let ones_spelt = vec![Oxm::EthType(0x800), net(ip(10, 1, 2, 3), ip(255, 255, 255, 255))];
    let zero_mask = vec![Oxm::EthType(0x800), net(ip(0, 0, 0, 0), ip(0, 0, 0, 0))];
    let cases = [
        (vec![], true),
        (clean_sorted, true),
        (clean_shuffled, true),
        (full_mask_spelt, false),
        (ones_spelt, false),
        (zero_mask, false),
    ];
    for (i, (fields, ranked)) in cases.into_iter().enumerate() {
        let mut t = FlowTables::new();
        let sent = Match::new(fields);
        t.apply(&FlowMod { match_: sent.clone(), ..add(i as u16, vec![], out(1)) }, 0).unwrap();
        let (k, e) = t.table(0).next().unwrap();
        assert_eq!(e.match_(k), sent, "case {i}");
        assert_eq!(matches!(e.sent, SentMatch::Ranks { .. }), ranked, "case {i}: {:?}", e.sent);
    }
}

/// Keys short enough to live in the key and longer ones that need an allocation compare,
/// order and hash as their bytes do (priority first, then match), and give back both.
#[test]
fn keys_of_every_length_order_by_priority_then_match() {
    use std::collections::hash_map::DefaultHasher;
    use std::hash::{Hash, Hasher};
    let short = vec![Oxm::EthType(0x0800)];
    // eth_type, ip_proto, ipv4_src, tcp_dst: 25 bytes of normal form, 27 with the
    // priority: the common exact flow, held in the key.
    let exact = vec![
        Oxm::EthType(0x0800),
        Oxm::IpProto(6),
        Oxm::Ipv4Src(ip(10, 0, 0, 1), None),
        Oxm::TcpDst(80),
    ];
    let mut five = exact.clone();
    five.push(Oxm::Ipv4Dst(ip(10, 0, 0, 2), None));
    five.push(Oxm::TcpSrc(1234));
    let (s, e, f) = (norm(short.clone()), norm(exact.clone()), norm(five.clone()));
    assert!(2 + e.view().0.len() <= FlowKey::INLINE);
    assert!(2 + f.view().0.len() > FlowKey::INLINE, "the 5-tuple needs an allocation");
    let keys = [key(9, five.clone()), key(9, exact.clone()), key(9, short), key(10, five)];
    for (k, (m, p)) in keys.iter().zip([(&f, 9), (&e, 9), (&s, 9), (&f, 10)]) {
        assert_eq!((k.match_().0, k.priority()), (m.view().0, p));
    }
    let hash = |k: &FlowKey| {
        let mut h = DefaultHasher::new();
        k.hash(&mut h);
        h.finish()
    };
    for a in &keys {
        for b in &keys {
            let bytes = |k: &FlowKey| {
                let mut v = k.priority().to_be_bytes().to_vec();
                v.extend_from_slice(k.match_().0);
                v
            };
            assert_eq!(a.cmp(b), bytes(a).cmp(&bytes(b)), "{a:?} vs {b:?}");
            assert_eq!(a == b, bytes(a) == bytes(b));
            if a == b {
                assert_eq!(hash(a), hash(b));
            }
        }
    }
    assert_eq!(keys[1].clone(), key(9, exact));
    assert!(keys[2] < keys[3], "priority 9 sorts before 10 whatever the match");
}
