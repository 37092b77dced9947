//! The common OpenFlow header (`ofp_header`) and the version and message-type numbers.
//!
//! Every message starts with `version:u8, type:u8, length:u16, xid:u32`; `length` counts
//! the header and is at least 8. Type numbers differ between 1.0 and 1.3, so each version
//! has its own table of constants.

use crate::error::{error_type, ErrorKind, OfpError, WireError};
use crate::wire::{Reader, Writer};

pub const OFP10_VERSION: u8 = 0x01;
pub const OFP13_VERSION: u8 = 0x04;
/// OpenFlow 1.4 (1.4.1): carried by the 1.3 message model ([`crate::v13`]), whose codecs
/// take the frame's version where the two differ.
pub const OFP14_VERSION: u8 = 0x05;
pub const HEADER_LEN: usize = 8;
/// `OFPT_HELLO` and `OFPT_ERROR` share their numbers across all versions.
pub const OFPT_HELLO: u8 = 0;
pub const OFPT_ERROR: u8 = 1;

spec_table! {
    /// Message type numbers of OpenFlow 1.3, then those 1.4 adds (from `ROLE_STATUS`).
    pub mod t13: u8 as numbers {
        HELLO, ERROR, ECHO_REQUEST, ECHO_REPLY, EXPERIMENTER, FEATURES_REQUEST,
        FEATURES_REPLY, GET_CONFIG_REQUEST, GET_CONFIG_REPLY, SET_CONFIG, PACKET_IN,
        FLOW_REMOVED, PORT_STATUS, PACKET_OUT, FLOW_MOD, GROUP_MOD, PORT_MOD, TABLE_MOD,
        MULTIPART_REQUEST, MULTIPART_REPLY, BARRIER_REQUEST, BARRIER_REPLY,
        QUEUE_GET_CONFIG_REQUEST, QUEUE_GET_CONFIG_REPLY, ROLE_REQUEST, ROLE_REPLY,
        GET_ASYNC_REQUEST, GET_ASYNC_REPLY, SET_ASYNC, METER_MOD, ROLE_STATUS, TABLE_STATUS,
        REQUESTFORWARD, BUNDLE_CONTROL, BUNDLE_ADD_MESSAGE,
    }
}

/// Message type numbers of OpenFlow 1.0: up to `FLOW_MOD` 1.3's (with 1.0's name for
/// the vendor message), then its own.
pub mod t10 {
    pub use super::t13::{
        ECHO_REPLY, ECHO_REQUEST, ERROR, EXPERIMENTER as VENDOR, FEATURES_REPLY, FEATURES_REQUEST,
        FLOW_MOD, FLOW_REMOVED, GET_CONFIG_REPLY, GET_CONFIG_REQUEST, HELLO, PACKET_IN, PACKET_OUT,
        PORT_STATUS, SET_CONFIG,
    };
    pub const PORT_MOD: u8 = 15;
    pub const STATS_REQUEST: u8 = 16;
    pub const STATS_REPLY: u8 = 17;
    pub const BARRIER_REQUEST: u8 = 18;
    pub const BARRIER_REPLY: u8 = 19;
    pub const QUEUE_GET_CONFIG_REQUEST: u8 = 20;
    pub const QUEUE_GET_CONFIG_REPLY: u8 = 21;
}

/// `ofp_header`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub version: u8,
    pub msg_type: u8,
    pub length: u16,
    pub xid: u32,
}

impl Header {
    /// Reads a header and checks that `length` covers at least the header itself.
    pub fn decode(r: &mut Reader) -> Result<Header, OfpError> {
        let version = r.u8()?;
        let msg_type = r.u8()?;
        let length = r.u16()?;
        let xid = r.u32()?;
        if (length as usize) < HEADER_LEN {
            return Err(OfpError::new(
                ErrorKind::BAD_REQUEST_BAD_LEN,
                format!("header length {length} is below the 8-byte minimum"),
            ));
        }
        Ok(Header { version, msg_type, length, xid })
    }

    /// Reads the header at the start of `buf` without consuming anything.
    pub fn peek(buf: &[u8]) -> Result<Header, OfpError> {
        Header::decode(&mut Reader::new(buf))
    }

    /// Writes the header with a zero length placeholder; returns the offset of the
    /// length field for [`Writer::patch_len16`].
    pub fn encode_start(version: u8, msg_type: u8, xid: u32, w: &mut Writer) -> usize {
        let start = w.len();
        w.u8(version);
        w.u8(msg_type);
        w.u16(0);
        w.u32(xid);
        start
    }
}

/// Builds the complete `OFPT_ERROR` message answering `offending` (the raw request, or as
/// much of it as was received). `version` is the connection's negotiated version; the
/// code is renumbered for OpenFlow 1.0 when `version` is 1 ([`ErrorKind::to_v10`]), and
/// a bundle error becomes the ONF experimenter error of 1.3's bundle extension when
/// `version` is 4 ([`ErrorKind::to_v13`]). The reply reuses the request's xid when its
/// header is readable.
pub fn error_reply(version: u8, err: &OfpError, offending: &[u8]) -> Vec<u8> {
    let xid =
        offending.get(4..8).map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]])).unwrap_or(0);
    let data = &offending[..offending.len().min(crate::error::ERROR_DATA_LEN)];
    if version == OFP10_VERSION {
        let (ty, code) = err.kind.to_v10();
        return error_message(version, xid, ty, code, data);
    }
    match err.kind {
        k if version == OFP13_VERSION => match k.to_v13() {
            WireError::Standard { ty, code } => error_message(version, xid, ty, code, data),
            WireError::Experimenter { exp_code, experimenter } => {
                let mut body = experimenter.to_be_bytes().to_vec();
                body.extend_from_slice(data);
                error_message(version, xid, error_type::EXPERIMENTER, exp_code, &body)
            }
        },
        k => error_message(version, xid, k.ty, k.code, data),
    }
}

/// An `OFPT_ERROR` message of wire `version` with `xid`, type `ty`, code `code` and
/// `data` (the layout is the same in every version; `data` must leave the message
/// under 64 KiB). For `OFPET_EXPERIMENTER`, `code` is the `exp_code` and `data` starts
/// with the experimenter id.
pub fn error_message(version: u8, xid: u32, ty: u16, code: u16, data: &[u8]) -> Vec<u8> {
    let len = 12 + data.len();
    let mut out = Vec::with_capacity(len);
    out.push(version);
    out.push(OFPT_ERROR);
    out.extend_from_slice(&(len as u16).to_be_bytes());
    out.extend_from_slice(&xid.to_be_bytes());
    out.extend_from_slice(&ty.to_be_bytes());
    out.extend_from_slice(&code.to_be_bytes());
    out.extend_from_slice(data);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reply_carries_request_head_and_xid() {
        let mut req = vec![4u8, 14, 0, 100, 0xde, 0xad, 0xbe, 0xef];
        req.resize(100, 0xaa);
        let e = OfpError::new(ErrorKind::FLOW_MOD_FAILED_BAD_COMMAND, "command 9");
        let r = error_reply(4, &e, &req);
        assert_eq!(r.len(), 12 + 64);
        assert_eq!(&r[..12], &[4, 1, 0, 76, 0xde, 0xad, 0xbe, 0xef, 0, 5, 0, 6]);
        assert_eq!(&r[12..], &req[..64]);
        let r10 = error_reply(1, &e, &req[..20]);
        assert_eq!(&r10[8..12], &[0, 3, 0, 4]);
        assert_eq!(r10.len(), 32);
    }

    #[test]
    fn bundle_errors_on_1_3_are_onf_experimenter_errors() {
        let req = [4u8, 4, 0, 16, 0, 0, 0, 9, 0x4f, 0x4e, 0x46, 0, 0, 0, 0x08, 0xfc];
        let e = OfpError::new(ErrorKind::BUNDLE_FAILED_BAD_ID, "no bundle 7");
        let r = error_reply(4, &e, &req);
        // OFPET_EXPERIMENTER, exp_code 2302, experimenter ONF, then the request.
        let head = [4, 1, 0, 32, 0, 0, 0, 9, 0xff, 0xff, 0x08, 0xfe, 0x4f, 0x4e, 0x46, 0];
        assert_eq!(&r[..16], &head);
        assert_eq!(&r[16..], &req);
        // 1.4 has the standard type; other kinds keep their numbers on 1.3.
        let r14 = error_reply(5, &e, &req);
        assert_eq!(&r14[..12], &[5, 1, 0, 28, 0, 0, 0, 9, 0, 17, 0, 2]);
        let p = OfpError::new(ErrorKind::BAD_PROPERTY_BAD_TYPE, "type 9");
        assert_eq!(&error_reply(4, &p, &req)[8..12], &[0, 14, 0, 0]);
    }
}
