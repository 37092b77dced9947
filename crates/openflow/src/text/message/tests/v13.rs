//! OpenFlow 1.3 messages other than multipart.

use super::*;

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
