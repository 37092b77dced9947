//! L3 parsing: Ethernet/IPv4 ARP, IPv4, and IPv6 with its extension header chain.
//!
//! IPv4 and IPv6 bound everything after them by the IP length (total length, or 40 +
//! payload length), cut to the frame: Ethernet padding is never read as a header, and a
//! frame shorter than its IP length is parsed over the bytes it has and flagged
//! (`ParseOutcome::ip_truncated`). L4 is parsed only for non-fragments and first
//! fragments; `IP_FRAG` bit 0 marks any fragment, bit 1 a fragment other than the first.
//!
//! IPv6 extension headers are walked in the order they appear (each is at least 8 bytes,
//! so the walk is bounded by the packet length). `IPV6_EXTHDR` gets the `OFPIEH_*` bit of
//! each header seen, plus `UNREP` when a header occurs more often than RFC 8200 §4.1
//! allows (destination options twice, all others once) and `UNSEQ` when the order differs
//! from the recommended one: hop-by-hop (only right after the IPv6 header), destination
//! options (before routing), routing, fragment, authentication, ESP, destination options
//! (final). `IP_PROTO` is the upper-layer protocol: the first next-header value that is
//! not an extension header, 50 after ESP (whose payload is encrypted), 59 for "no next
//! header", or the fragment header's next header for a non-first fragment.

use headers::{ipv4, ipv6, ipv6_ext};
use headers::{ArpEthIpv4, ArpHeader, Ipv4Header, Ipv6ExtHeader, Ipv6FragHeader, Ipv6Header};

use super::{l4, mac, put, put128, ParseError, ParseOutcome};
use crate::key::{Field, FlowKey};

/// `OFPIEH_*` bits of `IPV6_EXTHDR` (OpenFlow 1.3 `ofp_ipv6exthdr_flags`). `UNREP`: a header
/// repeated beyond what RFC 8200 allows; `UNSEQ`: headers not in its preferred order.
pub mod ieh {
    pub const NONEXT: u16 = 1 << 0;
    pub const ESP: u16 = 1 << 1;
    pub const AUTH: u16 = 1 << 2;
    pub const DEST: u16 = 1 << 3;
    pub const FRAG: u16 = 1 << 4;
    pub const ROUTER: u16 = 1 << 5;
    pub const HOP: u16 = 1 << 6;
    pub const UNREP: u16 = 1 << 7;
    pub const UNSEQ: u16 = 1 << 8;
}

/// IP protocol numbers the parser acts on (those of the `headers` crate).
pub use headers::ip_proto as proto;

/// Ethernet/IPv4 ARP. Other hardware/protocol types leave the ARP fields zero.
#[inline(always)]
pub(super) fn arp(
    frame: &[u8],
    off: usize,
    key: &mut FlowKey,
    out: &mut ParseOutcome,
) -> Result<(), ParseError> {
    let fixed = ArpHeader::new_checked_at(frame, off).ok_or(ParseError::TruncatedArp)?;
    out.layers.l3 = Some(off as u16);
    if !fixed.is_ethernet_ipv4() {
        return Ok(());
    }
    let a = ArpEthIpv4::new_checked_at(frame, off).ok_or(ParseError::TruncatedArp)?;
    put(key, Field::ArpOp, a.oper() as u64);
    put(key, Field::ArpSha, mac(a.sha()));
    put(key, Field::Ipv4Src, a.spa() as u64);
    put(key, Field::ArpTha, mac(a.tha()));
    put(key, Field::Ipv4Dst, a.tpa() as u64);
    Ok(())
}

/// IPv4 and what follows it.
#[inline(always)]
pub(super) fn ipv4(
    frame: &[u8],
    off: usize,
    key: &mut FlowKey,
    out: &mut ParseOutcome,
) -> Result<(), ParseError> {
    let h = Ipv4Header::new_checked_at(frame, off).ok_or(ParseError::TruncatedIpv4)?;
    let ihl = h.header_len();
    if h.version() != ipv4::VERSION || ihl < ipv4::HEADER_LEN {
        return Err(ParseError::BadIpv4Header);
    }
    let tos = h.tos();
    let is_frag = h.is_fragment();
    let later = h.frag_offset() != 0;
    let nw_proto = h.protocol();
    put(key, Field::IpDscp, (tos >> 2) as u64);
    put(key, Field::IpEcn, (tos & 3) as u64);
    put(key, Field::IpProto, nw_proto as u64);
    put(key, Field::IpTtl, h.ttl() as u64);
    put(key, Field::IpFrag, is_frag as u64 | (later as u64) << 1);
    put(key, Field::Ipv4Src, h.src_addr() as u64);
    put(key, Field::Ipv4Dst, h.dst_addr() as u64);
    out.layers.l3 = Some(off as u16);

    let total = h.total_len() as usize;
    if total < ihl {
        return Err(ParseError::BadIpv4Header);
    }
    let end = ip_end(frame, off + total, out);
    if off + ihl > end {
        return Err(ParseError::TruncatedIpv4);
    }
    if later {
        return Ok(());
    }
    let pkt = frame.get(..end).unwrap_or(frame);
    l4::l4(pkt, off + ihl, nw_proto, false, key, out)
}

/// IPv6 and what follows it.
#[inline(always)]
pub(super) fn ipv6(
    frame: &[u8],
    off: usize,
    key: &mut FlowKey,
    out: &mut ParseOutcome,
) -> Result<(), ParseError> {
    let h = Ipv6Header::new_checked_at(frame, off).ok_or(ParseError::TruncatedIpv6)?;
    if h.version() != ipv6::VERSION {
        return Err(ParseError::BadIpv6Header);
    }
    let tc = h.traffic_class();
    put(key, Field::IpDscp, (tc >> 2) as u64);
    put(key, Field::IpEcn, (tc & 3) as u64);
    put(key, Field::Ipv6Flabel, h.flow_label() as u64);
    put(key, Field::IpTtl, h.hop_limit() as u64);
    put128(key, Field::Ipv6Src, h.src_addr());
    put128(key, Field::Ipv6Dst, h.dst_addr());
    out.layers.l3 = Some(off as u16);

    let end = ip_end(frame, off + ipv6::HEADER_LEN + h.payload_len() as usize, out);
    let pkt = frame.get(..end).unwrap_or(frame);
    let mut at = off + ipv6::HEADER_LEN;
    let mut nh = h.next_header();
    let mut chain = ExtChain::default();
    let result = loop {
        let len = match nh {
            proto::HOPOPT | proto::ROUTING | proto::DSTOPTS | proto::AH => {
                let Some(e) = Ipv6ExtHeader::new_checked_at(pkt, at) else {
                    break Err(ParseError::BadIpv6ExtHeader);
                };
                chain.see(nh);
                let len = if nh == proto::AH { e.ah_header_len() } else { e.header_len() };
                if at + len > end {
                    break Err(ParseError::BadIpv6ExtHeader);
                }
                nh = e.next_header();
                len
            }
            proto::FRAGMENT => {
                let Some(e) = Ipv6FragHeader::new_checked_at(pkt, at) else {
                    break Err(ParseError::BadIpv6ExtHeader);
                };
                chain.see(nh);
                let later = e.frag_offset() != 0;
                let is_frag = later || e.more_frags();
                put(key, Field::IpFrag, is_frag as u64 | (later as u64) << 1);
                nh = e.next_header();
                if later {
                    put(key, Field::IpProto, nh as u64);
                    break Ok(());
                }
                ipv6_ext::frag::HEADER_LEN
            }
            proto::ESP => {
                chain.see(nh);
                put(key, Field::IpProto, nh as u64);
                break Ok(());
            }
            proto::NONXT => {
                chain.bits |= ieh::NONEXT;
                put(key, Field::IpProto, nh as u64);
                break Ok(());
            }
            _ => {
                put(key, Field::IpProto, nh as u64);
                break l4::l4(pkt, at, nh, true, key, out);
            }
        };
        at += len;
    };
    put(key, Field::Ipv6Exthdr, chain.bits as u64);
    result
}

/// The end of the IP packet: `claimed`, cut to the frame (flagging the cut).
#[inline(always)]
fn ip_end(frame: &[u8], claimed: usize, out: &mut ParseOutcome) -> usize {
    if claimed > frame.len() {
        out.ip_truncated = true;
        frame.len()
    } else {
        claimed
    }
}

/// The state of an IPv6 extension header walk: bits seen and the recommended-order
/// rank of the last header (see the module comment).
#[derive(Default)]
struct ExtChain {
    bits: u16,
    rank: u8,
    dests: u8,
}

impl ExtChain {
    #[inline(always)]
    fn see(&mut self, nh: u8) {
        let (bit, rank) = match nh {
            proto::HOPOPT => (ieh::HOP, 1),
            proto::DSTOPTS => {
                self.dests += 1;
                // Before routing (rank 2) only if nothing past it was seen yet.
                (ieh::DEST, if self.dests == 1 && self.rank <= 2 { 2 } else { 7 })
            }
            proto::ROUTING => (ieh::ROUTER, 3),
            proto::FRAGMENT => (ieh::FRAG, 4),
            proto::AH => (ieh::AUTH, 5),
            _ => (ieh::ESP, 6),
        };
        let repeated = if bit == ieh::DEST { self.dests > 2 } else { self.bits & bit != 0 };
        if repeated {
            self.bits |= ieh::UNREP;
        }
        if rank < self.rank || (bit == ieh::HOP && self.rank != 0) {
            self.bits |= ieh::UNSEQ;
        }
        self.rank = rank;
        self.bits |= bit;
    }
}
