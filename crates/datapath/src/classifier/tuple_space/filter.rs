//! A subtable's membership filter: one bit per hash bucket, set for every entry's hash.
//!
//! Most subtable visits of a lookup miss: with many masks, a packet matches in one or two
//! subtables and is probed against dozens. The filter answers "can this subtable hold an
//! entry with this hash?" from a small bit array (about [`BITS_PER_ENTRY`] bits per
//! entry, so 100 subtables of 1000 rules take 200 KB and stay in the L2 cache), before
//! the probe touches the larger slot array and the entries. A clear bit proves a miss; a
//! set bit (a true hit, or a false positive with probability about
//! `1 - e^(-1/BITS_PER_ENTRY)`, ≈ 6 %) sends the lookup on to the real probe.
//!
//! Invariants:
//! - When enabled (`bits` non-empty), the bit of every entry's hash is set: the filter
//!   has no false negatives. Removing an entry leaves its bit set (a *stale* bit, a
//!   harmless false positive); the owner rebuilds the filter when stale bits pile up.
//! - `bits.len()` is zero (disabled: every hash may be present) or a power of two.
//! - A subtable larger than [`MAX_ENTRIES`] has no filter: its bit array would miss the
//!   caches as its slot array does, so it would only add a memory access to every hit.

/// Filter bits per entry (rounded up to a power of two in total).
const BITS_PER_ENTRY: usize = 16;
/// Subtables with more entries than this go without a filter.
#[cfg(not(test))]
pub(super) const MAX_ENTRIES: usize = 1 << 16;
/// Small in tests, so that the property tests disable filters too.
#[cfg(test)]
pub(super) const MAX_ENTRIES: usize = 8;

/// See the module comment.
#[derive(Default)]
pub(super) struct HashFilter {
    bits: Box<[u64]>,
    /// Entries whose bits were set since the last rebuild and are still live.
    live: usize,
    /// Entries removed since the last rebuild (their bits may still be set).
    stale: usize,
}

#[inline]
fn bit_of(hash: u64, n_bits: usize) -> usize {
    // Bits 12.. of the hash: the slot index uses the lowest bits for the home slot and
    // the upper half for its tag.
    (hash >> 12) as usize & (n_bits - 1)
}

impl HashFilter {
    /// Whether an entry with this hash may be present (always true when disabled).
    #[inline]
    pub(super) fn may_contain(&self, hash: u64) -> bool {
        let n = self.bits.len() * 64;
        if n == 0 {
            return true;
        }
        let b = bit_of(hash, n);
        self.bits.get(b / 64).is_none_or(|w| w >> (b % 64) & 1 != 0)
    }

    /// The word [`may_contain`](Self::may_contain) reads for `hash`, for prefetching.
    #[inline]
    pub(super) fn word_ptr(&self, hash: u64) -> *const u64 {
        let n = self.bits.len() * 64;
        if n == 0 {
            return std::ptr::null();
        }
        self.bits.get(bit_of(hash, n) / 64).map_or(std::ptr::null(), |w| w as *const u64)
    }

    /// Records a new entry. Returns true when the owner must call
    /// [`rebuild`](Self::rebuild) (the filter is full, or the subtable outgrew filters).
    pub(super) fn insert(&mut self, hash: u64) -> bool {
        self.live += 1;
        let n = self.bits.len() * 64;
        if n == 0 || self.live * BITS_PER_ENTRY > n {
            return self.live <= MAX_ENTRIES || n != 0;
        }
        let b = bit_of(hash, n);
        self.bits[b / 64] |= 1 << (b % 64);
        false
    }

    /// Records a removed entry. Returns true when the owner should rebuild (as many
    /// stale bits as live ones, or a filter far larger than needed).
    pub(super) fn remove(&mut self) -> bool {
        self.live = self.live.saturating_sub(1);
        self.stale += 1;
        !self.bits.is_empty() && self.stale > self.live.max(64)
    }

    /// Rebuilds from the hashes of all live entries (sized for them, or disabled when
    /// they are more than [`MAX_ENTRIES`]).
    pub(super) fn rebuild(&mut self, hashes: impl ExactSizeIterator<Item = u64>) {
        let live = hashes.len();
        self.live = live;
        self.stale = 0;
        if live > MAX_ENTRIES {
            self.bits = Box::default();
            return;
        }
        let n_bits = (live.max(1) * 2 * BITS_PER_ENTRY).next_power_of_two().max(512);
        let mut bits = vec![0u64; n_bits / 64].into_boxed_slice();
        for h in hashes {
            let b = bit_of(h, n_bits);
            bits[b / 64] |= 1 << (b % 64);
        }
        self.bits = bits;
    }

    /// Whether the filter is in use.
    #[cfg(test)]
    pub(super) fn enabled(&self) -> bool {
        !self.bits.is_empty()
    }

    /// Heap bytes held.
    pub(super) fn memory_bytes(&self) -> usize {
        self.bits.len() * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mix(i: u64) -> u64 {
        let p = (i as u128 + 1) * 0x9e37_79b9_7f4a_7c15u128;
        (p as u64) ^ ((p >> 64) as u64).rotate_left(17)
    }

    #[test]
    fn no_false_negatives_and_few_false_positives() {
        let mut f = HashFilter::default();
        let n = MAX_ENTRIES as u64;
        for i in 0..n {
            if f.insert(mix(i)) {
                f.rebuild((0..i as u32 + 1).map(|j| mix(j as u64)));
            }
        }
        assert!(f.enabled());
        for i in 0..n {
            assert!(f.may_contain(mix(i)), "entry {i} lost");
        }
        let fp = (n..n + 100_000).filter(|&i| f.may_contain(mix(i))).count();
        assert!(fp < 12_000, "{fp} false positives in 100000");
        assert!(f.memory_bytes() <= 512 / 8 * 2, "small filter for few entries");
        assert!(fp > 0, "a filter this small must have some false positives");
    }

    #[test]
    fn disabled_beyond_max_entries_and_rebuilt_after_removals() {
        let mut f = HashFilter::default();
        f.rebuild((0..MAX_ENTRIES as u32 + 1).map(|j| mix(j as u64)));
        assert!(!f.enabled());
        assert!(f.may_contain(12345));
        f.rebuild((0..4u32).map(|j| mix(j as u64)));
        assert!(f.enabled());
        let mut asked = false;
        for _ in 0..100 {
            asked |= f.remove();
        }
        assert!(asked, "stale bits must ask for a rebuild");
    }

    #[test]
    fn starts_disabled_then_asks_to_be_built() {
        let mut f = HashFilter::default();
        assert!(f.may_contain(1));
        assert!(f.insert(1), "the first insert asks for a real filter");
        f.rebuild([1u64].into_iter());
        assert!(f.may_contain(1));
    }
}
