use super::strategy::{arb_instruction, arb_valid_instructions};
use super::*;
use crate::action::OFPG_ANY;
use crate::oxm::Oxm;
use crate::wire::MacAddr;
use proptest::prelude::*;

fn encode(insts: &[Instruction]) -> Vec<u8> {
    let mut w = Writer::new();
    Instruction::encode_list(insts, &mut w);
    w.into_vec()
}

fn decode(bytes: &[u8]) -> Result<Vec<Instruction>, OfpError> {
    Instruction::decode_list(&mut Reader::new(bytes))
}

fn decode_err(bytes: &[u8]) -> ErrorKind {
    decode(bytes).expect_err("decode must fail").kind
}

fn validate_err(insts: &[Instruction], table_id: u8) -> ErrorKind {
    Instruction::validate_list(insts, table_id)
        .expect_err("validate must fail")
        .kind
}

const OUTPUT_1: [u8; 16] = [0, 0, 0, 16, 0, 0, 0, 1, 0xff, 0xff, 0, 0, 0, 0, 0, 0];

#[test]
fn instructions_have_the_spec_layout() {
    let out1 = Action::Output {
        port: 1,
        max_len: 0xffff,
    };
    let cases: Vec<(Instruction, Vec<u8>)> = vec![
        (Instruction::GotoTable(5), vec![0, 1, 0, 8, 5, 0, 0, 0]),
        (
            Instruction::WriteMetadata {
                metadata: 0x0102030405060708,
                mask: 0xff,
            },
            vec![
                0, 2, 0, 24, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 0, 0, 0, 0xff,
            ],
        ),
        (
            Instruction::WriteActions(vec![]),
            vec![0, 3, 0, 8, 0, 0, 0, 0],
        ),
        (
            Instruction::ApplyActions(vec![out1.clone()]),
            [&[0, 4, 0, 24, 0, 0, 0, 0][..], &OUTPUT_1[..]].concat(),
        ),
        (
            Instruction::WriteActions(vec![Action::PopVlan, out1]),
            [
                &[0, 3, 0, 32, 0, 0, 0, 0][..],
                &[0, 18, 0, 8, 0, 0, 0, 0],
                &OUTPUT_1[..],
            ]
            .concat(),
        ),
        (Instruction::ClearActions, vec![0, 5, 0, 8, 0, 0, 0, 0]),
        (Instruction::Meter(9), vec![0, 6, 0, 8, 0, 0, 0, 9]),
        (
            Instruction::Experimenter {
                experimenter: 0x00d0f0,
                data: vec![],
            },
            vec![0xff, 0xff, 0, 8, 0, 0, 0xd0, 0xf0],
        ),
        (
            Instruction::Experimenter {
                experimenter: 1,
                data: vec![7; 8],
            },
            vec![0xff, 0xff, 0, 16, 0, 0, 0, 1, 7, 7, 7, 7, 7, 7, 7, 7],
        ),
    ];
    for (inst, bytes) in cases {
        assert_eq!(encode(std::slice::from_ref(&inst)), bytes, "{inst:?}");
        assert_eq!(inst.wire_len(), bytes.len(), "{inst:?}");
        assert_eq!(
            u16::from_be_bytes([bytes[0], bytes[1]]),
            inst.instruction_type()
        );
        assert_eq!(decode(&bytes).unwrap(), vec![inst]);
    }
}

#[test]
fn experimenter_data_is_padded_on_write() {
    let i = Instruction::Experimenter {
        experimenter: 1,
        data: vec![1, 2],
    };
    assert_eq!(
        encode(std::slice::from_ref(&i)),
        [0xff, 0xff, 0, 16, 0, 0, 0, 1, 1, 2, 0, 0, 0, 0, 0, 0]
    );
    assert_eq!(i.wire_len(), 16);
}

#[test]
fn length_errors() {
    let bad_len = ErrorKind::BAD_INSTRUCTION_BAD_LEN;
    assert_eq!(decode_err(&[0, 5, 0]), bad_len);
    assert_eq!(decode_err(&[0, 5, 0, 8]), bad_len);
    assert_eq!(decode_err(&[0, 5, 0, 4, 0, 0, 0, 0]), bad_len);
    assert_eq!(decode_err(&[0, 5, 0, 0, 0, 0, 0, 0]), bad_len);
    assert_eq!(decode_err(&[0, 4, 0, 12, 0, 0, 0, 0, 0, 0, 0, 0]), bad_len);
    assert_eq!(decode_err(&[0, 4, 0, 16, 0, 0, 0, 0]), bad_len);
    let sixteen = |ty: u8| {
        let mut b = vec![0, ty, 0, 16];
        b.extend_from_slice(&[0; 12]);
        decode_err(&b)
    };
    assert_eq!(sixteen(1), bad_len, "goto_table");
    assert_eq!(sixteen(2), bad_len, "write_metadata");
    assert_eq!(sixteen(5), bad_len, "clear_actions");
    assert_eq!(sixteen(6), bad_len, "meter");
    // A good instruction then a truncated one.
    assert_eq!(decode_err(&[0, 5, 0, 8, 0, 0, 0, 0, 0, 1, 0, 8]), bad_len);
}

#[test]
fn unknown_types_are_unknown_inst() {
    for ty in [0u16, 7, 8, 0x100, 0xfffe] {
        let [a, b] = ty.to_be_bytes();
        assert_eq!(
            decode_err(&[a, b, 0, 8, 0, 0, 0, 0]),
            ErrorKind::BAD_INSTRUCTION_UNKNOWN_INST,
            "type {ty}"
        );
    }
}

#[test]
fn action_errors_keep_their_kind() {
    // apply_actions holding an action of unknown type 1.
    let b = [0, 4, 0, 16, 0, 0, 0, 0, 0, 1, 0, 8, 0, 0, 0, 0];
    assert_eq!(decode_err(&b), ErrorKind::BAD_ACTION_BAD_TYPE);
    // write_actions whose output action runs past the instruction (not past the buffer).
    let mut b = vec![0, 3, 0, 16, 0, 0, 0, 0];
    b.extend_from_slice(&OUTPUT_1);
    assert_eq!(decode_err(&b), ErrorKind::BAD_ACTION_BAD_LEN);
    // apply_actions with a 4-byte trailing fragment of an action.
    let b = [0, 4, 0, 16, 0, 0, 0, 0, 0, 18, 0, 8, 0, 0, 0, 0];
    decode(&b).unwrap();
    let b = [0, 4, 0, 16, 0, 0, 0, 0, 0, 18, 0, 0, 0, 0, 0, 0];
    assert_eq!(decode_err(&b), ErrorKind::BAD_ACTION_BAD_LEN);
}

#[test]
fn duplicate_instructions() {
    let dup = ErrorKind::BAD_INSTRUCTION_DUP_INST;
    assert_eq!(
        validate_err(&[Instruction::ClearActions, Instruction::ClearActions], 0),
        dup
    );
    assert_eq!(
        validate_err(
            &[
                Instruction::ApplyActions(vec![]),
                Instruction::Meter(1),
                Instruction::ApplyActions(vec![Action::PopVlan]),
            ],
            0
        ),
        dup
    );
    assert_eq!(
        validate_err(&[Instruction::GotoTable(1), Instruction::GotoTable(2)], 0),
        dup
    );
    let exp = |id| Instruction::Experimenter {
        experimenter: id,
        data: vec![],
    };
    assert_eq!(validate_err(&[exp(1), exp(2)], 0), dup);
    // Write and apply are different types.
    Instruction::validate_list(
        &[
            Instruction::ApplyActions(vec![Action::PopVlan]),
            Instruction::WriteActions(vec![Action::PopVlan]),
            Instruction::ClearActions,
            Instruction::WriteMetadata {
                metadata: 1,
                mask: 1,
            },
            Instruction::Meter(1),
            exp(1),
            Instruction::GotoTable(1),
        ],
        0,
    )
    .unwrap();
    Instruction::validate_list(&[], 0xfe).unwrap();
}

#[test]
fn goto_table_must_go_forward() {
    let bad = ErrorKind::BAD_INSTRUCTION_BAD_TABLE_ID;
    Instruction::validate_list(&[Instruction::GotoTable(1)], 0).unwrap();
    Instruction::validate_list(&[Instruction::GotoTable(0xfe)], 0xfd).unwrap();
    assert_eq!(validate_err(&[Instruction::GotoTable(0)], 0), bad);
    assert_eq!(validate_err(&[Instruction::GotoTable(3)], 5), bad);
    assert_eq!(validate_err(&[Instruction::GotoTable(5)], 5), bad);
    assert_eq!(validate_err(&[Instruction::GotoTable(0xff)], 0), bad);
    assert_eq!(validate_err(&[Instruction::GotoTable(0xfe)], 0xfe), bad);
}

#[test]
fn meter_ids() {
    let bad = ErrorKind::METER_MOD_FAILED_INVALID_METER;
    for id in [1, 100, OFPM_MAX, OFPM_SLOWPATH, OFPM_CONTROLLER] {
        Instruction::validate_list(&[Instruction::Meter(id)], 0).unwrap();
    }
    for id in [
        0,
        OFPM_MAX + 1,
        0xffff_fff0,
        crate::v13::meter_mod::OFPM_ALL,
    ] {
        assert_eq!(
            validate_err(&[Instruction::Meter(id)], 0),
            bad,
            "meter {id:#x}"
        );
    }
}

#[test]
fn actions_are_validated() {
    let bad_group = [Instruction::ApplyActions(vec![
        Action::PopVlan,
        Action::Group(OFPG_ANY),
    ])];
    assert_eq!(
        validate_err(&bad_group, 0),
        ErrorKind::BAD_ACTION_BAD_OUT_GROUP
    );
    let bad_set = [Instruction::WriteActions(vec![Action::SetField(
        Oxm::InPort(1),
    )])];
    assert_eq!(
        validate_err(&bad_set, 0),
        ErrorKind::BAD_ACTION_BAD_SET_TYPE
    );
    let two_outputs = vec![
        Action::Output {
            port: 1,
            max_len: 0,
        },
        Action::Output {
            port: 2,
            max_len: 0,
        },
    ];
    Instruction::validate_list(&[Instruction::ApplyActions(two_outputs.clone())], 0).unwrap();
    assert_eq!(
        validate_err(&[Instruction::WriteActions(two_outputs)], 0),
        ErrorKind::BAD_ACTION_TOO_MANY
    );
    let two_fields = vec![
        Action::SetField(Oxm::EthSrc(MacAddr::ZERO, None)),
        Action::SetField(Oxm::EthDst(MacAddr::ZERO, None)),
    ];
    Instruction::validate_list(&[Instruction::WriteActions(two_fields)], 0).unwrap();
}

proptest! {
    #[test]
    fn value_bytes_value(list in proptest::collection::vec(arb_instruction(), 0..5)) {
        let bytes = encode(&list);
        prop_assert_eq!(bytes.len(), Instruction::list_wire_len(&list));
        prop_assert_eq!(bytes.len() % 8, 0);
        prop_assert_eq!(decode(&bytes)?, list);
    }

    #[test]
    fn bytes_value_bytes(list in proptest::collection::vec(arb_instruction(), 1..5)) {
        let bytes = encode(&list);
        prop_assert_eq!(encode(&decode(&bytes)?), bytes);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..96)) {
        if let Ok(list) = decode(&bytes) {
            let again = encode(&list);
            prop_assert_eq!(again.len(), bytes.len());
            prop_assert_eq!(decode(&again)?, list);
        }
    }

    #[test]
    fn mutated_encodings_never_panic(
        list in proptest::collection::vec(arb_instruction(), 1..4),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
    ) {
        let mut bytes = encode(&list);
        for (at, v) in flips {
            let i = at.index(bytes.len());
            bytes[i] = v;
        }
        if let Ok(l) = decode(&bytes) {
            prop_assert_eq!(encode(&l).len(), bytes.len());
        }
    }

    #[test]
    fn truncated_instruction_fails(i in arb_instruction(), cut in any::<prop::sample::Index>()) {
        let bytes = encode(std::slice::from_ref(&i));
        let n = cut.index(bytes.len());
        if n > 0 {
            let e = decode(&bytes[..n]).unwrap_err();
            prop_assert_eq!(e.kind, ErrorKind::BAD_INSTRUCTION_BAD_LEN);
        }
    }

    #[test]
    fn valid_instructions_validate(
        (table_id, list) in any::<u8>().prop_flat_map(|t| (Just(t), arb_valid_instructions(t)))
    ) {
        let r = Instruction::validate_list(&list, table_id);
        prop_assert!(r.is_ok(), "{:?}: {:?}", list, r);
    }

    #[test]
    fn backward_goto_is_rejected(table_id in any::<u8>(), back in any::<u8>()) {
        let next = back.min(table_id);
        prop_assert_eq!(
            validate_err(&[Instruction::GotoTable(next)], table_id),
            ErrorKind::BAD_INSTRUCTION_BAD_TABLE_ID
        );
    }
}
