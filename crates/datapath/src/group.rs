//! Groups: a list of buckets, each an action set, and a rule for which buckets a packet
//! takes (OpenFlow 1.3 §5.6).
//!
//! - `All`: every bucket, each on its own copy of the packet (flooding, multicast).
//! - `Select`: one live bucket, chosen by a hash of the flow key weighted by the buckets'
//!   weights — the same flow always takes the same bucket while the group and port
//!   liveness are unchanged.
//! - `Indirect`: the single bucket.
//! - `FastFailover`: the first live bucket.
//!
//! A bucket is live when its watched port is up (per [`PortLiveness`]) and its watched
//! group is live (has a live bucket); `ANY` watches nothing. Watch chains are followed to
//! [`MAX_DEPTH`] groups, beyond which a bucket counts as dead (the agent refuses loops;
//! the bound keeps a malformed chain from recursing without end). Bucket actions are
//! compiled into an [`ActionSet`] when the group is set.

use std::sync::Arc;

use crate::action::{port, Action};
use crate::key::FlowKey;
use crate::pipeline::{ActionSet, DatapathConfig, IdMap, PortLiveness};

/// `OFPG_ANY`: no watched group.
pub const GROUP_ANY: u32 = 0xffff_ffff;
/// Deepest chain of groups followed (watch groups and group actions in buckets).
pub const MAX_DEPTH: usize = 8;

/// The group type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GroupKind {
    All,
    Select,
    Indirect,
    FastFailover,
}

/// One bucket.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bucket {
    /// Select groups: share of the traffic (0: never chosen).
    pub weight: u16,
    /// Port whose liveness the bucket follows (`port::ANY`: none).
    pub watch_port: u32,
    /// Group whose liveness the bucket follows ([`GROUP_ANY`]: none).
    pub watch_group: u32,
    pub actions: Vec<Action>,
    pub(crate) set: ActionSet,
    pub(crate) counter: u32,
}

impl Bucket {
    /// A bucket of weight 1 watching nothing.
    pub fn new(actions: Vec<Action>) -> Bucket {
        let set = ActionSet::from_actions(&actions);
        Bucket {
            weight: 1,
            watch_port: port::ANY,
            watch_group: GROUP_ANY,
            actions,
            set,
            counter: 0,
        }
    }

    pub fn with_weight(mut self, w: u16) -> Bucket {
        self.weight = w;
        self
    }

    pub fn watching(mut self, port: u32, group: u32) -> Bucket {
        self.watch_port = port;
        self.watch_group = group;
        self
    }
}

/// A group table entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    pub id: u32,
    pub kind: GroupKind,
    pub buckets: Vec<Bucket>,
    pub(crate) counter: u32,
}

impl Group {
    pub fn new(id: u32, kind: GroupKind, buckets: Vec<Bucket>) -> Group {
        Group { id, kind, buckets, counter: 0 }
    }

    /// Recompiles the buckets' action sets (after `actions` changed).
    pub(crate) fn compile(&mut self) {
        for b in &mut self.buckets {
            b.set = ActionSet::from_actions(&b.actions);
        }
    }
}

/// What group decisions read: the groups, the ports and their liveness.
pub(crate) struct GroupEnv<'a> {
    pub groups: &'a IdMap<Arc<Group>>,
    pub config: &'a DatapathConfig,
    pub live: &'a PortLiveness,
}

impl GroupEnv<'_> {
    fn port_live(&self, no: u32) -> bool {
        no == port::ANY || self.config.port(no).is_some_and(|p| self.live.is_live(p.slot))
    }

    /// Whether `b` is live, following watched groups down to `depth`.
    pub fn bucket_live(&self, b: &Bucket, depth: usize) -> bool {
        self.port_live(b.watch_port)
            && (b.watch_group == GROUP_ANY
                || (depth < MAX_DEPTH
                    && self
                        .groups
                        .get(b.watch_group)
                        .is_some_and(|g| g.buckets.iter().any(|c| self.bucket_live(c, depth + 1)))))
    }

    /// Calls `f` with the index of every bucket the packet takes, in order.
    #[inline]
    pub fn choose(&self, g: &Group, key: &FlowKey, depth: usize, mut f: impl FnMut(usize)) {
        match g.kind {
            GroupKind::All => (0..g.buckets.len()).for_each(f),
            GroupKind::Indirect => {
                if !g.buckets.is_empty() {
                    f(0)
                }
            }
            GroupKind::FastFailover => {
                if let Some(i) = g.buckets.iter().position(|b| self.bucket_live(b, depth)) {
                    f(i)
                }
            }
            GroupKind::Select => {
                if let Some(i) = self.select(g, key, depth) {
                    f(i)
                }
            }
        }
    }

    fn select(&self, g: &Group, key: &FlowKey, depth: usize) -> Option<usize> {
        let usable = |b: &Bucket| b.weight > 0 && self.bucket_live(b, depth);
        let total: u64 = g.buckets.iter().filter(|b| usable(b)).map(|b| b.weight as u64).sum();
        if total == 0 {
            return None;
        }
        let mut pick = flow_hash(key) % total;
        for (i, b) in g.buckets.iter().enumerate() {
            if usable(b) {
                let w = b.weight as u64;
                if pick < w {
                    return Some(i);
                }
                pick -= w;
            }
        }
        None
    }
}

/// A hash of the whole key (stable for a flow, well mixed across flows).
#[inline]
pub fn flow_hash(key: &FlowKey) -> u64 {
    let mut h: u64 = 0x9e37_79b9_7f4a_7c15;
    for &w in &key.words {
        h = (h ^ w).wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 32;
    }
    h ^= h >> 29;
    h.wrapping_mul(0xc4ce_b9fe_1a85_ec53) ^ (h >> 32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::Field;
    use crate::pipeline::PortInfo;

    fn env_parts() -> (IdMap<Arc<Group>>, DatapathConfig, PortLiveness) {
        let config = DatapathConfig {
            ports: vec![PortInfo::new(1, 0), PortInfo::new(2, 1), PortInfo::new(3, 2)],
            ..DatapathConfig::default()
        };
        (IdMap::default(), config, PortLiveness::new())
    }

    fn chosen(env: &GroupEnv, g: &Group, key: &FlowKey) -> Vec<usize> {
        let mut v = Vec::new();
        env.choose(g, key, 0, |i| v.push(i));
        v
    }

    #[test]
    fn fast_failover_takes_first_live_bucket() {
        let (mut groups, config, live) = env_parts();
        let ff = Group::new(
            1,
            GroupKind::FastFailover,
            vec![
                Bucket::new(vec![Action::Output(1)]).watching(1, GROUP_ANY),
                Bucket::new(vec![Action::Output(2)]).watching(2, GROUP_ANY),
                Bucket::new(vec![Action::Output(3)]).watching(port::ANY, 7),
            ],
        );
        let g7 =
            Group::new(7, GroupKind::Indirect, vec![Bucket::new(vec![]).watching(3, GROUP_ANY)]);
        groups.insert(7, Arc::new(g7));
        let env = GroupEnv { groups: &groups, config: &config, live: &live };
        let k = FlowKey::ZERO;
        assert_eq!(chosen(&env, &ff, &k), vec![0]);
        live.set(0, false);
        assert_eq!(chosen(&env, &ff, &k), vec![1]);
        live.set(1, false);
        assert_eq!(chosen(&env, &ff, &k), vec![2]);
        live.set(2, false);
        assert_eq!(chosen(&env, &ff, &k), Vec::<usize>::new());
        live.set(0, true);
        assert_eq!(chosen(&env, &ff, &k), vec![0]);
    }

    #[test]
    fn select_is_stable_per_flow_weighted_and_skips_dead() {
        let (groups, config, live) = env_parts();
        let g = Group::new(
            1,
            GroupKind::Select,
            vec![
                Bucket::new(vec![]).with_weight(1).watching(1, GROUP_ANY),
                Bucket::new(vec![]).with_weight(3).watching(2, GROUP_ANY),
                Bucket::new(vec![]).with_weight(0),
            ],
        );
        let env = GroupEnv { groups: &groups, config: &config, live: &live };
        let mut counts = [0usize; 3];
        for i in 0..4000u32 {
            let mut k = FlowKey::ZERO;
            k.set(Field::Ipv4Src, i as u128);
            let c = chosen(&env, &g, &k);
            assert_eq!(c, chosen(&env, &g, &k), "stable per flow");
            counts[c[0]] += 1;
        }
        assert_eq!(counts[2], 0, "weight 0 is never chosen");
        assert!((800..1200).contains(&counts[0]), "{counts:?}");
        assert!((2800..3200).contains(&counts[1]), "{counts:?}");
        live.set(1, false);
        for i in 0..100u32 {
            let mut k = FlowKey::ZERO;
            k.set(Field::Ipv4Src, i as u128);
            assert_eq!(chosen(&env, &g, &k), vec![0]);
        }
    }

    #[test]
    fn all_and_indirect_and_watch_loops_terminate() {
        let (mut groups, config, live) = env_parts();
        let looped = Group::new(
            9,
            GroupKind::FastFailover,
            vec![Bucket::new(vec![]).watching(port::ANY, 9)],
        );
        groups.insert(9, Arc::new(looped.clone()));
        let env = GroupEnv { groups: &groups, config: &config, live: &live };
        assert_eq!(chosen(&env, &looped, &FlowKey::ZERO), Vec::<usize>::new());
        let all = Group::new(2, GroupKind::All, vec![Bucket::new(vec![]); 3]);
        assert_eq!(chosen(&env, &all, &FlowKey::ZERO), vec![0, 1, 2]);
        let ind = Group::new(3, GroupKind::Indirect, vec![Bucket::new(vec![])]);
        assert_eq!(chosen(&env, &ind, &FlowKey::ZERO), vec![0]);
    }
}
