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

/// `ofp_meter_band_stats`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct MeterBandStats {
    pub packet_band_count: u64,
    pub byte_band_count: u64,
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
            m.band_stats.push(MeterBandStats {
                packet_band_count: s.u64()?,
                byte_band_count: s.u64()?,
            });
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
        for b in &self.band_stats {
            w.u64(b.packet_band_count);
            w.u64(b.byte_band_count);
        }
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
        let mut bands = Vec::new();
        while !s.is_empty() {
            bands.push(decode_band(&mut s)?);
        }
        Ok(MeterConfig {
            flags,
            meter_id,
            bands,
        })
    }

    pub fn encode(&self, w: &mut Writer) {
        let start = w.len();
        w.u16(0);
        w.u16(self.flags);
        w.u32(self.meter_id);
        for b in &self.bands {
            encode_band(b, w);
        }
        w.patch_len16(start, start);
    }
}

/// `ofp_meter_features`: meter limits and supported band types (bitmap indexed by
/// `ofp_meter_band_type`) and capabilities (`meter_flags`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct MeterFeatures {
    pub max_meter: u32,
    pub band_types: u32,
    pub capabilities: u32,
    pub max_bands: u8,
    pub max_color: u8,
}

impl MeterFeatures {
    pub fn decode(r: &mut Reader) -> Result<MeterFeatures, OfpError> {
        let f = MeterFeatures {
            max_meter: r.u32()?,
            band_types: r.u32()?,
            capabilities: r.u32()?,
            max_bands: r.u8()?,
            max_color: r.u8()?,
        };
        r.skip(2)?;
        Ok(f)
    }

    pub fn encode(&self, w: &mut Writer) {
        w.u32(self.max_meter);
        w.u32(self.band_types);
        w.u32(self.capabilities);
        w.u8(self.max_bands);
        w.u8(self.max_color);
        w.zeros(2);
    }
}

/// `ofp_meter_band_type` numbers.
const OFPMBT_DROP: u16 = 1;
const OFPMBT_DSCP_REMARK: u16 = 2;
const OFPMBT_EXPERIMENTER: u16 = 0xffff;
/// Length of a drop or DSCP-remark band, and the fixed part of an experimenter band.
const BAND_LEN: usize = 16;

/// Reads one meter band (`type:u16, len:u16, rate:u32, burst_size:u32`, then the
/// type's tail) of a meter configuration.
fn decode_band(r: &mut Reader) -> Result<MeterBand, OfpError> {
    let ty = r.peek_u16(0)?;
    let mut s = take_sized(r, 2, BAND_LEN, "meter band")?;
    s.skip(4)?;
    let rate = s.u32()?;
    let burst_size = s.u32()?;
    let band = match ty {
        OFPMBT_DROP => {
            s.skip(4)?;
            MeterBand::Drop { rate, burst_size }
        }
        OFPMBT_DSCP_REMARK => {
            let prec_level = s.u8()?;
            s.skip(3)?;
            MeterBand::DscpRemark {
                rate,
                burst_size,
                prec_level,
            }
        }
        OFPMBT_EXPERIMENTER => MeterBand::Experimenter {
            rate,
            burst_size,
            experimenter: s.u32()?,
            data: s.take_rest().to_vec(),
        },
        _ => {
            return Err(OfpError::new(
                ErrorKind::METER_MOD_FAILED_BAD_BAND,
                format!("unknown meter band type {ty}"),
            ))
        }
    };
    if !s.is_empty() {
        return Err(OfpError::new(
            ErrorKind::BAD_REQUEST_BAD_LEN,
            format!(
                "meter band type {ty} has {} bytes past its body",
                s.remaining()
            ),
        ));
    }
    Ok(band)
}

fn encode_band(b: &MeterBand, w: &mut Writer) {
    let start = w.len();
    let (ty, rate, burst_size) = match b {
        MeterBand::Drop { rate, burst_size } => (OFPMBT_DROP, rate, burst_size),
        MeterBand::DscpRemark {
            rate, burst_size, ..
        } => (OFPMBT_DSCP_REMARK, rate, burst_size),
        MeterBand::Experimenter {
            rate, burst_size, ..
        } => (OFPMBT_EXPERIMENTER, rate, burst_size),
    };
    w.u16(ty);
    w.u16(0);
    w.u32(*rate);
    w.u32(*burst_size);
    match b {
        MeterBand::Drop { .. } => w.zeros(4),
        MeterBand::DscpRemark { prec_level, .. } => {
            w.u8(*prec_level);
            w.zeros(3);
        }
        MeterBand::Experimenter {
            experimenter, data, ..
        } => {
            w.u32(*experimenter);
            w.bytes(data);
        }
    }
    w.patch_len16(start + 2, start);
}
