//! The Ethernet II header: destination and source MAC addresses, then the ethertype
//! ([`crate::ethertype`]), or the TPID of a VLAN tag ([`crate::vlan`]) that the tagged
//! frame's ethertype follows.

/// Length of the header: two MAC addresses and an ethertype.
pub const HEADER_LEN: usize = 14;

/// Length of the two MAC addresses: where a VLAN tag or an I-TAG is inserted, and
/// where the ethertype (or the first tag) starts.
pub const ADDRS_LEN: usize = 12;

fields! {
    /// Field offsets from the start of the frame.
    pub mod field: HEADER_LEN {
        /// Destination MAC address.
        DST: 0..6,
        /// Source MAC address.
        SRC: 6..12,
        /// The ethertype, the TPID of the first VLAN tag, or an 802.3 length.
        ETHERTYPE: 12..14,
    }
}

const _: () = assert!(field::ETHERTYPE.start == ADDRS_LEN);

view! {
    /// A view of an Ethernet II header ([`HEADER_LEN`] bytes).
    EthernetHeader, HEADER_LEN;

    /// The destination MAC address.
    dst / set_dst: [u8; 6] = field::DST;
    /// The source MAC address.
    src / set_src: [u8; 6] = field::SRC;
    /// The ethertype (or TPID, or 802.3 length).
    ethertype / set_ethertype: u16 = field::ETHERTYPE;
}

/// The 16-bit ethertype (or TPID) at `offset` of `buf`: the one after the MAC addresses
/// or after a VLAN tag. `None` if `buf` ends before it does.
#[inline(always)]
pub fn ethertype_at(buf: &[u8], offset: usize) -> Option<u16> {
    let b = buf.get(offset..offset.checked_add(2)?)?.first_chunk::<2>()?;
    Some(u16::from_be_bytes(*b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_made_header() {
        let mut f = [0u8; 20];
        f[..14].copy_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0x08, 0x00]);
        check_view! {
            EthernetHeader, HEADER_LEN, f;
            dst / set_dst = [1, 2, 3, 4, 5, 6],
            src / set_src = [7, 8, 9, 10, 11, 12],
            ethertype / set_ethertype = 0x0800,
        }
        assert_eq!(ethertype_at(&f, 12), Some(0x0800));
        assert_eq!(ethertype_at(&f, 19), None);
        assert_eq!(ethertype_at(&f, 100), None);
        let mut e = EthernetHeader::new_checked_mut(&mut f).unwrap();
        e.set_dst([0xff; 6]);
        e.set_src([0xee; 6]);
        e.set_ethertype(0x86dd);
        assert_eq!(
            &f[..14],
            &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0x86, 0xdd]
        );
    }

    #[test]
    fn truncated_buffers_are_refused() {
        let f = [0u8; 14];
        assert!(EthernetHeader::new_checked_at(&f, 1).is_none());
        assert!(EthernetHeader::new_checked_at(&f, 15).is_none());
    }
}
