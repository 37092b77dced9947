//! The entries of OpenFlow 1.0 stats replies: description strings, flow entries,
//! aggregate counters, tables, ports, queues and a vendor's body. Each encodes to its fixed size (flow
//! entries: 88 bytes plus actions, their length field derived from the actions).

use crate::v10::action10::Action;
use crate::v10::match10::Match;

/// `ofp_desc_stats` has the same layout in 1.0 as `ofp_desc` in 1.3.
pub use crate::v13::multipart::Desc as DescStats;

/// `ofp_flow_stats` over 1.0's match and actions: the flow-stats entry of every version
/// ([`crate::model::FlowStats`]); `instructions` holds the actions and `flags` is 0.
pub type FlowStats = crate::model::FlowStats<Match, Vec<Action>>;

/// `ofp_aggregate_stats_reply` has the same layout in 1.0 as in 1.3 (24 bytes).
pub use crate::v13::multipart::AggregateStats;

/// The port, queue and table counters have one type for every version
/// ([`crate::model`]).
pub use crate::model::{PortStats, QueueStats, TableStats};

record! {
    /// A vendor's statistics body: its vendor id and the bytes after it.
    #[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
    pub struct VendorStats {
        pub vendor: u32,
        pub data: Vec<u8> [rest],
    }
}

/// For tests: an all-zero flow entry over the match of everything whose one action
/// strips the VLAN tag.
#[cfg(test)]
pub(crate) fn strip_vlan_flow() -> FlowStats {
    FlowStats {
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
        flags: 0,
        importance: 0,
        instructions: vec![Action::StripVlan],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use crate::header::OFP10_VERSION;
    use crate::model::counters::strategy::numbered_port_stats;
    use crate::wire::{Reader, Writer};

    #[test]
    fn port_stats_field_order() {
        let p = numbered_port_stats(3, (u32::MAX, u32::MAX), Vec::new());
        let mut w = Writer::new();
        p.encode(OFP10_VERSION, &mut w);
        assert_eq!(w.len(), crate::model::port_stats_len(OFP10_VERSION));
        assert_eq!(&w.buf[..8], &[0, 3, 0, 0, 0, 0, 0, 0]);
        for i in 0..12u8 {
            let at = 8 + usize::from(i) * 8;
            assert_eq!(&w.buf[at..at + 8], &u64::from(i + 1).to_be_bytes());
        }
        assert_eq!(PortStats::decode(OFP10_VERSION, &mut Reader::new(&w.buf)).unwrap(), p);
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
            properties: Vec::new(),
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
        assert_eq!(TableStats::decode(OFP10_VERSION, &mut Reader::new(&w.buf)).unwrap(), t);
    }

    #[test]
    fn flow_stats_bad_action_inside_entry() {
        let f = strip_vlan_flow();
        let mut w = Writer::new();
        f.encode(OFP10_VERSION, &mut w);
        assert_eq!(w.len(), crate::model::FLOW_STATS_FIXED_LEN_10 + 8);
        // Unknown action type inside the entry.
        w.buf[crate::model::FLOW_STATS_FIXED_LEN_10 + 1] = 0x33;
        let e = FlowStats::decode(OFP10_VERSION, &mut Reader::new(&w.buf)).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BAD_ACTION_BAD_TYPE);
    }
}
