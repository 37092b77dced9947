//! Prefix tracking on the IPv4 source and destination: skip subtables whose address
//! prefixes cannot match, without touching them (after Open vSwitch's prefix tries).
//!
//! A subtable whose mask covers a tracked field with a prefix of `len` bits (the top
//! `len` bits set, the rest clear) can only match a packet whose top `len` bits of that
//! field equal the prefix of one of its rules. For every tracked field and every length
//! 1..=32 a [`Level`] records the prefixes of all rules of that length, over all tracked
//! subtables, as a bit array: indexed by the prefix itself when `2^len` bits are few
//! enough (exact), else by a hash of it (16 to 32 bits per rule, under 6 % false
//! positives). A lookup that reaches a tracked subtable tests, once, the bit of the
//! packet's prefix in every level in use; a clear bit proves that no subtable with that
//! prefix length can match, so all of them are skipped from the header array alone.
//!
//! A field with many tracked rules (at least [`TABLE_MIN_RULES`]) also gets a *top
//! table*: one `u32` per value of the field's top [`TOP_BITS`] bits, bit `len - 1` set
//! when a rule of length `len` may match an address with those top bits. For
//! `len <= TOP_BITS` the entry is exact and replaces the level's test; a longer length is
//! tested in its level only when its bit is set (some rule of that length shares the top
//! bits). So a lookup loads one entry and a few level words per field instead of one
//! word per length in use.
//!
//! Invariants:
//! - For every rule of every *tracked* subtable and every tracked field on which its
//!   mask is a prefix of length `len > 0`, the bit of the rule's prefix is set in level
//!   (field, len): no false negatives. `live` counts those rules.
//! - Removing a rule leaves its bit set (stale, a harmless false positive) and counts it
//!   in `stale`; the owner rebuilds a level from its rules when the stale bits outnumber
//!   the live ones or the hashed array gets too full, so the work is amortised O(1) per
//!   change.
//! - When a field has a top table, for every rule counted in its levels the table has
//!   bit `len - 1` set in every entry whose top bits extend the rule's prefix (`len <=
//!   TOP_BITS`) or in the entry of the rule's top bits (`len > TOP_BITS`). Removals
//!   leave bits set; rebuilding a level rebuilds its bit in the table.
//! - A level's bit array is empty (no rules) or a power of two of at least 64 bits.

use crate::key::{Field, FlowKey};

/// The tracked fields.
pub(super) const FIELDS: [Field; 2] = [Field::Ipv4Src, Field::Ipv4Dst];
const WIDTH: u32 = 32;
pub(super) const LEVELS: usize = WIDTH as usize + 1;
/// Hashed levels keep at least this many bits per rule.
const BITS_PER_RULE: usize = 16;
/// Address bits that index a top table.
const TOP_BITS: u32 = 16;
/// A field gets a top table from this many tracked rules on, and loses it below a quarter.
#[cfg(not(test))]
const TABLE_MIN_RULES: usize = 4096;
/// Small in tests, so that the property tests build and drop tables.
#[cfg(test)]
const TABLE_MIN_RULES: usize = 4;

/// The prefix length of `mask` on tracked field `f` when it is a nonzero prefix, else 0
/// (not trackable: zero, or not contiguous from the top).
pub(super) fn prefix_len(mask: &FlowKey, f: usize) -> u8 {
    let m = mask.get(FIELDS[f]) as u32;
    let len = m.leading_ones();
    if len > 0 && m.checked_shl(len).unwrap_or(0) == 0 {
        len as u8
    } else {
        0
    }
}

#[inline]
fn prefix_of(key: &FlowKey, f: usize, len: u8) -> u32 {
    let p = FIELDS[f].place();
    let v = (key.words.get(p.word).copied().unwrap_or(0) >> p.shift) as u32;
    v.checked_shr(WIDTH - len as u32).unwrap_or(0)
}

#[derive(Default)]
struct Level {
    bits: Box<[u64]>,
    live: usize,
    stale: usize,
}

impl Level {
    #[inline]
    fn bit(&self, prefix: u32, len: u8) -> usize {
        let n = self.bits.len() * 64;
        if (n as u64) >= 1u64 << len {
            prefix as usize
        } else {
            let h = (prefix as u64 ^ (len as u64) << 40).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            (h >> 32) as usize & (n - 1)
        }
    }

    #[inline]
    fn test(&self, prefix: u32, len: u8) -> bool {
        if self.bits.is_empty() {
            return true;
        }
        let b = self.bit(prefix, len);
        self.bits.get(b / 64).is_none_or(|w| w >> (b % 64) & 1 != 0)
    }
}

/// Per-lookup result of the tracker: for each field, bit `len` set when level `len` may
/// hold the key's prefix (bit 0 always: length 0 is "not tracked"). Computed on first
/// use, for all lengths in use at once: the bit tests are independent loads that the CPU
/// overlaps, and the per-subtable check becomes two shifts.
#[derive(Clone, Copy, Default)]
pub(super) struct Memo {
    pass: Option<[u64; 2]>,
}

/// Sets in top table `t` (of field `f`; empty: none) the bits of a rule of length `len`
/// with key `key`.
fn mark(t: &mut [u32], f: usize, len: u8, key: &FlowKey) {
    if t.is_empty() || len == 0 {
        return;
    }
    let bit = 1u32 << (len - 1);
    let top = prefix_of(key, f, TOP_BITS as u8) as usize;
    if len as u32 >= TOP_BITS {
        if let Some(e) = t.get_mut(top) {
            *e |= bit;
        }
        return;
    }
    let span = 1usize << (TOP_BITS - len as u32);
    let start = top & !(span - 1);
    // Ranges of one length are aligned and set whole, so the first entry tells.
    if t.get(start).is_some_and(|e| e & bit == 0) {
        for e in t.iter_mut().skip(start).take(span) {
            *e |= bit;
        }
    }
}

/// See the module comment.
#[derive(Default)]
pub(super) struct PrefixTracker {
    /// `FIELDS.len() * LEVELS` levels (field-major), allocated on first use.
    levels: Vec<Level>,
    /// Per field, bit `len` set when level `len` holds rules.
    in_use: [u64; 2],
    /// Per field, the top table (empty: none); see the module comment.
    top: [Box<[u32]>; 2],
}

impl PrefixTracker {
    /// The lengths, per field, whose level may hold `key`'s prefix (see [`Memo`]).
    #[inline]
    pub(super) fn matching_lengths(&self, key: &FlowKey) -> [u64; 2] {
        let mut out = [1u64; 2];
        for (f, o) in out.iter_mut().enumerate() {
            let mut lens = self.in_use[f];
            if let Some(&e) = self.top[f].get(prefix_of(key, f, TOP_BITS as u8) as usize) {
                let short = (2u64 << TOP_BITS) - 1;
                let may = ((e as u64) << 1) & lens;
                *o |= may & short;
                lens = may & !short;
            }
            while lens != 0 {
                let len = lens.trailing_zeros() as u8;
                lens &= lens - 1;
                let hit = self
                    .levels
                    .get(f * LEVELS + len as usize)
                    .is_none_or(|l| l.test(prefix_of(key, f, len), len));
                *o |= (hit as u64) << len;
            }
        }
        out
    }

    /// Whether a subtable with prefix lengths `plen` (0: untracked field) may match
    /// `key`; the tracker is consulted once per `memo`.
    #[inline]
    pub(super) fn may_match(&self, plen: [u8; 2], key: &FlowKey, memo: &mut Memo) -> bool {
        if plen == [0, 0] {
            return true;
        }
        let pass = match memo.pass {
            Some(p) => p,
            None => *memo.pass.insert(self.matching_lengths(key)),
        };
        (pass[0] >> plen[0]) & (pass[1] >> plen[1]) & 1 != 0
    }

    /// Records a rule of length `len` on field `f` with key `key`. Returns true when the
    /// owner must [`rebuild`](Self::rebuild) that level (it then includes this rule).
    pub(super) fn add(&mut self, f: usize, len: u8, key: &FlowKey) -> bool {
        if self.levels.is_empty() {
            self.levels.resize_with(FIELDS.len() * LEVELS, Level::default);
        }
        self.in_use[f] |= 1 << len;
        mark(&mut self.top[f], f, len, key);
        let l = &mut self.levels[f * LEVELS + len as usize];
        l.live += 1;
        let n = l.bits.len() * 64;
        let exact = (n as u64) >= 1u64 << len;
        if n == 0 || (!exact && (l.live + l.stale) * BITS_PER_RULE > 2 * n) {
            return true;
        }
        let b = l.bit(prefix_of(key, f, len), len);
        l.bits[b / 64] |= 1 << (b % 64);
        false
    }

    /// Records a removed rule. Returns true when the owner should rebuild the level.
    pub(super) fn remove(&mut self, f: usize, len: u8) -> bool {
        let Some(l) = self.levels.get_mut(f * LEVELS + len as usize) else {
            return false;
        };
        l.live = l.live.saturating_sub(1);
        l.stale += 1;
        let rebuild = l.live == 0 || l.stale > l.live.max(64);
        self.shrink_table(f);
        rebuild
    }

    /// Drops field `f`'s top table when its rules fell below a quarter of
    /// [`TABLE_MIN_RULES`].
    fn shrink_table(&mut self, f: usize) {
        if !self.top[f].is_empty() && self.field_live(f) * 4 < TABLE_MIN_RULES {
            self.top[f] = Box::default();
        }
    }

    /// Rules counted in field `f`'s levels.
    fn field_live(&self, f: usize) -> usize {
        let at = f * LEVELS;
        self.levels.get(at..at + LEVELS).map_or(0, |ls| ls.iter().map(|l| l.live).sum())
    }

    /// Whether field `f` has enough rules for a top table and has none: the owner then
    /// calls [`build_table`](Self::build_table).
    pub(super) fn wants_table(&self, f: usize) -> bool {
        self.top[f].is_empty() && self.field_live(f) >= TABLE_MIN_RULES
    }

    /// Builds field `f`'s top table from the (length, key) of every rule in its levels.
    pub(super) fn build_table(&mut self, f: usize, rules: impl Iterator<Item = (u8, FlowKey)>) {
        self.top[f] = vec![0u32; 1 << TOP_BITS].into_boxed_slice();
        for (len, key) in rules {
            mark(&mut self.top[f], f, len, &key);
        }
    }

    /// Rebuilds level (`f`, `len`) from the keys of all its rules, `live` of them.
    pub(super) fn rebuild(
        &mut self,
        f: usize,
        len: u8,
        live: usize,
        keys: impl Iterator<Item = FlowKey>,
    ) {
        if self.levels.is_empty() {
            self.levels.resize_with(FIELDS.len() * LEVELS, Level::default);
        }
        if len != 0 {
            let clear = !(1u32 << (len - 1));
            for e in self.top[f].iter_mut() {
                *e &= clear;
            }
        }
        let l = &mut self.levels[f * LEVELS + len as usize];
        l.live = live;
        l.stale = 0;
        if live == 0 {
            l.bits = Box::default();
            self.in_use[f] &= !(1 << len);
            self.shrink_table(f);
            return;
        }
        self.in_use[f] |= 1 << len;
        let want = (live * BITS_PER_RULE).next_power_of_two().max(64) as u64;
        let n = want.min((1u64 << len).max(64)) as usize;
        l.bits = vec![0u64; n / 64].into_boxed_slice();
        for k in keys {
            mark(&mut self.top[f], f, len, &k);
            let b = l.bit(prefix_of(&k, f, len), len);
            l.bits[b / 64] |= 1 << (b % 64);
        }
    }

    /// Heap bytes held.
    pub(super) fn memory_bytes(&self) -> usize {
        self.levels.capacity() * std::mem::size_of::<Level>()
            + self.levels.iter().map(|l| l.bits.len() * 8).sum::<usize>()
            + self.top.iter().map(|t| t.len() * 4).sum::<usize>()
    }

    /// Checks that every given rule's bit is set (tests only).
    #[cfg(test)]
    pub(super) fn check_has(&self, f: usize, len: u8, key: &FlowKey) {
        let mut memo = Memo::default();
        let mut plen = [0u8; 2];
        plen[f] = len;
        assert!(self.may_match(plen, key, &mut memo), "prefix of {key:?} lost");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::FlowMatch;

    fn key(src: u32, dst: u32) -> FlowKey {
        let mut k = FlowKey::ZERO;
        k.set(Field::Ipv4Src, src as u128);
        k.set(Field::Ipv4Dst, dst as u128);
        k
    }

    #[test]
    fn prefix_lengths_of_masks() {
        let m = FlowMatch::ANY.masked(Field::Ipv4Src, 0, 0xffff_ff00).masked(
            Field::Ipv4Dst,
            0,
            0xff00_ff00,
        );
        assert_eq!(prefix_len(&m.mask, 0), 24);
        assert_eq!(prefix_len(&m.mask, 1), 0, "not contiguous");
        let full = FlowMatch::ANY.exact(Field::Ipv4Src, 1);
        assert_eq!(prefix_len(&full.mask, 0), 32);
        assert_eq!(prefix_len(&full.mask, 1), 0, "wildcarded");
    }

    #[test]
    fn exact_and_hashed_levels_have_no_false_negatives() {
        let mut t = PrefixTracker::default();
        let keys: Vec<FlowKey> = (0..3000u32)
            .map(|i| key(i.wrapping_mul(0x9e37_79b9), i.wrapping_mul(0x85eb_ca6b)))
            .collect();
        for len in [1u8, 8, 12, 20, 32] {
            for (i, k) in keys.iter().enumerate() {
                if t.add(0, len, k) {
                    t.rebuild(0, len, i + 1, keys[..=i].iter().copied());
                }
            }
            for k in &keys {
                t.check_has(0, len, k);
            }
        }
        // A /32 level with 3000 rules rejects most other addresses.
        let mut passed = 0;
        for i in 0..10_000u32 {
            let mut memo = Memo::default();
            if t.may_match([32, 0], &key(i.wrapping_mul(0x2545_f491) ^ 0x5555, 0), &mut memo) {
                passed += 1;
            }
        }
        assert!(passed < 1000, "{passed} of 10000 random addresses passed");
        // The /8 level is exact: an address whose first byte no rule has fails.
        let firsts: std::collections::HashSet<u32> =
            keys.iter().map(|k| prefix_of(k, 0, 8)).collect();
        if let Some(b) = (0..256u32).find(|b| !firsts.contains(b)) {
            let mut memo = Memo::default();
            assert!(!t.may_match([8, 0], &key(b << 24, 0), &mut memo));
        }
    }

    /// A tracker of one rule, `k`'s field `field` to `len` bits (its level built).
    fn tracking(k: &FlowKey, field: usize, len: u8) -> PrefixTracker {
        let mut t = PrefixTracker::default();
        assert!(t.add(field, len, k));
        t.rebuild(field, len, 1, [*k].into_iter());
        t
    }

    #[test]
    fn memo_tests_each_length_once_and_untracked_fields_pass() {
        let k = key(0x0a00_0000, 0);
        let t = tracking(&k, 0, 8);
        let mut memo = Memo::default();
        assert!(t.may_match([8, 0], &k, &mut memo));
        assert!(!t.may_match([8, 0], &key(0x0b00_0000, 0), &mut Memo::default()));
        // The memo keeps the answers of the first key.
        assert!(t.may_match([8, 0], &key(0x0b00_0000, 0), &mut memo));
        assert!(!t.may_match([16, 0], &k, &mut memo), "no /16 rules at all");
        assert!(t.may_match([0, 0], &key(0x0b00_0000, 0), &mut Memo::default()));
    }

    #[test]
    fn top_table_is_exact_for_short_prefixes_and_keeps_long_ones() {
        let mut t = PrefixTracker::default();
        let rules = [
            (8u8, key(0x0a00_0000, 0)),
            (12, key(0x0b10_0000, 0)),
            (24, key(0x0c01_0200, 0)),
            (32, key(0x0d01_0203, 0)),
        ];
        for (i, (len, k)) in rules.iter().enumerate() {
            if t.add(0, *len, k) {
                t.rebuild(0, *len, 1, [*k].into_iter());
            }
            assert_eq!(t.wants_table(0), i + 1 >= TABLE_MIN_RULES);
        }
        t.build_table(0, rules.iter().copied());
        assert!(!t.wants_table(0));
        for (len, k) in &rules {
            t.check_has(0, *len, k);
        }
        let may = |t: &PrefixTracker, len: u8, src: u32| {
            t.may_match([len, 0], &key(src, 0), &mut Memo::default())
        };
        assert!(may(&t, 8, 0x0aff_ffff));
        assert!(!may(&t, 8, 0x0b00_0000), "short lengths are exact");
        assert!(!may(&t, 12, 0x0b20_0000));
        assert!(!may(&t, 24, 0x0c02_0200), "other top bits: not even tested");
        assert!(!may(&t, 32, 0x0d01_0204), "same top bits: the level decides");
        // A level rebuilt without its rule clears the table bit too.
        t.rebuild(0, 12, 0, std::iter::empty());
        assert!(!may(&t, 12, 0x0b10_0000));
        assert!(may(&t, 8, 0x0a00_0001));
    }

    #[test]
    fn removals_ask_for_rebuilds() {
        let k = key(1, 2);
        let mut t = tracking(&k, 1, 16);
        assert!(t.remove(1, 16), "the last rule gone: rebuild to free the level");
        t.rebuild(1, 16, 0, std::iter::empty());
        assert_eq!(t.memory_bytes(), t.levels.capacity() * std::mem::size_of::<Level>());
    }
}
