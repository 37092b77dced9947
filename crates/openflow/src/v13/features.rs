//! `OFPT_FEATURES_REPLY` (OpenFlow 1.3): the switch's identity and capabilities.
//!
//! Wire form (24 bytes after the header): `datapath_id:u64, n_buffers:u32, n_tables:u8,
//! auxiliary_id:u8, pad[2], capabilities:u32, reserved:u32`. Ports are no longer listed
//! here in 1.3 (they come from the port-description multipart reply).

/// Length of the body after the header.
pub const FEATURES_REPLY_LEN: usize = FeaturesReply::WIRE_LEN;

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

record! {
    /// An `OFPT_FEATURES_REPLY` body.
    #[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
    pub struct FeaturesReply {
        pub datapath_id: u64,
        pub n_buffers: u32,
        pub n_tables: u8,
        /// 0 on the main connection; nonzero on auxiliary connections.
        pub auxiliary_id: u8 [pad 2],
        pub capabilities: u32,
        pub reserved: u32,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{Reader, Writer};
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
        fn roundtrip(f in FeaturesReply::arb()) {
            let mut w = Writer::new();
            f.encode(&mut w);
            prop_assert_eq!(w.len(), FEATURES_REPLY_LEN);
            prop_assert_eq!(FeaturesReply::decode(&mut Reader::new(&w.buf)).unwrap(), f);
        }
    }
}
