//! A VLAN tag as it sits in a frame (IEEE 802.1Q C-tag or 802.1ad S-tag): the TPID, in
//! the place of the ethertype, then the tag control information (TCI: priority code
//! point, drop eligible indicator, VLAN ID). What the tag carried (the next tag's TPID,
//! or the ethertype) follows it, read with [`crate::ethernet::ethertype_at`].

/// Length of a tag: TPID and TCI. Pushing a tag inserts this many bytes after the MAC
/// addresses.
pub const TAG_LEN: usize = 4;

fields! {
    /// Field offsets from the start of the tag (its TPID).
    pub mod field: TAG_LEN {
        /// Tag protocol identifier: [`crate::ethertype::VLAN`] or [`crate::ethertype::QINQ`].
        TPID: 0..2,
        /// Tag control information.
        TCI: 2..4,
    }
}

/// The VLAN ID's bits in the TCI.
pub const VID_MASK: u16 = 0x0fff;
/// The drop eligible indicator's bit in the TCI (CFI in older 802.1Q).
pub const DEI: u16 = 0x1000;
/// Where the 3-bit priority code point starts in the TCI.
pub const PCP_SHIFT: u32 = 13;

view! {
    /// A view of a VLAN tag ([`TAG_LEN`] bytes: TPID and TCI).
    VlanTag, TAG_LEN;

    /// The TPID.
    tpid / set_tpid: u16 = field::TPID;
    /// The whole TCI.
    tci / set_tci: u16 = field::TCI;
    /// The VLAN ID (12 bits).
    vid / set_vid: u16 = tci / set_tci[VID_MASK];
    /// The priority code point (3 bits).
    pcp / set_pcp: u8 = tci / set_tci[7 << PCP_SHIFT];
    /// The drop eligible indicator.
    dei: bool = tci[DEI];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_of_a_hand_made_tag() {
        // TPID 0x8100, PCP 5, DEI 1, VID 0x123.
        let mut b = [0x81, 0x00, 0xb1, 0x23, 0x08, 0x00];
        check_view! {
            VlanTag, TAG_LEN, b[..4];
            tpid / set_tpid = 0x8100, tci = 0xb123, pcp = 5, dei = true, vid = 0x123;
            build(t) {
                t.set_tci(DEI);
                t.set_vid(0x123);
                t.set_pcp(5);
            }
        }
        let mut t = VlanTag::new_checked_mut(&mut b).unwrap();
        t.set_vid(0xfff);
        assert_eq!(t.tci(), 0xbfff);
        t.set_pcp(2);
        assert_eq!(t.tci(), 0x5fff);
        t.set_tpid(0x88a8);
        t.set_tci(7);
        assert_eq!(b, [0x88, 0xa8, 0, 7, 0x08, 0x00]);
    }

    #[test]
    fn views_at_offsets() {
        let b = [0u8; 5];
        assert!(VlanTag::new_checked_at(&b, 1).is_some());
        assert!(VlanTag::new_checked_at(&b, 2).is_none());
    }
}
