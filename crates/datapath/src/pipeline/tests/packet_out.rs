//! Packet-outs (`Batch::packet_out`): the action list in order, TABLE, IN_PORT and
//! FLOOD with any input port, groups, packet-ins, and what is (not) counted.

use super::*;
use crate::action::port;
use crate::counters::Misc;
use crate::group::{Bucket, Group, GroupKind};

/// Runs a packet-out of `f` from `in_port` with `actions` and returns what came out.
fn packet_out(dp: &Datapath, w: &mut WorkerState, f: &[u8], in_port: u32, a: &[Action]) -> Outputs {
    let mut out = Outputs::new();
    dp.batch(w, 0).packet_out(Packet::from_slice(f), in_port, a, &mut out);
    out
}

/// Ports 1..=3 in slots 0..3 and LOCAL in slot 3, the model rewriter.
fn with_local() -> DatapathConfig {
    let mut c = config(3);
    c.ports.push(PortInfo::new(port::LOCAL, 3));
    c
}

#[test]
fn outputs_in_order_with_rewrites_between() {
    let c = DatapathConfig { rewrite: crate::rewrite::apply, ..config(4) };
    let (dp, _wr, _rx) = datapath(c);
    let mut w = dp.worker(0);
    let f = frame(1, 2);
    let out = packet_out(
        &dp,
        &mut w,
        &f,
        port::CONTROLLER,
        &[
            Action::Output(1),
            Action::SetField(Field::EthDst, 0x0a0b_0c0d_0e0f),
            Action::Output(2),
            Action::SetQueue(7),
            Action::PushVlan(0x8100),
            Action::Output(3),
            Action::PopVlan,
            Action::Output(4),
        ],
    );
    assert_eq!(out.ports(), vec![1, 2, 3, 4]);
    assert_eq!(out.tx[0].packet.data(), &f[..], "before any rewrite");
    assert_eq!(out.tx[0].queue, None);
    assert_eq!(out.tx[1].packet.data()[..6], [0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f]);
    assert_eq!(out.tx[1].packet.data()[6..], f[6..]);
    let tagged = out.tx[2].packet.data();
    assert_eq!(tagged.len(), f.len() + 4);
    assert_eq!(tagged[12..14], [0x81, 0x00]);
    assert_eq!(tagged[16..18], ETH_TEST.to_be_bytes());
    assert_eq!(out.tx[2].queue, Some(7));
    assert_eq!(out.tx[3].packet.data(), out.tx[1].packet.data(), "tag popped");
    assert!(out.normal.is_empty());
}

#[test]
fn table_runs_the_pipeline_from_table_0_and_credits_its_rules() {
    let (dp, mut wr, _rx) = datapath(config(4));
    // Table 0 matches only the key as the packet-out's set-field left it, on the
    // packet-out's input port.
    let m = on_port(2).exact(Field::EthSrc, 0x42);
    let r0 = Rule::new(
        m,
        5,
        Instructions { apply: vec![Action::Output(4)], goto_table: Some(1), ..ins() },
    );
    let id0 = wr.insert_rule(0, r0).unwrap();
    let id1 = wr.insert_rule(1, output_rule(FlowMatch::ANY, 1, 3)).unwrap();
    wr.publish();
    // A worker with a cache: the packet-out neither reads nor fills it.
    let mut w = dp.worker(64);
    let actions = [
        Action::Output(1),
        Action::SetField(Field::EthSrc, 0x42),
        Action::Output(port::TABLE),
        Action::Output(1),
    ];
    for _ in 0..2 {
        let out = packet_out(&dp, &mut w, &frame(1, 2), 2, &actions);
        assert_eq!(out.ports(), vec![1, 4, 3, 1]);
    }
    assert_eq!(dp.read_rule(id0).packets, 2);
    assert_eq!(dp.read_rule(id1).packets, 2);
    assert_eq!((dp.read_table(0).lookups, dp.read_table(0).matched), (2, 2));
    assert_eq!(dp.read_table(1).lookups, 2);
    assert_eq!(dp.read_misc(Misc::CacheHits), 0);
    assert_eq!(dp.read_misc(Misc::CacheMisses), 0);
    // TABLE as the last action; a table miss there drops as for a received packet.
    let out = packet_out(&dp, &mut w, &frame(1, 2), 3, &[Action::Output(port::TABLE)]);
    assert!(out.tx.is_empty());
    assert_eq!(dp.read_misc(Misc::TableMissDrops), 1);
    // Received packets still use the cache (nothing was left in it by the packet-outs).
    assert_eq!(run(&dp, &mut w, &frame(1, 2), 2, 0).ports(), vec![]);
    assert_eq!(dp.read_misc(Misc::CacheMisses), 1);
}

#[test]
fn output_to_table_from_a_rule_or_a_bucket_is_dropped() {
    let (dp, mut wr, _rx) = datapath(config(2));
    wr.set_group(Group::new(
        1,
        GroupKind::Indirect,
        vec![Bucket::new(vec![Action::Output(port::TABLE)])],
    ))
    .unwrap();
    let id = wr.insert_rule(0, output_rule(on_port(1), 1, port::TABLE)).unwrap();
    wr.publish();
    let mut w = dp.worker(0);
    assert!(run(&dp, &mut w, &frame(1, 2), 1, 0).tx.is_empty());
    let out = packet_out(&dp, &mut w, &frame(1, 2), 1, &[Action::Group(1)]);
    assert!(out.tx.is_empty());
    assert_eq!(dp.read_rule(id).packets, 1, "only the received packet");
    assert_eq!(dp.read_misc(Misc::OutputDrops), 2);
}

#[test]
fn in_port_flood_and_all_depend_on_the_input_port() {
    let mut c = with_local();
    c.ports[2].no_flood = true; // port 3
    let (dp, _wr, _rx) = datapath(c);
    let mut w = dp.worker(0);
    let mut ports = |in_port: u32, p: u32| {
        packet_out(&dp, &mut w, &frame(1, 2), in_port, &[Action::Output(p)]).ports()
    };
    // A real input port.
    assert_eq!(ports(2, port::IN_PORT), vec![2]);
    assert_eq!(ports(2, port::FLOOD), vec![1, port::LOCAL]);
    assert_eq!(ports(2, port::ALL), vec![1, 3, port::LOCAL]);
    assert_eq!(ports(2, 2), Vec::<u32>::new(), "by number: dropped");
    // LOCAL is a standard port.
    assert_eq!(ports(port::LOCAL, port::IN_PORT), vec![port::LOCAL]);
    assert_eq!(ports(port::LOCAL, port::FLOOD), vec![1, 2]);
    // CONTROLLER and ANY are no ports: nothing to leave out, nowhere to send back to.
    for from in [port::CONTROLLER, port::ANY] {
        assert_eq!(ports(from, port::FLOOD), vec![1, 2, port::LOCAL]);
        assert_eq!(ports(from, port::ALL), vec![1, 2, 3, port::LOCAL]);
        assert_eq!(ports(from, port::IN_PORT), Vec::<u32>::new());
        assert_eq!(ports(from, 2), vec![2]);
    }
    assert_eq!(dp.read_misc(Misc::OutputToInPortDrops), 1);
    assert_eq!(dp.read_misc(Misc::OutputDrops), 2, "IN_PORT from CONTROLLER, ANY");
}

#[test]
fn groups_and_normal() {
    let (dp, mut wr, _rx) = datapath(config(4));
    wr.set_group(Group::new(
        5,
        GroupKind::All,
        vec![
            Bucket::new(vec![Action::Output(1)]),
            Bucket::new(vec![Action::SetField(Field::EthDst, 9), Action::Output(2)]),
        ],
    ))
    .unwrap();
    wr.publish();
    let mut w = dp.worker(0);
    let out = packet_out(
        &dp,
        &mut w,
        &frame(1, 2),
        3,
        &[Action::Group(5), Action::Output(port::NORMAL), Action::Output(4)],
    );
    assert_eq!(out.ports(), vec![1, 2, 4]);
    assert_eq!(out.normal.len(), 1);
    assert_eq!(out.normal[0].in_port, 3);
    assert_eq!(out.normal[0].packet.data(), &frame(1, 2)[..]);
    let (g, buckets) = dp.read_group(5).unwrap();
    assert_eq!(g.packets, 1);
    assert_eq!(buckets.iter().map(|b| b.packets).collect::<Vec<_>>(), [1, 1]);
    let t = dp.trace_packet_out(&frame(1, 2), 3, &[Action::Group(5)], 0);
    assert_eq!(
        t.set_actions(),
        vec![Action::Output(1), Action::SetField(Field::EthDst, 9), Action::Output(2)]
    );
}

#[test]
fn controller_sends_packet_ins_of_reason_action_from_table_0() {
    let mut c = config(2);
    c.packet_in_max_len = 50;
    c.invalid_ttl_to_controller = true;
    // Port 1's no_packet_in is about packets received there: a packet-out is not one.
    c.ports[0].no_packet_in = true;
    let (dp, _wr, rx) = datapath(c);
    let mut w = dp.worker(0);
    let f = frame(1, 2);
    let out = packet_out(
        &dp,
        &mut w,
        &f,
        port::CONTROLLER,
        &[
            Action::Controller { max_len: 128 },
            Action::SetField(Field::EthDst, 7),
            Action::Output(port::CONTROLLER),
            Action::Controller { max_len: 0xffff },
        ],
    );
    assert!(out.tx.is_empty());
    let pis: Vec<PacketIn> = rx.try_iter().collect();
    assert_eq!(
        pis.iter()
            .map(|p| (p.reason, p.table_id, p.cookie, p.in_port, p.max_len))
            .collect::<Vec<_>>(),
        vec![
            (PacketInReason::Action, 0, u64::MAX, port::CONTROLLER, 128),
            (PacketInReason::Action, 0, u64::MAX, port::CONTROLLER, 50),
            (PacketInReason::Action, 0, u64::MAX, port::CONTROLLER, 0xffff),
        ]
    );
    assert!(pis.iter().all(|p| p.data == f && p.total_len == f.len()));
    assert_eq!(pis[0].key.get(Field::EthDst), 1);
    assert_eq!(pis[1].key.get(Field::EthDst), 7, "the key as rewritten");
    // From a real port, and an expired TTL (which ends the action list).
    packet_out(
        &dp,
        &mut w,
        &f,
        1,
        &[
            Action::Controller { max_len: 0 },
            Action::SetNwTtl(1),
            Action::DecNwTtl,
            Action::Output(2),
        ],
    );
    let pis: Vec<PacketIn> = rx.try_iter().collect();
    assert_eq!(
        pis.iter()
            .map(|p| (p.reason, p.table_id, p.cookie, p.in_port, p.max_len))
            .collect::<Vec<_>>(),
        vec![
            (PacketInReason::Action, 0, u64::MAX, 1, 0),
            (PacketInReason::InvalidTtl, 0, u64::MAX, 1, 50),
        ]
    );
    assert_eq!(dp.read_misc(Misc::PacketIns), 5);
}

#[test]
fn nothing_is_counted_as_received() {
    let mut c = config(2);
    c.ports[0].no_recv = true; // about received packets only
    let (dp, mut wr, _rx) = datapath(c);
    let id = wr.insert_rule(0, output_rule(FlowMatch::ANY, 0, 2)).unwrap();
    wr.publish();
    let mut w = dp.worker(16);
    // A frame the parser stops early on (an IPv4 ethertype and no header).
    let mut short = frame(1, 2);
    short.truncate(12);
    short.extend_from_slice(&[0x08, 0x00, 0x45]);
    for f in [frame(1, 2), short] {
        let out = packet_out(&dp, &mut w, &f, 1, &[Action::Output(port::TABLE)]);
        assert_eq!(out.ports(), vec![2]);
    }
    assert_eq!(dp.read_port(0).rx_packets, 0);
    assert_eq!(dp.read_port(1).rx_packets, 0);
    assert_eq!(dp.read_port(1).tx_packets, 2, "transmissions count");
    assert_eq!(dp.read_port(1).tx_bytes, 64 + 15);
    assert_eq!(dp.read_misc(Misc::Packets), 0);
    assert_eq!(dp.read_misc(Misc::ParseErrors), 0);
    assert_eq!(dp.read_misc(Misc::NoRecvDrops), 0);
    assert_eq!(dp.read_rule(id).packets, 2);
}

#[test]
fn trace_shows_the_actions_and_the_pipeline_and_counts_nothing() {
    let (dp, mut wr, rx) = datapath(config(3));
    let id = wr.insert_rule(0, output_rule(on_port(1), 1, 3)).unwrap();
    wr.publish();
    let actions =
        [Action::Output(2), Action::Output(port::TABLE), Action::Controller { max_len: 9 }];
    let t = dp.trace_packet_out(&frame(1, 2), 1, &actions, 0);
    let steps = trace_steps(&t);
    assert_eq!(
        steps,
        vec![
            "parsed",
            "apply Output(2)",
            "out 2 None",
            "apply Output(4294967289)",
            "table0:true",
            "apply Output(3)",
            "out 3 None",
            "set []",
            "apply Controller { max_len: 9 }",
            "packet-in 9",
        ]
    );
    assert_eq!(t.outputs.ports(), vec![2, 3]);
    assert_eq!(dp.read_rule(id).packets, 0);
    assert_eq!(dp.read_port(1).tx_packets, 0);
    assert!(rx.try_recv().is_err());
    // Forwarding agrees with the trace.
    let mut w = dp.worker(0);
    assert_eq!(packet_out(&dp, &mut w, &frame(1, 2), 1, &actions).ports(), vec![2, 3]);
    assert_eq!(rx.try_iter().count(), 1);
}

proptest::proptest! {
    #[test]
    fn any_bytes_and_actions_never_panic(
        bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..200),
        in_port in proptest::sample::select(vec![1u32, 2, 9, port::LOCAL, port::CONTROLLER, port::ANY]),
        picks in proptest::collection::vec(0usize..12, 0..8),
    ) {
        let c = DatapathConfig { rewrite: crate::rewrite::apply, invalid_ttl_to_controller: true, ..config(3) };
        let (dp, mut wr, _rx) = datapath(c);
        wr.insert_rule(0, Rule::new(FlowMatch::ANY, 0, apply(vec![Action::PopVlan, Action::Output(port::ALL)]))).unwrap();
        wr.set_group(Group::new(1, GroupKind::All, vec![Bucket::new(vec![Action::DecNwTtl, Action::Output(2)])])).unwrap();
        wr.publish();
        let menu = [
            Action::Output(1),
            Action::Output(port::TABLE),
            Action::Output(port::IN_PORT),
            Action::Output(port::FLOOD),
            Action::Output(port::NORMAL),
            Action::Output(port::CONTROLLER),
            Action::Controller { max_len: 3 },
            Action::SetField(Field::Ipv4Src, 1),
            Action::PushVlan(0x8100),
            Action::PushMpls(0x8847),
            Action::DecNwTtl,
            Action::Group(1),
        ];
        let actions: Vec<Action> = picks.iter().filter_map(|&i| menu.get(i).cloned()).collect();
        let mut w = dp.worker(8);
        let out = packet_out(&dp, &mut w, &bytes, in_port, &actions);
        let t = dp.trace_packet_out(&bytes, in_port, &actions, 0);
        proptest::prop_assert_eq!(out.ports(), t.outputs.ports());
        proptest::prop_assert_eq!(dp.read_misc(Misc::Packets), 0);
    }
}
