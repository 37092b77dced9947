use crate::action::Action;
use crate::counters::Misc;
use crate::key::{Field, FlowKey, FlowMatch};
use crate::meter::{Band, BandCell, BandKind, BandPool, Meter, MeterUnit, KERNEL_BANDS};
use crate::mirror::{Changes, Hits, Ineligible};
use crate::pipeline::{Datapath, DatapathConfig, Instructions, PortInfo, Rule, Writer};

/// Ports 1..=3 in slots 0..3; with `pool`, kernel cells for two meters.
fn datapath(pool: bool) -> (Datapath, Writer) {
    let cfg = DatapathConfig {
        ports: (1..=3).map(|i| PortInfo::new(i, (i - 1) as u16)).collect(),
        ..DatapathConfig::default()
    };
    let (dp, wr, _rx) = Datapath::new(cfg, 16);
    if pool {
        let cells: &'static [BandCell] =
            Box::leak((0..2 * KERNEL_BANDS).map(|_| BandCell::default()).collect());
        assert!(dp.set_band_cells(BandPool::new(cells, 0)));
    }
    (dp, wr)
}

fn udp_key() -> FlowKey {
    let mut k = FlowKey::ZERO;
    k.set(Field::InPort, 1);
    k.set(Field::EthDst, 0x0200_0000_0002);
    k.set(Field::EthSrc, 0x0200_0000_0001);
    k.set(Field::EthType, 0x0800);
    k.set(Field::IpProto, 17);
    k.set(Field::IpTtl, 64);
    k.set(Field::Ipv4Src, 0x0a00_0001);
    k.set(Field::Ipv4Dst, 0x0a00_0002);
    k.set(Field::TpSrc, 1000);
    k.set(Field::TpDst, 2000);
    k
}

fn band(kind: BandKind) -> Band {
    Band {
        kind,
        rate: 10,
        burst_size: 0,
    }
}

fn rule(m: FlowMatch, meter: Option<u32>, apply: Vec<Action>, goto: Option<u8>) -> Rule {
    Rule::new(
        m,
        1,
        Instructions {
            apply,
            goto_table: goto,
            meter,
            ..Instructions::default()
        },
    )
}

#[test]
fn a_metered_flow_is_copied_with_its_meter_when_the_meter_has_kernel_cells() {
    let (dp, mut wr) = datapath(true);
    wr.set_meter(Meter::new(
        1,
        MeterUnit::Pktps,
        false,
        vec![band(BandKind::Drop)],
    ))
    .unwrap();
    wr.insert_rule(
        0,
        rule(FlowMatch::ANY, Some(1), vec![Action::Output(2)], None),
    )
    .unwrap();
    wr.publish();
    let slot = dp.current().meter(1).unwrap().kernel_slot();
    assert!(slot.is_some());
    // Even with the bucket empty the decision is the path of what the meter passes.
    let m = dp.current().meter(1).unwrap().clone();
    while m.apply(64, 0) == crate::meter::MeterOutcome::Pass {}
    let d = dp.decision(&udp_key(), 0).unwrap();
    assert_eq!(d.output.as_ref().unwrap().0, vec![2]);
    let mc = d.credit.meter.unwrap();
    assert_eq!(
        (Some(mc.slot), mc.bands, mc.step, mc.remark),
        (slot, 1, 0, false)
    );
    // A change of the meter changes the decision.
    let changes = Changes {
        meters: vec![1],
        ..Changes::default()
    };
    assert!(d.credit.affected_by(&udp_key(), &changes));
    assert!(!d.credit.affected_by(
        &udp_key(),
        &Changes {
            meters: vec![2],
            ..Changes::default()
        }
    ));
}

#[test]
fn a_meter_without_kernel_cells_keeps_its_flows_in_user_space_and_says_why() {
    let (dp, mut wr) = datapath(false);
    wr.set_meter(Meter::new(
        1,
        MeterUnit::Pktps,
        false,
        vec![band(BandKind::Drop)],
    ))
    .unwrap();
    wr.insert_rule(
        0,
        rule(FlowMatch::ANY, Some(1), vec![Action::Output(2)], None),
    )
    .unwrap();
    wr.publish();
    let why = dp.decision(&udp_key(), 0).unwrap_err();
    assert!(matches!(why, Ineligible::Meter(_)));
    assert!(why.to_string().contains("no cells shared"), "{why}");
}

#[test]
fn a_frame_sent_before_its_meter_stays_in_user_space() {
    let (dp, mut wr) = datapath(true);
    wr.set_meter(Meter::new(
        1,
        MeterUnit::Pktps,
        false,
        vec![band(BandKind::Drop)],
    ))
    .unwrap();
    wr.insert_rule(
        0,
        rule(FlowMatch::ANY, None, vec![Action::Output(3)], Some(1)),
    )
    .unwrap();
    wr.insert_rule(
        1,
        rule(FlowMatch::ANY, Some(1), vec![Action::Output(2)], None),
    )
    .unwrap();
    wr.publish();
    let why = dp.decision(&udp_key(), 0).unwrap_err();
    assert!(why.to_string().contains("sent before its meter"), "{why}");
}

#[test]
fn a_remark_is_copied_unless_a_later_table_reads_the_dscp() {
    let remark = BandKind::DscpRemark { prec_level: 1 };
    for (reads, ok) in [(false, true), (true, false)] {
        let (dp, mut wr) = datapath(true);
        wr.set_meter(Meter::new(1, MeterUnit::Pktps, false, vec![band(remark)]))
            .unwrap();
        wr.insert_rule(0, rule(FlowMatch::ANY, Some(1), vec![], Some(1)))
            .unwrap();
        let m = if reads {
            FlowMatch::ANY.exact(Field::IpDscp, 0)
        } else {
            FlowMatch::ANY
        };
        wr.insert_rule(1, rule(m, None, vec![Action::Output(2)], None))
            .unwrap();
        wr.publish();
        let d = dp.decision(&udp_key(), 0);
        assert_eq!(d.is_ok(), ok, "{d:?}");
        if let Ok(d) = d {
            assert!(d.credit.meter.unwrap().remark);
        } else {
            let why = d.unwrap_err().to_string();
            assert!(why.contains("table 1 reads after it"), "{why}");
        }
    }
}

#[test]
fn frames_a_kernel_meter_dropped_count_up_to_the_meter_only() {
    let (dp, mut wr) = datapath(true);
    wr.set_meter(Meter::new(
        1,
        MeterUnit::Pktps,
        false,
        vec![band(BandKind::Drop)],
    ))
    .unwrap();
    let first = wr
        .insert_rule(0, rule(FlowMatch::ANY, None, vec![], Some(1)))
        .unwrap();
    let metered = wr
        .insert_rule(1, rule(FlowMatch::ANY, Some(1), vec![], Some(2)))
        .unwrap();
    let last = wr
        .insert_rule(2, rule(FlowMatch::ANY, None, vec![Action::Output(2)], None))
        .unwrap();
    wr.publish();
    let d = dp.decision(&udp_key(), 0).unwrap();
    assert_eq!(d.credit.meter.unwrap().step, 1);
    let hits = Hits {
        packets: 10,
        bytes: 1000,
        dropped: 4,
        dropped_bytes: 400,
    };
    dp.kernel_counters().credit(&d.credit, hits, 5);
    let counts = |id| {
        let r = dp.read_rule(id);
        (r.packets, r.bytes)
    };
    assert_eq!(counts(first), (10, 1000));
    assert_eq!(counts(metered), (10, 1000));
    assert_eq!(counts(last), (6, 600));
    assert_eq!(dp.read_table(2).lookups, 6);
    let (meter, _) = dp.read_meter(1).unwrap();
    assert_eq!((meter.packets, meter.bytes), (10, 1000));
    assert_eq!(dp.read_misc(Misc::MeterDrops), 4);
    assert_eq!(dp.read_port(0).rx_packets, 10);
    let out = dp.read_port(1);
    assert_eq!((out.tx_packets, out.tx_bytes), (6, 600));
}
