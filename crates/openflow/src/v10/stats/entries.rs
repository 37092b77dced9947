//! The entries of OpenFlow 1.0 stats replies: description strings, flow entries,
//! aggregate counters, tables, ports and queues. Each encodes to its fixed size (flow
//! entries: 88 bytes plus actions, their length field derived from the actions).

use super::bad_len;
use crate::error::OfpError;
use crate::model::WireAction;
use crate::v10::action10::Action;
use crate::v10::match10::Match;
use crate::wire::{Reader, Writer};

/// `ofp_desc_stats` has the same layout in 1.0 as `ofp_desc` in 1.3.
pub use crate::v13::multipart::Desc as DescStats;

/// `ofp_flow_stats`: one flow entry. The length field is derived from the actions.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FlowStats {
    pub table_id: u8,
    pub match_: Match,
    pub duration_sec: u32,
    pub duration_nsec: u32,
    pub priority: u16,
    pub idle_timeout: u16,
    pub hard_timeout: u16,
    pub cookie: u64,
    pub packet_count: u64,
    pub byte_count: u64,
    pub actions: Vec<Action>,
}

impl FlowStats {
    /// Length before the actions.
    pub const FIXED_LEN: usize = 88;

    /// Reads one entry; its length field must cover the fixed part and fit in `r`.
    pub fn decode(r: &mut Reader) -> Result<FlowStats, OfpError> {
        let len = usize::from(r.peek_u16(0)?);
        if len < Self::FIXED_LEN || len > r.remaining() {
            return Err(bad_len(format!(
                "flow stats entry has length {len} ({} bytes left, at least {} needed)",
                r.remaining(),
                Self::FIXED_LEN
            )));
        }
        let mut b = r.sub(len)?;
        b.skip(2)?;
        let table_id = b.u8()?;
        b.skip(1)?;
        let match_ = Match::decode(&mut b)?;
        let duration_sec = b.u32()?;
        let duration_nsec = b.u32()?;
        let priority = b.u16()?;
        let idle_timeout = b.u16()?;
        let hard_timeout = b.u16()?;
        b.skip(6)?;
        Ok(FlowStats {
            table_id,
            match_,
            duration_sec,
            duration_nsec,
            priority,
            idle_timeout,
            hard_timeout,
            cookie: b.u64()?,
            packet_count: b.u64()?,
            byte_count: b.u64()?,
            actions: Action::decode_list(&mut b)?,
        })
    }

    pub fn encode(&self, w: &mut Writer) {
        let start = w.len();
        w.u16(0);
        w.u8(self.table_id);
        w.zeros(1);
        self.match_.encode(w);
        w.u32(self.duration_sec);
        w.u32(self.duration_nsec);
        w.u16(self.priority);
        w.u16(self.idle_timeout);
        w.u16(self.hard_timeout);
        w.zeros(6);
        w.u64(self.cookie);
        w.u64(self.packet_count);
        w.u64(self.byte_count);
        Action::encode_list(&self.actions, w);
        w.patch_len16(start, start);
    }
}

/// `ofp_aggregate_stats_reply` has the same layout in 1.0 as in 1.3 (24 bytes).
pub use crate::v13::multipart::AggregateStats;

/// The port, queue and table counters have one type for every version
/// ([`crate::model`]).
pub use crate::model::{PortStats, QueueStats, TableStats};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use crate::header::OFP10_VERSION;

    #[test]
    fn port_stats_field_order() {
        let p = PortStats {
            port_no: 3,
            rx_packets: 1,
            tx_packets: 2,
            rx_bytes: 3,
            tx_bytes: 4,
            rx_dropped: 5,
            tx_dropped: 6,
            rx_errors: 7,
            tx_errors: 8,
            rx_frame_err: 9,
            rx_over_err: 10,
            rx_crc_err: 11,
            collisions: 12,
            duration_sec: u32::MAX,
            duration_nsec: u32::MAX,
        };
        let mut w = Writer::new();
        p.encode(OFP10_VERSION, &mut w);
        assert_eq!(w.len(), crate::model::port_stats_len(OFP10_VERSION));
        assert_eq!(&w.buf[..8], &[0, 3, 0, 0, 0, 0, 0, 0]);
        for i in 0..12u8 {
            let at = 8 + usize::from(i) * 8;
            assert_eq!(&w.buf[at..at + 8], &u64::from(i + 1).to_be_bytes());
        }
        assert_eq!(
            PortStats::decode(OFP10_VERSION, &mut Reader::new(&w.buf)).unwrap(),
            p
        );
    }

    #[test]
    fn queue_and_table_bytes() {
        let q = QueueStats {
            port_no: 1,
            queue_id: 2,
            tx_bytes: 3,
            tx_packets: 4,
            tx_errors: 5,
            duration_sec: u32::MAX,
            duration_nsec: u32::MAX,
        };
        let mut w = Writer::new();
        q.encode(OFP10_VERSION, &mut w);
        assert_eq!(w.len(), crate::model::queue_stats_len(OFP10_VERSION));
        assert_eq!(&w.buf[..8], &[0, 1, 0, 0, 0, 0, 0, 2]);
        let t = TableStats {
            table_id: 0,
            name: "classifier".into(),
            wildcards: Some(0x3f_ffff),
            max_entries: 1_000_000,
            active_count: 2,
            lookup_count: 3,
            matched_count: 4,
        };
        let mut w = Writer::new();
        t.encode(OFP10_VERSION, &mut w);
        assert_eq!(w.len(), crate::model::table_stats_len(OFP10_VERSION));
        assert_eq!(&w.buf[4..15], b"classifier\0");
        assert_eq!(&w.buf[36..40], &[0, 0x3f, 0xff, 0xff]);
        assert_eq!(
            TableStats::decode(OFP10_VERSION, &mut Reader::new(&w.buf)).unwrap(),
            t
        );
    }

    #[test]
    fn flow_stats_bad_action_inside_entry() {
        let f = FlowStats {
            table_id: 0,
            match_: Match::all(),
            duration_sec: 0,
            duration_nsec: 0,
            priority: 0,
            idle_timeout: 0,
            hard_timeout: 0,
            cookie: 0,
            packet_count: 0,
            byte_count: 0,
            actions: vec![Action::StripVlan],
        };
        let mut w = Writer::new();
        f.encode(&mut w);
        assert_eq!(w.len(), FlowStats::FIXED_LEN + 8);
        // Unknown action type inside the entry.
        w.buf[FlowStats::FIXED_LEN + 1] = 0x33;
        let e = FlowStats::decode(&mut Reader::new(&w.buf)).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BAD_ACTION_BAD_TYPE);
    }
}
