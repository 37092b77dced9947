//! Versions and publishing, counters over workers, rule slots.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::*;

fn out_to(p: u32) -> Rule {
    output_rule(FlowMatch::ANY, 1, p)
}

/// Three ports, table 0's only rule (its id) outputs to port 2, and a worker with a
/// cache of 8.
fn published_out_to_2() -> (Datapath, Writer, RuleId, WorkerState) {
    let (dp, mut wr, _rx) = datapath(config(3));
    let id = wr.insert_rule(0, out_to(2)).unwrap();
    wr.publish();
    let w = dp.worker(8);
    (dp, wr, id, w)
}

#[test]
fn counters_are_summed_over_workers() {
    let (dp, mut wr, _rx) = datapath(config(3));
    let id = wr.insert_rule(0, out_to(2)).unwrap();
    // A second mask, so that lookups are dearer than the cache and workers use it.
    let other = FlowMatch::ANY.exact(Field::EthType, 0x0800);
    wr.insert_rule(0, Rule::new(other, 0, apply(vec![]))).unwrap();
    wr.publish();
    let threads: Vec<_> = (0..3u64)
        .map(|i| {
            let dp = dp.clone();
            std::thread::spawn(move || {
                let mut w = dp.worker(if i == 0 { 0 } else { 32 });
                for n in 0..100 * (i + 1) {
                    run(&dp, &mut w, &frame(1, n % 7), 1, 1000 * i + 5);
                }
            })
        })
        .collect();
    threads.into_iter().for_each(|t| t.join().unwrap());
    let s = dp.read_rule(id);
    assert_eq!((s.packets, s.bytes, s.last_used_ns), (600, 600 * 64, 2005));
    assert_eq!(dp.read_table(0).lookups, 600);
    assert_eq!(dp.read_port(1).tx_packets, 600);
    assert_eq!(dp.read_misc(crate::counters::Misc::CacheHits), 500 - 14);
}

#[test]
fn cache_is_bypassed_while_lookups_are_one_probe() {
    let (dp, mut wr, _rx) = datapath(config(3));
    wr.insert_rule(0, out_to(2)).unwrap();
    wr.publish();
    let mut w = dp.worker(64);
    let hits = |dp: &Datapath| {
        dp.read_misc(crate::counters::Misc::CacheHits)
            + dp.read_misc(crate::counters::Misc::CacheMisses)
    };
    for _ in 0..3 {
        assert_eq!(run(&dp, &mut w, &frame(1, 2), 1, 7).ports(), vec![2]);
    }
    assert_eq!(hits(&dp), 0, "one subtable: no cache probe");
    let m = FlowMatch::ANY.exact(Field::EthDst, 9);
    wr.insert_rule(0, output_rule(m, 5, 3)).unwrap();
    wr.publish();
    for _ in 0..3 {
        assert_eq!(run(&dp, &mut w, &frame(1, 2), 1, 7).ports(), vec![2]);
    }
    assert_eq!(dp.read_misc(crate::counters::Misc::CacheHits), 2);
    assert_eq!(hits(&dp), 3, "two subtables: the cache is used");
    assert!(wr.remove_rule(0, &m, 5).is_some());
    wr.publish();
    assert_eq!(run(&dp, &mut w, &frame(9, 2), 1, 7).ports(), vec![2]);
    assert_eq!(hits(&dp), 3, "back to one subtable");
}

#[test]
fn removed_rules_report_final_counters_and_slots_restart_at_zero() {
    let (dp, mut wr, id, mut w) = published_out_to_2();
    for _ in 0..3 {
        run(&dp, &mut w, &frame(1, 2), 1, 7);
    }
    assert!(wr.remove_rule(0, &FlowMatch::ANY, 1).is_some());
    assert!(wr.remove_rule(0, &FlowMatch::ANY, 1).is_none());
    let p = wr.publish();
    assert_eq!(p.removed.len(), 1);
    assert_eq!((p.removed[0].rule.id, p.removed[0].stats.packets), (id, 3));
    assert!(run(&dp, &mut w, &frame(1, 2), 1, 7).tx.is_empty(), "the cached path is gone");
    let id2 = wr.insert_rule(0, out_to(3)).unwrap();
    assert_eq!(id2, id, "slot reused");
    wr.publish();
    assert_eq!(dp.read_rule(id2).packets, 0);
    assert_eq!(run(&dp, &mut w, &frame(1, 2), 1, 7).ports(), vec![3]);
    assert_eq!(dp.read_rule(id2).packets, 1);
}

#[test]
fn clearing_a_table_removes_its_rules_at_once_and_leaves_the_others() {
    let (dp, mut wr, id, mut w) = published_out_to_2();
    let m = FlowMatch::ANY.exact(Field::EthDst, 9);
    let other = wr.insert_rule(0, output_rule(m, 5, 3)).unwrap();
    let kept = wr.insert_rule(1, out_to(1)).unwrap();
    wr.publish();
    run(&dp, &mut w, &frame(1, 2), 1, 7);
    assert_eq!(wr.pending().table_len(0), 2);
    assert_eq!(wr.clear_table(0), 2);
    assert_eq!(wr.pending().table_len(0), 0);
    let p = wr.publish();
    assert!(p.removed.is_empty(), "a cleared table's rules are not listed");
    assert!(dp.current().rule(other).is_none());
    assert!(run(&dp, &mut w, &frame(1, 2), 1, 7).tx.is_empty(), "table 0 misses");
    assert!(dp.current().rule(id).is_none() && dp.current().rule(kept).is_some());
    assert_eq!(wr.pending().table_len(1), 1);
    // Both copies agree: the next publish starts from the cleared one.
    let again = wr.insert_rule(0, out_to(3)).unwrap();
    wr.publish();
    assert_eq!(run(&dp, &mut w, &frame(1, 2), 1, 7).ports(), vec![3]);
    assert_eq!(dp.current().table(0).unwrap().len(), 1);
    assert!(dp.current().rule(again).is_some());
    // Inside a transaction the rules go one by one, and a rollback puts them back.
    wr.begin();
    assert_eq!(wr.clear_table(0), 1);
    wr.rollback();
    wr.publish();
    assert_eq!(run(&dp, &mut w, &frame(1, 2), 1, 7).ports(), vec![3]);
}

#[test]
fn insert_replaces_and_modify_keeps_counters() {
    let (dp, mut wr, id, mut w) = published_out_to_2();
    run(&dp, &mut w, &frame(1, 2), 1, 0);
    wr.modify_rule(id, None, |r| {
        Arc::make_mut(&mut r.instructions).apply = vec![Action::Output(3)]
    })
    .unwrap();
    assert_eq!(wr.publish().removed.len(), 0);
    assert_eq!(run(&dp, &mut w, &frame(1, 2), 1, 0).ports(), vec![3]);
    assert_eq!(dp.read_rule(id).packets, 2);
    assert_eq!(dp.current().rule(id).unwrap().table(), 0);
    let id2 = wr.insert_rule(0, out_to(1)).unwrap();
    let p = wr.publish();
    assert_ne!(id2, id);
    assert_eq!(p.removed[0].stats.packets, 2);
    assert_eq!(wr.modify_rule(id, None, |_| {}), Err(WriteError::NoSuchRule));
    assert_eq!(wr.insert_rule(254, out_to(1)), Err(WriteError::BadTable));
    assert_eq!(wr.pending().table(0).unwrap().len(), 1);
}

#[test]
fn versions_increase_and_empty_publish_is_free() {
    let (dp, mut wr, _rx) = datapath(config(3));
    assert_eq!(dp.current().version(), 1);
    assert_eq!(wr.publish().version, 1);
    wr.insert_rule(0, out_to(2)).unwrap();
    assert_eq!(dp.current().version(), 1, "not visible before publish");
    assert_eq!(wr.publish().version, 2);
    assert_eq!(dp.current().version(), 2);
    assert_eq!(dp.current().table(0).unwrap().len(), 1);
}

#[test]
fn publish_waits_for_running_batches_but_not_for_idle_workers() {
    let (dp, mut wr, _rx) = datapath(config(3));
    let _idle = dp.worker(8);
    wr.insert_rule(0, out_to(2)).unwrap();
    wr.publish();
    let mut w = dp.worker(8);
    let batch = dp.batch(&mut w, 0);
    assert_eq!(batch.version(), 2);
    let done = Arc::new(AtomicBool::new(false));
    let t = {
        let done = done.clone();
        std::thread::spawn(move || {
            wr.insert_rule(0, out_to(3)).unwrap();
            let v = wr.publish().version;
            done.store(true, Ordering::SeqCst);
            v
        })
    };
    std::thread::sleep(Duration::from_millis(50));
    assert!(!done.load(Ordering::SeqCst), "publish returned while a batch ran on the old version");
    let mut out = Outputs::new();
    let mut batch = batch;
    batch.process(Packet::from_slice(&frame(1, 2)), 1, &mut out);
    assert_eq!(out.ports(), vec![2], "a running batch keeps its version");
    drop(batch);
    assert_eq!(t.join().unwrap(), 3);
    assert_eq!(run(&dp, &mut w, &frame(1, 2), 1, 0).ports(), vec![3]);
}

#[test]
fn every_packet_after_publish_sees_the_new_rules() {
    let (dp, mut wr, _rx) = datapath(config(4));
    wr.insert_rule(0, out_to(2)).unwrap();
    wr.publish();
    let published = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let after = Arc::new(AtomicU64::new(0));
    let fwd = {
        let (dp, published, stop, after) =
            (dp.clone(), published.clone(), stop.clone(), after.clone());
        std::thread::spawn(move || {
            let mut w = dp.worker(64);
            let deadline = Instant::now() + Duration::from_secs(20);
            let mut n = 0u64;
            while !stop.load(Ordering::SeqCst) && Instant::now() < deadline {
                let was_published = published.load(Ordering::SeqCst);
                let mut out = Outputs::new();
                let mut b = dp.batch(&mut w, 0);
                for i in 0..32 {
                    b.process(Packet::from_slice(&frame(1, (n + i) % 5)), 1, &mut out);
                }
                drop(b);
                n += 32;
                if was_published {
                    assert!(out.ports().iter().all(|&p| p == 3), "old rule after publish");
                    after.fetch_add(1, Ordering::SeqCst);
                }
            }
        })
    };
    std::thread::sleep(Duration::from_millis(20));
    // A burst of changes to other tables, then the change that matters.
    for i in 0..2000u32 {
        wr.insert_rule(1, Rule::new(on_port(i + 10), 5, ins())).unwrap();
    }
    wr.insert_rule(0, out_to(3)).unwrap();
    wr.publish();
    published.store(true, Ordering::SeqCst);
    let t0 = Instant::now();
    while after.load(Ordering::SeqCst) < 20 && t0.elapsed() < Duration::from_secs(10) {
        std::thread::yield_now();
    }
    stop.store(true, Ordering::SeqCst);
    fwd.join().unwrap();
    assert!(after.load(Ordering::SeqCst) >= 20);
}

/// While a writer thread inserts, removes and publishes without pause, a worker's every
/// packet (cache on, staged batches and single packets alike) goes where a plain linear
/// scan of the rules of the version it ran on says: the classifier, the cache and the
/// publication never show a rule set that was not published as a whole.
#[test]
fn lookups_equal_a_linear_scan_of_their_version_across_concurrent_updates() {
    const PORTS: u32 = 64;
    // Packets come in on a port no rule outputs to (an output to the input port drops).
    const IN: u32 = PORTS + 1;
    let (dp, mut wr, _rx) = datapath(config(IN));
    // The table-miss rule: every packet produces exactly one output.
    wr.insert_rule(0, output_rule(FlowMatch::ANY, 0, PORTS)).unwrap();
    wr.publish();
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut rng = 0x2545_f491_4f6c_dd1du64;
            let mut next = || {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                rng
            };
            // (match, priority) of the live rules; rule i outputs to port i + 1.
            let mut live: Vec<Option<(FlowMatch, u16)>> = vec![None; PORTS as usize - 1];
            let mut priority = 1u16;
            let start = Instant::now();
            let mut ops = 0u32;
            while !stop.load(Ordering::Relaxed)
                && ops < 200_000
                && start.elapsed() < Duration::from_secs(5)
            {
                let slot = (next() % live.len() as u64) as usize;
                match live[slot].take() {
                    Some((m, p)) => {
                        assert!(wr.remove_rule(0, &m, p).is_some());
                    }
                    None => {
                        // A few masks over the low bits of the MACs, so several subtables.
                        let bits = [0xfu128, 0xff, 0x3, 0xf0][(next() % 4) as usize];
                        let mut m = FlowMatch::ANY;
                        m.set(Field::EthDst, next() as u128 & 0xff, bits);
                        if next() % 2 == 0 {
                            m.set(Field::EthSrc, next() as u128 & 0xf, 0xf);
                        }
                        priority = priority % 60_000 + 1;
                        let port = slot as u32 + 1;
                        // Half take the fast path, half the action set.
                        let ins = if next() % 2 == 0 {
                            apply(vec![Action::Output(port)])
                        } else {
                            Instructions {
                                write_actions: Some(vec![Action::Output(port)]),
                                ..ins()
                            }
                        };
                        wr.insert_rule(0, Rule::new(m, priority, ins)).unwrap();
                        live[slot] = Some((m, priority));
                    }
                }
                ops += 1;
                if next() % 4 == 0 {
                    wr.publish();
                }
            }
            wr.publish();
            ops
        })
    };
    let mut w = dp.worker(256);
    let mut rng = 7u64;
    let mut checked = 0u32;
    let start = Instant::now();
    while checked < 20_000 && start.elapsed() < Duration::from_millis(1500) {
        let frames: Vec<Vec<u8>> = (0..32)
            .map(|_| {
                rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                frame((rng >> 40) & 0xff, (rng >> 20) & 0xf)
            })
            .collect();
        let mut b = dp.batch(&mut w, 1);
        // The reference: the best rule of table 0 in this batch's version, by a full
        // scan (priorities are distinct among live rules, so "best" is unambiguous).
        let expected: Vec<u32> = frames
            .iter()
            .map(|f| {
                let mut key = FlowKey::ZERO;
                crate::parse::parse(f, IN, &mut key);
                let best =
                    b.v.table(0)
                        .expect("table 0")
                        .rules()
                        .filter(|(m, _, _)| m.matches(&key))
                        .max_by_key(|(_, p, _)| *p)
                        .map(|(_, _, r)| r)
                        .expect("the table-miss rule matches");
                match (&best.instructions.apply[..], &best.instructions.write_actions) {
                    ([Action::Output(p)], _) => *p,
                    (_, Some(w)) => match w[..] {
                        [Action::Output(p)] => p,
                        _ => unreachable!("the test's rules output once"),
                    },
                    _ => unreachable!("the test's rules output once"),
                }
            })
            .collect();
        let mut out = Outputs::new();
        if checked.is_multiple_of(2) {
            let mut pkts: Vec<(Packet, u32)> =
                frames.iter().map(|f| (Packet::from_slice(f), IN)).collect();
            b.process_batch(&mut pkts, &mut out);
        } else {
            b.process_all(frames.iter().map(|f| (Packet::from_slice(f), IN)), &mut out);
        }
        drop(b);
        let got: Vec<u32> = out.tx.iter().map(|t| t.port).collect();
        assert_eq!(got, expected, "batch {checked}");
        checked += 1;
    }
    stop.store(true, Ordering::Relaxed);
    let ops = writer.join().unwrap();
    assert!(ops > 100 && checked > 100, "ops {ops}, batches {checked}");
}

#[test]
fn rollback_undoes_every_change_of_the_transaction() {
    use crate::group::{Bucket, Group, GroupKind};
    let (dp, mut wr, _rx) = datapath(config(4));
    let a = wr.insert_rule(0, out_to(2)).unwrap();
    let on_3 = wr.insert_rule(0, output_rule(on_port(3), 5, 4)).unwrap();
    wr.set_group(Group::new(1, GroupKind::Indirect, vec![Bucket::new(vec![Action::Output(2)])]))
        .unwrap();
    wr.publish();
    let mut w = dp.worker(8);
    let ports = |o: &Outputs| o.tx.iter().map(|t| t.port).collect::<Vec<_>>();
    assert_eq!(ports(&run(&dp, &mut w, &frame(1, 1), 1, 10)), [2]);

    wr.begin();
    // Replace the catch-all (new id), remove the port-3 rule, add one more, change the
    // group, add a meterless group, and change the settings.
    let replaced = wr.insert_rule(0, out_to(3)).unwrap();
    assert_ne!(replaced, a);
    assert!(wr.remove_rule(0, &on_port(3), 5).is_some());
    wr.insert_rule(1, out_to(4)).unwrap();
    wr.set_group(Group::new(1, GroupKind::Indirect, vec![Bucket::new(vec![Action::Output(3)])]))
        .unwrap();
    wr.set_group(Group::new(2, GroupKind::Indirect, vec![])).unwrap();
    wr.set_config(config(2));
    assert_eq!(wr.pending().rule(a).map(|r| r.id), None);
    wr.rollback();

    {
        let p = wr.pending();
        assert_eq!(p.rule(a).map(|r| r.id), Some(a));
        assert_eq!(p.rule(on_3).map(|r| r.priority), Some(5));
        assert!(p.rule(replaced).is_none());
        assert_eq!(p.table(1).map(|t| t.len()), Some(0));
        assert!(p.group(2).is_none());
        assert_eq!(p.config().ports.len(), 4);
    }
    let version = dp.current().version();
    let published = wr.publish();
    assert_eq!(published.version, version, "a rollback leaves nothing to publish");
    assert!(published.removed.is_empty(), "nothing the transaction removed is gone");
    assert_eq!(ports(&run(&dp, &mut w, &frame(1, 1), 1, 20)), [2]);
    assert_eq!(ports(&run(&dp, &mut w, &frame(1, 1), 3, 30)), [4]);
    assert_eq!(dp.read_rule(a).packets, 2, "the restored rule keeps counting");
    assert_eq!(dp.read_group(1).map(|(_, b)| b.len()), Some(1));

    // The slots the transaction took are free again once published.
    for i in 0..3 {
        wr.insert_rule(2, output_rule(on_port(i + 1), 1, 2)).unwrap();
    }
    wr.publish();
}

#[test]
fn publish_ends_a_transaction_keeping_its_changes() {
    let (_dp, mut wr, _rx) = datapath(config(3));
    wr.begin();
    let id = wr.insert_rule(0, out_to(2)).unwrap();
    wr.publish();
    wr.rollback();
    assert!(wr.pending().rule(id).is_some());
}

#[test]
fn rules_with_equal_instructions_share_one_copy() {
    let (dp, mut wr, _rx) = datapath(config(3));
    let ids: Vec<RuleId> = (0..4000u32)
        .map(|i| wr.insert_rule(0, output_rule(on_port(i), 1, 1 + i % 2)).unwrap())
        .collect();
    wr.publish();
    let v = dp.current();
    let ins = |id: RuleId| v.rule(id).unwrap().instructions.clone();
    assert!(Arc::ptr_eq(&ins(ids[0]), &ins(ids[2000])));
    assert!(Arc::ptr_eq(&ins(ids[1]), &ins(ids[3999])));
    assert!(!Arc::ptr_eq(&ins(ids[0]), &ins(ids[1])));
    assert_eq!(ins(ids[1]).apply, vec![Action::Output(2)]);
    drop(v);
    assert_eq!(wr.instructions.len(), 2);
    // A modify shares too, and lists no rule uses any more are swept once the set grows.
    let id = ids[0];
    wr.modify_rule(id, None, |r| {
        Arc::make_mut(&mut r.instructions).apply = vec![Action::Output(2)]
    })
    .unwrap();
    wr.publish();
    assert!(Arc::ptr_eq(&dp.current().rule(id).unwrap().instructions, &ins_of(&dp, ids[1])));
    for i in 0..3000u32 {
        let m = on_port(i).exact(Field::EthType, 0x0800);
        let id = wr.insert_rule(1, output_rule(m, 1, 100 + i)).unwrap();
        if i % 100 != 0 {
            let r = wr.remove_rule(1, &m, 1);
            assert_eq!(r.map(|r| r.id), Some(id));
        }
        wr.publish();
    }
    assert!(wr.instructions.len() < 2100, "unused lists were kept: {}", wr.instructions.len());
}

fn ins_of(dp: &Datapath, id: RuleId) -> Arc<Instructions> {
    dp.current().rule(id).unwrap().instructions.clone()
}

#[test]
fn clearing_the_only_table_in_use_frees_every_slot() {
    let (dp, mut wr, _rx) = datapath(config(3));
    let ids: Vec<RuleId> =
        (0..50u32).map(|i| wr.insert_rule(0, output_rule(on_port(i), 1, 2)).unwrap()).collect();
    wr.publish();
    let mut w = dp.worker(8);
    assert_eq!(run(&dp, &mut w, &frame(1, 2), 1, 7).ports(), vec![2]);
    assert_eq!(dp.read_rule(ids[1]).packets, 1);
    assert_eq!(wr.clear_table(0), 50);
    wr.publish();
    assert!(ids.iter().all(|&id| dp.current().rule(id).is_none()));
    assert!(run(&dp, &mut w, &frame(1, 2), 1, 7).tx.is_empty(), "table 0 misses");
    // Both copies were cleared, and the slots came back with zero counters.
    let again = wr.insert_rule(0, output_rule(on_port(1), 1, 3)).unwrap();
    wr.publish();
    assert!(ids.contains(&again));
    assert_eq!(dp.read_rule(again).packets, 0);
    assert_eq!(run(&dp, &mut w, &frame(1, 2), 1, 7).ports(), vec![3]);
    wr.insert_rule(0, output_rule(on_port(2), 1, 3)).unwrap();
    wr.publish();
    assert_eq!(dp.current().table_len(0), 2);
}

#[test]
fn rules_are_found_by_their_match_in_the_table_and_a_wrong_hint_costs_only_a_scan() {
    let (dp, mut wr, _rx) = datapath(config(3));
    let a = wr.insert_rule(0, output_rule(on_port(1), 5, 2)).unwrap();
    let b = wr.insert_rule(0, output_rule(on_port(2), 5, 1)).unwrap();
    wr.publish();
    let inserted = dp.current().rule(a).cloned().unwrap();
    assert_eq!(inserted.flow_match(), None, "the table holds the match");
    assert_eq!(wr.insert_rule(0, inserted), Err(WriteError::NoMatch));
    // The hint names rule b: rule a is found by a scan, and b is left alone.
    let set3 = |r: &mut Rule| Arc::make_mut(&mut r.instructions).apply = vec![Action::Output(3)];
    wr.modify_rule(a, Some(&on_port(2)), set3).unwrap();
    wr.publish();
    let mut w = dp.worker(0);
    assert_eq!(run(&dp, &mut w, &frame(1, 2), 1, 0).ports(), vec![3]);
    assert_eq!(run(&dp, &mut w, &frame(1, 2), 2, 0).ports(), vec![1]);
    assert_eq!(wr.remove_rule_id(0, b, 5, None).map(|r| r.id), Some(b));
    assert_eq!(wr.remove_rule_id(0, a, 5, Some(&on_port(1))).map(|r| r.id), Some(a));
    assert!(wr.remove_rule_id(0, a, 5, None).is_none());
    wr.publish();
    assert_eq!(dp.current().table_len(0), 0);
}
