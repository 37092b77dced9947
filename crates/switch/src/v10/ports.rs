//! Ports between OpenFlow 1.0 and 1.3: numbers, feature bits, the port description
//! (`ofp_phy_port` ↔ `ofp_port`), port-status and port-mod.
//!
//! Numbers: 1.0 ports are 16 bits, 1.3 ports 32. Physical ports below `0xff00` keep their
//! number; the 1.0 range `0xff00..=0xffff` (`OFPP_MAX` and the reserved ports, `OFPP_NONE`
//! last) is the 1.3 range `0xffffff00..=0xffffffff` (`OFPP_MAX` … `OFPP_ANY`), as in Open
//! vSwitch. 1.3 numbers `0xff00..0xffffff00` have no 1.0 number.
//!
//! Feature bits (`ofp_port_features`): bits 0–6 (10M…10G) are the same in both; the 1.0
//! media bits 7–11 (copper, fiber, autoneg, pause, pause-asym) are 1.3's bits 11–15; the
//! 1.3-only speeds (40G, 100G, 1T, other: bits 7–10) have no 1.0 bit and are dropped.
//!
//! Config bits (`ofp_port_config`): `PORT_DOWN` (0), `NO_RECV` (2), `NO_FWD` (5) and
//! `NO_PACKET_IN` (6) are the same in both. 1.0's `NO_FLOOD` (4) keeps its place: 1.3
//! leaves that bit undefined, and the datapath's port configuration has `no_flood` for
//! it, so the agent's port state should honour bit 4. The 1.0 STP bits `NO_STP` (1) and
//! `NO_RECV_STP` (3) are ignored, as Open vSwitch does: this switch runs no spanning tree.
//! State: only `LINK_DOWN` exists in both; 1.3's `BLOCKED` and `LIVE` are dropped, and
//! the 1.0 STP state bits stay 0 (no STP).

use openflow::v10::port::{port_from_v13, port_to_v13};
use openflow::v10::PortStatusReason as Reason10;
use openflow::v10::{PhyPort, PortMod as PortMod10, PortStatus as PortStatus10};
use openflow::v13::port::Port;
use openflow::v13::{PortMod as PortMod13, PortReason, PortStatus as PortStatus13};
use openflow::{ErrorKind, OfpError};

/// Feature bits 0–6 (speeds up to 10 Gb/s), the same in both versions.
const SHARED_FEATURES: u32 = 0x7f;
/// The 1.0 media bits 7–11 (copper, fiber, autoneg, pause, pause-asym).
const MEDIA_FEATURES_10: u32 = 0x1f << 7;
/// How far the media bits move from 1.0 to 1.3 (bit 7 → bit 11).
const MEDIA_SHIFT: u32 = 4;

/// The config bits that cross between the versions: `PORT_DOWN`, `NO_RECV`, `NO_FLOOD`
/// (bit 4, see the module comment), `NO_FWD`, `NO_PACKET_IN`.
const CONFIG_BITS: u32 = 1 | 1 << 2 | 1 << 4 | 1 << 5 | 1 << 6;
/// `OFPPS_LINK_DOWN`, the one state bit both versions define.
const STATE_LINK_DOWN: u32 = 1;

/// A 1.0 port number in 1.3 numbering (`OFPP_NONE` → `OFPP_ANY`).
pub fn port_no_to_v13(port: u16) -> u32 {
    port_to_v13(port)
}

/// A 1.3 port number in 1.0 numbering (`OFPP_ANY` → `OFPP_NONE`); `OFPBRC_BAD_PORT` for
/// the numbers 1.0 has none for (`0xff00..0xffffff00`).
pub fn port_no_from_v13(port: u32) -> Result<u16, OfpError> {
    port_from_v13(port).ok_or_else(|| {
        OfpError::new(
            ErrorKind::BAD_REQUEST_BAD_PORT,
            format!("port {port:#x} has no OpenFlow 1.0 number"),
        )
    })
}

/// 1.0 `ofp_port_features` bits as 1.3 bits; bits above 11 (undefined in 1.0) are dropped.
pub fn features_to_v13(f: u32) -> u32 {
    f & SHARED_FEATURES | (f & MEDIA_FEATURES_10) << MEDIA_SHIFT
}

/// 1.3 `ofp_port_features` bits as 1.0 bits; the 1.3-only speeds (40G, 100G, 1T, other)
/// and bits above 15 are dropped.
pub fn features_to_v10(f: u32) -> u32 {
    f & SHARED_FEATURES | (f >> MEDIA_SHIFT) & MEDIA_FEATURES_10
}

/// A 1.3 port description as a 1.0 `ofp_phy_port`: number renumbered
/// ([`port_no_from_v13`], whose error it returns), features converted, `curr_speed` and
/// `max_speed` dropped (1.0 has none), config and state reduced to the bits both versions
/// share (module comment). The name keeps at most 15 bytes on the wire (1.0 needs a NUL).
pub fn port_to_v10(p: &Port) -> Result<PhyPort, OfpError> {
    Ok(PhyPort {
        port_no: port_no_from_v13(p.port_no)?,
        hw_addr: p.hw_addr,
        name: p.name.clone(),
        config: p.config & CONFIG_BITS,
        state: p.state & STATE_LINK_DOWN,
        curr: features_to_v10(p.curr),
        advertised: features_to_v10(p.advertised),
        supported: features_to_v10(p.supported),
        peer: features_to_v10(p.peer),
    })
}

/// A 1.3 port-status as a 1.0 one (same reasons; the port by [`port_to_v10`]).
pub fn port_status_to_v10(s: &PortStatus13) -> Result<PortStatus10, OfpError> {
    let reason = match s.reason {
        PortReason::Add => Reason10::Add,
        PortReason::Delete => Reason10::Delete,
        PortReason::Modify => Reason10::Modify,
        PortReason::Unknown(n) => Reason10::Unknown(n),
    };
    Ok(PortStatus10 {
        reason,
        desc: port_to_v10(&s.port)?,
    })
}

/// A 1.0 port-mod as a 1.3 one: the number renumbered (so `OFPP_NONE` and the reserved
/// ports stay out of range, and 1.3's validation answers `OFPPMFC_BAD_PORT`, 1.0 type 4
/// code 0), `hw_addr` unchanged, config and mask reduced to the bits that cross (the STP
/// bits and undefined bits are ignored), `advertise` converted ([`features_to_v13`]; 0 is
/// still "leave unchanged").
pub fn port_mod_to_v13(pm: &PortMod10) -> PortMod13 {
    let mask = pm.mask & CONFIG_BITS;
    PortMod13 {
        port_no: port_no_to_v13(pm.port_no),
        hw_addr: pm.hw_addr,
        config: pm.config & mask,
        mask,
        advertise: features_to_v13(pm.advertise),
    }
}
