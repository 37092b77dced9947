//! Classifier lookups per second and build cost at several table shapes.
//!
//! Run briefly: `cargo bench -p datapath --bench classifier -- --warm-up-time 1
//! --measurement-time 3`. Each scenario prints its build time and bytes per rule (from
//! `TupleSpace::memory_bytes`) to stderr when it is set up.
//!
//! Scenarios:
//! - `one_rule`: a single exact 5-tuple rule.
//! - `exact_1m`: 1M exact IPv4 5-tuple rules (one subtable), looked up with the 1M rule
//!   keys in random order (every lookup hits, the working set is far beyond the caches).
//! - `wild_100k`: 100K rules over 100 masks (IPv4 source and destination prefixes of
//!   several lengths, some with an exact destination port), random priorities.
//! - `wild_100k_lpf`: 100K rules over 100 masks as `crates/bench/src/workload.rs` draws
//!   them (`RuleKind::Wildcard { masks: 100 }`): UDP, random source and destination
//!   prefix lengths 0..=32, each port exact or not, priority growing with the prefix
//!   lengths (longest prefix first), so priorities tie across many subtables.
//! - `classbench_10k`: 10K ClassBench-like ACL rules: source and destination prefixes of
//!   random length, protocol exact or any, ports exact, any, or a range written as a
//!   prefix mask.
//!
//! `single` looks keys up one by one with `find`; `batch32` uses `lookup_batch` on
//! batches of 32 (throughput is per key).

use std::hint::black_box;
use std::time::Instant;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use datapath::classifier::{Classify, TupleSpace};
use datapath::key::{Field, FlowKey, FlowMatch, KEY_WORDS};

#[path = "../src/classifier/tuple_space/splitmix.rs"]
mod splitmix;
use splitmix::Rng;

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn prefix(bits: u32, len: u32) -> u128 {
    if len == 0 {
        0
    } else {
        (u128::MAX >> (128 - bits)) & !((1u128 << (bits - len)) - 1)
    }
}

fn five_tuple(r: &mut Rng) -> FlowMatch {
    FlowMatch::ANY
        .exact(Field::EthType, 0x0800)
        .exact(Field::IpProto, if r.below(2) == 0 { 6 } else { 17 })
        .exact(Field::Ipv4Src, r.next() as u128 & 0xffff_ffff)
        .exact(Field::Ipv4Dst, r.next() as u128 & 0xffff_ffff)
        .exact(Field::TpSrc, r.next() as u128 & 0xffff)
        .exact(Field::TpDst, r.next() as u128 & 0xffff)
}

/// A packet the rule matches: its key with random bits everywhere outside its mask.
fn hit(m: &FlowMatch, r: &mut Rng) -> FlowKey {
    let mut k = m.key;
    for i in 0..KEY_WORDS {
        k.words[i] |= r.next() & !m.mask.words[i];
    }
    k
}

fn shuffle<X>(v: &mut [X], r: &mut Rng) {
    for i in (1..v.len()).rev() {
        v.swap(i, r.below(i as u64 + 1) as usize);
    }
}

/// Builds the table, reporting build time and memory; returns it with hitting keys.
fn build(name: &str, rules: Vec<(FlowMatch, u16)>, r: &mut Rng) -> (TupleSpace<u32>, Vec<FlowKey>) {
    let start = Instant::now();
    let mut ts = TupleSpace::new();
    for (i, (m, p)) in rules.iter().enumerate() {
        ts.insert(*m, *p, i as u32);
    }
    let took = start.elapsed();
    let n = ts.len().max(1);
    eprintln!(
        "{name}: {} rules, {} subtables, built in {:.3} s ({:.0} ns/rule), {:.0} bytes/rule",
        ts.len(),
        ts.len_subtables(),
        took.as_secs_f64(),
        took.as_nanos() as f64 / n as f64,
        ts.memory_bytes() as f64 / n as f64,
    );
    let mut keys: Vec<FlowKey> = rules.iter().map(|(m, _)| hit(m, r)).collect();
    shuffle(&mut keys, r);
    keys.truncate(1 << 20);
    let sample = &keys[..keys.len().min(10_000)];
    let visited: usize = sample.iter().map(|k| ts.subtables_visited(k)).sum();
    eprintln!(
        "{name}: a lookup visits {:.1} subtables on average",
        visited as f64 / sample.len().max(1) as f64
    );
    (ts, keys)
}

fn wild_rules(r: &mut Rng) -> Vec<(FlowMatch, u16)> {
    let mut rules = Vec::with_capacity(100_000);
    for mask in 0..100u32 {
        let src = [0, 8, 16, 24, 32][(mask / 20) as usize];
        let dst = 8 + (mask % 10) * 2;
        let port = (mask / 10) % 2 == 1;
        for _ in 0..1000 {
            let mut m = FlowMatch::ANY
                .exact(Field::EthType, 0x0800)
                .masked(Field::Ipv4Src, r.next() as u128, prefix(32, src))
                .masked(Field::Ipv4Dst, r.next() as u128, prefix(32, dst));
            if port {
                m = m.exact(Field::IpProto, 6).exact(Field::TpDst, r.below(1024) as u128);
            }
            rules.push((m, r.below(1000) as u16));
        }
    }
    rules
}

/// `workload.rs`'s wildcard rules: 100 distinct shapes, 1000 rules each, priority =
/// src_len + dst_len + 2 * (ports matched) + 1.
fn wild_lpf_rules(r: &mut Rng) -> Vec<(FlowMatch, u16)> {
    let mut shapes = Vec::new();
    while shapes.len() < 100 {
        let s = (r.below(33) as u32, r.below(33) as u32, r.below(2) == 1, r.below(2) == 1);
        if !shapes.contains(&s) {
            shapes.push(s);
        }
    }
    let mut rules = Vec::with_capacity(100_000);
    for &(src, dst, sport, dport) in &shapes {
        for _ in 0..1000 {
            let mut m = FlowMatch::ANY
                .exact(Field::EthType, 0x0800)
                .exact(Field::IpProto, 17)
                .masked(Field::Ipv4Src, r.next() as u128, prefix(32, src))
                .masked(Field::Ipv4Dst, r.next() as u128, prefix(32, dst));
            if sport {
                m = m.exact(Field::TpSrc, r.below(65536) as u128);
            }
            if dport {
                m = m.exact(Field::TpDst, r.below(65536) as u128);
            }
            let prio = src + dst + 2 * (sport as u32 + dport as u32) + 1;
            rules.push((m, prio as u16));
        }
    }
    rules
}

fn classbench_rules(r: &mut Rng) -> Vec<(FlowMatch, u16)> {
    const LENS: [u32; 8] = [0, 8, 16, 16, 24, 24, 32, 32];
    const PORT_MASKS: [u128; 4] = [0, 0xffff, 0xfc00, 0xff00];
    (0..10_000)
        .map(|_| {
            let mut m = FlowMatch::ANY
                .exact(Field::EthType, 0x0800)
                .masked(Field::Ipv4Src, r.next() as u128, prefix(32, LENS[r.below(8) as usize]))
                .masked(Field::Ipv4Dst, r.next() as u128, prefix(32, LENS[r.below(8) as usize]));
            if r.below(4) != 0 {
                m = m.exact(Field::IpProto, if r.below(3) == 0 { 17 } else { 6 });
                let dmask = PORT_MASKS[r.below(4) as usize];
                m = m.masked(Field::TpDst, r.next() as u128, dmask);
                if r.below(8) == 0 {
                    m = m.masked(Field::TpSrc, r.next() as u128, PORT_MASKS[r.below(4) as usize]);
                }
            }
            (m, r.below(10_000) as u16)
        })
        .collect()
}

fn lookups(c: &mut Criterion, name: &str, ts: &TupleSpace<u32>, keys: &[FlowKey]) {
    let mut g = c.benchmark_group(name);
    g.throughput(Throughput::Elements(1));
    let mut i = 0;
    g.bench_function("single", |b| {
        b.iter(|| {
            i += 1;
            if i == keys.len() {
                i = 0;
            }
            black_box(ts.find(&keys[i]).map(|r| *r.value))
        })
    });
    g.throughput(Throughput::Elements(32));
    let chunks: Vec<&[FlowKey]> = keys.chunks_exact(32).collect();
    let mut out = vec![None; 32];
    let mut j = 0;
    g.bench_function("batch32", |b| {
        b.iter(|| {
            j += 1;
            if j == chunks.len() {
                j = 0;
            }
            ts.lookup_batch(chunks[j], &mut out);
            black_box(out[31].map(|r| *r.value))
        })
    });
    g.finish();
}

fn bench(c: &mut Criterion) {
    let mut r = Rng(1);
    {
        let one = five_tuple(&mut r);
        let (ts, _) = build("one_rule", vec![(one, 1)], &mut r);
        let keys: Vec<FlowKey> = (0..64).map(|_| hit(&one, &mut r)).collect();
        lookups(c, "one_rule", &ts, &keys);
    }
    {
        let rules: Vec<_> = (0..100_000).map(|_| (five_tuple(&mut r), 1)).collect();
        let mut g = c.benchmark_group("build");
        g.sample_size(10);
        g.throughput(Throughput::Elements(rules.len() as u64));
        g.bench_function("exact_100k", |b| {
            b.iter(|| {
                let mut ts = TupleSpace::new();
                for (i, (m, p)) in rules.iter().enumerate() {
                    ts.insert(*m, *p, i as u32);
                }
                black_box(ts.len())
            })
        });
        g.finish();
    }
    {
        let rules: Vec<_> = (0..1_000_000).map(|_| (five_tuple(&mut r), 1)).collect();
        let (ts, keys) = build("exact_1m", rules, &mut r);
        lookups(c, "exact_1m", &ts, &keys);
    }
    {
        let rules = wild_rules(&mut r);
        let (ts, keys) = build("wild_100k", rules, &mut r);
        lookups(c, "wild_100k", &ts, &keys);
    }
    {
        let rules = wild_lpf_rules(&mut r);
        let (ts, keys) = build("wild_100k_lpf", rules, &mut r);
        lookups(c, "wild_100k_lpf", &ts, &keys);
    }
    {
        let rules = classbench_rules(&mut r);
        let (ts, keys) = build("classbench_10k", rules, &mut r);
        lookups(c, "classbench_10k", &ts, &keys);
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
