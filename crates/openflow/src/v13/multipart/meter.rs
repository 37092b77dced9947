//! Meter statistics and configuration: the `OFPMP_METER` reply element
//! (`ofp_meter_stats` with per-band counters), the `OFPMP_METER_CONFIG` reply element
//! (`ofp_meter_config`: flags, id and bands) and the `OFPMP_METER_FEATURES` reply
//! (`ofp_meter_features`).

use super::take_sized;
use crate::error::{ErrorKind, OfpError};
use crate::v13::meter_mod::MeterBand;
use crate::wire::{Reader, Writer};

/// Fixed part of `ofp_meter_stats` before the band counters.
pub const METER_STATS_FIXED_LEN: usize = 40;
/// Length of `ofp_meter_band_stats`.
pub const METER_BAND_STATS_LEN: usize = 16;
/// Fixed part of `ofp_meter_config` before the bands.
pub const METER_CONFIG_FIXED_LEN: usize = 8;
/// Length of `ofp_meter_features`.
pub const METER_FEATURES_LEN: usize = 16;

record! {
    /// `ofp_meter_band_stats`.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
    pub struct MeterBandStats {
        pub packet_band_count: u64,
        pub byte_band_count: u64,
    }
}

/// `ofp_meter_stats`: a meter's counters and one counter pair per band.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct MeterStats {
    pub meter_id: u32,
    pub flow_count: u32,
    pub packet_in_count: u64,
    pub byte_in_count: u64,
    pub duration_sec: u32,
    pub duration_nsec: u32,
    pub band_stats: Vec<MeterBandStats>,
}

impl MeterStats {
    /// Reads one entry; its `len` (at offset 4) must be the fixed part plus whole band
    /// counters.
    pub fn decode(r: &mut Reader) -> Result<MeterStats, OfpError> {
        let mut s = take_sized(r, 4, METER_STATS_FIXED_LEN, "meter stats")?;
        if !(s.remaining() - METER_STATS_FIXED_LEN).is_multiple_of(METER_BAND_STATS_LEN) {
            return Err(OfpError::new(
                ErrorKind::BAD_REQUEST_BAD_LEN,
                format!(
                    "meter stats length {} is not {METER_STATS_FIXED_LEN} plus whole \
                     {METER_BAND_STATS_LEN}-byte band counters",
                    s.remaining()
                ),
            ));
        }
        let meter_id = s.u32()?;
        s.skip(2 + 6)?;
        let mut m = MeterStats {
            meter_id,
            flow_count: s.u32()?,
            packet_in_count: s.u64()?,
            byte_in_count: s.u64()?,
            duration_sec: s.u32()?,
            duration_nsec: s.u32()?,
            band_stats: Vec::new(),
        };
        while !s.is_empty() {
            m.band_stats.push(MeterBandStats::decode(&mut s)?);
        }
        Ok(m)
    }

    pub fn encode(&self, w: &mut Writer) {
        let start = w.len();
        w.u32(self.meter_id);
        w.u16(0);
        w.zeros(6);
        w.u32(self.flow_count);
        w.u64(self.packet_in_count);
        w.u64(self.byte_in_count);
        w.u32(self.duration_sec);
        w.u32(self.duration_nsec);
        self.band_stats.iter().for_each(|b| b.encode(w));
        w.patch_len16(start + 4, start);
    }
}

/// `ofp_meter_config`: a meter's flags (`meter_flags`), id and bands.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MeterConfig {
    pub flags: u16,
    pub meter_id: u32,
    pub bands: Vec<MeterBand>,
}

impl MeterConfig {
    pub fn decode(r: &mut Reader) -> Result<MeterConfig, OfpError> {
        let mut s = take_sized(r, 0, METER_CONFIG_FIXED_LEN, "meter config")?;
        s.skip(2)?;
        let flags = s.u16()?;
        let meter_id = s.u32()?;
        Ok(MeterConfig {
            flags,
            meter_id,
            bands: MeterBand::decode_list(&mut s)?,
        })
    }

    pub fn encode(&self, w: &mut Writer) {
        let start = w.len();
        w.u16(0);
        w.u16(self.flags);
        w.u32(self.meter_id);
        MeterBand::encode_list(&self.bands, w);
        w.patch_len16(start, start);
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
