//! Translation of OpenFlow 1.3 wire types (`openflow`) into the datapath's compiled rules
//! (`datapath`): matches to [`FlowMatch`](datapath::key::FlowMatch), actions to
//! [`Action`](datapath::action::Action)s, instruction sets to [`Instructions`], flow-mods
//! to [`Rule`]s.
//!
//! - [`match_to_flow`] (`flow_match.rs`): OXM fields to places of the flow key;
//! - [`actions_to_datapath`], [`action_set_to_datapath`], [`instructions_to_datapath`]
//!   (`actions.rs`);
//! - [`flow_mod_to_rule`]: the rule an add (or a modify's new instructions) installs;
//! - [`prereq`]: set-field prerequisites against the match that leads to the action
//!   (`OFPBAC_MATCH_INCONSISTENT`), through apply-actions, write-actions and groups.
//!
//! Every function first applies `openflow`'s stateless validation of its input, so what it
//! returns expresses the OpenFlow semantics exactly; anything refused is a
//! [`TranslateError`] whose [`kind`](TranslateError::kind) is the `OFPT_ERROR` type/code
//! the switch answers with. Checks that need switch state (do the ports, groups, meters
//! and queues exist; do the buckets of the groups a flow sends to meet their set-fields'
//! prerequisites; overlap) belong to the agent.

mod actions;
mod flow_match;
pub mod prereq;

#[cfg(test)]
mod tests;

pub use actions::{action_set_to_datapath, actions_to_datapath, instructions_to_datapath};
pub use flow_match::match_to_flow;

use datapath::action::Action;
use datapath::key::Field;
use datapath::pipeline::{Instructions, Rule, NUM_TABLES};
use openflow::instruction::Instruction;
use openflow::v13::flow_mod::{flow_mod_flags, FlowMod};
use openflow::{ErrorKind, OfpError};

/// Why an OpenFlow construct could not become a datapath rule.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TranslateError {
    /// The input breaks an OpenFlow rule that `openflow`'s validation checks; the error
    /// carries its own kind.
    #[error(transparent)]
    Invalid(OfpError),
    /// A match TLV of a class other than OpenFlow basic (an experimenter or Nicira
    /// field): the datapath holds only the basic fields.
    #[error("match field of OXM class {class:#06x}, field {field} is not supported")]
    UnsupportedField { class: u16, field: u8 },
    /// An experimenter action (no experimenter is supported).
    #[error("experimenter action of experimenter {experimenter:#x} is not supported")]
    ExperimenterAction { experimenter: u32 },
    /// An experimenter instruction (no experimenter is supported).
    #[error("experimenter instruction of experimenter {experimenter:#x} is not supported")]
    ExperimenterInstruction { experimenter: u32 },
    /// A goto-table to a table the datapath does not have (it has tables
    /// 0..`NUM_TABLES`).
    #[error("goto_table {0}: the datapath has tables 0..={last}", last = NUM_TABLES - 1)]
    GotoTable(u8),
    /// A flow-mod for a table the datapath does not have.
    #[error("table {0}: the datapath has tables 0..={last}", last = NUM_TABLES - 1)]
    Table(u8),
    /// An output to `OFPP_TABLE` in a flow entry: OpenFlow 1.3 allows it only in
    /// packet-out, and the pipeline does not resubmit from a rule.
    #[error("output to TABLE is only valid in packet-out, not in a flow entry")]
    OutputToTable,
    /// A meter instruction naming a virtual meter (`OFPM_SLOWPATH`, `OFPM_CONTROLLER`),
    /// which the datapath does not have.
    #[error("meter {0:#x} is a virtual meter, which this switch does not support")]
    VirtualMeter(u32),
    /// Two set-fields of one write-actions list write the same place of the key (such as
    /// `IPV4_SRC` and `ARP_SPA`); the datapath's action set holds one per place.
    #[error("write_actions sets {0:?} twice (through two OXM fields that share it)")]
    SharedSetField(Field),
}

impl TranslateError {
    /// The OpenFlow error (type, code) that answers the offending request.
    pub fn kind(&self) -> ErrorKind {
        match self {
            TranslateError::Invalid(e) => e.kind,
            TranslateError::UnsupportedField { .. } => ErrorKind::BAD_MATCH_BAD_FIELD,
            TranslateError::ExperimenterAction { .. } => ErrorKind::BAD_ACTION_BAD_EXPERIMENTER,
            TranslateError::ExperimenterInstruction { .. } => {
                ErrorKind::BAD_INSTRUCTION_BAD_EXPERIMENTER
            }
            TranslateError::GotoTable(_) => ErrorKind::BAD_INSTRUCTION_BAD_TABLE_ID,
            TranslateError::Table(_) => ErrorKind::FLOW_MOD_FAILED_BAD_TABLE_ID,
            TranslateError::OutputToTable => ErrorKind::BAD_ACTION_BAD_OUT_PORT,
            TranslateError::VirtualMeter(_) => ErrorKind::METER_MOD_FAILED_INVALID_METER,
            TranslateError::SharedSetField(_) => ErrorKind::BAD_ACTION_TOO_MANY,
        }
    }
}

impl From<TranslateError> for OfpError {
    fn from(e: TranslateError) -> OfpError {
        match e {
            TranslateError::Invalid(e) => e,
            other => OfpError::new(other.kind(), other.to_string()),
        }
    }
}

/// The rule `fm` installs in `table` (normally `fm.table_id`): its match, priority,
/// cookie, timeouts, flags and instructions. The command is not looked at (an add and a
/// modify install the same instructions; a delete installs nothing), nor are
/// `buffer_id`, `out_port`, `out_group` and `cookie_mask`, which select or act on
/// existing state and are the agent's.
///
/// Checked, in this order: the table exists in the datapath (`OFPFMFC_BAD_TABLE_ID`),
/// the flag bits (`OFPFMFC_BAD_FLAGS`), the match ([`match_to_flow`]), the instruction
/// set for this table ([`Instruction::validate_list`]: duplicates, goto-table only
/// forward, meter ids, action lists), the translation of the instructions, that no
/// action outputs to `OFPP_TABLE` (valid in packet-out only), and that the match (with
/// the actions before each) meets every set-field's prerequisites
/// (`OFPBAC_MATCH_INCONSISTENT`, [`prereq::check_instructions`]; the buckets of the
/// groups the flow sends to are the agent's).
pub fn flow_mod_to_rule(fm: &FlowMod, table: u8) -> Result<Rule, TranslateError> {
    if usize::from(table) >= NUM_TABLES {
        return Err(TranslateError::Table(table));
    }
    if fm.flags & !flow_mod_flags::ALL != 0 {
        return Err(TranslateError::Invalid(OfpError::new(
            ErrorKind::FLOW_MOD_FAILED_BAD_FLAGS,
            format!("flow-mod flags {:#06x} set undefined bits", fm.flags),
        )));
    }
    let flow_match = match_to_flow(&fm.match_)?;
    Instruction::validate_list(&fm.instructions, table).map_err(TranslateError::Invalid)?;
    let instructions: Instructions = instructions_to_datapath(&fm.instructions)?;
    let to_table = |a: &Action| *a == Action::Output(datapath::action::port::TABLE);
    if instructions.apply.iter().any(to_table)
        || instructions.write_actions.iter().flatten().any(to_table)
    {
        return Err(TranslateError::OutputToTable);
    }
    prereq::check_instructions(&fm.match_, &fm.instructions, &|_| None)
        .map_err(|e| TranslateError::Invalid(e.error))?;
    let mut rule = Rule::new(flow_match, fm.priority, instructions);
    rule.cookie = fm.cookie;
    rule.idle_timeout = fm.idle_timeout;
    rule.hard_timeout = fm.hard_timeout;
    rule.flags = fm.flags;
    Ok(rule)
}
