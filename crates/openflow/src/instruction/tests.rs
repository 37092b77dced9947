use super::strategy::{arb_instruction, arb_valid_instructions};
use super::*;
use crate::action::OFPG_ANY;
use crate::oxm::Oxm;
use crate::wire::MacAddr;
use proptest::prelude::*;
use proptest::sample::Index;

use crate::action::list_tests as list;

fn decode(bytes: &[u8]) -> Result<Vec<Instruction>, OfpError> {
    list::decode(bytes)
}

fn decode_err(bytes: &[u8]) -> ErrorKind {
    list::decode_err::<Instruction>(bytes)
}

fn validate_err(insts: &[Instruction], table_id: u8) -> ErrorKind {
    Instruction::validate_list(insts, table_id).expect_err("validate must fail").kind
}

const OUTPUT_1: [u8; 16] = [0, 0, 0, 16, 0, 0, 0, 1, 0xff, 0xff, 0, 0, 0, 0, 0, 0];

#[test]
fn instructions_have_the_spec_layout() {
    let out1 = Action::Output { port: 1, max_len: 0xffff };
    let cases: Vec<(Instruction, Vec<u8>)> = vec![
        (Instruction::GotoTable(5), vec![0, 1, 0, 8, 5, 0, 0, 0]),
        (
            Instruction::WriteMetadata { metadata: 0x0102030405060708, mask: 0xff },
            vec![0, 2, 0, 24, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 0, 0, 0, 0xff],
        ),
        (Instruction::WriteActions(vec![]), vec![0, 3, 0, 8, 0, 0, 0, 0]),
        (
            Instruction::ApplyActions(vec![out1.clone()]),
            [&[0, 4, 0, 24, 0, 0, 0, 0][..], &OUTPUT_1[..]].concat(),
        ),
        (
            Instruction::WriteActions(vec![Action::PopVlan, out1]),
            [&[0, 3, 0, 32, 0, 0, 0, 0][..], &[0, 18, 0, 8, 0, 0, 0, 0], &OUTPUT_1[..]].concat(),
        ),
        (Instruction::ClearActions, vec![0, 5, 0, 8, 0, 0, 0, 0]),
        (Instruction::Meter(9), vec![0, 6, 0, 8, 0, 0, 0, 9]),
        (
            Instruction::Experimenter { experimenter: 0x00d0f0, data: vec![] },
            vec![0xff, 0xff, 0, 8, 0, 0, 0xd0, 0xf0],
        ),
        (
            Instruction::Experimenter { experimenter: 1, data: vec![7; 8] },
            vec![0xff, 0xff, 0, 16, 0, 0, 0, 1, 7, 7, 7, 7, 7, 7, 7, 7],
        ),
    ];
    list::assert_layouts(cases);
}

#[test]
fn experimenter_data_is_padded_on_write() {
    let i = Instruction::Experimenter { experimenter: 1, data: vec![1, 2] };
    let bytes = [0xff, 0xff, 0, 16, 0, 0, 0, 1, 1, 2, 0, 0, 0, 0, 0, 0];
    list::assert_encodes(&i, &bytes);
}

#[test]
fn length_errors() {
    let sixteen = |ty: u8| [&[0, ty, 0, 16][..], &[0; 12]].concat();
    let cases = [
        vec![0, 5, 0],
        vec![0, 5, 0, 8],
        vec![0, 5, 0, 4, 0, 0, 0, 0],
        vec![0, 5, 0, 0, 0, 0, 0, 0],
        vec![0, 4, 0, 12, 0, 0, 0, 0, 0, 0, 0, 0],
        vec![0, 4, 0, 16, 0, 0, 0, 0],
        // goto_table, write_metadata, clear_actions and meter of 16 bytes.
        sixteen(1),
        sixteen(2),
        sixteen(5),
        sixteen(6),
        // A good instruction then a truncated one.
        vec![0, 5, 0, 8, 0, 0, 0, 0, 0, 1, 0, 8],
    ];
    list::assert_all_fail::<Instruction>(&cases, ErrorKind::BAD_INSTRUCTION_BAD_LEN);
}

#[test]
fn unknown_types_are_unknown_inst() {
    list::assert_unknown_types::<Instruction>(
        &[0, 7, 8, 0x100, 0xfffe],
        ErrorKind::BAD_INSTRUCTION_UNKNOWN_INST,
    );
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
    assert_eq!(validate_err(&[Instruction::ClearActions, Instruction::ClearActions], 0), dup);
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
    assert_eq!(validate_err(&[Instruction::GotoTable(1), Instruction::GotoTable(2)], 0), dup);
    let exp = |id| Instruction::Experimenter { experimenter: id, data: vec![] };
    assert_eq!(validate_err(&[exp(1), exp(2)], 0), dup);
    // Write and apply are different types.
    Instruction::validate_list(
        &[
            Instruction::ApplyActions(vec![Action::PopVlan]),
            Instruction::WriteActions(vec![Action::PopVlan]),
            Instruction::ClearActions,
            Instruction::WriteMetadata { metadata: 1, mask: 1 },
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
    for id in [0, OFPM_MAX + 1, 0xffff_fff0, crate::v13::meter_mod::OFPM_ALL] {
        assert_eq!(validate_err(&[Instruction::Meter(id)], 0), bad, "meter {id:#x}");
    }
}

#[test]
fn actions_are_validated() {
    let bad_group = [Instruction::ApplyActions(vec![Action::PopVlan, Action::Group(OFPG_ANY)])];
    assert_eq!(validate_err(&bad_group, 0), ErrorKind::BAD_ACTION_BAD_OUT_GROUP);
    let bad_set = [Instruction::WriteActions(vec![Action::SetField(Oxm::InPort(1))])];
    assert_eq!(validate_err(&bad_set, 0), ErrorKind::BAD_ACTION_BAD_SET_TYPE);
    let two_outputs =
        vec![Action::Output { port: 1, max_len: 0 }, Action::Output { port: 2, max_len: 0 }];
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

list::list_properties!(Instruction, arb_instruction(), max: 5, bytes: 96, short: ErrorKind::BAD_INSTRUCTION_BAD_LEN);

proptest! {
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
