use super::strategy::{arb_action, arb_valid_action, arb_valid_action_set};
use super::*;
use crate::error::{ErrorKind, OfpError};
use crate::oxm::Oxm;
use crate::wire::{MacAddr, Writer};
use proptest::prelude::*;
use proptest::sample::Index;

use super::list_tests::{self as list, encode};

fn decode(bytes: &[u8]) -> Result<Vec<Action>, OfpError> {
    list::decode(bytes)
}

fn decode_err(bytes: &[u8]) -> ErrorKind {
    list::decode_err::<Action>(bytes)
}

/// An OXM header: class, field, hasmask, length.
fn oxm_header(class: u16, field: u8, has_mask: bool, len: u8) -> [u8; 4] {
    let [c0, c1] = class.to_be_bytes();
    [c0, c1, field << 1 | u8::from(has_mask), len]
}

/// A set-field action of length `len`: its header, the OXM header `oxm`, then `rest`.
fn set_field(len: u8, oxm: [u8; 4], rest: &[u8]) -> Vec<u8> {
    [&[0, 25, 0, len][..], &oxm, rest].concat()
}

#[test]
fn fixed_actions_have_the_spec_layout() {
    let cases: Vec<(Action, Vec<u8>)> = vec![
        (
            Action::Output { port: 3, max_len: 0xffe5 },
            vec![0, 0, 0, 16, 0, 0, 0, 3, 0xff, 0xe5, 0, 0, 0, 0, 0, 0],
        ),
        (Action::CopyTtlOut, vec![0, 11, 0, 8, 0, 0, 0, 0]),
        (Action::CopyTtlIn, vec![0, 12, 0, 8, 0, 0, 0, 0]),
        (Action::SetMplsTtl(0x40), vec![0, 15, 0, 8, 0x40, 0, 0, 0]),
        (Action::DecMplsTtl, vec![0, 16, 0, 8, 0, 0, 0, 0]),
        (Action::PushVlan(0x8100), vec![0, 17, 0, 8, 0x81, 0, 0, 0]),
        (Action::PopVlan, vec![0, 18, 0, 8, 0, 0, 0, 0]),
        (Action::PushMpls(0x8847), vec![0, 19, 0, 8, 0x88, 0x47, 0, 0]),
        (Action::PopMpls(0x0800), vec![0, 20, 0, 8, 0x08, 0, 0, 0]),
        (Action::SetQueue(0x01020304), vec![0, 21, 0, 8, 1, 2, 3, 4]),
        (Action::Group(7), vec![0, 22, 0, 8, 0, 0, 0, 7]),
        (Action::SetNwTtl(9), vec![0, 23, 0, 8, 9, 0, 0, 0]),
        (Action::DecNwTtl, vec![0, 24, 0, 8, 0, 0, 0, 0]),
        (Action::PushPbb(0x88e7), vec![0, 26, 0, 8, 0x88, 0xe7, 0, 0]),
        (Action::PopPbb, vec![0, 27, 0, 8, 0, 0, 0, 0]),
        (
            Action::Experimenter { experimenter: 0x2320, data: vec![] },
            vec![0xff, 0xff, 0, 8, 0, 0, 0x23, 0x20],
        ),
        (
            Action::Experimenter { experimenter: 0x2320, data: vec![0, 0x26, 1, 2, 3, 4, 5, 6] },
            vec![0xff, 0xff, 0, 16, 0, 0, 0x23, 0x20, 0, 0x26, 1, 2, 3, 4, 5, 6],
        ),
    ];
    list::assert_layouts(cases);
}

#[test]
fn padding_is_ignored_on_read_and_zeroed_on_write() {
    let bytes = [0, 0, 0, 16, 0, 0, 0, 1, 0, 0x80, 9, 9, 9, 9, 9, 9];
    let a = decode(&bytes).unwrap();
    assert_eq!(a, vec![Action::Output { port: 1, max_len: 0x80 }]);
    assert_eq!(&encode(&a)[10..], &[0; 6]);
}

#[test]
fn experimenter_data_is_padded_on_write() {
    let a = Action::Experimenter { experimenter: 1, data: vec![0xaa, 0xbb, 0xcc] };
    let bytes = [0xff, 0xff, 0, 16, 0, 0, 0, 1, 0xaa, 0xbb, 0xcc, 0, 0, 0, 0, 0];
    list::assert_encodes(&a, &bytes);
}

#[test]
fn set_field_other_class_layout() {
    // NXM_1 class, field 33, 4-byte payload: TLV of 8 bytes, action of 16 (4 of padding).
    let oxm = Oxm::Other { class: 1, field: 33, has_mask: false, payload: vec![1, 2, 3, 4] };
    let mut w = Writer::new();
    oxm.encode(&mut w);
    let tlv = w.into_vec();
    let a = Action::SetField(oxm);
    let bytes = encode(std::slice::from_ref(&a));
    assert_eq!(bytes.len(), a.wire_len());
    assert_eq!(&bytes[..4], &[0, 25, 0, bytes.len() as u8]);
    assert_eq!(&bytes[4..4 + tlv.len()], &tlv[..]);
    assert!(bytes[4 + tlv.len()..].iter().all(|&b| b == 0));
    assert!(bytes.len() - 4 - tlv.len() < 8);
}

#[test]
fn header_and_length_errors() {
    let cases = [
        // Fewer than 4 bytes of header.
        vec![0, 0, 0],
        // Header only, claiming 8 bytes.
        vec![0, 18, 0, 8],
        // len below 8, zero, not a multiple of 8.
        vec![0, 18, 0, 4, 0, 0, 0, 0],
        vec![0, 18, 0, 0, 0, 0, 0, 0],
        vec![0xff, 0xff, 0, 12, 0, 0, 0, 1, 0, 0, 0, 0],
        // len past the end of the list.
        vec![0, 0, 0, 16, 0, 0, 0, 1, 0, 0, 0, 0],
        // Fixed-size actions with the wrong length: output, group, pop_vlan.
        vec![0, 0, 0, 8, 0, 0, 0, 1],
        [&[0, 22, 0, 16, 0, 0, 0, 1][..], &[0; 8]].concat(),
        [&[0, 18, 0, 24][..], &[0; 20]].concat(),
        // A good action followed by a truncated one.
        vec![0, 18, 0, 8, 0, 0, 0, 0, 0, 18],
    ];
    list::assert_all_fail::<Action>(&cases, ErrorKind::BAD_ACTION_BAD_LEN);
}

#[test]
fn unknown_types_are_bad_type() {
    // 1..=10 are OpenFlow 1.0/1.1 action types, absent from 1.3; 13, 14 and 28 are unused.
    list::assert_unknown_types::<Action>(
        &[1, 2, 10, 13, 14, 28, 0x1000, 0xfffe],
        ErrorKind::BAD_ACTION_BAD_TYPE,
    );
}

#[test]
fn set_field_length_errors() {
    let cases = [
        // OXM claims 4 bytes of value, the action has room for none after the header.
        set_field(8, oxm_header(0x8000, 5, false, 4), &[]),
        // OXM length byte 255 in a 16-byte action.
        set_field(16, oxm_header(0x8000, 5, false, 255), &[0; 8]),
        // A 6-byte eth_type TLV in a 24-byte action: 14 bytes of padding.
        set_field(
            24,
            oxm_header(0x8000, 5, false, 2),
            &[8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
        ),
    ];
    list::assert_all_fail::<Action>(&cases, ErrorKind::BAD_ACTION_BAD_SET_LEN);
}

#[test]
fn set_field_with_mask_is_bad_argument() {
    // ipv4_src/255.255.255.0: hasmask, 8 bytes: TLV of 12 bytes in a 16-byte action.
    let b = set_field(16, oxm_header(0x8000, 11, true, 8), &[10, 0, 0, 1, 255, 255, 255, 0]);
    assert_eq!(decode_err(&b), ErrorKind::BAD_ACTION_BAD_SET_ARGUMENT);
}

#[test]
fn set_field_of_unknown_basic_field_is_bad_set_type() {
    // Basic field 60 does not exist in 1.3.
    let b = set_field(16, oxm_header(0x8000, 60, false, 4), &[0; 8]);
    assert_eq!(decode_err(&b), ErrorKind::BAD_ACTION_BAD_SET_TYPE);
}

fn hex(s: &str) -> Vec<u8> {
    crate::text::decode_hex(s).unwrap()
}

#[test]
fn set_field_vectors_from_os_ken() {
    // Set-field actions as os-ken's of13 flow-mod captures carry them.
    let cases = [
        ("0019001080000c020102000000000000", Oxm::VlanVid(0x0102, None)),
        ("00190010800008060102030405060000", Oxm::EthSrc(MacAddr([1, 2, 3, 4, 5, 6]), None)),
        ("0019001080001804c0a8020900000000", Oxm::Ipv4Dst([192, 168, 2, 9].into(), None)),
        (
            "00190010ffff00074f4e46000a000100",
            Oxm::Other {
                class: 0xffff,
                field: 0,
                has_mask: false,
                payload: vec![0x4f, 0x4e, 0x46, 0x00, 0x0a, 0x00, 0x01],
            },
        ),
    ];
    for (h, oxm) in cases.clone() {
        let bytes = hex(h);
        let a = Action::SetField(oxm);
        assert_eq!(decode(&bytes).unwrap(), vec![a.clone()], "{h}");
        assert_eq!(encode(std::slice::from_ref(&a)), bytes, "{h}");
        assert_eq!(a.wire_len(), bytes.len());
    }
    // The vlan_vid vector lacks OFPVID_PRESENT: it decodes, but a switch refuses it.
    let a = decode(&hex(cases[0].0)).unwrap();
    assert_eq!(Action::validate_list(&a).unwrap_err().kind, ErrorKind::BAD_ACTION_BAD_SET_ARGUMENT);
}

#[test]
fn set_field_oxm_errors_are_renumbered() {
    let bad_len = [
        // eth_type with a 3-byte value: the OXM codec's BAD_LEN becomes BAD_SET_LEN.
        set_field(16, oxm_header(0x8000, 5, false, 3), &[8, 0, 0, 0, 0, 0, 0, 0]),
        // An experimenter-class OXM too short for its experimenter id.
        set_field(16, oxm_header(0xffff, 1, false, 2), &[0; 8]),
    ];
    list::assert_all_fail::<Action>(&bad_len, ErrorKind::BAD_ACTION_BAD_SET_LEN);
    let bad_argument = [
        // A mask on a field that cannot have one: still a masked set-field.
        set_field(16, oxm_header(0x8000, 5, true, 4), &[8, 0, 0xff, 0xff, 0, 0, 0, 0]),
        // A masked NXM field.
        set_field(16, oxm_header(0x0001, 33, true, 8), &[0; 8]),
    ];
    list::assert_all_fail::<Action>(&bad_argument, ErrorKind::BAD_ACTION_BAD_SET_ARGUMENT);
}

#[test]
fn set_field_of_a_decoded_basic_field_validates() {
    // ipv6_dst, 16 bytes: TLV of 20, action of 24 (no padding).
    let b = set_field(
        24,
        oxm_header(0x8000, 27, false, 16),
        &[0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
    );
    let a = decode(&b).unwrap();
    assert_eq!(a, vec![Action::SetField(Oxm::Ipv6Dst("2001:db8::1".parse().unwrap(), None))]);
    Action::validate_list(&a).unwrap();
    assert_eq!(encode(&a), b);
    // in_port decodes (the wire form is fine) but may not be set.
    let b = set_field(16, oxm_header(0x8000, 0, false, 4), &[0, 0, 0, 1, 0, 0, 0, 0]);
    let a = decode(&b).unwrap();
    assert_eq!(Action::validate_list(&a).unwrap_err().kind, ErrorKind::BAD_ACTION_BAD_SET_TYPE);
}

fn validate_err(a: Action) -> ErrorKind {
    a.validate().expect_err("validate must fail").kind
}

/// Each action passes [`Action::validate`].
fn assert_valid(actions: impl IntoIterator<Item = Action>) {
    for a in actions {
        a.validate().unwrap_or_else(|e| panic!("{a:?}: {e}"));
    }
}

/// Each action fails [`Action::validate`] with `kind`.
fn assert_invalid(actions: impl IntoIterator<Item = Action>, kind: ErrorKind) {
    for a in actions {
        assert_eq!(validate_err(a.clone()), kind, "{a:?}");
    }
}

#[test]
fn validate_output_ports() {
    let output = |port| Action::Output { port, max_len: 0 };
    let ok = [
        1,
        2,
        0xfffe,
        port::MAX,
        port::IN_PORT,
        port::TABLE,
        port::NORMAL,
        port::FLOOD,
        port::ALL,
        port::CONTROLLER,
        port::LOCAL,
    ];
    assert_valid(ok.map(output));
    let bad = [0, port::ANY, port::MAX + 1, 0xffff_fff0, port::IN_PORT - 1];
    assert_invalid(bad.map(output), ErrorKind::BAD_ACTION_BAD_OUT_PORT);
}

#[test]
fn validate_groups() {
    assert_valid([0, OFPG_MAX].map(Action::Group));
    assert_invalid(
        [OFPG_MAX + 1, OFPG_ALL, OFPG_ANY].map(Action::Group),
        ErrorKind::BAD_ACTION_BAD_OUT_GROUP,
    );
}

#[test]
fn validate_push_ethertypes() {
    assert_valid([
        Action::PushVlan(0x8100),
        Action::PushVlan(0x88a8),
        Action::PushMpls(0x8847),
        Action::PushMpls(0x8848),
        Action::PushPbb(0x88e7),
        Action::PopMpls(0x0800),
        Action::SetQueue(u32::MAX),
        Action::Experimenter { experimenter: 0, data: vec![] },
    ]);
    let bad = [
        Action::PushVlan(0x0800),
        Action::PushVlan(0x8847),
        Action::PushMpls(0x8100),
        Action::PushMpls(0),
        Action::PushPbb(0x8100),
    ];
    assert_invalid(bad, ErrorKind::BAD_ACTION_BAD_ARGUMENT);
}

#[test]
fn validate_set_field_types() {
    let bad = [
        Oxm::InPort(1),
        Oxm::InPhyPort(1),
        Oxm::Metadata(1, None),
        Oxm::Ipv6Exthdr(1, None),
        Oxm::Other { class: 1, field: 33, has_mask: false, payload: vec![0; 4] },
        Oxm::Other { class: 0xffff, field: 1, has_mask: false, payload: vec![0; 8] },
    ];
    assert_invalid(bad.map(Action::SetField), ErrorKind::BAD_ACTION_BAD_SET_TYPE);
}

#[test]
fn validate_set_field_arguments() {
    let ok = [
        Oxm::VlanVid(0x1000, None),
        Oxm::VlanVid(0x1fff, None),
        Oxm::VlanPcp(7),
        Oxm::IpDscp(63),
        Oxm::IpEcn(3),
        Oxm::MplsLabel((1 << 20) - 1),
        Oxm::MplsTc(7),
        Oxm::MplsBos(1),
        Oxm::Ipv6Flabel((1 << 20) - 1, None),
        Oxm::PbbIsid((1 << 24) - 1, None),
        Oxm::EthDst(MacAddr::BROADCAST, None),
        Oxm::TunnelId(u64::MAX, None),
    ];
    assert_valid(ok.map(Action::SetField));
    let bad = [
        Oxm::VlanVid(5, None),
        Oxm::VlanVid(0x2000 | 0x1000, None),
        Oxm::VlanPcp(8),
        Oxm::IpDscp(64),
        Oxm::IpEcn(4),
        Oxm::MplsLabel(1 << 20),
        Oxm::MplsTc(8),
        Oxm::MplsBos(2),
        Oxm::Ipv6Flabel(1 << 20, None),
        Oxm::PbbIsid(1 << 24, None),
        Oxm::EthDst(MacAddr::ZERO, Some(MacAddr::BROADCAST)),
        Oxm::Ipv4Src([10, 0, 0, 1].into(), Some([255, 0, 0, 0].into())),
        Oxm::VlanVid(0x1001, Some(0x1fff)),
    ];
    assert_invalid(bad.map(Action::SetField), ErrorKind::BAD_ACTION_BAD_SET_ARGUMENT);
}

#[test]
fn validate_list_reports_the_first_failure() {
    let list = [Action::PopVlan, Action::Group(OFPG_ANY), Action::Output { port: 0, max_len: 0 }];
    assert_eq!(Action::validate_list(&list).unwrap_err().kind, ErrorKind::BAD_ACTION_BAD_OUT_GROUP);
    Action::validate_list(&list[..1]).unwrap();
    Action::validate_list(&[]).unwrap();
}

#[test]
fn action_set_holds_one_action_per_slot() {
    let ok = [
        Action::Output { port: 1, max_len: 0 },
        Action::SetField(Oxm::EthDst(MacAddr::ZERO, None)),
        Action::SetField(Oxm::EthSrc(MacAddr::ZERO, None)),
        Action::PushVlan(0x8100),
        Action::PushMpls(0x8847),
        Action::Experimenter { experimenter: 0x2320, data: vec![0; 8] },
        Action::Experimenter { experimenter: 0x2320, data: vec![1; 8] },
    ];
    Action::validate_action_set(&ok).unwrap();
    let too_many = ErrorKind::BAD_ACTION_TOO_MANY;
    let two_outputs =
        [Action::Output { port: 1, max_len: 0 }, Action::Output { port: 2, max_len: 0 }];
    assert_eq!(Action::validate_action_set(&two_outputs).unwrap_err().kind, too_many);
    // The same list is a fine apply-actions list.
    Action::validate_list(&two_outputs).unwrap();
    let same_field = [
        Action::SetField(Oxm::EthDst(MacAddr::ZERO, None)),
        Action::SetField(Oxm::EthDst(MacAddr::BROADCAST, None)),
    ];
    assert_eq!(Action::validate_action_set(&same_field).unwrap_err().kind, too_many);
    let two_pops = [Action::PopVlan, Action::PopVlan];
    assert_eq!(Action::validate_action_set(&two_pops).unwrap_err().kind, too_many);
    // Invalid actions are reported with their own kind before the slot check.
    let bad = [Action::Group(OFPG_ALL), Action::Group(OFPG_ALL)];
    assert_eq!(
        Action::validate_action_set(&bad).unwrap_err().kind,
        ErrorKind::BAD_ACTION_BAD_OUT_GROUP
    );
}

list::list_properties!(Action, arb_action(), max: 6, bytes: 80, short: ErrorKind::BAD_ACTION_BAD_LEN);

proptest! {
    #[test]
    fn valid_actions_validate(a in arb_valid_action()) {
        prop_assert!(a.validate().is_ok(), "{:?}: {:?}", a, a.validate());
    }

    #[test]
    fn valid_action_sets_validate(list in arb_valid_action_set()) {
        prop_assert!(Action::validate_action_set(&list).is_ok());
    }

    #[test]
    fn reserved_gap_ports_are_rejected(port in (port::MAX + 1)..port::IN_PORT) {
        prop_assert_eq!(
            validate_err(Action::Output { port, max_len: 0 }),
            ErrorKind::BAD_ACTION_BAD_OUT_PORT
        );
    }

    #[test]
    fn groups_above_max_are_rejected(g in (OFPG_MAX + 1)..=u32::MAX) {
        prop_assert_eq!(validate_err(Action::Group(g)), ErrorKind::BAD_ACTION_BAD_OUT_GROUP);
    }

    #[test]
    fn other_push_ethertypes_are_rejected(et in any::<u16>()) {
        prop_assume!(et != 0x8100 && et != 0x88a8);
        prop_assert_eq!(validate_err(Action::PushVlan(et)), ErrorKind::BAD_ACTION_BAD_ARGUMENT);
    }
}
