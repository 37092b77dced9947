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
//! `meter_mod`, `queue_config`, `role` (role, async config), `multipart`. The features
//! reply has one type for every version, [`crate::model::FeaturesReply`].

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
pub mod table_features;

use crate::error::{ErrorKind, OfpError};
use crate::header::{t13, OFP13_VERSION};
use crate::wire::{Reader, Writer};

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

/// An `OFPBRC_BAD_LEN` error with `detail`.
pub(crate) fn bad_len(detail: impl Into<String>) -> OfpError {
    OfpError::new(ErrorKind::BAD_REQUEST_BAD_LEN, detail)
}

/// An OpenFlow 1.3 message body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    Hello(Hello),
    Error(ErrorMsg),
    EchoRequest(Vec<u8>),
    EchoReply(Vec<u8>),
    Experimenter(Experimenter),
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
    GroupMod(GroupMod),
    PortMod(PortMod),
    TableMod(TableMod),
    MultipartRequest(multipart::MultipartRequest),
    MultipartReply(multipart::MultipartReply),
    BarrierRequest,
    BarrierReply,
    /// The port whose queues are asked for (`OFPP_ANY` for all).
    QueueGetConfigRequest(u32),
    QueueGetConfigReply(QueueGetConfigReply),
    RoleRequest(Role),
    RoleReply(Role),
    GetAsyncRequest,
    GetAsyncReply(AsyncConfig),
    SetAsync(AsyncConfig),
    MeterMod(MeterMod),
}

impl Message {
    /// Decodes the body of a message of type `msg_type`; `r` holds exactly the bytes
    /// after the header and must be consumed to its end.
    pub fn decode(msg_type: u8, r: &mut Reader) -> Result<Message, OfpError> {
        let m = match msg_type {
            t13::HELLO => Message::Hello(Hello::decode(r)?),
            t13::ERROR => Message::Error(ErrorMsg::decode(r)?),
            t13::ECHO_REQUEST => Message::EchoRequest(r.take_rest().to_vec()),
            t13::ECHO_REPLY => Message::EchoReply(r.take_rest().to_vec()),
            t13::EXPERIMENTER => Message::Experimenter(Experimenter::decode(r)?),
            t13::FEATURES_REQUEST => Message::FeaturesRequest,
            t13::FEATURES_REPLY => Message::FeaturesReply(FeaturesReply::decode(OFP13_VERSION, r)?),
            t13::GET_CONFIG_REQUEST => Message::GetConfigRequest,
            t13::GET_CONFIG_REPLY => Message::GetConfigReply(SwitchConfig::decode(r)?),
            t13::SET_CONFIG => Message::SetConfig(SwitchConfig::decode(r)?),
            t13::PACKET_IN => Message::PacketIn(PacketIn::decode(OFP13_VERSION, r)?),
            t13::FLOW_REMOVED => Message::FlowRemoved(FlowRemoved::decode(r)?),
            t13::PORT_STATUS => Message::PortStatus(PortStatus::decode(OFP13_VERSION, r)?),
            t13::PACKET_OUT => Message::PacketOut(PacketOut::decode(r)?),
            t13::FLOW_MOD => Message::FlowMod(FlowMod::decode(r)?),
            t13::GROUP_MOD => Message::GroupMod(GroupMod::decode(r)?),
            t13::PORT_MOD => Message::PortMod(PortMod::decode(r)?),
            t13::TABLE_MOD => Message::TableMod(TableMod::decode(r)?),
            t13::MULTIPART_REQUEST => {
                Message::MultipartRequest(multipart::MultipartRequest::decode(r)?)
            }
            t13::MULTIPART_REPLY => Message::MultipartReply(multipart::MultipartReply::decode(r)?),
            t13::BARRIER_REQUEST => Message::BarrierRequest,
            t13::BARRIER_REPLY => Message::BarrierReply,
            t13::QUEUE_GET_CONFIG_REQUEST => {
                Message::QueueGetConfigRequest(queue_config::decode_request(r)?)
            }
            t13::QUEUE_GET_CONFIG_REPLY => {
                Message::QueueGetConfigReply(QueueGetConfigReply::decode(OFP13_VERSION, r)?)
            }
            t13::ROLE_REQUEST => Message::RoleRequest(Role::decode(r)?),
            t13::ROLE_REPLY => Message::RoleReply(Role::decode(r)?),
            t13::GET_ASYNC_REQUEST => Message::GetAsyncRequest,
            t13::GET_ASYNC_REPLY => Message::GetAsyncReply(AsyncConfig::decode(r)?),
            t13::SET_ASYNC => Message::SetAsync(AsyncConfig::decode(r)?),
            t13::METER_MOD => Message::MeterMod(MeterMod::decode(r)?),
            n => {
                return Err(OfpError::new(
                    ErrorKind::BAD_REQUEST_BAD_TYPE,
                    format!("message type {n} is not an OpenFlow 1.3 message"),
                ))
            }
        };
        if !r.is_empty() {
            return Err(bad_len(format!(
                "{} trailing bytes after the {} body",
                r.remaining(),
                m.name()
            )));
        }
        Ok(m)
    }

    /// Writes the body (everything after the header).
    pub fn encode_body(&self, w: &mut Writer) {
        match self {
            Message::Hello(m) => m.encode(w),
            Message::Error(m) => m.encode(w),
            Message::EchoRequest(data) | Message::EchoReply(data) => w.bytes(data),
            Message::Experimenter(m) => m.encode(w),
            Message::FeaturesRequest
            | Message::GetConfigRequest
            | Message::BarrierRequest
            | Message::BarrierReply
            | Message::GetAsyncRequest => {}
            Message::FeaturesReply(m) => m.encode(OFP13_VERSION, w),
            Message::GetConfigReply(m) | Message::SetConfig(m) => m.encode(w),
            Message::PacketIn(m) => m.encode(OFP13_VERSION, w),
            Message::FlowRemoved(m) => m.encode(w),
            Message::PortStatus(m) => m.encode(OFP13_VERSION, w),
            Message::PacketOut(m) => m.encode(w),
            Message::FlowMod(m) => m.encode(w),
            Message::GroupMod(m) => m.encode(w),
            Message::PortMod(m) => m.encode(w),
            Message::TableMod(m) => m.encode(w),
            Message::MultipartRequest(m) => m.encode(w),
            Message::MultipartReply(m) => m.encode(w),
            Message::QueueGetConfigRequest(port) => queue_config::encode_request(*port, w),
            Message::QueueGetConfigReply(m) => m.encode(OFP13_VERSION, w),
            Message::RoleRequest(m) | Message::RoleReply(m) => m.encode(w),
            Message::GetAsyncReply(m) | Message::SetAsync(m) => m.encode(w),
            Message::MeterMod(m) => m.encode(w),
        }
    }

    /// The `OFPT_*` type number of this message.
    pub fn msg_type(&self) -> u8 {
        match self {
            Message::Hello(_) => t13::HELLO,
            Message::Error(_) => t13::ERROR,
            Message::EchoRequest(_) => t13::ECHO_REQUEST,
            Message::EchoReply(_) => t13::ECHO_REPLY,
            Message::Experimenter(_) => t13::EXPERIMENTER,
            Message::FeaturesRequest => t13::FEATURES_REQUEST,
            Message::FeaturesReply(_) => t13::FEATURES_REPLY,
            Message::GetConfigRequest => t13::GET_CONFIG_REQUEST,
            Message::GetConfigReply(_) => t13::GET_CONFIG_REPLY,
            Message::SetConfig(_) => t13::SET_CONFIG,
            Message::PacketIn(_) => t13::PACKET_IN,
            Message::FlowRemoved(_) => t13::FLOW_REMOVED,
            Message::PortStatus(_) => t13::PORT_STATUS,
            Message::PacketOut(_) => t13::PACKET_OUT,
            Message::FlowMod(_) => t13::FLOW_MOD,
            Message::GroupMod(_) => t13::GROUP_MOD,
            Message::PortMod(_) => t13::PORT_MOD,
            Message::TableMod(_) => t13::TABLE_MOD,
            Message::MultipartRequest(_) => t13::MULTIPART_REQUEST,
            Message::MultipartReply(_) => t13::MULTIPART_REPLY,
            Message::BarrierRequest => t13::BARRIER_REQUEST,
            Message::BarrierReply => t13::BARRIER_REPLY,
            Message::QueueGetConfigRequest(_) => t13::QUEUE_GET_CONFIG_REQUEST,
            Message::QueueGetConfigReply(_) => t13::QUEUE_GET_CONFIG_REPLY,
            Message::RoleRequest(_) => t13::ROLE_REQUEST,
            Message::RoleReply(_) => t13::ROLE_REPLY,
            Message::GetAsyncRequest => t13::GET_ASYNC_REQUEST,
            Message::GetAsyncReply(_) => t13::GET_ASYNC_REPLY,
            Message::SetAsync(_) => t13::SET_ASYNC,
            Message::MeterMod(_) => t13::METER_MOD,
        }
    }

    /// The spec's name of the message type (`OFPT_FLOW_MOD`).
    pub fn name(&self) -> &'static str {
        type_name(self.msg_type()).unwrap_or("OFPT_UNKNOWN")
    }

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

/// The spec's name of OpenFlow 1.3 message type `msg_type`, if it is one.
pub fn type_name(msg_type: u8) -> Option<&'static str> {
    Some(match msg_type {
        t13::HELLO => "OFPT_HELLO",
        t13::ERROR => "OFPT_ERROR",
        t13::ECHO_REQUEST => "OFPT_ECHO_REQUEST",
        t13::ECHO_REPLY => "OFPT_ECHO_REPLY",
        t13::EXPERIMENTER => "OFPT_EXPERIMENTER",
        t13::FEATURES_REQUEST => "OFPT_FEATURES_REQUEST",
        t13::FEATURES_REPLY => "OFPT_FEATURES_REPLY",
        t13::GET_CONFIG_REQUEST => "OFPT_GET_CONFIG_REQUEST",
        t13::GET_CONFIG_REPLY => "OFPT_GET_CONFIG_REPLY",
        t13::SET_CONFIG => "OFPT_SET_CONFIG",
        t13::PACKET_IN => "OFPT_PACKET_IN",
        t13::FLOW_REMOVED => "OFPT_FLOW_REMOVED",
        t13::PORT_STATUS => "OFPT_PORT_STATUS",
        t13::PACKET_OUT => "OFPT_PACKET_OUT",
        t13::FLOW_MOD => "OFPT_FLOW_MOD",
        t13::GROUP_MOD => "OFPT_GROUP_MOD",
        t13::PORT_MOD => "OFPT_PORT_MOD",
        t13::TABLE_MOD => "OFPT_TABLE_MOD",
        t13::MULTIPART_REQUEST => "OFPT_MULTIPART_REQUEST",
        t13::MULTIPART_REPLY => "OFPT_MULTIPART_REPLY",
        t13::BARRIER_REQUEST => "OFPT_BARRIER_REQUEST",
        t13::BARRIER_REPLY => "OFPT_BARRIER_REPLY",
        t13::QUEUE_GET_CONFIG_REQUEST => "OFPT_QUEUE_GET_CONFIG_REQUEST",
        t13::QUEUE_GET_CONFIG_REPLY => "OFPT_QUEUE_GET_CONFIG_REPLY",
        t13::ROLE_REQUEST => "OFPT_ROLE_REQUEST",
        t13::ROLE_REPLY => "OFPT_ROLE_REPLY",
        t13::GET_ASYNC_REQUEST => "OFPT_GET_ASYNC_REQUEST",
        t13::GET_ASYNC_REPLY => "OFPT_GET_ASYNC_REPLY",
        t13::SET_ASYNC => "OFPT_SET_ASYNC",
        t13::METER_MOD => "OFPT_METER_MOD",
        _ => return None,
    })
}

/// proptest strategy for every message this module encodes itself (multipart bodies
/// are left to the multipart module's strategies).
#[cfg(test)]
pub(crate) mod strategy {
    use super::*;
    use proptest::prelude::*;
    use proptest::strategy::{BoxedStrategy, Union};

    fn data() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(any::<u8>(), 0..64)
    }

    pub fn arb_message() -> impl Strategy<Value = Message> {
        let arms: Vec<BoxedStrategy<Message>> = vec![
            hello::strategy::arb_hello()
                .prop_map(Message::Hello)
                .boxed(),
            error_msg::strategy::arb_error_msg()
                .prop_map(Message::Error)
                .boxed(),
            data().prop_map(Message::EchoRequest).boxed(),
            data().prop_map(Message::EchoReply).boxed(),
            error_msg::strategy::arb_experimenter()
                .prop_map(Message::Experimenter)
                .boxed(),
            Just(Message::FeaturesRequest).boxed(),
            crate::model::features::strategy::arb_features_reply(OFP13_VERSION)
                .prop_map(Message::FeaturesReply)
                .boxed(),
            Just(Message::GetConfigRequest).boxed(),
            SwitchConfig::arb()
                .prop_map(Message::GetConfigReply)
                .boxed(),
            SwitchConfig::arb().prop_map(Message::SetConfig).boxed(),
            crate::model::packet_in::strategy::arb_packet_in(OFP13_VERSION)
                .prop_map(Message::PacketIn)
                .boxed(),
            packet_in::strategy::arb_flow_removed()
                .prop_map(Message::FlowRemoved)
                .boxed(),
            port_status::strategy::arb_port_status()
                .prop_map(Message::PortStatus)
                .boxed(),
            packet_out::strategy::arb_packet_out()
                .prop_map(Message::PacketOut)
                .boxed(),
            flow_mod::strategy::arb_flow_mod()
                .prop_map(Message::FlowMod)
                .boxed(),
            group_mod::strategy::arb_group_mod()
                .prop_map(Message::GroupMod)
                .boxed(),
            PortMod::arb().prop_map(Message::PortMod).boxed(),
            TableMod::arb().prop_map(Message::TableMod).boxed(),
            Just(Message::BarrierRequest).boxed(),
            Just(Message::BarrierReply).boxed(),
            any::<u32>()
                .prop_map(Message::QueueGetConfigRequest)
                .boxed(),
            queue_config::strategy::arb_queue_get_config_reply()
                .prop_map(Message::QueueGetConfigReply)
                .boxed(),
            Role::arb().prop_map(Message::RoleRequest).boxed(),
            Role::arb().prop_map(Message::RoleReply).boxed(),
            Just(Message::GetAsyncRequest).boxed(),
            AsyncConfig::arb().prop_map(Message::GetAsyncReply).boxed(),
            AsyncConfig::arb().prop_map(Message::SetAsync).boxed(),
            meter_mod::strategy::arb_meter_mod()
                .prop_map(Message::MeterMod)
                .boxed(),
        ];
        Union::new(arms)
    }
}

#[cfg(test)]
mod tests;
