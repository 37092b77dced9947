//! OpenFlow 1.3 (1.3.5) messages.
//!
//! [`Message`] is one message body (everything after the 8-byte `ofp_header`), one
//! variant per `OFPT_*` type. [`Message::decode`] dispatches on the header's type and
//! checks lengths: a body cut short, a length field inside it that runs past its
//! container, or bytes left over after a fixed-size body are `OFPBRC_BAD_LEN` (matches,
//! actions, instructions, buckets and meter bands report their own kinds, see their
//! modules); an unknown type is `OFPBRC_BAD_TYPE`. [`Message::encode_body`] writes
//! exactly what decode reads (padding as zeros), so decode→encode is byte-identical for
//! input whose padding is zero. [`Message::validate`] adds the stateless semantic
//! checks a switch makes on a request before acting on it.
//!
//! One file per message family: `hello`, `error_msg` (error, experimenter),
//! `switch_config` (get/set config, table mod), `packet_in` (packet-in, flow-removed),
//! `packet_out`, `port_status` (port status, port mod), `flow_mod`, `group_mod`,
//! `meter_mod`, `queue_config`, `role` (role, async config), `multipart`, `table_desc`
//! (OpenFlow 1.4's table description and table-mod properties). The features reply has
//! one type for every version, [`crate::model::FeaturesReply`].

pub mod error_msg;
pub mod flow_mod;
pub mod group_mod;
pub mod hello;
pub mod meter_mod;
pub mod multipart;
pub mod packet_in;
pub mod packet_out;
pub mod port;
pub mod port_status;
pub mod queue_config;
pub mod role;
pub mod switch_config;
pub mod table_desc;
pub mod table_features;

use crate::error::{ErrorKind, OfpError};
use crate::header::{t13, OFP13_VERSION};

pub use crate::model::FeaturesReply;
pub use error_msg::{ErrorMsg, Experimenter};
pub use flow_mod::FlowMod;
pub use group_mod::GroupMod;
pub use hello::{Hello, HelloElement};
pub use meter_mod::MeterMod;
pub use packet_in::{FlowRemoved, FlowRemovedReason, PacketIn, PacketInReason};
pub use packet_out::PacketOut;
pub use port_status::{PortMod, PortReason, PortStatus};
pub use queue_config::{PacketQueue, QueueGetConfigReply, QueueProperty};
pub use role::{AsyncConfig, ControllerRole, Role};
pub use switch_config::{SwitchConfig, TableMod};
pub use table_desc::{TableDesc, TableModProp};

/// An `OFPBRC_BAD_LEN` error with `detail`.
pub(crate) fn bad_len(detail: impl Into<String>) -> OfpError {
    OfpError::new(ErrorKind::BAD_REQUEST_BAD_LEN, detail)
}

messages! {
    /// An OpenFlow 1.3 message body.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub enum Message: "1.3", t13, OFP13_VERSION, names type_name {
        Hello(Hello) = HELLO plain,
        Experimenter(Experimenter) = EXPERIMENTER plain,
        GroupMod(GroupMod) = GROUP_MOD plain,
        TableMod(TableMod) = TABLE_MOD plain,
        MultipartRequest(multipart::MultipartRequest) = MULTIPART_REQUEST versioned,
        MultipartReply(multipart::MultipartReply) = MULTIPART_REPLY versioned,
        /// The port whose queues are asked for (`OFPP_ANY` for all).
        QueueGetConfigRequest(u32) = QUEUE_GET_CONFIG_REQUEST (pad 4),
        RoleRequest(Role) = ROLE_REQUEST plain,
        RoleReply(Role) = ROLE_REPLY plain,
        GetAsyncRequest = GET_ASYNC_REQUEST none,
        GetAsyncReply(AsyncConfig) = GET_ASYNC_REPLY plain,
        SetAsync(AsyncConfig) = SET_ASYNC plain,
        MeterMod(MeterMod) = METER_MOD plain,
    }
}

impl Message {
    /// The stateless semantic checks a switch makes on a request before acting on it
    /// (see each message's `validate`). Replies and asynchronous messages always pass.
    pub fn validate(&self) -> Result<(), OfpError> {
        match self {
            Message::FlowMod(m) => m.validate(),
            Message::GroupMod(m) => m.validate(),
            Message::MeterMod(m) => m.validate(),
            Message::PacketOut(m) => m.validate(),
            Message::SetConfig(m) => m.validate(),
            Message::RoleRequest(m) => m.validate(),
            Message::PortMod(m) => m.validate(),
            Message::TableMod(m) => m.validate(),
            Message::MultipartRequest(m) => m.validate(),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
pub(crate) mod strategy;
#[cfg(test)]
mod tests;
