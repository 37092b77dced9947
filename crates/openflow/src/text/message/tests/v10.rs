//! OpenFlow 1.0 messages and stats.

use super::*;

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
