//! The TCP header (RFC 9293): [`HEADER_LEN`] fixed bytes, then options up to the data
//! offset ([`TcpHeader::header_len`]).

use crate::bytes::{be16, set_be16, u8_at};

/// Length of the header without options (data offset 5).
pub const HEADER_LEN: usize = 20;

fields! {
    /// Field offsets from the start of the header.
    pub mod field: HEADER_LEN {
        /// Source port.
        SRC_PORT: 0..2,
        /// Destination port.
        DST_PORT: 2..4,
        /// Sequence number.
        SEQ_NUM: 4..8,
        /// Acknowledgment number.
        ACK_NUM: 8..12,
        /// Data offset (high 4 bits), reserved (3), and the 9 flags ([`super::flags`]).
        OFF_FLAGS: 12..14,
        /// The byte with the data offset (high nibble) and the NS flag (lowest bit).
        DATA_OFF: 12,
        /// The byte with the eight flags CWR..FIN.
        FLAGS: 13,
        /// Window size.
        WIN_SIZE: 14..16,
        /// Checksum (over the pseudo-header and the whole segment).
        CHECKSUM: 16..18,
        /// Urgent pointer.
        URGENT: 18..20,
    }
}

/// TCP flags, as bits of [`TcpHeader::flags`](crate::tcp::TcpHeader::flags) (the low 12 bits
/// of the [`field::OFF_FLAGS`] word; the eight low ones are also
/// the [`field::FLAGS`] byte).
pub mod flags {
    /// No more data.
    pub const FIN: u16 = 0x001;
    /// Synchronize sequence numbers.
    pub const SYN: u16 = 0x002;
    /// Reset.
    pub const RST: u16 = 0x004;
    /// Push.
    pub const PSH: u16 = 0x008;
    /// Acknowledgment field significant.
    pub const ACK: u16 = 0x010;
    /// Urgent pointer significant.
    pub const URG: u16 = 0x020;
    /// ECN echo.
    pub const ECE: u16 = 0x040;
    /// Congestion window reduced.
    pub const CWR: u16 = 0x080;
    /// ECN nonce (RFC 3540, historic).
    pub const NS: u16 = 0x100;
    /// The bits [`TcpHeader::flags`](super::TcpHeader::flags) returns (the reserved bits included).
    pub const MASK: u16 = 0x0fff;
}

view! {
    /// A view of the fixed part of a TCP header ([`HEADER_LEN`] bytes).
    TcpHeader, HEADER_LEN;

    /// The source port.
    src_port / set_src_port: u16 = field::SRC_PORT;
    /// The destination port.
    dst_port / set_dst_port: u16 = field::DST_PORT;
    /// The sequence number.
    seq_number / set_seq_number: u32 = field::SEQ_NUM;
    /// The acknowledgment number.
    ack_number / set_ack_number: u32 = field::ACK_NUM;
    /// The header length in bytes (data offset × 4), options included; less than
    /// [`HEADER_LEN`] in a malformed header.
    pub fn header_len(&self) -> usize {
        usize::from(u8_at(self.as_bytes(), field::DATA_OFF) >> 4) * 4
    }
    /// Sets the header length (`len` bytes, a multiple of 4 up to 60), keeping the
    /// flags.
    pub fn set_header_len(&mut self, len: usize) {
        let w = be16(self.as_bytes(), field::OFF_FLAGS);
        let off = (((len / 4) & 0x0f) as u16) << 12;
        set_be16(self.as_bytes_mut(), field::OFF_FLAGS, (w & flags::MASK) | off);
    }
    /// The flags: the low 12 bits of the offset/flags word ([`flags`]).
    pub fn flags(&self) -> u16 {
        be16(self.as_bytes(), field::OFF_FLAGS) & flags::MASK
    }
    /// Sets the flags (the low 12 bits of `f`), keeping the data offset.
    pub fn set_flags(&mut self, f: u16) {
        let w = be16(self.as_bytes(), field::OFF_FLAGS);
        set_be16(self.as_bytes_mut(), field::OFF_FLAGS, (w & !flags::MASK) | (f & flags::MASK));
    }
    /// The window size.
    window / set_window: u16 = field::WIN_SIZE;
    /// The checksum as stored.
    checksum / set_checksum: u16 = field::CHECKSUM;
    /// The urgent pointer.
    urgent / set_urgent: u16 = field::URGENT;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1024 → 80, seq 1, ack 2, data offset 6 (4 bytes of options), SYN|ACK|NS,
    /// window 8192, checksum 0x74c3, urgent 7.
    const HDR: [u8; 20] =
        [0x04, 0x00, 0x00, 0x50, 0, 0, 0, 1, 0, 0, 0, 2, 0x61, 0x12, 0x20, 0x00, 0x74, 0xc3, 0, 7];

    #[test]
    fn hand_made_header() {
        check_view! {
            TcpHeader, HEADER_LEN, HDR;
            src_port / set_src_port = 1024,
            dst_port / set_dst_port = 80,
            seq_number / set_seq_number = 1,
            ack_number / set_ack_number = 2,
            header_len = 24,
            flags = flags::SYN | flags::ACK | flags::NS,
            window / set_window = 8192,
            checksum / set_checksum = 0x74c3,
            urgent / set_urgent = 7;
            build(t) {
                // The flags' setter ignores the offset's bits; the offset's keeps the flags.
                t.set_flags(0xf000 | flags::SYN | flags::ACK | flags::NS);
                t.set_header_len(24);
            }
        }
        assert_eq!(HDR[field::FLAGS], (flags::SYN | flags::ACK) as u8);
    }

    #[test]
    fn view_inside_a_segment() {
        let mut b = [0u8; 40];
        let mut t = TcpHeader::new_checked_at_mut(&mut b, 20).unwrap();
        t.set_checksum(0xbeef);
        assert_eq!(&b[20 + field::CHECKSUM.start..20 + field::CHECKSUM.end], &[0xbe, 0xef]);
    }
}
