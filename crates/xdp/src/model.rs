//! A Rust model of the fast-path program (bpf/fastpath.c): which frames it parses into
//! which key ([`parse`], step 2 of the program) and the bytes its rewrites produce
//! ([`apply`], step 4). User space uses it to check a decision before installing it;
//! tests use it to check the program (under BPF_PROG_TEST_RUN) and the program's
//! agreement with the userspace parser and rewrites.
//!
//! Invariant: for every frame, `parse` returns `Some` exactly when the program parses
//! the frame, with the key the program builds, and `apply` returns `None` exactly when
//! the program reports REWRITE_FAILED, else the frame the program sends.
//!
//! Header layouts come from the `headers` crate (its views and `field` offsets), the
//! same the datapath's parser and rewrites use. Where the program updates a 16-bit word
//! that holds a field (the IPv4 TOS with the version/IHL byte, the TTL with the
//! protocol), the model does the same at that field's offset.

use headers::ethertype::{
    is_vlan, ARP as ETH_P_ARP, IPV4 as ETH_P_IPV4, IPV6 as ETH_P_IPV6, MPLS as ETH_P_MPLS,
    MPLS_MCAST as ETH_P_MPLS_MC, PBB as ETH_P_PBB,
};
use headers::ip_proto::{ICMP, SCTP, TCP, UDP};
use headers::VlanTag;
use headers::{ethernet, icmp, ipv4, ipv6, mpls, tcp, udp, vlan};
use headers::{EthernetHeader, IcmpHeader, Ipv4Header, MplsEntry, TcpHeader, UdpHeader};

use crate::layout::*;

/// Where the ethertype is, or the TPID of a tag.
const ETHERTYPE_AT: usize = ethernet::field::ETHERTYPE.start;
/// Length of an ethertype field.
const ETHERTYPE_LEN: usize = ethernet::field::ETHERTYPE.end - ethernet::field::ETHERTYPE.start;
/// The shortest frame a VLAN pop, or an MPLS pop to another ethertype than MPLS's, may
/// leave (user space pads shorter ones; the program hands those to user space
/// instead).
const MIN_FRAME: usize = 60;

/// Where the parsed headers are.
#[derive(Clone, Copy, Debug, Default)]
struct Hdrs {
    /// IPv4 header offset.
    l3: Option<usize>,
    /// TCP/UDP/ICMP header offset.
    l4: Option<usize>,
    tagged: bool,
    /// The TCP/UDP checksum field holds only the pseudo-header's sum.
    partial: bool,
    /// The L4 segment's length.
    seg: usize,
    /// An MPLS frame's outermost label stack entry's offset.
    mpls: Option<usize>,
    /// Its TTL.
    mpls_ttl: u8,
    /// Popping it to IPv4 would have user space trim the frame: the bytes below it hold
    /// an IPv4 total length of 20 or more that ends before the frame does.
    trim4: bool,
    /// The same for IPv6: a payload length that, with the header's 40 bytes, ends
    /// before the frame does.
    trim6: bool,
}

fn be16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes(*b.get(at..)?.first_chunk::<2>()?))
}

/// The key the program builds for `frame` arriving on OpenFlow port `of_port`, or
/// `None` when the program sends the frame to user space before any lookup (a frame it
/// does not parse, or a TCP/UDP frame whose checksum the sender left unfinished).
pub fn parse(frame: &[u8], of_port: u32) -> Option<FpKey> {
    parse_hdrs(frame, of_port).map(|(k, _)| k)
}

fn parse_hdrs(frame: &[u8], of_port: u32) -> Option<(FpKey, Hdrs)> {
    let mut k = FpKey { in_port: of_port, ..FpKey::default() };
    let mut h = Hdrs::default();
    let eth = EthernetHeader::new_checked(frame)?;
    k.eth_dst = eth.dst();
    k.eth_src = eth.src();
    let mut ty = eth.ethertype();
    let mut l3 = ethernet::HEADER_LEN;
    if is_vlan(ty) {
        let tag = VlanTag::new_checked_at(frame, ETHERTYPE_AT)?;
        k.vlan_vid = 0x1000 | tag.vid();
        k.vlan_pcp = tag.pcp();
        ty = ethernet::ethertype_at(frame, ETHERTYPE_AT + vlan::TAG_LEN)?;
        if is_vlan(ty) {
            return None;
        }
        h.tagged = true;
        l3 += vlan::TAG_LEN;
    }
    if ty < headers::ethertype::MIN || matches!(ty, ETH_P_IPV6 | ETH_P_ARP | ETH_P_PBB) {
        return None;
    }
    k.eth_type = ty;
    if is_mpls(ty) {
        let lse = MplsEntry::new_checked_at(frame, l3)?;
        k.ipv4_src = lse.word() & FP_MPLS_LSE;
        h.mpls = Some(l3);
        h.mpls_ttl = lse.ttl();
        let below = l3 + mpls::ENTRY_LEN;
        let rest = frame.len() - below;
        h.trim4 = be16(frame, below + ipv4::field::LENGTH.start)
            .is_some_and(|n| usize::from(n) >= ipv4::HEADER_LEN && usize::from(n) < rest);
        h.trim6 = be16(frame, below + ipv6::field::PAYLOAD_LEN.start)
            .is_some_and(|n| usize::from(n) + ipv6::HEADER_LEN < rest);
        return Some((k, h));
    }
    if ty != ETH_P_IPV4 {
        return Some((k, h));
    }
    let ip = Ipv4Header::new_checked_at(frame, l3)?;
    let ihl = ip.header_len();
    if ip.version() != ipv4::VERSION || ihl < ipv4::HEADER_LEN {
        return None;
    }
    let total = usize::from(ip.total_len());
    if total < ihl || l3 + total > frame.len() {
        return None;
    }
    if ip.is_fragment() {
        return None;
    }
    k.ip_tos = ip.tos();
    k.ip_ttl = ip.ttl();
    k.ip_proto = ip.protocol();
    k.ipv4_src = ip.src_addr();
    k.ipv4_dst = ip.dst_addr();
    h.l3 = Some(l3);
    let l4 = l3 + ihl;
    let ip_end = l3 + total;
    let need = match k.ip_proto {
        TCP => tcp::HEADER_LEN,
        UDP => udp::HEADER_LEN,
        ICMP => icmp::HEADER_LEN,
        SCTP => return None,
        _ => return Some((k, h)),
    };
    if l4 + need > ip_end {
        return None;
    }
    match k.ip_proto {
        TCP => {
            let t = TcpHeader::new_checked_at(frame, l4)?;
            let doff = t.header_len();
            if doff < tcp::HEADER_LEN || l4 + doff > ip_end {
                return None;
            }
            k.tp_src = t.src_port();
            k.tp_dst = t.dst_port();
            k.tcp_flags = t.flags();
            h.partial = t.checksum() == pseudo_sum(ip.as_bytes(), total - ihl);
        }
        UDP => {
            let u = UdpHeader::new_checked_at(frame, l4)?;
            k.tp_src = u.src_port();
            k.tp_dst = u.dst_port();
            h.partial = u.checksum() == pseudo_sum(ip.as_bytes(), total - ihl);
        }
        _ => {
            let i = IcmpHeader::new_checked_at(frame, l4)?;
            k.tp_src = u16::from(i.msg_type());
            k.tp_dst = u16::from(i.code());
        }
    }
    h.l4 = Some(l4);
    h.seg = total - ihl;
    Some((k, h))
}

/// The folded sum of the IPv4 pseudo-header of an L4 segment of `len` bytes: what a
/// sender that leaves the checksum to the device puts in the field (the program sends
/// such frames a mark, and finishes their checksum on a hit).
fn pseudo_sum(ip: &[u8], len: usize) -> u16 {
    let Some(ip) = Ipv4Header::new_checked(ip) else {
        return 0;
    };
    let words = |a: u32| u64::from(a >> 16) + u64::from(a & 0xffff);
    fold(words(ip.src_addr()) + words(ip.dst_addr()) + u64::from(ip.protocol()) + len as u64)
}

/// Folds a sum of 16-bit words to 16 bits (end-around carry).
fn fold(mut acc: u64) -> u16 {
    while acc >> 16 != 0 {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

/// The delta of rewriting words `old` to `new`: `!sum(old) + sum(new)`.
fn delta(old: &[u16], new: &[u16]) -> u64 {
    let s = |w: &[u16]| fold(w.iter().map(|&x| u64::from(x)).sum());
    u64::from(!s(old)) + u64::from(s(new))
}

fn apply_delta(hc: u16, d: u64) -> u16 {
    !fold(u64::from(!hc) + d)
}

fn put16(f: &mut [u8], at: usize, v: u16) -> Option<()> {
    f.get_mut(at..at + 2)?.copy_from_slice(&v.to_be_bytes());
    Some(())
}

fn csum(f: &mut [u8], at: usize, d: u64) -> Option<()> {
    let hc = be16(f, at)?;
    put16(f, at, apply_delta(hc, d))
}

fn csum_udp(f: &mut [u8], at: usize, d: u64) -> Option<()> {
    let hc = be16(f, at)?;
    if hc == 0 {
        return Some(());
    }
    match apply_delta(hc, d) {
        0 => put16(f, at, 0xffff),
        v => put16(f, at, v),
    }
}

/// The program's finish_csum: the segment's sum, complemented, into the field (a UDP
/// zero as 0xffff), unless the segment sums to 0xffff already; `None` for a segment
/// longer than [`CSUM_MAX`] (or shorter than a UDP header).
fn finish_csum(f: &mut [u8], k: &FpKey, h: &Hdrs) -> Option<()> {
    if h.seg > CSUM_MAX || h.seg < 8 {
        return None;
    }
    let l4 = h.l4?;
    let seg = f.get(l4..l4 + h.seg)?;
    let total = fold(
        seg.chunks(2)
            .map(|c| u64::from(u16::from_be_bytes([c[0], c.get(1).copied().unwrap_or(0)])))
            .sum(),
    );
    if total == 0xffff {
        return Some(());
    }
    let at = l4 + csum_at(k.ip_proto);
    match !total {
        0 if k.ip_proto == UDP => put16(f, at, 0xffff),
        c => put16(f, at, c),
    }
}

const L3_FLAGS: u32 = FP_SET_IPV4_SRC | FP_SET_IPV4_DST | FP_SET_TOS | FP_SET_TTL;
const TP_FLAGS: u32 = FP_SET_TP_SRC | FP_SET_TP_DST;
/// The MPLS rewrites of an MPLS frame's outermost entry (other than a pop).
const MPLS_ENTRY_FLAGS: u32 = FP_MPLS_SET | FP_MPLS_TTL_SET | FP_MPLS_TTL_DEC;

fn is_mpls(ty: u16) -> bool {
    headers::ethertype::is_mpls(ty)
}

/// Where a TCP (else UDP) header's checksum is.
fn csum_at(proto: u8) -> usize {
    if proto == TCP {
        tcp::field::CHECKSUM.start
    } else {
        udp::field::CHECKSUM.start
    }
}

/// Whether the MPLS rewrites of `e` apply to the frame parsed as `h` (`len` bytes)
/// as user space's do: a push onto a frame without a label stack; the rest on an
/// MPLS frame, whose TTL a decrement on the decision's path leaves above zero, and
/// whose pop needs no padding or trimming (see [`FP_MPLS_POP`]).
fn can_rewrite_mpls(e: &FpEntry, h: &Hdrs, len: usize) -> bool {
    let f = e.flags;
    if f & FP_MPLS_PUSH != 0 {
        return h.mpls.is_none();
    }
    if f & (FP_MPLS_POP | MPLS_ENTRY_FLAGS | FP_MPLS_TTL_CHECK) == 0 {
        return true;
    }
    if h.mpls.is_none() {
        return false;
    }
    if f & (FP_MPLS_TTL_DEC | FP_MPLS_TTL_CHECK) != 0 && h.mpls_ttl <= 1 {
        return false;
    }
    if f & FP_MPLS_POP == 0 {
        return true;
    }
    let pops = if f & FP_VLAN_POP != 0 { vlan::TAG_LEN + mpls::ENTRY_LEN } else { mpls::ENTRY_LEN };
    let rest = len - h.mpls.unwrap_or(0) - mpls::ENTRY_LEN;
    match e.tp_src {
        t if is_mpls(t) => {
            rest >= mpls::ENTRY_LEN && (f & FP_VLAN_POP == 0 || len - pops >= MIN_FRAME)
        }
        t => {
            len - pops >= MIN_FRAME
                && !(t == ETH_P_IPV4 && h.trim4)
                && !(t == ETH_P_IPV6 && h.trim6)
        }
    }
}

fn can_rewrite(e: &FpEntry, k: &FpKey, h: &Hdrs, len: usize) -> bool {
    let f = e.flags;
    if f & L3_FLAGS != 0 && h.l3.is_none() {
        return false;
    }
    if f & TP_FLAGS != 0 && (h.l4.is_none() || (k.ip_proto != TCP && k.ip_proto != UDP)) {
        return false;
    }
    if !can_rewrite_mpls(e, h, len) {
        return false;
    }
    let mut tagged = h.tagged;
    if f & FP_VLAN_POP != 0 {
        if !tagged || len - vlan::TAG_LEN < MIN_FRAME {
            return false;
        }
        tagged = false;
    }
    if f & FP_VLAN_PUSH != 0 {
        if tagged {
            return false;
        }
        tagged = true;
    }
    f & FP_VLAN_SET == 0 || tagged
}

/// The frame the program sends when `frame` hits `entry` (whatever port it arrived
/// on), or `None` when the program does not parse `frame` or sends it to user space
/// (REWRITE_FAILED, or PARTIAL_CSUM: an unfinished checksum it does not finish).
pub fn apply(frame: &[u8], entry: &FpEntry) -> Option<Vec<u8>> {
    let (k, h) = parse_hdrs(frame, 0)?;
    if !can_rewrite(entry, &k, &h, frame.len()) {
        return None;
    }
    let mut f = frame.to_vec();
    if h.partial {
        finish_csum(&mut f, &k, &h)?;
    }
    let e = entry;
    if e.flags & L3_FLAGS != 0 {
        let ip = h.l3?;
        let tcs = match (h.l4, k.ip_proto) {
            (Some(l4), TCP) => Some((l4 + csum_at(TCP), false)),
            (Some(l4), UDP) => Some((l4 + csum_at(UDP), true)),
            _ => None,
        };
        let ip_csum = ip + ipv4::field::CHECKSUM.start;
        let pseudo = |f: &mut [u8], d: u64| match tcs {
            Some((at, true)) => csum_udp(f, at, d),
            Some((at, false)) => csum(f, at, d),
            None => Some(()),
        };
        for (flag, at, v) in [
            (FP_SET_IPV4_SRC, ip + ipv4::field::SRC_ADDR.start, e.ipv4_src),
            (FP_SET_IPV4_DST, ip + ipv4::field::DST_ADDR.start, e.ipv4_dst),
        ] {
            if e.flags & flag != 0 {
                let old = [be16(&f, at)?, be16(&f, at + 2)?];
                let new = [(v >> 16) as u16, v as u16];
                let d = delta(&old, &new);
                put16(&mut f, at, new[0])?;
                put16(&mut f, at + 2, new[1])?;
                csum(&mut f, ip_csum, d)?;
                pseudo(&mut f, d)?;
            }
        }
        if e.flags & FP_SET_TOS != 0 {
            // The word of version/IHL (high byte) and TOS (low byte).
            let at = ip + ipv4::field::VER_IHL;
            let old = be16(&f, at)?;
            let new = (old & 0xff00) | u16::from(e.ip_tos);
            put16(&mut f, at, new)?;
            csum(&mut f, ip_csum, delta(&[old], &[new]))?;
        }
        if e.flags & FP_SET_TTL != 0 {
            // The word of TTL (high byte) and protocol (low byte).
            let at = ip + ipv4::field::TTL;
            let old = be16(&f, at)?;
            let new = (u16::from(e.ip_ttl) << 8) | (old & 0xff);
            put16(&mut f, at, new)?;
            csum(&mut f, ip_csum, delta(&[old], &[new]))?;
        }
    }
    if e.flags & TP_FLAGS != 0 {
        let l4 = h.l4?;
        let tcp = k.ip_proto == TCP;
        // TCP and UDP have their ports in the same place.
        for (flag, at, v) in [
            (FP_SET_TP_SRC, l4 + udp::field::SRC_PORT.start, e.tp_src),
            (FP_SET_TP_DST, l4 + udp::field::DST_PORT.start, e.tp_dst),
        ] {
            if e.flags & flag != 0 {
                let d = delta(&[be16(&f, at)?], &[v]);
                put16(&mut f, at, v)?;
                if tcp {
                    csum(&mut f, l4 + csum_at(TCP), d)?;
                } else {
                    csum_udp(&mut f, l4 + csum_at(UDP), d)?;
                }
            }
        }
    }
    if e.flags & FP_SET_ETH_DST != 0 {
        f.get_mut(ethernet::field::DST)?.copy_from_slice(&e.eth_dst);
    }
    if e.flags & FP_SET_ETH_SRC != 0 {
        f.get_mut(ethernet::field::SRC)?.copy_from_slice(&e.eth_src);
    }
    apply_mpls(&mut f, e, &h)?;
    // A tag sits after the MACs, where the ethertype was.
    if e.flags & FP_VLAN_POP != 0 {
        f.drain(ETHERTYPE_AT..ETHERTYPE_AT + vlan::TAG_LEN);
    }
    if e.flags & FP_VLAN_PUSH != 0 {
        let mut tag = VlanTag::new([0u8; vlan::TAG_LEN]);
        tag.set_tpid(e.vlan_tpid);
        tag.set_tci(e.vlan_tci);
        f.splice(ETHERTYPE_AT..ETHERTYPE_AT, tag.into_inner());
    }
    if e.flags & FP_VLAN_SET != 0 {
        // The DEI is kept, the rest is the entry's.
        let at = ETHERTYPE_AT + vlan::field::TCI.start;
        let tci = be16(&f, at)?;
        put16(&mut f, at, (tci & vlan::DEI) | (e.vlan_tci & !vlan::DEI))?;
    }
    Some(f)
}

/// The MPLS rewrites, once [`can_rewrite_mpls`] said yes: a push; else a pop; else
/// the outermost entry's label, TC and BoS, then its TTL set, then decremented.
fn apply_mpls(f: &mut Vec<u8>, e: &FpEntry, h: &Hdrs) -> Option<()> {
    let w = e.mpls_word();
    if e.flags & FP_MPLS_PUSH != 0 {
        // The ethertype (after the tag, if any) names the stack; the entry follows it.
        let et = if h.tagged { ETHERTYPE_AT + vlan::TAG_LEN } else { ETHERTYPE_AT };
        let ty = if e.flags & FP_MPLS_MCAST != 0 { ETH_P_MPLS_MC } else { ETH_P_MPLS };
        put16(f, et, ty)?;
        let at = et + ETHERTYPE_LEN;
        f.splice(at..at, w.to_be_bytes());
    } else if e.flags & FP_MPLS_POP != 0 {
        let at = h.mpls?;
        f.drain(at..at + mpls::ENTRY_LEN);
        put16(f, at - ETHERTYPE_LEN, e.tp_src)?;
    } else if e.flags & MPLS_ENTRY_FLAGS != 0 {
        let at = h.mpls?;
        let mut lse = MplsEntry::new_checked_at_mut(f, at)?;
        let mut w2 = lse.word();
        if e.flags & FP_MPLS_SET != 0 {
            w2 = (w2 & !FP_MPLS_LSE) | (w & FP_MPLS_LSE);
        }
        if e.flags & FP_MPLS_TTL_SET != 0 {
            w2 = (w2 & !mpls::TTL_MASK) | (w & mpls::TTL_MASK);
        }
        if e.flags & FP_MPLS_TTL_DEC != 0 {
            w2 = (w2 & !mpls::TTL_MASK) | ((w2 & mpls::TTL_MASK).wrapping_sub(1) & mpls::TTL_MASK);
        }
        lse.set_word(w2);
    }
    Some(())
}

#[cfg(test)]
mod tests;
