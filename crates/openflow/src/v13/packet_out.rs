//! `OFPT_PACKET_OUT` (OpenFlow 1.3): send a packet through an action list.
//!
//! Wire form: `buffer_id:u32, in_port:u32, actions_len:u16, pad[6]`, `actions_len`
//! bytes of actions, then the packet to the end (empty when `buffer_id` names a buffered
//! packet). An `actions_len` past the end of the message is `OFPBRC_BAD_LEN`.

use crate::action::Action;

/// An `OFPT_PACKET_OUT` body over 1.3's actions: the packet-out type of every version
/// ([`crate::model::PacketOut`]).
pub type PacketOut = crate::model::PacketOut<Action>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::action::port as ofpp;
    use crate::action::strategy::arb_action;
    use crate::error::ErrorKind;
    use crate::model::packet_out::strategy::arb_packet_out;
    use crate::v13::flow_mod::OFP_NO_BUFFER;
    use crate::wire::{encoded, Reader};
    use proptest::collection::vec;

    fn spec_bytes() -> Vec<u8> {
        let mut b = vec![0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfd, 0, 16, 0, 0, 0, 0, 0, 0];
        // OUTPUT to port 1, max_len 0xffe5 (OFPCML_MAX).
        b.extend_from_slice(&[0, 0, 0, 16, 0, 0, 0, 1, 0xff, 0xe5, 0, 0, 0, 0, 0, 0]);
        b.extend_from_slice(&[0x11; 20]);
        b
    }

    #[test]
    fn decodes_spec_bytes() {
        let bytes = spec_bytes();
        let p = PacketOut::decode(&mut Reader::new(&bytes)).unwrap();
        assert_eq!(
            p,
            PacketOut {
                buffer_id: OFP_NO_BUFFER,
                in_port: ofpp::CONTROLLER,
                actions: vec![Action::Output { port: 1, max_len: 0xffe5 }],
                data: vec![0x11; 20],
            }
        );
        assert_eq!(encoded(|w| p.encode(w)), bytes);
    }

    #[test]
    fn actions_len_past_end() {
        let mut bytes = spec_bytes();
        bytes.truncate(16 + 8);
        let e = PacketOut::decode(&mut Reader::new(&bytes)).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BAD_REQUEST_BAD_LEN);
    }

    #[test]
    fn validate_actions() {
        let p = PacketOut {
            buffer_id: OFP_NO_BUFFER,
            in_port: ofpp::CONTROLLER,
            actions: vec![Action::Output { port: 0, max_len: 0 }],
            data: vec![1, 2, 3],
        };
        assert_eq!(p.validate().unwrap_err().kind, ErrorKind::BAD_ACTION_BAD_OUT_PORT);
        let p = PacketOut { actions: vec![Action::Output { port: ofpp::TABLE, max_len: 0 }], ..p };
        assert!(p.validate().is_ok());
    }

    #[test]
    fn validate_in_port() {
        let mut p =
            PacketOut { buffer_id: OFP_NO_BUFFER, in_port: 1, actions: vec![], data: vec![] };
        for ok in [1, ofpp::MAX, ofpp::CONTROLLER, ofpp::LOCAL] {
            p.in_port = ok;
            assert!(p.validate().is_ok(), "{ok:#x}");
        }
        for bad in [0, ofpp::MAX + 1, ofpp::ANY, ofpp::IN_PORT, ofpp::TABLE, ofpp::FLOOD] {
            p.in_port = bad;
            assert_eq!(p.validate().unwrap_err().kind, ErrorKind::BAD_REQUEST_BAD_PORT, "{bad:#x}");
        }
    }

    roundtrip_tests! {
        roundtrip: arb_packet_out(crate::OFP13_VERSION, vec(arb_action(), 0..4)) => PacketOut;
    }
}
