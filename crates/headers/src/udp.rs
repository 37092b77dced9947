//! The UDP header (RFC 768).

/// Length of the header.
pub const HEADER_LEN: usize = 8;

fields! {
    /// Field offsets from the start of the header.
    pub mod field: HEADER_LEN {
        /// Source port.
        SRC_PORT: 0..2,
        /// Destination port.
        DST_PORT: 2..4,
        /// Length of the datagram, header included.
        LENGTH: 4..6,
        /// Checksum (over the pseudo-header and the datagram); zero over IPv4: none.
        CHECKSUM: 6..8,
    }
}

view! {
    /// A view of a UDP header ([`HEADER_LEN`] bytes).
    UdpHeader, HEADER_LEN;

    /// The source port.
    src_port / set_src_port: u16 = field::SRC_PORT;
    /// The destination port.
    dst_port / set_dst_port: u16 = field::DST_PORT;
    /// The datagram's length.
    length / set_length: u16 = field::LENGTH;
    /// The checksum as stored.
    checksum / set_checksum: u16 = field::CHECKSUM;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_made_header() {
        check_view! {
            UdpHeader, HEADER_LEN, [0x13, 0x88, 0x00, 0x35, 0, 30, 0x12, 0x34];
            src_port / set_src_port = 5000,
            dst_port / set_dst_port = 53,
            length / set_length = 30,
            checksum / set_checksum = 0x1234,
        }
    }
}
