//! Pipeline benchmarks: forwarding a batch with and without the exact-match cache,
//! publishing one change into a table of a million rules, and forwarding while a burst of
//! 100,000 rule inserts is published.
//!
//! The million-rule cases use `MacTable`, a bench-only classifier for rules that all
//! match one exact Ethernet destination (a hash map), so that they measure the
//! publishing mechanism rather than the reference classifier's linear scan.

use std::collections::HashMap;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use datapath::action::Action;
use datapath::classifier::Classify;
use datapath::key::{Field, FlowKey, FlowMatch};
use datapath::packet::Packet;
use datapath::pipeline::{
    Datapath, DatapathConfig, Instructions, Outputs, PortInfo, Rule, TableRule,
};

fn frame(dst: u64, src: u64) -> Vec<u8> {
    let mut f = Vec::with_capacity(64);
    f.extend_from_slice(&dst.to_be_bytes()[2..]);
    f.extend_from_slice(&src.to_be_bytes()[2..]);
    f.extend_from_slice(&0x88b5u16.to_be_bytes());
    f.resize(64, 0);
    f
}

fn config() -> DatapathConfig {
    DatapathConfig {
        ports: (1..=4).map(|i| PortInfo::new(i, (i - 1) as u16)).collect(),
        ..DatapathConfig::default()
    }
}

/// Rules matching exactly one EthDst each (any priority; the best is kept per address).
#[derive(Default)]
struct MacTable {
    rules: HashMap<u64, (u16, TableRule)>,
}

impl Classify<TableRule> for MacTable {
    fn insert(&mut self, m: FlowMatch, priority: u16, value: TableRule) -> Option<TableRule> {
        let mac = m.key.get(Field::EthDst) as u64;
        self.rules.insert(mac, (priority, value)).map(|o| o.1)
    }
    fn remove(&mut self, m: &FlowMatch, _priority: u16) -> Option<TableRule> {
        self.rules.remove(&(m.key.get(Field::EthDst) as u64)).map(|o| o.1)
    }
    fn lookup(&self, key: &FlowKey) -> Option<(u16, &TableRule)> {
        let (p, r) = self.rules.get(&(key.get(Field::EthDst) as u64))?;
        Some((*p, r))
    }
    fn get(&self, m: &FlowMatch, priority: u16) -> Option<&TableRule> {
        let (p, r) = self.rules.get(&(m.key.get(Field::EthDst) as u64))?;
        (*p == priority).then_some(r)
    }
    fn rules(&self) -> Box<dyn Iterator<Item = (FlowMatch, u16, &TableRule)> + '_> {
        Box::new(
            self.rules.iter().map(|(&mac, (p, r))| {
                (FlowMatch::ANY.exact(Field::EthDst, u128::from(mac)), *p, r)
            }),
        )
    }
    fn len(&self) -> usize {
        self.rules.len()
    }
}

fn mac_rule(mac: u64, port: u32) -> Rule {
    Rule::new(
        FlowMatch::ANY.exact(Field::EthDst, mac as u128),
        10,
        Instructions { apply: vec![Action::Output(port)], ..Instructions::default() },
    )
}

fn forward(c: &mut Criterion) {
    let (dp, mut wr, _rx) = Datapath::<datapath::pipeline::DefaultClassifier>::new(config(), 64);
    for i in 0..32u64 {
        let m = FlowMatch::ANY.exact(Field::EthSrc, i as u128);
        let r = Rule::new(
            m,
            5,
            Instructions {
                write_metadata: Some((i, 0xff)),
                goto_table: Some(1),
                ..Instructions::default()
            },
        );
        wr.insert_rule(0, r).unwrap();
        let r = Rule::new(
            FlowMatch::ANY.exact(Field::Metadata, i as u128),
            5,
            Instructions {
                apply: vec![Action::Output(2 + (i % 2) as u32)],
                ..Instructions::default()
            },
        );
        wr.insert_rule(1, r).unwrap();
    }
    wr.publish();
    let frames: Vec<Packet> = (0..32).map(|i| Packet::from_slice(&frame(9, i))).collect();
    let mut g = c.benchmark_group("forward_batch32_64rules_2tables");
    for (name, cache) in [("cache_hit", 4096), ("no_cache", 0)] {
        let mut w = dp.worker(cache);
        let mut out = Outputs::new();
        g.bench_function(name, |b| {
            b.iter(|| {
                out.clear();
                let mut batch = dp.batch(&mut w, 1);
                for p in &frames {
                    batch.process(p.clone(), 1, &mut out);
                }
                drop(batch);
                black_box(out.tx.len())
            })
        });
    }
    g.finish();
}

fn publish_1m(c: &mut Criterion) {
    let (dp, mut wr, _rx) = Datapath::<MacTable>::new(config(), 64);
    for mac in 0..1_000_000u64 {
        wr.insert_rule(0, mac_rule(mac, 2)).unwrap();
    }
    wr.publish();
    let _idle = dp.worker(0);
    let mut n = 0u64;
    c.bench_function("publish_one_change_1M_rules", |b| {
        b.iter(|| {
            n += 1;
            wr.insert_rule(0, mac_rule(n % 1_000_000, 2 + (n % 2) as u32)).unwrap();
            black_box(wr.publish().version)
        })
    });
}

/// Not a criterion loop: forwards in a thread while 100,000 inserts are published in
/// batches of 1,000, and prints the forwarding batch times seen before and during the
/// burst.
fn burst_100k(_c: &mut Criterion) {
    let (dp, mut wr, _rx) = Datapath::<MacTable>::new(config(), 64);
    for mac in 0..1000u64 {
        wr.insert_rule(0, mac_rule(mac, 2)).unwrap();
    }
    wr.publish();
    let stop = Arc::new(AtomicBool::new(false));
    let burst = Arc::new(AtomicBool::new(false));
    let fwd = {
        let (dp, stop, burst) = (dp.clone(), stop.clone(), burst.clone());
        std::thread::spawn(move || {
            let mut w = dp.worker(4096);
            let frames: Vec<Packet> = (0..32).map(|i| Packet::from_slice(&frame(i, 1))).collect();
            let mut out = Outputs::new();
            let mut times = [Vec::new(), Vec::new()];
            while !stop.load(Ordering::Relaxed) {
                let phase = burst.load(Ordering::Relaxed) as usize;
                let t = Instant::now();
                out.clear();
                let mut b = dp.batch(&mut w, 1);
                for p in &frames {
                    b.process(p.clone(), 1, &mut out);
                }
                drop(b);
                times[phase].push(t.elapsed());
            }
            times
        })
    };
    std::thread::sleep(Duration::from_millis(300));
    burst.store(true, Ordering::Relaxed);
    let t = Instant::now();
    let mut publish_max = Duration::ZERO;
    for chunk in 0..100u64 {
        for i in 0..1000u64 {
            wr.insert_rule(0, mac_rule(1_000_000 + chunk * 1000 + i, 3)).unwrap();
        }
        let p = Instant::now();
        wr.publish();
        publish_max = publish_max.max(p.elapsed());
    }
    let total = t.elapsed();
    stop.store(true, Ordering::Relaxed);
    let times = fwd.join().unwrap();
    let stats = |v: &[Duration]| {
        let mut v = v.to_vec();
        v.sort();
        let q = |f: f64| v.get(((v.len() as f64 - 1.0) * f) as usize).copied().unwrap_or_default();
        format!("n={} p50={:?} p99={:?} max={:?}", v.len(), q(0.5), q(0.99), q(1.0))
    };
    println!("burst_100k_inserts: 100 publishes of 1000 inserts took {total:?}, slowest publish {publish_max:?}");
    println!("  forwarding batches (32 pkts) before the burst: {}", stats(&times[0]));
    println!("  forwarding batches (32 pkts) during the burst: {}", stats(&times[1]));
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(Duration::from_secs(2)).warm_up_time(Duration::from_millis(500));
    targets = forward, publish_1m, burst_100k
}
criterion_main!(benches);
