//! Where the flow tables keep their entries: slots in chunks of [`CHUNK`], each chunk one
//! allocation of 64 KiB, addressed by a `u32` slot number that the tables' B-trees hold
//! in place of a pointer.
//!
//! A million entries are then 977 allocations rather than a million: installing them
//! costs fewer calls to the allocator, and deleting them leaves the allocator less of its
//! own bookkeeping to keep (it keeps a header for every run of small objects it ever
//! made; a chunk is a large allocation, which it gives back whole). A chunk whose last
//! entry leaves is freed at once.

use super::FlowEntry;

/// Slots per chunk: 64-byte entries, 64 KiB a chunk.
pub(super) const CHUNK: usize = 1024;

/// The entries. Invariants: a chunk with memory has `CHUNK` slots, at least one of them
/// `Some`, and `free` lists exactly its `None` ones; a chunk with no entry holds no
/// memory (`slots` and `free` empty); `open` lists (once each) the chunks with a free
/// slot or no memory; `len` is the number of `Some` slots.
#[derive(Clone, Debug, Default)]
pub(super) struct Entries {
    chunks: Vec<Chunk>,
    open: Vec<u32>,
    len: usize,
}

#[derive(Clone, Debug, Default)]
struct Chunk {
    slots: Vec<Option<FlowEntry>>,
    free: Vec<u16>,
}

impl Entries {
    /// Keeps `e`; returns its slot.
    pub fn insert(&mut self, e: FlowEntry) -> u32 {
        let c = match self.open.last() {
            Some(&c) => c,
            None => {
                self.chunks.push(Chunk::default());
                let c = (self.chunks.len() - 1) as u32;
                self.open.push(c);
                c
            }
        };
        let chunk = &mut self.chunks[c as usize];
        if chunk.slots.is_empty() {
            chunk.slots.resize_with(CHUNK, || None);
            chunk.free = (0..CHUNK as u16).rev().collect();
        }
        let s = chunk.free.pop().expect("an open chunk has a free slot");
        chunk.slots[usize::from(s)] = Some(e);
        if chunk.free.is_empty() {
            self.open.pop();
        }
        self.len += 1;
        c << 10 | u32::from(s)
    }

    /// The entry in slot `i`, if there is one.
    pub fn get(&self, i: u32) -> Option<&FlowEntry> {
        self.chunks.get((i >> 10) as usize)?.slots.get((i & 1023) as usize)?.as_ref()
    }

    pub fn get_mut(&mut self, i: u32) -> Option<&mut FlowEntry> {
        self.chunks.get_mut((i >> 10) as usize)?.slots.get_mut((i & 1023) as usize)?.as_mut()
    }

    /// Takes the entry out of slot `i` (freeing its chunk if it was the last there).
    pub fn take(&mut self, i: u32) -> Option<FlowEntry> {
        let c = i >> 10;
        let chunk = self.chunks.get_mut(c as usize)?;
        let e = chunk.slots.get_mut((i & 1023) as usize)?.take()?;
        if chunk.free.is_empty() {
            self.open.push(c);
        }
        chunk.free.push((i & 1023) as u16);
        if chunk.free.len() == CHUNK {
            chunk.slots = Vec::new();
            chunk.free = Vec::new();
        }
        self.len -= 1;
        if self.len == 0 {
            *self = Entries::default();
        }
        Some(e)
    }

    /// Number of entries kept.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Number of chunks holding memory.
    #[cfg(test)]
    fn chunks_held(&self) -> usize {
        self.chunks.iter().filter(|c| !c.slots.is_empty()).count()
    }
}

const _: () = assert!(CHUNK == 1 << 10, "slot numbers keep 10 bits for the slot");
const _: () = assert!(std::mem::size_of::<Option<FlowEntry>>() == 64);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flows::SentMatch;
    use std::sync::Arc;

    fn entry(cookie: u64) -> FlowEntry {
        FlowEntry {
            sent: SentMatch::Ranks(0),
            priority: 1,
            cookie,
            idle_timeout: 0,
            hard_timeout: 0,
            flags: 0,
            importance: 0,
            instructions: Arc::new(Vec::new()),
            installed_at: 0,
            rule: None,
        }
    }

    /// Entries come back as kept, slots are reused, and a chunk goes as soon as its last
    /// entry does.
    #[test]
    fn entries_are_kept_taken_and_their_chunks_freed() {
        let mut s = Entries::default();
        let n = 3 * CHUNK + 5;
        let slots: Vec<u32> = (0..n as u64).map(|i| s.insert(entry(i))).collect();
        assert_eq!((s.len(), s.chunks_held()), (n, 4));
        for (i, &slot) in slots.iter().enumerate() {
            assert_eq!(s.get(slot).map(|e| e.cookie), Some(i as u64));
        }
        // Empty the second chunk: its memory goes, the others stay.
        for &slot in &slots[CHUNK..2 * CHUNK] {
            assert!(s.take(slot).is_some());
        }
        assert_eq!((s.len(), s.chunks_held()), (n - CHUNK, 3));
        assert!(s.get(slots[CHUNK]).is_none() && s.take(slots[CHUNK]).is_none());
        // Taken slots are reused before new chunks are made.
        let again: Vec<u32> = (0..CHUNK as u64).map(|i| s.insert(entry(100_000 + i))).collect();
        assert_eq!(s.chunks_held(), 4);
        s.get_mut(again[0]).unwrap().cookie = 7;
        assert_eq!(s.get(again[0]).unwrap().cookie, 7);
        // Emptied, it holds nothing.
        for slot in slots[..CHUNK].iter().chain(&slots[2 * CHUNK..]).chain(&again) {
            assert!(s.take(*slot).is_some());
        }
        assert_eq!((s.len(), s.chunks_held(), s.chunks.len()), (0, 0, 0));
        assert!(s.get(u32::MAX).is_none() && s.take(u32::MAX).is_none());
    }
}
