//! `OFPT_PACKET_IN` and `OFPT_PACKET_OUT` of OpenFlow 1.0.
//!
//! Packet in body: `buffer_id:u32, total_len:u16, in_port:u16, reason:u8, pad[1]`, then
//! the frame to the end of the message.
//!
//! Packet out body: `buffer_id:u32, in_port:u16, actions_len:u16`, `actions_len` bytes of
//! actions, then the frame to the end of the message. `actions_len` is derived from the
//! actions when encoding.

use super::action10::Action;
use crate::error::OfpError;
use crate::wire::{Reader, Writer};

wire_enum! {
    /// `ofp_packet_in_reason`.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum PacketInReason: u8 as from_u8 / to_u8 {
        NoMatch = 0,
        Action = 1,
    }
}

/// An `OFPT_PACKET_IN` body.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PacketIn {
    pub buffer_id: u32,
    /// Length of the whole frame (`data` may hold only its first bytes).
    pub total_len: u16,
    pub in_port: u16,
    pub reason: PacketInReason,
    pub data: Vec<u8>,
}

impl PacketIn {
    pub const FIXED_LEN: usize = 10;

    pub fn decode(r: &mut Reader) -> Result<PacketIn, OfpError> {
        let buffer_id = r.u32()?;
        let total_len = r.u16()?;
        let in_port = r.u16()?;
        let reason = PacketInReason::from_u8(r.u8()?);
        r.skip(1)?;
        Ok(PacketIn {
            buffer_id,
            total_len,
            in_port,
            reason,
            data: r.take_rest().to_vec(),
        })
    }

    pub fn encode(&self, w: &mut Writer) {
        w.u32(self.buffer_id);
        w.u16(self.total_len);
        w.u16(self.in_port);
        w.u8(self.reason.to_u8());
        w.zeros(1);
        w.bytes(&self.data);
    }
}

/// An `OFPT_PACKET_OUT` body over 1.0's actions: the packet-out type of every version
/// ([`crate::model::PacketOut`]).
pub type PacketOut = crate::model::PacketOut<Action>;

/// proptest strategies for packet in/out bodies.
#[cfg(test)]
pub(crate) mod strategy {
    use super::super::action10::strategy::arb_actions;
    use super::*;
    use proptest::prelude::*;

    pub fn arb_packet_in() -> impl Strategy<Value = PacketIn> {
        (
            any::<u32>(),
            any::<u16>(),
            any::<u16>(),
            any::<u8>(),
            proptest::collection::vec(any::<u8>(), 0..80),
        )
            .prop_map(|(buffer_id, total_len, in_port, reason, data)| PacketIn {
                buffer_id,
                total_len,
                in_port,
                reason: PacketInReason::from_u8(reason),
                data,
            })
    }

    pub fn arb_packet_out() -> impl Strategy<Value = PacketOut> {
        (
            any::<u32>(),
            any::<u16>(),
            arb_actions(),
            proptest::collection::vec(any::<u8>(), 0..80),
        )
            .prop_map(|(buffer_id, in_port, actions, data)| PacketOut {
                buffer_id,
                in_port: crate::v10::port::port_to_v13(in_port),
                actions,
                data,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn packet_in_roundtrip(p in strategy::arb_packet_in()) {
            let mut w = Writer::new();
            p.encode(&mut w);
            prop_assert_eq!(PacketIn::decode(&mut Reader::new(&w.buf)).unwrap(), p);
        }

        #[test]
        fn packet_out_roundtrip(p in strategy::arb_packet_out()) {
            let mut w = Writer::new();
            p.encode(&mut w);
            prop_assert_eq!(PacketOut::decode(&mut Reader::new(&w.buf)).unwrap(), p);
        }
    }

    #[test]
    fn packet_out_bytes_and_errors() {
        let p = PacketOut {
            buffer_id: 0xffff_ffff,
            in_port: crate::v10::port::port_to_v13(0xfffd),
            actions: vec![Action::Output {
                port: 0xfffc,
                max_len: 0xffff,
            }],
            data: vec![0xab, 0xcd],
        };
        let mut w = Writer::new();
        p.encode(&mut w);
        let want = [
            0xff, 0xff, 0xff, 0xff, 0xff, 0xfd, 0, 8, 0, 0, 0, 8, 0xff, 0xfc, 0xff, 0xff, 0xab,
            0xcd,
        ];
        assert_eq!(w.buf, want);
        assert_eq!(PacketOut::decode(&mut Reader::new(&want)).unwrap(), p);
        // actions_len beyond the body.
        let mut long = want;
        long[7] = 24;
        let e = PacketOut::decode(&mut Reader::new(&long)).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BAD_REQUEST_BAD_LEN);
        // actions_len not covering a whole action.
        let mut short = want;
        short[7] = 4;
        let e = PacketOut::decode(&mut Reader::new(&short)).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BAD_ACTION_BAD_LEN);
        // Validation of the actions.
        let bad = PacketOut {
            actions: vec![Action::Output {
                port: 0,
                max_len: 0,
            }],
            ..p
        };
        assert_eq!(
            bad.validate().unwrap_err().kind,
            ErrorKind::BAD_ACTION_BAD_OUT_PORT
        );
    }
}
