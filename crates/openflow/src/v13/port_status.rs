//! `OFPT_PORT_STATUS` and `OFPT_PORT_MOD` (OpenFlow 1.3 and 1.4).
//!
//! Port status wire form: `reason:u8, pad[7]`, then the port (`ofp_port`: 64 bytes in
//! 1.3, 40 bytes and properties in 1.4); the message has one type for every version,
//! [`crate::model::PortStatus`].
//!
//! Port mod wire form in 1.3 (32 bytes): `port_no:u32, pad[4], hw_addr[6], pad[2],
//! config:u32, mask:u32, advertise:u32, pad[4]`. In 1.4 the first 24 bytes are the same
//! and properties follow ([`PortModProp`]): `advertise` moves to the ethernet property
//! (type 0, 8 bytes: `advertise:u32`), besides optical and experimenter ones. Only the
//! config bits set in `mask` change; `advertise` 0 leaves advertisement unchanged.

use crate::action::port as ofpp;
use crate::error::{ErrorKind, OfpError};
use crate::header::OFP14_VERSION;
use crate::model::port::port_prop_type;
use crate::v13::property::{self, Property};
use crate::wire::{MacAddr, Reader, Writer};

/// Port-status and its reasons have one type for every version ([`crate::model`]).
pub use crate::model::{PortReason, PortStatus};

record! {
    /// The body of 1.4's optical port-mod property (`ofp_port_mod_prop_optical`, after
    /// its header).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
    pub struct PortModOptical {
        /// `OFPOPF_*` features to configure.
        pub configure: u32,
        pub freq_lmda: u32,
        pub fl_offset: i32,
        pub grid_span: u32,
        pub tx_pwr: u32,
    }
}

/// One property of a 1.4 port-mod, in [`PortMod::properties`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum PortModProp {
    /// Where the ethernet property is: it is written from [`PortMod::advertise`].
    Ethernet,
    /// `OFPPMPT_OPTICAL` (24 bytes; `OFPBPC_BAD_LEN` otherwise).
    Optical(PortModOptical),
    /// An experimenter's property or one of a type 1.4 does not define.
    Other(Property),
}

/// An `OFPT_PORT_MOD` body (module comment).
///
/// `properties` keeps a 1.4 property list as read, the ethernet property as a marker of
/// its place, so that it re-encodes as read; it is `None` when the list is what a
/// port-mod built by hand gets, which 1.4 writes as the ethernet property when
/// `advertise` is not 0 and no property otherwise. Decoding 1.3 gives `None`; encoding
/// 1.3 ignores it. A second ethernet property is `OFPBPC_DUP_TYPE`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct PortMod {
    pub port_no: u32,
    /// Must equal the port's address (a sanity check by the switch, not a change).
    pub hw_addr: MacAddr,
    pub config: u32,
    pub mask: u32,
    pub advertise: u32,
    pub properties: Option<Vec<PortModProp>>,
}

impl PortMod {
    /// Length of the 1.3 body.
    pub const WIRE_LEN: usize = 32;

    /// The property list a port-mod has when `properties` is `None`.
    fn default_properties(&self) -> &'static [PortModProp] {
        if self.advertise != 0 {
            &[PortModProp::Ethernet]
        } else {
            &[]
        }
    }

    /// Reads a body of a frame of `version`.
    pub fn decode(version: u8, r: &mut Reader) -> Result<PortMod, OfpError> {
        let port_no = r.u32()?;
        r.skip(4)?;
        let hw_addr = r.mac()?;
        r.skip(2)?;
        let config = r.u32()?;
        let mask = r.u32()?;
        if version < OFP14_VERSION {
            let advertise = r.u32()?;
            r.skip(4)?;
            return Ok(PortMod { port_no, hw_addr, config, mask, advertise, properties: None });
        }
        let mut advertise = None;
        let props = property::read_list(r, "port-mod", |ty, body| {
            Ok(match ty {
                port_prop_type::ETHERNET => {
                    property::expect_len(body, 4, "port-mod ethernet")?;
                    if advertise.replace(body.u32()?).is_some() {
                        return Err(OfpError::new(
                            ErrorKind::BAD_PROPERTY_DUP_TYPE,
                            "port-mod with two ethernet properties",
                        ));
                    }
                    PortModProp::Ethernet
                }
                port_prop_type::OPTICAL => {
                    property::expect_len(body, PortModOptical::WIRE_LEN, "port-mod optical")?;
                    PortModProp::Optical(PortModOptical::decode(body)?)
                }
                _ => PortModProp::Other(Property::from_body(ty, body, "port-mod")?),
            })
        })?;
        let mut m = PortMod {
            port_no,
            hw_addr,
            config,
            mask,
            advertise: advertise.unwrap_or(0),
            properties: None,
        };
        if props != m.default_properties() {
            m.properties = Some(props);
        }
        Ok(m)
    }

    /// Writes the body for a frame of `version`.
    pub fn encode(&self, version: u8, w: &mut Writer) {
        w.u32(self.port_no);
        w.zeros(4);
        w.mac(self.hw_addr);
        w.zeros(2);
        w.u32(self.config);
        w.u32(self.mask);
        if version < OFP14_VERSION {
            w.u32(self.advertise);
            w.zeros(4);
            return;
        }
        for p in self.properties.as_deref().unwrap_or(self.default_properties()) {
            match p {
                PortModProp::Ethernet => {
                    property::write(w, port_prop_type::ETHERNET, |w| w.u32(self.advertise))
                }
                PortModProp::Optical(o) => property::write(w, port_prop_type::OPTICAL, |w| {
                    o.encode(w);
                }),
                PortModProp::Other(o) => o.encode(w),
            }
        }
    }

    /// Rejects a port number above `OFPP_MAX` (`OFPPMFC_BAD_PORT`): reserved ports
    /// cannot be configured, and a property that is neither ethernet nor optical
    /// ([`Property::unsupported`]). Whether the port exists is for the switch to check.
    pub fn validate(&self) -> Result<(), OfpError> {
        if self.port_no > ofpp::MAX {
            return Err(OfpError::new(
                ErrorKind::PORT_MOD_FAILED_BAD_PORT,
                format!("port 0x{:08x} is not a physical port", self.port_no),
            ));
        }
        for p in self.properties.iter().flatten() {
            if let PortModProp::Other(o) = p {
                return Err(o.unsupported("port-mod"));
            }
        }
        Ok(())
    }
}

/// proptest strategies for port-mods.
#[cfg(test)]
pub(crate) mod strategy {
    use super::*;
    use proptest::prelude::*;

    /// 1.4 property lists: optical and other properties, the ethernet one or not.
    fn arb_props() -> impl Strategy<Value = Vec<PortModProp>> {
        let other = prop_oneof![
            PortModOptical::arb().prop_map(PortModProp::Optical),
            crate::v13::property::strategy::arb_property(&[
                port_prop_type::ETHERNET,
                port_prop_type::OPTICAL
            ])
            .prop_map(PortModProp::Other),
        ];
        (proptest::collection::vec(other, 0..3), proptest::option::of(0..3usize)).prop_map(
            |(mut props, ethernet)| {
                if let Some(at) = ethernet {
                    props.insert(at.min(props.len()), PortModProp::Ethernet);
                }
                props
            },
        )
    }

    /// Port-mods as a frame of `version` carries them (decoded from their bytes, so in
    /// the canonical form decoding gives).
    pub fn arb_port_mod(version: u8) -> impl Strategy<Value = PortMod> {
        (any::<(u32, [u8; 6], u32, u32, u32)>(), arb_props()).prop_map(
            move |((port_no, mac, config, mask, advertise), props)| {
                let m = PortMod {
                    port_no,
                    hw_addr: MacAddr(mac),
                    config,
                    mask,
                    advertise,
                    properties: Some(props),
                };
                let bytes = crate::wire::encoded(|w| m.encode(version, w));
                PortMod::decode(version, &mut Reader::new(&bytes)).expect("a port-mod decodes")
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::header::OFP13_VERSION;
    use crate::wire::{assert_roundtrip_in, encoded};
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
        let m = PortMod::decode(OFP13_VERSION, &mut Reader::new(&bytes)).unwrap();
        assert_eq!(m.port_no, 3);
        assert_eq!(m.hw_addr, MacAddr([0, 0x11, 0x22, 0x33, 0x44, 0x55]));
        assert_eq!((m.config, m.mask, m.advertise), (1, 1, 0));
        assert_eq!(encoded(|w| m.encode(OFP13_VERSION, w)), bytes);
    }

    /// A 1.4 port-mod: port 1 down, advertise fiber, then an experimenter property.
    #[test]
    fn spec_bytes_14() {
        let mut bytes = vec![0, 0, 0, 1, 0, 0, 0, 0, 0, 0x11, 0, 0, 0x11, 0x11, 0, 0];
        bytes.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 1]); // config, mask PORT_DOWN
        bytes.extend_from_slice(&[0, 0, 0, 8, 0, 0, 0x10, 0]); // ethernet, advertise FIBER
        let m = PortMod::decode(OFP14_VERSION, &mut Reader::new(&bytes)).unwrap();
        let want = PortMod {
            port_no: 1,
            hw_addr: MacAddr([0, 0x11, 0, 0, 0x11, 0x11]),
            config: 1,
            mask: 1,
            advertise: 0x1000,
            properties: None,
        };
        assert_eq!(m, want);
        assert_eq!(encoded(|w| m.encode(OFP14_VERSION, w)), bytes);
        assert!(m.validate().is_ok());

        let exp = [0xff, 0xff, 0, 12, 0, 0, 0, 0x65, 0, 0, 0, 0, 0, 0, 0, 0];
        bytes.extend_from_slice(&exp);
        let m = PortMod::decode(OFP14_VERSION, &mut Reader::new(&bytes)).unwrap();
        let p = Property::Experimenter { experimenter: 0x65, exp_type: 0, data: vec![] };
        assert_eq!(m.properties, Some(vec![PortModProp::Ethernet, PortModProp::Other(p)]));
        assert_eq!(encoded(|w| m.encode(OFP14_VERSION, w)), bytes);
        let kind = m.validate().unwrap_err().kind;
        assert_eq!(kind, ErrorKind::BAD_PROPERTY_BAD_EXPERIMENTER);

        // No advertisement: no ethernet property.
        let quiet = PortMod { advertise: 0, ..want.clone() };
        assert_eq!(encoded(|w| quiet.encode(OFP14_VERSION, w)), bytes[..24]);
        // An ethernet property that says 0 is kept, to write the same bytes.
        let mut zero = bytes[..28].to_vec();
        zero.extend_from_slice(&[0, 0, 0, 0]);
        let m = PortMod::decode(OFP14_VERSION, &mut Reader::new(&zero)).unwrap();
        assert_eq!(m.properties, Some(vec![PortModProp::Ethernet]));
        assert_eq!(encoded(|w| m.encode(OFP14_VERSION, w)), zero);
        // Two ethernet properties.
        let mut two = bytes[..32].to_vec();
        two.extend_from_slice(&bytes[24..32]);
        let e = PortMod::decode(OFP14_VERSION, &mut Reader::new(&two)).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BAD_PROPERTY_DUP_TYPE);
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
        fn roundtrip(
            m13 in strategy::arb_port_mod(OFP13_VERSION),
            m14 in strategy::arb_port_mod(OFP14_VERSION),
        ) {
            let bytes = assert_roundtrip_in(OFP13_VERSION, &m13, PortMod::encode, PortMod::decode);
            prop_assert_eq!(bytes.len(), 32);
            let bytes = assert_roundtrip_in(OFP14_VERSION, &m14, PortMod::encode, PortMod::decode);
            prop_assert_eq!(bytes.len() % 8, 0);
        }
    }
}
