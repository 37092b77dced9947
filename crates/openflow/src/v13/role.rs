//! Controller roles and asynchronous-message filters (OpenFlow 1.3).
//!
//! `OFPT_ROLE_REQUEST` / `OFPT_ROLE_REPLY` wire form (16 bytes): `role:u32, pad[4],
//! generation_id:u64`.
//!
//! `OFPT_ROLE_STATUS` (1.4) wire form: `role:u32, reason:u8, pad[3], generation_id:u64`
//! (16 bytes), then properties (1.4 defines only the experimenter's).
//!
//! `OFPT_GET_ASYNC_REPLY` / `OFPT_SET_ASYNC` wire form in 1.3 (24 bytes):
//! `packet_in_mask:u32[2], port_status_mask:u32[2], flow_removed_mask:u32[2]`; index 0
//! applies to a master or equal controller, index 1 to a slave. Bit `n` of a mask enables
//! reason `n` of that message. In 1.4 the body is a list of properties: types 0 to 11
//! each carry one mask (`mask:u32`, 8 bytes in all: packet-in slave, packet-in master,
//! port-status slave, ..., request-forward master; 1.4 adds role-status, table-status and
//! request-forward to 1.3's three), 0xfffe and 0xffff are the slave's and the master's
//! experimenter properties. [`AsyncConfig`] holds the six pairs of masks whatever the
//! version.

use crate::error::{ErrorKind, OfpError};
use crate::header::OFP14_VERSION;
use crate::v13::property::{self, Property};
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

/// The number of reason-mask property types of 1.4 (`OFPACPT_PACKET_IN_SLAVE` = 0 to
/// `OFPACPT_REQUESTFORWARD_MASTER` = 11).
pub const ASYNC_REASON_TYPES: u16 = 12;
/// `OFPACPT_EXPERIMENTER_SLAVE`.
pub const OFPACPT_EXPERIMENTER_SLAVE: u16 = 0xfffe;

/// One property of a 1.4 asynchronous configuration, in [`AsyncConfig::properties`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum AsyncProp {
    /// A reasons property of this type (below [`ASYNC_REASON_TYPES`]): its mask is the
    /// one the type names in the config's fields.
    Reasons(u16),
    /// `OFPACPT_EXPERIMENTER_SLAVE` (0xfffe).
    ExperimenterSlave { experimenter: u32, exp_type: u32, data: Vec<u8> },
    /// `OFPACPT_EXPERIMENTER_MASTER` (0xffff), or a type 1.4 does not define.
    Other(Property),
}

/// The asynchronous-message filter of one connection: for each kind of asynchronous
/// message, the reasons enabled for a master or equal controller (index 0) and for a
/// slave (index 1).
///
/// 1.3 carries the first three kinds: decoding 1.3 leaves the others 0, encoding 1.3
/// leaves them out. `properties` keeps a 1.4 property list as read, each reasons
/// property as a marker of its place, so that a list in another order, with some
/// properties left out (a set-async changes only the masks it carries:
/// [`AsyncConfig::apply_to`]) or with experimenter properties re-encodes as read. It is
/// `None` when the list is what a config built by hand gets, every reasons property in
/// type order, and for 1.3. Decoding 1.4, a reasons property of another length than 8
/// is `OFPBPC_BAD_LEN`, one of a type already seen `OFPBPC_DUP_TYPE`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct AsyncConfig {
    pub packet_in_mask: [u32; 2],
    pub port_status_mask: [u32; 2],
    pub flow_removed_mask: [u32; 2],
    /// 1.4.
    pub role_status_mask: [u32; 2],
    /// 1.4.
    pub table_status_mask: [u32; 2],
    /// 1.4.
    pub requestforward_mask: [u32; 2],
    pub properties: Option<Vec<AsyncProp>>,
}

/// Every reasons property in type order: the list of a config built by hand.
const ALL_REASONS: [AsyncProp; 12] = [
    AsyncProp::Reasons(0),
    AsyncProp::Reasons(1),
    AsyncProp::Reasons(2),
    AsyncProp::Reasons(3),
    AsyncProp::Reasons(4),
    AsyncProp::Reasons(5),
    AsyncProp::Reasons(6),
    AsyncProp::Reasons(7),
    AsyncProp::Reasons(8),
    AsyncProp::Reasons(9),
    AsyncProp::Reasons(10),
    AsyncProp::Reasons(11),
];

/// The index into a pair of masks of a reasons property of type `ty`: 1 (slave) for an
/// even type, 0 (master or equal) for an odd one.
fn slave_index(ty: u16) -> usize {
    usize::from(ty.is_multiple_of(2))
}

impl AsyncConfig {
    /// Length of the 1.3 body.
    pub const WIRE_LEN: usize = 24;

    /// The masks of kind `kind` (0 packet-in, 1 port-status, 2 flow-removed, 3
    /// role-status, 4 table-status, 5 request-forward), `None` for a kind 1.4 does not
    /// have.
    pub fn masks(&self, kind: usize) -> Option<&[u32; 2]> {
        Some(match kind {
            0 => &self.packet_in_mask,
            1 => &self.port_status_mask,
            2 => &self.flow_removed_mask,
            3 => &self.role_status_mask,
            4 => &self.table_status_mask,
            5 => &self.requestforward_mask,
            _ => return None,
        })
    }

    fn masks_mut(&mut self, kind: usize) -> Option<&mut [u32; 2]> {
        Some(match kind {
            0 => &mut self.packet_in_mask,
            1 => &mut self.port_status_mask,
            2 => &mut self.flow_removed_mask,
            3 => &mut self.role_status_mask,
            4 => &mut self.table_status_mask,
            5 => &mut self.requestforward_mask,
            _ => return None,
        })
    }

    /// The mask a reasons property of type `ty` carries: kind `ty / 2`, the slave's for
    /// an even type, the master's for an odd one.
    fn mask_of(&mut self, ty: u16) -> Option<&mut u32> {
        self.masks_mut(usize::from(ty / 2)).map(|m| &mut m[slave_index(ty)])
    }

    /// The 1.4 property list this config writes.
    fn property_list(&self) -> &[AsyncProp] {
        self.properties.as_deref().unwrap_or(&ALL_REASONS)
    }

    /// Reads a body of a frame of `version`.
    pub fn decode(version: u8, r: &mut Reader) -> Result<AsyncConfig, OfpError> {
        let mut a = AsyncConfig::default();
        if version < OFP14_VERSION {
            a.packet_in_mask = [r.u32()?, r.u32()?];
            a.port_status_mask = [r.u32()?, r.u32()?];
            a.flow_removed_mask = [r.u32()?, r.u32()?];
            return Ok(a);
        }
        let mut seen = 0u16;
        let props = property::read_list(r, "async config", |ty, body| {
            Ok(match ty {
                t if t < ASYNC_REASON_TYPES => {
                    property::expect_len(body, 4, "async config reasons")?;
                    if seen & 1 << t != 0 {
                        return Err(OfpError::new(
                            ErrorKind::BAD_PROPERTY_DUP_TYPE,
                            format!("async config property {t} appears twice"),
                        ));
                    }
                    seen |= 1 << t;
                    let mask = body.u32()?;
                    if let Some(m) = a.mask_of(t) {
                        *m = mask;
                    }
                    AsyncProp::Reasons(t)
                }
                OFPACPT_EXPERIMENTER_SLAVE => {
                    let (experimenter, exp_type, data) =
                        property::read_experimenter(body, "async config")?;
                    AsyncProp::ExperimenterSlave { experimenter, exp_type, data }
                }
                _ => AsyncProp::Other(Property::from_body(ty, body, "async config")?),
            })
        })?;
        if props != ALL_REASONS {
            a.properties = Some(props);
        }
        Ok(a)
    }

    /// Writes the body for a frame of `version`.
    pub fn encode(&self, version: u8, w: &mut Writer) {
        if version < OFP14_VERSION {
            for m in [self.packet_in_mask, self.port_status_mask, self.flow_removed_mask] {
                w.u32(m[0]);
                w.u32(m[1]);
            }
            return;
        }
        for p in self.property_list() {
            match p {
                AsyncProp::Reasons(t) => {
                    let mask = self.masks(usize::from(t / 2)).map_or(0, |m| m[slave_index(*t)]);
                    property::write(w, *t, |w| w.u32(mask));
                }
                AsyncProp::ExperimenterSlave { experimenter, exp_type, data } => {
                    property::write_experimenter(
                        w,
                        OFPACPT_EXPERIMENTER_SLAVE,
                        *experimenter,
                        *exp_type,
                        data,
                    )
                }
                AsyncProp::Other(o) => o.encode(w),
            }
        }
    }

    /// Copies the masks a set-async of a frame of `version` sets into `to`: for 1.3 the
    /// three kinds 1.3 has; for 1.4 those its reasons properties carry (every kind for a
    /// config built by hand).
    pub fn apply_to(&self, version: u8, to: &mut AsyncConfig) {
        if version < OFP14_VERSION {
            to.packet_in_mask = self.packet_in_mask;
            to.port_status_mask = self.port_status_mask;
            to.flow_removed_mask = self.flow_removed_mask;
            return;
        }
        for p in self.property_list() {
            if let AsyncProp::Reasons(t) = *p {
                if let (Some(from), Some(m)) = (self.masks(usize::from(t / 2)), to.mask_of(t)) {
                    *m = from[slave_index(t)];
                }
            }
        }
    }

    /// The checks a switch makes on a set-async: no experimenter's or undefined
    /// property (`OFPBPC_BAD_EXPERIMENTER`, `OFPBPC_BAD_TYPE`).
    pub fn validate(&self) -> Result<(), OfpError> {
        for p in self.properties.iter().flatten() {
            match p {
                AsyncProp::Reasons(_) => {}
                AsyncProp::ExperimenterSlave { experimenter, .. } => {
                    return Err(OfpError::new(
                        ErrorKind::BAD_PROPERTY_BAD_EXPERIMENTER,
                        format!("async config experimenter property of {experimenter:#x}"),
                    ))
                }
                AsyncProp::Other(o) => return Err(o.unsupported("async config")),
            }
        }
        Ok(())
    }
}

/// proptest strategies for role messages.
#[cfg(test)]
pub(crate) mod strategy {
    use super::*;
    use proptest::prelude::*;

    /// Asynchronous configurations as a frame of `version` carries them (for 1.4, the
    /// reasons properties in any order, some left out, and other properties among them).
    pub fn arb_async_config(version: u8) -> impl Strategy<Value = AsyncConfig> {
        let other = prop_oneof![
            (any::<u32>(), any::<u32>(), crate::wire::arb_bytes(0..8)).prop_map(
                |(experimenter, exp_type, data)| AsyncProp::ExperimenterSlave {
                    experimenter,
                    exp_type,
                    data
                }
            ),
            crate::v13::property::strategy::arb_property(&[])
                .prop_filter("not a reasons type", |p| {
                    p.prop_type() >= ASYNC_REASON_TYPES
                        && p.prop_type() != OFPACPT_EXPERIMENTER_SLAVE
                })
                .prop_map(AsyncProp::Other),
        ];
        let reasons = (0..ASYNC_REASON_TYPES).map(AsyncProp::Reasons).collect::<Vec<_>>();
        let lists = prop_oneof![
            Just(reasons.clone()),
            proptest::sample::subsequence(reasons, 0..=12).prop_shuffle(),
            (proptest::collection::vec(other, 1..3), Just(ALL_REASONS.to_vec())).prop_map(
                |(mut o, all)| {
                    o.extend(all);
                    o
                }
            ),
        ];
        (any::<[u32; 12]>(), lists).prop_map(move |(masks, props)| {
            let mut a = AsyncConfig { properties: Some(props), ..AsyncConfig::default() };
            for t in 0..ASYNC_REASON_TYPES {
                if let Some(m) = a.mask_of(t) {
                    *m = masks[usize::from(t)];
                }
            }
            let bytes = crate::wire::encoded(|w| a.encode(version, w));
            AsyncConfig::decode(version, &mut Reader::new(&bytes)).expect("a config decodes")
        })
    }

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
    use crate::header::OFP13_VERSION;
    use crate::wire::{
        assert_padded_roundtrip, assert_refused, assert_roundtrip, assert_roundtrip_in, encoded,
    };
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
        let a = AsyncConfig::decode(OFP13_VERSION, &mut Reader::new(&bytes)).unwrap();
        assert_eq!(a.packet_in_mask, [3, 0]);
        assert_eq!(a.port_status_mask, [0, 7]);
        assert_eq!(a.flow_removed_mask, [0, 0]);
    }

    /// 1.4's property form: the 12 reasons properties in type order are a config's
    /// canonical form; another order, a subset and experimenter properties are kept.
    #[test]
    fn async_config_spec_bytes_14() {
        let mut bytes = Vec::new();
        for t in 0..12u16 {
            // Slave (even types) 1, master (odd types) 2, role-status master 3.
            let mask: u32 = if t == 7 { 3 } else { 1 + u32::from(t % 2) };
            bytes.extend_from_slice(&t.to_be_bytes());
            bytes.extend_from_slice(&[0, 8]);
            bytes.extend_from_slice(&mask.to_be_bytes());
        }
        let a = AsyncConfig::decode(OFP14_VERSION, &mut Reader::new(&bytes)).unwrap();
        assert_eq!(a.packet_in_mask, [2, 1]);
        assert_eq!(a.requestforward_mask, [2, 1]);
        assert_eq!(a.role_status_mask, [3, 1]);
        assert_eq!(a.properties, None);
        assert_eq!(encoded(|w| a.encode(OFP14_VERSION, w)), bytes);
        // 1.3 writes the first three kinds.
        assert_eq!(encoded(|w| a.encode(OFP13_VERSION, w)), [[0, 0, 0, 2, 0, 0, 0, 1]; 3].concat());

        // A set-async of the flow-removed master mask alone, then a slave experimenter.
        let mut set = vec![0, 5, 0, 8, 0, 0, 0, 0x1f];
        set.extend_from_slice(&[0xff, 0xfe, 0, 12, 0, 0, 0, 0x65, 0, 0, 0, 0, 0, 0, 0, 0]);
        let s = AsyncConfig::decode(OFP14_VERSION, &mut Reader::new(&set)).unwrap();
        assert_eq!(s.flow_removed_mask, [0x1f, 0]);
        let exp = AsyncProp::ExperimenterSlave { experimenter: 0x65, exp_type: 0, data: vec![] };
        assert_eq!(s.properties, Some(vec![AsyncProp::Reasons(5), exp]));
        assert_eq!(encoded(|w| s.encode(OFP14_VERSION, w)), set);
        assert_eq!(s.validate().unwrap_err().kind, ErrorKind::BAD_PROPERTY_BAD_EXPERIMENTER);
        let mut to = a.clone();
        s.apply_to(OFP14_VERSION, &mut to);
        assert_eq!(to.flow_removed_mask, [0x1f, 1]);
        assert_eq!(to.packet_in_mask, a.packet_in_mask);
        // A 1.3 set-async sets 1.3's three kinds.
        let mut to = a.clone();
        AsyncConfig::default().apply_to(OFP13_VERSION, &mut to);
        assert_eq!((to.packet_in_mask, to.role_status_mask), ([0, 0], [3, 1]));

        let cases: &[&[u8]] =
            &[&[0, 5, 0, 12, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0], &[0, 5, 0, 8, 0, 0]];
        assert_refused(
            cases,
            |r| AsyncConfig::decode(OFP14_VERSION, r),
            ErrorKind::BAD_PROPERTY_BAD_LEN,
        );
        let dup: &[u8] = &[0, 5, 0, 8, 0, 0, 0, 1, 0, 5, 0, 8, 0, 0, 0, 1];
        assert_refused(
            &[dup],
            |r| AsyncConfig::decode(OFP14_VERSION, r),
            ErrorKind::BAD_PROPERTY_DUP_TYPE,
        );
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
        fn roundtrip(
            r in Role::arb(),
            a13 in strategy::arb_async_config(OFP13_VERSION),
            a14 in strategy::arb_async_config(OFP14_VERSION),
        ) {
            let bytes = assert_roundtrip(&r, Role::encode, Role::decode);
            prop_assert_eq!(bytes.len(), 16);
            let bytes = assert_roundtrip_in(OFP13_VERSION, &a13, AsyncConfig::encode, AsyncConfig::decode);
            prop_assert_eq!(bytes.len(), 24);
            assert_padded_roundtrip(&a14, |a, w| a.encode(OFP14_VERSION, w), |r| {
                AsyncConfig::decode(OFP14_VERSION, r)
            });
        }
    }
}
