//! Header rewrites: the actions that change a packet's bytes (set-field, push/pop of
//! VLAN/MPLS/PBB headers, TTL operations), keeping the flow key and header offsets in step.
//!
//! [`apply`] takes a packet together with the [`FlowKey`] and [`Layers`] that describe it
//! (as [`crate::parse::parse`] produced them, or as an earlier `apply` left them) and
//! performs one action. Invariants:
//!
//! - On `Ok`, `key` and `layers` describe the new bytes exactly as the parser would, with
//!   the non-packet fields (in_port, in_phy_port, metadata, tunnel_id) kept.
//! - On `Err`, the packet, key and layers are unchanged.
//! - Checksums stay valid: the IPv4 header, TCP, UDP, ICMPv4 and ICMPv6 checksums are
//!   updated incrementally (RFC 1624, `checksum.rs`); a UDP checksum of zero ("none")
//!   stays zero; the SCTP CRC32c is recomputed over the SCTP packet. On a packet whose
//!   offload note says its TCP/UDP checksum is partial (the field holds the
//!   pseudo-header's sum, the device adds the rest), address changes move that sum
//!   and port changes leave it alone, so finishing it later gives the right checksum.
//! - The offload note is kept: no rewrite stores offsets in it, so pushes and pops
//!   leave it true (`gso.rs` finds the headers again at output).
//! - No allocation, except when a push needs more room than the packet's headroom.
//!
//! Where a field lies comes from the `headers` crate: its `field` modules for the offsets
//! that incremental checksums and in-place writes work with (`l3 +
//! ipv4::field::CHECKSUM.start`), its views where a whole header is read or written.
//! [`Layers`] offsets point at headers the parser found in full, so a view of the fixed
//! header at such an offset is always there while the layers are true.
//!
//! Field sets write the bytes in place and set the key field directly. Pushes and pops of
//! VLAN tags and MPLS label stack entries move the offsets by hand. The rare rewrites
//! that change how the rest of the frame is read (setting eth_type or ip_proto, changing
//! an ICMPv6 type or code to or from neighbor discovery, popping the last MPLS entry,
//! pushing or popping a PBB header, pushing or popping a VLAN tag where the parser's view
//! of at most two tags, the inner one 0x8100, then sees a different ethertype) re-parse
//! the frame instead.
//!
//! The conditional rewrites (`conditional.rs`: OpenFlow 1.0's VLAN sets that push a tag
//! onto an untagged frame, set-fields done only where the header is there) build on the
//! same push and set-field.
//!
//! Where the packet lacks what an action needs (a set of `ipv4_src` on an IPv6 packet, a
//! pop_vlan on an untagged frame, a truncated header), or has it in a form the parser
//! does not read (ND fields of an NS/NA with a nonzero code, ARP fields of an ARP that is
//! not Ethernet/IPv4, the MACs of a frame shorter than an Ethernet header), the result is
//! [`RewriteError::MissingHeader`]. OpenFlow checks prerequisites when a flow is added,
//! but earlier actions of the same list can still change the packet.

mod checksum;
mod conditional;
mod gso;
mod offload;
mod segment;
mod set_field;
mod tags;
mod ttl;

#[cfg(test)]
mod tests;

pub use gso::{note_super_frame, resolve_offload, OffloadError};
pub use offload::{finish_offloaded_checksum, finish_partial_checksum, locate_l4, L4Span};
pub use segment::{segment_tcp, SegmentError};

/// The Internet checksum's one's-complement sum of `bytes` (big-endian words, an odd
/// last byte padded with zero), not yet complemented.
pub fn ones_complement_sum(bytes: &[u8]) -> u16 {
    checksum::sum(bytes)
}

use crate::action::Action;
use crate::key::{Field, FlowKey};
use crate::packet::{Layers, Packet};

/// Why a rewrite could not be applied. The packet, key and layers are then unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RewriteError {
    /// A TTL decrement reached zero (or the TTL was already zero): OpenFlow sends the
    /// packet to the controller (OFPR_INVALID_TTL) if so configured, else drops it.
    InvalidTtl,
    /// The action needs a header the packet does not have (e.g. pop_vlan on an untagged
    /// frame); the packet is left unchanged.
    MissingHeader,
    /// Not a rewrite action (output, group, controller, set_queue are the pipeline's).
    NotARewrite,
    /// A set-field on a field that is not a writable header field (in_port,
    /// in_phy_port, ipv6_exthdr, ip_frag, tcp_flags, the TTL place).
    NotSettable,
}

/// Applies one rewrite action to `pkt`, updating `key` and `layers` to describe the new
/// bytes.
#[inline]
pub fn apply(
    pkt: &mut Packet,
    key: &mut FlowKey,
    layers: &mut Layers,
    action: &Action,
) -> Result<(), RewriteError> {
    match *action {
        Action::SetField(f, v) => set_field::set_field(pkt, key, layers, f, v),
        Action::PushVlan(tpid) => tags::push_vlan(pkt, key, layers, tpid),
        Action::PopVlan => tags::pop_vlan(pkt, key, layers),
        Action::PushMpls(ethertype) => tags::push_mpls(pkt, key, layers, ethertype),
        Action::PopMpls(ethertype) => tags::pop_mpls(pkt, key, layers, ethertype),
        Action::PushPbb(ethertype) => tags::push_pbb(pkt, key, layers, ethertype),
        Action::PopPbb => tags::pop_pbb(pkt, key, layers),
        Action::SetMplsTtl(t) => ttl::set_mpls_ttl(pkt, layers, t),
        Action::DecMplsTtl => ttl::dec_mpls_ttl(pkt, layers),
        Action::SetNwTtl(t) => ttl::set_nw_ttl(pkt, key, layers, t),
        Action::DecNwTtl => ttl::dec_nw_ttl(pkt, key, layers),
        Action::CopyTtlOut => ttl::copy_ttl_out(pkt, layers),
        Action::CopyTtlIn => ttl::copy_ttl_in(pkt, layers),
        Action::ModVlanVid(vid) => {
            conditional::mod_vlan(pkt, key, layers, Field::VlanVid, u128::from(vid))
        }
        Action::ModVlanPcp(pcp) => {
            conditional::mod_vlan(pkt, key, layers, Field::VlanPcp, u128::from(pcp))
        }
        Action::SetFieldIfPresent(f, v) => conditional::set_if_present(pkt, key, layers, f, v),
        Action::Output(_) | Action::Controller { .. } | Action::Group(_) | Action::SetQueue(_) => {
            Err(RewriteError::NotARewrite)
        }
    }
}

/// Ethertypes and IP protocol numbers the rewrites look at: the `headers` crate's.
pub(crate) use headers::{ethertype, ip_proto as proto};

/// `base + r`: where field `r` of a header that starts at `base` lies in the frame.
#[inline(always)]
pub(crate) fn at(base: usize, r: std::ops::Range<usize>) -> std::ops::Range<usize> {
    base + r.start..base + r.end
}

#[inline]
pub(crate) fn be16(d: &[u8], at: usize) -> Option<u16> {
    let b = d.get(at..at.checked_add(2)?)?;
    Some(u16::from_be_bytes([b[0], b[1]]))
}

#[inline]
pub(crate) fn be32(d: &[u8], at: usize) -> Option<u32> {
    let b = d.get(at..at.checked_add(4)?)?;
    Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

#[inline]
pub(crate) fn put(d: &mut [u8], at: usize, v: &[u8]) -> Option<()> {
    d.get_mut(at..at.checked_add(v.len())?)?.copy_from_slice(v);
    Some(())
}

/// The key's eth_type.
#[inline]
pub(crate) fn eth_type(key: &FlowKey) -> u16 {
    key.get(Field::EthType) as u16
}

/// The key's ip_proto.
#[inline]
pub(crate) fn ip_proto(key: &FlowKey) -> u8 {
    key.get(Field::IpProto) as u8
}

/// The fields that describe what follows the ethertype: L3 and L4, and ND.
const L3_FIELDS: [Field; 20] = [
    Field::Ipv4Src,
    Field::Ipv4Dst,
    Field::TpSrc,
    Field::TpDst,
    Field::IpProto,
    Field::IpDscp,
    Field::IpEcn,
    Field::IcmpType,
    Field::IcmpCode,
    Field::ArpOp,
    Field::Ipv6Exthdr,
    Field::Ipv6Flabel,
    Field::TcpFlags,
    Field::IpFrag,
    Field::IpTtl,
    Field::Ipv6Src,
    Field::Ipv6Dst,
    Field::Ipv6NdTarget,
    Field::ArpSha,
    Field::ArpTha,
];

/// Zeroes every L3/L4 field of `key` (the parser does not look past an MPLS stack).
#[inline]
pub(crate) fn clear_l3(key: &mut FlowKey) {
    for f in L3_FIELDS {
        key.set(f, 0);
    }
}

/// Re-parses the frame into `key` and `layers`, keeping the fields that do not come from
/// the packet's bytes.
pub(crate) fn reparse(pkt: &Packet, key: &mut FlowKey, layers: &mut Layers) {
    // Field by field (not through an array's `map`), so that every access stays a
    // constant place in the key.
    let phy = key.get(Field::InPhyPort);
    let metadata = key.get(Field::Metadata);
    let tunnel = key.get(Field::TunnelId);
    let in_port = key.get(Field::InPort) as u32;
    let out = crate::parse::parse(pkt.data(), in_port, key);
    key.set(Field::InPhyPort, phy);
    key.set(Field::Metadata, metadata);
    key.set(Field::TunnelId, tunnel);
    *layers = out.layers;
}
