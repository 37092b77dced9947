//! The SCTP common header (RFC 9260): ports, verification tag and the CRC32c checksum,
//! which is stored least significant byte first (appendix A).

use crate::bytes::set;

/// Length of the common header.
pub const HEADER_LEN: usize = 12;

fields! {
    /// Field offsets from the start of the header.
    pub mod field: HEADER_LEN {
        /// Source port.
        SRC_PORT: 0..2,
        /// Destination port.
        DST_PORT: 2..4,
        /// Verification tag.
        VERIFICATION_TAG: 4..8,
        /// CRC32c over the packet with this field zero.
        CHECKSUM: 8..12,
    }
}

view! {
    /// A view of an SCTP common header ([`HEADER_LEN`] bytes).
    SctpHeader, HEADER_LEN;

    /// The source port.
    src_port / set_src_port: u16 = field::SRC_PORT;
    /// The destination port.
    dst_port / set_dst_port: u16 = field::DST_PORT;
    /// The verification tag.
    verification_tag / set_verification_tag: u32 = field::VERIFICATION_TAG;
    /// The checksum field's bytes read in network order, as packet dumps show them
    /// (the CRC32c itself is `checksum().swap_bytes()`).
    checksum: u32 = field::CHECKSUM;

    /// Stores a computed CRC32c, least significant byte first.
    pub fn set_crc32c(&mut self, crc: u32) {
        set(self.as_bytes_mut(), field::CHECKSUM.start, crc.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_of_a_hand_made_header() {
        check_view! {
            SctpHeader, HEADER_LEN,
            [0x0b, 0x59, 0x00, 0x50, 0xde, 0xad, 0xbe, 0xef, 0x78, 0x56, 0x34, 0x12];
            src_port / set_src_port = 2905,
            dst_port / set_dst_port = 80,
            verification_tag / set_verification_tag = 0xdead_beef,
            checksum = 0x7856_3412;
            // Least significant byte first: the getter reads it swapped.
            build(s) { s.set_crc32c(0x1234_5678); }
        }
    }
}
