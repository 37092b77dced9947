//! The shared MAC table: the state behind one lock, its change log, and the counter
//! registry (the structure is described in the parent module's comment).

use std::collections::{BTreeMap, VecDeque};
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

use super::handler::NormalSwitch;
use super::stats::{Counter, Counters, NormalStats, Tally};
use super::{alive, is_group, learnable, pack, unpack, KeyHash, KeyMap, MacTableConfig};

/// Fewest changes the log keeps (it keeps `max(capacity, LOG_MIN)`).
const LOG_MIN: usize = 1024;

/// One change to the state, as workers replay it onto their views.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Change {
    /// The entry of `key` is now `(port, last_seen)` (new, moved or refreshed).
    Set { key: u64, port: u32, last_seen: u64 },
    /// The entry of `key` is gone.
    Remove(u64),
    /// Every entry is gone.
    Clear,
    /// The port set changed (read it from the state).
    Ports,
    /// The settings changed (read them from the state).
    Settings,
}

/// A stored entry. `seq` orders entries with the same `last_seen` (the one set first is
/// older); it is unique and renewed whenever the entry is set.
#[derive(Clone, Copy, Debug)]
pub(super) struct Entry {
    pub port: u32,
    pub last_seen: u64,
    seq: u64,
}

/// Everything behind the table's lock. Invariants in the parent module's comment.
#[derive(Debug)]
pub(super) struct State {
    pub cfg: MacTableConfig,
    entries: KeyMap<Entry>,
    by_age: BTreeMap<(u64, u64), u64>,
    next_seq: u64,
    /// The switch's ports, sorted, without duplicates.
    pub ports: Arc<[u32]>,
    /// The latest changes; `log[i]` made generation `log_start + i + 1`.
    pub log: VecDeque<Change>,
    pub log_start: u64,
    /// Who is told of changes (see [`MacListener`]), and the changes not yet told.
    listener: Option<Weak<dyn MacListener>>,
    pending: Vec<MacChange>,
}

impl State {
    fn new(cfg: MacTableConfig, hash: KeyHash) -> State {
        State {
            cfg,
            entries: KeyMap::with_hasher(hash),
            by_age: BTreeMap::new(),
            next_seq: 0,
            ports: Arc::from(Vec::new()),
            log: VecDeque::new(),
            log_start: 0,
            listener: None,
            pending: Vec::new(),
        }
    }

    /// Keeps `c` for the listener, if there is one.
    fn note(&mut self, c: MacChange) {
        if self.listener.is_some() {
            self.pending.push(c);
        }
    }

    /// The number of changes made so far.
    pub fn gen(&self) -> u64 {
        self.log_start + self.log.len() as u64
    }

    /// Every entry, expired ones included, as (packed key, entry).
    pub fn entries(&self) -> impl Iterator<Item = (u64, &Entry)> {
        self.entries.iter().map(|(k, e)| (*k, e))
    }

    fn record(&mut self, c: Change) {
        self.log.push_back(c);
        let limit = self.cfg.capacity.max(LOG_MIN);
        while self.log.len() > limit {
            self.log.pop_front();
            self.log_start += 1;
        }
    }

    /// Sets the entry of `key`, replacing any.
    fn set(&mut self, key: u64, port: u32, last_seen: u64) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let e = Entry { port, last_seen, seq };
        let old = self.entries.insert(key, e);
        if let Some(old) = old {
            self.by_age.remove(&(old.last_seen, old.seq));
        }
        // A refresh (alive on the same port before) changes no forwarding decision.
        if !old.is_some_and(|o| o.port == port && alive(o.last_seen, last_seen, self.cfg.aging_ns))
        {
            self.note(MacChange::Key { key });
        }
        self.by_age.insert((last_seen, seq), key);
        self.record(Change::Set { key, port, last_seen });
    }

    /// Removes the entry of `key`, if any.
    fn remove(&mut self, key: u64) -> Option<Entry> {
        let old = self.entries.remove(&key)?;
        self.by_age.remove(&(old.last_seen, old.seq));
        self.note(MacChange::Key { key });
        self.record(Change::Remove(key));
        Some(old)
    }

    /// Removes the oldest entry, counting it in `t` as aged out (expired at `now`) or
    /// evicted.
    fn evict_oldest(&mut self, now: u64, t: &mut Tally) {
        let Some((_, &key)) = self.by_age.first_key_value() else {
            return;
        };
        if let Some(e) = self.remove(key) {
            if alive(e.last_seen, now, self.cfg.aging_ns) {
                t.evicted += 1;
            } else {
                t.aged_out += 1;
            }
        }
    }

    /// Rule 1 of the parent module's comment: learns that `key`'s MAC is on `port` at
    /// `now`.
    pub fn learn(&mut self, key: u64, port: u32, now: u64, t: &mut Tally) {
        if self.ports.binary_search(&port).is_err() {
            return;
        }
        match self.entries.get(&key) {
            Some(e) if alive(e.last_seen, now, self.cfg.aging_ns) => {
                if e.port == port {
                    if now.saturating_sub(e.last_seen) < self.cfg.refresh_ns {
                        return;
                    }
                } else {
                    t.moved += 1;
                }
            }
            Some(_) => t.learned += 1,
            None => {
                if self.entries.len() >= self.cfg.capacity {
                    self.evict_oldest(now, t);
                }
                t.learned += 1;
            }
        }
        self.set(key, port, now);
    }

    /// Removes every entry expired at `now`.
    pub fn sweep(&mut self, now: u64, t: &mut Tally) {
        while let Some((&(last_seen, _), &key)) = self.by_age.first_key_value() {
            if alive(last_seen, now, self.cfg.aging_ns) {
                break;
            }
            self.remove(key);
            t.aged_out += 1;
        }
    }

    /// Removes the entries for which `f(port)` holds; returns how many.
    fn remove_ports(&mut self, f: impl Fn(u32) -> bool) -> usize {
        let gone: Vec<u64> =
            self.entries.iter().filter(|(_, e)| f(e.port)).map(|(k, _)| *k).collect();
        for &k in &gone {
            self.remove(k);
        }
        gone.len()
    }
}

/// What the table and its handlers share.
#[derive(Debug)]
pub(super) struct Shared {
    /// The state's generation, stored while its lock is held (see [`Locked`]).
    pub gen: AtomicU64,
    state: Mutex<State>,
    /// Counters of the live handlers.
    registry: Mutex<Vec<Arc<Counters>>>,
    /// Counters of handlers gone, and of operations made through [`MacTable`].
    retired: Counters,
    pub hash: KeyHash,
}

/// The state, locked. Publishes the generation to [`Shared::gen`] before unlocking, so
/// whoever sees a generation there finds at least that generation behind the lock.
pub(super) struct Locked<'a> {
    guard: MutexGuard<'a, State>,
    gen: &'a AtomicU64,
}

impl Deref for Locked<'_> {
    type Target = State;
    fn deref(&self) -> &State {
        &self.guard
    }
}

impl DerefMut for Locked<'_> {
    fn deref_mut(&mut self) -> &mut State {
        &mut self.guard
    }
}

impl Drop for Locked<'_> {
    /// Tells the listener of the changes made under the lock, then publishes the
    /// generation: both before the lock is released, so no worker sees a change before
    /// the listener has acted on it.
    fn drop(&mut self) {
        if !self.guard.pending.is_empty() {
            let changes = std::mem::take(&mut self.guard.pending);
            match self.guard.listener.as_ref().and_then(Weak::upgrade) {
                Some(l) => l.changed(self.guard.gen(), &changes),
                None => self.guard.listener = None,
            }
            // The buffer is kept for the next changes.
            let mut changes = changes;
            changes.clear();
            self.guard.pending = changes;
        }
        self.gen.store(self.guard.gen(), Ordering::Release);
    }
}

impl Shared {
    /// Locks the state. A panic elsewhere while it was held leaves it consistent (every
    /// mutation keeps the invariants step by step), so a poisoned lock is used as is.
    pub fn lock(&self) -> Locked<'_> {
        Locked { guard: self.state.lock().unwrap_or_else(PoisonError::into_inner), gen: &self.gen }
    }

    fn registry(&self) -> MutexGuard<'_, Vec<Arc<Counters>>> {
        self.registry.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers a new handler's counters.
    pub fn register(&self) -> Arc<Counters> {
        let c = Arc::new(Counters::default());
        self.registry().push(c.clone());
        c
    }

    /// Moves a departing handler's counts into the retired totals.
    pub fn retire(&self, c: &Arc<Counters>) {
        let mut reg = self.registry();
        if let Some(i) = reg.iter().position(|r| Arc::ptr_eq(r, c)) {
            reg.swap_remove(i);
            self.retired.absorb(c);
        }
    }
}

/// An entry as [`MacTable::entries`] reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MacEntry {
    /// `Field::VlanVid` form: 0 untagged, `0x1000 | vid` tagged.
    pub vlan: u16,
    /// The MAC address in the low 48 bits, first octet highest.
    pub mac: u64,
    pub port: u32,
    /// Time since the entry was last set (refreshes happen at most once per
    /// `refresh_ns`, so this may exceed the time since the MAC was last seen by that).
    pub age_ns: u64,
}

/// The learning switch's MAC table, shared by every worker's [`NormalSwitch`]. Cloning
/// gives another handle to the same table. See the parent module's comment.
#[derive(Clone, Debug)]
pub struct MacTable {
    shared: Arc<Shared>,
}

impl Default for MacTable {
    fn default() -> Self {
        MacTable::new(MacTableConfig::default())
    }
}

impl MacTable {
    /// An empty table with no ports (set them with [`MacTable::set_ports`]).
    pub fn new(cfg: MacTableConfig) -> MacTable {
        let hash = KeyHash::random();
        MacTable {
            shared: Arc::new(Shared {
                gen: AtomicU64::new(0),
                state: Mutex::new(State::new(cfg.normalized(), hash)),
                registry: Mutex::new(Vec::new()),
                retired: Counters::default(),
                hash,
            }),
        }
    }

    /// A handler for one worker, its view up to date.
    pub fn handler(&self) -> NormalSwitch {
        NormalSwitch::new(self.shared.clone())
    }

    /// The settings in force (normalized).
    pub fn config(&self) -> MacTableConfig {
        self.shared.lock().cfg
    }

    /// Replaces the settings (normalized first). When the new capacity is below the
    /// number of entries, the oldest go and are counted as evicted.
    pub fn set_config(&self, cfg: MacTableConfig) {
        let cfg = cfg.normalized();
        let mut st = self.shared.lock();
        st.cfg = cfg;
        let mut t = Tally::default();
        while st.entries.len() > cfg.capacity {
            let Some((_, &key)) = st.by_age.first_key_value() else {
                break;
            };
            st.remove(key);
            t.evicted += 1;
        }
        st.note(MacChange::All);
        st.record(Change::Settings);
        drop(st);
        t.credit(|c, n| self.shared.retired.add(c, n));
    }

    /// Sets the switch's ports (floods go to them; only they learn). Entries on ports
    /// that leave are removed. Handlers follow at their next batch.
    pub fn set_ports(&self, ports: &[u32]) {
        let mut v = ports.to_vec();
        v.sort_unstable();
        v.dedup();
        let mut st = self.shared.lock();
        st.ports = Arc::from(v);
        let ports = st.ports.clone();
        st.remove_ports(|p| ports.binary_search(&p).is_err());
        st.note(MacChange::All);
        st.record(Change::Ports);
    }

    /// The switch's ports, sorted.
    pub fn ports(&self) -> Vec<u32> {
        self.shared.lock().ports.to_vec()
    }

    /// Removes every entry on `port` (link down, port removed); returns how many.
    pub fn forget_port(&self, port: u32) -> usize {
        self.shared.lock().remove_ports(|p| p == port)
    }

    /// Removes every entry.
    pub fn flush(&self) {
        let mut st = self.shared.lock();
        st.entries.clear();
        st.by_age.clear();
        st.note(MacChange::All);
        st.record(Change::Clear);
    }

    /// Removes the entries expired at `now`; returns how many. (Handlers also do this,
    /// at most once per `refresh_ns` each.)
    pub fn expire(&self, now: u64) -> u64 {
        let mut t = Tally::default();
        self.shared.lock().sweep(now, &mut t);
        self.shared.retired.add(Counter::AgedOut, t.aged_out);
        t.aged_out
    }

    /// The port of `mac` on `vlan` (`Field::VlanVid` form) if its entry is alive at
    /// `now`.
    pub fn lookup(&self, vlan: u16, mac: u64, now: u64) -> Option<u32> {
        let st = self.shared.lock();
        st.entries
            .get(&pack(vlan.into(), mac))
            .filter(|e| alive(e.last_seen, now, st.cfg.aging_ns))
            .map(|e| e.port)
    }

    /// Number of stored entries (expired ones not yet swept included).
    pub fn len(&self) -> usize {
        self.shared.lock().entries.len()
    }

    /// Whether no entry is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The entries alive at `now`, sorted by VLAN then MAC.
    pub fn entries(&self, now: u64) -> Vec<MacEntry> {
        let st = self.shared.lock();
        let mut v: Vec<MacEntry> = st
            .entries
            .iter()
            .filter(|(_, e)| alive(e.last_seen, now, st.cfg.aging_ns))
            .map(|(&k, e)| {
                let (vlan, mac) = unpack(k);
                MacEntry { vlan, mac, port: e.port, age_ns: now.saturating_sub(e.last_seen) }
            })
            .collect();
        v.sort_unstable_by_key(|e| (e.vlan, e.mac));
        v
    }

    /// Sets who is told of every change that may alter a forwarding decision (replacing
    /// any listener set before). See [`MacListener`].
    pub fn set_listener(&self, l: Weak<dyn MacListener>) {
        let mut st = self.shared.lock();
        st.listener = Some(l);
        st.pending.clear();
    }

    /// The number of changes made so far, as workers see it (a listener is told of a
    /// change before this counts it).
    pub fn generation(&self) -> u64 {
        self.shared.gen.load(Ordering::Acquire)
    }

    /// What the learning switch would do, at `now`, with a frame on `in_port` of VLAN
    /// `vlan` (`Field::VlanVid` form) from `src` to `dst`, if that is fixed by the table
    /// as it is: its source learnable, and learned and alive on `in_port` (so the frame
    /// would teach the table nothing but a refresh). Reads only; learns nothing.
    pub fn resolve(
        &self,
        in_port: u32,
        vlan: u16,
        src: u64,
        dst: u64,
        now: u64,
    ) -> Result<Resolved, NormalWhy> {
        if !learnable(src) {
            return Err(NormalWhy::NotLearnable);
        }
        let st = self.shared.lock();
        if st.ports.binary_search(&in_port).is_err() {
            return Err(NormalWhy::NotSwitchPort(in_port));
        }
        let aging = st.cfg.aging_ns;
        let live = |mac: u64| {
            st.entries
                .get(&pack(vlan.into(), mac))
                .filter(|e| alive(e.last_seen, now, aging))
                .map(|e| e.port)
        };
        match live(src) {
            None => return Err(NormalWhy::Unlearned),
            Some(p) if p != in_port => return Err(NormalWhy::Elsewhere(p)),
            Some(_) => {}
        }
        let to = match (!is_group(dst)).then(|| live(dst)).flatten() {
            Some(p) if p == in_port => NormalTo::Drop,
            Some(p) => NormalTo::Port(p),
            None => NormalTo::Flood(st.ports.iter().copied().filter(|&p| p != in_port).collect()),
        };
        Ok(Resolved { gen: st.gen(), to })
    }

    /// Renews, at `now`, the entries of `(vlan, mac, port)` seen in frames forwarded
    /// elsewhere (the kernel tier), as a worker would on seeing them: only an entry alive
    /// on that very port, and only once `refresh_ns` has passed since it was set. An
    /// entry that moved or went meanwhile is left as it is.
    pub fn refresh(&self, seen: &[(u16, u64, u32)], now: u64) {
        if seen.is_empty() {
            return;
        }
        let mut st = self.shared.lock();
        let cfg = st.cfg;
        for &(vlan, mac, port) in seen {
            let key = pack(vlan.into(), mac);
            let due = st.entries.get(&key).is_some_and(|e| {
                e.port == port
                    && alive(e.last_seen, now, cfg.aging_ns)
                    && now.saturating_sub(e.last_seen) >= cfg.refresh_ns
            });
            if due {
                st.set(key, port, now);
            }
        }
    }

    /// Counts frames the learning switch's decisions forwarded elsewhere (the kernel
    /// tier): sent to one port, flooded, dropped. Takes no lock on the state.
    pub fn credit_elsewhere(&self, forwarded: u64, flooded: u64, dropped: u64) {
        for (c, n) in [
            (Counter::Forwarded, forwarded),
            (Counter::Flooded, flooded),
            (Counter::Dropped, dropped),
        ] {
            if n != 0 {
                self.shared.retired.add(c, n);
            }
        }
    }

    /// The counters of every handler, live or gone, and of this table's own operations,
    /// summed.
    pub fn stats(&self) -> NormalStats {
        let mut s = NormalStats::default();
        let reg = self.shared.registry();
        for c in reg.iter() {
            c.sum_into(&mut s);
        }
        self.shared.retired.sum_into(&mut s);
        s
    }
}

/// A change to the table that may alter a forwarding decision, as told to a
/// [`MacListener`]. Refreshes (an entry set again on the port it was alive on) are not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MacChange {
    /// The entry of one (VLAN, MAC) was learned, moved, or removed (aged out, evicted,
    /// forgotten with its port). `key` packs them as [`mac_key`] does.
    Key { key: u64 },
    /// Every entry may have changed: a flush, new ports, new settings.
    All,
}

/// Told of the table's changes from its write path: called with the table's lock held,
/// after the changes are made and before any worker can see them. It must not call back
/// into the table (the lock is held), and whatever lock it takes must never be held by
/// anyone who then waits for the table's lock (the lock order is table, then listener).
pub trait MacListener: Send + Sync {
    /// `changes` were made; the table is now at generation `gen`.
    fn changed(&self, gen: u64, changes: &[MacChange]);
}

/// Packs a (VLAN, MAC) as [`MacChange::Key`] names it.
pub fn mac_key(vlan: u16, mac: u64) -> u64 {
    pack(vlan.into(), mac)
}

/// What [`MacTable::resolve`] found: where the frame goes, and the table's generation
/// then (a listener told of a later generation's change knows the answer may be stale).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    pub gen: u64,
    pub to: NormalTo,
}

/// Where the learning switch sends a frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NormalTo {
    /// To the one port its destination is learned on.
    Port(u32),
    /// To these ports (every switch port but the input port), sorted.
    Flood(Vec<u32>),
    /// Nowhere: its destination is learned on its input port.
    Drop,
}

/// Why the learning switch's decision for a frame is not fixed by the table as it is
/// (the frame must reach the learning switch itself).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NormalWhy {
    /// No learning switch is attached.
    NoTable,
    /// It goes to NORMAL and somewhere else as well (or to NORMAL twice).
    Mixed,
    /// Its source MAC is multicast or zero (never learned).
    NotLearnable,
    /// Its input port (this one) is not one of the learning switch's ports.
    NotSwitchPort(u32),
    /// Its source MAC is not learned (or has expired) on its VLAN: the frame teaches it.
    Unlearned,
    /// Its source MAC is learned on this other port: the frame moves it.
    Elsewhere(u32),
}

impl std::fmt::Display for NormalWhy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NormalWhy::NoTable => f.write_str("no learning switch is attached"),
            NormalWhy::Mixed => f.write_str("it is also sent elsewhere"),
            NormalWhy::NotLearnable => f.write_str("its source MAC is multicast or zero"),
            NormalWhy::NotSwitchPort(p) => {
                write!(f, "its input port {p} is not a learning switch port")
            }
            NormalWhy::Unlearned => {
                f.write_str("its source MAC is not learned yet: the learning switch must see it")
            }
            NormalWhy::Elsewhere(p) => write!(
                f,
                "its source MAC is learned on port {p}: the learning switch must see it move"
            ),
        }
    }
}
