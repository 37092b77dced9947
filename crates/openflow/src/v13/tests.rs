//! Message-level tests: dispatch, framing end to end, truncation and trailing bytes,
//! random input, and the validate paths reached through `Frame::decode_validated`.

use super::strategy::arb_message;
use super::*;
use crate::header::{OFP13_VERSION, OFP14_VERSION};
use crate::wire::{encoded, Reader};
use crate::{Frame, Message as AnyMessage};
use proptest::prelude::*;

/// A whole 1.3 message of type `ty` with `body`, header length set.
fn frame_bytes(ty: u8, body: &[u8]) -> Vec<u8> {
    let mut v = vec![OFP13_VERSION, ty, 0, 0, 0, 0, 0, 42];
    v.extend_from_slice(body);
    let len = v.len() as u16;
    v[2..4].copy_from_slice(&len.to_be_bytes());
    v
}

fn decode_body(ty: u8, body: &[u8]) -> Result<Message, OfpError> {
    Message::decode(ty, &mut Reader::new(body))
}

fn body_of(m: &Message) -> Vec<u8> {
    encoded(|w| m.encode_body(w))
}

/// Bytes of the part of each body that precedes any variable-length content.
fn fixed_len(ty: u8) -> usize {
    match ty {
        t13::ERROR => 4,
        t13::EXPERIMENTER => 8,
        t13::FEATURES_REPLY => 24,
        t13::GET_CONFIG_REPLY | t13::SET_CONFIG => 4,
        t13::PACKET_IN | t13::PACKET_OUT => 16,
        t13::FLOW_REMOVED | t13::FLOW_MOD => 40,
        t13::PORT_STATUS => 72,
        t13::GROUP_MOD | t13::METER_MOD | t13::TABLE_MOD => 8,
        t13::PORT_MOD => 32,
        t13::QUEUE_GET_CONFIG_REQUEST | t13::QUEUE_GET_CONFIG_REPLY => 8,
        t13::ROLE_REQUEST | t13::ROLE_REPLY => 16,
        t13::GET_ASYNC_REPLY | t13::SET_ASYNC => 24,
        _ => 0,
    }
}

/// Whether the body has exactly `fixed_len` bytes.
fn is_fixed_size(ty: u8) -> bool {
    matches!(
        ty,
        t13::FEATURES_REQUEST
            | t13::FEATURES_REPLY
            | t13::GET_CONFIG_REQUEST
            | t13::GET_CONFIG_REPLY
            | t13::SET_CONFIG
            | t13::PORT_STATUS
            | t13::PORT_MOD
            | t13::TABLE_MOD
            | t13::BARRIER_REQUEST
            | t13::BARRIER_REPLY
            | t13::QUEUE_GET_CONFIG_REQUEST
            | t13::ROLE_REQUEST
            | t13::ROLE_REPLY
            | t13::GET_ASYNC_REQUEST
            | t13::GET_ASYNC_REPLY
            | t13::SET_ASYNC
    )
}

#[test]
fn names_and_type_numbers() {
    // 1.3's types 0..=29 and 1.4's 30..=34 all have names.
    for ty in 0..=34u8 {
        let name = type_name(ty).unwrap();
        assert!(name.starts_with("OFPT_"), "{name}");
    }
    assert_eq!(type_name(30), Some("OFPT_ROLE_STATUS"));
    assert_eq!(type_name(34), Some("OFPT_BUNDLE_ADD_MESSAGE"));
    assert_eq!(type_name(35), None);
    assert_eq!(Message::FlowMod(FlowMod::default()).name(), "OFPT_FLOW_MOD");
    assert_eq!(Message::BarrierReply.msg_type(), 21);
    assert_eq!(Message::QueueGetConfigRequest(1).name(), "OFPT_QUEUE_GET_CONFIG_REQUEST");
}

#[test]
fn unknown_type_is_bad_type() {
    for ty in [30u8, 99, 255] {
        let e = decode_body(ty, &[]).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BAD_REQUEST_BAD_TYPE);
        let e = Frame::decode(&frame_bytes(ty, &[0; 8])).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BAD_REQUEST_BAD_TYPE);
    }
}

/// A frame of `version` of type `ty` with `body`, header length set.
fn frame_bytes_in(version: u8, ty: u8, body: &[u8]) -> Vec<u8> {
    let mut v = frame_bytes(ty, body);
    v[0] = version;
    v
}

/// 1.4's types are no 1.3 messages, 1.3's queue configuration no 1.4 message: decoding
/// such a frame is `OFPBRC_BAD_TYPE`, and so is encoding one.
#[test]
fn types_outside_the_frame_version_are_bad_type() {
    let bundle_ctrl = [0, 0, 0, 1, 0, 0, 0, 0];
    let role_status = [0u8; 16];
    let table_status = [3, 0, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0];
    let forward = [5, 20, 0, 8, 0, 0, 0, 1];
    let add = [0, 0, 0, 1, 0, 0, 0, 0, 5, 20, 0, 8, 0, 0, 0, 42];
    let cases: [(u8, &[u8]); 5] = [
        (t13::ROLE_STATUS, &role_status),
        (t13::TABLE_STATUS, &table_status),
        (t13::REQUESTFORWARD, &forward),
        (t13::BUNDLE_CONTROL, &bundle_ctrl),
        (t13::BUNDLE_ADD_MESSAGE, &add),
    ];
    for (ty, body) in cases {
        let f = Frame::decode(&frame_bytes_in(OFP14_VERSION, ty, body)).unwrap();
        assert_eq!(f.msg_type(), ty);
        let e = Frame::decode(&frame_bytes_in(OFP13_VERSION, ty, body)).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BAD_REQUEST_BAD_TYPE, "type {ty}");
        let AnyMessage::V13(m) = f.message else { panic!("not a 1.3/1.4 message") };
        assert!(!m.in_version(OFP13_VERSION));
        let e = Frame::v13(1, m).encode().unwrap_err();
        assert_eq!(e.kind, ErrorKind::BAD_REQUEST_BAD_TYPE, "type {ty}");
    }
    let queue_request = [0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0];
    let b = frame_bytes_in(OFP14_VERSION, t13::QUEUE_GET_CONFIG_REQUEST, &queue_request);
    assert_eq!(Frame::decode(&b).unwrap_err().kind, ErrorKind::BAD_REQUEST_BAD_TYPE);
    let b = frame_bytes_in(OFP14_VERSION, t13::QUEUE_GET_CONFIG_REPLY, &queue_request);
    assert_eq!(Frame::decode(&b).unwrap_err().kind, ErrorKind::BAD_REQUEST_BAD_TYPE);
    let e = Frame::v14(1, Message::QueueGetConfigRequest(1)).encode().unwrap_err();
    assert_eq!(e.kind, ErrorKind::BAD_REQUEST_BAD_TYPE);
    for ty in [35u8, 99] {
        let e = Frame::decode(&frame_bytes_in(OFP14_VERSION, ty, &[])).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BAD_REQUEST_BAD_TYPE);
    }
}

/// The bundle add's inner message must have its xid, a check that needs the header.
#[test]
fn bundle_add_inner_xid() {
    let mut add = vec![0, 0, 0, 1, 0, 0, 0, 0, 5, 20, 0, 8, 0, 0, 0, 42];
    assert!(Frame::decode_validated(&frame_bytes_in(OFP14_VERSION, t13::BUNDLE_ADD_MESSAGE, &add))
        .is_ok());
    add[15] = 41;
    let b = frame_bytes_in(OFP14_VERSION, t13::BUNDLE_ADD_MESSAGE, &add);
    assert!(Frame::decode(&b).is_ok());
    let e = Frame::decode_validated(&b).unwrap_err();
    assert_eq!(e.kind, ErrorKind::BUNDLE_FAILED_MSG_BAD_XID);
}

#[test]
fn empty_messages_reject_bodies() {
    for ty in [
        t13::FEATURES_REQUEST,
        t13::GET_CONFIG_REQUEST,
        t13::BARRIER_REQUEST,
        t13::BARRIER_REPLY,
        t13::GET_ASYNC_REQUEST,
    ] {
        assert!(decode_body(ty, &[]).is_ok());
        let e = decode_body(ty, &[0]).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BAD_REQUEST_BAD_LEN, "type {ty}");
    }
}

#[test]
fn hello_of_any_version_decodes_as_elements() {
    let mut b = frame_bytes(t13::HELLO, &[0, 1, 0, 8, 0, 0, 0, 0x70]);
    b[0] = 6;
    let f = Frame::decode(&b).unwrap();
    assert_eq!(f.version, 6);
    match &f.message {
        AnyMessage::V13(Message::Hello(h)) => assert_eq!(h.versions(), Some(vec![4, 5, 6])),
        other => panic!("{other:?}"),
    }
    assert_eq!(f.encode().unwrap(), b);
}

/// Hand-built messages from the spec layouts, each decoded to the expected value and
/// re-encoded to the same bytes.
#[test]
fn spec_bytes_through_frame() {
    let cases: Vec<(Vec<u8>, Message)> = vec![
        (frame_bytes(t13::ECHO_REQUEST, b"ping"), Message::EchoRequest(b"ping".to_vec())),
        (frame_bytes(t13::BARRIER_REQUEST, &[]), Message::BarrierRequest),
        (
            frame_bytes(t13::SET_CONFIG, &[0, 0, 0xff, 0xe5]),
            Message::SetConfig(SwitchConfig { flags: 0, miss_send_len: 0xffe5 }),
        ),
        (
            frame_bytes(t13::QUEUE_GET_CONFIG_REQUEST, &[0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]),
            Message::QueueGetConfigRequest(0xffff_ffff),
        ),
        (
            frame_bytes(t13::ROLE_REQUEST, &[0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5]),
            Message::RoleRequest(Role { role: ControllerRole::Slave, generation_id: 5 }),
        ),
        (
            frame_bytes(t13::ERROR, &[0, 1, 0, 6, 4, 14]),
            Message::Error(ErrorMsg::Standard {
                kind: ErrorKind::BAD_REQUEST_BAD_LEN,
                data: vec![4, 14],
            }),
        ),
        (
            frame_bytes(t13::TABLE_MOD, &[0xff, 0, 0, 0, 0, 0, 0, 0]),
            Message::TableMod(TableMod { table_id: 0xff, config: 0, properties: vec![] }),
        ),
    ];
    for (bytes, want) in cases {
        let f = Frame::decode(&bytes).unwrap();
        assert_eq!(f.xid, 42);
        assert_eq!(f.message, AnyMessage::V13(want.clone()), "{}", want.name());
        assert_eq!(f.encode().unwrap(), bytes, "{}", want.name());
    }
}

/// Every validate path reached through `Frame::decode_validated`.
#[test]
fn validate_through_frame() {
    let cases: Vec<(Vec<u8>, ErrorKind)> = vec![
        (frame_bytes(t13::SET_CONFIG, &[0, 4, 0, 128]), ErrorKind::SWITCH_CONFIG_FAILED_BAD_FLAGS),
        (
            frame_bytes(t13::ROLE_REQUEST, &[0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
            ErrorKind::ROLE_REQUEST_FAILED_BAD_ROLE,
        ),
        (
            frame_bytes(
                t13::PORT_MOD,
                &[
                    0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 0, 0, 0, 0, 0, 1, 0, 0,
                    0, 1, 0, 0, 0, 0, 0, 0, 0, 0,
                ],
            ),
            ErrorKind::PORT_MOD_FAILED_BAD_PORT,
        ),
        (
            frame_bytes(t13::TABLE_MOD, &[0, 0, 0, 0, 0, 0, 0, 8]),
            ErrorKind::TABLE_MOD_FAILED_BAD_CONFIG,
        ),
        (
            frame_bytes(
                t13::PACKET_OUT,
                &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0],
            ),
            ErrorKind::BAD_REQUEST_BAD_PORT,
        ),
        (
            frame_bytes(t13::METER_MOD, &[0, 7, 0, 1, 0, 0, 0, 1]),
            ErrorKind::METER_MOD_FAILED_BAD_COMMAND,
        ),
        (
            frame_bytes(t13::GROUP_MOD, &[0, 0, 9, 0, 0, 0, 0, 1]),
            ErrorKind::GROUP_MOD_FAILED_BAD_TYPE,
        ),
    ];
    for (bytes, want) in cases {
        assert!(Frame::decode(&bytes).is_ok());
        let e = Frame::decode_validated(&bytes).unwrap_err();
        assert_eq!(e.kind, want, "{e}");
    }
    // Replies and asynchronous messages are never rejected by validate.
    let role_reply =
        frame_bytes(t13::ROLE_REPLY, &[0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    assert!(Frame::decode_validated(&role_reply).is_ok());
    let config_reply = frame_bytes(t13::GET_CONFIG_REPLY, &[0xff, 0xff, 0, 0]);
    assert!(Frame::decode_validated(&config_reply).is_ok());
}

/// encode → decode is the identity for `f`, a frame of `m`, and bytes → value → bytes
/// too; the header names `f`'s version and `m`'s type.
fn check_frame_roundtrip(f: &Frame, m: &Message) -> Result<(), TestCaseError> {
    let bytes = f.encode().unwrap();
    prop_assert_eq!(bytes[0], f.version);
    prop_assert_eq!(bytes[1], m.msg_type());
    let got = Frame::decode(&bytes).unwrap();
    prop_assert_eq!(&got, f);
    prop_assert_eq!(got.encode().unwrap(), bytes);
    Ok(())
}

/// Gives a port-status body (of 1.3 or 1.4: the name is at bytes 24..40 in both) an
/// ASCII, NUL-terminated port name, which is all that survives a round trip (see
/// `random_bodies`); other types' bodies are left as they are.
fn ascii_port_name(ty: u8, body: &mut [u8]) {
    if ty == t13::PORT_STATUS {
        for b in body.iter_mut().skip(24).take(16) {
            *b &= 0x7f;
        }
        if let Some(b) = body.get_mut(39) {
            *b = 0;
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// encode → decode is the identity, through the whole frame.
    #[test]
    fn frame_roundtrip(m in arb_message(), xid in any::<u32>()) {
        check_frame_roundtrip(&Frame::v13(xid, m.clone()), &m)?;
    }

    /// The same for 1.4 frames and 1.4's layouts.
    #[test]
    fn frame_roundtrip_14(m in super::strategy::arb_message_in(OFP14_VERSION), xid in any::<u32>()) {
        check_frame_roundtrip(&Frame::v14(xid, m.clone()), &m)?;
    }

    /// Random bodies of every type in 1.4 frames never panic; what decodes re-encodes to
    /// something that decodes to the same value.
    #[test]
    fn random_bodies_14(ty in 0u8..40, mut body in proptest::collection::vec(any::<u8>(), 0..200)) {
        ascii_port_name(ty, &mut body);
        let b = frame_bytes_in(OFP14_VERSION, ty, &body);
        let _ = Frame::decode_validated(&b);
        if let Ok(f) = Frame::decode(&b) {
            let again = Frame::decode(&f.encode().unwrap()).unwrap();
            prop_assert_eq!(again, f);
        }
    }

    /// Cutting a body anywhere never panics; a cut inside the fixed part, or any cut of
    /// a fixed-size body, is `OFPBRC_BAD_LEN`; a cut that still decodes re-encodes to a
    /// message that decodes to itself. Extra bytes after a fixed-size body are
    /// `OFPBRC_BAD_LEN` too.
    #[test]
    fn truncation_and_trailing_bytes(m in arb_message()) {
        let ty = m.msg_type();
        let body = body_of(&m);
        for n in 0..body.len() {
            let res = decode_body(ty, &body[..n]);
            let framed = Frame::decode(&frame_bytes(ty, &body[..n]));
            prop_assert_eq!(res.is_ok(), framed.is_ok());
            match res {
                Err(e) => {
                    if n < fixed_len(ty) || is_fixed_size(ty) {
                        prop_assert_eq!(e.kind, ErrorKind::BAD_REQUEST_BAD_LEN, "{} cut at {}", m.name(), n);
                    }
                }
                Ok(cut) => {
                    prop_assert!(n >= fixed_len(ty) && !is_fixed_size(ty), "{} cut at {} accepted", m.name(), n);
                    let again = decode_body(ty, &body_of(&cut)).unwrap();
                    prop_assert_eq!(again, cut);
                }
            }
        }
        if is_fixed_size(ty) {
            let mut longer = body.clone();
            longer.push(0);
            let e = decode_body(ty, &longer).unwrap_err();
            prop_assert_eq!(e.kind, ErrorKind::BAD_REQUEST_BAD_LEN);
        }
    }

    /// Random bodies of every type never panic, in decode or validate; what decodes
    /// re-encodes to something that decodes to the same value.
    ///
    /// Port-status bodies get an ASCII, NUL-terminated port name: `Port` (port.rs)
    /// keeps a name as lossy UTF-8 and encodes at most 15 bytes of it, so a 16-byte or
    /// non-UTF-8 name read from the wire does not survive a round trip.
    #[test]
    fn random_bodies(ty in 0u8..32, mut body in proptest::collection::vec(any::<u8>(), 0..160)) {
        ascii_port_name(ty, &mut body);
        if let Ok(m) = decode_body(ty, &body) {
            let _ = m.validate();
            let again = decode_body(ty, &body_of(&m)).unwrap();
            prop_assert_eq!(again, m);
        }
    }
}
