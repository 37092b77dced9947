//! `OFPMP_TABLE` reply element (`ofp_table_stats`, 24 bytes): per-table counters.

use crate::error::OfpError;
use crate::wire::{Reader, Writer};

/// Length of `ofp_table_stats`.
pub const TABLE_STATS_LEN: usize = 24;

/// `ofp_table_stats`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct TableStats {
    pub table_id: u8,
    pub active_count: u32,
    pub lookup_count: u64,
    pub matched_count: u64,
}

impl TableStats {
    pub fn decode(r: &mut Reader) -> Result<TableStats, OfpError> {
        let table_id = r.u8()?;
        r.skip(3)?;
        Ok(TableStats {
            table_id,
            active_count: r.u32()?,
            lookup_count: r.u64()?,
            matched_count: r.u64()?,
        })
    }

    pub fn encode(&self, w: &mut Writer) {
        w.u8(self.table_id);
        w.zeros(3);
        w.u32(self.active_count);
        w.u64(self.lookup_count);
        w.u64(self.matched_count);
    }
}
