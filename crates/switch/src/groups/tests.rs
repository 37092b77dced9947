//! Tests of the group table against a real datapath: group-mods go through the table and
//! its writer, frames run through `Datapath::process` after a publish.

use super::*;
use crate::testing::{install_flow, send_frame, small_datapath, SEC};
use datapath::pipeline::WorkerState;
use openflow::action::OFPG_MAX;
use openflow::text::parse_group_mod;
use std::sync::Arc;

struct Rig {
    table: GroupTable,
    dp: Datapath,
    w: Writer,
    worker: WorkerState,
}

fn gm(s: &str, command: GroupModCommand) -> GroupMod {
    parse_group_mod(s, command).unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn add(s: &str) -> GroupMod {
    gm(s, GroupModCommand::Add)
}

fn modify(s: &str) -> GroupMod {
    gm(s, GroupModCommand::Modify)
}

fn del(id: u32) -> GroupMod {
    GroupMod {
        command: GroupModCommand::Delete,
        group_type: GroupType::All,
        group_id: id,
        buckets: Vec::new(),
    }
}

/// An indirect group `id` forwarding to group `to`.
fn indirect_to(id: u32, to: u32) -> GroupMod {
    add(&format!("group_id={id},type=indirect,bucket=actions=group:{to}"))
}

/// Each bucket's packet count in `s`, in bucket order.
fn bucket_packets(s: &GroupStats) -> Vec<u64> {
    s.bucket_stats.iter().map(|b| b.packet_count).collect()
}

impl Rig {
    fn new() -> Rig {
        let (dp, w, worker) = small_datapath();
        Rig { table: GroupTable::new(), dp, w, worker }
    }

    fn apply(&mut self, g: &GroupMod, now: u64) -> Result<GroupChange, OfpError> {
        self.table.apply(g, &mut self.w, now)
    }

    fn ok(&mut self, g: &GroupMod, now: u64) -> GroupChange {
        self.apply(g, now).unwrap_or_else(|e| panic!("{g:?}: refused: {e}"))
    }

    /// Applies `g`, expects it refused with `kind`, and checks that nothing changed: the
    /// table's description, and the datapath (nothing to publish).
    fn refused(&mut self, g: &GroupMod, kind: ErrorKind) {
        let before = self.table.desc();
        let groups_before = self.dp_groups(g.group_id);
        let v = self.w.publish().version;
        let e = self.apply(g, 0).expect_err("refused");
        assert_eq!(e.kind, kind, "{g:?}: {e}");
        assert_eq!(self.table.desc(), before, "the table did not change");
        assert_eq!(self.w.publish().version, v, "the datapath did not change");
        assert_eq!(self.dp_groups(g.group_id), groups_before);
    }

    /// The datapath's pending groups of the table's ids and `also`.
    fn dp_groups(&self, also: u32) -> Vec<(u32, Option<Arc<Group>>)> {
        let p = self.w.pending();
        self.table.ids().chain([also]).map(|id| (id, p.group(id).cloned())).collect()
    }

    fn flow(&mut self, s: &str) {
        install_flow(&mut self.w, s);
    }

    fn send(&mut self, in_port: u32, now: u64) -> Vec<u32> {
        let mut p = send_frame(&self.dp, &mut self.worker, in_port, now);
        p.sort_unstable();
        p
    }

    fn stats(&self, id: u32, now: u64) -> GroupStats {
        let s = self.table.stats(&self.dp, id, now, |_| 0);
        assert_eq!(s.len(), 1, "{s:?}");
        s.into_iter().next().expect("one")
    }
}

#[test]
fn add_modify_delete_follow_in_the_datapath() {
    let mut r = Rig::new();
    assert_eq!(
        r.ok(&add("group_id=1,type=all,bucket=output:2,bucket=output:3"), SEC),
        GroupChange::default()
    );
    assert!(r.table.contains(1));
    r.flow("in_port=1,actions=group:1");
    r.w.publish();
    assert_eq!(r.send(1, 2 * SEC), vec![2, 3]);
    assert_eq!(r.send(1, 2 * SEC), vec![2, 3]);

    let s = r.stats(1, 3 * SEC + 5);
    assert_eq!((s.packet_count, s.byte_count), (2, 128));
    assert_eq!((s.duration_sec, s.duration_nsec), (2, 5));
    assert_eq!(s.bucket_stats, vec![BucketCounter { packet_count: 2, byte_count: 128 }; 2]);

    // A modify replaces type and buckets; counters and duration restart.
    assert_eq!(
        r.ok(&modify("group_id=1,type=indirect,bucket=output:4"), 4 * SEC),
        GroupChange::default()
    );
    assert_eq!(
        r.table.desc(),
        vec![GroupDesc {
            group_type: GroupType::Indirect,
            group_id: 1,
            buckets: add("group_id=1,type=indirect,bucket=output:4").buckets,
        }]
    );
    r.w.publish();
    let s = r.stats(1, 5 * SEC);
    assert_eq!((s.packet_count, s.duration_sec), (0, 1));
    assert_eq!(s.bucket_stats, vec![BucketCounter::default()]);
    assert_eq!(r.send(1, 5 * SEC), vec![4]);
    assert_eq!(r.stats(1, 5 * SEC).packet_count, 1);

    assert_eq!(r.ok(&del(1), 6 * SEC).deleted, vec![1]);
    assert!(!r.table.contains(1));
    assert!(r.table.desc().is_empty());
    r.w.publish();
    assert!(r.dp.current().group(1).is_none());
    assert_eq!(r.send(1, 7 * SEC), Vec::<u32>::new());
    assert!(r.table.stats(&r.dp, 1, 7 * SEC, |_| 0).is_empty());
}

#[test]
fn add_of_existing_and_modify_of_absent_are_refused() {
    let mut r = Rig::new();
    r.ok(&add("group_id=1,type=all,bucket=output:2"), 0);
    r.refused(
        &add("group_id=1,type=all,bucket=output:3"),
        ErrorKind::GROUP_MOD_FAILED_GROUP_EXISTS,
    );
    r.refused(
        &modify("group_id=2,type=all,bucket=output:3"),
        ErrorKind::GROUP_MOD_FAILED_UNKNOWN_GROUP,
    );
}

#[test]
fn delete_of_absent_is_not_an_error_and_all_deletes_everything() {
    let mut r = Rig::new();
    assert_eq!(r.ok(&del(5), 0), GroupChange::default());
    assert_eq!(r.ok(&del(OFPG_ALL), 0), GroupChange::default());
    for id in [7, 0, 3] {
        r.ok(&add(&format!("group_id={id},type=all,bucket=output:2")), 0);
    }
    r.ok(&indirect_to(9, 3), 0);
    // Deleting an absent group leaves the others alone.
    let v = r.w.publish().version;
    assert_eq!(r.ok(&del(5), 0), GroupChange::default());
    assert_eq!(r.w.publish().version, v);
    assert_eq!(r.table.len(), 4);
    // OFPG_ALL deletes referenced groups too.
    assert_eq!(r.ok(&del(OFPG_ALL), 0).deleted, vec![0, 3, 7, 9]);
    assert!(r.table.is_empty());
    r.w.publish();
    for id in [0, 3, 7, 9] {
        assert!(r.dp.current().group(id).is_none());
    }
    // And the table works as new: the references went too.
    r.ok(&add("group_id=3,type=all,bucket=output:2"), 0);
    assert_eq!(r.ok(&del(3), 0).deleted, vec![3]);
}

#[test]
fn stateless_errors_of_validate() {
    let mut r = Rig::new();
    let g = add("group_id=1,type=all,bucket=output:2");
    r.refused(
        &GroupMod { group_id: OFPG_MAX + 1, ..g.clone() },
        ErrorKind::GROUP_MOD_FAILED_INVALID_GROUP,
    );
    r.refused(
        &GroupMod { group_id: OFPG_ALL, ..g.clone() },
        ErrorKind::GROUP_MOD_FAILED_INVALID_GROUP,
    );
    r.refused(
        &GroupMod { group_type: GroupType::Unknown(7), ..g.clone() },
        ErrorKind::GROUP_MOD_FAILED_BAD_TYPE,
    );
    r.refused(
        &GroupMod { command: GroupModCommand::Unknown(9), ..g.clone() },
        ErrorKind::GROUP_MOD_FAILED_BAD_COMMAND,
    );
    r.refused(
        &add("group_id=1,type=indirect,bucket=output:2,bucket=output:3"),
        ErrorKind::GROUP_MOD_FAILED_INVALID_GROUP,
    );
    r.refused(&add("group_id=1,type=indirect"), ErrorKind::GROUP_MOD_FAILED_INVALID_GROUP);
    let mut weighted = g.clone();
    weighted.buckets[0].weight = 2;
    r.refused(&weighted, ErrorKind::GROUP_MOD_FAILED_INVALID_GROUP);
    r.refused(&add("group_id=1,type=ff,bucket=output:2"), ErrorKind::GROUP_MOD_FAILED_BAD_WATCH);
    r.refused(
        &GroupMod { command: GroupModCommand::Delete, ..g },
        ErrorKind::GROUP_MOD_FAILED_INVALID_GROUP,
    );
}

#[test]
fn watch_errors() {
    let mut r = Rig::new();
    r.refused(
        &add("group_id=1,type=all,bucket=watch_port:2,actions=output:2"),
        ErrorKind::GROUP_MOD_FAILED_WATCH_UNSUPPORTED,
    );
    r.ok(&add("group_id=5,type=all,bucket=output:3"), 0);
    r.refused(
        &add("group_id=1,type=indirect,bucket=watch_group:5,actions=output:2"),
        ErrorKind::GROUP_MOD_FAILED_WATCH_UNSUPPORTED,
    );
    r.refused(
        &add("group_id=1,type=ff,bucket=watch_port:CONTROLLER,actions=output:2"),
        ErrorKind::GROUP_MOD_FAILED_WATCH_UNSUPPORTED,
    );
    r.refused(
        &add("group_id=1,type=ff,bucket=watch_group:6,actions=output:2"),
        ErrorKind::GROUP_MOD_FAILED_BAD_WATCH,
    );
    r.refused(
        &add("group_id=1,type=ff,bucket=watch_port:0xffffff01,actions=output:2"),
        ErrorKind::GROUP_MOD_FAILED_BAD_WATCH,
    );
    // Watched ports need not exist yet; LOCAL and existing groups may be watched.
    r.ok(
        &add("group_id=1,type=ff,bucket=watch_port:99,actions=output:2,bucket=watch_port:LOCAL,actions=output:3,bucket=watch_group:5,actions=output:4"),
        0,
    );
    r.ok(&add("group_id=2,type=select,bucket=watch_port:2,actions=output:2"), 0);
}

#[test]
fn bucket_action_errors_are_the_translations() {
    let mut r = Rig::new();
    let cases = [
        ("bucket=output:0", ErrorKind::BAD_ACTION_BAD_OUT_PORT),
        ("bucket=output:TABLE", ErrorKind::BAD_ACTION_BAD_OUT_PORT),
        ("bucket=actions=output:2,output:3", ErrorKind::BAD_ACTION_TOO_MANY),
        ("bucket=actions=set_field:5->vlan_vid,output:3", ErrorKind::BAD_ACTION_BAD_SET_ARGUMENT),
        (
            "bucket=actions=set_field:4101->vlan_vid,set_field:4102->vlan_vid,output:3",
            ErrorKind::BAD_ACTION_TOO_MANY,
        ),
    ];
    for (b, kind) in cases {
        r.refused(&add(&format!("group_id=1,type=all,{b}")), kind);
    }
    let mut exp = add("group_id=1,type=all,bucket=output:2");
    exp.buckets[0].actions.push(Action::Experimenter { experimenter: 0x2320, data: vec![0; 4] });
    r.refused(&exp, ErrorKind::BAD_ACTION_BAD_EXPERIMENTER);
    let mut push = add("group_id=1,type=all,bucket=output:2");
    push.buckets[0].actions.insert(0, Action::PushVlan(0x0800));
    r.refused(&push, ErrorKind::BAD_ACTION_BAD_ARGUMENT);
    // Action sets: one of each type, run in the set's order, are fine.
    r.ok(
        &add(
            "group_id=1,type=all,bucket=actions=output:2,push_vlan:0x8100,set_field:4101->vlan_vid",
        ),
        0,
    );
}

#[test]
fn chaining_references_and_loops() {
    let mut r = Rig::new();
    r.refused(&indirect_to(1, 2), ErrorKind::BAD_ACTION_BAD_OUT_GROUP);
    r.refused(&indirect_to(1, 1), ErrorKind::GROUP_MOD_FAILED_LOOP);
    r.ok(&add("group_id=2,type=all,bucket=output:2,bucket=output:3"), 0);
    r.ok(&indirect_to(1, 2), 0);
    r.flow("in_port=1,actions=group:1");
    r.w.publish();
    assert_eq!(r.send(1, 0), vec![2, 3], "chained group forwards");

    // A modify that would close a loop, directly or through a watch.
    r.refused(&modify("group_id=2,type=all,bucket=group:1"), ErrorKind::GROUP_MOD_FAILED_LOOP);
    r.ok(&add("group_id=3,type=ff,bucket=watch_group:1,actions=output:4"), 0);
    r.refused(&modify("group_id=2,type=indirect,bucket=group:3"), ErrorKind::GROUP_MOD_FAILED_LOOP);
    r.refused(&modify("group_id=1,type=indirect,bucket=group:1"), ErrorKind::GROUP_MOD_FAILED_LOOP);

    // Referenced groups cannot be deleted; their referrers first.
    r.refused(&del(2), ErrorKind::GROUP_MOD_FAILED_CHAINED_GROUP);
    r.refused(&del(1), ErrorKind::GROUP_MOD_FAILED_CHAINED_GROUP);
    assert_eq!(r.ok(&del(3), 0).deleted, vec![3]);
    assert_eq!(r.ok(&del(1), 0).deleted, vec![1]);
    assert_eq!(r.ok(&del(2), 0).deleted, vec![2]);
    assert!(r.table.is_empty());

    // A modify may drop a reference, freeing the group it named.
    r.ok(&add("group_id=2,type=all,bucket=output:2"), 0);
    r.ok(&indirect_to(1, 2), 0);
    r.ok(&modify("group_id=1,type=indirect,bucket=output:3"), 0);
    assert_eq!(r.ok(&del(2), 0).deleted, vec![2]);
}

#[test]
fn chains_longer_than_the_datapath_follows_are_refused() {
    let mut r = Rig::new();
    // Groups 1..=8: 8 forwards to 7, ..., 2 to 1, and 1 outputs: a chain of 8.
    r.ok(&add("group_id=1,type=all,bucket=output:3"), 0);
    for id in 2..=MAX_CHAIN as u32 {
        r.ok(&indirect_to(id, id - 1), 0);
    }
    let top = MAX_CHAIN as u32;
    r.flow(&format!("in_port=1,actions=group:{top}"));
    r.w.publish();
    assert_eq!(r.send(1, 0), vec![3], "the whole chain is followed");
    r.refused(&indirect_to(top + 1, top), ErrorKind::GROUP_MOD_FAILED_CHAINING_UNSUPPORTED);
    // Lengthening the chain from below, by a modify, is refused too.
    r.ok(&add("group_id=100,type=all,bucket=output:2"), 0);
    r.refused(
        &modify("group_id=1,type=indirect,bucket=group:100"),
        ErrorKind::GROUP_MOD_FAILED_CHAINING_UNSUPPORTED,
    );
    // A branch of the same length beside it is fine.
    r.ok(&modify("group_id=2,type=all,bucket=group:1,bucket=group:100"), 0);
    r.w.publish();
    assert_eq!(r.send(1, 0), vec![2, 3]);
}

#[test]
fn ref_count_counts_flows_and_forwarding_groups() {
    let mut r = Rig::new();
    r.ok(&add("group_id=1,type=all,bucket=output:2"), 0);
    r.ok(&indirect_to(2, 1), 0);
    r.ok(&add("group_id=3,type=all,bucket=group:1,bucket=group:1"), 0);
    r.ok(&add("group_id=4,type=ff,bucket=watch_group:1,actions=output:3"), 0);
    assert_eq!(r.table.forwarders(1), 2, "watching is not forwarding");
    let s = r.table.stats(&r.dp, OFPG_ALL, 0, |id| if id == 1 { 5 } else { 0 });
    assert_eq!(
        s.iter().map(|s| (s.group_id, s.ref_count)).collect::<Vec<_>>(),
        vec![(1, 7), (2, 0), (3, 0), (4, 0)]
    );
}

#[test]
fn select_and_fast_failover_reach_the_datapath() {
    let mut r = Rig::new();
    r.ok(
        &add("group_id=1,type=select,bucket=weight:0,actions=output:2,bucket=weight:5,actions=output:3"),
        0,
    );
    r.ok(
        &add("group_id=2,type=ff,bucket=watch_port:2,actions=output:2,bucket=watch_port:4,actions=output:4"),
        0,
    );
    r.flow("in_port=1,actions=group:1");
    r.flow("in_port=3,actions=group:2");
    r.w.publish();
    for _ in 0..5 {
        assert_eq!(r.send(1, 0), vec![3], "weight 0 is never chosen");
    }
    assert_eq!(bucket_packets(&r.stats(1, 0)), vec![0, 5]);
    assert_eq!(r.send(3, 0), vec![2]);
    r.dp.set_port_live(1, false); // port 2
    assert_eq!(r.send(3, 0), vec![4]);
    let s = r.stats(2, 0);
    assert_eq!(s.packet_count, 2);
    assert_eq!(bucket_packets(&s), vec![1, 1]);
}

#[test]
fn stats_before_a_publish_read_zero() {
    let mut r = Rig::new();
    r.ok(&add("group_id=1,type=all,bucket=output:2"), 0);
    let s = r.stats(1, 0);
    assert_eq!(s.packet_count, 0);
    assert_eq!(s.bucket_stats, vec![BucketCounter::default()]);
}

#[test]
fn limits() {
    let mut r = Rig::new();
    let many = (0..=MAX_BUCKETS).map(|_| "bucket=output:2").collect::<Vec<_>>().join(",");
    r.refused(
        &add(&format!("group_id=1,type=all,{many}")),
        ErrorKind::GROUP_MOD_FAILED_OUT_OF_BUCKETS,
    );
    for id in 0..MAX_GROUPS {
        r.ok(
            &GroupMod {
                command: GroupModCommand::Add,
                group_type: GroupType::All,
                group_id: id,
                buckets: Vec::new(),
            },
            0,
        );
    }
    r.refused(
        &add(&format!("group_id={MAX_GROUPS},type=all")),
        ErrorKind::GROUP_MOD_FAILED_OUT_OF_GROUPS,
    );
    // A modify needs no new group.
    r.ok(&modify("group_id=0,type=all,bucket=output:2"), 0);
    assert_eq!(r.ok(&del(OFPG_ALL), 0).deleted.len(), MAX_GROUPS as usize);
}

#[test]
fn features_say_what_the_table_accepts() {
    let f = GroupTable::features();
    assert_eq!(f.types, 0b1111);
    assert_eq!(
        f.capabilities,
        group_capabilities::SELECT_WEIGHT
            | group_capabilities::SELECT_LIVENESS
            | group_capabilities::CHAINING
            | group_capabilities::CHAINING_CHECKS
    );
    assert_eq!(f.max_groups, [MAX_GROUPS; 4]);
    for a in f.actions {
        assert_ne!(a & 1 << action_type::OUTPUT, 0);
        assert_ne!(a & 1 << action_type::GROUP, 0);
        assert_ne!(a & 1 << action_type::SET_FIELD, 0);
        assert_eq!(a & 1 << 1, 0, "no OpenFlow 1.0 action numbers");
    }
}

/// The group-mods of os-ken's OpenFlow 1.3 switch tests (`of13/group/*.json`, with
/// os-ken's defaults filled in: type ALL, weight 0, watch ANY, output `max_len`
/// `OFPCML_MAX`), after its clean-up delete of `OFPG_ALL`: all accepted, and described
/// back exactly as sent (the tester compares the group-desc reply with what it sent).
#[test]
fn os_ken_switch_test_groups_are_accepted_and_echoed() {
    let out = |port| Action::Output { port, max_len: 0xffe5 };
    let bucket = |weight, port| Bucket {
        weight,
        watch_port: port::ANY,
        watch_group: OFPG_ANY,
        actions: vec![out(port)],
    };
    let cases = [(GroupType::All, 0, 0), (GroupType::Select, 1, 1), (GroupType::Select, 1, 2)];
    for (group_type, w2, w3) in cases {
        let mut r = Rig::new();
        assert_eq!(r.ok(&del(OFPG_ALL), 0), GroupChange::default());
        let g = GroupMod {
            command: GroupModCommand::Add,
            group_type,
            group_id: 0,
            buckets: vec![bucket(w2, 2), bucket(w3, 3)],
        };
        r.ok(&g, 0);
        assert_eq!(
            r.table.desc(),
            vec![GroupDesc { group_type, group_id: 0, buckets: g.buckets.clone() }]
        );
        r.flow("in_port=1,actions=group:0");
        r.w.publish();
        let sent = r.send(1, 0);
        match group_type {
            GroupType::All => assert_eq!(sent, vec![2, 3]),
            _ => assert!(sent == vec![2] || sent == vec![3], "{sent:?}"),
        }
    }
}
