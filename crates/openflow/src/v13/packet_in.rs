//! `OFPT_PACKET_IN` and `OFPT_FLOW_REMOVED` (OpenFlow 1.3): the switch's asynchronous
//! reports about packets and flow entries. Both have one type for every version, in
//! [`crate::model`].
//!
//! Flow-removed wire form: `cookie:u64, priority:u16, reason:u8, table_id:u8,
//! duration_sec:u32, duration_nsec:u32, idle_timeout:u16, hard_timeout:u16,
//! packet_count:u64, byte_count:u64`, then an `ofp_match` ending the message.

use crate::match13::Match;

/// Packet-in has one type for every version ([`crate::model::PacketIn`]).
pub use crate::model::{PacketIn, PacketInReason};

pub use crate::model::FlowRemovedReason;

/// An `OFPT_FLOW_REMOVED` body over 1.3's OXM match: the flow-removed type of every
/// version ([`crate::model::FlowRemoved`]).
pub type FlowRemoved = crate::model::FlowRemoved<Match>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::match13::strategy::in_port_match_bytes;
    use crate::model::flow_removed::strategy::arb_flow_removed;
    use crate::oxm::Oxm;
    use crate::wire::{encoded, Reader};

    #[test]
    fn flow_removed_spec_bytes() {
        let mut bytes = Vec::new();
        bytes.extend_from_slice(&7u64.to_be_bytes());
        bytes.extend_from_slice(&[0x80, 0, 1, 1]); // priority 0x8000, HARD_TIMEOUT, table 1
        bytes.extend_from_slice(&[0, 0, 0, 10, 0, 0, 0, 5, 0, 10, 0, 20]);
        bytes.extend_from_slice(&3u64.to_be_bytes());
        bytes.extend_from_slice(&180u64.to_be_bytes());
        bytes.extend_from_slice(&in_port_match_bytes(1));
        let f = FlowRemoved::decode(&mut Reader::new(&bytes)).unwrap();
        assert_eq!(f.cookie, 7);
        assert_eq!(f.priority, 0x8000);
        assert_eq!(f.reason, FlowRemovedReason::HardTimeout);
        assert_eq!(f.table_id, 1);
        assert_eq!((f.duration_sec, f.duration_nsec), (10, 5));
        assert_eq!((f.idle_timeout, f.hard_timeout), (10, 20));
        assert_eq!((f.packet_count, f.byte_count), (3, 180));
        assert_eq!(f.match_.fields, vec![Oxm::InPort(1)]);
        assert_eq!(encoded(|w| f.encode(w)), bytes);
    }

    /// 1.4's eviction reason (5) is a number in 1.3.
    #[test]
    fn eviction_is_1_4s() {
        use crate::header::{OFP13_VERSION, OFP14_VERSION};
        let mut bytes = vec![0; 40];
        bytes[10] = 5;
        bytes.extend_from_slice(&in_port_match_bytes(1));
        let f = FlowRemoved::decode_version(OFP14_VERSION, &mut Reader::new(&bytes)).unwrap();
        assert_eq!(f.reason, FlowRemovedReason::Eviction);
        assert_eq!(encoded(|w| f.encode_version(OFP14_VERSION, w)), bytes);
        let f = FlowRemoved::decode_version(OFP13_VERSION, &mut Reader::new(&bytes)).unwrap();
        assert_eq!(f.reason, FlowRemovedReason::Unknown(5));
        assert_eq!(encoded(|w| f.encode(w)), bytes);
    }

    roundtrip_tests! {
        roundtrip: arb_flow_removed(crate::match13::strategy::arb_match()) => FlowRemoved;
    }
}
