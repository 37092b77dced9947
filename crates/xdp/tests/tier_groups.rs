//! Groups in the map sync against the loaded program (needs root): decisions through
//! indirect, select and fast-failover groups mirrored and run with BPF_PROG_TEST_RUN,
//! group and bucket statistics credited back as the workers count them, a group-mod
//! taking the entries through the group out before its publish returns, and a port
//! going down taking out the entries whose bucket choice read it.

mod common;

use std::sync::Arc;
use std::time::Instant;

use datapath::action::Action;
use datapath::group::{Bucket, Group, GroupKind, GROUP_ANY};
use datapath::key::{Field, FlowKey, FlowMatch};
use datapath::packet::Packet;
use datapath::pipeline::{Datapath, Instructions, Outputs, Rule};
use xdp::tier::{KernelTier, Verdict};
use xdp::FastPath;

use common::in_fresh_netns;

const XDP_PASS: u32 = 2;
const XDP_REDIRECT: u32 = 4;

fn out(p: u32) -> Bucket {
    Bucket::new(vec![Action::Output(p)])
}

fn to_group(g: u32) -> Rule {
    Rule::new(
        FlowMatch::ANY.exact(Field::InPort, 1),
        10,
        Instructions { apply: vec![Action::Group(g)], ..Instructions::default() },
    )
}

fn key(sport: u16) -> FlowKey {
    common::key_of(&common::udp_frame(sport))
}

/// Port 1 the loopback (frames are run "arriving" there), ports 2..=4 veths; `body`
/// gets the program, the devmap slot of each port (index: port number), the datapath,
/// its writer and the tier.
fn bed(
    body: impl FnOnce(&Arc<FastPath>, &[u32], &Datapath, &mut datapath::pipeline::Writer, &Arc<KernelTier>)
        + Send
        + 'static,
) {
    in_fresh_netns(|| {
        let fp = Arc::new(FastPath::load(256, 4).expect("load"));
        let attached = common::attach_ports(&fp, "tg", "th", 4);
        let mut slots = vec![u32::MAX];
        slots.extend(attached.iter().map(|a| a.slot()));
        let (dp, mut wr, _rx) = common::datapath(4);
        let tier = common::mirrored(&fp, &dp, Instant::now());
        body(&fp, &slots, &dp, &mut wr, &tier);
        drop(attached);
    });
}

#[test]
#[ignore = "needs root: network namespaces"]
fn a_group_mod_takes_the_entries_through_the_group_out_before_its_publish_returns() {
    bed(|fp, slots, dp, wr, tier| {
        wr.set_group(Group::new(1, GroupKind::Indirect, vec![out(2)])).unwrap();
        wr.set_group(Group::new(2, GroupKind::Indirect, vec![out(3)])).unwrap();
        wr.insert_rule(0, to_group(1)).unwrap();
        wr.publish();
        let (frame, k) = (common::udp_frame(1000), key(1000));
        tier.consider(&k);
        let entries = fp.entries().unwrap();
        assert_eq!(entries.len(), 1, "{entries:?}");
        assert_eq!(entries[0].1.out, slots[2]);
        for _ in 0..3 {
            let (rc, got) = fp.test_run(&frame, 1, 0).unwrap();
            assert_eq!((rc, got), (XDP_REDIRECT, frame.clone()));
        }
        tier.harvest();
        let (g, b) = dp.read_group(1).unwrap();
        assert_eq!((g.packets, g.bytes), (3, 3 * frame.len() as u64));
        assert_eq!((b[0].packets, b[0].bytes), (3, 3 * frame.len() as u64));

        // Another group changes: the entry keeps forwarding.
        wr.set_group(Group::new(2, GroupKind::Indirect, vec![out(4)])).unwrap();
        wr.publish();
        assert_eq!(fp.test_run(&frame, 1, 0).unwrap().0, XDP_REDIRECT);

        // Its group changes: no frame is forwarded by the old bucket once the publish
        // returned, and the hit before it is credited to the old group's counters
        // (which the new group does not inherit).
        wr.set_group(Group::new(1, GroupKind::Indirect, vec![out(3)])).unwrap();
        wr.publish();
        let (rc, _) = fp.test_run(&frame, 1, 0).unwrap();
        assert_eq!(rc, XDP_PASS, "a changed group must not forward in the kernel");
        assert_eq!(dp.read_group(1).unwrap().0.packets, 0, "new counters");
        assert_eq!(tier.verdict(&k), Verdict::Eligible);
        tier.consider(&k);
        assert_eq!(fp.entries().unwrap()[0].1.out, slots[3]);
        assert_eq!(fp.test_run(&frame, 1, 0).unwrap().0, XDP_REDIRECT);
        tier.harvest();
        assert_eq!(dp.read_group(1).unwrap().0.packets, 1);

        // The group goes: the entry with it (the flow now drops in user space, counted
        // apart, which the tier does not copy).
        wr.remove_group(1).unwrap();
        wr.publish();
        assert_eq!(fp.test_run(&frame, 1, 0).unwrap().0, XDP_PASS);
        match tier.verdict(&k) {
            Verdict::Refused(why) => assert!(why.contains("group 1 does not exist"), "{why}"),
            v => panic!("{v:?}"),
        }
        assert_eq!(tier.dump().1.revalidated, 2);
    });
}

#[test]
#[ignore = "needs root: network namespaces"]
fn select_entries_send_each_flow_where_the_worker_does() {
    bed(|fp, slots, dp, wr, tier| {
        let g = Group::new(3, GroupKind::Select, vec![out(2), out(3).with_weight(2), out(4)]);
        wr.set_group(g).unwrap();
        wr.insert_rule(0, to_group(3)).unwrap();
        wr.publish();
        let mut w = dp.worker(0);
        let mut seen = [0u64; 5];
        for sport in 2000..2100u16 {
            let frame = common::udp_frame(sport);
            let mut o = Outputs::new();
            dp.process(&mut w, Packet::from_slice(&frame), 1, 0, &mut o);
            let p = o.ports();
            assert_eq!(p.len(), 1);
            seen[p[0] as usize] += 1;
            tier.consider(&key(sport));
            let (rc, got) = fp.test_run(&frame, 1, 0).unwrap();
            assert_eq!((rc, got), (XDP_REDIRECT, frame.clone()), "sport {sport}");
            let e = fp.entries().unwrap().into_iter().find(|(k, _)| k.tp_src == sport).unwrap().1;
            assert_eq!(e.out, slots[p[0] as usize], "sport {sport}: the worker's bucket");
        }
        assert!(seen[2..].iter().all(|&n| n > 10), "{seen:?}");
        // Each flow ran once in the worker and once in the kernel: every bucket counted
        // twice what was sent to its port by the worker.
        tier.harvest();
        let (g, b) = dp.read_group(3).unwrap();
        assert_eq!(g.packets, 200);
        for (i, s) in b.iter().enumerate() {
            assert_eq!(s.packets, 2 * seen[i + 2], "bucket {i}");
            assert_eq!(dp.read_port(i as u16 + 1).tx_packets, 2 * seen[i + 2]);
        }
    });
}

#[test]
#[ignore = "needs root: network namespaces"]
fn a_port_going_down_takes_out_the_fast_failover_entries_that_read_it() {
    bed(|fp, slots, dp, wr, tier| {
        let ff = Group::new(
            4,
            GroupKind::FastFailover,
            vec![out(2).watching(2, GROUP_ANY), out(3).watching(3, GROUP_ANY)],
        );
        wr.set_group(ff).unwrap();
        wr.set_group(Group::new(5, GroupKind::Indirect, vec![out(4)])).unwrap();
        wr.insert_rule(0, to_group(4)).unwrap();
        let mut other = to_group(5);
        other.set_flow_match(
            &other.flow_match().expect("not inserted yet").exact(Field::TpSrc, 3000),
        );
        other.priority = 20;
        wr.insert_rule(0, other).unwrap();
        wr.publish();
        let (frame, k) = (common::udp_frame(1000), key(1000));
        tier.consider(&k);
        tier.consider(&key(3000));
        assert_eq!(fp.entries().unwrap().len(), 2);
        assert_eq!(fp.test_run(&frame, 1, 0).unwrap().0, XDP_REDIRECT);
        let out_of = |sport: u16| {
            fp.entries().unwrap().into_iter().find(|(k, _)| k.tp_src == sport).map(|(_, e)| e.out)
        };
        assert_eq!(out_of(1000), Some(slots[2]));

        // Port 2's link goes down (no publish): the entry is out when the call returns,
        // its hit credited; the indirect group's entry stays.
        dp.set_port_live(1, false);
        assert_eq!(fp.test_run(&frame, 1, 0).unwrap().0, XDP_PASS);
        assert_eq!(out_of(1000), None);
        assert_eq!(out_of(3000), Some(slots[4]));
        let (_, b) = dp.read_group(4).unwrap();
        assert_eq!(b[0].packets, 1);
        // The flow is judged again (queued for the tier's thread; judged here) and takes
        // the live bucket.
        tier.consider(&k);
        assert_eq!(out_of(1000), Some(slots[3]));
        assert_eq!(fp.test_run(&frame, 1, 0).unwrap().0, XDP_REDIRECT);
        // Back up: the first bucket again.
        dp.set_port_live(1, true);
        assert_eq!(out_of(1000), None);
        tier.consider(&k);
        assert_eq!(out_of(1000), Some(slots[2]));
        tier.harvest();
        let (g, b) = dp.read_group(4).unwrap();
        assert_eq!(g.packets, 2);
        assert_eq!((b[0].packets, b[1].packets), (1, 1));
    });
}
