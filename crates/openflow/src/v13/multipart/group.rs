//! Group statistics and descriptions: the `OFPMP_GROUP` reply element
//! (`ofp_group_stats` with its bucket counters), the `OFPMP_GROUP_DESC` reply element
//! (`ofp_group_desc`: a group's type and buckets) and the `OFPMP_GROUP_FEATURES` reply
//! (`ofp_group_features`).

use super::take_sized;
use crate::error::{ErrorKind, OfpError};
use crate::v13::group_mod::{Bucket, GroupType};
use crate::wire::{Reader, Writer};

/// Fixed part of `ofp_group_stats` before the bucket counters.
pub const GROUP_STATS_FIXED_LEN: usize = 40;
/// Length of `ofp_bucket_counter`.
pub const BUCKET_COUNTER_LEN: usize = 16;
/// Fixed part of `ofp_group_desc` before the buckets.
pub const GROUP_DESC_FIXED_LEN: usize = 8;
/// Length of `ofp_group_features`.
pub const GROUP_FEATURES_LEN: usize = 40;

record! {
    /// `ofp_bucket_counter`.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
    pub struct BucketCounter {
        pub packet_count: u64,
        pub byte_count: u64,
    }
}

/// `ofp_group_stats`: a group's counters and one counter pair per bucket.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct GroupStats {
    pub group_id: u32,
    pub ref_count: u32,
    pub packet_count: u64,
    pub byte_count: u64,
    pub duration_sec: u32,
    pub duration_nsec: u32,
    pub bucket_stats: Vec<BucketCounter>,
}

impl GroupStats {
    /// Reads one entry; `length` must be the fixed part plus whole bucket counters.
    pub fn decode(r: &mut Reader) -> Result<GroupStats, OfpError> {
        let mut s = take_sized(r, 0, GROUP_STATS_FIXED_LEN, "group stats")?;
        if !(s.remaining() - GROUP_STATS_FIXED_LEN).is_multiple_of(BUCKET_COUNTER_LEN) {
            return Err(OfpError::new(
                ErrorKind::BAD_REQUEST_BAD_LEN,
                format!(
                    "group stats length {} is not {GROUP_STATS_FIXED_LEN} plus whole \
                     {BUCKET_COUNTER_LEN}-byte bucket counters",
                    s.remaining()
                ),
            ));
        }
        s.skip(4)?;
        let group_id = s.u32()?;
        let ref_count = s.u32()?;
        s.skip(4)?;
        let mut g = GroupStats {
            group_id,
            ref_count,
            packet_count: s.u64()?,
            byte_count: s.u64()?,
            duration_sec: s.u32()?,
            duration_nsec: s.u32()?,
            bucket_stats: Vec::new(),
        };
        while !s.is_empty() {
            g.bucket_stats.push(BucketCounter::decode(&mut s)?);
        }
        Ok(g)
    }

    pub fn encode(&self, w: &mut Writer) {
        let start = w.len();
        w.u16(0);
        w.zeros(2);
        w.u32(self.group_id);
        w.u32(self.ref_count);
        w.zeros(4);
        w.u64(self.packet_count);
        w.u64(self.byte_count);
        w.u32(self.duration_sec);
        w.u32(self.duration_nsec);
        self.bucket_stats.iter().for_each(|b| b.encode(w));
        w.patch_len16(start, start);
    }
}

/// `ofp_group_desc`: a group's type, id and buckets.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GroupDesc {
    pub group_type: GroupType,
    pub group_id: u32,
    pub buckets: Vec<Bucket>,
}

impl GroupDesc {
    pub fn decode(r: &mut Reader) -> Result<GroupDesc, OfpError> {
        let mut s = take_sized(r, 0, GROUP_DESC_FIXED_LEN, "group desc")?;
        s.skip(2)?;
        let group_type = GroupType::from_u8(s.u8()?);
        s.skip(1)?;
        let group_id = s.u32()?;
        Ok(GroupDesc {
            group_type,
            group_id,
            buckets: Bucket::decode_list(&mut s)?,
        })
    }

    pub fn encode(&self, w: &mut Writer) {
        let start = w.len();
        w.u16(0);
        w.u8(self.group_type.to_u8());
        w.zeros(1);
        w.u32(self.group_id);
        Bucket::encode_list(&self.buckets, w);
        w.patch_len16(start, start);
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

/// `ofp_group_capabilities` bits.
pub mod group_capabilities {
    pub const SELECT_WEIGHT: u32 = 1 << 0;
    pub const SELECT_LIVENESS: u32 = 1 << 1;
    pub const CHAINING: u32 = 1 << 2;
    pub const CHAINING_CHECKS: u32 = 1 << 3;
}
