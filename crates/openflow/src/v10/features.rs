//! `OFPT_FEATURES_REPLY` and the switch configuration (`OFPT_GET_CONFIG_REPLY`,
//! `OFPT_SET_CONFIG`) of OpenFlow 1.0.
//!
//! Features reply body: `datapath_id:u64, n_buffers:u32, n_tables:u8, pad[3],
//! capabilities:u32, actions:u32`, then `ofp_phy_port`s (48 bytes each) to the end, each
//! decoded into the version-neutral [`Port`] (`crate::model`).
//! Switch config body: `flags:u16, miss_send_len:u16`.

use super::port::{Port, PHY_PORT_LEN};
use crate::error::{ErrorKind, OfpError};
use crate::header::OFP10_VERSION;
use crate::wire::{Reader, Writer};

/// `ofp_capabilities` bits (1.0).
pub mod capabilities {
    pub const FLOW_STATS: u32 = 1 << 0;
    pub const TABLE_STATS: u32 = 1 << 1;
    pub const PORT_STATS: u32 = 1 << 2;
    pub const STP: u32 = 1 << 3;
    pub const RESERVED: u32 = 1 << 4;
    pub const IP_REASM: u32 = 1 << 5;
    pub const QUEUE_STATS: u32 = 1 << 6;
    pub const ARP_MATCH_IP: u32 = 1 << 7;
}

/// `ofp_config_flags` (1.0): IP fragment handling.
pub mod config_flags {
    pub const FRAG_NORMAL: u16 = 0;
    pub const FRAG_DROP: u16 = 1;
    pub const FRAG_REASM: u16 = 2;
    pub const FRAG_MASK: u16 = 3;
}

/// An `OFPT_FEATURES_REPLY` body. `actions` is a bitmap with bit `n` set when action
/// type `n` is supported; `ports` are in the version-neutral form (1.3 numbering).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FeaturesReply {
    pub datapath_id: u64,
    pub n_buffers: u32,
    pub n_tables: u8,
    pub capabilities: u32,
    pub actions: u32,
    pub ports: Vec<Port>,
}

impl FeaturesReply {
    pub const FIXED_LEN: usize = 24;

    pub fn decode(r: &mut Reader) -> Result<FeaturesReply, OfpError> {
        let datapath_id = r.u64()?;
        let n_buffers = r.u32()?;
        let n_tables = r.u8()?;
        r.skip(3)?;
        let capabilities = r.u32()?;
        let actions = r.u32()?;
        if r.remaining() / PHY_PORT_LEN * PHY_PORT_LEN != r.remaining() {
            return Err(OfpError::new(
                ErrorKind::BAD_REQUEST_BAD_LEN,
                format!(
                    "features reply port list of {} bytes is not a multiple of {PHY_PORT_LEN}",
                    r.remaining()
                ),
            ));
        }
        let mut ports = Vec::with_capacity(r.remaining() / PHY_PORT_LEN);
        while !r.is_empty() {
            ports.push(Port::decode(OFP10_VERSION, r)?);
        }
        Ok(FeaturesReply {
            datapath_id,
            n_buffers,
            n_tables,
            capabilities,
            actions,
            ports,
        })
    }

    pub fn encode(&self, w: &mut Writer) {
        w.u64(self.datapath_id);
        w.u32(self.n_buffers);
        w.u8(self.n_tables);
        w.zeros(3);
        w.u32(self.capabilities);
        w.u32(self.actions);
        for p in &self.ports {
            p.encode(OFP10_VERSION, w);
        }
    }
}

/// `ofp_switch_config` has the same layout in 1.0 as in 1.3 (4 bytes).
pub use crate::v13::switch_config::SwitchConfig;

/// proptest strategies for features replies and switch configs.
#[cfg(test)]
pub(crate) mod strategy {
    use super::super::port::strategy::arb_phy_port;
    use super::*;
    use proptest::prelude::*;

    pub fn arb_features_reply() -> impl Strategy<Value = FeaturesReply> {
        (
            any::<u64>(),
            any::<u32>(),
            any::<u8>(),
            any::<u32>(),
            any::<u32>(),
            proptest::collection::vec(arb_phy_port(), 0..4),
        )
            .prop_map(
                |(datapath_id, n_buffers, n_tables, capabilities, actions, ports)| FeaturesReply {
                    datapath_id,
                    n_buffers,
                    n_tables,
                    capabilities,
                    actions,
                    ports,
                },
            )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn features_roundtrip(f in strategy::arb_features_reply()) {
            let mut w = Writer::new();
            f.encode(&mut w);
            prop_assert_eq!(w.len(), FeaturesReply::FIXED_LEN + PHY_PORT_LEN * f.ports.len());
            prop_assert_eq!(FeaturesReply::decode(&mut Reader::new(&w.buf)).unwrap(), f);
        }
    }

    #[test]
    fn partial_port_is_bad_len() {
        let f = FeaturesReply {
            datapath_id: 1,
            n_buffers: 256,
            n_tables: 1,
            capabilities: capabilities::FLOW_STATS,
            actions: 0xfff,
            ports: vec![Port::default()],
        };
        let mut w = Writer::new();
        f.encode(&mut w);
        for cut in 1..PHY_PORT_LEN {
            let n = w.len() - cut;
            let e = FeaturesReply::decode(&mut Reader::new(&w.buf[..n])).unwrap_err();
            assert_eq!(e.kind, ErrorKind::BAD_REQUEST_BAD_LEN);
        }
    }
}
