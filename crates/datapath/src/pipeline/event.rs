//! One step of a packet's processing as the pipeline reports it to an observer (the
//! tracer, `crate::trace`): defined here, below both, so the pipeline need not know the
//! tracer.

use crate::action::Action;
use crate::key::FlowKey;
use crate::meter::MeterOutcome;
use crate::parse::ParseError;

use super::{PacketIn, RuleId};

/// One step of a packet's processing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TraceEvent {
    /// The parser's key and where it stopped early, if it did.
    Parsed {
        key: FlowKey,
        error: Option<ParseError>,
    },
    /// A table looked up with `key`: the matched rule's id, priority and cookie.
    Table {
        table: u8,
        key: FlowKey,
        rule: Option<(RuleId, u16, u64)>,
    },
    Meter {
        meter: u32,
        outcome: MeterOutcome,
    },
    /// An apply-actions action executed (or a packet-out's action, see
    /// [`Datapath::trace_packet_out`]).
    Apply(Action),
    ClearActions,
    WriteActions(Vec<Action>),
    /// The metadata after write-metadata.
    WriteMetadata(u64),
    Goto(u8),
    /// The action set at the end of the pipeline, in execution order.
    ActionSet(Vec<Action>),
    /// An action executed from an action set (the pipeline's or a bucket's).
    SetAction(Action),
    /// A group bucket taken.
    Bucket {
        group: u32,
        bucket: usize,
    },
    Output {
        port: u32,
        queue: Option<u32>,
    },
    Normal,
    PacketIn(PacketIn),
    Dropped(&'static str),
}
