//! Tests of the translation: field by field, action by action, instruction by
//! instruction, the errors and their kinds, and flows in ovs-ofctl text run through a
//! real datapath with real frames.

mod actions;
mod fields;
mod frames;
mod pipeline;
mod prereq;

use super::*;
use datapath::key::{Field, FlowKey, FlowMatch};
use openflow::match13::Match;
use openflow::oxm::Oxm;
use openflow::{ErrorKind, MacAddr};

/// The flow match of a match made of `fields`, which must translate.
fn flow(fields: Vec<Oxm>) -> FlowMatch {
    match_to_flow(&Match::new(fields.clone()))
        .unwrap_or_else(|e| panic!("{fields:?} does not translate: {e}"))
}
