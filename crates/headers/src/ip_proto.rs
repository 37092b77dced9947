//! IP protocol numbers (the IPv4 protocol field, the IPv6 next-header values), those
//! peregrine reads or writes.

/// IPv6 hop-by-hop options header.
pub const HOPOPT: u8 = 0;
/// ICMP (for IPv4).
pub const ICMP: u8 = 1;
/// IGMP.
pub const IGMP: u8 = 2;
/// TCP.
pub const TCP: u8 = 6;
/// UDP.
pub const UDP: u8 = 17;
/// IPv6 routing header.
pub const ROUTING: u8 = 43;
/// IPv6 fragment header.
pub const FRAGMENT: u8 = 44;
/// Encapsulating security payload.
pub const ESP: u8 = 50;
/// Authentication header.
pub const AH: u8 = 51;
/// ICMPv6.
pub const ICMPV6: u8 = 58;
/// IPv6 "no next header".
pub const NONXT: u8 = 59;
/// IPv6 destination options header.
pub const DSTOPTS: u8 = 60;
/// SCTP.
pub const SCTP: u8 = 132;
