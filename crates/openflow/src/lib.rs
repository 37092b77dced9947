//! The OpenFlow wire protocol, versions 1.4 (1.4.1), 1.3 (1.3.5) and 1.0, for peregrine.
//!
//! Two levels, in the style of smoltcp's `wire` module: [`wire::Reader`] is a view over
//! received bytes whose accessors never panic, and each protocol structure has a typed
//! representation with `decode` (from a reader, validating lengths and numbers) and
//! `encode` (into a [`wire::Writer`]). Numeric codes that may grow (commands, reasons,
//! types) are enums with an `Unknown(n)` variant, so nothing read is lost; what cannot be
//! represented is a decode error, an [`OfpError`] that names the exact `OFPT_ERROR`
//! type/code a switch answers with ([`header::error_reply`] builds that reply).
//!
//! - [`Frame`] is one whole message of any version: header fields plus
//!   [`v13::Message`] (1.3 and 1.4, whose codecs take the frame's version where the two
//!   differ) or [`v10::Message`].
//! - [`framing::Framer`] splits a byte stream into messages.
//! - [`model`] holds what both versions share as one type: the port description and
//!   port-status ([`model::Port`], [`model::PortStatus`]) and the port, queue and table
//!   counters, which both codecs decode into and encode from by version; and
//!   version-neutral views of flows and features built from either version's messages.
//! - [`text`] holds the ovs-ofctl text form of flows, actions, groups and meters, and
//!   [`text::print`] prints whole messages as ovs-ofctl does.
//!
//! This crate does no I/O and knows nothing of tables or ports.

#![forbid(unsafe_code)]

#[macro_use]
extern crate headers;

#[macro_use]
mod record;

pub mod action;
pub mod error;
pub mod framing;
pub mod header;
pub mod instruction;
pub mod match13;
pub mod model;
pub mod oxm;
pub mod text;
pub mod v10;
pub mod v13;
pub mod versions;
pub mod wire;

pub use error::{ErrorKind, OfpError};
pub use header::{error_reply, Header, OFP10_VERSION, OFP13_VERSION, OFP14_VERSION};
pub use versions::Versions;
pub use wire::{MacAddr, Reader, Writer};

/// A message of any supported version: 1.3 and 1.4 share [`v13::Message`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    V13(v13::Message),
    V10(v10::Message),
}

/// One complete OpenFlow message: the header's version and xid, and the typed body.
///
/// A hello of any version decodes (it is how versions are negotiated): versions other
/// than 1.0 use the 1.3 hello form (elements), and `version` keeps the number read.
/// Every other message must be version 1, 4 or 5 (`OFPBRC_BAD_VERSION` otherwise); 4 and
/// 5 are both [`Message::V13`], the codec laying bodies out by `version`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    pub version: u8,
    pub xid: u32,
    pub message: Message,
}

impl Frame {
    pub fn v13(xid: u32, message: v13::Message) -> Self {
        Frame { version: OFP13_VERSION, xid, message: Message::V13(message) }
    }

    pub fn v14(xid: u32, message: v13::Message) -> Self {
        Frame { version: OFP14_VERSION, xid, message: Message::V13(message) }
    }

    pub fn v10(xid: u32, message: v10::Message) -> Self {
        Frame { version: OFP10_VERSION, xid, message: Message::V10(message) }
    }

    /// Decodes exactly one message; `bytes` must be the whole message (as the framer
    /// yields it): the header length must equal `bytes.len()`.
    pub fn decode(bytes: &[u8]) -> Result<Frame, OfpError> {
        let mut r = Reader::new(bytes);
        let h = Header::decode(&mut r)?;
        if h.length as usize != bytes.len() {
            return Err(OfpError::new(
                ErrorKind::BAD_REQUEST_BAD_LEN,
                format!("header length {} but message is {} bytes", h.length, bytes.len()),
            ));
        }
        let message = match h.version {
            OFP13_VERSION | OFP14_VERSION => {
                Message::V13(v13::Message::decode_version(h.version, h.msg_type, &mut r)?)
            }
            OFP10_VERSION => Message::V10(v10::Message::decode(h.msg_type, &mut r)?),
            _ if h.msg_type == header::OFPT_HELLO => {
                Message::V13(v13::Message::decode_version(h.version, h.msg_type, &mut r)?)
            }
            v => {
                return Err(OfpError::new(
                    ErrorKind::BAD_REQUEST_BAD_VERSION,
                    format!("unsupported OpenFlow version 0x{v:02x}"),
                ))
            }
        };
        Ok(Frame { version: h.version, xid: h.xid, message })
    }

    /// Decodes and then applies the stateless semantic checks a switch makes on a
    /// request (see [`v13::Message::validate_version`] and [`v10::Message::validate`]),
    /// and the one that needs the header: a bundle add's inner message has the bundle
    /// add's xid (`OFPBFC_MSG_BAD_XID`).
    pub fn decode_validated(bytes: &[u8]) -> Result<Frame, OfpError> {
        let f = Frame::decode(bytes)?;
        match &f.message {
            Message::V13(m) => m.validate_version(f.version)?,
            Message::V10(m) => m.validate()?,
        }
        if let Message::V13(v13::Message::BundleAdd(a)) = &f.message {
            let inner = a.header()?.xid;
            if inner != f.xid {
                return Err(OfpError::new(
                    ErrorKind::BUNDLE_FAILED_MSG_BAD_XID,
                    format!("bundled message xid {inner:#x} is not the bundle add's {:#x}", f.xid),
                ));
            }
        }
        Ok(f)
    }

    /// The message type number written in the header.
    pub fn msg_type(&self) -> u8 {
        match &self.message {
            Message::V13(m) => m.msg_type(),
            Message::V10(m) => m.msg_type(),
        }
    }

    /// Encodes the whole message, the body laid out for `version`. Fails if the body
    /// exceeds 65535 bytes (`OFPBRC_BAD_LEN`; callers split multipart replies before
    /// that) or if `version` has no such message type (`OFPBRC_BAD_TYPE`: a 1.4-only
    /// message in a 1.3 frame, or 1.3's queue configuration in a 1.4 one).
    pub fn encode(&self) -> Result<Vec<u8>, OfpError> {
        let mut w = Writer::with_capacity(64);
        let at = Header::encode_start(self.version, self.msg_type(), self.xid, &mut w);
        match &self.message {
            Message::V13(m) if !m.in_version(self.version) => {
                return Err(OfpError::new(
                    ErrorKind::BAD_REQUEST_BAD_TYPE,
                    format!("{} is no message of version 0x{:02x}", m.name(), self.version),
                ))
            }
            Message::V13(m) => m.encode_version(self.version, &mut w),
            Message::V10(m) => m.encode_body(&mut w),
        }
        if w.len() > u16::MAX as usize {
            return Err(OfpError::new(
                ErrorKind::BAD_REQUEST_BAD_LEN,
                format!("message of {} bytes exceeds 65535", w.len()),
            ));
        }
        w.patch_len16(at + 2, at);
        Ok(w.into_vec())
    }
}

#[cfg(test)]
mod tests {
    //! Whole-message properties over every message type of both versions: encode→decode
    //! identity, and decode totality over random, truncated and mutated bytes.

    use super::*;
    use proptest::prelude::*;

    fn arb_frame() -> impl Strategy<Value = Frame> {
        prop_oneof![
            (any::<u32>(), v13::strategy::arb_message()).prop_map(|(x, m)| Frame::v13(x, m)),
            (any::<u32>(), v13::strategy::arb_message_in(OFP14_VERSION))
                .prop_map(|(x, m)| Frame::v14(x, m)),
            (any::<u32>(), v10::strategy::arb_message()).prop_map(|(x, m)| Frame::v10(x, m)),
            (any::<u32>(), v13::multipart::strategy::arb_multipart_request())
                .prop_map(|(x, m)| Frame::v13(x, v13::Message::MultipartRequest(m))),
            (any::<u32>(), v13::multipart::strategy::arb_multipart_reply())
                .prop_map(|(x, m)| Frame::v13(x, v13::Message::MultipartReply(m))),
        ]
    }

    /// Frames that fit in one message (list strategies can exceed 64 KiB).
    fn encodable(f: &Frame) -> Option<Vec<u8>> {
        f.encode().ok()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn encode_decode_identity(f in arb_frame()) {
            if let Some(bytes) = encodable(&f) {
                let h = Header::peek(&bytes).unwrap();
                prop_assert_eq!(h.length as usize, bytes.len());
                prop_assert_eq!(h.msg_type, f.msg_type());
                let back = Frame::decode(&bytes).unwrap();
                prop_assert_eq!(&back, &f);
                prop_assert_eq!(back.encode().unwrap(), bytes);
            }
        }

        #[test]
        fn random_bytes_never_panic(
            version in prop_oneof![Just(1u8), Just(4u8), Just(5u8), any::<u8>()],
            ty in 0u8..36,
            body in proptest::collection::vec(any::<u8>(), 0..300),
        ) {
            let mut b = vec![version, ty, 0, 0, 0, 0, 0, 1];
            b.extend_from_slice(&body);
            let l = b.len() as u16;
            b[2..4].copy_from_slice(&l.to_be_bytes());
            let _ = Frame::decode_validated(&b);
            if let Ok(f) = Frame::decode(&b) {
                let again = Frame::decode(&f.encode().unwrap()).unwrap();
                prop_assert_eq!(again, f);
            }
        }

        #[test]
        fn truncated_and_mutated_messages_never_panic(
            f in arb_frame(),
            cut in any::<prop::sample::Index>(),
            flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
        ) {
            if let Some(bytes) = encodable(&f) {
                // Truncated, with the header length adjusted to the cut so framing passes.
                let n = 8 + cut.index(bytes.len() - 7);
                let mut t = bytes[..n.min(bytes.len())].to_vec();
                let l = t.len() as u16;
                t[2..4].copy_from_slice(&l.to_be_bytes());
                if t.len() < bytes.len() {
                    if let Ok(g) = Frame::decode(&t) {
                        // The same message back is only right when what was cut is
                        // trailing padding (a HELLO element's, which decoders accept
                        // without its padding, as Open vSwitch does).
                        if g == f {
                            prop_assert!(
                                bytes[t.len()..].iter().all(|&b| b == 0),
                                "cut {} non-padding bytes and decoded the same: {:?}",
                                bytes.len() - t.len(),
                                f
                            );
                        }
                    }
                }
                // Mutated bytes past the header.
                let mut m = bytes.clone();
                for (i, v) in &flips {
                    if m.len() > 8 {
                        let at = 8 + i.index(m.len() - 8);
                        m[at] ^= v | 1;
                    }
                }
                let _ = Frame::decode_validated(&m);
                if let Ok(g) = Frame::decode(&m) {
                    let again = Frame::decode(&g.encode().unwrap()).unwrap();
                    prop_assert_eq!(again, g);
                }
            }
        }
    }
}
