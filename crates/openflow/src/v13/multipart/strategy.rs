//! proptest strategies for multipart requests and replies, covering every body type.

use super::*;
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

pub fn arb_request_body() -> impl Strategy<Value = MultipartRequestBody> {
    use MultipartRequestBody as B;
    prop_oneof![
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
    ]
}

pub fn arb_multipart_request() -> impl Strategy<Value = MultipartRequest> {
    (any::<u16>(), arb_request_body()).prop_map(|(flags, body)| MultipartRequest { flags, body })
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

pub fn arb_flow_stats() -> impl Strategy<Value = FlowStats> {
    crate::model::flow_stats::strategy::arb_flow_stats(
        crate::OFP13_VERSION,
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

pub fn arb_port_stats() -> impl Strategy<Value = PortStats> {
    crate::model::counters::strategy::arb_port_stats(crate::OFP13_VERSION)
}

pub fn arb_queue_stats() -> impl Strategy<Value = QueueStats> {
    crate::model::counters::strategy::arb_queue_stats(crate::OFP13_VERSION)
}

pub fn arb_reply_body() -> impl Strategy<Value = MultipartReplyBody> {
    use MultipartReplyBody as B;
    prop_oneof![
        arb_desc().prop_map(B::Desc),
        vec(arb_flow_stats(), 0..3).prop_map(B::Flow),
        AggregateStats::arb().prop_map(B::Aggregate),
        vec(arb_table_stats(), 0..4).prop_map(B::Table),
        vec(arb_port_stats(), 0..3).prop_map(B::PortStats),
        vec(arb_queue_stats(), 0..4).prop_map(B::Queue),
        vec(GroupStats::arb(), 0..3).prop_map(B::Group),
        vec(GroupDesc::arb(), 0..3).prop_map(B::GroupDesc),
        GroupFeatures::arb().prop_map(B::GroupFeatures),
        vec(MeterStats::arb(), 0..3).prop_map(B::Meter),
        vec(MeterConfig::arb(), 0..3).prop_map(B::MeterConfig),
        MeterFeatures::arb().prop_map(B::MeterFeatures),
        vec(arb_table_features(), 0..3).prop_map(B::TableFeatures),
        vec(crate::model::port::strategy::arb_port(crate::OFP13_VERSION), 0..3)
            .prop_map(B::PortDesc),
        Experimenter::arb().prop_map(B::Experimenter),
    ]
}

pub fn arb_multipart_reply() -> impl Strategy<Value = MultipartReply> {
    (any::<u16>(), arb_reply_body()).prop_map(|(flags, body)| MultipartReply { flags, body })
}
