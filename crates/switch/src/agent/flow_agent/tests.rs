//! Tests of the flow agent against a real datapath: frames are run through
//! `Datapath::process` with injected times, and the same times are given to the agent.

use super::*;
use crate::testing::{flow_mod, frame, send_frame, small_datapath, SEC};
use datapath::pipeline::WorkerState;
use openflow::v13::packet_in::FlowRemovedReason;

struct Rig {
    agent: FlowAgent,
    worker: WorkerState,
}

impl Rig {
    fn new() -> Rig {
        let (dp, writer, worker) = small_datapath();
        Rig { agent: FlowAgent::new(dp, writer), worker }
    }

    fn send(&mut self, in_port: u32, now: u64) -> Vec<u32> {
        send_frame(self.agent.datapath(), &mut self.worker, in_port, now)
    }

    fn ok(&mut self, s: &str, command: FlowModCommand, now: u64) -> Vec<FlowRemoved> {
        self.agent
            .handle_flow_mod(&flow_mod(s, command), now)
            .unwrap_or_else(|e| panic!("{s}: refused: {e}"))
    }

    /// [`Rig::ok`] for an add at time 0.
    fn add(&mut self, s: &str) -> Vec<FlowRemoved> {
        self.ok(s, FlowModCommand::Add, 0)
    }

    /// The published version after a barrier (unchanged by a barrier with nothing to
    /// publish, so equal versions around a call mean it changed nothing in the datapath).
    fn version(&mut self) -> u64 {
        self.agent.barrier();
        let v = self.agent.datapath().current().version();
        v
    }

    fn next_expiry(&self) -> Option<u64> {
        self.agent.next_expiry()
    }

    fn stats(&self, now: u64) -> Vec<FlowStats> {
        self.agent.flow_stats(&FlowStatsRequest::default(), now).expect("stats")
    }
}

#[test]
fn add_modify_delete_follow_in_the_datapath() {
    let mut r = Rig::new();
    assert!(r.add("in_port=1,send_flow_rem,cookie=7,actions=output:2").is_empty());
    assert_eq!(r.send(1, SEC), Vec::<u32>::new(), "not visible before the barrier");
    r.agent.barrier();
    assert_eq!(r.send(1, SEC), vec![2]);
    assert_eq!(r.send(3, SEC), Vec::<u32>::new());

    r.ok("in_port=1,actions=output:3", FlowModCommand::Modify, 2 * SEC);
    r.agent.barrier();
    assert_eq!(r.send(1, 3 * SEC), vec![3]);
    assert_eq!(r.send(1, 3 * SEC), vec![3]);

    let removed = r.ok("in_port=1", FlowModCommand::Delete, 5 * SEC);
    assert_eq!(removed.len(), 1);
    let fr = &removed[0];
    assert_eq!(fr.reason, FlowRemovedReason::Delete);
    assert_eq!(fr.packet_count, 3, "counters carried across the modify");
    assert_eq!(fr.byte_count, 3 * frame().len() as u64);
    assert_eq!(fr.cookie, 7, "a modify keeps the cookie");
    assert_eq!((fr.duration_sec, fr.duration_nsec), (5, 0));
    r.agent.barrier();
    assert_eq!(r.send(1, 6 * SEC), Vec::<u32>::new());
    assert!(r.agent.flows().is_empty());
}

#[test]
fn delete_without_send_flow_rem_yields_nothing_but_removes() {
    let mut r = Rig::new();
    r.add("in_port=1,actions=output:2");
    r.agent.barrier();
    assert_eq!(r.send(1, 0), vec![2]);
    assert!(r.ok("in_port=1", FlowModCommand::DeleteStrict, SEC).is_empty());
    r.agent.barrier();
    assert_eq!(r.send(1, 2 * SEC), Vec::<u32>::new());
}

#[test]
fn refused_overlap_changes_nothing() {
    let mut r = Rig::new();
    r.add("priority=5,in_port=1,actions=output:2");
    let v = r.version();
    let e = r
        .agent
        .handle_flow_mod(
            &flow_mod("priority=5,check_overlap,actions=output:3", FlowModCommand::Add),
            SEC,
        )
        .expect_err("overlaps");
    assert_eq!(e.kind, ErrorKind::FLOW_MOD_FAILED_OVERLAP);
    assert_eq!(r.version(), v, "the datapath did not change");
    assert_eq!(r.agent.flows().len(), 1);
    assert_eq!(r.send(1, SEC), vec![2]);
    assert_eq!(r.send(2, SEC), Vec::<u32>::new(), "the refused flow is absent");
}

#[test]
fn translation_error_changes_nothing() {
    let mut r = Rig::new();
    r.add("in_port=1,actions=output:2");
    let v = r.version();
    let before: Vec<_> = r.agent.flows().table(0).map(|(k, e)| (k.clone(), e.clone())).collect();
    // Output to TABLE is refused by the translation only (packet-out only).
    for (s, cmd) in [
        ("in_port=2,actions=output:table", FlowModCommand::Add),
        ("in_port=1,actions=output:table", FlowModCommand::Add),
        ("in_port=1,actions=output:table", FlowModCommand::Modify),
        ("in_port=1,actions=output:table", FlowModCommand::ModifyStrict),
    ] {
        let e = r.agent.handle_flow_mod(&flow_mod(s, cmd), SEC).expect_err("does not translate");
        assert_eq!(e.kind, ErrorKind::BAD_ACTION_BAD_OUT_PORT, "{s}");
        let after: Vec<_> = r.agent.flows().table(0).map(|(k, e)| (k.clone(), e.clone())).collect();
        assert_eq!(after, before, "{s}: the tables changed");
        assert_eq!(r.version(), v, "{s}: the datapath changed");
    }
    assert_eq!(r.send(1, SEC), vec![2]);
    assert_eq!(r.send(2, SEC), Vec::<u32>::new());
}

#[test]
fn idle_timeout_counts_from_the_last_packet() {
    let mut r = Rig::new();
    r.add("in_port=1,idle_timeout=10,send_flow_rem,actions=output:2");
    r.agent.barrier();
    assert_eq!(r.next_expiry(), Some(10 * SEC));
    assert_eq!(r.send(1, SEC), vec![2]);
    assert_eq!(r.send(1, 5 * SEC), vec![2]);
    assert_eq!(r.next_expiry(), Some(15 * SEC), "pushed back by traffic");
    assert!(r.agent.expire(12 * SEC).is_empty(), "idle since 5 s only");
    assert_eq!(r.send(1, 12 * SEC), vec![2]);
    assert!(r.agent.expire(21 * SEC).is_empty(), "idle since 12 s only");
    let removed = r.agent.expire(22 * SEC);
    assert_eq!(removed.len(), 1);
    assert_eq!(removed[0].reason, FlowRemovedReason::IdleTimeout);
    assert_eq!(removed[0].packet_count, 3);
    assert_eq!(removed[0].duration_sec, 22);
    assert!(r.agent.flows().is_empty());
    assert_eq!(r.send(1, 23 * SEC), Vec::<u32>::new(), "expire published");
    assert_eq!(r.next_expiry(), None);
}

#[test]
fn hard_timeout_ignores_traffic() {
    let mut r = Rig::new();
    r.add("in_port=1,hard_timeout=3,send_flow_rem,actions=output:2");
    r.agent.barrier();
    assert_eq!(r.send(1, 2 * SEC), vec![2]);
    assert!(r.agent.expire(2 * SEC).is_empty());
    let removed = r.agent.expire(3 * SEC);
    assert_eq!(removed.len(), 1);
    assert_eq!(removed[0].reason, FlowRemovedReason::HardTimeout);
    assert_eq!(removed[0].packet_count, 1);
    assert_eq!(r.send(1, 3 * SEC), Vec::<u32>::new());
}

#[test]
fn flow_stats_count_and_reset_counts() {
    let mut r = Rig::new();
    r.add("priority=9,in_port=1,cookie=1,actions=output:2");
    r.ok("priority=9,in_port=2,cookie=2,actions=output:1", FlowModCommand::Add, SEC);
    r.agent.barrier();
    for _ in 0..3 {
        assert_eq!(r.send(1, 2 * SEC), vec![2]);
    }
    assert_eq!(r.send(2, 2 * SEC), vec![1]);
    let len = frame().len() as u64;
    let by_cookie = |r: &Rig, now| {
        let mut v: Vec<_> = r
            .stats(now)
            .into_iter()
            .map(|s| (s.cookie, s.packet_count, s.byte_count, s.duration_sec))
            .collect();
        v.sort();
        v
    };
    assert_eq!(by_cookie(&r, 4 * SEC), vec![(1, 3, 3 * len, 4), (2, 1, len, 3)]);

    // A replacing add keeps the counters (and restarts the duration)...
    r.ok("priority=9,in_port=1,cookie=3,actions=output:4", FlowModCommand::Add, 5 * SEC);
    r.agent.barrier();
    assert_eq!(r.send(1, 6 * SEC), vec![4]);
    assert_eq!(by_cookie(&r, 6 * SEC), vec![(2, 1, len, 5), (3, 4, 4 * len, 1)]);
    // ...unless it sets reset_counts.
    r.ok(
        "priority=9,in_port=1,cookie=4,reset_counts,actions=output:4",
        FlowModCommand::Add,
        7 * SEC,
    );
    r.agent.barrier();
    assert_eq!(by_cookie(&r, 7 * SEC), vec![(2, 1, len, 6), (4, 0, 0, 0)]);
    assert_eq!(r.send(1, 8 * SEC), vec![4]);
    // A modify with reset_counts resets too; one without keeps them.
    r.ok("in_port=2,actions=output:3", FlowModCommand::Modify, 8 * SEC);
    r.agent.barrier();
    assert_eq!(r.send(2, 8 * SEC), vec![3]);
    r.ok("in_port=1,reset_counts,actions=output:2", FlowModCommand::Modify, 9 * SEC);
    assert_eq!(by_cookie(&r, 9 * SEC), vec![(2, 2, 2 * len, 8), (4, 0, 0, 2)]);

    let one = r
        .agent
        .flow_stats(
            &FlowStatsRequest { cookie: 2, cookie_mask: u64::MAX, ..FlowStatsRequest::default() },
            9 * SEC,
        )
        .expect("stats");
    assert_eq!(one.len(), 1);
    assert_eq!(one[0].packet_count, 2);
    assert_eq!(one[0].priority, 9);
    let bad = r
        .agent
        .flow_stats(&FlowStatsRequest { table_id: 254, ..FlowStatsRequest::default() }, 9 * SEC);
    assert!(bad.is_err());
}

#[test]
fn next_check_follows_adds_and_keeps_the_granularity_after_a_scan() {
    let mut r = Rig::new();
    assert_eq!(r.agent.next_check(), None);
    r.add("in_port=1,actions=output:2");
    assert_eq!(r.agent.next_check(), None, "no timeout, no check");
    r.add("hard_timeout=5,in_port=2,actions=output:1");
    assert_eq!(r.agent.next_check(), Some(5 * SEC));
    r.ok("idle_timeout=2,in_port=3,actions=output:1", FlowModCommand::Add, SEC / 2);
    assert_eq!(r.agent.next_check(), Some(2 * SEC + SEC / 2));
    // A hard timeout due just after a scan waits for the granularity.
    r.ok("hard_timeout=1,in_port=4,actions=output:1", FlowModCommand::Add, 4 * SEC + SEC / 2 + 1);
    r.agent.expire(5 * SEC + SEC / 2);
    assert_eq!(r.agent.flows().len(), 2, "the idle and the 5 s entries expired");
    assert_eq!(
        r.agent.next_check(),
        Some(5 * SEC + SEC / 2 + EXPIRY_GRANULARITY_NS),
        "due 1 ns later, checked one granularity later"
    );
    r.agent.expire(5 * SEC + SEC / 2 + EXPIRY_GRANULARITY_NS);
    assert_eq!(r.agent.flows().len(), 1);
    assert_eq!(r.agent.next_check(), None);
}

#[test]
fn a_rolled_back_transaction_leaves_tables_datapath_and_counters_as_they_were() {
    let mut r = Rig::new();
    r.add("priority=9,in_port=1,cookie=1,send_flow_rem,actions=output:2");
    r.add("priority=9,in_port=2,cookie=2,idle_timeout=5,actions=output:1");
    r.agent.barrier();
    assert_eq!(r.send(1, SEC), vec![2]);
    let len = frame().len() as u64;
    let before = |r: &Rig| {
        let mut v: Vec<_> = r
            .stats(2 * SEC)
            .into_iter()
            .map(|s| (s.cookie, s.packet_count, s.byte_count, format!("{:?}", s.instructions)))
            .collect();
        v.sort();
        v
    };
    let snapshot = before(&r);
    let version = r.version();
    let expiry = r.next_expiry();

    r.agent.begin();
    // Replace, reset, modify, delete (with flow-removed due) and add, all unpublished.
    r.ok("priority=9,in_port=1,cookie=3,reset_counts,actions=output:4", FlowModCommand::Add, SEC);
    r.ok("in_port=2,actions=output:3", FlowModCommand::Modify, SEC);
    let removed = r.ok("in_port=1", FlowModCommand::Delete, SEC);
    assert!(removed.is_empty(), "flow-removed waits for the transaction to be kept");
    r.ok("priority=1,in_port=3,actions=output:1", FlowModCommand::Add, SEC);
    assert_eq!(r.agent.flows().len(), 2);
    r.agent.rollback();

    assert_eq!(before(&r), snapshot);
    assert_eq!(r.next_expiry(), expiry);
    assert_eq!(r.version(), version, "nothing left to publish after the rollback");
    assert_eq!(r.send(1, 3 * SEC), vec![2]);
    assert_eq!(r.send(3, 3 * SEC), Vec::<u32>::new());
    let counted: Vec<_> = r.stats(3 * SEC).iter().map(|s| (s.cookie, s.packet_count)).collect();
    assert!(counted.contains(&(1, 2)), "the rule kept its counters: {counted:?}");
    assert_eq!(r.stats(3 * SEC).iter().find(|s| s.cookie == 1).unwrap().byte_count, 2 * len);
}

#[test]
fn a_kept_transaction_publishes_once_and_then_sends_its_flow_removed() {
    let mut r = Rig::new();
    r.add("priority=9,in_port=1,send_flow_rem,actions=output:2");
    r.agent.barrier();
    assert_eq!(r.send(1, SEC), vec![2]);
    let version = r.version();
    r.agent.begin();
    assert!(r.ok("in_port=1", FlowModCommand::Delete, SEC).is_empty());
    r.ok("priority=5,in_port=1,actions=output:3", FlowModCommand::Add, SEC);
    assert_eq!(r.send(1, SEC), vec![2], "the old rules serve until the transaction ends");
    let removed = r.agent.end();
    assert_eq!(removed.len(), 1);
    assert_eq!(removed[0].packet_count, 2, "with the packet it forwarded meanwhile");
    assert_eq!(r.agent.datapath().current().version(), version + 1, "one publish");
    assert_eq!(r.send(1, 2 * SEC), vec![3]);
}
