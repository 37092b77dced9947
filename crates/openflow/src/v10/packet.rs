//! `OFPT_PACKET_IN` and `OFPT_PACKET_OUT` of OpenFlow 1.0; both have one type for every
//! version, in [`crate::model`].
//!
//! Packet out body: `buffer_id:u32, in_port:u16, actions_len:u16`, `actions_len` bytes of
//! actions, then the frame to the end of the message. `actions_len` is derived from the
//! actions when encoding.

use super::action10::Action;

/// Packet-in has one type for every version ([`crate::model::PacketIn`]).
pub use crate::model::{PacketIn, PacketInReason};

/// An `OFPT_PACKET_OUT` body over 1.0's actions: the packet-out type of every version
/// ([`crate::model::PacketOut`]).
pub type PacketOut = crate::model::PacketOut<Action>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use crate::model::packet_out::strategy::arb_packet_out;
    use crate::v10::action10::strategy::arb_actions;
    use crate::wire::{encoded, Reader};

    roundtrip_tests! {
        packet_out_roundtrip: arb_packet_out(crate::OFP10_VERSION, arb_actions()) => PacketOut;
    }

    #[test]
    fn packet_out_bytes_and_errors() {
        let p = PacketOut {
            buffer_id: 0xffff_ffff,
            in_port: crate::v10::port::port_to_v13(0xfffd),
            actions: vec![Action::Output { port: 0xfffc, max_len: 0xffff }],
            data: vec![0xab, 0xcd],
        };
        let got = encoded(|w| p.encode(w));
        let want = [
            0xff, 0xff, 0xff, 0xff, 0xff, 0xfd, 0, 8, 0, 0, 0, 8, 0xff, 0xfc, 0xff, 0xff, 0xab,
            0xcd,
        ];
        assert_eq!(got, want);
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
        let bad = PacketOut { actions: vec![Action::Output { port: 0, max_len: 0 }], ..p };
        assert_eq!(bad.validate().unwrap_err().kind, ErrorKind::BAD_ACTION_BAD_OUT_PORT);
    }
}
