//! The start of an ICMP (RFC 792) or ICMPv6 (RFC 4443) message: type, code, checksum.
//! ICMPv4's checksum covers the message; ICMPv6's also the IPv6 pseudo-header. What
//! follows depends on the type ([`crate::nd`] for neighbour discovery).

use crate::bytes::{be16, fields_fit, set_be16, set_u8_at, u8_at};

/// Length of the part every message starts with: type, code, checksum.
pub const HEADER_LEN: usize = 4;

/// Length of an ICMPv4 header with its 4 bytes of type-specific data (the rest of the
/// header of an echo, unreachable, ...).
pub const V4_HEADER_LEN: usize = 8;

/// Field offsets from the start of the message.
pub mod field {
    use core::ops::Range;

    /// Message type.
    pub const TYPE: usize = 0;
    /// Message code.
    pub const CODE: usize = 1;
    /// Checksum.
    pub const CHECKSUM: Range<usize> = 2..4;
}

const _: () = assert!(fields_fit(
    HEADER_LEN,
    &[
        (field::TYPE..field::TYPE + 1, 1),
        (field::CODE..field::CODE + 1, 1),
        (field::CHECKSUM, 2)
    ]
));

view! {
    /// A view of the start of an ICMP or ICMPv6 message ([`HEADER_LEN`] bytes).
    IcmpHeader, HEADER_LEN
}

impl<B: core::borrow::Borrow<[u8; HEADER_LEN]>> IcmpHeader<B> {
    /// The message type.
    #[inline(always)]
    pub fn msg_type(&self) -> u8 {
        u8_at(self.as_bytes(), field::TYPE)
    }

    /// The message code.
    #[inline(always)]
    pub fn code(&self) -> u8 {
        u8_at(self.as_bytes(), field::CODE)
    }

    /// The checksum as stored.
    #[inline(always)]
    pub fn checksum(&self) -> u16 {
        be16(self.as_bytes(), field::CHECKSUM)
    }
}

impl<B: core::borrow::BorrowMut<[u8; HEADER_LEN]>> IcmpHeader<B> {
    /// Sets the message type.
    #[inline(always)]
    pub fn set_msg_type(&mut self, t: u8) {
        set_u8_at(self.as_bytes_mut(), field::TYPE, t);
    }

    /// Sets the message code.
    #[inline(always)]
    pub fn set_code(&mut self, c: u8) {
        set_u8_at(self.as_bytes_mut(), field::CODE, c);
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
        let b = [8, 0, 0xf7, 0xff, 0, 1, 0, 1];
        let i = IcmpHeader::new_checked(&b).unwrap();
        assert_eq!((i.msg_type(), i.code(), i.checksum()), (8, 0, 0xf7ff));
        let mut built = IcmpHeader::new([0u8; HEADER_LEN]);
        built.set_msg_type(8);
        built.set_code(0);
        built.set_checksum(0xf7ff);
        assert_eq!(&built.into_inner(), &b[..4]);
        assert!(IcmpHeader::new_checked(&b[..3]).is_none());
        assert!(IcmpHeader::new_checked_at(&b, 5).is_none());
    }
}
