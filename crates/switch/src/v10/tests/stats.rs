//! Statistics requests and replies, and splitting long 1.0 replies.

use std::net::Ipv4Addr;

use crate::v10::{
    split_stats_reply, stats_reply_to_v10, stats_request_to_v13, table_stats_to_v10,
    MAX_STATS_REPLY_BODY,
};
use openflow::action::Action as A13;
use openflow::instruction::Instruction;
use openflow::match13::Match as Match13;
use openflow::oxm::Oxm;
use openflow::v10::match10::{wildcards as fw, Match as Match10};
use openflow::v10::stats::{
    FlowStatsRequest as FlowReq10, PortStatsRequest, QueueStatsRequest, StatsReply,
    StatsReplyBody as B10, StatsRequest, StatsRequestBody as Q10, OFPQ_ALL, OFPSF_REPLY_MORE,
};
use openflow::v10::Action as A10;
use openflow::v13::multipart::{
    AggregateStats, Desc, FlowStats, MultipartReply, MultipartReplyBody as B13,
    MultipartRequestBody as Q13, PortStats, QueueStats, TableStats,
};
use openflow::{ErrorKind, Frame};

fn req(body: Q10) -> Q13 {
    stats_request_to_v13(&StatsRequest { flags: 0, body }).unwrap().body
}

#[test]
fn requests() {
    assert_eq!(req(Q10::Desc), Q13::Desc);
    assert_eq!(req(Q10::Table), Q13::Table);
    let m = Match10 { wildcards: fw::ALL & !fw::IN_PORT, in_port: 4, ..Match10::all() };
    for (table_id, out_port, want_port) in [(0xff, 0xffff, 0xffff_ffff), (0, 3, 3)] {
        let r = FlowReq10 { match_: m, table_id, out_port };
        for (body, is_flow) in [(Q10::Flow(r.clone()), true), (Q10::Aggregate(r), false)] {
            let (Q13::Flow(f) | Q13::Aggregate(f)) = req(body.clone()) else {
                panic!("{body:?} did not become a flow or aggregate request")
            };
            assert_eq!(matches!(req(body), Q13::Flow(_)), is_flow);
            assert_eq!(f.table_id, table_id);
            assert_eq!(f.out_port, want_port);
            assert_eq!(f.out_group, 0xffff_ffff);
            assert_eq!((f.cookie, f.cookie_mask), (0, 0));
            assert_eq!(f.match_, Match13::new(vec![Oxm::InPort(4)]));
        }
    }
    assert_eq!(
        req(Q10::Port(PortStatsRequest { port_no: 0xffff })),
        Q13::PortStats { port_no: 0xffff_ffff }
    );
    assert_eq!(req(Q10::Port(PortStatsRequest { port_no: 2 })), Q13::PortStats { port_no: 2 });
    // 1.0 asks for every port's queues with OFPP_ALL, 1.3 with OFPP_ANY.
    assert_eq!(
        req(Q10::Queue(QueueStatsRequest { port_no: 0xfffc, queue_id: OFPQ_ALL })),
        Q13::Queue { port_no: 0xffff_ffff, queue_id: 0xffff_ffff }
    );
    assert_eq!(
        req(Q10::Queue(QueueStatsRequest { port_no: 3, queue_id: 1 })),
        Q13::Queue { port_no: 3, queue_id: 1 }
    );
    let e = stats_request_to_v13(&StatsRequest {
        flags: 0,
        body: Q10::Vendor { vendor: 0x2320, data: vec![] },
    })
    .unwrap_err();
    assert_eq!(e.kind.to_v10(), (1, 3), "OFPBRC_BAD_VENDOR");
}

fn reply(body: B13) -> StatsReply {
    stats_reply_to_v10(&MultipartReply { flags: 0, body }).unwrap()
}

#[test]
fn desc_aggregate_and_table_replies() {
    let d = Desc { mfr_desc: "peregrine".into(), ..Desc::default() };
    assert_eq!(reply(B13::Desc(d.clone())).body, B10::Desc(d));
    let a = AggregateStats { packet_count: 1, byte_count: 2, flow_count: 3 };
    let B10::Aggregate(g) = reply(B13::Aggregate(a)).body else { panic!("not aggregate") };
    assert_eq!((g.packet_count, g.byte_count, g.flow_count), (1, 2, 3));
    let t = TableStats {
        table_id: 2,
        active_count: 5,
        lookup_count: 6,
        matched_count: 7,
        ..TableStats::default()
    };
    let B10::Table(v) = reply(B13::Table(vec![t.clone()])).body else { panic!("not table") };
    assert_eq!(v, vec![table_stats_to_v10(&t)]);
    assert_eq!(v[0].name, "table2");
    assert_eq!(v[0].wildcards, Some(fw::ALL));
    assert_eq!(v[0].max_entries, 1 << 24);
    assert_eq!(
        (v[0].table_id, v[0].active_count, v[0].lookup_count, v[0].matched_count),
        (2, 5, 6, 7)
    );
}

#[test]
fn port_and_queue_replies() {
    let p = PortStats {
        port_no: 0xffff_fffe,
        rx_packets: 1,
        tx_bytes: 4,
        collisions: 12,
        duration_sec: 9,
        ..PortStats::default()
    };
    let far = PortStats { port_no: 70_000, ..p.clone() };
    let B10::Port(v) = reply(B13::PortStats(vec![p, far])).body else { panic!("not port") };
    assert_eq!(v.len(), 1, "the port without a 1.0 number is left out");
    assert_eq!(openflow::v10::port::port_from_v13(v[0].port_no), Some(0xfffe));
    assert_eq!((v[0].rx_packets, v[0].tx_bytes, v[0].collisions), (1, 4, 12));
    let q = QueueStats {
        port_no: 3,
        queue_id: 1,
        tx_bytes: 2,
        tx_packets: 3,
        tx_errors: 4,
        duration_sec: 5,
        duration_nsec: 6,
        properties: Vec::new(),
    };
    let B10::Queue(v) = reply(B13::Queue(vec![q])).body else { panic!("not queue") };
    assert_eq!(
        (v[0].port_no, v[0].queue_id, v[0].tx_bytes, v[0].tx_packets, v[0].tx_errors),
        (3, 1, 2, 3, 4)
    );
}

fn flow(match_: Match13, instructions: Vec<Instruction>) -> FlowStats {
    FlowStats {
        table_id: 0,
        duration_sec: 1,
        duration_nsec: 2,
        priority: 3,
        idle_timeout: 4,
        hard_timeout: 5,
        flags: 0,
        importance: 0,
        cookie: 6,
        packet_count: 7,
        byte_count: 8,
        match_,
        instructions,
    }
}

#[test]
fn flow_replies_leave_out_what_1_0_cannot_read() {
    let out = |port| A13::Output { port, max_len: 0 };
    let ok =
        flow(Match13::new(vec![Oxm::InPort(1)]), vec![Instruction::ApplyActions(vec![out(2)])]);
    let drop = flow(Match13::default(), vec![]);
    let v6 = flow(
        Match13::new(vec![Oxm::EthType(0x86dd), Oxm::Ipv6Src("::1".parse().unwrap(), None)]),
        vec![],
    );
    let goto = flow(Match13::default(), vec![Instruction::GotoTable(1)]);
    let group = flow(Match13::default(), vec![Instruction::ApplyActions(vec![A13::Group(1)])]);
    let B10::Flow(v) = reply(B13::Flow(vec![ok, drop, v6, goto, group])).body else {
        panic!("not flow")
    };
    assert_eq!(v.len(), 2);
    assert_eq!(v[0].match_.in_port, 1);
    assert_eq!(v[0].instructions, vec![A10::Output { port: 2, max_len: 0 }]);
    assert_eq!(
        (
            v[0].table_id,
            v[0].duration_sec,
            v[0].duration_nsec,
            v[0].priority,
            v[0].idle_timeout,
            v[0].hard_timeout,
            v[0].cookie,
            v[0].packet_count,
            v[0].byte_count
        ),
        (0, 1, 2, 3, 4, 5, 6, 7, 8)
    );
    assert!(v[1].instructions.is_empty());
    assert_eq!(
        v[1].match_.wildcards & fw::ALL,
        fw::ALL & !(fw::NW_SRC_MASK | fw::NW_DST_MASK) | fw::NW_SRC_ALL | fw::NW_DST_ALL
    );
}

#[test]
fn more_flag_and_1_3_only_replies() {
    let r =
        stats_reply_to_v10(&MultipartReply { flags: OFPSF_REPLY_MORE, body: B13::Table(vec![]) })
            .unwrap();
    assert_eq!(r.flags, OFPSF_REPLY_MORE);
    // Port descriptions have a 1.0 form (Open vSwitch's stats type 13): the ports with a
    // 1.0 number.
    let port = |port_no| openflow::model::Port { port_no, ..Default::default() };
    let r = stats_reply_to_v10(&MultipartReply {
        flags: 0,
        body: B13::PortDesc(vec![port(1), port(0x1_0000), port(0xffff_fffe)]),
    })
    .unwrap();
    let B10::PortDesc(ports) = r.body else { panic!("{r:?}") };
    let numbers: Vec<u32> = ports.iter().map(|p| p.port_no).collect();
    assert_eq!(numbers, [1, 0xffff_fffe]);
    for body in [B13::Group(vec![]), B13::MeterConfig(vec![]), B13::TableFeatures(vec![])] {
        let e = stats_reply_to_v10(&MultipartReply { flags: 0, body }).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BAD_REQUEST_BAD_MULTIPART);
    }
}

#[test]
fn long_flow_replies_are_split_into_messages() {
    // 1.3 entries with an empty match are shorter than their 1.0 form (fixed match).
    let entry = |i: u32| {
        let mut f = flow(
            Match13::new(vec![Oxm::EthType(0x0800), Oxm::Ipv4Dst(Ipv4Addr::from(i), None)]),
            vec![Instruction::ApplyActions(vec![A13::Output { port: 1, max_len: 0 }])],
        );
        f.priority = i as u16;
        f
    };
    let all: Vec<FlowStats> = (0..2000).map(entry).collect();
    let one = reply(B13::Flow(all.clone()));
    let B10::Flow(flat) = one.body.clone() else { panic!("not flow") };
    assert_eq!(flat.len(), 2000);
    // As one message it does not fit.
    assert!(Frame::v10(1, openflow::v10::Message::StatsReply(one.clone())).encode().is_err());
    let parts = split_stats_reply(one, MAX_STATS_REPLY_BODY);
    assert!(parts.len() >= 3, "{} parts", parts.len());
    let mut joined = Vec::new();
    for (i, p) in parts.iter().enumerate() {
        let more = i + 1 < parts.len();
        assert_eq!(p.flags & OFPSF_REPLY_MORE != 0, more);
        let bytes = Frame::v10(1, openflow::v10::Message::StatsReply(p.clone()))
            .encode()
            .expect("each part fits in a message");
        assert!(bytes.len() <= usize::from(u16::MAX));
        let B10::Flow(v) = &p.body else { panic!("not flow") };
        assert!(!v.is_empty());
        joined.extend(v.iter().cloned());
    }
    assert_eq!(joined, flat);
    // Bodies that are not lists, and empty lists, stay whole.
    assert_eq!(split_stats_reply(reply(B13::Flow(vec![])), 10), vec![reply(B13::Flow(vec![]))]);
    let d = reply(B13::Desc(Desc::default()));
    assert_eq!(split_stats_reply(d.clone(), 10), vec![d]);
}
