//! Synthetic rule sets and traffic for the datapath benchmark.
//!
//! A [`Workload`] is a list of rules (match + priority) and a list of frames, one per
//! flow, each built to hit one of the rules. Rule kinds follow the classic evaluations:
//! - `Exact`: exact IPv4/UDP 5-tuples (one mask: every rule shares it).
//! - `Wildcard { masks }`: rules spread over `masks` distinct masks, each a random choice
//!   of source/destination prefix lengths and which ports are matched.
//! - `Prefix`: ClassBench-like source/destination prefixes with lengths skewed towards
//!   long prefixes, ports exact or wildcarded; the number of masks emerges from the draw.
//! - `Mix { exact_percent }`: that share of `Exact` rules, the rest `Wildcard`.
//!
//! Everything is drawn from a seeded generator, so a workload is reproducible.

use datapath::key::{Field, FlowMatch};

/// Which rule shapes to generate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuleKind {
    Exact,
    Wildcard { masks: usize },
    Prefix,
    Mix { exact_percent: u8, masks: usize },
}

/// One rule of a workload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleSpec {
    pub m: FlowMatch,
    pub priority: u16,
}

/// Rules plus frames that hit them.
#[derive(Clone, Debug)]
pub struct Workload {
    pub rules: Vec<RuleSpec>,
    pub frames: Vec<Vec<u8>>,
}

/// A small deterministic generator (xorshift64*), enough for workloads.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}

/// The shape of a wildcard rule: prefix lengths and whether each port is matched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Shape {
    src_len: u32,
    dst_len: u32,
    sport: bool,
    dport: bool,
}

fn prefix_mask(len: u32) -> u128 {
    if len == 0 {
        0
    } else {
        (u32::MAX << (32 - len)) as u128
    }
}

fn rule_for(shape: Shape, rng: &mut Rng) -> FlowMatch {
    let mut m = FlowMatch::ANY
        .exact(Field::EthType, 0x0800)
        .exact(Field::IpProto, 17)
        .masked(Field::Ipv4Src, rng.next_u64() as u128, prefix_mask(shape.src_len))
        .masked(Field::Ipv4Dst, rng.next_u64() as u128, prefix_mask(shape.dst_len));
    if shape.sport {
        m = m.exact(Field::TpSrc, rng.below(65536) as u128);
    }
    if shape.dport {
        m = m.exact(Field::TpDst, rng.below(65536) as u128);
    }
    m
}

const EXACT: Shape = Shape { src_len: 32, dst_len: 32, sport: true, dport: true };

fn distinct_shapes(n: usize, rng: &mut Rng) -> Vec<Shape> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    let mut tries = 0;
    while out.len() < n && tries < n * 1000 + 1000 {
        tries += 1;
        let s = Shape {
            src_len: rng.below(33) as u32,
            dst_len: rng.below(33) as u32,
            sport: rng.below(2) == 1,
            dport: rng.below(2) == 1,
        };
        if seen.insert(s) {
            out.push(s);
        }
    }
    out
}

/// A ClassBench-like prefix length: mostly long prefixes, some short, a few wildcards.
fn classbench_len(rng: &mut Rng) -> u32 {
    match rng.below(10) {
        0 => 0,
        1 => 8 + rng.below(9) as u32,
        2..=4 => 16 + rng.below(9) as u32,
        _ => 24 + rng.below(9) as u32,
    }
}

impl Workload {
    /// Generates `n_rules` rules of `kind` and `n_flows` frames of `frame_len` bytes
    /// (64..=1518), each hitting a rule chosen uniformly at random.
    pub fn generate(
        kind: RuleKind,
        n_rules: usize,
        n_flows: usize,
        frame_len: usize,
        seed: u64,
    ) -> Workload {
        let mut rng = Rng::new(seed);
        let n_rules = n_rules.max(1);
        let wild_shapes = match kind {
            RuleKind::Wildcard { masks } | RuleKind::Mix { masks, .. } => {
                distinct_shapes(masks.max(1), &mut rng)
            }
            _ => Vec::new(),
        };
        let mut seen = std::collections::HashSet::with_capacity(n_rules);
        let mut rules = Vec::with_capacity(n_rules);
        while rules.len() < n_rules {
            let shape = match kind {
                RuleKind::Exact => EXACT,
                RuleKind::Wildcard { .. } => {
                    wild_shapes[rng.below(wild_shapes.len() as u64) as usize]
                }
                RuleKind::Prefix => Shape {
                    src_len: classbench_len(&mut rng),
                    dst_len: classbench_len(&mut rng),
                    sport: rng.below(4) == 0,
                    dport: rng.below(2) == 0,
                },
                RuleKind::Mix { exact_percent, .. } => {
                    if rng.below(100) < exact_percent as u64 {
                        EXACT
                    } else {
                        wild_shapes[rng.below(wild_shapes.len() as u64) as usize]
                    }
                }
            };
            let m = rule_for(shape, &mut rng);
            // Exact rules are equally specific: one priority. Wildcard rules get longer
            // prefixes at higher priority, as a longest-prefix-first policy would.
            let priority = if shape == EXACT {
                1000
            } else {
                (shape.src_len + shape.dst_len + 2 * (shape.sport as u32 + shape.dport as u32))
                    as u16
                    + 1
            };
            if seen.insert((m, priority)) {
                rules.push(RuleSpec { m, priority });
            }
        }
        let frames = (0..n_flows.max(1))
            .map(|_| {
                let r = &rules[rng.below(rules.len() as u64) as usize];
                let mut fill = |f: Field| {
                    let v = r.m.key.get(f);
                    let mask = r.m.mask.get(f);
                    (v | (rng.next_u64() as u128 & !mask)) & f.full()
                };
                let src = fill(Field::Ipv4Src) as u32;
                let dst = fill(Field::Ipv4Dst) as u32;
                let sport = fill(Field::TpSrc) as u16;
                let dport = fill(Field::TpDst) as u16;
                udp_frame(src, dst, sport, dport, frame_len)
            })
            .collect();
        Workload { rules, frames }
    }
}

/// An Ethernet/IPv4/UDP frame of `len` bytes (at least 64 — 60 plus the FCS the wire
/// adds — at most 1518) with a valid IPv4 header checksum and a zero UDP checksum.
pub fn udp_frame(src: u32, dst: u32, sport: u16, dport: u16, len: usize) -> Vec<u8> {
    let len = len.clamp(64, 1518) - 4;
    let mut f = vec![0u8; len];
    f[0..6].copy_from_slice(&[0x02, 0, 0, 0, 0, 0x02]);
    f[6..12].copy_from_slice(&[0x02, 0, 0, 0, 0, 0x01]);
    f[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    let ip_len = (len - 14) as u16;
    let ip = &mut f[14..34];
    ip[0] = 0x45;
    ip[2..4].copy_from_slice(&ip_len.to_be_bytes());
    ip[8] = 64;
    ip[9] = 17;
    ip[12..16].copy_from_slice(&src.to_be_bytes());
    ip[16..20].copy_from_slice(&dst.to_be_bytes());
    let mut sum: u32 = 0;
    for i in (0..20).step_by(2) {
        sum += u16::from_be_bytes([ip[i], ip[i + 1]]) as u32;
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    ip[10..12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
    let udp = &mut f[34..42];
    udp[0..2].copy_from_slice(&sport.to_be_bytes());
    udp[2..4].copy_from_slice(&dport.to_be_bytes());
    udp[4..6].copy_from_slice(&(ip_len - 20).to_be_bytes());
    f
}

#[cfg(test)]
mod tests {
    use super::*;
    use datapath::key::FlowKey;

    fn key_of(frame: &[u8]) -> FlowKey {
        let mut k = FlowKey::ZERO;
        k.set(Field::EthType, u16::from_be_bytes([frame[12], frame[13]]) as u128);
        k.set(Field::IpProto, frame[23] as u128);
        k.set(Field::Ipv4Src, u32::from_be_bytes(frame[26..30].try_into().unwrap()) as u128);
        k.set(Field::Ipv4Dst, u32::from_be_bytes(frame[30..34].try_into().unwrap()) as u128);
        k.set(Field::TpSrc, u16::from_be_bytes([frame[34], frame[35]]) as u128);
        k.set(Field::TpDst, u16::from_be_bytes([frame[36], frame[37]]) as u128);
        k
    }

    #[test]
    fn every_flow_hits_some_rule_and_shapes_are_as_asked() {
        for kind in [
            RuleKind::Exact,
            RuleKind::Wildcard { masks: 10 },
            RuleKind::Prefix,
            RuleKind::Mix { exact_percent: 50, masks: 5 },
        ] {
            let w = Workload::generate(kind, 300, 200, 64, 7);
            assert_eq!(w.rules.len(), 300);
            assert_eq!(w.frames.len(), 200);
            for f in &w.frames {
                assert_eq!(f.len(), 60);
                let k = key_of(f);
                assert!(w.rules.iter().any(|r| r.m.matches(&k)), "{kind:?}");
            }
            let masks: std::collections::HashSet<_> = w.rules.iter().map(|r| r.m.mask).collect();
            match kind {
                RuleKind::Exact => assert_eq!(masks.len(), 1),
                RuleKind::Wildcard { masks: m } => assert!(masks.len() <= m && masks.len() > m / 2),
                _ => assert!(masks.len() > 1),
            }
        }
    }

    #[test]
    fn frames_have_valid_ipv4_checksums_and_sizes() {
        for len in [64, 128, 1518, 10, 5000] {
            let f = udp_frame(0x0a000001, 0x0a000002, 1, 2, len);
            assert_eq!(f.len(), len.clamp(64, 1518) - 4);
            let mut sum: u32 = 0;
            for i in (14..34).step_by(2) {
                sum += u16::from_be_bytes([f[i], f[i + 1]]) as u32;
            }
            while sum > 0xffff {
                sum = (sum & 0xffff) + (sum >> 16);
            }
            assert_eq!(sum, 0xffff);
        }
    }

    #[test]
    fn generation_is_reproducible() {
        let a = Workload::generate(RuleKind::Prefix, 50, 20, 64, 42);
        let b = Workload::generate(RuleKind::Prefix, 50, 20, 64, 42);
        assert_eq!(a.rules, b.rules);
        assert_eq!(a.frames, b.frames);
    }
}
