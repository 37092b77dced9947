//! The port description, one type for every OpenFlow version: [`Port`] is what a switch
//! says about one of its ports, whether on the wire of OpenFlow 1.0 (`ofp_phy_port`, 48
//! bytes: in the features reply and in port-status), of 1.3 (`ofp_port`, 64 bytes: in
//! port-status and the port-description reply) or of 1.4 (`ofp_port`, 40 bytes and
//! properties, its `length` saying how many), and [`PortStatus`] is the port-status
//! message that carries one. As Open vSwitch's `ofputil_phy_port` (`ofp-port.c`), the
//! type holds the version-neutral meaning and `decode(version, ..)` / `encode(version,
//! ..)` hold each version's layout and numbering.
//!
//! The neutral form:
//! - `port_no` in the 32-bit (1.3) numbering: 1.0's `0xff00..=0xffff` is
//!   `0xffffff00..=0xffffffff` ([`port_to_v13`]); encoding for 1.0 writes a number with
//!   no 1.0 form as `OFPP_NONE` (the agent leaves such ports out for 1.0 first).
//! - `config`: the `OFPPC_*` bits at their 1.0 places (`v10::port::port_config`; 1.3's
//!   four, `v13::port::port_config`, are a subset at the same places). 1.0 defines all
//!   seven; 1.3 defines `PORT_DOWN`, `NO_RECV`, `NO_FWD` and `NO_PACKET_IN`.
//! - `state`: `LINK_DOWN` (bit 0, both versions), 1.3's `BLOCKED` and `LIVE` (bits 1, 2)
//!   and 1.0's STP state (bits 8-9, `v10::port::port_state::STP_MASK`), which do not
//!   collide.
//! - `curr`, `advertised`, `supported`, `peer`: the 1.3 layout (`v13::port::port_features`,
//!   16 bits). 1.0's speeds up to 10 Gb/s (bits 0-6) keep their places and its media bits
//!   (copper, fiber, autoneg, pause, pause-asym: bits 7-11) are 1.3's bits 11-15
//!   ([`features_from_v10`], [`features_to_v10`]); 1.3's 40G, 100G, 1T and "other" (bits
//!   7-10) have no 1.0 bit.
//! - `curr_speed`, `max_speed` in kbit/s: 1.3 carries them; for 1.0 they are derived from
//!   `curr` and `supported` ([`speed_kbps`], as Open vSwitch does) and not written.
//!
//! 1.4's `ofp_port` is 1.3's without the features and speeds (`port_no:u32, length:u16,
//! pad[2], hw_addr[6], pad[2], name[16], config:u32, state:u32`), which move to the
//! ethernet property (`OFPPDPT_ETHERNET`, type 0, 32 bytes: `pad[4], curr, advertised,
//! supported, peer, curr_speed, max_speed`), among others ([`PortProp`]): config, state
//! and features have 1.3's bits. A 1.4 port without an ethernet property decodes with
//! zero features and speeds. [`Port::properties`] keeps the property list as read, the
//! ethernet one as a marker of its place, so that what the neutral fields cannot hold
//! (optical and experimenter properties, the order) re-encodes as read; a port built by
//! hand, or one whose list is just the ethernet property, has `None`, which 1.4 writes
//! as the ethernet property alone. A `length` below 40 or beyond what holds the port is
//! `OFPBRC_BAD_LEN`; a second ethernet property is `OFPBPC_DUP_TYPE`.
//!
//! What each encoder writes of the neutral bits: for 1.0 the bits 1.0 defines (`BLOCKED`
//! and `LIVE` and 1.3's four speeds are dropped); for 1.3 the bits 1.3 defines plus
//! `NO_FLOOD` at bit 4, which 1.3 leaves undefined but this switch honours in both
//! versions (`switch::ports`); 1.0's STP config and state bits are dropped. Decoding 1.3,
//! like Open vSwitch, does not read bit 4 back as `NO_FLOOD`.
//!
//! Lossless round trips: the bits a wire version leaves undefined (1.0: config bits 7-31,
//! state bits 1-7 and 10-31, feature bits 12-31; 1.3: config bits 1, 3, 4 and 7-31, state
//! bits 3-31, feature bits 16-31) are kept, at their places on that wire, in
//! [`Port::undefined`] together with the version, and written back by the encoder for
//! that version only (1.4's undefined bits are 1.3's). So decoding and re-encoding gives
//! the same bytes, for every version, except for the name field's bytes after its first
//! NUL and padding.

use crate::error::{ErrorKind, OfpError};
use crate::header::{OFP10_VERSION, OFP14_VERSION};
use crate::v10::port::{ofpp, port_from_v13, port_to_v13};
use crate::v13::property::{self, Property};
use crate::wire::{take_sized, MacAddr, Reader, Writer};

/// Length of the name field in both versions (`OFP_MAX_PORT_NAME_LEN`).
const PORT_NAME_LEN: usize = 16;

/// Bytes of one port description on the wire of `version` when that is fixed: 48 for
/// 1.0 (`ofp_phy_port`), 64 for 1.3 (`ofp_port`); `None` from 1.4 on, where a port
/// carries its length ([`Port::encoded_len`]).
pub fn port_len(version: u8) -> Option<usize> {
    match version {
        OFP10_VERSION => Some(48),
        v if v < OFP14_VERSION => Some(64),
        _ => None,
    }
}

/// The fixed part of a 1.4 `ofp_port`, before its properties.
const PORT14_FIXED_LEN: usize = 40;

spec_table! {
    /// `ofp_port_desc_prop_type` numbers (1.4).
    pub mod port_prop_type: u16 as numbers {
        ETHERNET, OPTICAL, EXPERIMENTER = 0xffff,
    }
}

record! {
    /// The body of 1.4's optical port property (`ofp_port_desc_prop_optical`, after its
    /// header and 4 pad bytes): frequencies or wavelengths and transmit powers.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
    pub struct PortOptical {
        /// `OFPOPF_*` features.
        pub supported: u32,
        pub tx_min_freq_lmda: u32,
        pub tx_max_freq_lmda: u32,
        pub tx_grid_freq_lmda: u32,
        pub rx_min_freq_lmda: u32,
        pub rx_max_freq_lmda: u32,
        pub rx_grid_freq_lmda: u32,
        pub tx_pwr_min: u16,
        pub tx_pwr_max: u16,
    }
}

/// One property of a 1.4 port description, in [`Port::properties`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum PortProp {
    /// Where the ethernet property is: it is written from the port's neutral fields.
    Ethernet,
    /// `OFPPDPT_OPTICAL` (40 bytes; `OFPBPC_BAD_LEN` otherwise).
    Optical(PortOptical),
    /// An experimenter's property or one of a type 1.4 does not define.
    Other(Property),
}

/// 1.0 config bits: all seven, `PORT_DOWN` ... `NO_PACKET_IN`.
const CONFIG10: u32 = 0x7f;
/// 1.3 config bits: `PORT_DOWN`, `NO_RECV`, `NO_FWD`, `NO_PACKET_IN`.
const CONFIG13: u32 = 0x65;
/// `OFPPC_NO_FLOOD` (1.0), written at the same bit for 1.3 (module comment).
const NO_FLOOD: u32 = 1 << 4;
/// 1.0 state: `LINK_DOWN` and the STP state.
const STATE10: u32 = 0x301;
/// 1.3 state: `LINK_DOWN`, `BLOCKED`, `LIVE`.
const STATE13: u32 = 0x7;
/// 1.0 feature bits 0-11.
const FEATURES10: u32 = 0xfff;
/// 1.3 feature bits 0-15.
const FEATURES13: u32 = 0xffff;
/// Feature bits 0-6 (speeds up to 10 Gb/s), at the same places in both versions.
const SHARED_FEATURES: u32 = 0x7f;
/// The 1.0 media bits 7-11 (copper, fiber, autoneg, pause, pause-asym).
const MEDIA_FEATURES10: u32 = 0x1f << 7;
/// How far the media bits move from 1.0 to 1.3 (bit 7 → bit 11).
const MEDIA_SHIFT: u32 = 4;

/// 1.0 `ofp_port_features` bits in the 1.3 layout (Open vSwitch's
/// `netdev_port_features_from_ofp10`); bits above 11, undefined in 1.0, are dropped.
pub fn features_from_v10(f: u32) -> u32 {
    f & SHARED_FEATURES | (f & MEDIA_FEATURES10) << MEDIA_SHIFT
}

/// 1.3-layout `ofp_port_features` bits as 1.0 bits; 1.3's 40G, 100G, 1T and "other"
/// speeds (bits 7-10) and bits above 15 have no 1.0 bit and are dropped.
pub fn features_to_v10(f: u32) -> u32 {
    f & SHARED_FEATURES | (f >> MEDIA_SHIFT) & MEDIA_FEATURES10
}

/// The speed in kbit/s that a set of (1.3 layout) feature bits stands for: the fastest
/// rate among them, 0 if none.
pub fn speed_kbps(features: u32) -> u32 {
    const SPEEDS: [(u32, u64); 7] = [
        (1 << 9, 1_000_000_000_000),
        (1 << 8, 100_000_000_000),
        (1 << 7, 40_000_000_000),
        (1 << 6, 10_000_000_000),
        (3 << 4, 1_000_000_000),
        (3 << 2, 100_000_000),
        (3, 10_000_000),
    ];
    SPEEDS
        .iter()
        .find(|(bits, _)| features & bits != 0)
        .map_or(0, |(_, bps)| (bps / 1000).min(u64::from(u32::MAX)) as u32)
}

/// The bits of a decoded port's wire form that its version leaves undefined, at their
/// places on that wire (module comment), so that [`Port::encode`] for the same version
/// writes the same bytes. A port built by hand has none.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct UndefinedBits {
    /// The wire version the bits come from; the encoders of other versions ignore them.
    pub version: u8,
    pub config: u32,
    pub state: u32,
    /// Of `curr`, `advertised`, `supported` and `peer`, in that order.
    pub features: [u32; 4],
}

/// A port description in every version's terms (module comment): number (1.3 numbering),
/// address, name, configuration (`OFPPC_*` at 1.0's places), state (`OFPPS_*`, 1.0's STP
/// state at bits 8-9), features (1.3 layout) and speeds (kbit/s).
///
/// Invariants for a port the decoders give: `config`, `state` and the features hold only
/// the bits the decoded version defines, in the neutral places; `undefined` is `None`
/// unless some undefined bit was set. Encoding writes only the bits the target version
/// defines (plus `NO_FLOOD` for 1.3), so a port built by hand may hold any of them.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Port {
    /// In the 1.3 numbering.
    pub port_no: u32,
    pub hw_addr: MacAddr,
    /// Read up to the first NUL; at most 16 bytes survive encoding (1.0 switches should
    /// send at most 15, the field being NUL terminated there).
    pub name: String,
    /// `OFPPC_*` bits at their 1.0 places.
    pub config: u32,
    /// `OFPPS_LINK_DOWN`, `_BLOCKED`, `_LIVE` and 1.0's STP state.
    pub state: u32,
    /// Features in the 1.3 layout.
    pub curr: u32,
    pub advertised: u32,
    pub supported: u32,
    pub peer: u32,
    /// Current bit rate in kbit/s (from `curr` for 1.0).
    pub curr_speed: u32,
    /// Maximum bit rate in kbit/s (from `supported` for 1.0).
    pub max_speed: u32,
    /// The wire bits of the decoded version that the fields above do not hold.
    pub undefined: Option<UndefinedBits>,
    /// 1.4's property list as read (module comment); `None` for the ethernet property
    /// alone. Other versions' encoders ignore it.
    pub properties: Option<Vec<PortProp>>,
}

/// A port's fields as one version's wire has them (the 1.0 number widened to 32 bits);
/// the codec's private view of `ofp_phy_port` and `ofp_port`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Wire {
    pub port_no: u32,
    pub hw_addr: MacAddr,
    pub name: String,
    pub config: u32,
    pub state: u32,
    /// `curr`, `advertised`, `supported`, `peer`.
    pub features: [u32; 4],
    /// `curr_speed`, `max_speed`: 1.3 only.
    pub speeds: [u32; 2],
}

impl Wire {
    fn read(version: u8, r: &mut Reader) -> Result<Wire, OfpError> {
        let v10 = version == OFP10_VERSION;
        let port_no = if v10 {
            u32::from(r.u16()?)
        } else {
            let p = r.u32()?;
            r.skip(4)?;
            p
        };
        let hw_addr = r.mac()?;
        if !v10 {
            r.skip(2)?;
        }
        let name = r.fixed_str(PORT_NAME_LEN)?;
        let config = r.u32()?;
        let state = r.u32()?;
        let features = [r.u32()?, r.u32()?, r.u32()?, r.u32()?];
        let speeds = if v10 { [0, 0] } else { [r.u32()?, r.u32()?] };
        Ok(Wire { port_no, hw_addr, name, config, state, features, speeds })
    }

    /// Reads a 1.4 port (its `length` says how far) and its properties; the ethernet
    /// property gives the features and speeds.
    fn read14(r: &mut Reader) -> Result<(Wire, Vec<PortProp>), OfpError> {
        let mut s = take_sized(r, 4, PORT14_FIXED_LEN, "port")?;
        let port_no = s.u32()?;
        s.skip(4)?;
        let hw_addr = s.mac()?;
        s.skip(2)?;
        let name = s.fixed_str(PORT_NAME_LEN)?;
        let config = s.u32()?;
        let state = s.u32()?;
        let mut wire =
            Wire { port_no, hw_addr, name, config, state, features: [0; 4], speeds: [0; 2] };
        let mut ethernet = false;
        let props = property::read_list(&mut s, "port", |ty, body| {
            Ok(match ty {
                port_prop_type::ETHERNET => {
                    if ethernet {
                        return Err(OfpError::new(
                            ErrorKind::BAD_PROPERTY_DUP_TYPE,
                            "port with two ethernet properties",
                        ));
                    }
                    ethernet = true;
                    property::expect_len(body, 28, "port ethernet")?;
                    body.skip(4)?;
                    wire.features = [body.u32()?, body.u32()?, body.u32()?, body.u32()?];
                    wire.speeds = [body.u32()?, body.u32()?];
                    PortProp::Ethernet
                }
                port_prop_type::OPTICAL => {
                    property::expect_len(body, 4 + PortOptical::WIRE_LEN, "port optical")?;
                    body.skip(4)?;
                    PortProp::Optical(PortOptical::decode(body)?)
                }
                _ => PortProp::Other(Property::from_body(ty, body, "port")?),
            })
        })?;
        Ok((wire, props))
    }

    /// Writes a 1.4 port with `props` (the ethernet one from the features and speeds).
    fn write14(&self, props: &[PortProp], w: &mut Writer) {
        w.sized(4, |w| {
            w.u32(self.port_no);
            w.zeros(4);
            w.mac(self.hw_addr);
            w.zeros(2);
            w.fixed_str(&self.name, PORT_NAME_LEN);
            w.u32(self.config);
            w.u32(self.state);
            for p in props {
                match p {
                    PortProp::Ethernet => property::write(w, port_prop_type::ETHERNET, |w| {
                        w.zeros(4);
                        self.features.iter().for_each(|&f| w.u32(f));
                        self.speeds.iter().for_each(|&s| w.u32(s));
                    }),
                    PortProp::Optical(o) => property::write(w, port_prop_type::OPTICAL, |w| {
                        w.zeros(4);
                        o.encode(w);
                    }),
                    PortProp::Other(o) => o.encode(w),
                }
            }
        });
    }

    fn write(&self, version: u8, w: &mut Writer) {
        let v10 = version == OFP10_VERSION;
        if v10 {
            w.u16(self.port_no as u16);
        } else {
            w.u32(self.port_no);
            w.zeros(4);
        }
        w.mac(self.hw_addr);
        if !v10 {
            w.zeros(2);
        }
        w.fixed_str(&self.name, PORT_NAME_LEN);
        w.u32(self.config);
        w.u32(self.state);
        self.features.iter().for_each(|&f| w.u32(f));
        if !v10 {
            self.speeds.iter().for_each(|&s| w.u32(s));
        }
    }
}

/// The bits of `version` that the neutral fields hold, at their wire places: config,
/// state, features.
fn defined(version: u8) -> (u32, u32, u32) {
    if version == OFP10_VERSION {
        (CONFIG10, STATE10, FEATURES10)
    } else {
        (CONFIG13, STATE13, FEATURES13)
    }
}

/// The property list a port has when [`Port::properties`] is `None`.
const ETHERNET_ONLY: &[PortProp] = &[PortProp::Ethernet];

impl Port {
    /// Reads one port description of `version`'s layout.
    pub fn decode(version: u8, r: &mut Reader) -> Result<Port, OfpError> {
        if version >= OFP14_VERSION {
            let (wire, props) = Wire::read14(r)?;
            let mut p = Port::from_wire(version, wire);
            p.properties = (props != ETHERNET_ONLY).then_some(props);
            return Ok(p);
        }
        Ok(Port::from_wire(version, Wire::read(version, r)?))
    }

    /// Writes the port in `version`'s layout (module comment for what each version
    /// keeps).
    pub fn encode(&self, version: u8, w: &mut Writer) {
        let wire = self.to_wire(version);
        if version >= OFP14_VERSION {
            wire.write14(self.properties.as_deref().unwrap_or(ETHERNET_ONLY), w);
        } else {
            wire.write(version, w);
        }
    }

    /// Bytes [`Self::encode`] writes for `version`.
    pub fn encoded_len(&self, version: u8) -> usize {
        match port_len(version) {
            Some(n) => n,
            None => {
                let mut w = Writer::new();
                self.encode(version, &mut w);
                w.len()
            }
        }
    }

    /// The port that `version`'s wire fields describe.
    pub(crate) fn from_wire(version: u8, wire: Wire) -> Port {
        let v10 = version == OFP10_VERSION;
        let (config, state, features) = defined(version);
        let undefined = UndefinedBits {
            version,
            config: wire.config & !config,
            state: wire.state & !state,
            features: wire.features.map(|f| f & !features),
        };
        let any_undefined = undefined.config != 0
            || undefined.state != 0
            || undefined.features.iter().any(|&f| f != 0);
        // Defined feature bits in the 1.3 layout.
        let [curr, advertised, supported, peer] =
            wire.features.map(|f| if v10 { features_from_v10(f & features) } else { f & features });
        let (port_no, [curr_speed, max_speed]) = if v10 {
            let port_no = port_to_v13(wire.port_no as u16);
            (port_no, [speed_kbps(curr), speed_kbps(supported)])
        } else {
            (wire.port_no, wire.speeds)
        };
        Port {
            port_no,
            hw_addr: wire.hw_addr,
            name: wire.name,
            config: wire.config & config,
            state: wire.state & state,
            curr,
            advertised,
            supported,
            peer,
            curr_speed,
            max_speed,
            undefined: any_undefined.then_some(undefined),
            properties: None,
        }
    }

    /// The wire fields of the port in `version`'s terms: the bits `version` defines
    /// (plus `NO_FLOOD` for 1.3), then the undefined bits decoded from `version`.
    pub(crate) fn to_wire(&self, version: u8) -> Wire {
        let v10 = version == OFP10_VERSION;
        let (config, state, features) = defined(version);
        let extra = self.undefined.filter(|u| u.version == version);
        let (extra_config, extra_state, extra_features) =
            extra.map_or((0, 0, [0; 4]), |u| (u.config, u.state, u.features));
        let neutral = [self.curr, self.advertised, self.supported, self.peer];
        let mut wire_features =
            if v10 { neutral.map(features_to_v10) } else { neutral.map(|f| f & features) };
        for (f, x) in wire_features.iter_mut().zip(extra_features) {
            *f |= x;
        }
        let (port_no, config, speeds) = if v10 {
            let port_no = port_from_v13(self.port_no).unwrap_or(ofpp::NONE);
            (u32::from(port_no), config, [0, 0])
        } else {
            let speeds = [self.curr_speed, self.max_speed];
            (self.port_no, config | NO_FLOOD, speeds)
        };
        Wire {
            port_no,
            hw_addr: self.hw_addr,
            name: self.name.clone(),
            config: self.config & config | extra_config,
            state: self.state & state | extra_state,
            features: wire_features,
            speeds,
        }
    }
}

wire_enum! {
    /// `ofp_port_reason`: why a port-status was sent.
    pub enum PortReason: u8 as from_u8 / to_u8 {
        Add = 0,
        Delete = 1,
        Modify = 2,
    }
}

/// An `OFPT_PORT_STATUS` body, the same in every version: `reason:u8, pad[7]`, then the
/// port in the version's layout (56 bytes in 1.0, 72 in 1.3, 48 and up in 1.4).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PortStatus {
    pub reason: PortReason,
    pub port: Port,
}

impl PortStatus {
    /// Bytes of the body on the wire of `version`.
    pub fn encoded_len(&self, version: u8) -> usize {
        8 + self.port.encoded_len(version)
    }

    pub fn decode(version: u8, r: &mut Reader) -> Result<PortStatus, OfpError> {
        let reason = PortReason::from_u8(r.u8()?);
        r.skip(7)?;
        Ok(PortStatus { reason, port: Port::decode(version, r)? })
    }

    pub fn encode(&self, version: u8, w: &mut Writer) {
        w.u8(self.reason.to_u8());
        w.zeros(7);
        self.port.encode(version, w);
    }
}

/// proptest strategies: ports as arbitrary wire fields of a version describe them (any
/// bit pattern, names that survive encoding).
#[cfg(test)]
pub(crate) mod strategy {
    use super::*;
    use proptest::prelude::*;

    /// Arbitrary wire fields of `version` (a 16-bit number for 1.0).
    pub fn arb_wire(version: u8) -> impl Strategy<Value = Wire> {
        let v10 = version == OFP10_VERSION;
        (any::<u32>(), any::<[u8; 6]>(), "[a-z0-9-]{0,15}", proptest::array::uniform8(any::<u32>()))
            .prop_map(move |(port_no, mac, name, v)| Wire {
                port_no: if v10 { port_no & 0xffff } else { port_no },
                hw_addr: MacAddr(mac),
                name,
                config: v[0],
                state: v[1],
                features: [v[2], v[3], v[4], v[5]],
                speeds: if v10 { [0, 0] } else { [v[6], v[7]] },
            })
    }

    /// A 1.4 property list: optical and other properties, the ethernet one or not,
    /// anywhere among them.
    pub fn arb_props14() -> impl Strategy<Value = Vec<PortProp>> {
        let other = prop_oneof![
            PortOptical::arb().prop_map(PortProp::Optical),
            crate::v13::property::strategy::arb_property(&[
                port_prop_type::ETHERNET,
                port_prop_type::OPTICAL
            ])
            .prop_map(PortProp::Other),
        ];
        (proptest::collection::vec(other, 0..3), proptest::option::weighted(0.8, 0..3usize))
            .prop_map(|(mut props, ethernet)| {
                if let Some(at) = ethernet {
                    props.insert(at.min(props.len()), PortProp::Ethernet);
                }
                props
            })
    }

    /// The ports that arbitrary wire fields (and for 1.4 properties) of `version` decode
    /// to.
    pub fn arb_port(version: u8) -> BoxedStrategy<Port> {
        if version >= OFP14_VERSION {
            (arb_wire(version), arb_props14())
                .prop_map(move |(wire, props)| {
                    let mut w = Writer::new();
                    wire.write14(&props, &mut w);
                    Port::decode(version, &mut Reader::new(&w.buf)).expect("a whole port decodes")
                })
                .boxed()
        } else {
            arb_wire(version).prop_map(move |w| Port::from_wire(version, w)).boxed()
        }
    }

    pub fn arb_port_status(version: u8) -> impl Strategy<Value = PortStatus> {
        (any::<u8>(), arb_port(version))
            .prop_map(|(r, port)| PortStatus { reason: PortReason::from_u8(r), port })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::header::OFP13_VERSION;
    use proptest::prelude::*;

    proptest! {
        /// Port-status bodies of every version round-trip at their lengths.
        #[test]
        fn port_status_roundtrip(
            s10 in strategy::arb_port_status(OFP10_VERSION),
            s13 in strategy::arb_port_status(OFP13_VERSION),
            s14 in strategy::arb_port_status(OFP14_VERSION),
        ) {
            for (version, s) in [(OFP10_VERSION, s10), (OFP13_VERSION, s13), (OFP14_VERSION, s14)] {
                let bytes = crate::wire::assert_roundtrip_in(
                    version,
                    &s,
                    PortStatus::encode,
                    PortStatus::decode,
                );
                prop_assert_eq!(bytes.len(), s.encoded_len(version));
                if let Some(len) = port_len(version) {
                    prop_assert_eq!(bytes.len(), 8 + len);
                } else {
                    prop_assert_eq!(bytes.len() % 8, 0);
                }
            }
        }

        /// 1.4 wire fields and properties → bytes → port → the same bytes.
        #[test]
        fn any_wire_bits_survive_14(
            wire in strategy::arb_wire(OFP14_VERSION),
            props in strategy::arb_props14(),
        ) {
            let mut bytes = Writer::new();
            wire.write14(&props, &mut bytes);
            let p = Port::decode(OFP14_VERSION, &mut Reader::new(&bytes.buf)).unwrap();
            let mut again = Writer::new();
            p.encode(OFP14_VERSION, &mut again);
            prop_assert_eq!(again.buf, bytes.buf);
        }

        /// Wire fields → bytes → port → the same bytes, in both versions.
        #[test]
        fn any_wire_bits_survive(
            w10 in strategy::arb_wire(OFP10_VERSION),
            w13 in strategy::arb_wire(OFP13_VERSION),
        ) {
            for (version, wire) in [(OFP10_VERSION, w10), (OFP13_VERSION, w13)] {
                let mut bytes = Writer::new();
                wire.write(version, &mut bytes);
                prop_assert_eq!(Some(bytes.len()), port_len(version));
                let p = Port::decode(version, &mut Reader::new(&bytes.buf)).unwrap();
                prop_assert_eq!(p.to_wire(version), wire);
                let mut again = Writer::new();
                p.encode(version, &mut again);
                prop_assert_eq!(again.buf, bytes.buf);
            }
        }
    }

    #[test]
    fn undefined_bits_stay_with_their_version() {
        let wire = Wire {
            port_no: 3,
            config: 1 | 1 << 9,
            state: 1 << 8 | 1 << 2,
            features: [1 << 12 | 1, 0, 0, 0],
            ..Wire::default()
        };
        let p = Port::from_wire(OFP10_VERSION, wire.clone());
        assert_eq!((p.config, p.state, p.curr), (1, 1 << 8, 1));
        assert_eq!(
            p.undefined,
            Some(UndefinedBits {
                version: OFP10_VERSION,
                config: 1 << 9,
                state: 1 << 2,
                features: [1 << 12, 0, 0, 0],
            })
        );
        assert_eq!(p.to_wire(OFP10_VERSION), wire);
        // For 1.3 they mean nothing: dropped, with 1.0's STP state.
        let w13 = p.to_wire(OFP13_VERSION);
        assert_eq!((w13.config, w13.state, w13.features[0]), (1, 0, 1));
        assert_eq!(w13.speeds, [10_000, 0]);
    }

    #[test]
    fn no_flood_is_written_for_both_versions() {
        let p = Port {
            config: NO_FLOOD | 1 << 1,
            state: 1 << 2 | 1 << 9,
            curr: 1 << 7 | 1 << 11,
            ..Port::default()
        };
        let w10 = p.to_wire(OFP10_VERSION);
        assert_eq!((w10.config, w10.state, w10.features[0]), (0x12, 1 << 9, 1 << 7));
        let w13 = p.to_wire(OFP13_VERSION);
        assert_eq!((w13.config, w13.state, w13.features[0]), (0x10, 1 << 2, 0x880));
        // 1.3's bit 4 reads back as an undefined bit, as Open vSwitch reads it.
        let back = Port::from_wire(OFP13_VERSION, w13);
        assert_eq!(back.config, 0);
        assert_eq!(back.undefined.map(|u| u.config), Some(NO_FLOOD));
    }

    /// A 1.4 port from the spec's layout: port 7 with an ethernet property (100 Mb/s
    /// full duplex, copper, autonegotiation; 5 Mb/s) and an experimenter property.
    #[test]
    fn spec_bytes_14() {
        let mut b = vec![0, 0, 0, 7, 0, 88, 0, 0, 0xf2, 0x0b, 0xa4, 0xd0, 0x3f, 0x70, 0, 0];
        b.extend_from_slice(b"eth7\0\0\0\0\0\0\0\0\0\0\0\0");
        b.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 4]); // config 0, state LIVE
        b.extend_from_slice(&[0, 0, 0, 32, 0, 0, 0, 0]); // ethernet, length 32
        for v in [0x2808u32, 0x2800, 0x2808, 0x2808, 5000, 5000] {
            b.extend_from_slice(&v.to_be_bytes());
        }
        b.extend_from_slice(&[0xff, 0xff, 0, 16, 0, 0, 0, 0x65, 0, 0, 0, 1, 0, 0, 0, 1]);
        let p = Port::decode(OFP14_VERSION, &mut Reader::new(&b)).unwrap();
        assert_eq!((p.port_no, p.name.as_str(), p.state), (7, "eth7", 4));
        assert_eq!((p.curr, p.advertised, p.curr_speed, p.max_speed), (0x2808, 0x2800, 5000, 5000));
        let exp =
            Property::Experimenter { experimenter: 0x65, exp_type: 1, data: vec![0, 0, 0, 1] };
        assert_eq!(p.properties, Some(vec![PortProp::Ethernet, PortProp::Other(exp)]));
        let mut w = Writer::new();
        p.encode(OFP14_VERSION, &mut w);
        assert_eq!(w.buf, b);
        assert_eq!(p.encoded_len(OFP14_VERSION), 88);

        // Without the experimenter property it is what a port built by hand writes.
        let plain = Port { properties: None, ..p.clone() };
        let mut w = Writer::new();
        plain.encode(OFP14_VERSION, &mut w);
        let mut want = b[..72].to_vec();
        want[5] = 72;
        assert_eq!(w.buf, want);
        assert_eq!(Port::decode(OFP14_VERSION, &mut Reader::new(&want)).unwrap(), plain);
        // The same port for 1.3.
        assert_eq!(plain.encoded_len(OFP13_VERSION), 64);

        // A length below 40 or beyond the bytes; a second ethernet property.
        let mut short = want.clone();
        short[5] = 36;
        let e = Port::decode(OFP14_VERSION, &mut Reader::new(&short)).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BAD_REQUEST_BAD_LEN);
        let e = Port::decode(OFP14_VERSION, &mut Reader::new(&want[..71])).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BAD_REQUEST_BAD_LEN);
        let mut two = want.clone();
        two.extend_from_slice(&want[40..]);
        two[5] = 104;
        let e = Port::decode(OFP14_VERSION, &mut Reader::new(&two)).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BAD_PROPERTY_DUP_TYPE);
        // An ethernet property of the wrong length.
        let mut bad = want.clone();
        bad[43] = 24;
        bad.truncate(64);
        bad[5] = 64;
        let e = Port::decode(OFP14_VERSION, &mut Reader::new(&bad)).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BAD_PROPERTY_BAD_LEN);
    }

    #[test]
    fn port_numbers_by_version() {
        let p = Port { port_no: 0xffff_fffe, ..Port::default() };
        assert_eq!(p.to_wire(OFP10_VERSION).port_no, 0xfffe);
        assert_eq!(p.to_wire(OFP13_VERSION).port_no, 0xffff_fffe);
        let none = Port { port_no: 0x1_0000, ..Port::default() };
        assert_eq!(none.to_wire(OFP10_VERSION).port_no, 0xffff);
        let w = Wire { port_no: 0xfff8, ..Wire::default() };
        assert_eq!(Port::from_wire(OFP10_VERSION, w).port_no, 0xffff_fff8);
    }
}
