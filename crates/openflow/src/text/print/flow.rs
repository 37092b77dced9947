//! Flows: `dump-flows` lines, flow-mods (inside errors), flow-removed messages and
//! flow-stats requests, as Open vSwitch's `ofp-flow.c` and `ofp-monitor.c` print them.

use super::duration;
use crate::match13::Match;
use crate::model::{port_name, Actions, FlowEntry};
use crate::v13::flow_mod::FlowModCommand;

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
        s.push_str(&format!(
            "duration={}, ",
            duration(e.duration_sec, e.duration_nsec)
        ));
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
    s.push_str(&flag_words(
        e.flags,
        matches!(e.instructions, Actions::V10(_)),
    ));
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
    entries
        .map(|e| format!("\n {}", flow_line(&e, true)))
        .collect()
}

/// The common tail of both versions' flow-mods.
struct ModText<'a> {
    command: String,
    table: Option<u8>,
    match_: &'a Match,
    priority: u16,
    new_cookie: Option<u64>,
    cookie_filter: Option<(u64, u64)>,
    idle: u16,
    hard: u16,
    buffer_id: u32,
    out_port: Option<u32>,
    flags: String,
    actions: String,
}

impl ModText<'_> {
    fn render(&self) -> String {
        let mut s = format!(" {}", self.command);
        if let Some(t) = self.table.filter(|t| *t != 0) {
            s.push_str(&format!(" table:{t}"));
        }
        s.push(' ');
        s.push_str(&match_with_priority(self.match_, self.priority));
        if !s.ends_with(' ') {
            s.push(' ');
        }
        if let Some(c) = self.new_cookie.filter(|c| *c != 0 && *c != u64::MAX) {
            s.push_str(&format!("cookie:{c:#x} "));
        }
        if let Some((c, m)) = self.cookie_filter.filter(|(_, m)| *m != 0) {
            s.push_str(&format!("cookie:{c:#x}/{m:#x} "));
        }
        if self.idle != 0 {
            s.push_str(&format!("idle:{} ", self.idle));
        }
        if self.hard != 0 {
            s.push_str(&format!("hard:{} ", self.hard));
        }
        if self.buffer_id != u32::MAX {
            s.push_str(&format!("buf:{:#x} ", self.buffer_id));
        }
        if let Some(p) = self.out_port {
            s.push_str(&format!("out_port:{} ", port_name(p)));
        }
        s.push_str(&self.flags);
        s.push_str("actions=");
        s.push_str(&self.actions);
        s
    }
}

/// The body of a 1.3 flow-mod.
pub(super) fn flow_mod13(f: &crate::v13::FlowMod) -> String {
    let add = f.command == FlowModCommand::Add;
    ModText {
        command: crate::text::message::flow_mod_command_name(f.command),
        table: Some(f.table_id),
        match_: &f.match_,
        priority: f.priority,
        new_cookie: add.then_some(f.cookie),
        cookie_filter: (!add).then_some((f.cookie, f.cookie_mask)),
        idle: f.idle_timeout,
        hard: f.hard_timeout,
        buffer_id: f.buffer_id,
        out_port: (f.out_port != crate::action::port::ANY).then_some(f.out_port),
        flags: flag_words(f.flags, false),
        actions: crate::text::format_instructions(&f.instructions),
    }
    .render()
}

/// The body of a 1.0 flow-mod.
pub(super) fn flow_mod10(f: &crate::v10::FlowMod) -> String {
    let m = f.match_.to_oxm();
    ModText {
        command: crate::text::message::flow_mod_command_name(f.command),
        table: None,
        match_: &m,
        priority: f.priority,
        new_cookie: Some(f.cookie),
        cookie_filter: None,
        idle: f.idle_timeout,
        hard: f.hard_timeout,
        buffer_id: f.buffer_id,
        out_port: (f.out_port != crate::action::port::ANY).then_some(f.out_port),
        flags: flag_words(f.flags, true),
        actions: crate::model::format_actions10(&f.instructions),
    }
    .render()
}

/// The tail of a flow-removed message shared by both versions.
#[allow(clippy::too_many_arguments)]
fn removed(
    m: &Match,
    priority: u16,
    reason: String,
    table_id: u8,
    cookie: u64,
    dur: (u32, u32),
    idle: u16,
    hard: u16,
    packets: u64,
    bytes: u64,
) -> String {
    let mut s = format!(" {} reason={reason}", match_with_priority(m, priority));
    if table_id != 255 {
        s.push_str(&format!(" table_id={table_id}"));
    }
    if cookie != 0 {
        s.push_str(&format!(" cookie:{cookie:#x}"));
    }
    s.push_str(&format!(" duration{} idle{idle}", duration(dur.0, dur.1)));
    if hard != 0 {
        s.push_str(&format!(" hard{hard}"));
    }
    s.push_str(&format!(" pkts{packets} bytes{bytes}\n"));
    s
}

/// The reason word of a flow-removed message (either version: 1.0's reasons are the
/// first three).
pub fn removed_reason(r: crate::model::FlowRemovedReason) -> String {
    use crate::model::FlowRemovedReason as R;
    match r {
        R::IdleTimeout => "idle".into(),
        R::HardTimeout => "hard".into(),
        R::Delete => "delete".into(),
        R::GroupDelete => "group_delete".into(),
        R::MeterDelete => "meter_delete".into(),
        R::Unknown(n) => n.to_string(),
    }
}

pub(super) fn flow_removed13(f: &crate::v13::FlowRemoved) -> String {
    removed(
        &f.match_,
        f.priority,
        removed_reason(f.reason),
        f.table_id,
        f.cookie,
        (f.duration_sec, f.duration_nsec),
        f.idle_timeout,
        f.hard_timeout,
        f.packet_count,
        f.byte_count,
    )
}

pub(super) fn flow_removed10(f: &crate::v10::FlowRemoved) -> String {
    removed(
        &f.match_.to_oxm(),
        f.priority,
        removed_reason(f.reason),
        255,
        f.cookie,
        (f.duration_sec, f.duration_nsec),
        f.idle_timeout,
        0,
        f.packet_count,
        f.byte_count,
    )
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
