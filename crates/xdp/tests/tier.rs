//! The map sync against the loaded program (needs root): decisions mirrored into the
//! map, frames run through the program with BPF_PROG_TEST_RUN, hits credited back to the
//! datapath's counters, and a publish making every older entry a miss at once.

mod common;

use std::sync::Arc;
use std::time::Instant;

use datapath::action::Action;
use datapath::key::{Field, FlowKey, FlowMatch};
use datapath::normal::{MacTable, MacTableConfig};
use datapath::packet::Packet;
use datapath::pipeline::{Instructions, NormalPacket, Outputs, Rule};
use ports::afxdp::AttachMode;
use xdp::layout::{event, FP_GROUP, FP_SET_ETH_DST};
use xdp::tier::{KernelTier, Verdict};
use xdp::FastPath;

use common::{in_fresh_netns, key_of};

const XDP_PASS: u32 = 2;
const XDP_REDIRECT: u32 = 4;

fn output_rule(dst: u64, port: u32) -> Rule {
    Rule::new(
        FlowMatch::ANY.exact(Field::InPort, 1),
        10,
        Instructions {
            apply: vec![Action::SetField(Field::EthDst, dst as u128), Action::Output(port)],
            ..Instructions::default()
        },
    )
}

#[test]
#[ignore = "needs root: network namespaces"]
fn decisions_are_mirrored_credited_and_dropped_at_publish() {
    in_fresh_netns(|| {
        let fp = Arc::new(FastPath::load(64, 4).expect("load"));
        // Port 1 is the loopback (frames are run "arriving" there), port 2 a veth.
        let attached = common::attach_ports(&fp, "fp", "fq", 2);
        let (dp, mut wr, _rx) = common::datapath(2);
        let id = wr.insert_rule(0, output_rule(0x0200_0000_0009, 2)).unwrap();
        wr.publish();
        let tier = common::mirrored(&fp, &dp, Instant::now());

        let frame = common::udp_frame(1000);
        let key = common::key_of(&frame);
        assert_eq!(tier.verdict(&key), Verdict::Eligible);
        tier.consider(&key);
        let entries = fp.entries().unwrap();
        assert_eq!(entries.len(), 1, "{entries:?}");
        let (_, e) = entries[0];
        assert_eq!(e.version, fp.version().unwrap(), "written in the current generation");
        assert_eq!(e.flags, FP_SET_ETH_DST);
        assert_eq!(e.out, attached[1].slot());

        // The program forwards it as the pipeline would have.
        let expect = dp.trace(&frame, 1, 0).outputs.tx[0].packet.data().to_vec();
        for _ in 0..3 {
            let (rc, got) = fp.test_run(&frame, 1, 0).unwrap();
            assert_eq!(rc, XDP_REDIRECT);
            assert_eq!(got, expect);
        }
        // Its hits are credited to the rule, the table and both ports.
        tier.harvest();
        let r = dp.read_rule(id);
        assert_eq!((r.packets, r.bytes), (3, 3 * frame.len() as u64));
        assert_eq!(dp.read_table(0).lookups, 3);
        assert_eq!(dp.read_port(0).rx_packets, 3);
        assert_eq!(dp.read_port(1).tx_packets, 3);
        assert!(matches!(tier.verdict(&key), Verdict::Served { packets: 3, .. }));

        // A rule the entry's key does not match: the entry keeps forwarding.
        wr.insert_rule(
            0,
            Rule::new(
                FlowMatch::ANY.exact(Field::InPort, 2),
                20,
                Instructions { apply: vec![Action::Output(1)], ..Instructions::default() },
            ),
        )
        .unwrap();
        wr.publish();
        let (rc, _) = fp.test_run(&frame, 1, 0).unwrap();
        assert_eq!(rc, XDP_REDIRECT, "an unrelated change must not take the entry out");
        assert!(matches!(tier.verdict(&key), Verdict::Served { .. }));

        // A change of the rule it took: the entry is gone from the publish on, and its
        // hits up to then are credited.
        wr.modify_rule(id, None, |r| {
            std::sync::Arc::make_mut(&mut r.instructions).apply =
                vec![Action::SetField(Field::EthDst, 0x0200_0000_0077), Action::Output(2)]
        })
        .unwrap();
        wr.publish();
        let misses = fp.events()[event::MISS as usize];
        let (rc, _) = fp.test_run(&frame, 1, 0).unwrap();
        assert_eq!(rc, XDP_PASS, "a changed decision must not forward");
        assert_eq!(fp.events()[event::MISS as usize], misses + 1);
        assert_eq!(tier.verdict(&key), Verdict::Eligible);
        assert_eq!(dp.read_rule(id).packets, 4);

        // Mirrored again under the new version, with the new rewrite.
        tier.consider(&key);
        let (rc, got) = fp.test_run(&frame, 1, 0).unwrap();
        assert_eq!(rc, XDP_REDIRECT);
        assert_eq!(&got[..6], &[2, 0, 0, 0, 0, 0x77]);
        tier.harvest();
        assert_eq!(dp.read_rule(id).packets, 5);

        // A higher-priority rule that matches the key takes the entry out too.
        let mut above = output_rule(0x0200_0000_0055, 2);
        above.priority = 30;
        wr.insert_rule(0, above).unwrap();
        wr.publish();
        let (rc, _) = fp.test_run(&frame, 1, 0).unwrap();
        assert_eq!(rc, XDP_PASS, "a new rule above the entry's must take it out");
        tier.consider(&key);
        let (rc, got) = fp.test_run(&frame, 1, 0).unwrap();
        assert_eq!(rc, XDP_REDIRECT);
        assert_eq!(&got[..6], &[2, 0, 0, 0, 0, 0x55]);

        // New settings (ports) flush the whole map: every entry a miss at once.
        let mut cfg = dp.current().config().clone();
        cfg.ports[1].no_fwd = true;
        wr.set_config(cfg);
        wr.publish();
        let (rc, _) = fp.test_run(&frame, 1, 0).unwrap();
        assert_eq!(rc, XDP_PASS);
        assert_eq!(fp.events()[event::STALE as usize], 1);
        assert_eq!(
            tier.verdict(&key),
            Verdict::Refused(
                "its output to port 2 sends nothing (no_fwd, or the input port)".into()
            )
        );

        // A decision the program cannot redo is not mirrored.
        wr.modify_rule(id, None, |r| {
            std::sync::Arc::make_mut(&mut r.instructions).apply =
                vec![Action::Controller { max_len: 128 }]
        })
        .unwrap();
        wr.publish();
        tier.consider(&key);
        assert!(matches!(tier.verdict(&key), Verdict::Refused(_)));
        let (rc, _) = fp.test_run(&frame, 1, 0).unwrap();
        assert_eq!(rc, XDP_PASS);
        let (dump, stats) = tier.dump();
        assert!(dump.iter().all(|d| !d.live), "{dump:?}");
        assert_eq!((stats.publishes, stats.flushes), (5, 1));
        assert_eq!(stats.revalidated, 2);
        drop(attached);
    });
}

#[test]
#[ignore = "needs root: network namespaces"]
fn several_outputs_share_broadcast_groups_reused_only_after_a_grace() {
    in_fresh_netns(|| {
        let fp = Arc::new(FastPath::load(64, 8).expect("load"));
        // Port 1 is the loopback (frames are run "arriving" there), ports 2..=6 veths.
        let mut attached = common::attach_ports(&fp, "fg", "fh", 6);
        let slots: Vec<u32> = attached.iter().map(|a| a.slot()).collect();
        let slot = |p: u32| slots[p as usize - 1];
        let (dp, mut wr, _rx) = common::datapath(6);
        // Flow i (UDP source port 1000 + i) is sent to port set i.
        let sets: Vec<Vec<u32>> = vec![
            vec![2, 3, 4, 5, 6],
            vec![2, 3],
            vec![2, 4],
            vec![2, 5],
            vec![2, 6],
            vec![3, 4],
            vec![3, 5],
            vec![3, 6],
            vec![4, 5],
            vec![3, 2],
            vec![4, 6],
        ];
        let flow_match = |i: usize| {
            FlowMatch::ANY
                .exact(Field::InPort, 1)
                .exact(Field::EthType, 0x0800)
                .exact(Field::IpProto, 17)
                .exact(Field::TpSrc, 1000 + i as u128)
        };
        for (i, set) in sets.iter().enumerate() {
            let apply = if i == 0 {
                vec![Action::Output(datapath::action::port::FLOOD)]
            } else {
                set.iter().map(|&p| Action::Output(p)).collect()
            };
            let instr = Instructions { apply, ..Instructions::default() };
            wr.insert_rule(0, Rule::new(flow_match(i), 10, instr)).unwrap();
        }
        wr.publish();
        let tier = common::mirrored(&fp, &dp, Instant::now());
        let key = |i: usize| common::key_of(&common::udp_frame(1000 + i as u16));
        let out_of = |i: usize| {
            let (dump, _) = tier.dump();
            dump.iter()
                .find(|d| d.key.tp_src == 1000 + i as u16)
                .map(|d| (d.entry.out, d.out_ports.clone()))
        };
        let group_slots = |set: &[u32]| {
            let mut s: Vec<u32> = set.iter().chain(&[1]).map(|&p| slot(p)).collect();
            s.sort_unstable();
            s
        };

        // The first eight sets take the eight groups, each holding its ports and the
        // input port; the tenth flow's set is the second's, so it shares that group.
        let mut groups = Vec::new();
        for i in [0, 1, 2, 3, 4, 5, 6, 7, 9] {
            tier.consider(&key(i));
            let (out, ports) = out_of(i).unwrap_or_else(|| panic!("flow {i} not mirrored"));
            assert_ne!(out & FP_GROUP, 0, "flow {i}: {out:#x}");
            assert_eq!(ports, sets[i], "flow {i}");
            let g = out & !FP_GROUP;
            assert_eq!(fp.group(g).unwrap(), group_slots(&sets[i]), "flow {i}");
            groups.push(g);
        }
        assert_eq!(groups[8], groups[1], "the same port set shares its group");
        let mut distinct = groups[..8].to_vec();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), 8);

        // A ninth set finds every group in use: it stays in user space. So does a tenth,
        // without another search of the entries: none went since the last.
        let scans = || tier.dump().1.group_scans;
        tier.consider(&key(8));
        assert_eq!(out_of(8), None);
        assert_eq!(scans(), 1);
        tier.consider(&key(10));
        assert_eq!(out_of(10), None);
        assert_eq!(scans(), 1, "nothing went: no new search");

        // The flood is broadcast and credited to every port it reaches.
        let (rc, _) = fp.test_run(&common::udp_frame(1000), 1, 0).unwrap();
        assert_eq!(rc, XDP_REDIRECT);
        tier.harvest();
        assert_eq!(dp.read_port(0).rx_packets, 1);
        for s in 1..=5 {
            assert_eq!(dp.read_port(s).tx_packets, 1, "port slot {s}");
        }

        // The flood's rule goes: its group is free, but only after the grace.
        assert!(wr.remove_rule(0, &flow_match(0), 10).is_some());
        wr.publish();
        let (rc, _) = fp.test_run(&common::udp_frame(1000), 1, 0).unwrap();
        assert_eq!(rc, XDP_PASS);
        tier.consider(&key(8));
        assert_eq!(out_of(8), None, "a group is not reused at once");
        assert_eq!(scans(), 2, "an entry went: searched again");
        std::thread::sleep(xdp::tier::GROUP_GRACE + std::time::Duration::from_millis(50));
        // (The flow is judged again in the next version.)
        wr.insert_rule(0, output_rule(0x0200_0000_0009, 2)).unwrap();
        wr.publish();
        tier.consider(&key(8));
        let (out, ports) = out_of(8).expect("mirrored once a group is free");
        assert_eq!(scans(), 3);
        assert_eq!(out, FP_GROUP | groups[0]);
        assert_eq!(ports, sets[8]);
        assert_eq!(fp.group(groups[0]).unwrap(), group_slots(&sets[8]));

        // Port 6 detached (its slot leaves every group) and attached again in the same
        // slot: after the settings' publish, its group is written again when used.
        let six = attached.pop().unwrap();
        let (old_slot, ifindex) =
            (six.slot(), ports::InterfaceInfo::by_name("fg6").unwrap().ifindex);
        drop(six);
        assert!(!fp.group(groups[4]).unwrap().contains(&old_slot));
        attached.push(fp.attach("fg6", ifindex, 6, 1, AttachMode::Generic).unwrap());
        assert_eq!(attached[5].slot(), old_slot);
        let cfg = dp.current().config().clone();
        wr.set_config(cfg);
        wr.publish();
        tier.consider(&key(4));
        assert_eq!(out_of(4).map(|o| o.0), Some(FP_GROUP | groups[4]));
        assert_eq!(fp.group(groups[4]).unwrap(), group_slots(&sets[4]));
        drop(attached);
    });
}

/// Teaches `macs` that `mac` is on `port` at `now`, as a broadcast frame from it would.
fn learn(macs: &MacTable, port: u32, mac: u64, now: u64) {
    let mut h = macs.handler();
    h.begin_batch(now);
    let mut key = FlowKey::ZERO;
    key.set(Field::InPort, port.into());
    key.set(Field::EthSrc, mac.into());
    key.set(Field::EthDst, 0xffff_ffff_ffff);
    let mut out = Outputs::new();
    out.normal.push(NormalPacket { in_port: port, key, packet: Packet::from_slice(&[0; 60]) });
    out.drain_normal(&mut h);
    assert_eq!(macs.lookup(0, mac, now), Some(port));
}

#[test]
#[ignore = "needs root: network namespaces"]
fn normal_decisions_follow_the_mac_table() {
    const SRC: u64 = 0x0200_0000_0001;
    const DST: u64 = 0x0200_0000_0002;
    const XDP_DROP: u32 = 1;
    in_fresh_netns(|| {
        let fp = Arc::new(FastPath::load(64, 4).expect("load"));
        // Port 1 is the loopback (frames are run "arriving" there), ports 2 and 3 veths.
        let attached = common::attach_ports(&fp, "fn", "fm", 3);
        let slot = |p: u32| attached[p as usize - 1].slot();
        let (dp, mut wr, _rx) = common::datapath(3);
        let normal = Instructions {
            apply: vec![Action::Output(datapath::action::port::NORMAL)],
            ..Instructions::default()
        };
        let rule = wr.insert_rule(0, Rule::new(FlowMatch::ANY, 0, normal)).unwrap();
        wr.publish();
        let macs =
            MacTable::new(MacTableConfig { refresh_ns: 1_000_000, ..MacTableConfig::default() });
        macs.set_ports(&[1, 2, 3]);
        assert!(dp.set_mac_table(macs.clone()));
        let started = Instant::now();
        let now = move || started.elapsed().as_nanos() as u64;
        let tier = common::mirrored(&fp, &dp, started);

        let frame = common::udp_frame(1000);
        let key = common::key_of(&frame);
        let run = || fp.test_run(&frame, 1, 0).unwrap();
        let mine = || {
            let (dump, stats) = tier.dump();
            let d = dump.into_iter().find(|d| d.live && d.key.in_port == 1);
            (d, stats)
        };

        // The source is not learned: the frame must reach the learning switch.
        match tier.verdict(&key) {
            Verdict::Refused(why) => {
                assert!(why.contains("NORMAL") && why.contains("not learned"), "{why}")
            }
            v => panic!("{v:?}"),
        }
        tier.consider(&key);
        assert_eq!(mine().0, None);
        assert_eq!(run().0, XDP_PASS);

        // Once it is learned (which starts a new offer round: the flow's next packet in
        // a worker offers it again, done here by hand), the destination is unknown, so
        // a flood to every other port, through a broadcast group.
        learn(&macs, 1, SRC, now());
        tier.consider(&key);
        let (d, _) = mine();
        let d = d.expect("the flood mirrored after the source was learned");
        assert!(d.normal);
        assert_eq!(d.out_ports, vec![2, 3]);
        assert_ne!(d.entry.out & FP_GROUP, 0);
        let (rc, got) = run();
        assert_eq!(rc, XDP_REDIRECT);
        assert_eq!(got, frame);
        let before = macs.stats();
        tier.harvest();
        assert_eq!(macs.stats().flooded, before.flooded + 1);
        assert_eq!(dp.read_rule(rule).packets, 1);
        assert_eq!(dp.read_port(1).tx_packets, 1);
        assert_eq!(dp.read_port(2).tx_packets, 1);

        // The destination is learned: the flood is withdrawn at once, from the MAC
        // table's write path, and the flow judged again goes to the one port.
        learn(&macs, 2, DST, now());
        assert_eq!(run().0, XDP_PASS, "a flood must not outlive the learning");
        assert_eq!(mine().1.mac_withdrawn, 1);
        // The thread judges withdrawn flows again at its next chores.
        tier.normal_chores();
        let (d, _) = mine();
        assert_eq!(d.expect("mirrored again").entry.out, slot(2));
        assert_eq!(run().0, XDP_REDIRECT);
        tier.harvest();
        assert_eq!(macs.stats().forwarded, before.forwarded + 1);

        // Kernel hits keep the source alive: a harvest refreshes it.
        std::thread::sleep(std::time::Duration::from_millis(20));
        let age = |mac: u64| {
            let t = now();
            macs.entries(t).iter().find(|e| e.mac == mac).unwrap().age_ns
        };
        assert!(age(SRC) >= 20_000_000);
        assert_eq!(run().0, XDP_REDIRECT);
        tier.harvest();
        assert!(age(SRC) < 20_000_000, "refreshed from the kernel's hit");
        assert_eq!(run().0, XDP_REDIRECT, "a refresh withdraws nothing");
        learn(&macs, 3, 0x0200_0000_0003, now());
        assert_eq!(run().0, XDP_REDIRECT, "another MAC's learning withdraws nothing");

        // The destination moves: nothing more goes to its old port.
        learn(&macs, 3, DST, now());
        assert_eq!(run().0, XDP_PASS);
        tier.consider(&key);
        assert_eq!(mine().0.expect("mirrored again").entry.out, slot(3));

        // The destination appears on the input port: NORMAL drops, and so does the
        // kernel.
        learn(&macs, 1, DST, now());
        assert_eq!(run().0, XDP_PASS);
        tier.consider(&key);
        let d = mine().0.expect("the drop mirrored");
        assert_eq!(d.out_ports, Vec::<u32>::new());
        assert_eq!(run().0, XDP_DROP);
        let dropped = macs.stats().dropped;
        tier.harvest();
        assert_eq!(macs.stats().dropped, dropped + 1);

        // New settings withdraw every NORMAL entry; a short aging then lets the
        // source expire with no frame seen: the chores remove it, which withdraws the
        // entry.
        learn(&macs, 2, DST, now());
        tier.consider(&key);
        assert_eq!(run().0, XDP_REDIRECT);
        macs.set_config(MacTableConfig {
            aging_ns: 100_000_000,
            refresh_ns: 1_000_000,
            ..MacTableConfig::default()
        });
        assert_eq!(run().0, XDP_PASS, "new settings withdraw it");
        learn(&macs, 1, SRC, now());
        learn(&macs, 2, DST, now());
        tier.consider(&key);
        assert_eq!(mine().0.expect("mirrored again").entry.out, slot(2));
        // The source keeps sending through the kernel (and stays alive); the
        // destination says nothing and ages out: its entry goes, and the flow floods.
        let t0 = Instant::now();
        while t0.elapsed() < std::time::Duration::from_millis(150) {
            run();
            tier.harvest();
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        tier.normal_chores();
        tier.consider(&key);
        assert_eq!(macs.lookup(0, DST, now()), None, "the destination aged out");
        assert_eq!(macs.lookup(0, SRC, now()), Some(1), "kept alive by the kernel");
        let d = mine().0.expect("the flood mirrored");
        assert_eq!(d.out_ports, vec![2, 3]);
        // Now the source stops too and ages out.
        std::thread::sleep(std::time::Duration::from_millis(150));
        tier.normal_chores();
        assert_eq!(run().0, XDP_PASS, "the source aged out");
        assert_eq!(macs.lookup(0, SRC, now()), None);
        drop(attached);
    });
}

#[test]
#[ignore = "needs root: network namespaces"]
fn normal_is_not_mirrored_by_a_tier_that_does_not_follow_the_mac_table() {
    in_fresh_netns(|| {
        let fp = Arc::new(FastPath::load(64, 4).expect("load"));
        let lo = fp.attach("lo", 1, 1, 1, AttachMode::Generic).unwrap();
        let (dp, mut wr, _rx) = common::datapath(2);
        let normal = Instructions {
            apply: vec![Action::Output(datapath::action::port::NORMAL)],
            ..Instructions::default()
        };
        wr.insert_rule(0, Rule::new(FlowMatch::ANY, 0, normal)).unwrap();
        wr.publish();
        let started = Instant::now();
        // The tier is made before the table is attached: it is not the table's
        // listener, so it must not copy NORMAL's decisions.
        let tier = KernelTier::new(fp.clone(), dp.clone(), started);
        let macs = MacTable::new(MacTableConfig::default());
        macs.set_ports(&[1, 2]);
        assert!(dp.set_mac_table(macs.clone()));
        learn(&macs, 1, 0x0200_0000_0001, started.elapsed().as_nanos() as u64);
        let key = common::key_of(&common::udp_frame(1000));
        match tier.verdict(&key) {
            Verdict::Refused(why) => assert!(why.contains("attached after"), "{why}"),
            v => panic!("{v:?}"),
        }
        tier.consider(&key);
        assert!(fp.entries().unwrap().is_empty());
        drop(lo);
    });
}

#[test]
#[ignore = "needs root: network namespaces"]
fn a_megaflow_serves_new_microflows_and_goes_with_a_rule_that_overlaps_it() {
    in_fresh_netns(|| {
        let fp = Arc::new(FastPath::load(64, 4).expect("load"));
        let _attached = common::attach_ports(&fp, "fp", "fq", 2);
        let (dp, mut wr, _rx) = common::datapath(2);
        let net = FlowMatch::ANY.exact(Field::InPort, 1).exact(Field::EthType, 0x0800).masked(
            Field::Ipv4Dst,
            0x0a00_0000,
            0xffff_ff00,
        );
        let to2 = Instructions { apply: vec![Action::Output(2)], ..Instructions::default() };
        let id = wr.insert_rule(0, Rule::new(net, 10, to2.clone())).unwrap();
        wr.publish();
        let tier = common::mirrored(&fp, &dp, Instant::now());

        tier.consider(&key_of(&common::udp_frame(1000)));
        let masks = tier.masks();
        assert_eq!(masks.len(), 1, "only masks with entries are walked: {masks:?}");
        let mega = &masks[0];
        assert_ne!(mega.slot, 0, "not the exact mask's slot");
        assert_eq!(mega.entries, 1);
        assert_eq!(
            (mega.mask.in_port, mega.mask.ipv4_dst, mega.mask.tp_src, mega.mask.ipv4_src),
            (u32::MAX, 0xffff_ff00, 0, 0)
        );
        // Microflows never offered are served from their first frame, and credited.
        for sport in [1000, 2000, 3000, 4000] {
            let (rc, _) = fp.test_run(&common::udp_frame(sport), 1, 0).unwrap();
            assert_eq!(rc, XDP_REDIRECT, "source port {sport}");
            let k = key_of(&common::udp_frame(sport));
            let v = tier.verdict(&k);
            assert!(
                matches!(&v, Verdict::Served { megaflow: Some(m), .. } if m.contains("nw_dst=10.0.0.0/255.255.255.0")),
                "{v:?}"
            );
        }
        tier.harvest();
        assert_eq!(dp.read_rule(id).packets, 4);
        let (dump, _) = tier.dump();
        assert_eq!(dump.len(), 1);
        assert_eq!(
            dump[0].key.describe_masked(&dump[0].mask),
            "in_port=1,dl_type=0x0800,nw_proto=17,nw_dst=10.0.0.0/255.255.255.0"
        );

        // A rule on one source port, above the megaflow's: it overlaps the megaflow
        // though it matches no key offered, so the megaflow goes at the publish.
        let one_port = FlowMatch::ANY
            .exact(Field::EthType, 0x0800)
            .exact(Field::IpProto, 17)
            .exact(Field::TpSrc, 3000);
        wr.insert_rule(0, Rule::new(one_port, 20, Instructions::default())).unwrap();
        wr.publish();
        for sport in [1000, 3000] {
            let (rc, _) = fp.test_run(&common::udp_frame(sport), 1, 0).unwrap();
            assert_eq!(rc, XDP_PASS, "source port {sport} after the change");
        }
        assert_eq!(tier.dump().1.revalidated, 1);
        assert!(tier.masks().is_empty(), "the megaflow's mask left the walk");

        // Judged again: the new megaflow holds the source port (the new rule's table
        // now consults it), so port 3000 is not under it.
        tier.consider(&key_of(&common::udp_frame(1000)));
        let (rc, _) = fp.test_run(&common::udp_frame(1000), 1, 0).unwrap();
        assert_eq!(rc, XDP_REDIRECT);
        let (rc, _) = fp.test_run(&common::udp_frame(3000), 1, 0).unwrap();
        assert_eq!(rc, XDP_PASS);
        let (rc, _) = fp.test_run(&common::udp_frame(1001), 1, 0).unwrap();
        assert_eq!(rc, XDP_PASS, "another port is another megaflow now");
    });
}
