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

spec_table! {
    /// `ofp_port_state` bits.
    pub mod port_state: u32 as bits {
        LINK_DOWN, BLOCKED, LIVE,
    }
}

spec_table! {
    /// `ofp_port_features` bits.
    pub mod port_features: u32 as bits {
        F_10MB_HD, F_10MB_FD, F_100MB_HD, F_100MB_FD, F_1GB_HD, F_1GB_FD, F_10GB_FD,
        F_40GB_FD, F_100GB_FD, F_1TB_FD, F_OTHER, COPPER, FIBER, AUTONEG, PAUSE, PAUSE_ASYM,
    }
}

/// The port description has one type for every version ([`crate::model`]).
pub use crate::model::Port;
