//! Instructions, the action set, table-miss, outputs, packet-ins, TTL, the tracer.

use super::*;
use crate::action::port;
use crate::counters::Misc;
use crate::trace::TraceEvent;

#[test]
fn instructions_run_in_spec_order_and_goto_sees_the_new_key() {
    let (dp, mut wr, _rx) = datapath(config(4));
    // Table 0: apply changes EthSrc and outputs a copy; the action set written here is
    // cleared by table 1; metadata is written; goto 1.
    wr.insert_rule(
        0,
        Rule::new(
            FlowMatch::ANY,
            5,
            Instructions {
                apply: vec![Action::SetField(Field::EthSrc, 0x42), Action::Output(2)],
                write_actions: Some(vec![Action::Output(4)]),
                write_metadata: Some((0xab, 0xff)),
                goto_table: Some(1),
                ..ins()
            },
        ),
    )
    .unwrap();
    // Table 1 matches only the key as changed by table 0.
    let m = FlowMatch::ANY.exact(Field::Metadata, 0xab).exact(Field::EthSrc, 0x42);
    wr.insert_rule(
        1,
        Rule::new(
            m,
            5,
            Instructions {
                apply: vec![Action::Output(3)],
                clear_actions: true,
                write_actions: Some(vec![Action::SetQueue(9), Action::Output(1)]),
                ..ins()
            },
        ),
    )
    .unwrap();
    wr.publish();
    let t = dp.trace(&frame(1, 2), 4, 0);
    let kinds = trace_steps(&t);
    assert_eq!(
        kinds,
        vec![
            "parsed",
            "table0:true",
            "apply SetField(EthSrc, 66)",
            "apply Output(2)",
            "out 2 None",
            "write",
            "metadata 0xab",
            "goto 1",
            "table1:true",
            "apply Output(3)",
            "out 3 None",
            "clear",
            "write",
            "set [SetQueue(9), Output(1)]",
            "exec SetQueue(9)",
            "exec Output(1)",
            "out 1 Some(9)",
        ]
    );
    // Forwarding agrees with the trace, in order.
    let mut w = dp.worker(0);
    assert_eq!(run(&dp, &mut w, &frame(1, 2), 1, 0).ports(), vec![2, 3]);
    let mut w = dp.worker(0);
    let out = run(&dp, &mut w, &frame(1, 2), 2, 0);
    assert_eq!(out.ports(), vec![3, 1], "output to the in_port by number is dropped");
    assert_eq!(dp.read_misc(Misc::OutputToInPortDrops), 2);
}

#[test]
fn action_set_executes_in_spec_order() {
    let (dp, mut wr, _rx) = datapath(config(4));
    let written = vec![
        Action::Output(2),
        Action::SetQueue(1),
        Action::SetField(Field::EthDst, 7),
        Action::DecNwTtl,
        Action::SetNwTtl(64),
        Action::CopyTtlOut,
        Action::PushVlan(0x8100),
        Action::PushPbb(0x88e7),
        Action::PushMpls(0x8847),
        Action::PopVlan,
        Action::CopyTtlIn,
    ];
    let r = Rule::new(
        FlowMatch::ANY,
        1,
        Instructions { apply: vec![Action::SetNwTtl(9)], write_actions: Some(written), ..ins() },
    );
    wr.insert_rule(0, r).unwrap();
    wr.publish();
    let t = dp.trace(&frame(1, 2), 1, 0);
    assert_eq!(
        t.set_actions(),
        vec![
            Action::CopyTtlIn,
            Action::PopVlan,
            Action::PushMpls(0x8847),
            Action::PushPbb(0x88e7),
            Action::PushVlan(0x8100),
            Action::CopyTtlOut,
            Action::DecNwTtl,
            Action::SetNwTtl(64),
            Action::SetField(Field::EthDst, 7),
            Action::SetQueue(1),
            Action::Output(2),
        ]
    );
    assert_eq!(t.outputs.ports(), vec![2]);
    assert_eq!(t.outputs.tx[0].queue, Some(1));
    // Without the apply-actions' TTL the decrement fails and ends the packet there.
    wr.modify_rule(0, None, |r| std::sync::Arc::make_mut(&mut r.instructions).apply.clear())
        .unwrap();
    wr.publish();
    let t = dp.trace(&frame(1, 2), 1, 0);
    assert_eq!(t.set_actions().last(), Some(&Action::DecNwTtl));
    assert!(t.outputs.tx.is_empty());
    assert!(t.events.contains(&TraceEvent::Dropped("invalid TTL")));
}

#[test]
fn table_miss_drops_or_uses_the_miss_rule_or_the_controller() {
    let (dp, mut wr, rx) = datapath(config(2));
    let mut w = dp.worker(16);
    assert!(run(&dp, &mut w, &frame(1, 2), 1, 0).tx.is_empty());
    assert_eq!(dp.read_misc(Misc::TableMissDrops), 1);
    assert_eq!(dp.read_table(0).lookups, 1);
    assert_eq!(dp.read_table(0).matched, 0);

    let mut miss = Rule::new(FlowMatch::ANY, 0, apply(vec![Action::Controller { max_len: 20 }]));
    miss.cookie = 77;
    assert!(miss.is_table_miss());
    wr.insert_rule(0, miss).unwrap();
    wr.publish();
    run(&dp, &mut w, &frame(1, 2), 1, 0);
    let pi = rx.try_recv().unwrap();
    assert_eq!(
        (pi.reason, pi.table_id, pi.cookie, pi.in_port, pi.max_len, pi.total_len,),
        (PacketInReason::NoMatch, 0, 77, 1, 20, 64)
    );
    assert_eq!(pi.data, frame(1, 2), "the whole frame: the agent cuts it");

    // A goto into an empty table, with the 1.0 miss behaviour.
    let mut c = config(2);
    c.miss = MissBehaviour::Controller { max_len: 128 };
    wr.set_config(c);
    wr.insert_rule(0, Rule::new(on_port(2), 9, Instructions { goto_table: Some(3), ..ins() }))
        .unwrap();
    wr.publish();
    run(&dp, &mut w, &frame(1, 2), 2, 0);
    let pi = rx.try_recv().unwrap();
    assert_eq!(
        (pi.reason, pi.table_id, pi.cookie, pi.max_len, pi.data.len()),
        (PacketInReason::NoMatch, 3, u64::MAX, 128, 64)
    );
    // A miss asking for the whole packet gets the config's length.
    let mut c = config(2);
    c.miss = MissBehaviour::Controller { max_len: 0xffff };
    c.packet_in_max_len = 50;
    wr.set_config(c);
    wr.publish();
    run(&dp, &mut w, &frame(1, 2), 2, 0);
    let pi = rx.try_recv().unwrap();
    assert_eq!((pi.max_len, pi.data.len()), (50, 64));
}

#[test]
fn every_output_kind() {
    let mut c = config(4);
    c.ports[2].no_flood = true; // port 3
    c.ports[3].no_fwd = true; // port 4
    let (dp, mut wr, rx) = datapath(c);
    let outs = |p: u32| output_rule(on_port(1), 1, p);
    let mut w = dp.worker(0);
    let mut check = |wr: &mut Writer, p: u32| {
        wr.insert_rule(0, outs(p)).unwrap();
        wr.publish();
        run(&dp, &mut w, &frame(1, 2), 1, 0)
    };
    assert_eq!(check(&mut wr, 2).ports(), vec![2]);
    assert_eq!(check(&mut wr, port::FLOOD).ports(), vec![2]);
    assert_eq!(check(&mut wr, port::ALL).ports(), vec![2, 3]);
    assert_eq!(check(&mut wr, port::IN_PORT).ports(), vec![1]);
    assert_eq!(check(&mut wr, port::LOCAL).ports(), vec![port::LOCAL]);
    assert_eq!(check(&mut wr, 4).ports(), Vec::<u32>::new(), "no_fwd");
    assert_eq!(check(&mut wr, 99).ports(), Vec::<u32>::new(), "unknown port");
    assert_eq!(check(&mut wr, port::TABLE).ports(), Vec::<u32>::new());
    let n = check(&mut wr, port::NORMAL);
    assert_eq!((n.tx.len(), n.normal.len()), (0, 1));
    assert_eq!(n.normal[0].in_port, 1);
    assert_eq!(n.normal[0].packet.data(), &frame(1, 2)[..]);
    assert!(check(&mut wr, port::CONTROLLER).tx.is_empty());
    let pi = rx.try_recv().unwrap();
    assert_eq!(
        (pi.reason, pi.max_len, pi.total_len),
        (PacketInReason::Action, u16::MAX, 64),
        "output to CONTROLLER: the config's length"
    );
    assert_eq!(pi.data, frame(1, 2));
    assert_eq!(dp.read_misc(Misc::OutputDrops), 3);

    struct Echo;
    impl NormalHandler for Echo {
        fn handle(&mut self, p: NormalPacket, out: &mut Outputs) {
            out.tx.push(Tx { port: p.in_port, queue: None, packet: p.packet });
        }
    }
    let mut n = n;
    n.drain_normal(&mut Echo);
    assert_eq!((n.ports(), n.normal.len()), (vec![1], 0));
    // Port counters.
    assert_eq!(dp.read_port(1).tx_packets, 3, "direct, FLOOD and ALL");
    assert_eq!(dp.read_port(0).rx_packets, 10);
    assert_eq!(dp.read_port(0).rx_bytes, 640);
}

#[test]
fn ports_with_no_recv_and_no_packet_in() {
    let mut c = config(2);
    c.ports[0].no_recv = true;
    c.ports[1].no_packet_in = true;
    let (dp, mut wr, rx) = datapath(c);
    wr.insert_rule(
        0,
        Rule::new(
            FlowMatch::ANY,
            0,
            apply(vec![Action::Controller { max_len: 0xffff }, Action::Output(port::ALL)]),
        ),
    )
    .unwrap();
    wr.publish();
    let mut w = dp.worker(0);
    assert!(run(&dp, &mut w, &frame(1, 2), 1, 0).tx.is_empty());
    assert_eq!(dp.read_misc(Misc::NoRecvDrops), 1);
    assert_eq!(run(&dp, &mut w, &frame(1, 2), 2, 0).ports(), vec![1]);
    assert!(rx.try_recv().is_err());
}

#[test]
fn packet_in_queue_full_drops_and_counts() {
    let (dp, mut wr, rx) = Datapath::<DefaultClassifier>::new(config(2), 2);
    wr.insert_rule(
        0,
        Rule::new(FlowMatch::ANY, 3, apply(vec![Action::Controller { max_len: 10 }])),
    )
    .unwrap();
    wr.publish();
    let mut w = dp.worker(0);
    for _ in 0..5 {
        run(&dp, &mut w, &frame(1, 2), 1, 0);
    }
    assert_eq!(rx.try_iter().count(), 2);
    assert_eq!(dp.read_misc(Misc::PacketIns), 2);
    assert_eq!(dp.read_misc(Misc::PacketInDropped), 3);
}

#[test]
fn invalid_ttl_goes_to_controller_when_configured() {
    let mut c = config(2);
    c.invalid_ttl_to_controller = true;
    let (dp, mut wr, rx) = datapath(c);
    let dec = |ttl: u8| {
        Rule::new(
            on_port(1),
            1,
            apply(vec![Action::SetNwTtl(ttl), Action::DecNwTtl, Action::Output(2)]),
        )
    };
    wr.insert_rule(0, dec(2)).unwrap();
    wr.publish();
    let mut w = dp.worker(0);
    assert_eq!(run(&dp, &mut w, &frame(1, 2), 1, 0).ports(), vec![2]);
    wr.insert_rule(0, dec(1)).unwrap();
    wr.publish();
    assert!(run(&dp, &mut w, &frame(1, 2), 1, 0).tx.is_empty());
    let pi = rx.try_recv().unwrap();
    assert_eq!(pi.reason, PacketInReason::InvalidTtl);
    assert_eq!(pi.key.get(Field::IpTtl), 1);
    assert_eq!(dp.read_misc(Misc::InvalidTtl), 1);
}

#[test]
fn trace_touches_no_counter() {
    let (dp, mut wr, rx) = datapath(config(2));
    let id = wr
        .insert_rule(
            0,
            Rule::new(
                FlowMatch::ANY,
                1,
                apply(vec![Action::Output(2), Action::Controller { max_len: 5 }]),
            ),
        )
        .unwrap();
    wr.publish();
    let _w = dp.worker(8);
    let t = dp.trace(&frame(1, 2), 1, 5);
    assert_eq!(t.tables(), vec![(0, Some(id))]);
    assert_eq!(t.outputs.ports(), vec![2]);
    assert_eq!(t.packet_ins().len(), 1);
    assert_eq!(dp.read_rule(id).packets, 0);
    assert_eq!(dp.read_table(0).lookups, 0);
    assert_eq!(dp.read_misc(Misc::Packets), 0);
    assert!(rx.try_recv().is_err());
}

/// An Ethernet + IPv4 (TTL 1) + UDP frame.
fn udp_frame() -> Vec<u8> {
    let mut f = frame(0x1111, 0x2222);
    f.truncate(12);
    f.extend_from_slice(&[0x08, 0x00]);
    let mut ip = [0u8; 20];
    ip[0] = 0x45;
    ip[2..4].copy_from_slice(&28u16.to_be_bytes());
    ip[8] = 1;
    ip[9] = 17;
    ip[12..16].copy_from_slice(&[10, 0, 0, 1]);
    ip[16..20].copy_from_slice(&[10, 0, 0, 2]);
    let sum = ip.chunks(2).fold(0u32, |a, c| a + u16::from_be_bytes([c[0], c[1]]) as u32);
    let sum = !(((sum & 0xffff) + (sum >> 16)) as u16);
    ip[10..12].copy_from_slice(&sum.to_be_bytes());
    f.extend_from_slice(&ip);
    f.extend_from_slice(&[0x12, 0x34, 0x00, 0x35, 0, 8, 0, 0]);
    f
}

#[test]
fn real_rewrites_change_the_bytes_and_expire_ttl() {
    let c = DatapathConfig {
        rewrite: crate::rewrite::apply,
        invalid_ttl_to_controller: true,
        ..config(2)
    };
    let (dp, mut wr, rx) = datapath(c);
    let set = apply(vec![Action::SetField(Field::EthDst, 0x0a0b_0c0d_0e0f), Action::Output(2)]);
    wr.insert_rule(0, Rule::new(on_port(1), 1, set)).unwrap();
    wr.insert_rule(0, Rule::new(on_port(2), 1, apply(vec![Action::DecNwTtl, Action::Output(1)])))
        .unwrap();
    wr.publish();
    let mut w = dp.worker(16);
    let f = udp_frame();
    let out = run(&dp, &mut w, &f, 1, 0);
    assert_eq!(out.tx[0].packet.data()[..6], [0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f]);
    assert_eq!(out.tx[0].packet.data()[6..], f[6..]);
    assert!(run(&dp, &mut w, &f, 2, 0).tx.is_empty());
    let pi = rx.try_recv().unwrap();
    assert_eq!(pi.reason, PacketInReason::InvalidTtl);
    assert_eq!(pi.key.get(Field::Ipv4Dst), 0x0a00_0002);
}

proptest::proptest! {
    #[test]
    fn any_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..200), port in 0u32..4) {
        // The real parser and rewrites.
        let c = DatapathConfig { rewrite: crate::rewrite::apply, ..config(3) };
        let (dp, mut wr, _rx) = datapath(c);
        wr.insert_rule(0, Rule::new(FlowMatch::ANY, 0, Instructions {
            apply: vec![
                Action::Output(port::ALL),
                Action::Controller { max_len: 0xffff },
                Action::SetField(Field::Ipv4Src, 1),
                Action::SetField(Field::TpDst, 80),
                Action::PushVlan(0x8100),
                Action::PushMpls(0x8847),
            ],
            goto_table: Some(1),
            ..ins()
        })).unwrap();
        wr.insert_rule(1, Rule::new(FlowMatch::ANY, 0, apply(vec![Action::PopVlan, Action::DecNwTtl, Action::Output(1)]))).unwrap();
        wr.publish();
        let mut w = dp.worker(8);
        run(&dp, &mut w, &bytes, port, 0);
        let _ = dp.trace(&bytes, port, 0);
        let mut key = crate::key::FlowKey::ZERO;
        let failed = crate::parse::parse(&bytes, port, &mut key).error.is_some();
        proptest::prop_assert_eq!(dp.read_misc(Misc::ParseErrors), failed as u64);
    }
}

#[test]
fn a_partial_checksum_is_finished_for_the_controller_and_kept_on_outputs() {
    use crate::packet::Offload;
    let (dp, mut wr, rx) = datapath(config(3));
    wr.insert_rule(
        0,
        Rule::new(
            FlowMatch::ANY,
            0,
            apply(vec![Action::Output(port::FLOOD), Action::Controller { max_len: 0xffff }]),
        ),
    )
    .unwrap();
    wr.publish();
    // An IPv4/UDP frame with a correct checksum, and as checksum offload leaves it.
    let mut full = Vec::new();
    etherparse::PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
        .ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64)
        .udp(1234, 53)
        .write(&mut full, b"a partial checksum")
        .unwrap();
    let at = 14 + 20 + 6;
    let ones = |d: &[u8]| -> u64 {
        d.chunks(2).map(|w| u64::from(w[0]) << 8 | u64::from(*w.get(1).unwrap_or(&0))).sum()
    };
    let fold = |mut x: u64| {
        while x > 0xffff {
            x = (x & 0xffff) + (x >> 16);
        }
        x as u16
    };
    let mut zeroed = full.clone();
    zeroed[at..at + 2].fill(0);
    let check = u16::from_be_bytes([full[at], full[at + 1]]);
    // The field's pseudo-header sum P satisfies check = !(P + segment).
    let p = fold(u64::from(!check) + u64::from(!fold(ones(&zeroed[34..]))));
    let mut part = full.clone();
    part[at..at + 2].copy_from_slice(&p.to_be_bytes());
    assert_ne!(part, full);

    let note = Offload { partial_csum: true, gso: None };
    let mut pkt = Packet::from_slice(&part);
    pkt.set_offload(Some(note));
    let mut w = dp.worker(16);
    let mut out = Outputs::new();
    dp.process(&mut w, pkt, 1, 0, &mut out);
    let pi = rx.try_recv().unwrap();
    assert_eq!(pi.data, full, "the controller gets the finished checksum");
    assert_eq!(out.ports(), vec![2, 3]);
    for t in &out.tx {
        assert_eq!(t.packet.data(), &part[..], "outputs keep the frame as it came");
        assert_eq!(t.packet.offload(), Some(note), "and its note");
    }
}
