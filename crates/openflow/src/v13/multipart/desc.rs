//! `OFPMP_DESC` reply body (`ofp_desc`, 1056 bytes): the switch's description strings.

use crate::error::OfpError;
use crate::wire::{Reader, Writer};

/// `DESC_STR_LEN`.
pub const DESC_STR_LEN: usize = 256;
/// `SERIAL_NUM_LEN`.
pub const SERIAL_NUM_LEN: usize = 32;
/// Length of `ofp_desc` on the wire.
pub const DESC_LEN: usize = 4 * DESC_STR_LEN + SERIAL_NUM_LEN;

/// `ofp_desc`. Each string is a fixed NUL-padded field; at most 256 bytes (32 for
/// `serial_num`) survive encoding.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Desc {
    pub mfr_desc: String,
    pub hw_desc: String,
    pub sw_desc: String,
    pub serial_num: String,
    pub dp_desc: String,
}

impl Desc {
    pub fn decode(r: &mut Reader) -> Result<Desc, OfpError> {
        Ok(Desc {
            mfr_desc: r.fixed_str(DESC_STR_LEN)?,
            hw_desc: r.fixed_str(DESC_STR_LEN)?,
            sw_desc: r.fixed_str(DESC_STR_LEN)?,
            serial_num: r.fixed_str(SERIAL_NUM_LEN)?,
            dp_desc: r.fixed_str(DESC_STR_LEN)?,
        })
    }

    pub fn encode(&self, w: &mut Writer) {
        w.fixed_str(&self.mfr_desc, DESC_STR_LEN);
        w.fixed_str(&self.hw_desc, DESC_STR_LEN);
        w.fixed_str(&self.sw_desc, DESC_STR_LEN);
        w.fixed_str(&self.serial_num, SERIAL_NUM_LEN);
        w.fixed_str(&self.dp_desc, DESC_STR_LEN);
    }
}
