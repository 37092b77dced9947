//! Finishing the TCP/UDP checksum of a frame whose sender left it to the hardware.
//!
//! A host with transmit checksum offload on (a veth's default) hands its interface
//! TCP and UDP segments whose checksum field holds only the sum of the pseudo-header:
//! the rest is for the device to add (the kernel's `CHECKSUM_PARTIAL`). A switch port
//! that takes the frame as bytes (AF_XDP) no longer has the kernel's note that the sum
//! is unfinished, and a frame forwarded so arrives with a checksum the receiver rejects.
//!
//! [`finish_offloaded_checksum`] recognises such a frame by that field (it equals the
//! pseudo-header's folded sum, which a correct checksum does with chance 1/65536, and
//! then the frame is checked and left as it is) and writes the checksum the device
//! would have: over IPv4 or IPv6 without extension headers, behind at most two VLAN
//! tags, for unfragmented TCP and UDP (a UDP checksum of zero over IPv4 means none).

use headers::ethertype::{self, is_vlan};
use headers::{ethernet, ip_proto, ipv4, ipv6, tcp, udp, vlan};
use headers::{Ipv4Header, Ipv6Header, TcpHeader};

use super::at;
use super::checksum::{fold, sum};

/// Where a frame's TCP or UDP header is, found from the frame itself: the offsets a
/// `virtio_net_hdr` names and a checksum or segmentation needs. Offsets are from the
/// frame's start; `l3 < l4 < csum_at + 2 <= hdr_end <= end <= frame.len()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct L4Span {
    /// The IPv4/IPv6 header.
    pub l3: usize,
    /// The TCP/UDP header.
    pub l4: usize,
    /// The TCP/UDP checksum field.
    pub csum_at: usize,
    /// The end of the TCP header (data offset) or UDP header (8 bytes).
    pub hdr_end: usize,
    /// The end of the IP packet (what follows is padding).
    pub end: usize,
    /// TCP (else UDP).
    pub tcp: bool,
    /// IPv6 (else IPv4).
    pub v6: bool,
}

impl L4Span {
    /// Where the IP source and destination addresses are (those of the pseudo-header).
    pub fn addrs(&self) -> std::ops::Range<usize> {
        if self.v6 {
            at(self.l3, ipv6::field::ADDRS)
        } else {
            at(self.l3, ipv4::field::ADDRS)
        }
    }
}

/// The TCP/UDP layout of `frame`, if it is an unfragmented IPv4 or IPv6 (no extension
/// headers) TCP or UDP frame behind at most two VLAN tags with all its headers inside
/// it. Never panics.
pub fn locate_l4(frame: &[u8]) -> Option<L4Span> {
    let mut l3 = ethernet::HEADER_LEN;
    let mut ety = ethernet::ethertype_at(frame, ethernet::field::ETHERTYPE.start)?;
    for _ in 0..2 {
        if !is_vlan(ety) {
            break;
        }
        // A tag: its TCI is where the L3 header would be, what it carried after that.
        ety = ethernet::ethertype_at(frame, l3 + vlan::field::TCI.len())?;
        l3 += vlan::TAG_LEN;
    }
    let (proto, l4, end, v6) = match ety {
        ethertype::IPV4 => {
            let ip = Ipv4Header::new_checked_at(frame, l3)?;
            let ihl = ip.header_len();
            let total = usize::from(ip.total_len());
            if ip.version() != ipv4::VERSION
                || ihl < ipv4::HEADER_LEN
                || ip.is_fragment()
                || total < ihl
            {
                return None;
            }
            (ip.protocol(), l3 + ihl, l3 + total, false)
        }
        ethertype::IPV6 => {
            let ip = Ipv6Header::new_checked_at(frame, l3)?;
            if ip.version() != ipv6::VERSION {
                return None;
            }
            let payload = usize::from(ip.payload_len());
            let l4 = l3 + ipv6::HEADER_LEN;
            (ip.next_header(), l4, l4 + payload, true)
        }
        _ => return None,
    };
    let (csum_at, hdr_end, tcp) = match proto {
        ip_proto::TCP => {
            // The data offset is checked against the end below (a header cut short
            // fails there).
            let doff = TcpHeader::new_checked_at(frame, l4)?.header_len();
            (l4 + tcp::field::CHECKSUM.start, l4 + doff.max(tcp::HEADER_LEN), true)
        }
        ip_proto::UDP => (l4 + udp::field::CHECKSUM.start, l4 + udp::HEADER_LEN, false),
        _ => return None,
    };
    if end > frame.len() || hdr_end > end {
        return None;
    }
    Some(L4Span { l3, l4, csum_at, hdr_end, end, tcp, v6 })
}

/// The offset of the TCP/UDP checksum, the L4 segment's range, and the pseudo-header's
/// one's-complement sum, if `frame` is an unfragmented IPv4/IPv6 TCP or UDP frame whose
/// headers are all there.
fn l4_of(frame: &[u8]) -> Option<(usize, std::ops::Range<usize>, u16)> {
    let s = locate_l4(frame)?;
    let proto = u64::from(if s.tcp { ip_proto::TCP } else { ip_proto::UDP });
    let len = u32::try_from(s.end - s.l4).ok()?;
    let mut pseudo = u64::from(sum(frame.get(s.addrs())?));
    pseudo += proto + u64::from(len >> 16) + u64::from(len & 0xffff);
    Some((s.csum_at, s.l4..s.end, fold(pseudo)))
}

/// Finishes the partial TCP/UDP checksum of `frame`, whose sender is known (from the
/// packet's offload note) to have left only the pseudo-header's sum in the field: adds
/// the segment and stores the complement, as the device would have. False, with
/// nothing written, when the frame has no TCP/UDP header to finish (see [`locate_l4`]).
pub fn finish_partial_checksum(frame: &mut [u8]) -> bool {
    let Some(s) = locate_l4(frame) else {
        return false;
    };
    // The field holds the pseudo-header's sum, so the segment's sum is the full sum.
    let mut check = !sum(&frame[s.l4..s.end]);
    if !s.tcp && check == 0 {
        check = 0xffff;
    }
    frame[s.csum_at..s.csum_at + 2].copy_from_slice(&check.to_be_bytes());
    true
}

/// Writes the TCP/UDP checksum of `frame` if its sender left it unfinished (see the
/// module comment); true if it did.
pub fn finish_offloaded_checksum(frame: &mut [u8]) -> bool {
    let Some((at, seg, pseudo)) = l4_of(frame) else {
        return false;
    };
    let field = u16::from_be_bytes([frame[at], frame[at + 1]]);
    let udp = at == seg.start + udp::field::CHECKSUM.start;
    // The pseudo-header sum is never 0 (the protocol number is in it), but both forms
    // of one's-complement zero are the same sum.
    if field != pseudo && !(pseudo == 0xffff && field == 0) {
        return false;
    }
    let ipv6 = |f: &[u8]| {
        ethernet::ethertype_at(f, ethernet::field::ETHERTYPE.start) == Some(ethertype::IPV6)
    };
    if udp && field == 0 && !ipv6(frame) {
        return false;
    }
    // With the pseudo-header's sum in the field, the segment's sum is the full sum. A
    // finished checksum that happens to equal the pseudo-header sum gives back the
    // same value here (the segment then sums to its complement), so finishing is
    // always right; a full sum of 0xffff means the finished checksum is 0.
    let total = sum(&frame[seg]);
    let mut check = !total;
    if udp && check == 0 {
        check = 0xffff;
    }
    frame[at..at + 2].copy_from_slice(&check.to_be_bytes());
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An Ethernet/IPv4/`proto` frame with `payload`, its L4 checksum correct.
    fn v4(proto: u8, payload: &[u8], tags: usize) -> Vec<u8> {
        let mut f = vec![0u8; 12];
        f[0] = 2;
        f[6] = 4;
        for _ in 0..tags {
            f.extend_from_slice(&[0x81, 0x00, 0x00, 0x05]);
        }
        f.extend_from_slice(&[0x08, 0x00]);
        let l4len = if proto == 6 { 20 } else { 8 } + payload.len();
        let total = (20 + l4len) as u16;
        let ip = [
            0x45,
            0,
            (total >> 8) as u8,
            total as u8,
            0,
            1,
            0x40,
            0,
            64,
            proto,
            0,
            0,
            10,
            0,
            0,
            1,
            10,
            0,
            0,
            2,
        ];
        f.extend_from_slice(&ip);
        if proto == 6 {
            let mut th = [0u8; 20];
            th[0..4].copy_from_slice(&[0x30, 0x39, 0x00, 0x50]);
            th[12] = 0x50;
            th[13] = 0x18;
            f.extend_from_slice(&th);
        } else {
            let l = l4len as u16;
            f.extend_from_slice(&[0x30, 0x39, 0x00, 0x35, (l >> 8) as u8, l as u8, 0, 0]);
        }
        f.extend_from_slice(payload);
        let (at, seg, pseudo) = l4_of(&f).unwrap();
        let full = fold(u64::from(pseudo) + u64::from(sum(&f[seg])));
        f[at..at + 2].copy_from_slice(&(!full).to_be_bytes());
        f
    }

    /// `f` as checksum offload leaves it: the pseudo-header sum in the field.
    fn partial(mut f: Vec<u8>) -> Vec<u8> {
        let (at, _, pseudo) = l4_of(&f).unwrap();
        f[at..at + 2].copy_from_slice(&pseudo.to_be_bytes());
        f
    }

    #[test]
    fn partial_tcp_and_udp_are_finished_to_the_correct_checksum() {
        for (proto, tags) in [(6, 0), (17, 0), (6, 1), (17, 2)] {
            for len in [0usize, 1, 7, 100, 1001] {
                let payload: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
                let good = v4(proto, &payload, tags);
                let mut f = partial(good.clone());
                assert_ne!(f, good);
                assert!(finish_offloaded_checksum(&mut f), "proto {proto} len {len}");
                assert_eq!(f, good, "proto {proto} tags {tags} len {len}");
            }
        }
    }

    #[test]
    fn a_partial_checksum_that_finishes_to_zero_is_finished() {
        // The payload's one word is the checksum the frame has without it, so with it
        // the segment and pseudo-header sum to 0xffff: the correct checksum is 0x0000.
        let base = v4(6, &[0, 0], 0);
        let (at, _, _) = l4_of(&base).unwrap();
        let good = v4(6, &base[at..at + 2], 0);
        assert_eq!(&good[at..at + 2], &[0, 0]);
        let mut f = partial(good.clone());
        assert_ne!(f, good);
        finish_offloaded_checksum(&mut f);
        assert_eq!(f, good);
    }

    #[test]
    fn a_finished_checksum_equal_to_the_pseudo_header_sum_stays() {
        // Search payload words until the correct checksum equals the pseudo-header sum.
        let base = v4(6, &[0, 0], 0);
        let (at, _, pseudo) = l4_of(&base).unwrap();
        let good = (0..=u16::MAX)
            .map(|w| v4(6, &w.to_be_bytes(), 0))
            .find(|f| f[at..at + 2] == pseudo.to_be_bytes())
            .expect("some payload word gives that checksum");
        let mut f = good.clone();
        finish_offloaded_checksum(&mut f);
        assert_eq!(f, good);
    }

    #[test]
    fn finished_frames_and_others_are_left_alone() {
        let mut good = v4(6, b"hello", 0);
        let copy = good.clone();
        assert!(!finish_offloaded_checksum(&mut good));
        assert_eq!(good, copy);
        // A fragment, ICMP, ARP, and truncated frames.
        let mut frag = partial(v4(17, b"abc", 0));
        frag[14 + 6] |= 0x20;
        assert!(!finish_offloaded_checksum(&mut frag));
        let mut icmp = v4(6, b"x", 0);
        icmp[14 + 9] = 1;
        assert!(!finish_offloaded_checksum(&mut icmp));
        let mut arp = partial(v4(6, b"x", 0));
        arp[12..14].copy_from_slice(&[0x08, 0x06]);
        assert!(!finish_offloaded_checksum(&mut arp));
        let whole = partial(v4(6, b"0123456789", 0));
        for cut in 0..whole.len() {
            let mut f = whole[..cut].to_vec();
            assert!(!finish_offloaded_checksum(&mut f), "cut at {cut}");
        }
    }

    #[test]
    fn ipv6_udp_partial_is_finished() {
        let mut f = vec![0u8; 12];
        f.extend_from_slice(&[0x86, 0xdd]);
        let payload = b"ipv6 payload";
        let l4len = 8 + payload.len();
        let mut ip = [0u8; 40];
        ip[0] = 0x60;
        ip[4..6].copy_from_slice(&(l4len as u16).to_be_bytes());
        ip[6] = 17;
        ip[7] = 64;
        ip[8] = 0xfe;
        ip[23] = 1;
        ip[24] = 0xfe;
        ip[39] = 2;
        f.extend_from_slice(&ip);
        f.extend_from_slice(&[0x12, 0x34, 0x00, 0x35, 0, l4len as u8, 0, 0]);
        f.extend_from_slice(payload);
        let (at, seg, pseudo) = l4_of(&f).unwrap();
        let full = fold(u64::from(pseudo) + u64::from(sum(&f[seg.clone()])));
        let mut good = f.clone();
        good[at..at + 2].copy_from_slice(&(!full).to_be_bytes());
        f[at..at + 2].copy_from_slice(&pseudo.to_be_bytes());
        assert!(finish_offloaded_checksum(&mut f));
        assert_eq!(f, good);
    }

    proptest::proptest! {
        /// Any bytes, and any bytes behind an IPv4 Ethernet header (so the parse goes
        /// deeper), are handled without a panic.
        #[test]
        fn random_bytes_never_panic(
            mut bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300),
            ipv4 in proptest::prelude::any::<bool>(),
        ) {
            if ipv4 && bytes.len() > 14 {
                bytes[12..15].copy_from_slice(&[0x08, 0x00, 0x45]);
            }
            let _ = finish_offloaded_checksum(&mut bytes);
        }
    }
}
