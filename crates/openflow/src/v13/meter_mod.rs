//! `OFPT_METER_MOD` (OpenFlow 1.3): add, modify or delete a meter and its bands.
//!
//! Wire form: header, `command:u16, flags:u16, meter_id:u32`, then bands to the end; a
//! band is `type:u16, len:u16, rate:u32, burst_size:u32` and a type-specific tail
//! (`prec_level:u8, pad[3]` for DSCP remark, `experimenter:u32` for experimenter).

/// `ofp_meter_mod_command`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MeterModCommand {
    Add,
    Modify,
    Delete,
    Unknown(u16),
}

impl MeterModCommand {
    pub fn from_u16(v: u16) -> Self {
        match v {
            0 => Self::Add,
            1 => Self::Modify,
            2 => Self::Delete,
            n => Self::Unknown(n),
        }
    }

    pub fn to_u16(self) -> u16 {
        match self {
            Self::Add => 0,
            Self::Modify => 1,
            Self::Delete => 2,
            Self::Unknown(n) => n,
        }
    }
}

/// `ofp_meter_flags` bits.
pub mod meter_flags {
    pub const KBPS: u16 = 1 << 0;
    pub const PKTPS: u16 = 1 << 1;
    pub const BURST: u16 = 1 << 2;
    pub const STATS: u16 = 1 << 3;
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

/// An `OFPT_METER_MOD` body.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MeterMod {
    pub command: MeterModCommand,
    pub flags: u16,
    pub meter_id: u32,
    pub bands: Vec<MeterBand>,
}
