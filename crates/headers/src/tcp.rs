//! The TCP header (RFC 9293): [`HEADER_LEN`] fixed bytes, then options up to the data
//! offset ([`TcpHeader::header_len`]).

use crate::bytes::{be16, be32, fields_fit, set_be16, set_be32, u8_at};

/// Length of the header without options (data offset 5).
pub const HEADER_LEN: usize = 20;

/// Field offsets from the start of the header.
pub mod field {
    use core::ops::Range;

    /// Source port.
    pub const SRC_PORT: Range<usize> = 0..2;
    /// Destination port.
    pub const DST_PORT: Range<usize> = 2..4;
    /// Sequence number.
    pub const SEQ_NUM: Range<usize> = 4..8;
    /// Acknowledgment number.
    pub const ACK_NUM: Range<usize> = 8..12;
    /// Data offset (high 4 bits), reserved (3), and the 9 flags ([`super::flags`]).
    pub const OFF_FLAGS: Range<usize> = 12..14;
    /// The byte with the data offset (high nibble) and the NS flag (lowest bit).
    pub const DATA_OFF: usize = 12;
    /// The byte with the eight flags CWR..FIN.
    pub const FLAGS: usize = 13;
    /// Window size.
    pub const WIN_SIZE: Range<usize> = 14..16;
    /// Checksum (over the pseudo-header and the whole segment).
    pub const CHECKSUM: Range<usize> = 16..18;
    /// Urgent pointer.
    pub const URGENT: Range<usize> = 18..20;
}

const _: () = assert!(fields_fit(
    HEADER_LEN,
    &[
        (field::SRC_PORT, 2),
        (field::DST_PORT, 2),
        (field::SEQ_NUM, 4),
        (field::ACK_NUM, 4),
        (field::OFF_FLAGS, 2),
        (field::DATA_OFF..field::DATA_OFF + 1, 1),
        (field::FLAGS..field::FLAGS + 1, 1),
        (field::WIN_SIZE, 2),
        (field::CHECKSUM, 2),
        (field::URGENT, 2)
    ]
));

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
    TcpHeader, HEADER_LEN
}

impl<B: core::borrow::Borrow<[u8; HEADER_LEN]>> TcpHeader<B> {
    /// The source port.
    #[inline(always)]
    pub fn src_port(&self) -> u16 {
        be16(self.as_bytes(), field::SRC_PORT)
    }

    /// The destination port.
    #[inline(always)]
    pub fn dst_port(&self) -> u16 {
        be16(self.as_bytes(), field::DST_PORT)
    }

    /// The sequence number.
    #[inline(always)]
    pub fn seq_number(&self) -> u32 {
        be32(self.as_bytes(), field::SEQ_NUM)
    }

    /// The acknowledgment number.
    #[inline(always)]
    pub fn ack_number(&self) -> u32 {
        be32(self.as_bytes(), field::ACK_NUM)
    }

    /// The header length in bytes (data offset × 4), options included; less than
    /// [`HEADER_LEN`] in a malformed header.
    #[inline(always)]
    pub fn header_len(&self) -> usize {
        usize::from(u8_at(self.as_bytes(), field::DATA_OFF) >> 4) * 4
    }

    /// The flags: the low 12 bits of the offset/flags word ([`flags`]).
    #[inline(always)]
    pub fn flags(&self) -> u16 {
        be16(self.as_bytes(), field::OFF_FLAGS) & flags::MASK
    }

    /// The window size.
    #[inline(always)]
    pub fn window(&self) -> u16 {
        be16(self.as_bytes(), field::WIN_SIZE)
    }

    /// The checksum as stored.
    #[inline(always)]
    pub fn checksum(&self) -> u16 {
        be16(self.as_bytes(), field::CHECKSUM)
    }

    /// The urgent pointer.
    #[inline(always)]
    pub fn urgent(&self) -> u16 {
        be16(self.as_bytes(), field::URGENT)
    }
}

impl<B: core::borrow::BorrowMut<[u8; HEADER_LEN]>> TcpHeader<B> {
    /// Sets the source port.
    #[inline(always)]
    pub fn set_src_port(&mut self, port: u16) {
        set_be16(self.as_bytes_mut(), field::SRC_PORT, port);
    }

    /// Sets the destination port.
    #[inline(always)]
    pub fn set_dst_port(&mut self, port: u16) {
        set_be16(self.as_bytes_mut(), field::DST_PORT, port);
    }

    /// Sets the sequence number.
    #[inline(always)]
    pub fn set_seq_number(&mut self, seq: u32) {
        set_be32(self.as_bytes_mut(), field::SEQ_NUM, seq);
    }

    /// Sets the acknowledgment number.
    #[inline(always)]
    pub fn set_ack_number(&mut self, ack: u32) {
        set_be32(self.as_bytes_mut(), field::ACK_NUM, ack);
    }

    /// Sets the header length (`len` bytes, a multiple of 4 up to 60), keeping the
    /// flags.
    #[inline(always)]
    pub fn set_header_len(&mut self, len: usize) {
        let w = be16(self.as_bytes(), field::OFF_FLAGS);
        let off = (((len / 4) & 0x0f) as u16) << 12;
        set_be16(
            self.as_bytes_mut(),
            field::OFF_FLAGS,
            (w & flags::MASK) | off,
        );
    }

    /// Sets the flags (the low 12 bits of `f`), keeping the data offset.
    #[inline(always)]
    pub fn set_flags(&mut self, f: u16) {
        let w = be16(self.as_bytes(), field::OFF_FLAGS);
        set_be16(
            self.as_bytes_mut(),
            field::OFF_FLAGS,
            (w & !flags::MASK) | (f & flags::MASK),
        );
    }

    /// Sets the window size.
    #[inline(always)]
    pub fn set_window(&mut self, win: u16) {
        set_be16(self.as_bytes_mut(), field::WIN_SIZE, win);
    }

    /// Stores a checksum.
    #[inline(always)]
    pub fn set_checksum(&mut self, c: u16) {
        set_be16(self.as_bytes_mut(), field::CHECKSUM, c);
    }

    /// Sets the urgent pointer.
    #[inline(always)]
    pub fn set_urgent(&mut self, p: u16) {
        set_be16(self.as_bytes_mut(), field::URGENT, p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1024 → 80, seq 1, ack 2, data offset 6 (4 bytes of options), SYN|ACK|NS,
    /// window 8192, checksum 0x74c3, urgent 7.
    const HDR: [u8; 20] = [
        0x04, 0x00, 0x00, 0x50, 0, 0, 0, 1, 0, 0, 0, 2, 0x61, 0x12, 0x20, 0x00, 0x74, 0xc3, 0, 7,
    ];

    #[test]
    fn fields_of_a_hand_made_header() {
        let t = TcpHeader::new_checked(&HDR).unwrap();
        assert_eq!((t.src_port(), t.dst_port()), (1024, 80));
        assert_eq!((t.seq_number(), t.ack_number()), (1, 2));
        assert_eq!(t.header_len(), 24);
        assert_eq!(t.flags(), flags::SYN | flags::ACK | flags::NS);
        assert_eq!(HDR[field::FLAGS], (flags::SYN | flags::ACK) as u8);
        assert_eq!((t.window(), t.checksum(), t.urgent()), (8192, 0x74c3, 7));
    }

    #[test]
    fn built_header_is_the_hand_made_one() {
        let mut t = TcpHeader::new([0u8; HEADER_LEN]);
        t.set_flags(0xf000 | flags::SYN | flags::ACK | flags::NS);
        t.set_header_len(24);
        t.set_src_port(1024);
        t.set_dst_port(80);
        t.set_seq_number(1);
        t.set_ack_number(2);
        t.set_window(8192);
        t.set_checksum(0x74c3);
        t.set_urgent(7);
        assert_eq!(t.into_inner(), HDR);
    }

    #[test]
    fn truncated_buffers_are_refused() {
        assert!(TcpHeader::new_checked(&HDR[..19]).is_none());
        assert!(TcpHeader::new_checked_at(&HDR, 1).is_none());
        let mut b = [0u8; 40];
        let mut t = TcpHeader::new_checked_at_mut(&mut b, 20).unwrap();
        t.set_checksum(0xbeef);
        assert_eq!(
            &b[20 + field::CHECKSUM.start..20 + field::CHECKSUM.end],
            &[0xbe, 0xef]
        );
    }
}
