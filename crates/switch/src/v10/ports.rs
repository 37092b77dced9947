//! Ports between OpenFlow 1.0 and 1.3: numbers, which ports a 1.0 controller is told
//! about, and port-mod.
//!
//! Numbers: 1.0 ports are 16 bits, 1.3 ports 32. Physical ports below `0xff00` keep their
//! number; the 1.0 range `0xff00..=0xffff` (`OFPP_MAX` and the reserved ports, `OFPP_NONE`
//! last) is the 1.3 range `0xffffff00..=0xffffffff` (`OFPP_MAX` … `OFPP_ANY`), as in Open
//! vSwitch. 1.3 numbers `0xff00..0xffffff00` have no 1.0 number.
//!
//! Port descriptions and port-status have one type for both versions
//! ([`openflow::model::Port`], [`openflow::model::PortStatus`]): the agent's port is sent
//! as it is and the 1.0 encoder converts it, so a 1.0 controller sees of it (see
//! `openflow::model`'s port module for the mapping):
//! - its number in 1.0 numbering; a port with no 1.0 number is not shown at all
//!   ([`port_to_v10`], [`port_status_to_v10`]);
//! - feature bits 0–6 (10M…10G) as they are and 1.3's media bits 11–15 (copper, fiber,
//!   autoneg, pause, pause-asym) at 1.0's bits 7–11; the 1.3-only speeds (40G, 100G, 1T,
//!   other) are dropped, and `curr_speed`/`max_speed` (1.0 has none);
//! - config: `PORT_DOWN` (0), `NO_RECV` (2), `NO_FLOOD` (4), `NO_FWD` (5) and
//!   `NO_PACKET_IN` (6), the same bits in both versions. 1.0's `NO_FLOOD` keeps its place
//!   in 1.3 too: 1.3 leaves that bit undefined, and the datapath's port configuration has
//!   `no_flood` for it, so the agent's port state honours bit 4. The agent's ports never
//!   hold the 1.0 STP bits `NO_STP` (1) and `NO_RECV_STP` (3) (port-mod ignores them, as
//!   Open vSwitch does: this switch runs no spanning tree);
//! - state: only `LINK_DOWN`, the one bit both versions define; 1.3's `BLOCKED` and
//!   `LIVE` are dropped, and the 1.0 STP state bits stay 0 (no STP).

use openflow::model::{features_from_v10, Port, PortStatus};
use openflow::v10::port::port_to_v13;
use openflow::v10::PortMod as PortMod10;
use openflow::v13::PortMod as PortMod13;
use openflow::OfpError;

/// The config bits that cross between the versions: `PORT_DOWN`, `NO_RECV`, `NO_FLOOD`
/// (bit 4, see the module comment), `NO_FWD`, `NO_PACKET_IN`.
const CONFIG_BITS: u32 = 1 | 1 << 2 | 1 << 4 | 1 << 5 | 1 << 6;

/// A 1.0 port number in 1.3 numbering (`OFPP_NONE` → `OFPP_ANY`).
pub fn port_no_to_v13(port: u16) -> u32 {
    port_to_v13(port)
}

/// A 1.3 port number in 1.0 numbering (`OFPP_ANY` → `OFPP_NONE`); `OFPBRC_BAD_PORT` for
/// the numbers 1.0 has none for (`0xff00..0xffffff00`).
pub fn port_no_from_v13(port: u32) -> Result<u16, OfpError> {
    openflow::v10::translate::port10(port)
}

/// The port a 1.0 controller is shown for the agent's port `p`: `p` itself, whose 1.0
/// encoding converts number and bits (module comment), if its number has a 1.0 form;
/// else [`port_no_from_v13`]'s error.
pub fn port_to_v10(p: &Port) -> Result<Port, OfpError> {
    port_no_from_v13(p.port_no)?;
    Ok(p.clone())
}

/// The port-status a 1.0 controller is sent: the same message, if its port has a 1.0
/// number ([`port_to_v10`]).
pub fn port_status_to_v10(s: &PortStatus) -> Result<PortStatus, OfpError> {
    Ok(PortStatus { reason: s.reason, port: port_to_v10(&s.port)? })
}

/// A 1.0 port-mod as a 1.3 one: the number renumbered (so `OFPP_NONE` and the reserved
/// ports stay out of range, and 1.3's validation answers `OFPPMFC_BAD_PORT`, 1.0 type 4
/// code 0), `hw_addr` unchanged, config and mask reduced to the bits that cross (the STP
/// bits and undefined bits are ignored), `advertise` converted
/// ([`openflow::model::features_from_v10`]; 0 is still "leave unchanged").
pub fn port_mod_to_v13(pm: &PortMod10) -> PortMod13 {
    let mask = pm.mask & CONFIG_BITS;
    PortMod13 {
        port_no: port_no_to_v13(pm.port_no),
        hw_addr: pm.hw_addr,
        config: pm.config & mask,
        mask,
        advertise: features_from_v10(pm.advertise),
        properties: None,
    }
}
