//! The learning switch against a model: a plain `HashMap` with the same rules, one
//! handler, random packets, time steps and table operations. Outputs, counters and the
//! live entries must agree after every step.

use std::collections::HashMap;

use proptest::prelude::*;

use super::{send, table};
use crate::normal::{MacTable, MacTableConfig, NormalStats, NormalSwitch};

const CAPACITY: usize = 4;
const AGING: u64 = 20;
const REFRESH: u64 = 5;
const MACS: [u64; 9] = [
    0x0200_0000_0001,
    0x0200_0000_0002,
    0x0200_0000_0003,
    0x0200_0000_0004,
    0x0200_0000_0005,
    0x0200_0000_0006,
    0x0100_5e00_0001,
    0xffff_ffff_ffff,
    0,
];
const VLANS: [u16; 2] = [0, 0x1005];

/// The rules of the parent module's comment, written plainly: every entry kept until
/// removed (expired ones included), the oldest found by a scan.
#[derive(Debug)]
struct Model {
    ports: Vec<u32>,
    /// (VLAN, MAC) → (port, last seen, sequence number).
    map: HashMap<(u16, u64), (u32, u64, u64)>,
    seq: u64,
    stats: NormalStats,
}

impl Model {
    fn alive(last_seen: u64, now: u64) -> bool {
        now - last_seen < AGING
    }

    fn set(&mut self, k: (u16, u64), port: u32, now: u64) {
        self.map.insert(k, (port, now, self.seq));
        self.seq += 1;
    }

    fn packet(&mut self, in_port: u32, vlan: u16, src: u64, dst: u64, now: u64) -> Vec<u32> {
        let group = |m: u64| m >> 40 & 1 == 1;
        if !group(src) && src != 0 && self.ports.contains(&in_port) {
            let k = (vlan, src);
            match self.map.get(&k).copied() {
                Some((p, seen, _)) if Self::alive(seen, now) => {
                    if p != in_port {
                        self.stats.moved += 1;
                        self.set(k, in_port, now);
                    } else if now - seen >= REFRESH {
                        self.set(k, in_port, now);
                    }
                }
                Some(_) => {
                    self.stats.learned += 1;
                    self.set(k, in_port, now);
                }
                None => {
                    if self.map.len() >= CAPACITY {
                        let (&old, &(_, seen, _)) =
                            self.map.iter().min_by_key(|(_, &(_, seen, seq))| (seen, seq)).unwrap();
                        if Self::alive(seen, now) {
                            self.stats.evicted += 1;
                        }
                        self.map.remove(&old);
                    }
                    self.stats.learned += 1;
                    self.set(k, in_port, now);
                }
            }
        }
        let to = if group(dst) {
            None
        } else {
            self.map
                .get(&(vlan, dst))
                .filter(|&&(_, seen, _)| Self::alive(seen, now))
                .map(|&(p, _, _)| p)
        };
        match to {
            Some(p) if p == in_port => {
                self.stats.dropped += 1;
                vec![]
            }
            Some(p) => {
                self.stats.forwarded += 1;
                vec![p]
            }
            None => {
                self.stats.flooded += 1;
                self.ports.iter().copied().filter(|&p| p != in_port).collect()
            }
        }
    }

    fn live(&self, now: u64) -> Vec<(u16, u64, u32)> {
        let mut v: Vec<_> = self
            .map
            .iter()
            .filter(|(_, &(_, seen, _))| Self::alive(seen, now))
            .map(|(&(vlan, mac), &(p, _, _))| (vlan, mac, p))
            .collect();
        v.sort_unstable();
        v
    }
}

/// A change made through the table between batches.
#[derive(Clone, Debug)]
enum Control {
    SetPorts(Vec<u32>),
    Forget(u32),
    Flush,
}

#[derive(Clone, Debug)]
enum Op {
    Packet {
        in_port: u32,
        vlan: usize,
        src: usize,
        dst: usize,
    },
    /// Advance time by `dt`, apply `control`, begin a batch.
    Batch {
        dt: u64,
        control: Option<Control>,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let control = prop_oneof![
        3 => Just(None),
        1 => proptest::collection::vec(1u32..=5, 0..5).prop_map(|p| Some(Control::SetPorts(p))),
        1 => (1u32..=5).prop_map(|p| Some(Control::Forget(p))),
        1 => Just(Some(Control::Flush)),
    ];
    prop_oneof![
        6 => (1u32..=5, 0..VLANS.len(), 0..MACS.len(), 0..MACS.len())
            .prop_map(|(in_port, vlan, src, dst)| Op::Packet { in_port, vlan, src, dst }),
        2 => (prop_oneof![Just(0u64), Just(1), Just(4), Just(5), Just(19), Just(20), 0u64..50], control)
            .prop_map(|(dt, control)| Op::Batch { dt, control }),
    ]
}

/// The table's counters that do not depend on when sweeps run (aged-out counts do).
fn comparable(s: NormalStats) -> NormalStats {
    NormalStats { aged_out: 0, ..s }
}

/// Runs `ops` on a table of ports 1..=4 (the constants' capacity and times) and on the
/// model, checking that they agree after each step; returns the table.
fn check_fresh(ops: &[Op]) -> MacTable {
    let cfg = MacTableConfig { capacity: CAPACITY, aging_ns: AGING, refresh_ns: REFRESH };
    let t = table(&[1, 2, 3, 4], cfg);
    let mut h = t.handler();
    let mut m = Model {
        ports: vec![1, 2, 3, 4],
        map: HashMap::new(),
        seq: 0,
        stats: NormalStats::default(),
    };
    check(&t, &mut h, &mut m, ops);
    t
}

fn check(t: &MacTable, h: &mut NormalSwitch, m: &mut Model, ops: &[Op]) {
    let mut now = 0;
    h.begin_batch(now);
    for (i, op) in ops.iter().enumerate() {
        match op {
            &Op::Packet { in_port, vlan, src, dst } => {
                let (vlan, src, dst) = (VLANS[vlan], MACS[src], MACS[dst]);
                let got = send(h, in_port, vlan, src, dst);
                let want = m.packet(in_port, vlan, src, dst, now);
                assert_eq!(got, want, "step {i}: {op:?} at {now}");
            }
            Op::Batch { dt, control } => {
                now += dt;
                match control {
                    Some(Control::SetPorts(p)) => {
                        t.set_ports(p);
                        m.ports = p.clone();
                        m.ports.sort_unstable();
                        m.ports.dedup();
                        let ports = m.ports.clone();
                        m.map.retain(|_, e| ports.contains(&e.0));
                    }
                    Some(Control::Forget(p)) => {
                        t.forget_port(*p);
                        m.map.retain(|_, e| e.0 != *p);
                    }
                    Some(Control::Flush) => {
                        t.flush();
                        m.map.clear();
                    }
                    None => {}
                }
                h.begin_batch(now);
            }
        }
        assert_eq!(comparable(t.stats()), m.stats, "step {i}");
        let live: Vec<_> = t.entries(now).into_iter().map(|e| (e.vlan, e.mac, e.port)).collect();
        assert_eq!(live, m.live(now), "step {i}");
        assert!(t.len() <= CAPACITY);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn handler_agrees_with_model(ops in proptest::collection::vec(op(), 1..200)) {
        check_fresh(&ops);
    }
}

/// The model and the handler agree on a fixed sequence that touches every rule (so
/// the property above is known to compare something).
#[test]
fn model_covers_every_rule() {
    let p = |in_port, src, dst| Op::Packet { in_port, vlan: 0, src, dst };
    let b = |dt| Op::Batch { dt, control: None };
    let ops = [
        p(1, 0, 1),
        p(2, 1, 0),
        p(3, 2, 7),
        p(4, 3, 6),
        b(6),
        p(1, 0, 1),
        p(4, 4, 1),
        p(4, 0, 4),
        p(1, 5, 0),
        b(30),
        p(1, 0, 1),
    ];
    let t = check_fresh(&ops);
    let s = t.stats();
    assert!(s.learned > 0 && s.moved > 0 && s.evicted > 0);
    assert!(s.flooded > 0 && s.forwarded > 0 && s.dropped > 0);
}
