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
//!
//! Layout: a direct-mapped array indexed by the flow hash; a colliding insert replaces the
//! slot. Entries are plain `Copy` data (rule ids, not pointers): the version's id → rule
//! table turns them back into rules, which is why the tag check matters.

use crate::group::flow_hash;
use crate::key::FlowKey;
use crate::pipeline::RuleId;

/// Longest cached path (tables visited).
pub const MAX_STEPS: usize = 8;
/// "This table missed" in a [`Step`].
pub const NO_RULE: RuleId = RuleId::MAX;

/// One table visited: its id and the matched rule's id, or [`NO_RULE`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Step {
    pub table: u8,
    pub rule: RuleId,
}

/// The tables a packet visited, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Path {
    len: u8,
    steps: [Step; MAX_STEPS],
}

impl Path {
    /// Appends a step; false when the path is full (it is then not cached).
    #[inline]
    pub fn push(&mut self, table: u8, rule: RuleId) -> bool {
        match self.steps.get_mut(self.len as usize) {
            Some(s) => {
                *s = Step { table, rule };
                self.len += 1;
                true
            }
            None => false,
        }
    }

    #[inline]
    pub fn get(&self, i: usize) -> Option<Step> {
        self.steps.get(..self.len as usize)?.get(i).copied()
    }

    pub fn len(&self) -> usize {
        self.len as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[derive(Clone, Copy)]
struct Entry {
    key: FlowKey,
    /// 0: empty (versions start at 1).
    version: u64,
    path: Path,
}

/// A worker's exact-match cache.
pub struct ExactCache {
    entries: Box<[Entry]>,
    mask: usize,
}

impl ExactCache {
    /// A cache of `capacity` entries, rounded up to a power of two (at least 1).
    pub fn new(capacity: usize) -> ExactCache {
        let n = capacity.max(1).next_power_of_two();
        ExactCache {
            entries: vec![
                Entry {
                    key: FlowKey::ZERO,
                    version: 0,
                    path: Path::default(),
                };
                n
            ]
            .into_boxed_slice(),
            mask: n - 1,
        }
    }

    /// The path cached for `key` in `version`.
    #[inline]
    pub fn get(&self, key: &FlowKey, version: u64) -> Option<Path> {
        let e = self.entries.get(flow_hash(key) as usize & self.mask)?;
        (e.version == version && e.key == *key).then_some(e.path)
    }

    /// Records `path` for `key` in `version`, replacing whatever shared its slot.
    #[inline]
    pub fn insert(&mut self, key: &FlowKey, version: u64, path: Path) {
        if let Some(e) = self.entries.get_mut(flow_hash(key) as usize & self.mask) {
            *e = Entry {
                key: *key,
                version,
                path,
            };
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
        assert_eq!(
            p.get(1),
            Some(Step {
                table: 3,
                rule: NO_RULE
            })
        );
        assert_eq!(p.get(2), None);
        c.clear();
        assert_eq!(c.get(&k, 5), None);
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
