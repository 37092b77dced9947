//! Tuple space search: the fast classifier, after Open vSwitch's `lib/classifier.c`.
//!
//! # Structure
//!
//! Rules are grouped by mask. All rules with one mask live in one [`Subtable`]; a lookup
//! in a subtable masks the packet key with that mask and looks the result up in a hash
//! table, so its cost does not depend on how many rules the subtable holds. A lookup in
//! the whole classifier visits subtables one by one, so its cost grows with the number
//! of *distinct masks* visited, never with the number of rules.
//!
//! ```text
//! TupleSpace
//!  ├─ by_mask: mask → subtable number          (insert/remove find their subtable)
//!  ├─ order:   [(bound priority, bound seq, prefix lengths, subtable)]   best first
//!  ├─ prefixes: per IPv4 src/dst prefix length, a bit array of the rules' prefixes
//!  └─ subtables[]
//!      ├─ words:   the nonzero words of the mask ("active" words), with their masks
//!      ├─ filter:  bit array over the entries' hashes
//!      ├─ index:   open-addressing slots, hash of masked active words → entry number
//!      ├─ mask:    the full mask (with an entry's words, it is the entry's match)
//!      ├─ entries: [masked active words | best rule | lower-priority rules]   (dense)
//!      └─ prios:   priority → (rule count, lower bound of its rules' sequence numbers)
//! ```
//!
//! A subtable touches only its active words: an exact IPv4 5-tuple mask hashes and
//! compares 3 of the key's 18 words. The first four active words of an entry are stored
//! inline; wider masks put the rest in a small heap array. A probe reads one line of
//! index slots and one entry.
//!
//! No full [`FlowMatch`] is stored per rule: a rule's match is its subtable's mask with
//! its entry's masked words, which is all that insert, remove and replace compare, and
//! [`TupleSpace::iter`] rebuilds it by value. A lookup result ([`RuleRef`]) carries the
//! subtable's mask instead, since the match of a rule found for `key` is `key` under that
//! mask ([`RuleRef::flow_match`]).
//!
//! # Priorities
//!
//! Every rule has a sequence number, given at insertion and kept when its value is
//! replaced. Rule A beats rule B when `better(A.priority, A.seq, B.priority, B.seq)`:
//! higher priority, then earlier insertion ([`super::better`]). Each subtable has a
//! *bound*: its highest priority with a lower bound on the sequence numbers of that
//! priority's rules, so no rule in it beats its bound. `order` keeps the subtables sorted
//! by bound, best first, and a lookup stops at the first subtable whose bound does not
//! beat the best match found so far: nothing later can win. Using (priority, seq) rather
//! than the priority alone keeps this exact when priorities tie across subtables (a later
//! subtable may hold an equal-priority rule inserted earlier; its bound says so) and
//! still allows an early exit among equal priorities.
//!
//! Rules with the same match and different priorities share one entry, best first; a
//! subtable's probe therefore yields its best matching rule directly.
//!
//! # Fast paths
//!
//! - One subtable (every rule has the same mask, e.g. an exact-match table): one hash
//!   probe, no loop, no bound checks.
//! - [`TupleSpace::lookup_batch`] walks the subtables once for a whole batch. Per
//!   subtable it hashes every key still undecided and prefetches its home slot, then
//!   reads the slots and prefetches the candidate entries, then compares; the memory
//!   latency of one key's probe hides behind the work on the others. With candidate
//!   bitmaps (below) it goes in rounds instead: each key takes its next candidate whose
//!   filter passes, whatever its subtable, and the round's probes overlap.
//!
//! # Invariants
//!
//! - Every subtable holds at least one rule (an emptied subtable is dropped); `by_mask`
//!   and `order` each name every subtable exactly once.
//! - `order[k]` caches `subtables[order[k].id].bound()`, and `order` is sorted best
//!   bound first. The bound is never worse than the subtable's best rule; it may be
//!   better (a stale sequence number after a removal), which costs at most a visit.
//! - Sequence numbers are unique and increase; `len` is the number of rules.
//! - A stored match has its key masked (insert and remove mask the given key first, so
//!   a key bit outside its mask is ignored).
//!
//! # Skipping subtables
//!
//! Most visits of a lookup over many masks miss. Two filters make a miss cheap:
//! - *Prefix tracking* ([`prefix`]): for the IPv4 source and destination, every prefix
//!   length in use has a bit array of the rules' prefixes of that length. A lookup that
//!   reaches a tracked subtable tests the packet's prefixes once against every length;
//!   (a field with many rules answers most lengths from one *top table* entry indexed
//!   by the address's top 16 bits);
//!   each ranked subtable carries its prefix lengths in `order`, so a subtable none of
//!   whose rules can have the packet's prefix is skipped without being touched. Subtables
//!   with more than [`MAX_TRACKED_RULES`] rules are not tracked. With at most
//!   [`MAX_BITMAP_SUBTABLES`] subtables, `blocks` maps each (field, prefix length) to a
//!   bitmap of positions in `order`, [`BLOCK`] positions per block; a lookup ORs, block
//!   by block (best first), the bitmaps of the lengths that pass and ANDs the fields,
//!   then visits only the set positions, lowest (best) first, instead of walking every
//!   header, and stops at the first position whose bound cannot win (ClassBench-like
//!   prefix rule sets have thousands of masks: 100K of them make 2,672 subtables).
//! - A per-subtable *hash filter* ([`filter`]): after hashing the key's active words, one
//!   bit (16 bits per entry, L2-sized) tells whether the probe can hit, before the slot
//!   array and the entries are read.
//!
//! Neither changes a result: both only ever answer "cannot match" when no rule matches.
//!
//! # Not done (yet)
//!
//! OVS's staged lookup (hashing metadata, L2, L3, L4 words in stages and stopping early)
//! is not implemented, nor prefix tracking of IPv6 addresses; neither is concurrent
//! reading while writing: readers of a `TupleSpace` share it immutably and a writer
//! publishes a new version (see the pipeline).

mod filter;
mod index;
mod prefix;
#[cfg(test)]
mod splitmix;
mod subtable;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::{better, Classify};
use crate::key::{FlowKey, FlowMatch};
use crate::prefetch::prefetch;
use prefix::{Memo, PrefixTracker, LEVELS};
use subtable::Subtable;

/// Subtables with more rules than this leave the prefix tracker (their prefixes would
/// cost memory and rebuild time, and one probe of a large subtable costs no more than the
/// prefix test that could skip it).
#[cfg(not(test))]
const MAX_TRACKED_RULES: usize = 1 << 16;
/// Small in tests, so that the property tests take subtables out of the tracker.
#[cfg(test)]
const MAX_TRACKED_RULES: usize = 6;

/// Positions of `order` per candidate bitmap block (at most 128: one `u128`).
#[cfg(not(test))]
const BLOCK: usize = 128;
/// Small in tests, so that the property tests cover several blocks.
#[cfg(test)]
const BLOCK: usize = 4;

/// Tables with at most this many subtables pick their candidates from bitmaps over the
/// positions in `order`, a block of [`BLOCK`] positions at a time; larger ones walk
/// every header.
#[cfg(not(test))]
const MAX_BITMAP_SUBTABLES: usize = 64 * BLOCK;
/// Small in tests, so that the property tests cover both ways.
#[cfg(test)]
const MAX_BITMAP_SUBTABLES: usize = 3 * BLOCK;

/// The candidate bitmaps of [`BLOCK`] consecutive positions of `order`, from `base`.
#[derive(Clone)]
struct Block {
    /// Per tracked field and prefix length, the positions (bit `p`: `base + p`) of the
    /// subtables with that prefix length on the field (length 0: not tracked on it).
    by_len: [[u128; LEVELS]; 2],
    /// Per field, bit `len` set when `by_len[f][len]` is not empty.
    lens_used: [u64; 2],
}

impl Default for Block {
    fn default() -> Self {
        Block { by_len: [[0; LEVELS]; 2], lens_used: [0; 2] }
    }
}

impl Block {
    /// The positions of this block that the prefix tracker lets through for a key whose
    /// passing lengths are `pass` (from `PrefixTracker::matching_lengths`).
    #[inline]
    fn candidates(&self, pass: &[u64; 2]) -> u128 {
        let mut c = [0u128; 2];
        for (f, c) in c.iter_mut().enumerate() {
            let mut lens = pass[f] & self.lens_used[f];
            while lens != 0 {
                let len = lens.trailing_zeros() as usize;
                lens &= lens - 1;
                *c |= self.by_len[f][len];
            }
        }
        c[0] & c[1]
    }
}

const HASH_SEED: u64 = 0x243f_6a88_85a3_08d3;
const HASH_MUL: u64 = 0x9e37_79b9_7f4a_7c15;

/// Mixes one word into a running hash: a 64×64→128-bit multiply folded to 64 bits, so
/// every input bit reaches both the low bits (slot position) and the high bits (tag).
#[inline(always)]
fn hash_word(h: u64, w: u64) -> u64 {
    let p = ((h ^ w) as u128) * (HASH_MUL as u128);
    (p as u64) ^ ((p >> 64) as u64)
}

/// A [`Hasher`] over [`hash_word`], for the mask → subtable map.
#[derive(Default)]
struct WordHasher(u64);

impl Hasher for WordHasher {
    fn write(&mut self, bytes: &[u8]) {
        for c in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..c.len()].copy_from_slice(c);
            self.0 = hash_word(self.0 ^ HASH_SEED, u64::from_le_bytes(b));
        }
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

/// Keys per step of [`TupleSpace::lookup_batch`] (one bit each in a `u64`).
const BATCH: usize = 32;

/// The rule a lookup found: its mask, priority, sequence number and value.
///
/// `seq` is the rule's insertion sequence number: unique among the rules of the table
/// and stable while the rule lives (replacing its value keeps it), so it can serve as a
/// handle, e.g. for per-rule counters.
///
/// `mask` is the mask of the rule's subtable; the rule's full match is the looked-up key
/// under it, see [`flow_match`](Self::flow_match).
#[derive(Debug)]
pub struct RuleRef<'a, T> {
    pub mask: &'a FlowKey,
    pub priority: u16,
    pub seq: u64,
    pub value: &'a T,
}

impl<T> Clone for RuleRef<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for RuleRef<'_, T> {}

impl<T> RuleRef<'_, T> {
    /// The rule's match, rebuilt by value: `key` must be the key this rule was found for
    /// (a rule matches `key` exactly when its match key is `key` under its mask).
    pub fn flow_match(&self, key: &FlowKey) -> FlowMatch {
        FlowMatch { key: key.masked(self.mask), mask: *self.mask }
    }

    #[inline]
    fn beats(&self, other: &Option<RuleRef<'_, T>>) -> bool {
        other.as_ref().is_none_or(|b| better(self.priority, self.seq, b.priority, b.seq))
    }
}

/// A subtable's place in the lookup order, with its cached bound.
#[derive(Clone, Copy, Debug)]
struct Ranked {
    priority: u16,
    /// The subtable's tracked prefix lengths (`Subtable::tracked_plen`).
    plen: [u8; 2],
    seq: u64,
    id: u32,
}

impl Ranked {
    /// Whether a rule of this subtable could beat `best`.
    #[inline]
    fn may_beat<T>(&self, best: &Option<RuleRef<'_, T>>) -> bool {
        best.as_ref().is_none_or(|b| better(self.priority, self.seq, b.priority, b.seq))
    }
}

/// The tuple-space-search classifier; see the module comment for the structure and its
/// invariants. Same semantics as every [`Classify`] implementation.
pub struct TupleSpace<T> {
    subtables: Vec<Subtable<T>>,
    by_mask: HashMap<FlowKey, u32, BuildHasherDefault<WordHasher>>,
    order: Vec<Ranked>,
    prefixes: PrefixTracker,
    /// The candidate bitmaps of `order`, block `b` covering positions `b * BLOCK ..`.
    /// Empty while there are more than [`MAX_BITMAP_SUBTABLES`] subtables.
    blocks: Vec<Block>,
    n_rules: usize,
    next_seq: u64,
}

impl<T> Default for TupleSpace<T> {
    fn default() -> Self {
        TupleSpace {
            subtables: Vec::new(),
            by_mask: HashMap::default(),
            order: Vec::new(),
            prefixes: PrefixTracker::default(),
            blocks: Vec::new(),
            n_rules: 0,
            next_seq: 0,
        }
    }
}

impl<T> TupleSpace<T> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of subtables (distinct masks).
    pub fn len_subtables(&self) -> usize {
        self.subtables.len()
    }

    /// Every rule: its match (rebuilt by value from the subtable's mask and the entry's
    /// words), priority and value, grouped by subtable (no particular order otherwise).
    pub fn iter(&self) -> impl Iterator<Item = (FlowMatch, u16, &T)> {
        self.subtables.iter().flat_map(|s| s.iter())
    }

    /// An estimate of the memory held, by capacity: structures, slot arrays, entries,
    /// filters, the prefix tracker and the mask map.
    pub fn memory_bytes(&self) -> usize {
        use std::mem::size_of;
        size_of::<Self>()
            + self.subtables.iter().map(|s| s.memory_bytes()).sum::<usize>()
            + self.subtables.capacity().saturating_sub(self.subtables.len())
                * size_of::<Subtable<T>>()
            + self.order.capacity() * size_of::<Ranked>()
            + self.prefixes.memory_bytes()
            + self.blocks.capacity() * size_of::<Block>()
            + self.by_mask.capacity() * (size_of::<(FlowKey, u32)>() + 1)
    }

    /// The value of the rule with exactly this match and priority (OVS's
    /// `classifier_find_rule_exactly`), if there is one.
    pub fn get(&self, m: &FlowMatch, priority: u16) -> Option<&T> {
        let m = Self::normalized(m);
        let id = *self.by_mask.get(&m.mask)? as usize;
        self.subtables[id].get(&m, priority)
    }

    /// The best rule matching `key`.
    #[inline]
    pub fn find(&self, key: &FlowKey) -> Option<RuleRef<'_, T>> {
        match self.order.as_slice() {
            [] => None,
            [only] => self.subtables[only.id as usize].find(key),
            all if !self.blocks.is_empty() => {
                let mut best: Option<RuleRef<'_, T>> = None;
                let pass = self.prefixes.matching_lengths(key);
                for (b, block) in self.blocks.iter().enumerate() {
                    let base = b * BLOCK;
                    let mut cand = block.candidates(&pass);
                    while cand != 0 {
                        let r = &all[base + cand.trailing_zeros() as usize];
                        cand &= cand - 1;
                        if !r.may_beat(&best) {
                            // `order` is sorted: nothing later can beat it either.
                            return best;
                        }
                        self.probe_into(r.id, key, &mut best);
                    }
                }
                best
            }
            all => {
                let mut best: Option<RuleRef<'_, T>> = None;
                let mut memo = Memo::default();
                for r in all {
                    if !r.may_beat(&best) {
                        break;
                    }
                    if !self.prefixes.may_match(r.plen, key, &mut memo) {
                        continue;
                    }
                    self.probe_into(r.id, key, &mut best);
                }
                best
            }
        }
    }

    /// Probes subtable `id` for `key` (its hash filter first) and keeps the rule found in
    /// `best` if it wins.
    #[inline]
    fn probe_into<'a>(&'a self, id: u32, key: &FlowKey, best: &mut Option<RuleRef<'a, T>>) {
        let st = &self.subtables[id as usize];
        let h = st.hash_key(key);
        if !st.may_contain(h) {
            return;
        }
        if let Some(c) = st.find_with_hash(key, h) {
            if c.beats(best) {
                *best = Some(c);
            }
        }
    }

    /// Rebuilds `blocks` from `order` (after any change of positions or prefix lengths
    /// there). A block's bits are the subtables whose prefix length on each tracked field
    /// may hold a key's prefix: the same set as [`PrefixTracker::may_match`] passes.
    fn reindex(&mut self) {
        if self.order.len() > MAX_BITMAP_SUBTABLES {
            self.blocks = Vec::new();
            return;
        }
        self.blocks.clear();
        self.blocks.resize(self.order.len().div_ceil(BLOCK), Block::default());
        for (pos, r) in self.order.iter().enumerate() {
            let block = &mut self.blocks[pos / BLOCK];
            for f in 0..2 {
                let len = r.plen[f] as usize;
                block.by_len[f][len] |= 1 << (pos % BLOCK);
                block.lens_used[f] |= 1 << len;
            }
        }
    }

    /// How many subtables [`find`](Self::find) visits for `key`, that is hashes the
    /// key for, after the prefix tracker's skips (for diagnostics and benchmarks).
    pub fn subtables_visited(&self, key: &FlowKey) -> usize {
        let mut best: Option<RuleRef<'_, T>> = None;
        let mut memo = Memo::default();
        let mut n = 0;
        for r in &self.order {
            if !r.may_beat(&best) {
                break;
            }
            if !self.prefixes.may_match(r.plen, key, &mut memo) {
                continue;
            }
            n += 1;
            if let Some(c) = self.subtables[r.id as usize].find(key) {
                if c.beats(&best) {
                    best = Some(c);
                }
            }
        }
        n
    }

    /// Looks up every key of `keys`, writing the result for `keys[i]` to `out[i]` (only
    /// the first `min(keys.len(), out.len())` keys). Same results as [`find`](Self::find)
    /// key by key, with the probes of a batch interleaved and prefetched.
    pub fn lookup_batch<'a>(&'a self, keys: &[FlowKey], out: &mut [Option<RuleRef<'a, T>>]) {
        for (k, o) in keys.chunks(BATCH).zip(out.chunks_mut(BATCH)) {
            let n = k.len().min(o.len());
            self.batch_step(&k[..n], &mut o[..n]);
        }
    }

    fn batch_step<'a>(&'a self, keys: &[FlowKey], out: &mut [Option<RuleRef<'a, T>>]) {
        if self.order.len() > 1 && !self.blocks.is_empty() {
            return self.batch_step_bits(keys, out);
        }
        if let [only] = self.order.as_slice() {
            return self.batch_step_one(&self.subtables[only.id as usize], keys, out);
        }
        out.fill(None);
        let mut hashes = [0u64; BATCH];
        let mut cands = [None::<(usize, usize)>; BATCH];
        let mut memos = [Memo::default(); BATCH];
        // With one subtable the probe itself decides; the prefix test and the filter
        // would only add work.
        let single = self.order.len() == 1;
        for r in &self.order {
            let mut live = 0u64;
            let mut open = 0u64;
            for (i, o) in out.iter().enumerate() {
                if r.may_beat(o) {
                    open |= 1 << i;
                    if single || self.prefixes.may_match(r.plen, &keys[i], &mut memos[i]) {
                        live |= 1 << i;
                    }
                }
            }
            if open == 0 {
                break;
            }
            if live == 0 {
                continue;
            }
            let st = &self.subtables[r.id as usize];
            for i in Bits(live) {
                let h = st.hash_key(&keys[i]);
                hashes[i] = h;
                if !single {
                    prefetch(st.filter_ptr(h));
                }
            }
            for i in Bits(live) {
                if single || st.may_contain(hashes[i]) {
                    prefetch(st.slot_ptr(hashes[i]));
                } else {
                    live &= !(1 << i);
                }
            }
            for i in Bits(live) {
                cands[i] = st.candidate(hashes[i]);
                if let Some((_, e)) = cands[i] {
                    st.prefetch_entry(e);
                }
            }
            for i in Bits(live) {
                if let Some(c) = cands[i].and_then(|c| st.confirm(&keys[i], hashes[i], c)) {
                    if c.beats(&out[i]) {
                        out[i] = Some(c);
                    }
                }
            }
        }
    }

    /// [`batch_step`](Self::batch_step) for a classifier of one subtable: its probe
    /// decides, so every key goes through the three stages (hash and prefetch the slot,
    /// read the slot and prefetch the entry, compare) with no bound or filter to test.
    fn batch_step_one<'a>(
        &'a self,
        st: &'a Subtable<T>,
        keys: &[FlowKey],
        out: &mut [Option<RuleRef<'a, T>>],
    ) {
        let n = keys.len().min(out.len()).min(BATCH);
        let mut hashes = [0u64; BATCH];
        for (h, k) in hashes[..n].iter_mut().zip(keys) {
            *h = st.hash_key(k);
            prefetch(st.slot_ptr(*h));
        }
        let mut cands = [None::<(usize, usize)>; BATCH];
        for (c, &h) in cands[..n].iter_mut().zip(&hashes[..n]) {
            *c = st.candidate(h);
            if let Some((_, e)) = *c {
                st.prefetch_entry(e);
            }
        }
        for (((o, k), &h), c) in out.iter_mut().zip(keys).zip(&hashes[..n]).zip(&cands[..n]) {
            *o = c.and_then(|c| st.confirm(k, h, c));
        }
    }

    /// [`batch_step`](Self::batch_step) with candidates from `blocks`, block by block and
    /// in rounds within a block: each round, every key walks its candidates (best first)
    /// to the next one whose filter passes, then the round's probes run together, so up
    /// to a batch of slot and entry loads overlap whatever subtables they are in. Per
    /// key, the same visits as [`find`](Self::find).
    fn batch_step_bits<'a>(&'a self, keys: &[FlowKey], out: &mut [Option<RuleRef<'a, T>>]) {
        out.fill(None);
        let n = keys.len().min(out.len()).min(BATCH);
        let mut pass = [[0u64; 2]; BATCH];
        for (p, k) in pass.iter_mut().zip(&keys[..n]) {
            *p = self.prefixes.matching_lengths(k);
        }
        // Keys that found a rule no later subtable can beat.
        let mut done = 0u64;
        for (b, block) in self.blocks.iter().enumerate() {
            let base = b * BLOCK;
            let mut cands = [0u128; BATCH];
            for i in (0..n).filter(|i| done >> i & 1 == 0) {
                cands[i] = block.candidates(&pass[i]);
            }
            self.block_rounds(base, &keys[..n], &mut cands[..n], &mut done, out);
            if done.count_ones() as usize == n {
                return;
            }
        }
    }

    /// The rounds of [`batch_step_bits`](Self::batch_step_bits) over one block: `cands[i]`
    /// holds key `i`'s candidate positions `base + bit`; a key found to have a rule that
    /// no later subtable can beat is added to `done`.
    fn block_rounds<'a>(
        &'a self,
        base: usize,
        keys: &[FlowKey],
        cands: &mut [u128],
        done: &mut u64,
        out: &mut [Option<RuleRef<'a, T>>],
    ) {
        let mut hashes = [0u64; BATCH];
        let mut subs = [0u32; BATCH];
        let mut found = [None::<(usize, usize)>; BATCH];
        loop {
            let mut live = 0u64;
            for (i, c) in cands.iter_mut().enumerate() {
                while *c != 0 {
                    let r = &self.order[base + c.trailing_zeros() as usize];
                    *c &= *c - 1;
                    if !r.may_beat(&out[i]) {
                        // `order` is sorted: no later subtable can beat it either.
                        *c = 0;
                        *done |= 1 << i;
                        break;
                    }
                    let st = &self.subtables[r.id as usize];
                    let h = st.hash_key(&keys[i]);
                    if st.may_contain(h) {
                        prefetch(st.slot_ptr(h));
                        hashes[i] = h;
                        subs[i] = r.id;
                        live |= 1 << i;
                        break;
                    }
                }
            }
            if live == 0 {
                return;
            }
            for i in Bits(live) {
                let st = &self.subtables[subs[i] as usize];
                found[i] = st.candidate(hashes[i]);
                if let Some((_, e)) = found[i] {
                    st.prefetch_entry(e);
                }
            }
            for i in Bits(live) {
                let st = &self.subtables[subs[i] as usize];
                if let Some(c) = found[i].and_then(|c| st.confirm(&keys[i], hashes[i], c)) {
                    if c.beats(&out[i]) {
                        out[i] = Some(c);
                    }
                }
            }
        }
    }

    /// The subtable for `mask`, created (empty, not yet ranked) if missing.
    fn subtable_for(&mut self, mask: &FlowKey) -> usize {
        if let Some(&id) = self.by_mask.get(mask) {
            return id as usize;
        }
        let id = self.subtables.len();
        self.subtables.push(Subtable::new(mask));
        self.by_mask.insert(*mask, id as u32);
        id
    }

    /// Moves subtable `id` to its place in `order` for its current bound (adding it if
    /// it is not ranked yet).
    fn rerank(&mut self, id: usize) {
        if let Some(at) = self.order.iter().position(|r| r.id as usize == id) {
            self.order.remove(at);
        }
        if let Some((priority, seq)) = self.subtables[id].bound() {
            let at = self.order.partition_point(|r| better(r.priority, r.seq, priority, seq));
            let plen = self.subtables[id].tracked_plen();
            self.order.insert(at, Ranked { priority, plen, seq, id: id as u32 });
        }
        self.reindex();
    }

    /// Drops the empty subtable `id`, moving the last subtable into its place.
    fn drop_subtable(&mut self, id: usize) {
        let gone = self.subtables.swap_remove(id);
        self.by_mask.remove(&*gone.mask);
        self.order.retain(|r| r.id as usize != id);
        if let Some(moved) = self.subtables.get(id) {
            let last = self.subtables.len() as u32;
            if let Some(v) = self.by_mask.get_mut(&*moved.mask) {
                *v = id as u32;
            }
            for r in self.order.iter_mut().filter(|r| r.id == last) {
                r.id = id as u32;
            }
        }
        self.reindex();
    }

    /// Records a new rule of subtable `id` in the prefix tracker, or takes a subtable
    /// that grew past [`MAX_TRACKED_RULES`] out of it.
    fn track_insert(&mut self, id: usize, key: &FlowKey) {
        let st = &mut self.subtables[id];
        if !st.tracked {
            return;
        }
        let plen = st.plen;
        if st.n_rules() > MAX_TRACKED_RULES {
            st.tracked = false;
            for r in self.order.iter_mut().filter(|r| r.id as usize == id) {
                r.plen = [0, 0];
            }
            self.reindex();
            for (f, &len) in plen.iter().enumerate() {
                if len != 0 {
                    self.rebuild_level(f, len);
                }
            }
            return;
        }
        for (f, &len) in plen.iter().enumerate() {
            if len != 0 && self.prefixes.add(f, len, key) {
                self.rebuild_level(f, len);
            }
            if self.prefixes.wants_table(f) {
                let rules = self
                    .subtables
                    .iter()
                    .filter(|s| s.tracked && s.plen[f] != 0)
                    .flat_map(|s| s.entry_keys().map(move |k| (s.plen[f], k)));
                self.prefixes.build_table(f, rules);
            }
        }
    }

    /// Records in the prefix tracker that subtable `id` lost a rule.
    fn track_remove(&mut self, id: usize) {
        let st = &self.subtables[id];
        if !st.tracked {
            return;
        }
        let plen = st.plen;
        for (f, &len) in plen.iter().enumerate() {
            if len != 0 && self.prefixes.remove(f, len) {
                self.rebuild_level(f, len);
            }
        }
    }

    /// Rebuilds the tracker's level (`f`, `len`) from every tracked subtable's rules.
    fn rebuild_level(&mut self, f: usize, len: u8) {
        let on = move |s: &&Subtable<T>| s.tracked && s.plen[f] == len;
        let live = self.subtables.iter().filter(on).map(|s| s.n_rules()).sum();
        let keys = self.subtables.iter().filter(on).flat_map(|s| s.entry_keys());
        self.prefixes.rebuild(f, len, live, keys);
    }

    fn normalized(m: &FlowMatch) -> FlowMatch {
        FlowMatch { key: m.key.masked(&m.mask), mask: m.mask }
    }

    /// Checks the invariants of the module comment (tests only).
    #[cfg(test)]
    fn check(&self) {
        assert_eq!(self.order.len(), self.subtables.len());
        assert_eq!(self.by_mask.len(), self.subtables.len());
        let mut n = 0;
        for (id, s) in self.subtables.iter().enumerate() {
            s.check();
            assert!(s.n_rules() > 0, "empty subtable kept");
            assert_eq!(self.by_mask.get(&*s.mask), Some(&(id as u32)));
            let r = self.order.iter().find(|r| r.id as usize == id).expect("ranked");
            assert_eq!(Some((r.priority, r.seq)), s.bound());
            assert_eq!(r.plen, s.tracked_plen());
            if s.tracked {
                for (m, _, _) in s.iter() {
                    for (f, &len) in s.plen.iter().enumerate() {
                        if len != 0 {
                            self.prefixes.check_has(f, len, &m.key);
                        }
                    }
                }
            }
            n += s.n_rules();
        }
        assert_eq!(n, self.n_rules);
        for w in self.order.windows(2) {
            assert!(better(w[0].priority, w[0].seq, w[1].priority, w[1].seq));
        }
        if !self.order.is_empty() {
            assert_eq!(self.blocks.is_empty(), self.order.len() > MAX_BITMAP_SUBTABLES);
        }
        if !self.blocks.is_empty() {
            assert_eq!(self.blocks.len(), self.order.len().div_ceil(BLOCK));
            for (pos, r) in self.order.iter().enumerate() {
                let block = &self.blocks[pos / BLOCK];
                for f in 0..2 {
                    for len in 0..LEVELS {
                        let set = block.by_len[f][len] >> (pos % BLOCK) & 1 != 0;
                        assert_eq!(set, r.plen[f] as usize == len);
                        assert_eq!(block.lens_used[f] >> len & 1 != 0, block.by_len[f][len] != 0);
                    }
                }
            }
        }
    }
}

/// The set bits of a `u64`, lowest first.
struct Bits(u64);

impl Iterator for Bits {
    type Item = usize;
    #[inline]
    fn next(&mut self) -> Option<usize> {
        if self.0 == 0 {
            return None;
        }
        let i = self.0.trailing_zeros() as usize;
        self.0 &= self.0 - 1;
        Some(i)
    }
}

impl<T> Classify<T> for TupleSpace<T> {
    fn insert(&mut self, m: FlowMatch, priority: u16, value: T) -> Option<T> {
        let m = Self::normalized(&m);
        let id = self.subtable_for(&m.mask);
        let st = &mut self.subtables[id];
        let before = st.bound();
        let old = st.insert(&m, priority, self.next_seq, value);
        if old.is_none() {
            self.next_seq += 1;
            self.n_rules += 1;
            self.track_insert(id, &m.key);
            if self.subtables[id].bound() != before {
                self.rerank(id);
            }
        }
        old
    }

    fn remove(&mut self, m: &FlowMatch, priority: u16) -> Option<T> {
        let m = Self::normalized(m);
        let id = *self.by_mask.get(&m.mask)? as usize;
        let st = &mut self.subtables[id];
        let before = st.bound();
        let old = st.remove(&m, priority)?;
        self.n_rules -= 1;
        self.track_remove(id);
        let st = &self.subtables[id];
        if st.n_rules() == 0 {
            self.drop_subtable(id);
        } else if st.bound() != before {
            self.rerank(id);
        }
        Some(old)
    }

    fn get(&self, m: &FlowMatch, priority: u16) -> Option<&T> {
        TupleSpace::get(self, m, priority)
    }

    fn rules(&self) -> Box<dyn Iterator<Item = (FlowMatch, u16, &T)> + '_> {
        Box::new(self.iter())
    }

    #[inline]
    fn lookup(&self, key: &FlowKey) -> Option<(u16, &T)> {
        self.find(key).map(|r| (r.priority, r.value))
    }

    fn len(&self) -> usize {
        self.n_rules
    }

    /// The union of the masks of the subtables [`find`](Self::find) may probe for `key`:
    /// every one ranked before the point where no later subtable could beat the rule
    /// found (prefix-tracker skips included, as they read the key's bits under the
    /// subtable's mask too).
    fn consulted(&self, key: &FlowKey) -> FlowKey {
        let mut mask = FlowKey::ZERO;
        let mut best: Option<RuleRef<'_, T>> = None;
        for r in &self.order {
            if !r.may_beat(&best) {
                break;
            }
            let st = &self.subtables[r.id as usize];
            mask = mask.union(&st.mask);
            if let Some(c) = st.find(key) {
                if c.beats(&best) {
                    best = Some(c);
                }
            }
        }
        mask
    }
}
