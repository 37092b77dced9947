//! Ethertypes: the 16-bit protocol numbers after the MAC addresses (and after each VLAN
//! tag). A value below [`MIN`] is not a type but an IEEE 802.3 length.

/// IPv4.
pub const IPV4: u16 = 0x0800;
/// ARP.
pub const ARP: u16 = 0x0806;
/// Reverse ARP.
pub const RARP: u16 = 0x8035;
/// An IEEE 802.1Q VLAN tag (C-tag) follows: the TPID of [`crate::vlan`].
pub const VLAN: u16 = 0x8100;
/// An IEEE 802.1ad service tag (S-tag, QinQ) follows.
pub const QINQ: u16 = 0x88a8;
/// IPv6.
pub const IPV6: u16 = 0x86dd;
/// An MPLS label stack (unicast) follows.
pub const MPLS: u16 = 0x8847;
/// An MPLS label stack (multicast) follows.
pub const MPLS_MCAST: u16 = 0x8848;
/// An IEEE 802.1ah (PBB) I-TAG follows.
pub const PBB: u16 = 0x88e7;
/// The smallest ethertype; the field holds an 802.3 length below it.
pub const MIN: u16 = 0x0600;

/// Whether `ty` is the TPID of a VLAN tag (802.1Q or 802.1ad).
#[inline(always)]
pub const fn is_vlan(ty: u16) -> bool {
    ty == VLAN || ty == QINQ
}

/// Whether `ty` names an MPLS label stack (unicast or multicast).
#[inline(always)]
pub const fn is_mpls(ty: u16) -> bool {
    ty == MPLS || ty == MPLS_MCAST
}
