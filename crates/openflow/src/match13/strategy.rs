//! proptest strategies for matches: [`arb_match`] for codec round trips (any TLVs,
//! possibly semantically invalid) and [`arb_valid_match`] for matches that pass
//! [`Match::validate`], built from a protocol stack (ethertype, IP protocol, ICMPv6
//! type) so that every field's prerequisites hold, in shuffled order.

use super::*;
use crate::oxm::strategy::{arb_field, arb_oxm};
use proptest::prelude::*;

/// 0 to 5 arbitrary TLVs (duplicates, other classes and missing prerequisites included).
pub fn arb_match() -> impl Strategy<Value = Match> {
    proptest::collection::vec(arb_oxm(), 0..6).prop_map(Match::new)
}

/// The protocol stack a valid match is built on.
#[derive(Clone, Debug)]
struct Stack {
    eth_type: Option<u16>,
    ip_proto: Option<u8>,
    icmpv6_type: Option<u8>,
}

impl Stack {
    /// Makes the protocol choices fit the layers below: ICMP follows the IP version,
    /// and there is no IP protocol without IP.
    fn normalized(mut self) -> Stack {
        let v4 = self.eth_type == Some(0x0800);
        let v6 = self.eth_type == Some(0x86dd);
        self.ip_proto = match self.ip_proto {
            Some(1 | 58) if v4 => Some(1),
            Some(1 | 58) if v6 => Some(58),
            p if v4 || v6 => p,
            _ => None,
        };
        if self.ip_proto != Some(58) {
            self.icmpv6_type = None;
        }
        self
    }

    /// Whether a field may appear on this stack (beside the stack's own fields).
    fn allows(&self, f: OxmField) -> bool {
        use OxmField as F;
        let eth = |types: &[u16]| self.eth_type.is_some_and(|t| types.contains(&t));
        let proto = |p: u8| self.ip_proto == Some(p);
        match f {
            F::EthType | F::IpProto | F::Icmpv6Type => false,
            F::IpDscp | F::IpEcn => eth(&[0x0800, 0x86dd]),
            F::Ipv4Src | F::Ipv4Dst => eth(&[0x0800]),
            F::TcpSrc | F::TcpDst => proto(6),
            F::UdpSrc | F::UdpDst => proto(17),
            F::SctpSrc | F::SctpDst => proto(132),
            F::Icmpv4Type | F::Icmpv4Code => proto(1),
            F::ArpOp | F::ArpSpa | F::ArpTpa | F::ArpSha | F::ArpTha => eth(&[0x0806]),
            F::Ipv6Src | F::Ipv6Dst | F::Ipv6Flabel | F::Ipv6Exthdr => eth(&[0x86dd]),
            F::Icmpv6Code => proto(58),
            F::Ipv6NdTarget => matches!(self.icmpv6_type, Some(135 | 136)),
            F::Ipv6NdSll => self.icmpv6_type == Some(135),
            F::Ipv6NdTll => self.icmpv6_type == Some(136),
            F::MplsLabel | F::MplsTc | F::MplsBos => eth(&[0x8847, 0x8848]),
            F::PbbIsid | F::PbbUca => eth(&[0x88e7]),
            F::InPort
            | F::InPhyPort
            | F::Metadata
            | F::EthDst
            | F::EthSrc
            | F::VlanVid
            | F::VlanPcp
            | F::TunnelId => true,
        }
    }
}

fn arb_stack() -> impl Strategy<Value = Stack> {
    let eth = prop_oneof![
        1 => Just(None),
        3 => Just(Some(0x0800u16)),
        3 => Just(Some(0x86dd)),
        1 => Just(Some(0x0806)),
        1 => Just(Some(0x8847)),
        1 => Just(Some(0x8848)),
        1 => Just(Some(0x88e7)),
        1 => Just(Some(0x88cc)),
    ];
    // ICMP (1) becomes ICMPv6 (58) on IPv6, see `Stack::normalized`.
    let proto = prop_oneof![
        1 => Just(None),
        2 => Just(Some(6u8)),
        2 => Just(Some(17)),
        2 => Just(Some(132)),
        3 => Just(Some(1)),
        1 => Just(Some(47)),
    ];
    let icmpv6 = prop_oneof![
        1 => Just(None),
        2 => Just(Some(135u8)),
        2 => Just(Some(136)),
        1 => Just(Some(128)),
    ];
    (eth, proto, icmpv6).prop_map(|(eth_type, ip_proto, icmpv6_type)| {
        Stack { eth_type, ip_proto, icmpv6_type }.normalized()
    })
}

fn assemble(stack: Stack, include: Vec<bool>, values: Vec<Oxm>) -> Vec<Oxm> {
    let chosen = |f: OxmField| include.get(f as usize).copied().unwrap_or(false);
    let vlan_tagged =
        matches!(values.get(OxmField::VlanVid as usize), Some(Oxm::VlanVid(v, _)) if *v != 0);
    let mut fields: Vec<Oxm> = OxmField::ALL14
        .into_iter()
        .zip(values)
        .filter(|(f, _)| chosen(*f) && stack.allows(*f))
        .filter(|(f, _)| match f {
            OxmField::InPhyPort => chosen(OxmField::InPort),
            OxmField::VlanPcp => chosen(OxmField::VlanVid) && vlan_tagged,
            _ => true,
        })
        .map(|(_, x)| x)
        .collect();
    fields.extend(stack.eth_type.map(Oxm::EthType));
    fields.extend(stack.ip_proto.map(Oxm::IpProto));
    fields.extend(stack.icmpv6_type.map(Oxm::Icmpv6Type));
    fields
}

/// A match that passes [`Match::validate`]: fields chosen from those a random protocol
/// stack allows, with valid values and consistent masks, no duplicates, in random order.
pub fn arb_valid_match() -> impl Strategy<Value = Match> {
    let values: Vec<BoxedStrategy<Oxm>> = OxmField::ALL14.into_iter().map(arb_field).collect();
    // Indexed by field number (41 for PBB_UCA).
    let include = proptest::collection::vec(proptest::bool::weighted(0.3), 42);
    (arb_stack(), include, values)
        .prop_map(|(stack, include, values)| assemble(stack, include, values))
        .prop_flat_map(|fields| Just(fields).prop_shuffle())
        .prop_map(Match::new)
}

/// `ofp_match` holding only `IN_PORT = port`: type 1, length 12, the TLV, 4 pad bytes.
pub(crate) fn in_port_match_bytes(port: u32) -> Vec<u8> {
    let mut b = vec![0, 1, 0, 12, 0x80, 0, 0, 4];
    b.extend_from_slice(&port.to_be_bytes());
    b.extend_from_slice(&[0; 4]);
    b
}
