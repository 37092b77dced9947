//! The common OpenFlow header (`ofp_header`) and the version and message-type numbers.
//!
//! Every message starts with `version:u8, type:u8, length:u16, xid:u32`; `length` counts
//! the header and is at least 8. Type numbers differ between 1.0 and 1.3, so each version
//! has its own table of constants.

use crate::error::{ErrorKind, OfpError};
use crate::wire::{Reader, Writer};

pub const OFP10_VERSION: u8 = 0x01;
pub const OFP13_VERSION: u8 = 0x04;
pub const HEADER_LEN: usize = 8;
/// `OFPT_HELLO` and `OFPT_ERROR` share their numbers across all versions.
pub const OFPT_HELLO: u8 = 0;
pub const OFPT_ERROR: u8 = 1;

/// Message type numbers of OpenFlow 1.3.
pub mod t13 {
    pub const HELLO: u8 = 0;
    pub const ERROR: u8 = 1;
    pub const ECHO_REQUEST: u8 = 2;
    pub const ECHO_REPLY: u8 = 3;
    pub const EXPERIMENTER: u8 = 4;
    pub const FEATURES_REQUEST: u8 = 5;
    pub const FEATURES_REPLY: u8 = 6;
    pub const GET_CONFIG_REQUEST: u8 = 7;
    pub const GET_CONFIG_REPLY: u8 = 8;
    pub const SET_CONFIG: u8 = 9;
    pub const PACKET_IN: u8 = 10;
    pub const FLOW_REMOVED: u8 = 11;
    pub const PORT_STATUS: u8 = 12;
    pub const PACKET_OUT: u8 = 13;
    pub const FLOW_MOD: u8 = 14;
    pub const GROUP_MOD: u8 = 15;
    pub const PORT_MOD: u8 = 16;
    pub const TABLE_MOD: u8 = 17;
    pub const MULTIPART_REQUEST: u8 = 18;
    pub const MULTIPART_REPLY: u8 = 19;
    pub const BARRIER_REQUEST: u8 = 20;
    pub const BARRIER_REPLY: u8 = 21;
    pub const QUEUE_GET_CONFIG_REQUEST: u8 = 22;
    pub const QUEUE_GET_CONFIG_REPLY: u8 = 23;
    pub const ROLE_REQUEST: u8 = 24;
    pub const ROLE_REPLY: u8 = 25;
    pub const GET_ASYNC_REQUEST: u8 = 26;
    pub const GET_ASYNC_REPLY: u8 = 27;
    pub const SET_ASYNC: u8 = 28;
    pub const METER_MOD: u8 = 29;
}

/// Message type numbers of OpenFlow 1.0.
pub mod t10 {
    pub const HELLO: u8 = 0;
    pub const ERROR: u8 = 1;
    pub const ECHO_REQUEST: u8 = 2;
    pub const ECHO_REPLY: u8 = 3;
    pub const VENDOR: u8 = 4;
    pub const FEATURES_REQUEST: u8 = 5;
    pub const FEATURES_REPLY: u8 = 6;
    pub const GET_CONFIG_REQUEST: u8 = 7;
    pub const GET_CONFIG_REPLY: u8 = 8;
    pub const SET_CONFIG: u8 = 9;
    pub const PACKET_IN: u8 = 10;
    pub const FLOW_REMOVED: u8 = 11;
    pub const PORT_STATUS: u8 = 12;
    pub const PACKET_OUT: u8 = 13;
    pub const FLOW_MOD: u8 = 14;
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
        Ok(Header {
            version,
            msg_type,
            length,
            xid,
        })
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
