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

use super::{be128, be16, be32, chunk, l4, mac, put, put128, ParseError, ParseOutcome};
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

/// IP protocol numbers the parser acts on.
pub mod proto {
    pub const HOPOPT: u8 = 0;
    pub const ICMP: u8 = 1;
    pub const TCP: u8 = 6;
    pub const UDP: u8 = 17;
    pub const ROUTING: u8 = 43;
    pub const FRAGMENT: u8 = 44;
    pub const ESP: u8 = 50;
    pub const AH: u8 = 51;
    pub const ICMPV6: u8 = 58;
    pub const NONXT: u8 = 59;
    pub const DSTOPTS: u8 = 60;
    pub const SCTP: u8 = 132;
}

/// Ethernet/IPv4 ARP. Other hardware/protocol types leave the ARP fields zero.
#[inline]
pub(super) fn arp(
    frame: &[u8],
    off: usize,
    key: &mut FlowKey,
    out: &mut ParseOutcome,
) -> Result<(), ParseError> {
    let fixed = chunk::<8>(frame, off).ok_or(ParseError::TruncatedArp)?;
    out.layers.l3 = Some(off as u16);
    if be16(fixed, 0) != 1
        || be16(fixed, 2) != super::ethertype::IPV4
        || fixed[4] != 6
        || fixed[5] != 4
    {
        return Ok(());
    }
    let a = chunk::<28>(frame, off).ok_or(ParseError::TruncatedArp)?;
    put(key, Field::ArpOp, be16(a, 6) as u64);
    put(key, Field::ArpSha, mac(a, 8));
    put(key, Field::Ipv4Src, be32(a, 14) as u64);
    put(key, Field::ArpTha, mac(a, 18));
    put(key, Field::Ipv4Dst, be32(a, 24) as u64);
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
    let h = chunk::<20>(frame, off).ok_or(ParseError::TruncatedIpv4)?;
    let ihl = (h[0] & 0x0f) as usize * 4;
    if h[0] >> 4 != 4 || ihl < 20 {
        return Err(ParseError::BadIpv4Header);
    }
    let tos = h[1];
    let frag = be16(h, 6);
    let is_frag = frag & 0x3fff != 0;
    let later = frag & 0x1fff != 0;
    let nw_proto = h[9];
    put(key, Field::IpDscp, (tos >> 2) as u64);
    put(key, Field::IpEcn, (tos & 3) as u64);
    put(key, Field::IpProto, nw_proto as u64);
    put(key, Field::IpTtl, h[8] as u64);
    put(key, Field::IpFrag, is_frag as u64 | (later as u64) << 1);
    put(key, Field::Ipv4Src, be32(h, 12) as u64);
    put(key, Field::Ipv4Dst, be32(h, 16) as u64);
    out.layers.l3 = Some(off as u16);

    let total = be16(h, 2) as usize;
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
    let h = chunk::<40>(frame, off).ok_or(ParseError::TruncatedIpv6)?;
    let w0 = be32(h, 0);
    if w0 >> 28 != 6 {
        return Err(ParseError::BadIpv6Header);
    }
    let tc = (w0 >> 20) as u8;
    put(key, Field::IpDscp, (tc >> 2) as u64);
    put(key, Field::IpEcn, (tc & 3) as u64);
    put(key, Field::Ipv6Flabel, (w0 & 0x000f_ffff) as u64);
    put(key, Field::IpTtl, h[7] as u64);
    put128(key, Field::Ipv6Src, be128(h, 8));
    put128(key, Field::Ipv6Dst, be128(h, 24));
    out.layers.l3 = Some(off as u16);

    let end = ip_end(frame, off + 40 + be16(h, 4) as usize, out);
    let pkt = frame.get(..end).unwrap_or(frame);
    let mut at = off + 40;
    let mut nh = h[6];
    let mut chain = ExtChain::default();
    let result = loop {
        let len = match nh {
            proto::HOPOPT | proto::ROUTING | proto::DSTOPTS | proto::AH => {
                let Some(e) = chunk::<2>(pkt, at) else {
                    break Err(ParseError::BadIpv6ExtHeader);
                };
                chain.see(nh);
                let len = if nh == proto::AH {
                    (e[1] as usize + 2) * 4
                } else {
                    (e[1] as usize + 1) * 8
                };
                if at + len > end {
                    break Err(ParseError::BadIpv6ExtHeader);
                }
                nh = e[0];
                len
            }
            proto::FRAGMENT => {
                let Some(e) = chunk::<8>(pkt, at) else {
                    break Err(ParseError::BadIpv6ExtHeader);
                };
                chain.see(nh);
                let offlg = be16(e, 2);
                let later = offlg & 0xfff8 != 0;
                let is_frag = later || offlg & 1 != 0;
                put(key, Field::IpFrag, is_frag as u64 | (later as u64) << 1);
                nh = e[0];
                if later {
                    put(key, Field::IpProto, nh as u64);
                    break Ok(());
                }
                8
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
                (
                    ieh::DEST,
                    if self.dests == 1 && self.rank <= 2 {
                        2
                    } else {
                        7
                    },
                )
            }
            proto::ROUTING => (ieh::ROUTER, 3),
            proto::FRAGMENT => (ieh::FRAG, 4),
            proto::AH => (ieh::AUTH, 5),
            _ => (ieh::ESP, 6),
        };
        let repeated = if bit == ieh::DEST {
            self.dests > 2
        } else {
            self.bits & bit != 0
        };
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
