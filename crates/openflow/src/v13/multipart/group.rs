//! Group statistics and descriptions: the `OFPMP_GROUP` reply element
//! (`ofp_group_stats` with its bucket counters), the `OFPMP_GROUP_DESC` reply element
//! (`ofp_group_desc`: a group's type and buckets) and the `OFPMP_GROUP_FEATURES` reply
//! (`ofp_group_features`).

use crate::v13::group_mod::{Bucket, GroupType};

/// Fixed part of `ofp_group_stats` before the bucket counters.
pub const GROUP_STATS_FIXED_LEN: usize = GroupStats::WIRE_LEN;
/// Length of `ofp_bucket_counter`.
pub const BUCKET_COUNTER_LEN: usize = BucketCounter::WIRE_LEN;
/// Fixed part of `ofp_group_desc` before the buckets.
pub const GROUP_DESC_FIXED_LEN: usize = GroupDesc::WIRE_LEN;
/// Length of `ofp_group_features`.
pub const GROUP_FEATURES_LEN: usize = GroupFeatures::WIRE_LEN;

record! {
    /// `ofp_bucket_counter`.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
    pub struct BucketCounter {
        pub packet_count: u64,
        pub byte_count: u64,
    }
}

record! {
    /// `ofp_group_stats`: a group's counters and one counter pair per bucket (its
    /// `length` must be the fixed part plus whole bucket counters).
    #[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
    pub struct GroupStats [length at 0, fields at 4] {
        pub group_id: u32,
        pub ref_count: u32 [pad 4],
        pub packet_count: u64,
        pub byte_count: u64,
        pub duration_sec: u32,
        pub duration_nsec: u32,
        pub bucket_stats: Vec<BucketCounter> [list],
    }
}

record! {
    /// `ofp_group_desc`: a group's type, id and buckets.
    #[derive(Clone, Debug, PartialEq, Eq, Hash)]
    pub struct GroupDesc [length at 0, fields at 2] {
        pub group_type: GroupType [pad 1],
        pub group_id: u32,
        pub buckets: Vec<Bucket> [list],
    }
}

record! {
    /// `ofp_group_features`: supported group types and capabilities, and per type (indexed
    /// by `ofp_group_type`) the maximum number of groups and a bitmap of supported actions.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
    pub struct GroupFeatures {
        pub types: u32,
        pub capabilities: u32,
        pub max_groups: [u32; 4],
        pub actions: [u32; 4],
    }
}

spec_table! {
    /// `ofp_group_capabilities` bits.
    pub mod group_capabilities: u32 as bits {
        SELECT_WEIGHT, SELECT_LIVENESS, CHAINING, CHAINING_CHECKS,
    }
}
