//! Meters in the map sync against the loaded program (needs root): a metered decision
//! mirrored with its meter, the program and the workers drawing on one bucket per band
//! (BPF_PROG_TEST_RUN frames and the meter in user space), drops and remarks done as a
//! worker does them, the statistics credited back, and a meter-mod taking the entries
//! through the meter out before its publish returns.

mod common;

use std::sync::Arc;
use std::time::Instant;

use datapath::action::Action;
use datapath::counters::Misc;
use datapath::key::{Field, FlowMatch};
use datapath::meter::{Band, BandKind, Meter, MeterOutcome, MeterUnit};
use datapath::pipeline::{Datapath, Instructions, Rule, Writer};
use xdp::tier::KernelTier;
use xdp::FastPath;

use common::{in_fresh_netns, key_of};

const XDP_DROP: u32 = 1;
const XDP_PASS: u32 = 2;
const XDP_REDIRECT: u32 = 4;

fn metered(meter: u32) -> Rule {
    Rule::new(
        FlowMatch::ANY.exact(Field::InPort, 1),
        10,
        Instructions {
            apply: vec![Action::Output(2)],
            meter: Some(meter),
            ..Instructions::default()
        },
    )
}

/// 10 packets/s with a burst of `burst`, doing `kind`.
fn pktps(id: u32, kind: BandKind, burst: u32) -> Meter {
    let band = Band { kind, rate: 10, burst_size: burst };
    Meter::new(id, MeterUnit::Pktps, true, vec![band])
}

/// A UDP frame whose TOS is `tos` (IP checksum fixed).
fn frame_with_tos(tos: u8) -> Vec<u8> {
    let mut f = common::udp_frame(1000);
    f[15] = tos;
    f[24..26].copy_from_slice(&[0, 0]);
    let c = common::csum(&f[14..34]);
    f[24..26].copy_from_slice(&c.to_be_bytes());
    f
}

/// Port 1 the loopback (frames are run "arriving" there), port 2 a veth; `body` gets
/// the program, the datapath, its writer, the tier and the workers' clock origin.
fn bed(
    body: impl FnOnce(&Arc<FastPath>, &Datapath, &mut Writer, &Arc<KernelTier>, Instant)
        + Send
        + 'static,
) {
    in_fresh_netns(|| {
        let fp = Arc::new(FastPath::load(256, 4).expect("load"));
        let attached = common::attach_ports(&fp, "tm", "tn", 2);
        let (dp, mut wr, _rx) = common::datapath(2);
        let started = Instant::now();
        let tier = common::mirrored(&fp, &dp, started);
        body(&fp, &dp, &mut wr, &tier, started);
        drop(attached);
    });
}

#[test]
#[ignore = "needs root: network namespaces"]
fn the_program_and_the_workers_draw_on_one_bucket() {
    bed(|fp, dp, wr, tier, started| {
        wr.set_meter(pktps(1, BandKind::Drop, 5)).unwrap();
        wr.insert_rule(0, metered(1)).unwrap();
        wr.publish();
        let frame = common::udp_frame(1000);
        tier.consider(&key_of(&frame));
        let entries = fp.entries().unwrap();
        assert_eq!(entries.len(), 1, "{entries:?}");
        assert_ne!(entries[0].1.meter, 0, "the entry runs the meter");

        // A full bucket of 5 at 10/s: the burst passes, the rest is dropped (a sixth
        // token may come if the runs take 100 ms).
        let rcs: Vec<u32> = (0..12).map(|_| fp.test_run(&frame, 1, 0).unwrap().0).collect();
        let passed = rcs.iter().filter(|&&rc| rc == XDP_REDIRECT).count();
        let dropped = rcs.iter().filter(|&&rc| rc == XDP_DROP).count();
        assert_eq!(passed + dropped, 12, "{rcs:?}");
        assert!((5..=6).contains(&passed), "{rcs:?}");

        // The workers' meter finds the bucket the program emptied.
        let m = dp.current().meter(1).unwrap().clone();
        let now = started.elapsed().as_nanos() as u64;
        assert_eq!(m.apply(60, now), MeterOutcome::Drop { band: 0 });

        // Statistics as a worker counts them: every frame through the meter and its
        // rule, the dropped ones in the band and no further.
        tier.harvest();
        let (meter, bands) = dp.read_meter(1).unwrap();
        assert_eq!((meter.packets, meter.bytes), (12, 12 * 60));
        assert_eq!(bands[0].packets, dropped as u64);
        assert_eq!(dp.read_misc(Misc::MeterDrops), dropped as u64);
        assert_eq!(dp.read_port(1).tx_packets, passed as u64);
        assert_eq!(dp.read_port(0).rx_packets, 12);
    });
}

#[test]
#[ignore = "needs root: network namespaces"]
fn a_remark_band_remarks_in_the_kernel_as_a_worker_does() {
    bed(|fp, dp, wr, tier, _| {
        let remark = BandKind::DscpRemark { prec_level: 1 };
        wr.set_meter(pktps(1, remark, 1)).unwrap();
        wr.insert_rule(0, metered(1)).unwrap();
        wr.publish();
        // AF11 (DSCP 10), ECN 1.
        let frame = frame_with_tos(10 << 2 | 1);
        tier.consider(&key_of(&frame));
        assert_eq!(fp.entries().unwrap().len(), 1);
        let (rc, first) = fp.test_run(&frame, 1, 0).unwrap();
        assert_eq!((rc, &first), (XDP_REDIRECT, &frame), "the burst passes as it is");
        let (rc, second) = fp.test_run(&frame, 1, 0).unwrap();
        assert_eq!(rc, XDP_REDIRECT);
        // What a worker sends with the bucket empty (the tracer reads the same bucket).
        let t = dp.trace(&frame, 1, 0);
        let want = t.outputs.tx[0].packet.data().to_vec();
        assert_eq!(want[15], 12 << 2 | 1, "AF12, ECN kept");
        assert_eq!(second, want, "the kernel's remark, checksum included");
        tier.harvest();
        let (meter, bands) = dp.read_meter(1).unwrap();
        assert_eq!((meter.packets, bands[0].packets), (2, 1));
        assert_eq!(dp.read_port(1).tx_packets, 2);
    });
}

#[test]
#[ignore = "needs root: network namespaces"]
fn a_meter_mod_takes_its_entries_out_before_its_publish_returns() {
    bed(|fp, dp, wr, tier, _| {
        wr.set_meter(pktps(1, BandKind::Drop, 100)).unwrap();
        wr.set_meter(pktps(2, BandKind::Drop, 100)).unwrap();
        wr.insert_rule(0, metered(1)).unwrap();
        wr.publish();
        let frame = common::udp_frame(1000);
        tier.consider(&key_of(&frame));
        assert_eq!(fp.test_run(&frame, 1, 0).unwrap().0, XDP_REDIRECT);
        // Another meter changes: the entry stays.
        wr.set_meter(pktps(2, BandKind::Drop, 1)).unwrap();
        wr.publish();
        assert_eq!(fp.test_run(&frame, 1, 0).unwrap().0, XDP_REDIRECT);
        // Its meter changes: no frame is metered by the old bucket after the publish.
        wr.set_meter(pktps(1, BandKind::Drop, 1)).unwrap();
        wr.publish();
        assert_eq!(fp.test_run(&frame, 1, 0).unwrap().0, XDP_PASS);
        assert_eq!(dp.read_meter(1).unwrap().0.packets, 0, "new counters");
        // Mirrored again, it meters with the new meter's cells: a burst of one.
        tier.consider(&key_of(&frame));
        let rcs: Vec<u32> = (0..3).map(|_| fp.test_run(&frame, 1, 0).unwrap().0).collect();
        assert_eq!(rcs, [XDP_REDIRECT, XDP_DROP, XDP_DROP]);
    });
}
