//! The packet-out message (`OFPT_PACKET_OUT`), one type for every OpenFlow version, over
//! the action vocabulary of each version's wire ([`WireAction`]: 1.0's
//! [`crate::v10::Action`], 1.3's [`crate::action::Action`]).
//!
//! Wire form: `buffer_id:u32`, `in_port` (1.0: `u16`; 1.3: `u32`), `actions_len:u16`
//! (1.3: then `pad[6]`), `actions_len` bytes of actions, then the frame to the end of
//! the message (empty when `buffer_id` names a buffered packet). `actions_len` is derived
//! from the actions when encoding; one past the end of the message is `OFPBRC_BAD_LEN`.
//! `in_port` is in the 1.3 numbering whatever the version
//! ([`port_to_v13`](crate::v10::port::port_to_v13)).

use super::{port_width, read_port, write_port};
use crate::action::port as ofpp13;
use crate::error::{ErrorKind, OfpError};
use crate::header::OFP10_VERSION;
use crate::wire::{Reader, Writer};

/// The actions of one OpenFlow version's wire, as a version-neutral message that carries
/// an action list needs them. `VERSION` says which wire, and so the layout of the
/// message around the list.
pub trait WireAction: Sized {
    /// The OpenFlow version whose actions these are.
    const VERSION: u8;

    /// Reads one action.
    fn decode(r: &mut Reader) -> Result<Self, OfpError>;

    /// Writes one action.
    fn encode(&self, w: &mut Writer);

    /// The checks a switch makes on a list it is asked to run.
    fn validate_list(list: &[Self]) -> Result<(), OfpError>;

    /// Reads actions until the reader is empty (the reader holds exactly the list).
    fn decode_list(r: &mut Reader) -> Result<Vec<Self>, OfpError> {
        let mut out = Vec::new();
        while !r.is_empty() {
            out.push(Self::decode(r)?);
        }
        Ok(out)
    }

    /// Writes a list of actions.
    fn encode_list(list: &[Self], w: &mut Writer) {
        for a in list {
            a.encode(w);
        }
    }
}

/// An `OFPT_PACKET_OUT` body.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PacketOut<A> {
    /// A switch buffer, or `OFP_NO_BUFFER` (`0xffffffff`) when `data` holds the frame.
    pub buffer_id: u32,
    /// The frame's ingress port for the pipeline, in the 1.3 numbering: a physical port,
    /// `OFPP_CONTROLLER` or `OFPP_LOCAL` (1.0 also allows `OFPP_NONE`, which is 1.3's
    /// `OFPP_ANY`). Encoding for 1.0 writes a number with no 1.0 form as `OFPP_NONE`.
    pub in_port: u32,
    pub actions: Vec<A>,
    pub data: Vec<u8>,
}

impl<A: WireAction> PacketOut<A> {
    /// Bytes before the actions: 8 in 1.0, 16 in 1.3.
    pub const FIXED_LEN: usize = if A::VERSION == OFP10_VERSION { 8 } else { 16 };

    pub fn decode(r: &mut Reader) -> Result<PacketOut<A>, OfpError> {
        let buffer_id = r.u32()?;
        let in_port = read_port(A::VERSION, r, port_width(A::VERSION))?;
        let actions_len = usize::from(r.u16()?);
        if A::VERSION != OFP10_VERSION {
            r.skip(6)?;
        }
        if actions_len > r.remaining() {
            return Err(OfpError::new(
                ErrorKind::BAD_REQUEST_BAD_LEN,
                format!(
                    "packet-out actions_len {actions_len} exceeds the {} bytes left",
                    r.remaining()
                ),
            ));
        }
        let actions = A::decode_list(&mut r.sub(actions_len)?)?;
        Ok(PacketOut { buffer_id, in_port, actions, data: r.take_rest().to_vec() })
    }

    pub fn encode(&self, w: &mut Writer) {
        w.u32(self.buffer_id);
        write_port(A::VERSION, self.in_port, w, port_width(A::VERSION));
        let len_at = w.len();
        w.u16(0);
        if A::VERSION != OFP10_VERSION {
            w.zeros(6);
        }
        let start = w.len();
        A::encode_list(&self.actions, w);
        w.patch_len16(len_at, start);
        w.bytes(&self.data);
    }

    /// Checks the actions ([`WireAction::validate_list`]) and, from 1.3 on, the ingress
    /// port (`OFPBRC_BAD_PORT` unless it is 1..=`OFPP_MAX`, `OFPP_CONTROLLER` or
    /// `OFPP_LOCAL`). A packet-out with no buffer and no data is allowed.
    pub fn validate(&self) -> Result<(), OfpError> {
        if A::VERSION != OFP10_VERSION {
            let port_ok = matches!(self.in_port, 1..=ofpp13::MAX)
                || self.in_port == ofpp13::CONTROLLER
                || self.in_port == ofpp13::LOCAL;
            if !port_ok {
                return Err(OfpError::new(
                    ErrorKind::BAD_REQUEST_BAD_PORT,
                    format!(
                        "packet-out in_port 0x{:08x} is not a port or CONTROLLER/LOCAL",
                        self.in_port
                    ),
                ));
            }
        }
        A::validate_list(&self.actions)
    }
}

/// proptest strategy: packet-outs over `actions`, with the ports `version` can carry.
#[cfg(test)]
pub(crate) mod strategy {
    use super::*;
    use proptest::prelude::*;

    pub fn arb_packet_out<A: std::fmt::Debug>(
        version: u8,
        actions: impl Strategy<Value = Vec<A>>,
    ) -> impl Strategy<Value = PacketOut<A>> {
        (
            (any::<u32>(), any::<u32>(), any::<u16>()),
            actions,
            proptest::collection::vec(any::<u8>(), 0..80),
        )
            .prop_map(move |((buffer_id, port, port10), actions, data)| PacketOut {
                buffer_id,
                in_port: if version == OFP10_VERSION {
                    crate::v10::port::port_to_v13(port10)
                } else {
                    port
                },
                actions,
                data,
            })
    }
}
