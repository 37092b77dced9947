//! OpenFlow 1.3 instructions (`ofp_instruction_*`).
//!
//! Every instruction is `type:u16, len:u16, body`, `len` a multiple of 8. An unknown
//! instruction type is a decode error (`OFPBIC_UNKNOWN_INST`); a bad length is
//! `OFPBIC_BAD_LEN`; errors inside an action list keep the action's own error kind.
//! Experimenter instructions keep their bytes opaque.
//!
//! Layouts (1.3.5 §7.2.4), each `type:u16, len:u16` then: goto-table `table_id:u8,
//! pad[3]` (8 bytes); write-metadata `pad[4], metadata:u64, metadata_mask:u64` (24);
//! write-/apply-actions `pad[4]` then the action list to `len`; clear-actions `pad[4]`
//! (8); meter `meter_id:u32` (8); experimenter `experimenter:u32` then data to `len`.
//! Padding is read without being checked and written as zeros.
//!
//! [`Instruction::validate_list`] makes the stateless checks on an instruction set; see
//! [`Instruction::validate`] for the error each rule answers with.

use crate::action::Action;
use crate::model::WireAction;

spec_table! {
    /// `ofp_instruction_type` numbers.
    pub mod instruction_type: u16 as numbers {
        GOTO_TABLE = 1, WRITE_METADATA, WRITE_ACTIONS, APPLY_ACTIONS, CLEAR_ACTIONS, METER,
        EXPERIMENTER = 0xffff,
    }
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
use crate::v13::meter_mod::{OFPM_CONTROLLER, OFPM_MAX, OFPM_SLOWPATH};
use crate::wire::{Reader, Tlv8, Writer};
use instruction_type as t;

/// `OFPTT_MAX`: the highest table number (a goto-table goes at most there).
pub const OFPTT_MAX: u8 = 0xfe;

#[cfg(test)]
pub(crate) mod strategy;
#[cfg(test)]
mod tests;

/// Length of the instruction header plus the smallest body.
const MIN_LEN: usize = 8;
/// `sizeof(struct ofp_instruction_write_metadata)`.
const WRITE_METADATA_LEN: usize = 24;

fn bad_len(detail: String) -> OfpError {
    OfpError::new(ErrorKind::BAD_INSTRUCTION_BAD_LEN, detail)
}

/// The fixed wire length of an instruction type; `None` for variable ones (actions,
/// experimenter) and unknown types.
fn fixed_len(ty: u16) -> Option<usize> {
    match ty {
        t::GOTO_TABLE | t::CLEAR_ACTIONS | t::METER => Some(MIN_LEN),
        t::WRITE_METADATA => Some(WRITE_METADATA_LEN),
        _ => None,
    }
}

fn type_name(ty: u16) -> &'static str {
    match ty {
        t::GOTO_TABLE => "goto_table",
        t::WRITE_METADATA => "write_metadata",
        t::WRITE_ACTIONS => "write_actions",
        t::APPLY_ACTIONS => "apply_actions",
        t::CLEAR_ACTIONS => "clear_actions",
        t::METER => "meter",
        t::EXPERIMENTER => "experimenter",
        _ => "unknown",
    }
}

impl Instruction {
    /// Where this instruction runs among a flow's instructions (OpenFlow 1.3.5 §5.9):
    /// meter, apply-actions, clear-actions, write-actions, write-metadata, goto-table,
    /// then an experimenter's.
    pub fn execution_rank(&self) -> usize {
        match self {
            Instruction::Meter(_) => 0,
            Instruction::ApplyActions(_) => 1,
            Instruction::ClearActions => 2,
            Instruction::WriteActions(_) => 3,
            Instruction::WriteMetadata { .. } => 4,
            Instruction::GotoTable(_) => 5,
            Instruction::Experimenter { .. } => 6,
        }
    }

    /// The `ofp_instruction_type` number of this instruction.
    pub fn instruction_type(&self) -> u16 {
        match self {
            Instruction::GotoTable(_) => t::GOTO_TABLE,
            Instruction::WriteMetadata { .. } => t::WRITE_METADATA,
            Instruction::WriteActions(_) => t::WRITE_ACTIONS,
            Instruction::ApplyActions(_) => t::APPLY_ACTIONS,
            Instruction::ClearActions => t::CLEAR_ACTIONS,
            Instruction::Meter(_) => t::METER,
            Instruction::Experimenter { .. } => t::EXPERIMENTER,
        }
    }

    /// Bytes [`Instruction::encode`] writes: the `len` field of the encoded instruction.
    pub fn wire_len(&self) -> usize {
        match self {
            Instruction::WriteActions(a) | Instruction::ApplyActions(a) => {
                MIN_LEN + Action::list_wire_len(a)
            }
            Instruction::Experimenter { data, .. } => MIN_LEN + data.len().div_ceil(8) * 8,
            other => fixed_len(other.instruction_type()).unwrap_or(MIN_LEN),
        }
    }

    /// Reads one instruction.
    ///
    /// Errors: fewer than 4 bytes, `len` below 8, not a multiple of 8, past the end of
    /// the reader, or not the size of a fixed-size type → `OFPBIC_BAD_LEN`; an unknown
    /// type → `OFPBIC_UNKNOWN_INST`; a failure inside an action list keeps the action's
    /// own kind (`OFPBAC_*`).
    pub fn decode(r: &mut Reader) -> Result<Instruction, OfpError> {
        const FRAMING: Tlv8 = Tlv8 {
            what: "instruction",
            type_name,
            fixed_len,
            bad_len: ErrorKind::BAD_INSTRUCTION_BAD_LEN,
        };
        let (ty, _, mut body) = FRAMING.take(r)?;
        let name = type_name(ty);
        let own = |e: OfpError| bad_len(format!("{name} instruction: {}", e.detail));
        let inst = match ty {
            t::GOTO_TABLE => Instruction::GotoTable(body.u8().map_err(own)?),
            t::WRITE_METADATA => {
                body.skip(4).map_err(own)?;
                let metadata = body.u64().map_err(own)?;
                let mask = body.u64().map_err(own)?;
                Instruction::WriteMetadata { metadata, mask }
            }
            t::WRITE_ACTIONS | t::APPLY_ACTIONS => {
                body.skip(4).map_err(own)?;
                let actions = Action::decode_list(&mut body)?;
                if ty == t::WRITE_ACTIONS {
                    Instruction::WriteActions(actions)
                } else {
                    Instruction::ApplyActions(actions)
                }
            }
            t::CLEAR_ACTIONS => Instruction::ClearActions,
            t::METER => Instruction::Meter(body.u32().map_err(own)?),
            t::EXPERIMENTER => Instruction::Experimenter {
                experimenter: body.u32().map_err(own)?,
                data: body.take_rest().to_vec(),
            },
            _ => {
                return Err(OfpError::new(
                    ErrorKind::BAD_INSTRUCTION_UNKNOWN_INST,
                    format!("unknown instruction type {ty}"),
                ))
            }
        };
        Ok(inst)
    }

    /// Writes one instruction, padding written as zeros.
    ///
    /// An experimenter instruction whose `data` is not a multiple of 8 bytes long gets
    /// zero padding after it (so it decodes with the padding as part of `data`).
    pub fn encode(&self, w: &mut Writer) {
        w.tlv8(self.instruction_type(), |w| match self {
            Instruction::GotoTable(table) => {
                w.u8(*table);
                w.zeros(3);
            }
            Instruction::WriteMetadata { metadata, mask } => {
                w.zeros(4);
                w.u64(*metadata);
                w.u64(*mask);
            }
            Instruction::WriteActions(actions) | Instruction::ApplyActions(actions) => {
                w.zeros(4);
                Action::encode_list(actions, w);
            }
            Instruction::ClearActions => w.zeros(4),
            Instruction::Meter(id) => w.u32(*id),
            Instruction::Experimenter { experimenter, data } => {
                w.u32(*experimenter);
                w.bytes(data);
            }
        });
    }

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

    /// Total bytes [`Instruction::encode_list`] writes for `insts`.
    pub fn list_wire_len(insts: &[Instruction]) -> usize {
        insts.iter().map(Instruction::wire_len).sum()
    }

    /// Stateless checks on one instruction of a rule in table `table_id`:
    ///
    /// - goto-table to a table not after `table_id`, or above `OFPTT_MAX` (0xfe) →
    ///   `OFPBIC_BAD_TABLE_ID` (1.3.5 §5.9: the pipeline only goes forward);
    /// - meter 0, or above `OFPM_MAX` other than the virtual meters `OFPM_SLOWPATH` and
    ///   `OFPM_CONTROLLER` → `OFPMMFC_INVALID_METER` (the spec's text for that code:
    ///   "meter specified is invalid, or invalid meter in meter action"; a meter that is
    ///   valid but not configured is the agent's `OFPMMFC_UNKNOWN_METER`);
    /// - apply-actions: [`Action::validate_list`]; write-actions:
    ///   [`Action::validate_action_set`] (one action per action-set slot).
    pub fn validate(&self, table_id: u8) -> Result<(), OfpError> {
        match self {
            Instruction::GotoTable(next) if *next <= table_id || *next > OFPTT_MAX => {
                Err(OfpError::new(
                    ErrorKind::BAD_INSTRUCTION_BAD_TABLE_ID,
                    format!(
                        "goto_table {next} from table {table_id}: must be in {}..={OFPTT_MAX}",
                        u16::from(table_id) + 1
                    ),
                ))
            }
            Instruction::Meter(id)
                if *id == 0
                    || (*id > OFPM_MAX && *id != OFPM_SLOWPATH && *id != OFPM_CONTROLLER) =>
            {
                Err(OfpError::new(
                    ErrorKind::METER_MOD_FAILED_INVALID_METER,
                    format!("meter instruction names invalid meter {id:#x}"),
                ))
            }
            Instruction::ApplyActions(actions) => Action::validate_list(actions),
            Instruction::WriteActions(actions) => Action::validate_action_set(actions),
            _ => Ok(()),
        }
    }

    /// Stateless checks on the instruction set of a rule in table `table_id`: at most
    /// one instruction of each type (`OFPBIC_DUP_INST`), then [`Instruction::validate`]
    /// on each, in order. The order of the list is free (the pipeline applies the
    /// instructions in the spec's fixed order, not the list's).
    pub fn validate_list(insts: &[Instruction], table_id: u8) -> Result<(), OfpError> {
        for (i, inst) in insts.iter().enumerate() {
            let ty = inst.instruction_type();
            if insts[..i].iter().any(|o| o.instruction_type() == ty) {
                return Err(OfpError::new(
                    ErrorKind::BAD_INSTRUCTION_DUP_INST,
                    format!("two {} instructions", type_name(ty)),
                ));
            }
        }
        insts.iter().try_for_each(|i| i.validate(table_id))
    }
}
