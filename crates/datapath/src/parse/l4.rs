//! L4 parsing: TCP, UDP, SCTP, ICMPv4, and ICMPv6 with neighbour discovery.
//!
//! Each parser gets `pkt` already cut to the end of the IP packet, so a header that runs
//! past the IP length is truncated even when Ethernet padding follows. Ports live in one
//! place for TCP, UDP and SCTP; ICMP type/code in one place for v4 and v6.
//!
//! Neighbour discovery (ICMPv6 135 NS, 136 NA, code 0): the target address goes to
//! `IPV6_ND_TARGET`; options are walked to the end of the packet, each `len * 8` bytes.
//! A source link-layer address option (type 1, length 1) on an NS fills `IPV6_ND_SLL`
//! (the `ARP_SHA` place), a target link-layer address option (type 2, length 1) on an NA
//! fills `IPV6_ND_TLL` (the `ARP_THA` place); other options are skipped. A zero-length
//! option or a repeated SLL/TLL is `BadNdOption`, an option cut off is `TruncatedNd`.

use super::ip::proto;
use super::{be128, be16, chunk, mac, put, put128, ParseError, ParseOutcome};
use crate::key::{Field, FlowKey};

const ND_NS: u8 = 135;
const ND_NA: u8 = 136;

/// Parses the L4 header of protocol `nw_proto` at `off` of `pkt`; `v6` selects ICMPv6
/// over ICMPv4. Unknown protocols are not an error.
#[inline(always)]
pub(super) fn l4(
    pkt: &[u8],
    off: usize,
    nw_proto: u8,
    v6: bool,
    key: &mut FlowKey,
    out: &mut ParseOutcome,
) -> Result<(), ParseError> {
    match nw_proto {
        proto::TCP => {
            let h = chunk::<20>(pkt, off).ok_or(ParseError::TruncatedL4)?;
            ports(key, h);
            put(key, Field::TcpFlags, (be16(h, 12) & 0x0fff) as u64);
            out.layers.l4 = Some(off as u16);
            let doff = (h[12] >> 4) as usize * 4;
            if doff < 20 {
                return Err(ParseError::BadTcpHeader);
            }
            if off + doff > pkt.len() {
                return Err(ParseError::TruncatedL4);
            }
            Ok(())
        }
        proto::UDP => {
            let h = chunk::<8>(pkt, off).ok_or(ParseError::TruncatedL4)?;
            ports(key, h);
            out.layers.l4 = Some(off as u16);
            Ok(())
        }
        proto::SCTP => {
            let h = chunk::<12>(pkt, off).ok_or(ParseError::TruncatedL4)?;
            ports(key, h);
            out.layers.l4 = Some(off as u16);
            Ok(())
        }
        proto::ICMP if !v6 => {
            let h = chunk::<4>(pkt, off).ok_or(ParseError::TruncatedL4)?;
            icmp(key, h);
            out.layers.l4 = Some(off as u16);
            Ok(())
        }
        proto::ICMPV6 if v6 => {
            let h = chunk::<4>(pkt, off).ok_or(ParseError::TruncatedL4)?;
            icmp(key, h);
            out.layers.l4 = Some(off as u16);
            if (h[0] == ND_NS || h[0] == ND_NA) && h[1] == 0 {
                nd(pkt, off, h[0], key)
            } else {
                Ok(())
            }
        }
        _ => Ok(()),
    }
}

#[inline(always)]
fn ports<const N: usize>(key: &mut FlowKey, h: &[u8; N]) {
    put(key, Field::TpSrc, be16(h, 0) as u64);
    put(key, Field::TpDst, be16(h, 2) as u64);
}

#[inline(always)]
fn icmp(key: &mut FlowKey, h: &[u8; 4]) {
    put(key, Field::IcmpType, h[0] as u64);
    put(key, Field::IcmpCode, h[1] as u64);
}

/// The ND target and link-layer address options of an NS or NA at `off`.
fn nd(pkt: &[u8], off: usize, ty: u8, key: &mut FlowKey) -> Result<(), ParseError> {
    let h = chunk::<24>(pkt, off).ok_or(ParseError::TruncatedNd)?;
    put128(key, Field::Ipv6NdTarget, be128(h, 8));
    let mut at = off + 24;
    let mut have_ll = false;
    while at < pkt.len() {
        let o = chunk::<2>(pkt, at).ok_or(ParseError::TruncatedNd)?;
        let len = o[1] as usize * 8;
        if len == 0 {
            return Err(ParseError::BadNdOption);
        }
        let ll_field = match (o[0], ty) {
            (1, ND_NS) => Some(Field::ArpSha),
            (2, ND_NA) => Some(Field::ArpTha),
            _ => None,
        };
        if let (Some(f), 8) = (ll_field, len) {
            let opt = chunk::<8>(pkt, at).ok_or(ParseError::TruncatedNd)?;
            if have_ll {
                return Err(ParseError::BadNdOption);
            }
            have_ll = true;
            put(key, f, mac(opt, 2));
        } else if at + len > pkt.len() {
            return Err(ParseError::TruncatedNd);
        }
        at += len;
    }
    Ok(())
}
