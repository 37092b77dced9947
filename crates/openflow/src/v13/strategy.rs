//! proptest strategy for every message this module encodes itself (multipart bodies
//! are left to the multipart module's strategies), as a frame of a given version
//! carries it.

use super::*;
use crate::wire::arb_bytes;
use proptest::prelude::*;
use proptest::strategy::{BoxedStrategy, Union};

/// Every 1.3 message.
pub fn arb_message() -> impl Strategy<Value = Message> {
    arb_message_in(OFP13_VERSION)
}

/// Every message a frame of `version` (1.3 or 1.4) carries, with `version`'s layouts:
/// 1.4's types only from 1.4 on, 1.3's queue configuration only in 1.3.
pub fn arb_message_in(version: u8) -> impl Strategy<Value = Message> {
    let mut arms: Vec<BoxedStrategy<Message>> = vec![
        hello::strategy::arb_hello().prop_map(Message::Hello).boxed(),
        error_msg::strategy::arb_error_msg().prop_map(Message::Error).boxed(),
        arb_bytes(0..64).prop_map(Message::EchoRequest).boxed(),
        arb_bytes(0..64).prop_map(Message::EchoReply).boxed(),
        Experimenter::arb().prop_map(Message::Experimenter).boxed(),
        Just(Message::FeaturesRequest).boxed(),
        crate::model::features::strategy::arb_features_reply(version)
            .prop_map(Message::FeaturesReply)
            .boxed(),
        Just(Message::GetConfigRequest).boxed(),
        SwitchConfig::arb().prop_map(Message::GetConfigReply).boxed(),
        SwitchConfig::arb().prop_map(Message::SetConfig).boxed(),
        crate::model::packet_in::strategy::arb_packet_in(version)
            .prop_map(Message::PacketIn)
            .boxed(),
        crate::model::flow_removed::strategy::arb_flow_removed_in(
            version,
            crate::match13::strategy::arb_match(),
        )
        .prop_map(Message::FlowRemoved)
        .boxed(),
        crate::model::port::strategy::arb_port_status(version)
            .prop_map(Message::PortStatus)
            .boxed(),
        crate::model::packet_out::strategy::arb_packet_out(
            version,
            proptest::collection::vec(crate::action::strategy::arb_action(), 0..4),
        )
        .prop_map(Message::PacketOut)
        .boxed(),
        crate::model::flow_mod::strategy::arb_flow_mod(
            version,
            crate::match13::strategy::arb_match(),
            proptest::collection::vec(crate::instruction::strategy::arb_instruction(), 0..4),
        )
        .prop_map(Message::FlowMod)
        .boxed(),
        group_mod::strategy::arb_group_mod().prop_map(Message::GroupMod).boxed(),
        port_status::strategy::arb_port_mod(version).prop_map(Message::PortMod).boxed(),
        switch_config::strategy::arb_table_mod(version).prop_map(Message::TableMod).boxed(),
        Just(Message::BarrierRequest).boxed(),
        Just(Message::BarrierReply).boxed(),
        Role::arb().prop_map(Message::RoleRequest).boxed(),
        Role::arb().prop_map(Message::RoleReply).boxed(),
        Just(Message::GetAsyncRequest).boxed(),
        role::strategy::arb_async_config(version).prop_map(Message::GetAsyncReply).boxed(),
        role::strategy::arb_async_config(version).prop_map(Message::SetAsync).boxed(),
        meter_mod::strategy::arb_meter_mod().prop_map(Message::MeterMod).boxed(),
    ];
    if version < OFP14_VERSION {
        arms.push(any::<u32>().prop_map(Message::QueueGetConfigRequest).boxed());
        arms.push(
            queue_config::strategy::arb_queue_get_config_reply()
                .prop_map(Message::QueueGetConfigReply)
                .boxed(),
        );
    } else {
        arms.extend([
            role::strategy::arb_role_status().prop_map(Message::RoleStatus).boxed(),
            switch_config::strategy::arb_table_status().prop_map(Message::TableStatus).boxed(),
            request_forward::strategy::arb_request_forward()
                .prop_map(Message::RequestForward)
                .boxed(),
            bundle::strategy::arb_bundle_control().prop_map(Message::BundleControl).boxed(),
            bundle::strategy::arb_bundle_add().prop_map(Message::BundleAdd).boxed(),
        ]);
    }
    Union::new(arms)
}
