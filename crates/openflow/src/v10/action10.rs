//! OpenFlow 1.0 actions (`ofp_action_*`).
//!
//! Every action is `type:u16, len:u16, body`; `len` counts the header, is a multiple of
//! 8 and is fixed per type (8 or 16 bytes), except for vendor actions, which are at
//! least 8. Decoding checks the length (`OFPBAC_BAD_LEN`) and the type
//! (`OFPBAC_BAD_TYPE`); vendor actions (Nicira's among them) keep their vendor id and
//! every byte after it, padding included, so they re-encode byte for byte. Argument
//! checks (ports, VLAN ids, ToS bits) are [`Action::validate`]'s job, not the decoder's.

use super::port::ofpp;
use crate::error::{ErrorKind, OfpError};
use crate::wire::{MacAddr, Reader, Tlv8, Writer};
use std::net::Ipv4Addr;

spec_table! {
    /// `ofp_action_type` numbers of OpenFlow 1.0.
    pub mod action_type: u16 as numbers {
        OUTPUT, SET_VLAN_VID, SET_VLAN_PCP, STRIP_VLAN, SET_DL_SRC, SET_DL_DST, SET_NW_SRC,
        SET_NW_DST, SET_NW_TOS, SET_TP_SRC, SET_TP_DST, ENQUEUE, VENDOR = 0xffff,
    }
}

/// One OpenFlow 1.0 action.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// Output to `port`; `max_len` bytes go to the controller when `port` is
    /// `OFPP_CONTROLLER`.
    Output {
        port: u16,
        max_len: u16,
    },
    /// Set (or push) the 802.1Q VLAN id; valid ids are 0..=4095.
    SetVlanVid(u16),
    /// Set the 802.1Q priority; valid values are 0..=7.
    SetVlanPcp(u8),
    StripVlan,
    SetDlSrc(MacAddr),
    SetDlDst(MacAddr),
    SetNwSrc(Ipv4Addr),
    SetNwDst(Ipv4Addr),
    /// Set the IP ToS byte; only the DSCP (upper six bits) may be set.
    SetNwTos(u8),
    SetTpSrc(u16),
    SetTpDst(u16),
    /// Output to a queue of a port.
    Enqueue {
        port: u16,
        queue_id: u32,
    },
    /// A vendor action: the vendor id and every byte after it, padding included
    /// (`8 + data.len()` is the action length, a multiple of 8).
    Vendor {
        vendor: u32,
        data: Vec<u8>,
    },
}

/// The fixed wire length of an action type, `None` for vendor actions and unknown
/// types.
fn fixed_len(ty: u16) -> Option<usize> {
    use action_type as t;
    match ty {
        t::OUTPUT
        | t::SET_VLAN_VID
        | t::SET_VLAN_PCP
        | t::STRIP_VLAN
        | t::SET_NW_SRC
        | t::SET_NW_DST
        | t::SET_NW_TOS
        | t::SET_TP_SRC
        | t::SET_TP_DST => Some(8),
        t::SET_DL_SRC | t::SET_DL_DST | t::ENQUEUE => Some(16),
        _ => None,
    }
}

impl Action {
    /// The action's type number.
    pub fn type_code(&self) -> u16 {
        use action_type as t;
        match self {
            Action::Output { .. } => t::OUTPUT,
            Action::SetVlanVid(_) => t::SET_VLAN_VID,
            Action::SetVlanPcp(_) => t::SET_VLAN_PCP,
            Action::StripVlan => t::STRIP_VLAN,
            Action::SetDlSrc(_) => t::SET_DL_SRC,
            Action::SetDlDst(_) => t::SET_DL_DST,
            Action::SetNwSrc(_) => t::SET_NW_SRC,
            Action::SetNwDst(_) => t::SET_NW_DST,
            Action::SetNwTos(_) => t::SET_NW_TOS,
            Action::SetTpSrc(_) => t::SET_TP_SRC,
            Action::SetTpDst(_) => t::SET_TP_DST,
            Action::Enqueue { .. } => t::ENQUEUE,
            Action::Vendor { .. } => t::VENDOR,
        }
    }

    /// The action's length on the wire.
    pub fn wire_len(&self) -> usize {
        match self {
            Action::SetDlSrc(_) | Action::SetDlDst(_) | Action::Enqueue { .. } => 16,
            Action::Vendor { data, .. } => 8 + data.len(),
            _ => 8,
        }
    }

    /// Reads one action.
    ///
    /// Errors: a framing fault (fewer than 4 bytes, `len` below 8, not a multiple of 8,
    /// past the end of the reader, or not the size of a fixed-size type) →
    /// `OFPBAC_BAD_LEN`; an unknown type → `OFPBAC_BAD_TYPE`.
    pub fn decode(r: &mut Reader) -> Result<Action, OfpError> {
        use action_type as t;
        const FRAMING: Tlv8 = Tlv8 {
            what: "action",
            type_name: |_| "OpenFlow 1.0",
            fixed_len,
            bad_len: ErrorKind::BAD_ACTION_BAD_LEN,
        };
        let (ty, _, mut b) = FRAMING.take(r)?;
        let a = match ty {
            t::OUTPUT => Action::Output { port: b.u16()?, max_len: b.u16()? },
            t::SET_VLAN_VID => Action::SetVlanVid(b.u16()?),
            t::SET_VLAN_PCP => Action::SetVlanPcp(b.u8()?),
            t::STRIP_VLAN => Action::StripVlan,
            t::SET_DL_SRC => Action::SetDlSrc(b.mac()?),
            t::SET_DL_DST => Action::SetDlDst(b.mac()?),
            t::SET_NW_SRC => Action::SetNwSrc(b.ipv4()?),
            t::SET_NW_DST => Action::SetNwDst(b.ipv4()?),
            t::SET_NW_TOS => Action::SetNwTos(b.u8()?),
            t::SET_TP_SRC => Action::SetTpSrc(b.u16()?),
            t::SET_TP_DST => Action::SetTpDst(b.u16()?),
            t::ENQUEUE => {
                let port = b.u16()?;
                b.skip(6)?;
                Action::Enqueue { port, queue_id: b.u32()? }
            }
            t::VENDOR => Action::Vendor { vendor: b.u32()?, data: b.take_rest().to_vec() },
            _ => {
                return Err(OfpError::new(
                    ErrorKind::BAD_ACTION_BAD_TYPE,
                    format!("unknown OpenFlow 1.0 action type {ty}"),
                ))
            }
        };
        Ok(a)
    }

    /// Writes one action. A vendor action whose data does not make a multiple of 8 is
    /// padded with zeros (its length field counts the padding).
    pub fn encode(&self, w: &mut Writer) {
        w.tlv8(self.type_code(), |w| match self {
            Action::Output { port, max_len } => {
                w.u16(*port);
                w.u16(*max_len);
            }
            Action::SetVlanVid(v) | Action::SetTpSrc(v) | Action::SetTpDst(v) => w.u16(*v),
            Action::SetVlanPcp(v) | Action::SetNwTos(v) => w.u8(*v),
            Action::StripVlan => {}
            Action::SetDlSrc(m) | Action::SetDlDst(m) => w.mac(*m),
            Action::SetNwSrc(a) | Action::SetNwDst(a) => w.ipv4(*a),
            Action::Enqueue { port, queue_id } => {
                w.u16(*port);
                w.zeros(6);
                w.u32(*queue_id);
            }
            Action::Vendor { vendor, data } => {
                w.u32(*vendor);
                w.bytes(data);
            }
        });
    }

    /// The stateless argument checks a switch makes: output and enqueue ports must be
    /// a physical port (`1..=OFPP_MAX`) or a reserved port that can receive packets
    /// (`OFPBAC_BAD_OUT_PORT`); VLAN id ≤ 4095, PCP ≤ 7 and a ToS with its two ECN bits
    /// clear (`OFPBAC_BAD_ARGUMENT`). Vendor actions are not judged here.
    pub fn validate(&self) -> Result<(), OfpError> {
        let bad_arg = |what: String| Err(OfpError::new(ErrorKind::BAD_ACTION_BAD_ARGUMENT, what));
        match *self {
            Action::Output { port, .. } if !is_valid_output_port(port) => Err(OfpError::new(
                ErrorKind::BAD_ACTION_BAD_OUT_PORT,
                format!("output to invalid port 0x{port:04x}"),
            )),
            Action::Enqueue { port, .. }
                if !(port != 0 && port <= ofpp::MAX || port == ofpp::IN_PORT) =>
            {
                Err(OfpError::new(
                    ErrorKind::BAD_ACTION_BAD_OUT_PORT,
                    format!("enqueue on invalid port 0x{port:04x}"),
                ))
            }
            Action::SetVlanVid(v) if v > 0x0fff => bad_arg(format!("VLAN id {v} above 4095")),
            Action::SetVlanPcp(v) if v > 7 => bad_arg(format!("VLAN priority {v} above 7")),
            Action::SetNwTos(v) if v & 0x03 != 0 => {
                bad_arg(format!("ToS 0x{v:02x} sets the ECN bits"))
            }
            _ => Ok(()),
        }
    }

    /// Validates every action of a list.
    pub fn validate_list(actions: &[Action]) -> Result<(), OfpError> {
        actions.iter().try_for_each(Action::validate)
    }
}

/// Whether `port` is a valid output port: a physical port `1..=OFPP_MAX` or one of the
/// reserved ports `IN_PORT`, `TABLE`, `NORMAL`, `FLOOD`, `ALL`, `CONTROLLER`, `LOCAL`.
pub fn is_valid_output_port(port: u16) -> bool {
    (port != 0 && port <= ofpp::MAX) || (ofpp::IN_PORT..=ofpp::LOCAL).contains(&port)
}

// OpenFlow 1.0's actions as the action list of version-neutral messages
// (`crate::model::PacketOut`).
wire_by_methods!(WireAction for Action, crate::header::OFP10_VERSION);

/// proptest strategies for 1.0 actions (any field values; vendor data a multiple of 8
/// bytes, so no padding is added).
#[cfg(test)]
pub(crate) mod strategy {
    use super::*;
    use crate::wire::arb_bytes;
    use proptest::prelude::*;

    pub fn arb_action() -> impl Strategy<Value = Action> {
        prop_oneof![
            any::<(u16, u16)>().prop_map(|(port, max_len)| Action::Output { port, max_len }),
            any::<u16>().prop_map(Action::SetVlanVid),
            any::<u8>().prop_map(Action::SetVlanPcp),
            Just(Action::StripVlan),
            any::<[u8; 6]>().prop_map(|m| Action::SetDlSrc(MacAddr(m))),
            any::<[u8; 6]>().prop_map(|m| Action::SetDlDst(MacAddr(m))),
            any::<u32>().prop_map(|a| Action::SetNwSrc(a.into())),
            any::<u32>().prop_map(|a| Action::SetNwDst(a.into())),
            any::<u8>().prop_map(Action::SetNwTos),
            any::<u16>().prop_map(Action::SetTpSrc),
            any::<u16>().prop_map(Action::SetTpDst),
            any::<(u16, u32)>().prop_map(|(port, queue_id)| Action::Enqueue { port, queue_id }),
            (any::<u32>(), 0usize..4).prop_flat_map(|(vendor, n)| {
                arb_bytes(n * 8).prop_map(move |data| Action::Vendor { vendor, data })
            }),
        ]
    }

    pub fn arb_actions() -> impl Strategy<Value = Vec<Action>> {
        proptest::collection::vec(arb_action(), 0..5)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::WireAction;
    use crate::wire::{assert_padded_roundtrip, assert_refused, assert_roundtrip, encoded};
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn roundtrip(a in strategy::arb_action()) {
            let bytes = assert_padded_roundtrip(&a, Action::encode, Action::decode);
            prop_assert_eq!(bytes.len(), a.wire_len());
        }

        #[test]
        fn list_roundtrip(l in strategy::arb_actions()) {
            assert_roundtrip(&l, |l, w| Action::encode_list(l, w), Action::decode_list);
        }

        #[test]
        fn truncated_action_errors(a in strategy::arb_action(), cut in 1usize..24) {
            let bytes = encoded(|w| a.encode(w));
            let n = bytes.len().saturating_sub(cut);
            let e = Action::decode(&mut Reader::new(&bytes[..n])).unwrap_err();
            prop_assert_eq!(e.kind, ErrorKind::BAD_ACTION_BAD_LEN);
        }

        #[test]
        fn random_bytes_never_panic(b in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = Action::decode_list(&mut Reader::new(&b));
        }
    }

    #[test]
    fn exact_bytes() {
        let cases: [(Action, &[u8]); 4] = [
            (Action::Output { port: 6, max_len: 0xffff }, &[0, 0, 0, 8, 0, 6, 0xff, 0xff]),
            (Action::SetVlanPcp(5), &[0, 2, 0, 8, 5, 0, 0, 0]),
            (
                Action::SetDlDst(MacAddr([1, 2, 3, 4, 5, 6])),
                &[0, 5, 0, 16, 1, 2, 3, 4, 5, 6, 0, 0, 0, 0, 0, 0],
            ),
            (
                Action::Enqueue { port: 3, queue_id: 9 },
                &[0, 11, 0, 16, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9],
            ),
        ];
        for (a, want) in cases {
            assert_eq!(encoded(|w| a.encode(w)), want, "{a:?}");
        }
        // A Nicira action, kept opaque.
        let nx = [0xff, 0xff, 0, 16, 0, 0, 0x23, 0x20, 0, 0x12, 0, 0, 0, 0, 0, 0];
        let a = Action::decode(&mut Reader::new(&nx)).unwrap();
        assert_eq!(a, Action::Vendor { vendor: 0x2320, data: vec![0, 0x12, 0, 0, 0, 0, 0, 0] });
        assert_eq!(encoded(|w| a.encode(w)), nx);
    }

    #[test]
    fn vendor_data_is_padded() {
        let a = Action::Vendor { vendor: 1, data: vec![9] };
        assert_eq!(
            encoded(|w| a.encode(w)),
            [0xff, 0xff, 0, 16, 0, 0, 0, 1, 9, 0, 0, 0, 0, 0, 0, 0]
        );
    }

    #[test]
    fn length_errors() {
        let cases: &[&[u8]] = &[
            // Output with length 16.
            &[0, 0, 0, 16, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
            // SetDlSrc with length 8.
            &[0, 4, 0, 8, 1, 2, 3, 4],
            // Length not a multiple of 8.
            &[0, 0, 0, 12, 0, 1, 0, 0, 0, 0, 0, 0],
            // Length zero (would loop forever if accepted).
            &[0, 0, 0, 0, 0, 1, 0, 0],
            // Length beyond the buffer.
            &[0, 0, 0, 16, 0, 1, 0, 0],
            // Fewer than 8 bytes left.
            &[0, 3, 0, 8],
            // Vendor action shorter than 8.
            &[0xff, 0xff, 0, 4, 0, 0, 0, 0],
        ];
        assert_refused(cases, Action::decode_list, ErrorKind::BAD_ACTION_BAD_LEN);
    }

    #[test]
    fn unknown_type_is_bad_type() {
        for ty in [12u16, 25, 0xfffe] {
            let mut b = ty.to_be_bytes().to_vec();
            b.extend_from_slice(&[0, 8, 0, 0, 0, 0]);
            let e = Action::decode(&mut Reader::new(&b)).unwrap_err();
            assert_eq!(e.kind, ErrorKind::BAD_ACTION_BAD_TYPE);
            assert_eq!(e.kind.to_v10(), (2, 0));
        }
    }

    #[test]
    fn validation() {
        let out = |port| Action::Output { port, max_len: 0 };
        for p in [
            1,
            100,
            ofpp::MAX,
            ofpp::IN_PORT,
            ofpp::TABLE,
            ofpp::NORMAL,
            ofpp::FLOOD,
            ofpp::ALL,
            ofpp::CONTROLLER,
            ofpp::LOCAL,
        ] {
            assert!(out(p).validate().is_ok(), "port {p:#x}");
        }
        for p in [0, ofpp::NONE, ofpp::MAX + 1, 0xfff7] {
            let e = out(p).validate().unwrap_err();
            assert_eq!(e.kind, ErrorKind::BAD_ACTION_BAD_OUT_PORT, "port {p:#x}");
            assert_eq!(e.kind.to_v10(), (2, 4));
        }
        let enq = |port| Action::Enqueue { port, queue_id: 1 };
        assert!(enq(5).validate().is_ok());
        assert!(enq(ofpp::IN_PORT).validate().is_ok());
        assert_eq!(
            enq(ofpp::FLOOD).validate().unwrap_err().kind,
            ErrorKind::BAD_ACTION_BAD_OUT_PORT
        );
        assert_eq!(enq(0).validate().unwrap_err().kind, ErrorKind::BAD_ACTION_BAD_OUT_PORT);
        assert!(Action::SetVlanVid(4095).validate().is_ok());
        assert!(Action::SetVlanPcp(7).validate().is_ok());
        assert!(Action::SetNwTos(0xfc).validate().is_ok());
        for bad in [Action::SetVlanVid(4096), Action::SetVlanPcp(8), Action::SetNwTos(0x01)] {
            let e = bad.validate().unwrap_err();
            assert_eq!(e.kind, ErrorKind::BAD_ACTION_BAD_ARGUMENT, "{bad:?}");
            assert_eq!(e.kind.to_v10(), (2, 5));
        }
        let list = [Action::StripVlan, out(0)];
        assert_eq!(
            Action::validate_list(&list).unwrap_err().kind,
            ErrorKind::BAD_ACTION_BAD_OUT_PORT
        );
        assert!(Action::validate_list(&list[..1]).is_ok());
    }
}
