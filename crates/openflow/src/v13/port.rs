//! The OpenFlow 1.3 port description (`ofp_port`, 64 bytes).
//!
//! Used by port-status messages and the port-description multipart reply.

use crate::error::OfpError;
use crate::wire::{MacAddr, Reader, Writer};

/// Length of `ofp_port` on the wire.
pub const PORT_LEN: usize = 64;
/// Length of the name field (`OFP_MAX_PORT_NAME_LEN`).
pub const PORT_NAME_LEN: usize = 16;

/// `ofp_port_config` bits.
pub mod port_config {
    pub const PORT_DOWN: u32 = 1 << 0;
    pub const NO_RECV: u32 = 1 << 2;
    pub const NO_FWD: u32 = 1 << 5;
    pub const NO_PACKET_IN: u32 = 1 << 6;
}

/// `ofp_port_state` bits.
pub mod port_state {
    pub const LINK_DOWN: u32 = 1 << 0;
    pub const BLOCKED: u32 = 1 << 1;
    pub const LIVE: u32 = 1 << 2;
}

/// `ofp_port_features` bits.
pub mod port_features {
    pub const F_10MB_HD: u32 = 1 << 0;
    pub const F_10MB_FD: u32 = 1 << 1;
    pub const F_100MB_HD: u32 = 1 << 2;
    pub const F_100MB_FD: u32 = 1 << 3;
    pub const F_1GB_HD: u32 = 1 << 4;
    pub const F_1GB_FD: u32 = 1 << 5;
    pub const F_10GB_FD: u32 = 1 << 6;
    pub const F_40GB_FD: u32 = 1 << 7;
    pub const F_100GB_FD: u32 = 1 << 8;
    pub const F_1TB_FD: u32 = 1 << 9;
    pub const F_OTHER: u32 = 1 << 10;
    pub const COPPER: u32 = 1 << 11;
    pub const FIBER: u32 = 1 << 12;
    pub const AUTONEG: u32 = 1 << 13;
    pub const PAUSE: u32 = 1 << 14;
    pub const PAUSE_ASYM: u32 = 1 << 15;
}

/// `ofp_port`: a port's number, address, name, configuration, state and speeds.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Port {
    pub port_no: u32,
    pub hw_addr: MacAddr,
    /// At most 16 bytes survive encoding (the field is 16 bytes, NUL padded).
    pub name: String,
    pub config: u32,
    pub state: u32,
    pub curr: u32,
    pub advertised: u32,
    pub supported: u32,
    pub peer: u32,
    /// Current bit rate in kbps.
    pub curr_speed: u32,
    /// Maximum bit rate in kbps.
    pub max_speed: u32,
}

impl Port {
    pub fn decode(r: &mut Reader) -> Result<Port, OfpError> {
        let port_no = r.u32()?;
        r.skip(4)?;
        let hw_addr = r.mac()?;
        r.skip(2)?;
        let name = r.fixed_str(PORT_NAME_LEN)?;
        Ok(Port {
            port_no,
            hw_addr,
            name,
            config: r.u32()?,
            state: r.u32()?,
            curr: r.u32()?,
            advertised: r.u32()?,
            supported: r.u32()?,
            peer: r.u32()?,
            curr_speed: r.u32()?,
            max_speed: r.u32()?,
        })
    }

    pub fn encode(&self, w: &mut Writer) {
        w.u32(self.port_no);
        w.zeros(4);
        w.mac(self.hw_addr);
        w.zeros(2);
        w.fixed_str(&self.name, PORT_NAME_LEN);
        for v in [
            self.config,
            self.state,
            self.curr,
            self.advertised,
            self.supported,
            self.peer,
            self.curr_speed,
            self.max_speed,
        ] {
            w.u32(v);
        }
    }
}

/// proptest strategy for ports whose names survive encoding.
#[cfg(test)]
pub(crate) mod strategy {
    use super::*;
    use proptest::prelude::*;

    pub fn arb_port() -> impl Strategy<Value = Port> {
        (
            any::<u32>(),
            any::<[u8; 6]>(),
            "[a-z0-9-]{0,15}",
            proptest::array::uniform8(any::<u32>()),
        )
            .prop_map(|(port_no, mac, name, v)| Port {
                port_no,
                hw_addr: MacAddr(mac),
                name,
                config: v[0],
                state: v[1],
                curr: v[2],
                advertised: v[3],
                supported: v[4],
                peer: v[5],
                curr_speed: v[6],
                max_speed: v[7],
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn roundtrip(p in strategy::arb_port()) {
            let mut w = Writer::new();
            p.encode(&mut w);
            prop_assert_eq!(w.len(), PORT_LEN);
            let got = Port::decode(&mut Reader::new(&w.buf)).unwrap();
            prop_assert_eq!(got, p);
        }
    }
}
