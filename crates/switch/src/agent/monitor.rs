//! Flow monitors (OpenFlow 1.4.1 §7.3.5.19): a 1.4 connection asks, with an
//! `OFPMP_FLOW_MONITOR` request, to be told of changes to the flows a filter selects
//! (table, out port, out group, and a match that covers the entry's, as a non-strict
//! flow-stats request selects). The reply lists the flows that match now when the
//! monitor asks for `OFPFMF_INITIAL`; afterwards every add, modify and removal of a
//! selected flow (`OFPFMF_ADD`, `_MODIFY`, `_REMOVED`), by any connection, by expiry or
//! by a group or meter delete, reaches the connection as an unsolicited flow-monitor
//! reply (with a switch-chosen xid, as its other asynchronous messages), instructions
//! included with `OFPFMF_INSTRUCTIONS` except for removals. A connection's own changes
//! come abbreviated, one `OFPFME_ABBREV` with the xid of each request that made them,
//! unless `OFPFMF_NO_ABBREV`; `OFPFMF_ONLY_OWN` limits a monitor to them. A bundle's
//! changes are reported once it is committed, each message's by its own xid.
//!
//! Monitors belong to their connection (at most [`MAX_MONITORS`]). While any exists the
//! flow agent records its changes ([`FlowAgent::watch`](super::FlowAgent::watch)); the
//! agent hands them out after each request and timer ([`Agent::report_flow_events`]).
//! Updates are not paused when a connection falls behind (`OFPFME_PAUSED` is never sent).

use std::collections::BTreeMap;

use openflow::v13::flow_mod::OFPTT_ALL;
use openflow::v13::multipart::{
    monitor_flags as mf, FlowMonitorCommand, FlowMonitorRequest, FlowUpdate, FlowUpdateFull,
    FullUpdateEvent, MultipartReplyBody,
};
use openflow::{v13, ErrorKind, Message, OfpError};

use super::flow_agent::FlowEvent;
use super::{multipart::split, Agent, SessionId};
use crate::flows::{FlowEntry, NormMatch, NUM_TABLES};

/// Monitors one connection may hold.
pub const MAX_MONITORS: usize = 1024;

/// A connection's flow monitors by id.
pub(super) type Monitors = BTreeMap<u32, Monitor>;

/// One flow monitor: the request that set it up, and its match normalised once (as the
/// flow tables compare matches).
pub(super) struct Monitor {
    req: FlowMonitorRequest,
    norm: NormMatch,
}

/// The connection and xid of the request that made a change, if one did.
pub(super) type Origin = Option<(SessionId, u32)>;

/// Whether monitor `m` selects `entry` of `table`, whose match normalised is `norm`.
fn selects(m: &Monitor, table: u8, entry: &FlowEntry, norm: &NormMatch) -> bool {
    let r = &m.req;
    (r.table_id == OFPTT_ALL || r.table_id == table)
        && entry.outputs_to(r.out_port)
        && entry.outputs_to_group(r.out_group)
        && m.norm.covers(norm)
}

/// The full update for `entry` of `table` that monitor `m` reports (a removal's without
/// instructions).
fn full(
    m: &FlowMonitorRequest,
    event: FullUpdateEvent,
    table: u8,
    e: &FlowEntry,
    reason: u8,
) -> FlowUpdate {
    let with = m.flags & mf::INSTRUCTIONS != 0 && event != FullUpdateEvent::Removed;
    let instructions = if with { e.instructions.clone() } else { Vec::new() };
    FlowUpdate::Full(FlowUpdateFull {
        event,
        table_id: table,
        reason,
        idle_timeout: e.idle_timeout,
        hard_timeout: e.hard_timeout,
        priority: e.priority,
        cookie: e.cookie,
        match_: e.match_.clone(),
        instructions,
    })
}

/// The flag a monitor needs to report `event`.
fn wanted_by(event: FullUpdateEvent) -> u16 {
    match event {
        FullUpdateEvent::Added => mf::ADD,
        FullUpdateEvent::Removed => mf::REMOVED,
        FullUpdateEvent::Modified => mf::MODIFY,
        _ => 0,
    }
}

impl Agent {
    /// A flow-monitor request of connection `id`: the reply (the initial flows, when
    /// asked for), or the error.
    pub(super) fn flow_monitor(
        &mut self,
        id: SessionId,
        m: &FlowMonitorRequest,
        version: u8,
    ) -> Result<Vec<v13::Message>, OfpError> {
        let known = mf::INITIAL
            | mf::ADD
            | mf::REMOVED
            | mf::MODIFY
            | mf::INSTRUCTIONS
            | mf::NO_ABBREV
            | mf::ONLY_OWN;
        if m.flags & !known != 0 {
            return Err(OfpError::new(
                ErrorKind::FLOW_MONITOR_FAILED_BAD_FLAGS,
                format!("flow monitor flags {:#x} set undefined bits", m.flags),
            ));
        }
        if m.table_id != OFPTT_ALL && usize::from(m.table_id) >= NUM_TABLES {
            return Err(OfpError::new(
                ErrorKind::FLOW_MONITOR_FAILED_BAD_TABLE_ID,
                format!("table {} does not exist", m.table_id),
            ));
        }
        let Some(s) = self.sessions.get_mut(&id) else { return Ok(Vec::new()) };
        let exists = s.monitors.contains_key(&m.monitor_id);
        match m.command {
            FlowMonitorCommand::Add if exists => {
                return Err(OfpError::new(
                    ErrorKind::FLOW_MONITOR_FAILED_MONITOR_EXISTS,
                    format!("monitor {} exists", m.monitor_id),
                ))
            }
            FlowMonitorCommand::Add if s.monitors.len() >= MAX_MONITORS => {
                return Err(OfpError::new(
                    ErrorKind::FLOW_MONITOR_FAILED_UNKNOWN,
                    format!("a connection may hold {MAX_MONITORS} flow monitors"),
                ))
            }
            FlowMonitorCommand::Modify | FlowMonitorCommand::Delete if !exists => {
                return Err(OfpError::new(
                    ErrorKind::FLOW_MONITOR_FAILED_UNKNOWN_MONITOR,
                    format!("no monitor {}", m.monitor_id),
                ))
            }
            FlowMonitorCommand::Delete => {
                s.monitors.remove(&m.monitor_id);
            }
            FlowMonitorCommand::Add | FlowMonitorCommand::Modify => {
                let norm = NormMatch::new(&m.match_);
                s.monitors.insert(m.monitor_id, Monitor { req: m.clone(), norm });
            }
            FlowMonitorCommand::Unknown(c) => {
                return Err(OfpError::new(
                    ErrorKind::FLOW_MONITOR_FAILED_BAD_COMMAND,
                    format!("flow monitor command {c} is not defined"),
                ))
            }
        }
        let watching = self.sessions.values().any(|s| !s.monitors.is_empty());
        self.flows.watch(watching);
        let initial = m.command != FlowMonitorCommand::Delete && m.flags & mf::INITIAL != 0;
        let updates: Vec<FlowUpdate> = if initial {
            let watch = Monitor { req: m.clone(), norm: NormMatch::new(&m.match_) };
            self.flows
                .flows()
                .iter()
                .filter(|(t, k, e)| selects(&watch, *t, e, &k.match_))
                .map(|(t, _, e)| full(m, FullUpdateEvent::Initial, t, e, 0))
                .collect()
        } else {
            Vec::new()
        };
        Ok(split(MultipartReplyBody::FlowMonitor(updates), version))
    }

    /// Reports the flow changes recorded since the last call to the connections whose
    /// monitors select them; `origin` is the connection and xid of the request that made
    /// them, if one did, unless a committed bundle left the request of each of its
    /// messages' changes (`bundle_marks`).
    pub(super) fn report_flow_events(&mut self, origin: Origin) {
        let events = self.flows.take_events();
        let marks = std::mem::take(&mut self.bundle_marks);
        let origin_of =
            |i: usize| marks.iter().rev().find(|(at, _)| *at <= i).map(|(_, o)| *o).or(origin);
        let tagged = events.into_iter().enumerate().map(|(i, e)| (e, origin_of(i))).collect();
        self.report_events(tagged);
    }

    /// Reports `events`, each with the connection and xid of the request that made it
    /// (if one did), to the connections whose monitors select them.
    fn report_events(&mut self, events: Vec<(FlowEvent, Origin)>) {
        if events.is_empty() {
            return;
        }
        let ids: Vec<SessionId> = self
            .sessions
            .iter()
            .filter(|(_, s)| !s.monitors.is_empty())
            .map(|(id, _)| *id)
            .collect();
        for id in ids {
            let updates = self.updates_for(id, &events);
            if updates.is_empty() {
                continue;
            }
            let version = self.version_of(id);
            let Some(s) = self.sessions.get_mut(&id) else { continue };
            for m in split(MultipartReplyBody::FlowMonitor(updates), version) {
                let _ = s.conn.send_async(Message::V13(m));
            }
        }
    }

    /// What connection `id`'s monitors report of `events`: each event once, in order, a
    /// run of its own changes by one request as one abbreviation.
    fn updates_for(&self, id: SessionId, events: &[(FlowEvent, Origin)]) -> Vec<FlowUpdate> {
        let Some(s) = self.sessions.get(&id) else { return Vec::new() };
        let mut out = Vec::new();
        for (ev, origin) in events {
            let own_xid = origin.filter(|(o, _)| *o == id).map(|(_, xid)| xid);
            let norm = NormMatch::new(&ev.entry.match_);
            let m = s.monitors.values().map(|m| (m, &m.req)).find(|(w, r)| {
                r.flags & wanted_by(ev.event) != 0
                    && (own_xid.is_some() || r.flags & mf::ONLY_OWN == 0)
                    && selects(w, ev.table, &ev.entry, &norm)
            });
            let Some((_, m)) = m else { continue };
            match own_xid {
                Some(xid) if m.flags & mf::NO_ABBREV == 0 => {
                    if out.last() != Some(&FlowUpdate::Abbrev { xid }) {
                        out.push(FlowUpdate::Abbrev { xid });
                    }
                }
                _ => out.push(full(m, ev.event, ev.table, &ev.entry, ev.reason)),
            }
        }
        out
    }
}
