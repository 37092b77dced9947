//! Open vSwitch's classifier benchmark (`ovstest test-classifier benchmark`), redone
//! with our `TupleSpace`, so both can be run on the same CPU and compared.
//!
//! Usage (release, pinned, after `ovstest test-classifier benchmark N P T 1 L`):
//!
//! ```text
//! cargo bench -p datapath --bench ovs_compare -- <n_rules> <n_priorities> <n_subtables> <n_lookups>
//! ```
//!
//! The workload follows `tests/test-classifier.c` (function `benchmark`), written anew:
//! - 13 fields (tun_id, metadata, nw_src, nw_dst, in_port, vlan_tci, dl_type, tp_src,
//!   tp_dst, dl_src, dl_dst, nw_proto, nw_tos), each with a pool of two values (the same
//!   values as OVS's `*_values` arrays; nw_tos is matched on its DSCP bits, here the
//!   `IpDscp` field holding `tos >> 2`).
//! - The same pseudo-random generator (xorshift32 seeded with 1) drawn in the same order:
//!   `n_subtables` distinct 13-bit "wildcard field" patterns, `n_priorities` priorities
//!   `(i * 129)` shuffled, `2 * 4096` lookup flows (a random `x < 4096` whose bits pick
//!   the value of each field in turn), then per rule a priority, a pattern and a 13-bit
//!   value pattern.
//! - `make_rule` as that file has it: every field is set exactly to the value the value
//!   pattern picks (the loop sets the value and a full mask for all 13 fields; the
//!   pattern only decides the priority, which is 0 for the all-zero pattern). So every
//!   rule has the same mask, whatever `n_subtables` says, and at most 8192 distinct
//!   matches exist; rules equal to an existing one (match and priority) are skipped, and
//!   the number of surviving rules is printed.
//! - Lookups reseed the generator with 1 and look up `flows[random % 8192]`, counting
//!   hits and misses; "without wildcards" in OVS's output is this plain lookup.
//!
//! One difference cannot be reproduced: OVS's hash maps draw from the same generator
//! when they are created or resized during the insertions, which shifts its later rule
//! draws; the rule *distribution* is the same, the exact rule set may differ slightly
//! (compare the hit counts).

use std::hint::black_box;
use std::time::Instant;

use datapath::classifier::{Classify, TupleSpace};
use datapath::key::{Field, FlowKey, FlowMatch};

/// OVS's `random_next`: xorshift32.
struct OvsRandom(u32);

impl OvsRandom {
    fn next(&mut self) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 17;
        self.0 ^= self.0 << 5;
        self.0
    }
    fn range(&mut self, max: u32) -> u32 {
        self.next() % max
    }
}

const N_FIELDS: usize = 13;
/// Fields in OVS's `CLS_FIELDS` order, each with its two values.
const FIELDS: [(Field, [u128; 2]); N_FIELDS] = [
    (Field::TunnelId, [0, 0xfedc_ba98_7654_3210]),
    (Field::Metadata, [0, 0xfedc_ba98_7654_3210]),
    (Field::Ipv4Src, [0xc0a8_0001, 0xc0a0_4455]),
    (Field::Ipv4Dst, [0xc0a8_0002, 0xc0a0_4455]),
    (Field::InPort, [1, 0xfffe]),
    (Field::VlanVid, [101, 0]),
    (Field::EthType, [0x0800, 0x0806]),
    (Field::TpSrc, [49362, 80]),
    (Field::TpDst, [6667, 22]),
    (Field::EthSrc, [0x0002_e30f_80a4, 0x5e33_7f5f_1e99]),
    (Field::EthDst, [0x4a27_71ae_64c1, 0xffff_ffff_ffff]),
    (Field::IpProto, [6, 1]),
    (Field::IpDscp, [48 >> 2, 0]),
];
/// The order in which OVS's lookup flows consume the bits of `x` (CLS_FIELDS indexes):
/// nw_src, nw_dst, tun_id, metadata, in_port, vlan_tci, dl_type, tp_src, tp_dst, dl_src,
/// dl_dst, nw_proto, nw_tos.
const FLOW_ORDER: [usize; N_FIELDS] = [2, 3, 0, 1, 4, 5, 6, 7, 8, 9, 10, 11, 12];
/// `N_FLOW_VALUES`: the product of the pool sizes of every field but metadata.
const N_FLOW_VALUES: u32 = 1 << 12;

fn make_rule(value_pat: u32) -> FlowMatch {
    let mut m = FlowMatch::ANY;
    for (i, (f, vals)) in FIELDS.iter().enumerate() {
        m = m.exact(*f, vals[(value_pat >> i) as usize & 1]);
    }
    m
}

fn main() {
    let args: Vec<u64> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let [n_rules, n_priorities, n_tables, n_lookups] = match args.as_slice() {
        [a, b, c, d, ..] => [*a, *b, *c, *d],
        _ => [1_000_000, 1, 1, 10_000_000],
    };
    let (n_rules, n_priorities, n_tables) = (n_rules as u32, n_priorities as u32, n_tables as u32);
    let mut rnd = OvsRandom(1);

    let mut wcfs: Vec<u32> = Vec::new();
    for _ in 0..n_tables {
        loop {
            let w = rnd.next() & ((1 << N_FIELDS) - 1);
            if !wcfs.contains(&w) {
                wcfs.push(w);
                break;
            }
        }
    }
    let mut priorities: Vec<u32> = (0..n_priorities).map(|i| (i * 129) & i32::MAX as u32).collect();
    for k in 0..priorities.len() {
        let n = (priorities.len() - k) as u32;
        if n <= 1 {
            break;
        }
        let q = k + rnd.range(n) as usize;
        priorities.swap(k, q);
    }

    let flows: Vec<FlowKey> = (0..2 * N_FLOW_VALUES)
        .map(|_| {
            let mut x = rnd.range(N_FLOW_VALUES);
            let mut k = FlowKey::ZERO;
            for &fi in &FLOW_ORDER {
                let (f, vals) = FIELDS[fi];
                k.set(f, vals[(x % 2) as usize]);
                x /= 2;
            }
            k
        })
        .collect();

    let build = Instant::now();
    let mut cls: TupleSpace<u32> = TupleSpace::new();
    for i in 0..n_rules {
        let priority = priorities[rnd.range(n_priorities) as usize];
        let wcf = wcfs[rnd.range(n_tables) as usize];
        let value_pat = rnd.next() & ((1 << N_FIELDS) - 1);
        let priority = if wcf != 0 { priority } else { 0 };
        let m = make_rule(value_pat);
        if cls.get(&m, priority as u16).is_none() {
            cls.insert(m, priority as u16, i);
        }
    }
    let built = build.elapsed();

    let mut rnd = OvsRandom(1);
    let (mut hits, mut misses) = (0u64, 0u64);
    let start = Instant::now();
    for _ in 0..n_lookups {
        let x = rnd.range(flows.len() as u32) as usize;
        if black_box(cls.lookup(&flows[x])).is_some() {
            hits += 1;
        } else {
            misses += 1;
        }
    }
    let took = start.elapsed();
    println!(
        "ovs_compare {n_rules} rules, {n_priorities} priorities, {n_tables} tables: \
         {} distinct rules in {} subtables (built in {:.3} s)",
        cls.len(),
        cls.len_subtables(),
        built.as_secs_f64()
    );
    println!("hits: {hits}, misses: {misses}");
    println!(
        "classifier lookups: {:5} ms, {} lookups/sec",
        took.as_millis(),
        ((hits + misses) as f64 / took.as_secs_f64()) as u64
    );
}
