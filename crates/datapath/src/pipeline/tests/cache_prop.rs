//! The exact-match cache never changes a decision: random rules in three tables, random
//! packets, random updates; a cached worker, an uncached one (on an identical datapath)
//! and the tracer must agree on every output, packet-in and counter. A third worker with a
//! cache processes the same packets in staged batches (`Batch::process_batch`) and must
//! produce the same again.

use proptest::collection::vec;
use proptest::prelude::*;

use super::*;
use crate::action::port;
use crate::counters::Misc;
use crate::group::{Bucket, Group, GroupKind};

#[derive(Clone, Debug)]
struct RuleSpec {
    table: u8,
    priority: u16,
    in_port: Option<u32>,
    dst: Option<u64>,
    src: Option<u64>,
    metadata: Option<u64>,
    apply: Vec<Action>,
    write: Option<Vec<Action>>,
    write_metadata: Option<u64>,
    goto: Option<u8>,
}

impl RuleSpec {
    fn flow_match(&self) -> FlowMatch {
        let mut m = FlowMatch::ANY;
        if let Some(p) = self.in_port {
            m = m.exact(Field::InPort, p as u128);
        }
        if let Some(d) = self.dst {
            m = m.exact(Field::EthDst, d as u128);
        }
        if let Some(s) = self.src {
            m = m.exact(Field::EthSrc, s as u128);
        }
        if let Some(md) = self.metadata {
            m = m.masked(Field::Metadata, md as u128, 3);
        }
        m
    }

    fn rule(&self) -> Rule {
        let mut r = Rule::new(
            self.flow_match(),
            self.priority,
            Instructions {
                apply: self.apply.clone(),
                write_actions: self.write.clone(),
                write_metadata: self.write_metadata.map(|v| (v, 3)),
                goto_table: self.goto.filter(|&g| g > self.table),
                ..Instructions::default()
            },
        );
        r.cookie = self.priority as u64 * 1000 + self.table as u64;
        r
    }
}

fn action() -> impl Strategy<Value = Action> {
    prop_oneof![
        (1u32..5).prop_map(Action::Output),
        Just(Action::Output(port::FLOOD)),
        Just(Action::Output(port::IN_PORT)),
        (0u64..4).prop_map(|v| Action::SetField(Field::EthSrc, v as u128)),
        (0u64..4).prop_map(|v| Action::SetField(Field::EthDst, v as u128)),
        Just(Action::Controller { max_len: 20 }),
        Just(Action::Group(1)),
        Just(Action::SetQueue(4)),
        Just(Action::PushVlan(0x8100)),
        Just(Action::PopVlan),
    ]
}

prop_compose! {
    fn rule_spec()(
        table in 0u8..3,
        priority in 0u16..4,
        in_port in proptest::option::of(1u32..5),
        dst in proptest::option::of(0u64..4),
        src in proptest::option::of(0u64..4),
        metadata in proptest::option::of(0u64..4),
        mut apply in vec(action(), 0..3),
        mut write in proptest::option::of(vec(action(), 0..2)),
        mut write_metadata in proptest::option::of(0u64..4),
        mut goto in proptest::option::of(1u8..3),
        shape in 0u8..4,
    ) -> RuleSpec {
        // A quarter of the rules take the shapes the fast paths know: one
        // apply-output to a port, or one goto.
        match (shape, goto) {
            (0, _) => {
                apply = vec![Action::Output(1 + (priority as u32 % 4))];
                (write, write_metadata, goto) = (None, None, None);
            }
            (1, Some(_)) => {
                apply.clear();
                (write, write_metadata) = (None, None);
            }
            _ => {}
        }
        RuleSpec { table, priority, in_port, dst, src, metadata, apply, write, write_metadata, goto }
    }
}

type Pkt = (u32, u64, u64);
/// What one packet produced: (port, queue, bytes) per output, and the packet-ins.
type Produced = (Vec<(u32, Option<u32>, Vec<u8>)>, Vec<PacketIn>);

fn packets() -> impl Strategy<Value = Vec<Pkt>> {
    vec((1u32..5, 0u64..4, 0u64..4), 1..60)
}

/// One datapath with a worker, identical in both copies of the experiment.
struct Side {
    dp: Datapath,
    wr: Writer,
    rx: std::sync::mpsc::Receiver<PacketIn>,
    w: WorkerState,
}

impl Side {
    fn new(cache: usize) -> Side {
        let (dp, mut wr, rx) = Datapath::new(config(4), 10_000);
        let buckets = (1..=3).map(|p| Bucket::new(vec![Action::Output(p)])).collect();
        wr.set_group(Group::new(1, GroupKind::Select, buckets)).unwrap();
        let w = dp.worker(cache);
        Side { dp, wr, rx, w }
    }

    fn apply(&mut self, rules: &[RuleSpec], removes: &[RuleSpec]) {
        for r in removes {
            self.wr.remove_rule(r.table, &r.flow_match(), r.priority);
        }
        for r in rules {
            self.wr.insert_rule(r.table, r.rule()).unwrap();
        }
        self.wr.publish();
    }

    /// Outputs (port, queue, bytes), NORMAL packets and packet-ins of one packet.
    fn run(&mut self, p: Pkt) -> Produced {
        let out = run(&self.dp, &mut self.w, &frame(p.1, p.2), p.0, 0);
        let tx = out.tx.iter().map(|t| (t.port, t.queue, t.packet.data().to_vec())).collect();
        (tx, self.rx.try_iter().collect())
    }

    /// Outputs and packet-ins of `pkts` processed as batches of `size` packets.
    fn run_batched(&mut self, pkts: &[Pkt], size: usize) -> Produced {
        let mut out = Outputs::new();
        for chunk in pkts.chunks(size.max(1)) {
            let mut v: Vec<(Packet, u32)> =
                chunk.iter().map(|p| (Packet::from_slice(&frame(p.1, p.2)), p.0)).collect();
            self.dp.batch(&mut self.w, 0).process_batch(&mut v, &mut out);
            assert!(v.is_empty());
        }
        let tx = out.tx.iter().map(|t| (t.port, t.queue, t.packet.data().to_vec())).collect();
        (tx, self.rx.try_iter().collect())
    }

    fn counters(&self, max_id: u32) -> Vec<(u64, u64)> {
        let mut v: Vec<(u64, u64)> = (0..max_id)
            .map(|i| {
                let s = self.dp.read_rule(i);
                (s.packets, s.bytes)
            })
            .collect();
        v.extend((0..3).map(|t| {
            let s = self.dp.read_table(t);
            (s.lookups, s.matched)
        }));
        v
    }
}

fn check_round(
    cached: &mut Side,
    plain: &mut Side,
    batched: &mut Side,
    pkts: &[Pkt],
    size: usize,
) -> Result<(), TestCaseError> {
    let mut all: Produced = (Vec::new(), Vec::new());
    let mut twice = Vec::new();
    for &p in pkts {
        // Twice: the second run of a flow is a cache hit.
        for _ in 0..2 {
            twice.push(p);
            let a = cached.run(p);
            let b = plain.run(p);
            prop_assert_eq!(&a, &b, "packet {:?}", p);
            let t = plain.dp.trace(&frame(p.1, p.2), p.0, 0);
            let traced: Vec<u32> = t.outputs.tx.iter().map(|t| t.port).collect();
            prop_assert_eq!(traced, b.0.iter().map(|t| t.0).collect::<Vec<_>>());
            prop_assert_eq!(t.packet_ins().len(), b.1.len());
            all.0.extend(b.0);
            all.1.extend(b.1);
        }
    }
    prop_assert_eq!(batched.run_batched(&twice, size), all);
    prop_assert_eq!(cached.counters(200), plain.counters(200));
    prop_assert_eq!(batched.counters(200), plain.counters(200));
    for m in [Misc::Packets, Misc::TableMissDrops, Misc::PacketIns] {
        prop_assert_eq!(batched.dp.read_misc(m), plain.dp.read_misc(m));
    }
    prop_assert_eq!(
        batched.dp.read_misc(Misc::CacheHits) + batched.dp.read_misc(Misc::CacheMisses),
        cached.dp.read_misc(Misc::CacheHits) + cached.dp.read_misc(Misc::CacheMisses)
    );
    for slot in 0..4 {
        prop_assert_eq!(batched.dp.read_port(slot), plain.dp.read_port(slot));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn cached_decisions_equal_uncached(
        rules in vec(rule_spec(), 1..25),
        pkts in packets(),
        removes in vec(0usize..25, 0..8),
        more in vec(rule_spec(), 0..10),
        pkts2 in packets(),
        size in 1usize..80,
    ) {
        let mut cached = Side::new(64);
        let mut plain = Side::new(0);
        let mut batched = Side::new(64);
        cached.apply(&rules, &[]);
        plain.apply(&rules, &[]);
        batched.apply(&rules, &[]);
        check_round(&mut cached, &mut plain, &mut batched, &pkts, size)?;
        let removed: Vec<RuleSpec> = removes.iter().filter_map(|&i| rules.get(i).cloned()).collect();
        cached.apply(&more, &removed);
        plain.apply(&more, &removed);
        batched.apply(&more, &removed);
        check_round(&mut cached, &mut plain, &mut batched, &pkts, size)?;
        check_round(&mut cached, &mut plain, &mut batched, &pkts2, size)?;
    }
}
