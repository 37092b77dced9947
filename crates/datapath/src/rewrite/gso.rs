//! Doing at output what a packet's offload note left to the device, for ports that take
//! frames as bytes only (AF_XDP, pcap, memory): what the kernel's GSO and checksum help
//! would have made of the frame.
//!
//! [`resolve_offload`] turns one noted packet into finished frames: a TCP super-frame
//! into segments of the noted size (`segment_tcp`, checksums computed whole), a UDP
//! super-frame (UDP_SEGMENT) into datagrams of the noted size (`segment_udp`: each with
//! the frame's headers, its own UDP length and checksum, IPv4 total length, ID `id + i`
//! and header checksum, or IPv6 payload length), a partial checksum into the full one (`finish_partial_checksum`, at the TCP/UDP header
//! found in the frame as it is now, so pushed or popped VLAN tags do not matter). Ports
//! that take a `virtio_net_hdr` pass the note on instead and never call this.
//!
//! Invariants: every packet written to `out` carries no note and a finished checksum;
//! on error nothing is written to `out` and the packet's buffer goes back to `pool`.
//! Never panics on any frame or note.

use headers::{ip_proto, Ipv4Header, Ipv6Header, UdpHeader};

use super::checksum::{fold, sum};
use super::offload::{finish_partial_checksum, locate_l4};
use super::segment::{segment_tcp, SegmentError};
use crate::packet::{Gso, GsoKind, Offload, Packet};

/// Why a noted packet could not be finished (it is dropped; the port counts it as a
/// transmit error).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OffloadError {
    /// The note asks for a checksum or TCP segmentation, and the frame has no TCP/UDP
    /// header where the switch can find it (an MPLS label pushed on it, a frame cut
    /// short, headers that contradict the note).
    NoL4,
    /// A UDP super-frame whose datagrams would not fit the port (headers plus the
    /// noted size above `mtu` or `max_frame`), or a zero size.
    UdpTooBig,
    /// The TCP super-frame could not be cut (see [`SegmentError`]).
    Segment(SegmentError),
}

/// Appends to `out` what `p` becomes on a port without offloads whose IP packets are
/// at most `mtu` bytes and frames at most `max_frame`: `p` itself when it has no note,
/// else its finished frames (see the module comment). Returns how many were appended.
pub fn resolve_offload(
    mut p: Packet,
    mtu: usize,
    max_frame: usize,
    pool: &mut Vec<Packet>,
    out: &mut Vec<Packet>,
) -> Result<usize, OffloadError> {
    let Some(note) = p.offload() else {
        out.push(p);
        return Ok(1);
    };
    p.set_offload(None);
    let fail = |p: Packet, pool: &mut Vec<Packet>, e| {
        pool.push(p);
        Err(e)
    };
    if let Some(gso) = note.gso {
        match gso.kind {
            GsoKind::Udp => {
                return match segment_udp(&p, usize::from(gso.size), mtu, max_frame, pool, out) {
                    Ok(n) => {
                        pool.push(p);
                        Ok(n)
                    }
                    Err(e) => fail(p, pool, e),
                };
            }
            GsoKind::TcpV4 | GsoKind::TcpV6 => {
                let Some(span) = locate_l4(p.data()).filter(|s| s.tcp) else {
                    return fail(p, pool, OffloadError::NoL4);
                };
                // Segments of the noted size, within the port's limits.
                let headers = span.hdr_end;
                let seg_frame = max_frame.min(headers + usize::from(gso.size.max(1)));
                match segment_tcp(p.data(), mtu, seg_frame, pool, out) {
                    Ok(n) => {
                        pool.push(p);
                        return Ok(n);
                    }
                    // One segment's worth: only the checksum is left to do.
                    Err(SegmentError::Fits) => {}
                    Err(e) => return fail(p, pool, OffloadError::Segment(e)),
                }
            }
        }
    }
    if note.partial_csum && !finish_partial_checksum(p.data_mut()) {
        return fail(p, pool, OffloadError::NoL4);
    }
    out.push(p);
    Ok(1)
}

/// Notes an unnoted TCP frame longer than `max_frame` (one gathered whole by a backend
/// that reads no vnet header, e.g. an AF_XDP port in generic mode) for segmentation by
/// a port that passes notes to the kernel: segments of at most `mtu` bytes of IP packet
/// and `max_frame` of frame, the checksum field set to the pseudo-header's sum (what a
/// partial checksum holds), as the sender's own offload would have left it. False, with
/// nothing changed, when the frame is not such a TCP frame or already noted.
pub fn note_super_frame(p: &mut Packet, mtu: usize, max_frame: usize) -> bool {
    if p.offload().is_some() || p.len() <= max_frame {
        return false;
    }
    let Some(s) = locate_l4(p.data()).filter(|s| s.tcp) else {
        return false;
    };
    let size = max_frame.saturating_sub(s.hdr_end).min(mtu.saturating_sub(s.hdr_end - s.l3));
    let (Ok(size @ 1..), Ok(len)) = (u16::try_from(size), u32::try_from(s.end - s.l4)) else {
        return false;
    };
    let d = p.data_mut();
    let pseudo = fold(
        u64::from(sum(&d[s.addrs()]))
            + u64::from(ip_proto::TCP)
            + u64::from(len >> 16)
            + u64::from(len & 0xffff),
    );
    d[s.csum_at..s.csum_at + 2].copy_from_slice(&pseudo.to_be_bytes());
    p.set_offload(Some(Offload {
        partial_csum: true,
        gso: Some(Gso {
            kind: if s.v6 { GsoKind::TcpV6 } else { GsoKind::TcpV4 },
            size,
            ecn: false,
        }),
    }));
    true
}

/// Cuts the UDP super-frame `p` into datagrams of `size` payload bytes (the last one
/// shorter) appended to `out` in packets from `pool`; nothing is written on error.
fn segment_udp(
    p: &Packet,
    size: usize,
    mtu: usize,
    max_frame: usize,
    pool: &mut Vec<Packet>,
    out: &mut Vec<Packet>,
) -> Result<usize, OffloadError> {
    let frame = p.data();
    let Some(s) = locate_l4(frame).filter(|s| !s.tcp) else {
        return Err(OffloadError::NoL4);
    };
    let headers = s.hdr_end;
    if size == 0 || headers + size > max_frame || headers - s.l3 + size > mtu {
        return Err(OffloadError::UdpTooBig);
    }
    let data = &frame[headers..s.end];
    // The IPv4 identification (IPv4 only: the segments get id, id + 1, ...).
    let id = Ipv4Header::new_checked_at(frame, s.l3).map_or(0, |ip| ip.ident());
    let addr_sum = u64::from(sum(&frame[s.addrs()]));
    let n = data.len().div_ceil(size).max(1);
    out.reserve(n);
    for i in 0..n {
        let chunk = &data[(i * size).min(data.len())..((i + 1) * size).min(data.len())];
        let mut q = pool.pop().unwrap_or_default();
        q.refill(&frame[..headers]);
        q.extend_from_slice(chunk);
        let d = q.data_mut();
        // Lengths fit 16 bits: each is at most the original's. The headers were found
        // whole in the frame, so each segment (which copies them) has them too.
        let udp_len = (8 + chunk.len()) as u16;
        let ip_len = (headers - s.l3 + chunk.len()) as u16;
        if s.v6 {
            if let Some(mut ip) = Ipv6Header::new_checked_at_mut(d, s.l3) {
                ip.set_payload_len(udp_len);
            }
        } else if let Some(mut ip) = Ipv4Header::new_checked_at_mut(d, s.l3) {
            ip.set_total_len(ip_len);
            ip.set_ident(id.wrapping_add(i as u16));
            ip.set_checksum(0);
            let check = !sum(&d[s.l3..s.l4]);
            if let Some(mut ip) = Ipv4Header::new_checked_at_mut(d, s.l3) {
                ip.set_checksum(check);
            }
        }
        if let Some(mut u) = UdpHeader::new_checked_at_mut(d, s.l4) {
            u.set_length(udp_len);
            u.set_checksum(0);
        }
        let pseudo = addr_sum + u64::from(ip_proto::UDP) + u64::from(udp_len);
        let mut check = !fold(pseudo + u64::from(sum(&d[s.l4..])));
        if check == 0 {
            check = 0xffff;
        }
        if let Some(mut u) = UdpHeader::new_checked_at_mut(d, s.l4) {
            u.set_checksum(check);
        }
        out.push(q);
    }
    Ok(n)
}
