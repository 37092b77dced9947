//! Bundles: `OFPT_BUNDLE_CONTROL` and `OFPT_BUNDLE_ADD_MESSAGE` (OpenFlow 1.4), and the
//! same bodies in OpenFlow 1.3's ONF extension (an `OFPT_EXPERIMENTER` of experimenter
//! `0x4f4e4600` with `exp_type` 2300 for control and 2301 for add, the body after the
//! experimenter header; Open vSwitch's `ovs-ofctl -O OpenFlow13 --bundle` sends these).
//!
//! Bundle control wire form: `bundle_id:u32, type:u16, flags:u16` (8 bytes), then
//! properties ([`Property`]: 1.4 defines only the experimenter's) to the end.
//!
//! Bundle add wire form: `bundle_id:u32, pad[2], flags:u16` (8 bytes), then one whole
//! message (its own header says its length: below 8 or beyond the body is
//! `OFPBFC_MSG_BAD_LEN`), then, only if there are properties, zeros padding that message
//! to a multiple of 8 and the properties. The inner message is kept as its bytes
//! ([`BundleAdd::message`]); [`BundleAdd::decode_message`] decodes it.

use crate::error::{ErrorKind, OfpError, ONF_EXPERIMENTER_ID};
use crate::header::Header;
use crate::v13::property::Property;
use crate::v13::Experimenter;
use crate::wire::{Reader, Writer};
use crate::Frame;

/// The ONF extension's `exp_type` of a bundle control in OpenFlow 1.3.
pub const ONF_ET_BUNDLE_CONTROL: u32 = 2300;
/// The ONF extension's `exp_type` of a bundle add in OpenFlow 1.3.
pub const ONF_ET_BUNDLE_ADD_MESSAGE: u32 = 2301;

wire_enum! {
    /// `ofp_bundle_ctrl_type`.
    pub enum BundleCtrlType: u16 as from_u16 / to_u16 {
        OpenRequest = 0,
        OpenReply = 1,
        CloseRequest = 2,
        CloseReply = 3,
        CommitRequest = 4,
        CommitReply = 5,
        DiscardRequest = 6,
        DiscardReply = 7,
    }
}

spec_table! {
    /// `ofp_bundle_flags` bits.
    pub mod bundle_flags: u16 as bits {
        ATOMIC, ORDERED;
        /// Every bit 1.4 defines.
        pub const ALL: u16 = 3;
    }
}

/// Rejects flag bits 1.4 does not define (`OFPBFC_BAD_FLAGS`) and properties (no
/// experimenter is known: [`Property::unsupported`]).
fn validate_common(flags: u16, properties: &[Property]) -> Result<(), OfpError> {
    if flags & !bundle_flags::ALL != 0 {
        return Err(OfpError::new(
            ErrorKind::BUNDLE_FAILED_BAD_FLAGS,
            format!("bundle flags 0x{flags:04x} set undefined bits"),
        ));
    }
    match properties.first() {
        Some(p) => Err(p.unsupported("bundle")),
        None => Ok(()),
    }
}

/// The body of an ONF experimenter message of `exp_type` decoded by `decode`, if `e` is
/// one; `decode` must read all of it (`OFPBRC_BAD_LEN` otherwise).
fn from_onf<T>(
    e: &Experimenter,
    exp_type: u32,
    decode: impl FnOnce(&mut Reader) -> Result<T, OfpError>,
) -> Option<Result<T, OfpError>> {
    (e.experimenter == ONF_EXPERIMENTER_ID && e.exp_type == exp_type).then(|| {
        let mut r = Reader::new(&e.data);
        let v = decode(&mut r)?;
        r.expect_end("ONF bundle body")?;
        Ok(v)
    })
}

/// An ONF experimenter message of `exp_type` with the body `encode` writes.
fn to_onf(exp_type: u32, encode: impl FnOnce(&mut Writer)) -> Experimenter {
    let mut w = Writer::new();
    encode(&mut w);
    Experimenter { experimenter: ONF_EXPERIMENTER_ID, exp_type, data: w.into_vec() }
}

/// An `OFPT_BUNDLE_CONTROL` body (module comment).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BundleControl {
    pub bundle_id: u32,
    pub ctrl_type: BundleCtrlType,
    /// `OFPBF_*` bits ([`bundle_flags`]).
    pub flags: u16,
    pub properties: Vec<Property>,
}

impl BundleControl {
    /// Length of the fixed part.
    pub const FIXED_LEN: usize = 8;

    pub fn decode(r: &mut Reader) -> Result<BundleControl, OfpError> {
        let bundle_id = r.u32()?;
        let ctrl_type = BundleCtrlType::from_u16(r.u16()?);
        let flags = r.u16()?;
        let properties = Property::decode_list(r, "bundle control")?;
        Ok(BundleControl { bundle_id, ctrl_type, flags, properties })
    }

    pub fn encode(&self, w: &mut Writer) {
        w.u32(self.bundle_id);
        w.u16(self.ctrl_type.to_u16());
        w.u16(self.flags);
        Property::encode_list(&self.properties, w);
    }

    /// The checks a switch makes on a bundle control: a type 1.4 defines
    /// (`OFPBFC_BAD_TYPE`), defined flags (`OFPBFC_BAD_FLAGS`), no properties (none is
    /// supported). Whether the type is a request the switch acts on is for it to say.
    pub fn validate(&self) -> Result<(), OfpError> {
        if let BundleCtrlType::Unknown(n) = self.ctrl_type {
            return Err(OfpError::new(
                ErrorKind::BUNDLE_FAILED_BAD_TYPE,
                format!("bundle control type {n} is not defined"),
            ));
        }
        validate_common(self.flags, &self.properties)
    }

    /// The bundle control an OpenFlow 1.3 experimenter message carries (ONF
    /// experimenter, `exp_type` 2300): `None` if it is no such message, else its body
    /// decoded (as [`Self::decode`] does, which must read it all).
    pub fn from_experimenter(e: &Experimenter) -> Option<Result<BundleControl, OfpError>> {
        from_onf(e, ONF_ET_BUNDLE_CONTROL, BundleControl::decode)
    }

    /// The OpenFlow 1.3 experimenter message carrying this bundle control.
    pub fn to_experimenter(&self) -> Experimenter {
        to_onf(ONF_ET_BUNDLE_CONTROL, |w| self.encode(w))
    }
}

/// An `OFPT_BUNDLE_ADD_MESSAGE` body (module comment).
///
/// Invariant: `message` is one whole message, at least its 8-byte header, whose header
/// length is its size. Decoding guarantees it; encoding writes the bytes as they are
/// ([`BundleAdd::new`] builds them from a [`Frame`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BundleAdd {
    pub bundle_id: u32,
    /// `OFPBF_*` bits ([`bundle_flags`]).
    pub flags: u16,
    /// The message to add to the bundle, header included.
    pub message: Vec<u8>,
    pub properties: Vec<Property>,
}

impl BundleAdd {
    /// Length of the fixed part (before the inner message).
    pub const FIXED_LEN: usize = 8;

    /// The bundle add of `frame` (encoded as [`Frame::encode`] does, which may fail).
    pub fn new(bundle_id: u32, flags: u16, frame: &Frame) -> Result<BundleAdd, OfpError> {
        Ok(BundleAdd { bundle_id, flags, message: frame.encode()?, properties: Vec::new() })
    }

    pub fn decode(r: &mut Reader) -> Result<BundleAdd, OfpError> {
        let bundle_id = r.u32()?;
        r.skip(2)?;
        let flags = r.u16()?;
        let bad = |detail: String| OfpError::new(ErrorKind::BUNDLE_FAILED_MSG_BAD_LEN, detail);
        if r.remaining() < crate::header::HEADER_LEN {
            return Err(bad(format!(
                "bundled message needs an 8-byte header, {} bytes left",
                r.remaining()
            )));
        }
        let len = usize::from(r.peek_u16(2)?);
        if len < crate::header::HEADER_LEN || len > r.remaining() {
            return Err(bad(format!(
                "bundled message of length {len} (at least 8 and at most the {} bytes left)",
                r.remaining()
            )));
        }
        let message = r.bytes(len)?.to_vec();
        let properties = if r.is_empty() {
            Vec::new()
        } else {
            r.skip(len.next_multiple_of(8) - len)?;
            Property::decode_list(r, "bundle add")?
        };
        Ok(BundleAdd { bundle_id, flags, message, properties })
    }

    pub fn encode(&self, w: &mut Writer) {
        w.u32(self.bundle_id);
        w.zeros(2);
        w.u16(self.flags);
        let start = w.len();
        w.bytes(&self.message);
        if !self.properties.is_empty() {
            w.pad_to(start, 8);
            Property::encode_list(&self.properties, w);
        }
    }

    /// The inner message's header.
    pub fn header(&self) -> Result<Header, OfpError> {
        Header::peek(&self.message)
    }

    /// Decodes the inner message.
    pub fn decode_message(&self) -> Result<Frame, OfpError> {
        Frame::decode(&self.message)
    }

    /// The checks a switch makes on a bundle add before looking at its message:
    /// defined flags (`OFPBFC_BAD_FLAGS`), no properties. The inner message's xid must
    /// be the bundle add's (`OFPBFC_MSG_BAD_XID`), which [`Frame::decode_validated`]
    /// checks, having both.
    pub fn validate(&self) -> Result<(), OfpError> {
        validate_common(self.flags, &self.properties)
    }

    /// The bundle add an OpenFlow 1.3 experimenter message carries (ONF experimenter,
    /// `exp_type` 2301): `None` if it is no such message, else its body decoded.
    pub fn from_experimenter(e: &Experimenter) -> Option<Result<BundleAdd, OfpError>> {
        from_onf(e, ONF_ET_BUNDLE_ADD_MESSAGE, BundleAdd::decode)
    }

    /// The OpenFlow 1.3 experimenter message carrying this bundle add.
    pub fn to_experimenter(&self) -> Experimenter {
        to_onf(ONF_ET_BUNDLE_ADD_MESSAGE, |w| self.encode(w))
    }
}

/// proptest strategies for bundle messages.
#[cfg(test)]
pub(crate) mod strategy {
    use super::*;
    use crate::v13::property::strategy::arb_properties;
    use proptest::prelude::*;

    pub fn arb_bundle_control() -> impl Strategy<Value = BundleControl> {
        (any::<u32>(), 0u16..10, any::<u16>(), arb_properties(&[])).prop_map(
            |(bundle_id, ty, flags, properties)| BundleControl {
                bundle_id,
                ctrl_type: BundleCtrlType::from_u16(ty),
                flags,
                properties,
            },
        )
    }

    /// Any whole message: a header of any version, type and xid, and any body.
    pub fn arb_inner_message() -> impl Strategy<Value = Vec<u8>> {
        (any::<[u8; 2]>(), any::<u32>(), crate::wire::arb_bytes(0..40)).prop_map(
            |([version, ty], xid, body)| {
                let mut w = Writer::new();
                let at = Header::encode_start(version, ty, xid, &mut w);
                w.bytes(&body);
                w.patch_len16(at + 2, at);
                w.into_vec()
            },
        )
    }

    pub fn arb_bundle_add() -> impl Strategy<Value = BundleAdd> {
        (any::<u32>(), any::<u16>(), arb_inner_message(), arb_properties(&[])).prop_map(
            |(bundle_id, flags, message, properties)| BundleAdd {
                bundle_id,
                flags,
                message,
                properties,
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{assert_refused, assert_roundtrip, encoded};
    use proptest::prelude::*;

    #[test]
    fn control_spec_bytes() {
        // Bundle 1234, OPEN_REQUEST, ATOMIC, no properties.
        let bytes = [0, 0, 4, 0xd2, 0, 0, 0, 1];
        let c = BundleControl::decode(&mut Reader::new(&bytes)).unwrap();
        let want = BundleControl {
            bundle_id: 1234,
            ctrl_type: BundleCtrlType::OpenRequest,
            flags: bundle_flags::ATOMIC,
            properties: vec![],
        };
        assert_eq!(c, want);
        assert_eq!(encoded(|w| c.encode(w)), bytes);
        assert!(c.validate().is_ok());

        // As OpenFlow 1.3's ONF extension carries it.
        let e = c.to_experimenter();
        assert_eq!((e.experimenter, e.exp_type), (0x4f4e_4600, 2300));
        assert_eq!(e.data, bytes);
        assert_eq!(BundleControl::from_experimenter(&e), Some(Ok(want)));
        let other = Experimenter { experimenter: 0x2320, exp_type: 2300, data: bytes.to_vec() };
        assert_eq!(BundleControl::from_experimenter(&other), None);
        assert_eq!(BundleAdd::from_experimenter(&e), None);
        let short = Experimenter { data: bytes[..6].to_vec(), ..e };
        let err = BundleControl::from_experimenter(&short).unwrap().unwrap_err();
        assert_eq!(err.kind, ErrorKind::BAD_REQUEST_BAD_LEN);
    }

    #[test]
    fn add_spec_bytes() {
        // Bundle 7, ORDERED, an echo request of 10 bytes (xid 5); first without
        // properties, then with one (the message padded to 16 first).
        let echo = [5, 2, 0, 10, 0, 0, 0, 5, 0xab, 0xcd];
        let mut bytes = vec![0, 0, 0, 7, 0, 0, 0, 2];
        bytes.extend_from_slice(&echo);
        let a = BundleAdd::decode(&mut Reader::new(&bytes)).unwrap();
        assert_eq!(
            a,
            BundleAdd { bundle_id: 7, flags: 2, message: echo.to_vec(), properties: vec![] }
        );
        assert_eq!(encoded(|w| a.encode(w)), bytes);
        let inner = a.decode_message().unwrap();
        assert_eq!(inner.xid, 5);
        assert_eq!(inner.version, 5);
        assert_eq!(a.header().unwrap().msg_type, 2);

        let prop = Property::Experimenter { experimenter: 0x65, exp_type: 1, data: vec![] };
        bytes.extend_from_slice(&[0; 6]);
        bytes.extend_from_slice(&[0xff, 0xff, 0, 12, 0, 0, 0, 0x65, 0, 0, 0, 1, 0, 0, 0, 0]);
        let a = BundleAdd::decode(&mut Reader::new(&bytes)).unwrap();
        assert_eq!(a.properties, vec![prop]);
        assert_eq!(encoded(|w| a.encode(w)), bytes);
        assert_eq!(a.validate().unwrap_err().kind, ErrorKind::BAD_PROPERTY_BAD_EXPERIMENTER);

        // Built from a frame, and through 1.3's ONF extension.
        let f = Frame::v13(9, crate::v13::Message::BarrierRequest);
        let a = BundleAdd::new(3, 0, &f).unwrap();
        assert_eq!(a.decode_message().unwrap(), f);
        let e = a.to_experimenter();
        assert_eq!(e.exp_type, 2301);
        assert_eq!(BundleAdd::from_experimenter(&e), Some(Ok(a)));
    }

    #[test]
    fn inner_length_problems() {
        let cases: &[&[u8]] = &[
            // No room for the inner header.
            &[0, 0, 0, 1, 0, 0, 0, 0, 5, 2, 0],
            // Inner length below 8.
            &[0, 0, 0, 1, 0, 0, 0, 0, 5, 2, 0, 4, 0, 0, 0, 0],
            // Inner length beyond the body.
            &[0, 0, 0, 1, 0, 0, 0, 0, 5, 2, 0, 9, 0, 0, 0, 0],
        ];
        assert_refused(cases, BundleAdd::decode, ErrorKind::BUNDLE_FAILED_MSG_BAD_LEN);
        assert_refused(
            &[&[0, 0, 0, 1, 0, 0, 0]],
            BundleAdd::decode,
            ErrorKind::BAD_REQUEST_BAD_LEN,
        );
    }

    #[test]
    fn validate() {
        let c =
            |ctrl_type, flags| BundleControl { bundle_id: 1, ctrl_type, flags, properties: vec![] };
        let kind = |c: BundleControl| c.validate().unwrap_err().kind;
        assert_eq!(kind(c(BundleCtrlType::Unknown(8), 0)), ErrorKind::BUNDLE_FAILED_BAD_TYPE);
        assert_eq!(kind(c(BundleCtrlType::CommitRequest, 4)), ErrorKind::BUNDLE_FAILED_BAD_FLAGS);
        assert!(c(BundleCtrlType::CommitRequest, 3).validate().is_ok());
    }

    proptest! {
        #[test]
        fn roundtrip(c in strategy::arb_bundle_control(), a in strategy::arb_bundle_add()) {
            assert_roundtrip(&c, BundleControl::encode, BundleControl::decode);
            assert_roundtrip(&a, BundleAdd::encode, BundleAdd::decode);
            let e = c.to_experimenter();
            prop_assert_eq!(BundleControl::from_experimenter(&e), Some(Ok(c)));
            let e = a.to_experimenter();
            prop_assert_eq!(BundleAdd::from_experimenter(&e), Some(Ok(a)));
        }
    }
}
