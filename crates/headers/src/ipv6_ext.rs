//! IPv6 extension headers (RFC 8200 §4): every one starts with a next-header byte;
//! hop-by-hop options, routing and destination options then have a length in 8-byte
//! units not counting the first 8 ([`Ipv6ExtHeader::header_len`]), the authentication header
//! (RFC 4302) a length in 4-byte units not counting the first 8
//! ([`Ipv6ExtHeader::ah_header_len`]); the fragment header ([`frag`]) is always 8 bytes.

pub use frag::Ipv6FragHeader;

/// Length of the part every extension header (but ESP) starts with: next header and
/// length.
pub const HEADER_LEN: usize = 2;

/// The shortest extension header (every length is a multiple of 8 from 8 up).
pub const MIN_LEN: usize = 8;

fields! {
    /// Field offsets from the start of an extension header.
    pub mod field: HEADER_LEN {
        /// Next header ([`crate::ip_proto`]).
        NXT_HDR: 0,
        /// Header extension length (its unit depends on the header).
        LEN: 1,
    }
}

view! {
    /// A view of the start of an IPv6 extension header ([`HEADER_LEN`] bytes).
    Ipv6ExtHeader, HEADER_LEN;

    /// The next header.
    next_header / set_next_header: u8 = field::NXT_HDR;
    /// The length byte as stored (in the header's own unit).
    hdr_ext_len / set_hdr_ext_len: u8 = field::LEN;
    /// The header's length in bytes for hop-by-hop, routing and destination options:
    /// `(len + 1) * 8`.
    pub fn header_len(&self) -> usize {
        (usize::from(self.hdr_ext_len()) + 1) * 8
    }
    /// The header's length in bytes for the authentication header: `(len + 2) * 4`.
    pub fn ah_header_len(&self) -> usize {
        (usize::from(self.hdr_ext_len()) + 2) * 4
    }
}

/// The IPv6 fragment header.
pub mod frag {
    /// Length of the fragment header.
    pub const HEADER_LEN: usize = 8;

    fields! {
        /// Field offsets from the start of the fragment header.
        pub mod field: HEADER_LEN {
            /// Next header.
            NXT_HDR: 0,
            /// Fragment offset in 8-byte units (high 13 bits), reserved (2), more
            /// fragments (lowest bit).
            OFFSET_FLAGS: 2..4,
            /// Identification.
            IDENT: 4..8,
        }
    }

    /// The fragment offset's bits in the offset/flags word.
    pub const OFFSET_MASK: u16 = 0xfff8;
    /// The "more fragments" bit in the offset/flags word.
    pub const MORE_FRAGS: u16 = 1;

    view! {
        /// A view of an IPv6 fragment header ([`HEADER_LEN`] bytes).
        Ipv6FragHeader, HEADER_LEN;

        /// The next header.
        next_header / set_next_header: u8 = field::NXT_HDR;
        /// The offset/flags word.
        offset_flags / set_offset_flags: u16 = field::OFFSET_FLAGS;
        /// The fragment offset in 8-byte units: nonzero in every fragment but the first.
        pub fn frag_offset(&self) -> u16 {
            self.offset_flags() >> 3
        }
        /// The "more fragments" flag.
        pub fn more_frags(&self) -> bool {
            self.offset_flags() & MORE_FRAGS != 0
        }
        /// The identification.
        ident / set_ident: u32 = field::IDENT;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_of_hand_made_headers() {
        // Hop-by-hop, 16 bytes; AH with payload length 4, 24 bytes.
        check_view! {
            Ipv6ExtHeader, HEADER_LEN, [17, 1, 0, 0, 0, 0, 0, 0];
            next_header / set_next_header = 17,
            hdr_ext_len / set_hdr_ext_len = 1,
            header_len = 16,
        }
        check_view! {
            Ipv6ExtHeader, HEADER_LEN, [6, 4];
            next_header / set_next_header = 6,
            hdr_ext_len / set_hdr_ext_len = 4,
            ah_header_len = 24,
        }
    }

    #[test]
    fn fragment_header() {
        // Next header UDP, offset 185 (1480 bytes), more fragments, ID 0xdeadbeef.
        let w: u16 = (185 << 3) | 1;
        let mut b = [17, 0, 0, 0, 0xde, 0xad, 0xbe, 0xef];
        b[2..4].copy_from_slice(&w.to_be_bytes());
        check_view! {
            Ipv6FragHeader, frag::HEADER_LEN, b;
            next_header / set_next_header = 17,
            offset_flags / set_offset_flags = w,
            frag_offset = 185, more_frags = true,
            ident / set_ident = 0xdead_beef,
        }
        assert_eq!(w & frag::OFFSET_MASK, 185 << 3);
    }
}
