//! The UDP header (RFC 768).

use crate::bytes::{be16, fields_fit, set_be16};

/// Length of the header.
pub const HEADER_LEN: usize = 8;

/// Field offsets from the start of the header.
pub mod field {
    use core::ops::Range;

    /// Source port.
    pub const SRC_PORT: Range<usize> = 0..2;
    /// Destination port.
    pub const DST_PORT: Range<usize> = 2..4;
    /// Length of the datagram, header included.
    pub const LENGTH: Range<usize> = 4..6;
    /// Checksum (over the pseudo-header and the datagram); zero over IPv4: none.
    pub const CHECKSUM: Range<usize> = 6..8;
}

const _: () = assert!(fields_fit(
    HEADER_LEN,
    &[
        (field::SRC_PORT, 2),
        (field::DST_PORT, 2),
        (field::LENGTH, 2),
        (field::CHECKSUM, 2)
    ]
));

view! {
    /// A view of a UDP header ([`HEADER_LEN`] bytes).
    UdpHeader, HEADER_LEN
}

impl<B: core::borrow::Borrow<[u8; HEADER_LEN]>> UdpHeader<B> {
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

    /// The datagram's length.
    #[inline(always)]
    pub fn length(&self) -> u16 {
        be16(self.as_bytes(), field::LENGTH)
    }

    /// The checksum as stored.
    #[inline(always)]
    pub fn checksum(&self) -> u16 {
        be16(self.as_bytes(), field::CHECKSUM)
    }
}

impl<B: core::borrow::BorrowMut<[u8; HEADER_LEN]>> UdpHeader<B> {
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

    /// Sets the datagram's length.
    #[inline(always)]
    pub fn set_length(&mut self, len: u16) {
        set_be16(self.as_bytes_mut(), field::LENGTH, len);
    }

    /// Stores a checksum.
    #[inline(always)]
    pub fn set_checksum(&mut self, c: u16) {
        set_be16(self.as_bytes_mut(), field::CHECKSUM, c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_of_a_hand_made_header() {
        let b = [0x13, 0x88, 0x00, 0x35, 0, 30, 0x12, 0x34];
        let u = UdpHeader::new_checked(&b).unwrap();
        assert_eq!(
            (u.src_port(), u.dst_port(), u.length(), u.checksum()),
            (5000, 53, 30, 0x1234)
        );
        let mut built = UdpHeader::new([0u8; HEADER_LEN]);
        built.set_src_port(5000);
        built.set_dst_port(53);
        built.set_length(30);
        built.set_checksum(0x1234);
        assert_eq!(built.into_inner(), b);
        assert!(UdpHeader::new_checked(&b[..7]).is_none());
        assert!(UdpHeader::new_checked_at(&b, 1).is_none());
    }
}
