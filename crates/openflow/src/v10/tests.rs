//! Message-level tests of the OpenFlow 1.0 codec: round trips through whole frames,
//! truncation and trailing bytes, every error path's exact kind and its 1.0 number, and
//! (ignored by default) the os-ken 1.0 captures.

use super::action10::Action;
use super::match10::{wildcards, Match};
use super::port::{ofpp, port_to_v13};
use super::stats::{stats_type, StatsRequestBody};
use super::*;
use crate::error::ErrorKind;
use crate::wire::{encoded, MacAddr, Reader};
use crate::{Frame, OFP10_VERSION};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;

fn body(m: &Message) -> Vec<u8> {
    encoded(|w| m.encode_body(w))
}

fn decode_body(msg_type: u8, b: &[u8]) -> Result<Message, OfpError> {
    Message::decode(msg_type, &mut Reader::new(b))
}

fn frame_bytes(m: Message) -> Vec<u8> {
    Frame::v10(0x1234_5678, m).encode().unwrap()
}

/// Messages whose body has a fixed size, with that size.
fn fixed_size(m: &Message) -> Option<usize> {
    Some(match m {
        Message::FeaturesRequest
        | Message::GetConfigRequest
        | Message::BarrierRequest
        | Message::BarrierReply => 0,
        Message::GetConfigReply(_) | Message::SetConfig(_) => 4,
        Message::QueueGetConfigRequest(_) => 4,
        Message::FlowRemoved(_) => 80,
        Message::PortStatus(_) => 56,
        Message::PortMod(_) => 24,
        _ => return None,
    })
}

proptest! {
    #[test]
    fn frame_roundtrip(m in strategy::arb_message(), xid in any::<u32>()) {
        let f = Frame::v10(xid, m.clone());
        let bytes = f.encode().unwrap();
        prop_assert_eq!(bytes[0], OFP10_VERSION);
        prop_assert_eq!(bytes[1], m.msg_type());
        prop_assert_eq!(usize::from(u16::from_be_bytes([bytes[2], bytes[3]])), bytes.len());
        let back = Frame::decode(&bytes).unwrap();
        prop_assert_eq!(&back, &f);
        prop_assert_eq!(&back.encode().unwrap(), &bytes);
        if let Some(n) = fixed_size(&m) {
            prop_assert_eq!(bytes.len(), 8 + n);
        }
    }

    #[test]
    fn truncation_never_panics_and_never_yields_the_message(m in strategy::arb_message()) {
        let b = body(&m);
        for n in 0..b.len() {
            match decode_body(m.msg_type(), &b[..n]) {
                Ok(other) => prop_assert_ne!(&other, &m),
                Err(e) => prop_assert!(
                    e.kind.ty == crate::error::error_type::BAD_REQUEST
                        || e.kind.ty == crate::error::error_type::BAD_ACTION,
                    "{}", e
                ),
            }
        }
        if fixed_size(&m).is_some() {
            for n in 0..b.len() {
                let e = decode_body(m.msg_type(), &b[..n]).unwrap_err();
                prop_assert_eq!(e.kind, ErrorKind::BAD_REQUEST_BAD_LEN);
            }
        }
    }

    #[test]
    fn trailing_bytes_after_fixed_messages(m in strategy::arb_message(), extra in 1usize..9) {
        if fixed_size(&m).is_some() {
            let mut b = body(&m);
            b.resize(b.len() + extra, 0);
            let e = decode_body(m.msg_type(), &b).unwrap_err();
            prop_assert_eq!(e.kind, ErrorKind::BAD_REQUEST_BAD_LEN);
            prop_assert!(e.detail.contains(m.name()), "{}", e);
        }
    }

    #[test]
    fn random_bodies_never_panic(t in 0u8..24, b in proptest::collection::vec(any::<u8>(), 0..200)) {
        if let Ok(m) = decode_body(t, &b) {
            // Whatever decodes re-encodes into canonical bytes (pads zero, names cut at
            // 15/31/255 bytes and made UTF-8), which decode and re-encode unchanged.
            let canonical = body(&m);
            let m2 = decode_body(t, &canonical).unwrap();
            prop_assert_eq!(body(&m2), canonical);
            let _ = m.validate();
        }
    }

    #[test]
    fn random_frames_never_panic(b in proptest::collection::vec(any::<u8>(), 0..120)) {
        let mut b = b;
        if b.len() >= 8 {
            b[0] = OFP10_VERSION;
            let len = b.len() as u16;
            b[2..4].copy_from_slice(&len.to_be_bytes());
        }
        let _ = Frame::decode_validated(&b);
    }
}

#[test]
fn strategy_covers_every_message_type() {
    let mut runner = TestRunner::deterministic();
    let strat = strategy::arb_message();
    let mut seen = [false; 22];
    for _ in 0..3000 {
        let m = strat.new_tree(&mut runner).unwrap().current();
        seen[usize::from(m.msg_type())] = true;
    }
    let missing: Vec<_> = (0..22).filter(|&t| !seen[t]).collect();
    assert!(missing.is_empty(), "types never generated: {missing:?}");
}

#[test]
fn names_and_types() {
    let cases = [
        (Message::Hello(vec![]), 0, "OFPT_HELLO"),
        (Message::FeaturesRequest, 5, "OFPT_FEATURES_REQUEST"),
        (Message::FlowMod(FlowMod::default()), 14, "OFPT_FLOW_MOD"),
        (Message::PortMod(port_mod()), 15, "OFPT_PORT_MOD"),
        (Message::BarrierRequest, 18, "OFPT_BARRIER_REQUEST"),
        (Message::BarrierReply, 19, "OFPT_BARRIER_REPLY"),
        (Message::QueueGetConfigRequest(1), 20, "OFPT_QUEUE_GET_CONFIG_REQUEST"),
    ];
    for (m, t, n) in cases {
        assert_eq!(m.msg_type(), t);
        assert_eq!(m.name(), n);
    }
    for t in 0..22 {
        assert!(name_of(t).is_some_and(|n| n.starts_with("OFPT_")));
    }
    assert_eq!(name_of(22), None);
}

fn port_mod() -> PortMod {
    PortMod { port_no: 1, hw_addr: MacAddr([2, 0, 0, 0, 0, 1]), config: 1, mask: 1, advertise: 0 }
}

#[test]
fn unknown_message_type_is_bad_type() {
    for t in 22..=255u8 {
        let e = decode_body(t, &[]).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BAD_REQUEST_BAD_TYPE);
        assert_eq!(e.kind.to_v10(), (1, 1));
    }
    // Through a whole frame, too.
    let e = Frame::decode(&[1, 22, 0, 8, 0, 0, 0, 1]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::BAD_REQUEST_BAD_TYPE);
}

#[test]
fn short_variable_messages_are_bad_len() {
    let cases: &[(u8, &[u8])] = &[
        (t10::ERROR, &[0, 1, 0]),
        (t10::VENDOR, &[0, 0, 0x23]),
        (t10::FEATURES_REPLY, &[0; 23]),
        (t10::PACKET_IN, &[0; 9]),
        (t10::PACKET_OUT, &[0; 7]),
        (t10::FLOW_MOD, &[0; 63]),
        (t10::STATS_REQUEST, &[0, 0, 0]),
        (t10::STATS_REPLY, &[0, 2, 0, 0, 0]),
        (t10::QUEUE_GET_CONFIG_REPLY, &[0; 7]),
    ];
    for (t, b) in cases {
        let e = decode_body(*t, b).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BAD_REQUEST_BAD_LEN, "type {t}");
        assert_eq!(e.kind.to_v10(), (1, 6));
    }
}

#[test]
fn empty_and_opaque_bodies() {
    assert_eq!(decode_body(t10::HELLO, &[]).unwrap(), Message::Hello(vec![]));
    assert_eq!(decode_body(t10::HELLO, &[0, 1, 0, 8]).unwrap(), Message::Hello(vec![0, 1, 0, 8]));
    assert_eq!(
        decode_body(t10::ECHO_REQUEST, b"ping").unwrap(),
        Message::EchoRequest(b"ping".to_vec())
    );
    assert_eq!(
        decode_body(t10::VENDOR, &[0, 0, 0x23, 0x20, 0, 0, 0, 10]).unwrap(),
        Message::Vendor(Vendor { vendor: 0x2320, data: vec![0, 0, 0, 10] })
    );
    assert_eq!(
        decode_body(t10::ERROR, &[0, 2, 0, 4, 1, 14]).unwrap(),
        Message::Error(ErrorMsg { err_type: 2, code: 4, data: vec![1, 14] })
    );
}

/// A flow mod built by hand from the 1.0 specification's layout.
#[test]
fn flow_mod_wire_bytes() {
    let fm = FlowMod {
        match_: Match {
            wildcards: wildcards::ALL & !wildcards::IN_PORT,
            in_port: 1,
            ..Match::all()
        },
        cookie: 0x0102_0304_0506_0708,
        command: FlowModCommand::ModifyStrict,
        idle_timeout: 10,
        hard_timeout: 20,
        priority: 0x8000,
        buffer_id: 0xffff_ffff,
        out_port: crate::action::port::ANY,
        flags: flow::flow_mod_flags::SEND_FLOW_REM,
        instructions: vec![Action::Output { port: 2, max_len: 0 }],
        ..FlowMod::default()
    };
    let bytes = frame_bytes(Message::FlowMod(fm.clone()));
    let mut want = vec![1, 14, 0, 80, 0x12, 0x34, 0x56, 0x78];
    want.extend_from_slice(&[0x00, 0x3f, 0xff, 0xfe, 0, 1]);
    want.resize(8 + 40, 0);
    want.extend_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8]); // cookie
    want.extend_from_slice(&[0, 2, 0, 10, 0, 20, 0x80, 0]); // command, timeouts, priority
    want.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 1]); // buffer, out, flags
    want.extend_from_slice(&[0, 0, 0, 8, 0, 2, 0, 0]); // output:2
    assert_eq!(bytes, want);
    let f = Frame::decode_validated(&want).unwrap();
    assert_eq!(f.message, crate::Message::V10(Message::FlowMod(fm)));
}

#[test]
fn features_reply_wire_bytes() {
    let fr = FeaturesReply {
        datapath_id: 0xff,
        n_buffers: 0x1234_5678,
        n_tables: 0xff,
        capabilities: 0xa9,
        actions: 0x843,
        auxiliary_id: 0,
        undefined: None,
        ports: vec![Port::from_wire(
            crate::OFP10_VERSION,
            crate::model::port::Wire {
                port_no: 7,
                hw_addr: MacAddr([0xf2, 0x0b, 0xa4, 0xd0, 0x3f, 0x70]),
                name: "Port7".into(),
                features: [0x10, 0x288, 0x280, 0x288],
                ..Default::default()
            },
        )],
    };
    let b = frame_bytes(Message::FeaturesReply(fr));
    assert_eq!(b.len(), 8 + 24 + 48);
    assert_eq!(
        &b[8..32],
        &[
            0, 0, 0, 0, 0, 0, 0, 0xff, 0x12, 0x34, 0x56, 0x78, 0xff, 0, 0, 0, 0, 0, 0, 0xa9, 0, 0,
            0x08, 0x43
        ]
    );
    assert_eq!(&b[32..40], &[0, 7, 0xf2, 0x0b, 0xa4, 0xd0, 0x3f, 0x70]);
    assert_eq!(&b[40..46], b"Port7\0");
}

#[test]
fn validation_paths() {
    let bad_cmd =
        Message::FlowMod(FlowMod { command: FlowModCommand::Unknown(9), ..FlowMod::default() });
    let e = bad_cmd.validate().unwrap_err();
    assert_eq!(e.kind, ErrorKind::FLOW_MOD_FAILED_BAD_COMMAND);
    assert_eq!(e.kind.to_v10(), (3, 4));
    // The unknown command decodes (nothing is lost), and fails validation.
    let bytes = frame_bytes(bad_cmd.clone());
    assert_eq!(Frame::decode(&bytes).unwrap().message, crate::Message::V10(bad_cmd));
    assert_eq!(
        Frame::decode_validated(&bytes).unwrap_err().kind,
        ErrorKind::FLOW_MOD_FAILED_BAD_COMMAND
    );
    let out = |port| Action::Output { port, max_len: 0 };
    for port in [0, ofpp::NONE, 0xff01] {
        let m = Message::FlowMod(FlowMod {
            instructions: vec![out(1), out(port)],
            ..FlowMod::default()
        });
        assert_eq!(m.validate().unwrap_err().kind, ErrorKind::BAD_ACTION_BAD_OUT_PORT);
        let po = Message::PacketOut(PacketOut {
            buffer_id: 0xffff_ffff,
            in_port: port_to_v13(ofpp::CONTROLLER),
            actions: vec![out(port)],
            data: vec![],
        });
        assert_eq!(po.validate().unwrap_err().kind, ErrorKind::BAD_ACTION_BAD_OUT_PORT);
    }
    let po = Message::PacketOut(PacketOut {
        buffer_id: 0xffff_ffff,
        in_port: port_to_v13(ofpp::NONE),
        actions: vec![Action::SetVlanVid(5000)],
        data: vec![],
    });
    let e = po.validate().unwrap_err();
    assert_eq!(e.kind, ErrorKind::BAD_ACTION_BAD_ARGUMENT);
    assert_eq!(e.kind.to_v10(), (2, 5));
    assert!(Message::FlowMod(FlowMod {
        instructions: vec![out(ofpp::FLOOD), out(ofpp::CONTROLLER), out(3)],
        ..FlowMod::default()
    })
    .validate()
    .is_ok());
    assert!(Message::PortMod(port_mod()).validate().is_ok());
}

#[test]
fn error_kinds_map_to_the_right_v10_codes() {
    // (kind this codec returns, 1.0 type, 1.0 code, 1.0 name)
    let cases = [
        (ErrorKind::BAD_REQUEST_BAD_TYPE, 1, 1), // OFPBRC_BAD_TYPE
        (ErrorKind::BAD_REQUEST_BAD_MULTIPART, 1, 2), // OFPBRC_BAD_STAT
        (ErrorKind::BAD_REQUEST_BAD_EXPERIMENTER, 1, 3), // OFPBRC_BAD_VENDOR
        (ErrorKind::BAD_REQUEST_BAD_LEN, 1, 6),  // OFPBRC_BAD_LEN
        (ErrorKind::BAD_ACTION_BAD_TYPE, 2, 0),  // OFPBAC_BAD_TYPE
        (ErrorKind::BAD_ACTION_BAD_LEN, 2, 1),   // OFPBAC_BAD_LEN
        (ErrorKind::BAD_ACTION_BAD_OUT_PORT, 2, 4), // OFPBAC_BAD_OUT_PORT
        (ErrorKind::BAD_ACTION_BAD_ARGUMENT, 2, 5), // OFPBAC_BAD_ARGUMENT
        (ErrorKind::FLOW_MOD_FAILED_BAD_TIMEOUT, 3, 3), // OFPFMFC_BAD_EMERG_TIMEOUT
        (ErrorKind::FLOW_MOD_FAILED_BAD_COMMAND, 3, 4), // OFPFMFC_BAD_COMMAND
    ];
    for (k, t, c) in cases {
        assert_eq!(k.to_v10(), (t, c), "{k}");
    }
}

#[test]
fn stats_errors_through_messages() {
    let e = decode_body(t10::STATS_REQUEST, &[0, 9, 0, 0]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::BAD_REQUEST_BAD_MULTIPART);
    let desc = Message::StatsRequest(StatsRequest { flags: 0, body: StatsRequestBody::Desc });
    let mut b = body(&desc);
    assert_eq!(b, [0, stats_type::DESC as u8, 0, 0]);
    b.push(0);
    let e = decode_body(t10::STATS_REQUEST, &b).unwrap_err();
    assert_eq!(e.kind, ErrorKind::BAD_REQUEST_BAD_LEN);
}
