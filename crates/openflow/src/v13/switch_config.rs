//! `OFPT_GET_CONFIG_REPLY` / `OFPT_SET_CONFIG` (OpenFlow 1.3): the switch configuration,
//! and `OFPT_TABLE_MOD`.
//!
//! Switch config wire form (4 bytes): `flags:u16, miss_send_len:u16`. In 1.3 only the
//! IP-fragment handling bits (`OFPC_FRAG_MASK`) are defined.
//!
//! Table mod wire form (8 bytes): `table_id:u8, pad[3], config:u32`. In 1.3 every
//! table-config bit is deprecated (`OFPTC_DEPRECATED_MASK = 3`).

use crate::error::{ErrorKind, OfpError};
use crate::v13::flow_mod::{OFPTT_ALL, OFPTT_MAX};

spec_table! {
    /// `ofp_config_flags` values.
    pub mod config_flags: u16 as numbers {
        FRAG_NORMAL, FRAG_DROP, FRAG_REASM, FRAG_MASK,
    }
}

/// `OFP_DEFAULT_MISS_SEND_LEN`: the `miss_send_len` a switch starts with.
pub const OFP_DEFAULT_MISS_SEND_LEN: u16 = 128;

/// `OFPTC_DEPRECATED_MASK`: the only table-config bits OpenFlow 1.3 knows.
pub const OFPTC_DEPRECATED_MASK: u32 = 3;

record! {
    /// A switch configuration (body of get-config reply and set-config), the same in
    /// OpenFlow 1.0.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub struct SwitchConfig {
        pub flags: u16,
        /// Bytes of a table-miss packet sent to the controller (`0xffff`: all, unbuffered).
        pub miss_send_len: u16,
    }
}

impl Default for SwitchConfig {
    fn default() -> Self {
        SwitchConfig { flags: config_flags::FRAG_NORMAL, miss_send_len: OFP_DEFAULT_MISS_SEND_LEN }
    }
}

impl SwitchConfig {
    pub const BODY_LEN: usize = 4;

    /// Rejects flag bits outside `OFPC_FRAG_MASK` (`OFPSCFC_BAD_FLAGS`).
    pub fn validate(&self) -> Result<(), OfpError> {
        if self.flags & !config_flags::FRAG_MASK != 0 {
            return Err(OfpError::new(
                ErrorKind::SWITCH_CONFIG_FAILED_BAD_FLAGS,
                format!("switch config flags 0x{:04x} set undefined bits", self.flags),
            ));
        }
        Ok(())
    }
}

record! {
    /// An `OFPT_TABLE_MOD` body.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
    pub struct TableMod {
        /// A table or `OFPTT_ALL`.
        pub table_id: u8 [pad 3],
        pub config: u32,
    }
}

impl TableMod {
    /// Checks the table id (`OFPTMFC_BAD_TABLE`; every `u8` is at most `OFPTT_MAX` or
    /// `OFPTT_ALL`, so this cannot fail today but keeps the rule in one place) and
    /// rejects config bits 1.3 does not define (`OFPTMFC_BAD_CONFIG`).
    pub fn validate(&self) -> Result<(), OfpError> {
        if self.table_id > OFPTT_MAX && self.table_id != OFPTT_ALL {
            return Err(OfpError::new(
                ErrorKind::TABLE_MOD_FAILED_BAD_TABLE,
                format!("table id {} is not a table", self.table_id),
            ));
        }
        if self.config & !OFPTC_DEPRECATED_MASK != 0 {
            return Err(OfpError::new(
                ErrorKind::TABLE_MOD_FAILED_BAD_CONFIG,
                format!("table config 0x{:08x} sets undefined bits", self.config),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{assert_roundtrip, encoded, Reader};
    use proptest::prelude::*;

    #[test]
    fn spec_bytes() {
        let c = SwitchConfig::decode(&mut Reader::new(&[0, 1, 0xff, 0xff])).unwrap();
        assert_eq!(c, SwitchConfig { flags: config_flags::FRAG_DROP, miss_send_len: 0xffff });
        let t = TableMod::decode(&mut Reader::new(&[3, 0, 0, 0, 0, 0, 0, 3])).unwrap();
        assert_eq!(t, TableMod { table_id: 3, config: 3 });
        assert_eq!(encoded(|w| t.encode(w)), [3, 0, 0, 0, 0, 0, 0, 3]);
    }

    #[test]
    fn validate() {
        assert!(SwitchConfig::default().validate().is_ok());
        let bad = SwitchConfig { flags: 4, miss_send_len: 0 };
        assert_eq!(bad.validate().unwrap_err().kind, ErrorKind::SWITCH_CONFIG_FAILED_BAD_FLAGS);
        assert!(TableMod { table_id: OFPTT_ALL, config: 3 }.validate().is_ok());
        let bad = TableMod { table_id: 0, config: 4 };
        assert_eq!(bad.validate().unwrap_err().kind, ErrorKind::TABLE_MOD_FAILED_BAD_CONFIG);
    }

    proptest! {
        #[test]
        fn roundtrip(c in SwitchConfig::arb(), t in TableMod::arb()) {
            assert_roundtrip(&c, SwitchConfig::encode, SwitchConfig::decode);
            let bytes = assert_roundtrip(&t, TableMod::encode, TableMod::decode);
            prop_assert_eq!(bytes.len(), 8);
        }
    }
}
