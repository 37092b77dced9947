//! The agent's authoritative OpenFlow 1.3 meter table, sans-IO: no sockets and no clock
//! (calls that need time take `now`, nanoseconds on the caller's monotonic clock).
//!
//! [`MeterTable`] keeps every meter as the controller sent it (flags and bands, for
//! `OFPMP_METER_CONFIG`) and when it was created. Each accepted [`MeterTable::apply`]
//! changes the datapath through its [`Writer`] at once (unpublished: the caller
//! publishes) and returns a [`MeterChange`] naming the meters it deleted, whose flow
//! entries the caller must remove (1.3.5 §6.6).
//!
//! Semantics (OpenFlow 1.3.5 §6.6):
//! - ADD of an existing id is `OFPMMFC_METER_EXISTS`; MODIFY of an absent one is
//!   `OFPMMFC_UNKNOWN_METER`. A MODIFY replaces flags and bands: the old entry is removed
//!   and the new one added, so its counters and duration restart and its bands' buckets
//!   start full (the datapath gives a replaced meter fresh state and counter slots). The
//!   flows using it keep using it.
//! - DELETE of an absent id changes nothing and is not an error (os-ken's switch tester
//!   clears the table with a delete of `OFPM_ALL` before every case, meters or not);
//!   `OFPM_ALL` deletes every meter.
//! - [`MeterMod::validate`] makes the stateless checks first: command, id (0 and ids
//!   above `OFPM_MAX` are `OFPMMFC_INVALID_METER`), undefined flag bits or both `KBPS`
//!   and `PKTPS` (`OFPMMFC_BAD_FLAGS`), a band rate of 0 (`OFPMMFC_BAD_RATE`); decoding
//!   already refused undefined band types (`OFPMMFC_BAD_BAND`).
//! - Then: the virtual meters `OFPM_SLOWPATH` and `OFPM_CONTROLLER`, which this switch
//!   does not have, are `OFPMMFC_INVALID_METER` for every command; experimenter bands are
//!   `OFPMMFC_BAD_BAND` (no experimenter is supported); a DSCP-remark band with
//!   `prec_level` 0 (it would change nothing) is `OFPMMFC_BAD_BAND_VALUE` (a level past
//!   the last AF drop precedence is accepted and capped there, as the datapath does).
//! - Units: `OFPMF_PKTPS` meters packets; otherwise kbit/s (a meter with neither unit flag
//!   measures kbit/s, as Open vSwitch does). Burst: with `OFPMF_BURST` a band's
//!   `burst_size` is used (0: one second of its rate); without it `burst_size` is ignored
//!   (the spec uses it "only if the flags field includes OFPMF_BURST") and the burst is
//!   one second of the rate. So `OFPMMFC_BAD_BURST` is never answered. Counters are always
//!   kept, `OFPMF_STATS` or not. Flags and bands are reported back as sent.
//! - Limits: [`MAX_METERS`] meters (`OFPMMFC_OUT_OF_METERS`), [`MAX_BANDS`] bands per
//!   meter (`OFPMMFC_OUT_OF_BANDS`); a datapath out of counter slots is
//!   `OFPMMFC_OUT_OF_METERS`.
//!
//! A refused meter-mod changes nothing, neither the table nor the datapath: everything is
//! checked before the writer is called, and the writer's only failure (no counter slot)
//! leaves its state unchanged.
//!
//! Invariant, between calls: the datapath's pending version holds exactly the meters of
//! the table, each built from its entry. Counters come from the datapath
//! ([`Datapath::read_meter`]), which reads the published version: a meter added or
//! modified since the last publish reads zero (or its previous counters) until then.

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use datapath::meter::{Band, BandKind, Meter, MeterUnit};
use datapath::pipeline::{Datapath, RuleTable, Writer};
use openflow::v13::meter_mod::{
    band_type, meter_flags, MeterBand, MeterMod, MeterModCommand, OFPM_ALL, OFPM_CONTROLLER,
    OFPM_SLOWPATH,
};
use openflow::v13::multipart::{MeterBandStats, MeterConfig, MeterFeatures, MeterStats};
use openflow::{ErrorKind, OfpError};

use crate::flows::duration_since;

/// Most meters the table holds.
pub const MAX_METERS: u32 = 65_536;
/// Most bands in one meter (the datapath has 2^20 band counter slots; this leaves room
/// for modifies, which hold the old meter's slots until the next publish).
pub const MAX_BANDS: u8 = 8;

/// What an accepted meter-mod changed that the caller must act on.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MeterChange {
    /// Meters removed, in increasing order: the caller deletes the flow entries whose
    /// meter instruction names them (1.3.5 §6.6).
    pub deleted: Vec<u32>,
}

/// One meter as the controller installed it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct MeterEntry {
    flags: u16,
    /// The bands as sent (for meter-config replies).
    bands: Vec<MeterBand>,
    /// When the meter was added or last modified (ns); its duration counts from here.
    created: u64,
}

/// The meter table (see the module comment for the semantics and invariant).
#[derive(Clone, Debug, Default)]
pub struct MeterTable {
    meters: BTreeMap<u32, MeterEntry>,
}

fn err(kind: ErrorKind, detail: String) -> OfpError {
    OfpError::new(kind, detail)
}

impl MeterTable {
    /// An empty table.
    pub fn new() -> MeterTable {
        MeterTable::default()
    }

    /// Whether meter `id` exists.
    pub fn contains(&self, id: u32) -> bool {
        self.meters.contains_key(&id)
    }

    /// Number of meters.
    pub fn len(&self) -> usize {
        self.meters.len()
    }

    pub fn is_empty(&self) -> bool {
        self.meters.is_empty()
    }

    /// The meter ids, in increasing order.
    pub fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.meters.keys().copied()
    }

    /// Validates `mm` and applies it at `now`, changing the datapath through `w`
    /// (unpublished). On error nothing changed.
    pub fn apply<C: RuleTable>(
        &mut self,
        mm: &MeterMod,
        w: &mut Writer<C>,
        now: u64,
    ) -> Result<MeterChange, OfpError> {
        mm.validate()?;
        let id = mm.meter_id;
        if id == OFPM_SLOWPATH || id == OFPM_CONTROLLER {
            return Err(err(
                ErrorKind::METER_MOD_FAILED_INVALID_METER,
                format!("meter {id:#x} is a virtual meter, which this switch does not have"),
            ));
        }
        match mm.command {
            MeterModCommand::Delete => Ok(self.delete(id, w)),
            MeterModCommand::Add | MeterModCommand::Modify => {
                let meter = self.check(mm)?;
                w.set_meter(meter).map_err(|e| {
                    err(
                        ErrorKind::METER_MOD_FAILED_OUT_OF_METERS,
                        format!("the datapath has no counter slots left for meter {id} ({e:?})"),
                    )
                })?;
                self.meters.insert(
                    id,
                    MeterEntry { flags: mm.flags, bands: mm.bands.clone(), created: now },
                );
                Ok(MeterChange::default())
            }
            // `validate` refused it.
            MeterModCommand::Unknown(n) => Err(err(
                ErrorKind::METER_MOD_FAILED_BAD_COMMAND,
                format!("meter-mod command {n} is not defined"),
            )),
        }
    }

    fn delete<C: RuleTable>(&mut self, id: u32, w: &mut Writer<C>) -> MeterChange {
        let deleted: Vec<u32> = if id == OFPM_ALL {
            let all = self.meters.keys().copied().collect();
            self.meters.clear();
            all
        } else if self.meters.remove(&id).is_some() {
            vec![id]
        } else {
            Vec::new()
        };
        for &m in &deleted {
            w.remove_meter(m);
        }
        MeterChange { deleted }
    }

    /// Every stateful check of an add or modify that passed [`MeterMod::validate`], and
    /// the datapath meter it builds.
    fn check(&self, mm: &MeterMod) -> Result<Meter, OfpError> {
        let id = mm.meter_id;
        let exists = self.meters.contains_key(&id);
        match mm.command {
            MeterModCommand::Add if exists => {
                return Err(err(
                    ErrorKind::METER_MOD_FAILED_METER_EXISTS,
                    format!("meter {id} already exists"),
                ))
            }
            MeterModCommand::Modify if !exists => {
                return Err(err(
                    ErrorKind::METER_MOD_FAILED_UNKNOWN_METER,
                    format!("meter {id} does not exist"),
                ))
            }
            _ => {}
        }
        if !exists && self.meters.len() >= MAX_METERS as usize {
            return Err(err(
                ErrorKind::METER_MOD_FAILED_OUT_OF_METERS,
                format!("the switch holds at most {MAX_METERS} meters"),
            ));
        }
        if mm.bands.len() > usize::from(MAX_BANDS) {
            return Err(err(
                ErrorKind::METER_MOD_FAILED_OUT_OF_BANDS,
                format!("{} bands: a meter holds at most {MAX_BANDS}", mm.bands.len()),
            ));
        }
        let bands = mm
            .bands
            .iter()
            .enumerate()
            .map(|(i, b)| match *b {
                MeterBand::Drop { rate, burst_size } => {
                    Ok(Band { kind: BandKind::Drop, rate, burst_size })
                }
                MeterBand::DscpRemark { prec_level: 0, .. } => Err(err(
                    ErrorKind::METER_MOD_FAILED_BAD_BAND_VALUE,
                    format!("band {i}: a DSCP remark with prec_level 0 changes nothing"),
                )),
                MeterBand::DscpRemark { rate, burst_size, prec_level } => {
                    Ok(Band { kind: BandKind::DscpRemark { prec_level }, rate, burst_size })
                }
                MeterBand::Experimenter { experimenter, .. } => Err(err(
                    ErrorKind::METER_MOD_FAILED_BAD_BAND,
                    format!(
                        "band {i}: experimenter band of experimenter {experimenter:#x} is not \
                         supported"
                    ),
                )),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let unit =
            if mm.flags & meter_flags::PKTPS != 0 { MeterUnit::Pktps } else { MeterUnit::Kbps };
        let burst = mm.flags & meter_flags::BURST != 0;
        Ok(Meter::new(id, unit, burst, bands))
    }

    /// The `OFPMP_METER_CONFIG` reply entries for `meter_id` (`OFPM_ALL`: every meter, by
    /// increasing id; an absent meter: none).
    pub fn config(&self, meter_id: u32) -> Vec<MeterConfig> {
        let one = |(&meter_id, e): (&u32, &MeterEntry)| MeterConfig {
            flags: e.flags,
            meter_id,
            bands: e.bands.clone(),
        };
        self.select(meter_id).map(one).collect()
    }

    fn select(&self, meter_id: u32) -> impl Iterator<Item = (&u32, &MeterEntry)> {
        let (all, one) = if meter_id == OFPM_ALL {
            (Some(self.meters.iter()), None)
        } else {
            (None, self.meters.get_key_value(&meter_id))
        };
        all.into_iter().flatten().chain(one)
    }

    /// The `OFPMP_METER` reply entries for `meter_id` (`OFPM_ALL`: every meter, by
    /// increasing id; an absent meter: none) at `now`. Counters are the datapath's
    /// (published version); `flow_count` is `flows(id)`, the number of flow entries whose
    /// meter instruction names the meter, which the caller knows.
    pub fn stats<C: RuleTable>(
        &self,
        dp: &Datapath<C>,
        meter_id: u32,
        now: u64,
        flows: impl Fn(u32) -> u32,
    ) -> Vec<MeterStats> {
        let one = |(&id, e): (&u32, &MeterEntry)| {
            let (m, bands) = dp.read_meter(id).unwrap_or_default();
            let (duration_sec, duration_nsec) = duration_since(e.created, now);
            MeterStats {
                meter_id: id,
                flow_count: flows(id),
                packet_in_count: m.packets,
                byte_in_count: m.bytes,
                duration_sec,
                duration_nsec,
                band_stats: (0..e.bands.len())
                    .map(|i| {
                        bands.get(i).map_or_else(MeterBandStats::default, |s| MeterBandStats {
                            packet_band_count: s.packets,
                            byte_band_count: s.bytes,
                        })
                    })
                    .collect(),
            }
        };
        self.select(meter_id).map(one).collect()
    }

    /// The `OFPMP_METER_FEATURES` reply: [`MAX_METERS`] meters, drop and DSCP-remark
    /// bands, every flag, [`MAX_BANDS`] bands a meter, no color.
    pub fn features() -> MeterFeatures {
        MeterFeatures {
            max_meter: MAX_METERS,
            band_types: (1 << band_type::DROP) | (1 << band_type::DSCP_REMARK),
            capabilities: u32::from(
                meter_flags::KBPS | meter_flags::PKTPS | meter_flags::BURST | meter_flags::STATS,
            ),
            max_bands: MAX_BANDS,
            max_color: 0,
        }
    }
}
