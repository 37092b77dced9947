//! The ovs-ofctl text form: flows, matches, actions and instructions, groups and meters,
//! parsed from and printed to the syntax `ovs-ofctl` reads and writes (OpenFlow 1.3, as
//! Open vSwitch 3.x's `ovs-ofctl -O OpenFlow13` has it; see `ovs-fields(7)`,
//! `ovs-actions(7)`, `ovs-ofctl(8)`).
//!
//! - [`parse_flow_mod`] / [`parse_flow`]: `add-flow`, `mod-flows`, `del-flows` lines to
//!   [`FlowMod`](crate::v13::FlowMod); [`format_flow_mod`] prints a flow-mod the way
//!   `dump-flows --no-stats` prints the flow, and [`print::flow_line`] a dumped flow.
//! - [`parse_match`], [`format_match`], [`format_actions`], [`format_instructions`]:
//!   the parts, for printing messages elsewhere.
//! - [`parse_group_mod`] / [`format_group_mod`] (`add-group`, `dump-groups`),
//!   [`parse_meter_mod`] / [`format_meter_mod`] (`add-meter`, `dump-meters`).
//!
//! Errors are [`TextError`]s that name the offending token and its byte offset. Printing
//! copies Open vSwitch's output (field names, order, omitted defaults); parsing accepts
//! what it prints plus the other spellings ovs-ofctl reads, and rejects what OpenFlow 1.3
//! cannot express (Nicira fields and actions, masked set-field, ...) with a message
//! saying so. Parsing normalises: match OXMs come sorted by field number, masked values
//! are cut to their mask, instructions come in the OpenFlow 1.1+ order.

mod action;
mod error;
mod field;
mod flow;
mod group;
mod instruction;
mod lexer;
mod match_format;
pub mod message;
mod meter;
pub mod print;
mod value;

#[cfg(test)]
pub(crate) mod strategy;
#[cfg(test)]
mod tests;

pub use action::{format_action, format_actions};
pub use error::TextError;
pub use field::oxm_field_named;
pub use flow::{format_duration, format_flow_mod, parse_flow, parse_flow_mod};
pub use group::{format_group_mod, parse_group_mod};
pub use meter::{format_meter_mod, parse_meter_mod};
#[cfg(test)]
pub(crate) use value::decode_hex;

use crate::action::Action;
use crate::instruction::Instruction;
use crate::match13::Match;

/// Prints a match as `dump-flows` does (shorthands like `tcp`, then fields in Open
/// vSwitch's order); empty for a match-all.
pub fn format_match(m: &Match) -> String {
    match_format::format_match_prio(m, None)
}

/// Parses a match alone (`ip,nw_src=10.0.0.0/8,tcp_dst=80`).
pub fn parse_match(s: &str) -> Result<Match, TextError> {
    let mut mb = field::MatchBuilder::default();
    let mut lx = lexer::Lexer::new(error::Span::new(s, 0));
    while let Some(it) = lx.next_item()? {
        let key = it.key.text;
        if mb.shorthand(key, it.token) {
            it.no_value()?;
        } else if let Some(f) = field::field_by_name(key) {
            mb.field(f, key, it.need_value()?, it.token)?;
        } else {
            return Err(it.err(format!("unknown field \"{key}\"")));
        }
    }
    mb.finish()
}

/// Parses an action list alone (`output:1,mod_vlan_vid:5`), with no match context
/// (so `mod_tp_src` is rejected and `mod_vlan_vid` pushes a tag first).
pub fn parse_actions(s: &str) -> Result<Vec<Action>, TextError> {
    let mut st = action::ActState::default();
    action::parse_action_list(error::Span::new(s, 0), &mut st)
}

/// Parses an instruction list alone (the text after `actions=`), for a match `m`
/// (which resolves `mod_tp_*` and the VLAN push of `mod_vlan_vid`).
pub fn parse_instructions(s: &str, m: &Match) -> Result<Vec<Instruction>, TextError> {
    let mut st = action::ActState::of_match(m);
    instruction::parse_instructions(error::Span::new(s, 0), &mut st)
}

pub use instruction::format_instructions;
