//! OpenFlow 1.4 through the agent: bundles (and 1.3's ONF form), flow monitors, role
//! status and request forward.

use openflow::error::ONF_EXPERIMENTER_ID;
use openflow::text::parse_group_mod;
use openflow::v13::bundle::{bundle_flags, BundleAdd, BundleControl, BundleCtrlType as T};
use openflow::v13::group_mod::GroupModCommand;
use openflow::v13::multipart::{
    monitor_flags as mf, FlowMonitorCommand, FlowMonitorRequest, FlowUpdate, FullUpdateEvent,
};
use openflow::OFP14_VERSION;

use super::*;

const V14: u8 = OFP14_VERSION;
const FLAGS: u16 = bundle_flags::ATOMIC | bundle_flags::ORDERED;

fn ctrl(bundle_id: u32, ctrl_type: T, flags: u16) -> v13::Message {
    v13::Message::BundleControl(BundleControl { bundle_id, ctrl_type, flags, properties: vec![] })
}

impl Rig {
    /// Adds `inner` (a 1.4 message) to bundle `id` of `c`, the inner xid the add's own.
    fn bundle_add(&mut self, c: SessionId, id: u32, inner: v13::Message) -> u32 {
        let xid = self.xid + 1;
        let add = BundleAdd::new(id, FLAGS, &Frame::v14(xid, inner)).unwrap();
        self.send_v(c, V14, v13::Message::BundleAdd(add), 0)
    }

    /// The bundle control reply to `m`, or a panic with what came instead.
    fn bundle_reply(&mut self, c: SessionId, m: v13::Message) -> T {
        let xid = self.send_v(c, V14, m, 0);
        match self.read(c).as_slice() {
            [Frame { xid: x, message: Message::V13(v13::Message::BundleControl(b)), .. }]
                if *x == xid =>
            {
                b.ctrl_type
            }
            other => panic!("expected a bundle control reply, got {other:?}"),
        }
    }

    /// Sends `m` at 1.4; the errors it got, with their xids.
    fn errors_v14(&mut self, c: SessionId, m: v13::Message) -> Vec<(u32, ErrorKind)> {
        self.send_v(c, V14, m, 0);
        self.read(c).iter().map(|f| (f.xid, standard_error(f))).collect()
    }
}

fn standard_error(f: &Frame) -> ErrorKind {
    match &f.message {
        Message::V13(v13::Message::Error(v13::ErrorMsg::Standard { kind, .. })) => *kind,
        m => panic!("not an error: {m:?}"),
    }
}

pub(super) fn fm(s: &str) -> v13::Message {
    v13::Message::FlowMod(flow_mod(s, FlowModCommand::Add))
}

#[test]
fn a_committed_bundle_applies_every_message_in_one_publish() {
    let mut r = Rig::new();
    let c = r.connect(SessionKind::Controller, V14);
    assert_eq!(r.bundle_reply(c, ctrl(7, T::OpenRequest, FLAGS)), T::OpenReply);
    let group = parse_group_mod("group_id=1,type=all,bucket=output:3", GroupModCommand::Add);
    r.bundle_add(c, 7, v13::Message::GroupMod(group.unwrap()));
    r.bundle_add(c, 7, fm("in_port=1,actions=output:2"));
    r.bundle_add(c, 7, fm("in_port=2,actions=group:1"));
    assert!(r.read(c).is_empty(), "adds have no reply");
    assert!(r.packet(1, SEC).is_empty(), "nothing applies before the commit");
    assert_eq!(r.bundle_reply(c, ctrl(7, T::CloseRequest, FLAGS)), T::CloseReply);
    let version = r.dp.current().version();
    assert_eq!(r.bundle_reply(c, ctrl(7, T::CommitRequest, FLAGS)), T::CommitReply);
    assert_eq!(r.dp.current().version(), version + 1, "one publish");
    assert_eq!(r.packet(1, SEC), vec![2]);
    assert_eq!(r.packet(2, SEC), vec![3]);
    let errs = r.errors_v14(c, ctrl(7, T::CommitRequest, FLAGS));
    assert_eq!(errs[0].1, ErrorKind::BUNDLE_FAILED_BAD_ID, "a committed bundle is gone");
}

#[test]
fn a_failing_bundle_changes_nothing_and_names_the_message_that_failed() {
    let mut r = Rig::new();
    let c = r.connect(SessionKind::Controller, V14);
    r.send_v(c, V14, fm("priority=5,in_port=3,actions=output:1"), 0);
    assert_eq!(r.packet(3, SEC), vec![1]);
    r.bundle_reply(c, ctrl(1, T::OpenRequest, FLAGS));
    r.bundle_add(c, 1, fm("in_port=1,actions=output:2"));
    let del = flow_mod("priority=5,in_port=3", FlowModCommand::DeleteStrict);
    r.bundle_add(c, 1, v13::Message::FlowMod(del));
    let bad = r.bundle_add(c, 1, fm("in_port=2,actions=group:9"));
    let commit = r.xid + 1;
    let errs = r.errors_v14(c, ctrl(1, T::CommitRequest, FLAGS));
    assert_eq!(
        errs,
        vec![
            (bad, ErrorKind::BAD_ACTION_BAD_OUT_GROUP),
            (commit, ErrorKind::BUNDLE_FAILED_MSG_FAILED)
        ]
    );
    assert!(r.packet(1, 2 * SEC).is_empty(), "the first add was taken back");
    assert_eq!(r.packet(3, 2 * SEC), vec![1], "the delete was taken back");
    let flows = flows_in(&r.dump_flows(c));
    assert_eq!(flows.len(), 1);
    assert_eq!(flows[0].packet_count, 2, "the restored flow kept its counters");
}

#[test]
fn bundle_requests_out_of_turn_get_the_bundle_errors() {
    let mut r = Rig::new();
    let c = r.connect(SessionKind::Controller, V14);
    let kind = |r: &mut Rig, m| r.errors_v14(c, m)[0].1;
    assert_eq!(kind(&mut r, ctrl(1, T::CloseRequest, FLAGS)), ErrorKind::BUNDLE_FAILED_BAD_ID);
    assert_eq!(kind(&mut r, ctrl(1, T::OpenReply, FLAGS)), ErrorKind::BUNDLE_FAILED_BAD_TYPE);
    assert_eq!(kind(&mut r, ctrl(1, T::OpenRequest, 4)), ErrorKind::BUNDLE_FAILED_BAD_FLAGS);
    r.bundle_reply(c, ctrl(1, T::OpenRequest, FLAGS));
    assert_eq!(kind(&mut r, ctrl(1, T::OpenRequest, FLAGS)), ErrorKind::BUNDLE_FAILED_BUNDLE_EXIST);
    assert_eq!(kind(&mut r, ctrl(1, T::CommitRequest, 1)), ErrorKind::BUNDLE_FAILED_BAD_FLAGS);
    // Only flow, group and meter mods; the inner xid must be the add's.
    let po = v13::Message::PacketOut(PacketOut {
        buffer_id: v13::flow_mod::OFP_NO_BUFFER,
        in_port: port::CONTROLLER,
        actions: vec![],
        data: frame(),
    });
    let add = BundleAdd::new(1, FLAGS, &Frame::v14(r.xid + 1, po)).unwrap();
    assert_eq!(kind(&mut r, v13::Message::BundleAdd(add)), ErrorKind::BUNDLE_FAILED_MSG_UNSUP);
    let add = BundleAdd::new(1, FLAGS, &Frame::v14(3, fm("actions=drop"))).unwrap();
    assert_eq!(kind(&mut r, v13::Message::BundleAdd(add)), ErrorKind::BUNDLE_FAILED_MSG_BAD_XID);
    r.bundle_reply(c, ctrl(1, T::CloseRequest, FLAGS));
    let xid = r.xid + 1;
    let add = BundleAdd::new(1, FLAGS, &Frame::v14(xid, fm("actions=drop"))).unwrap();
    assert_eq!(kind(&mut r, v13::Message::BundleAdd(add)), ErrorKind::BUNDLE_FAILED_BUNDLE_CLOSED);
    assert_eq!(r.bundle_reply(c, ctrl(1, T::DiscardRequest, FLAGS)), T::DiscardReply);
    assert_eq!(kind(&mut r, ctrl(1, T::CommitRequest, FLAGS)), ErrorKind::BUNDLE_FAILED_BAD_ID);
    // An add opens its bundle.
    r.bundle_add(c, 2, fm("in_port=1,actions=output:3"));
    assert_eq!(r.bundle_reply(c, ctrl(2, T::CommitRequest, FLAGS)), T::CommitReply);
    assert_eq!(r.packet(1, SEC), vec![3]);
}

#[test]
fn an_idle_bundle_is_discarded_with_a_timeout_error() {
    let mut r = Rig::new();
    let c = r.connect(SessionKind::Controller, V14);
    r.bundle_reply(c, ctrl(1, T::OpenRequest, FLAGS));
    assert!(r.agent.next_timeout().is_some_and(|t| t <= 10 * SEC));
    r.agent.handle_timeout(11 * SEC);
    let got = r.read(c);
    let errors: Vec<ErrorKind> = got
        .iter()
        .filter(|f| matches!(f.message, Message::V13(v13::Message::Error(_))))
        .map(standard_error)
        .collect();
    assert_eq!(errors, vec![ErrorKind::BUNDLE_FAILED_TIMEOUT], "{got:?}");
    let errs = r.errors_v14(c, ctrl(1, T::CommitRequest, FLAGS));
    assert_eq!(errs[0].1, ErrorKind::BUNDLE_FAILED_BAD_ID);
}

#[test]
fn openflow_13_bundles_travel_as_onf_experimenter_messages() {
    let mut r = Rig::new();
    let c = r.connect(SessionKind::Controller, OFP13_VERSION);
    let onf = |m: BundleControl| v13::Message::Experimenter(m.to_experimenter());
    let open =
        BundleControl { bundle_id: 3, ctrl_type: T::OpenRequest, flags: FLAGS, properties: vec![] };
    r.send13(c, onf(open.clone()), 0);
    let got = r.read(c);
    let Message::V13(v13::Message::Experimenter(e)) = &got[0].message else { panic!("{got:?}") };
    let reply = BundleControl::from_experimenter(e).unwrap().unwrap();
    assert_eq!(reply.ctrl_type, T::OpenReply);
    let xid = r.xid + 1;
    let add = BundleAdd::new(3, FLAGS, &Frame::v13(xid, fm("in_port=1,actions=output:2"))).unwrap();
    r.send13(c, v13::Message::Experimenter(add.to_experimenter()), 0);
    r.send13(c, onf(BundleControl { ctrl_type: T::CommitRequest, ..open.clone() }), 0);
    let got = r.read(c);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(r.packet(1, SEC), vec![2]);
    // A bundle error in 1.3 is the ONF experimenter error 2300 + code.
    r.send13(c, onf(BundleControl { ctrl_type: T::CommitRequest, ..open }), 0);
    let got = r.read(c);
    match &got[0].message {
        Message::V13(v13::Message::Error(v13::ErrorMsg::Experimenter {
            exp_type,
            experimenter,
            ..
        })) => assert_eq!((*exp_type, *experimenter), (2302, ONF_EXPERIMENTER_ID)),
        m => panic!("{m:?}"),
    }
}

pub(super) fn monitor(id: u32, flags: u16) -> v13::Message {
    let m = FlowMonitorRequest {
        monitor_id: id,
        out_port: port::ANY,
        out_group: OFPG_ANY,
        flags,
        table_id: v13::flow_mod::OFPTT_ALL,
        command: FlowMonitorCommand::Add,
        match_: Default::default(),
    };
    let body = MultipartRequestBody::FlowMonitor(m);
    v13::Message::MultipartRequest(v13::multipart::MultipartRequest { flags: 0, body })
}

/// The flow updates in what `c` received.
pub(super) fn updates(frames: &[Frame]) -> Vec<FlowUpdate> {
    frames
        .iter()
        .flat_map(|f| match &f.message {
            Message::V13(v13::Message::MultipartReply(r)) => match &r.body {
                MultipartReplyBody::FlowMonitor(u) => u.clone(),
                b => panic!("{b:?}"),
            },
            m => panic!("{m:?}"),
        })
        .collect()
}

/// Each full update as (event, priority, reason, whether it has instructions).
pub(super) fn fulls(u: &[FlowUpdate]) -> Vec<(FullUpdateEvent, u16, u8, bool)> {
    u.iter()
        .map(|u| match u {
            FlowUpdate::Full(f) => (f.event, f.priority, f.reason, !f.instructions.is_empty()),
            other => panic!("not a full update: {other:?}"),
        })
        .collect()
}

#[test]
fn flow_monitors_report_initial_flows_and_every_later_change() {
    use FullUpdateEvent as E;
    let mut r = Rig::new();
    let watcher = r.connect(SessionKind::Controller, V14);
    let other = r.connect(SessionKind::Controller, V14);
    let own_only = r.connect(SessionKind::Controller, V14);
    r.send_v(other, V14, fm("priority=7,in_port=1,actions=output:2"), 0);
    let all = mf::INITIAL | mf::ADD | mf::REMOVED | mf::MODIFY | mf::INSTRUCTIONS;
    r.send_v(watcher, V14, monitor(1, all), 0);
    assert_eq!(fulls(&updates(&r.read(watcher))), vec![(E::Initial, 7, 0, true)]);
    r.send_v(own_only, V14, monitor(1, mf::ADD | mf::ONLY_OWN), 0);
    assert!(updates(&r.read(own_only)).is_empty(), "no initial flows unless asked");

    r.send_v(other, V14, fm("priority=9,in_port=2,actions=output:1"), 0);
    let modify = flow_mod("in_port=1,actions=output:3", FlowModCommand::ModifyStrict);
    r.send_v(other, V14, v13::Message::FlowMod(v13::FlowMod { priority: 7, ..modify }), 0);
    r.send_v(other, V14, v13::Message::FlowMod(flow_mod("in_port=2", FlowModCommand::Delete)), 0);
    let delete = v13::FlowRemovedReason::Delete.to_u8();
    assert_eq!(
        fulls(&updates(&r.read(watcher))),
        vec![(E::Added, 9, 0, true), (E::Modified, 7, 0, true), (E::Removed, 9, delete, false)]
    );
    assert!(r.read(own_only).is_empty(), "ONLY_OWN: others' changes are not reported");

    // The watcher's own change comes abbreviated to its xid.
    let xid = r.send_v(watcher, V14, fm("priority=3,actions=drop"), 0);
    assert_eq!(updates(&r.read(watcher)), vec![FlowUpdate::Abbrev { xid }]);
    let mine = r.send_v(own_only, V14, fm("priority=4,actions=output:1"), 0);
    assert_eq!(updates(&r.read(own_only)), vec![FlowUpdate::Abbrev { xid: mine }]);
    assert_eq!(fulls(&updates(&r.read(watcher))), vec![(E::Added, 4, 0, true)]);

    // A committed bundle's changes: each message's own abbreviated by its xid.
    let first = r.bundle_add(watcher, 9, fm("priority=20,in_port=1,actions=output:2"));
    let second = r.bundle_add(watcher, 9, fm("priority=21,in_port=1,actions=output:3"));
    assert!(r.read(watcher).is_empty(), "nothing is reported before the commit");
    r.send_v(watcher, V14, ctrl(9, T::CommitRequest, FLAGS), 0);
    let got = r.read(watcher);
    assert!(matches!(got[0].message, Message::V13(v13::Message::BundleControl(_))), "{got:?}");
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(
        updates(&got[1..]),
        vec![FlowUpdate::Abbrev { xid: first }, FlowUpdate::Abbrev { xid: second }]
    );
    assert_eq!(fulls(&updates(&r.read(own_only))), vec![]);

    // Expiry is reported too; a deleted monitor reports nothing more.
    r.send_v(other, V14, fm("priority=11,hard_timeout=1,actions=output:1"), 0);
    r.read(watcher);
    r.agent.handle_timeout(2 * SEC);
    let hard = v13::FlowRemovedReason::HardTimeout.to_u8();
    assert_eq!(fulls(&updates(&r.read(watcher))), vec![(E::Removed, 11, hard, false)]);
    let v13::Message::MultipartRequest(mut del) = monitor(1, 0) else { unreachable!() };
    if let MultipartRequestBody::FlowMonitor(m) = &mut del.body {
        m.command = FlowMonitorCommand::Delete;
    }
    r.send_v(watcher, V14, v13::Message::MultipartRequest(del), 0);
    r.read(watcher);
    r.send_v(other, V14, fm("priority=12,actions=drop"), 0);
    assert!(r.read(watcher).is_empty());
    let errs = r.errors_v14(own_only, monitor(1, mf::ADD));
    assert_eq!(errs[0].1, ErrorKind::FLOW_MONITOR_FAILED_MONITOR_EXISTS);
}

#[test]
fn a_demoted_14_master_hears_of_it_in_a_role_status() {
    let mut r = Rig::new();
    let a = r.connect(SessionKind::Controller, V14);
    let b = r.connect(SessionKind::Controller, V14);
    let old = r.connect(SessionKind::Controller, OFP13_VERSION);
    let master = |generation_id| {
        v13::Message::RoleRequest(Role { role: ControllerRole::Master, generation_id })
    };
    r.send_v(a, V14, master(1), 0);
    r.read(a);
    r.send_v(b, V14, master(2), 0);
    r.read(b);
    let got = r.read(a);
    match got.as_slice() {
        [Frame { message: Message::V13(v13::Message::RoleStatus(s)), .. }] => {
            assert_eq!(s.role, ControllerRole::Slave);
            assert_eq!(s.reason, v13::ControllerRoleReason::MasterRequest);
            assert_eq!(s.generation_id, 2);
        }
        other => panic!("{other:?}"),
    }
    r.send13(old, master(3), 0);
    r.read(old);
    r.send_v(b, V14, master(4), 0);
    assert!(r.read(old).is_empty(), "1.3 has no role status");
}

#[test]
fn group_mods_are_forwarded_to_the_connections_that_ask() {
    let mut r = Rig::new();
    let listener = r.connect(SessionKind::Controller, V14);
    let quiet = r.connect(SessionKind::Controller, V14);
    let changer = r.connect(SessionKind::Controller, V14);
    let cfg = v13::AsyncConfig { requestforward_mask: [1, 0], ..super::super::default_async() };
    r.send_v(listener, V14, v13::Message::SetAsync(cfg), 0);
    let group = parse_group_mod("group_id=5,type=all,bucket=output:3", GroupModCommand::Add);
    let message = v13::Message::GroupMod(group.unwrap());
    let xid = r.send_v(changer, V14, message.clone(), 0);
    assert!(r.read(changer).is_empty());
    assert!(r.read(quiet).is_empty(), "forwarding is off by default");
    let got = r.read(listener);
    let [Frame { message: Message::V13(v13::Message::RequestForward(rf)), .. }] = got.as_slice()
    else {
        panic!("{got:?}")
    };
    let inner = rf.decode_request().unwrap();
    assert_eq!(
        (inner.version, inner.xid, inner.message),
        (V14, xid, Message::V13(message.clone()))
    );
    // A refused group-mod (the group exists) is not forwarded.
    r.send_v(changer, V14, message, 0);
    assert_eq!(r.read(changer).len(), 1);
    assert!(r.read(listener).is_empty());
}

#[test]
fn a_bundle_with_a_refused_add_commits_nothing() {
    let mut r = Rig::new();
    let c = r.connect(SessionKind::Controller, V14);
    r.bundle_add(c, 4, fm("in_port=1,actions=output:2"));
    r.bundle_add(c, 4, fm("in_port=2,actions=goto_table:0"));
    let refused: Vec<ErrorKind> = r.read(c).iter().map(standard_error).collect();
    assert_eq!(refused, vec![ErrorKind::BAD_INSTRUCTION_BAD_TABLE_ID]);
    let errs = r.errors_v14(c, ctrl(4, T::CommitRequest, FLAGS));
    assert_eq!(errs.iter().map(|e| e.1).collect::<Vec<_>>(), [ErrorKind::BUNDLE_FAILED_MSG_FAILED]);
    assert!(r.packet(1, SEC).is_empty(), "the good add was not applied either");
    let errs = r.errors_v14(c, ctrl(4, T::CommitRequest, FLAGS));
    assert_eq!(errs[0].1, ErrorKind::BUNDLE_FAILED_BAD_ID, "the failed commit discarded it");
}
