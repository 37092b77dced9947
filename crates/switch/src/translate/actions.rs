//! OpenFlow 1.3 actions and instructions to the datapath's [`Action`]s and
//! [`Instructions`].
//!
//! Each list is first put through `openflow`'s stateless checks (port and group ranges,
//! push ethertypes, which fields set-field may write and their value ranges; for
//! write-actions one action per action-set slot; for instruction sets one instruction
//! per type), so a translated rule never holds what a switch must refuse. Then:
//!
//! - output to `OFPP_CONTROLLER` becomes [`Action::Controller`] with the output's
//!   `max_len`; any other output keeps its port number (the datapath numbers ports,
//!   reserved ones included, as OpenFlow 1.3 does);
//! - set-field becomes [`Action::SetField`] on the field's place in the key, value
//!   right-aligned and unchanged (`VLAN_VID` keeps `OFPVID_PRESENT`); fields that share a
//!   place (`TCP_SRC`/`UDP_SRC`/`SCTP_SRC`, ...) set the same place, the packet's protocol
//!   picks the header;
//! - the other actions map one to one; experimenter actions and instructions are refused,
//!   but for peregrine's own action for OpenFlow 1.0's packet-dependent sets in an action
//!   list ([`crate::v10::conditional_to_datapath`]).
//!
//! The datapath's action set has one set-field slot per key place, OpenFlow's one per
//! OXM field; a write-actions list whose set-fields share a place (`IPV4_SRC` and
//! `ARP_SPA`) is refused rather than silently keeping only the last.
//!
//! Whether the match meets a set-field's prerequisites (`OFPBAC_MATCH_INCONSISTENT`)
//! needs the rule's match: [`super::flow_mod_to_rule`] checks it ([`super::prereq`]), and
//! the agent for the buckets of the groups a flow sends to. So does the direction of
//! goto-table (it needs the rule's table: [`super::flow_mod_to_rule`] checks it). What
//! needs switch state stays with the agent: whether ports, groups, meters and queues
//! exist.

use datapath::action::Action;
use datapath::pipeline::{Instructions, NUM_TABLES};
use openflow::action::{port, Action as OfAction};
use openflow::instruction::Instruction;
use openflow::oxm::Oxm;
use openflow::v13::meter_mod::{OFPM_CONTROLLER, OFPM_SLOWPATH};

use super::flow_match::{field_value, FieldValue};
use super::TranslateError;

/// Translates an action list (apply-actions, a packet-out), in order, after
/// [`OfAction::validate_list`]. Peregrine's experimenter action for OpenFlow 1.0's
/// packet-dependent sets becomes its conditional rewrite
/// ([`crate::v10::conditional_to_datapath`]); action sets refuse it.
pub fn actions_to_datapath(actions: &[OfAction]) -> Result<Vec<Action>, TranslateError> {
    OfAction::validate_list(actions).map_err(TranslateError::Invalid)?;
    actions
        .iter()
        .map(|a| crate::v10::conditional_to_datapath(a).map_or_else(|| action_to_datapath(a), Ok))
        .collect()
}

/// Translates a write-actions list (or any list meant for an action set), after
/// [`OfAction::validate_action_set`]; refuses two set-fields that share a datapath place.
pub fn action_set_to_datapath(actions: &[OfAction]) -> Result<Vec<Action>, TranslateError> {
    OfAction::validate_action_set(actions).map_err(TranslateError::Invalid)?;
    let out = actions.iter().map(action_to_datapath).collect::<Result<Vec<_>, _>>()?;
    for (i, a) in out.iter().enumerate() {
        if let Action::SetField(f, _) = a {
            if out[..i].iter().any(|b| matches!(b, Action::SetField(g, _) if g == f)) {
                return Err(TranslateError::SharedSetField(*f));
            }
        }
    }
    Ok(out)
}

/// Translates one action that passed validation.
fn action_to_datapath(a: &OfAction) -> Result<Action, TranslateError> {
    Ok(match *a {
        OfAction::Output { port: port::CONTROLLER, max_len } => Action::Controller { max_len },
        OfAction::Output { port, .. } => Action::Output(port),
        OfAction::CopyTtlOut => Action::CopyTtlOut,
        OfAction::CopyTtlIn => Action::CopyTtlIn,
        OfAction::SetMplsTtl(t) => Action::SetMplsTtl(t),
        OfAction::DecMplsTtl => Action::DecMplsTtl,
        OfAction::PushVlan(t) => Action::PushVlan(t),
        OfAction::PopVlan => Action::PopVlan,
        OfAction::PushMpls(t) => Action::PushMpls(t),
        OfAction::PopMpls(t) => Action::PopMpls(t),
        OfAction::SetQueue(q) => Action::SetQueue(q),
        OfAction::Group(g) => Action::Group(g),
        OfAction::SetNwTtl(t) => Action::SetNwTtl(t),
        OfAction::DecNwTtl => Action::DecNwTtl,
        OfAction::SetField(ref oxm) => set_field(oxm)?,
        OfAction::PushPbb(t) => Action::PushPbb(t),
        OfAction::PopPbb => Action::PopPbb,
        OfAction::Experimenter { experimenter, .. } => {
            return Err(TranslateError::ExperimenterAction { experimenter })
        }
    })
}

/// A validated set-field: an unmasked basic field that is a header field.
fn set_field(oxm: &Oxm) -> Result<Action, TranslateError> {
    match field_value(oxm) {
        Some(FieldValue { field, value, mask: None, .. }) => Ok(Action::SetField(field, value)),
        // Validation refuses masks and other classes; kept total rather than panicking.
        _ => Err(TranslateError::Invalid(openflow::OfpError::new(
            openflow::ErrorKind::BAD_ACTION_BAD_SET_TYPE,
            format!("set_field cannot write {oxm:?}"),
        ))),
    }
}

/// Translates an instruction set. Checked here: at most one instruction per type
/// (`OFPBIC_DUP_INST`), the meter id, each action list, and that a goto-table names a
/// table the datapath has; not the goto's direction, which needs the rule's table
/// ([`super::flow_mod_to_rule`] checks it; the datapath ends the pipeline on a goto that
/// does not go forward). The order of the list does not matter: the datapath runs
/// instructions in the spec's fixed order.
pub fn instructions_to_datapath(insts: &[Instruction]) -> Result<Instructions, TranslateError> {
    for (i, inst) in insts.iter().enumerate() {
        let ty = inst.instruction_type();
        if insts[..i].iter().any(|o| o.instruction_type() == ty) {
            return Err(TranslateError::Invalid(openflow::OfpError::new(
                openflow::ErrorKind::BAD_INSTRUCTION_DUP_INST,
                format!("two instructions of type {ty}"),
            )));
        }
    }
    let mut out = Instructions::default();
    for inst in insts {
        match *inst {
            Instruction::GotoTable(t) => {
                if usize::from(t) >= NUM_TABLES {
                    return Err(TranslateError::GotoTable(t));
                }
                out.goto_table = Some(t);
            }
            Instruction::WriteMetadata { metadata, mask } => {
                out.write_metadata = Some((metadata, mask))
            }
            Instruction::WriteActions(ref a) => {
                out.write_actions = Some(action_set_to_datapath(a)?)
            }
            Instruction::ApplyActions(ref a) => out.apply = actions_to_datapath(a)?,
            Instruction::ClearActions => out.clear_actions = true,
            Instruction::Meter(id) => {
                // The table id only matters to goto-table: this checks the meter id range.
                inst.validate(0).map_err(TranslateError::Invalid)?;
                if id == OFPM_SLOWPATH || id == OFPM_CONTROLLER {
                    return Err(TranslateError::VirtualMeter(id));
                }
                out.meter = Some(id);
            }
            Instruction::Experimenter { experimenter, .. } => {
                return Err(TranslateError::ExperimenterInstruction { experimenter })
            }
        }
    }
    Ok(out)
}
