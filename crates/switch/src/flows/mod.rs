//! The agent's authoritative OpenFlow 1.3 flow tables, sans-IO: no sockets and no clock
//! (every call that needs time takes `now`, nanoseconds on the caller's monotonic clock).
//!
//! [`FlowTables`] holds tables `0..NUM_TABLES` (the datapath's tables). Each maps a
//! [`FlowKey`] — the match normalised for comparison ([`NormMatch`], see `norm.rs`) and
//! the priority — to a [`FlowEntry`]: what the controller sent (match as sent, cookie,
//! timeouts, flags, instructions), when it was installed, and the datapath rule that
//! implements it once the caller has installed one ([`FlowTables::set_rule`]).
//!
//! [`FlowTables::apply`] applies a flow-mod with the OpenFlow 1.3.5 semantics (§6.4) and
//! returns the [`FlowChange`]s the caller must publish to the datapath, including the
//! removals that need an `OFPT_FLOW_REMOVED` (§5.5, entries with `OFPFF_SEND_FLOW_REM`):
//! - ADD replaces an entry of identical match and priority (its duration restarts; its
//!   counters are kept unless the add sets `OFPFF_RESET_COUNTS`; no flow-removed is
//!   sent); with `OFPFF_CHECK_OVERLAP` it is refused (`OFPFMFC_OVERLAP`) if an entry of
//!   the same priority in the table could match a packet the new one matches, an
//!   identical entry included. Cookie mask, out_port and out_group are ignored.
//! - MODIFY (entries whose match the flow-mod's covers, any priority) and MODIFY_STRICT
//!   (identical match and priority), filtered by cookie/cookie_mask, replace the
//!   instructions only: cookie, timeouts, flags and duration stay; counters are reset if
//!   the modify sets `OFPFF_RESET_COUNTS`. A modify that selects nothing changes nothing
//!   (it is not an add in 1.3). out_port and out_group are ignored.
//! - DELETE and DELETE_STRICT select as the modifies do, in one table or all
//!   (`OFPTT_ALL`), further filtered by out_port / out_group (the entry's own actions,
//!   apply or write, must output to that port / group; groups are not followed).
//!
//! Errors: those of [`FlowMod::validate`], then `OFPFMFC_BAD_TABLE_ID` for a table the
//! datapath lacks, `OFPBIC_BAD_TABLE_ID` for a goto to such a table, `OFPFMFC_OVERLAP`.
//! A refused flow-mod changes nothing.
//!
//! [`FlowTables::expire`] removes entries past their hard or idle timeout; the idle time
//! counts from the last packet the datapath saw for the entry's rule (or installation);
//! [`FlowTables::next_expiry`] says when to call it next.
//! [`FlowTables::select`] yields the entries a flow-stats (or aggregate) request names.
//!
//! Costs: strict commands and replacing adds find their entry in O(log n); non-strict
//! commands, overlap checks, stats and expiry scan the table(s).

mod entry;
mod norm;
mod store;

#[cfg(test)]
mod tests;

pub use entry::{FlowEntry, FlowKey, PackedMatch, SentMatch};
pub use norm::{NormMatch, NormRef};

use datapath::pipeline::RuleId;
use openflow::action::{port, OFPG_ANY};
use openflow::instruction::Instruction;
use openflow::v13::flow_mod::{flow_mod_flags, FlowMod, FlowModCommand, OFPTT_ALL};
use openflow::v13::multipart::FlowStatsRequest;
use openflow::v13::packet_in::FlowRemovedReason;
use openflow::{ErrorKind, OfpError};
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;
use std::rc::Rc;

use datapath::intern::Interner;

/// Number of flow tables: those of the datapath, `0..NUM_TABLES`.
pub const NUM_TABLES: usize = datapath::pipeline::NUM_TABLES;

const NS_PER_SEC: u64 = 1_000_000_000;

/// The time from `since` to `now` (ns) as OpenFlow's duration fields carry it:
/// `(seconds, nanoseconds)`, the seconds capped at `u32::MAX`; 0 if `now` is earlier.
pub fn duration_since(since: u64, now: u64) -> (u32, u32) {
    let d = now.saturating_sub(since);
    let sec = u32::try_from(d / NS_PER_SEC).unwrap_or(u32::MAX);
    (sec, (d % NS_PER_SEC) as u32)
}

/// A change to the tables that the caller must carry to the datapath.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FlowChange {
    /// A new entry at `key` in `table`: install a rule and record it with
    /// [`FlowTables::set_rule`].
    Add { table: u8, key: FlowKey },
    /// An add replaced the identical entry `old`. The new entry still names `old.rule`:
    /// rewrite that rule (keeping its counters unless `reset_counts`), or install a new
    /// one, carry the counters over unless `reset_counts`, and set it.
    Replace { table: u8, key: FlowKey, old: FlowEntry, reset_counts: bool },
    /// A modify replaced the instructions of the entry at `key`; reset its rule's
    /// counters if `reset_counts`.
    Modify { table: u8, key: FlowKey, reset_counts: bool },
    /// The entry was removed: drop `entry.rule` from the datapath, and if
    /// [`FlowChange::sends_flow_removed`] send [`FlowEntry::flow_removed`] with `reason`.
    Remove { table: u8, key: FlowKey, reason: FlowRemovedReason, entry: FlowEntry },
}

impl FlowChange {
    /// Whether this change calls for an `OFPT_FLOW_REMOVED`: a removal of an entry that
    /// was added with `OFPFF_SEND_FLOW_REM`.
    pub fn sends_flow_removed(&self) -> bool {
        matches!(self, FlowChange::Remove { entry, .. }
            if entry.flags & flow_mod_flags::SEND_FLOW_REM != 0)
    }
}

/// The flow tables. Invariants: `tables.len() == NUM_TABLES`; every entry is stored under
/// the key its own match and priority give (see [`FlowEntry`]); the tables' slot numbers
/// name distinct slots of `entries`, which holds no other entry; `timed` holds exactly
/// the `(table, key)` of the entries with an idle or hard timeout, so that expiry costs
/// nothing for the entries without one.
///
/// Entries with equal instructions share one copy (`instructions`, an [`Interner`]): a
/// million entries that output to a few ports hold a few lists.
///
/// A transaction ([`FlowTables::begin`]) journals the entry each change found at its key,
/// so that [`FlowTables::rollback`] puts every one back as it was.
#[derive(Clone, Debug)]
pub struct FlowTables {
    /// Each key's entry is a slot of `entries`: a B-tree node keeps room for 11 of what
    /// it holds and is often half full, so 4-byte slot numbers there waste less than
    /// 64-byte entries would.
    tables: Vec<BTreeMap<FlowKey, u32>>,
    entries: store::Entries,
    timed: BTreeSet<(u8, FlowKey)>,
    journal: Option<Journal>,
    instructions: Interner<Vec<Instruction>>,
}

/// What an open transaction changed, in order: each key and the entry it held before.
type Journal = Vec<(u8, FlowKey, Option<FlowEntry>)>;

/// Notes in `journal`, if a transaction is open, that the entry at `key` of table `t` was
/// `before`.
fn note(journal: &mut Option<Journal>, t: u8, key: &FlowKey, before: Option<&FlowEntry>) {
    if let Some(j) = journal {
        j.push((t, key.clone(), before.cloned()));
    }
}

impl Default for FlowTables {
    fn default() -> Self {
        Self::new()
    }
}

fn bad_table(table_id: u8) -> OfpError {
    OfpError::new(
        ErrorKind::FLOW_MOD_FAILED_BAD_TABLE_ID,
        format!("table {table_id}: the switch has tables 0..={}", NUM_TABLES - 1),
    )
}

/// How a modify or delete selects entries, from its flow-mod or stats request.
struct Selector {
    match_: NormMatch,
    /// `Some(priority)` for strict commands.
    strict: Option<u16>,
    cookie: u64,
    cookie_mask: u64,
    out_port: u32,
    out_group: u32,
}

impl Selector {
    fn selects(&self, key: &FlowKey, e: &FlowEntry) -> bool {
        let by_match = match self.strict {
            Some(p) => key.priority() == p && key.match_() == self.match_.view(),
            None => self.match_.covers(key.match_()),
        };
        by_match
            && e.cookie_matches(self.cookie, self.cookie_mask)
            && e.outputs_to(self.out_port)
            && e.outputs_to_group(self.out_group)
    }
}

impl FlowTables {
    /// Empty tables `0..NUM_TABLES`.
    pub fn new() -> FlowTables {
        FlowTables {
            tables: vec![BTreeMap::new(); NUM_TABLES],
            entries: store::Entries::default(),
            timed: BTreeSet::new(),
            journal: None,
            instructions: Interner::default(),
        }
    }

    /// Starts a transaction (see [`FlowTables`]); one already open goes on.
    pub fn begin(&mut self) {
        self.journal.get_or_insert_with(Vec::new);
    }

    /// Keeps the open transaction's changes and closes it.
    pub fn end(&mut self) {
        self.journal = None;
    }

    /// Puts back every entry the open transaction changed, newest change first, and
    /// closes it.
    pub fn rollback(&mut self) {
        let Some(journal) = self.journal.take() else { return };
        for (t, key, before) in journal.into_iter().rev() {
            let timed = (t, key.clone());
            match before {
                Some(e) => {
                    if e.has_timeout() {
                        self.timed.insert(timed);
                    } else {
                        self.timed.remove(&timed);
                    }
                    self.put(t, key, e);
                }
                None => {
                    self.timed.remove(&timed);
                    if let Some(i) = self.tables[usize::from(t)].remove(&key) {
                        self.entries.take(i);
                    }
                }
            }
        }
    }

    /// Applies one flow-mod at `now` (see the module comment for the semantics) and
    /// returns what changed, in the order it changed. On error nothing changed.
    pub fn apply(&mut self, fm: &FlowMod, now: u64) -> Result<Vec<FlowChange>, OfpError> {
        fm.validate()?;
        let all_tables = fm.table_id == OFPTT_ALL;
        if !all_tables && usize::from(fm.table_id) >= NUM_TABLES {
            return Err(bad_table(fm.table_id));
        }
        let strict =
            matches!(fm.command, FlowModCommand::ModifyStrict | FlowModCommand::DeleteStrict);
        let mut sel = Selector {
            match_: NormMatch::new(&fm.match_),
            strict: strict.then_some(fm.priority),
            cookie: fm.cookie,
            cookie_mask: fm.cookie_mask,
            out_port: port::ANY,
            out_group: OFPG_ANY,
        };
        match fm.command {
            FlowModCommand::Add => {
                check_goto(&fm.instructions)?;
                self.add(fm, sel.match_, now)
            }
            FlowModCommand::Modify | FlowModCommand::ModifyStrict => {
                check_goto(&fm.instructions)?;
                Ok(self.modify(fm, &sel))
            }
            FlowModCommand::Delete | FlowModCommand::DeleteStrict => {
                sel.out_port = fm.out_port;
                sel.out_group = fm.out_group;
                let tables = if all_tables {
                    0..NUM_TABLES
                } else {
                    let t = usize::from(fm.table_id);
                    t..t + 1
                };
                let mut changes = Vec::new();
                for t in tables {
                    self.remove_where(t, FlowRemovedReason::Delete, &mut changes, |k, e| {
                        sel.selects(k, e)
                    });
                }
                Ok(changes)
            }
            // `validate` refused unknown commands; this is its error.
            FlowModCommand::Unknown(_) => fm.check_command().map(|()| Vec::new()),
        }
    }

    fn add(
        &mut self,
        fm: &FlowMod,
        match_: NormMatch,
        now: u64,
    ) -> Result<Vec<FlowChange>, OfpError> {
        let instructions = self.instructions.get(&fm.instructions);
        let table = &mut self.tables[usize::from(fm.table_id)];
        let key = FlowKey::new(match_.view(), fm.priority);
        if fm.flags & flow_mod_flags::CHECK_OVERLAP != 0 {
            if let Some(k) = table
                .keys()
                .find(|k| k.priority() == key.priority() && k.match_().overlaps(key.match_()))
            {
                return Err(OfpError::new(
                    ErrorKind::FLOW_MOD_FAILED_OVERLAP,
                    format!(
                        "table {}: an entry of priority {} overlaps the new one{}",
                        fm.table_id,
                        k.priority(),
                        if *k == key { " (identical match)" } else { "" }
                    ),
                ));
            }
        }
        let mut entry = FlowEntry {
            sent: SentMatch::new(&fm.match_, key.match_()),
            priority: fm.priority,
            cookie: fm.cookie,
            idle_timeout: fm.idle_timeout,
            hard_timeout: fm.hard_timeout,
            flags: fm.flags,
            importance: fm.importance,
            instructions,
            installed_at: now,
            rule: None,
        };
        let timed = entry.has_timeout();
        let before = table.get(&key).and_then(|&i| self.entries.get(i));
        note(&mut self.journal, fm.table_id, &key, before);
        if let Some(old) = before {
            entry.rule = old.rule;
        }
        if timed {
            self.timed.insert((fm.table_id, key.clone()));
        } else {
            self.timed.remove(&(fm.table_id, key.clone()));
        }
        let change = match self.put(fm.table_id, key.clone(), entry) {
            Some(old) => FlowChange::Replace {
                table: fm.table_id,
                key,
                old,
                reset_counts: fm.flags & flow_mod_flags::RESET_COUNTS != 0,
            },
            None => FlowChange::Add { table: fm.table_id, key },
        };
        Ok(vec![change])
    }

    /// Puts `e` at `key` in table `t`; returns the entry it replaced.
    fn put(&mut self, t: u8, key: FlowKey, e: FlowEntry) -> Option<FlowEntry> {
        let table = &mut self.tables[usize::from(t)];
        if let Some(slot) = table.get(&key).and_then(|&i| self.entries.get_mut(i)) {
            return Some(std::mem::replace(slot, e));
        }
        table.insert(key, self.entries.insert(e));
        None
    }

    fn modify(&mut self, fm: &FlowMod, sel: &Selector) -> Vec<FlowChange> {
        let reset_counts = fm.flags & flow_mod_flags::RESET_COUNTS != 0;
        let table_id = fm.table_id;
        let instructions = self.instructions.get(&fm.instructions);
        let table = &self.tables[usize::from(table_id)];
        let entries = &mut self.entries;
        let journal = &mut self.journal;
        let mut changes = Vec::new();
        let mut update = |key: &FlowKey, e: &mut FlowEntry| {
            note(journal, table_id, key, Some(e));
            e.instructions = instructions.clone();
            changes.push(FlowChange::Modify { table: table_id, key: key.clone(), reset_counts });
        };
        if sel.strict.is_some() {
            let key = FlowKey::new(sel.match_.view(), fm.priority);
            if let Some(e) = table.get(&key).and_then(|&i| entries.get_mut(i)) {
                if sel.selects(&key, e) {
                    update(&key, e);
                }
            }
        } else {
            for (k, &i) in table {
                match entries.get_mut(i) {
                    Some(e) if sel.selects(k, e) => update(k, e),
                    _ => {}
                }
            }
        }
        changes
    }

    /// Removes the entries of table `t` that `pred` picks, reporting each with `reason`.
    fn remove_where(
        &mut self,
        t: usize,
        reason: FlowRemovedReason,
        changes: &mut Vec<FlowChange>,
        mut pred: impl FnMut(&FlowKey, &FlowEntry) -> bool,
    ) {
        let table = &mut self.tables[t];
        let entries = &self.entries;
        let mut picks = |k: &FlowKey, i: u32| entries.get(i).is_some_and(|e| pred(k, e));
        let doomed: Box<dyn Iterator<Item = (FlowKey, u32)>> =
            if table.iter().all(|(k, &i)| picks(k, i)) {
                // All of it (a delete-all): taken whole, without a lookup per entry.
                changes.reserve(table.len());
                Box::new(std::mem::take(table).into_iter())
            } else {
                let keys: Vec<FlowKey> =
                    table.iter().filter(|(k, &i)| picks(k, i)).map(|(k, _)| k.clone()).collect();
                let taken: Vec<_> =
                    keys.into_iter().filter_map(|k| table.remove_entry(&k)).collect();
                Box::new(taken.into_iter())
            };
        for (key, i) in doomed {
            let Some(entry) = self.entries.take(i) else { continue };
            note(&mut self.journal, t as u8, &key, Some(&entry));
            if entry.has_timeout() {
                self.timed.remove(&(t as u8, key.clone()));
            }
            changes.push(FlowChange::Remove { table: t as u8, key, reason, entry });
        }
    }

    /// Removes every entry past its hard timeout (reason `OFPRR_HARD_TIMEOUT`, checked
    /// first) or idle timeout (`OFPRR_IDLE_TIMEOUT`) at `now`. `last_used(rule)` is when
    /// the datapath last saw a packet for `rule` (`None`: never); an entry without a rule
    /// yet, or whose rule saw no packet since installation, idles from `installed_at`.
    pub fn expire(
        &mut self,
        now: u64,
        last_used: impl Fn(RuleId) -> Option<u64>,
    ) -> Vec<FlowChange> {
        let mut hard: Vec<(u8, FlowKey)> = Vec::new();
        let mut idle: Vec<(u8, FlowKey)> = Vec::new();
        for (t, k) in &self.timed {
            let Some(e) = self.get(*t, k) else {
                continue;
            };
            if e.hard_expired(now) {
                hard.push((*t, k.clone()));
            } else if e.idle_expired(now, e.rule.and_then(&last_used)) {
                idle.push((*t, k.clone()));
            }
        }
        let mut changes = Vec::new();
        for (reason, doomed) in
            [(FlowRemovedReason::HardTimeout, hard), (FlowRemovedReason::IdleTimeout, idle)]
        {
            for (t, key) in doomed {
                self.timed.remove(&(t, key.clone()));
                let slot = self.tables[usize::from(t)].remove(&key);
                if let Some(entry) = slot.and_then(|i| self.entries.take(i)) {
                    note(&mut self.journal, t, &key, Some(&entry));
                    changes.push(FlowChange::Remove { table: t, key, reason, entry });
                }
            }
        }
        changes
    }

    /// The earliest time at which [`FlowTables::expire`] would remove an entry, given
    /// the same `last_used` (later packets can only push an idle deadline back), or
    /// `None` if no entry has a timeout. Looks only at the entries with a timeout.
    pub fn next_expiry(&self, last_used: impl Fn(RuleId) -> Option<u64>) -> Option<u64> {
        self.timed
            .iter()
            .filter_map(|(t, k)| self.get(*t, k))
            .filter_map(|e| {
                let idle = e.idle_deadline(e.rule.and_then(&last_used));
                e.hard_deadline().into_iter().chain(idle).min()
            })
            .min()
    }

    /// The entries a flow-stats or aggregate-stats request names, table by table: in
    /// `req.table_id` (or all tables for `OFPTT_ALL`), whose match `req.match_` covers,
    /// with the request's cookie, out_port and out_group filters. A table the switch
    /// lacks is `OFPBRC_BAD_TABLE_ID`.
    pub fn select<'a>(
        &'a self,
        req: &FlowStatsRequest,
    ) -> Result<impl Iterator<Item = (u8, &'a FlowKey, &'a FlowEntry)> + 'a, OfpError> {
        self.select_after(req, None)
    }

    /// [`FlowTables::select`] from the entry after `after` (a table and a key in it,
    /// whether or not that entry still exists) on, in the same order: how a long reply
    /// goes on where its last part ended.
    pub fn select_after<'a>(
        &'a self,
        req: &FlowStatsRequest,
        after: Option<(u8, &FlowKey)>,
    ) -> Result<impl Iterator<Item = (u8, &'a FlowKey, &'a FlowEntry)> + 'a, OfpError> {
        let tables = if req.table_id == OFPTT_ALL {
            0..NUM_TABLES
        } else if usize::from(req.table_id) < NUM_TABLES {
            let t = usize::from(req.table_id);
            t..t + 1
        } else {
            return Err(OfpError::new(
                ErrorKind::BAD_REQUEST_BAD_TABLE_ID,
                format!("table {}: the switch has tables 0..={}", req.table_id, NUM_TABLES - 1),
            ));
        };
        let sel = Rc::new(Selector {
            match_: NormMatch::new(&req.match_),
            strict: None,
            cookie: req.cookie,
            cookie_mask: req.cookie_mask,
            out_port: req.out_port,
            out_group: req.out_group,
        });
        let after = after.map(|(t, k)| (usize::from(t), k.clone()));
        let first = after.as_ref().map_or(tables.start, |(t, _)| (*t).max(tables.start));
        // Most of the 254 tables are empty: they are skipped without a range each.
        let nonempty = move |t: &usize| self.tables.get(*t).is_some_and(|m| !m.is_empty());
        Ok((first..tables.end).filter(nonempty).flat_map(move |t| {
            let sel = Rc::clone(&sel);
            let from = match &after {
                Some((at, key)) if *at == t => Bound::Excluded(key.clone()),
                _ => Bound::Unbounded,
            };
            self.tables[t]
                .range((from, Bound::Unbounded))
                .filter_map(move |(k, &i)| Some((k, self.entries.get(i)?)))
                .filter(move |(k, e)| sel.selects(k, e))
                .map(move |(k, e)| (t as u8, k, e))
        }))
    }

    /// The entry at `key` in `table`.
    pub fn get(&self, table: u8, key: &FlowKey) -> Option<&FlowEntry> {
        self.entries.get(*self.tables.get(usize::from(table))?.get(key)?)
    }

    /// Records the datapath rule implementing the entry at `key`; false if there is no
    /// such entry.
    pub fn set_rule(&mut self, table: u8, key: &FlowKey, rule: RuleId) -> bool {
        let slot = self.tables.get(usize::from(table)).and_then(|t| t.get(key));
        match slot.and_then(|&i| self.entries.get_mut(i)) {
            Some(e) => {
                note(&mut self.journal, table, key, Some(e));
                e.rule = Some(rule);
                true
            }
            None => false,
        }
    }

    /// The entries of `table` in key order (empty for a table the switch lacks).
    pub fn table(&self, table: u8) -> impl Iterator<Item = (&FlowKey, &FlowEntry)> {
        let entries = &self.entries;
        self.tables
            .get(usize::from(table))
            .into_iter()
            .flatten()
            .filter_map(move |(k, &i)| Some((k, entries.get(i)?)))
    }

    /// Every entry with its table, tables in order.
    pub fn iter(&self) -> impl Iterator<Item = (u8, &FlowKey, &FlowEntry)> {
        self.tables.iter().enumerate().flat_map(move |(t, m)| {
            m.iter().filter_map(move |(k, &i)| Some((t as u8, k, self.entries.get(i)?)))
        })
    }

    /// Number of entries in `table` (0 for a table the switch lacks).
    pub fn table_len(&self, table: u8) -> usize {
        self.tables.get(usize::from(table)).map_or(0, BTreeMap::len)
    }

    /// Number of entries in all tables.
    pub fn len(&self) -> usize {
        self.tables.iter().map(BTreeMap::len).sum()
    }

    /// Whether every table is empty.
    pub fn is_empty(&self) -> bool {
        self.tables.iter().all(BTreeMap::is_empty)
    }
}

/// Refuses a goto to a table the switch lacks (`OFPBIC_BAD_TABLE_ID`); `validate`
/// already checked that gotos go forward and stay within `OFPTT_MAX`.
fn check_goto(insts: &[Instruction]) -> Result<(), OfpError> {
    for i in insts {
        if let Instruction::GotoTable(t) = i {
            if usize::from(*t) >= NUM_TABLES {
                return Err(OfpError::new(
                    ErrorKind::BAD_INSTRUCTION_BAD_TABLE_ID,
                    format!("goto_table {t}: the switch has tables 0..={}", NUM_TABLES - 1),
                ));
            }
        }
    }
    Ok(())
}
