//! OpenFlow 1.3 multipart requests and replies.

use super::*;

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
