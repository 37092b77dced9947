//! OpenFlow 1.3 messages other than multipart.

use super::*;

#[test]
fn hello_and_empty_bodies() {
    let h = m13::Hello::with_versions(&[1, 4]);
    assert_eq!(p13(1, M13::Hello(h)), "OFPT_HELLO (OF1.3) (xid=0x1): version bitmap: 0x01, 0x04");
    let bodiless = [
        (M13::BarrierRequest, "OFPT_BARRIER_REQUEST"),
        (M13::BarrierReply, "OFPT_BARRIER_REPLY"),
        (M13::FeaturesRequest, "OFPT_FEATURES_REQUEST"),
        (M13::GetConfigRequest, "OFPT_GET_CONFIG_REQUEST"),
        (M13::GetAsyncRequest, "OFPT_GET_ASYNC_REQUEST"),
    ];
    for (m, name) in bodiless {
        assert_eq!(p13(4, m), format!("{name} (OF1.3) (xid=0x4):"));
    }
    // A hello of another version keeps its number in the head.
    let f = Frame {
        version: 5,
        xid: 9,
        message: crate::Message::V13(M13::Hello(m13::Hello::with_versions(&[4, 5]))),
    };
    assert_eq!(format_frame(&f), "OFPT_HELLO (OF1.4) (xid=0x9): version bitmap: 0x04, 0x05");
}

#[test]
fn role_async_table_mod_queue_experimenter() {
    let r = m13::Role { role: m13::ControllerRole::Master, generation_id: 7 };
    assert_eq!(
        p13(1, M13::RoleRequest(r)),
        "OFPT_ROLE_REQUEST (OF1.3) (xid=0x1): role=master generation_id=7"
    );
    let a = m13::AsyncConfig {
        packet_in_mask: [3, 0],
        port_status_mask: [7, 7],
        flow_removed_mask: [0xf, 0],
        ..m13::AsyncConfig::default()
    };
    assert_eq!(
        p13(1, M13::SetAsync(a)),
        "OFPT_SET_ASYNC (OF1.3) (xid=0x1): master: PACKET_IN: no_match action PORT_STATUS: add delete modify FLOW_REMOVED: idle hard delete group_delete\n slave: PACKET_IN: (off) PORT_STATUS: add delete modify FLOW_REMOVED: (off)"
    );
    assert_eq!(
        p13(1, M13::TableMod(m13::TableMod { table_id: 1, config: 3, properties: vec![] })),
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
            properties: vec![m13::QueueProperty::MinRate(500), m13::QueueProperty::MaxRate(2000)],
        }],
    };
    assert_eq!(
        p13(1, M13::QueueGetConfigReply(q)),
        "OFPT_QUEUE_GET_CONFIG_REPLY (OF1.3) (xid=0x1): port=1\n queue 2: min_rate:50.0% max_rate:disabled"
    );
    let e = m13::Experimenter { experimenter: 0x2320, exp_type: 9, data: vec![0xff] };
    assert_eq!(
        p13(1, M13::Experimenter(e)),
        "OFPT_EXPERIMENTER (OF1.3) (xid=0x1): experimenter=0x00002320 exp_type=9 data_len=1 data=0xff"
    );
}
