//! proptest strategies for OXM TLVs. Basic fields get values in their valid ranges and,
//! where the field is maskable, sometimes a mask; a masked value never has a bit set
//! outside its mask, so each generated basic TLV passes the per-field checks of
//! [`crate::match13::Match::validate`] on its own (prerequisites aside).

use super::*;
use crate::action::port;
use proptest::prelude::*;
use std::fmt::Debug;

/// Any MAC address.
pub fn arb_mac() -> impl Strategy<Value = MacAddr> {
    any::<[u8; 6]>().prop_map(MacAddr)
}

/// Any IPv4 address.
pub fn arb_v4() -> impl Strategy<Value = Ipv4Addr> {
    any::<u32>().prop_map(Ipv4Addr::from)
}

/// Any IPv6 address (uniform over all 128 bits).
pub fn arb_v6() -> impl Strategy<Value = Ipv6Addr> {
    any::<u128>().prop_map(Ipv6Addr::from)
}

fn and_mac(v: MacAddr, m: MacAddr) -> MacAddr {
    let mut out = v.0;
    for (o, b) in out.iter_mut().zip(m.0) {
        *o &= b;
    }
    MacAddr(out)
}

fn and_v4(v: Ipv4Addr, m: Ipv4Addr) -> Ipv4Addr {
    Ipv4Addr::from(u32::from(v) & u32::from(m))
}

fn and_v6(v: Ipv6Addr, m: Ipv6Addr) -> Ipv6Addr {
    Ipv6Addr::from(u128::from(v) & u128::from(m))
}

/// A value and an optional mask, the value cleared outside the mask.
fn masked<T: Clone + Debug + 'static>(
    value: impl Strategy<Value = T> + 'static,
    mask: impl Strategy<Value = T> + 'static,
    and: fn(T, T) -> T,
) -> impl Strategy<Value = (T, Option<T>)> {
    (value, proptest::option::of(mask)).prop_map(move |(v, m)| match m {
        Some(m) => (and(v, m.clone()), Some(m)),
        None => (v, None),
    })
}

/// A TLV `make` builds from a value of `value` and maybe a mask of `mask` (see [`masked`]).
fn masked_oxm<T: Clone + Debug + 'static>(
    value: impl Strategy<Value = T> + 'static,
    mask: impl Strategy<Value = T> + 'static,
    and: fn(T, T) -> T,
    make: fn(T, Option<T>) -> Oxm,
) -> BoxedStrategy<Oxm> {
    masked(value, mask, and).prop_map(move |(v, m)| make(v, m)).boxed()
}

fn and_u16(v: u16, m: u16) -> u16 {
    v & m
}
fn and_u32(v: u32, m: u32) -> u32 {
    v & m
}
fn and_u64(v: u64, m: u64) -> u64 {
    v & m
}

/// An ingress port `validate` accepts: a standard port, `LOCAL` or `CONTROLLER`.
pub fn arb_in_port() -> impl Strategy<Value = u32> {
    prop_oneof![
        8 => 1..=port::MAX,
        1 => Just(port::LOCAL),
        1 => Just(port::CONTROLLER),
    ]
}

/// A `VLAN_VID` (with optional mask) that `validate` accepts.
fn arb_vlan_vid() -> impl Strategy<Value = Oxm> {
    let value = prop_oneof![Just(OFPVID_NONE), (0..0x1000u16).prop_map(|v| v | OFPVID_PRESENT)];
    prop_oneof![
        1 => Just(Oxm::VlanVid(OFPVID_PRESENT, Some(OFPVID_PRESENT))),
        6 => masked(value, 0..=0x1fffu16, and_u16).prop_map(|(v, m)| Oxm::VlanVid(v, m)),
    ]
}

/// A TLV of field `f` with a valid value (and a consistent mask when `f` is maskable).
pub fn arb_field(f: OxmField) -> BoxedStrategy<Oxm> {
    use OxmField as F;
    match f {
        F::InPort => arb_in_port().prop_map(Oxm::InPort).boxed(),
        F::InPhyPort => (1..=port::MAX).prop_map(Oxm::InPhyPort).boxed(),
        F::Metadata => masked_oxm(any::<u64>(), any::<u64>(), and_u64, Oxm::Metadata),
        F::EthDst => masked_oxm(arb_mac(), arb_mac(), and_mac, Oxm::EthDst),
        F::EthSrc => masked_oxm(arb_mac(), arb_mac(), and_mac, Oxm::EthSrc),
        F::EthType => any::<u16>().prop_map(Oxm::EthType).boxed(),
        F::VlanVid => arb_vlan_vid().boxed(),
        F::VlanPcp => (0..=7u8).prop_map(Oxm::VlanPcp).boxed(),
        F::IpDscp => (0..=63u8).prop_map(Oxm::IpDscp).boxed(),
        F::IpEcn => (0..=3u8).prop_map(Oxm::IpEcn).boxed(),
        F::IpProto => any::<u8>().prop_map(Oxm::IpProto).boxed(),
        F::Ipv4Src => masked_oxm(arb_v4(), arb_v4(), and_v4, Oxm::Ipv4Src),
        F::Ipv4Dst => masked_oxm(arb_v4(), arb_v4(), and_v4, Oxm::Ipv4Dst),
        F::TcpSrc => any::<u16>().prop_map(Oxm::TcpSrc).boxed(),
        F::TcpDst => any::<u16>().prop_map(Oxm::TcpDst).boxed(),
        F::UdpSrc => any::<u16>().prop_map(Oxm::UdpSrc).boxed(),
        F::UdpDst => any::<u16>().prop_map(Oxm::UdpDst).boxed(),
        F::SctpSrc => any::<u16>().prop_map(Oxm::SctpSrc).boxed(),
        F::SctpDst => any::<u16>().prop_map(Oxm::SctpDst).boxed(),
        F::Icmpv4Type => any::<u8>().prop_map(Oxm::Icmpv4Type).boxed(),
        F::Icmpv4Code => any::<u8>().prop_map(Oxm::Icmpv4Code).boxed(),
        F::ArpOp => any::<u16>().prop_map(Oxm::ArpOp).boxed(),
        F::ArpSpa => masked_oxm(arb_v4(), arb_v4(), and_v4, Oxm::ArpSpa),
        F::ArpTpa => masked_oxm(arb_v4(), arb_v4(), and_v4, Oxm::ArpTpa),
        F::ArpSha => masked_oxm(arb_mac(), arb_mac(), and_mac, Oxm::ArpSha),
        F::ArpTha => masked_oxm(arb_mac(), arb_mac(), and_mac, Oxm::ArpTha),
        F::Ipv6Src => masked_oxm(arb_v6(), arb_v6(), and_v6, Oxm::Ipv6Src),
        F::Ipv6Dst => masked_oxm(arb_v6(), arb_v6(), and_v6, Oxm::Ipv6Dst),
        F::Ipv6Flabel => masked_oxm(0..1u32 << 20, 0..1u32 << 20, and_u32, Oxm::Ipv6Flabel),
        F::Icmpv6Type => any::<u8>().prop_map(Oxm::Icmpv6Type).boxed(),
        F::Icmpv6Code => any::<u8>().prop_map(Oxm::Icmpv6Code).boxed(),
        F::Ipv6NdTarget => arb_v6().prop_map(Oxm::Ipv6NdTarget).boxed(),
        F::Ipv6NdSll => arb_mac().prop_map(Oxm::Ipv6NdSll).boxed(),
        F::Ipv6NdTll => arb_mac().prop_map(Oxm::Ipv6NdTll).boxed(),
        F::MplsLabel => (0..1u32 << 20).prop_map(Oxm::MplsLabel).boxed(),
        F::MplsTc => (0..=7u8).prop_map(Oxm::MplsTc).boxed(),
        F::MplsBos => (0..=1u8).prop_map(Oxm::MplsBos).boxed(),
        F::PbbIsid => masked_oxm(0..1u32 << 24, 0..1u32 << 24, and_u32, Oxm::PbbIsid),
        F::TunnelId => masked_oxm(any::<u64>(), any::<u64>(), and_u64, Oxm::TunnelId),
        F::Ipv6Exthdr => masked_oxm(0..=0x1ffu16, 0..=0x1ffu16, and_u16, Oxm::Ipv6Exthdr),
        F::PbbUca => (0..=1u8).prop_map(Oxm::PbbUca).boxed(),
    }
}

/// Any basic-class TLV: every field of 1.3 and 1.4, valid values, masks where allowed.
pub fn arb_basic_oxm() -> impl Strategy<Value = Oxm> {
    proptest::sample::select(OxmField::ALL14.to_vec()).prop_flat_map(arb_field)
}

/// A TLV of class 0x0000, 0x0001 (Nicira NXM) or 0xffff (experimenter, payload starting
/// with a 4-byte experimenter id).
pub fn arb_other_oxm() -> impl Strategy<Value = Oxm> {
    (
        prop_oneof![Just(0x0000u16), Just(0x0001), Just(OXM_CLASS_EXPERIMENTER)],
        0..128u8,
        any::<bool>(),
        any::<u32>(),
        proptest::collection::vec(any::<u8>(), 0..=24),
    )
        .prop_map(|(class, field, has_mask, exp, body)| {
            let payload = if class == OXM_CLASS_EXPERIMENTER {
                exp.to_be_bytes().into_iter().chain(body).collect()
            } else {
                body
            };
            Oxm::Other { class, field, has_mask, payload }
        })
}

/// Any TLV: mostly basic fields, sometimes one of another class.
pub fn arb_oxm() -> impl Strategy<Value = Oxm> {
    prop_oneof![4 => arb_basic_oxm(), 1 => arb_other_oxm()]
}
