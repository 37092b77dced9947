//! How the agent serves an OpenFlow 1.0 connection: which 1.3 request each 1.0 message
//! becomes, and which 1.0 messages the agent's 1.3 replies and asynchronous messages
//! become (the field-level translation is [`crate::v10`]).

use openflow::v10::stats::{StatsRequest, StatsRequestBody};
use openflow::v13::multipart::MultipartReply;
use openflow::v13::queue_config::QueueProperty;
use openflow::{v10, v13, ErrorKind, OfpError};

use crate::v10 as t;

/// A 1.0 request in the agent's terms.
pub(super) enum Request10 {
    /// A 1.3 request with the same meaning.
    Plain(v13::Message),
    /// A flow-mod; for a modify, the add to apply when it selects no entry (1.0 §4.6).
    FlowMod(t::FlowModV13),
    /// An aggregate request: answered from the flow stats of this selection, counting
    /// only the entries the 1.0 flow dump lists ([`t::add_to_v10_aggregate`]).
    Aggregate(v13::multipart::FlowStatsRequest),
    /// A table stats request: active counts are those of the 1.0 flow dump
    /// ([`t::count_v10_flows`]).
    TableStats,
    /// Nothing to do (handled by the connection, or needing no answer).
    None,
}

pub(super) fn request_to_v13(m: v10::Message) -> Result<Request10, OfpError> {
    use v10::Message as M;
    use v13::Message as N;
    Ok(match m {
        M::FlowMod(fm) => Request10::FlowMod(t::flow_mod_to_v13(&fm)?),
        M::PacketOut(po) => Request10::Plain(N::PacketOut(t::packet_out_to_v13(&po)?)),
        M::PortMod(pm) => Request10::Plain(N::PortMod(t::port_mod_to_v13(&pm))),
        M::StatsRequest(StatsRequest { body: StatsRequestBody::Aggregate(r), .. }) => {
            Request10::Aggregate(t::flow_request_to_v13(&r))
        }
        M::StatsRequest(StatsRequest { body: StatsRequestBody::Table, .. }) => {
            Request10::TableStats
        }
        M::StatsRequest(r) => Request10::Plain(N::MultipartRequest(t::stats_request_to_v13(&r)?)),
        M::BarrierRequest => Request10::Plain(N::BarrierRequest),
        M::QueueGetConfigRequest(p) => {
            Request10::Plain(N::QueueGetConfigRequest(t::port_no_to_v13(p)))
        }
        M::SetConfig(c) => Request10::Plain(N::SetConfig(v13::SwitchConfig {
            flags: c.flags,
            miss_send_len: c.miss_send_len,
        })),
        M::Error(_) | M::EchoReply(_) => Request10::None,
        M::Vendor(v) => {
            return Err(OfpError::new(
                ErrorKind::BAD_REQUEST_BAD_EXPERIMENTER,
                format!("vendor {:#x} is not supported", v.vendor),
            ))
        }
        other => {
            return Err(OfpError::new(
                ErrorKind::BAD_REQUEST_BAD_TYPE,
                format!("{other:?}")
                    .split(['(', ' ', '{'])
                    .next()
                    .map_or("message".to_string(), |n| {
                        format!("{n} is not a request a switch serves")
                    }),
            ))
        }
    })
}

/// The 1.0 messages that carry a 1.3 reply.
pub(super) fn reply_to_v10(m: v13::Message) -> Result<Vec<v10::Message>, OfpError> {
    use v13::Message as N;
    Ok(match m {
        N::MultipartReply(r) => stats_reply(&r)?,
        N::BarrierReply => vec![v10::Message::BarrierReply],
        // One type in both versions: a port 1.0 can number, and of each queue the
        // properties 1.0 defines (min-rate).
        N::QueueGetConfigReply(mut q) => {
            t::port_no_from_v13(q.port)?;
            for queue in &mut q.queues {
                queue.properties.retain(|p| matches!(p, QueueProperty::MinRate(_)));
            }
            vec![v10::Message::QueueGetConfigReply(q)]
        }
        other => {
            return Err(OfpError::new(
                ErrorKind::BAD_REQUEST_BAD_TYPE,
                format!("no OpenFlow 1.0 form for the reply {other:?}"),
            ))
        }
    })
}

fn stats_reply(r: &MultipartReply) -> Result<Vec<v10::Message>, OfpError> {
    let rep = t::stats_reply_to_v10(r)?;
    Ok(t::split_stats_reply(rep, t::MAX_STATS_REPLY_BODY)
        .into_iter()
        .map(v10::Message::StatsReply)
        .collect())
}

/// The 1.0 form of an asynchronous message, if 1.0 can say it.
pub(super) fn async_to_v10(m: &v13::Message) -> Option<v10::Message> {
    use v13::Message as N;
    match m {
        N::PacketIn(pi) => t::packet_in_to_v10(pi).ok().map(v10::Message::PacketIn),
        N::FlowRemoved(fr) => t::flow_removed_to_v10(fr).ok().map(v10::Message::FlowRemoved),
        N::PortStatus(ps) => t::port_status_to_v10(ps).ok().map(v10::Message::PortStatus),
        _ => None,
    }
}
