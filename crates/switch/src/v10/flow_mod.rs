//! OpenFlow 1.0 flow-mods as 1.3 flow-mods, and 1.3 flow-removed messages as 1.0 ones.
//!
//! A 1.0 flow-mod becomes a 1.3 flow-mod with the same command, cookie (and
//! cookie mask 0: 1.0 never filters by cookie), timeouts, buffer id and out port
//! (`OFPP_NONE` → `OFPP_ANY`; out group `OFPG_ANY`), the match of [`match_to_v13`] and
//! one apply-actions instruction ([`actions_to_v13`] with the facts of the match; no
//! instruction for an empty list, which drops). Where 1.0 and 1.3 differ:
//!
//! - tables: 1.0 has no table field. An ADD goes to table 0; MODIFY, MODIFY_STRICT,
//!   DELETE and DELETE_STRICT act on every table (`OFPTT_ALL`), as Open vSwitch does
//!   (without its table-id extension), so a 1.0 controller reaches every entry its dump
//!   lists. 1.3 allows `OFPTT_ALL` only for deletes: the agent applies a modify to each
//!   table it selects entries in ([`FlowModV13::per_table`]);
//! - priority: an exact-match 1.0 flow (no bit of `OFPFW_ALL` set) is "always the highest
//!   priority" (1.0 §3.4), so it gets 0xffff whatever the message says, for every
//!   command (so strict modifies and deletes find it), as Open vSwitch does;
//! - ADD: 1.0 removes an identical entry "including its counters" (§4.6), so the 1.3 add
//!   carries `OFPFF_RESET_COUNTS`;
//! - MODIFY / MODIFY_STRICT: in 1.0 a modify that matches no entry acts like an ADD
//!   (with zeroed counters); [`FlowModV13::add_if_unmatched`] is that add (to table 0),
//!   for the agent to apply when the modify selected nothing in any table. Otherwise only the actions change, as in
//!   1.3 (cookie, timeouts, flags, counters stay);
//! - DELETE / DELETE_STRICT: 1.0 ignores their actions, so they are not translated;
//! - flags: `SEND_FLOW_REM` and `CHECK_OVERLAP` keep their meaning; `EMERG` is refused as
//!   Open vSwitch refuses it (no emergency flow cache): with a timeout
//!   `OFPFMFC_BAD_EMERG_TIMEOUT` (1.0 §4.6, from `FlowMod::validate`), otherwise
//!   `OFPFMFC_ALL_TABLES_FULL` (1.3 `OFPFMFC_TABLE_FULL`), for every command; a bit 1.0
//!   does not define is `OFPFMFC_BAD_FLAGS` (sent to a 1.0 peer as `OFPFMFC_UNSUPPORTED`).
//!
//! A 1.3 flow-removed becomes the 1.0 one with the match of [`match_from_v13`]; the table
//! id and hard timeout are dropped (1.0 has neither); the group- and meter-delete reasons
//! become `OFPRR_DELETE`.

use openflow::action::OFPG_ANY;
use openflow::instruction::Instruction;
use openflow::v10::flow::flow_mod_flags as f10;
use openflow::v10::match10::wildcards as fw;
use openflow::v10::FlowRemovedReason as Reason10;
use openflow::v10::{FlowMod as FlowMod10, FlowRemoved as FlowRemoved10};
use openflow::v13::flow_mod::{
    flow_mod_flags as f13, FlowMod as FlowMod13, FlowModCommand as Cmd, OFPTT_ALL,
};
use openflow::v13::{FlowRemoved as FlowRemoved13, FlowRemovedReason as Reason13};
use openflow::{ErrorKind, OfpError};

use super::actions::{actions_to_v13, PacketFacts};
use super::flow_match::{match_from_v13, match_to_v13};

/// The priority of an exact-match 1.0 flow.
const EXACT_PRIORITY: u16 = 0xffff;

/// A 1.0 flow-mod in 1.3 terms.
///
/// Invariants: `flow_mod.table_id` is 0 for an ADD and `OFPTT_ALL` for every other
/// command; `add_if_unmatched` is `Some` exactly when `flow_mod` is a MODIFY or
/// MODIFY_STRICT, and is then the same flow-mod as an ADD to table 0 (with
/// `OFPFF_RESET_COUNTS`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowModV13 {
    /// The flow-mod to apply.
    pub flow_mod: FlowMod13,
    /// For a modify: the add to apply instead when the modify selects no entry (1.0 §4.6).
    pub add_if_unmatched: Option<FlowMod13>,
}

impl FlowModV13 {
    /// The flow-mod for one table: `flow_mod` with that table id (a modify is applied
    /// this way to each table it selects entries in, 1.3 having no all-tables modify).
    pub fn per_table(&self, table_id: u8) -> FlowMod13 {
        FlowMod13 { table_id, ..self.flow_mod.clone() }
    }
}

/// Translates a 1.0 flow-mod (module comment). Errors, in this order: those of
/// [`FlowMod10::validate`] (unknown command, `EMERG` with timeouts, bad action
/// arguments), `EMERG` (`OFPFMFC_TABLE_FULL`), undefined flag bits
/// (`OFPFMFC_BAD_FLAGS`), and for adds and modifies those of [`actions_to_v13`].
pub fn flow_mod_to_v13(fm: &FlowMod10) -> Result<FlowModV13, OfpError> {
    fm.validate()?;
    if fm.flags & f10::EMERG != 0 {
        return Err(OfpError::new(
            ErrorKind::FLOW_MOD_FAILED_TABLE_FULL,
            "this switch has no emergency flow cache (OFPFF_EMERG)",
        ));
    }
    let known = f10::SEND_FLOW_REM | f10::CHECK_OVERLAP;
    if fm.flags & !known != 0 {
        return Err(OfpError::new(
            ErrorKind::FLOW_MOD_FAILED_BAD_FLAGS,
            format!("flow-mod flags {:#06x} set bits OpenFlow 1.0 does not define", fm.flags),
        ));
    }
    // `validate` refused an unknown command already; kept total.
    fm.check_command()?;
    let command = fm.command;
    let instructions = if fm.installs() {
        let actions = actions_to_v13(&fm.instructions, PacketFacts::of_match(&fm.match_))?;
        if actions.is_empty() {
            Vec::new()
        } else {
            vec![Instruction::ApplyActions(actions)]
        }
    } else {
        Vec::new()
    };
    let mut flags = 0;
    if fm.flags & f10::SEND_FLOW_REM != 0 {
        flags |= f13::SEND_FLOW_REM;
    }
    if fm.flags & f10::CHECK_OVERLAP != 0 {
        flags |= f13::CHECK_OVERLAP;
    }
    let priority = if fm.match_.wildcards & fw::ALL == 0 { EXACT_PRIORITY } else { fm.priority };
    let mut flow_mod = FlowMod13 {
        cookie: fm.cookie,
        cookie_mask: 0,
        table_id: if command == Cmd::Add { 0 } else { OFPTT_ALL },
        command,
        idle_timeout: fm.idle_timeout,
        hard_timeout: fm.hard_timeout,
        priority,
        buffer_id: fm.buffer_id,
        out_port: fm.out_port,
        out_group: OFPG_ANY,
        flags,
        importance: 0,
        match_: match_to_v13(&fm.match_),
        instructions,
    };
    let as_add = |m: &FlowMod13| FlowMod13 {
        command: Cmd::Add,
        table_id: 0,
        flags: m.flags | f13::RESET_COUNTS,
        ..m.clone()
    };
    let add_if_unmatched = match command {
        Cmd::Modify | Cmd::ModifyStrict => Some(as_add(&flow_mod)),
        _ => None,
    };
    if command == Cmd::Add {
        flow_mod.flags |= f13::RESET_COUNTS;
    }
    Ok(FlowModV13 { flow_mod, add_if_unmatched })
}

/// A 1.3 flow-removed as a 1.0 one (module comment); the error of [`match_from_v13`]
/// when 1.0 cannot express the entry's match.
pub fn flow_removed_to_v10(fr: &FlowRemoved13) -> Result<FlowRemoved10, OfpError> {
    let reason = match fr.reason {
        Reason13::IdleTimeout => Reason10::IdleTimeout,
        Reason13::HardTimeout => Reason10::HardTimeout,
        Reason13::Delete | Reason13::GroupDelete | Reason13::MeterDelete | Reason13::Eviction => {
            Reason10::Delete
        }
        Reason13::Unknown(n) => Reason10::Unknown(n),
    };
    // One type in both versions: the same entry with the 1.0 match and reason (1.0 has
    // no table id or hard timeout; encoding leaves them out).
    Ok(FlowRemoved10 {
        match_: match_from_v13(&fr.match_)?,
        cookie: fr.cookie,
        priority: fr.priority,
        reason,
        table_id: 0,
        duration_sec: fr.duration_sec,
        duration_nsec: fr.duration_nsec,
        idle_timeout: fr.idle_timeout,
        hard_timeout: 0,
        packet_count: fr.packet_count,
        byte_count: fr.byte_count,
    })
}
