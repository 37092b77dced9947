//! Port and queue counters: the `OFPMP_PORT_STATS` reply element (`ofp_port_stats`,
//! 112 bytes in 1.3; 80 bytes and properties in 1.4) and the `OFPMP_QUEUE` reply element
//! (`ofp_queue_stats`, 40 bytes in 1.3; 48 bytes and properties in 1.4).

/// Length of 1.3's `ofp_port_stats`.
pub const PORT_STATS_LEN: usize = 112;
/// Length of 1.3's `ofp_queue_stats`.
pub const QUEUE_STATS_LEN: usize = 40;
/// `OFPQ_ALL`: every queue of the port(s).
pub const OFPQ_ALL: u32 = 0xffff_ffff;

/// The port and queue counters have one type for every version ([`crate::model`]).
pub use crate::model::{OpticalPortStats, PortStats, PortStatsProp, QueueStats};
