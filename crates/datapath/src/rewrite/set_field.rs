//! Set-field: writes one header field in place, fixes the checksums that cover it and
//! sets the field in the key.
//!
//! Which header a field lives in follows the key's sharing of places: `ipv4_src/dst`
//! are the IPv4 addresses or the ARP SPA/TPA; `arp_sha/tha` are the ARP hardware
//! addresses or the ND source/target link-layer address options; `tp_src/dst` are the
//! TCP, UDP or SCTP ports; `icmp_type/code` are ICMPv4 or ICMPv6.

use headers::{arp, ethernet, icmp, ipv4, ipv6, ipv6_ext, nd, sctp, tcp, udp};
use headers::{ArpEthIpv4, Ipv6ExtHeader, MplsEntry, NdMessage, NdOption, PbbItag, VlanTag};

use super::checksum::{self, Delta};
use super::{be16, be32, eth_type, ethertype, ip_proto, proto, put, reparse, RewriteError};
use crate::key::{Field, FlowKey};
use crate::packet::{Layers, Packet};
use crate::parse::ieh;

use RewriteError::MissingHeader;

/// `OFPVID_PRESENT`: set in the key's vlan_vid when the frame has a tag.
const VID_PRESENT: u128 = 0x1000;

// TCP, UDP and SCTP have their ports in the same place: one offset serves all three.
const _: () = assert!(
    tcp::field::SRC_PORT.start == udp::field::SRC_PORT.start
        && sctp::field::SRC_PORT.start == udp::field::SRC_PORT.start
        && tcp::field::DST_PORT.start == udp::field::DST_PORT.start
        && sctp::field::DST_PORT.start == udp::field::DST_PORT.start
);

/// Where the L3 header is, if the packet is of `kind`.
#[inline]
fn l3_of(key: &FlowKey, layers: &Layers, kind: u16) -> Result<usize, RewriteError> {
    match layers.l3 {
        Some(l3) if eth_type(key) == kind => Ok(usize::from(l3)),
        _ => Err(MissingHeader),
    }
}

/// Where the ARP header is, if the packet is Ethernet/IPv4 ARP in full: the parser reads
/// the ARP fields of no other kind.
#[inline]
fn arp_of(key: &FlowKey, layers: &Layers, data: &[u8]) -> Result<usize, RewriteError> {
    let l3 = l3_of(key, layers, ethertype::ARP)?;
    match ArpEthIpv4::new_checked_at(data, l3) {
        Some(a) if a.is_ethernet_ipv4() => Ok(l3),
        _ => Err(MissingHeader),
    }
}

/// Where the ICMPv6 header is, if it is a neighbor solicitation or advertisement the
/// parser reads as one (code 0, the target address inside the IP packet), with its type.
#[inline]
fn nd_of(key: &FlowKey, layers: &Layers, data: &[u8]) -> Result<(usize, u8), RewriteError> {
    let (l3, l4) = l4_of(key, layers, &[proto::ICMPV6])?;
    if eth_type(key) != ethertype::IPV6 || l4 + nd::HEADER_LEN > ip_end(key, data, l3) {
        return Err(MissingHeader);
    }
    match NdMessage::new_checked_at(data, l4).map(|m| (m.msg_type(), m.code())) {
        Some((t @ (nd::NS | nd::NA), 0)) => Ok((l4, t)),
        _ => Err(MissingHeader),
    }
}

/// Where the L4 header is, if the packet is IPv4 or IPv6 carrying one of `protos`.
#[inline]
fn l4_of(key: &FlowKey, layers: &Layers, protos: &[u8]) -> Result<(usize, usize), RewriteError> {
    let et = eth_type(key);
    match (layers.l3, layers.l4) {
        (Some(l3), Some(l4))
            if (et == ethertype::IPV4 || et == ethertype::IPV6)
                && protos.contains(&ip_proto(key)) =>
        {
            Ok((usize::from(l3), usize::from(l4)))
        }
        _ => Err(MissingHeader),
    }
}

/// The end of the IP payload (before any Ethernet padding), clamped to the frame.
#[inline]
fn ip_end(key: &FlowKey, data: &[u8], l3: usize) -> usize {
    let end = if eth_type(key) == ethertype::IPV4 {
        be16(data, l3 + ipv4::field::LENGTH.start).map(|n| l3 + usize::from(n))
    } else {
        be16(data, l3 + ipv6::field::PAYLOAD_LEN.start)
            .map(|n| l3 + ipv6::HEADER_LEN + usize::from(n))
    };
    end.unwrap_or(0).min(data.len())
}

/// Applies the pseudo-header change `d` (an address change of `key`'s IP version) to the
/// L4 checksum. With `partial` (the packet's offload note: the TCP/UDP field holds the
/// pseudo-header's own sum, not a complemented checksum) the sum is moved by `d` instead.
#[inline]
fn fix_pseudo(key: &FlowKey, layers: &Layers, data: &mut [u8], d: Delta, partial: bool) {
    let Some(l4) = layers.l4 else { return };
    let l4 = usize::from(l4);
    let tcp_csum = l4 + tcp::field::CHECKSUM.start;
    let udp_csum = l4 + udp::field::CHECKSUM.start;
    match ip_proto(key) {
        proto::TCP if partial => checksum::update_partial(data, tcp_csum, d),
        proto::UDP if partial => checksum::update_partial(data, udp_csum, d),
        proto::TCP => checksum::update(data, tcp_csum, d),
        proto::UDP => checksum::update_udp(data, udp_csum, d),
        proto::ICMPV6 if eth_type(key) == ethertype::IPV6 => {
            checksum::update(data, l4 + icmp::field::CHECKSUM.start, d)
        }
        _ => {}
    }
}

/// The big-endian bytes of the low `N` bytes of `v`.
#[inline]
fn bytes<const N: usize>(v: u128) -> [u8; N] {
    let all = v.to_be_bytes();
    let mut out = [0u8; N];
    out.copy_from_slice(&all[16 - N..]);
    out
}

/// Writes `new` at `at` when the whole range exists.
#[inline]
fn write_plain(data: &mut [u8], at: usize, new: &[u8]) -> Result<(), RewriteError> {
    put(data, at, new).ok_or(MissingHeader)
}

/// Writes `new` at `off` inside the region checksummed from `base` with the checksum at
/// `csum`, requiring the checksum to exist too.
#[inline]
fn write_summed(
    data: &mut [u8],
    base: usize,
    off: usize,
    new: &[u8],
    csum: usize,
) -> Result<Delta, RewriteError> {
    if csum + 2 > data.len() {
        return Err(MissingHeader);
    }
    let d = checksum::write(data, base, off, new).ok_or(MissingHeader)?;
    checksum::update(data, csum, d);
    Ok(d)
}

/// Sets `f` to `v` (right-aligned; bits beyond the field's width are ignored).
pub(super) fn set_field(
    pkt: &mut Packet,
    key: &mut FlowKey,
    layers: &mut Layers,
    f: Field,
    v: u128,
) -> Result<(), RewriteError> {
    // A partial TCP/UDP checksum covers only the pseudo-header: address changes move
    // it, port changes (inside the segment the device will sum) must not.
    let partial = pkt.partial_csum();
    let data = pkt.data_mut();
    match f {
        Field::EthDst | Field::EthSrc => {
            let at = if f == Field::EthDst {
                ethernet::field::DST.start
            } else {
                ethernet::field::SRC.start
            };
            // A runt frame has no Ethernet header as far as the parser is concerned.
            if data.len() < ethernet::HEADER_LEN {
                return Err(MissingHeader);
            }
            write_plain(data, at, &bytes::<6>(v))?;
            key.set(f, v);
        }
        Field::EthType => {
            let at = usize::from(layers.ethertype);
            if data.len() < ethernet::HEADER_LEN || at < ethernet::field::ETHERTYPE.start {
                return Err(MissingHeader);
            }
            write_plain(data, at, &bytes::<2>(v))?;
            reparse(pkt, key, layers);
        }
        Field::VlanVid | Field::VlanPcp => {
            let at = usize::from(layers.vlan.ok_or(MissingHeader)?);
            let mut tag = VlanTag::new_checked_at_mut(data, at).ok_or(MissingHeader)?;
            if f == Field::VlanVid {
                tag.set_vid(v as u16);
            } else {
                tag.set_pcp(v as u8);
            }
            key.set(Field::VlanVid, VID_PRESENT | u128::from(tag.vid()));
            key.set(Field::VlanPcp, u128::from(tag.pcp()));
        }
        Field::IpDscp | Field::IpEcn => set_tos(data, key, layers, f, v as u8)?,
        Field::IpProto => {
            set_ip_proto(data, key, layers, v as u8, partial)?;
            reparse(pkt, key, layers);
        }
        Field::Ipv4Src | Field::Ipv4Dst => {
            let src = f == Field::Ipv4Src;
            let new = bytes::<4>(v);
            if eth_type(key) == ethertype::ARP {
                let l3 = arp_of(key, layers, data)?;
                let at = if src { arp::field::SPA.start } else { arp::field::TPA.start };
                write_plain(data, l3 + at, &new)?;
            } else {
                let l3 = l3_of(key, layers, ethertype::IPV4)?;
                let at =
                    if src { ipv4::field::SRC_ADDR.start } else { ipv4::field::DST_ADDR.start };
                let csum = l3 + ipv4::field::CHECKSUM.start;
                let d = write_summed(data, l3, l3 + at, &new, csum)?;
                fix_pseudo(key, layers, data, d, partial);
            }
            key.set(f, v);
        }
        Field::TpSrc | Field::TpDst => {
            let (l3, l4) = l4_of(key, layers, &[proto::TCP, proto::UDP, proto::SCTP])?;
            let at = l4
                + if f == Field::TpSrc {
                    udp::field::SRC_PORT.start
                } else {
                    udp::field::DST_PORT.start
                };
            let new = bytes::<2>(v);
            match ip_proto(key) {
                proto::TCP | proto::UDP if partial => {
                    let hdr =
                        if ip_proto(key) == proto::TCP { tcp::HEADER_LEN } else { udp::HEADER_LEN };
                    if l4 + hdr > data.len() {
                        return Err(MissingHeader);
                    }
                    write_plain(data, at, &new)?;
                }
                proto::TCP => {
                    write_summed(data, l4, at, &new, l4 + tcp::field::CHECKSUM.start)?;
                }
                proto::UDP => {
                    if l4 + udp::HEADER_LEN > data.len() {
                        return Err(MissingHeader);
                    }
                    let d = checksum::write(data, l4, at, &new).ok_or(MissingHeader)?;
                    checksum::update_udp(data, l4 + udp::field::CHECKSUM.start, d);
                }
                _ => {
                    let end = ip_end(key, data, l3);
                    if end < l4 + sctp::HEADER_LEN {
                        return Err(MissingHeader);
                    }
                    write_plain(data, at, &new)?;
                    checksum::sctp(data, l4, end);
                }
            }
            key.set(f, v);
        }
        Field::IcmpType | Field::IcmpCode => {
            let (_, l4) = l4_of(key, layers, &[proto::ICMP, proto::ICMPV6])?;
            let is_v6 = ip_proto(key) == proto::ICMPV6 && eth_type(key) == ethertype::IPV6;
            let is_v4 = ip_proto(key) == proto::ICMP && eth_type(key) == ethertype::IPV4;
            if !is_v4 && !is_v6 {
                return Err(MissingHeader);
            }
            let type_at = l4 + icmp::field::TYPE;
            let old_type = *data.get(type_at).ok_or(MissingHeader)?;
            let at = if f == Field::IcmpCode { l4 + icmp::field::CODE } else { type_at };
            write_summed(data, l4, at, &[v as u8], l4 + icmp::field::CHECKSUM.start)?;
            let new_type = data.get(type_at).copied().unwrap_or(0);
            let nd = |t: u8| t == nd::NS || t == nd::NA;
            if is_v6 && (nd(old_type) || nd(new_type)) {
                reparse(pkt, key, layers);
            } else {
                key.set(f, v);
            }
        }
        Field::ArpOp => {
            let l3 = arp_of(key, layers, data)?;
            write_plain(data, l3 + arp::field::OPER.start, &bytes::<2>(v))?;
            key.set(f, v);
        }
        Field::ArpSha | Field::ArpTha => {
            let new = bytes::<6>(v);
            if eth_type(key) == ethertype::ARP {
                let l3 = arp_of(key, layers, data)?;
                let at =
                    if f == Field::ArpSha { arp::field::SHA.start } else { arp::field::THA.start };
                write_plain(data, l3 + at, &new)?;
            } else {
                let (l4, t) = nd_of(key, layers, data)?;
                let (want_type, opt) = if f == Field::ArpSha {
                    (nd::NS, nd::OPT_SOURCE_LL)
                } else {
                    (nd::NA, nd::OPT_TARGET_LL)
                };
                if t != want_type {
                    return Err(MissingHeader);
                }
                let l3 = usize::from(layers.l3.ok_or(MissingHeader)?);
                let end = ip_end(key, data, l3);
                let at = nd_option(data, l4 + nd::HEADER_LEN, end, opt).ok_or(MissingHeader)?;
                write_summed(data, l4, at, &new, l4 + nd::field::CHECKSUM.start)?;
            }
            key.set(f, v);
        }
        Field::Ipv6Src | Field::Ipv6Dst => {
            let l3 = l3_of(key, layers, ethertype::IPV6)?;
            let at = l3
                + if f == Field::Ipv6Src {
                    ipv6::field::SRC_ADDR.start
                } else {
                    ipv6::field::DST_ADDR.start
                };
            let new = v.to_be_bytes();
            let d = checksum::write(data, l3, at, &new).ok_or(MissingHeader)?;
            let routed = key.get(Field::Ipv6Exthdr) & u128::from(ieh::ROUTER) != 0;
            if f == Field::Ipv6Src || !routed {
                fix_pseudo(key, layers, data, d, partial);
            }
            key.set(f, v);
        }
        Field::Ipv6Flabel => {
            let l3 = l3_of(key, layers, ethertype::IPV6)?;
            let at = l3 + ipv6::field::VER_TC_FLOW.start;
            let w = be32(data, at).ok_or(MissingHeader)?;
            let label = v as u32 & ipv6::FLOW_LABEL_MASK;
            write_plain(data, at, &((w & !ipv6::FLOW_LABEL_MASK) | label).to_be_bytes())?;
            key.set(f, u128::from(label));
        }
        Field::Ipv6NdTarget => {
            let (l4, _) = nd_of(key, layers, data)?;
            let at = l4 + nd::field::TARGET.start;
            write_summed(data, l4, at, &v.to_be_bytes(), l4 + nd::field::CHECKSUM.start)?;
            key.set(f, v);
        }
        Field::MplsLabel | Field::MplsTc | Field::MplsBos => {
            let at = usize::from(layers.mpls.ok_or(MissingHeader)?);
            let mut lse = MplsEntry::new_checked_at_mut(data, at).ok_or(MissingHeader)?;
            match f {
                Field::MplsLabel => lse.set_label(v as u32),
                Field::MplsTc => lse.set_tc(v as u8),
                _ => lse.set_bos(v & 1 != 0),
            }
            key.set(Field::MplsLabel, u128::from(lse.label()));
            key.set(Field::MplsTc, u128::from(lse.tc()));
            key.set(Field::MplsBos, u128::from(lse.bos()));
        }
        Field::PbbIsid | Field::PbbUca => {
            if eth_type(key) != ethertype::PBB {
                return Err(MissingHeader);
            }
            // The I-TAG follows its ethertype.
            let at = usize::from(layers.ethertype) + ethernet::field::ETHERTYPE.len();
            let mut itag = PbbItag::new_checked_at_mut(data, at).ok_or(MissingHeader)?;
            if f == Field::PbbIsid {
                itag.set_isid(v as u32);
                key.set(f, u128::from(itag.isid()));
            } else {
                itag.set_uca(v as u8);
                key.set(f, u128::from(itag.uca()));
            }
        }
        Field::TunnelId | Field::Metadata => key.set(f, v),
        Field::InPort
        | Field::InPhyPort
        | Field::Ipv6Exthdr
        | Field::TcpFlags
        | Field::IpFrag
        | Field::IpTtl => return Err(RewriteError::NotSettable),
    }
    Ok(())
}

/// Sets the DSCP (6 bits) or ECN (2 bits) of the IPv4 TOS or IPv6 traffic class.
fn set_tos(
    data: &mut [u8],
    key: &mut FlowKey,
    layers: &Layers,
    f: Field,
    v: u8,
) -> Result<(), RewriteError> {
    let (keep, new) =
        if f == Field::IpDscp { (0x03u8, (v & 0x3f) << 2) } else { (0xfcu8, v & 0x03) };
    if let Ok(l3) = l3_of(key, layers, ethertype::IPV4) {
        let at = l3 + ipv4::field::TOS;
        let tos = *data.get(at).ok_or(MissingHeader)?;
        let csum = l3 + ipv4::field::CHECKSUM.start;
        write_summed(data, l3, at, &[(tos & keep) | new], csum)?;
    } else {
        // The traffic class: bits 4..12 of the IPv6 header's first 16-bit word.
        let l3 = l3_of(key, layers, ethertype::IPV6)?;
        let at = l3 + ipv6::field::VER_TC_FLOW.start;
        let w = be16(data, at).ok_or(MissingHeader)?;
        let tc = (((w >> 4) as u8) & keep) | new;
        let w = (w & 0xf00f) | (u16::from(tc) << 4);
        write_plain(data, at, &w.to_be_bytes())?;
    }
    let shown = if f == Field::IpDscp { v & 0x3f } else { v & 0x03 };
    key.set(f, u128::from(shown));
    Ok(())
}

/// Rewrites the protocol number: the IPv4 protocol byte, or the last next-header of an
/// IPv6 extension-header chain.
fn set_ip_proto(
    data: &mut [u8],
    key: &FlowKey,
    layers: &Layers,
    v: u8,
    partial: bool,
) -> Result<(), RewriteError> {
    // The protocol is part of the transport checksum's pseudo-header (the low byte of
    // a 16-bit word there, as it is in the IPv4 header's TTL/protocol word): the old
    // transport header's checksum follows the change, as if recomputed.
    if let Ok(l3) = l3_of(key, layers, ethertype::IPV4) {
        let at = l3 + ipv4::field::PROTOCOL;
        let d = write_summed(data, l3, at, &[v], l3 + ipv4::field::CHECKSUM.start)?;
        fix_pseudo(key, layers, data, d, partial);
        return Ok(());
    }
    let l3 = l3_of(key, layers, ethertype::IPV6)?;
    let mut nh_at = l3 + ipv6::field::NXT_HDR;
    let mut hdr = l3 + ipv6::HEADER_LEN;
    // Bounded: every extension header is at least 8 bytes long.
    for _ in 0..64 {
        let nh = *data.get(nh_at).ok_or(MissingHeader)?;
        let ext = || Ipv6ExtHeader::new_checked_at(data, hdr).ok_or(MissingHeader);
        let len = match nh {
            proto::HOPOPT | proto::ROUTING | proto::DSTOPTS => ext()?.header_len(),
            proto::FRAGMENT => ipv6_ext::frag::HEADER_LEN,
            proto::AH => ext()?.ah_header_len(),
            _ => break,
        };
        nh_at = hdr + ipv6_ext::field::NXT_HDR;
        hdr += len;
    }
    let old = *data.get(nh_at).ok_or(MissingHeader)?;
    write_plain(data, nh_at, &[v])?;
    let mut word = [0u8, old];
    if let Some(d) = checksum::write(&mut word, 0, 1, &[v]) {
        fix_pseudo(key, layers, data, d, partial);
    }
    Ok(())
}

/// The offset of the link-layer address in the first ND option of type `opt` (8 bytes
/// long) among the options in `data[from..end]`.
fn nd_option(data: &[u8], mut from: usize, end: usize, opt: u8) -> Option<usize> {
    while from + nd::LL_OPT_LEN <= end {
        let o = NdOption::new_checked_at(data, from)?;
        let len = o.len_bytes();
        if len == 0 {
            return None;
        }
        if o.opt_type() == opt && len == nd::LL_OPT_LEN {
            return Some(from + nd::opt_field::LL_ADDR.start);
        }
        from += len;
    }
    None
}
