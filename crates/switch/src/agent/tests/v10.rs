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
        match self.stats10(id, StatsRequestBody::Aggregate(all_flows())).as_slice() {
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
    FlowReq10 { match_: Match10::all(), table_id: 0xff, out_port: 0xffff }
}

/// `dl_type=0x0800` (`ip` in ovs-ofctl).
fn ip() -> Match10 {
    Match10 { wildcards: fw::ALL & !fw::DL_TYPE, dl_type: 0x0800, ..Match10::all() }
}

fn fm10(command: Cmd10, priority: u16, port: u16) -> M10 {
    M10::FlowMod(FlowMod10 {
        match_: ip(),
        command,
        priority,
        instructions: vec![A10::Output { port, max_len: 0 }],
        ..FlowMod10::default()
    })
}

fn out(port: u32) -> Vec<Instruction> {
    vec![Instruction::ApplyActions(vec![Action::Output { port, max_len: 0 }])]
}

/// A 1.3 controller and a 1.0 one, with `ip` flows of priority 5 in tables 0 and 1 (the
/// 1.3 controller's) to port 2.
fn two_tables() -> (Rig, SessionId, SessionId) {
    let mut r = Rig::new();
    let c13 = r.connect(SessionKind::Controller, OFP13_VERSION);
    let c10 = r.connect(SessionKind::Controller, OFP10_VERSION);
    for t in [0, 1] {
        r.flow(c13, &format!("table={t},priority=5,ip,actions=output:2"), FlowModCommand::Add);
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
        assert_eq!(r.entries(c13), vec![(0, 5, out(3)), (1, 5, out(3))], "{cmd:?}");
        // The 1.0 dump lists both, now with the new action.
        let dump = r.dump10(c10);
        assert_eq!(dump.len(), 2);
        assert!(dump.iter().all(|f| f.instructions == vec![A10::Output { port: 3, max_len: 0 }]));
    }
}

#[test]
fn a_modify_that_selects_nothing_adds_to_table_0_only() {
    let (mut r, c13, c10) = two_tables();
    // Strict, of another priority: no entry is identical, so it adds.
    r.send10(c10, fm10(Cmd10::ModifyStrict, 9, 3));
    assert_eq!(r.entries(c13), vec![(0, 5, out(2)), (0, 9, out(3)), (1, 5, out(2))]);
}

#[test]
fn deletes_act_on_every_table() {
    for cmd in [Cmd10::Delete, Cmd10::DeleteStrict] {
        let (mut r, c13, c10) = two_tables();
        r.flow(c13, "table=1,priority=5,arp,actions=output:2", FlowModCommand::Add);
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
    r.flow(c13, "table=0,priority=1,actions=goto_table:1", FlowModCommand::Add);
    assert_eq!(r.packet(1, SEC), vec![2]);
    let dump = r.dump10(c10);
    assert_eq!(dump.len(), 2);
    let a = r.aggregate10(c10);
    assert_eq!(a.flow_count, 2);
    assert_eq!(
        (a.packet_count, a.byte_count),
        (dump.iter().map(|f| f.packet_count).sum(), dump.iter().map(|f| f.byte_count).sum())
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

/// The frames `frame` leaves by, run in on port 1 at `now`.
fn run(r: &mut Rig, frame: &[u8], now: u64) -> Vec<Vec<u8>> {
    let mut out = datapath::pipeline::Outputs::new();
    r.dp.process(&mut r.worker, Packet::from_slice(frame), 1, now, &mut out);
    out.tx.iter().map(|t| t.packet.data().to_vec()).collect()
}

/// The test frame with an 802.1Q tag of TCI `tci`.
fn tagged(tci: u16) -> Vec<u8> {
    let f = crate::testing::frame();
    let mut t = f[..12].to_vec();
    t.extend_from_slice(&[0x81, 0, (tci >> 8) as u8, tci as u8]);
    t.extend_from_slice(&f[12..]);
    t
}

/// An ARP request frame (60 bytes).
fn arp() -> Vec<u8> {
    let mut f = crate::testing::frame()[..60].to_vec();
    f[12..14].copy_from_slice(&[0x08, 0x06]);
    f[14..22].copy_from_slice(&[0, 1, 0x08, 0, 6, 4, 0, 1]);
    f[28..32].copy_from_slice(&[10, 0, 0, 1]);
    f[38..42].copy_from_slice(&[10, 0, 0, 2]);
    f
}

/// Adds a 1.0 flow matching `in_port=1` (everything else open) with `actions` then
/// output to port 2.
fn add_in_port_1(r: &mut Rig, c10: SessionId, mut actions: Vec<A10>) {
    actions.push(A10::Output { port: 2, max_len: 0 });
    r.send10(
        c10,
        M10::FlowMod(FlowMod10 {
            match_: Match10 { wildcards: fw::ALL & !fw::IN_PORT, in_port: 1, ..Match10::all() },
            instructions: actions,
            ..FlowMod10::default()
        }),
    );
    assert!(r.read(c10).is_empty(), "the flow-mod was refused");
}

#[test]
fn set_vlan_where_the_match_leaves_the_tag_open_pushes_or_rewrites() {
    let mut r = Rig::new();
    let c10 = r.connect(SessionKind::Controller, OFP10_VERSION);
    add_in_port_1(&mut r, c10, vec![A10::SetVlanVid(5)]);
    // Untagged: a tag with VID 5, PCP 0, in front of the same frame.
    assert_eq!(run(&mut r, &crate::testing::frame(), SEC), vec![tagged(5)]);
    // Tagged (PCP 3, VID 7): the VID rewritten, the PCP kept, no second tag.
    assert_eq!(run(&mut r, &tagged(3 << 13 | 7), SEC), vec![tagged(3 << 13 | 5)]);
    // The 1.0 dump shows the action as sent.
    let dump = r.dump10(c10);
    assert_eq!(dump[0].instructions[0], A10::SetVlanVid(5));
    // set_vlan_pcp on an untagged frame: VID 0 with that PCP.
    add_in_port_1(&mut r, c10, vec![A10::SetVlanPcp(6)]);
    assert_eq!(run(&mut r, &crate::testing::frame(), SEC), vec![tagged(6 << 13)]);
}

#[test]
fn set_nw_and_tp_where_the_match_leaves_the_protocol_open_act_only_on_their_headers() {
    let mut r = Rig::new();
    let c10 = r.connect(SessionKind::Controller, OFP10_VERSION);
    add_in_port_1(
        &mut r,
        c10,
        vec![A10::SetNwSrc(std::net::Ipv4Addr::new(10, 9, 9, 9)), A10::SetTpDst(8080)],
    );
    // ARP: unchanged (its sender address shares the IPv4 source's place).
    let a = arp();
    assert_eq!(run(&mut r, &a, SEC), vec![a]);
    // IPv4/UDP: both rewritten, the IPv4 header checksum kept valid.
    let sum = |h: &[u8]| {
        let s: u32 = h.chunks(2).map(|w| u32::from(u16::from_be_bytes([w[0], w[1]]))).sum();
        (s & 0xffff) + (s >> 16)
    };
    let mut f = crate::testing::frame();
    let c = !(sum(&f[14..34]) as u16);
    f[24..26].copy_from_slice(&c.to_be_bytes());
    let got = run(&mut r, &f, SEC).remove(0);
    assert_eq!(got[26..30], [10, 9, 9, 9]);
    assert_eq!(u16::from_be_bytes([got[36], got[37]]), 8080);
    assert_eq!(sum(&got[14..34]), 0xffff, "{:?}", &got[14..34]);
}

#[test]
fn a_13_dump_shows_the_conditional_actions_as_standard_ones() {
    use openflow::action::Action as A13;
    use openflow::oxm::Oxm;
    let mut r = Rig::new();
    let c10 = r.connect(SessionKind::Controller, OFP10_VERSION);
    let c13 = r.connect(SessionKind::Controller, OFP13_VERSION);
    add_in_port_1(
        &mut r,
        c10,
        vec![
            A10::SetVlanVid(5),
            A10::SetNwSrc(std::net::Ipv4Addr::new(10, 9, 9, 9)),
            A10::SetTpDst(8080),
        ],
    );
    let shown = r.entries(c13);
    let [(0, _, ins)] = shown.as_slice() else {
        panic!("one entry in table 0: {shown:?}");
    };
    assert_eq!(
        ins,
        &vec![Instruction::ApplyActions(vec![
            A13::PushVlan(0x8100),
            A13::SetField(Oxm::VlanVid(0x1005, None)),
            A13::SetField(Oxm::Ipv4Src(std::net::Ipv4Addr::new(10, 9, 9, 9), None)),
            A13::SetField(Oxm::UdpDst(8080)),
            A13::Output { port: 2, max_len: 0 },
        ])]
    );
    // The entry keeps its exact meaning: a 1.0 dump shows the 1.0 actions, and a tagged
    // frame is not tagged again.
    assert_eq!(r.dump10(c10)[0].instructions[0], A10::SetVlanVid(5));
    let out = run(&mut r, &tagged(7), SEC);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0][12..16], [0x81, 0x00, 0x00, 0x05]);
    assert_ne!(out[0][16..18], [0x81, 0x00], "a second tag was pushed");
}

#[test]
fn open_vswitch_port_descriptions_answer_over_10() {
    // `ovs-ofctl -O OpenFlow10 dump-ports-desc` asks with Open vSwitch's stats type 13.
    let mut r = Rig::new();
    let c10 = r.connect(SessionKind::Controller, OFP10_VERSION);
    let ports = match r.stats10(c10, StatsRequestBody::PortDesc).as_slice() {
        [StatsReplyBody::PortDesc(p)] => p.clone(),
        other => panic!("not one port-desc reply: {other:?}"),
    };
    let numbers: Vec<u32> = ports.iter().map(|p| p.port_no).collect();
    assert_eq!(numbers, vec![1, 2, 3]);
}
