//! Flows in ovs-ofctl text: `add-flow`, `mod-flows` and `del-flows` syntax to
//! [`FlowMod`], and [`FlowMod`]s and flow statistics back to the lines
//! `ovs-ofctl -O OpenFlow13 dump-flows` prints.
//!
//! Which keywords a flow may hold depends on the command, as in Open vSwitch: add and
//! modify take `priority`, timeouts, flags and require `actions=` (which takes the rest of
//! the line); `del-flows` takes `out_port`/`out_group` and no actions (`priority` only
//! with `--strict`); a cookie mask (`cookie=V/M`) only selects flows to modify or delete.
//! The statistics `dump-flows` prints (`duration`, `n_packets`, `n_bytes`, `idle_age`,
//! `hard_age`) are accepted and ignored, so a dumped line parses. Defaults: table 0
//! (`OFPTT_ALL` for deletes), priority 32768, no buffer, out port and group `ANY`.

use super::action::ActState;
use super::error::{Span, TextError};
use super::field::{field_by_name, is_ovs_only_field, MatchBuilder};
use super::instruction::{format_instructions, parse_instructions};
use super::lexer::Lexer;
use super::match_format::format_match_prio;
use super::value::*;
use crate::action::{port, OFPG_ANY};
use crate::instruction::Instruction;
use crate::match13::Match;
use crate::v13::flow_mod::{flow_mod_flags as ff, FlowMod, FlowModCommand, OFPTT_ALL};

const FLAG_NAMES: [(&str, u16); 5] = [
    ("send_flow_rem", ff::SEND_FLOW_REM),
    ("check_overlap", ff::CHECK_OVERLAP),
    ("reset_counts", ff::RESET_COUNTS),
    ("no_packet_counts", ff::NO_PKT_COUNTS),
    ("no_byte_counts", ff::NO_BYT_COUNTS),
];

/// Parses an `add-flow` line (actions required).
pub fn parse_flow(s: &str) -> Result<FlowMod, TextError> {
    parse_flow_mod(s, FlowModCommand::Add)
}

/// Parses a flow in the syntax of the ovs-ofctl command that `command` stands for:
/// `Add` (add-flow), `Modify`/`ModifyStrict` (mod-flows [--strict]),
/// `Delete`/`DeleteStrict` (del-flows [--strict]).
pub fn parse_flow_mod(s: &str, command: FlowModCommand) -> Result<FlowMod, TextError> {
    use FlowModCommand as C;
    let whole = Span::new(s, 0);
    if let C::Unknown(n) = command {
        return Err(whole.err(format!("flow-mod command {n} has no ovs-ofctl syntax")));
    }
    let is_add = command == C::Add;
    let is_mod = matches!(command, C::Modify | C::ModifyStrict);
    let is_del = matches!(command, C::Delete | C::DeleteStrict);
    let cmd_name = match command {
        C::Add => "add-flow",
        C::Modify | C::ModifyStrict => "mod-flows",
        _ => "del-flows",
    };
    let mut fm =
        FlowMod { command, table_id: if is_del { OFPTT_ALL } else { 0 }, ..FlowMod::default() };
    let mut mb = MatchBuilder::default();
    let mut actions: Option<Span<'_>> = None;
    let mut table_tok: Option<Span<'_>> = None;
    let mut lx = Lexer::new(whole);
    while let Some(it) = lx.next_item()? {
        let key = it.key.text;
        let not_for = |what: &str| {
            it.err(format!(
                "{what} cannot be used with {cmd_name}{}",
                if key == "priority" { " without --strict" } else { "" }
            ))
        };
        match key {
            "actions" | "action" => {
                let v = it.need_value()?;
                if is_del {
                    return Err(not_for("actions"));
                }
                actions = Some(lx.take_rest_from(v.pos));
            }
            "table" => {
                let v = parse_num(it.need_value()?, 255, "table")? as u8;
                fm.table_id = v;
                table_tok = Some(it.token);
            }
            "priority" => {
                if command == C::Delete {
                    return Err(not_for("priority"));
                }
                fm.priority = parse_num(it.need_value()?, 0xffff, "priority")? as u16;
            }
            "cookie" => {
                let (v, m) = parse_num_masked(it.need_value()?, u64::MAX, "cookie")?;
                if let Some(m) = m {
                    if is_add {
                        return Err(it.err("flow additions cannot use a cookie mask"));
                    }
                    fm.cookie_mask = m;
                    fm.cookie = v & m;
                } else {
                    fm.cookie = v;
                    fm.cookie_mask = 0;
                }
            }
            "idle_timeout" | "hard_timeout" => {
                if is_del {
                    return Err(not_for(key));
                }
                let v = parse_num(it.need_value()?, 0xffff, key)? as u16;
                if key == "idle_timeout" {
                    fm.idle_timeout = v;
                } else {
                    fm.hard_timeout = v;
                }
            }
            "importance" => {
                if is_del {
                    return Err(not_for(key));
                }
                // OpenFlow 1.4's; older versions' encoders leave it out.
                fm.importance = parse_num(it.need_value()?, 0xffff, key)? as u16;
            }
            "flags" => {
                if is_del {
                    return Err(not_for(key));
                }
                // Adds to the named flags rather than replacing them: the printer writes
                // the named bits by name and only the rest as `flags=`.
                fm.flags |= parse_num(it.need_value()?, 0xffff, key)? as u16;
            }
            "out_port" => {
                if !is_del {
                    return Err(not_for(key));
                }
                fm.out_port = parse_port(it.need_value()?)?;
            }
            "out_group" => {
                if !is_del {
                    return Err(not_for(key));
                }
                fm.out_group = parse_group_id(it.need_value()?)?;
            }
            "duration" | "n_packets" | "n_bytes" | "idle_age" | "hard_age" => {
                it.need_value()?;
            }
            _ => {
                if let Some(&(_, bit)) = FLAG_NAMES.iter().find(|(n, _)| *n == key) {
                    it.no_value()?;
                    if is_del {
                        return Err(not_for(key));
                    }
                    fm.flags |= bit;
                } else if mb.shorthand(key, it.token) {
                    it.no_value()?;
                } else if let Some(f) = field_by_name(key) {
                    mb.field(f, key, it.need_value()?, it.token)?;
                } else if is_ovs_only_field(key) {
                    return Err(it.err(format!(
                        "field \"{key}\" is an Open vSwitch extension that OpenFlow 1.3 \
                         cannot match"
                    )));
                } else {
                    return Err(it.err(format!("unknown field \"{key}\"")));
                }
            }
        }
    }
    if is_add && fm.table_id == OFPTT_ALL {
        let t = table_tok.unwrap_or(whole);
        return Err(t.err("table 255 (all tables) cannot hold a new flow (0 to 254)"));
    }
    fm.match_ = mb.finish()?;
    match actions {
        Some(a) => {
            let mut st = ActState::of_match(&fm.match_);
            fm.instructions = parse_instructions(a, &mut st)?;
        }
        None if is_add || is_mod => {
            let end = Span::new("", s.len());
            return Err(end.err(format!("{cmd_name} needs actions= (use actions=drop to drop)")));
        }
        None => {}
    }
    Ok(fm)
}

/// A group id: a number, `all` or `any`.
pub(crate) fn parse_group_id(sp: Span<'_>) -> Result<u32, TextError> {
    if sp.text.eq_ignore_ascii_case("all") {
        Ok(crate::action::OFPG_ALL)
    } else if sp.text.eq_ignore_ascii_case("any") {
        Ok(OFPG_ANY)
    } else {
        Ok(parse_num(sp, u32::MAX as u64, "group id")? as u32)
    }
}

fn format_flags(flags: u16, out: &mut String) {
    for (n, bit) in FLAG_NAMES {
        if flags & bit != 0 {
            out.push_str(n);
            out.push(' ');
        }
    }
    let rest = flags & !ff::ALL;
    if rest != 0 {
        out.push_str(&format!("flags={rest:#x} "));
    }
}

fn push_match_and_actions(
    out: &mut String,
    m: &Match,
    priority: u16,
    insts: Option<&[Instruction]>,
) {
    let ms = format_match_prio(m, Some(priority));
    out.push_str(&ms);
    if let Some(insts) = insts {
        if !ms.is_empty() {
            out.push(' ');
        }
        out.push_str("actions=");
        out.push_str(&format_instructions(insts));
    }
}

/// Prints a flow as `ovs-ofctl -O OpenFlow13 --no-stats dump-flows` prints the flow it
/// installs (without the one-space indent that ovs-ofctl puts before each line), e.g.
/// `cookie=0x5, table=3, hard_timeout=9, reset_counts priority=7,ip actions=output:2`.
/// For deletes there are no actions, and a cookie mask, `out_port` and `out_group` that
/// select flows are printed as `del-flows` reads them.
pub fn format_flow_mod(fm: &FlowMod) -> String {
    let mut s = String::new();
    if fm.cookie != 0 || fm.cookie_mask != 0 {
        s.push_str(&format!("cookie={:#x}", fm.cookie));
        if fm.cookie_mask != 0 {
            s.push_str(&format!("/{:#x}", fm.cookie_mask));
        }
        s.push_str(", ");
    }
    if fm.table_id != 0 {
        s.push_str(&format!("table={}, ", fm.table_id));
    }
    if fm.idle_timeout != 0 {
        s.push_str(&format!("idle_timeout={}, ", fm.idle_timeout));
    }
    if fm.hard_timeout != 0 {
        s.push_str(&format!("hard_timeout={}, ", fm.hard_timeout));
    }
    if fm.out_port != port::ANY {
        s.push_str(&format!("out_port={}, ", format_port(fm.out_port)));
    }
    if fm.out_group != OFPG_ANY {
        s.push_str(&format!("out_group={}, ", fm.out_group));
    }
    format_flags(fm.flags, &mut s);
    let is_del = matches!(fm.command, FlowModCommand::Delete | FlowModCommand::DeleteStrict);
    push_match_and_actions(
        &mut s,
        &fm.match_,
        fm.priority,
        (!is_del).then_some(fm.instructions.as_slice()),
    );
    let trimmed = s.trim_end_matches([',', ' ']).len();
    s.truncate(trimmed);
    s
}

/// A duration as Open vSwitch prints it: seconds, then 3 decimals when the fraction is
/// whole milliseconds, else as many as needed; then `s`.
pub fn format_duration(sec: u32, nsec: u32) -> String {
    let mut s = sec.to_string();
    if nsec > 0 {
        if (nsec / 1_000_000) * 1_000_000 == nsec {
            s.push_str(&format!(".{:03}", nsec / 1_000_000));
        } else {
            let frac = format!("{nsec:09}");
            s.push('.');
            s.push_str(frac.trim_end_matches('0'));
        }
    }
    s.push('s');
    s
}
