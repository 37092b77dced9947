//! `OFPT_PACKET_IN` and `OFPT_FLOW_REMOVED` (OpenFlow 1.3): the switch's asynchronous
//! reports about packets and flow entries.
//!
//! Packet-in wire form: `buffer_id:u32, total_len:u16, reason:u8, table_id:u8,
//! cookie:u64`, an `ofp_match` (with its padding), `pad[2]`, then the packet (or its
//! first `miss_send_len`/`max_len` bytes when buffered) to the end. `total_len` is the
//! full frame length and is not checked against the data carried.
//!
//! Flow-removed wire form: `cookie:u64, priority:u16, reason:u8, table_id:u8,
//! duration_sec:u32, duration_nsec:u32, idle_timeout:u16, hard_timeout:u16,
//! packet_count:u64, byte_count:u64`, then an `ofp_match` ending the message.

use crate::error::OfpError;
use crate::match13::Match;
use crate::wire::{Reader, Writer};

wire_enum! {
    /// `ofp_packet_in_reason`.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum PacketInReason: u8 as from_u8 / to_u8 {
        /// No matching flow (table-miss flow entry).
        NoMatch = 0,
        /// Output to the controller in an action.
        Action = 1,
        /// The packet has an invalid TTL.
        InvalidTtl = 2,
    }
}

/// An `OFPT_PACKET_IN` body.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PacketIn {
    /// `OFP_NO_BUFFER` when the whole packet is in `data`.
    pub buffer_id: u32,
    pub total_len: u16,
    pub reason: PacketInReason,
    pub table_id: u8,
    pub cookie: u64,
    /// The pipeline fields of the packet (at least `IN_PORT`).
    pub match_: Match,
    pub data: Vec<u8>,
}

impl PacketIn {
    pub fn decode(r: &mut Reader) -> Result<PacketIn, OfpError> {
        let buffer_id = r.u32()?;
        let total_len = r.u16()?;
        let reason = PacketInReason::from_u8(r.u8()?);
        let table_id = r.u8()?;
        let cookie = r.u64()?;
        let match_ = Match::decode(r)?;
        r.skip(2)?;
        Ok(PacketIn {
            buffer_id,
            total_len,
            reason,
            table_id,
            cookie,
            match_,
            data: r.take_rest().to_vec(),
        })
    }

    pub fn encode(&self, w: &mut Writer) {
        w.u32(self.buffer_id);
        w.u16(self.total_len);
        w.u8(self.reason.to_u8());
        w.u8(self.table_id);
        w.u64(self.cookie);
        self.match_.encode(w);
        w.zeros(2);
        w.bytes(&self.data);
    }
}

pub use crate::model::FlowRemovedReason;

/// An `OFPT_FLOW_REMOVED` body over 1.3's OXM match: the flow-removed type of every
/// version ([`crate::model::FlowRemoved`]).
pub type FlowRemoved = crate::model::FlowRemoved<Match>;

/// proptest strategies for packet-in and flow-removed.
#[cfg(test)]
pub(crate) mod strategy {
    use super::*;
    use crate::match13::strategy::arb_match;
    use proptest::prelude::*;

    pub fn arb_packet_in() -> impl Strategy<Value = PacketIn> {
        (
            (
                any::<u32>(),
                any::<u16>(),
                any::<u8>(),
                any::<u8>(),
                any::<u64>(),
            ),
            arb_match(),
            proptest::collection::vec(any::<u8>(), 0..80),
        )
            .prop_map(
                |((buffer_id, total_len, reason, table_id, cookie), match_, data)| PacketIn {
                    buffer_id,
                    total_len,
                    reason: PacketInReason::from_u8(reason),
                    table_id,
                    cookie,
                    match_,
                    data,
                },
            )
    }

    pub fn arb_flow_removed() -> impl Strategy<Value = FlowRemoved> {
        (
            (any::<u64>(), any::<u16>(), any::<u8>(), any::<u8>()),
            (any::<u32>(), any::<u32>(), any::<u16>(), any::<u16>()),
            (any::<u64>(), any::<u64>()),
            arb_match(),
        )
            .prop_map(
                |(
                    (cookie, priority, reason, table_id),
                    (duration_sec, duration_nsec, idle_timeout, hard_timeout),
                    (packet_count, byte_count),
                    match_,
                )| FlowRemoved {
                    cookie,
                    priority,
                    reason: FlowRemovedReason::from_u8(reason),
                    table_id,
                    duration_sec,
                    duration_nsec,
                    idle_timeout,
                    hard_timeout,
                    packet_count,
                    byte_count,
                    match_,
                },
            )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use crate::oxm::Oxm;
    use proptest::prelude::*;

    /// `ofp_match` holding only `IN_PORT = port`: type 1, length 12, the TLV, 4 pad bytes.
    pub(crate) fn in_port_match_bytes(port: u32) -> Vec<u8> {
        let mut b = vec![0, 1, 0, 12, 0x80, 0, 0, 4];
        b.extend_from_slice(&port.to_be_bytes());
        b.extend_from_slice(&[0; 4]);
        b
    }

    #[test]
    fn packet_in_spec_bytes() {
        let mut bytes = vec![0xff, 0xff, 0xff, 0xff, 0, 60, 0, 3];
        bytes.extend_from_slice(&0x1234u64.to_be_bytes());
        bytes.extend_from_slice(&in_port_match_bytes(2));
        bytes.extend_from_slice(&[0, 0]);
        bytes.extend_from_slice(&[0xaa; 14]);
        let p = PacketIn::decode(&mut Reader::new(&bytes)).unwrap();
        assert_eq!(
            p,
            PacketIn {
                buffer_id: 0xffff_ffff,
                total_len: 60,
                reason: PacketInReason::NoMatch,
                table_id: 3,
                cookie: 0x1234,
                match_: Match {
                    fields: vec![Oxm::InPort(2)]
                },
                data: vec![0xaa; 14],
            }
        );
        let mut w = Writer::new();
        p.encode(&mut w);
        assert_eq!(w.buf, bytes);
        // Cut inside the two pad bytes after the match.
        let cut = 16 + 16 + 1;
        let e = PacketIn::decode(&mut Reader::new(&bytes[..cut])).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BAD_REQUEST_BAD_LEN);
    }

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
        let mut w = Writer::new();
        f.encode(&mut w);
        assert_eq!(w.buf, bytes);
    }

    proptest! {
        #[test]
        fn roundtrip(p in strategy::arb_packet_in(), f in strategy::arb_flow_removed()) {
            let mut w = Writer::new();
            p.encode(&mut w);
            prop_assert_eq!(PacketIn::decode(&mut Reader::new(&w.buf)).unwrap(), p);
            let mut w = Writer::new();
            f.encode(&mut w);
            let mut r = Reader::new(&w.buf);
            prop_assert_eq!(FlowRemoved::decode(&mut r).unwrap(), f);
            prop_assert!(r.is_empty());
        }
    }
}
