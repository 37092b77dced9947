//! Decisions judged against the capabilities a tier declares: a tier that lacks one
//! gets the decisions that need it refused, naming it; the full set accepts them.

use super::*;
use crate::group::{Bucket, Group, GroupKind, GROUP_ANY};
use crate::meter::{Band, BandCell, BandKind, BandPool, Meter, MeterUnit, KERNEL_BANDS};

/// A tier that copies nothing but says what it can redo.
struct Tier(Capabilities);

impl Mirror for Tier {
    fn capabilities(&self) -> Capabilities {
        self.0
    }
    fn offer(&self, _: &FlowKey, _: u64) {}
    fn publish(&self, _: u64, _: &Changes) {}
}

fn set_tier(dp: &Datapath, caps: Capabilities) {
    assert!(dp.set_mirror(Arc::new(Tier(caps))));
}

/// The decision for `key` of a datapath with `rules` (table, rule) and `groups`, and a
/// tier of `caps`.
fn judged(
    caps: Capabilities,
    key: &FlowKey,
    groups: &[Group],
    rules: Vec<(u8, Rule)>,
) -> Result<Decision, Ineligible> {
    let (dp, mut wr) = datapath();
    set_tier(&dp, caps);
    for g in groups {
        wr.set_group(g.clone()).unwrap();
    }
    for (t, r) in rules {
        wr.insert_rule(t, r).unwrap();
    }
    wr.publish();
    dp.decision(key, 0)
}

/// Table 0 applies `actions`.
fn applying(actions: Vec<Action>) -> Vec<(u8, Rule)> {
    vec![(0, rule(FlowMatch::ANY, 1, actions, None))]
}

/// Whether a tier of every capability accepts the decision and one without `c` refuses
/// it for lack of `c`.
fn needs(c: Capability, key: &FlowKey, groups: &[Group], rules: Vec<(u8, Rule)>) {
    let all = judged(Capabilities::ALL, key, groups, rules.clone());
    assert!(all.is_ok(), "{c:?}: {all:?}");
    let without = judged(Capabilities::ALL.without(c), key, groups, rules);
    assert_eq!(without.unwrap_err(), Ineligible::Unsupported(c), "{c:?}");
}

/// The key of an IPv4/UDP frame from port 1 with a VLAN tag (VID 5).
fn tagged_key() -> FlowKey {
    let mut k = udp_key();
    k.set(Field::VlanVid, 0x1000 | 5);
    k
}

/// The key of an MPLS frame from port 1 with one entry (label 100).
fn mpls_key() -> FlowKey {
    frame_key(0x8847, &[(Field::MplsLabel, 100), (Field::MplsBos, 1)])
}

#[test]
fn each_rewrite_needs_its_capability() {
    use Action::*;
    let out = Output(2);
    let cases: Vec<(Capability, FlowKey, Vec<Action>)> = vec![
        (Capability::SetEth, udp_key(), vec![SetField(Field::EthDst, 9), out.clone()]),
        (
            Capability::SetVlan,
            tagged_key(),
            vec![SetField(Field::VlanVid, 0x1000 | 7), out.clone()],
        ),
        (Capability::SetIpTos, udp_key(), vec![SetField(Field::IpDscp, 10), out.clone()]),
        (Capability::SetIpv4, udp_key(), vec![SetField(Field::Ipv4Dst, 0x0a00_0009), out.clone()]),
        (Capability::SetTransport, udp_key(), vec![SetField(Field::TpDst, 53), out.clone()]),
        (Capability::SetMpls, mpls_key(), vec![SetField(Field::MplsLabel, 200), out.clone()]),
        (Capability::PushVlan, udp_key(), vec![PushVlan(0x8100), out.clone()]),
        (Capability::PopVlan, tagged_key(), vec![PopVlan, out.clone()]),
        (Capability::PushMpls, udp_key(), vec![PushMpls(0x8847), out.clone()]),
        (Capability::PopMpls, mpls_key(), vec![PopMpls(0x0800), out.clone()]),
        (Capability::IpTtl, udp_key(), vec![DecNwTtl, out.clone()]),
        (Capability::IpTtl, udp_key(), vec![SetNwTtl(9), out.clone()]),
        (Capability::MplsTtl, mpls_key(), vec![DecMplsTtl, out.clone()]),
    ];
    for (c, key, actions) in cases {
        needs(c, &key, &[], applying(actions));
    }
}

#[test]
fn a_rewrite_in_the_action_set_needs_its_capability_too() {
    let r = Rule::new(
        FlowMatch::ANY,
        1,
        Instructions {
            write_actions: Some(vec![Action::PushMpls(0x8847), Action::Output(2)]),
            ..Instructions::default()
        },
    );
    needs(Capability::PushMpls, &udp_key(), &[], vec![(0, r)]);
}

#[test]
fn each_group_type_needs_its_capability() {
    let out = |p| Bucket::new(vec![Action::Output(p)]);
    let cases = [
        (Capability::GroupIndirect, GroupKind::Indirect, vec![out(2)]),
        (Capability::GroupAll, GroupKind::All, vec![out(2), out(3)]),
        (Capability::GroupSelect, GroupKind::Select, vec![out(2), out(3)]),
        (
            Capability::GroupFastFailover,
            GroupKind::FastFailover,
            vec![out(2).watching(2, GROUP_ANY), out(3).watching(3, GROUP_ANY)],
        ),
    ];
    for (c, kind, buckets) in cases {
        let g = Group::new(1, kind, buckets);
        needs(c, &udp_key(), &[g], applying(vec![Action::Group(1)]));
    }
    // A tier without select groups still takes the others.
    let g = Group::new(1, GroupKind::Indirect, vec![out(2)]);
    let caps = Capabilities::ALL.without(Capability::GroupSelect);
    let d = judged(caps, &udp_key(), &[g], applying(vec![Action::Group(1)]));
    assert_eq!(d.unwrap().output.unwrap().0, vec![2]);
}

#[test]
fn one_frame_to_several_ports_needs_broadcast() {
    for actions in [
        vec![Action::Output(port::FLOOD)],
        vec![Action::Output(port::ALL)],
        vec![Action::Output(2), Action::Output(3)],
    ] {
        needs(Capability::Broadcast, &udp_key(), &[], applying(actions));
    }
    // An all group's buckets too.
    let g = Group::new(
        1,
        GroupKind::All,
        vec![Bucket::new(vec![Action::Output(2)]), Bucket::new(vec![Action::Output(3)])],
    );
    needs(Capability::Broadcast, &udp_key(), &[g], applying(vec![Action::Group(1)]));
    // One port at a time needs nothing.
    let d = judged(Capabilities::NONE, &udp_key(), &[], applying(vec![Action::Output(2)]));
    assert_eq!(d.unwrap().output.unwrap().0, vec![2]);
}

#[test]
fn a_tier_without_normal_gets_no_decision_of_the_learning_switch() {
    for (caps, ok) in
        [(Capabilities::ALL, true), (Capabilities::ALL.without(Capability::Normal), false)]
    {
        let (dp, macs) = normal_datapath(&[]);
        set_tier(&dp, caps);
        learn(&macs, 1, SRC);
        learn(&macs, 2, DST);
        let d = dp.decision(&udp_key(), 1);
        if ok {
            assert_eq!(d.unwrap().output.unwrap().0, vec![2]);
        } else {
            let e = d.unwrap_err();
            assert_eq!(e, Ineligible::Unsupported(Capability::Normal));
            assert!(!e.waits_for_macs(), "no MAC change makes it eligible");
        }
    }
    // NORMAL's flood is one frame to several ports; its unicast is not.
    let (dp, macs) = normal_datapath(&[]);
    set_tier(&dp, Capabilities::ALL.without(Capability::Broadcast));
    learn(&macs, 1, SRC);
    assert_eq!(
        dp.decision(&udp_key(), 1).unwrap_err(),
        Ineligible::Unsupported(Capability::Broadcast)
    );
    learn(&macs, 3, DST);
    assert_eq!(dp.decision(&udp_key(), 1).unwrap().output.unwrap().0, vec![3]);
}

/// The decision of a datapath whose table 0 meters with meter 1 (`bands`, kernel cells
/// lent) and sends to port 2, with a tier of `caps`.
fn metered(caps: Capabilities, bands: Vec<BandKind>) -> Result<Decision, Ineligible> {
    let (dp, mut wr) = datapath();
    set_tier(&dp, caps);
    let cells: &'static [BandCell] =
        Box::leak((0..KERNEL_BANDS).map(|_| BandCell::default()).collect());
    assert!(dp.set_band_cells(BandPool::new(cells, 0)));
    let bands = bands
        .into_iter()
        .enumerate()
        .map(|(i, kind)| Band { kind, rate: 10 * (i as u32 + 1), burst_size: 0 })
        .collect();
    wr.set_meter(Meter::new(1, MeterUnit::Pktps, false, bands)).unwrap();
    let r = Rule::new(
        FlowMatch::ANY,
        1,
        Instructions { meter: Some(1), apply: vec![Action::Output(2)], ..Instructions::default() },
    );
    wr.insert_rule(0, r).unwrap();
    wr.publish();
    dp.decision(&udp_key(), 0)
}

#[test]
fn meters_need_the_capability_its_band_count_and_remark() {
    let drop = || vec![BandKind::Drop];
    let remark = || vec![BandKind::DscpRemark { prec_level: 1 }];
    let d = metered(Capabilities::ALL, drop()).unwrap();
    assert_eq!(d.credit.meter.map(|m| m.bands), Some(1));
    assert_eq!(
        metered(Capabilities::ALL.without(Capability::Meter), drop()).unwrap_err(),
        Ineligible::Unsupported(Capability::Meter)
    );
    // A tier that runs one band per meter: a meter of two is refused, saying so.
    let one = Capabilities::ALL.with_meter_bands(1);
    assert!(metered(one, drop()).is_ok());
    match metered(one, vec![BandKind::Drop, BandKind::Drop]).unwrap_err() {
        Ineligible::Meter(why) => {
            assert!(why.contains("2 bands, more than the kernel tier runs (1)"), "{why}")
        }
        other => panic!("{other:?}"),
    }
    // Without DSCP remark: a remark band is refused, a drop band still taken.
    let no_remark = Capabilities::ALL.without(Capability::DscpRemark);
    assert!(metered(Capabilities::ALL, remark()).unwrap().credit.meter.unwrap().remark);
    assert_eq!(
        metered(no_remark, remark()).unwrap_err(),
        Ineligible::Unsupported(Capability::DscpRemark)
    );
    assert!(metered(no_remark, drop()).is_ok());
}

#[test]
fn a_tier_of_no_capability_takes_plain_paths_only() {
    let plain = vec![
        (
            0,
            Rule::new(
                FlowMatch::ANY,
                1,
                Instructions {
                    write_metadata: Some((5, 0xff)),
                    goto_table: Some(1),
                    ..Instructions::default()
                },
            ),
        ),
        (1, rule(FlowMatch::ANY, 1, vec![Action::Output(3)], None)),
    ];
    let d = judged(Capabilities::NONE, &udp_key(), &[], plain).unwrap();
    assert_eq!(d.output.unwrap().0, vec![3]);
    assert!(judged(Capabilities::NONE, &udp_key(), &[], applying(vec![]))
        .unwrap()
        .output
        .is_none());
    let e = judged(
        Capabilities::NONE,
        &udp_key(),
        &[],
        applying(vec![Action::SetField(Field::EthSrc, 7), Action::Output(2)]),
    )
    .unwrap_err();
    assert_eq!(e, Ineligible::Unsupported(Capability::SetEth));
    assert_eq!(e.to_string(), "the kernel tier does not do set-field of an Ethernet address");
}

#[test]
fn without_a_tier_decisions_are_judged_against_every_capability() {
    let (dp, mut wr) = datapath();
    wr.insert_rule(
        0,
        rule(FlowMatch::ANY, 1, vec![Action::PushMpls(0x8847), Action::Output(2)], None),
    )
    .unwrap();
    wr.publish();
    assert!(dp.decision(&udp_key(), 0).is_ok());
    // The same datapath once a tier without push_mpls is set.
    set_tier(&dp, Capabilities::ALL.without(Capability::PushMpls));
    assert_eq!(
        dp.decision(&udp_key(), 0).unwrap_err(),
        Ineligible::Unsupported(Capability::PushMpls)
    );
}
