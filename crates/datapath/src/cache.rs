//! The per-worker exact-match cache: the full parsed flow key → the path the packet took
//! through the tables (the rule each table matched, or its miss).
//!
//! What is cached is the classification, the part whose cost grows with the rule set;
//! on a hit the pipeline runs exactly as on a miss except that each table's lookup is
//! read from the entry. Instructions, the action set, group choices (select by flow
//! hash, fast-failover by current liveness), meters and counters all run per packet, so
//! a hit credits the same rules, meters and buckets, and a meter or a port going down is
//! seen at once.
//!
//! Invariant: a cached path equals the path an uncached lookup would take.
//! - Each entry is tagged with the pipeline version it was computed in; a lookup passes
//!   the worker's current version and an entry of any other version is a miss (versions
//!   increase by one per publish, so a stale entry is never used).
//! - A path is recorded only when every table after the first was looked up with a key
//!   that is a function of the parsed key: the rules before it must be `cache_safe`
//!   (no pops or TTL copies in apply-actions, which bring in header bytes the key does not
//!   hold), and packets whose parse failed are not cached.
//! - A meter remarking DSCP changes the key mid-path depending on traffic; the pipeline
//!   then stops following the entry and looks the remaining tables up.
//! - A path may carry a *decision*: the port its last rule outputs to, when every rule on
//!   it has the simplest shape (gotos, then one apply-output to a port number; see
//!   `Fast` in the pipeline's rules). Such a path's outcome depends on nothing but the
//!   version (the rules, and the port config that decides whether the output is allowed),
//!   so a hit credits the path's rules and tables and sends the packet to that port
//!   without reading the rules at all. Every other path is replayed through the rules.
//!
//! Workers bypass the cache (no probe, no insert, no hit or miss counted) while the
//! published version's tables hold at most one tuple-space subtable in all: a lookup is
//! then one hash probe, no dearer than the cache's own.
//!
//! Layout: 2-way set associative. The flow hash ([`key_hash`], computed once per packet)
//! picks a bucket of two ways; each entry starts with its version, a 32-bit tag of the
//! hash and the path on one cache line, and the key follows, so a probe reads one line per
//! way and the key of the way whose tag matches. An insert takes the way holding the
//! same key or a stale (other version) entry; otherwise, one time in `EVICT_EVERY` (a
//! sample of the flows when they outnumber the entries), it moves the first way's entry
//! to the second and takes the first (the newest entries stay). Entries are plain `Copy`
//! data (rule ids, not pointers): the version's id → rule table turns them back into
//! rules, which is why the tag check matters.

use crate::key::{FlowKey, KEY_WORDS};
use crate::pipeline::RuleId;
use crate::prefetch::prefetch;

/// Longest cached path (tables visited).
pub const MAX_STEPS: usize = 8;
/// "This table missed" in a [`Step`].
pub const NO_RULE: RuleId = RuleId::MAX;
/// "No decision" in a [`Path`].
const NO_DECISION: u32 = u32::MAX;

/// One table visited: its id and the matched rule's id, or [`NO_RULE`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Step {
    pub table: u8,
    pub rule: RuleId,
}

/// The tables a packet visited, in order, and the decision if the path has one (see the
/// module comment).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Path {
    tables: [u8; MAX_STEPS],
    len: u8,
    decision: u32,
    rules: [RuleId; MAX_STEPS],
}

impl Default for Path {
    fn default() -> Self {
        Path { tables: [0; MAX_STEPS], len: 0, decision: NO_DECISION, rules: [0; MAX_STEPS] }
    }
}

impl Path {
    /// Appends a step; false when the path is full (it is then not cached).
    #[inline]
    pub fn push(&mut self, table: u8, rule: RuleId) -> bool {
        let i = self.len as usize;
        match (self.tables.get_mut(i), self.rules.get_mut(i)) {
            (Some(t), Some(r)) => {
                *t = table;
                *r = rule;
                self.len += 1;
                true
            }
            _ => false,
        }
    }

    #[inline]
    pub fn get(&self, i: usize) -> Option<Step> {
        if i >= self.len as usize {
            return None;
        }
        Some(Step { table: *self.tables.get(i)?, rule: *self.rules.get(i)? })
    }

    /// The steps, in order.
    #[inline]
    pub fn steps(&self) -> impl Iterator<Item = Step> + '_ {
        (0..self.len()).filter_map(|i| self.get(i))
    }

    pub fn len(&self) -> usize {
        self.len as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The port every packet of this path goes to, with nothing else done, if known.
    #[inline]
    pub fn decision(&self) -> Option<u32> {
        (self.decision != NO_DECISION).then_some(self.decision)
    }

    /// Records the path's decision (see the module comment for when one is valid).
    pub fn set_decision(&mut self, port: u32) {
        self.decision = port;
    }
}

/// A cache slot: header line (version, tag, path), then the key.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Entry {
    /// 0: empty (versions start at 1).
    version: u64,
    tag: u32,
    path: Path,
    key: FlowKey,
}

impl Entry {
    const EMPTY: Entry = Entry {
        version: 0,
        tag: 0,
        path: Path { tables: [0; MAX_STEPS], len: 0, decision: NO_DECISION, rules: [0; MAX_STEPS] },
        key: FlowKey::ZERO,
    };

    #[inline]
    fn holds(&self, key: &FlowKey, tag: u32, version: u64) -> bool {
        self.version == version && self.tag == tag && self.key == *key
    }
}

/// The flow key's hash for the cache: nine independent 64×64→128-bit multiplies of word
/// pairs (mixed with constants), summed and finished with a multiply-xorshift. Every
/// word counts; it is several times faster than a chained per-word hash.
#[inline]
pub fn key_hash(key: &FlowKey) -> u64 {
    const K: [u64; KEY_WORDS] = [
        0xa076_1d64_78bd_642f,
        0xe703_7ed1_a0b4_28db,
        0x8ebc_6af0_9c88_c6e3,
        0x5899_65cc_7537_4cc3,
        0x1d8e_4e27_c47d_124f,
        0xb8e8_9e3c_3a5b_1a6d,
        0x9e37_79b9_7f4a_7c15,
        0xbf58_476d_1ce4_e5b9,
        0x94d0_49bb_1331_11eb,
        0xd6e8_feb8_6659_fd93,
        0xff51_afd7_ed55_8ccd,
        0xc4ce_b9fe_1a85_ec53,
        0x2545_f491_4f6c_dd1d,
        0x243f_6a88_85a3_08d3,
        0x1319_8a2e_0370_7344,
        0xa409_3822_299f_31d0,
        0x082e_fa98_ec4e_6c89,
        0x4528_21e6_38d0_1377,
    ];
    let w = &key.words;
    let mut acc = 0u64;
    for i in 0..KEY_WORDS / 2 {
        let a = w[2 * i] ^ K[2 * i];
        let b = w[2 * i + 1] ^ K[2 * i + 1];
        let p = (a as u128) * (b as u128);
        acc = acc.wrapping_add((p as u64) ^ ((p >> 64) as u64));
    }
    acc ^= acc >> 32;
    acc = acc.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    acc ^ (acc >> 29)
}

/// A worker's exact-match cache.
pub struct ExactCache {
    entries: Box<[Entry]>,
    /// Buckets - 1 (a power of two minus one).
    mask: usize,
    /// Inserts that found both ways live and held by other keys (see `EVICT_EVERY`).
    crowded: u32,
}

/// Of the inserts that would evict a live entry, one in this many does. When the flows
/// outnumber the entries, evicting on every miss rewrites a line per packet and churns
/// out entries before their flows come back; admitting a sample keeps the hit rate (the
/// sampled flows stay) at a fraction of the cost, as Open vSwitch's EMC insertion
/// probability does. A free or stale way is always taken at once, so a cache with room
/// (few flows) fills on first sight.
const EVICT_EVERY: u32 = 8;

impl ExactCache {
    /// A cache of `capacity` entries, rounded up to a power of two (at least 2).
    pub fn new(capacity: usize) -> ExactCache {
        let n = capacity.max(2).next_power_of_two();
        ExactCache {
            entries: vec![Entry::EMPTY; n].into_boxed_slice(),
            mask: n / 2 - 1,
            crowded: 0,
        }
    }

    /// Number of entries.
    pub fn capacity(&self) -> usize {
        self.entries.len()
    }

    #[inline]
    fn bucket(&self, hash: u64) -> usize {
        (hash as usize & self.mask) * 2
    }

    /// Hints the CPU to fetch the header lines of `hash`'s bucket.
    #[inline]
    pub fn prefetch(&self, hash: u64) {
        let b = self.bucket(hash);
        if let Some(ways) = self.entries.get(b..b + 2) {
            prefetch(&ways[0]);
            prefetch(&ways[1]);
        }
    }

    /// The path cached for `key` in `version`.
    #[inline]
    pub fn get(&self, key: &FlowKey, version: u64) -> Option<Path> {
        self.get_hashed(key, key_hash(key), version)
    }

    /// [`get`](Self::get) with `hash == key_hash(key)` already computed.
    #[inline]
    pub fn get_hashed(&self, key: &FlowKey, hash: u64, version: u64) -> Option<Path> {
        let b = self.bucket(hash);
        let tag = (hash >> 32) as u32;
        self.entries.get(b..b + 2)?.iter().find(|e| e.holds(key, tag, version)).map(|e| e.path)
    }

    /// Records `path` for `key` in `version` (see the module comment for the way chosen).
    #[inline]
    pub fn insert(&mut self, key: &FlowKey, version: u64, path: Path) {
        self.insert_hashed(key, key_hash(key), version, path)
    }

    /// [`insert`](Self::insert) with `hash == key_hash(key)` already computed.
    pub fn insert_hashed(&mut self, key: &FlowKey, hash: u64, version: u64, path: Path) {
        let b = self.bucket(hash);
        let tag = (hash >> 32) as u32;
        let Some([w0, w1]) = self.entries.get_mut(b..b + 2) else {
            return;
        };
        let new = Entry { version, tag, path, key: *key };
        let reusable = |e: &Entry| e.version != version || (e.tag == tag && e.key == *key);
        if reusable(w0) {
            *w0 = new;
        } else if reusable(w1) {
            *w1 = new;
        } else {
            self.crowded = self.crowded.wrapping_add(1);
            if self.crowded.is_multiple_of(EVICT_EVERY) {
                *w1 = *w0;
                *w0 = new;
            }
        }
    }

    /// Forgets every entry.
    pub fn clear(&mut self) {
        for e in self.entries.iter_mut() {
            e.version = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::Field;

    #[test]
    fn tagged_by_version_and_key() {
        let mut c = ExactCache::new(16);
        let mut k = FlowKey::ZERO;
        k.set(Field::InPort, 1);
        let mut p = Path::default();
        assert!(p.push(0, 7));
        assert!(p.push(3, NO_RULE));
        c.insert(&k, 5, p);
        assert_eq!(c.get(&k, 5), Some(p));
        assert_eq!(c.get(&k, 6), None, "another version never hits");
        let mut k2 = k;
        k2.set(Field::InPort, 2);
        assert_eq!(c.get(&k2, 5), None);
        assert_eq!(p.get(1), Some(Step { table: 3, rule: NO_RULE }));
        assert_eq!(p.get(2), None);
        c.clear();
        assert_eq!(c.get(&k, 5), None);
    }

    #[test]
    fn two_ways_keep_colliding_keys() {
        let mut c = ExactCache::new(2);
        let keys: Vec<FlowKey> = (1..=3)
            .map(|i| {
                let mut k = FlowKey::ZERO;
                k.set(Field::Ipv4Src, i);
                k
            })
            .collect();
        let path = |r| {
            let mut p = Path::default();
            p.push(0, r);
            p
        };
        c.insert(&keys[0], 1, path(0));
        c.insert(&keys[1], 1, path(1));
        assert_eq!(c.get(&keys[0], 1), Some(path(0)));
        assert_eq!(c.get(&keys[1], 1), Some(path(1)));
        c.insert(&keys[1], 1, path(5));
        assert_eq!(c.get(&keys[1], 1), Some(path(5)), "same key replaced in place");
        assert_eq!(c.get(&keys[0], 1), Some(path(0)));
        // Both ways live with other keys: only one such insert in EVICT_EVERY evicts.
        for _ in 1..EVICT_EVERY {
            c.insert(&keys[2], 1, path(2));
            assert_eq!(c.get(&keys[2], 1), None, "not admitted yet");
            assert_eq!(c.get(&keys[0], 1), Some(path(0)));
            assert_eq!(c.get(&keys[1], 1), Some(path(5)));
        }
        c.insert(&keys[2], 1, path(2));
        assert_eq!(c.get(&keys[2], 1), Some(path(2)));
        assert_eq!(c.get(&keys[0], 1), Some(path(0)), "newest two stay");
        assert_eq!(c.get(&keys[1], 1), None);
        c.insert(&keys[1], 2, path(1));
        assert_eq!(c.get(&keys[1], 2), Some(path(1)));
        assert_eq!(c.get(&keys[2], 1), None, "a stale entry is replaced first");
        assert_eq!(c.get(&keys[0], 1), Some(path(0)));
    }

    #[test]
    fn decision_round_trips() {
        let mut p = Path::default();
        assert_eq!(p.decision(), None);
        p.push(0, 3);
        p.set_decision(7);
        assert_eq!(p.decision(), Some(7));
        assert_eq!(p.steps().collect::<Vec<_>>(), vec![Step { table: 0, rule: 3 }]);
    }

    #[test]
    fn key_hash_sees_every_word() {
        let base = key_hash(&FlowKey::ZERO);
        for w in 0..KEY_WORDS {
            for bit in [0, 17, 63] {
                let mut k = FlowKey::ZERO;
                k.words[w] = 1 << bit;
                assert_ne!(key_hash(&k), base, "word {w} bit {bit}");
            }
        }
    }

    #[test]
    fn path_is_bounded() {
        let mut p = Path::default();
        for i in 0..MAX_STEPS {
            assert!(p.push(i as u8, 1));
        }
        assert!(!p.push(9, 1));
        assert_eq!(p.len(), MAX_STEPS);
    }
}
