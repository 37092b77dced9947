//! The port description, one type for every OpenFlow version: [`Port`] is what a switch
//! says about one of its ports, whether on the wire of OpenFlow 1.0 (`ofp_phy_port`, 48
//! bytes: in the features reply and in port-status) or of 1.3 (`ofp_port`, 64 bytes: in
//! port-status and the port-description reply), and [`PortStatus`] is the port-status
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
//! that version only. So decoding and re-encoding gives the same bytes, for either
//! version, except for the name field's bytes after its first NUL.

use crate::error::OfpError;
use crate::header::OFP10_VERSION;
use crate::v10::port::{ofpp, port_from_v13, port_to_v13};
use crate::wire::{MacAddr, Reader, Writer};

/// Length of the name field in both versions (`OFP_MAX_PORT_NAME_LEN`).
const PORT_NAME_LEN: usize = 16;

/// Bytes of one port description on the wire of `version`: 48 for 1.0 (`ofp_phy_port`),
/// 64 for 1.3 (`ofp_port`).
pub fn port_len(version: u8) -> usize {
    if version == OFP10_VERSION {
        48
    } else {
        64
    }
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

impl Port {
    /// Reads one port description of `version`'s layout.
    pub fn decode(version: u8, r: &mut Reader) -> Result<Port, OfpError> {
        Ok(Port::from_wire(version, Wire::read(version, r)?))
    }

    /// Writes the port in `version`'s layout ([`port_len`] bytes; module comment for
    /// what each version keeps).
    pub fn encode(&self, version: u8, w: &mut Writer) {
        self.to_wire(version).write(version, w);
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
/// port in the version's layout (56 bytes in 1.0, 72 in 1.3).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PortStatus {
    pub reason: PortReason,
    pub port: Port,
}

impl PortStatus {
    /// Bytes of the body on the wire of `version`.
    pub fn body_len(version: u8) -> usize {
        8 + port_len(version)
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

    /// The ports that arbitrary wire fields of `version` decode to.
    pub fn arb_port(version: u8) -> impl Strategy<Value = Port> {
        arb_wire(version).prop_map(move |w| Port::from_wire(version, w))
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
        /// Port-status bodies of both versions round-trip at their lengths.
        #[test]
        fn port_status_roundtrip(
            s10 in strategy::arb_port_status(OFP10_VERSION),
            s13 in strategy::arb_port_status(OFP13_VERSION),
        ) {
            for (version, s, len) in [(OFP10_VERSION, s10, 56), (OFP13_VERSION, s13, 72)] {
                let bytes = crate::wire::assert_roundtrip_in(
                    version,
                    &s,
                    PortStatus::encode,
                    PortStatus::decode,
                );
                prop_assert_eq!(bytes.len(), len);
            }
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
                prop_assert_eq!(bytes.len(), port_len(version));
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
