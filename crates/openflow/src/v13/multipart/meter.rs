//! Meter statistics and configuration: the `OFPMP_METER` reply element
//! (`ofp_meter_stats` with per-band counters), the `OFPMP_METER_CONFIG` reply element
//! (`ofp_meter_config`: flags, id and bands) and the `OFPMP_METER_FEATURES` reply
//! (`ofp_meter_features`).

use crate::v13::meter_mod::MeterBand;

/// Fixed part of `ofp_meter_stats` before the band counters.
pub const METER_STATS_FIXED_LEN: usize = MeterStats::WIRE_LEN;
/// Length of `ofp_meter_band_stats`.
pub const METER_BAND_STATS_LEN: usize = MeterBandStats::WIRE_LEN;
/// Fixed part of `ofp_meter_config` before the bands.
pub const METER_CONFIG_FIXED_LEN: usize = MeterConfig::WIRE_LEN;
/// Length of `ofp_meter_features`.
pub const METER_FEATURES_LEN: usize = MeterFeatures::WIRE_LEN;

record! {
    /// `ofp_meter_band_stats`.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
    pub struct MeterBandStats {
        pub packet_band_count: u64,
        pub byte_band_count: u64,
    }
}

record! {
    /// `ofp_meter_stats`: a meter's counters and one counter pair per band (its `len`,
    /// after the id, must be the fixed part plus whole band counters).
    #[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
    pub struct MeterStats [length at 4] {
        pub meter_id: u32 [pad 8],
        pub flow_count: u32,
        pub packet_in_count: u64,
        pub byte_in_count: u64,
        pub duration_sec: u32,
        pub duration_nsec: u32,
        pub band_stats: Vec<MeterBandStats> [list],
    }
}

record! {
    /// `ofp_meter_config`: a meter's flags (`meter_flags`), id and bands.
    #[derive(Clone, Debug, PartialEq, Eq, Hash)]
    pub struct MeterConfig [length at 0, fields at 2] {
        pub flags: u16,
        pub meter_id: u32,
        pub bands: Vec<MeterBand> [list],
    }
}

record! {
    /// `ofp_meter_features`: meter limits and supported band types (bitmap indexed by
    /// `ofp_meter_band_type`) and capabilities (`meter_flags`).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
    pub struct MeterFeatures {
        pub max_meter: u32,
        pub band_types: u32,
        pub capabilities: u32,
        pub max_bands: u8,
        pub max_color: u8 [pad 2],
    }
}
