//! Back-pressure: a connection that does not read is held at its backlog limit, a long
//! flow dump is produced as the connection drains, packet-outs the workers cannot take
//! yet hold their connection instead of being dropped.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::*;
use crate::agent::{Notice, BACKLOG_HIGH, BACKLOG_LOW, BACKLOG_MAX, BACKLOG_NOTICE_NS};
use openflow::v13::multipart::OFPMPF_REPLY_MORE;

/// Adds `n` flows (distinct TCP ports) on `c` and reads the (empty) answers.
fn add_flows(r: &mut Rig, c: SessionId, n: u32) {
    for i in 0..n {
        r.flow(c, &format!("tcp,tp_dst={i},actions=output:2"), FlowModCommand::Add);
    }
    assert!(r.read(c).is_empty());
}

/// Sends a flow-stats request for every flow; its xid.
fn ask_for_flows(r: &mut Rig, c: SessionId) -> u32 {
    let req = v13::multipart::MultipartRequest {
        flags: 0,
        body: MultipartRequestBody::Flow(FlowStatsRequest::default()),
    };
    r.send13(c, v13::Message::MultipartRequest(req), 0)
}

/// Takes what `c` has queued without saying it was written; returns the bytes and the
/// frames.
fn take_unwritten(r: &mut Rig, c: SessionId) -> (usize, Vec<Frame>) {
    let mut f = Framer::new();
    let mut n = 0;
    while let Some(b) = r.agent.poll_transmit(c) {
        n += b.len();
        f.push(&b);
    }
    let mut out = Vec::new();
    while let Some(m) = f.next_message().unwrap() {
        out.push(Frame::decode(m).unwrap());
    }
    (n, out)
}

fn is_echo_reply(f: &Frame) -> bool {
    matches!(f.message, Message::V13(v13::Message::EchoReply(_)))
}

#[test]
fn a_long_dump_stops_at_the_backlog_limit_and_goes_on_as_the_peer_reads() {
    let mut r = Rig::new();
    let c = r.connect(SessionKind::Controller, OFP13_VERSION);
    // About 100 bytes an entry: 30,000 entries are about three times the limit.
    let n = 30_000;
    add_flows(&mut r, c, n);
    let xid = ask_for_flows(&mut r, c);
    let echo = r.send13(c, v13::Message::EchoRequest(b"after".to_vec()), 0);
    let (first, frames) = take_unwritten(&mut r, c);
    assert!(first >= BACKLOG_HIGH, "it fills the backlog: {first}");
    assert!(first < BACKLOG_HIGH + 128 * 1024, "and stops there: {first}");
    assert!(!r.agent.wants_input(c), "a held connection's socket is not read");
    assert!(!frames.iter().any(is_echo_reply), "the echo waits for the reply to end");
    // Nothing more comes until the peer has taken most of it.
    r.agent.transmitted(c, first - BACKLOG_LOW - 1, 0);
    assert_eq!(take_unwritten(&mut r, c).0, 0, "not below the low mark yet");
    r.agent.transmitted(c, BACKLOG_LOW + 1, 0);
    let mut all = frames;
    all.extend(r.read(c));
    assert!(r.agent.wants_input(c));
    // Every entry once, in one reply whose parts all say more but the last; then the echo.
    let (last, parts) = all.split_last().unwrap();
    assert!(is_echo_reply(last) && last.xid == echo, "{last:?}");
    let flags: Vec<u16> = parts
        .iter()
        .map(|f| match &f.message {
            Message::V13(v13::Message::MultipartReply(m)) if f.xid == xid => m.flags,
            other => panic!("{other:?}"),
        })
        .collect();
    let (final_flags, more) = flags.split_last().unwrap();
    assert_eq!(*final_flags, 0);
    assert!(more.iter().all(|f| f & OFPMPF_REPLY_MORE != 0));
    let mut ports: Vec<String> =
        flows_in(parts).iter().map(|f| format!("{:?}", f.match_.fields)).collect();
    assert_eq!(ports.len(), n as usize);
    ports.sort();
    ports.dedup();
    assert_eq!(ports.len(), n as usize, "no entry twice");
}

#[test]
fn the_log_tells_of_a_backlog_only_when_the_peer_stops_reading() {
    let mut r = Rig::new();
    let c = r.connect(SessionKind::Controller, OFP13_VERSION);
    add_flows(&mut r, c, 30_000);
    let backlogged = |r: &mut Rig| {
        std::iter::from_fn(|| r.agent.poll_notice())
            .filter(|n| matches!(n, Notice::Backlogged { .. }))
            .count()
    };
    // A long dump read as it comes holds its connection for moments: no line.
    ask_for_flows(&mut r, c);
    assert_eq!(flows_in(&r.read(c)).len(), 30_000);
    r.agent.handle_timeout(2 * BACKLOG_NOTICE_NS);
    assert_eq!(backlogged(&mut r), 0);
    // A peer that stops reading is told of once it has been held for the time.
    let t0 = 3 * BACKLOG_NOTICE_NS;
    let req = v13::multipart::MultipartRequest {
        flags: 0,
        body: MultipartRequestBody::Flow(FlowStatsRequest::default()),
    };
    r.send13(c, v13::Message::MultipartRequest(req), t0);
    let (unread, _) = take_unwritten(&mut r, c);
    assert!(unread >= BACKLOG_HIGH && !r.agent.wants_input(c));
    assert!(r.agent.next_timeout().is_some_and(|t| t <= t0 + BACKLOG_NOTICE_NS));
    r.agent.handle_timeout(t0 + BACKLOG_NOTICE_NS - 1);
    assert_eq!(backlogged(&mut r), 0, "not yet");
    r.agent.handle_timeout(t0 + BACKLOG_NOTICE_NS);
    assert_eq!(backlogged(&mut r), 1);
    r.agent.handle_timeout(t0 + 5 * BACKLOG_NOTICE_NS);
    assert_eq!(backlogged(&mut r), 0, "once per connection");
}

#[test]
fn a_dump_lists_what_exists_as_it_goes_and_a_closed_connection_drops_it() {
    let mut r = Rig::new();
    let c = r.connect(SessionKind::Controller, OFP13_VERSION);
    let other = r.connect(SessionKind::Controller, OFP13_VERSION);
    add_flows(&mut r, c, 20_000);
    ask_for_flows(&mut r, c);
    let (first, frames) = take_unwritten(&mut r, c);
    let listed = flows_in(&frames).len();
    assert!(listed < 20_000);
    // Another connection deletes everything meanwhile: the rest of the dump is empty.
    r.flow(other, "", FlowModCommand::Delete);
    r.agent.transmitted(c, first, 0);
    let rest = r.read(c);
    assert_eq!(flows_in(&rest).len(), 0, "the deleted entries are not listed");
    let Some(Frame { message: Message::V13(v13::Message::MultipartReply(m)), .. }) = rest.last()
    else {
        panic!("{rest:?}")
    };
    assert_eq!(m.flags, 0, "the reply ends");
    // A dump under way is dropped with its connection.
    add_flows(&mut r, other, 20_000);
    ask_for_flows(&mut r, other);
    let _ = take_unwritten(&mut r, other);
    r.agent.remove(other, 0);
    assert!(r.agent.sessions().iter().all(|(id, ..)| *id != other));
}

#[test]
fn a_peer_that_reads_nothing_gets_no_packet_ins_past_the_limit_and_is_closed_at_the_most() {
    let mut r = Rig::new();
    let c = r.connect(SessionKind::Controller, OFP13_VERSION);
    r.flow(c, "in_port=1,actions=controller", FlowModCommand::Add);
    add_flows(&mut r, c, 20_000);
    ask_for_flows(&mut r, c);
    let _ = take_unwritten(&mut r, c);
    r.packet(1, 0);
    r.deliver_packet_ins(0);
    assert_eq!(r.agent.counters().packet_ins_sent, 0);
    assert_eq!(r.agent.counters().packet_ins_backlogged, 1);
    assert_eq!(take_unwritten(&mut r, c).0, 0, "nothing more is queued");
    // An asynchronous message past the most a connection may leave unread closes it.
    r.agent.sessions.get_mut(&c).unwrap().in_flight = BACKLOG_MAX;
    assert!(!r.agent.is_closed(c));
    r.agent.link(1, false);
    assert!(r.agent.is_closed(c));
    assert!(matches!(
        r.agent.sessions.get(&c).and_then(|s| s.conn.close_reason().cloned()),
        Some(crate::conn::CloseReason::Backlog { .. })
    ));
}

/// Refuses every packet-out while `busy` is above 0, counting down.
struct Busy {
    busy: Arc<AtomicUsize>,
    sent: Capture,
}

impl Transmit for Busy {
    fn transmit(&mut self, out: &mut Outputs) -> Result<(), TransmitError> {
        if self.busy.load(Ordering::SeqCst) > 0 {
            self.busy.fetch_sub(1, Ordering::SeqCst);
            return Err(TransmitError::Busy);
        }
        self.sent.transmit(out)
    }
}

#[test]
fn packet_outs_the_workers_cannot_take_hold_their_connection_and_are_never_dropped() {
    let busy = Arc::new(AtomicUsize::new(0));
    let sent = Capture::default();
    let tx = Busy { busy: busy.clone(), sent: sent.clone() };
    let mut r = Rig::with_tx(AgentConfig::default(), Box::new(tx));
    let c = r.connect(SessionKind::Controller, OFP13_VERSION);
    let out = |p: u32| {
        v13::Message::PacketOut(PacketOut {
            buffer_id: OFP_NO_BUFFER,
            in_port: port::CONTROLLER,
            actions: vec![Action::Output { port: p, max_len: 0 }],
            data: frame(),
        })
    };
    busy.store(3, Ordering::SeqCst);
    r.send13(c, out(2), 0);
    r.send13(c, out(3), 0);
    let echo = r.send13(c, v13::Message::EchoRequest(vec![]), 0);
    assert!(r.read(c).is_empty(), "held: the echo waits");
    assert!(!r.agent.wants_input(c));
    let step = crate::agent::pace::STALL_RETRY_NS;
    assert_eq!(r.agent.next_timeout(), Some(step), "offered again shortly");
    for i in 1..=3 {
        r.agent.handle_timeout(i * step);
    }
    let got = r.read(c);
    assert!(got.len() == 1 && is_echo_reply(&got[0]) && got[0].xid == echo, "{got:?}");
    assert_eq!(sent.ports(), [2, 3], "both sent, in order");
    assert_eq!(r.agent.counters().packet_out_drops, 0);
    assert!(r.agent.wants_input(c));
    // One still waiting when its connection goes is counted as dropped.
    busy.store(1000, Ordering::SeqCst);
    r.send13(c, out(2), 0);
    assert!(!r.agent.wants_input(c));
    r.agent.remove(c, 0);
    assert_eq!(r.agent.counters().packet_out_drops, 1);
}

#[test]
fn a_flow_monitor_that_falls_behind_is_paused_then_told_what_it_missed() {
    use super::of14::{fm, fulls, monitor, updates};
    use openflow::v13::multipart::{monitor_flags as mf, FlowUpdate, FullUpdateEvent as E};
    use openflow::OFP14_VERSION as V14;
    let mut r = Rig::new();
    let watcher = r.connect(SessionKind::Controller, V14);
    let other = r.connect(SessionKind::Controller, V14);
    for i in 0..30_000 {
        r.send_v(other, V14, fm(&format!("priority=5,tcp,tp_dst={i},actions=output:2")), 0);
    }
    r.send_v(other, V14, fm("priority=7,in_port=1,actions=output:2"), 0);
    r.send_v(other, V14, fm("priority=8,in_port=2,actions=output:1"), 0);
    assert!(r.read(other).is_empty());
    // The initial flows fill the watcher's backlog; it reads none of them.
    let all = mf::INITIAL | mf::ADD | mf::REMOVED | mf::MODIFY;
    r.send_v(watcher, V14, monitor(1, all), 0);
    let (initial, _) = take_unwritten(&mut r, watcher);
    assert!(initial >= BACKLOG_HIGH, "{initial}");
    let strict = |s: &str, cmd, priority| {
        v13::Message::FlowMod(v13::FlowMod { priority, ..flow_mod(s, cmd) })
    };
    // Added during the pause and kept; added and removed; an older one modified; an
    // older one removed.
    r.send_v(other, V14, fm("priority=9,in_port=3,actions=output:1"), 0);
    r.send_v(other, V14, fm("priority=10,in_port=3,actions=output:2"), 0);
    r.send_v(other, V14, strict("in_port=3", FlowModCommand::DeleteStrict, 10), 0);
    r.send_v(other, V14, strict("in_port=1,actions=output:3", FlowModCommand::ModifyStrict, 7), 0);
    r.send_v(other, V14, strict("in_port=2", FlowModCommand::DeleteStrict, 8), 0);
    let (_, frames) = take_unwritten(&mut r, watcher);
    let got = updates(&frames);
    assert_eq!(got[0], FlowUpdate::Paused, "{got:?}");
    let delete = v13::FlowRemovedReason::Delete.to_u8();
    assert_eq!(fulls(&got[1..]), vec![(E::Removed, 8, delete, false)], "only the older removal");
    // Once it has read, it is told what it missed, then that updates resume.
    r.agent.transmitted(watcher, usize::MAX, 0);
    let got = updates(&r.read(watcher));
    let (last, caught_up) = got.split_last().unwrap();
    assert_eq!(*last, FlowUpdate::Resumed);
    assert_eq!(fulls(caught_up), vec![(E::Added, 9, 0, false), (E::Modified, 7, 0, false)]);
    // And later changes come as before.
    r.send_v(other, V14, fm("priority=11,actions=drop"), 0);
    assert_eq!(fulls(&updates(&r.read(watcher))), vec![(E::Added, 11, 0, false)]);
}
