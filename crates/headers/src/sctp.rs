//! The SCTP common header (RFC 9260): ports, verification tag and the CRC32c checksum,
//! which is stored least significant byte first (appendix A).

use crate::bytes::{be16, be32, fields_fit, set, set_be16, set_be32};

/// Length of the common header.
pub const HEADER_LEN: usize = 12;

/// Field offsets from the start of the header.
pub mod field {
    use core::ops::Range;

    /// Source port.
    pub const SRC_PORT: Range<usize> = 0..2;
    /// Destination port.
    pub const DST_PORT: Range<usize> = 2..4;
    /// Verification tag.
    pub const VERIFICATION_TAG: Range<usize> = 4..8;
    /// CRC32c over the packet with this field zero.
    pub const CHECKSUM: Range<usize> = 8..12;
}

const _: () = assert!(fields_fit(
    HEADER_LEN,
    &[
        (field::SRC_PORT, 2),
        (field::DST_PORT, 2),
        (field::VERIFICATION_TAG, 4),
        (field::CHECKSUM, 4)
    ]
));

view! {
    /// A view of an SCTP common header ([`HEADER_LEN`] bytes).
    SctpHeader, HEADER_LEN
}

impl<B: core::borrow::Borrow<[u8; HEADER_LEN]>> SctpHeader<B> {
    /// The source port.
    #[inline(always)]
    pub fn src_port(&self) -> u16 {
        be16(self.as_bytes(), field::SRC_PORT)
    }

    /// The destination port.
    #[inline(always)]
    pub fn dst_port(&self) -> u16 {
        be16(self.as_bytes(), field::DST_PORT)
    }

    /// The verification tag.
    #[inline(always)]
    pub fn verification_tag(&self) -> u32 {
        be32(self.as_bytes(), field::VERIFICATION_TAG)
    }

    /// The checksum field's bytes read in network order, as packet dumps show them
    /// (the CRC32c itself is `checksum().swap_bytes()`).
    #[inline(always)]
    pub fn checksum(&self) -> u32 {
        be32(self.as_bytes(), field::CHECKSUM)
    }
}

impl<B: core::borrow::BorrowMut<[u8; HEADER_LEN]>> SctpHeader<B> {
    /// Sets the source port.
    #[inline(always)]
    pub fn set_src_port(&mut self, port: u16) {
        set_be16(self.as_bytes_mut(), field::SRC_PORT, port);
    }

    /// Sets the destination port.
    #[inline(always)]
    pub fn set_dst_port(&mut self, port: u16) {
        set_be16(self.as_bytes_mut(), field::DST_PORT, port);
    }

    /// Sets the verification tag.
    #[inline(always)]
    pub fn set_verification_tag(&mut self, tag: u32) {
        set_be32(self.as_bytes_mut(), field::VERIFICATION_TAG, tag);
    }

    /// Stores a computed CRC32c, least significant byte first.
    #[inline(always)]
    pub fn set_crc32c(&mut self, crc: u32) {
        set(
            self.as_bytes_mut(),
            field::CHECKSUM.start,
            crc.to_le_bytes(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_of_a_hand_made_header() {
        let b = [
            0x0b, 0x59, 0x00, 0x50, 0xde, 0xad, 0xbe, 0xef, 0x78, 0x56, 0x34, 0x12,
        ];
        let s = SctpHeader::new_checked(&b).unwrap();
        assert_eq!((s.src_port(), s.dst_port()), (2905, 80));
        assert_eq!(s.verification_tag(), 0xdead_beef);
        assert_eq!(s.checksum(), 0x7856_3412);
        assert_eq!(s.checksum().swap_bytes(), 0x1234_5678);
        let mut built = SctpHeader::new([0u8; HEADER_LEN]);
        built.set_src_port(2905);
        built.set_dst_port(80);
        built.set_verification_tag(0xdead_beef);
        built.set_crc32c(0x1234_5678);
        assert_eq!(built.into_inner(), b);
        assert!(SctpHeader::new_checked(&b[..11]).is_none());
    }
}
