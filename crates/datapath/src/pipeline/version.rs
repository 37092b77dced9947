//! Pipeline versions, the two published copies, the writer and the counter readers (the
//! mechanism is described in the parent module's comment).

use std::any::Any;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{
    Arc, Mutex, OnceLock, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard, TryLockError,
};

use super::config::PortIndex;
use super::{
    DatapathConfig, DefaultClassifier, IdMap, PacketIn, PortInfo, PortLiveness, Rule, RuleId,
    RuleTable, TableRule, NUM_TABLES,
};
use crate::classifier::TupleSpace;
use crate::counters::{
    Misc, PortStats, RuleStats, SlotAlloc, Stats, Sum, TableStats, WorkerCounters, WorkerStats,
    MAX_OBJECTS, MAX_RULES,
};
use crate::group::Group;
use crate::intern::Interner;
use crate::key::{CompactMatch, FlowMatch};
use crate::meter::{BandPool, Meter};
use crate::mirror::{Changes, Mirror};
use crate::parse::ParseError;
use crate::reap::reap;

/// One state of the whole pipeline: tables, groups, meters, settings.
pub struct PipelineVersion<C = DefaultClassifier> {
    pub(crate) version: u64,
    pub(crate) tables: Box<[C]>,
    pub(crate) rules: Vec<Option<Arc<Rule>>>,
    pub(crate) groups: IdMap<Arc<Group>>,
    pub(crate) meters: IdMap<Arc<Meter>>,
    pub(crate) config: Arc<DatapathConfig>,
    /// Built from `config` whenever it is set.
    pub(crate) ports: PortIndex,
    /// Whether looking the tables up costs no more than probing the exact-match cache:
    /// every table is a tuple space and they hold at most one subtable in all (one hash
    /// probe). Workers then bypass their cache. Recomputed at each publish.
    pub(crate) cheap_lookup: bool,
}

impl<C: RuleTable> PipelineVersion<C> {
    fn new(config: Arc<DatapathConfig>) -> Self {
        PipelineVersion {
            version: 1,
            tables: (0..NUM_TABLES).map(|_| C::default()).collect(),
            rules: Vec::new(),
            groups: IdMap::default(),
            meters: IdMap::default(),
            ports: PortIndex::new(&config),
            config,
            cheap_lookup: false,
        }
        .with_cost()
    }

    /// Sets `cheap_lookup` from the tables.
    fn with_cost(mut self) -> Self {
        self.cheap_lookup = self.lookup_is_cheap();
        self
    }

    fn lookup_is_cheap(&self) -> bool {
        let mut subtables = 0;
        for t in self.tables.iter() {
            match (t as &dyn Any).downcast_ref::<TupleSpace<TableRule>>() {
                Some(ts) => subtables += ts.len_subtables(),
                None => return false,
            }
            if subtables > 1 {
                return false;
            }
        }
        true
    }

    /// The version number (1 at creation, +1 per publish).
    pub fn version(&self) -> u64 {
        self.version
    }

    pub fn table(&self, id: u8) -> Option<&C> {
        self.tables.get(id as usize)
    }

    /// The rule holding counter slot `id`.
    #[inline]
    pub fn rule(&self, id: RuleId) -> Option<&Rule> {
        self.rules.get(id as usize)?.as_deref()
    }

    /// How many rules table `table` holds (0 for a table the pipeline lacks).
    pub fn table_len(&self, table: u8) -> usize {
        self.tables.get(table as usize).map_or(0, |t| t.len())
    }

    pub fn group(&self, id: u32) -> Option<&Arc<Group>> {
        self.groups.get(id)
    }

    pub fn meter(&self, id: u32) -> Option<&Arc<Meter>> {
        self.meters.get(id)
    }

    pub fn config(&self) -> &DatapathConfig {
        &self.config
    }

    /// The port numbered `no` (as `config().port(no)`, by direct index).
    #[inline]
    pub(crate) fn port(&self, no: u32) -> Option<&PortInfo> {
        self.ports.get(&self.config, no)
    }

    fn apply(&mut self, ch: &Change) -> Replaced {
        match ch {
            Change::InsertRule { table, rule, m } => {
                let Some(t) = self.tables.get_mut(*table as usize) else {
                    return Replaced::None;
                };
                let old = t.insert(m.get(), rule.priority, TableRule::new(rule.clone()));
                if let Some(o) = &old {
                    self.set_rule_slot(o.id, None);
                }
                self.set_rule_slot(rule.id, Some(rule.clone()));
                old.map_or(Replaced::None, |o| Replaced::Rule(o.into_rule()))
            }
            Change::RemoveRule { table, m, priority } => {
                let Some(t) = self.tables.get_mut(*table as usize) else {
                    return Replaced::None;
                };
                let old = t.remove(&m.get(), *priority);
                if let Some(o) = &old {
                    self.set_rule_slot(o.id, None);
                }
                old.map_or(Replaced::None, |o| Replaced::Rule(o.into_rule()))
            }
            Change::ClearTable(table) => {
                let Some(t) = self.tables.get_mut(*table as usize) else {
                    return Replaced::None;
                };
                let old = std::mem::take(t);
                if self.tables.iter().all(|t| t.is_empty()) {
                    // Every rule was in this table: the slots go whole, unread.
                    reap((old, std::mem::take(&mut self.rules)));
                } else {
                    for slot in self.rules.iter_mut() {
                        if slot.as_ref().is_some_and(|r| r.table == *table) {
                            *slot = None;
                        }
                    }
                    reap(old);
                }
                Replaced::None
            }
            Change::SetGroup(g) => {
                self.groups.insert(g.id, g.clone()).map_or(Replaced::None, Replaced::Group)
            }
            Change::RemoveGroup(id) => {
                self.groups.remove(*id).map_or(Replaced::None, Replaced::Group)
            }
            Change::SetMeter(m) => {
                self.meters.insert(m.id, m.clone()).map_or(Replaced::None, Replaced::Meter)
            }
            Change::RemoveMeter(id) => {
                self.meters.remove(*id).map_or(Replaced::None, Replaced::Meter)
            }
            Change::SetConfig(c) => {
                self.config = c.clone();
                self.ports = PortIndex::new(c);
                Replaced::None
            }
            Change::SetVersion(v) => {
                // Last change of a publish: the tables are final for this version.
                self.version = *v;
                // Slots of removed rules at the end need no room.
                while matches!(self.rules.last(), Some(None)) {
                    self.rules.pop();
                }
                if self.rules.capacity() > 2 * self.rules.len() + 4096 {
                    self.rules.shrink_to_fit();
                }
                self.cheap_lookup = self.lookup_is_cheap();
                Replaced::None
            }
        }
    }

    fn set_rule_slot(&mut self, id: RuleId, r: Option<Arc<Rule>>) {
        let i = id as usize;
        if i >= self.rules.len() {
            if r.is_none() {
                return;
            }
            self.rules.resize(i + 1, None);
        }
        if let Some(s) = self.rules.get_mut(i) {
            *s = r;
        }
    }
}

/// A change, applied to one copy at once and replayed on the other after the swap.
/// Rules are inserted and removed by match (which they do not hold themselves).
enum Change {
    InsertRule {
        table: u8,
        rule: Arc<Rule>,
        m: CompactMatch,
    },
    RemoveRule {
        table: u8,
        m: CompactMatch,
        priority: u16,
    },
    /// Every rule of a table goes (the writer retired them).
    ClearTable(u8),
    SetGroup(Arc<Group>),
    RemoveGroup(u32),
    SetMeter(Arc<Meter>),
    RemoveMeter(u32),
    SetConfig(Arc<DatapathConfig>),
    SetVersion(u64),
}

impl Changes {
    /// What `log` (the changes since the last publish) did to rules and groups, with
    /// `removed` the rules those changes replaced or removed and `cleared` the ids of
    /// the rules of cleared tables.
    fn of(log: &[Change], removed: &[(u8, Arc<Rule>)], cleared: &[RuleId]) -> Changes {
        let mut c = Changes::default();
        for ch in log {
            match ch {
                Change::InsertRule { table, rule, m } => {
                    c.rules.push(rule.id);
                    c.added.push((*table, m.get(), rule.priority));
                }
                Change::SetConfig(_) => c.config = true,
                Change::SetGroup(g) => c.groups.push(g.id),
                Change::RemoveGroup(id) => c.groups.push(*id),
                Change::SetMeter(m) => c.meters.push(m.id),
                Change::RemoveMeter(id) => c.meters.push(*id),
                Change::RemoveRule { .. } | Change::ClearTable(_) | Change::SetVersion(_) => {}
            }
        }
        c.rules.extend(removed.iter().map(|(_, r)| r.id));
        c.rules.extend_from_slice(cleared);
        c
    }
}

enum Replaced {
    None,
    Rule(Arc<Rule>),
    Group(Arc<Group>),
    Meter(Arc<Meter>),
}

/// The change that undoes `ch`, which replaced `r` (and, for a config, `old_config`).
fn inverse(ch: &Change, r: &Replaced, old_config: Option<Arc<DatapathConfig>>) -> Option<Change> {
    Some(match (ch, r) {
        (
            Change::InsertRule { table, m, .. } | Change::RemoveRule { table, m, .. },
            Replaced::Rule(old),
        ) => Change::InsertRule { table: *table, rule: old.clone(), m: m.clone() },
        (Change::InsertRule { table, rule, m }, _) => {
            Change::RemoveRule { table: *table, m: m.clone(), priority: rule.priority }
        }
        (Change::SetGroup(_) | Change::RemoveGroup(_), Replaced::Group(old)) => {
            Change::SetGroup(old.clone())
        }
        (Change::SetGroup(g), _) => Change::RemoveGroup(g.id),
        (Change::SetMeter(_) | Change::RemoveMeter(_), Replaced::Meter(old)) => {
            Change::SetMeter(old.clone())
        }
        (Change::SetMeter(m), _) => Change::RemoveMeter(m.id),
        (Change::SetConfig(_), _) => Change::SetConfig(old_config?),
        _ => return None,
    })
}

/// Gives back the memory of an empty buffer that grew large (above 4096 items).
fn shrink_idle<T>(v: &mut Vec<T>) {
    if v.is_empty() && v.capacity() > 4096 {
        *v = Vec::new();
    }
}

/// What the datapath's threads share.
pub(crate) struct Shared<C> {
    copies: [RwLock<PipelineVersion<C>>; 2],
    active: AtomicUsize,
    pub(crate) live: PortLiveness,
    pub(crate) workers: Mutex<Vec<Arc<WorkerCounters>>>,
    pub(crate) packet_in: SyncSender<PacketIn>,
    /// The in-kernel tier, once set.
    pub(crate) mirror: OnceLock<Arc<dyn Mirror>>,
    /// The offer round: workers offer every flow again when it changes (see
    /// [`Datapath::reoffer`](crate::pipeline::Datapath::reoffer)).
    pub(crate) offer_epoch: AtomicU64,
    /// The learning switch's MAC table, once attached (see [`crate::mirror`]).
    pub(crate) normal: Arc<OnceLock<crate::normal::MacTable>>,
    /// The kernel tier's band cells, once lent (see [`crate::meter`]).
    pub(crate) bands: OnceLock<Arc<BandPool>>,
}

impl<C> Shared<C> {
    /// Read-locks the published copy; never waits for the writer (see the module
    /// comment): a copy that cannot be read-locked is being written, so it is no longer
    /// the published one.
    pub(crate) fn read(&self) -> RwLockReadGuard<'_, PipelineVersion<C>> {
        loop {
            let i = self.active.load(Ordering::SeqCst) & 1;
            let Some(copy) = self.copies.get(i) else {
                continue;
            };
            let g = match copy.try_read() {
                Ok(g) => g,
                Err(TryLockError::Poisoned(p)) => p.into_inner(),
                Err(TryLockError::WouldBlock) => {
                    std::hint::spin_loop();
                    continue;
                }
            };
            if self.active.load(Ordering::SeqCst) & 1 == i {
                return g;
            }
        }
    }

    fn write(&self, i: usize) -> RwLockWriteGuard<'_, PipelineVersion<C>> {
        let copy = if i & 1 == 0 { &self.copies[0] } else { &self.copies[1] };
        copy.write().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn sum<R>(&self, f: impl FnOnce(&Sum) -> R) -> R {
        let ws = self.workers.lock().unwrap_or_else(PoisonError::into_inner);
        f(&Sum(&ws))
    }
}

/// The forwarding side's handle: clone it into every worker thread. Creates workers,
/// runs batches, traces packets, reads counters.
pub struct Datapath<C = DefaultClassifier> {
    pub(crate) shared: Arc<Shared<C>>,
}

impl<C> Clone for Datapath<C> {
    fn clone(&self) -> Self {
        Datapath { shared: self.shared.clone() }
    }
}

impl<C: RuleTable> Datapath<C> {
    /// A datapath with empty tables, its single writer, and the receiving end of the
    /// packet-in queue (which holds at most `packet_in_capacity` records).
    pub fn new(
        config: DatapathConfig,
        packet_in_capacity: usize,
    ) -> (Datapath<C>, Writer<C>, Receiver<PacketIn>) {
        let config = Arc::new(sorted(config));
        let (tx, rx) = sync_channel(packet_in_capacity);
        let shared = Arc::new(Shared {
            copies: [
                RwLock::new(PipelineVersion::new(config.clone())),
                RwLock::new(PipelineVersion::new(config)),
            ],
            active: AtomicUsize::new(0),
            live: PortLiveness::new(),
            workers: Mutex::new(Vec::new()),
            packet_in: tx,
            mirror: OnceLock::new(),
            offer_epoch: AtomicU64::new(0),
            normal: Arc::new(OnceLock::new()),
            bands: OnceLock::new(),
        });
        let writer = Writer {
            shared: shared.clone(),
            log: Vec::new(),
            rule_slots: SlotAlloc::new(MAX_RULES),
            group_slots: SlotAlloc::new(MAX_OBJECTS),
            bucket_slots: SlotAlloc::new(MAX_OBJECTS),
            meter_slots: SlotAlloc::new(MAX_OBJECTS),
            band_slots: SlotAlloc::new(MAX_OBJECTS),
            removed: Vec::new(),
            cleared: Vec::new(),
            txn: None,
            instructions: Interner::default(),
        };
        (Datapath { shared }, writer, rx)
    }

    /// The published version (held read-locked: drop it soon, like a batch).
    pub fn current(&self) -> RwLockReadGuard<'_, PipelineVersion<C>> {
        self.shared.read()
    }

    /// Marks a port slot's link up or down; fast-failover groups follow at once.
    /// The in-kernel tier, if set, is told when the liveness changed.
    pub fn set_port_live(&self, slot: u16, live: bool) {
        let was = self.shared.live.is_live(slot);
        self.shared.live.set(slot, live);
        if was != live {
            if let Some(m) = self.shared.mirror.get() {
                m.port_liveness(slot, live);
            }
        }
    }

    pub fn read_rule(&self, id: RuleId) -> RuleStats {
        self.shared.sum(|s| s.rule(id))
    }

    pub fn read_table(&self, table: u8) -> TableStats {
        self.shared.sum(|s| s.table(table))
    }

    /// A group's counters and its buckets', by group id (None if absent).
    pub fn read_group(&self, id: u32) -> Option<(Stats, Vec<Stats>)> {
        let g = self.current().group(id)?.clone();
        Some(
            self.shared.sum(|s| {
                (s.group(g.counter), g.buckets.iter().map(|b| s.bucket(b.counter)).collect())
            }),
        )
    }

    /// A meter's counters and its bands', by meter id (None if absent).
    pub fn read_meter(&self, id: u32) -> Option<(Stats, Vec<Stats>)> {
        let m = self.current().meter(id)?.clone();
        let (meter, mut bands): (Stats, Vec<Stats>) = self
            .shared
            .sum(|s| (s.meter(m.counter), m.state.iter().map(|b| s.band(b.counter)).collect()));
        // What the kernel program counted in the meter's cells (its hits through the
        // meter are credited to the meter's counter like a worker's).
        for (i, b) in bands.iter_mut().enumerate() {
            let (packets, bytes) = m.kernel_counts(i);
            b.packets += packets;
            b.bytes += bytes;
        }
        Some((meter, bands))
    }

    /// Lends the kernel tier's band cells to the meters set from now on (see
    /// [`crate::meter`]); false if a pool was lent before (it stays).
    pub fn set_band_cells(&self, pool: BandPool) -> bool {
        self.shared.bands.set(Arc::new(pool)).is_ok()
    }

    pub fn read_port(&self, slot: u16) -> PortStats {
        self.shared.sum(|s| s.port(slot))
    }

    pub fn read_misc(&self, m: Misc) -> u64 {
        self.shared.sum(|s| s.misc(m))
    }

    pub fn read_parse_errors(&self) -> Vec<(ParseError, u64)> {
        self.shared.sum(|s| s.parse_errors())
    }

    /// Every registered worker's own counters (not summed), in registration order.
    pub fn read_workers(&self) -> Vec<WorkerStats> {
        self.shared.sum(|s| s.workers())
    }
}

fn sorted(mut c: DatapathConfig) -> DatapathConfig {
    c.ports.sort_by_key(|p| p.no);
    c
}

/// Why a change was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteError {
    /// Table id above 253.
    BadTable,
    /// No counter slot left.
    Full,
    /// No such rule (modify).
    NoSuchRule,
    /// The rule to insert has no match: it came from a table (where its match stays),
    /// not from [`Rule::new`].
    NoMatch,
}

/// A rule removed or replaced by the changes of a publish, with its final counters.
#[derive(Clone, Debug)]
pub struct RemovedRule {
    pub table: u8,
    pub rule: Arc<Rule>,
    pub stats: RuleStats,
}

/// What a publish did.
#[derive(Clone, Debug)]
pub struct Published {
    pub version: u64,
    pub removed: Vec<RemovedRule>,
}

/// The single writer (the agent's side): changes the unpublished copy, then publishes.
///
/// A transaction ([`Writer::begin`]) lets a run of changes be taken back before anyone
/// sees them: [`Writer::rollback`] undoes every change since `begin` (the unpublished
/// copy is as it was, and so is what the next publish does); [`Writer::publish`] or
/// [`Writer::end`] keeps them.
pub struct Writer<C = DefaultClassifier> {
    shared: Arc<Shared<C>>,
    log: Vec<Change>,
    rule_slots: SlotAlloc,
    group_slots: SlotAlloc,
    bucket_slots: SlotAlloc,
    meter_slots: SlotAlloc,
    band_slots: SlotAlloc,
    removed: Vec<(u8, Arc<Rule>)>,
    /// The ids of the rules of tables cleared since the last publish (outside
    /// transactions), which `removed` does not list.
    cleared: Vec<RuleId>,
    txn: Option<Txn>,
    /// One copy of each instruction list the rules use.
    pub(crate) instructions: Interner<super::Instructions>,
}

/// The slot allocators of a writer, in the order [`Txn`] lists them.
const SLOT_KINDS: usize = 5;

/// An open transaction: the inverse of each change since it began (applied in reverse
/// to roll back), the length of the log when it began (the changes after it are taken
/// out of the log again, so a rollback leaves nothing to publish), and what to give back
/// of the slot bookkeeping: the lengths of the retired lists and of `removed` when it
/// began, and every slot allocated since.
struct Txn {
    undo: Vec<Change>,
    log: usize,
    retiring: [usize; SLOT_KINDS],
    removed: usize,
    allocated: [Vec<u32>; SLOT_KINDS],
}

impl<C: RuleTable> Writer<C> {
    fn inactive(&self) -> usize {
        (self.shared.active.load(Ordering::SeqCst) & 1) ^ 1
    }

    fn change(&mut self, ch: Change) -> Replaced {
        let old_config = match (&ch, &self.txn) {
            (Change::SetConfig(_), Some(_)) => Some(self.pending().config.clone()),
            _ => None,
        };
        let r = self.shared.write(self.inactive()).apply(&ch);
        if let Some(txn) = &mut self.txn {
            if let Some(inverse) = inverse(&ch, &r, old_config) {
                txn.undo.push(inverse);
            }
        }
        self.log.push(ch);
        r
    }

    fn slots(&mut self) -> [&mut SlotAlloc; SLOT_KINDS] {
        [
            &mut self.rule_slots,
            &mut self.group_slots,
            &mut self.bucket_slots,
            &mut self.meter_slots,
            &mut self.band_slots,
        ]
    }

    /// Allocates a slot of kind `k` (an index into [`Writer::slots`]), noting it in an
    /// open transaction.
    fn alloc(&mut self, k: usize) -> Result<u32, WriteError> {
        let s = self.slots()[k].alloc().ok_or(WriteError::Full)?;
        if let Some(txn) = &mut self.txn {
            txn.allocated[k].push(s);
        }
        Ok(s)
    }

    /// Starts a transaction (see [`Writer`]); one already open goes on.
    pub fn begin(&mut self) {
        if self.txn.is_none() {
            let retiring = self.slots().map(|s| s.retiring_len());
            let (removed, log) = (self.removed.len(), self.log.len());
            let allocated = Default::default();
            self.txn = Some(Txn { undo: Vec::new(), log, retiring, removed, allocated });
        }
    }

    /// Keeps the changes of the open transaction, if any, and closes it.
    pub fn end(&mut self) {
        self.txn = None;
    }

    /// Undoes every change since [`Writer::begin`] and closes the transaction: the objects
    /// it replaced or removed are back with their slots (so their counters go on), and the
    /// slots it allocated are retired. Without a transaction it does nothing.
    pub fn rollback(&mut self) {
        let Some(txn) = self.txn.take() else { return };
        {
            let mut copy = self.shared.write(self.inactive());
            for ch in txn.undo.iter().rev() {
                copy.apply(ch);
            }
        }
        self.log.truncate(txn.log);
        self.removed.truncate(txn.removed);
        for ((slots, keep), allocated) in
            self.slots().into_iter().zip(txn.retiring).zip(txn.allocated)
        {
            slots.unretire_after(keep);
            allocated.into_iter().for_each(|s| slots.retire(s));
        }
    }

    /// The state as changed so far (published or not).
    pub fn pending(&self) -> RwLockReadGuard<'_, PipelineVersion<C>> {
        let copy =
            if self.inactive() == 0 { &self.shared.copies[0] } else { &self.shared.copies[1] };
        copy.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Adds `rule` to `table`, replacing the rule with the same match and priority (whose
    /// counters end; the new rule starts at zero). Returns the new rule's id.
    pub fn insert_rule(&mut self, table: u8, mut rule: Rule) -> Result<RuleId, WriteError> {
        if table as usize >= NUM_TABLES {
            return Err(WriteError::BadTable);
        }
        let m = *rule.matches.take().ok_or(WriteError::NoMatch)?;
        rule.id = self.alloc(0)?;
        rule.table = table;
        rule.table_miss = rule.priority == 0 && m.is_any();
        rule.refresh();
        self.instructions.share(&mut rule.instructions);
        let id = rule.id;
        let ch = Change::InsertRule { table, rule: Arc::new(rule), m };
        if let Replaced::Rule(old) = self.change(ch) {
            self.retire_rule(table, old);
        }
        Ok(id)
    }

    /// The match of rule `id` (in `table`, of `priority`): `hint` when the rule at
    /// `hint` is `id` (one probe), else found by a scan of the table.
    fn match_of(
        &self,
        table: u8,
        id: RuleId,
        priority: u16,
        hint: Option<&FlowMatch>,
    ) -> Option<FlowMatch> {
        let v = self.pending();
        let t = v.table(table)?;
        if let Some(m) = hint {
            if t.get(m, priority).is_some_and(|r| r.id == id) {
                return Some(*m);
            }
        }
        let found = t.rules().find(|(_, p, r)| *p == priority && r.id == id).map(|(m, _, _)| m);
        found
    }

    /// Changes rule `id` in place, keeping its id, counters, table, match and priority
    /// (flow-mod modify); `f` may change its cookie, instructions, timeouts and flags.
    /// `hint` is the rule's match if the caller knows it (else the table is scanned for
    /// it; a wrong hint costs the scan, nothing else).
    pub fn modify_rule(
        &mut self,
        id: RuleId,
        hint: Option<&FlowMatch>,
        f: impl FnOnce(&mut Rule),
    ) -> Result<(), WriteError> {
        let mut rule = self.pending().rule(id).cloned().ok_or(WriteError::NoSuchRule)?;
        let (table, priority, table_miss) = (rule.table, rule.priority, rule.table_miss);
        let m = self.match_of(table, id, priority, hint).ok_or(WriteError::NoSuchRule)?;
        f(&mut rule);
        rule.id = id;
        rule.table = table;
        rule.matches = None;
        rule.priority = priority;
        rule.table_miss = table_miss;
        rule.refresh();
        self.instructions.share(&mut rule.instructions);
        self.change(Change::InsertRule { table, rule: Arc::new(rule), m: CompactMatch::from(&m) });
        Ok(())
    }

    /// Removes rule `id` (of `table` and `priority`): as [`Writer::remove_rule`], with
    /// `hint` its match if the caller knows it (else the table is scanned for it).
    pub fn remove_rule_id(
        &mut self,
        table: u8,
        id: RuleId,
        priority: u16,
        hint: Option<&FlowMatch>,
    ) -> Option<Arc<Rule>> {
        let m = self.match_of(table, id, priority, hint)?;
        self.remove_rule(table, &m, priority)
    }

    /// Removes the rule with exactly this match and priority.
    pub fn remove_rule(&mut self, table: u8, m: &FlowMatch, priority: u16) -> Option<Arc<Rule>> {
        if table as usize >= NUM_TABLES {
            return None;
        }
        match self.change(Change::RemoveRule { table, m: CompactMatch::from(m), priority }) {
            Replaced::Rule(old) => {
                self.retire_rule(table, old.clone());
                Some(old)
            }
            _ => None,
        }
    }

    /// Removes every rule of `table` (unpublished), as [`Writer::remove_rule`] would one
    /// by one but without looking each up: the table is replaced by an empty one, and
    /// the old one is freed off this thread ([`reap`]). Returns how many went.
    ///
    /// Outside a transaction the rules are not listed in the next
    /// [`Published::removed`] (reading a million rules' final counters is what a bulk
    /// delete does not need; a caller that wants them removes the rules one by one).
    /// Inside a transaction they go one by one, so that a rollback can put them back,
    /// and are listed.
    pub fn clear_table(&mut self, table: u8) -> usize {
        if table as usize >= NUM_TABLES {
            return 0;
        }
        if self.txn.is_some() {
            let doomed: Vec<(FlowMatch, u16)> = match self.pending().table(table) {
                Some(t) => t.rules().map(|(m, p, _)| (m, p)).collect(),
                None => Vec::new(),
            };
            for (m, p) in &doomed {
                self.remove_rule(table, m, *p);
            }
            return doomed.len();
        }
        let ids: Vec<RuleId> = {
            let v = self.pending();
            let alone =
                v.tables.iter().enumerate().all(|(i, t)| i == table as usize || t.is_empty());
            let slots = v.rules.iter().enumerate();
            if alone {
                // Every rule is in this table: no rule need be read.
                slots.filter(|(_, r)| r.is_some()).map(|(i, _)| i as RuleId).collect()
            } else {
                slots
                    .filter(|(_, r)| r.as_ref().is_some_and(|r| r.table == table))
                    .map(|(i, _)| i as RuleId)
                    .collect()
            }
        };
        self.change(Change::ClearTable(table));
        for &id in &ids {
            self.rule_slots.retire(id);
        }
        let n = ids.len();
        if self.cleared.is_empty() {
            self.cleared = ids;
        } else {
            self.cleared.extend_from_slice(&ids);
        }
        n
    }

    fn retire_rule(&mut self, table: u8, old: Arc<Rule>) {
        self.rule_slots.retire(old.id);
        self.removed.push((table, old));
    }

    /// Adds or replaces a group (its counters start at zero).
    pub fn set_group(&mut self, mut g: Group) -> Result<(), WriteError> {
        g.counter = self.alloc(1)?;
        for b in &mut g.buckets {
            b.counter = self.alloc(2)?;
        }
        g.compile();
        if let Replaced::Group(old) = self.change(Change::SetGroup(Arc::new(g))) {
            self.retire_group(&old);
        }
        Ok(())
    }

    pub fn remove_group(&mut self, id: u32) -> Option<Arc<Group>> {
        match self.change(Change::RemoveGroup(id)) {
            Replaced::Group(old) => {
                self.retire_group(&old);
                Some(old)
            }
            _ => None,
        }
    }

    fn retire_group(&mut self, g: &Group) {
        self.group_slots.retire(g.counter);
        for b in &g.buckets {
            self.bucket_slots.retire(b.counter);
        }
    }

    /// Adds or replaces a meter (its buckets start full, its counters at zero).
    pub fn set_meter(&mut self, mut m: Meter) -> Result<(), WriteError> {
        m.counter = self.alloc(3)?;
        for b in m.state.iter_mut() {
            b.counter = self.alloc(4)?;
        }
        if let Some(pool) = self.shared.bands.get() {
            m.lend_cells(pool);
        }
        if let Replaced::Meter(old) = self.change(Change::SetMeter(Arc::new(m))) {
            self.retire_meter(&old);
        }
        Ok(())
    }

    pub fn remove_meter(&mut self, id: u32) -> Option<Arc<Meter>> {
        match self.change(Change::RemoveMeter(id)) {
            Replaced::Meter(old) => {
                self.retire_meter(&old);
                Some(old)
            }
            _ => None,
        }
    }

    fn retire_meter(&mut self, m: &Meter) {
        self.meter_slots.retire(m.counter);
        for b in m.state.iter() {
            self.band_slots.retire(b.counter);
        }
    }

    /// Replaces the settings (ports are sorted by number).
    pub fn set_config(&mut self, c: DatapathConfig) {
        self.change(Change::SetConfig(Arc::new(sorted(c))));
    }

    /// Publishes every change made since the last publish and returns once every worker
    /// has moved to the new version (see the module comment). With no change it returns
    /// at once: every earlier change is already published. It ends an open transaction,
    /// keeping its changes.
    pub fn publish(&mut self) -> Published {
        self.txn = None;
        let inactive = self.inactive();
        if self.log.is_empty() {
            return Published { version: self.pending().version, removed: Vec::new() };
        }
        let version = {
            let w = self.shared.write(inactive);
            w.version + 1
        };
        let changes =
            self.shared.mirror.get().map(|_| Changes::of(&self.log, &self.removed, &self.cleared));
        self.change(Change::SetVersion(version));
        self.shared.active.store(inactive, Ordering::SeqCst);
        if let (Some(m), Some(c)) = (self.shared.mirror.get(), changes) {
            m.publish(version, &c);
        }
        {
            // Waits for the batches still running on the old copy.
            let mut old = self.shared.write(inactive ^ 1);
            for ch in self.log.drain(..) {
                old.apply(&ch);
            }
        }
        let removed = self.shared.sum(|s| {
            self.removed
                .drain(..)
                .map(|(table, rule)| RemovedRule { table, stats: s.rule(rule.id), rule })
                .collect()
        });
        let ws = self.shared.workers.lock().unwrap_or_else(PoisonError::into_inner).clone();
        for s in self.rule_slots.release() {
            ws.iter().for_each(|w| w.rules.zero(s));
        }
        for s in self.group_slots.release() {
            ws.iter().for_each(|w| w.groups.zero(s));
        }
        for s in self.bucket_slots.release() {
            ws.iter().for_each(|w| w.buckets.zero(s));
        }
        for s in self.meter_slots.release() {
            ws.iter().for_each(|w| w.meters.zero(s));
        }
        for s in self.band_slots.release() {
            ws.iter().for_each(|w| w.bands.zero(s));
        }
        // A bulk change (a million rules added or deleted) leaves big buffers behind:
        // they go back rather than stay held.
        self.cleared.clear();
        shrink_idle(&mut self.log);
        shrink_idle(&mut self.removed);
        shrink_idle(&mut self.cleared);
        Published { version, removed }
    }
}
