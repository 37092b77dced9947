//! `OFPT_METER_MOD` (OpenFlow 1.3): add, modify or delete a meter and its bands.
//!
//! Wire form: header, `command:u16, flags:u16, meter_id:u32`, then bands to the end; a
//! band is `type:u16, len:u16, rate:u32, burst_size:u32` and a type-specific tail
//! (`pad[4]` for drop, `prec_level:u8, pad[3]` for DSCP remark, `experimenter:u32` and
//! any further bytes for experimenter).
//!
//! Band lengths are checked (`OFPBRC_BAD_LEN`: below 12 or past the end, or not 16 for
//! drop and DSCP remark, below 16 for experimenter); a band type the spec does not
//! define is `OFPMMFC_BAD_BAND` at decode time, since [`MeterBand`] cannot hold it.
//! [`MeterMod::validate`] makes the stateless semantic checks.

use crate::error::{ErrorKind, OfpError};
use crate::v13::bad_len;
use crate::wire::{Reader, Writer};

wire_enum! {
    /// `ofp_meter_mod_command`.
    pub enum MeterModCommand: u16 as from_u16 / to_u16 {
        Add = 0,
        Modify = 1,
        Delete = 2,
    }
}

spec_table! {
    /// `ofp_meter_flags` bits.
    pub mod meter_flags: u16 as bits {
        KBPS, PKTPS, BURST, STATS,
    }
}

/// `OFPM_MAX` and the virtual meters.
pub const OFPM_MAX: u32 = 0xffff_0000;
pub const OFPM_SLOWPATH: u32 = 0xffff_fffd;
pub const OFPM_CONTROLLER: u32 = 0xffff_fffe;
pub const OFPM_ALL: u32 = 0xffff_ffff;

/// One meter band (`ofp_meter_band_*`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum MeterBand {
    Drop {
        rate: u32,
        burst_size: u32,
    },
    DscpRemark {
        rate: u32,
        burst_size: u32,
        prec_level: u8,
    },
    /// An experimenter band: the id and every byte after it.
    Experimenter {
        rate: u32,
        burst_size: u32,
        experimenter: u32,
        data: Vec<u8>,
    },
}

record! {
    /// An `OFPT_METER_MOD` body.
    #[derive(Clone, Debug, PartialEq, Eq, Hash)]
    pub struct MeterMod {
        pub command: MeterModCommand,
        pub flags: u16,
        pub meter_id: u32,
        pub bands: Vec<MeterBand> [list],
    }
}

list_item_by_methods!(MeterBand, strategy::arb_meter_band());

spec_table! {
    /// `ofp_meter_band_type` numbers.
    pub mod band_type: u16 as numbers {
        DROP = 1, DSCP_REMARK, EXPERIMENTER = 0xffff,
    }
}

/// Every `ofp_meter_flags` bit 1.3 defines.
pub const METER_FLAGS_ALL: u16 = 0xf;

impl MeterBand {
    pub fn rate(&self) -> u32 {
        match self {
            MeterBand::Drop { rate, .. }
            | MeterBand::DscpRemark { rate, .. }
            | MeterBand::Experimenter { rate, .. } => *rate,
        }
    }

    pub fn burst_size(&self) -> u32 {
        match self {
            MeterBand::Drop { burst_size, .. }
            | MeterBand::DscpRemark { burst_size, .. }
            | MeterBand::Experimenter { burst_size, .. } => *burst_size,
        }
    }

    /// Reads one band, checking its length against what is left.
    pub fn decode(r: &mut Reader) -> Result<MeterBand, OfpError> {
        if r.remaining() < 12 {
            return Err(bad_len(format!(
                "meter band header needs 12 bytes, {} left",
                r.remaining()
            )));
        }
        let ty = r.peek_u16(0)?;
        let len = r.peek_u16(2)? as usize;
        if len < 12 || len > r.remaining() {
            return Err(bad_len(format!(
                "meter band length {len} is below 12 or past the {} bytes left",
                r.remaining()
            )));
        }
        let mut b = r.sub(len)?;
        b.skip(4)?;
        let rate = b.u32()?;
        let burst_size = b.u32()?;
        let want_16 = |name: &str| {
            if len == 16 {
                Ok(())
            } else {
                Err(bad_len(format!("{name} band has length {len}, not 16")))
            }
        };
        match ty {
            band_type::DROP => {
                want_16("drop")?;
                Ok(MeterBand::Drop { rate, burst_size })
            }
            band_type::DSCP_REMARK => {
                want_16("dscp-remark")?;
                Ok(MeterBand::DscpRemark { rate, burst_size, prec_level: b.u8()? })
            }
            band_type::EXPERIMENTER => {
                if len < 16 {
                    return Err(bad_len(format!("experimenter band length {len} is below 16")));
                }
                Ok(MeterBand::Experimenter {
                    rate,
                    burst_size,
                    experimenter: b.u32()?,
                    data: b.take_rest().to_vec(),
                })
            }
            n => Err(OfpError::new(
                ErrorKind::METER_MOD_FAILED_BAD_BAND,
                format!("meter band type {n} is not defined"),
            )),
        }
    }

    pub fn encode(&self, w: &mut Writer) {
        let start = w.len();
        let ty = match self {
            MeterBand::Drop { .. } => band_type::DROP,
            MeterBand::DscpRemark { .. } => band_type::DSCP_REMARK,
            MeterBand::Experimenter { .. } => band_type::EXPERIMENTER,
        };
        w.u16(ty);
        w.u16(0);
        w.u32(self.rate());
        w.u32(self.burst_size());
        match self {
            MeterBand::Drop { .. } => w.zeros(4),
            MeterBand::DscpRemark { prec_level, .. } => {
                w.u8(*prec_level);
                w.zeros(3);
            }
            MeterBand::Experimenter { experimenter, data, .. } => {
                w.u32(*experimenter);
                w.bytes(data);
            }
        }
        w.patch_len16(start + 2, start);
    }
}

impl MeterMod {
    /// Stateless checks, in this order:
    /// - the command (`OFPMMFC_BAD_COMMAND`);
    /// - the meter id (`OFPMMFC_INVALID_METER`): 0 is never a meter; ids above
    ///   `OFPM_MAX` are allowed only for the virtual meters `OFPM_SLOWPATH` and
    ///   `OFPM_CONTROLLER`, and `OFPM_ALL` only in a delete;
    /// - a delete needs nothing else (its flags and bands are ignored);
    /// - for add and modify: the flags (`OFPMMFC_BAD_FLAGS` for undefined bits or both
    ///   `KBPS` and `PKTPS`), then each band's rate (`OFPMMFC_BAD_RATE` when 0).
    pub fn validate(&self) -> Result<(), OfpError> {
        let invalid =
            |detail: String| Err(OfpError::new(ErrorKind::METER_MOD_FAILED_INVALID_METER, detail));
        if let MeterModCommand::Unknown(n) = self.command {
            return Err(OfpError::new(
                ErrorKind::METER_MOD_FAILED_BAD_COMMAND,
                format!("meter-mod command {n} is not defined"),
            ));
        }
        let id = self.meter_id;
        if id == 0 {
            return invalid("meter id 0 is not a meter".into());
        }
        let virtual_meter = id == OFPM_SLOWPATH || id == OFPM_CONTROLLER;
        let all_in_delete = id == OFPM_ALL && self.command == MeterModCommand::Delete;
        if id > OFPM_MAX && !virtual_meter && !all_in_delete {
            return invalid(format!("meter id 0x{id:08x} is above OFPM_MAX"));
        }
        if self.command == MeterModCommand::Delete {
            return Ok(());
        }
        if self.flags & !METER_FLAGS_ALL != 0 {
            return Err(OfpError::new(
                ErrorKind::METER_MOD_FAILED_BAD_FLAGS,
                format!("meter flags 0x{:04x} set undefined bits", self.flags),
            ));
        }
        let both = meter_flags::KBPS | meter_flags::PKTPS;
        if self.flags & both == both {
            return Err(OfpError::new(
                ErrorKind::METER_MOD_FAILED_BAD_FLAGS,
                "meter flags set both KBPS and PKTPS",
            ));
        }
        for (i, band) in self.bands.iter().enumerate() {
            if band.rate() == 0 {
                return Err(OfpError::new(
                    ErrorKind::METER_MOD_FAILED_BAD_RATE,
                    format!("meter band {i} has rate 0"),
                ));
            }
        }
        Ok(())
    }
}

/// proptest strategies for meter mods.
#[cfg(test)]
pub(crate) mod strategy {
    use super::*;
    use proptest::prelude::*;

    pub fn arb_meter_band() -> impl Strategy<Value = MeterBand> {
        prop_oneof![
            (any::<u32>(), any::<u32>())
                .prop_map(|(rate, burst_size)| MeterBand::Drop { rate, burst_size }),
            (any::<u32>(), any::<u32>(), any::<u8>()).prop_map(|(rate, burst_size, prec_level)| {
                MeterBand::DscpRemark { rate, burst_size, prec_level }
            }),
            (
                any::<u32>(),
                any::<u32>(),
                any::<u32>(),
                proptest::collection::vec(any::<u8>(), 0..12)
            )
                .prop_map(|(rate, burst_size, experimenter, data)| {
                    MeterBand::Experimenter { rate, burst_size, experimenter, data }
                }),
        ]
    }

    pub fn arb_meter_mod() -> impl Strategy<Value = MeterMod> {
        MeterMod::arb()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::encoded;

    /// Add meter 100 (KBPS | BURST | STATS) with a drop band and a DSCP-remark band,
    /// laid out by hand.
    fn spec_bytes() -> Vec<u8> {
        let mut b = vec![0, 0, 0, 0x0d, 0, 0, 0, 100];
        b.extend_from_slice(&[0, 1, 0, 16, 0, 0, 3, 0xe8, 0, 0, 0, 10, 0, 0, 0, 0]);
        b.extend_from_slice(&[0, 2, 0, 16, 0, 0, 3, 0xe8, 0, 0, 0, 10, 1, 0, 0, 0]);
        b
    }

    fn spec_meter_mod() -> MeterMod {
        MeterMod {
            command: MeterModCommand::Add,
            flags: meter_flags::KBPS | meter_flags::BURST | meter_flags::STATS,
            meter_id: 100,
            bands: vec![
                MeterBand::Drop { rate: 1000, burst_size: 10 },
                MeterBand::DscpRemark { rate: 1000, burst_size: 10, prec_level: 1 },
            ],
        }
    }

    #[test]
    fn decodes_spec_bytes() {
        let bytes = spec_bytes();
        let m = MeterMod::decode(&mut Reader::new(&bytes)).unwrap();
        assert_eq!(m, spec_meter_mod());
        assert_eq!(encoded(|w| m.encode(w)), bytes);
        assert!(m.validate().is_ok());
    }

    #[test]
    fn experimenter_band_keeps_its_bytes() {
        let mut b = vec![0, 0, 0, 1, 0, 0, 0, 1];
        b.extend_from_slice(&[0xff, 0xff, 0, 18, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0x23, 0x20, 7, 8]);
        let m = MeterMod::decode(&mut Reader::new(&b)).unwrap();
        assert_eq!(
            m.bands,
            vec![MeterBand::Experimenter {
                rate: 5,
                burst_size: 0,
                experimenter: 0x2320,
                data: vec![7, 8]
            }]
        );
        assert_eq!(encoded(|w| m.encode(w)), b);
    }

    #[test]
    fn bad_bands() {
        let decode = |b: &[u8]| MeterMod::decode(&mut Reader::new(b)).unwrap_err().kind;
        for (at, v) in [(11usize, 11u8), (11, 64), (11, 24), (27, 8)] {
            let mut b = spec_bytes();
            b[at] = v;
            assert_eq!(decode(&b), ErrorKind::BAD_REQUEST_BAD_LEN, "byte {at} = {v}");
        }
        let mut b = spec_bytes();
        b[9] = 3;
        assert_eq!(decode(&b), ErrorKind::METER_MOD_FAILED_BAD_BAND);
        let mut b = spec_bytes();
        b[24] = 0xff;
        b[25] = 0xff;
        b[27] = 12;
        b.truncate(36);
        assert_eq!(decode(&b), ErrorKind::BAD_REQUEST_BAD_LEN);
        let mut b = spec_bytes();
        b.extend_from_slice(&[0; 8]);
        assert_eq!(decode(&b), ErrorKind::BAD_REQUEST_BAD_LEN);
    }

    #[test]
    fn validate_accepts() {
        for id in [1, OFPM_MAX, OFPM_SLOWPATH, OFPM_CONTROLLER] {
            let m = MeterMod { meter_id: id, ..spec_meter_mod() };
            assert!(m.validate().is_ok(), "{id:#x}");
        }
        let del_all = MeterMod {
            command: MeterModCommand::Delete,
            flags: 0xffff,
            meter_id: OFPM_ALL,
            bands: vec![MeterBand::Drop { rate: 0, burst_size: 0 }],
        };
        assert!(del_all.validate().is_ok());
        let pktps = MeterMod { flags: meter_flags::PKTPS, bands: vec![], ..spec_meter_mod() };
        assert!(pktps.validate().is_ok());
    }

    #[test]
    fn validate_errors() {
        let kind = |m: MeterMod| m.validate().unwrap_err().kind;
        assert_eq!(
            kind(MeterMod { command: MeterModCommand::Unknown(3), ..spec_meter_mod() }),
            ErrorKind::METER_MOD_FAILED_BAD_COMMAND
        );
        for id in [0, OFPM_MAX + 1, OFPM_SLOWPATH - 1, OFPM_ALL] {
            assert_eq!(
                kind(MeterMod { meter_id: id, ..spec_meter_mod() }),
                ErrorKind::METER_MOD_FAILED_INVALID_METER,
                "{id:#x}"
            );
        }
        assert_eq!(
            kind(MeterMod { command: MeterModCommand::Delete, meter_id: 0, ..spec_meter_mod() }),
            ErrorKind::METER_MOD_FAILED_INVALID_METER
        );
        for flags in [meter_flags::KBPS | meter_flags::PKTPS, 0x10, 0x8001] {
            assert_eq!(
                kind(MeterMod { flags, ..spec_meter_mod() }),
                ErrorKind::METER_MOD_FAILED_BAD_FLAGS,
                "{flags:#x}"
            );
        }
        let mut m = spec_meter_mod();
        m.bands.push(MeterBand::Experimenter {
            rate: 0,
            burst_size: 1,
            experimenter: 1,
            data: vec![],
        });
        assert_eq!(kind(m), ErrorKind::METER_MOD_FAILED_BAD_RATE);
    }

    roundtrip_tests! {
        roundtrip: strategy::arb_meter_mod() => MeterMod;
    }
}
