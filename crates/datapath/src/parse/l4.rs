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

use headers::{nd, tcp};
use headers::{IcmpHeader, NdLinkLayerOption, NdMessage, NdOption};
use headers::{SctpHeader, TcpHeader, UdpHeader};

use super::ip::proto;
use super::{mac, put, put128, ParseError, ParseOutcome};
use crate::key::{Field, FlowKey};

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
            let h = TcpHeader::new_checked_at(pkt, off).ok_or(ParseError::TruncatedL4)?;
            ports(key, h.src_port(), h.dst_port());
            put(key, Field::TcpFlags, h.flags() as u64);
            out.layers.l4 = Some(off as u16);
            let doff = h.header_len();
            if doff < tcp::HEADER_LEN {
                return Err(ParseError::BadTcpHeader);
            }
            if off + doff > pkt.len() {
                return Err(ParseError::TruncatedL4);
            }
            Ok(())
        }
        proto::UDP => {
            let h = UdpHeader::new_checked_at(pkt, off).ok_or(ParseError::TruncatedL4)?;
            ports(key, h.src_port(), h.dst_port());
            out.layers.l4 = Some(off as u16);
            Ok(())
        }
        proto::SCTP => {
            let h = SctpHeader::new_checked_at(pkt, off).ok_or(ParseError::TruncatedL4)?;
            ports(key, h.src_port(), h.dst_port());
            out.layers.l4 = Some(off as u16);
            Ok(())
        }
        proto::ICMP if !v6 => {
            let h = IcmpHeader::new_checked_at(pkt, off).ok_or(ParseError::TruncatedL4)?;
            icmp(key, h.msg_type(), h.code());
            out.layers.l4 = Some(off as u16);
            Ok(())
        }
        proto::ICMPV6 if v6 => {
            let h = IcmpHeader::new_checked_at(pkt, off).ok_or(ParseError::TruncatedL4)?;
            let (ty, code) = (h.msg_type(), h.code());
            icmp(key, ty, code);
            out.layers.l4 = Some(off as u16);
            if (ty == nd::NS || ty == nd::NA) && code == 0 {
                nd(pkt, off, ty, key)
            } else {
                Ok(())
            }
        }
        _ => Ok(()),
    }
}

#[inline(always)]
fn ports(key: &mut FlowKey, src: u16, dst: u16) {
    put(key, Field::TpSrc, src as u64);
    put(key, Field::TpDst, dst as u64);
}

#[inline(always)]
fn icmp(key: &mut FlowKey, ty: u8, code: u8) {
    put(key, Field::IcmpType, ty as u64);
    put(key, Field::IcmpCode, code as u64);
}

/// The ND target and link-layer address options of an NS or NA at `off`.
fn nd(pkt: &[u8], off: usize, ty: u8, key: &mut FlowKey) -> Result<(), ParseError> {
    let h = NdMessage::new_checked_at(pkt, off).ok_or(ParseError::TruncatedNd)?;
    put128(key, Field::Ipv6NdTarget, h.target());
    let mut at = off + nd::HEADER_LEN;
    let mut have_ll = false;
    while at < pkt.len() {
        let o = NdOption::new_checked_at(pkt, at).ok_or(ParseError::TruncatedNd)?;
        let len = o.len_bytes();
        if len == 0 {
            return Err(ParseError::BadNdOption);
        }
        let ll_field = match (o.opt_type(), ty) {
            (nd::OPT_SOURCE_LL, nd::NS) => Some(Field::ArpSha),
            (nd::OPT_TARGET_LL, nd::NA) => Some(Field::ArpTha),
            _ => None,
        };
        if let (Some(f), nd::LL_OPT_LEN) = (ll_field, len) {
            let opt = NdLinkLayerOption::new_checked_at(pkt, at).ok_or(ParseError::TruncatedNd)?;
            if have_ll {
                return Err(ParseError::BadNdOption);
            }
            have_ll = true;
            put(key, f, mac(opt.addr()));
        } else if at + len > pkt.len() {
            return Err(ParseError::TruncatedNd);
        }
        at += len;
    }
    Ok(())
}
