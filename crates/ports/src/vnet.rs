//! The `virtio_net_hdr` that AF_PACKET sockets (PACKET_VNET_HDR) and tap devices
//! (IFF_VNET_HDR) put before every frame: the kernel's note of what the sender left to
//! the device (a partial TCP/UDP checksum, a super-frame to segment), read into and
//! written from a packet's [`Offload`] note.
//!
//! Layout (10 bytes, host byte order: what a packet socket and a tap without
//! TUNSETVNETBE use): flags (u8), gso_type (u8), hdr_len, gso_size, csum_start,
//! csum_offset (u16 each).
//!
//! Receive ([`note_from`]): a partial checksum whose place the switch finds again in
//! the frame (`datapath::rewrite::locate_l4`: TCP/UDP over IPv4/IPv6, up to two VLAN
//! tags) becomes the note; one elsewhere (an IPv6 extension header, SCTP) is finished
//! at once where the header says, so no frame leaves with it unfinished. A super-frame
//! must be TCP (or UDP_L4) the switch can find, of the kind the header names, with a
//! nonzero segment size; anything else is an error for the caller to count. Transmit
//! ([`header_for`]) derives the offsets from the frame as it is at output. Nothing here
//! panics on any input.

use datapath::packet::{Gso, GsoKind, Offload};
use datapath::rewrite::locate_l4;

/// Bytes of the header.
pub const LEN: usize = 10;

const F_NEEDS_CSUM: u8 = 1;
const GSO_NONE: u8 = 0;
const GSO_TCPV4: u8 = 1;
const GSO_TCPV6: u8 = 4;
const GSO_UDP_L4: u8 = 5;
const GSO_ECN: u8 = 0x80;

/// Why a header (with its frame) was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VnetError {
    /// Fewer than [`LEN`] bytes.
    Short,
    /// A checksum place outside the frame.
    BadChecksumPlace,
    /// A segmentation type the switch does not know (UFO), a zero segment size, or a
    /// super-frame whose headers the switch cannot find or that are not of that type.
    BadGso,
}

fn u16_at(h: &[u8], at: usize) -> u16 {
    u16::from_ne_bytes([h[at], h[at + 1]])
}

/// The note for `frame` from the header `hdr` that came with it (`None`: nothing was
/// left to do). May finish the checksum in `frame` (see the module comment).
pub fn note_from(hdr: &[u8], frame: &mut [u8]) -> Result<Option<Offload>, VnetError> {
    let hdr = hdr.get(..LEN).ok_or(VnetError::Short)?;
    let (flags, gso_type) = (hdr[0], hdr[1]);
    if flags & F_NEEDS_CSUM == 0 && gso_type == GSO_NONE {
        // The common case (nothing left to do): no look at the frame.
        return Ok(None);
    }
    let gso_size = u16_at(hdr, 4);
    let (csum_start, csum_offset) = (usize::from(u16_at(hdr, 6)), usize::from(u16_at(hdr, 8)));
    let span = locate_l4(frame);
    let mut partial = false;
    if flags & F_NEEDS_CSUM != 0 {
        let at = csum_start + csum_offset;
        if at + 2 > frame.len() {
            return Err(VnetError::BadChecksumPlace);
        }
        if span.is_some_and(|s| s.l4 == csum_start && s.csum_at == at) {
            partial = true;
        } else {
            // A place the output side could not find again: finish it now, as the
            // device would (the field holds the pseudo-header's sum).
            let check = !datapath::rewrite::ones_complement_sum(&frame[csum_start..]);
            frame[at..at + 2].copy_from_slice(&check.to_be_bytes());
        }
    }
    let gso = match gso_type & !GSO_ECN {
        GSO_NONE => None,
        t @ (GSO_TCPV4 | GSO_TCPV6 | GSO_UDP_L4) => {
            let (kind, ok) = match t {
                GSO_TCPV4 => (GsoKind::TcpV4, span.is_some_and(|s| s.tcp && !s.v6)),
                GSO_TCPV6 => (GsoKind::TcpV6, span.is_some_and(|s| s.tcp && s.v6)),
                _ => (GsoKind::Udp, span.is_some_and(|s| !s.tcp)),
            };
            if !ok || gso_size == 0 || !partial {
                return Err(VnetError::BadGso);
            }
            Some(Gso { kind, size: gso_size, ecn: gso_type & GSO_ECN != 0 })
        }
        // GSO_UDP (UFO, which the kernel no longer makes) and unknown types.
        _ => return Err(VnetError::BadGso),
    };
    Ok((partial || gso.is_some()).then_some(Offload { partial_csum: partial, gso }))
}

/// The header to send before `frame`, whose note is `note`: all zeroes without one;
/// else the checksum place and segmentation found in the frame as it is now. `None`
/// when the note cannot be honoured (the frame no longer has the TCP/UDP header it
/// needs, e.g. under a pushed MPLS label): the caller drops and counts the frame.
pub fn header_for(note: Option<Offload>, frame: &[u8]) -> Option<[u8; LEN]> {
    let mut h = [0u8; LEN];
    let Some(note) = note else {
        return Some(h);
    };
    let s = locate_l4(frame)?;
    if note.partial_csum {
        h[0] = F_NEEDS_CSUM;
        h[6..8].copy_from_slice(&u16::try_from(s.l4).ok()?.to_ne_bytes());
        h[8..10].copy_from_slice(&u16::try_from(s.csum_at - s.l4).ok()?.to_ne_bytes());
    }
    h[2..4].copy_from_slice(&u16::try_from(s.hdr_end).ok()?.to_ne_bytes());
    if let Some(g) = note.gso {
        let t = match g.kind {
            GsoKind::TcpV4 if s.tcp && !s.v6 => GSO_TCPV4,
            GsoKind::TcpV6 if s.tcp && s.v6 => GSO_TCPV6,
            GsoKind::Udp if !s.tcp => GSO_UDP_L4,
            _ => return None,
        };
        h[1] = t | if g.ecn { GSO_ECN } else { 0 };
        h[4..6].copy_from_slice(&g.size.to_ne_bytes());
    }
    Some(h)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// UFO, which the kernel no longer makes.
    const GSO_UDP: u8 = 3;

    /// An Ethernet/IPv4/TCP (or UDP) frame with `payload` bytes; the checksum field
    /// holds `csum`.
    fn frame(tcp: bool, payload: usize, csum: u16) -> Vec<u8> {
        let l4len = if tcp { 20 } else { 8 } + payload;
        let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00];
        let total = (20 + l4len) as u16;
        f.extend_from_slice(&[0x45, 0, (total >> 8) as u8, total as u8, 0, 1, 0x40, 0]);
        f.extend_from_slice(&[64, if tcp { 6 } else { 17 }, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2]);
        if tcp {
            f.extend_from_slice(&[0x30, 0x39, 0, 80, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x10]);
            f.extend_from_slice(&[0xff, 0xff]);
            f.extend_from_slice(&csum.to_be_bytes());
            f.extend_from_slice(&[0, 0]);
        } else {
            f.extend_from_slice(&[0x30, 0x39, 0, 53, (l4len >> 8) as u8, l4len as u8]);
            f.extend_from_slice(&csum.to_be_bytes());
        }
        f.extend((0..payload).map(|i| i as u8));
        f
    }

    fn hdr(flags: u8, gso: u8, hdr_len: u16, size: u16, start: u16, off: u16) -> [u8; LEN] {
        let mut h = [0u8; LEN];
        h[0] = flags;
        h[1] = gso;
        h[2..4].copy_from_slice(&hdr_len.to_ne_bytes());
        h[4..6].copy_from_slice(&size.to_ne_bytes());
        h[6..8].copy_from_slice(&start.to_ne_bytes());
        h[8..10].copy_from_slice(&off.to_ne_bytes());
        h
    }

    #[test]
    fn headers_become_notes_and_notes_become_the_same_headers() {
        let mut f = frame(true, 3000, 0x1234);
        let tso = hdr(F_NEEDS_CSUM, GSO_TCPV4 | GSO_ECN, 54, 1448, 34, 16);
        let note = note_from(&tso, &mut f).unwrap().unwrap();
        assert_eq!(
            note,
            Offload {
                partial_csum: true,
                gso: Some(Gso { kind: GsoKind::TcpV4, size: 1448, ecn: true })
            }
        );
        assert_eq!(header_for(Some(note), &f), Some(tso));

        let mut u = frame(false, 100, 0x4321);
        let csum = hdr(F_NEEDS_CSUM, GSO_NONE, 42, 0, 34, 6);
        let note = note_from(&csum, &mut u).unwrap().unwrap();
        assert_eq!(note, Offload { partial_csum: true, gso: None });
        assert_eq!(header_for(Some(note), &u), Some(csum));
        assert_eq!(note_from(&[0u8; LEN], &mut u), Ok(None));
        assert_eq!(header_for(None, &u), Some([0u8; LEN]));
    }

    #[test]
    fn a_checksum_place_the_switch_cannot_find_again_is_finished_at_once() {
        // The header names the UDP checksum, but the frame says IP protocol 99.
        let mut f = frame(false, 11, 0);
        f[14 + 9] = 99;
        let h = hdr(F_NEEDS_CSUM, GSO_NONE, 0, 0, 34, 6);
        assert_eq!(note_from(&h, &mut f), Ok(None));
        assert_eq!(
            datapath::rewrite::ones_complement_sum(&f[34..]),
            0xffff,
            "the segment now sums to all ones"
        );
    }

    #[test]
    fn bad_headers_are_errors_never_panics() {
        let mut f = frame(true, 100, 0);
        assert_eq!(note_from(&[0u8; 9], &mut f), Err(VnetError::Short));
        let cases = [
            (hdr(F_NEEDS_CSUM, 0, 0, 0, 60_000, 16), VnetError::BadChecksumPlace),
            (hdr(F_NEEDS_CSUM, 0, 0, 0, 34, u16::MAX), VnetError::BadChecksumPlace),
            (hdr(F_NEEDS_CSUM, GSO_UDP, 0, 1000, 34, 16), VnetError::BadGso),
            (hdr(F_NEEDS_CSUM, 9, 0, 1000, 34, 16), VnetError::BadGso),
            (hdr(F_NEEDS_CSUM, GSO_TCPV4, 0, 0, 34, 16), VnetError::BadGso),
            (hdr(F_NEEDS_CSUM, GSO_TCPV6, 0, 1000, 34, 16), VnetError::BadGso),
            (hdr(F_NEEDS_CSUM, GSO_UDP_L4, 0, 1000, 34, 16), VnetError::BadGso),
            (hdr(0, GSO_TCPV4, 0, 1000, 0, 0), VnetError::BadGso),
        ];
        for (h, e) in cases {
            let mut g = f.clone();
            assert_eq!(note_from(&h, &mut g), Err(e), "{h:?}");
        }
        // A note on a frame without the headers it needs gives no header.
        let arp = [0u8; 60];
        let note = Offload { partial_csum: true, gso: None };
        assert_eq!(header_for(Some(note), &arp), None);
    }

    proptest::proptest! {
        #[test]
        fn random_headers_and_frames_never_panic(
            h in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..12),
            mut f in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200),
        ) {
            if let Ok(note) = note_from(&h, &mut f) {
                let _ = header_for(note, &f);
            }
        }
    }
}
