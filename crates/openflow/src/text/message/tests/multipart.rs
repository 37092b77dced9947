//! The OpenFlow 1.3 multipart replies printed on one line: queue stats and table
//! features.

use super::*;

fn mp_rep(flags: u16, body: RB) -> String {
    p13(1, M13::MultipartReply(MultipartReply { flags, body }))
}

#[test]
fn queue_and_table_features_replies() {
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
            properties: Vec::new(),
        }]),
    );
    assert!(s.ends_with("\n port 1 queue 2: bytes=3, pkts=4, errors=5, duration=6s"), "{s}");
    let tf = TableFeatures {
        table_id: 0,
        name: "classifier".into(),
        metadata_match: 0,
        metadata_write: 0,
        config: 0,
        max_entries: 1000,
        properties: vec![
            TableFeatureProp::NextTables { miss: false, tables: vec![1, 2, 3, 5] },
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
