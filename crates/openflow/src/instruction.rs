//! OpenFlow 1.3 instructions (`ofp_instruction_*`).
//!
//! Every instruction is `type:u16, len:u16, body`, `len` a multiple of 8. An unknown
//! instruction type is a decode error (`OFPBIC_UNKNOWN_INST`); a bad length is
//! `OFPBIC_BAD_LEN`; errors inside an action list keep the action's own error kind.
//! Experimenter instructions keep their bytes opaque.

use crate::action::Action;

/// `ofp_instruction_type` numbers.
pub mod instruction_type {
    pub const GOTO_TABLE: u16 = 1;
    pub const WRITE_METADATA: u16 = 2;
    pub const WRITE_ACTIONS: u16 = 3;
    pub const APPLY_ACTIONS: u16 = 4;
    pub const CLEAR_ACTIONS: u16 = 5;
    pub const METER: u16 = 6;
    pub const EXPERIMENTER: u16 = 0xffff;
}

/// One OpenFlow 1.3 instruction.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Instruction {
    GotoTable(u8),
    WriteMetadata {
        metadata: u64,
        mask: u64,
    },
    WriteActions(Vec<Action>),
    ApplyActions(Vec<Action>),
    ClearActions,
    Meter(u32),
    /// An experimenter instruction: the id and every byte after it.
    Experimenter {
        experimenter: u32,
        data: Vec<u8>,
    },
}

use crate::error::{ErrorKind, OfpError};
use crate::wire::{Reader, Writer};

impl Instruction {
    /// Reads one instruction.
    pub fn decode(_r: &mut Reader) -> Result<Instruction, OfpError> {
        Err(OfpError::new(
            ErrorKind::BAD_INSTRUCTION_UNKNOWN_INST,
            "not yet",
        ))
    }

    /// Writes one instruction.
    pub fn encode(&self, _w: &mut Writer) {}

    /// Reads instructions until the reader is empty.
    pub fn decode_list(r: &mut Reader) -> Result<Vec<Instruction>, OfpError> {
        let mut out = Vec::new();
        while !r.is_empty() {
            out.push(Instruction::decode(r)?);
        }
        Ok(out)
    }

    /// Writes a list of instructions.
    pub fn encode_list(insts: &[Instruction], w: &mut Writer) {
        for i in insts {
            i.encode(w);
        }
    }
}

/// proptest strategies for instructions (replaced by complete ones).
#[cfg(test)]
pub(crate) mod strategy {
    use super::*;
    use proptest::prelude::*;

    pub fn arb_instruction() -> impl Strategy<Value = Instruction> {
        any::<u8>().prop_map(Instruction::GotoTable)
    }
}
