//! Header rewrites: the actions that change a packet's bytes (set-field, push/pop,
//! TTL operations), keeping the flow key and header offsets in step.
//!
//! (Interim: the full implementation replaces this.)

use crate::action::Action;
use crate::key::FlowKey;
use crate::packet::{Layers, Packet};

/// Why a rewrite could not be applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RewriteError {
    /// A TTL decrement reached zero (or the TTL was already zero): OpenFlow sends the
    /// packet to the controller (OFPR_INVALID_TTL) if so configured, else drops it.
    InvalidTtl,
    /// The action needs a header the packet does not have (e.g. pop_vlan on an untagged
    /// frame); the packet is left unchanged.
    MissingHeader,
    /// Not a rewrite action (output, group, controller, set_queue are the pipeline's).
    NotARewrite,
}

/// Applies one rewrite action to `pkt`, updating `key` and `layers` to describe the new
/// bytes.
pub fn apply(
    _pkt: &mut Packet,
    _key: &mut FlowKey,
    _layers: &mut Layers,
    _action: &Action,
) -> Result<(), RewriteError> {
    Err(RewriteError::NotARewrite)
}
