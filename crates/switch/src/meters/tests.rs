//! Tests of the meter table against a real datapath: meter-mods go through the table and
//! its writer, frames run through `Datapath::process` after a publish, with injected
//! times.

use super::*;
use crate::testing::{install_flow, send_frame, small_datapath, SEC};
use datapath::pipeline::WorkerState;
use openflow::text::parse_meter_mod;
use openflow::v13::meter_mod::{METER_FLAGS_ALL, OFPM_MAX};
use std::sync::Arc;

struct Rig {
    table: MeterTable,
    dp: Datapath,
    w: Writer,
    worker: WorkerState,
}

fn mm(s: &str, command: MeterModCommand) -> MeterMod {
    parse_meter_mod(s, command).unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn add(s: &str) -> MeterMod {
    mm(s, MeterModCommand::Add)
}

fn modify(s: &str) -> MeterMod {
    mm(s, MeterModCommand::Modify)
}

fn del(id: u32) -> MeterMod {
    MeterMod { command: MeterModCommand::Delete, flags: 0, meter_id: id, bands: Vec::new() }
}

/// A pktps meter `id` with one drop band of `rate` and burst `burst`.
fn pktps(id: u32, rate: u32, burst: u32) -> MeterMod {
    add(&format!("meter={id},pktps,burst,stats,bands=type=drop,rate={rate},burst_size={burst}"))
}

impl Rig {
    fn new() -> Rig {
        let (dp, w, worker) = small_datapath();
        Rig { table: MeterTable::new(), dp, w, worker }
    }

    fn apply(&mut self, m: &MeterMod, now: u64) -> Result<MeterChange, OfpError> {
        self.table.apply(m, &mut self.w, now)
    }

    fn ok(&mut self, m: &MeterMod, now: u64) -> MeterChange {
        self.apply(m, now).unwrap_or_else(|e| panic!("{m:?}: refused: {e}"))
    }

    /// Applies `m`, expects it refused with `kind`, and checks that nothing changed: the
    /// table's configuration, and the datapath (nothing to publish, same meters).
    fn refused(&mut self, m: &MeterMod, kind: ErrorKind) {
        let before = self.table.config(OFPM_ALL);
        let meters_before = self.dp_meters(m.meter_id);
        let v = self.w.publish().version;
        let e = self.apply(m, 0).expect_err("refused");
        assert_eq!(e.kind, kind, "{m:?}: {e}");
        assert_eq!(self.table.config(OFPM_ALL), before, "the table did not change");
        assert_eq!(self.w.publish().version, v, "the datapath did not change");
        let after = self.dp_meters(m.meter_id);
        assert_eq!(after.len(), meters_before.len());
        for ((a, x), (b, y)) in after.iter().zip(&meters_before) {
            assert_eq!(a, b);
            match (x, y) {
                (Some(x), Some(y)) => assert!(Arc::ptr_eq(x, y), "meter {a} replaced"),
                (None, None) => {}
                _ => panic!("meter {a} appeared or vanished"),
            }
        }
    }

    /// The datapath's pending meters of the table's ids and `also`.
    fn dp_meters(&self, also: u32) -> Vec<(u32, Option<Arc<Meter>>)> {
        let p = self.w.pending();
        self.table.ids().chain([also]).map(|id| (id, p.meter(id).cloned())).collect()
    }

    fn flow(&mut self, s: &str) {
        install_flow(&mut self.w, s);
    }

    /// Sends `n` frames in on port 1 at `now`; returns how many came out.
    fn send(&mut self, n: usize, now: u64) -> usize {
        let mut passed = 0;
        for _ in 0..n {
            passed += send_frame(&self.dp, &mut self.worker, 1, now).len();
        }
        passed
    }

    fn stats(&self, id: u32, now: u64) -> MeterStats {
        let s = self.table.stats(&self.dp, id, now, |_| 1);
        assert_eq!(s.len(), 1, "{s:?}");
        s.into_iter().next().expect("one")
    }
}

#[test]
fn add_modify_delete_follow_in_the_datapath() {
    let mut r = Rig::new();
    let m = pktps(1, 10, 5);
    assert_eq!(r.ok(&m, SEC), MeterChange::default());
    assert!(r.table.contains(1));
    assert_eq!(
        r.table.config(1),
        vec![MeterConfig { flags: m.flags, meter_id: 1, bands: m.bands.clone() }]
    );
    r.flow("in_port=1,actions=meter:1,output:2");
    r.w.publish();
    let t = 100 * SEC;
    assert_eq!(r.send(8, t), 5, "the burst passes, the rest is dropped");

    let s = r.stats(1, 3 * SEC + 7);
    assert_eq!(s.flow_count, 1);
    assert_eq!((s.packet_in_count, s.byte_in_count), (8, 8 * 64));
    assert_eq!((s.duration_sec, s.duration_nsec), (2, 7));
    assert_eq!(
        s.band_stats,
        vec![MeterBandStats { packet_band_count: 3, byte_band_count: 3 * 64 }]
    );

    // A modify replaces flags and bands; counters and duration restart, buckets start
    // full.
    let m2 = add("meter=1,pktps,burst,bands=type=drop,rate=10,burst_size=2,type=dscp_remark,rate=20,burst_size=4,prec_level=1");
    assert_eq!(
        r.ok(&MeterMod { command: MeterModCommand::Modify, ..m2.clone() }, 4 * SEC),
        MeterChange::default()
    );
    assert_eq!(r.table.config(OFPM_ALL)[0].bands, m2.bands);
    assert_eq!(r.table.config(OFPM_ALL)[0].flags, m2.flags);
    r.w.publish();
    let s = r.stats(1, 5 * SEC);
    assert_eq!((s.packet_in_count, s.duration_sec), (0, 1));
    assert_eq!(s.band_stats, vec![MeterBandStats::default(); 2]);
    assert_eq!(r.send(4, t), 2, "the new burst of 2, from a full bucket");
    let s = r.stats(1, 5 * SEC);
    assert_eq!(s.packet_in_count, 4);
    assert_eq!(s.band_stats.iter().map(|b| b.packet_band_count).collect::<Vec<_>>(), vec![2, 0]);

    assert_eq!(r.ok(&del(1), 6 * SEC).deleted, vec![1]);
    assert!(!r.table.contains(1));
    assert!(r.table.config(OFPM_ALL).is_empty());
    assert!(r.table.stats(&r.dp, 1, 0, |_| 0).is_empty());
    r.w.publish();
    assert!(r.dp.current().meter(1).is_none());
}

#[test]
fn add_of_existing_and_modify_of_absent_are_refused() {
    let mut r = Rig::new();
    r.ok(&pktps(1, 10, 5), 0);
    r.refused(&pktps(1, 20, 5), ErrorKind::METER_MOD_FAILED_METER_EXISTS);
    r.refused(
        &modify("meter=2,kbps,bands=type=drop,rate=100"),
        ErrorKind::METER_MOD_FAILED_UNKNOWN_METER,
    );
}

#[test]
fn delete_of_absent_is_not_an_error_and_all_deletes_everything() {
    let mut r = Rig::new();
    assert_eq!(r.ok(&del(3), 0), MeterChange::default());
    assert_eq!(r.ok(&del(OFPM_ALL), 0), MeterChange::default());
    for id in [9, 1, 4] {
        r.ok(&pktps(id, 10, 5), 0);
    }
    let v = r.w.publish().version;
    assert_eq!(r.ok(&del(3), 0), MeterChange::default());
    assert_eq!(r.w.publish().version, v, "nothing changed");
    assert_eq!(r.ok(&del(OFPM_ALL), 0).deleted, vec![1, 4, 9]);
    assert!(r.table.is_empty());
    r.w.publish();
    for id in [1, 4, 9] {
        assert!(r.dp.current().meter(id).is_none());
    }
}

#[test]
fn id_errors() {
    let mut r = Rig::new();
    let m = pktps(1, 10, 5);
    for id in [0, OFPM_MAX + 1, OFPM_SLOWPATH, OFPM_CONTROLLER, OFPM_ALL] {
        r.refused(
            &MeterMod { meter_id: id, ..m.clone() },
            ErrorKind::METER_MOD_FAILED_INVALID_METER,
        );
    }
    for id in [0, OFPM_MAX + 1, OFPM_SLOWPATH, OFPM_CONTROLLER] {
        r.refused(&del(id), ErrorKind::METER_MOD_FAILED_INVALID_METER);
    }
    r.ok(&MeterMod { meter_id: OFPM_MAX, ..m }, 0);
}

#[test]
fn flag_rate_and_band_errors() {
    let mut r = Rig::new();
    let m = pktps(1, 10, 5);
    r.refused(
        &MeterMod { flags: meter_flags::KBPS | meter_flags::PKTPS, ..m.clone() },
        ErrorKind::METER_MOD_FAILED_BAD_FLAGS,
    );
    r.refused(
        &MeterMod { flags: METER_FLAGS_ALL + 1, ..m.clone() },
        ErrorKind::METER_MOD_FAILED_BAD_FLAGS,
    );
    r.refused(
        &MeterMod { command: MeterModCommand::Unknown(5), ..m.clone() },
        ErrorKind::METER_MOD_FAILED_BAD_COMMAND,
    );
    r.refused(
        &MeterMod { bands: vec![MeterBand::Drop { rate: 0, burst_size: 0 }], ..m.clone() },
        ErrorKind::METER_MOD_FAILED_BAD_RATE,
    );
    r.refused(
        &MeterMod {
            bands: vec![MeterBand::Experimenter {
                rate: 10,
                burst_size: 0,
                experimenter: 0x2320,
                data: Vec::new(),
            }],
            ..m.clone()
        },
        ErrorKind::METER_MOD_FAILED_BAD_BAND,
    );
    // A DSCP remark band of precedence level 0, which would change nothing.
    let remark_0 = vec![MeterBand::DscpRemark { rate: 10, burst_size: 0, prec_level: 0 }];
    r.refused(
        &MeterMod { bands: remark_0.clone(), ..m.clone() },
        ErrorKind::METER_MOD_FAILED_BAD_BAND_VALUE,
    );
    r.refused(
        &MeterMod {
            bands: vec![MeterBand::Drop { rate: 10, burst_size: 0 }; usize::from(MAX_BANDS) + 1],
            ..m.clone()
        },
        ErrorKind::METER_MOD_FAILED_OUT_OF_BANDS,
    );
    // The same errors on a modify leave the existing meter as it was.
    r.ok(&m, 0);
    r.refused(
        &MeterMod { command: MeterModCommand::Modify, bands: remark_0, ..m.clone() },
        ErrorKind::METER_MOD_FAILED_BAD_BAND_VALUE,
    );
    // Burst sizes without OFPMF_BURST are ignored, not refused; no bands is a meter
    // that never acts.
    r.ok(&add("meter=2,kbps,bands=type=drop,rate=100,burst_size=7"), 0);
    r.ok(&add("meter=3,kbps"), 0);
}

#[test]
fn flags_reach_the_datapath() {
    let mut r = Rig::new();
    r.ok(&add("meter=1,kbps,bands=type=dscp_remark,rate=1000,prec_level=2"), 0);
    r.ok(&MeterMod { flags: 0, ..add("meter=2,kbps,bands=type=drop,rate=1000") }, 0);
    r.ok(&pktps(3, 10, 5), 0);
    let p = r.w.pending();
    let m1 = p.meter(1).expect("meter 1");
    assert_eq!((m1.unit, m1.burst), (MeterUnit::Kbps, false));
    assert_eq!(
        m1.bands,
        vec![Band { kind: BandKind::DscpRemark { prec_level: 2 }, rate: 1000, burst_size: 0 }]
    );
    assert_eq!(p.meter(2).expect("meter 2").unit, MeterUnit::Kbps, "no unit flag measures kbit/s");
    let m3 = p.meter(3).expect("meter 3");
    assert_eq!((m3.unit, m3.burst), (MeterUnit::Pktps, true));
    drop(p);
    assert_eq!(r.table.config(2)[0].flags, 0, "flags are reported as sent");
}

#[test]
fn stats_before_a_publish_read_zero() {
    let mut r = Rig::new();
    r.ok(&pktps(1, 10, 5), 0);
    let s = r.stats(1, 0);
    assert_eq!(s.packet_in_count, 0);
    assert_eq!(s.band_stats, vec![MeterBandStats::default()]);
}

#[test]
fn out_of_meters() {
    let mut r = Rig::new();
    for id in 1..=MAX_METERS {
        r.ok(
            &MeterMod {
                command: MeterModCommand::Add,
                flags: meter_flags::KBPS,
                meter_id: id,
                bands: Vec::new(),
            },
            0,
        );
    }
    r.refused(&pktps(MAX_METERS + 1, 10, 5), ErrorKind::METER_MOD_FAILED_OUT_OF_METERS);
    // A modify needs no new meter.
    r.ok(&MeterMod { command: MeterModCommand::Modify, ..pktps(1, 10, 5) }, 0);
    assert_eq!(r.ok(&del(OFPM_ALL), 0).deleted.len(), MAX_METERS as usize);
}

#[test]
fn features_say_what_the_table_accepts() {
    let f = MeterTable::features();
    assert_eq!(f.max_meter, MAX_METERS);
    assert_eq!(f.band_types, 0b110, "drop (1) and dscp remark (2)");
    assert_eq!(f.capabilities, u32::from(METER_FLAGS_ALL));
    assert_eq!(f.max_bands, MAX_BANDS);
    assert_eq!(f.max_color, 0);
}

/// The meter-mods of os-ken's OpenFlow 1.3 switch tests (`of13/meter/*.json`, with
/// os-ken's defaults filled in: flags `OFPMF_KBPS` unless the case says `OFPMF_PKTPS`,
/// burst 0), after its clean-up delete of `OFPM_ALL` with flags 0: all accepted, and
/// configured back exactly as sent (the tester compares flags, id and bands).
#[test]
fn os_ken_switch_test_meters_are_accepted_and_echoed() {
    let mut bands = Vec::new();
    for rate in [1000, 10_000, 100_000] {
        bands.push((meter_flags::KBPS, rate));
    }
    for rate in [100, 1000, 10_000] {
        bands.push((meter_flags::PKTPS, rate));
    }
    for (flags, rate) in bands {
        for band in [
            MeterBand::Drop { rate, burst_size: 0 },
            MeterBand::DscpRemark { rate, burst_size: 0, prec_level: 1 },
        ] {
            let mut r = Rig::new();
            assert_eq!(r.ok(&del(OFPM_ALL), 0), MeterChange::default());
            let m =
                MeterMod { command: MeterModCommand::Add, flags, meter_id: 1, bands: vec![band] };
            r.ok(&m, 0);
            assert_eq!(
                r.table.config(OFPM_ALL),
                vec![MeterConfig { flags, meter_id: 1, bands: m.bands.clone() }]
            );
        }
    }
}
