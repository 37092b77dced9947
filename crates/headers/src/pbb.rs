//! The IEEE 802.1ah (provider backbone bridging) I-TAG that follows the ethertype
//! [`crate::ethertype::PBB`]: a 32-bit TCI of priority code point (3 bits), drop
//! eligible (1), use customer addresses (1), reserved (3) and the 24-bit service
//! instance ID (I-SID); then the customer frame, from its destination MAC address on.

/// Length of the I-TAG's TCI.
pub const ITAG_LEN: usize = 4;

fields! {
    /// Field offsets from the start of the I-TAG (after its ethertype).
    pub mod field: ITAG_LEN {
        /// The I-TAG TCI.
        TCI: 0..4,
        /// The service instance ID.
        ISID: 1..4,
    }
}

/// The I-SID's bits in the TCI.
pub const ISID_MASK: u32 = 0x00ff_ffff;
/// Where the 3-bit priority code point starts in the TCI.
pub const PCP_SHIFT: u32 = 29;
/// The "use customer addresses" bit of the TCI.
pub const UCA_SHIFT: u32 = 27;

view! {
    /// A view of a PBB I-TAG TCI ([`ITAG_LEN`] bytes).
    PbbItag, ITAG_LEN;

    /// The whole TCI.
    tci / set_tci: u32 = field::TCI;
    /// The service instance ID (24 bits).
    isid / set_isid: u32 = tci / set_tci[ISID_MASK];
    /// The priority code point (3 bits).
    pcp: u8 = tci[7 << PCP_SHIFT];
    /// Use customer addresses (1 bit).
    uca / set_uca: u8 = tci / set_tci[1 << UCA_SHIFT];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_of_a_hand_made_itag() {
        let mut b = [0xa0, 0xab, 0xcd, 0xef];
        check_view! {
            PbbItag, ITAG_LEN, b;
            tci = 0xa0ab_cdef, isid = 0xab_cdef, pcp = 5, uca = 0;
            build(t) {
                t.set_tci(0xa0ff_ffff);
                t.set_isid(0xab_cdef);
            }
        }
        assert_eq!(&b[field::ISID], &[0xab, 0xcd, 0xef]);
        let mut t = PbbItag::new_checked_mut(&mut b).unwrap();
        t.set_isid(0x12_3456);
        assert_eq!(b, [0xa0, 0x12, 0x34, 0x56]);
        let mut t = PbbItag::new_checked_mut(&mut b).unwrap();
        t.set_uca(1);
        assert_eq!((t.uca(), t.isid(), t.pcp()), (1, 0x12_3456, 5));
        assert_eq!(b, [0xa8, 0x12, 0x34, 0x56]);
    }
}
