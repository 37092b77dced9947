//! Tests of the message printer: one per message kind (exact strings for the short ones,
//! the key parts for long ones) and proptests that every generated message prints
//! without panicking under the right head.

use super::*;
use crate::action::{port, Action, OFPG_ANY};
use crate::error::ErrorKind;
use crate::instruction::Instruction;
use crate::match13::Match;
use crate::oxm::Oxm;
use crate::v10::{self as m10, Message as M10};
use crate::v13::flow_mod::{FlowModCommand, OFP_NO_BUFFER};
use crate::v13::group_mod::{Bucket, GroupMod, GroupModCommand, GroupType};
use crate::v13::meter_mod::{MeterBand, MeterMod, MeterModCommand};
use crate::v13::multipart::{
    AggregateStats, Desc, FlowStats, FlowStatsRequest, GroupStats, MeterStats, MultipartReply,
    MultipartReplyBody as RB, MultipartRequest, MultipartRequestBody as QB, PortStats, QueueStats,
    TableStats, OFPMPF_REPLY_MORE,
};
use crate::v13::port::Port;
use crate::v13::table_features::{FeatureId, TableFeatureProp, TableFeatures};
use crate::v13::{self as m13, Message as M13};
use crate::wire::MacAddr;
use proptest::prelude::*;
use std::net::Ipv4Addr;

fn p13(xid: u32, m: M13) -> String {
    format_frame(&Frame::v13(xid, m))
}

fn p10(xid: u32, m: M10) -> String {
    format_frame(&Frame::v10(xid, m))
}

fn ip_match() -> Match {
    Match {
        fields: vec![
            Oxm::EthType(0x0800),
            Oxm::Ipv4Src(
                Ipv4Addr::new(10, 0, 0, 0),
                Some(Ipv4Addr::new(255, 0, 0, 0)),
            ),
        ],
    }
}

fn flow_mod() -> m13::FlowMod {
    m13::FlowMod {
        cookie: 0,
        cookie_mask: 0,
        table_id: 0,
        command: FlowModCommand::Add,
        idle_timeout: 0,
        hard_timeout: 0,
        priority: 100,
        buffer_id: OFP_NO_BUFFER,
        out_port: port::ANY,
        out_group: OFPG_ANY,
        flags: 0,
        match_: ip_match(),
        instructions: vec![Instruction::ApplyActions(vec![Action::Output {
            port: 2,
            max_len: 0,
        }])],
    }
}

/// A 60-byte TCP/IPv4 frame 10.0.0.1:1234 -> 10.0.0.2:80.
fn tcp_frame() -> Vec<u8> {
    let mut f = vec![0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 1, 0x08, 0x00];
    f.extend_from_slice(&[
        0x45, 0, 0, 46, 0, 0, 0, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
    ]);
    f.extend_from_slice(&[0x04, 0xd2, 0x00, 0x50]);
    f.resize(60, 0);
    f
}

fn port13() -> Port {
    Port {
        port_no: 1,
        hw_addr: MacAddr([0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0x01]),
        name: "eth1".into(),
        config: 0,
        state: 1,
        curr: (1 << 6) | (1 << 11),
        advertised: 0,
        supported: 0,
        peer: 0,
        curr_speed: 10_000_000,
        max_speed: 10_000_000,
    }
}

#[test]
fn flow_mod_v13() {
    assert_eq!(
        p13(1, M13::FlowMod(flow_mod())),
        "OFPT_FLOW_MOD (OF1.3) (xid=0x1): ADD table:0 priority=100,ip,nw_src=10.0.0.0/8 actions=output:2"
    );
    let mut fm = flow_mod();
    fm.command = FlowModCommand::DeleteStrict;
    fm.table_id = 3;
    fm.cookie = 5;
    fm.cookie_mask = 0xff;
    fm.idle_timeout = 10;
    fm.hard_timeout = 20;
    fm.flags = 1;
    fm.out_port = 7;
    fm.instructions.clear();
    assert_eq!(
        p13(2, M13::FlowMod(fm)),
        "OFPT_FLOW_MOD (OF1.3) (xid=0x2): DEL_STRICT table:3 priority=100,ip,nw_src=10.0.0.0/8 \
         cookie:0x5/0xff idle:10 hard:20 out_port:7 send_flow_rem actions=drop"
    );
}

#[test]
fn hello_echo_barrier_and_empty_bodies() {
    let h = m13::Hello::with_versions(&[1, 4]);
    assert_eq!(
        p13(1, M13::Hello(h)),
        "OFPT_HELLO (OF1.3) (xid=0x1): version bitmap: 0x01, 0x04"
    );
    assert_eq!(
        p13(3, M13::EchoRequest(vec![1, 2])),
        "OFPT_ECHO_REQUEST (OF1.3) (xid=0x3): 2 bytes of payload: 0x0102"
    );
    assert_eq!(
        p13(3, M13::EchoReply(vec![])),
        "OFPT_ECHO_REPLY (OF1.3) (xid=0x3): 0 bytes of payload"
    );
    assert_eq!(
        p13(4, M13::BarrierRequest),
        "OFPT_BARRIER_REQUEST (OF1.3) (xid=0x4):"
    );
    assert_eq!(
        p13(4, M13::BarrierReply),
        "OFPT_BARRIER_REPLY (OF1.3) (xid=0x4):"
    );
    assert_eq!(
        p13(4, M13::FeaturesRequest),
        "OFPT_FEATURES_REQUEST (OF1.3) (xid=0x4):"
    );
    assert_eq!(
        p13(4, M13::GetConfigRequest),
        "OFPT_GET_CONFIG_REQUEST (OF1.3) (xid=0x4):"
    );
    assert_eq!(
        p13(4, M13::GetAsyncRequest),
        "OFPT_GET_ASYNC_REQUEST (OF1.3) (xid=0x4):"
    );
    // A hello of another version keeps its number in the head.
    let f = Frame {
        version: 5,
        xid: 9,
        message: crate::Message::V13(M13::Hello(m13::Hello::with_versions(&[4, 5]))),
    };
    assert_eq!(
        format_frame(&f),
        "OFPT_HELLO (OF1.4) (xid=0x9): version bitmap: 0x04, 0x05"
    );
}

#[test]
fn echo_dump_is_cut() {
    let s = p13(1, M13::EchoRequest(vec![0xab; 100]));
    assert!(s.contains("100 bytes of payload: 0x"), "{s}");
    assert!(s.ends_with("..."), "{s}");
    assert_eq!(s.matches("ab").count(), MAX_DUMP, "{s}");
}

#[test]
fn error_v13() {
    let s = p13(
        1,
        M13::Error(m13::ErrorMsg::Standard {
            kind: ErrorKind::BAD_MATCH_BAD_PREREQ,
            data: vec![],
        }),
    );
    assert_eq!(
        s,
        "OFPT_ERROR (OF1.3) (xid=0x1): OFPBMC_BAD_PREREQ data_len=0"
    );
    // Data holding a whole request is printed as that request.
    let req = Frame::v13(7, M13::BarrierRequest).encode().unwrap();
    let s = p13(
        1,
        M13::Error(m13::ErrorMsg::Standard {
            kind: ErrorKind::BAD_REQUEST_BAD_TYPE,
            data: req,
        }),
    );
    assert_eq!(
        s,
        "OFPT_ERROR (OF1.3) (xid=0x1): OFPBRC_BAD_TYPE OFPT_BARRIER_REQUEST (OF1.3) (xid=0x7):"
    );
    // A cut request: its header and a dump.
    let mut fm = Frame::v13(5, M13::FlowMod(flow_mod())).encode().unwrap();
    let full = fm.len();
    fm.truncate(16);
    let s = p13(
        1,
        M13::Error(m13::ErrorMsg::Standard {
            kind: ErrorKind::BAD_MATCH_BAD_PREREQ,
            data: fm,
        }),
    );
    assert!(
        s.starts_with(&format!(
            "OFPT_ERROR (OF1.3) (xid=0x1): OFPBMC_BAD_PREREQ OFPT_FLOW_MOD (OF1.3) (xid=0x5): (***truncated to 16 bytes from {full}***) 0x040e"
        )),
        "{s}"
    );
    // Unnamed codes and experimenter errors.
    let s = p13(
        1,
        M13::Error(m13::ErrorMsg::Standard {
            kind: ErrorKind::new(1, 99),
            data: vec![1],
        }),
    );
    assert_eq!(
        s,
        "OFPT_ERROR (OF1.3) (xid=0x1): OFPET_BAD_REQUEST(code=99) data_len=1 data=0x01"
    );
    let s = p13(
        1,
        M13::Error(m13::ErrorMsg::Experimenter {
            exp_type: 3,
            experimenter: 0x2320,
            data: vec![],
        }),
    );
    assert_eq!(
        s,
        "OFPT_ERROR (OF1.3) (xid=0x1): OFPET_EXPERIMENTER experimenter=0x00002320 exp_type=3 data_len=0"
    );
}

#[test]
fn error_of_error_does_not_nest() {
    let inner = Frame::v13(
        2,
        M13::Error(m13::ErrorMsg::Standard {
            kind: ErrorKind::BAD_REQUEST_BAD_LEN,
            data: vec![],
        }),
    )
    .encode()
    .unwrap();
    let s = p13(
        1,
        M13::Error(m13::ErrorMsg::Standard {
            kind: ErrorKind::BAD_REQUEST_BAD_LEN,
            data: inner,
        }),
    );
    assert_eq!(
        s,
        "OFPT_ERROR (OF1.3) (xid=0x1): OFPBRC_BAD_LEN OFPT_ERROR (OF1.3) (xid=0x2): 0x0401000c0000000200010006"
    );
}

#[test]
fn features_reply_and_config() {
    let f = m13::FeaturesReply {
        datapath_id: 1,
        n_buffers: 256,
        n_tables: 254,
        auxiliary_id: 0,
        capabilities: 0x4f,
        reserved: 0,
    };
    assert_eq!(
        p13(1, M13::FeaturesReply(f)),
        "OFPT_FEATURES_REPLY (OF1.3) (xid=0x1): dpid:0000000000000001 n_tables:254, n_buffers:256 \
         capabilities: FLOW_STATS TABLE_STATS PORT_STATS GROUP_STATS QUEUE_STATS"
    );
    let c = m13::SwitchConfig {
        flags: 0,
        miss_send_len: 128,
    };
    assert_eq!(
        p13(1, M13::SetConfig(c)),
        "OFPT_SET_CONFIG (OF1.3) (xid=0x1): frags=normal miss_send_len=128"
    );
    let c = m13::SwitchConfig {
        flags: 2,
        miss_send_len: 0xffff,
    };
    assert_eq!(
        p13(1, M13::GetConfigReply(c)),
        "OFPT_GET_CONFIG_REPLY (OF1.3) (xid=0x1): frags=reassemble miss_send_len=65535"
    );
}

#[test]
fn packet_in_and_out() {
    let pi = m13::PacketIn {
        buffer_id: 1,
        total_len: 60,
        reason: m13::PacketInReason::NoMatch,
        table_id: 0,
        cookie: u64::MAX,
        match_: Match {
            fields: vec![Oxm::InPort(1)],
        },
        data: tcp_frame(),
    };
    let s = p13(1, M13::PacketIn(pi));
    assert!(
        s.starts_with(
            "OFPT_PACKET_IN (OF1.3) (xid=0x1): total_len=60 in_port=1 (via no_match) data_len=60 buffer=0x00000001 packet: tcp,"
        ),
        "{s}"
    );
    for part in [
        "nw_src=10.0.0.1",
        "nw_dst=10.0.0.2",
        "tp_src=1234",
        "tp_dst=80",
    ] {
        assert!(s.contains(part), "{part} in {s}");
    }
    let po = m13::PacketOut {
        buffer_id: OFP_NO_BUFFER,
        in_port: port::CONTROLLER,
        actions: vec![Action::Output {
            port: port::ALL,
            max_len: 0,
        }],
        data: vec![1, 2, 3],
    };
    assert_eq!(
        p13(2, M13::PacketOut(po)),
        "OFPT_PACKET_OUT (OF1.3) (xid=0x2): in_port=CONTROLLER actions=ALL data_len=3"
    );
}

#[test]
fn packet_summary_survives_cut_frames() {
    let f = tcp_frame();
    for n in 0..f.len() {
        let _ = packet::summary(f.get(..n).unwrap_or(&f));
    }
    assert_eq!(packet::summary(&f[..10]), "");
    assert_eq!(
        packet::summary(&f[..14]),
        "ip,dl_src=00:00:00:00:00:01,dl_dst=00:00:00:00:00:02"
    );
    // The IP header is whole but the ports are cut: no tp_src/tp_dst.
    let s = packet::summary(&f[..36]);
    assert!(
        s.starts_with("tcp,") && s.contains("nw_dst=10.0.0.2"),
        "{s}"
    );
    assert!(!s.contains("tp_src"), "{s}");
}

#[test]
fn flow_removed_v13() {
    let fr = m13::FlowRemoved {
        cookie: 0x10,
        priority: 100,
        reason: m13::FlowRemovedReason::IdleTimeout,
        table_id: 0,
        duration_sec: 3,
        duration_nsec: 500_000_000,
        idle_timeout: 5,
        hard_timeout: 0,
        packet_count: 1,
        byte_count: 60,
        match_: ip_match(),
    };
    assert_eq!(
        p13(1, M13::FlowRemoved(fr)),
        "OFPT_FLOW_REMOVED (OF1.3) (xid=0x1): priority=100,ip,nw_src=10.0.0.0/8 reason=idle \
         table_id=0 cookie:0x10 duration3.500s idle5 pkts1 bytes60"
    );
}

#[test]
fn port_status_and_mod() {
    let s = p13(
        1,
        M13::PortStatus(m13::PortStatus {
            reason: m13::PortReason::Add,
            port: port13(),
        }),
    );
    assert_eq!(
        s,
        "OFPT_PORT_STATUS (OF1.3) (xid=0x1): ADD: 1(eth1): addr:aa:bb:cc:dd:ee:01 config: 0 \
         state: LINK_DOWN current: 10GB-FD COPPER speed: 10000 Mbps now, 10000 Mbps max"
    );
    let pm = m13::PortMod {
        port_no: 3,
        hw_addr: MacAddr([0, 1, 2, 3, 4, 5]),
        config: 1,
        mask: 1,
        advertise: 0,
    };
    assert_eq!(
        p13(1, M13::PortMod(pm)),
        "OFPT_PORT_MOD (OF1.3) (xid=0x1): port: 3: addr:00:01:02:03:04:05 config: PORT_DOWN \
         mask: PORT_DOWN advertise: UNCHANGED"
    );
}

#[test]
fn group_and_meter_mod() {
    let gm = GroupMod {
        command: GroupModCommand::Add,
        group_type: GroupType::All,
        group_id: 1,
        buckets: vec![Bucket {
            weight: 0,
            watch_port: port::ANY,
            watch_group: OFPG_ANY,
            actions: vec![Action::Output {
                port: 2,
                max_len: 0,
            }],
        }],
    };
    assert_eq!(
        p13(1, M13::GroupMod(gm)),
        "OFPT_GROUP_MOD (OF1.3) (xid=0x1): ADD group_id=1,type=all,bucket=actions=output:2"
    );
    let mm = MeterMod {
        command: MeterModCommand::Add,
        flags: 1,
        meter_id: 1,
        bands: vec![
            MeterBand::Drop {
                rate: 1000,
                burst_size: 0,
            },
            MeterBand::DscpRemark {
                rate: 10,
                burst_size: 0,
                prec_level: 1,
            },
        ],
    };
    assert_eq!(
        p13(1, M13::MeterMod(mm)),
        "OFPT_METER_MOD (OF1.3) (xid=0x1): ADD meter=1 kbps bands=type=drop rate=1000 \
         type=dscp_remark rate=10 prec_level=1"
    );
}

#[test]
fn role_async_table_mod_queue_experimenter() {
    let r = m13::Role {
        role: m13::ControllerRole::Master,
        generation_id: 7,
    };
    assert_eq!(
        p13(1, M13::RoleRequest(r)),
        "OFPT_ROLE_REQUEST (OF1.3) (xid=0x1): role=master generation_id=7"
    );
    let a = m13::AsyncConfig {
        packet_in_mask: [3, 0],
        port_status_mask: [7, 7],
        flow_removed_mask: [0xf, 0],
    };
    assert_eq!(
        p13(1, M13::SetAsync(a)),
        "OFPT_SET_ASYNC (OF1.3) (xid=0x1): master: PACKET_IN: no_match action PORT_STATUS: add delete modify FLOW_REMOVED: idle hard delete group_delete\n slave: PACKET_IN: (off) PORT_STATUS: add delete modify FLOW_REMOVED: (off)"
    );
    assert_eq!(
        p13(
            1,
            M13::TableMod(m13::TableMod {
                table_id: 1,
                config: 3
            })
        ),
        "OFPT_TABLE_MOD (OF1.3) (xid=0x1): table_id=1 config=0x3"
    );
    assert_eq!(
        p13(1, M13::QueueGetConfigRequest(port::ANY)),
        "OFPT_QUEUE_GET_CONFIG_REQUEST (OF1.3) (xid=0x1): port=ANY"
    );
    let q = m13::QueueGetConfigReply {
        port: 1,
        queues: vec![m13::PacketQueue {
            queue_id: 2,
            port: 1,
            properties: vec![
                m13::QueueProperty::MinRate(500),
                m13::QueueProperty::MaxRate(2000),
            ],
        }],
    };
    assert_eq!(
        p13(1, M13::QueueGetConfigReply(q)),
        "OFPT_QUEUE_GET_CONFIG_REPLY (OF1.3) (xid=0x1): port=1\n queue 2: min_rate:50.0% max_rate:disabled"
    );
    let e = m13::Experimenter {
        experimenter: 0x2320,
        exp_type: 9,
        data: vec![0xff],
    };
    assert_eq!(
        p13(1, M13::Experimenter(e)),
        "OFPT_EXPERIMENTER (OF1.3) (xid=0x1): experimenter=0x00002320 exp_type=9 data_len=1 data=0xff"
    );
}

fn mp_req(body: QB) -> String {
    p13(
        1,
        M13::MultipartRequest(MultipartRequest { flags: 0, body }),
    )
}

fn mp_rep(flags: u16, body: RB) -> String {
    p13(1, M13::MultipartReply(MultipartReply { flags, body }))
}

#[test]
fn multipart_requests() {
    assert_eq!(
        mp_req(QB::Desc),
        "OFPT_MULTIPART_REQUEST (OF1.3) (xid=0x1): OFPMP_DESC"
    );
    assert_eq!(
        mp_req(QB::Flow(FlowStatsRequest {
            table_id: 0xff,
            out_port: 3,
            out_group: OFPG_ANY,
            cookie: 0,
            cookie_mask: 0,
            match_: ip_match(),
        })),
        "OFPT_MULTIPART_REQUEST (OF1.3) (xid=0x1): OFPMP_FLOW out_port=3 ip,nw_src=10.0.0.0/8"
    );
    assert_eq!(
        mp_req(QB::PortStats { port_no: port::ANY }),
        "OFPT_MULTIPART_REQUEST (OF1.3) (xid=0x1): OFPMP_PORT_STATS port_no=ANY"
    );
    assert_eq!(
        mp_req(QB::Queue {
            port_no: 1,
            queue_id: 0xffff_ffff
        }),
        "OFPT_MULTIPART_REQUEST (OF1.3) (xid=0x1): OFPMP_QUEUE port=1 queue=ALL"
    );
    assert_eq!(
        mp_req(QB::Group {
            group_id: 0xffff_fffc
        }),
        "OFPT_MULTIPART_REQUEST (OF1.3) (xid=0x1): OFPMP_GROUP group_id=all"
    );
    assert_eq!(
        mp_req(QB::MeterConfig { meter_id: 5 }),
        "OFPT_MULTIPART_REQUEST (OF1.3) (xid=0x1): OFPMP_METER_CONFIG meter=5"
    );
    assert_eq!(
        mp_req(QB::Experimenter {
            experimenter: 1,
            exp_type: 2,
            data: vec![]
        }),
        "OFPT_MULTIPART_REQUEST (OF1.3) (xid=0x1): OFPMP_EXPERIMENTER experimenter=0x00000001 exp_type=2 data_len=0"
    );
}

#[test]
fn multipart_replies() {
    let flow = FlowStats {
        table_id: 0,
        duration_sec: 1,
        duration_nsec: 234_000_000,
        priority: 100,
        idle_timeout: 0,
        hard_timeout: 0,
        flags: 0,
        cookie: 0,
        packet_count: 0,
        byte_count: 0,
        match_: ip_match(),
        instructions: flow_mod().instructions,
    };
    assert_eq!(
        mp_rep(OFPMPF_REPLY_MORE, RB::Flow(vec![flow.clone(), flow])),
        "OFPT_MULTIPART_REPLY (OF1.3) (xid=0x1): OFPMP_FLOW flags=[more]\n \
         cookie=0x0, duration=1.234s, table=0, n_packets=0, n_bytes=0, priority=100,ip,nw_src=10.0.0.0/8 actions=output:2\n \
         cookie=0x0, duration=1.234s, table=0, n_packets=0, n_bytes=0, priority=100,ip,nw_src=10.0.0.0/8 actions=output:2"
    );
    assert_eq!(
        mp_rep(
            0,
            RB::Aggregate(AggregateStats {
                packet_count: 1,
                byte_count: 2,
                flow_count: 3
            })
        ),
        "OFPT_MULTIPART_REPLY (OF1.3) (xid=0x1): OFPMP_AGGREGATE packet_count=1 byte_count=2 flow_count=3"
    );
    let ps = PortStats {
        port_no: 1,
        rx_packets: 10,
        tx_packets: 20,
        rx_bytes: 100,
        tx_bytes: 200,
        rx_crc_err: u64::MAX,
        ..Default::default()
    };
    assert_eq!(
        mp_rep(0, RB::PortStats(vec![ps])),
        "OFPT_MULTIPART_REPLY (OF1.3) (xid=0x1): OFPMP_PORT_STATS 1 ports\n \
         port 1: rx pkts=10, bytes=100, drop=0, errs=0, frame=0, over=0, crc=? \
         tx pkts=20, bytes=200, drop=0, errs=0, coll=0 duration=0s"
    );
    assert_eq!(
        mp_rep(
            0,
            RB::Table(vec![TableStats {
                table_id: 0,
                active_count: 1,
                lookup_count: 2,
                matched_count: 3
            }])
        ),
        "OFPT_MULTIPART_REPLY (OF1.3) (xid=0x1): OFPMP_TABLE\n table 0: active=1, lookup=2, matched=3"
    );
    let s = mp_rep(
        0,
        RB::Queue(vec![QueueStats {
            port_no: 1,
            queue_id: 2,
            tx_bytes: 3,
            tx_packets: 4,
            tx_errors: 5,
            duration_sec: 6,
            duration_nsec: 0,
        }]),
    );
    assert!(
        s.ends_with("\n port 1 queue 2: bytes=3, pkts=4, errors=5, duration=6s"),
        "{s}"
    );
    let s = mp_rep(
        0,
        RB::Group(vec![GroupStats {
            group_id: 1,
            ref_count: 2,
            packet_count: 3,
            byte_count: 4,
            duration_sec: 5,
            duration_nsec: 0,
            bucket_stats: vec![Default::default()],
        }]),
    );
    assert!(
        s.ends_with("\n group_id=1,duration=5s,ref_count=2,packet_count=3,byte_count=4,bucket0:packet_count=0,byte_count=0"),
        "{s}"
    );
    let s = mp_rep(
        0,
        RB::Meter(vec![MeterStats {
            meter_id: 1,
            flow_count: 2,
            packet_in_count: 3,
            byte_in_count: 4,
            duration_sec: 5,
            duration_nsec: 0,
            band_stats: vec![Default::default()],
        }]),
    );
    assert!(
        s.ends_with("\n meter:1 flow_count:2 packet_in_count:3 byte_in_count:4 duration:5s bands: 0: packet_count:0 byte_count:0"),
        "{s}"
    );
    let s = mp_rep(
        0,
        RB::Desc(Desc {
            mfr_desc: "Acme".into(),
            hw_desc: "hw".into(),
            sw_desc: "sw".into(),
            serial_num: "1".into(),
            dp_desc: "dp".into(),
        }),
    );
    assert!(
        s.contains("\n Manufacturer: Acme\n Hardware: hw\n Software: sw"),
        "{s}"
    );
    let s = mp_rep(0, RB::PortDesc(vec![port13()]));
    assert!(s.ends_with("OFPMP_PORT_DESC\n 1(eth1): addr:aa:bb:cc:dd:ee:01 config: 0 state: LINK_DOWN current: 10GB-FD COPPER speed: 10000 Mbps now, 10000 Mbps max"), "{s}");
    let tf = TableFeatures {
        table_id: 0,
        name: "classifier".into(),
        metadata_match: 0,
        metadata_write: 0,
        config: 0,
        max_entries: 1000,
        properties: vec![
            TableFeatureProp::NextTables {
                miss: false,
                tables: vec![1, 2, 3, 5],
            },
            TableFeatureProp::Instructions {
                miss: true,
                ids: vec![FeatureId::Type(1), FeatureId::Type(4)],
            },
        ],
    };
    let s = mp_rep(0, RB::TableFeatures(vec![tf]));
    assert!(
        s.ends_with("\n table 0 (\"classifier\"): metadata: match=0x0 write=0x0 config=0x0 max_entries=1000 next_tables=1-3,5 instructions_miss=goto_table,apply_actions"),
        "{s}"
    );
}

#[test]
fn v10_messages() {
    let m = m10::Match {
        wildcards: m10::match10::wildcards::ALL & !m10::match10::wildcards::IN_PORT,
        in_port: 1,
        ..m10::Match::all()
    };
    let fm = m10::FlowMod {
        match_: m,
        cookie: 0,
        command: m10::FlowModCommand::Add,
        idle_timeout: 0,
        hard_timeout: 0,
        priority: 100,
        buffer_id: 0xffff_ffff,
        out_port: m10::port::ofpp::NONE,
        flags: 0,
        actions: vec![
            m10::Action::Output {
                port: 2,
                max_len: 0,
            },
            m10::Action::SetVlanVid(5),
            m10::Action::StripVlan,
            m10::Action::SetDlSrc(MacAddr([0, 0, 0, 0, 0, 1])),
            m10::Action::SetNwSrc(Ipv4Addr::new(1, 2, 3, 4)),
            m10::Action::SetTpDst(80),
            m10::Action::Enqueue {
                port: 1,
                queue_id: 2,
            },
            m10::Action::Vendor {
                vendor: 0x2320,
                data: vec![0, 1],
            },
        ],
    };
    assert_eq!(
        p10(1, M10::FlowMod(fm)),
        "OFPT_FLOW_MOD (OF1.0) (xid=0x1): ADD priority=100,in_port=1 actions=output:2,\
         mod_vlan_vid:5,strip_vlan,mod_dl_src:00:00:00:00:00:01,mod_nw_src:1.2.3.4,\
         mod_tp_dst:80,enqueue:1:2,vendor(0x2320,data=0x0001)"
    );
    assert_eq!(p10(2, M10::Hello(vec![])), "OFPT_HELLO (OF1.0) (xid=0x2):");
    assert_eq!(
        p10(
            2,
            M10::Error(m10::ErrorMsg {
                err_type: 1,
                code: 6,
                data: vec![]
            })
        ),
        "OFPT_ERROR (OF1.0) (xid=0x2): OFPBRC_BAD_LEN data_len=0"
    );
    assert_eq!(
        p10(
            2,
            M10::Vendor(m10::Vendor {
                vendor: 0x2320,
                data: vec![]
            })
        ),
        "OFPT_VENDOR (OF1.0) (xid=0x2): vendor=0x00002320 data_len=0"
    );
    let pi = m10::PacketIn {
        buffer_id: 1,
        total_len: 60,
        in_port: 3,
        reason: m10::PacketInReason::Action,
        data: vec![],
    };
    assert_eq!(
        p10(3, M10::PacketIn(pi)),
        "OFPT_PACKET_IN (OF1.0) (xid=0x3): total_len=60 in_port=3 (via action) data_len=0 buffer=0x00000001"
    );
    let port = m10::PhyPort {
        port_no: m10::port::ofpp::LOCAL,
        hw_addr: MacAddr([0, 0, 0, 0, 0, 9]),
        name: "br0".into(),
        config: 1,
        state: 1,
        curr: 0,
        advertised: 0,
        supported: 0,
        peer: 0,
    };
    let fr = m10::FeaturesReply {
        datapath_id: 2,
        n_buffers: 256,
        n_tables: 1,
        capabilities: 1,
        actions: 1,
        ports: vec![port],
    };
    assert_eq!(
        p10(4, M10::FeaturesReply(fr)),
        "OFPT_FEATURES_REPLY (OF1.0) (xid=0x4): dpid:0000000000000002 n_tables:1, n_buffers:256 \
         capabilities: FLOW_STATS actions: output\n LOCAL(br0): addr:00:00:00:00:00:09 config: PORT_DOWN state: LINK_DOWN"
    );
    assert_eq!(
        p10(
            5,
            M10::SetConfig(m10::SwitchConfig {
                flags: 1,
                miss_send_len: 128
            })
        ),
        "OFPT_SET_CONFIG (OF1.0) (xid=0x5): frags=drop miss_send_len=128"
    );
    let fr = m10::FlowRemoved {
        match_: m10::Match::all(),
        cookie: 0,
        priority: 5,
        reason: m10::FlowRemovedReason::HardTimeout,
        duration_sec: 1,
        duration_nsec: 0,
        idle_timeout: 0,
        packet_count: 0,
        byte_count: 0,
    };
    assert_eq!(
        p10(6, M10::FlowRemoved(fr)),
        "OFPT_FLOW_REMOVED (OF1.0) (xid=0x6): priority=5 reason=hard duration1s idle0 pkts0 bytes0"
    );
}

#[test]
fn v10_stats() {
    use m10::stats::{self, StatsReply, StatsReplyBody, StatsRequest, StatsRequestBody};
    let s = p10(
        1,
        M10::StatsRequest(StatsRequest {
            flags: 0,
            body: StatsRequestBody::Port(stats::PortStatsRequest {
                port_no: m10::port::ofpp::NONE,
            }),
        }),
    );
    assert_eq!(
        s,
        "OFPT_STATS_REQUEST (OF1.0) (xid=0x1): OFPST_PORT port_no=ANY"
    );
    let fs = stats::FlowStats {
        table_id: 0,
        match_: m10::Match::all(),
        duration_sec: 2,
        duration_nsec: 0,
        priority: 7,
        idle_timeout: 0,
        hard_timeout: 0,
        cookie: 0,
        packet_count: 1,
        byte_count: 2,
        actions: vec![m10::Action::Output {
            port: 1,
            max_len: 0,
        }],
    };
    let s = p10(
        2,
        M10::StatsReply(StatsReply {
            flags: 1,
            body: StatsReplyBody::Flow(vec![fs]),
        }),
    );
    assert_eq!(
        s,
        "OFPT_STATS_REPLY (OF1.0) (xid=0x2): OFPST_FLOW flags=[more]\n cookie=0x0, duration=2s, \
         table=0, n_packets=1, n_bytes=2, priority=7 actions=output:1"
    );
    let s = p10(
        3,
        M10::StatsReply(StatsReply {
            flags: 0,
            body: StatsReplyBody::Port(vec![stats::PortStats {
                port_no: 1,
                rx_packets: 1,
                tx_packets: 2,
                rx_bytes: 3,
                tx_bytes: 4,
                rx_dropped: 0,
                tx_dropped: 0,
                rx_errors: 0,
                tx_errors: 0,
                rx_frame_err: 0,
                rx_over_err: 0,
                rx_crc_err: 0,
                collisions: 0,
            }]),
        }),
    );
    assert!(
        s.ends_with("OFPST_PORT 1 ports\n port 1: rx pkts=1, bytes=3, drop=0, errs=0, frame=0, over=0, crc=0 tx pkts=2, bytes=4, drop=0, errs=0, coll=0"),
        "{s}"
    );
}

/// The head a frame must start with.
fn head_of(f: &Frame) -> String {
    let name = match &f.message {
        crate::Message::V13(m) => m.name(),
        crate::Message::V10(m) => m.name(),
    };
    format!("{name} ({}) (xid={:#x}):", version_name(f.version), f.xid)
}

proptest! {
    #[test]
    fn prints_every_v13_message(m in crate::v13::strategy::arb_message(), xid in any::<u32>()) {
        let f = Frame::v13(xid, m);
        let s = format_frame(&f);
        prop_assert!(s.starts_with(&head_of(&f)), "{}", s);
        prop_assert!(s.starts_with("OFPT_") && s.contains(" (OF1.3) "), "{}", s);
    }

    #[test]
    fn prints_every_v10_message(m in crate::v10::strategy::arb_message(), xid in any::<u32>()) {
        let f = Frame::v10(xid, m);
        let s = format_frame(&f);
        prop_assert!(s.starts_with(&head_of(&f)), "{}", s);
        prop_assert!(s.starts_with("OFPT_") && s.contains(" (OF1.0) "), "{}", s);
    }

    #[test]
    fn prints_every_multipart_request(r in crate::v13::multipart::strategy::arb_multipart_request()) {
        let name = r.body.name();
        let s = p13(1, M13::MultipartRequest(r));
        prop_assert!(s.starts_with("OFPT_MULTIPART_REQUEST (OF1.3) (xid=0x1): "), "{}", s);
        prop_assert!(s.contains(name), "{}", s);
    }

    #[test]
    fn prints_every_multipart_reply(r in crate::v13::multipart::strategy::arb_multipart_reply()) {
        let name = r.body.name();
        let s = p13(1, M13::MultipartReply(r));
        prop_assert!(s.starts_with("OFPT_MULTIPART_REPLY (OF1.3) (xid=0x1): "), "{}", s);
        prop_assert!(s.contains(name), "{}", s);
    }

    #[test]
    fn error_data_never_panics(data in proptest::collection::vec(any::<u8>(), 0..200)) {
        let s = p13(1, M13::Error(m13::ErrorMsg::Standard {
            kind: ErrorKind::BAD_REQUEST_BAD_LEN,
            data: data.clone(),
        }));
        prop_assert!(s.starts_with("OFPT_ERROR (OF1.3) (xid=0x1): OFPBRC_BAD_LEN "), "{}", s);
        let _ = packet::summary(&data);
    }
}
