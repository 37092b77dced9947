//! One subtable of the tuple space: every rule whose mask is one particular mask.
//!
//! The subtable hashes and compares only its *active* words (the words where its mask is
//! nonzero), masked. Rules with the same masked words (that is, the same match) and
//! different priorities share one [`Entry`], best first. Entries live densely in `entries`,
//! found through a [`SlotIndex`].
//!
//! No rule's full [`FlowMatch`] is stored: the subtable's `mask` and an entry's masked
//! active words are the match, and [`Subtable::iter`] rebuilds it from them on demand
//! (a 288-byte copy per rule would cost more than the entry itself).
//!
//! Invariants:
//! - `words` lists the nonzero words of `mask`, in increasing word order; an entry stores
//!   exactly those words of its match key: the first [`HEAD`] inline, the others (a fixed
//!   number per subtable, `stride`) in `tails`, at `i * stride` for entry `i`.
//! - An entry holds at least one rule; `best` has the highest priority and `rest` is in
//!   strictly decreasing priority order, all below `best`. Priorities within an entry are
//!   distinct (a rule is its match and its priority).
//! - An entry's words are masked (no bit outside the mask's word is set), and the index
//!   maps `hash_words(entry words)` to `i` for every entry `entries[i]`.
//! - `prios` counts the rules of each priority present; its `min_seq` is a lower bound on
//!   the sequence numbers of that priority's rules: exact when set, possibly older after
//!   a removal (removals never search for the new minimum). So [`Subtable::bound`] is
//!   never worse than the subtable's best rule, which is all the early exit needs.

use std::collections::BTreeMap;

use super::filter::HashFilter;
use super::index::SlotIndex;
use super::prefix::prefix_len;
use super::{hash_word, RuleRef, HASH_SEED};
use crate::key::{FlowKey, FlowMatch, KEY_WORDS};
use crate::prefetch::prefetch;

/// Active words stored inline in an entry; the others go to the subtable's `tails`.
pub(super) const HEAD: usize = 4;

/// A nonzero word of the subtable's mask.
#[derive(Clone, Copy)]
pub(super) struct ActiveWord {
    index: usize,
    mask: u64,
}

/// A rule of an entry: its priority and sequence number packed in one word (priority in
/// the top 16 bits, the sequence number in the low 48), and its value.
pub(super) struct Rule<T> {
    rank: u64,
    pub(super) value: T,
}

/// The largest sequence number a rule keeps (2^48 - 1): numbers past it (after 2^48
/// insertions, centuries at a million a second) all read as it, so only the order among
/// equal-priority rules inserted after that is left to the layout.
const SEQ_MAX: u64 = (1 << 48) - 1;

impl<T> Rule<T> {
    fn new(priority: u16, seq: u64, value: T) -> Self {
        Rule { rank: u64::from(priority) << 48 | seq.min(SEQ_MAX), value }
    }

    #[inline]
    pub(super) fn priority(&self) -> u16 {
        (self.rank >> 48) as u16
    }

    #[inline]
    pub(super) fn seq(&self) -> u64 {
        self.rank & SEQ_MAX
    }
}

/// Laid out so that a probe of a mask of up to [`HEAD`] words reads one stretch: the
/// inline words, then the best rule (for the pipeline's 16-byte values, one cache line).
/// Rules of the same match at lower priorities are rare, so they live out of line
/// (`rest`, `None` when there are none): an entry is 64 bytes (a cache line), a million
/// of them kept twice (the two published copies) 64 MB less than with inline slices and
/// unpacked ranks.
#[repr(C)]
struct Entry<T> {
    head: [u64; HEAD],
    best: Rule<T>,
    /// A thin pointer: 8 bytes in every entry, where a `Vec` or a boxed slice would
    /// take 24 or 16 for what few entries have.
    #[allow(clippy::box_collection)]
    rest: Option<Box<Vec<Rule<T>>>>,
}

// The pipeline's 16-byte values make a 64-byte entry, one cache line.
const _: () = assert!(std::mem::size_of::<Entry<[u64; 2]>>() == 64);

impl<T> Entry<T> {
    fn rest(&self) -> &[Rule<T>] {
        self.rest.as_deref().map_or(&[], Vec::as_slice)
    }

    fn rules(&self) -> impl Iterator<Item = &Rule<T>> {
        std::iter::once(&self.best).chain(self.rest().iter())
    }
}

#[derive(Clone, Copy)]
struct PrioCount {
    count: u32,
    min_seq: u64,
}

/// See the module comment.
pub(super) struct Subtable<T> {
    pub(super) mask: Box<FlowKey>,
    words: Box<[ActiveWord]>,
    index: SlotIndex,
    filter: HashFilter,
    entries: Vec<Entry<T>>,
    /// The active words after the first [`HEAD`] of every entry, `stride` per entry.
    tails: Vec<u64>,
    stride: usize,
    prios: BTreeMap<u16, PrioCount>,
    n_rules: usize,
    /// The mask's prefix length on each tracked field (see [`super::prefix`]), 0 where
    /// it is not a nonzero prefix.
    pub(super) plen: [u8; 2],
    /// Whether this subtable's rules are recorded in the prefix tracker.
    pub(super) tracked: bool,
}

impl<T> Subtable<T> {
    pub(super) fn new(mask: &FlowKey) -> Self {
        let words = (0..KEY_WORDS)
            .filter(|&i| mask.words[i] != 0)
            .map(|i| ActiveWord { index: i, mask: mask.words[i] })
            .collect();
        let plen = [prefix_len(mask, 0), prefix_len(mask, 1)];
        Subtable {
            mask: Box::new(*mask),
            words,
            index: SlotIndex::default(),
            filter: HashFilter::default(),
            entries: Vec::new(),
            tails: Vec::new(),
            stride: mask.words.iter().filter(|&&w| w != 0).count().saturating_sub(HEAD),
            prios: BTreeMap::new(),
            n_rules: 0,
            plen,
            tracked: plen != [0, 0],
        }
    }

    pub(super) fn n_rules(&self) -> usize {
        self.n_rules
    }

    /// The prefix lengths a lookup checks before visiting: `plen` when tracked, else 0s.
    pub(super) fn tracked_plen(&self) -> [u8; 2] {
        if self.tracked {
            self.plen
        } else {
            [0, 0]
        }
    }

    /// The best (priority, sequence) any rule here can have: the highest priority and a
    /// lower bound on the sequence numbers of its rules. `None` when empty.
    pub(super) fn bound(&self) -> Option<(u16, u64)> {
        self.prios.last_key_value().map(|(&p, c)| (p, c.min_seq))
    }

    /// The hash of `key`'s masked active words.
    #[inline]
    pub(super) fn hash_key(&self, key: &FlowKey) -> u64 {
        self.words.iter().fold(HASH_SEED, |h, a| hash_word(h, key.words[a.index] & a.mask))
    }

    /// The words of entry `i` beyond the inline ones.
    #[inline]
    fn tail(&self, i: usize) -> &[u64] {
        tail_of(&self.tails, self.stride, i)
    }

    /// The hash of entry `i`'s words (as [`Subtable::hash_key`] of its match).
    fn hash_entry(&self, i: usize) -> u64 {
        hash_words(&self.words, &self.entries, &self.tails, self.stride, i)
    }

    /// Whether entry `e` holds `key`'s masked active words.
    /// (Branch-free over the inline words: they are few, and a probe that got here
    /// through a matching tag almost always matches.)
    #[inline]
    fn entry_eq(&self, i: usize, e: &Entry<T>, key: &FlowKey) -> bool {
        let (head, tail) = self.words.split_at(self.words.len().min(HEAD));
        let mut diff = 0u64;
        for (a, &w) in head.iter().zip(e.head.iter()) {
            diff |= (key.words.get(a.index).copied().unwrap_or(0) & a.mask) ^ w;
        }
        // The tail lies elsewhere: not read unless the mask needs it.
        diff == 0
            && (tail.is_empty()
                || tail.iter().zip(self.tail(i)).all(|(a, &w)| key.words[a.index] & a.mask == w))
    }

    /// The entry matching `key`, whose hash is `hash`.
    #[inline]
    pub(super) fn find_hashed(&self, key: &FlowKey, hash: u64) -> Option<usize> {
        self.index
            .find(hash, |i| self.entries.get(i).is_some_and(|e| self.entry_eq(i, e, key)))
            .map(|(_, i)| i)
    }

    /// The best rule of the entry matching `key`.
    #[inline]
    pub(super) fn find(&self, key: &FlowKey) -> Option<RuleRef<'_, T>> {
        self.find_hashed(key, self.hash_key(key)).map(|i| self.rule_ref(i))
    }

    /// Whether an entry with this hash may be here (see [`HashFilter`]): false proves a
    /// miss without touching the slots or the entries.
    #[inline]
    pub(super) fn may_contain(&self, hash: u64) -> bool {
        self.filter.may_contain(hash)
    }

    /// The filter word of `hash`, for prefetching.
    #[inline]
    pub(super) fn filter_ptr(&self, hash: u64) -> *const u64 {
        self.filter.word_ptr(hash)
    }

    /// The best rule of the entry matching `key`, whose hash is `hash`.
    #[inline]
    pub(super) fn find_with_hash(&self, key: &FlowKey, hash: u64) -> Option<RuleRef<'_, T>> {
        self.find_hashed(key, hash).map(|i| self.rule_ref(i))
    }

    fn rebuild_filter(&mut self) {
        let (words, entries, tails, stride) =
            (&self.words, &self.entries, &self.tails, self.stride);
        self.filter
            .rebuild((0..entries.len()).map(|i| hash_words(words, entries, tails, stride, i)));
    }

    /// The home slot of `hash`, for prefetching.
    #[inline]
    pub(super) fn slot_ptr(&self, hash: u64) -> *const u64 {
        self.index.home_ptr(hash)
    }

    /// The first entry on `hash`'s probe path with a matching tag (a likely hit, to be
    /// confirmed by [`confirm`](Self::confirm)), as (slot, entry).
    #[inline]
    pub(super) fn candidate(&self, hash: u64) -> Option<(usize, usize)> {
        self.index.first(hash)
    }

    /// The address of entry `i`, for prefetching.
    #[inline]
    pub(super) fn entry_ptr(&self, i: usize) -> *const u8 {
        self.entries.get(i).map_or(std::ptr::null(), |e| e as *const Entry<T> as *const u8)
    }

    /// Hints the CPU to fetch what a probe reads of entry `i`: its inline words and best
    /// rule, which straddle two lines for most entries (entries are not line-aligned).
    #[inline]
    pub(super) fn prefetch_entry(&self, i: usize) {
        let p = self.entry_ptr(i);
        prefetch(p);
        prefetch(p.wrapping_add(std::mem::offset_of!(Entry<T>, rest) - 1));
    }

    /// Finishes a probe begun by [`candidate`](Self::candidate): the entry at `cand` if it
    /// matches `key`, else a search along the rest of the path.
    #[inline(always)]
    pub(super) fn confirm(
        &self,
        key: &FlowKey,
        hash: u64,
        cand: (usize, usize),
    ) -> Option<RuleRef<'_, T>> {
        let (mut pos, mut i) = cand;
        loop {
            if self.entries.get(i).is_some_and(|e| self.entry_eq(i, e, key)) {
                return Some(self.rule_ref(i));
            }
            (pos, i) = self.index.next(hash, pos)?;
        }
    }

    #[inline]
    fn rule_ref(&self, i: usize) -> RuleRef<'_, T> {
        let e = &self.entries[i];
        RuleRef {
            mask: &self.mask,
            priority: e.best.priority(),
            seq: e.best.seq(),
            value: &e.best.value,
        }
    }

    /// The match of entry `e`, rebuilt from the mask and the entry's masked words.
    fn entry_match(&self, i: usize, e: &Entry<T>) -> FlowMatch {
        let mut key = FlowKey::ZERO;
        let words = e.head.iter().chain(self.tail(i));
        for (a, &w) in self.words.iter().zip(words) {
            key.words[a.index] = w;
        }
        FlowMatch { key, mask: *self.mask }
    }

    fn locate(&self, m: &FlowMatch) -> Option<(usize, usize)> {
        let h = self.hash_key(&m.key);
        self.index.find(h, |i| self.entries.get(i).is_some_and(|e| self.entry_eq(i, e, &m.key)))
    }

    /// The value of the rule with match `m` and `priority`.
    pub(super) fn get(&self, m: &FlowMatch, priority: u16) -> Option<&T> {
        let (_, i) = self.locate(m)?;
        self.entries[i].rules().find(|r| r.priority() == priority).map(|r| &r.value)
    }

    /// Adds the rule (`m` must have this subtable's mask and a masked key), or replaces
    /// the value of the rule with the same match and priority and returns the old one.
    /// A new rule takes sequence number `seq`.
    pub(super) fn insert(&mut self, m: &FlowMatch, priority: u16, seq: u64, value: T) -> Option<T> {
        let rule = Rule::new(priority, seq, value);
        if let Some((_, i)) = self.locate(m) {
            let e = &mut self.entries[i];
            if e.best.priority() == priority {
                return Some(std::mem::replace(&mut e.best.value, rule.value));
            }
            let rest = e.rest.get_or_insert_with(Box::default);
            if let Some(r) = rest.iter_mut().find(|r| r.priority() == priority) {
                return Some(std::mem::replace(&mut r.value, rule.value));
            }
            if priority > e.best.priority() {
                rest.insert(0, std::mem::replace(&mut e.best, rule));
            } else {
                let at = rest.partition_point(|r| r.priority() > priority);
                rest.insert(at, rule);
            }
        } else {
            let mut head = [0u64; HEAD];
            for (j, a) in self.words.iter().enumerate() {
                let w = m.key.words[a.index] & a.mask;
                match head.get_mut(j) {
                    Some(slot) => *slot = w,
                    None => self.tails.push(w),
                }
            }
            self.entries.push(Entry { head, best: rule, rest: None });
            let hash = self.hash_key(&m.key);
            let (words, entries, tails, stride) =
                (&self.words, &self.entries, &self.tails, self.stride);
            self.index
                .insert(hash, entries.len() - 1, |i| hash_words(words, entries, tails, stride, i));
            if self.filter.insert(hash) {
                self.rebuild_filter();
            }
        }
        self.n_rules += 1;
        self.prios
            .entry(priority)
            .and_modify(|c| c.count += 1)
            .or_insert(PrioCount { count: 1, min_seq: seq });
        None
    }

    /// Removes the rule with match `m` and `priority`.
    pub(super) fn remove(&mut self, m: &FlowMatch, priority: u16) -> Option<T> {
        let (pos, i) = self.locate(m)?;
        let e = &mut self.entries[i];
        let value = match e.rest.as_deref_mut() {
            None if e.best.priority() == priority => self.remove_entry(pos, i),
            None => return None,
            Some(rest) => {
                let value = if e.best.priority() == priority {
                    std::mem::replace(&mut e.best, rest.remove(0)).value
                } else {
                    let at = rest.iter().position(|r| r.priority() == priority)?;
                    rest.remove(at).value
                };
                if rest.is_empty() {
                    e.rest = None;
                }
                value
            }
        };
        self.n_rules -= 1;
        if let Some(c) = self.prios.get_mut(&priority) {
            c.count -= 1;
            if c.count == 0 {
                self.prios.remove(&priority);
            }
        }
        Some(value)
    }

    /// Drops entry `i` (at slot `pos`), moving the last entry (and its tail) into its
    /// place.
    fn remove_entry(&mut self, pos: usize, i: usize) -> T {
        let (words, entries, tails, stride) =
            (&self.words, &self.entries, &self.tails, self.stride);
        self.index.remove_at(pos, |k| hash_words(words, entries, tails, stride, k));
        let last = self.entries.len() - 1;
        if i != last {
            let h = self.hash_entry(last);
            self.index.renumber(h, last, i);
            self.tails.copy_within(last * self.stride..(last + 1) * self.stride, i * self.stride);
        }
        self.tails.truncate(last * self.stride);
        let e = self.entries.swap_remove(i);
        if self.entries.capacity() > 4 * self.entries.len() && self.entries.capacity() > 16 {
            self.entries.shrink_to(self.entries.len() * 2);
            self.tails.shrink_to(self.entries.len() * 2 * self.stride);
        }
        if self.filter.remove() {
            self.rebuild_filter();
        }
        e.best.value
    }

    /// Every rule: its match (rebuilt, by value), priority and value.
    pub(super) fn iter(&self) -> impl Iterator<Item = (FlowMatch, u16, &T)> {
        self.entries.iter().enumerate().flat_map(move |(i, e)| {
            let m = self.entry_match(i, e);
            e.rules().map(move |r| (m, r.priority(), &r.value))
        })
    }

    /// Every entry's match key (one per entry, whatever its number of rules).
    pub(super) fn entry_keys(&self) -> impl Iterator<Item = FlowKey> + '_ {
        self.entries.iter().enumerate().map(|(i, e)| self.entry_match(i, e).key)
    }

    /// Heap and inline bytes held, by capacity.
    pub(super) fn memory_bytes(&self) -> usize {
        use std::mem::size_of;
        let rest: usize = self
            .entries
            .iter()
            .filter_map(|e| e.rest.as_deref())
            .map(|r| size_of::<Vec<Rule<T>>>() + r.capacity() * size_of::<Rule<T>>())
            .sum();
        size_of::<Self>()
            + size_of::<FlowKey>()
            + self.words.len() * size_of::<ActiveWord>()
            + self.index.memory_bytes()
            + self.filter.memory_bytes()
            + self.entries.capacity() * size_of::<Entry<T>>()
            + self.tails.capacity() * size_of::<u64>()
            + rest
            + self.prios.len() * (size_of::<u16>() + size_of::<PrioCount>()) * 2
    }

    /// Checks every invariant of the module comment (tests only).
    #[cfg(test)]
    pub(super) fn check(&self) {
        assert_eq!(self.index.len(), self.entries.len());
        let mut counts: BTreeMap<u16, (u32, u64)> = BTreeMap::new();
        assert_eq!(self.stride, self.words.len().saturating_sub(HEAD));
        assert_eq!(self.tails.len(), self.entries.len() * self.stride);
        for (i, e) in self.entries.iter().enumerate() {
            assert!(e.rest.as_ref().is_none_or(|r| !r.is_empty()), "an empty rest is None");
            let m = self.entry_match(i, e);
            assert_eq!(m.key, m.key.masked(&self.mask), "entry words not masked");
            assert_eq!(self.find_hashed(&m.key, self.hash_key(&m.key)), Some(i));
            assert_eq!(self.hash_entry(i), self.hash_key(&m.key));
            assert!(self.filter.may_contain(self.hash_key(&m.key)), "filter lost an entry");
            let mut prev: Option<u16> = None;
            for r in e.rules() {
                assert!(prev.is_none_or(|p| p > r.priority()), "entry rules out of order");
                prev = Some(r.priority());
                let c = counts.entry(r.priority()).or_insert((0, u64::MAX));
                c.0 += 1;
                c.1 = c.1.min(r.seq());
            }
        }
        assert_eq!(counts.len(), self.prios.len());
        for (p, (n, min)) in counts {
            let c = self.prios[&p];
            assert_eq!(c.count, n);
            assert!(c.min_seq <= min, "bound must never be worse than a rule");
        }
        assert_eq!(self.n_rules, self.iter().count());
    }
}

/// The tail words of entry `i` in `tails` (empty when the mask has at most [`HEAD`] words).
#[inline]
fn tail_of(tails: &[u64], stride: usize, i: usize) -> &[u64] {
    tails.get(i * stride..(i + 1) * stride).unwrap_or(&[])
}

/// The hash of entry `i`'s active words, inline then tail.
fn hash_words<T>(
    words: &[ActiveWord],
    entries: &[Entry<T>],
    tails: &[u64],
    stride: usize,
    i: usize,
) -> u64 {
    let n = words.len().min(HEAD);
    let head = entries.get(i).map_or(&[][..], |e| &e.head[..n]);
    head.iter().chain(tail_of(tails, stride, i)).fold(HASH_SEED, |h, &w| hash_word(h, w))
}

#[cfg(test)]
mod rank_tests {
    use super::*;

    #[test]
    fn a_rank_keeps_priority_and_sequence_apart() {
        let r = Rule::new(0xffff, 7, ());
        assert_eq!((r.priority(), r.seq()), (0xffff, 7));
        let r = Rule::new(3, u64::MAX, ());
        assert_eq!((r.priority(), r.seq()), (3, SEQ_MAX), "a sequence past 2^48 saturates");
    }
}
