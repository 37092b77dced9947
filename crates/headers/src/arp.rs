//! ARP (RFC 826): a fixed part naming the hardware and protocol address types and
//! lengths and the operation, then the addresses. Only Ethernet/IPv4 ARP (hardware type
//! 1, protocol [`crate::ethertype::IPV4`], lengths 6 and 4) has a layout here:
//! [`ArpEthIpv4`].

use crate::bytes::{be16, set_be16, set_u8_at, u8_at};

/// Length of the fixed part: types, lengths and operation.
pub const HEADER_LEN: usize = 8;
/// Length of an Ethernet/IPv4 ARP packet.
pub const ETH_IPV4_LEN: usize = 28;

/// The hardware type of Ethernet.
pub const HTYPE_ETHERNET: u16 = 1;

fields! {
    /// Field offsets from the start of the ARP header (Ethernet/IPv4 for the addresses).
    pub mod field: ETH_IPV4_LEN {
        /// Hardware type.
        HTYPE: 0..2,
        /// Protocol type (an ethertype).
        PTYPE: 2..4,
        /// Hardware address length.
        HLEN: 4,
        /// Protocol address length.
        PLEN: 5,
        /// Operation (1 request, 2 reply).
        OPER: 6..8,
        /// Sender hardware address.
        SHA: 8..14,
        /// Sender protocol address.
        SPA: 14..18,
        /// Target hardware address.
        THA: 18..24,
        /// Target protocol address.
        TPA: 24..28,
    }
}

/// Whether the fixed part says Ethernet/IPv4.
#[inline(always)]
fn is_ethernet_ipv4<const N: usize>(b: &[u8; N]) -> bool {
    be16(b, field::HTYPE) == HTYPE_ETHERNET
        && be16(b, field::PTYPE) == crate::ethertype::IPV4
        && u8_at(b, field::HLEN) == 6
        && u8_at(b, field::PLEN) == 4
}

view! {
    /// A view of ARP's fixed part ([`HEADER_LEN`] bytes), whatever the address types.
    ArpHeader, HEADER_LEN;

    /// The hardware type.
    htype: u16 = field::HTYPE;
    /// The protocol type.
    ptype: u16 = field::PTYPE;
    /// The hardware address length.
    hlen: u8 = field::HLEN;
    /// The protocol address length.
    plen: u8 = field::PLEN;
    /// The operation.
    oper: u16 = field::OPER;
    /// Whether this is Ethernet/IPv4 ARP (the only kind [`ArpEthIpv4`] reads).
    pub fn is_ethernet_ipv4(&self) -> bool {
        is_ethernet_ipv4(self.as_bytes())
    }
}

view! {
    /// A view of an Ethernet/IPv4 ARP packet ([`ETH_IPV4_LEN`] bytes).
    ArpEthIpv4, ETH_IPV4_LEN;

    /// Whether the fixed part says Ethernet/IPv4 (else the addresses below mean
    /// nothing).
    pub fn is_ethernet_ipv4(&self) -> bool {
        is_ethernet_ipv4(self.as_bytes())
    }
    /// Writes the fixed part of an Ethernet/IPv4 ARP packet with operation `oper`.
    pub fn set_ethernet_ipv4(&mut self, oper: u16) {
        let b = self.as_bytes_mut();
        set_be16(b, field::HTYPE, HTYPE_ETHERNET);
        set_be16(b, field::PTYPE, crate::ethertype::IPV4);
        set_u8_at(b, field::HLEN, 6);
        set_u8_at(b, field::PLEN, 4);
        set_be16(b, field::OPER, oper);
    }
    /// The operation.
    oper / set_oper: u16 = field::OPER;
    /// The sender hardware address.
    sha / set_sha: [u8; 6] = field::SHA;
    /// The sender protocol address.
    spa / set_spa: u32 = field::SPA;
    /// The target hardware address.
    tha / set_tha: [u8; 6] = field::THA;
    /// The target protocol address.
    tpa / set_tpa: u32 = field::TPA;
}

#[cfg(test)]
mod tests {
    use super::*;

    const REQUEST: [u8; 28] = [
        0, 1, 8, 0, 6, 4, 0, 1, 2, 0, 0, 0, 0, 1, 192, 168, 0, 1, 0, 0, 0, 0, 0, 0, 192, 168, 0, 2,
    ];

    #[test]
    fn hand_made_request() {
        check_view! {
            read ArpHeader, HEADER_LEN, REQUEST;
            htype = 1, ptype = 0x0800, hlen = 6, plen = 4, oper = 1, is_ethernet_ipv4 = true,
        }
        check_view! {
            ArpEthIpv4, ETH_IPV4_LEN, REQUEST;
            is_ethernet_ipv4 = true,
            oper / set_oper = 1,
            sha / set_sha = [2, 0, 0, 0, 0, 1],
            spa / set_spa = 0xc0a8_0001,
            tha / set_tha = [0; 6],
            tpa / set_tpa = 0xc0a8_0002;
            // The operation's setter overwrites the 2 written here.
            build(a) { a.set_ethernet_ipv4(2); }
        }
        let mut other = REQUEST;
        other[field::PLEN] = 16;
        assert!(!ArpHeader::new_checked(&other).unwrap().is_ethernet_ipv4());
    }
}
