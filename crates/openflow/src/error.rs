//! OpenFlow error types and codes, and the error value every decoder returns.
//!
//! [`ErrorKind`] is an OpenFlow 1.3/1.4 `(type, code)` pair (1.4 keeps 1.3's numbers and
//! adds to them). Named constants cover every type and code of OpenFlow 1.3.5 and 1.4.1
//! (`ofp_error_type` and the `ofp_*_code` enums); any other pair is still representable, so nothing read from the wire is lost. [`OfpError`] pairs a kind
//! with a human-readable detail: every decode or validation failure is one, and
//! [`crate::header::error_reply`] turns it into the `OFPT_ERROR` message a switch sends
//! back, carrying the first bytes of the offending request. [`ErrorKind::to_v10`] maps a kind onto the
//! OpenFlow 1.0 numbering for replies on a 1.0 connection.

use std::fmt;

/// An OpenFlow error `(type, code)` pair, numbered as in OpenFlow 1.3 and 1.4.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ErrorKind {
    pub ty: u16,
    pub code: u16,
}

spec_table! {
    /// `ofp_error_type` numbers of OpenFlow 1.3, then those 1.4 adds (from `BAD_PROPERTY`).
    pub mod error_type: u16 as numbers {
        HELLO_FAILED, BAD_REQUEST, BAD_ACTION, BAD_INSTRUCTION, BAD_MATCH, FLOW_MOD_FAILED,
        GROUP_MOD_FAILED, PORT_MOD_FAILED, TABLE_MOD_FAILED, QUEUE_OP_FAILED,
        SWITCH_CONFIG_FAILED, ROLE_REQUEST_FAILED, METER_MOD_FAILED, TABLE_FEATURES_FAILED,
        BAD_PROPERTY, ASYNC_CONFIG_FAILED, FLOW_MONITOR_FAILED, BUNDLE_FAILED,
        EXPERIMENTER = 0xffff,
    }
}

macro_rules! error_kinds {
    ($( $ty:ident / $tyname:literal : { $( $konst:ident = $code:literal => $name:literal ),* $(,)? } )*) => {
        impl ErrorKind {
            $( $( pub const $konst: ErrorKind = ErrorKind { ty: error_type::$ty, code: $code }; )* )*

            /// Every named kind of OpenFlow 1.3 and 1.4, in numeric order.
            pub const ALL: &'static [ErrorKind] = &[ $( $( ErrorKind::$konst, )* )* ];

            /// The spec's name of the code (`OFPBRC_BAD_LEN`), if it is a named one.
            pub fn code_name(self) -> Option<&'static str> {
                match (self.ty, self.code) {
                    $( $( (error_type::$ty, $code) => Some($name), )* )*
                    _ => None,
                }
            }

            /// The spec's name of the type (`OFPET_BAD_REQUEST`), if it is a named one.
            pub fn type_name(self) -> Option<&'static str> {
                match self.ty {
                    $( error_type::$ty => Some($tyname), )*
                    error_type::EXPERIMENTER => Some("OFPET_EXPERIMENTER"),
                    _ => None,
                }
            }
        }
    };
}

error_kinds! {
    HELLO_FAILED / "OFPET_HELLO_FAILED": {
        HELLO_FAILED_INCOMPATIBLE = 0 => "OFPHFC_INCOMPATIBLE",
        HELLO_FAILED_EPERM = 1 => "OFPHFC_EPERM",
    }
    BAD_REQUEST / "OFPET_BAD_REQUEST": {
        BAD_REQUEST_BAD_VERSION = 0 => "OFPBRC_BAD_VERSION",
        BAD_REQUEST_BAD_TYPE = 1 => "OFPBRC_BAD_TYPE",
        BAD_REQUEST_BAD_MULTIPART = 2 => "OFPBRC_BAD_MULTIPART",
        BAD_REQUEST_BAD_EXPERIMENTER = 3 => "OFPBRC_BAD_EXPERIMENTER",
        BAD_REQUEST_BAD_EXP_TYPE = 4 => "OFPBRC_BAD_EXP_TYPE",
        BAD_REQUEST_EPERM = 5 => "OFPBRC_EPERM",
        BAD_REQUEST_BAD_LEN = 6 => "OFPBRC_BAD_LEN",
        BAD_REQUEST_BUFFER_EMPTY = 7 => "OFPBRC_BUFFER_EMPTY",
        BAD_REQUEST_BUFFER_UNKNOWN = 8 => "OFPBRC_BUFFER_UNKNOWN",
        BAD_REQUEST_BAD_TABLE_ID = 9 => "OFPBRC_BAD_TABLE_ID",
        BAD_REQUEST_IS_SLAVE = 10 => "OFPBRC_IS_SLAVE",
        BAD_REQUEST_BAD_PORT = 11 => "OFPBRC_BAD_PORT",
        BAD_REQUEST_BAD_PACKET = 12 => "OFPBRC_BAD_PACKET",
        BAD_REQUEST_MULTIPART_BUFFER_OVERFLOW = 13 => "OFPBRC_MULTIPART_BUFFER_OVERFLOW",
        BAD_REQUEST_MULTIPART_REQUEST_TIMEOUT = 14 => "OFPBRC_MULTIPART_REQUEST_TIMEOUT",
        BAD_REQUEST_MULTIPART_REPLY_TIMEOUT = 15 => "OFPBRC_MULTIPART_REPLY_TIMEOUT",
    }
    BAD_ACTION / "OFPET_BAD_ACTION": {
        BAD_ACTION_BAD_TYPE = 0 => "OFPBAC_BAD_TYPE",
        BAD_ACTION_BAD_LEN = 1 => "OFPBAC_BAD_LEN",
        BAD_ACTION_BAD_EXPERIMENTER = 2 => "OFPBAC_BAD_EXPERIMENTER",
        BAD_ACTION_BAD_EXP_TYPE = 3 => "OFPBAC_BAD_EXP_TYPE",
        BAD_ACTION_BAD_OUT_PORT = 4 => "OFPBAC_BAD_OUT_PORT",
        BAD_ACTION_BAD_ARGUMENT = 5 => "OFPBAC_BAD_ARGUMENT",
        BAD_ACTION_EPERM = 6 => "OFPBAC_EPERM",
        BAD_ACTION_TOO_MANY = 7 => "OFPBAC_TOO_MANY",
        BAD_ACTION_BAD_QUEUE = 8 => "OFPBAC_BAD_QUEUE",
        BAD_ACTION_BAD_OUT_GROUP = 9 => "OFPBAC_BAD_OUT_GROUP",
        BAD_ACTION_MATCH_INCONSISTENT = 10 => "OFPBAC_MATCH_INCONSISTENT",
        BAD_ACTION_UNSUPPORTED_ORDER = 11 => "OFPBAC_UNSUPPORTED_ORDER",
        BAD_ACTION_BAD_TAG = 12 => "OFPBAC_BAD_TAG",
        BAD_ACTION_BAD_SET_TYPE = 13 => "OFPBAC_BAD_SET_TYPE",
        BAD_ACTION_BAD_SET_LEN = 14 => "OFPBAC_BAD_SET_LEN",
        BAD_ACTION_BAD_SET_ARGUMENT = 15 => "OFPBAC_BAD_SET_ARGUMENT",
    }
    BAD_INSTRUCTION / "OFPET_BAD_INSTRUCTION": {
        BAD_INSTRUCTION_UNKNOWN_INST = 0 => "OFPBIC_UNKNOWN_INST",
        BAD_INSTRUCTION_UNSUP_INST = 1 => "OFPBIC_UNSUP_INST",
        BAD_INSTRUCTION_BAD_TABLE_ID = 2 => "OFPBIC_BAD_TABLE_ID",
        BAD_INSTRUCTION_UNSUP_METADATA = 3 => "OFPBIC_UNSUP_METADATA",
        BAD_INSTRUCTION_UNSUP_METADATA_MASK = 4 => "OFPBIC_UNSUP_METADATA_MASK",
        BAD_INSTRUCTION_BAD_EXPERIMENTER = 5 => "OFPBIC_BAD_EXPERIMENTER",
        BAD_INSTRUCTION_BAD_EXP_TYPE = 6 => "OFPBIC_BAD_EXP_TYPE",
        BAD_INSTRUCTION_BAD_LEN = 7 => "OFPBIC_BAD_LEN",
        BAD_INSTRUCTION_EPERM = 8 => "OFPBIC_EPERM",
        BAD_INSTRUCTION_DUP_INST = 9 => "OFPBIC_DUP_INST",
    }
    BAD_MATCH / "OFPET_BAD_MATCH": {
        BAD_MATCH_BAD_TYPE = 0 => "OFPBMC_BAD_TYPE",
        BAD_MATCH_BAD_LEN = 1 => "OFPBMC_BAD_LEN",
        BAD_MATCH_BAD_TAG = 2 => "OFPBMC_BAD_TAG",
        BAD_MATCH_BAD_DL_ADDR_MASK = 3 => "OFPBMC_BAD_DL_ADDR_MASK",
        BAD_MATCH_BAD_NW_ADDR_MASK = 4 => "OFPBMC_BAD_NW_ADDR_MASK",
        BAD_MATCH_BAD_WILDCARDS = 5 => "OFPBMC_BAD_WILDCARDS",
        BAD_MATCH_BAD_FIELD = 6 => "OFPBMC_BAD_FIELD",
        BAD_MATCH_BAD_VALUE = 7 => "OFPBMC_BAD_VALUE",
        BAD_MATCH_BAD_MASK = 8 => "OFPBMC_BAD_MASK",
        BAD_MATCH_BAD_PREREQ = 9 => "OFPBMC_BAD_PREREQ",
        BAD_MATCH_DUP_FIELD = 10 => "OFPBMC_DUP_FIELD",
        BAD_MATCH_EPERM = 11 => "OFPBMC_EPERM",
    }
    FLOW_MOD_FAILED / "OFPET_FLOW_MOD_FAILED": {
        FLOW_MOD_FAILED_UNKNOWN = 0 => "OFPFMFC_UNKNOWN",
        FLOW_MOD_FAILED_TABLE_FULL = 1 => "OFPFMFC_TABLE_FULL",
        FLOW_MOD_FAILED_BAD_TABLE_ID = 2 => "OFPFMFC_BAD_TABLE_ID",
        FLOW_MOD_FAILED_OVERLAP = 3 => "OFPFMFC_OVERLAP",
        FLOW_MOD_FAILED_EPERM = 4 => "OFPFMFC_EPERM",
        FLOW_MOD_FAILED_BAD_TIMEOUT = 5 => "OFPFMFC_BAD_TIMEOUT",
        FLOW_MOD_FAILED_BAD_COMMAND = 6 => "OFPFMFC_BAD_COMMAND",
        FLOW_MOD_FAILED_BAD_FLAGS = 7 => "OFPFMFC_BAD_FLAGS",
        FLOW_MOD_FAILED_CANT_SYNC = 8 => "OFPFMFC_CANT_SYNC",
        FLOW_MOD_FAILED_BAD_PRIORITY = 9 => "OFPFMFC_BAD_PRIORITY",
    }
    GROUP_MOD_FAILED / "OFPET_GROUP_MOD_FAILED": {
        GROUP_MOD_FAILED_GROUP_EXISTS = 0 => "OFPGMFC_GROUP_EXISTS",
        GROUP_MOD_FAILED_INVALID_GROUP = 1 => "OFPGMFC_INVALID_GROUP",
        GROUP_MOD_FAILED_WEIGHT_UNSUPPORTED = 2 => "OFPGMFC_WEIGHT_UNSUPPORTED",
        GROUP_MOD_FAILED_OUT_OF_GROUPS = 3 => "OFPGMFC_OUT_OF_GROUPS",
        GROUP_MOD_FAILED_OUT_OF_BUCKETS = 4 => "OFPGMFC_OUT_OF_BUCKETS",
        GROUP_MOD_FAILED_CHAINING_UNSUPPORTED = 5 => "OFPGMFC_CHAINING_UNSUPPORTED",
        GROUP_MOD_FAILED_WATCH_UNSUPPORTED = 6 => "OFPGMFC_WATCH_UNSUPPORTED",
        GROUP_MOD_FAILED_LOOP = 7 => "OFPGMFC_LOOP",
        GROUP_MOD_FAILED_UNKNOWN_GROUP = 8 => "OFPGMFC_UNKNOWN_GROUP",
        GROUP_MOD_FAILED_CHAINED_GROUP = 9 => "OFPGMFC_CHAINED_GROUP",
        GROUP_MOD_FAILED_BAD_TYPE = 10 => "OFPGMFC_BAD_TYPE",
        GROUP_MOD_FAILED_BAD_COMMAND = 11 => "OFPGMFC_BAD_COMMAND",
        GROUP_MOD_FAILED_BAD_BUCKET = 12 => "OFPGMFC_BAD_BUCKET",
        GROUP_MOD_FAILED_BAD_WATCH = 13 => "OFPGMFC_BAD_WATCH",
        GROUP_MOD_FAILED_EPERM = 14 => "OFPGMFC_EPERM",
    }
    PORT_MOD_FAILED / "OFPET_PORT_MOD_FAILED": {
        PORT_MOD_FAILED_BAD_PORT = 0 => "OFPPMFC_BAD_PORT",
        PORT_MOD_FAILED_BAD_HW_ADDR = 1 => "OFPPMFC_BAD_HW_ADDR",
        PORT_MOD_FAILED_BAD_CONFIG = 2 => "OFPPMFC_BAD_CONFIG",
        PORT_MOD_FAILED_BAD_ADVERTISE = 3 => "OFPPMFC_BAD_ADVERTISE",
        PORT_MOD_FAILED_EPERM = 4 => "OFPPMFC_EPERM",
    }
    TABLE_MOD_FAILED / "OFPET_TABLE_MOD_FAILED": {
        TABLE_MOD_FAILED_BAD_TABLE = 0 => "OFPTMFC_BAD_TABLE",
        TABLE_MOD_FAILED_BAD_CONFIG = 1 => "OFPTMFC_BAD_CONFIG",
        TABLE_MOD_FAILED_EPERM = 2 => "OFPTMFC_EPERM",
    }
    QUEUE_OP_FAILED / "OFPET_QUEUE_OP_FAILED": {
        QUEUE_OP_FAILED_BAD_PORT = 0 => "OFPQOFC_BAD_PORT",
        QUEUE_OP_FAILED_BAD_QUEUE = 1 => "OFPQOFC_BAD_QUEUE",
        QUEUE_OP_FAILED_EPERM = 2 => "OFPQOFC_EPERM",
    }
    SWITCH_CONFIG_FAILED / "OFPET_SWITCH_CONFIG_FAILED": {
        SWITCH_CONFIG_FAILED_BAD_FLAGS = 0 => "OFPSCFC_BAD_FLAGS",
        SWITCH_CONFIG_FAILED_BAD_LEN = 1 => "OFPSCFC_BAD_LEN",
        SWITCH_CONFIG_FAILED_EPERM = 2 => "OFPSCFC_EPERM",
    }
    ROLE_REQUEST_FAILED / "OFPET_ROLE_REQUEST_FAILED": {
        ROLE_REQUEST_FAILED_STALE = 0 => "OFPRRFC_STALE",
        ROLE_REQUEST_FAILED_UNSUP = 1 => "OFPRRFC_UNSUP",
        ROLE_REQUEST_FAILED_BAD_ROLE = 2 => "OFPRRFC_BAD_ROLE",
    }
    METER_MOD_FAILED / "OFPET_METER_MOD_FAILED": {
        METER_MOD_FAILED_UNKNOWN = 0 => "OFPMMFC_UNKNOWN",
        METER_MOD_FAILED_METER_EXISTS = 1 => "OFPMMFC_METER_EXISTS",
        METER_MOD_FAILED_INVALID_METER = 2 => "OFPMMFC_INVALID_METER",
        METER_MOD_FAILED_UNKNOWN_METER = 3 => "OFPMMFC_UNKNOWN_METER",
        METER_MOD_FAILED_BAD_COMMAND = 4 => "OFPMMFC_BAD_COMMAND",
        METER_MOD_FAILED_BAD_FLAGS = 5 => "OFPMMFC_BAD_FLAGS",
        METER_MOD_FAILED_BAD_RATE = 6 => "OFPMMFC_BAD_RATE",
        METER_MOD_FAILED_BAD_BURST = 7 => "OFPMMFC_BAD_BURST",
        METER_MOD_FAILED_BAD_BAND = 8 => "OFPMMFC_BAD_BAND",
        METER_MOD_FAILED_BAD_BAND_VALUE = 9 => "OFPMMFC_BAD_BAND_VALUE",
        METER_MOD_FAILED_OUT_OF_METERS = 10 => "OFPMMFC_OUT_OF_METERS",
        METER_MOD_FAILED_OUT_OF_BANDS = 11 => "OFPMMFC_OUT_OF_BANDS",
    }
    TABLE_FEATURES_FAILED / "OFPET_TABLE_FEATURES_FAILED": {
        TABLE_FEATURES_FAILED_BAD_TABLE = 0 => "OFPTFFC_BAD_TABLE",
        TABLE_FEATURES_FAILED_BAD_METADATA = 1 => "OFPTFFC_BAD_METADATA",
        TABLE_FEATURES_FAILED_BAD_TYPE = 2 => "OFPTFFC_BAD_TYPE",
        TABLE_FEATURES_FAILED_BAD_LEN = 3 => "OFPTFFC_BAD_LEN",
        TABLE_FEATURES_FAILED_BAD_ARGUMENT = 4 => "OFPTFFC_BAD_ARGUMENT",
        TABLE_FEATURES_FAILED_EPERM = 5 => "OFPTFFC_EPERM",
    }
    BAD_PROPERTY / "OFPET_BAD_PROPERTY": {
        BAD_PROPERTY_BAD_TYPE = 0 => "OFPBPC_BAD_TYPE",
        BAD_PROPERTY_BAD_LEN = 1 => "OFPBPC_BAD_LEN",
        BAD_PROPERTY_BAD_VALUE = 2 => "OFPBPC_BAD_VALUE",
        BAD_PROPERTY_TOO_MANY = 3 => "OFPBPC_TOO_MANY",
        BAD_PROPERTY_DUP_TYPE = 4 => "OFPBPC_DUP_TYPE",
        BAD_PROPERTY_BAD_EXPERIMENTER = 5 => "OFPBPC_BAD_EXPERIMENTER",
        BAD_PROPERTY_BAD_EXP_TYPE = 6 => "OFPBPC_BAD_EXP_TYPE",
        BAD_PROPERTY_BAD_EXP_VALUE = 7 => "OFPBPC_BAD_EXP_VALUE",
        BAD_PROPERTY_EPERM = 8 => "OFPBPC_EPERM",
    }
    ASYNC_CONFIG_FAILED / "OFPET_ASYNC_CONFIG_FAILED": {
        ASYNC_CONFIG_FAILED_INVALID = 0 => "OFPACFC_INVALID",
        ASYNC_CONFIG_FAILED_UNSUPPORTED = 1 => "OFPACFC_UNSUPPORTED",
        ASYNC_CONFIG_FAILED_EPERM = 2 => "OFPACFC_EPERM",
    }
    FLOW_MONITOR_FAILED / "OFPET_FLOW_MONITOR_FAILED": {
        FLOW_MONITOR_FAILED_UNKNOWN = 0 => "OFPMOFC_UNKNOWN",
        FLOW_MONITOR_FAILED_MONITOR_EXISTS = 1 => "OFPMOFC_MONITOR_EXISTS",
        FLOW_MONITOR_FAILED_INVALID_MONITOR = 2 => "OFPMOFC_INVALID_MONITOR",
        FLOW_MONITOR_FAILED_UNKNOWN_MONITOR = 3 => "OFPMOFC_UNKNOWN_MONITOR",
        FLOW_MONITOR_FAILED_BAD_COMMAND = 4 => "OFPMOFC_BAD_COMMAND",
        FLOW_MONITOR_FAILED_BAD_FLAGS = 5 => "OFPMOFC_BAD_FLAGS",
        FLOW_MONITOR_FAILED_BAD_TABLE_ID = 6 => "OFPMOFC_BAD_TABLE_ID",
        FLOW_MONITOR_FAILED_BAD_OUT = 7 => "OFPMOFC_BAD_OUT",
    }
    BUNDLE_FAILED / "OFPET_BUNDLE_FAILED": {
        BUNDLE_FAILED_UNKNOWN = 0 => "OFPBFC_UNKNOWN",
        BUNDLE_FAILED_EPERM = 1 => "OFPBFC_EPERM",
        BUNDLE_FAILED_BAD_ID = 2 => "OFPBFC_BAD_ID",
        BUNDLE_FAILED_BUNDLE_EXIST = 3 => "OFPBFC_BUNDLE_EXIST",
        BUNDLE_FAILED_BUNDLE_CLOSED = 4 => "OFPBFC_BUNDLE_CLOSED",
        BUNDLE_FAILED_OUT_OF_BUNDLES = 5 => "OFPBFC_OUT_OF_BUNDLES",
        BUNDLE_FAILED_BAD_TYPE = 6 => "OFPBFC_BAD_TYPE",
        BUNDLE_FAILED_BAD_FLAGS = 7 => "OFPBFC_BAD_FLAGS",
        BUNDLE_FAILED_MSG_BAD_LEN = 8 => "OFPBFC_MSG_BAD_LEN",
        BUNDLE_FAILED_MSG_BAD_XID = 9 => "OFPBFC_MSG_BAD_XID",
        BUNDLE_FAILED_MSG_UNSUP = 10 => "OFPBFC_MSG_UNSUP",
        BUNDLE_FAILED_MSG_CONFLICT = 11 => "OFPBFC_MSG_CONFLICT",
        BUNDLE_FAILED_MSG_TOO_MANY = 12 => "OFPBFC_MSG_TOO_MANY",
        BUNDLE_FAILED_MSG_FAILED = 13 => "OFPBFC_MSG_FAILED",
        BUNDLE_FAILED_TIMEOUT = 14 => "OFPBFC_TIMEOUT",
        BUNDLE_FAILED_BUNDLE_IN_PROGRESS = 15 => "OFPBFC_BUNDLE_IN_PROGRESS",
    }
}

/// The Open Networking Foundation's experimenter id (`ONF_EXPERIMENTER_ID`), under which
/// OpenFlow 1.3 carries extensions 1.4 made standard (bundles among them).
pub const ONF_EXPERIMENTER_ID: u32 = 0x4f4e_4600;

/// The ONF experimenter error code of 1.3's bundle extension for 1.4's bundle error code
/// 0: the others follow in 1.4's order (`OFPBFC_*` + 2300).
pub const ONF_BUNDLE_ERROR_BASE: u16 = 2300;

/// An error reply's numbers in one version's terms: a standard `(type, code)` pair, or
/// an experimenter error (`OFPET_EXPERIMENTER`: `exp_code` and the experimenter id).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WireError {
    Standard { ty: u16, code: u16 },
    Experimenter { exp_code: u16, experimenter: u32 },
}

impl ErrorKind {
    pub const fn new(ty: u16, code: u16) -> Self {
        ErrorKind { ty, code }
    }

    /// Maps this OpenFlow 1.3 kind onto the OpenFlow 1.0 `(type, code)` numbering, for an
    /// error reply on a 1.0 connection. A kind 1.0 has no counterpart for becomes the
    /// nearest 1.0 code of the same family; each arm names the 1.0 code it picks.
    pub fn to_v10(self) -> (u16, u16) {
        use error_type as t;
        // OpenFlow 1.0 types: 0 HELLO_FAILED, 1 BAD_REQUEST, 2 BAD_ACTION,
        // 3 FLOW_MOD_FAILED, 4 PORT_MOD_FAILED, 5 QUEUE_OP_FAILED.
        match self.ty {
            t::HELLO_FAILED => (0, self.code.min(1)),
            t::BAD_REQUEST => match self.code {
                0..=1 => (1, self.code),
                2 => (1, 2), // BAD_MULTIPART -> OFPBRC_BAD_STAT
                3 => (1, 3), // BAD_EXPERIMENTER -> OFPBRC_BAD_VENDOR
                4 => (1, 4), // BAD_EXP_TYPE -> OFPBRC_BAD_SUBTYPE
                5..=8 => (1, self.code),
                10 => (1, 5), // IS_SLAVE -> EPERM
                _ => (1, 5),  // BAD_TABLE_ID, BAD_PORT, BAD_PACKET, ... -> EPERM
            },
            t::BAD_ACTION => match self.code {
                0..=8 => (2, self.code),
                9 => (2, 4),  // BAD_OUT_GROUP -> BAD_OUT_PORT
                13 => (2, 0), // BAD_SET_TYPE -> BAD_TYPE
                14 => (2, 1), // BAD_SET_LEN -> BAD_LEN
                _ => (2, 5),  // BAD_ARGUMENT
            },
            t::BAD_INSTRUCTION => (2, 0),
            t::BAD_MATCH => (3, 5), // OFPFMFC_UNSUPPORTED
            t::FLOW_MOD_FAILED => match self.code {
                1 => (3, 0), // TABLE_FULL -> ALL_TABLES_FULL
                3 => (3, 1), // OVERLAP
                4 => (3, 2), // EPERM
                5 => (3, 3), // BAD_TIMEOUT -> BAD_EMERG_TIMEOUT
                6 => (3, 4), // BAD_COMMAND
                _ => (3, 5), // UNSUPPORTED
            },
            t::PORT_MOD_FAILED => (4, self.code.min(1)),
            t::QUEUE_OP_FAILED => (5, self.code.min(2)),
            _ => (1, 5), // OFPBRC_EPERM: the request is not one 1.0 can satisfy
        }
    }
}

impl ErrorKind {
    /// This kind as an OpenFlow 1.3 connection gets it: a bundle error (1.4's
    /// `OFPET_BUNDLE_FAILED`) is the ONF experimenter error of 1.3's bundle extension
    /// (`exp_code` 2300 + the 1.4 code, experimenter [`ONF_EXPERIMENTER_ID`]), as Open
    /// vSwitch sends it; every other kind keeps its numbers.
    pub fn to_v13(self) -> WireError {
        match self.ty {
            error_type::BUNDLE_FAILED => WireError::Experimenter {
                exp_code: ONF_BUNDLE_ERROR_BASE.saturating_add(self.code),
                experimenter: ONF_EXPERIMENTER_ID,
            },
            _ => WireError::Standard { ty: self.ty, code: self.code },
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.type_name(), self.code_name()) {
            (Some(t), Some(c)) => write!(f, "{t}/{c}"),
            (Some(t), None) => write!(f, "{t}/code {}", self.code),
            _ => write!(f, "type {}/code {}", self.ty, self.code),
        }
    }
}

impl fmt::Debug for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// A decode or validation failure: the OpenFlow error a switch must answer with, and a
/// detail for logs and CLI messages.
#[derive(Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind}: {detail}")]
pub struct OfpError {
    pub kind: ErrorKind,
    pub detail: String,
}

impl OfpError {
    pub fn new(kind: ErrorKind, detail: impl Into<String>) -> Self {
        OfpError { kind, detail: detail.into() }
    }
}

impl fmt::Debug for OfpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "OfpError({self})")
    }
}

/// How many bytes of the offending message an error reply carries (the spec asks for at
/// least 64).
pub const ERROR_DATA_LEN: usize = 64;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_numbers() {
        assert_eq!(ErrorKind::BAD_MATCH_BAD_PREREQ, ErrorKind::new(4, 9));
        assert_eq!(
            ErrorKind::BAD_MATCH_BAD_PREREQ.to_string(),
            "OFPET_BAD_MATCH/OFPBMC_BAD_PREREQ"
        );
        assert_eq!(ErrorKind::new(99, 1).to_string(), "type 99/code 1");
        let mut all = ErrorKind::ALL.to_vec();
        all.dedup();
        assert_eq!(all.len(), ErrorKind::ALL.len(), "duplicate (type, code)");
        assert!(ErrorKind::ALL.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(ErrorKind::BUNDLE_FAILED_BUNDLE_IN_PROGRESS, ErrorKind::new(17, 15));
        assert_eq!(
            ErrorKind::BAD_PROPERTY_BAD_LEN.to_string(),
            "OFPET_BAD_PROPERTY/OFPBPC_BAD_LEN"
        );
    }

    #[test]
    fn bundle_errors_for_1_3_are_onf_experimenter_errors() {
        assert_eq!(
            ErrorKind::BUNDLE_FAILED_UNKNOWN.to_v13(),
            WireError::Experimenter { exp_code: 2300, experimenter: 0x4f4e_4600 }
        );
        assert_eq!(
            ErrorKind::BUNDLE_FAILED_MSG_UNSUP.to_v13(),
            WireError::Experimenter { exp_code: 2310, experimenter: 0x4f4e_4600 }
        );
        assert_eq!(
            ErrorKind::BAD_PROPERTY_BAD_LEN.to_v13(),
            WireError::Standard { ty: 14, code: 1 }
        );
    }
}
