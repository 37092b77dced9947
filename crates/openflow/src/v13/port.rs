//! The OpenFlow 1.3 port description (`ofp_port`, 64 bytes): its bits.
//!
//! Used by port-status messages and the port-description multipart reply. The
//! description has one type for every version, [`crate::model::Port`] (decoded from 1.3
//! it holds the wire's numbers, features and speeds as they are); the constants below
//! are the 1.3 wire's bits, which the neutral type keeps at the same places.

/// Length of `ofp_port` on the wire.
pub const PORT_LEN: usize = 64;
/// Length of the name field (`OFP_MAX_PORT_NAME_LEN`).
pub const PORT_NAME_LEN: usize = 16;

/// `ofp_port_config` bits: the ones 1.0 has at the same places, less its STP and flood
/// bits.
pub mod port_config {
    pub use crate::v10::port::port_config::{NO_FWD, NO_PACKET_IN, NO_RECV, PORT_DOWN};
}

/// `ofp_port_state` bits.
pub mod port_state {
    pub const LINK_DOWN: u32 = 1 << 0;
    pub const BLOCKED: u32 = 1 << 1;
    pub const LIVE: u32 = 1 << 2;
}

/// `ofp_port_features` bits.
pub mod port_features {
    pub const F_10MB_HD: u32 = 1 << 0;
    pub const F_10MB_FD: u32 = 1 << 1;
    pub const F_100MB_HD: u32 = 1 << 2;
    pub const F_100MB_FD: u32 = 1 << 3;
    pub const F_1GB_HD: u32 = 1 << 4;
    pub const F_1GB_FD: u32 = 1 << 5;
    pub const F_10GB_FD: u32 = 1 << 6;
    pub const F_40GB_FD: u32 = 1 << 7;
    pub const F_100GB_FD: u32 = 1 << 8;
    pub const F_1TB_FD: u32 = 1 << 9;
    pub const F_OTHER: u32 = 1 << 10;
    pub const COPPER: u32 = 1 << 11;
    pub const FIBER: u32 = 1 << 12;
    pub const AUTONEG: u32 = 1 << 13;
    pub const PAUSE: u32 = 1 << 14;
    pub const PAUSE_ASYM: u32 = 1 << 15;
}

/// The port description has one type for every version ([`crate::model`]).
pub use crate::model::Port;
