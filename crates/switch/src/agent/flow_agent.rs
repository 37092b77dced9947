//! The flow half of the OpenFlow agent, sans-IO: [`FlowAgent`] owns the authoritative
//! flow tables ([`FlowTables`]) and the datapath's single [`Writer`], and keeps the
//! datapath's rules in step with the tables. No sockets and no clock: every call that
//! needs time takes `now` (ns on the caller's monotonic clock, the same clock the
//! datapath's batches are given).
//!
//! Invariants, between calls:
//! - every flow entry has a datapath rule (`FlowEntry::rule` is `Some`), in the writer's
//!   pending version, with the entry's table, match and priority, and no other rule was
//!   installed by the agent;
//! - a refused flow-mod (validation, translation, overlap, table full) changes neither the
//!   tables nor the datapath: the flow-mod is validated and translated before the tables
//!   are touched, and the only later failure (no counter slot for an add) is rolled back
//!   (a replace or modify whose entry lost its rule reinstalls it, and running out of
//!   slots there is reported after the tables changed; the agent never leaves an entry
//!   without a rule, so this path does not run);
//! - an entry's OpenFlow counters are its rule's datapath counters minus the baseline in
//!   `base` (set when a modify or replacing add asks for `OFPFF_RESET_COUNTS`). Replacing
//!   adds and modifies rewrite the rule in place (same id), so counters and the last-used
//!   time carry over as OpenFlow 1.3.5 §6.4 asks unless reset.
//!
//! Changes reach packets when the writer publishes: at [`FlowAgent::barrier`], at
//! [`FlowAgent::expire`], and at a flow-mod that removes an entry with
//! `OFPFF_SEND_FLOW_REM` (its final counters are known only once every batch that could
//! still count it has ended, which publishing waits for). Otherwise changes may wait for
//! the next of those.

#[cfg(test)]
#[path = "flow_agent/tests.rs"]
mod tests;

use std::collections::HashMap;

use datapath::key::FlowMatch;
use datapath::pipeline::{Datapath, Rule, RuleId, WriteError, Writer};
use datapath::reap::{reap, trim_this_thread};
use openflow::action::{port, OFPG_ANY};
use openflow::match13::Match;
use openflow::v13::flow_mod::{FlowMod, FlowModCommand};
use openflow::v13::multipart::FullUpdateEvent;
use openflow::v13::multipart::{AggregateStats, FlowStats, FlowStatsRequest, TableStats};
use openflow::v13::packet_in::{FlowRemoved, FlowRemovedReason};
use openflow::{ErrorKind, OfpError};

use crate::flows::{FlowChange, FlowEntry, FlowKey, FlowTables};
use crate::translate::{flow_mod_to_rule, match_to_flow};

/// A flow-mod that changes more entries than this frees them off the agent's thread.
const BULK: usize = 1024;

/// The datapath match of `e`'s rule, as the entry's match translates (the rule was built
/// from it), for the writer to find the rule by; `None` if it does not translate.
fn flow_match_of(key: &FlowKey, e: &FlowEntry) -> Option<FlowMatch> {
    match_to_flow(&e.match_(key)).ok()
}

/// The agent's flow state and the datapath writer it drives (see the module comment for
/// the invariants).
pub struct FlowAgent {
    flows: FlowTables,
    dp: Datapath,
    writer: Writer,
    /// Counter baselines `(packets, bytes)` of rules whose counters were reset; absent is
    /// zero. Entries are dropped when their rule is removed.
    base: HashMap<RuleId, (u64, u64)>,
    /// When to look for expired entries next (see [`FlowAgent::next_check`]): never later
    /// than the earliest expiry.
    check_at: Option<u64>,
    /// The open transaction, if any ([`FlowAgent::begin`]).
    txn: Option<FlowTxn>,
    /// Whether changes are recorded in `events` ([`FlowAgent::watch`]).
    watching: bool,
    events: Vec<FlowEvent>,
}

/// Where an entry is: its table and its key there.
pub type FlowPlace = (u8, crate::flows::FlowKey);

/// A change to a flow entry, for flow monitors: what happened, in which table, the entry
/// (as it is after an add or modify, as it was for a removal) and, for a removal, the
/// `ofp_flow_removed_reason`.
#[derive(Clone, Debug)]
pub struct FlowEvent {
    pub event: FullUpdateEvent,
    pub table: u8,
    /// The key the entry is (or was) stored under.
    pub key: FlowKey,
    pub entry: FlowEntry,
    pub reason: u8,
}

/// What a transaction needs besides the tables' and the writer's own undo: the counter
/// baselines and expiry check time from before it, and the flow-removed messages its
/// removals call for, which go out only if it is kept.
struct FlowTxn {
    base: HashMap<RuleId, (u64, u64)>,
    check_at: Option<u64>,
    removed: Vec<PendingRemoved>,
    /// How many events were recorded when it began (its own are dropped by a rollback).
    events: usize,
}

/// The least time between two scans for expired entries: OpenFlow timeouts are whole
/// seconds, and a scan looks at every entry with a timeout.
pub const EXPIRY_GRANULARITY_NS: u64 = 100_000_000;

/// A removal waiting for the publish that gives its rule's final counters.
struct PendingRemoved {
    rule: Option<RuleId>,
    removed: FlowRemoved,
    base: (u64, u64),
}

fn table_full(table: u8, e: WriteError) -> OfpError {
    OfpError::new(
        ErrorKind::FLOW_MOD_FAILED_TABLE_FULL,
        format!("table {table}: the datapath refused the rule ({e:?})"),
    )
}

impl FlowAgent {
    /// An agent over `dp` and its writer. The datapath should hold no rules the agent did
    /// not install (normally a fresh one from [`Datapath::new`]).
    pub fn new(dp: Datapath, writer: Writer) -> FlowAgent {
        FlowAgent {
            flows: FlowTables::new(),
            dp,
            writer,
            base: HashMap::new(),
            check_at: None,
            txn: None,
            watching: false,
            events: Vec::new(),
        }
    }

    /// Whether to record every change to the entries as a [`FlowEvent`] (while some
    /// connection monitors flows); turning it off drops what was not taken.
    pub fn watch(&mut self, on: bool) {
        self.watching = on;
        if !on {
            self.events.clear();
        }
    }

    /// The changes recorded since the last call (none while a transaction is open: its
    /// changes are recorded once it is kept).
    pub fn take_events(&mut self) -> Vec<FlowEvent> {
        match &self.txn {
            Some(_) => Vec::new(),
            None => std::mem::take(&mut self.events),
        }
    }

    /// How many changes are recorded and not yet taken (a mark to tell which later ones a
    /// request made).
    pub fn recorded(&self) -> usize {
        self.events.len()
    }

    fn record(
        &mut self,
        event: FullUpdateEvent,
        table: u8,
        key: &FlowKey,
        entry: &FlowEntry,
        reason: u8,
    ) {
        if self.watching {
            let (key, entry) = (key.clone(), entry.clone());
            self.events.push(FlowEvent { event, table, key, entry, reason });
        }
    }

    /// Records the entry now at `key` (after an add or modify).
    fn record_at(&mut self, event: FullUpdateEvent, table: u8, key: &FlowKey) {
        if self.watching {
            if let Some(e) = self.flows.get(table, key).cloned() {
                self.record(event, table, key, &e, 0);
            }
        }
    }

    /// Starts a transaction: the flow-mods that follow (and the group, meter and port
    /// changes made through [`FlowAgent::writer`]) are applied to the tables and the
    /// unpublished datapath as usual, but nothing is published and no flow-removed is
    /// produced until [`FlowAgent::end`] keeps them; [`FlowAgent::rollback`] takes them
    /// all back instead. One already open goes on.
    pub fn begin(&mut self) {
        if self.txn.is_none() {
            self.flows.begin();
            self.writer.begin();
            let (base, check_at, events) = (self.base.clone(), self.check_at, self.events.len());
            self.txn = Some(FlowTxn { base, check_at, removed: Vec::new(), events });
        }
    }

    /// Keeps the open transaction's changes, publishing them if any removal waits for its
    /// final counters, and returns the flow-removed bodies its removals call for.
    pub fn end(&mut self) -> Vec<FlowRemoved> {
        let Some(txn) = self.txn.take() else { return Vec::new() };
        self.flows.end();
        self.writer.end();
        self.finish_removed(txn.removed)
    }

    /// Takes back every change of the open transaction: tables, datapath rules (with their
    /// ids and counters), baselines; its flow-removed messages are dropped.
    pub fn rollback(&mut self) {
        let Some(txn) = self.txn.take() else { return };
        self.flows.rollback();
        self.writer.rollback();
        self.base = txn.base;
        self.check_at = txn.check_at;
        self.events.truncate(txn.events);
    }

    /// The authoritative flow tables.
    pub fn flows(&self) -> &FlowTables {
        &self.flows
    }

    /// The datapath handle (for counters and processing).
    pub fn datapath(&self) -> &Datapath {
        &self.dp
    }

    /// The datapath's writer, for the other tables the agent keeps in the datapath
    /// (groups, meters, port config). Rules must change only through this type.
    pub fn writer(&mut self) -> &mut Writer {
        &mut self.writer
    }

    /// Removes every entry for which `pick` holds (a deleted group's or meter's users),
    /// as strict deletes would, and returns the flow-removed bodies of those with
    /// `OFPFF_SEND_FLOW_REM`, with `reason`. Unpublished unless a flow-removed is due.
    pub fn delete_where(
        &mut self,
        pick: impl Fn(&FlowEntry) -> bool,
        reason: FlowRemovedReason,
        now: u64,
    ) -> Vec<FlowRemoved> {
        let all = FlowStatsRequest::default();
        let victims: Vec<(u8, u16, Match)> = match self.flows.select(&all) {
            Ok(it) => it
                .filter(|(_, _, e)| pick(e))
                .map(|(t, k, e)| (t, e.priority, e.match_(k)))
                .collect(),
            Err(_) => return Vec::new(),
        };
        let mut removed = Vec::new();
        for (table_id, priority, match_) in victims {
            let fm = FlowMod {
                command: FlowModCommand::DeleteStrict,
                table_id,
                priority,
                match_,
                out_port: port::ANY,
                out_group: OFPG_ANY,
                ..FlowMod::default()
            };
            if let Ok(r) = self.handle_flow_mod(&fm, now) {
                removed.extend(r.into_iter().map(|f| FlowRemoved { reason, ..f }));
            }
        }
        removed
    }

    /// The aggregate of the entries `req` names: packets, bytes, and how many.
    pub fn aggregate(&self, req: &FlowStatsRequest) -> Result<AggregateStats, OfpError> {
        let mut a = AggregateStats::default();
        for (_, _, e) in self.flows.select(req)? {
            let (p, b) = self.counts(e);
            a.packet_count += p;
            a.byte_count += b;
            a.flow_count += 1;
        }
        Ok(a)
    }

    /// Statistics of every table: entries, lookups and matches.
    pub fn table_stats(&self) -> Vec<TableStats> {
        (0..crate::flows::NUM_TABLES as u8)
            .map(|t| {
                let s = self.dp.read_table(t);
                TableStats {
                    table_id: t,
                    active_count: self.flows.table_len(t) as u32,
                    lookup_count: s.lookups,
                    matched_count: s.matched,
                    ..TableStats::default()
                }
            })
            .collect()
    }

    /// Applies one flow-mod at `now`: the tables change per OpenFlow 1.3.5 and the
    /// datapath follows. Returns the `OFPT_FLOW_REMOVED` bodies its removals call for
    /// (with final counters; the writer has then published). On error nothing changed.
    pub fn handle_flow_mod(
        &mut self,
        fm: &FlowMod,
        now: u64,
    ) -> Result<Vec<FlowRemoved>, OfpError> {
        fm.validate()?;
        let rule = match fm.command {
            FlowModCommand::Add | FlowModCommand::Modify | FlowModCommand::ModifyStrict => {
                Some(flow_mod_to_rule(fm, fm.table_id)?)
            }
            _ => None,
        };
        let changes = self.flows.apply(fm, now)?;
        let cleared = self.clear_emptied(&changes);
        let mut pending = Vec::new();
        for ch in &changes {
            let sends = ch.sends_flow_removed();
            match *ch {
                FlowChange::Add { table, ref key } => {
                    let Some(rule) = rule.clone() else { continue };
                    match self.writer.insert_rule(table, rule) {
                        Ok(id) => {
                            self.flows.set_rule(table, key, id);
                            self.record_at(FullUpdateEvent::Added, table, key);
                        }
                        Err(e) => {
                            // An add is the only change of its flow-mod: undo it.
                            self.rollback_add(fm, now);
                            return Err(table_full(table, e));
                        }
                    }
                }
                FlowChange::Replace { table, ref key, ref old, reset_counts } => {
                    let Some(new) = rule.clone() else { continue };
                    let target = old.rule.map(|id| (id, flow_match_of(key, old)));
                    let rewritten = self.rewrite_rule(target, reset_counts, |r| {
                        r.cookie = new.cookie;
                        r.idle_timeout = new.idle_timeout;
                        r.hard_timeout = new.hard_timeout;
                        r.flags = new.flags;
                        r.instructions = new.instructions.clone();
                    });
                    if !rewritten {
                        let id = self
                            .writer
                            .insert_rule(table, new)
                            .map_err(|e| table_full(table, e))?;
                        self.flows.set_rule(table, key, id);
                    }
                    self.record_at(FullUpdateEvent::Modified, table, key);
                }
                FlowChange::Modify { table, ref key, reset_counts } => {
                    let Some(new) = &rule else { continue };
                    let target = self
                        .flows
                        .get(table, key)
                        .and_then(|e| Some((e.rule?, flow_match_of(key, e))));
                    let rewritten = self.rewrite_rule(target, reset_counts, |r| {
                        r.instructions = new.instructions.clone()
                    });
                    if !rewritten {
                        self.reinstall(table, key)?;
                    }
                    self.record_at(FullUpdateEvent::Modified, table, key);
                }
                FlowChange::Remove { table, ref key, reason, ref entry } => {
                    self.record(FullUpdateEvent::Removed, table, key, entry, reason.to_u8());
                    let gone = cleared.contains(&table);
                    self.remove_entry(table, key, entry, reason, now, sends, gone, &mut pending);
                }
            }
        }
        if changes.len() > BULK {
            // A bulk delete's entries are freed off this thread, and what the allocator
            // keeps cached for it goes back.
            reap(changes);
            trim_this_thread();
        }
        let first = [fm.idle_timeout, fm.hard_timeout].into_iter().filter(|&t| t != 0).min();
        if let (Some(t), FlowModCommand::Add) = (first, fm.command) {
            let due = now.saturating_add(u64::from(t) * 1_000_000_000);
            self.check_at = Some(self.check_at.map_or(due, |c| c.min(due)));
        }
        match &mut self.txn {
            Some(txn) => {
                txn.removed.extend(pending);
                Ok(Vec::new())
            }
            None => Ok(self.finish_removed(pending)),
        }
    }

    /// Undoes the add `fm` made to the tables (its entry has no rule yet).
    fn rollback_add(&mut self, fm: &FlowMod, now: u64) {
        let del = FlowMod {
            command: FlowModCommand::DeleteStrict,
            table_id: fm.table_id,
            priority: fm.priority,
            match_: fm.match_.clone(),
            cookie: 0,
            cookie_mask: 0,
            out_port: port::ANY,
            out_group: OFPG_ANY,
            instructions: Vec::new(),
            ..fm.clone()
        };
        // A strict delete of the entry just added: it exists and has no rule.
        let _ = self.flows.apply(&del, now);
    }

    /// Installs a fresh rule for the entry at `key` (whose rule is missing from the
    /// datapath), from the entry itself.
    fn reinstall(&mut self, table: u8, key: &FlowKey) -> Result<(), OfpError> {
        let Some(e) = self.flows.get(table, key) else {
            return Ok(());
        };
        let fm = FlowMod {
            table_id: table,
            priority: e.priority,
            cookie: e.cookie,
            idle_timeout: e.idle_timeout,
            hard_timeout: e.hard_timeout,
            flags: e.flags,
            match_: e.match_(key),
            instructions: e.instructions.to_vec(),
            ..FlowMod::default()
        };
        let rule = flow_mod_to_rule(&fm, table)?;
        let id = self.writer.insert_rule(table, rule).map_err(|e| table_full(table, e))?;
        self.flows.set_rule(table, key, id);
        Ok(())
    }

    /// Sets rule `id`'s counter baseline to its counters now.
    /// Changes rule `id` (if any) in place with `change`, resetting its counts if
    /// `reset_counts`; whether it could (false: no rule, or the writer has none by that
    /// id, and nothing was reset).
    fn rewrite_rule(
        &mut self,
        target: Option<(RuleId, Option<FlowMatch>)>,
        reset_counts: bool,
        change: impl FnOnce(&mut Rule),
    ) -> bool {
        let Some((id, hint)) = target else { return false };
        if self.writer.modify_rule(id, hint.as_ref(), change).is_err() {
            return false;
        }
        if reset_counts {
            self.reset_counts(id);
        }
        true
    }

    fn reset_counts(&mut self, id: RuleId) {
        let s = self.dp.read_rule(id);
        self.base.insert(id, (s.packets, s.bytes));
    }

    /// Forgets removed `entry` of `table` (stored under `key`): its rule leaves the
    /// datapath (unless the table was cleared whole, `cleared`), and if it `sends` a
    /// flow-removed, that (with `reason`, at `now`) is added to `pending` to wait for the
    /// rule's final counters.
    #[allow(clippy::too_many_arguments)]
    fn remove_entry(
        &mut self,
        table: u8,
        key: &FlowKey,
        entry: &FlowEntry,
        reason: FlowRemovedReason,
        now: u64,
        sends: bool,
        cleared: bool,
        pending: &mut Vec<PendingRemoved>,
    ) {
        let base = if cleared {
            entry.rule.and_then(|id| self.base.remove(&id)).unwrap_or((0, 0))
        } else {
            self.drop_rule(table, key, entry)
        };
        if sends {
            pending.push(PendingRemoved {
                rule: entry.rule,
                removed: entry.flow_removed(key, table, reason, now, 0, 0),
                base,
            });
        }
    }

    /// Clears the datapath tables whose every rule `changes` removes (a delete of all a
    /// table holds): one change there instead of a lookup per rule. Which tables those
    /// are. A table that also holds a rule of no entry (the fail-open rule) is not one;
    /// nor one where a removed entry sends a flow-removed (which needs the rule's final
    /// counters, which clearing does not read); nor, inside a transaction, any.
    fn clear_emptied(&mut self, changes: &[FlowChange]) -> Vec<u8> {
        if self.txn.is_some() {
            return Vec::new();
        }
        let mut removed = [0usize; crate::flows::NUM_TABLES];
        let mut reported = [false; crate::flows::NUM_TABLES];
        for ch in changes {
            if let FlowChange::Remove { table, .. } = ch {
                removed[usize::from(*table)] += 1;
                reported[usize::from(*table)] |= ch.sends_flow_removed();
            }
        }
        let mut cleared = Vec::new();
        for (t, n) in removed.into_iter().enumerate() {
            let skip = reported[t];
            let t = t as u8;
            if n > 0
                && !skip
                && self.flows.table_len(t) == 0
                && self.writer.pending().table_len(t) == n
            {
                self.writer.clear_table(t);
                cleared.push(t);
            }
        }
        cleared
    }

    /// Removes `entry`'s rule from the datapath (unpublished) and forgets its baseline,
    /// which it returns.
    fn drop_rule(&mut self, table: u8, key: &FlowKey, entry: &FlowEntry) -> (u64, u64) {
        let Some(id) = entry.rule else {
            return (0, 0);
        };
        let hint = flow_match_of(key, entry);
        self.writer.remove_rule_id(table, id, entry.priority, hint.as_ref());
        self.base.remove(&id).unwrap_or((0, 0))
    }

    /// Publishes if some removal waits for its final counters, and fills them in.
    fn finish_removed(&mut self, pending: Vec<PendingRemoved>) -> Vec<FlowRemoved> {
        if pending.is_empty() {
            return Vec::new();
        }
        let published = self.writer.publish();
        let finals: HashMap<RuleId, (u64, u64)> = published
            .removed
            .iter()
            .map(|r| (r.rule.id, (r.stats.packets, r.stats.bytes)))
            .collect();
        pending
            .into_iter()
            .map(|p| {
                let (packets, bytes) =
                    p.rule.and_then(|id| finals.get(&id).copied()).unwrap_or((0, 0));
                FlowRemoved {
                    packet_count: packets.saturating_sub(p.base.0),
                    byte_count: bytes.saturating_sub(p.base.1),
                    ..p.removed
                }
            })
            .collect()
    }

    /// Publishes every change made so far and returns once every packet batch still
    /// running on an older version has ended: a packet processed after this returns sees
    /// every earlier flow-mod (what an `OFPT_BARRIER_REPLY` promises).
    pub fn barrier(&mut self) {
        self.writer.publish();
    }

    /// When the datapath last saw a packet for `id` (`None`: never).
    fn last_used(dp: &Datapath, id: RuleId) -> Option<u64> {
        let t = dp.read_rule(id).last_used_ns;
        (t != 0).then_some(t)
    }

    /// Removes the entries past their hard or idle timeout at `now` (idle time counts
    /// from the datapath's last-used time of the rule), publishes, and returns the
    /// `OFPT_FLOW_REMOVED` bodies for those with `OFPFF_SEND_FLOW_REM`.
    pub fn expire(&mut self, now: u64) -> Vec<FlowRemoved> {
        let dp = &self.dp;
        let changes = self.flows.expire(now, |id| Self::last_used(dp, id));
        let mut pending = Vec::new();
        for ch in changes {
            let sends = ch.sends_flow_removed();
            if let FlowChange::Remove { table, key, reason, entry } = ch {
                self.record(FullUpdateEvent::Removed, table, &key, &entry, reason.to_u8());
                self.remove_entry(table, &key, &entry, reason, now, sends, false, &mut pending);
            }
        }
        let removed = self.finish_removed(pending);
        self.writer.publish();
        self.check_at =
            self.next_expiry().map(|t| t.max(now.saturating_add(EXPIRY_GRANULARITY_NS)));
        removed
    }

    /// When [`FlowAgent::expire`] should next be called: the earliest expiry as of the
    /// last call (or earlier, after an add with a timeout), but not sooner than
    /// [`EXPIRY_GRANULARITY_NS`] after it; `None` if no entry had a timeout. Constant
    /// time, unlike [`FlowAgent::next_expiry`]. An entry may thus outlive its timeout by
    /// up to the granularity, and a call may find nothing due (traffic pushed idle
    /// deadlines back).
    pub fn next_check(&self) -> Option<u64> {
        self.check_at
    }

    /// When [`FlowAgent::expire`] should next be called (given the traffic seen so far),
    /// or `None` if no entry has a timeout.
    pub fn next_expiry(&self) -> Option<u64> {
        let dp = &self.dp;
        self.flows.next_expiry(|id| Self::last_used(dp, id))
    }

    /// The flow-stats reply entries for `req` at `now`, with the datapath's counters.
    /// A table the switch lacks is `OFPBRC_BAD_TABLE_ID`.
    pub fn flow_stats(&self, req: &FlowStatsRequest, now: u64) -> Result<Vec<FlowStats>, OfpError> {
        Ok(self.flow_stats_part(req, None, usize::MAX, now)?.0)
    }

    /// Up to `max` of the flow-stats reply entries for `req`, from the entry after
    /// `after` on (see [`FlowTables::select_after`]), and where the next part starts:
    /// `None` once no entry is left.
    pub fn flow_stats_part(
        &self,
        req: &FlowStatsRequest,
        after: Option<(u8, &crate::flows::FlowKey)>,
        max: usize,
        now: u64,
    ) -> Result<(Vec<FlowStats>, Option<FlowPlace>), OfpError> {
        let mut it = self.flows.select_after(req, after)?;
        let mut out = Vec::new();
        let mut last = None;
        for (table_id, key, e) in it.by_ref() {
            out.push(self.entry_stats(table_id, key, e, now));
            if out.len() >= max {
                last = Some((table_id, key.clone()));
                break;
            }
        }
        let next = last.filter(|_| it.next().is_some());
        Ok((out, next))
    }

    /// The flow-stats entry of `e` in `table_id` at `now`.
    fn entry_stats(&self, table_id: u8, key: &FlowKey, e: &FlowEntry, now: u64) -> FlowStats {
        let (packet_count, byte_count) = self.counts(e);
        let (duration_sec, duration_nsec) = e.duration(now);
        FlowStats {
            table_id,
            duration_sec,
            duration_nsec,
            priority: e.priority,
            idle_timeout: e.idle_timeout,
            hard_timeout: e.hard_timeout,
            flags: e.flags,
            importance: e.importance,
            cookie: e.cookie,
            packet_count,
            byte_count,
            match_: e.match_(key),
            instructions: e.instructions.to_vec(),
        }
    }

    /// An entry's `(packets, bytes)` as OpenFlow counts them.
    fn counts(&self, e: &FlowEntry) -> (u64, u64) {
        let Some(id) = e.rule else { return (0, 0) };
        let s = self.dp.read_rule(id);
        let (bp, bb) = self.base.get(&id).copied().unwrap_or((0, 0));
        (s.packets.saturating_sub(bp), s.bytes.saturating_sub(bb))
    }
}
