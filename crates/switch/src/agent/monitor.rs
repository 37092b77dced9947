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
//!
//! A connection that falls behind is paused: when updates are due while its backlog is
//! at [`BACKLOG_HIGH`] ([`super::pace`]), it is sent `OFPFME_PAUSED` (after what was
//! queued) instead. While paused, additions and modifications are not sent but noted;
//! a removal is sent only for a flow that existed before the pause (one added and
//! removed meanwhile was never told of). Once its backlog is down to `BACKLOG_LOW`, it
//! is sent every flow added during the pause that still exists (`OFPFME_ADDED`), every
//! older flow modified during it (`OFPFME_MODIFIED`), as its monitors select them now,
//! and then `OFPFME_RESUMED`. What a pause holds is two sets of flow keys, at most the
//! flow table's size.

use std::collections::{BTreeMap, BTreeSet};

use openflow::v13::flow_mod::OFPTT_ALL;
use openflow::v13::multipart::{
    monitor_flags as mf, FlowMonitorCommand, FlowMonitorRequest, FlowUpdate, FlowUpdateFull,
    FullUpdateEvent, MultipartReplyBody,
};
use openflow::{v13, ErrorKind, Message, OfpError};

use super::flow_agent::FlowEvent;
use super::pace::BACKLOG_HIGH;
use super::{multipart::split, Agent, SessionId};
use crate::flows::{FlowEntry, FlowKey, NormMatch, NormRef, NUM_TABLES};

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

/// What a paused connection was not told (see the module comment): the flows added
/// during the pause, and the older ones modified during it.
#[derive(Default)]
pub(super) struct Paused {
    added: BTreeSet<(u8, FlowKey)>,
    modified: BTreeSet<(u8, FlowKey)>,
}

/// The connection and xid of the request that made a change, if one did.
pub(super) type Origin = Option<(SessionId, u32)>;

/// Whether monitor `m` selects `entry` of `table`, whose match normalised is `norm`.
fn selects(m: &Monitor, table: u8, entry: &FlowEntry, norm: NormRef<'_>) -> bool {
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
    key: &FlowKey,
    e: &FlowEntry,
    reason: u8,
) -> FlowUpdate {
    let with = m.flags & mf::INSTRUCTIONS != 0 && event != FullUpdateEvent::Removed;
    let instructions = if with { e.instructions.to_vec() } else { Vec::new() };
    FlowUpdate::Full(FlowUpdateFull {
        event,
        table_id: table,
        reason,
        idle_timeout: e.idle_timeout,
        hard_timeout: e.hard_timeout,
        priority: e.priority,
        cookie: e.cookie,
        match_: e.match_(key),
        instructions,
    })
}

/// Notes `events` in pause `p` (see the module comment); returns those still to be
/// reported: removals of flows older than the pause.
fn note_paused(p: &mut Paused, events: &[(FlowEvent, Origin)]) -> Vec<(FlowEvent, Origin)> {
    let mut older = Vec::new();
    for (ev, origin) in events {
        let key = (ev.table, ev.key.clone());
        match ev.event {
            FullUpdateEvent::Added => {
                p.added.insert(key);
            }
            FullUpdateEvent::Modified if !p.added.contains(&key) => {
                p.modified.insert(key);
            }
            // One added during the pause and removed again was never told of.
            FullUpdateEvent::Removed if !p.added.remove(&key) => {
                p.modified.remove(&key);
                older.push((ev.clone(), *origin));
            }
            _ => {}
        }
    }
    older
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
                .filter(|(t, k, e)| selects(&watch, *t, e, k.match_()))
                .map(|(t, k, e)| full(m, FullUpdateEvent::Initial, t, k, e, 0))
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
            let version = self.version_of(id);
            let Some(s) = self.sessions.get_mut(&id) else { continue };
            let behind = s.backlog() >= BACKLOG_HIGH;
            let updates = if let Some(p) = &mut s.monitor_pause {
                let older = note_paused(p, &events);
                self.updates_for(id, &older, false)
            } else {
                let updates = self.updates_for(id, &events, true);
                if updates.is_empty() || !behind {
                    updates
                } else {
                    // It falls behind: this batch is noted, not sent.
                    let mut p = Paused::default();
                    let older = note_paused(&mut p, &events);
                    let mut updates = vec![FlowUpdate::Paused];
                    updates.extend(self.updates_for(id, &older, false));
                    if let Some(s) = self.sessions.get_mut(&id) {
                        s.monitor_pause = Some(p);
                    }
                    updates
                }
            };
            let Some(s) = self.sessions.get_mut(&id) else { continue };
            if updates.is_empty() {
                continue;
            }
            for m in split(MultipartReplyBody::FlowMonitor(updates), version) {
                let _ = s.conn.send_async(Message::V13(m));
            }
        }
    }

    /// Ends connection `id`'s pause, if it is paused: sends what it was not told, then
    /// `OFPFME_RESUMED`.
    pub(super) fn resume_monitors(&mut self, id: SessionId) {
        let Some(s) = self.sessions.get_mut(&id) else { return };
        let Some(p) = s.monitor_pause.take() else { return };
        let tables = self.flows.flows();
        let catch_up = [(FullUpdateEvent::Added, p.added), (FullUpdateEvent::Modified, p.modified)];
        let mut updates = Vec::new();
        for (event, keys) in catch_up {
            for (table, key) in keys {
                let Some(e) = tables.get(table, &key) else { continue };
                let m = s.monitors.values().find(|m| {
                    m.req.flags & wanted_by(event) != 0
                        && m.req.flags & mf::ONLY_OWN == 0
                        && selects(m, table, e, key.match_())
                });
                if let Some(m) = m {
                    updates.push(full(&m.req, event, table, &key, e, 0));
                }
            }
        }
        updates.push(FlowUpdate::Resumed);
        let version = s.conn.version().unwrap_or(openflow::OFP14_VERSION);
        for m in split(MultipartReplyBody::FlowMonitor(updates), version) {
            let _ = s.conn.send_async(Message::V13(m));
        }
    }

    /// What connection `id`'s monitors report of `events`: each event once, in order, a
    /// run of its own changes by one request as one abbreviation (when `abbreviate`).
    fn updates_for(
        &self,
        id: SessionId,
        events: &[(FlowEvent, Origin)],
        abbreviate: bool,
    ) -> Vec<FlowUpdate> {
        let Some(s) = self.sessions.get(&id) else { return Vec::new() };
        let mut out = Vec::new();
        for (ev, origin) in events {
            let own_xid = origin.filter(|(o, _)| *o == id).map(|(_, xid)| xid);
            let norm = ev.key.match_();
            let m = s.monitors.values().map(|m| (m, &m.req)).find(|(w, r)| {
                r.flags & wanted_by(ev.event) != 0
                    && (own_xid.is_some() || r.flags & mf::ONLY_OWN == 0)
                    && selects(w, ev.table, &ev.entry, norm)
            });
            let Some((_, m)) = m else { continue };
            match own_xid {
                Some(xid) if abbreviate && m.flags & mf::NO_ABBREV == 0 => {
                    if out.last() != Some(&FlowUpdate::Abbrev { xid }) {
                        out.push(FlowUpdate::Abbrev { xid });
                    }
                }
                _ => out.push(full(m, ev.event, ev.table, &ev.key, &ev.entry, ev.reason)),
            }
        }
        out
    }
}
