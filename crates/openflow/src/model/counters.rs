//! Port, queue and table counters, one type each for every OpenFlow version: the
//! port-stats element (`ofp_port_stats`: 104 bytes in 1.0, 112 in 1.3), the queue-stats
//! element (`ofp_queue_stats`: 32 bytes in 1.0, 40 in 1.3) and the table-stats element
//! (`ofp_table_stats`: 64 bytes in 1.0, 24 in 1.3), with `decode(version, ..)` and
//! `encode(version, ..)`.
//!
//! Port numbers are in the 1.3 numbering whatever the version (1.0's reserved ports
//! `0xff00..` are `0xffffff00..`, see
//! [`port_to_v13`](crate::v10::port::port_to_v13)); encoding for 1.0 writes a number
//! with no 1.0 form as `OFPP_NONE` (a translation to 1.0 drops such entries first). 1.0
//! has no duration: decoding 1.0 gives `u32::MAX` in both duration fields, which
//! [`PortStats::duration`] reads as "none", as Open vSwitch does. A counter the switch
//! does not have is all ones in every version.

use super::{read_port, write_port};
use crate::error::OfpError;
use crate::header::OFP10_VERSION;
use crate::wire::{Reader, Writer};

/// Bytes of one port-stats element on the wire of `version`.
pub fn port_stats_len(version: u8) -> usize {
    if version == OFP10_VERSION {
        104
    } else {
        112
    }
}

/// Bytes of one queue-stats element on the wire of `version`.
pub fn queue_stats_len(version: u8) -> usize {
    if version == OFP10_VERSION {
        32
    } else {
        40
    }
}

/// Reads the duration fields of 1.3, or "none" (all ones) for 1.0.
fn read_duration(version: u8, r: &mut Reader) -> Result<(u32, u32), OfpError> {
    if version == OFP10_VERSION {
        Ok((u32::MAX, u32::MAX))
    } else {
        Ok((r.u32()?, r.u32()?))
    }
}

/// `ofp_port_stats`: a port's counters (all ones where a counter is unavailable) and, from
/// OpenFlow 1.3 on, how long the port has been up.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PortStats {
    /// In the 1.3 numbering.
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
    /// `u32::MAX` (with `duration_nsec`) when not known: always in OpenFlow 1.0.
    pub duration_sec: u32,
    pub duration_nsec: u32,
}

impl PortStats {
    pub fn decode(version: u8, r: &mut Reader) -> Result<PortStats, OfpError> {
        let port_no = read_port(version, r, 8)?;
        let mut c = [0u64; 12];
        for v in &mut c {
            *v = r.u64()?;
        }
        let (duration_sec, duration_nsec) = read_duration(version, r)?;
        let [rx_packets, tx_packets, rx_bytes, tx_bytes, rx_dropped, tx_dropped, rx_errors, tx_errors, rx_frame_err, rx_over_err, rx_crc_err, collisions] =
            c;
        Ok(PortStats {
            port_no,
            rx_packets,
            tx_packets,
            rx_bytes,
            tx_bytes,
            rx_dropped,
            tx_dropped,
            rx_errors,
            tx_errors,
            rx_frame_err,
            rx_over_err,
            rx_crc_err,
            collisions,
            duration_sec,
            duration_nsec,
        })
    }

    pub fn encode(&self, version: u8, w: &mut Writer) {
        write_port(version, self.port_no, w, 8);
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
        if version != OFP10_VERSION {
            w.u32(self.duration_sec);
            w.u32(self.duration_nsec);
        }
    }

    /// How long the port has been up (seconds, nanoseconds), when reported.
    pub fn duration(&self) -> Option<(u32, u32)> {
        (self.duration_sec != u32::MAX).then_some((self.duration_sec, self.duration_nsec))
    }
}

/// `ofp_queue_stats`: one queue's counters and, from OpenFlow 1.3 on, its age.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct QueueStats {
    /// In the 1.3 numbering.
    pub port_no: u32,
    pub queue_id: u32,
    pub tx_bytes: u64,
    pub tx_packets: u64,
    pub tx_errors: u64,
    /// `u32::MAX` (with `duration_nsec`) when not known: always in OpenFlow 1.0.
    pub duration_sec: u32,
    pub duration_nsec: u32,
}

impl QueueStats {
    pub fn decode(version: u8, r: &mut Reader) -> Result<QueueStats, OfpError> {
        let port_no = read_port(version, r, 4)?;
        let queue_id = r.u32()?;
        let (tx_bytes, tx_packets, tx_errors) = (r.u64()?, r.u64()?, r.u64()?);
        let (duration_sec, duration_nsec) = read_duration(version, r)?;
        Ok(QueueStats {
            port_no,
            queue_id,
            tx_bytes,
            tx_packets,
            tx_errors,
            duration_sec,
            duration_nsec,
        })
    }

    pub fn encode(&self, version: u8, w: &mut Writer) {
        write_port(version, self.port_no, w, 4);
        w.u32(self.queue_id);
        w.u64(self.tx_bytes);
        w.u64(self.tx_packets);
        w.u64(self.tx_errors);
        if version != OFP10_VERSION {
            w.u32(self.duration_sec);
            w.u32(self.duration_nsec);
        }
    }

    /// How long the queue has existed (seconds, nanoseconds), when reported.
    pub fn duration(&self) -> Option<(u32, u32)> {
        (self.duration_sec != u32::MAX).then_some((self.duration_sec, self.duration_nsec))
    }
}

/// Bytes of one table-stats element on the wire of `version`.
pub fn table_stats_len(version: u8) -> usize {
    if version == OFP10_VERSION {
        64
    } else {
        24
    }
}

/// `OFP_MAX_TABLE_NAME_LEN` (OpenFlow 1.0).
const TABLE_NAME_LEN: usize = 32;

/// `ofp_table_stats`: a table's counters and, in OpenFlow 1.0 only, its name, the fields
/// it can wildcard and its capacity (1.3 moved those to table features: decoding 1.3
/// leaves them empty, encoding 1.3 leaves them out).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct TableStats {
    pub table_id: u8,
    /// 1.0 only; read up to its first NUL, at most 31 bytes survive encoding.
    pub name: String,
    /// 1.0 only: the `ofp_flow_wildcards` bits the table supports (`None` from 1.3;
    /// encoded as 0 in 1.0).
    pub wildcards: Option<u32>,
    /// 1.0 only.
    pub max_entries: u32,
    pub active_count: u32,
    pub lookup_count: u64,
    pub matched_count: u64,
}

impl TableStats {
    pub fn decode(version: u8, r: &mut Reader) -> Result<TableStats, OfpError> {
        let table_id = r.u8()?;
        r.skip(3)?;
        let (name, wildcards, max_entries) = if version == OFP10_VERSION {
            (r.fixed_str(TABLE_NAME_LEN)?, Some(r.u32()?), r.u32()?)
        } else {
            (String::new(), None, 0)
        };
        Ok(TableStats {
            table_id,
            name,
            wildcards,
            max_entries,
            active_count: r.u32()?,
            lookup_count: r.u64()?,
            matched_count: r.u64()?,
        })
    }

    pub fn encode(&self, version: u8, w: &mut Writer) {
        w.u8(self.table_id);
        w.zeros(3);
        if version == OFP10_VERSION {
            w.fixed_str(&self.name, TABLE_NAME_LEN);
            w.u32(self.wildcards.unwrap_or(0));
            w.u32(self.max_entries);
        }
        w.u32(self.active_count);
        w.u64(self.lookup_count);
        w.u64(self.matched_count);
    }
}

/// proptest strategies: counters as arbitrary wire bytes of a version decode, so every
/// value that version's wire carries (pads ignored).
#[cfg(test)]
pub(crate) mod strategy {
    use super::*;
    use proptest::prelude::*;

    /// The element of `len` arbitrary bytes that `decode` reads.
    fn from_bytes<T: std::fmt::Debug>(
        len: usize,
        decode: impl Fn(&mut Reader) -> Result<T, OfpError>,
    ) -> impl Strategy<Value = T> {
        proptest::collection::vec(any::<u8>(), len).prop_map(move |b| {
            decode(&mut Reader::new(&b)).expect("any bytes of the length decode")
        })
    }

    /// Port stats of `version`'s wire.
    pub fn arb_port_stats(version: u8) -> impl Strategy<Value = PortStats> {
        from_bytes(port_stats_len(version), move |r| PortStats::decode(version, r))
    }

    /// Queue stats of `version`'s wire.
    pub fn arb_queue_stats(version: u8) -> impl Strategy<Value = QueueStats> {
        from_bytes(queue_stats_len(version), move |r| QueueStats::decode(version, r))
    }
}
