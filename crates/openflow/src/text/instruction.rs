//! Instructions in ovs-ofctl text: the value of a flow's `actions=`.
//!
//! `meter:N`, `clear_actions`, `write_actions(ACTIONS)`, `write_metadata:V[/M]`,
//! `goto_table:N` and `experimenter_instruction(id=N,data=0xHEX)` are instructions; every
//! other item is an action of the apply-actions instruction. As Open vSwitch requires,
//! instructions come in the OpenFlow 1.1+ order — meter, apply-actions (contiguous),
//! clear-actions, write-actions, write-metadata, goto-table — each at most once; the
//! printer writes them in that order. An empty apply list (`drop`, or nothing) yields no
//! apply-actions instruction, and no instructions at all print as `drop`.

use super::action::{
    format_actions, parse_action, parse_action_list, parse_experimenter, ActState,
};
use super::error::{Span, TextError};
use super::lexer::Lexer;
use super::match_format::hex_bytes;
use super::value::*;
use crate::instruction::Instruction;

const RANK_NAMES: [&str; 7] = [
    "meter",
    "apply_actions",
    "clear_actions",
    "write_actions",
    "write_metadata",
    "goto_table",
    "experimenter_instruction",
];

/// Parses the text after `actions=`.
pub(crate) fn parse_instructions(
    sp: Span<'_>,
    st: &mut ActState,
) -> Result<Vec<Instruction>, TextError> {
    let items = Lexer::new(sp).collect_all()?;
    let mut out: Vec<Instruction> = Vec::new();
    let mut apply = Vec::new();
    let mut drop_seen = false;
    let mut last: Option<(usize, &str)> = None;
    for it in &items {
        let key = it.key.text.to_ascii_lowercase();
        let inst = match key.as_str() {
            "meter" => {
                Some(Instruction::Meter(
                    parse_num(it.need_value()?, u32::MAX as u64, "meter")? as u32
                ))
            }
            "clear_actions" => {
                it.no_value()?;
                Some(Instruction::ClearActions)
            }
            "write_actions" => {
                let v = it.need_value()?;
                let mut nested = *st;
                let acts = parse_action_list(v, &mut nested)?;
                Some(Instruction::WriteActions(acts))
            }
            "write_metadata" => {
                let (v, m) = parse_num_masked(it.need_value()?, u64::MAX, "write_metadata")?;
                Some(Instruction::WriteMetadata {
                    metadata: v & m.unwrap_or(u64::MAX),
                    mask: m.unwrap_or(u64::MAX),
                })
            }
            "goto_table" => {
                Some(Instruction::GotoTable(parse_num(it.need_value()?, 254, "goto_table")? as u8))
            }
            "experimenter_instruction" => {
                let (experimenter, data) = parse_experimenter(it)?;
                Some(Instruction::Experimenter { experimenter, data })
            }
            _ => None,
        };
        let r = inst.as_ref().map(Instruction::execution_rank).unwrap_or(1);
        let name = RANK_NAMES.get(r).copied().unwrap_or("instruction");
        if let Some((lr, lname)) = last {
            if r < lr {
                return Err(it.err(format!(
                    "invalid instruction order: {name} must come before {lname} (the \
                     OpenFlow 1.1+ order is meter, apply actions, clear_actions, \
                     write_actions, write_metadata, goto_table)"
                )));
            }
            if r == lr && r != 1 {
                return Err(it.err(format!("{name} is given twice")));
            }
        }
        last = Some((r, name));
        match inst {
            Some(i) => out.push(i),
            None => {
                if key == "drop" {
                    it.no_value()?;
                    if !apply.is_empty() {
                        return Err(it.err("drop must be the only action"));
                    }
                    drop_seen = true;
                } else {
                    if drop_seen {
                        return Err(it.err("drop must be the only action"));
                    }
                    parse_action(it, st, &mut apply)?;
                }
            }
        }
    }
    if !apply.is_empty() {
        let at = out.iter().position(|i| i.execution_rank() > 1).unwrap_or(out.len());
        out.insert(at, Instruction::ApplyActions(apply));
    }
    Ok(out)
}

/// Prints instructions as Open vSwitch does: in the OpenFlow 1.1+ order, apply-actions as
/// bare actions, `drop` when there is nothing to print.
pub fn format_instructions(insts: &[Instruction]) -> String {
    let mut sorted: Vec<&Instruction> = insts.iter().collect();
    sorted.sort_by_key(|i| i.execution_rank());
    let parts: Vec<String> = sorted
        .into_iter()
        .filter_map(|i| match i {
            Instruction::Meter(m) => Some(format!("meter:{m}")),
            Instruction::ApplyActions(a) if a.is_empty() => None,
            Instruction::ApplyActions(a) => Some(format_actions(a)),
            Instruction::ClearActions => Some("clear_actions".into()),
            Instruction::WriteActions(a) if a.is_empty() => Some("write_actions()".into()),
            Instruction::WriteActions(a) => Some(format!("write_actions({})", format_actions(a))),
            Instruction::WriteMetadata { metadata, mask } => Some(if *mask == u64::MAX {
                format!("write_metadata:{}", hex_or_zero(*metadata))
            } else {
                format!("write_metadata:{}/{}", hex_or_zero(*metadata), hex_or_zero(*mask))
            }),
            Instruction::GotoTable(t) => Some(format!("goto_table:{t}")),
            Instruction::Experimenter { experimenter, data } => Some(format!(
                "experimenter_instruction(id={experimenter:#x},data=0x{})",
                hex_bytes(data)
            )),
        })
        .collect();
    if parts.is_empty() {
        "drop".into()
    } else {
        parts.join(",")
    }
}
