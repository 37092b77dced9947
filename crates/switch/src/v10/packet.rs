//! OpenFlow 1.0 packet-outs as 1.3 ones, and 1.3 packet-ins as 1.0 ones.
//!
//! Packet-out: buffer id and data unchanged; the actions by [`actions_to_v13`] with the
//! facts the frame's bytes give ([`PacketFacts::of_frame`]; nothing is known of a
//! buffered packet sent without data). The input port is renumbered, except that 1.0's
//! `OFPP_NONE` ("no input port", what 1.0 controllers send for packets of their own)
//! becomes 1.3's `OFPP_CONTROLLER`, the port 1.3 uses for that; an output or enqueue to
//! `OFPP_IN_PORT` then goes nowhere in 1.0, so it is left out rather than sent to the
//! controller.
//!
//! Packet-in (one type for both versions): the input port must be in the match's
//! `IN_PORT` and have a 1.0 number; the table id, cookie and other match fields are
//! dropped (1.0 has none); buffer id, total length and data are unchanged. 1.0 has no
//! `OFPR_INVALID_TTL` (it has no TTL actions), so such a packet-in is not for a 1.0
//! controller: an error.

use openflow::action::port as p13;
use openflow::match13::Match;
use openflow::model::{PacketIn, PacketInReason};
use openflow::oxm::Oxm;
use openflow::v10::port::ofpp as p10;
use openflow::v10::{Action as Action10, PacketOut as PacketOut10};
use openflow::v13::PacketOut as PacketOut13;
use openflow::{ErrorKind, OfpError};

use super::actions::{actions_to_v13, PacketFacts};
use super::ports::port_no_from_v13;

/// Translates a 1.0 packet-out (module comment); the errors of [`actions_to_v13`].
pub fn packet_out_to_v13(po: &PacketOut10) -> Result<PacketOut13, OfpError> {
    let facts =
        if po.data.is_empty() { PacketFacts::UNKNOWN } else { PacketFacts::of_frame(&po.data) };
    // The packet-out type holds 1.3 numbers: 1.0's OFPP_NONE is 1.3's OFPP_ANY.
    let no_in_port = po.in_port == p13::ANY;
    let to_in_port = |a: &Action10| {
        matches!(
            *a,
            Action10::Output { port: p10::IN_PORT, .. }
                | Action10::Enqueue { port: p10::IN_PORT, .. }
        )
    };
    let actions: Vec<Action10> =
        po.actions.iter().filter(|a| !(no_in_port && to_in_port(a))).cloned().collect();
    Ok(PacketOut13 {
        buffer_id: po.buffer_id,
        in_port: if no_in_port { p13::CONTROLLER } else { po.in_port },
        actions: actions_to_v13(&actions, facts)?,
        data: po.data.clone(),
    })
}

/// A packet-in as a 1.0 controller gets it (module comment). Errors: no `IN_PORT` in
/// the match or one without a 1.0 number (`OFPBRC_BAD_PORT`), reason
/// `OFPR_INVALID_TTL` (`OFPBRC_EPERM`: not sent to 1.0 controllers).
pub fn packet_in_to_v10(pi: &PacketIn) -> Result<PacketIn, OfpError> {
    if pi.reason == PacketInReason::InvalidTtl {
        return Err(OfpError::new(
            ErrorKind::BAD_REQUEST_EPERM,
            "OpenFlow 1.0 has no invalid-TTL packet-in",
        ));
    }
    let in_port = pi.in_port().ok_or_else(|| {
        OfpError::new(ErrorKind::BAD_REQUEST_BAD_PORT, "packet-in without IN_PORT")
    })?;
    port_no_from_v13(in_port)?;
    Ok(PacketIn {
        table_id: 0,
        cookie: u64::MAX,
        match_: Match::new(vec![Oxm::InPort(in_port)]),
        ..pi.clone()
    })
}
