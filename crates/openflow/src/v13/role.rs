//! Controller roles and asynchronous-message filters (OpenFlow 1.3).
//!
//! `OFPT_ROLE_REQUEST` / `OFPT_ROLE_REPLY` wire form (16 bytes): `role:u32, pad[4],
//! generation_id:u64`.
//!
//! `OFPT_GET_ASYNC_REPLY` / `OFPT_SET_ASYNC` wire form (24 bytes):
//! `packet_in_mask:u32[2], port_status_mask:u32[2], flow_removed_mask:u32[2]`; index 0
//! applies to a master or equal controller, index 1 to a slave. Bit `n` of a mask enables
//! reason `n` of that message.

use crate::error::{ErrorKind, OfpError};

wire_enum! {
    /// `ofp_controller_role`.
    pub enum ControllerRole: u32 as from_u32 / to_u32 {
        NoChange = 0,
        Equal = 1,
        Master = 2,
        Slave = 3,
    }
}

record! {
    /// A role request or reply body.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub struct Role {
        pub role: ControllerRole [pad 4],
        pub generation_id: u64,
    }
}

impl Role {
    /// Rejects a role number the spec does not define (`OFPRRFC_BAD_ROLE`).
    pub fn validate(&self) -> Result<(), OfpError> {
        match self.role {
            ControllerRole::Unknown(n) => Err(OfpError::new(
                ErrorKind::ROLE_REQUEST_FAILED_BAD_ROLE,
                format!("role {n} is not a controller role"),
            )),
            _ => Ok(()),
        }
    }
}

record! {
    /// The asynchronous-message filter of one connection.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
    pub struct AsyncConfig {
        pub packet_in_mask: [u32; 2],
        pub port_status_mask: [u32; 2],
        pub flow_removed_mask: [u32; 2],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{assert_roundtrip, encoded, Reader};
    use proptest::prelude::*;

    #[test]
    fn spec_bytes() {
        let bytes = [0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9];
        let r = Role::decode(&mut Reader::new(&bytes)).unwrap();
        assert_eq!(r, Role { role: ControllerRole::Master, generation_id: 9 });
        assert_eq!(encoded(|w| r.encode(w)), bytes);

        let mut bytes = [0u8; 24];
        bytes[3] = 3; // packet-in master: NO_MATCH | ACTION
        bytes[15] = 7; // port status slave: all reasons
        let a = AsyncConfig::decode(&mut Reader::new(&bytes)).unwrap();
        assert_eq!(a.packet_in_mask, [3, 0]);
        assert_eq!(a.port_status_mask, [0, 7]);
        assert_eq!(a.flow_removed_mask, [0, 0]);
    }

    #[test]
    fn validate() {
        for n in 0..4 {
            let r = Role { role: ControllerRole::from_u32(n), generation_id: 0 };
            assert!(r.validate().is_ok());
        }
        let bad = Role { role: ControllerRole::from_u32(4), generation_id: 0 };
        assert_eq!(bad.validate().unwrap_err().kind, ErrorKind::ROLE_REQUEST_FAILED_BAD_ROLE);
    }

    proptest! {
        #[test]
        fn roundtrip(r in Role::arb(), a in AsyncConfig::arb()) {
            let bytes = assert_roundtrip(&r, Role::encode, Role::decode);
            prop_assert_eq!(bytes.len(), 16);
            let bytes = assert_roundtrip(&a, AsyncConfig::encode, AsyncConfig::decode);
            prop_assert_eq!(bytes.len(), 24);
        }
    }
}
