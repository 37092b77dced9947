//! The open-addressing index of one subtable: 64-bit hash → dense entry number.
//!
//! A power-of-two array of 8-byte slots probed linearly from `hash & (capacity - 1)`.
//! A slot is either `EMPTY` (0) or `tag << 32 | (entry + 1)`, where `tag` is the upper 32
//! bits of the entry's hash, so most non-matching slots are rejected without touching the
//! entry. Eight slots share a cache line, so a probe usually reads one line of slots and
//! then one entry.
//!
//! Invariants:
//! - The capacity is zero or a power of two of at least [`MIN_CAPACITY`], and at most
//!   3/4 of the slots are full, so every probe meets an empty slot and stops.
//! - Every entry is reachable from its home slot without crossing an empty slot (removal
//!   shifts later slots back instead of leaving tombstones).
//! - The index does not store full hashes; growing and removing ask the owner for the hash
//!   of an entry number (`hash_of`), which must be the hash the entry was inserted with.

const EMPTY: u64 = 0;
const MIN_CAPACITY: usize = 8;

/// See the module comment.
#[derive(Default)]
pub(super) struct SlotIndex {
    slots: Box<[u64]>,
    len: usize,
}

#[inline]
fn pack(hash: u64, entry: usize) -> u64 {
    (hash & !0xffff_ffff) | (entry as u64 + 1)
}

#[inline]
fn entry_of(slot: u64) -> usize {
    (slot as u32 as usize).wrapping_sub(1)
}

impl SlotIndex {
    #[inline]
    fn mask(&self) -> usize {
        self.slots.len().wrapping_sub(1)
    }

    /// The address of the home slot of `hash`, for prefetching (null when empty).
    #[inline]
    pub(super) fn home_ptr(&self, hash: u64) -> *const u64 {
        self.slots.get(hash as usize & self.mask()).map_or(std::ptr::null(), |s| s as *const u64)
    }

    /// The first slot on `hash`'s probe path whose tag matches, as (slot, entry); `None`
    /// when the path reaches an empty slot first.
    #[inline]
    pub(super) fn first(&self, hash: u64) -> Option<(usize, usize)> {
        if self.slots.is_empty() {
            return None;
        }
        self.scan(hash, hash as usize & self.mask())
    }

    /// The next tag match after slot `pos` on `hash`'s probe path.
    #[inline]
    pub(super) fn next(&self, hash: u64, pos: usize) -> Option<(usize, usize)> {
        self.scan(hash, (pos + 1) & self.mask())
    }

    #[inline]
    fn scan(&self, hash: u64, mut pos: usize) -> Option<(usize, usize)> {
        let tag = hash >> 32;
        let mask = self.mask();
        loop {
            let s = *self.slots.get(pos)?;
            if s == EMPTY {
                return None;
            }
            if s >> 32 == tag {
                return Some((pos, entry_of(s)));
            }
            pos = (pos + 1) & mask;
        }
    }

    /// The slot and entry on `hash`'s path for which `eq(entry)` holds.
    #[inline]
    pub(super) fn find(
        &self,
        hash: u64,
        mut eq: impl FnMut(usize) -> bool,
    ) -> Option<(usize, usize)> {
        let mut hit = self.first(hash);
        while let Some((pos, e)) = hit {
            if eq(e) {
                return Some((pos, e));
            }
            hit = self.next(hash, pos);
        }
        None
    }

    /// Adds `entry` under `hash`, growing first if the table would pass 3/4 full.
    pub(super) fn insert(&mut self, hash: u64, entry: usize, hash_of: impl Fn(usize) -> u64) {
        if (self.len + 1) * 4 > self.slots.len() * 3 {
            let cap = (self.slots.len() * 2).max(MIN_CAPACITY);
            self.rebuild(cap, hash_of);
        }
        self.place(pack(hash, entry), hash);
        self.len += 1;
    }

    fn place(&mut self, slot: u64, hash: u64) {
        let mask = self.mask();
        let mut pos = hash as usize & mask;
        while self.slots[pos] != EMPTY {
            pos = (pos + 1) & mask;
        }
        self.slots[pos] = slot;
    }

    fn rebuild(&mut self, cap: usize, hash_of: impl Fn(usize) -> u64) {
        let old = std::mem::replace(&mut self.slots, vec![EMPTY; cap].into_boxed_slice());
        for &s in old.iter().filter(|&&s| s != EMPTY) {
            self.place(s, hash_of(entry_of(s)));
        }
    }

    /// Empties slot `pos` (from [`find`](Self::find)), shifting later slots of the run
    /// back so that no probe path is cut, and shrinks a table that became mostly empty.
    pub(super) fn remove_at(&mut self, pos: usize, hash_of: impl Fn(usize) -> u64) {
        let mask = self.mask();
        let mut hole = pos;
        let mut j = pos;
        loop {
            j = (j + 1) & mask;
            let s = self.slots[j];
            if s == EMPTY {
                break;
            }
            let home = hash_of(entry_of(s)) as usize & mask;
            // The slot at `j` may fill the hole unless its home lies cyclically in
            // (hole, j]: moving it before its home would hide it from its probe path.
            if j.wrapping_sub(home) & mask >= j.wrapping_sub(hole) & mask {
                self.slots[hole] = s;
                hole = j;
            }
        }
        self.slots[hole] = EMPTY;
        self.len -= 1;
        if self.len * 8 < self.slots.len() && self.slots.len() > MIN_CAPACITY {
            let cap = (self.len * 2).next_power_of_two().max(MIN_CAPACITY);
            self.rebuild(cap, hash_of);
        }
    }

    /// Makes the slot of entry `old` (inserted under `hash`) point at entry `new`.
    pub(super) fn renumber(&mut self, hash: u64, old: usize, new: usize) {
        if let Some((pos, _)) = self.find(hash, |e| e == old) {
            self.slots[pos] = pack(hash, new);
        }
    }

    /// Heap bytes held.
    pub(super) fn memory_bytes(&self) -> usize {
        self.slots.len() * std::mem::size_of::<u64>()
    }

    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.len
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deliberately bad hashes (many equal homes, equal tags) stress probing and removal.
    fn h(e: usize) -> u64 {
        ((e as u64 % 3) << 32) | (e as u64 % 5)
    }

    #[test]
    fn insert_find_remove_with_collisions() {
        let mut ix = SlotIndex::default();
        let mut live: Vec<usize> = Vec::new();
        for e in 0..200 {
            ix.insert(h(e), e, h);
            live.push(e);
        }
        for &e in &live {
            assert_eq!(ix.find(h(e), |x| x == e).map(|r| r.1), Some(e));
        }
        // Remove every other entry in a scrambled order; the rest must stay reachable.
        let mut gone = Vec::new();
        for k in 0..100 {
            let e = (k * 37) % 200;
            if gone.contains(&e) {
                continue;
            }
            let (pos, _) = ix.find(h(e), |x| x == e).expect("present");
            ix.remove_at(pos, h);
            gone.push(e);
            for x in 0..200 {
                let found = ix.find(h(x), |y| y == x).is_some();
                assert_eq!(found, !gone.contains(&x), "entry {x} after removing {e}");
            }
        }
        assert_eq!(ix.len(), 200 - gone.len());
    }

    #[test]
    fn renumber_moves_an_entry() {
        let mut ix = SlotIndex::default();
        for e in 0..10 {
            ix.insert(h(e), e, h);
        }
        ix.renumber(h(9), 9, 42);
        assert!(ix.find(h(9), |x| x == 9).is_none());
        assert!(ix.find(h(9), |x| x == 42).is_some());
    }

    #[test]
    fn shrinks_when_mostly_empty() {
        let mut ix = SlotIndex::default();
        for e in 0..1000 {
            ix.insert(h(e) ^ (e as u64) << 40, e, |x| h(x) ^ (x as u64) << 40);
        }
        let big = ix.memory_bytes();
        for e in 0..990 {
            let hh = h(e) ^ (e as u64) << 40;
            let (pos, _) = ix.find(hh, |x| x == e).expect("present");
            ix.remove_at(pos, |x| h(x) ^ (x as u64) << 40);
        }
        assert!(ix.memory_bytes() * 16 <= big, "{} vs {big}", ix.memory_bytes());
        for e in 990..1000 {
            assert!(ix.find(h(e) ^ (e as u64) << 40, |x| x == e).is_some());
        }
    }
}
