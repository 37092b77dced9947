//! OpenFlow 1.0 messages.
//!
//! [`Message`] has one variant per 1.0 message type. [`Message::decode`] reads a body
//! (everything after the 8-byte header) and is total: a body that is too short, too long
//! for a fixed-size message, or malformed inside is an [`OfpError`] whose kind is the
//! OpenFlow 1.3 [`ErrorKind`](crate::ErrorKind) that
//! [`to_v10`](crate::ErrorKind::to_v10) renumbers into the right 1.0 code
//! (`OFPBRC_BAD_LEN`, `OFPBRC_BAD_TYPE`, `OFPBRC_BAD_STAT`, `OFPBAC_*`, ...).
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
pub(crate) mod strategy;
#[cfg(test)]
mod tests;

use crate::error::OfpError;
use crate::header::{t10, OFP10_VERSION};

pub use crate::model::FeaturesReply;
pub use action10::Action;
pub use config::SwitchConfig;
pub use flow::{FlowMod, FlowModCommand, FlowRemoved, FlowRemovedReason};
pub use match10::Match;
pub use packet::{PacketIn, PacketInReason, PacketOut};
pub use port::{Port, PortMod, PortReason, PortStatus};
pub use queue::{PacketQueue, QueueGetConfigReply, QueueProperty};
pub use stats::{StatsReply, StatsReplyBody, StatsRequest, StatsRequestBody};

record! {
    /// An `OFPT_ERROR` body: the 1.0 type and code as sent, and the data (normally the
    /// start of the offending request).
    #[derive(Clone, Debug, PartialEq, Eq, Hash)]
    pub struct ErrorMsg {
        pub err_type: u16,
        pub code: u16,
        pub data: Vec<u8> [rest],
    }
}

record! {
    /// An `OFPT_VENDOR` body: the vendor id and every byte after it.
    #[derive(Clone, Debug, PartialEq, Eq, Hash)]
    pub struct Vendor {
        pub vendor: u32,
        pub data: Vec<u8> [rest],
    }
}

messages! {
    /// An OpenFlow 1.0 message body.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub enum Message: "1.0", t10, OFP10_VERSION, names name_of {
        /// Any bytes after the header are kept.
        Hello(Vec<u8>) = HELLO rest,
        Vendor(Vendor) = VENDOR plain,
        PortMod(PortMod) = PORT_MOD plain,
        StatsRequest(StatsRequest) = STATS_REQUEST versioned,
        StatsReply(StatsReply) = STATS_REPLY versioned,
        /// The port whose queues are asked for (`port:u16, pad[2]`).
        QueueGetConfigRequest(u16) = QUEUE_GET_CONFIG_REQUEST (pad 2),
    }
}

impl Message {
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
