//! Unit tests of the tuple space, and a reference-model property test against
//! [`LinearClassifier`].

use proptest::prelude::*;

use super::splitmix::Rng;
use super::*;
use crate::classifier::LinearClassifier;
use crate::key::{Field, KEY_WORDS};

fn ip(v: u128) -> FlowMatch {
    FlowMatch::ANY.exact(Field::EthType, 0x0800).exact(Field::Ipv4Dst, v)
}

fn pkt(dst: u128, proto: u128) -> FlowKey {
    let mut k = FlowKey::ZERO;
    k.set(Field::EthType, 0x0800);
    k.set(Field::Ipv4Dst, dst);
    k.set(Field::IpProto, proto);
    k
}

fn found<T: Copy>(c: &TupleSpace<T>, k: &FlowKey) -> Option<T> {
    c.lookup(k).map(|r| *r.1)
}

#[test]
fn empty_table_finds_nothing() {
    let c: TupleSpace<u32> = TupleSpace::new();
    assert_eq!(found(&c, &FlowKey::ZERO), None);
    let mut out = [Some(RuleRef { mask: &FlowKey::ZERO, priority: 0, seq: 0, value: &0 }); 3];
    c.lookup_batch(&[FlowKey::ZERO; 3], &mut out);
    assert!(out.iter().all(|o| o.is_none()));
}

#[test]
fn highest_priority_wins_across_subtables() {
    let mut c = TupleSpace::new();
    c.insert(FlowMatch::ANY, 0, "miss");
    c.insert(ip(0x0a00_0001), 10, "host");
    c.insert(
        FlowMatch::ANY.exact(Field::EthType, 0x0800).masked(
            Field::Ipv4Dst,
            0x0a00_0000,
            0xff00_0000,
        ),
        20,
        "net",
    );
    c.insert(FlowMatch::ANY.exact(Field::IpProto, 6), 5, "tcp");
    assert_eq!(c.len_subtables(), 4);
    assert_eq!(found(&c, &pkt(0x0a00_0001, 6)), Some("net"));
    assert_eq!(found(&c, &pkt(0x0b00_0001, 6)), Some("tcp"));
    assert_eq!(found(&c, &pkt(0x0b00_0001, 17)), Some("miss"));
    c.check();
}

#[test]
fn equal_priority_earlier_insertion_wins() {
    let mut c = TupleSpace::new();
    let tcp = FlowMatch::ANY.exact(Field::IpProto, 6);
    c.insert(ip(1), 10, "ip");
    c.insert(tcp, 10, "tcp");
    assert_eq!(found(&c, &pkt(1, 6)), Some("ip"));
    // Insert order, not mask or insertion of the subtable, decides.
    let mut d = TupleSpace::new();
    d.insert(tcp, 10, "tcp");
    d.insert(ip(1), 10, "ip");
    assert_eq!(found(&d, &pkt(1, 6)), Some("tcp"));
}

#[test]
fn stale_bound_after_removal_keeps_ties_exact() {
    let mut c = TupleSpace::new();
    let tcp = FlowMatch::ANY.exact(Field::IpProto, 6);
    c.insert(ip(1), 10, "first"); // seq 0, subtable A
    c.insert(tcp, 10, "tcp"); // seq 1, subtable B
    c.insert(ip(2), 10, "late"); // seq 2, subtable A
    c.remove(&ip(1), 10);
    // A keeps its (10, 0) bound and is visited first, finding "late" (seq 2); B's bound
    // (10, 1) beats that, so B is visited too and its earlier rule wins.
    assert_eq!(found(&c, &pkt(2, 6)), Some("tcp"));
    c.check();
}

#[test]
fn early_exit_skips_worse_subtables() {
    let mut c = TupleSpace::new();
    c.insert(ip(1), 100, "best");
    c.insert(FlowMatch::ANY.exact(Field::IpProto, 6), 50, "tcp");
    c.insert(FlowMatch::ANY, 0, "miss");
    assert_eq!(c.order.len(), 3);
    assert_eq!(c.order[0].priority, 100);
    assert_eq!(found(&c, &pkt(1, 6)), Some("best"));
}

#[test]
fn replacement_returns_old_value_and_keeps_order() {
    let mut c = TupleSpace::new();
    let tcp = FlowMatch::ANY.exact(Field::IpProto, 6);
    assert_eq!(c.insert(ip(1), 10, 1), None);
    assert_eq!(c.insert(tcp, 10, 2), None);
    assert_eq!(c.insert(ip(1), 10, 3), Some(1));
    assert_eq!(c.len(), 2);
    assert_eq!(found(&c, &pkt(1, 6)), Some(3));
    c.check();
}

#[test]
fn same_match_several_priorities_share_an_entry() {
    let mut c = TupleSpace::new();
    c.insert(ip(1), 5, "low");
    c.insert(ip(1), 50, "high");
    c.insert(ip(1), 20, "mid");
    assert_eq!(c.len(), 3);
    assert_eq!(c.len_subtables(), 1);
    assert_eq!(c.get(&ip(1), 20), Some(&"mid"));
    assert_eq!(c.get(&ip(1), 21), None);
    assert_eq!(c.get(&ip(2), 20), None);
    assert_eq!(found(&c, &pkt(1, 0)), Some("high"));
    assert_eq!(c.remove(&ip(1), 50), Some("high"));
    assert_eq!(found(&c, &pkt(1, 0)), Some("mid"));
    assert_eq!(c.remove(&ip(1), 5), Some("low"));
    assert_eq!(found(&c, &pkt(1, 0)), Some("mid"));
    assert_eq!(c.remove(&ip(1), 5), None);
    c.check();
}

#[test]
fn removal_updates_bounds_and_drops_subtables() {
    let mut c = TupleSpace::new();
    let tcp = FlowMatch::ANY.exact(Field::IpProto, 6);
    c.insert(ip(1), 100, "a");
    c.insert(ip(2), 7, "b");
    c.insert(tcp, 50, "tcp");
    assert_eq!(found(&c, &pkt(1, 6)), Some("a"));
    assert_eq!(c.remove(&ip(1), 100), Some("a"));
    c.check();
    assert_eq!(c.order[0].priority, 50, "the ip subtable's bound fell to 7");
    assert_eq!(found(&c, &pkt(1, 6)), Some("tcp"));
    assert_eq!(found(&c, &pkt(2, 17)), Some("b"));
    assert_eq!(c.remove(&ip(2), 7), Some("b"));
    assert_eq!(c.len_subtables(), 1);
    assert_eq!(c.remove(&tcp, 50), Some("tcp"));
    assert_eq!(c.remove(&tcp, 50), None);
    assert!(c.is_empty());
    assert_eq!(c.len_subtables(), 0);
    assert_eq!(found(&c, &pkt(1, 6)), None);
    c.check();
}

#[test]
fn unmasked_key_bits_are_ignored() {
    let mut c = TupleSpace::new();
    let mut m = FlowMatch::ANY.masked(Field::Ipv4Dst, 0x0a00_0000, 0xff00_0000);
    m.key.set(Field::Ipv4Dst, 0x0a12_3456); // breaks the FlowMatch invariant on purpose
    c.insert(m, 1, "net");
    assert_eq!(found(&c, &pkt(0x0aff_ffff, 0)), Some("net"));
    assert_eq!(c.remove(&m, 1), Some("net"));
}

#[test]
fn wide_masks_spill_past_the_inline_words() {
    let m = |dst: u128| {
        FlowMatch::ANY
            .exact(Field::InPort, 3)
            .exact(Field::EthType, 0x86dd)
            .exact(Field::Ipv6Src, 1)
            .exact(Field::Ipv6Dst, dst)
            .exact(Field::TpDst, 80)
            .exact(Field::ArpTha, 9)
    };
    let mut c = TupleSpace::new();
    for d in 0..100u128 {
        c.insert(m(d << 70 | d), 1, d);
    }
    c.check();
    for d in 0..100u128 {
        let mut k = m(d << 70 | d).key;
        k.set(Field::IpTtl, 64);
        assert_eq!(found(&c, &k), Some(d));
        k.set(Field::Ipv6Dst, (d << 70 | d) ^ 1 << 100);
        assert_eq!(found(&c, &k), None);
    }
}

#[test]
fn all_ones_mask_is_exact_on_every_word() {
    let mut c = TupleSpace::new();
    let mut m = FlowMatch::ANY;
    m.mask.words = [u64::MAX; KEY_WORDS];
    m.key.words[17] = 5;
    c.insert(m, 1, "exact");
    assert_eq!(found(&c, &m.key), Some("exact"));
    let mut k = m.key;
    k.words[0] = 1;
    assert_eq!(found(&c, &k), None);
}

#[test]
fn many_rules_one_mask_grow_and_shrink() {
    let mut c = TupleSpace::new();
    for i in 0..5000u128 {
        c.insert(ip(i), 1, i);
    }
    c.check();
    let big = c.memory_bytes();
    for i in 0..5000u128 {
        assert_eq!(found(&c, &pkt(i, 0)), Some(i));
    }
    for i in (0..5000u128).filter(|i| i % 100 != 0) {
        assert_eq!(c.remove(&ip(i), 1), Some(i));
    }
    c.check();
    assert!(c.memory_bytes() * 4 < big, "{} vs {big}", c.memory_bytes());
    for i in 0..5000u128 {
        assert_eq!(found(&c, &pkt(i, 0)), (i % 100 == 0).then_some(i));
    }
}

#[test]
fn iter_yields_every_rule() {
    let mut c = TupleSpace::new();
    c.insert(ip(1), 1, 10);
    c.insert(ip(1), 2, 20);
    c.insert(FlowMatch::ANY, 0, 30);
    let mut all: Vec<(FlowMatch, u16, i32)> = c.iter().map(|(m, p, v)| (m, p, *v)).collect();
    all.sort_by_key(|r| r.2);
    assert_eq!(all, vec![(ip(1), 1, 10), (ip(1), 2, 20), (FlowMatch::ANY, 0, 30)]);
}

#[test]
fn matches_are_rebuilt_from_mask_and_entry_words() {
    let mut c = TupleSpace::new();
    // A partial-word mask, a mask past the inline words, and a key with stray bits
    // outside its mask (stored masked, so rebuilt without them).
    let net = FlowMatch::ANY.exact(Field::EthType, 0x0800).masked(
        Field::Ipv4Dst,
        0x0a01_0203,
        0xffff_ff00,
    );
    let wide = FlowMatch::ANY
        .exact(Field::InPort, 3)
        .exact(Field::EthType, 0x86dd)
        .exact(Field::Ipv6Src, 0x2001_0db8 << 96 | 7)
        .exact(Field::Ipv6Dst, 0xfe80 << 112 | 9)
        .exact(Field::TpDst, 443);
    let mut stray = FlowMatch::ANY.exact(Field::IpProto, 17);
    stray.key.set(Field::TpSrc, 53);
    let clean = FlowMatch::ANY.exact(Field::IpProto, 17);
    c.insert(net, 7, 1);
    c.insert(wide, 8, 2);
    c.insert(stray, 9, 3);
    let mut all: Vec<_> = c.iter().map(|(m, p, v)| (m, p, *v)).collect();
    all.sort_by_key(|r| r.2);
    assert_eq!(all, vec![(net, 7, 1), (wide, 8, 2), (clean, 9, 3)]);
    // A lookup's rule gives back the same match for the key it was found for.
    for (m, v) in [(net, 1), (wide, 2), (clean, 3)] {
        let mut k = m.key;
        k.set(Field::IpTtl, 64);
        let r = c.find(&k).expect("hit");
        assert_eq!((r.flow_match(&k), *r.value), (m, v));
    }
}

#[test]
fn remove_and_replace_find_the_exact_rule() {
    let mut c = TupleSpace::new();
    c.insert(ip(1), 5, "a5");
    c.insert(ip(1), 6, "a6");
    c.insert(ip(2), 5, "b5");
    // Same mask, same priority, other key: a different rule.
    assert_eq!(c.remove(&ip(3), 5), None);
    // Same key, other priority: a different rule.
    assert_eq!(c.remove(&ip(2), 6), None);
    assert_eq!(c.insert(ip(1), 5, "a5'"), Some("a5"));
    // Stray key bits outside the mask name the same rule.
    let mut noisy = ip(2);
    noisy.key.set(Field::IpProto, 6);
    assert_eq!(c.insert(noisy, 5, "b5'"), Some("b5"));
    assert_eq!(c.remove(&noisy, 5), Some("b5'"));
    assert_eq!(c.remove(&ip(1), 6), Some("a6"));
    assert_eq!(c.get(&ip(1), 5), Some(&"a5'"));
    assert_eq!(c.len(), 1);
    c.check();
}

#[test]
fn batch_handles_any_length_and_short_outputs() {
    let mut c = TupleSpace::new();
    for i in 0..100u128 {
        c.insert(ip(i), (i % 3) as u16, i);
    }
    c.insert(FlowMatch::ANY.exact(Field::IpProto, 6), 1, 1000);
    let keys: Vec<FlowKey> = (0..77u128).map(|i| pkt(i * 2, (i % 2) * 6)).collect();
    let mut out = vec![None; 77];
    c.lookup_batch(&keys, &mut out);
    for (k, o) in keys.iter().zip(&out) {
        assert_eq!(o.map(|r| *r.value), found(&c, k));
    }
    let mut short = vec![None; 5];
    c.lookup_batch(&keys, &mut short);
    assert_eq!(short[4].map(|r| *r.value), found(&c, &keys[4]));
}

// ---- Reference-model property test ----

/// Mask shapes: prefixes of several lengths, exact tuples, a two-word field, a mask wider
/// than the inline words, and all-ones.
const SHAPES: usize = 16;

fn prefix(bits: u32, len: u32) -> u128 {
    if len == 0 {
        0
    } else {
        (u128::MAX >> (128 - bits)) & !((1u128 << (bits - len)) - 1)
    }
}

/// Small value pool so that rules overlap and keys often hit several rules.
fn val(seed: u64, k: u32) -> u128 {
    const POOL: [u128; 5] = [0, 1, 0x0a00_0001, 0x0a01_0000, u128::MAX];
    POOL[((seed >> (k * 3)) % 5) as usize]
}

fn shape(s: usize, seed: u64) -> FlowMatch {
    let v = |k| val(seed, k);
    let any = FlowMatch::ANY;
    let ipv4 =
        |len| any.exact(Field::EthType, 0x0800).masked(Field::Ipv4Dst, v(0), prefix(32, len));
    match s {
        0 => any,
        1 => any.exact(Field::EthType, 0x0800),
        2 => ipv4(8),
        3 => ipv4(16),
        4 => ipv4(24),
        5 => ipv4(32),
        6 => any
            .exact(Field::EthType, 0x0800)
            .exact(Field::IpProto, v(1) & 0xff)
            .exact(Field::Ipv4Src, v(2) & 0xffff_ffff)
            .exact(Field::Ipv4Dst, v(0) & 0xffff_ffff)
            .exact(Field::TpSrc, v(3) & 0xffff)
            .exact(Field::TpDst, v(4) & 0xffff),
        7 => any.exact(Field::InPort, v(0) & 0xffff_ffff),
        8 => any.exact(Field::InPort, v(0) & 0xffff_ffff).exact(Field::EthType, 0x0800),
        9 => any.exact(Field::EthType, 0x86dd).masked(Field::Ipv6Src, v(1), prefix(128, 64)),
        10 => any.exact(Field::Ipv6Src, v(1)),
        11 => any
            .exact(Field::InPort, v(0) & 0xffff_ffff)
            .exact(Field::EthType, 0x86dd)
            .exact(Field::Ipv6Src, v(1))
            .exact(Field::Ipv6Dst, v(2))
            .exact(Field::TpDst, v(3) & 0xffff),
        12 => {
            let mut m = any;
            m.mask.words = [u64::MAX; KEY_WORDS];
            for (i, w) in m.key.words.iter_mut().enumerate() {
                *w = val(seed, i as u32 % 20) as u64;
            }
            m
        }
        13 => any.masked(Field::Ipv4Src, v(2), prefix(32, 12)).masked(Field::TpDst, v(4), 0xff00),
        // Prefix lengths drawn from the seed (a few of them, so lengths repeat across
        // subtables), with values near each other so that prefixes often match.
        14 => any
            .masked(
                Field::Ipv4Src,
                0x0a00_0000 | (seed as u128 >> 40 & 0xff),
                prefix(32, [1, 8, 24, 32][(seed >> 8) as usize % 4]),
            )
            .masked(Field::Ipv4Dst, v(0), prefix(32, [0, 8, 16, 31][(seed >> 12) as usize % 4])),
        _ => any
            .exact(Field::EthType, 0x0800)
            .masked(
                Field::Ipv4Dst,
                0x0a00_0000 | (seed as u128 >> 48 & 0x3),
                prefix(32, 30 + (seed >> 16) as u32 % 3),
            )
            .masked(Field::Ipv4Src, v(2), 0xff00_ff00),
    }
}

const PRIOS: [u16; 6] = [0, 1, 5, 5, 100, 65535];

#[derive(Clone, Debug)]
enum Op {
    Insert {
        shape: usize,
        seed: u64,
        prio: usize,
    },
    /// Removes the `pick`-th live rule (or a rule that is not there, when `miss`).
    Remove {
        pick: usize,
        miss: bool,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0..SHAPES, any::<u64>(), 0..PRIOS.len())
            .prop_map(|(shape, seed, prio)| Op::Insert { shape, seed, prio }),
        2 => (any::<usize>(), proptest::bool::weighted(0.1))
            .prop_map(|(pick, miss)| Op::Remove { pick, miss }),
    ]
}

/// Keys that hit: every live rule's key with random bits outside its mask, sometimes one
/// masked bit flipped; plus keys built from the value pool and fully random ones.
fn keys_for(model: &LinearClassifier<u32>, rng: &mut Rng) -> Vec<FlowKey> {
    let mut keys = Vec::new();
    for (m, _, _) in model.iter() {
        let mut k = m.key;
        for i in 0..KEY_WORDS {
            k.words[i] |= rng.next() & !m.mask.words[i];
        }
        keys.push(k);
        if rng.next() & 3 == 0 {
            let i = (rng.next() % KEY_WORDS as u64) as usize;
            k.words[i] ^= 1 << (rng.next() % 64);
            keys.push(k);
        }
    }
    for s in 0..SHAPES {
        let mut k = shape(s, rng.next()).key;
        k.words[(rng.next() % KEY_WORDS as u64) as usize] |= rng.next() & 0xff;
        keys.push(k);
    }
    let mut k = FlowKey::ZERO;
    for w in &mut k.words {
        *w = rng.next();
    }
    keys.push(k);
    keys
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn same_results_as_the_linear_model(ops in proptest::collection::vec(op(), 1..60), key_seed: u64) {
        let mut model = LinearClassifier::new();
        let mut ts = TupleSpace::new();
        let mut rng = Rng(key_seed);
        for (step, op) in ops.iter().enumerate() {
            match *op {
                Op::Insert { shape: s, seed, prio } => {
                    let m = shape(s, seed);
                    let p = PRIOS[prio];
                    let v = step as u32;
                    let had = model.iter().find(|r| r.0 == m && r.1 == p).map(|r| *r.2);
                    prop_assert_eq!(ts.get(&m, p).copied(), had);
                    prop_assert_eq!(ts.insert(m, p, v), model.insert(m, p, v));
                    prop_assert_eq!(ts.get(&m, p).copied(), Some(v));
                }
                Op::Remove { pick, miss } => {
                    let live: Vec<(FlowMatch, u16)> = model.iter().map(|(m, p, _)| (m, p)).collect();
                    let (m, p) = match live.get(pick % live.len().max(1)) {
                        Some(&(m, p)) if !miss => (m, p),
                        Some(&(m, p)) => (m, p.wrapping_add(1)),
                        None => (FlowMatch::ANY, 3),
                    };
                    prop_assert_eq!(ts.remove(&m, p), model.remove(&m, p));
                }
            }
            ts.check();
            prop_assert_eq!(ts.len(), model.len());
            let keys = keys_for(&model, &mut rng);
            let mut batch = vec![None; keys.len()];
            ts.lookup_batch(&keys, &mut batch);
            for (k, b) in keys.iter().zip(&batch) {
                let want = model.find(k).map(|(m, p, v)| (*m, p, *v));
                prop_assert_eq!(
                    ts.lookup(k).map(|(p, v)| (p, *v)),
                    model.lookup(k).map(|(p, v)| (p, *v)),
                    "step {} key {:?}", step, k
                );
                let got = ts.find(k).map(|r| (r.flow_match(k), r.priority, *r.value));
                prop_assert_eq!(got, want, "step {} key {:?}", step, k);
                let got_batch = b.map(|r| (r.flow_match(k), r.priority, *r.value));
                prop_assert_eq!(got_batch, want, "batch, step {}", step);
                // A key equal to `k` under the consulted mask gets the same rule.
                let found = |c: &dyn Classify<u32>, k: &FlowKey| c.lookup(k).map(|(p, v)| (p, *v));
                for c in [&ts as &dyn Classify<u32>, &model] {
                    let mask = c.consulted(k);
                    let mut other = *k;
                    for (i, w) in other.words.iter_mut().enumerate() {
                        *w = (*w & mask.words[i]) | (rng.next() & !mask.words[i]);
                    }
                    prop_assert_eq!(found(c, &other), found(c, k), "step {} mask {:?}", step, mask);
                }
            }
        }
        let mut a: Vec<_> = ts.iter().map(|(m, p, v)| (m, p, *v)).collect();
        let mut b: Vec<_> = model.iter().map(|(m, p, v)| (m, p, *v)).collect();
        a.sort_by_key(|r| r.2);
        b.sort_by_key(|r| r.2);
        prop_assert_eq!(a, b);
    }
}

#[test]
fn visits_stop_at_the_first_subtable_that_cannot_win() {
    let mut c = TupleSpace::new();
    c.insert(ip(1), 100, "best");
    c.insert(FlowMatch::ANY.exact(Field::IpProto, 6), 50, "tcp");
    c.insert(FlowMatch::ANY, 0, "miss");
    assert_eq!(c.subtables_visited(&pkt(1, 6)), 1);
    // The /32 destination subtable holds no rule for 2: the prefix tracker skips it.
    assert_eq!(c.subtables_visited(&pkt(2, 6)), 1);
    assert_eq!(c.subtables_visited(&pkt(2, 17)), 2);
}

#[test]
fn prefix_tracking_skips_subtables_and_keeps_results() {
    let mut c = TupleSpace::new();
    let net = |v: u128, len: u32| {
        FlowMatch::ANY.exact(Field::EthType, 0x0800).masked(Field::Ipv4Dst, v, prefix(32, len))
    };
    c.insert(net(0x0a00_0000, 8), 8, "10/8");
    c.insert(net(0x0a01_0000, 16), 16, "10.1/16");
    c.insert(net(0x0a01_0200, 24), 24, "10.1.2/24");
    c.insert(net(0xc0a8_0000, 16), 16, "192.168/16");
    c.insert(FlowMatch::ANY, 0, "miss");
    c.check();
    assert_eq!(found(&c, &pkt(0x0a01_0203, 0)), Some("10.1.2/24"));
    assert_eq!(found(&c, &pkt(0x0a01_0303, 0)), Some("10.1/16"));
    assert_eq!(found(&c, &pkt(0x0a02_0303, 0)), Some("10/8"));
    assert_eq!(found(&c, &pkt(0x0b02_0303, 0)), Some("miss"));
    // 11.x: no /24, /16 or /8 prefix matches, only the catch-all subtable is probed.
    assert_eq!(c.subtables_visited(&pkt(0x0b02_0303, 0)), 1);
    // 10.2.x: the /24 and /16 levels say no; /8 matches and wins.
    assert_eq!(c.subtables_visited(&pkt(0x0a02_0303, 0)), 1);
    // Removing the /24 rule clears its prefix from the lookups' point of view.
    c.remove(&net(0x0a01_0200, 24), 24);
    assert_eq!(found(&c, &pkt(0x0a01_0203, 0)), Some("10.1/16"));
    c.check();
}

#[test]
fn large_subtables_leave_the_prefix_tracker() {
    let mut c = TupleSpace::new();
    for i in 0..(MAX_TRACKED_RULES as u128 + 3) {
        c.insert(ip(i), 1, i);
        c.check();
    }
    c.insert(FlowMatch::ANY, 0, 9999);
    c.check();
    assert_eq!(found(&c, &pkt(2, 0)), Some(2));
    assert_eq!(found(&c, &pkt(0xffff, 0)), Some(9999));
    // Untracked now: the /32 subtable is probed even for an address it lacks.
    assert_eq!(c.subtables_visited(&pkt(0xffff, 0)), 2);
}

#[test]
fn candidate_bitmaps_come_and_go_with_the_subtable_count() {
    let mut ts = TupleSpace::new();
    let n = MAX_BITMAP_SUBTABLES as u32 + 3;
    let rule = |len: u32| {
        FlowMatch::ANY
            .exact(Field::EthType, 0x0800)
            .masked(Field::Ipv4Dst, 0x0a00_0000, prefix(32, len))
            .masked(Field::Ipv4Src, 0x0b00_0000, prefix(32, 33 - len))
    };
    let hit = pkt(0x0a00_0001, 17);
    let mut hit = hit;
    hit.set(Field::Ipv4Src, 0x0b00_0000);
    for len in 1..=n {
        ts.insert(rule(len), len as u16, len);
        ts.check();
        assert_eq!(found(&ts, &hit), Some(len), "{len} subtables");
        let mut out = [None; 1];
        ts.lookup_batch(&[hit], &mut out);
        assert_eq!(out[0].map(|r| *r.value), Some(len));
    }
    for len in (2..=n).rev() {
        ts.remove(&rule(len), len as u16);
        ts.check();
        assert_eq!(found(&ts, &hit), Some(len - 1));
        let mut out = [None; 1];
        ts.lookup_batch(&[hit], &mut out);
        assert_eq!(out[0].map(|r| *r.value), Some(len - 1));
    }
}

#[test]
fn consulted_bits_are_those_of_the_rules_that_could_win() {
    let mut c = TupleSpace::new();
    let net = FlowMatch::ANY.exact(Field::EthType, 0x0800).masked(
        Field::Ipv4Dst,
        0x0a01_0200,
        prefix(32, 24),
    );
    let tcp = FlowMatch::ANY.exact(Field::IpProto, 6);
    c.insert(net, 100, "10.1.2/24");
    c.insert(tcp, 50, "tcp");
    c.insert(FlowMatch::ANY, 0, "miss");
    // A hit in the top subtable: nothing below could beat it.
    assert_eq!(c.consulted(&pkt(0x0a01_0203, 17)), net.mask);
    // A miss there: the TCP subtable is consulted, and wins for TCP.
    let both = net.mask.union(&tcp.mask);
    assert_eq!(c.consulted(&pkt(0x0b00_0001, 6)), both);
    // Neither: the catch-all adds no bits.
    assert_eq!(c.consulted(&pkt(0x0b00_0001, 17)), both);
    let empty: TupleSpace<u32> = TupleSpace::new();
    assert_eq!(empty.consulted(&pkt(1, 6)), FlowKey::ZERO);
}
