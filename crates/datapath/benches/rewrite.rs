//! Rewrite cost on a 64-byte Ethernet/IPv4/UDP frame: set-field ipv4_dst (IPv4 header and
//! UDP pseudo-header checksum updates) and push_vlan (+ pop_vlan to keep the frame size).

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use datapath::action::Action;
use datapath::key::{Field, FlowKey};
use datapath::packet::{Layers, Packet};
use datapath::rewrite::apply;

/// Ethernet + IPv4 + UDP with a valid UDP checksum, 64 bytes in all.
fn frame() -> (Packet, FlowKey, Layers) {
    let mut f = vec![0u8; 64];
    f[0..6].copy_from_slice(&[2, 0, 0, 0, 0, 2]);
    f[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 1]);
    f[12..14].copy_from_slice(&[0x08, 0x00]);
    f[14..34]
        .copy_from_slice(&[0x45, 0, 0, 50, 0, 1, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2]);
    f[34..42].copy_from_slice(&[0x13, 0x88, 0x00, 0x35, 0, 30, 0x12, 0x34]);
    let mut key = FlowKey::ZERO;
    key.set(Field::EthType, 0x0800);
    key.set(Field::IpProto, 17);
    key.set(Field::Ipv4Dst, 0x0a00_0002);
    let layers = Layers { ethertype: 12, l3: Some(14), l4: Some(34), ..Layers::default() };
    (Packet::from_slice(&f), key, layers)
}

fn bench(c: &mut Criterion) {
    let (mut p, mut k, mut l) = frame();
    let mut dst = 0u32;
    c.bench_function("set_field_ipv4_dst_64B", |b| {
        b.iter(|| {
            dst = dst.wrapping_add(1);
            let a = Action::SetField(Field::Ipv4Dst, u128::from(dst));
            apply(&mut p, &mut k, &mut l, black_box(&a)).unwrap();
        })
    });
    let (mut p, mut k, mut l) = frame();
    c.bench_function("push_vlan_pop_vlan_64B", |b| {
        b.iter(|| {
            apply(&mut p, &mut k, &mut l, black_box(&Action::PushVlan(0x8100))).unwrap();
            apply(&mut p, &mut k, &mut l, black_box(&Action::PopVlan)).unwrap();
        })
    });
    c.bench_function("push_vlan_64B", |b| {
        b.iter_batched_ref(
            frame,
            |(p, k, l)| apply(p, k, l, black_box(&Action::PushVlan(0x8100))).unwrap(),
            criterion::BatchSize::SmallInput,
        )
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
