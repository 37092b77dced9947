//! The agent's authoritative OpenFlow 1.3 group table, sans-IO: no sockets and no clock
//! (calls that need time take `now`, nanoseconds on the caller's monotonic clock).
//!
//! [`GroupTable`] keeps every group as the controller sent it (type and buckets, for
//! `OFPMP_GROUP_DESC`), when it was created, and the groups it refers to. Each accepted
//! [`GroupTable::apply`] changes the datapath through its [`Writer`] at once (unpublished:
//! the caller publishes, at a barrier for instance) and returns a [`GroupChange`] naming
//! the groups it deleted, whose flow entries the caller must remove (1.3.5 §6.5).
//!
//! Semantics (OpenFlow 1.3.5 §6.5):
//! - ADD of an existing id is `OFPGMFC_GROUP_EXISTS`; MODIFY of an absent one is
//!   `OFPGMFC_UNKNOWN_GROUP`. A MODIFY replaces the type and buckets: the spec says the
//!   old entry "must be removed, and the new group entry added", so the group's counters
//!   and duration restart (the datapath gives a replaced group fresh counter slots).
//! - DELETE of an absent id changes nothing and is not an error; `OFPG_ALL` deletes every
//!   group. Deleting a group that another group refers to is `OFPGMFC_CHAINED_GROUP`
//!   (`OFPG_ALL` deletes the referrers too, so it never fails).
//! - Buckets are action sets (1.3.5 §5.6.1), as the datapath runs them: each is checked
//!   and translated by [`action_set_to_datapath`] (its `OFPBAC_*` errors; two actions of
//!   one type are `OFPBAC_TOO_MANY`), and an output to `OFPP_TABLE` is
//!   `OFPBAC_BAD_OUT_PORT` (packet-out only, as for flow entries).
//! - Chaining is supported. A bucket may forward to a group (group action) or watch one
//!   (`watch_group`); both are references. A referenced group must exist: "the action set
//!   for each bucket must be validated using the same rules as those for flow mods", so a
//!   group action to an absent group is `OFPBAC_BAD_OUT_GROUP` (§6.4), and a watch of an
//!   absent group is `OFPGMFC_BAD_WATCH`. References may not form a cycle, the group's
//!   own id included, through any mix of forwarding and watching (`OFPGMFC_LOOP`,
//!   checked for modifies too), nor a chain longer than [`MAX_CHAIN`] groups, the
//!   datapath's bound ([`datapath::group::MAX_DEPTH`]) (`OFPGMFC_CHAINING_UNSUPPORTED`).
//! - Liveness: fast-failover and select groups use it; a bucket of an all or indirect
//!   group that watches a port or group is `OFPGMFC_WATCH_UNSUPPORTED` ("specifying
//!   watch_port or watch_group for a group that does not support liveness"), and so is a
//!   watched reserved port other than `LOCAL` (those have no liveness). A watched port
//!   that does not exist is accepted (ports come and go; its buckets are dead meanwhile).
//!   Output ports are not checked against the switch's ports for the same reason (§6.4
//!   allows a switch with dynamic ports to accept them).
//! - [`GroupMod::validate`] makes the stateless checks first (command, id, type, indirect
//!   with exactly one bucket, weights only in select groups, watch ranges, fast-failover
//!   buckets must watch something): see its comment for the codes.
//! - Limits: [`MAX_GROUPS`] groups (`OFPGMFC_OUT_OF_GROUPS`), [`MAX_BUCKETS`] buckets per
//!   group and [`MAX_TOTAL_BUCKETS`] in all (`OFPGMFC_OUT_OF_BUCKETS`); a datapath out of
//!   counter slots is `OFPGMFC_OUT_OF_GROUPS`.
//!
//! A refused group-mod changes nothing, neither the table nor the datapath: everything is
//! checked before the writer is called, and the writer's only failure (no counter slot)
//! leaves its state unchanged.
//!
//! Invariants, between calls: the datapath's pending version holds exactly the groups of
//! the table, each compiled from its entry; every reference names a group in the table;
//! the reference graph is acyclic and its longest path has at most [`MAX_CHAIN`] groups;
//! `referrers` is the reverse of the entries' `refs`; `total_buckets` is the sum of the
//! entries' bucket counts.
//!
//! Counters come from the datapath ([`Datapath::read_group`]), which reads the published
//! version: a group added or modified since the last publish reads zero (or its previous
//! counters) until the caller publishes.

#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use datapath::group::{Bucket as DpBucket, Group, GroupKind, MAX_DEPTH};
use datapath::pipeline::{Datapath, RuleTable, Writer};
use openflow::action::{action_type, port, Action, OFPG_ALL, OFPG_ANY};
use openflow::v13::group_mod::{Bucket, GroupMod, GroupModCommand, GroupType};
use openflow::v13::multipart::group::group_capabilities;
use openflow::v13::multipart::{BucketCounter, GroupDesc, GroupFeatures, GroupStats};
use openflow::{ErrorKind, OfpError};

use crate::flows::duration_since;
use crate::translate::action_set_to_datapath;

/// Most groups the table holds.
pub const MAX_GROUPS: u32 = 65_536;
/// Most buckets in one group.
pub const MAX_BUCKETS: usize = 1024;
/// Most buckets in all groups together (the datapath has 2^20 bucket counter slots, and
/// a modify holds the old group's slots until the next publish).
pub const MAX_TOTAL_BUCKETS: usize = 1 << 19;
/// Longest chain of groups (forwarding or watching) the table accepts: the depth to which
/// the datapath follows groups.
pub const MAX_CHAIN: usize = MAX_DEPTH;

/// What an accepted group-mod changed that the caller must act on.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GroupChange {
    /// Groups removed, in increasing order: the caller deletes the flow entries whose
    /// actions name them (1.3.5 §6.5).
    pub deleted: Vec<u32>,
}

/// One group as the controller installed it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct GroupEntry {
    group_type: GroupType,
    /// The buckets as sent (for group-desc replies).
    buckets: Vec<Bucket>,
    /// When the group was added or last modified (ns); its duration counts from here.
    created: u64,
    /// Groups a bucket forwards to (group actions).
    forwards: BTreeSet<u32>,
    /// Groups the entry refers to: `forwards` and the watched groups.
    refs: BTreeSet<u32>,
}

/// The group table (see the module comment for the semantics and invariants).
#[derive(Clone, Debug, Default)]
pub struct GroupTable {
    groups: BTreeMap<u32, GroupEntry>,
    /// For each group that others refer to, those others.
    referrers: HashMap<u32, BTreeSet<u32>>,
    total_buckets: usize,
}

fn err(kind: ErrorKind, detail: String) -> OfpError {
    OfpError::new(kind, detail)
}

/// A group-mod checked against the table, ready to install.
struct Checked {
    group: Group,
    forwards: BTreeSet<u32>,
    refs: BTreeSet<u32>,
}

impl GroupTable {
    /// An empty table.
    pub fn new() -> GroupTable {
        GroupTable::default()
    }

    /// Whether group `id` exists.
    pub fn contains(&self, id: u32) -> bool {
        self.groups.contains_key(&id)
    }

    /// The buckets of group `id`, as the controller sent them.
    pub fn buckets(&self, id: u32) -> Option<&[Bucket]> {
        self.groups.get(&id).map(|e| e.buckets.as_slice())
    }

    /// Number of groups.
    pub fn len(&self) -> usize {
        self.groups.len()
    }

    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// The group ids, in increasing order.
    pub fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.groups.keys().copied()
    }

    /// Validates `gm` and applies it at `now`, changing the datapath through `w`
    /// (unpublished). On error nothing changed.
    pub fn apply<C: RuleTable>(
        &mut self,
        gm: &GroupMod,
        w: &mut Writer<C>,
        now: u64,
    ) -> Result<GroupChange, OfpError> {
        gm.validate()?;
        match gm.command {
            GroupModCommand::Delete => self.delete(gm.group_id, w),
            GroupModCommand::Add | GroupModCommand::Modify => {
                let checked = self.check(gm)?;
                self.install(gm, checked, w, now)?;
                Ok(GroupChange::default())
            }
            // `validate` refused it.
            GroupModCommand::Unknown(n) => Err(err(
                ErrorKind::GROUP_MOD_FAILED_BAD_COMMAND,
                format!("group-mod command {n} is not defined"),
            )),
        }
    }

    fn delete<C: RuleTable>(
        &mut self,
        id: u32,
        w: &mut Writer<C>,
    ) -> Result<GroupChange, OfpError> {
        if id == OFPG_ALL {
            let deleted: Vec<u32> = self.groups.keys().copied().collect();
            for &g in &deleted {
                w.remove_group(g);
            }
            self.groups.clear();
            self.referrers.clear();
            self.total_buckets = 0;
            return Ok(GroupChange { deleted });
        }
        if !self.groups.contains_key(&id) {
            return Ok(GroupChange::default());
        }
        if let Some(by) = self.referrers.get(&id).and_then(|s| s.first()) {
            return Err(err(
                ErrorKind::GROUP_MOD_FAILED_CHAINED_GROUP,
                format!("group {id} is referred to by group {by}"),
            ));
        }
        w.remove_group(id);
        self.remove_entry(id);
        Ok(GroupChange { deleted: vec![id] })
    }

    /// Removes `id`'s entry and its references (not the datapath's group).
    fn remove_entry(&mut self, id: u32) -> Option<GroupEntry> {
        let old = self.groups.remove(&id)?;
        self.total_buckets -= old.buckets.len();
        for r in &old.refs {
            if let Some(s) = self.referrers.get_mut(r) {
                s.remove(&id);
                if s.is_empty() {
                    self.referrers.remove(r);
                }
            }
        }
        Some(old)
    }

    /// Every stateful check of an add or modify that passed [`GroupMod::validate`], and
    /// the datapath group it compiles to.
    fn check(&self, gm: &GroupMod) -> Result<Checked, OfpError> {
        let id = gm.group_id;
        let old = self.groups.get(&id);
        match (gm.command, old) {
            (GroupModCommand::Add, Some(_)) => {
                return Err(err(
                    ErrorKind::GROUP_MOD_FAILED_GROUP_EXISTS,
                    format!("group {id} already exists"),
                ))
            }
            (GroupModCommand::Modify, None) => {
                return Err(err(
                    ErrorKind::GROUP_MOD_FAILED_UNKNOWN_GROUP,
                    format!("group {id} does not exist"),
                ))
            }
            _ => {}
        }
        if old.is_none() && self.groups.len() >= MAX_GROUPS as usize {
            return Err(err(
                ErrorKind::GROUP_MOD_FAILED_OUT_OF_GROUPS,
                format!("the switch holds at most {MAX_GROUPS} groups"),
            ));
        }
        if gm.buckets.len() > MAX_BUCKETS {
            return Err(err(
                ErrorKind::GROUP_MOD_FAILED_OUT_OF_BUCKETS,
                format!("{} buckets: a group holds at most {MAX_BUCKETS}", gm.buckets.len()),
            ));
        }
        let total = self.total_buckets - old.map_or(0, |o| o.buckets.len()) + gm.buckets.len();
        if total > MAX_TOTAL_BUCKETS {
            return Err(err(
                ErrorKind::GROUP_MOD_FAILED_OUT_OF_BUCKETS,
                format!("the switch holds at most {MAX_TOTAL_BUCKETS} buckets in all"),
            ));
        }
        let kind = match gm.group_type {
            GroupType::All => GroupKind::All,
            GroupType::Select => GroupKind::Select,
            GroupType::Indirect => GroupKind::Indirect,
            GroupType::FastFailover => GroupKind::FastFailover,
            GroupType::Unknown(n) => {
                return Err(err(
                    ErrorKind::GROUP_MOD_FAILED_BAD_TYPE,
                    format!("group type {n} is not defined"),
                ))
            }
        };
        let liveness = matches!(kind, GroupKind::Select | GroupKind::FastFailover);
        let mut forwards = BTreeSet::new();
        let mut refs = BTreeSet::new();
        let mut buckets = Vec::with_capacity(gm.buckets.len());
        for (i, b) in gm.buckets.iter().enumerate() {
            let actions = action_set_to_datapath(&b.actions).map_err(OfpError::from)?;
            for a in &b.actions {
                match *a {
                    Action::Output { port: port::TABLE, .. } => {
                        return Err(err(
                            ErrorKind::BAD_ACTION_BAD_OUT_PORT,
                            format!("bucket {i}: output to TABLE is only valid in packet-out"),
                        ))
                    }
                    Action::Group(g) => {
                        self.check_ref(id, g, i, ErrorKind::BAD_ACTION_BAD_OUT_GROUP)?;
                        forwards.insert(g);
                        refs.insert(g);
                    }
                    _ => {}
                }
            }
            if b.has_watch() && !liveness {
                return Err(err(
                    ErrorKind::GROUP_MOD_FAILED_WATCH_UNSUPPORTED,
                    format!(
                        "bucket {i} watches a port or group, but {:?} groups do not use liveness",
                        gm.group_type
                    ),
                ));
            }
            if (port::IN_PORT..=port::CONTROLLER).contains(&b.watch_port) {
                return Err(err(
                    ErrorKind::GROUP_MOD_FAILED_WATCH_UNSUPPORTED,
                    format!(
                        "bucket {i} watches reserved port {:#x}, which has no liveness",
                        b.watch_port
                    ),
                ));
            }
            if b.watch_group != OFPG_ANY {
                self.check_ref(id, b.watch_group, i, ErrorKind::GROUP_MOD_FAILED_BAD_WATCH)?;
                refs.insert(b.watch_group);
            }
            buckets.push(
                DpBucket::new(actions).with_weight(b.weight).watching(b.watch_port, b.watch_group),
            );
        }
        self.check_graph(id, &refs)?;
        Ok(Checked { group: Group::new(id, kind, buckets), forwards, refs })
    }

    /// A bucket of group `id` refers to group `to`: it must exist (else `missing`) and not
    /// be `id` itself (a loop).
    fn check_ref(
        &self,
        id: u32,
        to: u32,
        bucket: usize,
        missing: ErrorKind,
    ) -> Result<(), OfpError> {
        if to == id {
            return Err(err(
                ErrorKind::GROUP_MOD_FAILED_LOOP,
                format!("bucket {bucket} of group {id} refers to the group itself"),
            ));
        }
        if !self.groups.contains_key(&to) {
            return Err(err(
                missing,
                format!("bucket {bucket} refers to group {to}, which does not exist"),
            ));
        }
        Ok(())
    }

    /// Checks that giving group `id` the references `refs` (replacing its own) makes no
    /// cycle and no chain longer than [`MAX_CHAIN`].
    fn check_graph(&self, id: u32, refs: &BTreeSet<u32>) -> Result<(), OfpError> {
        // A cycle through `id` is a path from one of its new references back to it; the
        // rest of the graph is acyclic, and `id`'s old references cannot be on such a
        // path (it would pass through `id` first).
        for &r in refs {
            if self.reaches(r, id) {
                return Err(err(
                    ErrorKind::GROUP_MOD_FAILED_LOOP,
                    format!("group {id} would refer to group {r}, which leads back to it"),
                ));
            }
        }
        let mut below = HashMap::new();
        let down = 1 + refs.iter().map(|&r| self.height(r, &mut below)).max().unwrap_or(0);
        let mut above = HashMap::new();
        let up = self.depth_above(id, &mut above);
        let chain = up + down - 1;
        if chain > MAX_CHAIN {
            return Err(err(
                ErrorKind::GROUP_MOD_FAILED_CHAINING_UNSUPPORTED,
                format!(
                    "group {id} would be on a chain of {chain} groups; the switch follows at \
                     most {MAX_CHAIN}"
                ),
            ));
        }
        Ok(())
    }

    /// Whether `target` is reachable from `from` along references.
    fn reaches(&self, from: u32, target: u32) -> bool {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from];
        while let Some(g) = stack.pop() {
            if g == target {
                return true;
            }
            if !seen.insert(g) {
                continue;
            }
            if let Some(e) = self.groups.get(&g) {
                stack.extend(e.refs.iter().copied());
            }
        }
        false
    }

    /// Groups on the longest chain starting at `g` (itself included). The graph is
    /// acyclic with chains of at most [`MAX_CHAIN`] groups, which bounds the recursion.
    fn height(&self, g: u32, memo: &mut HashMap<u32, usize>) -> usize {
        if let Some(&h) = memo.get(&g) {
            return h;
        }
        let h = 1 + self
            .groups
            .get(&g)
            .map_or(0, |e| e.refs.iter().map(|&r| self.height(r, memo)).max().unwrap_or(0));
        memo.insert(g, h);
        h
    }

    /// Groups on the longest chain ending at `g` (itself included), following referrers.
    fn depth_above(&self, g: u32, memo: &mut HashMap<u32, usize>) -> usize {
        if let Some(&d) = memo.get(&g) {
            return d;
        }
        let d = 1 + self
            .referrers
            .get(&g)
            .map_or(0, |s| s.iter().map(|&p| self.depth_above(p, memo)).max().unwrap_or(0));
        memo.insert(g, d);
        d
    }

    /// Puts a checked group into the datapath, then the table.
    fn install<C: RuleTable>(
        &mut self,
        gm: &GroupMod,
        c: Checked,
        w: &mut Writer<C>,
        now: u64,
    ) -> Result<(), OfpError> {
        let id = gm.group_id;
        w.set_group(c.group).map_err(|e| {
            err(
                ErrorKind::GROUP_MOD_FAILED_OUT_OF_GROUPS,
                format!("the datapath has no counter slots left for group {id} ({e:?})"),
            )
        })?;
        self.remove_entry(id);
        for &r in &c.refs {
            self.referrers.entry(r).or_default().insert(id);
        }
        self.total_buckets += gm.buckets.len();
        self.groups.insert(
            id,
            GroupEntry {
                group_type: gm.group_type,
                buckets: gm.buckets.clone(),
                created: now,
                forwards: c.forwards,
                refs: c.refs,
            },
        );
        Ok(())
    }

    /// The `OFPMP_GROUP_DESC` reply entries: every group, by increasing id.
    pub fn desc(&self) -> Vec<GroupDesc> {
        self.groups
            .iter()
            .map(|(&group_id, e)| GroupDesc {
                group_type: e.group_type,
                group_id,
                buckets: e.buckets.clone(),
            })
            .collect()
    }

    /// Number of groups that forward to `id` (group actions in their buckets; watching
    /// is not forwarding).
    pub fn forwarders(&self, id: u32) -> u32 {
        let n = self.referrers.get(&id).map_or(0, |s| {
            s.iter()
                .filter(|p| self.groups.get(p).is_some_and(|e| e.forwards.contains(&id)))
                .count()
        });
        u32::try_from(n).unwrap_or(u32::MAX)
    }

    /// The `OFPMP_GROUP` reply entries for `group_id` (`OFPG_ALL`: every group, by
    /// increasing id; an absent group: none) at `now`. Counters are the datapath's
    /// (published version); `ref_count` is `flow_refs(id)` (the flow entries whose
    /// actions name the group, which the caller knows) plus [`GroupTable::forwarders`].
    pub fn stats<C: RuleTable>(
        &self,
        dp: &Datapath<C>,
        group_id: u32,
        now: u64,
        flow_refs: impl Fn(u32) -> u32,
    ) -> Vec<GroupStats> {
        let one = |(&id, e): (&u32, &GroupEntry)| {
            let (g, buckets) = dp.read_group(id).unwrap_or_default();
            let (duration_sec, duration_nsec) = duration_since(e.created, now);
            GroupStats {
                group_id: id,
                ref_count: flow_refs(id).saturating_add(self.forwarders(id)),
                packet_count: g.packets,
                byte_count: g.bytes,
                duration_sec,
                duration_nsec,
                bucket_stats: (0..e.buckets.len())
                    .map(|i| {
                        buckets.get(i).map_or_else(BucketCounter::default, |s| BucketCounter {
                            packet_count: s.packets,
                            byte_count: s.bytes,
                        })
                    })
                    .collect(),
            }
        };
        if group_id == OFPG_ALL {
            self.groups.iter().map(one).collect()
        } else {
            self.groups.get_key_value(&group_id).map(one).into_iter().collect()
        }
    }

    /// The `OFPMP_GROUP_FEATURES` reply: all four types, weighted select, liveness,
    /// chaining with checks, [`MAX_GROUPS`] groups (of all types together), and every
    /// standard action in buckets.
    pub fn features() -> GroupFeatures {
        let actions = [
            action_type::OUTPUT,
            action_type::COPY_TTL_OUT,
            action_type::COPY_TTL_IN,
            action_type::SET_MPLS_TTL,
            action_type::DEC_MPLS_TTL,
            action_type::PUSH_VLAN,
            action_type::POP_VLAN,
            action_type::PUSH_MPLS,
            action_type::POP_MPLS,
            action_type::SET_QUEUE,
            action_type::GROUP,
            action_type::SET_NW_TTL,
            action_type::DEC_NW_TTL,
            action_type::SET_FIELD,
            action_type::PUSH_PBB,
            action_type::POP_PBB,
        ]
        .iter()
        .fold(0u32, |m, &t| m | 1 << t);
        GroupFeatures {
            types: (1 << GroupType::All.to_u8())
                | (1 << GroupType::Select.to_u8())
                | (1 << GroupType::Indirect.to_u8())
                | (1 << GroupType::FastFailover.to_u8()),
            capabilities: group_capabilities::SELECT_WEIGHT
                | group_capabilities::SELECT_LIVENESS
                | group_capabilities::CHAINING
                | group_capabilities::CHAINING_CHECKS,
            max_groups: [MAX_GROUPS; 4],
            actions: [actions; 4],
        }
    }
}
