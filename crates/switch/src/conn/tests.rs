//! Drives [`Connection`] with controller-side byte sequences built by the openflow
//! crate's own encoders (what os-ken or ovs-ofctl put on the wire) and injected time.

use super::*;
use openflow::action::Action;
use openflow::instruction::Instruction;
use openflow::match13::Match;
use openflow::model::cap;
use openflow::v13::flow_mod::FlowModCommand;
use openflow::OFP14_VERSION;

const S: u64 = NS_PER_SEC;

fn facts() -> SwitchFacts {
    SwitchFacts { datapath_id: 0x0000_0000_0000_abcd, n_buffers: 256, ..SwitchFacts::default() }
}

fn enc(f: Frame) -> Vec<u8> {
    f.encode().unwrap()
}

fn drain(c: &mut Connection) -> Vec<Vec<u8>> {
    std::iter::from_fn(|| c.poll_transmit()).collect()
}

fn events(c: &mut Connection) -> Vec<Event> {
    std::iter::from_fn(|| c.poll_event()).collect()
}

fn decode_all(c: &mut Connection) -> Vec<Frame> {
    drain(c).iter().map(|b| Frame::decode(b).unwrap()).collect()
}

fn peer_hello13() -> Vec<u8> {
    enc(Frame::v13(100, v13::Message::Hello(v13::Hello::with_versions(&[1, 4]))))
}

fn peer_hello10() -> Vec<u8> {
    enc(Frame::v10(100, v10::Message::Hello(Vec::new())))
}

/// A connection at time 0 that has negotiated `version`, with its outbox and events
/// drained.
/// A new connection whose own hello has been sent (and drained).
fn hello_sent() -> Connection {
    let mut c = Connection::new(facts(), ConnConfig::default(), 0);
    drain(&mut c);
    c
}

/// Checks that `c` sent one message: an OFPT_ERROR of `version` with `xid`.
fn sent_one_error(c: &mut Connection, version: u8, xid: u8) {
    let out = drain(c);
    assert_eq!(out.len(), 1);
    assert_eq!(&out[0][..2], &[version, 1]);
    assert_eq!(&out[0][4..12], &[0, 0, 0, xid, 0, 0, 0, 0]);
}

fn connected(version: u8) -> Connection {
    let mut c = hello_sent();
    let hello = if version == OFP10_VERSION { peer_hello10() } else { peer_hello13() };
    c.receive(&hello, 0);
    assert_eq!(events(&mut c), vec![Event::Connected { version }]);
    assert!(drain(&mut c).is_empty());
    c
}

/// The standard OFPT_ERROR bytes: header, type, code, data.
fn error_bytes(version: u8, xid: u32, ty: u16, code: u16, data: &[u8]) -> Vec<u8> {
    let mut v = vec![version, 1];
    v.extend_from_slice(&((12 + data.len()) as u16).to_be_bytes());
    v.extend_from_slice(&xid.to_be_bytes());
    v.extend_from_slice(&ty.to_be_bytes());
    v.extend_from_slice(&code.to_be_bytes());
    v.extend_from_slice(data);
    v
}

/// A 96-byte flow-mod whose command (9) is undefined.
fn bad_flow_mod(xid: u32) -> Vec<u8> {
    let fm = v13::FlowMod {
        command: FlowModCommand::Unknown(9),
        match_: Match::new(Vec::new()),
        instructions: vec![Instruction::ApplyActions(vec![
            Action::Output { port: 1, max_len: 0 },
            Action::Output { port: 2, max_len: 0 },
        ])],
        ..v13::FlowMod::default()
    };
    enc(Frame::v13(xid, v13::Message::FlowMod(fm)))
}

#[test]
fn first_message_is_hello_offering_10_13_and_14() {
    let mut c = Connection::new(facts(), ConnConfig::default(), 0);
    let out = drain(&mut c);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0][0], OFP14_VERSION, "the header names the highest version");
    // header, then element type 1, length 8, bitmap 0b110010 (versions 1, 4 and 5).
    assert_eq!(&out[0][8..], &[0, 1, 0, 8, 0, 0, 0, 0x32]);
    let f = Frame::decode(&out[0]).unwrap();
    let Message::V13(v13::Message::Hello(h)) = f.message else {
        panic!("not a hello: {f:?}");
    };
    assert_eq!(h.versions(), Some(vec![1, 4, 5]));
    assert_eq!(c.version(), None);
    assert!(events(&mut c).is_empty());
}

#[test]
fn handshake_with_13_bitmap_picks_highest_common() {
    let mut c = hello_sent();
    // An OVS 2.x-like hello: header 6 (1.5), bitmap 1.0, 1.3, 1.4, 1.5.
    let hello = enc(Frame {
        version: 6,
        xid: 9,
        message: Message::V13(v13::Message::Hello(v13::Hello::with_versions(&[1, 4, 5, 6]))),
    });
    c.receive(&hello, 0);
    assert_eq!(c.version(), Some(OFP14_VERSION));
    assert_eq!(events(&mut c), vec![Event::Connected { version: OFP14_VERSION }]);
}

#[test]
fn handshake_with_10_header_only() {
    let c = connected(OFP10_VERSION);
    assert_eq!(c.version(), Some(OFP10_VERSION));
}

#[test]
fn handshake_without_bitmap_uses_lower_header_version() {
    for (peer, want) in [(4u8, Some(4u8)), (5, Some(5)), (6, Some(5)), (1, Some(1)), (3, None)] {
        let mut c = hello_sent();
        c.receive(&[peer, 0, 0, 8, 0, 0, 0, 3], 0);
        assert_eq!(c.version(), want, "peer header version {peer}");
        if want.is_none() {
            assert_eq!(c.close_reason(), Some(&CloseReason::Incompatible { peer: vec![3] }));
            sent_one_error(&mut c, 3, 3);
        }
    }
}

/// A new connection offering only `versions`, its hello drained and returned.
fn offering(versions: &str) -> (Connection, Frame) {
    let versions = Versions::parse(versions).unwrap();
    let mut c = Connection::new(facts(), ConnConfig { versions, ..ConnConfig::default() }, 0);
    let hello = Frame::decode(&drain(&mut c)[0]).unwrap();
    (c, hello)
}

#[test]
fn an_operator_narrows_the_versions_offered_and_accepted() {
    // Only 1.0: a plain 1.0 hello, and a peer offering 1.0 and 1.3 gets 1.0.
    let (mut c, hello) = offering("OpenFlow10");
    assert_eq!((hello.version, hello.message), (1, Message::V10(v10::Message::Hello(vec![]))));
    c.receive(&peer_hello13(), 0);
    assert_eq!(c.version(), Some(OFP10_VERSION));
    // Only 1.3: a bitmap of 1.3 alone; a 1.0 peer is refused, in the peer's version.
    let (mut c, hello) = offering("OpenFlow13");
    let Message::V13(v13::Message::Hello(h)) = &hello.message else { panic!("{hello:?}") };
    assert_eq!((hello.version, h.versions()), (4, Some(vec![4])));
    c.receive(&peer_hello10(), 0);
    assert_eq!(c.close_reason(), Some(&CloseReason::Incompatible { peer: vec![1] }));
    let out = drain(&mut c);
    assert_eq!(&out[0][..2], &[1, 1]);
    let text = std::str::from_utf8(&out[0][12..]).unwrap();
    assert_eq!(
        text,
        "no common OpenFlow version: we support version 0x04, peer supports version 0x01"
    );
}

#[test]
fn bitmap_offering_only_15_is_incompatible() {
    let mut c = hello_sent();
    let hello = enc(Frame {
        version: 6,
        xid: 0x55,
        message: Message::V13(v13::Message::Hello(v13::Hello::with_versions(&[6]))),
    });
    c.receive(&hello, 0);
    assert_eq!(c.version(), None);
    assert!(c.is_closed());
    let reason = CloseReason::Incompatible { peer: vec![6] };
    assert_eq!(events(&mut c), vec![Event::Closed(reason.clone())]);
    let out = drain(&mut c);
    assert_eq!(out.len(), 1);
    let e = &out[0];
    // version 6 (the peer's), OFPT_ERROR, xid of the hello, HELLO_FAILED/INCOMPATIBLE.
    assert_eq!(&e[..2], &[6, 1]);
    assert_eq!(u16::from_be_bytes([e[2], e[3]]) as usize, e.len());
    assert_eq!(&e[4..12], &[0, 0, 0, 0x55, 0, 0, 0, 0]);
    let text = std::str::from_utf8(&e[12..]).unwrap();
    assert!(text.is_ascii() && text.contains("no common OpenFlow version"), "{text}");
    // Closed: nothing more is processed, no timer.
    c.receive(&enc(Frame::v13(1, v13::Message::FeaturesRequest)), 1);
    assert!(drain(&mut c).is_empty());
    assert!(events(&mut c).is_empty());
    assert_eq!(c.next_timeout(), None);
    assert_eq!(c.close_reason(), Some(&reason));
}

#[test]
fn message_before_hello_is_refused_and_closes() {
    let mut c = hello_sent();
    c.receive(&enc(Frame::v13(7, v13::Message::FeaturesRequest)), 0);
    assert_eq!(events(&mut c), vec![Event::Closed(CloseReason::NoHello { msg_type: 5 })]);
    sent_one_error(&mut c, 4, 7);
}

#[test]
fn one_byte_pieces() {
    let mut c = hello_sent();
    let mut stream = peer_hello13();
    stream.extend(enc(Frame::v13(21, v13::Message::EchoRequest(b"ping".to_vec()))));
    stream.extend(enc(Frame::v13(22, v13::Message::FeaturesRequest)));
    for (i, b) in stream.iter().enumerate() {
        c.receive(std::slice::from_ref(b), i as u64);
    }
    assert_eq!(c.version(), Some(OFP13_VERSION));
    let out = decode_all(&mut c);
    assert_eq!(out.len(), 2);
    assert_eq!(out[0], Frame::v13(21, v13::Message::EchoReply(b"ping".to_vec())));
    assert_eq!(out[1].xid, 22);
    assert!(matches!(out[1].message, Message::V13(v13::Message::FeaturesReply(_))));
}

#[test]
fn several_messages_in_one_read() {
    let mut c = hello_sent();
    let mut stream = peer_hello10();
    stream.extend(enc(Frame::v10(1, v10::Message::FeaturesRequest)));
    stream.extend(enc(Frame::v10(2, v10::Message::GetConfigRequest)));
    stream.extend(enc(Frame::v10(3, v10::Message::EchoRequest(vec![1, 2, 3]))));
    stream.extend(enc(Frame::v10(4, v10::Message::BarrierRequest)));
    c.receive(&stream, 0);
    let out = decode_all(&mut c);
    assert_eq!(out.iter().map(|f| f.xid).collect::<Vec<_>>(), vec![1, 2, 3]);
    assert_eq!(out[2], Frame::v10(3, v10::Message::EchoReply(vec![1, 2, 3])));
    let ev = events(&mut c);
    assert_eq!(ev.len(), 2);
    assert_eq!(ev[0], Event::Connected { version: 1 });
    let Event::Request { frame, .. } = &ev[1] else { panic!("{ev:?}") };
    assert_eq!(*frame, Frame::v10(4, v10::Message::BarrierRequest));
}

#[test]
fn echo_request_answered_with_same_xid_and_data() {
    let mut c = connected(OFP13_VERSION);
    let req = enc(Frame::v13(0xdead_beef, v13::Message::EchoRequest(vec![0xaa; 100])));
    c.receive(&req, 1);
    let out = drain(&mut c);
    assert_eq!(out.len(), 1);
    let mut want = req.clone();
    want[1] = 3; // OFPT_ECHO_REPLY
    assert_eq!(out[0], want);
    assert!(events(&mut c).is_empty());
}

#[test]
fn liveness_probe_then_death() {
    let mut c = connected(OFP13_VERSION);
    assert_eq!(c.next_timeout(), Some(5 * S));
    c.handle_timeout(5 * S - 1);
    assert!(drain(&mut c).is_empty());
    c.handle_timeout(5 * S);
    let out = decode_all(&mut c);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].message, Message::V13(v13::Message::EchoRequest(vec![])));
    assert_eq!(c.counters().probes_sent, 1);
    // One probe per silence: a second timeout call does not repeat it.
    assert_eq!(c.next_timeout(), Some(15 * S));
    c.handle_timeout(6 * S);
    assert!(drain(&mut c).is_empty());
    // The reply at 7 s restarts both deadlines and is not reported.
    let reply = enc(Frame::v13(out[0].xid, v13::Message::EchoReply(vec![])));
    c.receive(&reply, 7 * S);
    assert!(events(&mut c).is_empty());
    assert_eq!(c.next_timeout(), Some(12 * S));
    c.handle_timeout(12 * S);
    assert_eq!(decode_all(&mut c).len(), 1);
    c.handle_timeout(22 * S - 1);
    assert!(!c.is_closed());
    c.handle_timeout(22 * S);
    assert!(c.is_closed());
    assert_eq!(events(&mut c), vec![Event::Closed(CloseReason::Dead)]);
    assert_eq!(c.next_timeout(), None);
}

#[test]
fn liveness_probe_on_10_connection_and_hello_timeout() {
    let mut c = connected(OFP10_VERSION);
    c.handle_timeout(5 * S);
    assert_eq!(decode_all(&mut c)[0].message, Message::V10(v10::Message::EchoRequest(vec![])));
    // A peer that never says hello is dead after the dead interval.
    let mut c = Connection::new(facts(), ConnConfig::default(), 3 * S);
    assert_eq!(c.next_timeout(), Some(18 * S));
    c.handle_timeout(18 * S);
    assert_eq!(c.close_reason(), Some(&CloseReason::Dead));
}

#[test]
fn features_and_config_13() {
    let mut c = connected(OFP13_VERSION);
    c.receive(&enc(Frame::v13(5, v13::Message::FeaturesRequest)), 1);
    c.receive(&enc(Frame::v13(6, v13::Message::GetConfigRequest)), 1);
    let set = v13::SwitchConfig { flags: 0, miss_send_len: 0xffff };
    let set_bytes = enc(Frame::v13(7, v13::Message::SetConfig(set)));
    c.receive(&set_bytes, 1);
    c.receive(&enc(Frame::v13(8, v13::Message::GetConfigRequest)), 1);
    let out = decode_all(&mut c);
    assert_eq!(
        out,
        vec![
            Frame::v13(
                5,
                v13::Message::FeaturesReply(v13::FeaturesReply {
                    datapath_id: 0xabcd,
                    n_buffers: 256,
                    n_tables: 254,
                    capabilities: cap::FLOW_STATS
                        | cap::TABLE_STATS
                        | cap::PORT_STATS
                        | cap::GROUP_STATS,
                    ..Default::default()
                })
            ),
            Frame::v13(
                6,
                v13::Message::GetConfigReply(v13::SwitchConfig { flags: 0, miss_send_len: 128 })
            ),
            Frame::v13(8, v13::Message::GetConfigReply(set)),
        ]
    );
    assert_eq!(
        events(&mut c),
        vec![Event::Request {
            frame: Frame::v13(7, v13::Message::SetConfig(set)),
            head: set_bytes,
        }]
    );
    assert_eq!(c.switch_config(), set);
}

#[test]
fn set_config_with_bad_flags_is_refused_13() {
    let mut c = connected(OFP13_VERSION);
    let bad = enc(Frame::v13(
        9,
        v13::Message::SetConfig(v13::SwitchConfig { flags: 4, miss_send_len: 1 }),
    ));
    c.receive(&bad, 1);
    assert_eq!(drain(&mut c), vec![error_bytes(4, 9, 10, 0, &bad)]);
    assert_eq!(c.switch_config().miss_send_len, 128);
    assert!(events(&mut c).is_empty());
}

#[test]
fn fragment_handling_other_than_normal_is_refused() {
    for (v, flags) in [(OFP13_VERSION, 1u16), (OFP13_VERSION, 2), (OFP10_VERSION, 1)] {
        let mut c = connected(v);
        let bad = if v == OFP13_VERSION {
            enc(Frame::v13(
                9,
                v13::Message::SetConfig(v13::SwitchConfig { flags, miss_send_len: 1 }),
            ))
        } else {
            enc(Frame::v10(
                9,
                v10::Message::SetConfig(v10::SwitchConfig { flags, miss_send_len: 1 }),
            ))
        };
        c.receive(&bad, 1);
        // 1.0 has no OFPET_SWITCH_CONFIG_FAILED: OFPBRC_EPERM there.
        let (ty, code) = if v == OFP13_VERSION { (10, 0) } else { (1, 5) };
        assert_eq!(
            drain(&mut c),
            vec![error_bytes(v, 9, ty, code, &bad)],
            "version {v} flags {flags}"
        );
        assert_eq!(c.switch_config().miss_send_len, 128);
        assert!(events(&mut c).is_empty());
        assert!(!c.is_closed());
    }
}

#[test]
fn features_and_config_10() {
    let mut c = connected(OFP10_VERSION);
    let port = openflow::model::Port {
        port_no: 1,
        name: "eth1".into(),
        ..openflow::model::Port::default()
    };
    c.facts_mut().v10_ports = vec![port.clone()];
    c.receive(&enc(Frame::v10(5, v10::Message::FeaturesRequest)), 1);
    let set = v10::SwitchConfig { flags: 0, miss_send_len: 200 };
    c.receive(&enc(Frame::v10(6, v10::Message::SetConfig(set))), 1);
    c.receive(&enc(Frame::v10(7, v10::Message::GetConfigRequest)), 1);
    let out = decode_all(&mut c);
    assert_eq!(
        out,
        vec![
            Frame::v10(
                5,
                v10::Message::FeaturesReply(v10::FeaturesReply {
                    datapath_id: 0xabcd,
                    n_buffers: 256,
                    n_tables: 254,
                    // 1.0 has no group statistics.
                    capabilities: cap::FLOW_STATS | cap::TABLE_STATS | cap::PORT_STATS,
                    actions: 0xfff,
                    ports: vec![port],
                    ..Default::default()
                })
            ),
            Frame::v10(7, v10::Message::GetConfigReply(set)),
        ]
    );
    let ev = events(&mut c);
    assert!(
        matches!(&ev[..], [Event::Request { frame, .. }] if *frame == Frame::v10(6, v10::Message::SetConfig(set)))
    );
}

#[test]
fn malformed_flow_mod_gets_exact_error_and_connection_goes_on() {
    let mut c = connected(OFP13_VERSION);
    let fm = bad_flow_mod(0x0102_0304);
    assert!(fm.len() > 64);
    let mut stream = fm.clone();
    stream.extend(enc(Frame::v13(0x0506, v13::Message::EchoRequest(vec![7]))));
    c.receive(&stream, 1);
    let out = drain(&mut c);
    assert_eq!(out.len(), 2);
    // OFPET_FLOW_MOD_FAILED (5) / OFPFMFC_BAD_COMMAND (6), xid kept, first 64 bytes.
    assert_eq!(out[0], error_bytes(4, 0x0102_0304, 5, 6, &fm[..64]));
    assert_eq!(
        Frame::decode(&out[1]).unwrap(),
        Frame::v13(0x0506, v13::Message::EchoReply(vec![7]))
    );
    assert!(events(&mut c).is_empty());
    assert_eq!(c.counters().rx_errors, 1);
    assert!(!c.is_closed());
}

#[test]
fn malformed_flow_mod_on_10_uses_10_numbering() {
    let mut c = connected(OFP10_VERSION);
    let fm = enc(Frame::v10(
        3,
        v10::Message::FlowMod(v10::FlowMod {
            command: v10::FlowModCommand::Unknown(9),
            ..v10::FlowMod::default()
        }),
    ));
    c.receive(&fm, 1);
    // 1.0 OFPET_FLOW_MOD_FAILED (3) / OFPFMFC_BAD_COMMAND (4).
    assert_eq!(drain(&mut c), vec![error_bytes(1, 3, 3, 4, &fm[..64])]);
}

#[test]
fn wrong_version_is_bad_version_and_connection_goes_on() {
    let mut c = connected(OFP13_VERSION);
    let wrong = enc(Frame::v10(11, v10::Message::FeaturesRequest));
    c.receive(&wrong, 1);
    c.receive(&enc(Frame::v13(12, v13::Message::BarrierRequest)), 1);
    // OFPET_BAD_REQUEST (1) / OFPBRC_BAD_VERSION (0).
    assert_eq!(drain(&mut c), vec![error_bytes(4, 11, 1, 0, &wrong)]);
    assert_eq!(c.barrier_pending(), Some(12));
}

#[test]
fn peer_error_is_reported_not_answered() {
    let mut c = connected(OFP13_VERSION);
    let e = error_bytes(4, 77, 1, 1, &[4, 99, 0, 8, 0, 0, 0, 1]);
    c.receive(&e, 1);
    assert!(drain(&mut c).is_empty());
    assert!(matches!(&events(&mut c)[..], [Event::Request { frame, .. }] if frame.xid == 77));
    // And one of the wrong version is dropped and counted, not answered.
    let mut e10 = e.clone();
    e10[0] = 1;
    c.receive(&e10, 1);
    assert!(drain(&mut c).is_empty());
    assert_eq!(c.counters().rx_errors, 1);
}

#[test]
fn length_below_8_is_bad_len_and_closes() {
    let mut c = connected(OFP13_VERSION);
    c.receive(&[4, 5, 0, 7, 0, 0, 0, 42], 1);
    assert_eq!(drain(&mut c), vec![error_bytes(4, 42, 1, 6, &[4, 5, 0, 7, 0, 0, 0, 42])]);
    let ev = events(&mut c);
    assert!(
        matches!(&ev[..], [Event::Closed(CloseReason::Framing(e))] if e.kind == ErrorKind::BAD_REQUEST_BAD_LEN)
    );
}

#[test]
fn barrier_holds_later_messages_until_answered() {
    let mut c = connected(OFP13_VERSION);
    let fm = v13::FlowMod::default();
    let mut stream = enc(Frame::v13(1, v13::Message::FlowMod(fm.clone())));
    stream.extend(enc(Frame::v13(2, v13::Message::BarrierRequest)));
    stream.extend(enc(Frame::v13(3, v13::Message::EchoRequest(vec![]))));
    stream.extend(enc(Frame::v13(4, v13::Message::BarrierRequest)));
    c.receive(&stream, 1);
    let ev = events(&mut c);
    let frames: Vec<&Frame> = ev
        .iter()
        .map(|e| match e {
            Event::Request { frame, .. } => frame,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        frames,
        vec![
            &Frame::v13(1, v13::Message::FlowMod(fm)),
            &Frame::v13(2, v13::Message::BarrierRequest)
        ]
    );
    // The echo after the barrier waits for the barrier reply.
    assert!(drain(&mut c).is_empty());
    assert_eq!(c.barrier_pending(), Some(2));
    // A barrier reply with another xid does not release it.
    c.send(Message::V13(v13::Message::BarrierReply), 99).unwrap();
    assert_eq!(c.barrier_pending(), Some(2));
    drain(&mut c);
    c.send(Message::V13(v13::Message::BarrierReply), 2).unwrap();
    let out = decode_all(&mut c);
    assert_eq!(
        out,
        vec![
            Frame::v13(2, v13::Message::BarrierReply),
            Frame::v13(3, v13::Message::EchoReply(vec![])),
        ]
    );
    assert_eq!(c.barrier_pending(), Some(4));
    assert!(matches!(&events(&mut c)[..], [Event::Request { frame, .. }] if frame.xid == 4));
}

#[test]
fn send_checks_state_and_version_and_send_error_keeps_xid() {
    let mut c = Connection::new(facts(), ConnConfig::default(), 0);
    assert_eq!(c.send(Message::V13(v13::Message::BarrierReply), 1), Err(SendError::NotConnected));
    let mut c = connected(OFP13_VERSION);
    assert_eq!(
        c.send(Message::V10(v10::Message::BarrierReply), 1),
        Err(SendError::WrongVersion { negotiated: 4, message: 1 })
    );
    let fm = enc(Frame::v13(0x77, v13::Message::FlowMod(v13::FlowMod::default())));
    c.receive(&fm, 1);
    let Some(Event::Request { head, .. }) = c.poll_event() else { panic!("no flow-mod event") };
    let err = OfpError::new(ErrorKind::FLOW_MOD_FAILED_TABLE_FULL, "full");
    c.send_error(&err, &head).unwrap();
    assert_eq!(drain(&mut c), vec![error_bytes(4, 0x77, 5, 1, &fm)]);
    let xid = c.send_async(Message::V13(v13::Message::BarrierReply)).unwrap();
    assert_eq!(Frame::decode(&drain(&mut c)[0]).unwrap().xid, xid);
}

/// Mutated and random byte streams, cut at pseudo-random points: nothing panics, and
/// every queued message is whole (its header length is its size).
#[test]
fn mutated_streams_never_panic() {
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut base = peer_hello13();
    base.extend(bad_flow_mod(1));
    base.extend(enc(Frame::v13(2, v13::Message::FeaturesRequest)));
    base.extend(enc(Frame::v13(3, v13::Message::EchoRequest(vec![1; 20]))));
    base.extend(enc(Frame::v13(4, v13::Message::BarrierRequest)));
    base.extend(enc(Frame::v13(5, v13::Message::GetConfigRequest)));
    for round in 0..2000u64 {
        let mut stream = base.clone();
        for _ in 0..(rnd() % 4) {
            let at = (rnd() as usize) % stream.len();
            stream[at] ^= (rnd() as u8) | 1;
        }
        if round % 10 == 0 {
            stream = (0..(rnd() % 200)).map(|_| rnd() as u8).collect();
        }
        let mut c = Connection::new(facts(), ConnConfig::default(), 0);
        let mut pos = 0;
        let mut t = 0;
        while pos < stream.len() {
            let n = (1 + rnd() as usize % 40).min(stream.len() - pos);
            c.receive(&stream[pos..pos + n], t);
            pos += n;
            t += S;
            c.handle_timeout(t);
            while let Some(ev) = c.poll_event() {
                if let Event::Request { frame, .. } = ev {
                    if frame.message == Message::V13(v13::Message::BarrierRequest) {
                        c.send(Message::V13(v13::Message::BarrierReply), frame.xid).unwrap();
                    }
                }
            }
        }
        for m in drain(&mut c) {
            assert!(m.len() >= 8);
            assert_eq!(u16::from_be_bytes([m[2], m[3]]) as usize, m.len());
        }
    }
}
