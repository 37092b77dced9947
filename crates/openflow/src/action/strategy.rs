//! proptest strategies for actions.
//!
//! [`arb_action`] yields every variant with values the wire form can carry, so that
//! encode→decode is the identity; [`arb_valid_action`] yields only actions that pass
//! [`Action::validate`]. Set-field OXMs are unmasked: any TLV of the OXM strategies
//! for the codec, the settable fields with values in range for the valid actions.

use super::port;
use super::*;
use crate::oxm::strategy::{arb_basic_oxm, arb_mac, arb_other_oxm, arb_v4, arb_v6};
use crate::oxm::OFPVID_PRESENT;
use proptest::prelude::*;

/// Unmasked OXMs that set-field may write, with values in range: every such basic field.
pub fn arb_settable_oxm() -> impl Strategy<Value = Oxm> {
    prop_oneof![
        arb_mac().prop_map(|m| Oxm::EthDst(m, None)),
        arb_mac().prop_map(|m| Oxm::EthSrc(m, None)),
        any::<u16>().prop_map(Oxm::EthType),
        (0u16..0x1000).prop_map(|v| Oxm::VlanVid(v | OFPVID_PRESENT, None)),
        (0u8..8).prop_map(Oxm::VlanPcp),
        (0u8..64).prop_map(Oxm::IpDscp),
        (0u8..4).prop_map(Oxm::IpEcn),
        any::<u8>().prop_map(Oxm::IpProto),
        arb_v4().prop_map(|a| Oxm::Ipv4Src(a, None)),
        arb_v4().prop_map(|a| Oxm::Ipv4Dst(a, None)),
        any::<u16>().prop_map(Oxm::TcpSrc),
        any::<u16>().prop_map(Oxm::TcpDst),
        any::<u16>().prop_map(Oxm::UdpSrc),
        any::<u16>().prop_map(Oxm::UdpDst),
        any::<u16>().prop_map(Oxm::SctpSrc),
        any::<u16>().prop_map(Oxm::SctpDst),
        any::<u8>().prop_map(Oxm::Icmpv4Type),
        any::<u8>().prop_map(Oxm::Icmpv4Code),
        any::<u16>().prop_map(Oxm::ArpOp),
        arb_v4().prop_map(|a| Oxm::ArpSpa(a, None)),
        arb_v4().prop_map(|a| Oxm::ArpTpa(a, None)),
        arb_mac().prop_map(|m| Oxm::ArpSha(m, None)),
        arb_mac().prop_map(|m| Oxm::ArpTha(m, None)),
        arb_v6().prop_map(|a| Oxm::Ipv6Src(a, None)),
        arb_v6().prop_map(|a| Oxm::Ipv6Dst(a, None)),
        (0u32..1 << 20).prop_map(|v| Oxm::Ipv6Flabel(v, None)),
        any::<u8>().prop_map(Oxm::Icmpv6Type),
        any::<u8>().prop_map(Oxm::Icmpv6Code),
        arb_v6().prop_map(Oxm::Ipv6NdTarget),
        arb_mac().prop_map(Oxm::Ipv6NdSll),
        arb_mac().prop_map(Oxm::Ipv6NdTll),
        (0u32..1 << 20).prop_map(Oxm::MplsLabel),
        (0u8..8).prop_map(Oxm::MplsTc),
        (0u8..2).prop_map(Oxm::MplsBos),
        (0u32..1 << 24).prop_map(|v| Oxm::PbbIsid(v, None)),
        any::<u64>().prop_map(|v| Oxm::TunnelId(v, None)),
    ]
}

/// Unmasked OXMs a set-field action can carry on the wire, valid or not: any basic
/// field (those set-field may not write included) and fields of other classes.
pub fn arb_set_field_oxm() -> impl Strategy<Value = Oxm> {
    prop_oneof![
        4 => arb_basic_oxm(),
        1 => arb_other_oxm(),
    ]
    .prop_filter("set-field OXMs carry no mask", |o| !o.has_mask())
}

/// Experimenter data: a multiple of 8 bytes, so the action needs no padding.
fn arb_experimenter_data() -> impl Strategy<Value = Vec<u8>> {
    (0usize..4).prop_flat_map(|n| proptest::collection::vec(any::<u8>(), n * 8))
}

/// Every action variant, with any value the wire form carries.
pub fn arb_action() -> impl Strategy<Value = Action> {
    prop_oneof![
        (any::<u32>(), any::<u16>()).prop_map(|(port, max_len)| Action::Output { port, max_len }),
        Just(Action::CopyTtlOut),
        Just(Action::CopyTtlIn),
        any::<u8>().prop_map(Action::SetMplsTtl),
        Just(Action::DecMplsTtl),
        any::<u16>().prop_map(Action::PushVlan),
        Just(Action::PopVlan),
        any::<u16>().prop_map(Action::PushMpls),
        any::<u16>().prop_map(Action::PopMpls),
        any::<u32>().prop_map(Action::SetQueue),
        any::<u32>().prop_map(Action::Group),
        any::<u8>().prop_map(Action::SetNwTtl),
        Just(Action::DecNwTtl),
        arb_set_field_oxm().prop_map(Action::SetField),
        any::<u16>().prop_map(Action::PushPbb),
        Just(Action::PopPbb),
        (any::<u32>(), arb_experimenter_data())
            .prop_map(|(experimenter, data)| Action::Experimenter { experimenter, data }),
    ]
}

/// Output ports that pass validation: ordinary numbers and the reserved ports a packet
/// can be sent to.
fn arb_valid_port() -> impl Strategy<Value = u32> {
    prop_oneof![1u32..=port::MAX, port::IN_PORT..=port::LOCAL,]
}

/// Every action variant, with values that pass [`Action::validate`].
pub fn arb_valid_action() -> impl Strategy<Value = Action> {
    prop_oneof![
        (arb_valid_port(), any::<u16>())
            .prop_map(|(port, max_len)| Action::Output { port, max_len }),
        Just(Action::CopyTtlOut),
        Just(Action::CopyTtlIn),
        any::<u8>().prop_map(Action::SetMplsTtl),
        Just(Action::DecMplsTtl),
        prop::sample::select(vec![0x8100u16, 0x88a8]).prop_map(Action::PushVlan),
        Just(Action::PopVlan),
        prop::sample::select(vec![0x8847u16, 0x8848]).prop_map(Action::PushMpls),
        any::<u16>().prop_map(Action::PopMpls),
        any::<u32>().prop_map(Action::SetQueue),
        (0..=OFPG_MAX).prop_map(Action::Group),
        any::<u8>().prop_map(Action::SetNwTtl),
        Just(Action::DecNwTtl),
        arb_settable_oxm().prop_map(Action::SetField),
        Just(Action::PushPbb(0x88e7)),
        Just(Action::PopPbb),
        (any::<u32>(), arb_experimenter_data())
            .prop_map(|(experimenter, data)| Action::Experimenter { experimenter, data }),
    ]
}

/// A write-actions list that passes [`Action::validate_action_set`]: valid actions, the
/// later of two sharing an action-set slot dropped.
pub fn arb_valid_action_set() -> impl Strategy<Value = Vec<Action>> {
    proptest::collection::vec(arb_valid_action(), 0..8).prop_map(|list| {
        let mut out: Vec<Action> = Vec::new();
        for a in list {
            let probe = [out.clone(), vec![a.clone()]].concat();
            if Action::validate_action_set(&probe).is_ok() {
                out = probe;
            }
        }
        out
    })
}
