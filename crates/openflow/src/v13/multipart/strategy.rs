//! proptest strategies for multipart requests and replies, covering every body type of
//! a version: `*_in(version)` for 1.3 or 1.4 frames, the plain ones for 1.3 frames.

use super::*;
use crate::header::OFP14_VERSION;
use crate::instruction::strategy::arb_instruction;
use crate::match13::strategy::arb_match;
use crate::v13::table_features::strategy::arb_table_features;
use proptest::collection::vec;
use proptest::prelude::*;

pub fn arb_flow_stats_request() -> impl Strategy<Value = FlowStatsRequest> {
    (any::<u8>(), any::<u32>(), any::<u32>(), any::<u64>(), any::<u64>(), arb_match()).prop_map(
        |(table_id, out_port, out_group, cookie, cookie_mask, match_)| FlowStatsRequest {
            table_id,
            out_port,
            out_group,
            cookie,
            cookie_mask,
            match_,
        },
    )
}

/// The request bodies of `version`'s frames (1.4's own types from 1.4 on).
pub fn arb_request_body_in(version: u8) -> BoxedStrategy<MultipartRequestBody> {
    use MultipartRequestBody as B;
    let v13 = prop_oneof![
        Just(B::Desc),
        arb_flow_stats_request().prop_map(B::Flow),
        arb_flow_stats_request().prop_map(B::Aggregate),
        Just(B::Table),
        any::<u32>().prop_map(|port_no| B::PortStats { port_no }),
        (any::<u32>(), any::<u32>()).prop_map(|(port_no, queue_id)| B::Queue { port_no, queue_id }),
        any::<u32>().prop_map(|group_id| B::Group { group_id }),
        Just(B::GroupDesc),
        Just(B::GroupFeatures),
        any::<u32>().prop_map(|meter_id| B::Meter { meter_id }),
        any::<u32>().prop_map(|meter_id| B::MeterConfig { meter_id }),
        Just(B::MeterFeatures),
        vec(arb_table_features(), 0..3).prop_map(B::TableFeatures),
        Just(B::PortDesc),
        Experimenter::arb().prop_map(B::Experimenter),
    ];
    if version < OFP14_VERSION {
        return v13.boxed();
    }
    prop_oneof![
        6 => v13,
        1 => Just(B::TableDesc),
        1 => (any::<u32>(), any::<u32>())
            .prop_map(|(port_no, queue_id)| B::QueueDesc { port_no, queue_id }),
        1 => flow_monitor::strategy::arb_flow_monitor_request().prop_map(B::FlowMonitor),
    ]
    .boxed()
}

/// Requests of 1.3 frames.
pub fn arb_multipart_request() -> impl Strategy<Value = MultipartRequest> {
    arb_multipart_request_in(OFP13_VERSION)
}

/// Requests of `version`'s frames.
pub fn arb_multipart_request_in(version: u8) -> impl Strategy<Value = MultipartRequest> {
    (any::<u16>(), arb_request_body_in(version))
        .prop_map(|(flags, body)| MultipartRequest { flags, body })
}

pub fn arb_desc() -> impl Strategy<Value = Desc> {
    let s = || "[ -~]{0,40}";
    (s(), s(), s(), "[ -~]{0,32}", s()).prop_map(
        |(mfr_desc, hw_desc, sw_desc, serial_num, dp_desc)| Desc {
            mfr_desc,
            hw_desc,
            sw_desc,
            serial_num,
            dp_desc,
        },
    )
}

/// Flow stats of `version`'s frames (1.4's with an importance).
pub fn arb_flow_stats_in(version: u8) -> impl Strategy<Value = FlowStats> {
    crate::model::flow_stats::strategy::arb_flow_stats(
        version,
        arb_match(),
        vec(arb_instruction(), 0..4),
    )
}

pub fn arb_table_stats() -> impl Strategy<Value = TableStats> {
    (any::<u8>(), any::<u32>(), any::<u64>(), any::<u64>()).prop_map(
        |(table_id, active_count, lookup_count, matched_count)| TableStats {
            name: String::new(),
            wildcards: None,
            max_entries: 0,
            table_id,
            active_count,
            lookup_count,
            matched_count,
        },
    )
}

/// The reply bodies of `version`'s frames (1.4's own types from 1.4 on; port
/// descriptions as the port codec gives them for `version`).
pub fn arb_reply_body_in(version: u8) -> BoxedStrategy<MultipartReplyBody> {
    use crate::model::counters::strategy::{arb_port_stats, arb_queue_stats};
    use MultipartReplyBody as B;
    let v13 = prop_oneof![
        arb_desc().prop_map(B::Desc),
        vec(arb_flow_stats_in(version), 0..3).prop_map(B::Flow),
        AggregateStats::arb().prop_map(B::Aggregate),
        vec(arb_table_stats(), 0..4).prop_map(B::Table),
        vec(arb_port_stats(version), 0..3).prop_map(B::PortStats),
        vec(arb_queue_stats(version), 0..4).prop_map(B::Queue),
        vec(GroupStats::arb(), 0..3).prop_map(B::Group),
        vec(GroupDesc::arb(), 0..3).prop_map(B::GroupDesc),
        GroupFeatures::arb().prop_map(B::GroupFeatures),
        vec(MeterStats::arb(), 0..3).prop_map(B::Meter),
        vec(MeterConfig::arb(), 0..3).prop_map(B::MeterConfig),
        MeterFeatures::arb().prop_map(B::MeterFeatures),
        vec(arb_table_features(), 0..3).prop_map(B::TableFeatures),
        vec(crate::model::port::strategy::arb_port(version), 0..3).prop_map(B::PortDesc),
        Experimenter::arb().prop_map(B::Experimenter),
    ];
    if version < OFP14_VERSION {
        return v13.boxed();
    }
    prop_oneof![
        5 => v13,
        1 => vec(crate::v13::switch_config::strategy::arb_table_desc(), 0..3).prop_map(B::TableDesc),
        1 => vec(queue_desc::strategy::arb_queue_desc(), 0..3).prop_map(B::QueueDesc),
        1 => vec(flow_monitor::strategy::arb_flow_update(), 0..3).prop_map(B::FlowMonitor),
    ]
    .boxed()
}

/// Replies of 1.3 frames.
pub fn arb_multipart_reply() -> impl Strategy<Value = MultipartReply> {
    arb_multipart_reply_in(OFP13_VERSION)
}

/// Replies of `version`'s frames.
pub fn arb_multipart_reply_in(version: u8) -> impl Strategy<Value = MultipartReply> {
    (any::<u16>(), arb_reply_body_in(version))
        .prop_map(|(flags, body)| MultipartReply { flags, body })
}
