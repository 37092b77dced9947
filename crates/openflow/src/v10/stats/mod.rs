//! OpenFlow 1.0 statistics (`OFPT_STATS_REQUEST` / `OFPT_STATS_REPLY`).
//!
//! Both messages are `type:u16, flags:u16`, then a body whose form depends on `type`
//! and on the direction. Fixed-size bodies must have exactly their size and lists must
//! be whole multiples of their element size (`OFPBRC_BAD_LEN` otherwise); an unknown
//! type is `OFPBRC_BAD_STAT` (expressed as `BAD_REQUEST_BAD_MULTIPART`). Vendor stats
//! keep the vendor id and the bytes after it.
//!
//! | type | request | reply |
//! |---|---|---|
//! | DESC (0) | empty | 4 × 256-byte strings and a 32-byte serial (1056) |
//! | FLOW (1) | match, table_id, pad, out_port (44) | [`FlowStats`] list (88 + actions each) |
//! | AGGREGATE (2) | as FLOW | packets, bytes, flows, pad (24) |
//! | TABLE (3) | empty | [`TableStats`] list (64 each) |
//! | PORT (4) | port_no, pad (8) | [`PortStats`] list (104 each) |
//! | QUEUE (5) | port_no, pad, queue_id (8) | [`QueueStats`] list (32 each) |
//! | PORT_DESC (13, Open vSwitch's) | empty | `ofp_phy_port` list (48 each) |
//! | VENDOR (0xffff) | vendor, data | vendor, data |
//!
//! The reply entries live in [`entries`]. A reply too long for one message is cut with
//! [`StatsReply::split`].

pub mod entries;
mod split;
#[cfg(test)]
pub(crate) mod strategy;

use super::match10::Match;
use crate::error::{ErrorKind, OfpError};
use crate::header::OFP10_VERSION;

use crate::wire::{Reader, Writer};

use crate::model::Port;
// The name `stats_replies!` gives the description body.
use entries::DescStats as Desc;
pub use entries::{
    AggregateStats, DescStats, FlowStats, PortStats, QueueStats, TableStats, VendorStats,
};
pub(crate) use split::chunk;
pub use split::MAX_REPLY_BODY;

spec_table! {
    /// `ofp_stats_types` numbers.
    pub mod stats_type: u16 as numbers {
        DESC, FLOW, AGGREGATE, TABLE, PORT, QUEUE,
        /// Open vSwitch's port descriptions for OpenFlow 1.0 (what `ovs-ofctl -O
        /// OpenFlow10 dump-ports-desc` asks for): a request with no body, a reply of
        /// `ofp_phy_port`s.
        PORT_DESC = 13,
        VENDOR = 0xffff,
    }
}

/// `OFPSF_REPLY_MORE`: more replies follow.
pub const OFPSF_REPLY_MORE: u16 = 1;
/// `OFPQ_ALL`: every queue (queue stats request).
pub const OFPQ_ALL: u32 = 0xffff_ffff;
/// `OFP_MAX_TABLE_NAME_LEN`.
pub const TABLE_NAME_LEN: usize = 32;

fn bad_type(ty: u16) -> OfpError {
    OfpError::new(
        ErrorKind::BAD_REQUEST_BAD_MULTIPART,
        format!("unknown OpenFlow 1.0 stats type {ty}"),
    )
}

/// An `OFPT_STATS_REQUEST` body: the statistics header of every version
/// ([`crate::model::Stats`]) over 1.0's request bodies.
pub type StatsRequest = crate::model::Stats<StatsRequestBody>;

/// What a stats request asks for.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum StatsRequestBody {
    Desc,
    Flow(FlowStatsRequest),
    Aggregate(FlowStatsRequest),
    Table,
    Port(PortStatsRequest),
    Queue(QueueStatsRequest),
    PortDesc,
    Vendor { vendor: u32, data: Vec<u8> },
}

record! {
    /// `ofp_flow_stats_request` (also the aggregate request): which flows to report.
    #[derive(Clone, Debug, PartialEq, Eq, Hash)]
    pub struct FlowStatsRequest {
        pub match_: Match,
        /// A table, or 0xff for all tables.
        pub table_id: u8 [pad 1],
        /// Only flows with an output to this port; `OFPP_NONE` for any.
        pub out_port: u16,
    }
}

record! {
    /// `ofp_port_stats_request`: one port, or `OFPP_NONE` for all.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub struct PortStatsRequest {
        pub port_no: u16 [pad 6],
    }
}

record! {
    /// `ofp_queue_stats_request`: a port (`OFPP_ALL` for all) and a queue ([`OFPQ_ALL`]).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub struct QueueStatsRequest {
        pub port_no: u16 [pad 2],
        pub queue_id: u32,
    }
}

impl StatsRequestBody {
    /// The stats type number.
    pub fn type_code(&self) -> u16 {
        use stats_type as t;
        match self {
            Self::Desc => t::DESC,
            Self::Flow(_) => t::FLOW,
            Self::Aggregate(_) => t::AGGREGATE,
            Self::Table => t::TABLE,
            Self::Port(_) => t::PORT,
            Self::Queue(_) => t::QUEUE,
            Self::PortDesc => t::PORT_DESC,
            Self::Vendor { .. } => t::VENDOR,
        }
    }
}

impl crate::model::StatsBody for StatsRequestBody {
    const VERSION: u8 = OFP10_VERSION;

    fn stats_type(&self) -> u16 {
        self.type_code()
    }

    /// Every 1.0 body has one layout: `_version` is always 1.0.
    fn decode_body(_version: u8, ty: u16, r: &mut Reader) -> Result<Self, OfpError> {
        use stats_type as t;
        Ok(match ty {
            t::DESC => StatsRequestBody::Desc,
            t::FLOW => StatsRequestBody::Flow(FlowStatsRequest::decode(r)?),
            t::AGGREGATE => StatsRequestBody::Aggregate(FlowStatsRequest::decode(r)?),
            t::TABLE => StatsRequestBody::Table,
            t::PORT => StatsRequestBody::Port(PortStatsRequest::decode(r)?),
            t::QUEUE => StatsRequestBody::Queue(QueueStatsRequest::decode(r)?),
            t::PORT_DESC => StatsRequestBody::PortDesc,
            t::VENDOR => {
                StatsRequestBody::Vendor { vendor: r.u32()?, data: r.take_rest().to_vec() }
            }
            _ => return Err(bad_type(ty)),
        })
    }

    fn encode_body(&self, _version: u8, w: &mut Writer) {
        match self {
            StatsRequestBody::Desc | StatsRequestBody::Table | StatsRequestBody::PortDesc => {}
            StatsRequestBody::Flow(f) | StatsRequestBody::Aggregate(f) => f.encode(w),
            StatsRequestBody::Port(p) => p.encode(w),
            StatsRequestBody::Queue(q) => q.encode(w),
            StatsRequestBody::Vendor { vendor, data } => {
                w.u32(*vendor);
                w.bytes(data);
            }
        }
    }
}

/// An `OFPT_STATS_REPLY` body: the statistics header of every version
/// ([`crate::model::Stats`]) over 1.0's reply bodies; its flags are
/// [`OFPSF_REPLY_MORE`] when more replies follow.
pub type StatsReply = crate::model::Stats<StatsReplyBody>;

stats_replies! {
    /// The statistics a reply carries.
    #[derive(Clone, Debug, PartialEq, Eq, Hash)]
    pub enum StatsReplyBody: stats_type, OFP10_VERSION, bad_type, fn type_code {
        port Port = PORT;
        PortDesc(Vec<Port>) = PORT_DESC versioned Port,
        Vendor(VendorStats) = VENDOR plain VendorStats,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::encoded;

    roundtrip_tests! {
        request_roundtrip: strategy::arb_stats_request() => StatsRequest in OFP10_VERSION;
        reply_roundtrip: strategy::arb_stats_reply() => StatsReply in OFP10_VERSION;
    }

    #[test]
    fn body_sizes() {
        let sizes = [
            (StatsReplyBody::Desc(DescStats::default()), 4 + 1056),
            (StatsReplyBody::Aggregate(AggregateStats::default()), 4 + 24),
            (StatsReplyBody::Table(vec![TableStats::default()]), 4 + 64),
            (StatsReplyBody::Port(vec![PortStats::default()]), 4 + 104),
            (StatsReplyBody::Queue(vec![QueueStats::default()]), 4 + 32),
        ];
        for (body, len) in sizes {
            assert_eq!(
                encoded(|w| StatsReply { flags: 0, body }.encode(OFP10_VERSION, w)).len(),
                len
            );
        }
        let fs = entries::strip_vlan_flow();
        let b = encoded(|w| {
            StatsReply { flags: OFPSF_REPLY_MORE, body: StatsReplyBody::Flow(vec![fs]) }
                .encode(OFP10_VERSION, w)
        });
        assert_eq!(b.len(), 4 + 96);
        assert_eq!(&b[..6], &[0, 1, 0, 1, 0, 96]);
        let req = |body| encoded(|w| StatsRequest { flags: 0, body }.encode(OFP10_VERSION, w));
        assert_eq!(req(StatsRequestBody::Desc).len(), 4);
        assert_eq!(
            req(StatsRequestBody::Port(PortStatsRequest { port_no: 1 })),
            [0, 4, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0]
        );
        assert_eq!(
            req(StatsRequestBody::Queue(QueueStatsRequest { port_no: 0xfffc, queue_id: OFPQ_ALL })),
            [0, 5, 0, 0, 0xff, 0xfc, 0, 0, 0xff, 0xff, 0xff, 0xff]
        );
        let flow_req = req(StatsRequestBody::Flow(FlowStatsRequest {
            match_: Match::all(),
            table_id: 0xff,
            out_port: 0xffff,
        }));
        assert_eq!(flow_req.len(), 4 + 44);
        assert_eq!(&flow_req[44..], &[0xff, 0, 0xff, 0xff]);
    }

    #[test]
    fn unknown_type_is_bad_stat() {
        // 13 is Open vSwitch's port description; the numbers around it are no type.
        for ty in [6u16, 12, 14, 0xfffe] {
            let mut b = ty.to_be_bytes().to_vec();
            b.extend_from_slice(&[0, 0]);
            let e = StatsRequest::decode(OFP10_VERSION, &mut Reader::new(&b)).unwrap_err();
            assert_eq!(e.kind, ErrorKind::BAD_REQUEST_BAD_MULTIPART);
            assert_eq!(e.kind.to_v10(), (1, 2));
            let e = StatsReply::decode(OFP10_VERSION, &mut Reader::new(&b)).unwrap_err();
            assert_eq!(e.kind, ErrorKind::BAD_REQUEST_BAD_MULTIPART);
        }
    }

    #[test]
    fn length_errors() {
        // Trailing bytes after an empty or fixed request body.
        for b in [
            &[0u8, 0, 0, 0, 0][..],
            &[0, 3, 0, 0, 1, 2, 3, 4][..],
            &[0, 4, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0][..],
        ] {
            let e = StatsRequest::decode(OFP10_VERSION, &mut Reader::new(b)).unwrap_err();
            assert_eq!(e.kind, ErrorKind::BAD_REQUEST_BAD_LEN, "{b:?}");
        }
        // Short request bodies.
        for b in [&[0u8, 4, 0, 0, 0, 1][..], &[0, 1, 0, 0][..], &[0xff, 0xff, 0, 0, 0][..]] {
            let e = StatsRequest::decode(OFP10_VERSION, &mut Reader::new(b)).unwrap_err();
            assert_eq!(e.kind, ErrorKind::BAD_REQUEST_BAD_LEN, "{b:?}");
        }
        // A port stats list that is not a multiple of 104.
        let mut b = encoded(|w| {
            StatsReply { flags: 0, body: StatsReplyBody::Port(vec![PortStats::default(); 2]) }
                .encode(OFP10_VERSION, w)
        });
        b.pop();
        let e = StatsReply::decode(OFP10_VERSION, &mut Reader::new(&b)).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BAD_REQUEST_BAD_LEN);
        // Aggregate reply with trailing bytes.
        let mut b = encoded(|w| {
            StatsReply { flags: 0, body: StatsReplyBody::Aggregate(AggregateStats::default()) }
                .encode(OFP10_VERSION, w)
        });
        b.push(0);
        let e = StatsReply::decode(OFP10_VERSION, &mut Reader::new(&b)).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BAD_REQUEST_BAD_LEN);
        // Flow stats whose length is below the fixed part, or beyond the body.
        for len in [0u16, 8, 87, 200] {
            let mut b = vec![0, 1, 0, 0];
            b.extend_from_slice(&len.to_be_bytes());
            b.resize(4 + 88, 0);
            let e = StatsReply::decode(OFP10_VERSION, &mut Reader::new(&b)).unwrap_err();
            assert_eq!(e.kind, ErrorKind::BAD_REQUEST_BAD_LEN, "len {len}");
        }
    }
}
