//! A fixed amount of hot-path work for counting instructions under callgrind: the
//! parser over a set of frames, the header rewrites, and the output-side offload work
//! (checksum finishing, TCP and UDP segmentation), each a fixed number of rounds.
//!
//! Each kind of work runs in its own `#[inline(never)]` function, so that callgrind's
//! inclusive cost of that function is the cost of the work (frames are built before):
//!
//! ```sh
//! cargo build --release -p datapath --example hotpath_ir
//! valgrind --tool=callgrind --callgrind-out-file=cg.out target/release/examples/hotpath_ir 2000
//! callgrind_annotate --inclusive=yes cg.out | grep hotpath_ir::run_
//! ```
//!
//! The counts depend only on the code and the argument (rounds, default 2000), so two
//! builds of the datapath can be compared instruction for instruction.

use std::hint::black_box;

use datapath::action::Action;
use datapath::compose::compose;
use datapath::key::{Field, FlowKey, FlowMatch};
use datapath::packet::{Gso, GsoKind, Layers, Offload, Packet};
use datapath::parse::{ieh, parse};
use datapath::rewrite::{
    apply, finish_offloaded_checksum, finish_partial_checksum, ones_complement_sum,
    resolve_offload, segment_tcp,
};

/// A composed frame for `m`.
fn frame(m: FlowMatch) -> Vec<u8> {
    compose(&m).expect("composable")
}

/// IPv4 of protocol `proto` from 10.0.0.1 port `src` to 10.0.0.2 port `dst`.
fn ip4(proto: u128, src: u128, dst: u128) -> FlowMatch {
    FlowMatch::ANY
        .exact(Field::EthType, 0x0800)
        .exact(Field::IpProto, proto)
        .exact(Field::Ipv4Src, 0x0a00_0001)
        .exact(Field::Ipv4Dst, 0x0a00_0002)
        .exact(Field::TpSrc, src)
        .exact(Field::TpDst, dst)
}

fn tcp4() -> FlowMatch {
    ip4(6, 40000, 80)
}

fn udp4() -> FlowMatch {
    ip4(17, 5000, 53)
}

fn vlan_udp6() -> FlowMatch {
    FlowMatch::ANY
        .exact(Field::VlanVid, 0x1000 | 100)
        .exact(Field::EthType, 0x86dd)
        .exact(Field::IpProto, 17)
        .exact(Field::Ipv6Src, 0xfe80 << 112 | 1)
        .exact(Field::Ipv6Dst, 0x2001_0db8 << 96 | 2)
        .exact(Field::TpSrc, 5353)
        .exact(Field::TpDst, 5353)
}

fn nd_ns() -> FlowMatch {
    FlowMatch::ANY
        .exact(Field::EthType, 0x86dd)
        .exact(Field::IpProto, 58)
        .exact(Field::IcmpType, 135)
        .exact(Field::IcmpCode, 0)
        .exact(Field::Ipv6NdTarget, 0xfe80 << 112 | 2)
        .exact(Field::ArpSha, 0x0200_0000_0001)
}

fn ext6() -> FlowMatch {
    let bits = ieh::HOP | ieh::DEST | ieh::ROUTER | ieh::FRAG | ieh::AUTH;
    FlowMatch::ANY
        .exact(Field::EthType, 0x86dd)
        .exact(Field::Ipv6Exthdr, bits.into())
        .exact(Field::IpProto, 6)
        .exact(Field::TpDst, 443)
}

fn qinq_icmp4() -> Vec<u8> {
    // A composed tagged ICMP frame with an 802.1ad tag pushed on top.
    let mut f = frame(
        FlowMatch::ANY
            .exact(Field::VlanVid, 0x1000 | 7)
            .exact(Field::EthType, 0x0800)
            .exact(Field::IpProto, 1)
            .exact(Field::IcmpType, 8),
    );
    f.splice(12..12, [0x88, 0xa8, 0x00, 0x64]);
    f
}

fn arp() -> FlowMatch {
    FlowMatch::ANY
        .exact(Field::EthType, 0x0806)
        .exact(Field::ArpOp, 2)
        .exact(Field::Ipv4Src, 0x0a00_0001)
        .exact(Field::Ipv4Dst, 0x0a00_0002)
}

fn mpls() -> FlowMatch {
    FlowMatch::ANY.exact(Field::EthType, 0x8847).exact(Field::MplsLabel, 1000)
}

fn pbb() -> FlowMatch {
    FlowMatch::ANY.exact(Field::EthType, 0x88e7).exact(Field::PbbIsid, 0xabcdef)
}

/// Recomputes the IPv4 header checksum of the header at `l3` (`ihl` bytes long).
fn fix_ip_checksum(f: &mut [u8], l3: usize, ihl: usize) {
    f[l3 + 10..l3 + 12].fill(0);
    let c = !ones_complement_sum(&f[l3..l3 + ihl]);
    f[l3 + 10..l3 + 12].copy_from_slice(&c.to_be_bytes());
}

/// TCP/IPv4 with 4 bytes of IP options (NOP, NOP, NOP, EOL).
fn tcp4_options() -> Vec<u8> {
    let mut f = frame(tcp4());
    f.truncate(54);
    f.splice(34..34, [1, 1, 1, 0]);
    f[14] = 0x46;
    f[16..18].copy_from_slice(&44u16.to_be_bytes());
    fix_ip_checksum(&mut f, 14, 24);
    f
}

/// An untagged IPv4 TCP or UDP frame with `payload` bytes of payload, its L4 checksum
/// finished, or (with `partial`) holding the pseudo-header's sum.
fn big4(tcp: bool, payload: usize, partial: bool) -> Vec<u8> {
    let mut f = frame(if tcp { tcp4() } else { udp4() });
    let hdr = if tcp { 54 } else { 42 };
    f.truncate(hdr);
    f.extend((0..payload).map(|i| (i * 7 + 1) as u8));
    let ip_len = (f.len() - 14) as u16;
    f[16..18].copy_from_slice(&ip_len.to_be_bytes());
    fix_ip_checksum(&mut f, 14, 20);
    let l4_len = f.len() - 34;
    if !tcp {
        f[38..40].copy_from_slice(&(l4_len as u16).to_be_bytes());
    }
    let csum = if tcp { 34 + 16 } else { 34 + 6 };
    let mut pseudo = [0u8; 12];
    pseudo[..8].copy_from_slice(&f[26..34]);
    pseudo[9] = if tcp { 6 } else { 17 };
    pseudo[10..].copy_from_slice(&(l4_len as u16).to_be_bytes());
    let ps = ones_complement_sum(&pseudo);
    f[csum..csum + 2].copy_from_slice(&ps.to_be_bytes());
    if !partial {
        let c = !ones_complement_sum(&f[34..]);
        f[csum..csum + 2].copy_from_slice(&c.to_be_bytes());
    }
    f
}

/// Parses every frame `rounds` times.
#[inline(never)]
fn run_parse(frames: &[Vec<u8>], rounds: usize) -> u64 {
    let mut key = FlowKey::ZERO;
    let mut acc = 0u64;
    for _ in 0..rounds {
        for f in frames {
            let out = parse(black_box(f), 1, &mut key);
            acc = acc.wrapping_add(u64::from(out.layers.ethertype) + key.words[0]);
            black_box(&key);
        }
    }
    acc
}

/// One packet and the actions to apply to a fresh copy of it.
struct Case {
    frame: Vec<u8>,
    key: FlowKey,
    layers: Layers,
    actions: Vec<Action>,
}

fn case(frame: Vec<u8>, actions: Vec<Action>) -> Case {
    let mut key = FlowKey::ZERO;
    let out = parse(&frame, 1, &mut key);
    assert_eq!(out.error, None);
    Case { frame, key, layers: out.layers, actions }
}

/// Applies each case's actions to a fresh copy of its packet, `rounds` times.
#[inline(never)]
fn run_rewrite(cases: &[Case], rounds: usize) -> u64 {
    let mut p = Packet::from_slice(&[0; 256]);
    let mut acc = 0u64;
    for _ in 0..rounds {
        for c in cases {
            p.refill(&c.frame);
            let (mut key, mut layers) = (c.key, c.layers);
            for a in &c.actions {
                let ok = apply(&mut p, &mut key, &mut layers, black_box(a)).is_ok();
                acc += u64::from(ok);
            }
            black_box(p.data());
        }
    }
    acc
}

/// Finishes partial and offloaded checksums, `rounds` times.
#[inline(never)]
fn run_finish(partial: &[Vec<u8>], rounds: usize) -> u64 {
    let mut buf = Packet::from_slice(&[0; 2048]);
    let mut acc = 0u64;
    for _ in 0..rounds {
        for f in partial {
            buf.refill(f);
            acc += u64::from(finish_offloaded_checksum(buf.data_mut()));
            buf.refill(f);
            acc += u64::from(finish_partial_checksum(buf.data_mut()));
        }
    }
    acc
}

/// Cuts a TCP and a UDP super-frame into segments, `rounds` times.
#[inline(never)]
fn run_segment(big_tcp: &[u8], big_udp: &[u8], rounds: usize) -> u64 {
    let mut pool: Vec<Packet> = (0..64).map(|_| Packet::from_slice(&[0; 2048])).collect();
    let mut out = Vec::with_capacity(64);
    let mut acc = 0u64;
    for _ in 0..rounds {
        let n = segment_tcp(black_box(big_tcp), 1500, 1514, &mut pool, &mut out).unwrap_or(0);
        acc += n as u64;
        pool.append(&mut out);
        let mut p = pool.pop().unwrap_or_default();
        p.refill(big_udp);
        p.set_offload(Some(Offload {
            partial_csum: true,
            gso: Some(Gso { kind: GsoKind::Udp, size: 1000, ecn: false }),
        }));
        acc += resolve_offload(p, 1500, 1514, &mut pool, &mut out).unwrap_or(0) as u64;
        pool.append(&mut out);
    }
    acc
}

fn main() {
    let rounds: usize =
        std::env::args().nth(1).map_or(2000, |a| a.parse().expect("rounds: a number"));

    let frames = vec![
        frame(tcp4()),
        frame(udp4()),
        frame(vlan_udp6()),
        frame(nd_ns()),
        frame(ext6()),
        qinq_icmp4(),
        frame(arp()),
        frame(mpls()),
        frame(pbb()),
        tcp4_options(),
    ];

    use Action::*;
    let cases = vec![
        case(frame(udp4()), vec![SetField(Field::Ipv4Dst, 0x0a00_0009), SetField(Field::TpSrc, 7)]),
        case(
            frame(tcp4()),
            vec![
                SetField(Field::Ipv4Src, 0x0a00_0003),
                SetField(Field::TpDst, 8080),
                DecNwTtl,
                SetField(Field::IpDscp, 10),
                SetField(Field::EthDst, 0x0200_0000_0009),
            ],
        ),
        case(tcp4_options(), vec![SetNwTtl(9), SetField(Field::TpSrc, 1)]),
        case(
            frame(vlan_udp6()),
            vec![
                SetField(Field::Ipv6Dst, 7),
                SetField(Field::VlanVid, 200),
                SetField(Field::Ipv6Flabel, 0x12345),
                DecNwTtl,
                PopVlan,
            ],
        ),
        case(frame(tcp4()), vec![PushVlan(0x8100), PopVlan]),
        case(
            frame(tcp4()),
            vec![PushMpls(0x8847), SetField(Field::MplsLabel, 5), DecMplsTtl, CopyTtlIn],
        ),
        case(frame(mpls()), vec![PopMpls(0x0800)]),
        case(frame(nd_ns()), vec![SetField(Field::ArpSha, 0x0200_0000_0002)]),
        case(frame(arp()), vec![SetField(Field::ArpOp, 1), SetField(Field::Ipv4Src, 1)]),
        case(frame(tcp4()), vec![PushPbb(0x88e7), PopPbb]),
    ];

    let partial = vec![big4(true, 100, true), big4(false, 100, true), big4(true, 200, false)];
    let big_tcp = big4(true, 3000, false);
    let big_udp = big4(false, 2500, false);

    let a = run_parse(&frames, rounds);
    let b = run_rewrite(&cases, rounds);
    let c = run_finish(&partial, rounds);
    let d = run_segment(&big_tcp, &big_udp, rounds);
    println!("{a} {b} {c} {d}");
}
