use crate::action::{port, Action};
use crate::counters::Misc;
use crate::group::{flow_hash, Bucket, Group, GroupKind, GROUP_ANY};
use crate::key::{Field, FlowKey, FlowMatch};
use crate::mirror::{Changes, Decision, Hits, Ineligible};
use crate::packet::Packet;
use crate::pipeline::{
    Datapath, DatapathConfig, Instructions, Outputs, PortInfo, Rule, RuleId, Writer,
};

/// Ports 1..=4 in slots 0..4, the real header rewrites.
fn datapath() -> (Datapath, Writer) {
    let cfg = DatapathConfig {
        ports: (1..=4).map(|i| PortInfo::new(i, (i - 1) as u16)).collect(),
        ..DatapathConfig::default()
    };
    let (dp, wr, _rx) = Datapath::new(cfg, 16);
    (dp, wr)
}

/// The key of an IPv4/UDP frame from port 1, varied by `i`.
fn udp_key(i: u32) -> FlowKey {
    let mut k = crate::mirror::tests::udp_key();
    k.set(Field::Ipv4Src, 0x0a00_0000 | u128::from(i & 0xffff));
    k.set(Field::TpSrc, 1000 + u128::from(i >> 16));
    k
}

/// Why `dp` refuses the decision for `udp_key(0)` at time 0.
fn refusal(dp: &Datapath) -> Ineligible {
    dp.decision(&udp_key(0), 0).unwrap_err()
}

fn to_group(apply: Vec<Action>) -> Rule {
    Rule::new(FlowMatch::ANY, 1, Instructions { apply, ..Instructions::default() })
}

fn out(p: u32) -> Bucket {
    Bucket::new(vec![Action::Output(p)])
}

/// `dp` with `groups` and one rule applying `apply`; the rule's id.
fn setup(dp: &Datapath, wr: &mut Writer, groups: &[Group], apply: Vec<Action>) -> RuleId {
    for g in groups {
        wr.set_group(g.clone()).unwrap();
    }
    let id = wr.insert_rule(0, to_group(apply)).unwrap();
    wr.publish();
    assert!(dp.current().group(groups[0].id).is_some());
    id
}

/// The ports a worker sends `frame` from port 1 to.
fn worker_ports(dp: &Datapath, frame: &[u8]) -> Vec<u32> {
    let mut w = dp.worker(0);
    let mut o = Outputs::new();
    dp.process(&mut w, Packet::from_slice(frame), 1, 0, &mut o);
    o.ports()
}

fn ports(d: &Decision) -> Vec<u32> {
    d.output.as_ref().map(|o| o.0.clone()).unwrap_or_default()
}

#[test]
fn an_indirect_group_is_its_bucket_with_its_counters() {
    let (dp, mut wr) = datapath();
    let g = Group::new(1, GroupKind::Indirect, vec![out(3)]);
    setup(&dp, &mut wr, &[g], vec![Action::Group(1)]);
    let d = dp.decision(&udp_key(0), 0).unwrap();
    assert_eq!(ports(&d), vec![3]);
    assert_eq!(d.output.as_ref().unwrap().1, d.input);
    let v = dp.current();
    let g = v.group(1).unwrap();
    assert_eq!(d.credit.groups.len(), 1);
    let h = &d.credit.groups[0];
    assert_eq!((h.group, h.counter, h.len_delta), (1, g.counter, 0));
    assert_eq!(h.buckets, vec![g.buckets[0].counter]);
    assert_eq!(d.credit.groups_read, vec![1]);
    assert!(d.credit.live_slots.is_empty(), "indirect reads no liveness");
}

#[test]
fn an_all_group_of_one_frame_is_a_broadcast_and_of_different_frames_is_refused() {
    let (dp, mut wr) = datapath();
    let g = Group::new(2, GroupKind::All, vec![out(2), out(3), out(4)]);
    setup(&dp, &mut wr, &[g], vec![Action::Group(2)]);
    let d = dp.decision(&udp_key(0), 0).unwrap();
    assert_eq!(ports(&d), vec![2, 3, 4]);
    assert_eq!(d.credit.out_slots, vec![1, 2, 3]);
    assert_eq!(d.credit.groups[0].buckets.len(), 3);

    let (dp, mut wr) = datapath();
    let g = Group::new(
        2,
        GroupKind::All,
        vec![out(2), Bucket::new(vec![Action::SetField(Field::EthDst, 9), Action::Output(3)])],
    );
    setup(&dp, &mut wr, &[g], vec![Action::Group(2)]);
    assert_eq!(refusal(&dp), Ineligible::SeveralOutputs);
}

#[test]
fn a_select_group_records_the_bucket_the_worker_takes_for_every_key() {
    let (dp, mut wr) = datapath();
    let g = Group::new(
        3,
        GroupKind::Select,
        vec![out(2), out(3).with_weight(2), out(4).with_weight(0)],
    );
    setup(&dp, &mut wr, &[g], vec![Action::Group(3)]);
    let counters: Vec<u32> =
        dp.current().group(3).unwrap().buckets.iter().map(|b| b.counter).collect();
    let mut seen = [0usize; 5];
    for i in 0..2000u32 {
        let key = udp_key(i.wrapping_mul(40_503));
        let d = dp.decision(&key, 0).unwrap();
        let p = ports(&d);
        assert_eq!(p, worker_ports(&dp, &d.input), "key {i}");
        assert_eq!(p.len(), 1);
        // The bucket recorded is the one of the port sent to, picked by the key's hash.
        let b = (p[0] - 2) as usize;
        assert_eq!(d.credit.groups[0].buckets, vec![counters[b]], "key {i}");
        let pick = flow_hash(&key) % 3;
        assert_eq!(b, usize::from(pick >= 1), "key {i}");
        seen[p[0] as usize] += 1;
    }
    assert_eq!(seen[4], 0, "weight 0 is never taken");
    assert!(seen[2] > 500 && seen[3] > 1100, "{seen:?}");
    // Select reads its buckets' liveness (watching nothing: none).
    let d = dp.decision(&udp_key(1), 0).unwrap();
    assert!(d.credit.live_slots.is_empty());
}

#[test]
fn a_select_group_over_watched_ports_depends_on_their_liveness() {
    let (dp, mut wr) = datapath();
    let g = Group::new(
        3,
        GroupKind::Select,
        vec![out(2).watching(2, GROUP_ANY), out(3).watching(3, GROUP_ANY)],
    );
    setup(&dp, &mut wr, &[g], vec![Action::Group(3)]);
    let d = dp.decision(&udp_key(7), 0).unwrap();
    assert_eq!(d.credit.live_slots, vec![1, 2]);
    assert!(d.credit.reads_liveness(1) && !d.credit.reads_liveness(0));
    dp.set_port_live(1, false);
    for i in 0..50 {
        let d = dp.decision(&udp_key(i), 0).unwrap();
        assert_eq!(ports(&d), vec![3]);
        assert_eq!(ports(&d), worker_ports(&dp, &d.input));
    }
}

#[test]
fn fast_failover_takes_the_first_live_bucket_and_reads_the_watched_liveness() {
    let (dp, mut wr) = datapath();
    let watched =
        Group::new(7, GroupKind::Indirect, vec![Bucket::new(vec![]).watching(4, GROUP_ANY)]);
    let ff = Group::new(
        4,
        GroupKind::FastFailover,
        vec![
            out(2).watching(2, GROUP_ANY),
            out(3).watching(3, GROUP_ANY),
            out(4).watching(port::ANY, 7),
        ],
    );
    setup(&dp, &mut wr, &[ff, watched], vec![Action::Group(4)]);
    let key = udp_key(0);
    let d = dp.decision(&key, 0).unwrap();
    assert_eq!(ports(&d), vec![2]);
    assert_eq!(d.credit.groups_read, vec![4, 7]);
    assert_eq!(d.credit.live_slots, vec![1, 2, 3]);
    dp.set_port_live(1, false);
    let d = dp.decision(&key, 0).unwrap();
    assert_eq!(ports(&d), vec![3]);
    let b1 = dp.current().group(4).unwrap().buckets[1].counter;
    assert_eq!(d.credit.groups[0].buckets, vec![b1]);
    dp.set_port_live(2, false);
    assert_eq!(ports(&dp.decision(&key, 0).unwrap()), vec![4]);
    dp.set_port_live(3, false);
    // No live bucket: a drop that still counts the group.
    let d = dp.decision(&key, 0).unwrap();
    assert!(d.output.is_none());
    assert_eq!(d.credit.groups.len(), 1);
    assert!(d.credit.groups[0].buckets.is_empty());
    assert!(worker_ports(&dp, &d.input).is_empty());

    // A change to the group run or to the one watched alters the decision; to another
    // group does not.
    let ch = |g: u32| Changes { groups: vec![g], ..Changes::default() };
    assert!(d.credit.affected_by(&key, &ch(4)));
    assert!(d.credit.affected_by(&key, &ch(7)));
    assert!(!d.credit.affected_by(&key, &ch(5)));
}

#[test]
fn group_flows_kept_in_user_space_say_why() {
    let (dp, mut wr) = datapath();
    wr.insert_rule(0, to_group(vec![Action::Group(9)])).unwrap();
    wr.publish();
    let why = refusal(&dp);
    assert!(why.to_string().contains("group 9 does not exist"), "{why}");

    // A bucket's action the kernel does not do is named.
    let (dp, mut wr) = datapath();
    let g = Group::new(
        1,
        GroupKind::Indirect,
        vec![Bucket::new(vec![Action::Output(port::CONTROLLER)])],
    );
    setup(&dp, &mut wr, &[g], vec![Action::Group(1)]);
    assert_eq!(refusal(&dp), Ineligible::Controller);
}

#[test]
fn a_publish_names_the_groups_it_changed() {
    use std::sync::{Arc, Mutex};

    #[derive(Default)]
    struct Seen(Mutex<Vec<Changes>>);
    impl crate::mirror::Mirror for Seen {
        fn capabilities(&self) -> crate::mirror::Capabilities {
            crate::mirror::Capabilities::NONE
        }
        fn offer(&self, _: &FlowKey, _: u64) {}
        fn publish(&self, _: u64, c: &Changes) {
            self.0.lock().unwrap().push(c.clone());
        }
    }
    let (dp, mut wr) = datapath();
    let seen = Arc::new(Seen::default());
    assert!(dp.set_mirror(seen.clone()));
    wr.set_group(Group::new(1, GroupKind::Indirect, vec![out(2)])).unwrap();
    wr.set_group(Group::new(2, GroupKind::Indirect, vec![out(3)])).unwrap();
    wr.publish();
    wr.set_group(Group::new(1, GroupKind::Indirect, vec![out(4)])).unwrap();
    wr.remove_group(2).unwrap();
    wr.publish();
    let s = seen.0.lock().unwrap();
    assert_eq!(s[0].groups, vec![1, 2]);
    assert_eq!(s[1].groups, vec![1, 2]);
    assert!(!s[1].config);
}

#[test]
fn liveness_changes_reach_the_mirror_once_each() {
    use std::sync::{Arc, Mutex};

    #[derive(Default)]
    struct Seen(Mutex<Vec<(u16, bool)>>);
    impl crate::mirror::Mirror for Seen {
        fn capabilities(&self) -> crate::mirror::Capabilities {
            crate::mirror::Capabilities::NONE
        }
        fn offer(&self, _: &FlowKey, _: u64) {}
        fn publish(&self, _: u64, _: &Changes) {}
        fn port_liveness(&self, slot: u16, live: bool) {
            self.0.lock().unwrap().push((slot, live));
        }
    }
    let (dp, _wr) = datapath();
    let seen = Arc::new(Seen::default());
    assert!(dp.set_mirror(seen.clone()));
    dp.set_port_live(1, false);
    dp.set_port_live(1, false);
    dp.set_port_live(1, true);
    assert_eq!(*seen.0.lock().unwrap(), vec![(1, false), (1, true)]);
}

/// Two identical datapaths, one forwarding `n` packets of each key in its worker, the
/// other crediting them as kernel hits of the keys' decisions: every counter agrees.
fn same_counts(groups: &[Group], apply: Vec<Action>, keys: &[FlowKey], n: u64) {
    let (a, mut wa) = datapath();
    let (b, mut wb) = datapath();
    let ra = setup(&a, &mut wa, groups, apply.clone());
    let rb = setup(&b, &mut wb, groups, apply);
    let kc = b.kernel_counters();
    let mut w = a.worker(64);
    for key in keys {
        let d = b.decision(key, 0).unwrap();
        for _ in 0..n {
            let mut o = Outputs::new();
            a.process(&mut w, Packet::from_slice(&d.input), 1, 0, &mut o);
            assert_eq!(o.ports(), ports(&d));
        }
        kc.credit(&d.credit, Hits::new(n, n * d.input.len() as u64), 0);
    }
    let (rsa, rsb) = (a.read_rule(ra), b.read_rule(rb));
    assert_eq!((rsa.packets, rsa.bytes), (rsb.packets, rsb.bytes));
    for g in groups {
        assert_eq!(a.read_group(g.id), b.read_group(g.id), "group {}", g.id);
    }
    assert_eq!(a.read_table(0), b.read_table(0));
    for slot in 0..4 {
        assert_eq!(a.read_port(slot), b.read_port(slot), "port slot {slot}");
    }
    assert_eq!(a.read_misc(Misc::Packets), b.read_misc(Misc::Packets));
    assert!(a.read_group(groups[0].id).unwrap().0.packets > 0);
}

#[test]
fn kernel_credits_equal_the_workers_counts_through_every_group_type() {
    let keys: Vec<FlowKey> = (0..40).map(|i| udp_key(i * 7919)).collect();
    let tag = vec![Action::PushVlan(0x8100), Action::SetField(Field::VlanVid, 0x1005)];
    let with_tag = |g: u32| [tag.clone(), vec![Action::Group(g)]].concat();
    same_counts(&[Group::new(1, GroupKind::Indirect, vec![out(3)])], with_tag(1), &keys, 5);
    same_counts(
        &[Group::new(2, GroupKind::All, vec![out(2), out(3), out(4)])],
        vec![Action::Group(2)],
        &keys,
        3,
    );
    same_counts(
        &[Group::new(3, GroupKind::Select, vec![out(2).with_weight(3), out(3).with_weight(5)])],
        with_tag(3),
        &keys,
        4,
    );
    same_counts(
        &[Group::new(
            4,
            GroupKind::FastFailover,
            vec![out(2).watching(2, GROUP_ANY), out(3).watching(3, GROUP_ANY)],
        )],
        vec![Action::Group(4)],
        &keys,
        2,
    );
    // A bucket that pops the tag and runs a select group: each group counts the frame
    // as it is where it runs.
    same_counts(
        &[
            Group::new(
                5,
                GroupKind::Indirect,
                vec![Bucket::new(vec![Action::PopVlan, Action::Group(6)])],
            ),
            Group::new(6, GroupKind::Select, vec![out(2), out(4)]),
        ],
        with_tag(5),
        &keys,
        3,
    );
}

#[test]
fn a_select_group_keeps_its_decision_to_its_microflow_and_others_cover_a_megaflow() {
    let all_bits = FlowKey { words: [u64::MAX; crate::key::KEY_WORDS] };
    let (dp, mut wr) = datapath();
    let sel = Group::new(5, GroupKind::Select, vec![out(2), out(3)]);
    let ind = Group::new(6, GroupKind::Indirect, vec![out(4)]);
    wr.set_group(ind).unwrap();
    setup(&dp, &mut wr, &[sel], vec![Action::Group(5)]);
    let d = dp.decision(&udp_key(0), 0).unwrap();
    assert_eq!(d.credit.mask, all_bits, "the bucket hashes every field");
    let (dp, mut wr) = datapath();
    let ind = Group::new(6, GroupKind::Indirect, vec![out(4)]);
    setup(&dp, &mut wr, &[ind], vec![Action::Group(6)]);
    let d = dp.decision(&udp_key(0), 0).unwrap();
    let m = d.credit.mask;
    assert_ne!(m, all_bits);
    assert_eq!(
        (m.get(Field::InPort), m.get(Field::TpSrc), m.get(Field::Ipv4Src)),
        (Field::InPort.full(), 0, 0),
        "an indirect group reads no field: the rule's (none) and the port"
    );
}
