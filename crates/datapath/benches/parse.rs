//! Parser throughput: ns per packet for a 64-byte TCP/IPv4 frame, a VLAN-tagged
//! IPv6/UDP frame and an ICMPv6 neighbour solicitation with a source link-layer option.
//! Each iteration parses a batch of 32 copies (as a worker does), so the reported
//! element rate is packets per second.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use datapath::key::FlowKey;
use datapath::parse::parse;
use etherparse::PacketBuilder;

const BATCH: usize = 32;
const MAC_A: [u8; 6] = [0x02, 0, 0, 0, 0, 1];
const MAC_B: [u8; 6] = [0x02, 0, 0, 0, 0, 2];
const V6_A: [u8; 16] = [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
const V6_B: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];

fn tcp_v4() -> Vec<u8> {
    let mut f = Vec::new();
    PacketBuilder::ethernet2(MAC_A, MAC_B)
        .ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64)
        .tcp(40000, 80, 1, 1024)
        .ack(5)
        .write(&mut f, &[0; 10])
        .unwrap();
    assert_eq!(f.len(), 64);
    f
}

fn vlan_udp_v6() -> Vec<u8> {
    let mut f = Vec::new();
    PacketBuilder::ethernet2(MAC_A, MAC_B)
        .single_vlan(100.try_into().unwrap())
        .ipv6(V6_A, V6_B, 64)
        .udp(5353, 5353)
        .write(&mut f, &[0; 18])
        .unwrap();
    f
}

fn nd_ns() -> Vec<u8> {
    let mut body = V6_B.to_vec();
    body.extend_from_slice(&[1, 1]);
    body.extend_from_slice(&MAC_A);
    let mut f = Vec::new();
    PacketBuilder::ethernet2(MAC_A, MAC_B)
        .ipv6(V6_A, V6_B, 255)
        .icmpv6_raw(135, 0, [0; 4])
        .write(&mut f, &body)
        .unwrap();
    f
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("parse");
    g.throughput(Throughput::Elements(BATCH as u64));
    for (name, frame) in [
        ("tcp_ipv4_64B", tcp_v4()),
        ("vlan_ipv6_udp", vlan_udp_v6()),
        ("icmpv6_nd_ns_sll", nd_ns()),
    ] {
        let frames: Vec<Vec<u8>> = vec![frame; BATCH];
        let mut keys = vec![FlowKey::ZERO; BATCH];
        g.bench_function(name, |b| {
            b.iter(|| {
                for (f, k) in frames.iter().zip(keys.iter_mut()) {
                    black_box(parse(black_box(f), 1, k));
                }
                black_box(&keys);
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
