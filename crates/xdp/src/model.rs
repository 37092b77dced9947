//! A Rust model of the fast-path program (bpf/fastpath.c): which frames it parses into
//! which key ([`parse`], step 2 of the program) and the bytes its rewrites produce
//! ([`apply`], step 4). User space uses it to check a decision before installing it;
//! tests use it to check the program (under BPF_PROG_TEST_RUN) and the program's
//! agreement with the userspace parser and rewrites.
//!
//! Invariant: for every frame, `parse` returns `Some` exactly when the program parses
//! the frame, with the key the program builds, and `apply` returns `None` exactly when
//! the program reports REWRITE_FAILED, else the frame the program sends.

use crate::layout::*;

const ETH_P_IPV4: u16 = 0x0800;
const ETH_P_ARP: u16 = 0x0806;
const ETH_P_VLAN: u16 = 0x8100;
const ETH_P_QINQ: u16 = 0x88a8;
const ETH_P_IPV6: u16 = 0x86dd;
const ETH_P_MPLS: u16 = 0x8847;
const ETH_P_MPLS_MC: u16 = 0x8848;
const ETH_P_PBB: u16 = 0x88e7;
const TCP: u8 = 6;
const UDP: u8 = 17;
const ICMP: u8 = 1;
const SCTP: u8 = 132;
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

fn be32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(*b.get(at..)?.first_chunk::<4>()?))
}

/// The key the program builds for `frame` arriving on OpenFlow port `of_port`, or
/// `None` when the program sends the frame to user space before any lookup (a frame it
/// does not parse, or a TCP/UDP frame whose checksum the sender left unfinished).
pub fn parse(frame: &[u8], of_port: u32) -> Option<FpKey> {
    parse_hdrs(frame, of_port).map(|(k, _)| k)
}

fn parse_hdrs(frame: &[u8], of_port: u32) -> Option<(FpKey, Hdrs)> {
    let mut k = FpKey {
        in_port: of_port,
        ..FpKey::default()
    };
    let mut h = Hdrs::default();
    let eth = frame.get(..14)?;
    k.eth_dst.copy_from_slice(&eth[..6]);
    k.eth_src.copy_from_slice(&eth[6..12]);
    let mut ty = be16(frame, 12)?;
    let mut l3 = 14;
    if ty == ETH_P_VLAN || ty == ETH_P_QINQ {
        let tci = be16(frame, 14)?;
        k.vlan_vid = 0x1000 | (tci & 0x0fff);
        k.vlan_pcp = (tci >> 13) as u8;
        ty = be16(frame, 16)?;
        if ty == ETH_P_VLAN || ty == ETH_P_QINQ {
            return None;
        }
        h.tagged = true;
        l3 = 18;
    }
    if ty < 0x0600 || matches!(ty, ETH_P_IPV6 | ETH_P_ARP | ETH_P_PBB) {
        return None;
    }
    k.eth_type = ty;
    if is_mpls(ty) {
        let lse = be32(frame, l3)?;
        k.ipv4_src = lse & FP_MPLS_LSE;
        h.mpls = Some(l3);
        h.mpls_ttl = lse as u8;
        let below = l3 + 4;
        let rest = frame.len() - below;
        h.trim4 = be16(frame, below + 2).is_some_and(|n| n >= 20 && usize::from(n) < rest);
        h.trim6 = be16(frame, below + 4).is_some_and(|n| usize::from(n) + 40 < rest);
        return Some((k, h));
    }
    if ty != ETH_P_IPV4 {
        return Some((k, h));
    }
    let ip = frame.get(l3..l3 + 20)?;
    let ihl = usize::from(ip[0] & 0x0f) * 4;
    if ip[0] >> 4 != 4 || ihl < 20 {
        return None;
    }
    let total = usize::from(be16(ip, 2)?);
    if total < ihl || l3 + total > frame.len() {
        return None;
    }
    if be16(ip, 6)? & 0x3fff != 0 {
        return None;
    }
    k.ip_tos = ip[1];
    k.ip_ttl = ip[8];
    k.ip_proto = ip[9];
    k.ipv4_src = be32(ip, 12)?;
    k.ipv4_dst = be32(ip, 16)?;
    h.l3 = Some(l3);
    let l4 = l3 + ihl;
    let ip_end = l3 + total;
    let need = match k.ip_proto {
        TCP => 20,
        UDP => 8,
        ICMP => 4,
        SCTP => return None,
        _ => return Some((k, h)),
    };
    if l4 + need > ip_end {
        return None;
    }
    let t = frame.get(l4..l4 + need)?;
    match k.ip_proto {
        TCP => {
            let doff = usize::from(t[12] >> 4) * 4;
            if doff < 20 || l4 + doff > ip_end {
                return None;
            }
            k.tp_src = be16(t, 0)?;
            k.tp_dst = be16(t, 2)?;
            k.tcp_flags = be16(t, 12)? & 0x0fff;
            h.partial = be16(t, 16)? == pseudo_sum(ip, total - ihl);
        }
        UDP => {
            k.tp_src = be16(t, 0)?;
            k.tp_dst = be16(t, 2)?;
            h.partial = be16(t, 6)? == pseudo_sum(ip, total - ihl);
        }
        _ => {
            k.tp_src = u16::from(t[0]);
            k.tp_dst = u16::from(t[1]);
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
    let w = |at: usize| u64::from(u16::from_be_bytes([ip[at], ip[at + 1]]));
    fold(w(12) + w(14) + w(16) + w(18) + u64::from(ip[9]) + len as u64)
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
    let at = l4 + if k.ip_proto == TCP { 16 } else { 6 };
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
    ty == ETH_P_MPLS || ty == ETH_P_MPLS_MC
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
    let pops = if f & FP_VLAN_POP != 0 { 8 } else { 4 };
    let rest = len - h.mpls.unwrap_or(0) - 4;
    match e.tp_src {
        t if is_mpls(t) => rest >= 4 && (f & FP_VLAN_POP == 0 || len - pops >= MIN_FRAME),
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
        if !tagged || len - 4 < MIN_FRAME {
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
            (Some(l4), TCP) => Some((l4 + 16, false)),
            (Some(l4), UDP) => Some((l4 + 6, true)),
            _ => None,
        };
        let pseudo = |f: &mut [u8], d: u64| match tcs {
            Some((at, true)) => csum_udp(f, at, d),
            Some((at, false)) => csum(f, at, d),
            None => Some(()),
        };
        for (flag, at, v) in [
            (FP_SET_IPV4_SRC, ip + 12, e.ipv4_src),
            (FP_SET_IPV4_DST, ip + 16, e.ipv4_dst),
        ] {
            if e.flags & flag != 0 {
                let old = [be16(&f, at)?, be16(&f, at + 2)?];
                let new = [(v >> 16) as u16, v as u16];
                let d = delta(&old, &new);
                put16(&mut f, at, new[0])?;
                put16(&mut f, at + 2, new[1])?;
                csum(&mut f, ip + 10, d)?;
                pseudo(&mut f, d)?;
            }
        }
        if e.flags & FP_SET_TOS != 0 {
            let old = be16(&f, ip)?;
            let new = (old & 0xff00) | u16::from(e.ip_tos);
            put16(&mut f, ip, new)?;
            csum(&mut f, ip + 10, delta(&[old], &[new]))?;
        }
        if e.flags & FP_SET_TTL != 0 {
            let old = be16(&f, ip + 8)?;
            let new = (u16::from(e.ip_ttl) << 8) | (old & 0xff);
            put16(&mut f, ip + 8, new)?;
            csum(&mut f, ip + 10, delta(&[old], &[new]))?;
        }
    }
    if e.flags & TP_FLAGS != 0 {
        let l4 = h.l4?;
        let tcp = k.ip_proto == TCP;
        for (flag, at, v) in [
            (FP_SET_TP_SRC, l4, e.tp_src),
            (FP_SET_TP_DST, l4 + 2, e.tp_dst),
        ] {
            if e.flags & flag != 0 {
                let d = delta(&[be16(&f, at)?], &[v]);
                put16(&mut f, at, v)?;
                if tcp {
                    csum(&mut f, l4 + 16, d)?;
                } else {
                    csum_udp(&mut f, l4 + 6, d)?;
                }
            }
        }
    }
    if e.flags & FP_SET_ETH_DST != 0 {
        f.get_mut(..6)?.copy_from_slice(&e.eth_dst);
    }
    if e.flags & FP_SET_ETH_SRC != 0 {
        f.get_mut(6..12)?.copy_from_slice(&e.eth_src);
    }
    apply_mpls(&mut f, e, &h)?;
    if e.flags & FP_VLAN_POP != 0 {
        f.drain(12..16);
    }
    if e.flags & FP_VLAN_PUSH != 0 {
        let mut tag = [0u8; 4];
        tag[..2].copy_from_slice(&e.vlan_tpid.to_be_bytes());
        tag[2..].copy_from_slice(&e.vlan_tci.to_be_bytes());
        f.splice(12..12, tag);
    }
    if e.flags & FP_VLAN_SET != 0 {
        let tci = be16(&f, 14)?;
        put16(&mut f, 14, (tci & 0x1000) | (e.vlan_tci & 0xefff))?;
    }
    Some(f)
}

/// The MPLS rewrites, once [`can_rewrite_mpls`] said yes: a push; else a pop; else
/// the outermost entry's label, TC and BoS, then its TTL set, then decremented.
fn apply_mpls(f: &mut Vec<u8>, e: &FpEntry, h: &Hdrs) -> Option<()> {
    let w = e.mpls_word();
    if e.flags & FP_MPLS_PUSH != 0 {
        let et = if h.tagged { 16 } else { 12 };
        let ty = if e.flags & FP_MPLS_MCAST != 0 {
            ETH_P_MPLS_MC
        } else {
            ETH_P_MPLS
        };
        put16(f, et, ty)?;
        f.splice(et + 2..et + 2, w.to_be_bytes());
    } else if e.flags & FP_MPLS_POP != 0 {
        let at = h.mpls?;
        f.drain(at..at + 4);
        put16(f, at - 2, e.tp_src)?;
    } else if e.flags & MPLS_ENTRY_FLAGS != 0 {
        let at = h.mpls?;
        let mut lse = be32(f, at)?;
        if e.flags & FP_MPLS_SET != 0 {
            lse = (lse & !FP_MPLS_LSE) | (w & FP_MPLS_LSE);
        }
        if e.flags & FP_MPLS_TTL_SET != 0 {
            lse = (lse & !0xff) | (w & 0xff);
        }
        if e.flags & FP_MPLS_TTL_DEC != 0 {
            lse = (lse & !0xff) | ((lse & 0xff).wrapping_sub(1) & 0xff);
        }
        f.get_mut(at..at + 4)?.copy_from_slice(&lse.to_be_bytes());
    }
    Some(())
}

#[cfg(test)]
mod tests;
