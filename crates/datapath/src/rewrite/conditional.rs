//! The rewrites whose effect depends on what the packet carries: OpenFlow 1.0's VLAN sets
//! and its IP and transport sets where the rule's match leaves the packet open, done as
//! Open vSwitch does them.
//!
//! - [`Action::ModVlanVid`] / [`Action::ModVlanPcp`]: on a tagged frame (the outermost
//!   tag, 0x8100 or 0x88a8) the VID / PCP is rewritten; an untagged frame first gets an
//!   802.1Q tag with VID 0 and PCP 0 (so the VID set leaves PCP 0, the PCP set VID 0).
//! - [`Action::SetFieldIfPresent`]: the set-field is done when the packet has the field's
//!   own header ([`has_header`]); any other packet passes unchanged (`Ok`, not
//!   `MissingHeader`: that is the action's meaning, not a packet fault).
//!
//! The invariants of the module above hold: on `Err` nothing changed (a push is only made
//! when the frame has an Ethernet header, and the set after it cannot then fail).
//!
//! [`Action::ModVlanVid`]: crate::action::Action::ModVlanVid
//! [`Action::ModVlanPcp`]: crate::action::Action::ModVlanPcp
//! [`Action::SetFieldIfPresent`]: crate::action::Action::SetFieldIfPresent

use super::{eth_type, ethertype, ip_proto, proto, set_field, tags, RewriteError};
use crate::key::{Field, FlowKey};
use crate::packet::{Layers, Packet};

/// Sets the VLAN field `f` (`VlanVid` or `VlanPcp`) to `v` on the outermost tag, pushing
/// an 802.1Q tag (VID 0, PCP 0) on an untagged frame first.
pub(super) fn mod_vlan(
    pkt: &mut Packet,
    key: &mut FlowKey,
    layers: &mut Layers,
    f: Field,
    v: u128,
) -> Result<(), RewriteError> {
    if layers.vlan.is_none() {
        tags::push_vlan(pkt, key, layers, ethertype::VLAN)?;
    }
    set_field::set_field(pkt, key, layers, f, v)
}

/// Whether the packet `key` describes has the header field `f` belongs to, for
/// [`set_if_present`]: IPv4 for `ipv4_src` / `ipv4_dst` (not ARP, whose addresses share
/// the place), IPv4 or IPv6 for `ip_dscp` / `ip_ecn`, TCP, UDP or SCTP over IPv4 or IPv6
/// for `tp_src` / `tp_dst`, outside fragments after the first (not ICMP, whose type and
/// code have places of their own). Any other field: true (the set-field's own checks
/// apply).
pub(crate) fn has_header(key: &FlowKey, f: Field) -> bool {
    let ip = matches!(eth_type(key), ethertype::IPV4 | ethertype::IPV6);
    match f {
        Field::Ipv4Src | Field::Ipv4Dst => eth_type(key) == ethertype::IPV4,
        Field::IpDscp | Field::IpEcn => ip,
        Field::TpSrc | Field::TpDst => {
            let later_fragment = key.get(Field::IpFrag) & 2 != 0;
            ip && !later_fragment && matches!(ip_proto(key), proto::TCP | proto::UDP | proto::SCTP)
        }
        _ => true,
    }
}

/// Sets `f` to `v` if the packet has the field's header ([`has_header`]); otherwise
/// leaves it unchanged.
pub(super) fn set_if_present(
    pkt: &mut Packet,
    key: &mut FlowKey,
    layers: &mut Layers,
    f: Field,
    v: u128,
) -> Result<(), RewriteError> {
    if has_header(key, f) {
        set_field::set_field(pkt, key, layers, f, v)
    } else {
        Ok(())
    }
}
