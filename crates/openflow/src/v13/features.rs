//! `OFPT_FEATURES_REPLY` (OpenFlow 1.3): the switch's identity and capabilities.
//!
//! Wire form (24 bytes after the header): `datapath_id:u64, n_buffers:u32, n_tables:u8,
//! auxiliary_id:u8, pad[2], capabilities:u32, reserved:u32`. Ports are no longer listed
//! here in 1.3 (they come from the port-description multipart reply).

use crate::error::OfpError;
use crate::wire::{Reader, Writer};

/// Length of the body after the header.
pub const FEATURES_REPLY_LEN: usize = 24;

/// `ofp_capabilities` bits.
pub mod capabilities {
    pub const FLOW_STATS: u32 = 1 << 0;
    pub const TABLE_STATS: u32 = 1 << 1;
    pub const PORT_STATS: u32 = 1 << 2;
    pub const GROUP_STATS: u32 = 1 << 3;
    pub const IP_REASM: u32 = 1 << 5;
    pub const QUEUE_STATS: u32 = 1 << 6;
    pub const PORT_BLOCKED: u32 = 1 << 8;
}

/// An `OFPT_FEATURES_REPLY` body.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct FeaturesReply {
    pub datapath_id: u64,
    pub n_buffers: u32,
    pub n_tables: u8,
    /// 0 on the main connection; nonzero on auxiliary connections.
    pub auxiliary_id: u8,
    pub capabilities: u32,
    pub reserved: u32,
}

impl FeaturesReply {
    pub fn decode(r: &mut Reader) -> Result<FeaturesReply, OfpError> {
        let datapath_id = r.u64()?;
        let n_buffers = r.u32()?;
        let n_tables = r.u8()?;
        let auxiliary_id = r.u8()?;
        r.skip(2)?;
        Ok(FeaturesReply {
            datapath_id,
            n_buffers,
            n_tables,
            auxiliary_id,
            capabilities: r.u32()?,
            reserved: r.u32()?,
        })
    }

    pub fn encode(&self, w: &mut Writer) {
        w.u64(self.datapath_id);
        w.u32(self.n_buffers);
        w.u8(self.n_tables);
        w.u8(self.auxiliary_id);
        w.zeros(2);
        w.u32(self.capabilities);
        w.u32(self.reserved);
    }
}

/// proptest strategy for features replies.
#[cfg(test)]
pub(crate) mod strategy {
    use super::*;
    use proptest::prelude::*;

    pub fn arb_features_reply() -> impl Strategy<Value = FeaturesReply> {
        (
            any::<u64>(),
            any::<u32>(),
            any::<u8>(),
            any::<u8>(),
            any::<u32>(),
            any::<u32>(),
        )
            .prop_map(
                |(datapath_id, n_buffers, n_tables, auxiliary_id, capabilities, reserved)| {
                    FeaturesReply {
                        datapath_id,
                        n_buffers,
                        n_tables,
                        auxiliary_id,
                        capabilities,
                        reserved,
                    }
                },
            )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn spec_bytes() {
        let bytes = [
            0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 254, 0, 0, 0, 0, 0, 0, 0x4f, 0, 0, 0, 0,
        ];
        let f = FeaturesReply::decode(&mut Reader::new(&bytes)).unwrap();
        assert_eq!(
            f,
            FeaturesReply {
                datapath_id: 1,
                n_buffers: 256,
                n_tables: 254,
                auxiliary_id: 0,
                capabilities: 0x4f,
                reserved: 0
            }
        );
        let mut w = Writer::new();
        f.encode(&mut w);
        assert_eq!(w.buf, bytes);
    }

    proptest! {
        #[test]
        fn roundtrip(f in strategy::arb_features_reply()) {
            let mut w = Writer::new();
            f.encode(&mut w);
            prop_assert_eq!(w.len(), FEATURES_REPLY_LEN);
            prop_assert_eq!(FeaturesReply::decode(&mut Reader::new(&w.buf)).unwrap(), f);
        }
    }
}
