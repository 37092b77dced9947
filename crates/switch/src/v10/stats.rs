//! OpenFlow 1.0 statistics requests as 1.3 multipart requests, and the 1.3 replies as
//! 1.0 statistics replies.
//!
//! Requests: desc, flow, aggregate, table, port and queue map to the 1.3 types of the same
//! name ([`stats_request_to_v13`]), as does Open vSwitch's 1.0 port description (type 13,
//! what `ovs-ofctl -O OpenFlow10 dump-ports-desc` sends). Flow and aggregate keep the table id (0xff is `OFPTT_ALL` in both) and take the
//! match of [`match_to_v13`], the out port renumbered (`OFPP_NONE` → `OFPP_ANY`), out
//! group `OFPG_ANY`, no cookie filter. Port stats: `OFPP_NONE` ("all") → `OFPP_ANY`.
//! Queue stats: 1.0 says "all ports" with `OFPP_ALL`, 1.3 with `OFPP_ANY`; `OFPQ_ALL` is
//! the same. The 1.0 request flags (none defined) are not carried. Vendor stats:
//! `OFPBRC_BAD_VENDOR` (this switch has no vendor extensions).
//!
//! Replies: desc and aggregate are the same structures; flow entries take the match of
//! [`match_from_v13`] and the actions of [`instructions_from_v13`] (with the match's
//! facts); an entry 1.0 cannot express (an IPv6 match, a goto or meter, actions whose 1.0
//! meaning differs) is left out of the reply — a 1.0 controller cannot read it and
//! could not modify or delete it other than by a wider match. [`flow_stats_to_v10`] is
//! that one selection, and whatever counts flows for a 1.0 controller counts the same
//! ones: the agent answers a 1.0 aggregate request with [`add_to_v10_aggregate`] over the
//! flow stats of the request (not with the 1.3 aggregate, which counts every entry),
//! and 1.0 table stats with [`count_v10_flows`]'s active counts. Port and queue entries of
//! ports without a 1.0 number are left out; their durations are dropped. Table entries
//! get what 1.0 adds ([`table_stats_to_v10`]); port descriptions list the ports with a
//! 1.0 number. The `OFPSF_REPLY_MORE` flag is the same bit. A 1.3-only reply type
//! (groups, meters, table features) is not the answer to any 1.0 request:
//! `OFPBRC_BAD_STAT`.
//!
//! A 1.0 flow entry can be longer than its 1.3 form (the fixed 40-byte match), so a
//! reply that fitted one 1.3 message may not fit one 1.0 message: [`split_stats_reply`]
//! cuts it.

use openflow::action::{port as p13, OFPG_ANY};
use openflow::v10::match10::wildcards as fw;
use openflow::v10::port::ofpp as p10;
use openflow::v10::stats::{
    FlowStats as FlowStats10, FlowStatsRequest as FlowReq10, StatsReply, StatsReplyBody,
    StatsRequest, StatsRequestBody, TableStats as TableStats10, OFPSF_REPLY_MORE,
};
use openflow::v13::multipart::{
    AggregateStats, FlowStats as FlowStats13, FlowStatsRequest as FlowReq13, MultipartReply,
    MultipartReplyBody as Reply13, MultipartRequest, MultipartRequestBody as Req13,
    TableStats as TableStats13,
};
use openflow::{ErrorKind, OfpError};

use super::actions::{instructions_from_v13, PacketFacts};
use super::flow_match::{match_from_v13, match_to_v13};
use super::ports::{port_no_from_v13, port_no_to_v13, port_to_v10};

/// The largest stats-reply body (after the OpenFlow header and the 4-byte `type, flags`)
/// one 1.0 message can carry ([`openflow::v10::stats::MAX_REPLY_BODY`]).
pub const MAX_STATS_REPLY_BODY: usize = openflow::v10::stats::MAX_REPLY_BODY;

/// The number of flow entries a 1.0 table stats entry reports as its capacity: the
/// datapath's rule limit (shared by all tables).
const MAX_ENTRIES: u32 = datapath::counters::MAX_RULES as u32;

/// A 1.0 flow-stats (or aggregate) request's selection as a 1.3 flow-stats request.
pub fn flow_request_to_v13(r: &FlowReq10) -> FlowReq13 {
    FlowReq13 {
        table_id: r.table_id,
        out_port: port_no_to_v13(r.out_port),
        out_group: OFPG_ANY,
        cookie: 0,
        cookie_mask: 0,
        match_: match_to_v13(&r.match_),
    }
}

/// Translates a 1.0 stats request (module comment).
pub fn stats_request_to_v13(req: &StatsRequest) -> Result<MultipartRequest, OfpError> {
    let body = match &req.body {
        StatsRequestBody::Desc => Req13::Desc,
        StatsRequestBody::Flow(r) => Req13::Flow(flow_request_to_v13(r)),
        StatsRequestBody::Aggregate(r) => Req13::Aggregate(flow_request_to_v13(r)),
        StatsRequestBody::Table => Req13::Table,
        StatsRequestBody::Port(p) => Req13::PortStats { port_no: port_no_to_v13(p.port_no) },
        StatsRequestBody::PortDesc => Req13::PortDesc,
        StatsRequestBody::Queue(q) => Req13::Queue {
            port_no: if q.port_no == p10::ALL { p13::ANY } else { port_no_to_v13(q.port_no) },
            queue_id: q.queue_id,
        },
        StatsRequestBody::Vendor { vendor, .. } => {
            return Err(OfpError::new(
                ErrorKind::BAD_REQUEST_BAD_EXPERIMENTER,
                format!("vendor statistics of vendor {vendor:#x} are not supported"),
            ))
        }
    };
    Ok(MultipartRequest { flags: 0, body })
}

/// A 1.3 table stats entry as a 1.0 one: named `table<N>`, every 1.0 wildcard supported
/// (`OFPFW_ALL`), `max_entries` the datapath's rule limit, counters unchanged.
pub fn table_stats_to_v10(t: &TableStats13) -> TableStats10 {
    TableStats10 {
        table_id: t.table_id,
        name: format!("table{}", t.table_id),
        wildcards: Some(fw::ALL),
        max_entries: MAX_ENTRIES,
        active_count: t.active_count,
        lookup_count: t.lookup_count,
        matched_count: t.matched_count,
    }
}

/// A flow entry in 1.0 form, if 1.0 can express it (its match and its instructions):
/// the selection of the entries a 1.0 controller sees (module comment).
pub fn flow_stats_to_v10(f: &FlowStats13) -> Option<FlowStats10> {
    let match_ = match_from_v13(&f.match_).ok()?;
    let actions = instructions_from_v13(&f.instructions, PacketFacts::of_match(&match_)).ok()?;
    // 1.0 entries have no flags.
    Some(FlowStats10 { flags: 0, ..f.with(match_, actions) })
}

/// Adds to `a` the entries of `flows` that a 1.0 controller sees ([`flow_stats_to_v10`]),
/// one part of a long list at a time: the answer to a 1.0 aggregate request counts
/// what the 1.0 flow dump of the same request lists.
pub fn add_to_v10_aggregate(a: &mut AggregateStats, flows: &[FlowStats13]) {
    for f in flows.iter().filter(|f| flow_stats_to_v10(f).is_some()) {
        a.packet_count += f.packet_count;
        a.byte_count += f.byte_count;
        a.flow_count += 1;
    }
}

/// Adds to each table's `active_count` the number of entries of `flows` in it that a
/// 1.0 controller sees ([`flow_stats_to_v10`]), as the 1.0 flow dump of that table lists
/// them (one part of a long list at a time; start from zero counts). `tables` are
/// every table's statistics, in table order.
pub fn count_v10_flows(tables: &mut [TableStats13], flows: &[FlowStats13]) {
    for f in flows.iter().filter(|f| flow_stats_to_v10(f).is_some()) {
        let at = tables.get_mut(usize::from(f.table_id)).filter(|t| t.table_id == f.table_id);
        match at {
            Some(t) => t.active_count += 1,
            None => {
                if let Some(t) = tables.iter_mut().find(|t| t.table_id == f.table_id) {
                    t.active_count += 1;
                }
            }
        }
    }
}

/// Translates a 1.3 multipart reply (module comment). The result may need
/// [`split_stats_reply`] to fit in messages.
pub fn stats_reply_to_v10(rep: &MultipartReply) -> Result<StatsReply, OfpError> {
    let body = match &rep.body {
        Reply13::Desc(d) => StatsReplyBody::Desc(d.clone()),
        Reply13::Flow(v) => StatsReplyBody::Flow(v.iter().filter_map(flow_stats_to_v10).collect()),
        Reply13::Aggregate(a) => StatsReplyBody::Aggregate(*a),
        Reply13::Table(v) => StatsReplyBody::Table(v.iter().map(table_stats_to_v10).collect()),
        // One type in both versions: the entries whose port has a 1.0 number, as they are.
        Reply13::PortStats(v) => StatsReplyBody::Port(
            v.iter().filter(|p| port_no_from_v13(p.port_no).is_ok()).cloned().collect(),
        ),
        Reply13::Queue(v) => StatsReplyBody::Queue(
            v.iter().filter(|q| port_no_from_v13(q.port_no).is_ok()).cloned().collect(),
        ),
        Reply13::PortDesc(v) => {
            StatsReplyBody::PortDesc(v.iter().filter_map(|p| port_to_v10(p).ok()).collect())
        }
        other => {
            return Err(OfpError::new(
                ErrorKind::BAD_REQUEST_BAD_MULTIPART,
                format!("{} has no OpenFlow 1.0 statistics form", other.name()),
            ))
        }
    };
    Ok(StatsReply { flags: rep.flags & OFPSF_REPLY_MORE, body })
}

/// Cuts a stats reply into replies whose bodies each encode to at most `max_body` bytes
/// ([`MAX_STATS_REPLY_BODY`] for real messages), cutting lists between entries (an entry
/// is never cut: one larger than `max_body` gets a reply of its own). Every part but the
/// last has `OFPSF_REPLY_MORE`; the last keeps the original flags. Desc, aggregate and
/// vendor replies, and empty lists, come back whole. This is [`StatsReply::split`].
pub fn split_stats_reply(reply: StatsReply, max_body: usize) -> Vec<StatsReply> {
    reply.split(max_body)
}
