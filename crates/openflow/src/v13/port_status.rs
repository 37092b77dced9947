//! `OFPT_PORT_STATUS` and `OFPT_PORT_MOD` (OpenFlow 1.3).
//!
//! Port status wire form (72 bytes): `reason:u8, pad[7], ofp_port` (64 bytes); the
//! message has one type for every version, [`crate::model::PortStatus`].
//!
//! Port mod wire form (32 bytes): `port_no:u32, pad[4], hw_addr[6], pad[2], config:u32,
//! mask:u32, advertise:u32, pad[4]`. Only the config bits set in `mask` change;
//! `advertise` 0 leaves advertisement unchanged.

use crate::action::port as ofpp;
use crate::error::{ErrorKind, OfpError};
use crate::wire::MacAddr;

/// Port-status and its reasons have one type for every version ([`crate::model`]).
pub use crate::model::{PortReason, PortStatus};

record! {
    /// An `OFPT_PORT_MOD` body.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
    pub struct PortMod {
        pub port_no: u32 [pad 4],
        /// Must equal the port's address (a sanity check by the switch, not a change).
        pub hw_addr: MacAddr [pad 2],
        pub config: u32,
        pub mask: u32,
        pub advertise: u32 [pad 4],
    }
}

impl PortMod {
    /// Rejects a port number above `OFPP_MAX` (`OFPPMFC_BAD_PORT`): reserved ports
    /// cannot be configured. Whether the port exists is for the switch to check.
    pub fn validate(&self) -> Result<(), OfpError> {
        if self.port_no > ofpp::MAX {
            return Err(OfpError::new(
                ErrorKind::PORT_MOD_FAILED_BAD_PORT,
                format!("port 0x{:08x} is not a physical port", self.port_no),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::header::OFP13_VERSION;
    use crate::wire::{assert_roundtrip, encoded, Reader};
    use proptest::prelude::*;

    #[test]
    fn spec_bytes() {
        let mut bytes = vec![2, 0, 0, 0, 0, 0, 0, 0];
        bytes.extend_from_slice(&[0, 0, 0, 7, 0, 0, 0, 0, 0, 0x11, 0x22, 0x33, 0x44, 0x55, 0, 0]);
        bytes.extend_from_slice(b"veth7\0\0\0\0\0\0\0\0\0\0\0");
        bytes.extend_from_slice(&[0, 0, 0, 1]); // config PORT_DOWN
        bytes.extend_from_slice(&[0; 28]);
        let s = PortStatus::decode(OFP13_VERSION, &mut Reader::new(&bytes)).unwrap();
        assert_eq!(s.reason, PortReason::Modify);
        assert_eq!(s.port.port_no, 7);
        assert_eq!(s.port.name, "veth7");
        assert_eq!(s.port.config, 1);
        assert_eq!(encoded(|w| s.encode(OFP13_VERSION, w)), bytes);

        let bytes = [
            0, 0, 0, 3, 0, 0, 0, 0, 0, 0x11, 0x22, 0x33, 0x44, 0x55, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1,
            0, 0, 0, 0, 0, 0, 0, 0,
        ];
        let m = PortMod::decode(&mut Reader::new(&bytes)).unwrap();
        assert_eq!(m.port_no, 3);
        assert_eq!(m.hw_addr, MacAddr([0, 0x11, 0x22, 0x33, 0x44, 0x55]));
        assert_eq!((m.config, m.mask, m.advertise), (1, 1, 0));
        assert_eq!(encoded(|w| m.encode(w)), bytes);
    }

    #[test]
    fn validate() {
        let mut m = PortMod { port_no: ofpp::MAX, ..PortMod::default() };
        assert!(m.validate().is_ok());
        m.port_no = ofpp::LOCAL;
        assert_eq!(m.validate().unwrap_err().kind, ErrorKind::PORT_MOD_FAILED_BAD_PORT);
    }

    proptest! {
        #[test]
        fn roundtrip(m in PortMod::arb()) {
            let bytes = assert_roundtrip(&m, PortMod::encode, PortMod::decode);
            prop_assert_eq!(bytes.len(), 32);
        }
    }
}
