//! An MPLS label stack entry (RFC 3032): one 32-bit word of label (20 bits), traffic
//! class (3 bits), bottom-of-stack (1 bit) and TTL (8 bits). A label stack follows the
//! ethertype [`crate::ethertype::MPLS`] or [`crate::ethertype::MPLS_MCAST`]; below the
//! entry with bottom-of-stack set lies the payload (IPv4 or IPv6, told by its version
//! nibble).

/// Length of one label stack entry.
pub const ENTRY_LEN: usize = 4;

fields! {
    /// Field offsets from the start of the entry.
    pub mod field: ENTRY_LEN {
        /// The whole entry (label, TC, bottom-of-stack, TTL).
        LSE: 0..4,
        /// The byte whose lowest bit is bottom-of-stack (its upper bits: the label's last 4
        /// and the TC).
        BOS_BYTE: 2,
        /// The TTL.
        TTL: 3,
    }
}

/// Where the 20-bit label starts in the entry's word.
pub const LABEL_SHIFT: u32 = 12;
/// The label's bits, shifted down.
pub const LABEL_MASK: u32 = 0x000f_ffff;
/// Where the 3-bit traffic class starts in the entry's word.
pub const TC_SHIFT: u32 = 9;
/// The traffic class's bits, shifted down.
pub const TC_MASK: u32 = 7;
/// The bottom-of-stack bit in the entry's word.
pub const BOS: u32 = 0x100;
/// The TTL's bits in the entry's word.
pub const TTL_MASK: u32 = 0xff;

view! {
    /// A view of an MPLS label stack entry ([`ENTRY_LEN`] bytes).
    MplsEntry, ENTRY_LEN;

    /// The whole entry as a word.
    word / set_word: u32 = field::LSE;
    /// The label (20 bits).
    label / set_label: u32 = word / set_word[LABEL_MASK << LABEL_SHIFT];
    /// The traffic class (3 bits).
    tc / set_tc: u8 = word / set_word[TC_MASK << TC_SHIFT];
    /// Whether this is the bottom of the stack.
    bos / set_bos: bool = word / set_word[BOS];
    /// The TTL.
    ttl / set_ttl: u8 = field::TTL;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_made_entry() {
        // Label 0xabcde, TC 5, BoS, TTL 64.
        let w: u32 = (0xabcde << 12) | (5 << 9) | 0x100 | 64;
        let mut b = w.to_be_bytes();
        check_view! {
            MplsEntry, ENTRY_LEN, b;
            word = w, label = 0xabcde, tc = 5, bos = true, ttl / set_ttl = 64;
            build(e) {
                e.set_label(0xabcde);
                e.set_tc(5);
                e.set_bos(true);
            }
        }
        assert_eq!(b[field::BOS_BYTE] & 1, 1);
        let mut e = MplsEntry::new(&mut b);
        e.set_label(1);
        e.set_tc(2);
        e.set_bos(false);
        e.set_ttl(3);
        assert_eq!(u32::from_be_bytes(b), (1 << 12) | (2 << 9) | 3);
    }

    #[test]
    fn views_at_offsets() {
        assert!(MplsEntry::new_checked_at(&[0; 8], 4).is_some());
        assert!(MplsEntry::new_checked_at(&[0; 8], 5).is_none());
    }
}
