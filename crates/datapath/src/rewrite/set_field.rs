//! Set-field: writes one header field in place, fixes the checksums that cover it and
//! sets the field in the key.
//!
//! Which header a field lives in follows the key's sharing of places: `ipv4_src/dst`
//! are the IPv4 addresses or the ARP SPA/TPA; `arp_sha/tha` are the ARP hardware
//! addresses or the ND source/target link-layer address options; `tp_src/dst` are the
//! TCP, UDP or SCTP ports; `icmp_type/code` are ICMPv4 or ICMPv6.

use super::checksum::{self, Delta};
use super::{be16, be32, eth_type, ethertype, ip_proto, proto, put, reparse, RewriteError};
use crate::key::{Field, FlowKey};
use crate::packet::{Layers, Packet};

use RewriteError::MissingHeader;

/// `OFPVID_PRESENT`: set in the key's vlan_vid when the frame has a tag.
const VID_PRESENT: u128 = 0x1000;
/// `OFPIEH_ROUTER`: the IPv6 packet has a routing header.
const IEH_ROUTER: u128 = 1 << 5;
/// ICMPv6 neighbor solicitation and advertisement.
const ND_NS: u8 = 135;
const ND_NA: u8 = 136;

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
    match data.get(l3..l3 + 28) {
        Some([0, 1, 0x08, 0x00, 6, 4, ..]) => Ok(l3),
        _ => Err(MissingHeader),
    }
}

/// Where the ICMPv6 header is, if it is a neighbor solicitation or advertisement the
/// parser reads as one (code 0, the target address inside the IP packet), with its type.
#[inline]
fn nd_of(key: &FlowKey, layers: &Layers, data: &[u8]) -> Result<(usize, u8), RewriteError> {
    let (l3, l4) = l4_of(key, layers, &[proto::ICMPV6])?;
    if eth_type(key) != ethertype::IPV6 || l4 + 24 > ip_end(key, data, l3) {
        return Err(MissingHeader);
    }
    match data.get(l4..l4 + 2) {
        Some(&[t @ (ND_NS | ND_NA), 0]) => Ok((l4, t)),
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
        be16(data, l3 + 2).map(|n| l3 + usize::from(n))
    } else {
        be16(data, l3 + 4).map(|n| l3 + 40 + usize::from(n))
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
    match ip_proto(key) {
        proto::TCP if partial => checksum::update_partial(data, l4 + 16, d),
        proto::UDP if partial => checksum::update_partial(data, l4 + 6, d),
        proto::TCP => checksum::update(data, l4 + 16, d),
        proto::UDP => checksum::update_udp(data, l4 + 6, d),
        proto::ICMPV6 if eth_type(key) == ethertype::IPV6 => checksum::update(data, l4 + 2, d),
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
            let at = if f == Field::EthDst { 0 } else { 6 };
            // A runt frame has no Ethernet header as far as the parser is concerned.
            if data.len() < 14 {
                return Err(MissingHeader);
            }
            write_plain(data, at, &bytes::<6>(v))?;
            key.set(f, v);
        }
        Field::EthType => {
            let at = usize::from(layers.ethertype);
            if data.len() < 14 || at < 12 {
                return Err(MissingHeader);
            }
            write_plain(data, at, &bytes::<2>(v))?;
            reparse(pkt, key, layers);
        }
        Field::VlanVid | Field::VlanPcp => {
            let at = usize::from(layers.vlan.ok_or(MissingHeader)?) + 2;
            let tci = be16(data, at).ok_or(MissingHeader)?;
            let tci = if f == Field::VlanVid {
                (tci & 0xf000) | (v as u16 & 0x0fff)
            } else {
                (tci & 0x1fff) | ((v as u16 & 7) << 13)
            };
            write_plain(data, at, &tci.to_be_bytes())?;
            key.set(Field::VlanVid, VID_PRESENT | u128::from(tci & 0x0fff));
            key.set(Field::VlanPcp, u128::from(tci >> 13));
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
                write_plain(data, l3 + if src { 14 } else { 24 }, &new)?;
            } else {
                let l3 = l3_of(key, layers, ethertype::IPV4)?;
                let at = l3 + if src { 12 } else { 16 };
                let d = write_summed(data, l3, at, &new, l3 + 10)?;
                fix_pseudo(key, layers, data, d, partial);
            }
            key.set(f, v);
        }
        Field::TpSrc | Field::TpDst => {
            let (l3, l4) = l4_of(key, layers, &[proto::TCP, proto::UDP, proto::SCTP])?;
            let at = l4 + if f == Field::TpSrc { 0 } else { 2 };
            let new = bytes::<2>(v);
            match ip_proto(key) {
                proto::TCP | proto::UDP if partial => {
                    let hdr = if ip_proto(key) == proto::TCP { 20 } else { 8 };
                    if l4 + hdr > data.len() {
                        return Err(MissingHeader);
                    }
                    write_plain(data, at, &new)?;
                }
                proto::TCP => {
                    write_summed(data, l4, at, &new, l4 + 16)?;
                }
                proto::UDP => {
                    if l4 + 8 > data.len() {
                        return Err(MissingHeader);
                    }
                    let d = checksum::write(data, l4, at, &new).ok_or(MissingHeader)?;
                    checksum::update_udp(data, l4 + 6, d);
                }
                _ => {
                    let end = ip_end(key, data, l3);
                    if end < l4 + 12 {
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
            let old_type = *data.get(l4).ok_or(MissingHeader)?;
            let at = l4 + usize::from(f == Field::IcmpCode);
            write_summed(data, l4, at, &[v as u8], l4 + 2)?;
            let new_type = data.get(l4).copied().unwrap_or(0);
            let nd = |t: u8| t == ND_NS || t == ND_NA;
            if is_v6 && (nd(old_type) || nd(new_type)) {
                reparse(pkt, key, layers);
            } else {
                key.set(f, v);
            }
        }
        Field::ArpOp => {
            let l3 = arp_of(key, layers, data)?;
            write_plain(data, l3 + 6, &bytes::<2>(v))?;
            key.set(f, v);
        }
        Field::ArpSha | Field::ArpTha => {
            let new = bytes::<6>(v);
            if eth_type(key) == ethertype::ARP {
                let l3 = arp_of(key, layers, data)?;
                write_plain(data, l3 + if f == Field::ArpSha { 8 } else { 18 }, &new)?;
            } else {
                let (l4, t) = nd_of(key, layers, data)?;
                let (want_type, opt) = if f == Field::ArpSha {
                    (ND_NS, 1)
                } else {
                    (ND_NA, 2)
                };
                if t != want_type {
                    return Err(MissingHeader);
                }
                let l3 = usize::from(layers.l3.ok_or(MissingHeader)?);
                let end = ip_end(key, data, l3);
                let at = nd_option(data, l4 + 24, end, opt).ok_or(MissingHeader)?;
                write_summed(data, l4, at, &new, l4 + 2)?;
            }
            key.set(f, v);
        }
        Field::Ipv6Src | Field::Ipv6Dst => {
            let l3 = l3_of(key, layers, ethertype::IPV6)?;
            let at = l3 + if f == Field::Ipv6Src { 8 } else { 24 };
            let new = v.to_be_bytes();
            let d = checksum::write(data, l3, at, &new).ok_or(MissingHeader)?;
            let routed = key.get(Field::Ipv6Exthdr) & IEH_ROUTER != 0;
            if f == Field::Ipv6Src || !routed {
                fix_pseudo(key, layers, data, d, partial);
            }
            key.set(f, v);
        }
        Field::Ipv6Flabel => {
            let l3 = l3_of(key, layers, ethertype::IPV6)?;
            let w = be32(data, l3).ok_or(MissingHeader)?;
            let w = (w & 0xfff0_0000) | (v as u32 & 0x000f_ffff);
            write_plain(data, l3, &w.to_be_bytes())?;
            key.set(f, v & 0x000f_ffff);
        }
        Field::Ipv6NdTarget => {
            let (l4, _) = nd_of(key, layers, data)?;
            write_summed(data, l4, l4 + 8, &v.to_be_bytes(), l4 + 2)?;
            key.set(f, v);
        }
        Field::MplsLabel | Field::MplsTc | Field::MplsBos => {
            let at = usize::from(layers.mpls.ok_or(MissingHeader)?);
            let w = be32(data, at).ok_or(MissingHeader)?;
            let v32 = v as u32;
            let w = match f {
                Field::MplsLabel => (w & 0x0000_0fff) | ((v32 & 0x000f_ffff) << 12),
                Field::MplsTc => (w & !(7 << 9)) | ((v32 & 7) << 9),
                _ => (w & !(1 << 8)) | ((v32 & 1) << 8),
            };
            write_plain(data, at, &w.to_be_bytes())?;
            key.set(Field::MplsLabel, u128::from(w >> 12));
            key.set(Field::MplsTc, u128::from((w >> 9) & 7));
            key.set(Field::MplsBos, u128::from((w >> 8) & 1));
        }
        Field::PbbIsid => {
            if eth_type(key) != ethertype::PBB {
                return Err(MissingHeader);
            }
            let at = usize::from(layers.ethertype) + 3;
            write_plain(data, at, &bytes::<3>(v))?;
            key.set(f, v & 0x00ff_ffff);
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
    let (keep, new) = if f == Field::IpDscp {
        (0x03u8, (v & 0x3f) << 2)
    } else {
        (0xfcu8, v & 0x03)
    };
    if let Ok(l3) = l3_of(key, layers, ethertype::IPV4) {
        let tos = *data.get(l3 + 1).ok_or(MissingHeader)?;
        write_summed(data, l3, l3 + 1, &[(tos & keep) | new], l3 + 10)?;
    } else {
        let l3 = l3_of(key, layers, ethertype::IPV6)?;
        let w = be16(data, l3).ok_or(MissingHeader)?;
        let tc = (((w >> 4) as u8) & keep) | new;
        let w = (w & 0xf00f) | (u16::from(tc) << 4);
        write_plain(data, l3, &w.to_be_bytes())?;
    }
    let shown = if f == Field::IpDscp {
        v & 0x3f
    } else {
        v & 0x03
    };
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
        let d = write_summed(data, l3, l3 + 9, &[v], l3 + 10)?;
        fix_pseudo(key, layers, data, d, partial);
        return Ok(());
    }
    let l3 = l3_of(key, layers, ethertype::IPV6)?;
    let mut nh_at = l3 + 6;
    let mut hdr = l3 + 40;
    // Bounded: every extension header is at least 8 bytes long.
    for _ in 0..64 {
        let nh = *data.get(nh_at).ok_or(MissingHeader)?;
        let len = match nh {
            0 | 43 | 60 => (usize::from(*data.get(hdr + 1).ok_or(MissingHeader)?) + 1) * 8,
            44 => 8,
            51 => (usize::from(*data.get(hdr + 1).ok_or(MissingHeader)?) + 2) * 4,
            _ => break,
        };
        nh_at = hdr;
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
    while from + 8 <= end {
        let t = *data.get(from)?;
        let len = usize::from(*data.get(from + 1)?) * 8;
        if len == 0 {
            return None;
        }
        if t == opt && len == 8 {
            return Some(from + 2);
        }
        from += len;
    }
    None
}
