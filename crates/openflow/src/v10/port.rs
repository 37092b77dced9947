//! OpenFlow 1.0 ports: port numbers, the bits of `ofp_phy_port` and `OFPT_PORT_MOD`.
//!
//! The port description (`ofp_phy_port`, 48 bytes) and `OFPT_PORT_STATUS` have one type
//! for every version, [`crate::model::Port`] and [`crate::model::PortStatus`]: decoded
//! from 1.0 they hold 1.3-numbered ports, features in the 1.3 layout and speeds derived
//! from the features; the constants below are the 1.0 wire's bits.
//!
//! 1.0 port numbers are 16 bits: physical ports are `1..=OFPP_MAX` (0xff00), reserved
//! ports sit at `0xfff8..=0xffff`. [`port_to_v13`] / [`port_from_v13`] renumber between
//! the 16-bit and the 32-bit (1.3) spaces the way Open vSwitch does: the reserved range
//! `0xff00..` maps onto `0xffffff00..`.

use crate::wire::MacAddr;

spec_table! {
    /// `OFPP_*` port numbers of OpenFlow 1.0.
    pub mod ofpp: u16 as numbers {
        /// Largest physical port number.
        MAX = 0xff00,
        IN_PORT = 0xfff8, TABLE, NORMAL, FLOOD, ALL, CONTROLLER, LOCAL,
        /// Not a port: "no output port" in flow mods and stats requests.
        NONE,
    }
}

/// A 1.0 port number in the 1.3 numbering (`0xff00..=0xffff` → `0xffffff00..`).
pub fn port_to_v13(port: u16) -> u32 {
    if port >= ofpp::MAX {
        0xffff_0000 | u32::from(port)
    } else {
        u32::from(port)
    }
}

/// A 1.3 port number in the 1.0 numbering, `None` if it has no 1.0 counterpart
/// (`0xff00..0xffffff00`).
pub fn port_from_v13(port: u32) -> Option<u16> {
    if port < u32::from(ofpp::MAX) {
        Some(port as u16)
    } else if port >= 0xffff_ff00 {
        Some((port & 0xffff) as u16)
    } else {
        None
    }
}

/// Length of `ofp_phy_port` on the wire.
pub const PHY_PORT_LEN: usize = 48;
/// Length of the name field (`OFP_MAX_PORT_NAME_LEN`).
pub const PORT_NAME_LEN: usize = 16;

spec_table! {
    /// `ofp_port_config` bits (1.0).
    pub mod port_config: u32 as bits {
        PORT_DOWN, NO_STP, NO_RECV, NO_RECV_STP, NO_FLOOD, NO_FWD, NO_PACKET_IN,
    }
}

spec_table! {
    /// `ofp_port_state` bits and STP state values (1.0).
    pub mod port_state: u32 as bits {
        LINK_DOWN;
        pub const STP_LISTEN: u32 = 0 << 8;
        pub const STP_LEARN: u32 = 1 << 8;
        pub const STP_FORWARD: u32 = 2 << 8;
        pub const STP_BLOCK: u32 = 3 << 8;
        pub const STP_MASK: u32 = 3 << 8;
    }
}

spec_table! {
    /// `ofp_port_features` bits (1.0): the speeds up to 10 Gb/s at 1.3's places, then the
    /// media bits four places lower than 1.3 has them.
    pub mod port_features: u32 as bits {
        COPPER = 7, FIBER, AUTONEG, PAUSE, PAUSE_ASYM;
        pub use crate::v13::port::port_features::{
            F_100MB_FD, F_100MB_HD, F_10GB_FD, F_10MB_FD, F_10MB_HD, F_1GB_FD, F_1GB_HD,
        };
    }
}

/// The port description and port-status have one type for every version
/// ([`crate::model`]).
pub use crate::model::{Port, PortReason, PortStatus};

record! {
    /// `OFPT_PORT_MOD` body: `port_no:u16, hw_addr[6], config:u32, mask:u32,
    /// advertise:u32, pad[4]` (24 bytes). Only the `config` bits set in `mask` change;
    /// `advertise` 0 leaves the advertised features alone.
    #[derive(Clone, Debug, PartialEq, Eq, Hash)]
    pub struct PortMod {
        pub port_no: u16,
        pub hw_addr: MacAddr,
        pub config: u32,
        pub mask: u32,
        pub advertise: u32 [pad 4],
    }
}

impl PortMod {
    pub const BODY_LEN: usize = 24;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::header::OFP10_VERSION;
    use crate::model::port::Wire;
    use crate::wire::{assert_roundtrip, encoded, Reader};
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn port_mod_roundtrip(p in PortMod::arb()) {
            let bytes = assert_roundtrip(&p, PortMod::encode, PortMod::decode);
            prop_assert_eq!(bytes.len(), PortMod::BODY_LEN);
        }

        #[test]
        fn port_numbers_roundtrip_through_v13(p in any::<u16>()) {
            prop_assert_eq!(port_from_v13(port_to_v13(p)), Some(p));
        }
    }

    #[test]
    fn port_renumbering() {
        assert_eq!(port_to_v13(1), 1);
        assert_eq!(port_to_v13(0xfeff), 0xfeff);
        assert_eq!(port_to_v13(ofpp::MAX), 0xffff_ff00);
        assert_eq!(port_to_v13(ofpp::CONTROLLER), crate::action::port::CONTROLLER);
        assert_eq!(port_to_v13(ofpp::NONE), crate::action::port::ANY);
        assert_eq!(port_from_v13(crate::action::port::LOCAL), Some(ofpp::LOCAL));
        assert_eq!(port_from_v13(0x1_0000), None);
        assert_eq!(port_from_v13(0xffff_feff), None);
    }

    #[test]
    fn phy_port_bytes() {
        let p = Port::from_wire(
            OFP10_VERSION,
            Wire {
                port_no: 7,
                hw_addr: MacAddr([0xf2, 0x0b, 0xa4, 0xd0, 0x3f, 0x70]),
                name: "Port7".into(),
                config: 0,
                state: 0,
                features: [0x10, 0x288, 0x280, 0x288],
                speeds: [0, 0],
            },
        );
        let got = encoded(|w| p.encode(OFP10_VERSION, w));
        let mut want = vec![0, 7, 0xf2, 0x0b, 0xa4, 0xd0, 0x3f, 0x70];
        want.extend_from_slice(b"Port7\0\0\0\0\0\0\0\0\0\0\0");
        for v in [0u32, 0, 0x10, 0x288, 0x280, 0x288] {
            want.extend_from_slice(&v.to_be_bytes());
        }
        assert_eq!(got, want);
        assert_eq!(Port::decode(OFP10_VERSION, &mut Reader::new(&want)).unwrap(), p);
        for n in 0..PHY_PORT_LEN {
            assert!(Port::decode(OFP10_VERSION, &mut Reader::new(&want[..n])).is_err());
        }
    }
}
