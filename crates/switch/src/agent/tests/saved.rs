//! The tables saved at stop and restored at start.

use openflow::text::{parse_group_mod, parse_meter_mod};
use openflow::v13::group_mod::GroupModCommand;
use openflow::v13::meter_mod::MeterModCommand;

use super::*;

/// Flow stats without their counters and durations, which start again at a restore.
fn entries(frames: &[Frame]) -> Vec<v13::multipart::FlowStats> {
    flows_in(frames)
        .into_iter()
        .map(|mut f| {
            f.duration_sec = 0;
            f.duration_nsec = 0;
            f.packet_count = 0;
            f.byte_count = 0;
            f
        })
        .collect()
}

#[test]
fn saved_tables_come_back_whole_in_a_fresh_agent() {
    let mut r = Rig::new();
    let c = r.connect(SessionKind::Controller, OFP13_VERSION);
    r.send13(
        c,
        v13::Message::MeterMod(
            parse_meter_mod(
                "meter=5,kbps,burst,bands=type=drop,rate=1000,burst_size=100",
                MeterModCommand::Add,
            )
            .unwrap(),
        ),
        0,
    );
    // Group 1 names group 2, which is added after it... the other way round does not
    // work on a switch, so 2 first here; the saved order is by id, 1 first.
    r.send13(
        c,
        v13::Message::GroupMod(
            parse_group_mod("group_id=2,type=indirect,bucket=output:3", GroupModCommand::Add)
                .unwrap(),
        ),
        0,
    );
    r.send13(
        c,
        v13::Message::GroupMod(
            parse_group_mod(
                "group_id=1,type=all,bucket=output:1,bucket=group:2",
                GroupModCommand::Add,
            )
            .unwrap(),
        ),
        0,
    );
    r.flow(
        c,
        "table=0,priority=100,cookie=0x1234,idle_timeout=60,hard_timeout=600,in_port=1,actions=meter:5,goto_table:1",
        FlowModCommand::Add,
    );
    r.flow(c, "table=1,priority=7,in_port=1,actions=group:1", FlowModCommand::Add);
    r.flow(c, "table=0,priority=5,send_flow_rem,in_port=2,actions=output:1", FlowModCommand::Add);
    let errors: Vec<_> = r
        .read(c)
        .into_iter()
        .filter(|f| matches!(f.message, Message::V13(v13::Message::Error(_))))
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    let before = entries(&r.dump_flows(c));
    assert_eq!(before.len(), 3);
    let saved = r.agent.saved_tables();

    let mut fresh = Rig::new();
    let got = fresh.agent.restore_tables(&saved, 0);
    assert_eq!(got, Restored { flows: 3, groups: 2, meters: 1, errors: vec![] });
    let c2 = fresh.connect(SessionKind::Controller, OFP13_VERSION);
    assert_eq!(entries(&fresh.dump_flows(c2)), before);
    // And they forward: port 1 through the meter and group 1 to ports 1 (not the input
    // port: dropped) and 3 (through group 2).
    assert_eq!(fresh.packet(1, SEC), vec![3]);
    assert_eq!(fresh.packet(2, SEC), vec![1]);
    // Saving the restored tables gives the same bytes.
    assert_eq!(fresh.agent.saved_tables(), saved);
}

#[test]
fn damaged_saved_tables_restore_what_they_can_and_say_the_rest() {
    let mut r = Rig::new();
    let c = r.connect(SessionKind::Controller, OFP13_VERSION);
    r.flow(c, "in_port=1,actions=output:2", FlowModCommand::Add);
    r.flow(c, "in_port=2,actions=group:9", FlowModCommand::Add);
    let _ = r.read(c);
    // The flow naming a missing group was refused: one flow is saved.
    let one = r.agent.saved_tables();
    assert_eq!(Rig::new().agent.restore_tables(&one, 0).flows, 1);
    r.flow(c, "in_port=2,actions=output:1", FlowModCommand::Add);
    let mut saved = r.agent.saved_tables();
    let whole = saved.len();
    // A truncated last message.
    saved.truncate(whole - 3);
    let mut fresh = Rig::new();
    let got = fresh.agent.restore_tables(&saved, 0);
    assert_eq!(got.flows, 1, "{got:?}");
    assert_eq!(got.errors.len(), 1, "{got:?}");
    assert!(got.errors[0].contains("cut short"), "{got:?}");
    // Garbage: nothing applied, each problem said, nothing panics.
    let mut fresh = Rig::new();
    let got = fresh.agent.restore_tables(&[4, 14, 0, 8, 0, 0, 0, 0, 0xff, 0xff], 0);
    assert_eq!(got.flows, 0);
    assert!(!got.errors.is_empty(), "{got:?}");
}
