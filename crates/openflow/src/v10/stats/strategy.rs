//! proptest strategies for 1.0 stats requests and replies (names that survive
//! encoding; vendor data of any length).

use super::*;
use crate::model::counters::strategy::{arb_port_stats, arb_queue_stats};
use crate::v10::action10::strategy::arb_actions;
use crate::v10::match10::strategy::arb_match;
// `ofp_desc` is the same in both versions (`DescStats` is 1.3's `Desc`).
use crate::v13::multipart::strategy::arb_desc;
use proptest::prelude::*;

fn arb_vendor() -> impl Strategy<Value = (u32, Vec<u8>)> {
    (any::<u32>(), proptest::collection::vec(any::<u8>(), 0..24))
}

pub fn arb_stats_request() -> impl Strategy<Value = StatsRequest> {
    let body = prop_oneof![
        Just(StatsRequestBody::Desc),
        FlowStatsRequest::arb().prop_map(StatsRequestBody::Flow),
        FlowStatsRequest::arb().prop_map(StatsRequestBody::Aggregate),
        Just(StatsRequestBody::Table),
        PortStatsRequest::arb().prop_map(StatsRequestBody::Port),
        QueueStatsRequest::arb().prop_map(StatsRequestBody::Queue),
        Just(StatsRequestBody::PortDesc),
        arb_vendor().prop_map(|(vendor, data)| StatsRequestBody::Vendor { vendor, data }),
    ];
    (any::<u16>(), body).prop_map(|(flags, body)| StatsRequest { flags, body })
}

fn arb_flow_stats() -> impl Strategy<Value = FlowStats> {
    crate::model::flow_stats::strategy::arb_flow_stats(
        crate::OFP10_VERSION,
        arb_match(),
        arb_actions(),
    )
}

fn arb_table_stats() -> impl Strategy<Value = TableStats> {
    (any::<u8>(), "[a-z0-9_]{0,31}", any::<(u32, u32, u32)>(), any::<(u64, u64)>()).prop_map(
        |(table_id, name, (wildcards, max_entries, active_count), (l, m))| TableStats {
            table_id,
            name,
            wildcards: Some(wildcards),
            max_entries,
            active_count,
            lookup_count: l,
            matched_count: m,
        },
    )
}

pub fn arb_stats_reply() -> impl Strategy<Value = StatsReply> {
    use proptest::collection::vec;
    let body = prop_oneof![
        arb_desc().prop_map(StatsReplyBody::Desc),
        vec(arb_flow_stats(), 0..3).prop_map(StatsReplyBody::Flow),
        AggregateStats::arb().prop_map(StatsReplyBody::Aggregate),
        vec(arb_table_stats(), 0..3).prop_map(StatsReplyBody::Table),
        vec(arb_port_stats(OFP10_VERSION), 0..3).prop_map(StatsReplyBody::Port),
        vec(arb_queue_stats(OFP10_VERSION), 0..3).prop_map(StatsReplyBody::Queue),
        vec(crate::model::port::strategy::arb_port(OFP10_VERSION), 0..3)
            .prop_map(StatsReplyBody::PortDesc),
        arb_vendor()
            .prop_map(|(vendor, data)| StatsReplyBody::Vendor(VendorStats { vendor, data })),
    ];
    (any::<u16>(), body).prop_map(|(flags, body)| StatsReply { flags, body })
}
