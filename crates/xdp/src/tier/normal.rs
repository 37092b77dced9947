//! The tier's side of NORMAL (the learning switch): which entries a change of the MAC
//! table withdraws, and the flows to judge again after one.
//!
//! An entry made from a decision through NORMAL carries a [`NormalCredit`] naming the
//! (VLAN, MAC)s the decision read: its source and, when unicast, its destination (a
//! multicast destination is never learned). [`NormalIndex`] maps each such (VLAN, MAC)
//! to the entries that read it, so a change of one entry of the MAC table withdraws only
//! those (see [`KernelTier::mac_changed`]); a change of everything (flush, ports,
//! settings) withdraws every NORMAL entry.
//!
//! The table tells the tier of its changes from its write path, with its lock held and
//! before workers can see them ([`MacListener`]); the tier takes its own lock inside
//! (lock order: MAC table, then tier) and never takes the MAC table's lock while holding
//! its own. A decision read before a change but written after it must not be written:
//! the index keeps, per slot of a small direct-mapped filter over (VLAN, MAC)s, the
//! generation of the latest change there (and of the latest change of everything), and
//! the install checks the decision's generation against them under the tier's lock.
//!
//! Workers offer a flow once per datapath version and offer round, and a MAC change is
//! no new version: so every change told starts a new offer round
//! ([`Datapath::reoffer`](datapath::pipeline::Datapath::reoffer)), after which the flows
//! withdrawn, refused for the table's sake (source not learned on the input port) or
//! read before the change offer themselves again with their next packets, once their
//! workers have sent those packets (so a new entry cannot overtake them). The flows
//! withdrawn are also judged again by the tier's thread soon after (at its next
//! chores), so that traffic that pauses across the change, such as a flow whose
//! destination moves, finds its new entry ready; a flow that does not pause may then
//! see its new entry overtake packets still in a worker, as at a flow's start.
//!
//! Invariant: every entry of `Table::entries` whose credit has a NORMAL part is in
//! `by_mac` under each (VLAN, MAC) its decision read, and `by_mac` names no other.

use std::collections::{HashMap, HashSet};
use std::sync::Weak;

use datapath::key::FlowKey;
use datapath::mirror::NormalCredit;
use datapath::normal::{mac_key, MacChange, MacListener};

use std::time::Duration;

use super::{KernelTier, Table, CHORES_EVERY, HARVEST_EVERY};
use crate::layout::FpKey;

/// Slots of the filter of latest change generations (a power of two).
const CHANGE_SLOTS: usize = 1024;
/// Most withdrawn flows kept to be judged again (more: the rest offer themselves again
/// with their next packets).
const WITHDRAWN_MAX: usize = 65_536;
/// The group bit of a MAC address.
const GROUP_BIT: u64 = 1 << 40;

/// The (VLAN, MAC)s, as [`mac_key`] packs them, that a decision through NORMAL read.
fn deps(n: &NormalCredit) -> impl Iterator<Item = u64> {
    let dst = (n.dst & GROUP_BIT == 0).then(|| mac_key(n.vlan, n.dst));
    std::iter::once(mac_key(n.vlan, n.src)).chain(dst)
}

/// The filter slot of a packed (VLAN, MAC).
fn slot(key: u64) -> usize {
    (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 54) as usize & (CHANGE_SLOTS - 1)
}

/// What the tier keeps for NORMAL's entries (see the module comment).
pub(super) struct NormalIndex {
    by_mac: HashMap<u64, HashSet<FpKey>>,
    /// Per filter slot, the MAC table's generation after the latest change of a
    /// (VLAN, MAC) hashing there.
    changed: Box<[u64]>,
    /// The generation after the latest change of everything.
    all_changed: u64,
    /// Flows withdrawn since the thread last judged them again, by program key.
    pub withdrawn: HashMap<FpKey, FlowKey>,
    /// Sources of entries hit since they were last refreshed, as (VLAN, MAC, input
    /// port): refreshed in the MAC table outside the tier's lock.
    pub seen: Vec<(u16, u64, u32)>,
}

impl NormalIndex {
    pub(super) fn new() -> NormalIndex {
        NormalIndex {
            by_mac: HashMap::new(),
            changed: vec![0; CHANGE_SLOTS].into_boxed_slice(),
            all_changed: 0,
            withdrawn: HashMap::new(),
            seen: Vec::new(),
        }
    }

    /// Records that the entry of `key` was written from a decision through NORMAL.
    pub(super) fn add(&mut self, key: FpKey, n: &NormalCredit) {
        for m in deps(n) {
            self.by_mac.entry(m).or_default().insert(key);
        }
    }

    /// Records that the entry of `key`, written from `n`, is gone.
    pub(super) fn remove(&mut self, key: &FpKey, n: &NormalCredit) {
        for m in deps(n) {
            if let Some(set) = self.by_mac.get_mut(&m) {
                set.remove(key);
                if set.is_empty() {
                    self.by_mac.remove(&m);
                }
            }
        }
    }

    /// Whether a change after generation `gen` may have altered a decision that read
    /// what `n` names.
    pub(super) fn stale(&self, n: &NormalCredit, gen: u64) -> bool {
        self.all_changed > gen || deps(n).any(|m| self.changed[slot(m)] > gen)
    }

    /// Records `changes` (the table now at `gen`) and returns the entries they may
    /// alter; `None`: every NORMAL entry.
    pub(super) fn note(&mut self, gen: u64, changes: &[MacChange]) -> Option<Vec<FpKey>> {
        let mut keys = HashSet::new();
        for c in changes {
            match c {
                MacChange::All => {
                    self.all_changed = gen;
                    return None;
                }
                MacChange::Key { key } => {
                    self.changed[slot(*key)] = gen;
                    keys.extend(self.by_mac.get(key).into_iter().flatten());
                }
            }
        }
        Some(keys.into_iter().collect())
    }
}

/// The tier as its MAC table's listener. Holds the tier weakly: the table outlives no
/// tier through it.
pub(super) struct Listener(pub Weak<KernelTier>);

impl MacListener for Listener {
    fn changed(&self, gen: u64, changes: &[MacChange]) {
        if let Some(t) = self.0.upgrade() {
            t.mac_changed(gen, changes);
        }
    }
}

impl KernelTier {
    /// The MAC table made `changes` (it is now at generation `gen`): every entry through
    /// NORMAL they may alter is credited its hits and removed from the map before this
    /// returns, and a new offer round starts (the flows offer themselves again). Called
    /// by the table's listener, with the table's lock held (see the `normal` module).
    pub(super) fn mac_changed(&self, gen: u64, changes: &[MacChange]) {
        let now = self.now_ns();
        let mut t = self.lock();
        self.dp.reoffer();
        let keys = match t.normal.note(gen, changes) {
            Some(keys) => keys,
            None => t
                .entries
                .iter()
                .filter(|(_, e)| e.credit.normal.is_some())
                .map(|(k, _)| *k)
                .collect(),
        };
        if keys.is_empty() {
            return;
        }
        self.harvest_keys(&mut t, &keys, now);
        for k in &keys {
            if let Some(flow) = t.entries.get(k).map(|e| e.flow_key) {
                if t.normal.withdrawn.len() < WITHDRAWN_MAX {
                    t.normal.withdrawn.insert(*k, flow);
                }
            }
        }
        let n = self.take_out(&mut t, keys, now, "a fast-path entry through NORMAL");
        t.stats.mac_withdrawn += n;
    }

    /// Credits the growth of the entries of `keys` of the current generation (as
    /// [`Self::harvest_locked`] does for all).
    fn harvest_keys(&self, t: &mut Table, keys: &[FpKey], now: u64) {
        let g = t.generation;
        let mut grown = Vec::new();
        for k in keys {
            let Some(e) = t.entries.get_mut(k) else {
                continue;
            };
            let Some(h) = e.grow(&self.fp) else {
                continue;
            };
            if e.entry.version != g {
                continue;
            }
            e.hits += h.packets;
            e.last_hit_ns = now;
            if let Some(n) = &e.credit.normal {
                t.normal.seen.push((n.vlan, n.src, n.in_port));
            }
            grown.push((*k, h));
        }
        let hits = grown.iter().filter_map(|(k, h)| Some((&t.entries.get(k)?.credit, *h)));
        self.counters.credit_many(hits, now);
    }

    /// How often to harvest: [`HARVEST_EVERY`], or a quarter of the MAC table's aging
    /// time if that is shorter, so that sources seen only by the kernel stay alive.
    pub(super) fn harvest_every(&self) -> Duration {
        match &self.macs {
            Some(m) => HARVEST_EVERY.min(Duration::from_nanos(m.config().aging_ns / 4)),
            None => HARVEST_EVERY,
        }
        .max(CHORES_EVERY)
    }

    /// Refreshes, in the MAC table, the sources NORMAL's entries saw hits from (taken
    /// outside the tier's lock: the lock order is MAC table, then tier).
    pub(super) fn refresh_sources(&self, now: u64) {
        let Some(m) = &self.macs else {
            return;
        };
        let mut seen = std::mem::take(&mut self.lock().normal.seen);
        seen.sort_unstable();
        seen.dedup();
        m.refresh(&seen, now);
    }

    /// NORMAL's chores, which the tier's thread does every 50 ms: refresh the sources
    /// seen; remove expired MAC entries (their removal withdraws the entries that read
    /// them: with every frame served in the kernel, no worker would); judge again the
    /// flows withdrawn since the last chores.
    pub fn normal_chores(&self) {
        let Some(m) = &self.macs else {
            return;
        };
        let now = self.now_ns();
        self.refresh_sources(now);
        m.expire(now);
        let again = std::mem::take(&mut self.lock().normal.withdrawn);
        for k in again.values() {
            self.consider(k);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datapath::mirror::NormalOutcome;

    fn credit(src: u64, dst: u64) -> NormalCredit {
        NormalCredit { outcome: NormalOutcome::Forwarded, vlan: 0x1005, src, dst, in_port: 1 }
    }

    fn key(port: u32) -> FpKey {
        FpKey { in_port: port, ..FpKey::default() }
    }

    #[test]
    fn a_change_names_the_entries_that_read_it_and_stales_older_decisions() {
        let mut ix = NormalIndex::new();
        let (a, b, c) = (0x0200_0000_000a, 0x0200_0000_000b, 0x0200_0000_000c);
        ix.add(key(1), &credit(a, b));
        ix.add(key(2), &credit(c, b));
        // A multicast destination is never learned: not a dependency.
        ix.add(key(3), &credit(a, 0x0100_5e00_0001));
        let told = |ix: &mut NormalIndex, gen, mac| {
            let mut k = ix.note(gen, &[MacChange::Key { key: mac_key(0x1005, mac) }]).unwrap();
            k.sort_unstable_by_key(|k| k.in_port);
            k
        };
        assert_eq!(told(&mut ix, 5, b), vec![key(1), key(2)]);
        assert_eq!(told(&mut ix, 6, a), vec![key(1), key(3)]);
        // Another VLAN is another key.
        let other = ix.note(7, &[MacChange::Key { key: mac_key(0, a) }]);
        assert_eq!(other, Some(vec![]));
        // Decisions read before a change of what they read are stale; others are not.
        assert!(ix.stale(&credit(a, b), 5));
        assert!(!ix.stale(&credit(a, b), 6));
        assert!(!ix.stale(&credit(c, 0x0200_0000_00dd), 4));
        assert_eq!(ix.note(9, &[MacChange::All]), None);
        assert!(ix.stale(&credit(c, 0x0200_0000_00dd), 8));
        // Removed entries are no longer named.
        ix.remove(&key(1), &credit(a, b));
        assert_eq!(told(&mut ix, 10, b), vec![key(2)]);
        ix.remove(&key(2), &credit(c, b));
        ix.remove(&key(3), &credit(a, 0x0100_5e00_0001));
        assert!(ix.by_mac.is_empty());
    }
}
