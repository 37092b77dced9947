//! Decisions on paths with MPLS actions: which the kernel may copy, and what they
//! carry for it.

use super::*;

/// The key of an MPLS frame from port 1 with one entry (label 100, TC 3).
fn mpls_key() -> FlowKey {
    let mut k = udp_key();
    for f in
        [Field::IpProto, Field::IpTtl, Field::Ipv4Src, Field::Ipv4Dst, Field::TpSrc, Field::TpDst]
    {
        k.set(f, 0);
    }
    k.set(Field::EthType, 0x8847);
    k.set(Field::MplsLabel, 100);
    k.set(Field::MplsTc, 3);
    k.set(Field::MplsBos, 1);
    k
}

fn decide_mpls(key: &FlowKey, rules: Vec<(u8, Rule)>) -> Result<Decision, Ineligible> {
    let (dp, mut wr) = datapath();
    for (t, r) in rules {
        wr.insert_rule(t, r).unwrap();
    }
    wr.publish();
    dp.decision(key, 0)
}

#[test]
fn a_push_onto_ipv4_is_copied_and_counted_four_bytes_longer() {
    let push = vec![Action::PushMpls(0x8847), Action::SetField(Field::MplsLabel, 1000)];
    let d = decide_mpls(
        &udp_key(),
        vec![
            (0, rule(FlowMatch::ANY, 1, push, Some(1))),
            (1, rule(FlowMatch::ANY, 1, vec![Action::Output(2)], None)),
        ],
    )
    .unwrap();
    let (_, out) = d.output.unwrap();
    assert_eq!(&out[12..18], &[0x88, 0x47, 0x00, 0x3e, 0x81, 64]);
    assert_eq!(d.credit.out_delta, 4);
    assert_eq!(d.credit.steps[1].len_delta, 4, "table 1 sees the entry");
    assert!(d.ttl_variants.is_empty(), "the IPv4 TTL is in the key");
    assert_eq!(
        d.credit.mask.get(Field::IpTtl),
        Field::IpTtl.full(),
        "the new entry copies the IPv4 TTL: the decision depends on it"
    );
    // Another ethertype would be read as what follows the entry.
    let odd = vec![Action::PushMpls(0x0800), Action::Output(2)];
    let e = decide_mpls(&udp_key(), vec![(0, rule(FlowMatch::ANY, 1, odd, None))]);
    assert!(matches!(e, Err(Ineligible::Action(_))), "{e:?}");
}

#[test]
fn an_mpls_decision_carries_its_frame_with_other_ttls() {
    let actions =
        vec![Action::SetField(Field::MplsLabel, 200), Action::DecMplsTtl, Action::Output(2)];
    let d = decide_mpls(&mpls_key(), vec![(0, rule(FlowMatch::ANY, 1, actions, None))]).unwrap();
    let (_, out) = d.output.clone().unwrap();
    assert_eq!(&out[14..18], &((200 << 12) | (3 << 9) | (1 << 8) | 63u32).to_be_bytes());
    let seen: Vec<(u8, bool, Option<u8>)> = d
        .ttl_variants
        .iter()
        .map(|v| (v.ttl, v.same_path, v.output.as_ref().map(|o| o[17])))
        .collect();
    assert_eq!(seen, vec![(1, false, None), (2, true, Some(1)), (255, true, Some(254))]);
    for v in &d.ttl_variants {
        assert_eq!(v.input[17], v.ttl);
        assert_eq!(v.input[..17], d.input[..17]);
    }
}

#[test]
fn a_pop_is_copied_with_the_frame_below_reading_as_ip_of_its_length() {
    let pop = vec![Action::PopMpls(0x86dd), Action::Output(2)];
    let d = decide_mpls(&mpls_key(), vec![(0, rule(FlowMatch::ANY, 1, pop, None))]).unwrap();
    let (_, out) = d.output.clone().unwrap();
    assert_eq!(out, [&d.input[..12], &[0x86, 0xdd], &d.input[18..]].concat());
    assert_eq!(d.credit.out_delta, -4);
    let below = &d.input[18..];
    assert_eq!(usize::from(u16::from_be_bytes([below[2], below[3]])), below.len());
    assert_eq!(usize::from(u16::from_be_bytes([below[4], below[5]])) + 40, below.len());
    assert!(d.ttl_variants.iter().all(|v| v.same_path));
}

#[test]
fn what_follows_a_pop_may_not_read_below_the_stack() {
    let pop = || vec![Action::PopMpls(0x0800)];
    let cases: Vec<Vec<(u8, Rule)>> = vec![
        // A table after the pop.
        vec![
            (0, rule(FlowMatch::ANY, 1, pop(), Some(1))),
            (1, rule(FlowMatch::ANY, 1, vec![Action::Output(2)], None)),
        ],
        // A rewrite of the IPv4 header below.
        vec![(
            0,
            rule(
                FlowMatch::ANY,
                1,
                [pop(), vec![Action::DecNwTtl, Action::Output(2)]].concat(),
                None,
            ),
        )],
        // A second pop.
        vec![(0, rule(FlowMatch::ANY, 1, [pop(), pop(), vec![Action::Output(2)]].concat(), None))],
    ];
    for rules in cases {
        let e = decide_mpls(&mpls_key(), rules);
        assert!(matches!(e, Err(Ineligible::Mpls(_))), "{e:?}");
    }
    // MAC and VLAN rewrites read nothing below.
    let ok = [
        pop(),
        vec![Action::SetField(Field::EthDst, 9), Action::PushVlan(0x8100), Action::Output(2)],
    ]
    .concat();
    let d = decide_mpls(&mpls_key(), vec![(0, rule(FlowMatch::ANY, 1, ok, None))]).unwrap();
    assert_eq!(d.credit.out_delta, 0);
}

#[test]
fn a_key_below_the_bottom_of_its_stack_composes_two_entries() {
    let mut k = mpls_key();
    k.set(Field::MplsBos, 0);
    let d =
        decide_mpls(&k, vec![(0, rule(FlowMatch::ANY, 1, vec![Action::Output(2)], None))]).unwrap();
    assert_eq!(d.input[16] & 1, 0);
    assert_eq!(d.input[20] & 1, 1, "a second entry, the bottom one");
}

#[test]
fn a_group_after_a_push_and_its_bucket_after_a_pop_count_their_length() {
    use crate::group::{Bucket, Group, GroupKind};
    let (dp, mut wr) = datapath();
    let popping = Bucket::new(vec![Action::PopMpls(0x8847), Action::Output(2)]);
    wr.set_group(Group::new(1, GroupKind::Indirect, vec![popping])).unwrap();
    wr.set_group(Group::new(2, GroupKind::Indirect, vec![Bucket::new(vec![Action::Group(1)])]))
        .unwrap();
    let apply = vec![Action::PushMpls(0x8847), Action::Group(2)];
    wr.insert_rule(0, rule(FlowMatch::ANY, 1, apply, None)).unwrap();
    wr.publish();
    let d = dp.decision(&udp_key(), 0).unwrap();
    let deltas: Vec<i32> = d.credit.groups.iter().map(|g| g.len_delta).collect();
    assert_eq!(deltas, vec![4, 4]);
    assert_eq!(d.credit.out_delta, 0, "pushed, then popped in the bucket");
}

#[test]
fn a_push_and_pop_around_a_decrement_depends_on_the_ipv4_ttl() {
    // The IPv4 packet leaves as it came (its padding trimmed to the minimum by the pop),
    // but a TTL of 1 fails the decrement.
    let actions = vec![
        Action::PushMpls(0x8847),
        Action::DecMplsTtl,
        Action::PopMpls(0x0800),
        Action::Output(2),
    ];
    let d = decide_mpls(&udp_key(), vec![(0, rule(FlowMatch::ANY, 1, actions, None))]).unwrap();
    assert_eq!(d.output.clone().unwrap().1[..42], d.input[..42]);
    assert_eq!(d.credit.mask.get(Field::IpTtl), Field::IpTtl.full());
}
