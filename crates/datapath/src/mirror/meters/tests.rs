use crate::action::Action;
use crate::counters::Misc;
use crate::key::{Field, FlowMatch};
use crate::meter::{Band, BandCell, BandKind, BandPool, Meter, MeterUnit, KERNEL_BANDS};
use crate::mirror::tests::udp_key;
use crate::mirror::{Changes, Hits, Ineligible};
use crate::pipeline::{Datapath, Instructions, Rule, RuleId};

/// The mirror tests' datapath with meter 1 (one band of `kind`) and `rules` (table,
/// rule), published; with `pool`, kernel cells for two meters lent to it first.
fn with_meter(pool: bool, kind: BandKind, rules: Vec<(u8, Rule)>) -> (Datapath, Vec<RuleId>) {
    let (dp, mut wr) = crate::mirror::tests::datapath();
    if pool {
        let cells: &'static [BandCell] =
            Box::leak((0..2 * KERNEL_BANDS).map(|_| BandCell::default()).collect());
        assert!(dp.set_band_cells(BandPool::new(cells, 0)));
    }
    let band = Band { kind, rate: 10, burst_size: 0 };
    wr.set_meter(Meter::new(1, MeterUnit::Pktps, false, vec![band])).unwrap();
    let ids = rules.into_iter().map(|(t, r)| wr.insert_rule(t, r).unwrap()).collect();
    wr.publish();
    (dp, ids)
}

fn rule(m: FlowMatch, meter: Option<u32>, apply: Vec<Action>, goto: Option<u8>) -> Rule {
    Rule::new(m, 1, Instructions { apply, goto_table: goto, meter, ..Instructions::default() })
}

/// Table 0 meters with meter 1 and sends to port 2.
fn metered_output() -> Vec<(u8, Rule)> {
    vec![(0, rule(FlowMatch::ANY, Some(1), vec![Action::Output(2)], None))]
}

#[test]
fn a_metered_flow_is_copied_with_its_meter_when_the_meter_has_kernel_cells() {
    let (dp, _) = with_meter(true, BandKind::Drop, metered_output());
    let slot = dp.current().meter(1).unwrap().kernel_slot();
    assert!(slot.is_some());
    // Even with the bucket empty the decision is the path of what the meter passes.
    let m = dp.current().meter(1).unwrap().clone();
    while m.apply(64, 0) == crate::meter::MeterOutcome::Pass {}
    let d = dp.decision(&udp_key(), 0).unwrap();
    assert_eq!(d.output.as_ref().unwrap().0, vec![2]);
    let mc = d.credit.meter.unwrap();
    assert_eq!((Some(mc.slot), mc.bands, mc.step, mc.remark), (slot, 1, 0, false));
    // A change of the meter changes the decision.
    let changes = |id| Changes { meters: vec![id], ..Changes::default() };
    assert!(d.credit.affected_by(&udp_key(), &changes(1)));
    assert!(!d.credit.affected_by(&udp_key(), &changes(2)));
}

#[test]
fn a_meter_without_kernel_cells_keeps_its_flows_in_user_space_and_says_why() {
    let (dp, _) = with_meter(false, BandKind::Drop, metered_output());
    let why = dp.decision(&udp_key(), 0).unwrap_err();
    assert!(matches!(why, Ineligible::Meter(_)));
    assert!(why.to_string().contains("no cells shared"), "{why}");
}

#[test]
fn a_frame_sent_before_its_meter_stays_in_user_space() {
    let (dp, _) = with_meter(
        true,
        BandKind::Drop,
        vec![
            (0, rule(FlowMatch::ANY, None, vec![Action::Output(3)], Some(1))),
            (1, rule(FlowMatch::ANY, Some(1), vec![Action::Output(2)], None)),
        ],
    );
    let why = dp.decision(&udp_key(), 0).unwrap_err();
    assert!(why.to_string().contains("sent before its meter"), "{why}");
}

#[test]
fn a_remark_is_copied_unless_a_later_table_reads_the_dscp() {
    let remark = BandKind::DscpRemark { prec_level: 1 };
    for (reads, ok) in [(false, true), (true, false)] {
        let m = if reads { FlowMatch::ANY.exact(Field::IpDscp, 0) } else { FlowMatch::ANY };
        let (dp, _) = with_meter(
            true,
            remark,
            vec![
                (0, rule(FlowMatch::ANY, Some(1), vec![], Some(1))),
                (1, rule(m, None, vec![Action::Output(2)], None)),
            ],
        );
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
    let (dp, ids) = with_meter(
        true,
        BandKind::Drop,
        vec![
            (0, rule(FlowMatch::ANY, None, vec![], Some(1))),
            (1, rule(FlowMatch::ANY, Some(1), vec![], Some(2))),
            (2, rule(FlowMatch::ANY, None, vec![Action::Output(2)], None)),
        ],
    );
    let d = dp.decision(&udp_key(), 0).unwrap();
    assert_eq!(d.credit.meter.unwrap().step, 1);
    let hits = Hits { packets: 10, bytes: 1000, dropped: 4, dropped_bytes: 400 };
    dp.kernel_counters().credit(&d.credit, hits, 5);
    let counts: Vec<(u64, u64)> = ids
        .iter()
        .map(|id| {
            let r = dp.read_rule(*id);
            (r.packets, r.bytes)
        })
        .collect();
    assert_eq!(counts, [(10, 1000), (10, 1000), (6, 600)]);
    assert_eq!(dp.read_table(2).lookups, 6);
    let (meter, _) = dp.read_meter(1).unwrap();
    assert_eq!((meter.packets, meter.bytes), (10, 1000));
    assert_eq!(dp.read_misc(Misc::MeterDrops), 4);
    assert_eq!(dp.read_port(0).rx_packets, 10);
    let out = dp.read_port(1);
    assert_eq!((out.tx_packets, out.tx_bytes), (6, 600));
}
