//! The IPv4 header (RFC 791): [`HEADER_LEN`] fixed bytes, then options up to the header
//! length the IHL gives ([`Ipv4Header::header_len`]); the header checksum covers the
//! whole header, options included.

use crate::bytes::{set_u8_at, u8_at};

/// Length of the header without options (IHL 5).
pub const HEADER_LEN: usize = 20;

/// The version of IPv4, in the header's first nibble.
pub const VERSION: u8 = 4;

fields! {
    /// Field offsets from the start of the header.
    pub mod field: HEADER_LEN {
        /// Version (high nibble) and IHL, the header length in 32-bit words (low nibble).
        VER_IHL: 0,
        /// Type of service: DSCP (high 6 bits) and ECN (low 2 bits).
        TOS: 1,
        /// Total length of the IP packet, header included.
        LENGTH: 2..4,
        /// Identification.
        IDENT: 4..6,
        /// Flags (high 3 bits) and fragment offset in 8-byte units (low 13 bits).
        FLG_OFF: 6..8,
        /// Time to live.
        TTL: 8,
        /// Protocol ([`crate::ip_proto`]).
        PROTOCOL: 9,
        /// Header checksum.
        CHECKSUM: 10..12,
        /// Source address.
        SRC_ADDR: 12..16,
        /// Destination address.
        DST_ADDR: 16..20,
        /// Source and destination addresses together: the addresses of the TCP/UDP
        /// pseudo-header.
        ADDRS: 12..20,
    }
}

/// The "don't fragment" flag in the flags/offset word.
pub const DONT_FRAG: u16 = 0x4000;
/// The "more fragments" flag in the flags/offset word.
pub const MORE_FRAGS: u16 = 0x2000;
/// The fragment offset's bits in the flags/offset word.
pub const FRAG_OFFSET_MASK: u16 = 0x1fff;

view! {
    /// A view of the fixed part of an IPv4 header ([`HEADER_LEN`] bytes).
    Ipv4Header, HEADER_LEN;

    /// The version nibble (4 for IPv4).
    pub fn version(&self) -> u8 {
        u8_at(self.as_bytes(), field::VER_IHL) >> 4
    }
    /// The header length in bytes (IHL × 4), options included; less than
    /// [`HEADER_LEN`] in a malformed header.
    pub fn header_len(&self) -> usize {
        usize::from(u8_at(self.as_bytes(), field::VER_IHL) & 0x0f) * 4
    }
    /// Sets the version nibble and the header length (`len` bytes, a multiple of 4 up
    /// to 60) in the first byte.
    pub fn set_version_header_len(&mut self, version: u8, len: usize) {
        let ihl = ((len / 4) & 0x0f) as u8;
        set_u8_at(self.as_bytes_mut(), field::VER_IHL, (version << 4) | ihl);
    }
    /// The type of service byte (DSCP and ECN).
    tos / set_tos: u8 = field::TOS;
    /// The DSCP (6 bits).
    dscp: u8 = tos[0xfc];
    /// The ECN (2 bits).
    ecn: u8 = tos[0x03];
    /// The total length of the IP packet.
    total_len / set_total_len: u16 = field::LENGTH;
    /// The identification.
    ident / set_ident: u16 = field::IDENT;
    /// The flags and fragment offset word.
    flags_frag_offset / set_flags_frag_offset: u16 = field::FLG_OFF;
    /// The "more fragments" flag.
    more_frags: bool = flags_frag_offset[MORE_FRAGS];
    /// The fragment offset in 8-byte units: nonzero in every fragment but the first.
    frag_offset: u16 = flags_frag_offset[FRAG_OFFSET_MASK];
    /// Whether the packet is a fragment (more fragments, or a nonzero offset).
    pub fn is_fragment(&self) -> bool {
        self.flags_frag_offset() & (MORE_FRAGS | FRAG_OFFSET_MASK) != 0
    }
    /// The time to live.
    ttl: u8 = field::TTL;
    /// Sets the time to live (the checksum is the caller's).
    set_ttl(ttl): u8 = field::TTL;
    /// The protocol of the payload.
    protocol / set_protocol: u8 = field::PROTOCOL;
    /// The header checksum as stored.
    checksum / set_checksum: u16 = field::CHECKSUM;
    /// The source address.
    src_addr / set_src_addr: u32 = field::SRC_ADDR;
    /// The destination address.
    dst_addr / set_dst_addr: u32 = field::DST_ADDR;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 10.0.0.1 → 10.0.0.2, ICMP, TTL 64, ID 0x1234, DF, TOS 0xb9, 84 bytes.
    const HDR: [u8; 20] =
        [0x45, 0xb9, 0, 84, 0x12, 0x34, 0x40, 0, 64, 1, 0xab, 0xcd, 10, 0, 0, 1, 10, 0, 0, 2];

    #[test]
    fn hand_made_header() {
        check_view! {
            Ipv4Header, HEADER_LEN, HDR;
            version = 4, header_len = 20,
            tos / set_tos = 0xb9, dscp = 0x2e, ecn = 1,
            total_len / set_total_len = 84,
            ident / set_ident = 0x1234,
            flags_frag_offset / set_flags_frag_offset = DONT_FRAG,
            more_frags = false, is_fragment = false, frag_offset = 0,
            ttl / set_ttl = 64,
            protocol / set_protocol = 1,
            checksum / set_checksum = 0xabcd,
            src_addr / set_src_addr = 0x0a00_0001,
            dst_addr / set_dst_addr = 0x0a00_0002;
            build(h) { h.set_version_header_len(VERSION, HEADER_LEN); }
        }
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
    fn views_inside_a_frame() {
        assert_eq!(Ipv4Header::new(HDR).into_inner(), HDR);
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
