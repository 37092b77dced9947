mod capabilities;
mod mpls;

use std::sync::Mutex;

use super::*;
use crate::counters::Misc;
use crate::key::FlowMatch;
use crate::normal::{MacTable, MacTableConfig};
use crate::pipeline::{DatapathConfig, Instructions, PortInfo, Rule};

/// Ports 1..=3 in slots 0..3, the real header rewrites.
pub(crate) fn datapath() -> (Datapath, crate::pipeline::Writer) {
    let cfg = DatapathConfig {
        ports: (1..=3).map(|i| PortInfo::new(i, (i - 1) as u16)).collect(),
        ..DatapathConfig::default()
    };
    let (dp, wr, _rx) = Datapath::new(cfg, 16);
    (dp, wr)
}

/// The key of a frame from port 1, from MAC 02:00:00:00:00:01 to 02:00:00:00:00:02,
/// of ethertype `eth_type` and with `fields`.
pub(crate) fn frame_key(eth_type: u128, fields: &[(Field, u128)]) -> FlowKey {
    let mut k = FlowKey::ZERO;
    k.set(Field::InPort, 1);
    k.set(Field::EthDst, 0x0200_0000_0002);
    k.set(Field::EthSrc, 0x0200_0000_0001);
    k.set(Field::EthType, eth_type);
    for &(f, v) in fields {
        k.set(f, v);
    }
    k
}

/// The key of an IPv4/UDP frame from port 1.
pub(crate) fn udp_key() -> FlowKey {
    frame_key(
        0x0800,
        &[
            (Field::IpProto, 17),
            (Field::IpTtl, 64),
            (Field::Ipv4Src, 0x0a00_0001),
            (Field::Ipv4Dst, 0x0a00_0002),
            (Field::TpSrc, 1000),
            (Field::TpDst, 2000),
        ],
    )
}

fn rule(m: FlowMatch, prio: u16, apply: Vec<Action>, goto: Option<u8>) -> Rule {
    Rule::new(m, prio, Instructions { apply, goto_table: goto, ..Instructions::default() })
}

fn decide(rules: Vec<(u8, Rule)>) -> (Datapath, Result<Decision, Ineligible>) {
    let (dp, mut wr) = datapath();
    for (t, r) in rules {
        wr.insert_rule(t, r).unwrap();
    }
    wr.publish();
    let d = dp.decision(&udp_key(), 0);
    (dp, d)
}

#[test]
fn a_plain_output_is_the_frame_unchanged_to_that_port() {
    let (_, d) = decide(vec![(0, rule(FlowMatch::ANY, 1, vec![Action::Output(2)], None))]);
    let d = d.unwrap();
    let (ports, out) = d.output.clone().unwrap();
    assert_eq!(ports, vec![2]);
    assert_eq!(out, d.input);
    assert_eq!(d.in_port, 1);
    assert_eq!(d.credit.in_slot, Some(0));
    assert_eq!(d.credit.out_slots, vec![1]);
    assert_eq!(d.credit.steps.len(), 1);
    assert!(d.credit.steps[0].rule.is_some());
}

#[test]
fn rewrites_over_two_tables_show_in_the_output_frame() {
    let (_, d) = decide(vec![
        (
            0,
            rule(
                FlowMatch::ANY,
                1,
                vec![Action::SetField(Field::EthDst, 0x0200_0000_0009)],
                Some(1),
            ),
        ),
        (
            1,
            rule(
                FlowMatch::ANY,
                1,
                vec![Action::DecNwTtl, Action::PushVlan(0x8100), Action::Output(3)],
                None,
            ),
        ),
    ]);
    let d = d.unwrap();
    let (ports, out) = d.output.unwrap();
    assert_eq!(ports, vec![3]);
    assert_eq!(out.len(), d.input.len() + 4);
    assert_eq!(&out[..6], &[2, 0, 0, 0, 0, 9]);
    assert_eq!(&out[12..14], &[0x81, 0x00]);
    assert_eq!(d.credit.steps.len(), 2);
    assert_eq!(d.credit.out_delta, 4);
    assert!(d.credit.steps.iter().all(|s| s.len_delta == 0));
}

#[test]
fn what_the_kernel_cannot_do_is_refused_with_its_reason() {
    let cases: Vec<(Vec<Action>, Ineligible)> = vec![
        (vec![Action::Controller { max_len: 128 }], Ineligible::Controller),
        (vec![Action::Output(port::CONTROLLER)], Ineligible::Controller),
        (vec![Action::Output(port::LOCAL)], Ineligible::Output(port::LOCAL)),
        (vec![Action::Output(port::NORMAL)], Ineligible::Normal(NormalWhy::NoTable)),
        (
            vec![Action::Output(2), Action::Output(port::NORMAL)],
            Ineligible::Normal(NormalWhy::Mixed),
        ),
        (
            vec![Action::Output(2), Action::SetField(Field::EthDst, 9), Action::Output(3)],
            Ineligible::SeveralOutputs,
        ),
        (vec![Action::Output(2), Action::Output(2)], Ineligible::SeveralOutputs),
        (
            vec![Action::Group(7)],
            Ineligible::Group(
                "group 7 does not exist (the packet is dropped and counted apart)".into(),
            ),
        ),
    ];
    for (actions, why) in cases {
        let (_, d) = decide(vec![(0, rule(FlowMatch::ANY, 1, actions.clone(), None))]);
        assert_eq!(d.unwrap_err(), why, "{actions:?}");
    }
    // OpenFlow 1.0's conditional rewrites stay in user space, named.
    for a in
        [Action::ModVlanVid(5), Action::ModVlanPcp(3), Action::SetFieldIfPresent(Field::Ipv4Src, 1)]
    {
        let (_, d) =
            decide(vec![(0, rule(FlowMatch::ANY, 1, vec![a.clone(), Action::Output(2)], None))]);
        match d.unwrap_err() {
            Ineligible::Action(why) => assert!(why.contains("depends on the packet"), "{why}"),
            other => panic!("{a:?}: {other:?}"),
        }
    }
}

#[test]
fn a_rule_without_actions_is_a_drop() {
    let (_, d) = decide(vec![(0, rule(FlowMatch::ANY, 1, vec![], None))]);
    let d = d.unwrap();
    assert!(d.output.is_none());
    assert!(d.credit.out_slots.is_empty());
}

#[test]
fn the_same_frame_to_several_ports_is_one_output_to_each() {
    for (actions, want) in [
        (vec![Action::Output(port::FLOOD)], vec![2, 3]),
        (vec![Action::Output(port::ALL)], vec![2, 3]),
        (
            vec![Action::SetField(Field::EthDst, 9), Action::Output(3), Action::Output(2)],
            vec![3, 2],
        ),
    ] {
        let (_, d) = decide(vec![(0, rule(FlowMatch::ANY, 1, actions.clone(), None))]);
        let d = d.unwrap();
        let (ports, _) = d.output.clone().unwrap();
        assert_eq!(ports, want, "{actions:?}");
        let slots: Vec<u16> = want.iter().map(|p| (p - 1) as u16).collect();
        assert_eq!(d.credit.out_slots, slots, "{actions:?}");
    }
}

#[test]
fn flood_leaves_out_no_flood_ports_and_sends_nothing_with_none_left() {
    let (dp, mut wr) = datapath();
    wr.insert_rule(0, rule(FlowMatch::ANY, 1, vec![Action::Output(port::FLOOD)], None)).unwrap();
    let mut cfg = dp.current().config().clone();
    cfg.ports[2].no_flood = true;
    wr.set_config(cfg.clone());
    wr.publish();
    let d = dp.decision(&udp_key(), 0).unwrap();
    assert_eq!(d.output.unwrap().0, vec![2]);
    cfg.ports[1].no_flood = true;
    wr.set_config(cfg);
    wr.publish();
    assert_eq!(dp.decision(&udp_key(), 0).unwrap_err(), Ineligible::Undeliverable(port::FLOOD));
}

#[test]
fn kernel_hits_are_credited_to_rules_tables_and_ports() {
    let (dp, mut wr) = datapath();
    let id = wr.insert_rule(0, rule(FlowMatch::ANY, 1, vec![Action::Output(2)], None)).unwrap();
    wr.publish();
    let d = dp.decision(&udp_key(), 0).unwrap();
    let kc = dp.kernel_counters();
    kc.credit(&d.credit, Hits::new(10, 1000), 5);
    let r = dp.read_rule(id);
    assert_eq!((r.packets, r.bytes), (10, 1000));
    assert_eq!(dp.read_table(0).lookups, 10);
    assert_eq!(dp.read_table(0).matched, 10);
    let p1 = dp.read_port(0);
    let p2 = dp.read_port(1);
    assert_eq!((p1.rx_packets, p1.rx_bytes), (10, 1000));
    assert_eq!((p2.tx_packets, p2.tx_bytes), (10, 1000));
    assert_eq!(dp.read_misc(Misc::KernelHits), 10);
    assert_eq!(dp.read_misc(Misc::Packets), 10);

    // A flood credits every port it sends to.
    let (dp, mut wr) = datapath();
    wr.insert_rule(0, rule(FlowMatch::ANY, 1, vec![Action::Output(port::FLOOD)], None)).unwrap();
    wr.publish();
    let d = dp.decision(&udp_key(), 0).unwrap();
    dp.kernel_counters().credit(&d.credit, Hits::new(3, 300), 5);
    for slot in [1, 2] {
        let p = dp.read_port(slot);
        assert_eq!((p.tx_packets, p.tx_bytes), (3, 300), "slot {slot}");
    }
    assert_eq!(dp.read_port(0).tx_packets, 0);
}

#[test]
fn the_offer_filter_passes_a_key_once_per_version() {
    let mut f = OfferFilter::new();
    assert!(f.fresh(42, 1));
    assert!(!f.fresh(42, 1));
    assert!(f.fresh(42, 2));
    assert!(f.fresh(42 + OFFER_SLOTS as u64, 2));
    assert!(f.fresh(42, 2));
}

#[test]
fn offers_are_held_until_flushed_and_made_once() {
    let mut f = OfferFilter::new();
    let k = udp_key();
    f.hold(&k, 7, 3, offer_round(3, 0));
    f.hold(&k, 7, 3, offer_round(3, 0));
    let mut made = Vec::new();
    f.flush(|k, v| made.push((*k, v)));
    assert_eq!(made, vec![(udp_key(), 3)]);
    f.flush(|_, _| panic!("nothing is held after a flush"));
    // A new round offers it again, with its version.
    f.hold(&k, 7, 3, offer_round(3, 1));
    f.flush(|k, v| made.push((*k, v)));
    assert_eq!(made, vec![(udp_key(), 3), (udp_key(), 3)]);
}

#[test]
fn a_table_miss_is_a_drop_and_an_output_that_sends_nothing_is_refused() {
    let (_, d) = decide(vec![]);
    let d = d.unwrap();
    assert!(d.output.is_none());
    assert_eq!(d.credit.steps.len(), 1);
    assert_eq!(d.credit.steps[0].rule, None);

    // Output to the input port by number sends nothing.
    let (_, d) = decide(vec![(0, rule(FlowMatch::ANY, 1, vec![Action::Output(1)], None))]);
    assert_eq!(d.unwrap_err(), Ineligible::Undeliverable(1));
}

#[test]
fn changes_alter_the_decisions_that_depend_on_them() {
    let (dp, mut wr) = datapath();
    let id = wr
        .insert_rule(
            0,
            rule(FlowMatch::ANY.exact(Field::InPort, 1), 10, vec![Action::Output(2)], None),
        )
        .unwrap();
    wr.publish();
    let d = dp.decision(&udp_key(), 0).unwrap();
    let key = udp_key();
    let none = Changes::default();
    assert!(!d.credit.affected_by(&key, &none));
    let changed = Changes { rules: vec![id], ..Changes::default() };
    assert!(d.credit.affected_by(&key, &changed));
    let add = |m: FlowMatch, p: u16| Changes { added: vec![(0, m, p)], ..Changes::default() };
    // Matching the key above the rule taken: altered; below it, or not matching, or in
    // another table: not.
    assert!(d.credit.affected_by(&key, &add(FlowMatch::ANY, 11)));
    assert!(d.credit.affected_by(&key, &add(FlowMatch::ANY, 10)));
    assert!(!d.credit.affected_by(&key, &add(FlowMatch::ANY, 9)));
    assert!(!d.credit.affected_by(&key, &add(FlowMatch::ANY.exact(Field::InPort, 2), 99)));
    assert!(!d.credit.affected_by(
        &key,
        &Changes { added: vec![(1, FlowMatch::ANY, 99)], ..Changes::default() }
    ));
    assert!(d.credit.affected_by(&key, &Changes { config: true, ..Changes::default() }));
}

#[test]
fn an_output_to_a_port_with_no_fwd_is_refused() {
    let (dp, mut wr) = datapath();
    wr.insert_rule(
        0,
        rule(FlowMatch::ANY, 1, vec![Action::SetField(Field::EthDst, 5), Action::Output(2)], None),
    )
    .unwrap();
    let mut cfg = dp.current().config().clone();
    cfg.ports[1].no_fwd = true;
    wr.set_config(cfg);
    wr.publish();
    assert_eq!(dp.decision(&udp_key(), 0).unwrap_err(), Ineligible::Undeliverable(2));
}

#[test]
fn a_decision_covers_the_keys_equal_under_what_its_tables_consulted() {
    let (dp, mut wr) = datapath();
    let net = FlowMatch::ANY.exact(Field::EthType, 0x0800).masked(
        Field::Ipv4Dst,
        0x0a00_0000,
        0xffff_ff00,
    );
    wr.insert_rule(0, rule(net, 10, vec![], Some(1))).unwrap();
    wr.insert_rule(0, rule(FlowMatch::ANY, 0, vec![], None)).unwrap();
    let udp = FlowMatch::ANY.exact(Field::IpProto, 17);
    wr.insert_rule(1, rule(udp, 5, vec![Action::Output(2)], None)).unwrap();
    wr.publish();
    let key = udp_key();
    let d = dp.decision(&key, 0).unwrap();
    let mut want = net.mask.union(&udp.mask);
    want.set(Field::InPort, Field::InPort.full());
    assert_eq!(d.credit.mask, want, "the port, the /24, the ethertype and protocol");
    // Another source port is the same megaflow; the check of added rules covers it: a
    // rule on a source port this key does not have still overlaps the megaflow.
    let other_port = FlowMatch::ANY.exact(Field::IpProto, 17).exact(Field::TpSrc, 7);
    let add =
        |t: u8, m: FlowMatch, p: u16| Changes { added: vec![(t, m, p)], ..Changes::default() };
    assert!(d.credit.affected_by(&key, &add(1, other_port, 6)));
    assert!(!d.credit.affected_by(&key, &add(1, other_port, 4)));
    // A rule for another /24 cannot match any frame of the megaflow.
    let other_net = FlowMatch::ANY.exact(Field::EthType, 0x0800).masked(
        Field::Ipv4Dst,
        0x0a00_0100,
        0xffff_ff00,
    );
    assert!(!d.credit.affected_by(&key, &add(0, other_net, 99)));
    assert!(d.credit.affected_by(&key, &add(0, FlowMatch::ANY.exact(Field::TpDst, 9), 99)));
}

/// A datapath whose table 0 sends everything to NORMAL, with a MAC table on ports 1..=3
/// attached that has learned each (port, MAC) of `learned`, in order.
fn normal_datapath(learned: &[(u32, u64)]) -> (Datapath, MacTable) {
    let (dp, mut wr) = datapath();
    wr.insert_rule(0, rule(FlowMatch::ANY, 0, vec![Action::Output(port::NORMAL)], None)).unwrap();
    wr.publish();
    let macs = MacTable::new(MacTableConfig::default());
    macs.set_ports(&[1, 2, 3]);
    assert!(dp.set_mac_table(macs.clone()));
    for &(port, mac) in learned {
        learn(&macs, port, mac);
    }
    (dp, macs)
}

/// Teaches `macs` that `mac` is on `port` at time 0, as a broadcast frame from it does.
fn learn(macs: &MacTable, port: u32, mac: u64) {
    let mut h = macs.handler();
    h.begin_batch(0);
    let mut key = FlowKey::ZERO;
    key.set(Field::InPort, port.into());
    key.set(Field::EthSrc, mac.into());
    key.set(Field::EthDst, 0xffff_ffff_ffff);
    let mut out = crate::pipeline::Outputs::new();
    out.normal.push(crate::pipeline::NormalPacket {
        in_port: port,
        key,
        packet: crate::packet::Packet::from_slice(&[0; 60]),
    });
    out.drain_normal(&mut h);
    assert_eq!(macs.lookup(0, mac, 0), Some(port));
}

const SRC: u64 = 0x0200_0000_0001;
const DST: u64 = 0x0200_0000_0002;

#[test]
fn normal_to_a_known_destination_is_one_output() {
    let (dp, macs) = normal_datapath(&[(1, SRC), (2, DST)]);
    let d = dp.decision(&udp_key(), 1).unwrap();
    let (ports, out) = d.output.clone().unwrap();
    assert_eq!(ports, vec![2]);
    assert_eq!(out, d.input, "NORMAL sends the frame as it is");
    assert_eq!(d.credit.out_slots, vec![1]);
    assert_eq!(d.credit.out_delta, 0);
    assert_eq!(d.credit.steps.len(), 1);
    assert_eq!(
        d.credit.normal,
        Some(NormalCredit {
            outcome: NormalOutcome::Forwarded,
            vlan: 0,
            src: SRC,
            dst: DST,
            in_port: 1,
        })
    );
    assert!(d.mac_gen.is_some());
    // Its megaflow: the port, ethertype and protocol, and what NORMAL reads; not the
    // addresses or ports above L2.
    let m = d.credit.mask;
    for f in [Field::InPort, Field::VlanVid, Field::EthSrc, Field::EthDst] {
        assert_eq!(m.get(f), f.full(), "{f:?}");
    }
    assert_eq!((m.get(Field::Ipv4Src), m.get(Field::TpSrc)), (0, 0));
    // Read only: the decision learned and refreshed nothing.
    assert_eq!(macs.stats().learned, 2);
    assert_eq!(macs.entries(1).len(), 2);
}

#[test]
fn normal_to_an_unknown_destination_floods_every_other_port() {
    let (dp, macs) = normal_datapath(&[(1, SRC)]);
    let d = dp.decision(&udp_key(), 1).unwrap();
    let (ports, out) = d.output.clone().unwrap();
    assert_eq!(ports, vec![2, 3]);
    assert_eq!(out, d.input);
    assert_eq!(d.credit.out_slots, vec![1, 2]);
    assert_eq!(d.credit.normal.map(|n| n.outcome), Some(NormalOutcome::Flooded));
    // Learning the destination on another port: one output from then on.
    learn(&macs, 3, DST);
    let d = dp.decision(&udp_key(), 1).unwrap();
    assert_eq!(d.output.unwrap().0, vec![3]);
}

#[test]
fn normal_from_a_source_not_learned_on_its_port_is_refused() {
    let (dp, macs) = normal_datapath(&[]);
    let e = dp.decision(&udp_key(), 1).unwrap_err();
    assert_eq!(e, Ineligible::Normal(NormalWhy::Unlearned));
    assert!(e.waits_for_macs());
    assert!(e.to_string().contains("not learned"), "{e}");
    learn(&macs, 2, SRC);
    let e = dp.decision(&udp_key(), 1).unwrap_err();
    assert_eq!(e, Ineligible::Normal(NormalWhy::Elsewhere(2)));
    assert!(e.waits_for_macs());
    // Learned once, but expired by the time of the decision.
    learn(&macs, 1, SRC);
    let aging = macs.config().aging_ns;
    assert_eq!(
        dp.decision(&udp_key(), aging).unwrap_err(),
        Ineligible::Normal(NormalWhy::Unlearned)
    );
    // A multicast source is never learned.
    let mut k = udp_key();
    k.set(Field::EthSrc, 0x0100_5e00_0001);
    let e = dp.decision(&k, 1).unwrap_err();
    assert_eq!(e, Ineligible::Normal(NormalWhy::NotLearnable));
    assert!(!e.waits_for_macs());
}

#[test]
fn normal_to_a_destination_on_the_input_port_is_a_drop() {
    let (dp, _macs) = normal_datapath(&[(1, SRC), (1, DST)]);
    let d = dp.decision(&udp_key(), 1).unwrap();
    assert_eq!(d.output, None);
    assert!(d.credit.out_slots.is_empty());
    assert_eq!(d.credit.normal.map(|n| n.outcome), Some(NormalOutcome::Dropped));
}

#[test]
fn kernel_hits_through_normal_count_in_its_statistics() {
    let (dp, macs) = normal_datapath(&[(1, SRC)]);
    let kc = dp.kernel_counters();
    let flood = dp.decision(&udp_key(), 1).unwrap().credit;
    learn(&macs, 2, DST);
    let one = dp.decision(&udp_key(), 1).unwrap().credit;
    learn(&macs, 1, DST);
    let drop = dp.decision(&udp_key(), 1).unwrap().credit;
    let before = macs.stats();
    kc.credit_many(
        [(&flood, Hits::new(3, 300)), (&one, Hits::new(5, 500)), (&drop, Hits::new(2, 200))],
        1,
    );
    let after = macs.stats();
    assert_eq!(after.flooded - before.flooded, 3);
    assert_eq!(after.forwarded - before.forwarded, 5);
    assert_eq!(after.dropped - before.dropped, 2);
    assert_eq!(dp.read_port(0).rx_packets, 10);
    assert_eq!(dp.read_port(1).tx_packets, 3 + 5);
    assert_eq!(dp.read_port(2).tx_packets, 3);
}

/// Records the offers it is made.
#[derive(Default)]
struct Offers(Mutex<Vec<(FlowKey, u64)>>);

impl Mirror for Offers {
    fn capabilities(&self) -> Capabilities {
        Capabilities::NONE
    }
    fn offer(&self, key: &FlowKey, version: u64) {
        self.0.lock().unwrap().push((*key, version));
    }
    fn publish(&self, _: u64, _: &Changes) {}
}

#[test]
fn a_new_offer_round_makes_every_flow_offer_itself_again() {
    let (dp, mut wr) = datapath();
    wr.insert_rule(0, rule(FlowMatch::ANY, 1, vec![Action::Output(2)], None)).unwrap();
    wr.publish();
    let offers = Arc::new(Offers::default());
    assert!(dp.set_mirror(offers.clone()));
    let frame = compose(&match_of(&udp_key())).unwrap();
    let mut w = dp.worker(0);
    let mut out = crate::pipeline::Outputs::new();
    let mut send = |w: &mut crate::pipeline::WorkerState| {
        let mut batch = vec![(crate::packet::Packet::from_slice(&frame), 1)];
        dp.batch(w, 0).process_batch(&mut batch, &mut out);
        dp.flush_offers(w);
        out.clear();
    };
    send(&mut w);
    send(&mut w);
    assert_eq!(offers.0.lock().unwrap().len(), 1, "once per round");
    dp.reoffer();
    send(&mut w);
    send(&mut w);
    let made = offers.0.lock().unwrap().clone();
    assert_eq!(made.len(), 2, "again in the new round, once");
    assert_eq!(made[1], (udp_key(), dp.current().version()));
}
