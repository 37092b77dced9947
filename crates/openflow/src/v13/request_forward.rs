//! `OFPT_REQUESTFORWARD` (OpenFlow 1.4): a group-mod or meter-mod one controller sent,
//! forwarded by the switch to the others. The body is that whole request, header
//! included; it is kept as its bytes ([`RequestForward::request`]) and decoded on demand.

use crate::error::{ErrorKind, OfpError};
use crate::header::{Header, HEADER_LEN};
use crate::wire::{Reader, Writer};
use crate::Frame;

wire_enum! {
    /// `ofp_requestforward_reason`: which requests are forwarded (bit `n` of the
    /// asynchronous configuration's request-forward mask is reason `n`).
    pub enum RequestForwardReason: u8 as from_u8 / to_u8 {
        GroupMod = 0,
        MeterMod = 1,
    }
}

/// An `OFPT_REQUESTFORWARD` body.
///
/// Invariant: `request` is one whole message, at least its 8-byte header, whose header
/// length is its size. Decoding guarantees it (`OFPBRC_BAD_LEN` otherwise); encoding
/// writes the bytes as they are.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RequestForward {
    pub request: Vec<u8>,
}

impl RequestForward {
    /// The request forward of `frame` (encoded as [`Frame::encode`] does).
    pub fn new(frame: &Frame) -> Result<RequestForward, OfpError> {
        Ok(RequestForward { request: frame.encode()? })
    }

    pub fn decode(r: &mut Reader) -> Result<RequestForward, OfpError> {
        let request = r.take_rest();
        let len = match Header::peek(request) {
            Ok(h) => usize::from(h.length),
            Err(_) => 0,
        };
        if request.len() < HEADER_LEN || len != request.len() {
            return Err(OfpError::new(
                ErrorKind::BAD_REQUEST_BAD_LEN,
                format!(
                    "forwarded request of {} bytes whose header says {len}: must be one whole \
                     message",
                    request.len()
                ),
            ));
        }
        Ok(RequestForward { request: request.to_vec() })
    }

    pub fn encode(&self, w: &mut Writer) {
        w.bytes(&self.request);
    }

    /// The forwarded request's header.
    pub fn header(&self) -> Result<Header, OfpError> {
        Header::peek(&self.request)
    }

    /// Decodes the forwarded request.
    pub fn decode_request(&self) -> Result<Frame, OfpError> {
        Frame::decode(&self.request)
    }
}

/// proptest strategy: any whole message forwarded.
#[cfg(test)]
pub(crate) mod strategy {
    use super::*;
    use proptest::prelude::*;

    pub fn arb_request_forward() -> impl Strategy<Value = RequestForward> {
        crate::v13::bundle::strategy::arb_inner_message()
            .prop_map(|request| RequestForward { request })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{assert_refused, assert_roundtrip, encoded};
    use proptest::prelude::*;

    #[test]
    fn spec_bytes() {
        let f = Frame::v14(3, crate::v13::Message::BarrierRequest);
        let rf = RequestForward::new(&f).unwrap();
        let bytes = [5, 20, 0, 8, 0, 0, 0, 3];
        assert_eq!(rf.request, bytes);
        assert_eq!(RequestForward::decode(&mut Reader::new(&bytes)).unwrap(), rf);
        assert_eq!(encoded(|w| rf.encode(w)), bytes);
        assert_eq!(rf.decode_request().unwrap(), f);
        assert_eq!(rf.header().unwrap().xid, 3);
        let cases: &[&[u8]] =
            &[&[], &[5, 20, 0, 8], &[5, 20, 0, 9, 0, 0, 0, 3], &[5, 20, 0, 8, 0, 0, 0, 3, 0]];
        assert_refused(cases, RequestForward::decode, ErrorKind::BAD_REQUEST_BAD_LEN);
    }

    proptest! {
        #[test]
        fn roundtrip(rf in strategy::arb_request_forward()) {
            assert_roundtrip(&rf, RequestForward::encode, RequestForward::decode);
        }
    }
}
