//! OpenFlow 1.3 (1.3.5) and 1.4 (1.4.1) messages.
//!
//! [`Message`] is one message body (everything after the 8-byte `ofp_header`), one
//! variant per `OFPT_*` type of either version: 1.4 keeps every 1.3 type but the queue
//! configuration request and reply (22, 23) and adds role-status, table-status,
//! request-forward and the two bundle messages (30 to 34); a type number outside the
//! frame's version is `OFPBRC_BAD_TYPE`. Where the two versions lay a body out
//! differently (ports, port-mod, table-mod, the asynchronous configuration, flow-mod's
//! importance, new reason numbers), the codec takes the frame's version:
//! [`Message::decode_version`] and [`Message::encode_version`]; [`Message::decode`] and
//! [`Message::encode_body`] are the same for 1.3.
//!
//! [`Message::decode_version`] dispatches on the header's type and checks lengths: a body cut short, a length field inside it that runs past its
//! container, or bytes left over after a fixed-size body are `OFPBRC_BAD_LEN` (matches,
//! actions, instructions, buckets and meter bands report their own kinds, see their
//! modules); an unknown type is `OFPBRC_BAD_TYPE`. [`Message::encode_body`] writes
//! exactly what decode reads (padding as zeros), so decode→encode is byte-identical for
//! input whose padding is zero. [`Message::validate`] adds the stateless semantic
//! checks a switch makes on a request before acting on it.
//!
//! One file per message family: `hello`, `error_msg` (error, experimenter),
//! `switch_config` (get/set config, table mod, table status), `packet_in` (packet-in,
//! flow-removed), `packet_out`, `port_status` (port status, port mod), `flow_mod`,
//! `group_mod`, `meter_mod`, `queue_config`, `role` (role, role status, async config),
//! `request_forward`, `bundle`, `multipart`; `property` holds 1.4's property framing. The features
//! reply has one type for every version, [`crate::model::FeaturesReply`].

pub mod bundle;
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
pub mod property;
pub mod queue_config;
pub mod request_forward;
pub mod role;
pub mod switch_config;
pub mod table_features;

use crate::error::{ErrorKind, OfpError};
use crate::header::{t13, OFP13_VERSION, OFP14_VERSION};

pub use crate::model::FeaturesReply;
pub use bundle::{BundleAdd, BundleControl, BundleCtrlType};
pub use error_msg::{ErrorMsg, Experimenter};
pub use flow_mod::FlowMod;
pub use group_mod::GroupMod;
pub use hello::{Hello, HelloElement};
pub use meter_mod::MeterMod;
pub use packet_in::{FlowRemoved, FlowRemovedReason, PacketIn, PacketInReason};
pub use packet_out::PacketOut;
pub use port_status::{PortMod, PortModProp, PortReason, PortStatus};
pub use property::Property;
pub use queue_config::{PacketQueue, QueueGetConfigReply, QueueProperty};
pub use request_forward::{RequestForward, RequestForwardReason};
pub use role::{AsyncConfig, AsyncProp, ControllerRole, ControllerRoleReason, Role, RoleStatus};
pub use switch_config::{
    SwitchConfig, TableDesc, TableMod, TableModProp, TableReason, TableStatus,
};

/// An `OFPBRC_BAD_LEN` error with `detail`.
pub(crate) fn bad_len(detail: impl Into<String>) -> OfpError {
    OfpError::new(ErrorKind::BAD_REQUEST_BAD_LEN, detail)
}

messages! {
    /// An OpenFlow 1.3 or 1.4 message body.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub enum Message: "1.3/1.4", t13, OFP13_VERSION, names type_name {
        Hello(Hello) = HELLO plain,
        Experimenter(Experimenter) = EXPERIMENTER plain,
        GroupMod(GroupMod) = GROUP_MOD plain,
        PortMod(PortMod) = PORT_MOD versioned,
        TableMod(TableMod) = TABLE_MOD versioned,
        MultipartRequest(multipart::MultipartRequest) = MULTIPART_REQUEST versioned,
        MultipartReply(multipart::MultipartReply) = MULTIPART_REPLY versioned,
        /// The port whose queues are asked for (`OFPP_ANY` for all); 1.3 only.
        QueueGetConfigRequest(u32) = QUEUE_GET_CONFIG_REQUEST (pad 4) in 0..=OFP13_VERSION,
        RoleRequest(Role) = ROLE_REQUEST plain,
        RoleReply(Role) = ROLE_REPLY plain,
        GetAsyncRequest = GET_ASYNC_REQUEST none,
        GetAsyncReply(AsyncConfig) = GET_ASYNC_REPLY versioned,
        SetAsync(AsyncConfig) = SET_ASYNC versioned,
        MeterMod(MeterMod) = METER_MOD plain,
        RoleStatus(RoleStatus) = ROLE_STATUS plain in OFP14_VERSION..=u8::MAX,
        TableStatus(TableStatus) = TABLE_STATUS plain in OFP14_VERSION..=u8::MAX,
        RequestForward(RequestForward) = REQUESTFORWARD plain in OFP14_VERSION..=u8::MAX,
        BundleControl(BundleControl) = BUNDLE_CONTROL plain in OFP14_VERSION..=u8::MAX,
        BundleAdd(BundleAdd) = BUNDLE_ADD_MESSAGE plain in OFP14_VERSION..=u8::MAX,
    }
}

impl Message {
    /// [`Self::validate_version`] for a 1.3 frame.
    pub fn validate(&self) -> Result<(), OfpError> {
        self.validate_version(OFP13_VERSION)
    }

    /// The stateless semantic checks a switch makes on a request of a frame of `version`
    /// before acting on it (see each message's `validate`). Replies and asynchronous
    /// messages always pass.
    pub fn validate_version(&self, version: u8) -> Result<(), OfpError> {
        match self {
            Message::FlowMod(m) => m.validate(),
            Message::GroupMod(m) => m.validate(),
            Message::MeterMod(m) => m.validate(),
            Message::PacketOut(m) => m.validate(),
            Message::SetConfig(m) => m.validate(),
            Message::RoleRequest(m) => m.validate(),
            Message::PortMod(m) => m.validate(),
            Message::TableMod(m) => m.validate(version),
            Message::SetAsync(m) => m.validate(),
            Message::BundleControl(m) => m.validate(),
            Message::BundleAdd(m) => m.validate(),
            Message::MultipartRequest(m) => m.validate(),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
pub(crate) mod strategy;
#[cfg(test)]
mod tests;
