//! proptest strategies for every 1.0 message.

use super::*;
use crate::wire::arb_bytes;
use proptest::prelude::*;

pub fn arb_message() -> impl Strategy<Value = Message> {
    prop_oneof![
        arb_bytes(0..48).prop_map(Message::Hello),
        ErrorMsg::arb().prop_map(Message::Error),
        arb_bytes(0..48).prop_map(Message::EchoRequest),
        arb_bytes(0..48).prop_map(Message::EchoReply),
        Vendor::arb().prop_map(Message::Vendor),
        Just(Message::FeaturesRequest),
        crate::model::features::strategy::arb_features_reply(OFP10_VERSION)
            .prop_map(Message::FeaturesReply),
        Just(Message::GetConfigRequest),
        SwitchConfig::arb().prop_map(Message::GetConfigReply),
        SwitchConfig::arb().prop_map(Message::SetConfig),
        crate::model::packet_in::strategy::arb_packet_in(OFP10_VERSION).prop_map(Message::PacketIn),
        crate::model::flow_removed::strategy::arb_flow_removed(match10::strategy::arb_match())
            .prop_map(Message::FlowRemoved),
        crate::model::port::strategy::arb_port_status(OFP10_VERSION).prop_map(Message::PortStatus),
        crate::model::packet_out::strategy::arb_packet_out(
            OFP10_VERSION,
            action10::strategy::arb_actions()
        )
        .prop_map(Message::PacketOut),
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
