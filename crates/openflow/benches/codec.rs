//! Codec speed: decode and encode of a flow-mod with five OXM fields and two actions, and
//! of a packet-in carrying a 64-byte packet. Run with `cargo bench -p openflow`.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use openflow::action::Action;
use openflow::instruction::Instruction;
use openflow::match13::Match;
use openflow::oxm::{Oxm, OFPVID_PRESENT};
use openflow::v13::{FlowMod, Message, PacketIn, PacketInReason};
use openflow::{Frame, MacAddr};
use std::net::Ipv4Addr;

fn flow_mod() -> Frame {
    Frame::v13(
        7,
        Message::FlowMod(FlowMod {
            priority: 100,
            match_: Match {
                fields: vec![
                    Oxm::InPort(1),
                    Oxm::EthType(0x0800),
                    Oxm::VlanVid(OFPVID_PRESENT | 10, None),
                    Oxm::Ipv4Dst(Ipv4Addr::new(10, 1, 0, 0), Some(Ipv4Addr::new(255, 255, 0, 0))),
                    Oxm::IpProto(6),
                ],
            },
            instructions: vec![Instruction::ApplyActions(vec![
                Action::SetField(Oxm::EthDst(MacAddr([2, 0, 0, 0, 0, 1]), None)),
                Action::Output { port: 2, max_len: 0 },
            ])],
            ..FlowMod::default()
        }),
    )
}

fn packet_in() -> Frame {
    let mut data = vec![0u8; 64];
    data[12] = 0x08;
    Frame::v13(
        0,
        Message::PacketIn(PacketIn {
            buffer_id: 0xffff_ffff,
            total_len: 64,
            reason: PacketInReason::NoMatch,
            table_id: 0,
            cookie: 0,
            match_: Match { fields: vec![Oxm::InPort(3)] },
            data,
        }),
    )
}

fn bench(c: &mut Criterion) {
    for (name, frame) in [("flow_mod_5oxm_2act", flow_mod()), ("packet_in_64B", packet_in())] {
        let bytes = frame.encode().unwrap();
        let mut g = c.benchmark_group(name);
        g.throughput(Throughput::Elements(1));
        g.bench_function("decode", |b| b.iter(|| Frame::decode(black_box(&bytes)).unwrap()));
        g.bench_function("decode_validated", |b| {
            b.iter(|| Frame::decode_validated(black_box(&bytes)).unwrap())
        });
        g.bench_function("encode", |b| b.iter(|| black_box(&frame).encode().unwrap()));
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
