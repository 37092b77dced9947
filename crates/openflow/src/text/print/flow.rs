//! Flows: `dump-flows` lines, flow-mods (inside errors), flow-removed messages and
//! flow-stats requests, as Open vSwitch's `ofp-flow.c` and `ofp-monitor.c` print them.

use super::duration;
use crate::header::OFP10_VERSION;
use crate::match13::Match;
use crate::model::{port_name, Actions, FlowEntry, FlowMod, FlowRemoved, WireMatch};
use crate::v13::flow_mod::FlowModCommand;
use std::borrow::Cow;

/// A version's match as the printer reads it: as OXM (1.0's through
/// [`crate::v10::match10::Match::to_oxm`]).
pub(super) trait PrintMatch: WireMatch {
    /// This match as OXM.
    fn oxm(&self) -> Cow<'_, Match>;
}

impl PrintMatch for Match {
    fn oxm(&self) -> Cow<'_, Match> {
        Cow::Borrowed(self)
    }
}

impl PrintMatch for crate::v10::match10::Match {
    fn oxm(&self) -> Cow<'_, Match> {
        Cow::Owned(self.to_oxm())
    }
}

/// A version's action or instruction list as the printer shows it after `actions=`.
pub(super) trait PrintList: Sized {
    /// The list's text.
    fn list_text(list: &[Self]) -> String;
}

impl PrintList for crate::instruction::Instruction {
    fn list_text(list: &[Self]) -> String {
        crate::text::format_instructions(list)
    }
}

impl PrintList for crate::action::Action {
    fn list_text(list: &[Self]) -> String {
        crate::text::format_actions(list)
    }
}

impl PrintList for crate::v10::Action {
    fn list_text(list: &[Self]) -> String {
        crate::model::format_actions10(list)
    }
}

/// Open vSwitch's default priority, which match printing leaves out.
pub const DEFAULT_PRIORITY: u16 = 0x8000;

/// A match with its priority in front unless it is the default (`priority=7,ip`), as
/// Open vSwitch's `match_format` prints it.
pub fn match_with_priority(m: &Match, priority: u16) -> String {
    let mut s = String::new();
    if priority != DEFAULT_PRIORITY {
        s.push_str(&format!("priority={priority},"));
    }
    s.push_str(&crate::text::format_match(m));
    while s.ends_with(',') {
        s.pop();
    }
    s
}

/// Flow-mod flag words, each followed by a space.
fn flag_words(flags: u16, v10: bool) -> String {
    let mut names: Vec<&str> = vec![];
    if flags & 1 != 0 {
        names.push("send_flow_rem");
    }
    if flags & 2 != 0 {
        names.push("check_overlap");
    }
    if !v10 {
        if flags & 4 != 0 {
            names.push("reset_counts");
        }
        if flags & 8 != 0 {
            names.push("no_packet_counts");
        }
        if flags & 16 != 0 {
            names.push("no_byte_counts");
        }
    }
    names.iter().map(|n| format!("{n} ")).collect()
}

fn stat(name: &str, v: u64) -> String {
    if v == u64::MAX {
        format!("{name}=?, ")
    } else {
        format!("{name}={v}, ")
    }
}

/// One `dump-flows` line (without ovs-ofctl's leading space). Without `show_stats`
/// (`--no-stats`) the counters, duration and default cookie and table are left out.
pub fn flow_line(e: &FlowEntry, show_stats: bool) -> String {
    let mut s = String::new();
    if show_stats || e.cookie != 0 {
        s.push_str(&format!("cookie={:#x}, ", e.cookie));
    }
    if show_stats {
        s.push_str(&format!("duration={}, ", duration(e.duration_sec, e.duration_nsec)));
    }
    if show_stats || e.table_id != 0 {
        s.push_str(&format!("table={}, ", e.table_id));
    }
    if show_stats {
        s.push_str(&stat("n_packets", e.packet_count));
        s.push_str(&stat("n_bytes", e.byte_count));
    }
    if e.idle_timeout != 0 {
        s.push_str(&format!("idle_timeout={}, ", e.idle_timeout));
    }
    if e.hard_timeout != 0 {
        s.push_str(&format!("hard_timeout={}, ", e.hard_timeout));
    }
    s.push_str(&flag_words(e.flags, matches!(e.instructions, Actions::V10(_))));
    if e.importance != 0 {
        s.push_str(&format!("importance={}, ", e.importance));
    }
    let m = match_with_priority(&e.match_, e.priority);
    if !m.is_empty() {
        s.push_str(&m);
        s.push(' ');
    }
    s.push_str("actions=");
    s.push_str(&e.instructions.format());
    s
}

/// The body of a flow-stats reply: each flow on its own line.
pub(super) fn flow_lines(entries: impl Iterator<Item = FlowEntry>) -> String {
    entries.map(|e| format!("\n {}", flow_line(&e, true))).collect()
}

/// The body of a flow-mod of either version. 1.0 has no table or cookie mask (its
/// cookie is always the new flow's) and no flags past `check_overlap`.
pub(super) fn flow_mod<M: PrintMatch, A: PrintList>(f: &FlowMod<M, A>) -> String {
    let v10 = M::VERSION == OFP10_VERSION;
    let mut s = format!(" {}", crate::text::message::flow_mod_command_name(f.command));
    if !v10 && f.table_id != 0 {
        s.push_str(&format!(" table:{}", f.table_id));
    }
    s.push(' ');
    s.push_str(&match_with_priority(&f.match_.oxm(), f.priority));
    if !s.ends_with(' ') {
        s.push(' ');
    }
    let c = f.cookie;
    if v10 || f.command == FlowModCommand::Add {
        if c != 0 && c != u64::MAX {
            s.push_str(&format!("cookie:{c:#x} "));
        }
    } else if f.cookie_mask != 0 {
        s.push_str(&format!("cookie:{c:#x}/{:#x} ", f.cookie_mask));
    }
    if f.idle_timeout != 0 {
        s.push_str(&format!("idle:{} ", f.idle_timeout));
    }
    if f.hard_timeout != 0 {
        s.push_str(&format!("hard:{} ", f.hard_timeout));
    }
    if f.importance != 0 {
        s.push_str(&format!("importance:{} ", f.importance));
    }
    if f.buffer_id != u32::MAX {
        s.push_str(&format!("buf:{:#x} ", f.buffer_id));
    }
    if f.out_port != crate::action::port::ANY {
        s.push_str(&format!("out_port:{} ", port_name(f.out_port)));
    }
    s.push_str(&flag_words(f.flags, v10));
    s.push_str("actions=");
    s.push_str(&A::list_text(&f.instructions));
    s
}

/// The body of a flow-removed message of either version (1.0 has no table id or hard
/// timeout).
pub(super) fn flow_removed<M: PrintMatch>(f: &FlowRemoved<M>) -> String {
    let v10 = M::VERSION == OFP10_VERSION;
    let mut s = format!(
        " {} reason={}",
        match_with_priority(&f.match_.oxm(), f.priority),
        removed_reason(f.reason)
    );
    if !v10 && f.table_id != 255 {
        s.push_str(&format!(" table_id={}", f.table_id));
    }
    if f.cookie != 0 {
        s.push_str(&format!(" cookie:{:#x}", f.cookie));
    }
    s.push_str(&format!(
        " duration{} idle{}",
        duration(f.duration_sec, f.duration_nsec),
        f.idle_timeout
    ));
    if !v10 && f.hard_timeout != 0 {
        s.push_str(&format!(" hard{}", f.hard_timeout));
    }
    s.push_str(&format!(" pkts{} bytes{}\n", f.packet_count, f.byte_count));
    s
}

/// The reason word of a flow-removed message (any version: 1.0's reasons are the
/// first three, 1.4 adds eviction).
pub fn removed_reason(r: crate::model::FlowRemovedReason) -> String {
    use crate::model::FlowRemovedReason as R;
    match r {
        R::IdleTimeout => "idle".into(),
        R::HardTimeout => "hard".into(),
        R::Delete => "delete".into(),
        R::GroupDelete => "group_delete".into(),
        R::MeterDelete => "meter_delete".into(),
        R::Eviction => "eviction".into(),
        R::Unknown(n) => n.to_string(),
    }
}

/// The body of a flow or aggregate stats request.
pub(super) fn flow_request(table_id: u8, out_port: u32, m: &Match) -> String {
    let mut s = String::new();
    if table_id != 255 {
        s.push_str(&format!(" table={table_id}"));
    }
    if out_port != crate::action::port::ANY {
        s.push_str(&format!(" out_port={}", port_name(out_port)));
    }
    s.push(' ');
    s.push_str(&match_with_priority(m, DEFAULT_PRIORITY));
    s
}
