//! The broadcast groups of the tier: a decision that sends one frame to several ports
//! points at one of the program's [`FP_GROUPS`] group maps holding those ports (see the
//! parent module's comment).

use std::time::Instant;

use super::{KernelTier, Table, GROUP_GRACE};
use crate::layout::*;

/// One broadcast group as the tier has set it.
#[derive(Clone, Debug, Default)]
pub(super) struct Group {
    /// Its devmap slots, sorted; empty: never set.
    pub(super) slots: Vec<u32>,
    /// When a search for a free group first found no live entry using it.
    pub(super) unused_since: Option<Instant>,
    /// Whether the group's map holds `slots` as the ports are now (false after a flush).
    pub(super) synced: bool,
}

impl KernelTier {
    /// The broadcast group holding exactly `slots` (sorted), set up if need be: the one
    /// that holds them already, else one never set, else one no live entry has used for
    /// [`GROUP_GRACE`]. `None` if there is none such. Finding the unused ones walks every
    /// entry, so after a search that found none the next walks only once an entry went
    /// or a group found unused has been so for the grace: until then it could find none
    /// either (entries added in between only use groups).
    pub(super) fn group_for(&self, t: &mut Table, slots: &[u32]) -> Option<u32> {
        if let Some(g) = t.groups.iter().position(|g| g.slots == slots) {
            if !t.groups[g].synced {
                if let Err(e) = self.fp.set_group(g as u32, slots) {
                    eprintln!("xdp: {e}");
                    return None;
                }
                t.groups[g].synced = true;
            }
            t.groups[g].unused_since = None;
            return Some(g as u32);
        }
        let now = Instant::now();
        let free = match t.groups.iter().position(|g| g.slots.is_empty()) {
            Some(g) => g,
            None => {
                if let Some((removals, ready)) = t.group_search {
                    if removals == t.removals && ready.is_none_or(|r| now < r) {
                        return None;
                    }
                }
                t.stats.group_scans += 1;
                let mut used = vec![false; t.groups.len()];
                for e in t.entries.values() {
                    let out = e.entry.out;
                    if out != FP_DROP && out & FP_GROUP != 0 && e.entry.version == t.generation {
                        if let Some(u) = used.get_mut((out & !FP_GROUP) as usize) {
                            *u = true;
                        }
                    }
                }
                let mut free = None;
                let mut ready: Option<Instant> = None;
                for (g, grp) in t.groups.iter_mut().enumerate() {
                    if used[g] {
                        grp.unused_since = None;
                        continue;
                    }
                    let since = *grp.unused_since.get_or_insert(now);
                    if free.is_none() && now.duration_since(since) >= GROUP_GRACE {
                        free = Some(g);
                    }
                    let at = since + GROUP_GRACE;
                    ready = Some(ready.map_or(at, |r| r.min(at)));
                }
                let Some(free) = free else {
                    t.group_search = Some((t.removals, ready));
                    return None;
                };
                free
            }
        };
        t.group_search = None;
        if let Err(e) = self.fp.set_group(free as u32, slots) {
            eprintln!("xdp: {e}");
            t.groups[free] = Group::default();
            return None;
        }
        t.groups[free] = Group { slots: slots.to_vec(), unused_since: None, synced: true };
        Some(free as u32)
    }
}
