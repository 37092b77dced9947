//! Groups in mirrored decisions: what a decision whose path runs groups credits, and
//! what it depends on.
//!
//! The tier's entries are exact microflows, so the buckets a group takes for one are a
//! function of the group table and port liveness: indirect takes its bucket, all every
//! bucket, select the bucket the flow's [`flow_hash`](crate::group::flow_hash) of the
//! whole key picks among the live weighted ones, fast-failover the first live one. The
//! tracer runs the very code a worker runs, so the buckets it reports are the worker's.
//! A group of a type the tier does not declare ([`Capability::group`]) makes the
//! decision [`Ineligible::Unsupported`].
//!
//! `GroupWalk` follows a decision's trace events and records, per group run, the
//! group's counter slot, the buckets' counter slots and the frame's length there
//! (relative to the received frame: the VLAN tags and MPLS label stack entries pushed
//! and popped before), so a kernel hit credits group and bucket
//! statistics exactly as a worker would. It also records what the choices read: the
//! groups run or watched (a group-mod of any of them may change the decision) and the
//! port slots whose liveness a select or fast-failover choice read (a link change there
//! may change it).
//!
//! Trace events are flat; the nesting is rebuilt as the switch's tracer does: a bucket
//! belongs to the innermost running group of its id, and an apply-actions action, a
//! table lookup or the pipeline's action set means every group has ended.

use crate::action::Action;
use crate::group::{Group, GroupKind, GROUP_ANY, MAX_DEPTH};
use crate::key::{Field, FlowKey};
use crate::pipeline::{PipelineVersion, RuleTable};

use super::{Capabilities, Capability, Ineligible};

/// One group run on a mirrored path, with its counter slots.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupHit {
    /// The group's id.
    pub group: u32,
    /// The group's counter slot.
    pub counter: u32,
    /// The counter slots of the buckets it took, in order (none: no live bucket).
    pub buckets: Vec<u32>,
    /// Bytes the frame has at the group more than when received.
    pub len_delta: i32,
}

/// A running group: its id, the index of its [`GroupHit`] and the VLAN tag and MPLS
/// entry counts of the frame it was given (each bucket starts from that frame).
struct Running {
    group: u32,
    hit: usize,
    tags: i32,
    labels: i32,
}

/// Follows one decision's trace events (see the module comment).
pub(super) struct GroupWalk {
    /// The tier's: which group types it runs.
    caps: Capabilities,
    /// VLAN tags of the received frame.
    tags_in: i32,
    /// VLAN tags of the frame as it is now.
    tags: i32,
    /// MPLS label stack entries of the received frame (at least: 1, or 2 below an
    /// entry that is not the bottom of the stack).
    labels_in: i32,
    /// MPLS entries pushed less those popped since (a key does not count them).
    labels: i32,
    running: Vec<Running>,
    pub hits: Vec<GroupHit>,
    /// Groups run or watched, sorted and distinct.
    pub groups: Vec<u32>,
    /// Port slots whose liveness a choice read, sorted and distinct.
    pub live_slots: Vec<u16>,
}

fn tags_of(k: &FlowKey) -> i32 {
    (k.get(Field::VlanVid) & 0x1000 != 0) as i32
}

fn labels_of(k: &FlowKey) -> i32 {
    match k.get(Field::EthType) {
        0x8847 | 0x8848 => 2 - k.get(Field::MplsBos) as i32,
        _ => 0,
    }
}

impl GroupWalk {
    pub fn new(key: &FlowKey, caps: Capabilities) -> GroupWalk {
        GroupWalk {
            caps,
            tags_in: tags_of(key),
            tags: tags_of(key),
            labels_in: labels_of(key),
            labels: 0,
            running: Vec::new(),
            hits: Vec::new(),
            groups: Vec::new(),
            live_slots: Vec::new(),
        }
    }

    /// A table looked `key` up: every group has ended.
    pub fn table(&mut self, key: &FlowKey) {
        if let Some(first) = self.running.first() {
            self.labels = first.labels;
        }
        self.running.clear();
        self.tags = tags_of(key);
    }

    /// An apply-actions action or the pipeline's action set follows: every group has
    /// ended, and the frame is the one they were given.
    pub fn top_level(&mut self) {
        if let Some(first) = self.running.first() {
            self.tags = first.tags;
            self.labels = first.labels;
        }
        self.running.clear();
    }

    /// Bytes the frame has now more than when received.
    pub fn len_delta(&self) -> i32 {
        4 * (self.tags - self.tags_in + self.labels)
    }

    /// Action `a` executes (an apply-actions or action-set action).
    pub fn action<C: RuleTable>(
        &mut self,
        a: &Action,
        v: &PipelineVersion<C>,
    ) -> Result<(), Ineligible> {
        match a {
            Action::PushVlan(_) => self.tags += 1,
            Action::PopVlan => self.tags = (self.tags - 1).max(0),
            Action::PushMpls(_) => self.labels += 1,
            Action::PopMpls(_) if self.labels_in + self.labels > 0 => self.labels -= 1,
            Action::Group(id) => self.run(*id, v)?,
            _ => {}
        }
        Ok(())
    }

    fn run<C: RuleTable>(&mut self, id: u32, v: &PipelineVersion<C>) -> Result<(), Ineligible> {
        insert(&mut self.groups, id);
        let g = v.group(id).ok_or_else(|| {
            Ineligible::Group(format!(
                "group {id} does not exist (the packet is dropped and counted apart)"
            ))
        })?;
        self.caps.need(Capability::group(g.kind))?;
        if self.running.len() >= MAX_DEPTH {
            return Err(Ineligible::Group(format!(
                "group {id} is nested deeper than {MAX_DEPTH} groups"
            )));
        }
        if matches!(g.kind, GroupKind::Select | GroupKind::FastFailover) {
            self.watched(g, v);
        }
        self.running.push(Running {
            group: id,
            hit: self.hits.len(),
            tags: self.tags,
            labels: self.labels,
        });
        self.hits.push(GroupHit {
            group: id,
            counter: g.counter,
            buckets: Vec::new(),
            len_delta: self.len_delta(),
        });
        Ok(())
    }

    /// Records what the liveness of `g`'s buckets may read: their watched ports, and
    /// their watched groups' buckets', transitively. Each watched group is walked once
    /// and the worker's depth bound is not applied, so this is a superset of what the
    /// worker's choice reads, found in time linear in the groups.
    fn watched<C: RuleTable>(&mut self, g: &Group, v: &PipelineVersion<C>) {
        for b in &g.buckets {
            if let Some(p) = v.config().port(b.watch_port) {
                insert(&mut self.live_slots, p.slot);
            }
            if b.watch_group != GROUP_ANY && insert(&mut self.groups, b.watch_group) {
                if let Some(w) = v.group(b.watch_group) {
                    self.watched(w, v);
                }
            }
        }
    }

    /// Group `group` takes bucket `bucket`.
    pub fn bucket<C: RuleTable>(
        &mut self,
        group: u32,
        bucket: usize,
        v: &PipelineVersion<C>,
    ) -> Result<(), Ineligible> {
        while self.running.last().is_some_and(|r| r.group != group) {
            self.running.pop();
        }
        let (Some(r), Some(g)) = (self.running.last(), v.group(group)) else {
            return Err(Ineligible::Group(format!(
                "a bucket of group {group} ran outside it (a trace this tier cannot follow)"
            )));
        };
        let b = g
            .buckets
            .get(bucket)
            .ok_or_else(|| Ineligible::Group(format!("group {group} has no bucket {bucket}")))?;
        self.tags = r.tags;
        self.labels = r.labels;
        if let Some(h) = self.hits.get_mut(r.hit) {
            h.buckets.push(b.counter);
        }
        Ok(())
    }
}

/// Inserts `x` into the sorted `v` unless there; whether it was new.
fn insert<T: Ord>(v: &mut Vec<T>, x: T) -> bool {
    match v.binary_search(&x) {
        Ok(_) => false,
        Err(i) => {
            v.insert(i, x);
            true
        }
    }
}

#[cfg(test)]
mod tests;
