//! Port and queue counters: the `OFPMP_PORT_STATS` reply element (`ofp_port_stats`,
//! 112 bytes) and the `OFPMP_QUEUE` reply element (`ofp_queue_stats`, 40 bytes).

use crate::error::OfpError;
use crate::wire::{Reader, Writer};

/// Length of `ofp_port_stats`.
pub const PORT_STATS_LEN: usize = 112;
/// Length of `ofp_queue_stats`.
pub const QUEUE_STATS_LEN: usize = 40;
/// `OFPQ_ALL`: every queue of the port(s).
pub const OFPQ_ALL: u32 = 0xffff_ffff;

/// `ofp_port_stats`: a port's counters (all-ones where a counter is unavailable).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct PortStats {
    pub port_no: u32,
    pub rx_packets: u64,
    pub tx_packets: u64,
    pub rx_bytes: u64,
    pub tx_bytes: u64,
    pub rx_dropped: u64,
    pub tx_dropped: u64,
    pub rx_errors: u64,
    pub tx_errors: u64,
    pub rx_frame_err: u64,
    pub rx_over_err: u64,
    pub rx_crc_err: u64,
    pub collisions: u64,
    pub duration_sec: u32,
    pub duration_nsec: u32,
}

impl PortStats {
    pub fn decode(r: &mut Reader) -> Result<PortStats, OfpError> {
        let port_no = r.u32()?;
        r.skip(4)?;
        Ok(PortStats {
            port_no,
            rx_packets: r.u64()?,
            tx_packets: r.u64()?,
            rx_bytes: r.u64()?,
            tx_bytes: r.u64()?,
            rx_dropped: r.u64()?,
            tx_dropped: r.u64()?,
            rx_errors: r.u64()?,
            tx_errors: r.u64()?,
            rx_frame_err: r.u64()?,
            rx_over_err: r.u64()?,
            rx_crc_err: r.u64()?,
            collisions: r.u64()?,
            duration_sec: r.u32()?,
            duration_nsec: r.u32()?,
        })
    }

    pub fn encode(&self, w: &mut Writer) {
        w.u32(self.port_no);
        w.zeros(4);
        for v in [
            self.rx_packets,
            self.tx_packets,
            self.rx_bytes,
            self.tx_bytes,
            self.rx_dropped,
            self.tx_dropped,
            self.rx_errors,
            self.tx_errors,
            self.rx_frame_err,
            self.rx_over_err,
            self.rx_crc_err,
            self.collisions,
        ] {
            w.u64(v);
        }
        w.u32(self.duration_sec);
        w.u32(self.duration_nsec);
    }
}

/// `ofp_queue_stats`: one queue's counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct QueueStats {
    pub port_no: u32,
    pub queue_id: u32,
    pub tx_bytes: u64,
    pub tx_packets: u64,
    pub tx_errors: u64,
    pub duration_sec: u32,
    pub duration_nsec: u32,
}

impl QueueStats {
    pub fn decode(r: &mut Reader) -> Result<QueueStats, OfpError> {
        Ok(QueueStats {
            port_no: r.u32()?,
            queue_id: r.u32()?,
            tx_bytes: r.u64()?,
            tx_packets: r.u64()?,
            tx_errors: r.u64()?,
            duration_sec: r.u32()?,
            duration_nsec: r.u32()?,
        })
    }

    pub fn encode(&self, w: &mut Writer) {
        w.u32(self.port_no);
        w.u32(self.queue_id);
        w.u64(self.tx_bytes);
        w.u64(self.tx_packets);
        w.u64(self.tx_errors);
        w.u32(self.duration_sec);
        w.u32(self.duration_nsec);
    }
}
