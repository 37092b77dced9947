//! The tier's megaflow masks: which of the program's [`FP_MASKS`] mask slots hold which
//! mask, how many entries use each, and the order the program walks them in.
//!
//! Slot [`FP_EXACT_MASK`] holds the exact mask from load on, never another: an entry
//! whose own mask finds no slot is written there as an exact microflow, which is correct
//! for any decision. Any other slot is taken by the first entry with a new mask. A slot
//! joins the walk before its first entry is written and leaves it when its last entry
//! goes (so a frame walks only masks that have entries); it may join again with the same
//! mask at once. Its mask is rewritten for another only [`MASK_GRACE`] after it left the
//! walk: a frame that read the walk before can still be reading the old mask within that
//! time, never after (the program runs to its end in far less), so no frame ever reads a
//! mask half written while entries for it exist.
//!
//! The walk is ordered by hits (the most hit mask first), recomputed at each harvest,
//! so frames of the busiest megaflows do the fewest lookups.
//!
//! Invariants: every slot with users is in `walk`; `walk` never names a slot twice; the
//! program walks `walk` (written after every change).

use std::time::{Duration, Instant};

use crate::layout::{FpKey, FP_EXACT_MASK, FP_MASKS};
use crate::program::{FastPath, FastPathError};

/// How long a mask slot stays out of the walk before it may hold another mask.
pub const MASK_GRACE: Duration = Duration::from_millis(100);

/// One mask slot as the tier has set it.
#[derive(Clone, Debug, Default)]
struct Slot {
    /// The mask written there (none: never written).
    mask: Option<FpKey>,
    /// Entries (of any generation) keyed under it.
    users: usize,
    /// Hits of its entries since the walk was last ordered.
    hits: u64,
    /// When it last left the walk.
    left: Option<Instant>,
}

/// The mask slots and the walk (see the module comment).
#[derive(Debug)]
pub struct Masks {
    slots: Vec<Slot>,
    walk: Vec<u16>,
}

/// One mask slot in use, for dumps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MaskUse {
    pub slot: u16,
    pub mask: FpKey,
    pub entries: usize,
    /// Its place in the walk (0: looked up first).
    pub rank: usize,
}

impl Masks {
    /// The exact mask in its slot (as [`FastPath::load`] leaves it), nothing walked
    /// (written to the program).
    pub fn new(fp: &FastPath) -> Masks {
        let mut slots = vec![Slot::default(); FP_MASKS];
        slots[FP_EXACT_MASK as usize].mask = Some(FpKey::EXACT);
        if let Err(e) = fp.set_walk(&[]) {
            eprintln!("xdp: {e}");
        }
        Masks { slots, walk: Vec::new() }
    }

    /// The walked slots with their masks, in walk order.
    pub fn walked(&self) -> impl Iterator<Item = (u16, &FpKey)> + '_ {
        self.walk.iter().filter_map(|&s| Some((s, self.slots.get(usize::from(s))?.mask.as_ref()?)))
    }

    /// The mask in `slot` (fixed while an entry uses the slot).
    pub fn mask(&self, slot: u16) -> FpKey {
        self.slots.get(usize::from(slot)).and_then(|s| s.mask).unwrap_or(FpKey::EXACT)
    }

    /// The slot to key an entry with mask `mask` under, walked: the slot holding that
    /// mask (walked already, or added to the walk), else a free slot set to it and added
    /// to the walk (last), else none.
    pub fn slot_for(&mut self, fp: &FastPath, mask: &FpKey) -> Result<Option<u16>, FastPathError> {
        let now = Instant::now();
        let holding = self.slots.iter().position(|s| s.mask.as_ref() == Some(mask));
        let slot = match holding {
            Some(s) if self.walk.contains(&(s as u16)) => return Ok(Some(s as u16)),
            Some(s) => s,
            None => {
                let free = self.slots.iter().enumerate().position(|(i, s)| {
                    i != usize::from(FP_EXACT_MASK)
                        && !self.walk.contains(&(i as u16))
                        && s.left.is_none_or(|t| now.duration_since(t) >= MASK_GRACE)
                });
                let Some(free) = free else {
                    return Ok(None);
                };
                fp.set_mask(free as u16, mask)?;
                self.slots[free] = Slot { mask: Some(*mask), ..Slot::default() };
                free
            }
        };
        self.walk.push(slot as u16);
        if let Err(e) = fp.set_walk(&self.walk) {
            self.walk.pop();
            self.slots[slot].left = Some(now);
            return Err(e);
        }
        Ok(Some(slot as u16))
    }

    /// An entry was keyed under `slot`.
    pub fn add_user(&mut self, slot: u16) {
        if let Some(s) = self.slots.get_mut(usize::from(slot)) {
            s.users += 1;
        }
    }

    /// An entry keyed under `slot` left the map: when it was the last, the slot leaves
    /// the walk.
    pub fn remove_user(&mut self, fp: &FastPath, slot: u16) {
        if let Some(s) = self.slots.get_mut(usize::from(slot)) {
            s.users = s.users.saturating_sub(1);
        }
        self.settle(fp, slot);
    }

    /// Takes `slot` out of the walk if no entry uses it (after a write that failed).
    pub fn settle(&mut self, fp: &FastPath, slot: u16) {
        let Some(s) = self.slots.get_mut(usize::from(slot)) else {
            return;
        };
        if s.users > 0 || !self.walk.contains(&slot) {
            return;
        }
        s.left = Some(Instant::now());
        self.walk.retain(|&w| w != slot);
        if let Err(e) = fp.set_walk(&self.walk) {
            // The program still walks the slot: keep it in the walk, so that its mask
            // is not rewritten.
            eprintln!("xdp: {e}");
            self.walk.push(slot);
            self.slots[usize::from(slot)].left = None;
        }
    }

    /// Counts `packets` hits for the entries keyed under `slot`.
    pub fn hit(&mut self, slot: u16, packets: u64) {
        if let Some(s) = self.slots.get_mut(usize::from(slot)) {
            s.hits = s.hits.saturating_add(packets);
        }
    }

    /// Orders the walk by hits since the last ordering (most first; ties keep their
    /// order) and starts counting again.
    pub fn reorder(&mut self, fp: &FastPath) {
        let mut walk = self.walk.clone();
        walk.sort_by_key(|&s| std::cmp::Reverse(self.slots[usize::from(s)].hits));
        for s in &mut self.slots {
            s.hits = 0;
        }
        if walk != self.walk {
            match fp.set_walk(&walk) {
                Ok(()) => self.walk = walk,
                Err(e) => eprintln!("xdp: {e}"),
            }
        }
    }

    /// The slots in the walk, with their masks and users, in walk order.
    pub fn in_use(&self) -> Vec<MaskUse> {
        self.walked()
            .enumerate()
            .map(|(rank, (slot, mask))| MaskUse {
                slot,
                mask: *mask,
                entries: self.slots[usize::from(slot)].users,
                rank,
            })
            .collect()
    }
}
