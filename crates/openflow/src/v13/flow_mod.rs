//! `OFPT_FLOW_MOD` (OpenFlow 1.3): add, modify or delete flow entries.
//!
//! Wire form: header, `cookie:u64, cookie_mask:u64, table_id:u8, command:u8,
//! idle_timeout:u16, hard_timeout:u16, priority:u16, buffer_id:u32, out_port:u32,
//! out_group:u32, flags:u16, pad[2]`, then an `ofp_match` and instructions to the end.

use crate::instruction::Instruction;
use crate::match13::Match;

/// `OFP_NO_BUFFER`.
pub const OFP_NO_BUFFER: u32 = 0xffff_ffff;
/// `OFPTT_MAX` and `OFPTT_ALL`.
pub const OFPTT_MAX: u8 = 0xfe;
pub const OFPTT_ALL: u8 = 0xff;

/// `ofp_flow_mod_command`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FlowModCommand {
    Add,
    Modify,
    ModifyStrict,
    Delete,
    DeleteStrict,
    Unknown(u8),
}

impl FlowModCommand {
    pub fn from_u8(v: u8) -> Self {
        match v {
            0 => Self::Add,
            1 => Self::Modify,
            2 => Self::ModifyStrict,
            3 => Self::Delete,
            4 => Self::DeleteStrict,
            n => Self::Unknown(n),
        }
    }

    pub fn to_u8(self) -> u8 {
        match self {
            Self::Add => 0,
            Self::Modify => 1,
            Self::ModifyStrict => 2,
            Self::Delete => 3,
            Self::DeleteStrict => 4,
            Self::Unknown(n) => n,
        }
    }
}

/// `ofp_flow_mod_flags` bits.
pub mod flow_mod_flags {
    pub const SEND_FLOW_REM: u16 = 1 << 0;
    pub const CHECK_OVERLAP: u16 = 1 << 1;
    pub const RESET_COUNTS: u16 = 1 << 2;
    pub const NO_PKT_COUNTS: u16 = 1 << 3;
    pub const NO_BYT_COUNTS: u16 = 1 << 4;
    pub const ALL: u16 = 0x1f;
}

/// An `OFPT_FLOW_MOD` body.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FlowMod {
    pub cookie: u64,
    pub cookie_mask: u64,
    pub table_id: u8,
    pub command: FlowModCommand,
    pub idle_timeout: u16,
    pub hard_timeout: u16,
    pub priority: u16,
    pub buffer_id: u32,
    pub out_port: u32,
    pub out_group: u32,
    pub flags: u16,
    pub match_: Match,
    pub instructions: Vec<Instruction>,
}

impl Default for FlowMod {
    /// An add to table 0 at the default priority 0x8000, no buffer, wildcard out port and
    /// group, everything else zero — what ovs-ofctl's `add-flow` starts from.
    fn default() -> Self {
        FlowMod {
            cookie: 0,
            cookie_mask: 0,
            table_id: 0,
            command: FlowModCommand::Add,
            idle_timeout: 0,
            hard_timeout: 0,
            priority: 0x8000,
            buffer_id: OFP_NO_BUFFER,
            out_port: crate::action::port::ANY,
            out_group: crate::action::OFPG_ANY,
            flags: 0,
            match_: Match::default(),
            instructions: Vec::new(),
        }
    }
}
