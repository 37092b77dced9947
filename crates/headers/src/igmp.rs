//! The IGMP header (RFC 2236, and the start of every later version's messages): type,
//! maximum response time (IGMPv1: unused), checksum, group address.

use crate::bytes::{be16, be32, fields_fit, u8_at};

/// Length of the header.
pub const HEADER_LEN: usize = 8;

/// Field offsets from the start of the header.
pub mod field {
    use core::ops::Range;

    /// Message type.
    pub const TYPE: usize = 0;
    /// Maximum response time (in tenths of a second), the "code" of tools that treat
    /// IGMP as ICMP.
    pub const MAX_RESP: usize = 1;
    /// Checksum.
    pub const CHECKSUM: Range<usize> = 2..4;
    /// Group address.
    pub const GROUP: Range<usize> = 4..8;
}

const _: () = assert!(fields_fit(
    HEADER_LEN,
    &[
        (field::TYPE..field::TYPE + 1, 1),
        (field::MAX_RESP..field::MAX_RESP + 1, 1),
        (field::CHECKSUM, 2),
        (field::GROUP, 4)
    ]
));

view! {
    /// A view of an IGMP header ([`HEADER_LEN`] bytes).
    IgmpHeader, HEADER_LEN
}

impl<B: core::borrow::Borrow<[u8; HEADER_LEN]>> IgmpHeader<B> {
    /// The message type.
    #[inline(always)]
    pub fn msg_type(&self) -> u8 {
        u8_at(self.as_bytes(), field::TYPE)
    }

    /// The maximum response time.
    #[inline(always)]
    pub fn max_resp(&self) -> u8 {
        u8_at(self.as_bytes(), field::MAX_RESP)
    }

    /// The checksum as stored.
    #[inline(always)]
    pub fn checksum(&self) -> u16 {
        be16(self.as_bytes(), field::CHECKSUM)
    }

    /// The group address.
    #[inline(always)]
    pub fn group(&self) -> u32 {
        be32(self.as_bytes(), field::GROUP)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_of_a_hand_made_report() {
        // An IGMPv2 membership report for 239.1.2.3.
        let b = [0x16, 0, 0xfa, 0xfb, 239, 1, 2, 3];
        let g = IgmpHeader::new_checked(&b).unwrap();
        assert_eq!(
            (g.msg_type(), g.max_resp(), g.checksum()),
            (0x16, 0, 0xfafb)
        );
        assert_eq!(g.group(), 0xef01_0203);
        assert!(IgmpHeader::new_checked(&b[..7]).is_none());
    }
}
