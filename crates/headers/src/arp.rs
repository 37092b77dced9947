//! ARP (RFC 826): a fixed part naming the hardware and protocol address types and
//! lengths and the operation, then the addresses. Only Ethernet/IPv4 ARP (hardware type
//! 1, protocol [`crate::ethertype::IPV4`], lengths 6 and 4) has a layout here:
//! [`ArpEthIpv4`].

use crate::bytes::{be16, be32, fields_fit, get, set, set_be16, set_be32, set_u8_at, u8_at};

/// Length of the fixed part: types, lengths and operation.
pub const HEADER_LEN: usize = 8;
/// Length of an Ethernet/IPv4 ARP packet.
pub const ETH_IPV4_LEN: usize = 28;

/// The hardware type of Ethernet.
pub const HTYPE_ETHERNET: u16 = 1;

/// Field offsets from the start of the ARP header (Ethernet/IPv4 for the addresses).
pub mod field {
    use core::ops::Range;

    /// Hardware type.
    pub const HTYPE: Range<usize> = 0..2;
    /// Protocol type (an ethertype).
    pub const PTYPE: Range<usize> = 2..4;
    /// Hardware address length.
    pub const HLEN: usize = 4;
    /// Protocol address length.
    pub const PLEN: usize = 5;
    /// Operation (1 request, 2 reply).
    pub const OPER: Range<usize> = 6..8;
    /// Sender hardware address.
    pub const SHA: Range<usize> = 8..14;
    /// Sender protocol address.
    pub const SPA: Range<usize> = 14..18;
    /// Target hardware address.
    pub const THA: Range<usize> = 18..24;
    /// Target protocol address.
    pub const TPA: Range<usize> = 24..28;
}

const _: () = assert!(
    fields_fit(
        HEADER_LEN,
        &[
            (field::HTYPE, 2),
            (field::PTYPE, 2),
            (field::HLEN..field::HLEN + 1, 1),
            (field::PLEN..field::PLEN + 1, 1),
            (field::OPER, 2)
        ]
    ) && fields_fit(
        ETH_IPV4_LEN,
        &[
            (field::SHA, 6),
            (field::SPA, 4),
            (field::THA, 6),
            (field::TPA, 4)
        ]
    )
);

view! {
    /// A view of ARP's fixed part ([`HEADER_LEN`] bytes), whatever the address types.
    ArpHeader, HEADER_LEN
}

view! {
    /// A view of an Ethernet/IPv4 ARP packet ([`ETH_IPV4_LEN`] bytes).
    ArpEthIpv4, ETH_IPV4_LEN
}

/// Whether the fixed part says Ethernet/IPv4.
#[inline(always)]
fn is_ethernet_ipv4<const N: usize>(b: &[u8; N]) -> bool {
    be16(b, field::HTYPE) == HTYPE_ETHERNET
        && be16(b, field::PTYPE) == crate::ethertype::IPV4
        && u8_at(b, field::HLEN) == 6
        && u8_at(b, field::PLEN) == 4
}

impl<B: core::borrow::Borrow<[u8; HEADER_LEN]>> ArpHeader<B> {
    /// The hardware type.
    #[inline(always)]
    pub fn htype(&self) -> u16 {
        be16(self.as_bytes(), field::HTYPE)
    }

    /// The protocol type.
    #[inline(always)]
    pub fn ptype(&self) -> u16 {
        be16(self.as_bytes(), field::PTYPE)
    }

    /// The hardware address length.
    #[inline(always)]
    pub fn hlen(&self) -> u8 {
        u8_at(self.as_bytes(), field::HLEN)
    }

    /// The protocol address length.
    #[inline(always)]
    pub fn plen(&self) -> u8 {
        u8_at(self.as_bytes(), field::PLEN)
    }

    /// The operation.
    #[inline(always)]
    pub fn oper(&self) -> u16 {
        be16(self.as_bytes(), field::OPER)
    }

    /// Whether this is Ethernet/IPv4 ARP (the only kind [`ArpEthIpv4`] reads).
    #[inline(always)]
    pub fn is_ethernet_ipv4(&self) -> bool {
        is_ethernet_ipv4(self.as_bytes())
    }
}

impl<B: core::borrow::Borrow<[u8; ETH_IPV4_LEN]>> ArpEthIpv4<B> {
    /// Whether the fixed part says Ethernet/IPv4 (else the addresses below mean
    /// nothing).
    #[inline(always)]
    pub fn is_ethernet_ipv4(&self) -> bool {
        is_ethernet_ipv4(self.as_bytes())
    }

    /// The operation.
    #[inline(always)]
    pub fn oper(&self) -> u16 {
        be16(self.as_bytes(), field::OPER)
    }

    /// The sender hardware address.
    #[inline(always)]
    pub fn sha(&self) -> [u8; 6] {
        get(self.as_bytes(), field::SHA.start)
    }

    /// The sender protocol address.
    #[inline(always)]
    pub fn spa(&self) -> u32 {
        be32(self.as_bytes(), field::SPA)
    }

    /// The target hardware address.
    #[inline(always)]
    pub fn tha(&self) -> [u8; 6] {
        get(self.as_bytes(), field::THA.start)
    }

    /// The target protocol address.
    #[inline(always)]
    pub fn tpa(&self) -> u32 {
        be32(self.as_bytes(), field::TPA)
    }
}

impl<B: core::borrow::BorrowMut<[u8; ETH_IPV4_LEN]>> ArpEthIpv4<B> {
    /// Writes the fixed part of an Ethernet/IPv4 ARP packet with operation `oper`.
    #[inline(always)]
    pub fn set_ethernet_ipv4(&mut self, oper: u16) {
        let b = self.as_bytes_mut();
        set_be16(b, field::HTYPE, HTYPE_ETHERNET);
        set_be16(b, field::PTYPE, crate::ethertype::IPV4);
        set_u8_at(b, field::HLEN, 6);
        set_u8_at(b, field::PLEN, 4);
        set_be16(b, field::OPER, oper);
    }

    /// Sets the operation.
    #[inline(always)]
    pub fn set_oper(&mut self, oper: u16) {
        set_be16(self.as_bytes_mut(), field::OPER, oper);
    }

    /// Sets the sender hardware address.
    #[inline(always)]
    pub fn set_sha(&mut self, mac: [u8; 6]) {
        set(self.as_bytes_mut(), field::SHA.start, mac);
    }

    /// Sets the sender protocol address.
    #[inline(always)]
    pub fn set_spa(&mut self, addr: u32) {
        set_be32(self.as_bytes_mut(), field::SPA, addr);
    }

    /// Sets the target hardware address.
    #[inline(always)]
    pub fn set_tha(&mut self, mac: [u8; 6]) {
        set(self.as_bytes_mut(), field::THA.start, mac);
    }

    /// Sets the target protocol address.
    #[inline(always)]
    pub fn set_tpa(&mut self, addr: u32) {
        set_be32(self.as_bytes_mut(), field::TPA, addr);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const REQUEST: [u8; 28] = [
        0, 1, 8, 0, 6, 4, 0, 1, 2, 0, 0, 0, 0, 1, 192, 168, 0, 1, 0, 0, 0, 0, 0, 0, 192, 168, 0, 2,
    ];

    #[test]
    fn fields_of_a_hand_made_request() {
        let h = ArpHeader::new_checked(&REQUEST).unwrap();
        assert_eq!(
            (h.htype(), h.ptype(), h.hlen(), h.plen(), h.oper()),
            (1, 0x0800, 6, 4, 1)
        );
        assert!(h.is_ethernet_ipv4());
        let a = ArpEthIpv4::new_checked(&REQUEST).unwrap();
        assert!(a.is_ethernet_ipv4());
        assert_eq!(a.oper(), 1);
        assert_eq!(a.sha(), [2, 0, 0, 0, 0, 1]);
        assert_eq!(a.spa(), 0xc0a8_0001);
        assert_eq!(a.tha(), [0; 6]);
        assert_eq!(a.tpa(), 0xc0a8_0002);
        let mut other = REQUEST;
        other[field::PLEN] = 16;
        assert!(!ArpHeader::new_checked(&other).unwrap().is_ethernet_ipv4());
    }

    #[test]
    fn built_request_is_the_hand_made_one() {
        let mut a = ArpEthIpv4::new([0u8; ETH_IPV4_LEN]);
        a.set_ethernet_ipv4(2);
        a.set_oper(1);
        a.set_sha([2, 0, 0, 0, 0, 1]);
        a.set_spa(0xc0a8_0001);
        a.set_tha([0; 6]);
        a.set_tpa(0xc0a8_0002);
        assert_eq!(a.into_inner(), REQUEST);
    }

    #[test]
    fn truncated_buffers_are_refused() {
        assert!(ArpHeader::new_checked(&REQUEST[..7]).is_none());
        assert!(ArpHeader::new_checked(&REQUEST[..8]).is_some());
        assert!(ArpEthIpv4::new_checked(&REQUEST[..27]).is_none());
        assert!(ArpEthIpv4::new_checked_at(&REQUEST, 1).is_none());
    }
}
