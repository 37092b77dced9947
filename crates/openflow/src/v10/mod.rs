//! OpenFlow 1.0 messages.
//!
//! [`Message`] has one variant per 1.0 message type. [`Message::decode`] reads a body
//! (everything after the 8-byte header) and is total: a body that is too short, too long
//! for a fixed-size message, or malformed inside is an [`OfpError`] whose kind is the
//! OpenFlow 1.3 [`ErrorKind`] that [`ErrorKind::to_v10`] renumbers into the right 1.0
//! code (`OFPBRC_BAD_LEN`, `OFPBRC_BAD_TYPE`, `OFPBRC_BAD_STAT`, `OFPBAC_*`, ...).
//! [`Message::encode_body`] writes exactly what `decode` reads, padding as zeros, so a
//! decoded message re-encodes byte for byte (strings are read up to their first NUL).
//! [`Message::validate`] adds the stateless semantic checks a switch makes on requests.
//!
//! Submodules hold the structures: [`match10`] (`ofp_match` and its conversion to a 1.3
//! match), [`action10`], [`port`], [`flow`] (flow mod / flow removed), [`packet`]
//! (packet in / out), [`config`] (switch config), [`stats`] and
//! [`queue`].

pub mod action10;
pub mod config;
pub mod flow;
pub mod match10;
pub mod packet;
pub mod port;
pub mod queue;
pub mod stats;
pub mod translate;

#[cfg(test)]
mod tests;

use crate::error::{ErrorKind, OfpError};
use crate::header::{t10, OFP10_VERSION};
use crate::wire::{Reader, Writer};

pub use crate::model::FeaturesReply;
pub use action10::Action;
pub use config::SwitchConfig;
pub use flow::{FlowMod, FlowModCommand, FlowRemoved, FlowRemovedReason};
pub use match10::Match;
pub use packet::{PacketIn, PacketInReason, PacketOut};
pub use port::{Port, PortMod, PortReason, PortStatus};
pub use queue::{PacketQueue, QueueGetConfigReply, QueueProperty};
pub use stats::{StatsReply, StatsReplyBody, StatsRequest, StatsRequestBody};

/// An `OFPT_ERROR` body: the 1.0 type and code as sent, and the data (normally the
/// start of the offending request).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ErrorMsg {
    pub err_type: u16,
    pub code: u16,
    pub data: Vec<u8>,
}

/// An `OFPT_VENDOR` body: the vendor id and every byte after it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Vendor {
    pub vendor: u32,
    pub data: Vec<u8>,
}

/// An OpenFlow 1.0 message body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    /// Any bytes after the header are kept.
    Hello(Vec<u8>),
    Error(ErrorMsg),
    EchoRequest(Vec<u8>),
    EchoReply(Vec<u8>),
    Vendor(Vendor),
    FeaturesRequest,
    FeaturesReply(FeaturesReply),
    GetConfigRequest,
    GetConfigReply(SwitchConfig),
    SetConfig(SwitchConfig),
    PacketIn(PacketIn),
    FlowRemoved(FlowRemoved),
    PortStatus(PortStatus),
    PacketOut(PacketOut),
    FlowMod(FlowMod),
    PortMod(PortMod),
    StatsRequest(StatsRequest),
    StatsReply(StatsReply),
    BarrierRequest,
    BarrierReply,
    /// The port whose queues are asked for (`port:u16, pad[2]`).
    QueueGetConfigRequest(u16),
    QueueGetConfigReply(QueueGetConfigReply),
}

/// Fails with `OFPBRC_BAD_LEN` when bytes remain after a fixed-size body.
fn expect_end(r: &Reader, msg_type: u8) -> Result<(), OfpError> {
    if r.is_empty() {
        Ok(())
    } else {
        Err(OfpError::new(
            ErrorKind::BAD_REQUEST_BAD_LEN,
            format!(
                "{} has {} trailing bytes",
                name_of(msg_type).unwrap_or("message"),
                r.remaining()
            ),
        ))
    }
}

/// The spec name of a 1.0 message type number (`OFPT_FLOW_MOD`), if it has one.
pub fn name_of(msg_type: u8) -> Option<&'static str> {
    Some(match msg_type {
        t10::HELLO => "OFPT_HELLO",
        t10::ERROR => "OFPT_ERROR",
        t10::ECHO_REQUEST => "OFPT_ECHO_REQUEST",
        t10::ECHO_REPLY => "OFPT_ECHO_REPLY",
        t10::VENDOR => "OFPT_VENDOR",
        t10::FEATURES_REQUEST => "OFPT_FEATURES_REQUEST",
        t10::FEATURES_REPLY => "OFPT_FEATURES_REPLY",
        t10::GET_CONFIG_REQUEST => "OFPT_GET_CONFIG_REQUEST",
        t10::GET_CONFIG_REPLY => "OFPT_GET_CONFIG_REPLY",
        t10::SET_CONFIG => "OFPT_SET_CONFIG",
        t10::PACKET_IN => "OFPT_PACKET_IN",
        t10::FLOW_REMOVED => "OFPT_FLOW_REMOVED",
        t10::PORT_STATUS => "OFPT_PORT_STATUS",
        t10::PACKET_OUT => "OFPT_PACKET_OUT",
        t10::FLOW_MOD => "OFPT_FLOW_MOD",
        t10::PORT_MOD => "OFPT_PORT_MOD",
        t10::STATS_REQUEST => "OFPT_STATS_REQUEST",
        t10::STATS_REPLY => "OFPT_STATS_REPLY",
        t10::BARRIER_REQUEST => "OFPT_BARRIER_REQUEST",
        t10::BARRIER_REPLY => "OFPT_BARRIER_REPLY",
        t10::QUEUE_GET_CONFIG_REQUEST => "OFPT_QUEUE_GET_CONFIG_REQUEST",
        t10::QUEUE_GET_CONFIG_REPLY => "OFPT_QUEUE_GET_CONFIG_REPLY",
        _ => return None,
    })
}

impl Message {
    /// Decodes the body of a message of type `msg_type`; `r` holds everything after the
    /// 8-byte header and must be consumed exactly.
    pub fn decode(msg_type: u8, r: &mut Reader) -> Result<Message, OfpError> {
        let m = match msg_type {
            t10::HELLO => Message::Hello(r.take_rest().to_vec()),
            t10::ERROR => Message::Error(ErrorMsg {
                err_type: r.u16()?,
                code: r.u16()?,
                data: r.take_rest().to_vec(),
            }),
            t10::ECHO_REQUEST => Message::EchoRequest(r.take_rest().to_vec()),
            t10::ECHO_REPLY => Message::EchoReply(r.take_rest().to_vec()),
            t10::VENDOR => Message::Vendor(Vendor {
                vendor: r.u32()?,
                data: r.take_rest().to_vec(),
            }),
            t10::FEATURES_REQUEST => Message::FeaturesRequest,
            t10::FEATURES_REPLY => Message::FeaturesReply(FeaturesReply::decode(OFP10_VERSION, r)?),
            t10::GET_CONFIG_REQUEST => Message::GetConfigRequest,
            t10::GET_CONFIG_REPLY => Message::GetConfigReply(SwitchConfig::decode(r)?),
            t10::SET_CONFIG => Message::SetConfig(SwitchConfig::decode(r)?),
            t10::PACKET_IN => Message::PacketIn(PacketIn::decode(OFP10_VERSION, r)?),
            t10::FLOW_REMOVED => Message::FlowRemoved(FlowRemoved::decode(r)?),
            t10::PORT_STATUS => Message::PortStatus(PortStatus::decode(OFP10_VERSION, r)?),
            t10::PACKET_OUT => Message::PacketOut(PacketOut::decode(r)?),
            t10::FLOW_MOD => Message::FlowMod(FlowMod::decode(r)?),
            t10::PORT_MOD => Message::PortMod(PortMod::decode(r)?),
            t10::STATS_REQUEST => Message::StatsRequest(StatsRequest::decode(r)?),
            t10::STATS_REPLY => Message::StatsReply(StatsReply::decode(r)?),
            t10::BARRIER_REQUEST => Message::BarrierRequest,
            t10::BARRIER_REPLY => Message::BarrierReply,
            t10::QUEUE_GET_CONFIG_REQUEST => {
                let port = r.u16()?;
                r.skip(2)?;
                Message::QueueGetConfigRequest(port)
            }
            t10::QUEUE_GET_CONFIG_REPLY => {
                Message::QueueGetConfigReply(QueueGetConfigReply::decode(OFP10_VERSION, r)?)
            }
            _ => {
                return Err(OfpError::new(
                    ErrorKind::BAD_REQUEST_BAD_TYPE,
                    format!("unknown OpenFlow 1.0 message type {msg_type}"),
                ))
            }
        };
        expect_end(r, msg_type)?;
        Ok(m)
    }

    /// Writes the body (everything after the header).
    pub fn encode_body(&self, w: &mut Writer) {
        match self {
            Message::Hello(b) | Message::EchoRequest(b) | Message::EchoReply(b) => w.bytes(b),
            Message::Error(e) => {
                w.u16(e.err_type);
                w.u16(e.code);
                w.bytes(&e.data);
            }
            Message::Vendor(v) => {
                w.u32(v.vendor);
                w.bytes(&v.data);
            }
            Message::FeaturesRequest
            | Message::GetConfigRequest
            | Message::BarrierRequest
            | Message::BarrierReply => {}
            Message::FeaturesReply(f) => f.encode(OFP10_VERSION, w),
            Message::GetConfigReply(c) | Message::SetConfig(c) => c.encode(w),
            Message::PacketIn(p) => p.encode(OFP10_VERSION, w),
            Message::FlowRemoved(f) => f.encode(w),
            Message::PortStatus(p) => p.encode(OFP10_VERSION, w),
            Message::PacketOut(p) => p.encode(w),
            Message::FlowMod(f) => f.encode(w),
            Message::PortMod(p) => p.encode(w),
            Message::StatsRequest(s) => s.encode(w),
            Message::StatsReply(s) => s.encode(w),
            Message::QueueGetConfigRequest(port) => {
                w.u16(*port);
                w.zeros(2);
            }
            Message::QueueGetConfigReply(q) => q.encode(OFP10_VERSION, w),
        }
    }

    /// The message type number (`crate::header::t10`).
    pub fn msg_type(&self) -> u8 {
        match self {
            Message::Hello(_) => t10::HELLO,
            Message::Error(_) => t10::ERROR,
            Message::EchoRequest(_) => t10::ECHO_REQUEST,
            Message::EchoReply(_) => t10::ECHO_REPLY,
            Message::Vendor(_) => t10::VENDOR,
            Message::FeaturesRequest => t10::FEATURES_REQUEST,
            Message::FeaturesReply(_) => t10::FEATURES_REPLY,
            Message::GetConfigRequest => t10::GET_CONFIG_REQUEST,
            Message::GetConfigReply(_) => t10::GET_CONFIG_REPLY,
            Message::SetConfig(_) => t10::SET_CONFIG,
            Message::PacketIn(_) => t10::PACKET_IN,
            Message::FlowRemoved(_) => t10::FLOW_REMOVED,
            Message::PortStatus(_) => t10::PORT_STATUS,
            Message::PacketOut(_) => t10::PACKET_OUT,
            Message::FlowMod(_) => t10::FLOW_MOD,
            Message::PortMod(_) => t10::PORT_MOD,
            Message::StatsRequest(_) => t10::STATS_REQUEST,
            Message::StatsReply(_) => t10::STATS_REPLY,
            Message::BarrierRequest => t10::BARRIER_REQUEST,
            Message::BarrierReply => t10::BARRIER_REPLY,
            Message::QueueGetConfigRequest(_) => t10::QUEUE_GET_CONFIG_REQUEST,
            Message::QueueGetConfigReply(_) => t10::QUEUE_GET_CONFIG_REPLY,
        }
    }

    /// The spec name of the message type (`OFPT_FLOW_MOD`).
    pub fn name(&self) -> &'static str {
        name_of(self.msg_type()).unwrap_or("OFPT_UNKNOWN")
    }

    /// The stateless semantic checks a switch makes on a request: flow mods (known
    /// command, emergency timeouts, actions) and packet outs (actions). See
    /// [`FlowMod::validate`] and [`Action::validate`].
    pub fn validate(&self) -> Result<(), OfpError> {
        match self {
            Message::FlowMod(f) => f.validate(),
            Message::PacketOut(p) => p.validate(),
            _ => Ok(()),
        }
    }
}

/// proptest strategies for every 1.0 message.
#[cfg(test)]
pub(crate) mod strategy {
    use super::*;
    use proptest::collection::vec;
    use proptest::prelude::*;

    fn bytes() -> impl Strategy<Value = Vec<u8>> {
        vec(any::<u8>(), 0..48)
    }

    pub fn arb_message() -> impl Strategy<Value = Message> {
        prop_oneof![
            bytes().prop_map(Message::Hello),
            (any::<u16>(), any::<u16>(), bytes()).prop_map(|(err_type, code, data)| {
                Message::Error(ErrorMsg {
                    err_type,
                    code,
                    data,
                })
            }),
            bytes().prop_map(Message::EchoRequest),
            bytes().prop_map(Message::EchoReply),
            (any::<u32>(), bytes())
                .prop_map(|(vendor, data)| Message::Vendor(Vendor { vendor, data })),
            Just(Message::FeaturesRequest),
            crate::model::features::strategy::arb_features_reply(OFP10_VERSION)
                .prop_map(Message::FeaturesReply),
            Just(Message::GetConfigRequest),
            SwitchConfig::arb().prop_map(Message::GetConfigReply),
            SwitchConfig::arb().prop_map(Message::SetConfig),
            crate::model::packet_in::strategy::arb_packet_in(OFP10_VERSION)
                .prop_map(Message::PacketIn),
            flow::strategy::arb_flow_removed().prop_map(Message::FlowRemoved),
            port::strategy::arb_port_status().prop_map(Message::PortStatus),
            packet::strategy::arb_packet_out().prop_map(Message::PacketOut),
            flow::strategy::arb_flow_mod().prop_map(Message::FlowMod),
            PortMod::arb().prop_map(Message::PortMod),
            stats::strategy::arb_stats_request().prop_map(Message::StatsRequest),
            stats::strategy::arb_stats_reply().prop_map(Message::StatsReply),
            Just(Message::BarrierRequest),
            Just(Message::BarrierReply),
            any::<u16>().prop_map(Message::QueueGetConfigRequest),
            queue::strategy::arb_queue_config_reply().prop_map(Message::QueueGetConfigReply),
        ]
    }
}
