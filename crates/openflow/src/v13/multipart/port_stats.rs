//! Port and queue counters: the `OFPMP_PORT_STATS` reply element (`ofp_port_stats`,
//! 112 bytes) and the `OFPMP_QUEUE` reply element (`ofp_queue_stats`, 40 bytes).

/// Length of `ofp_port_stats`.
pub const PORT_STATS_LEN: usize = 112;
/// Length of `ofp_queue_stats`.
pub const QUEUE_STATS_LEN: usize = 40;
/// `OFPQ_ALL`: every queue of the port(s).
pub const OFPQ_ALL: u32 = 0xffff_ffff;

/// The port and queue counters have one type for every version ([`crate::model`]).
pub use crate::model::{PortStats, QueueStats};
