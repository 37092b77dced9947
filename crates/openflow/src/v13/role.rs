//! Controller roles and asynchronous-message filters (OpenFlow 1.3).
//!
//! `OFPT_ROLE_REQUEST` / `OFPT_ROLE_REPLY` wire form (16 bytes): `role:u32, pad[4],
//! generation_id:u64`.
//!
//! `OFPT_ROLE_STATUS` (1.4) wire form: `role:u32, reason:u8, pad[3], generation_id:u64`
//! (16 bytes), then properties (1.4 defines only the experimenter's).
//!
//! `OFPT_GET_ASYNC_REPLY` / `OFPT_SET_ASYNC` wire form (24 bytes):
//! `packet_in_mask:u32[2], port_status_mask:u32[2], flow_removed_mask:u32[2]`; index 0
//! applies to a master or equal controller, index 1 to a slave. Bit `n` of a mask enables
//! reason `n` of that message.

use crate::error::{ErrorKind, OfpError};
use crate::v13::property::Property;
use crate::wire::{Reader, Writer};

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

wire_enum! {
    /// `ofp_controller_role_reason` (1.4): why a role-status was sent.
    pub enum ControllerRoleReason: u8 as from_u8 / to_u8 {
        /// Another controller asked to be master.
        MasterRequest = 0,
        /// The switch's configuration changed.
        Config = 1,
        /// Experimenter data changed.
        Experimenter = 2,
    }
}

/// An `OFPT_ROLE_STATUS` body (OpenFlow 1.4): the controller's new role and why.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RoleStatus {
    pub role: ControllerRole,
    pub reason: ControllerRoleReason,
    pub generation_id: u64,
    /// In wire order.
    pub properties: Vec<Property>,
}

impl RoleStatus {
    /// Length of the fixed part.
    pub const FIXED_LEN: usize = 16;

    pub fn decode(r: &mut Reader) -> Result<RoleStatus, OfpError> {
        let role = ControllerRole::from_u32(r.u32()?);
        let reason = ControllerRoleReason::from_u8(r.u8()?);
        r.skip(3)?;
        let generation_id = r.u64()?;
        let properties = Property::decode_list(r, "role status")?;
        Ok(RoleStatus { role, reason, generation_id, properties })
    }

    pub fn encode(&self, w: &mut Writer) {
        w.u32(self.role.to_u32());
        w.u8(self.reason.to_u8());
        w.zeros(3);
        w.u64(self.generation_id);
        Property::encode_list(&self.properties, w);
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

/// proptest strategies for role messages.
#[cfg(test)]
pub(crate) mod strategy {
    use super::*;
    use proptest::prelude::*;

    pub fn arb_role_status() -> impl Strategy<Value = RoleStatus> {
        (
            any::<u32>(),
            any::<u8>(),
            any::<u64>(),
            crate::v13::property::strategy::arb_properties(&[]),
        )
            .prop_map(|(role, reason, generation_id, properties)| RoleStatus {
                role: ControllerRole::from_u32(role),
                reason: ControllerRoleReason::from_u8(reason),
                generation_id,
                properties,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{assert_roundtrip, encoded};
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
    fn role_status_spec_bytes() {
        // Master, because another controller asked, generation 7, one experimenter
        // property (experimenter 0x65, exp_type 1, data 1).
        let bytes = [
            0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7, 0xff, 0xff, 0, 16, 0, 0, 0, 0x65, 0, 0,
            0, 1, 0, 0, 0, 1,
        ];
        let s = RoleStatus::decode(&mut Reader::new(&bytes)).unwrap();
        assert_eq!(
            s,
            RoleStatus {
                role: ControllerRole::Master,
                reason: ControllerRoleReason::MasterRequest,
                generation_id: 7,
                properties: vec![Property::Experimenter {
                    experimenter: 0x65,
                    exp_type: 1,
                    data: vec![0, 0, 0, 1]
                }],
            }
        );
        assert_eq!(encoded(|w| s.encode(w)), bytes);
        let e = RoleStatus::decode(&mut Reader::new(&bytes[..15])).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BAD_REQUEST_BAD_LEN);
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
        fn role_status_roundtrip(s in strategy::arb_role_status()) {
            assert_roundtrip(&s, RoleStatus::encode, RoleStatus::decode);
        }

        #[test]
        fn roundtrip(r in Role::arb(), a in AsyncConfig::arb()) {
            let bytes = assert_roundtrip(&r, Role::encode, Role::decode);
            prop_assert_eq!(bytes.len(), 16);
            let bytes = assert_roundtrip(&a, AsyncConfig::encode, AsyncConfig::decode);
            prop_assert_eq!(bytes.len(), 24);
        }
    }
}
