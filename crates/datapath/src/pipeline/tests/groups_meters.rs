//! Groups and meters inside the pipeline.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::*;
use crate::counters::Misc;
use crate::group::{Bucket, Group, GroupKind, GROUP_ANY};
use crate::meter::{drop_meter, Band, BandKind, Meter, MeterUnit};

const SEC: u64 = 1_000_000_000;

fn to_group(g: u32) -> Rule {
    Rule::new(FlowMatch::ANY, 1, apply(vec![Action::Group(g)]))
}

#[test]
fn all_and_indirect_groups_and_their_counters() {
    let (dp, mut wr, _rx) = datapath(config(4));
    let all = Group::new(
        1,
        GroupKind::All,
        vec![
            Bucket::new(vec![Action::Output(2)]),
            Bucket::new(vec![Action::Output(3), Action::SetField(Field::EthDst, 9)]),
            Bucket::new(vec![Action::Group(2)]),
        ],
    );
    wr.set_group(all).unwrap();
    wr.set_group(Group::new(2, GroupKind::Indirect, vec![Bucket::new(vec![Action::Output(4)])]))
        .unwrap();
    wr.insert_rule(0, to_group(1)).unwrap();
    wr.publish();
    let mut w = dp.worker(16);
    for _ in 0..3 {
        assert_eq!(run(&dp, &mut w, &frame(1, 2), 1, 0).ports(), vec![2, 3, 4]);
    }
    let t = dp.trace(&frame(1, 2), 1, 0);
    assert_eq!(
        t.set_actions(),
        vec![
            Action::Output(2),
            Action::SetField(Field::EthDst, 9),
            Action::Output(3),
            Action::Group(2),
            Action::Output(4)
        ],
        "bucket actions run as action sets"
    );
    let (g, buckets) = dp.read_group(1).unwrap();
    assert_eq!((g.packets, g.bytes), (3, 192));
    assert_eq!(buckets.iter().map(|b| b.packets).collect::<Vec<_>>(), vec![3, 3, 3]);
    assert_eq!(dp.read_group(2).unwrap().0.packets, 3);
    // A missing group drops.
    wr.remove_group(2).unwrap();
    wr.publish();
    assert_eq!(run(&dp, &mut w, &frame(1, 2), 1, 0).ports(), vec![2, 3]);
    assert_eq!(dp.read_misc(Misc::GroupDrops), 1);
}

#[test]
fn select_group_is_stable_per_flow_and_spreads_flows() {
    let (dp, mut wr, _rx) = datapath(config(4));
    let buckets = (2..=4).map(|p| Bucket::new(vec![Action::Output(p)])).collect();
    wr.set_group(Group::new(5, GroupKind::Select, buckets)).unwrap();
    wr.insert_rule(0, to_group(5)).unwrap();
    wr.publish();
    let mut cached = dp.worker(64);
    let mut plain = dp.worker(0);
    let mut seen = [0; 5];
    for src in 0..300u64 {
        let p = run(&dp, &mut cached, &frame(1, src), 1, 0).ports();
        assert_eq!(p.len(), 1);
        for _ in 0..3 {
            assert_eq!(run(&dp, &mut cached, &frame(1, src), 1, 0).ports(), p);
            assert_eq!(run(&dp, &mut plain, &frame(1, src), 1, 0).ports(), p);
        }
        seen[p[0] as usize] += 1;
    }
    assert!(seen[2..].iter().all(|&n| n > 60), "{seen:?}");
}

#[test]
fn fast_failover_switches_when_a_port_goes_down() {
    let (dp, mut wr, _rx) = datapath(config(4));
    let ff = Group::new(
        3,
        GroupKind::FastFailover,
        vec![
            Bucket::new(vec![Action::Output(2)]).watching(2, GROUP_ANY),
            Bucket::new(vec![Action::Output(3)]).watching(3, GROUP_ANY),
        ],
    );
    wr.set_group(ff).unwrap();
    wr.insert_rule(0, to_group(3)).unwrap();
    wr.publish();
    let mut w = dp.worker(16);
    assert_eq!(run(&dp, &mut w, &frame(1, 2), 1, 0).ports(), vec![2]);
    dp.set_port_live(1, false); // port 2
    assert_eq!(
        run(&dp, &mut w, &frame(1, 2), 1, 0).ports(),
        vec![3],
        "the cache does not pin the bucket"
    );
    dp.set_port_live(2, false);
    assert!(run(&dp, &mut w, &frame(1, 2), 1, 0).tx.is_empty());
    dp.set_port_live(1, true);
    assert_eq!(run(&dp, &mut w, &frame(1, 2), 1, 0).ports(), vec![2]);
}

fn metered(meter: u32) -> Rule {
    Rule::new(
        FlowMatch::ANY,
        1,
        Instructions {
            meter: Some(meter),
            apply: vec![Action::Output(crate::action::port::IN_PORT)],
            ..ins()
        },
    )
}

#[test]
fn meter_drops_above_rate_pktps_and_kbps() {
    let (dp, mut wr, _rx) = datapath(config(2));
    wr.set_meter(drop_meter(1, MeterUnit::Pktps, true, 100, 10)).unwrap();
    // 64-byte frames are 512 bits: 512 kbit/s is 1000 frames/s; a burst of 5 frames.
    wr.set_meter(drop_meter(2, MeterUnit::Kbps, true, 512, 5 * 512 / 1000 + 1)).unwrap();
    wr.insert_rule(0, metered(1)).unwrap();
    let mut by_bits = metered(2);
    by_bits.priority = 2;
    by_bits.set_flow_match(&on_port(2));
    wr.insert_rule(0, by_bits).unwrap();
    wr.publish();
    let mut w = dp.worker(16);
    let count = |w: &mut WorkerState, port: u32, n: u64, step: u64| {
        (0..n)
            .filter(|i| !run(&dp, w, &frame(1, 2), port, 100 * SEC + i * step).tx.is_empty())
            .count()
    };
    // 1000 packets at 1000/s through a 100 pkt/s meter with burst 10.
    let passed = count(&mut w, 1, 1000, SEC / 1000);
    assert!((108..=111).contains(&passed), "{passed}");
    let (m, bands) = dp.read_meter(1).unwrap();
    assert_eq!(m.packets, 1000);
    assert_eq!(bands[0].packets, 1000 - passed as u64);
    assert_eq!(dp.read_misc(Misc::MeterDrops), 1000 - passed as u64);
    // 2000 frames/s for half a second through 1000 frames/s.
    let passed = count(&mut w, 2, 1000, SEC / 2000);
    assert!((500..=508).contains(&passed), "{passed}");
}

#[test]
fn dscp_remark_band_changes_the_key_for_later_tables() {
    let (dp, mut wr, _rx) = datapath(config(3));
    let remark = Band { kind: BandKind::DscpRemark { prec_level: 1 }, rate: 10, burst_size: 1 };
    wr.set_meter(Meter::new(7, MeterUnit::Pktps, true, vec![remark])).unwrap();
    wr.insert_rule(
        0,
        Rule::new(
            FlowMatch::ANY,
            1,
            Instructions {
                apply: vec![Action::SetField(Field::IpDscp, 10)], // AF11
                goto_table: Some(1),
                ..ins()
            },
        ),
    )
    .unwrap();
    wr.insert_rule(
        1,
        Rule::new(FlowMatch::ANY, 1, Instructions { meter: Some(7), goto_table: Some(2), ..ins() }),
    )
    .unwrap();
    wr.insert_rule(2, output_rule(FlowMatch::ANY.exact(Field::IpDscp, 10), 1, 2)).unwrap();
    wr.insert_rule(2, output_rule(FlowMatch::ANY.exact(Field::IpDscp, 12), 1, 3)).unwrap();
    wr.publish();
    let mut w = dp.worker(16);
    let t = 50 * SEC;
    assert_eq!(run(&dp, &mut w, &frame(1, 2), 1, t).ports(), vec![2]);
    assert_eq!(run(&dp, &mut w, &frame(1, 2), 1, t).ports(), vec![3], "AF11 remarked to AF12");
    assert_eq!(run(&dp, &mut w, &frame(1, 2), 1, t).ports(), vec![3], "from the cache too");
    assert_eq!(run(&dp, &mut w, &frame(1, 2), 1, t + SEC).ports(), vec![2]);
}

#[test]
fn workers_on_threads_share_one_meter() {
    let (dp, mut wr, _rx) = datapath(config(2));
    wr.set_meter(drop_meter(1, MeterUnit::Pktps, true, 1000, 100)).unwrap();
    wr.insert_rule(0, metered(1)).unwrap();
    wr.publish();
    let clock = Arc::new(AtomicU64::new(10 * SEC));
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let (dp, clock) = (dp.clone(), clock.clone());
            std::thread::spawn(move || {
                let mut w = dp.worker(16);
                let mut passed = 0;
                for _ in 0..1000 {
                    let now = clock.fetch_add(SEC / 4000, Ordering::Relaxed);
                    passed += run(&dp, &mut w, &frame(1, 2), 1, now).tx.len();
                }
                passed
            })
        })
        .collect();
    let passed: usize = threads.into_iter().map(|t| t.join().unwrap()).sum();
    assert!((1050..=1101).contains(&passed), "{passed}");
    assert_eq!(dp.read_meter(1).unwrap().0.packets, 4000);
}
