//! Software TCP segmentation: cutting a TCP frame too long for the output into frames
//! that fit, as the kernel's GSO (or a NIC's TSO) would have.
//!
//! A host that leaves segmentation to its interface (a veth's default: TSO on) hands it
//! TCP "super-frames" of up to 64 KiB; a switch port that takes frames as bytes (AF_XDP
//! in generic mode) receives them whole and must cut them before sending them out of a
//! port whose MTU they exceed. [`segment_tcp`] does that for IPv4 (options copied) and
//! IPv6 (no extension headers) TCP behind at most two VLAN tags. Every segment carries
//! the frame's headers with:
//! - IPv4: total length, ID `id + i`, header checksum recomputed; IPv6: payload length;
//! - TCP: sequence number advanced by the bytes before it, FIN and PSH only on the last
//!   segment, CWR only on the first, the checksum computed over the whole segment.
//!
//! Invariants: nothing is written to `out` unless the whole frame could be cut (the
//! input is checked first, so a malformed frame gives an error and never a panic); each
//! segment's frame is at most `max_frame` bytes and its IP packet at most `mtu` bytes;
//! the segments' payloads, in order, are the frame's TCP payload. Segments are built in
//! packets taken from the caller's pool (allocating only when the pool is empty or a
//! buffer must grow). IP fragmentation (UDP or other protocols) is not done here.

use headers::ethertype::is_vlan;
use headers::{ethernet, ipv4, ipv6, tcp, vlan};
use headers::{Ipv4Header, Ipv6Header, TcpHeader};

use super::checksum::{fold, sum};
use super::{at, ethertype, proto};
use crate::packet::Packet;

/// Why a frame was not cut (nothing was written to `out`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SegmentError {
    /// The frame is no longer than `max_frame`: it needs no cutting.
    Fits,
    /// Not a frame this cuts: not IPv4/IPv6, not TCP, an IPv4 fragment, or IPv6 with
    /// extension headers.
    NotTcp,
    /// Headers that contradict each other or the frame (lengths past its end, header
    /// lengths too small, an IPv6 jumbogram).
    Malformed,
    /// The headers leave no room for payload within `mtu` and `max_frame`.
    TooSmall,
}

/// Where the headers of a TCP frame are: L3 start, L4 start, payload start, end of the
/// IP packet; and whether it is IPv4.
struct Layout {
    l3: usize,
    l4: usize,
    payload: usize,
    end: usize,
    v4: bool,
}

/// The layout of `frame` if it is an unfragmented IPv4/IPv6 TCP frame with all its
/// headers inside it.
fn layout(frame: &[u8]) -> Result<Layout, SegmentError> {
    let ethertype_at = |at: usize| ethernet::ethertype_at(frame, at).ok_or(SegmentError::Malformed);
    let mut et_at = ethernet::field::ETHERTYPE.start;
    let mut ety = ethertype_at(et_at)?;
    for _ in 0..2 {
        if !is_vlan(ety) {
            break;
        }
        et_at += vlan::TAG_LEN;
        ety = ethertype_at(et_at)?;
    }
    let l3 = et_at + ethernet::field::ETHERTYPE.len();
    let (l4, end, v4) = match ety {
        ethertype::IPV4 => {
            let ip = Ipv4Header::new_checked_at(frame, l3).ok_or(SegmentError::Malformed)?;
            let ihl = ip.header_len();
            if ip.version() != ipv4::VERSION || ihl < ipv4::HEADER_LEN {
                return Err(SegmentError::Malformed);
            }
            if ip.protocol() != proto::TCP || ip.is_fragment() {
                return Err(SegmentError::NotTcp);
            }
            let total = usize::from(ip.total_len());
            if total < ihl {
                return Err(SegmentError::Malformed);
            }
            (l3 + ihl, l3 + total, true)
        }
        ethertype::IPV6 => {
            let ip = Ipv6Header::new_checked_at(frame, l3).ok_or(SegmentError::Malformed)?;
            if ip.version() != ipv6::VERSION {
                return Err(SegmentError::Malformed);
            }
            if ip.next_header() != proto::TCP {
                return Err(SegmentError::NotTcp);
            }
            let payload = usize::from(ip.payload_len());
            if payload == 0 {
                // A jumbogram (hop-by-hop option) or nothing at all.
                return Err(SegmentError::Malformed);
            }
            let l4 = l3 + ipv6::HEADER_LEN;
            (l4, l4 + payload, false)
        }
        _ => return Err(SegmentError::NotTcp),
    };
    if end > frame.len() || l4 + tcp::HEADER_LEN > end {
        return Err(SegmentError::Malformed);
    }
    let th = TcpHeader::new_checked_at(frame, l4).ok_or(SegmentError::Malformed)?;
    let doff = th.header_len();
    if doff < tcp::HEADER_LEN || l4 + doff > end {
        return Err(SegmentError::Malformed);
    }
    Ok(Layout { l3, l4, payload: l4 + doff, end, v4 })
}

/// TCP flags that only the first (CWR) or the last (FIN, PSH) segment keeps.
const CWR: u16 = tcp::flags::CWR;
const FIN_PSH: u16 = tcp::flags::FIN | tcp::flags::PSH;

/// Cuts `frame`, an IPv4/IPv6 TCP frame longer than `max_frame`, into segments whose
/// frames are at most `max_frame` bytes and whose IP packets are at most `mtu` bytes,
/// appended to `out` in packets taken from `pool`. Returns how many. See the module
/// comment; on error `out` and `pool` are unchanged.
pub fn segment_tcp(
    frame: &[u8],
    mtu: usize,
    max_frame: usize,
    pool: &mut Vec<Packet>,
    out: &mut Vec<Packet>,
) -> Result<usize, SegmentError> {
    if frame.len() <= max_frame {
        return Err(SegmentError::Fits);
    }
    let Layout { l3, l4, payload, end, v4 } = layout(frame)?;
    let mss = max_frame.saturating_sub(payload).min(mtu.saturating_sub(payload - l3));
    if mss == 0 {
        return Err(SegmentError::TooSmall);
    }
    let headers = &frame[..payload];
    let data = &frame[payload..end];
    let seq = TcpHeader::new_checked_at(frame, l4).map_or(0, |t| t.seq_number());
    // The IPv4 identification (IPv4 only: the segments get id, id + 1, ...).
    let id = Ipv4Header::new_checked_at(frame, l3).map_or(0, |ip| ip.ident());
    let addrs = if v4 { at(l3, ipv4::field::ADDRS) } else { at(l3, ipv6::field::ADDRS) };
    let addr_sum = u64::from(sum(&frame[addrs]));
    // A frame with no payload (only padding made it long) still gives one segment.
    let n = data.len().div_ceil(mss).max(1);
    out.reserve(n);
    for i in 0..n {
        let chunk = &data[(i * mss).min(data.len())..((i + 1) * mss).min(data.len())];
        let mut p = pool.pop().unwrap_or_default();
        p.refill(headers);
        p.extend_from_slice(chunk);
        let d = p.data_mut();
        // Lengths fit 16 bits: each is at most the original's. The layout was checked
        // on the frame, whose headers each segment copies: every view is there.
        let ip_len = (payload - l3 + chunk.len()) as u16;
        if v4 {
            if let Some(mut ip) = Ipv4Header::new_checked_at_mut(d, l3) {
                ip.set_total_len(ip_len);
                ip.set_ident(id.wrapping_add(i as u16));
                ip.set_checksum(0);
            }
            let check = !sum(&d[l3..l4]);
            if let Some(mut ip) = Ipv4Header::new_checked_at_mut(d, l3) {
                ip.set_checksum(check);
            }
        } else if let Some(mut ip) = Ipv6Header::new_checked_at_mut(d, l3) {
            ip.set_payload_len(ip_len - ipv6::HEADER_LEN as u16);
        }
        if let Some(mut t) = TcpHeader::new_checked_at_mut(d, l4) {
            t.set_seq_number(seq.wrapping_add((i * mss) as u32));
            let mut flags = t.flags();
            if i + 1 < n {
                flags &= !FIN_PSH;
            }
            if i > 0 {
                flags &= !CWR;
            }
            t.set_flags(flags);
            t.set_checksum(0);
        }
        let tcp_len = d.len() - l4;
        let pseudo = addr_sum + u64::from(proto::TCP) + tcp_len as u64;
        let check = !fold(pseudo + u64::from(sum(&d[l4..])));
        if let Some(mut t) = TcpHeader::new_checked_at_mut(d, l4) {
            t.set_checksum(check);
        }
        out.push(p);
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Independent one's-complement sum (plain loop, no shared code with the module).
    fn ones(bytes: &[u8]) -> u32 {
        let mut acc: u32 = 0;
        for (i, b) in bytes.iter().enumerate() {
            acc += if i % 2 == 0 { u32::from(*b) << 8 } else { u32::from(*b) };
        }
        while acc > 0xffff {
            acc = (acc & 0xffff) + (acc >> 16);
        }
        acc
    }

    fn csum(parts: &[&[u8]]) -> u16 {
        let mut acc = 0u32;
        for p in parts {
            acc += ones(p);
        }
        while acc > 0xffff {
            acc = (acc & 0xffff) + (acc >> 16);
        }
        !(acc as u16)
    }

    /// What a test frame is made of.
    #[derive(Clone)]
    struct Spec {
        v6: bool,
        vlans: usize,
        ip_options: Vec<u8>,
        tcp_options: Vec<u8>,
        seq: u32,
        id: u16,
        flags: u8,
    }

    impl Default for Spec {
        fn default() -> Self {
            Spec {
                v6: false,
                vlans: 0,
                ip_options: Vec::new(),
                tcp_options: Vec::new(),
                seq: 1000,
                id: 7,
                flags: 0x10,
            }
        }
    }

    /// A correct Ethernet/[VLAN]/IP/TCP frame with `payload`, built by hand.
    fn build(s: &Spec, payload: &[u8]) -> Vec<u8> {
        let mut f = vec![0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2];
        for _ in 0..s.vlans {
            f.extend_from_slice(&[0x81, 0x00, 0x00, 0x2a]);
        }
        let tcp_len = 20 + s.tcp_options.len() + payload.len();
        let mut tcp = Vec::new();
        tcp.extend_from_slice(&[0x30, 0x39, 0x14, 0x51]);
        tcp.extend_from_slice(&s.seq.to_be_bytes());
        tcp.extend_from_slice(&0x0102_0304u32.to_be_bytes());
        tcp.push((((20 + s.tcp_options.len()) / 4) << 4) as u8);
        tcp.push(s.flags);
        tcp.extend_from_slice(&[0xff, 0xff, 0, 0, 0, 0]);
        tcp.extend_from_slice(&s.tcp_options);
        tcp.extend_from_slice(payload);
        let len_bytes = (tcp_len as u32).to_be_bytes();
        if s.v6 {
            f.extend_from_slice(&[0x86, 0xdd]);
            let src = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
            let dst = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];
            let check = csum(&[&src, &dst, &len_bytes, &[0, 0, 0, 6], &tcp]);
            tcp[16..18].copy_from_slice(&check.to_be_bytes());
            f.extend_from_slice(&[0x60, 0, 0, 0]);
            f.extend_from_slice(&(tcp_len as u16).to_be_bytes());
            f.extend_from_slice(&[6, 64]);
            f.extend_from_slice(&src);
            f.extend_from_slice(&dst);
        } else {
            f.extend_from_slice(&[0x08, 0x00]);
            let ihl = 20 + s.ip_options.len();
            let mut ip = vec![(0x40 | (ihl / 4)) as u8, 0];
            ip.extend_from_slice(&((ihl + tcp_len) as u16).to_be_bytes());
            ip.extend_from_slice(&s.id.to_be_bytes());
            ip.extend_from_slice(&[0x40, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2]);
            ip.extend_from_slice(&s.ip_options);
            let check = csum(&[&ip]);
            ip[10..12].copy_from_slice(&check.to_be_bytes());
            let check = csum(&[&ip[12..20], &len_bytes, &[0, 0, 0, 6], &tcp]);
            tcp[16..18].copy_from_slice(&check.to_be_bytes());
            f.extend_from_slice(&ip);
        }
        f.extend_from_slice(&tcp);
        f
    }

    fn payload(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i * 31 + 7) as u8).collect()
    }

    /// The segments `frame` (built from `s` and `data`) must become, built by hand.
    fn expected(s: &Spec, data: &[u8], mss: usize) -> Vec<Vec<u8>> {
        let chunks: Vec<&[u8]> = data.chunks(mss).collect();
        let n = chunks.len();
        chunks
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let mut flags = s.flags;
                if i + 1 < n {
                    flags &= !0x09;
                }
                if i > 0 {
                    flags &= !0x80;
                }
                let seg = Spec {
                    seq: s.seq.wrapping_add((i * mss) as u32),
                    id: s.id.wrapping_add(i as u16),
                    flags,
                    ..s.clone()
                };
                build(&seg, c)
            })
            .collect()
    }

    fn cut(frame: &[u8], mtu: usize, max_frame: usize) -> Result<Vec<Vec<u8>>, SegmentError> {
        let mut pool = Vec::new();
        let mut out = Vec::new();
        let r = segment_tcp(frame, mtu, max_frame, &mut pool, &mut out);
        match r {
            Ok(n) => {
                assert_eq!(n, out.len());
                Ok(out.iter().map(|p| p.data().to_vec()).collect())
            }
            Err(e) => {
                assert!(out.is_empty());
                Err(e)
            }
        }
    }

    #[test]
    fn ipv4_super_frame_becomes_byte_exact_segments() {
        let s = Spec {
            flags: 0x80 | 0x10 | 0x08 | 0x01, // CWR ACK PSH FIN
            ..Spec::default()
        };
        let data = payload(7240);
        let frame = build(&s, &data);
        // MTU 1500 on an untagged port: 1460 bytes of payload per segment.
        let got = cut(&frame, 1500, 1518).unwrap();
        let want = expected(&s, &data, 1460);
        assert_eq!(got.len(), 5);
        assert_eq!(got, want);
        for g in &got {
            assert!(g.len() <= 1514);
            // Checksums verify with the independent sum.
            assert_eq!(csum(&[&g[14..34]]), 0);
            let tcp_len = (g.len() - 34) as u32;
            assert_eq!(csum(&[&g[26..34], &tcp_len.to_be_bytes(), &[0, 0, 0, 6], &g[34..]]), 0);
        }
        // Flags: CWR on the first only, FIN and PSH on the last only, ACK on all.
        assert_eq!(got[0][34 + 13], 0x90);
        assert_eq!(got[1][34 + 13], 0x10);
        assert_eq!(got[4][34 + 13], 0x19);
        // Sequence numbers and IDs.
        for (i, g) in got.iter().enumerate() {
            let seq = u32::from_be_bytes(g[38..42].try_into().unwrap());
            assert_eq!(seq, 1000 + 1460 * i as u32);
            assert_eq!(u16::from_be_bytes([g[18], g[19]]), 7 + i as u16);
        }
    }

    #[test]
    fn ipv6_vlan_and_options_are_copied() {
        let cases = [
            Spec {
                v6: true,
                tcp_options: vec![1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2],
                ..Spec::default()
            },
            Spec {
                vlans: 1,
                ip_options: vec![1, 1, 1, 0],
                tcp_options: vec![1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2],
                ..Spec::default()
            },
            Spec { v6: true, vlans: 2, ..Spec::default() },
        ];
        for s in cases {
            let data = payload(65000 - 100);
            let frame = build(&s, &data);
            let hdr = frame.len() - data.len();
            let l2 = 14 + 4 * s.vlans;
            let (mtu, max_frame) = (1500, 1518);
            let mss = (max_frame - hdr).min(mtu - (hdr - l2));
            let got = cut(&frame, mtu, max_frame).unwrap();
            assert_eq!(got, expected(&s, &data, mss), "v6 {} vlans {}", s.v6, s.vlans);
            for g in &got {
                assert!(g.len() <= max_frame && g.len() - l2 <= mtu);
            }
        }
    }

    #[test]
    fn the_limit_is_exact() {
        let s = Spec::default();
        let at_limit = build(&s, &payload(1460));
        assert_eq!(at_limit.len(), 1514);
        assert_eq!(cut(&at_limit, 1500, 1514), Err(SegmentError::Fits));
        // One byte over: two segments, the second with one byte.
        let over = build(&s, &payload(1461));
        let got = cut(&over, 1500, 1514).unwrap();
        assert_eq!(got, expected(&s, &payload(1461), 1460));
        assert_eq!(got[1].len(), 55);
        // The MTU can be the tighter limit.
        let got = cut(&over, 1000, 1514).unwrap();
        assert_eq!(got, expected(&s, &payload(1461), 960));
    }

    #[test]
    fn sequence_numbers_wrap() {
        let s = Spec { seq: u32::MAX - 100, id: u16::MAX, ..Spec::default() };
        let data = payload(3000);
        let got = cut(&build(&s, &data), 1500, 1514).unwrap();
        assert_eq!(got, expected(&s, &data, 1460));
        assert_eq!(u32::from_be_bytes(got[1][38..42].try_into().unwrap()), 1359);
        assert_eq!(u16::from_be_bytes([got[1][18], got[1][19]]), 0);
    }

    #[test]
    fn other_frames_are_refused_untouched() {
        let s = Spec::default();
        let good = build(&s, &payload(3000));
        let mut udp = good.clone();
        udp[14 + 9] = 17;
        assert_eq!(cut(&udp, 1500, 1514), Err(SegmentError::NotTcp));
        let mut frag = good.clone();
        frag[14 + 6] = 0x20;
        assert_eq!(cut(&frag, 1500, 1514), Err(SegmentError::NotTcp));
        let mut arp = good.clone();
        arp[12..14].copy_from_slice(&[0x08, 0x06]);
        assert_eq!(cut(&arp, 1500, 1514), Err(SegmentError::NotTcp));
        let mut ext = build(&Spec { v6: true, ..Spec::default() }, &payload(3000));
        ext[14 + 6] = 0; // hop-by-hop options header
        assert_eq!(cut(&ext, 1500, 1514), Err(SegmentError::NotTcp));
        // IP total length past the frame's end; TCP header length too small.
        let mut long = good.clone();
        long[16..18].copy_from_slice(&4000u16.to_be_bytes());
        assert_eq!(cut(&long, 1500, 1514), Err(SegmentError::Malformed));
        let mut doff = good.clone();
        doff[34 + 12] = 0x40;
        assert_eq!(cut(&doff, 1500, 1514), Err(SegmentError::Malformed));
        // Headers alone fill the limit.
        assert_eq!(cut(&good, 40, 1514), Err(SegmentError::TooSmall));
        assert_eq!(cut(&good, 1500, 54), Err(SegmentError::TooSmall));
    }

    #[test]
    fn trailing_padding_is_not_payload() {
        let s = Spec::default();
        let data = payload(2000);
        let mut frame = build(&s, &data);
        frame.extend_from_slice(&[0xee; 30]);
        assert_eq!(cut(&frame, 1500, 1514).unwrap(), expected(&s, &data, 1460));
        // A payload-less frame made long by padding: its headers alone.
        let mut bare = build(&s, &[]);
        bare.extend_from_slice(&[0; 2000]);
        assert_eq!(cut(&bare, 1500, 1514).unwrap(), vec![build(&s, &[])]);
    }

    #[test]
    fn segments_reuse_pool_packets() {
        let frame = build(&Spec::default(), &payload(5000));
        let mut pool: Vec<Packet> = (0..8).map(|_| Packet::from_slice(&[0u8; 2000])).collect();
        let mut out = Vec::new();
        assert_eq!(segment_tcp(&frame, 1500, 1514, &mut pool, &mut out), Ok(4));
        assert_eq!(pool.len(), 4);
        assert_eq!(out.len(), 4);
    }

    #[test]
    fn every_truncation_is_refused_without_panic() {
        for s in [Spec::default(), Spec { v6: true, vlans: 1, ..Spec::default() }] {
            let frame = build(&s, &payload(2000));
            for len in 0..frame.len() {
                let r = cut(&frame[..len], 1500, 100);
                assert!(r.is_err(), "cut at {len}: {r:?}");
            }
        }
    }

    /// Checks what holds for any successful cut: limits, checksums, payload order.
    fn check_segments(frame: &[u8], mtu: usize, max_frame: usize, segs: &[Vec<u8>]) {
        let lay = layout(frame).unwrap();
        let mut joined = Vec::new();
        for g in segs {
            assert!(g.len() <= max_frame);
            assert!(g.len() - lay.l3 <= mtu);
            assert_eq!(g[..lay.l3], frame[..lay.l3]);
            let addrs = if lay.v4 {
                assert_eq!(csum(&[&g[lay.l3..lay.l4]]), 0);
                &g[lay.l3 + 12..lay.l3 + 20]
            } else {
                &g[lay.l3 + 8..lay.l3 + 40]
            };
            let tcp_len = ((g.len() - lay.l4) as u32).to_be_bytes();
            assert_eq!(csum(&[addrs, &tcp_len, &[0, 0, 0, 6], &g[lay.l4..]]), 0);
            joined.extend_from_slice(&g[lay.payload..]);
        }
        assert_eq!(joined, frame[lay.payload..lay.end]);
    }

    proptest! {
        #[test]
        fn any_tcp_frame_cuts_correctly(
            v6 in any::<bool>(),
            vlans in 0usize..3,
            ip_opt_words in 0usize..4,
            tcp_opt_words in 0usize..10,
            len in 0usize..9000,
            seq in any::<u32>(),
            id in any::<u16>(),
            flags in any::<u8>(),
            mtu in 60usize..9000,
            extra in 0usize..40,
        ) {
            let s = Spec {
                v6,
                vlans,
                ip_options: if v6 { Vec::new() } else { vec![1; ip_opt_words * 4] },
                tcp_options: vec![1; tcp_opt_words * 4],
                seq,
                id,
                flags,
            };
            let data = payload(len);
            let frame = build(&s, &data);
            let max_frame = mtu + extra;
            match cut(&frame, mtu, max_frame) {
                Ok(segs) => {
                    check_segments(&frame, mtu, max_frame, &segs);
                    let hdr = frame.len() - data.len();
                    let mss = (max_frame - hdr).min(mtu - (hdr - 14 - 4 * vlans));
                    if !data.is_empty() {
                        prop_assert_eq!(segs, expected(&s, &data, mss));
                    }
                }
                Err(SegmentError::Fits) => prop_assert!(frame.len() <= max_frame),
                Err(SegmentError::TooSmall) => {}
                Err(e) => prop_assert!(false, "unexpected {:?}", e),
            }
        }

        #[test]
        fn random_bytes_never_panic(
            mut bytes in proptest::collection::vec(any::<u8>(), 0..3000),
            kind in 0u8..3,
            mtu in 0usize..2000,
            max_frame in 0usize..2000,
        ) {
            // Steer some inputs past the first checks.
            if bytes.len() > 60 {
                match kind {
                    0 => {
                        bytes[12..14].copy_from_slice(&[0x08, 0x00]);
                        bytes[14] = 0x45;
                        bytes[14 + 9] = 6;
                        bytes[14 + 6] &= 0xc0;
                        bytes[14 + 7] = 0;
                    }
                    1 => {
                        bytes[12..14].copy_from_slice(&[0x86, 0xdd]);
                        bytes[14] = 0x60;
                        bytes[14 + 6] = 6;
                    }
                    _ => {}
                }
            }
            let mut pool = Vec::new();
            let mut out = Vec::new();
            if let Ok(n) = segment_tcp(&bytes, mtu, max_frame, &mut pool, &mut out) {
                prop_assert_eq!(n, out.len());
                for p in &out {
                    prop_assert!(p.len() <= max_frame);
                }
            }
        }
    }
}
