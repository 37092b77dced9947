//! The IEEE 802.1ah (provider backbone bridging) I-TAG that follows the ethertype
//! [`crate::ethertype::PBB`]: a 32-bit TCI of priority code point (3 bits), drop
//! eligible (1), use customer addresses (1), reserved (3) and the 24-bit service
//! instance ID (I-SID); then the customer frame, from its destination MAC address on.

use crate::bytes::{be32, fields_fit, set_be32};

/// Length of the I-TAG's TCI.
pub const ITAG_LEN: usize = 4;

/// Field offsets from the start of the I-TAG (after its ethertype).
pub mod field {
    use core::ops::Range;

    /// The I-TAG TCI.
    pub const TCI: Range<usize> = 0..4;
    /// The service instance ID.
    pub const ISID: Range<usize> = 1..4;
}

const _: () = assert!(fields_fit(ITAG_LEN, &[(field::TCI, 4), (field::ISID, 3)]));

/// The I-SID's bits in the TCI.
pub const ISID_MASK: u32 = 0x00ff_ffff;
/// Where the 3-bit priority code point starts in the TCI.
pub const PCP_SHIFT: u32 = 29;

view! {
    /// A view of a PBB I-TAG TCI ([`ITAG_LEN`] bytes).
    PbbItag, ITAG_LEN
}

impl<B: core::borrow::Borrow<[u8; ITAG_LEN]>> PbbItag<B> {
    /// The whole TCI.
    #[inline(always)]
    pub fn tci(&self) -> u32 {
        be32(self.as_bytes(), field::TCI)
    }

    /// The service instance ID (24 bits).
    #[inline(always)]
    pub fn isid(&self) -> u32 {
        self.tci() & ISID_MASK
    }

    /// The priority code point (3 bits).
    #[inline(always)]
    pub fn pcp(&self) -> u8 {
        (self.tci() >> PCP_SHIFT) as u8
    }
}

impl<B: core::borrow::BorrowMut<[u8; ITAG_LEN]>> PbbItag<B> {
    /// Sets the whole TCI.
    #[inline(always)]
    pub fn set_tci(&mut self, tci: u32) {
        set_be32(self.as_bytes_mut(), field::TCI, tci);
    }

    /// Sets the I-SID (its low 24 bits), keeping the first byte.
    #[inline(always)]
    pub fn set_isid(&mut self, isid: u32) {
        let tci = self.tci();
        self.set_tci((tci & !ISID_MASK) | (isid & ISID_MASK));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_of_a_hand_made_itag() {
        let mut b = [0xa0, 0xab, 0xcd, 0xef];
        let t = PbbItag::new_checked(&b).unwrap();
        assert_eq!((t.tci(), t.isid(), t.pcp()), (0xa0ab_cdef, 0xab_cdef, 5));
        assert_eq!(&b[field::ISID], &[0xab, 0xcd, 0xef]);
        let mut t = PbbItag::new_checked_mut(&mut b).unwrap();
        t.set_isid(0x12_3456);
        assert_eq!(b, [0xa0, 0x12, 0x34, 0x56]);
        assert!(PbbItag::new_checked(&b[..3]).is_none());
    }
}
