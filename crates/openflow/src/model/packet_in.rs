//! `OFPT_PACKET_IN` of every version: one type, decoded from and encoded to each
//! version's layout.
//!
//! 1.0: `buffer_id:u32, total_len:u16, in_port:u16, reason:u8, pad[1]`, then the frame.
//! 1.3: `buffer_id:u32, total_len:u16, reason:u8, table_id:u8, cookie:u64`, an
//! `ofp_match` (with its padding), `pad[2]`, then the frame. In both the frame (or its
//! first `miss_send_len`/`max_len` bytes when buffered) runs to the end of the message;
//! `total_len` is the whole frame's length and is not checked against it.
//!
//! As in Open vSwitch, a 1.0 packet-in is one whose match holds only the input port (in
//! the 1.3 numbering), whose table is 0 and whose cookie is all ones ("none").

use super::{read_port, write_port};
use crate::error::OfpError;
use crate::match13::Match;
use crate::oxm::Oxm;
use crate::wire::{Reader, Writer};
use crate::{OFP10_VERSION, OFP14_VERSION};

wire_enum! {
    /// `ofp_packet_in_reason`. 1.0 defines the first two, 1.3 the first three, 1.4 all
    /// six (naming 1 `OFPR_APPLY_ACTION`); numbers a version does not define decode as
    /// `Unknown`.
    pub enum PacketInReason: u8 as from_u8 / to_u8 {
        /// No matching flow (table-miss flow entry).
        NoMatch = 0,
        /// Output to the controller in an action.
        Action = 1,
        /// The packet has an invalid TTL (1.3).
        InvalidTtl = 2,
        /// Output to the controller in the action set (1.4).
        ActionSet = 3,
        /// Output to the controller in a group bucket (1.4).
        Group = 4,
        /// Output to the controller in a packet-out's actions (1.4).
        PacketOut = 5,
    }
}

impl PacketInReason {
    /// The reason numbered `v` in `version`.
    pub fn of_version(version: u8, v: u8) -> Self {
        match Self::from_u8(v) {
            Self::InvalidTtl if version == OFP10_VERSION => Self::Unknown(v),
            Self::ActionSet | Self::Group | Self::PacketOut if version < OFP14_VERSION => {
                Self::Unknown(v)
            }
            r => r,
        }
    }
}

/// An `OFPT_PACKET_IN` body (module comment).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PacketIn {
    /// `OFP_NO_BUFFER` when the whole packet is in `data`.
    pub buffer_id: u32,
    pub total_len: u16,
    pub reason: PacketInReason,
    /// 1.3; 0 from 1.0.
    pub table_id: u8,
    /// 1.3; all ones from 1.0.
    pub cookie: u64,
    /// The pipeline fields of the packet, at least `IN_PORT` (all a 1.0 wire carries).
    pub match_: Match,
    pub data: Vec<u8>,
}

impl PacketIn {
    /// The input port the match holds, if any.
    pub fn in_port(&self) -> Option<u32> {
        self.match_.fields.iter().find_map(|f| match f {
            Oxm::InPort(p) => Some(*p),
            _ => None,
        })
    }

    /// Reads a body of `version`'s layout.
    pub fn decode(version: u8, r: &mut Reader) -> Result<PacketIn, OfpError> {
        let buffer_id = r.u32()?;
        let total_len = r.u16()?;
        let (reason, table_id, cookie, match_) = if version == OFP10_VERSION {
            let in_port = read_port(version, r, 2)?;
            let reason = PacketInReason::of_version(version, r.u8()?);
            r.skip(1)?;
            let m = Match { fields: vec![Oxm::InPort(in_port)] };
            (reason, 0, u64::MAX, m)
        } else {
            let reason = PacketInReason::of_version(version, r.u8()?);
            let table_id = r.u8()?;
            let cookie = r.u64()?;
            let m = Match::decode(r)?;
            r.skip(2)?;
            (reason, table_id, cookie, m)
        };
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

    /// Writes the body in `version`'s layout. A 1.0 body carries only the input port
    /// (`OFPP_NONE` when the match has none or it has no 1.0 number): whether a packet-in
    /// can be sent to a 1.0 controller at all is the sender's decision.
    pub fn encode(&self, version: u8, w: &mut Writer) {
        w.u32(self.buffer_id);
        w.u16(self.total_len);
        if version == OFP10_VERSION {
            let none = crate::action::port::ANY;
            write_port(version, self.in_port().unwrap_or(none), w, 2);
            w.u8(self.reason.to_u8());
            w.zeros(1);
        } else {
            w.u8(self.reason.to_u8());
            w.u8(self.table_id);
            w.u64(self.cookie);
            self.match_.encode(w);
            w.zeros(2);
        }
        w.bytes(&self.data);
    }
}

/// proptest strategy: packet-ins as `version`'s wire describes them.
#[cfg(test)]
pub(crate) mod strategy {
    use super::*;
    use proptest::prelude::*;

    pub fn arb_packet_in(version: u8) -> impl Strategy<Value = PacketIn> {
        (
            (any::<u32>(), any::<u16>(), any::<u16>()),
            (<PacketInReason as crate::wire::Field>::arb(), any::<u8>(), any::<u64>()),
            crate::match13::strategy::arb_match(),
            proptest::collection::vec(any::<u8>(), 0..80),
        )
            .prop_map(
                move |((buffer_id, total_len, port10), (reason, table_id, cookie), m, data)| {
                    let mut p = PacketIn {
                        buffer_id,
                        total_len,
                        reason: PacketInReason::of_version(version, reason.to_u8()),
                        table_id,
                        cookie,
                        match_: m,
                        data,
                    };
                    if version == OFP10_VERSION {
                        p.table_id = 0;
                        p.cookie = u64::MAX;
                        p.match_ = Match {
                            fields: vec![Oxm::InPort(crate::v10::port::port_to_v13(port10))],
                        };
                    }
                    p
                },
            )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use crate::match13::strategy::in_port_match_bytes;
    use crate::wire::assert_roundtrip_in;
    use crate::OFP13_VERSION;
    use proptest::prelude::*;

    fn bytes(p: &PacketIn, version: u8) -> Vec<u8> {
        crate::wire::encoded(|w| p.encode(version, w))
    }

    #[test]
    fn packet_in_spec_bytes_13() {
        let mut b = vec![0xff, 0xff, 0xff, 0xff, 0, 60, 0, 3];
        b.extend_from_slice(&0x1234u64.to_be_bytes());
        b.extend_from_slice(&in_port_match_bytes(2));
        b.extend_from_slice(&[0, 0]);
        b.extend_from_slice(&[0xaa; 14]);
        let p = PacketIn::decode(OFP13_VERSION, &mut Reader::new(&b)).unwrap();
        assert_eq!(
            p,
            PacketIn {
                buffer_id: 0xffff_ffff,
                total_len: 60,
                reason: PacketInReason::NoMatch,
                table_id: 3,
                cookie: 0x1234,
                match_: Match { fields: vec![Oxm::InPort(2)] },
                data: vec![0xaa; 14],
            }
        );
        assert_eq!(bytes(&p, OFP13_VERSION), b);
        // Cut inside the two pad bytes after the match.
        let cut = 16 + 16 + 1;
        let e = PacketIn::decode(OFP13_VERSION, &mut Reader::new(&b[..cut])).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BAD_REQUEST_BAD_LEN);
    }

    #[test]
    fn packet_in_spec_bytes_10() {
        // buffer 0x100, total_len 60, in_port LOCAL (0xfffe), reason action, pad, frame.
        let mut b = vec![0, 0, 1, 0, 0, 60, 0xff, 0xfe, 1, 0];
        b.extend_from_slice(&[0xbb; 20]);
        let p = PacketIn::decode(OFP10_VERSION, &mut Reader::new(&b)).unwrap();
        assert_eq!(p.buffer_id, 0x100);
        assert_eq!(p.total_len, 60);
        assert_eq!(p.in_port(), Some(crate::action::port::LOCAL));
        assert_eq!(p.reason, PacketInReason::Action);
        assert_eq!((p.table_id, p.cookie), (0, u64::MAX));
        assert_eq!(p.data, vec![0xbb; 20]);
        assert_eq!(bytes(&p, OFP10_VERSION), b);
        // 1.0 has no invalid-TTL reason: its number is kept as a number.
        b[8] = 2;
        let p = PacketIn::decode(OFP10_VERSION, &mut Reader::new(&b)).unwrap();
        assert_eq!(p.reason, PacketInReason::Unknown(2));
        assert_eq!(bytes(&p, OFP10_VERSION), b);
    }

    /// 1.4's reasons 3 to 5 (action set, group, packet-out) are numbers in 1.3.
    #[test]
    fn reasons_by_version() {
        use crate::OFP14_VERSION;
        let r = |version, n| PacketInReason::of_version(version, n);
        assert_eq!(r(OFP14_VERSION, 3), PacketInReason::ActionSet);
        assert_eq!(r(OFP14_VERSION, 4), PacketInReason::Group);
        assert_eq!(r(OFP14_VERSION, 5), PacketInReason::PacketOut);
        assert_eq!(r(OFP14_VERSION, 6), PacketInReason::Unknown(6));
        assert_eq!(r(OFP13_VERSION, 3), PacketInReason::Unknown(3));
        assert_eq!(r(OFP13_VERSION, 2), PacketInReason::InvalidTtl);
        // Through a 1.4 body, and back to the same byte in 1.3.
        let mut b = vec![0xff, 0xff, 0xff, 0xff, 0, 60, 4, 0];
        b.extend_from_slice(&0u64.to_be_bytes());
        b.extend_from_slice(&in_port_match_bytes(2));
        b.extend_from_slice(&[0, 0]);
        let p = PacketIn::decode(OFP14_VERSION, &mut Reader::new(&b)).unwrap();
        assert_eq!(p.reason, PacketInReason::Group);
        assert_eq!(bytes(&p, OFP14_VERSION), b);
        let p = PacketIn::decode(OFP13_VERSION, &mut Reader::new(&b)).unwrap();
        assert_eq!(p.reason, PacketInReason::Unknown(4));
        assert_eq!(bytes(&p, OFP13_VERSION), b);
    }

    #[test]
    fn a_10_packet_in_without_a_port_says_none() {
        let p = PacketIn {
            buffer_id: u32::MAX,
            total_len: 0,
            reason: PacketInReason::NoMatch,
            table_id: 0,
            cookie: 0,
            match_: Match { fields: vec![] },
            data: vec![],
        };
        assert_eq!(bytes(&p, OFP10_VERSION)[6..8], crate::v10::port::ofpp::NONE.to_be_bytes());
    }

    proptest! {
        #[test]
        fn roundtrip(
            p13 in strategy::arb_packet_in(OFP13_VERSION),
            p10 in strategy::arb_packet_in(OFP10_VERSION),
        ) {
            for (p, v) in [(p13, OFP13_VERSION), (p10, OFP10_VERSION)] {
                assert_roundtrip_in(v, &p, PacketIn::encode, PacketIn::decode);
            }
        }
    }
}
