//! proptest strategies for instructions.
//!
//! [`arb_instruction`] yields every variant with values the wire form can carry (so
//! encode→decode is the identity); [`arb_valid_instructions`] yields instruction sets
//! that pass [`Instruction::validate_list`] for a given table.

use super::*;
use crate::action::strategy::{arb_action, arb_valid_action, arb_valid_action_set};
use proptest::prelude::*;

/// Experimenter data: a multiple of 8 bytes, so the instruction needs no padding.
fn arb_experimenter_data() -> impl Strategy<Value = Vec<u8>> {
    (0usize..3).prop_flat_map(|n| proptest::collection::vec(any::<u8>(), n * 8))
}

fn arb_experimenter() -> impl Strategy<Value = Instruction> {
    (any::<u32>(), arb_experimenter_data())
        .prop_map(|(experimenter, data)| Instruction::Experimenter { experimenter, data })
}

fn arb_write_metadata() -> impl Strategy<Value = Instruction> {
    (any::<u64>(), any::<u64>())
        .prop_map(|(metadata, mask)| Instruction::WriteMetadata { metadata, mask })
}

/// Every instruction variant, with any value the wire form carries.
pub fn arb_instruction() -> impl Strategy<Value = Instruction> {
    let actions = || proptest::collection::vec(arb_action(), 0..4);
    prop_oneof![
        any::<u8>().prop_map(Instruction::GotoTable),
        arb_write_metadata(),
        actions().prop_map(Instruction::WriteActions),
        actions().prop_map(Instruction::ApplyActions),
        Just(Instruction::ClearActions),
        any::<u32>().prop_map(Instruction::Meter),
        arb_experimenter(),
    ]
}

/// An instruction set that passes [`Instruction::validate_list`] for a rule in table
/// `table_id`: at most one of each type, in any order, each valid (no goto-table when
/// `table_id` is the last table).
pub fn arb_valid_instructions(table_id: u8) -> impl Strategy<Value = Vec<Instruction>> {
    let goto = if table_id < OFPTT_MAX {
        proptest::option::of((table_id + 1..=OFPTT_MAX).prop_map(Instruction::GotoTable)).boxed()
    } else {
        Just(None).boxed()
    };
    let meter = prop_oneof![1..=OFPM_MAX, Just(OFPM_SLOWPATH), Just(OFPM_CONTROLLER)]
        .prop_map(Instruction::Meter);
    (
        goto,
        proptest::option::of(arb_write_metadata()),
        proptest::option::of(arb_valid_action_set().prop_map(Instruction::WriteActions)),
        proptest::option::of(
            proptest::collection::vec(arb_valid_action(), 0..6).prop_map(Instruction::ApplyActions),
        ),
        proptest::option::of(Just(Instruction::ClearActions)),
        proptest::option::of(meter),
        proptest::option::of(arb_experimenter()),
    )
        .prop_flat_map(|(a, b, c, d, e, f, g)| {
            let set: Vec<Instruction> = [a, b, c, d, e, f, g].into_iter().flatten().collect();
            Just(set).prop_shuffle()
        })
}
