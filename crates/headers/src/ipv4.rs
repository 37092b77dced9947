//! The IPv4 header (RFC 791): [`HEADER_LEN`] fixed bytes, then options up to the header
//! length the IHL gives ([`Ipv4Header::header_len`]); the header checksum covers the
//! whole header, options included.

use crate::bytes::{be16, be32, fields_fit, set_be16, set_be32, set_u8_at, u8_at};

/// Length of the header without options (IHL 5).
pub const HEADER_LEN: usize = 20;

/// The version of IPv4, in the header's first nibble.
pub const VERSION: u8 = 4;

/// Field offsets from the start of the header.
pub mod field {
    use core::ops::Range;

    /// Version (high nibble) and IHL, the header length in 32-bit words (low nibble).
    pub const VER_IHL: usize = 0;
    /// Type of service: DSCP (high 6 bits) and ECN (low 2 bits).
    pub const TOS: usize = 1;
    /// Total length of the IP packet, header included.
    pub const LENGTH: Range<usize> = 2..4;
    /// Identification.
    pub const IDENT: Range<usize> = 4..6;
    /// Flags (high 3 bits) and fragment offset in 8-byte units (low 13 bits).
    pub const FLG_OFF: Range<usize> = 6..8;
    /// Time to live.
    pub const TTL: usize = 8;
    /// Protocol ([`crate::ip_proto`]).
    pub const PROTOCOL: usize = 9;
    /// Header checksum.
    pub const CHECKSUM: Range<usize> = 10..12;
    /// Source address.
    pub const SRC_ADDR: Range<usize> = 12..16;
    /// Destination address.
    pub const DST_ADDR: Range<usize> = 16..20;
    /// Source and destination addresses together: the addresses of the TCP/UDP
    /// pseudo-header.
    pub const ADDRS: Range<usize> = 12..20;
}

const _: () = assert!(fields_fit(
    HEADER_LEN,
    &[
        (field::VER_IHL..field::VER_IHL + 1, 1),
        (field::TOS..field::TOS + 1, 1),
        (field::LENGTH, 2),
        (field::IDENT, 2),
        (field::FLG_OFF, 2),
        (field::TTL..field::TTL + 1, 1),
        (field::PROTOCOL..field::PROTOCOL + 1, 1),
        (field::CHECKSUM, 2),
        (field::SRC_ADDR, 4),
        (field::DST_ADDR, 4),
        (field::ADDRS, 8)
    ]
));

/// The "don't fragment" flag in the flags/offset word.
pub const DONT_FRAG: u16 = 0x4000;
/// The "more fragments" flag in the flags/offset word.
pub const MORE_FRAGS: u16 = 0x2000;
/// The fragment offset's bits in the flags/offset word.
pub const FRAG_OFFSET_MASK: u16 = 0x1fff;

view! {
    /// A view of the fixed part of an IPv4 header ([`HEADER_LEN`] bytes).
    Ipv4Header, HEADER_LEN
}

impl<B: core::borrow::Borrow<[u8; HEADER_LEN]>> Ipv4Header<B> {
    /// The version nibble (4 for IPv4).
    #[inline(always)]
    pub fn version(&self) -> u8 {
        u8_at(self.as_bytes(), field::VER_IHL) >> 4
    }

    /// The header length in bytes (IHL × 4), options included; less than
    /// [`HEADER_LEN`] in a malformed header.
    #[inline(always)]
    pub fn header_len(&self) -> usize {
        usize::from(u8_at(self.as_bytes(), field::VER_IHL) & 0x0f) * 4
    }

    /// The type of service byte (DSCP and ECN).
    #[inline(always)]
    pub fn tos(&self) -> u8 {
        u8_at(self.as_bytes(), field::TOS)
    }

    /// The DSCP (6 bits).
    #[inline(always)]
    pub fn dscp(&self) -> u8 {
        self.tos() >> 2
    }

    /// The ECN (2 bits).
    #[inline(always)]
    pub fn ecn(&self) -> u8 {
        self.tos() & 3
    }

    /// The total length of the IP packet.
    #[inline(always)]
    pub fn total_len(&self) -> u16 {
        be16(self.as_bytes(), field::LENGTH)
    }

    /// The identification.
    #[inline(always)]
    pub fn ident(&self) -> u16 {
        be16(self.as_bytes(), field::IDENT)
    }

    /// The flags and fragment offset word.
    #[inline(always)]
    pub fn flags_frag_offset(&self) -> u16 {
        be16(self.as_bytes(), field::FLG_OFF)
    }

    /// The "more fragments" flag.
    #[inline(always)]
    pub fn more_frags(&self) -> bool {
        self.flags_frag_offset() & MORE_FRAGS != 0
    }

    /// The fragment offset in 8-byte units: nonzero in every fragment but the first.
    #[inline(always)]
    pub fn frag_offset(&self) -> u16 {
        self.flags_frag_offset() & FRAG_OFFSET_MASK
    }

    /// Whether the packet is a fragment (more fragments, or a nonzero offset).
    #[inline(always)]
    pub fn is_fragment(&self) -> bool {
        self.flags_frag_offset() & (MORE_FRAGS | FRAG_OFFSET_MASK) != 0
    }

    /// The time to live.
    #[inline(always)]
    pub fn ttl(&self) -> u8 {
        u8_at(self.as_bytes(), field::TTL)
    }

    /// The protocol of the payload.
    #[inline(always)]
    pub fn protocol(&self) -> u8 {
        u8_at(self.as_bytes(), field::PROTOCOL)
    }

    /// The header checksum as stored.
    #[inline(always)]
    pub fn checksum(&self) -> u16 {
        be16(self.as_bytes(), field::CHECKSUM)
    }

    /// The source address.
    #[inline(always)]
    pub fn src_addr(&self) -> u32 {
        be32(self.as_bytes(), field::SRC_ADDR)
    }

    /// The destination address.
    #[inline(always)]
    pub fn dst_addr(&self) -> u32 {
        be32(self.as_bytes(), field::DST_ADDR)
    }
}

impl<B: core::borrow::BorrowMut<[u8; HEADER_LEN]>> Ipv4Header<B> {
    /// Sets the version nibble and the header length (`len` bytes, a multiple of 4 up
    /// to 60) in the first byte.
    #[inline(always)]
    pub fn set_version_header_len(&mut self, version: u8, len: usize) {
        let ihl = ((len / 4) & 0x0f) as u8;
        set_u8_at(self.as_bytes_mut(), field::VER_IHL, (version << 4) | ihl);
    }

    /// Sets the type of service byte.
    #[inline(always)]
    pub fn set_tos(&mut self, tos: u8) {
        set_u8_at(self.as_bytes_mut(), field::TOS, tos);
    }

    /// Sets the total length.
    #[inline(always)]
    pub fn set_total_len(&mut self, len: u16) {
        set_be16(self.as_bytes_mut(), field::LENGTH, len);
    }

    /// Sets the identification.
    #[inline(always)]
    pub fn set_ident(&mut self, ident: u16) {
        set_be16(self.as_bytes_mut(), field::IDENT, ident);
    }

    /// Sets the flags and fragment offset word.
    #[inline(always)]
    pub fn set_flags_frag_offset(&mut self, w: u16) {
        set_be16(self.as_bytes_mut(), field::FLG_OFF, w);
    }

    /// Sets the time to live (the checksum is the caller's).
    #[inline(always)]
    pub fn set_ttl(&mut self, ttl: u8) {
        set_u8_at(self.as_bytes_mut(), field::TTL, ttl);
    }

    /// Sets the protocol.
    #[inline(always)]
    pub fn set_protocol(&mut self, proto: u8) {
        set_u8_at(self.as_bytes_mut(), field::PROTOCOL, proto);
    }

    /// Stores a header checksum.
    #[inline(always)]
    pub fn set_checksum(&mut self, c: u16) {
        set_be16(self.as_bytes_mut(), field::CHECKSUM, c);
    }

    /// Sets the source address.
    #[inline(always)]
    pub fn set_src_addr(&mut self, addr: u32) {
        set_be32(self.as_bytes_mut(), field::SRC_ADDR, addr);
    }

    /// Sets the destination address.
    #[inline(always)]
    pub fn set_dst_addr(&mut self, addr: u32) {
        set_be32(self.as_bytes_mut(), field::DST_ADDR, addr);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 10.0.0.1 → 10.0.0.2, ICMP, TTL 64, ID 0x1234, DF, TOS 0xb9, 84 bytes.
    const HDR: [u8; 20] = [
        0x45, 0xb9, 0, 84, 0x12, 0x34, 0x40, 0, 64, 1, 0xab, 0xcd, 10, 0, 0, 1, 10, 0, 0, 2,
    ];

    #[test]
    fn fields_of_a_hand_made_header() {
        let h = Ipv4Header::new_checked(&HDR).unwrap();
        assert_eq!((h.version(), h.header_len()), (4, 20));
        assert_eq!((h.tos(), h.dscp(), h.ecn()), (0xb9, 0x2e, 1));
        assert_eq!((h.total_len(), h.ident()), (84, 0x1234));
        assert_eq!(h.flags_frag_offset(), DONT_FRAG);
        assert!(!h.more_frags() && !h.is_fragment());
        assert_eq!(h.frag_offset(), 0);
        assert_eq!((h.ttl(), h.protocol(), h.checksum()), (64, 1, 0xabcd));
        assert_eq!((h.src_addr(), h.dst_addr()), (0x0a00_0001, 0x0a00_0002));
        assert_eq!(&HDR[field::ADDRS], &[10, 0, 0, 1, 10, 0, 0, 2]);
    }

    #[test]
    fn fragments() {
        let mut b = HDR;
        let mut h = Ipv4Header::new(&mut b);
        h.set_flags_frag_offset(MORE_FRAGS);
        assert!(h.is_fragment() && h.more_frags());
        assert_eq!(h.frag_offset(), 0);
        h.set_flags_frag_offset(185);
        assert!(h.is_fragment() && !h.more_frags());
        assert_eq!(h.frag_offset(), 185);
    }

    #[test]
    fn options_lengthen_the_header() {
        let mut b = HDR;
        b[0] = 0x46;
        assert_eq!(Ipv4Header::new(&b).header_len(), 24);
        b[0] = 0x43;
        assert_eq!(Ipv4Header::new(&b).header_len(), 12);
    }

    #[test]
    fn built_header_is_the_hand_made_one() {
        let mut h = Ipv4Header::new([0u8; HEADER_LEN]);
        h.set_version_header_len(VERSION, HEADER_LEN);
        h.set_tos(0xb9);
        h.set_total_len(84);
        h.set_ident(0x1234);
        h.set_flags_frag_offset(DONT_FRAG);
        h.set_ttl(64);
        h.set_protocol(1);
        h.set_checksum(0xabcd);
        h.set_src_addr(0x0a00_0001);
        h.set_dst_addr(0x0a00_0002);
        assert_eq!(h.as_bytes(), &HDR);
        assert_eq!(h.into_inner(), HDR);
    }

    #[test]
    fn truncated_buffers_are_refused() {
        for n in 0..HEADER_LEN {
            assert!(Ipv4Header::new_checked(&HDR[..n]).is_none(), "{n}");
        }
        let mut frame = [0u8; 34];
        frame[14..].copy_from_slice(&HDR);
        assert_eq!(Ipv4Header::new_checked_at(&frame, 14).unwrap().ttl(), 64);
        assert!(Ipv4Header::new_checked_at(&frame, 15).is_none());
        assert!(Ipv4Header::new_checked_at(&frame, usize::MAX).is_none());
        let mut h = Ipv4Header::new_checked_at_mut(&mut frame, 14).unwrap();
        h.set_ttl(1);
        assert_eq!(frame[14 + field::TTL], 1);
        assert!(Ipv4Header::new_checked_mut(&mut frame[..19]).is_none());
    }
}
