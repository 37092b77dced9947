//! OpenFlow 1.0 connections on the agent: flow-mods without a table field act on every
//! table (adds on table 0), and what counts flows (aggregate, table stats) counts what
//! the 1.0 flow dump lists.

use openflow::instruction::Instruction;
use openflow::v10::flow::FlowModCommand as Cmd10;
use openflow::v10::match10::{wildcards as fw, Match as Match10};
use openflow::v10::stats::{
    AggregateStats, FlowStats as FlowStats10, FlowStatsRequest as FlowReq10, StatsReplyBody,
    StatsRequest, StatsRequestBody,
};
use openflow::v10::Message as M10;
use openflow::v10::{Action as A10, FlowMod as FlowMod10};
use openflow::OFP10_VERSION;

use super::*;

impl Rig {
    fn send10(&mut self, id: SessionId, m: M10) {
        self.xid += 1;
        let bytes = Frame::v10(self.xid, m).encode().unwrap();
        self.agent.receive(id, &bytes, 0);
    }

    /// The 1.0 stats replies queued on `id` (none other may be there).
    fn stats10(&mut self, id: SessionId, body: StatsRequestBody) -> Vec<StatsReplyBody> {
        self.send10(id, M10::StatsRequest(StatsRequest { flags: 0, body }));
        self.read(id)
            .into_iter()
            .map(|f| match f.message {
                Message::V10(M10::StatsReply(r)) => r.body,
                other => panic!("not a 1.0 stats reply: {other:?}"),
            })
            .collect()
    }

    fn dump10(&mut self, id: SessionId) -> Vec<FlowStats10> {
        self.stats10(id, StatsRequestBody::Flow(all_flows()))
            .into_iter()
            .flat_map(|b| match b {
                StatsReplyBody::Flow(v) => v,
                other => panic!("not a flow reply: {other:?}"),
            })
            .collect()
    }

    fn aggregate10(&mut self, id: SessionId) -> AggregateStats {
        match self
            .stats10(id, StatsRequestBody::Aggregate(all_flows()))
            .as_slice()
        {
            [StatsReplyBody::Aggregate(a)] => *a,
            other => panic!("not one aggregate reply: {other:?}"),
        }
    }

    /// (table, priority, instructions) of every entry, by a 1.3 dump on `id13`, sorted.
    fn entries(&mut self, id13: SessionId) -> Vec<(u8, u16, Vec<Instruction>)> {
        let mut v: Vec<_> = flows_in(&self.dump_flows(id13))
            .into_iter()
            .map(|f| (f.table_id, f.priority, f.instructions))
            .collect();
        v.sort_by_key(|e| (e.0, e.1));
        v
    }
}

fn all_flows() -> FlowReq10 {
    FlowReq10 {
        match_: Match10::all(),
        table_id: 0xff,
        out_port: 0xffff,
    }
}

/// `dl_type=0x0800` (`ip` in ovs-ofctl).
fn ip() -> Match10 {
    Match10 {
        wildcards: fw::ALL & !fw::DL_TYPE,
        dl_type: 0x0800,
        ..Match10::all()
    }
}

fn fm10(command: Cmd10, priority: u16, port: u16) -> M10 {
    M10::FlowMod(FlowMod10 {
        match_: ip(),
        command,
        priority,
        actions: vec![A10::Output { port, max_len: 0 }],
        ..FlowMod10::default()
    })
}

fn out(port: u32) -> Vec<Instruction> {
    vec![Instruction::ApplyActions(vec![Action::Output {
        port,
        max_len: 0,
    }])]
}

/// A 1.3 controller and a 1.0 one, with `ip` flows of priority 5 in tables 0 and 1 (the
/// 1.3 controller's) to port 2.
fn two_tables() -> (Rig, SessionId, SessionId) {
    let mut r = Rig::new();
    let c13 = r.connect(SessionKind::Controller, OFP13_VERSION);
    let c10 = r.connect(SessionKind::Controller, OFP10_VERSION);
    for t in [0, 1] {
        r.flow(
            c13,
            &format!("table={t},priority=5,ip,actions=output:2"),
            FlowModCommand::Add,
        );
    }
    assert!(r.read(c13).is_empty());
    (r, c13, c10)
}

#[test]
fn modifies_act_on_every_table() {
    for cmd in [Cmd10::Modify, Cmd10::ModifyStrict] {
        let (mut r, c13, c10) = two_tables();
        r.send10(c10, fm10(cmd, 5, 3));
        assert!(r.read(c10).is_empty(), "{cmd:?}");
        assert_eq!(
            r.entries(c13),
            vec![(0, 5, out(3)), (1, 5, out(3))],
            "{cmd:?}"
        );
        // The 1.0 dump lists both, now with the new action.
        let dump = r.dump10(c10);
        assert_eq!(dump.len(), 2);
        assert!(dump.iter().all(|f| f.actions
            == vec![A10::Output {
                port: 3,
                max_len: 0
            }]));
    }
}

#[test]
fn a_modify_that_selects_nothing_adds_to_table_0_only() {
    let (mut r, c13, c10) = two_tables();
    // Strict, of another priority: no entry is identical, so it adds.
    r.send10(c10, fm10(Cmd10::ModifyStrict, 9, 3));
    assert_eq!(
        r.entries(c13),
        vec![(0, 5, out(2)), (0, 9, out(3)), (1, 5, out(2))]
    );
}

#[test]
fn deletes_act_on_every_table() {
    for cmd in [Cmd10::Delete, Cmd10::DeleteStrict] {
        let (mut r, c13, c10) = two_tables();
        r.flow(
            c13,
            "table=1,priority=5,arp,actions=output:2",
            FlowModCommand::Add,
        );
        r.send10(c10, fm10(cmd, 5, 1));
        assert!(r.read(c10).is_empty(), "{cmd:?}");
        let left = flows_in(&r.dump_flows(c13));
        assert_eq!(left.len(), 1, "{cmd:?}: {left:?}");
        let dump = r.dump10(c10);
        assert_eq!(dump.len(), 1, "{cmd:?}: {dump:?}");
    }
}

#[test]
fn adds_go_to_table_0() {
    let (mut r, c13, c10) = two_tables();
    r.send10(c10, fm10(Cmd10::Add, 7, 1));
    assert_eq!(r.entries(c13)[..2], [(0, 5, out(2)), (0, 7, out(1))]);
}

#[test]
fn aggregate_and_table_stats_count_what_the_dump_lists() {
    let (mut r, c13, c10) = two_tables();
    // A goto has no 1.0 form: the 1.0 dump leaves it out, and so must the counts.
    r.flow(
        c13,
        "table=0,priority=1,actions=goto_table:1",
        FlowModCommand::Add,
    );
    assert_eq!(r.packet(1, SEC), vec![2]);
    let dump = r.dump10(c10);
    assert_eq!(dump.len(), 2);
    let a = r.aggregate10(c10);
    assert_eq!(a.flow_count, 2);
    assert_eq!(
        (a.packet_count, a.byte_count),
        (
            dump.iter().map(|f| f.packet_count).sum(),
            dump.iter().map(|f| f.byte_count).sum()
        )
    );
    let tables = match r.stats10(c10, StatsRequestBody::Table).as_slice() {
        [StatsReplyBody::Table(t)] => t.clone(),
        other => panic!("not one table reply: {other:?}"),
    };
    let active: Vec<u32> = tables.iter().take(2).map(|t| t.active_count).collect();
    assert_eq!(active, vec![1, 1]);
    // A 1.3 client still counts every entry.
    let req = v13::multipart::MultipartRequest {
        flags: 0,
        body: MultipartRequestBody::Aggregate(FlowStatsRequest::default()),
    };
    r.send13(c13, v13::Message::MultipartRequest(req), 0);
    match &r.read(c13)[0].message {
        Message::V13(v13::Message::MultipartReply(m)) => match &m.body {
            MultipartReplyBody::Aggregate(a) => assert_eq!(a.flow_count, 3),
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
}
