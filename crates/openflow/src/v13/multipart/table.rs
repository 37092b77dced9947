//! `OFPMP_TABLE` reply element (`ofp_table_stats`, 24 bytes): per-table counters, one
//! type for every version ([`crate::model::TableStats`]).

/// Length of `ofp_table_stats`.
pub const TABLE_STATS_LEN: usize = 24;

pub use crate::model::TableStats;
