//! Protocol header layouts and views over header bytes: the one place where peregrine
//! writes down where a field of Ethernet, VLAN tags, MPLS, PBB, ARP, IPv4, IPv6 (and its
//! extension headers), TCP, UDP, SCTP, ICMP, IGMP and neighbour discovery lies.
//!
//! The pattern is smoltcp's `wire` module, cut down to fixed-size headers. Each protocol
//! module has:
//!
//! * a `field` module of named offsets from the header's start: a `Range<usize>` for a
//!   multi-byte field (`ipv4::field::SRC_ADDR = 12..16`), a `usize` for a one-byte field
//!   (`ipv4::field::TTL = 8`), with a `const` assertion that they all lie inside the
//!   header. Code that works on offsets into a whole frame (incremental checksums,
//!   inserting and removing headers) adds these to the header's start:
//!   `l3 + ipv4::field::CHECKSUM.start`;
//! * `HEADER_LEN` (or `TAG_LEN`, `ENTRY_LEN`, ...): the fixed header's length;
//! * a view type, e.g. [`Ipv4Header<B>`], over a buffer `B` that borrows as
//!   `[u8; HEADER_LEN]`: `&[u8; 20]` to read, `&mut [u8; 20]` to read and write, or an
//!   owned `[u8; 20]` to build a header. Its accessors (`ihl`-like reads as
//!   `header_len()`, `total_len()`, `set_ttl()`, `checksum()`, ...) convert from and to
//!   network byte order.
//!
//! # Bounds
//!
//! The length is checked once, when the view is made: `new_checked(buf)` and
//! `new_checked_at(buf, offset)` (and `_mut` twins) take the header's bytes from a slice
//! or return `None` when the slice is too short; `new(array)` takes an array of the
//! right length and checks nothing. After that no accessor can fail or panic: every one
//! reads or writes at a constant offset inside an array whose length is part of its
//! type, so the compiler removes the range checks, and no panicking path is left.
//!
//! Only the fixed part of a header is viewed. What has a variable length (IPv4 and TCP
//! options, IPv6 extension header chains, ND options, payloads) is found from the
//! lengths the views read (`Ipv4Header::header_len`, `TcpHeader::header_len`,
//! `Ipv6ExtHeader::header_len`), and its checks belong to the caller: the parser, the
//! rewrites and the printer each decide what a short or inconsistent packet means.
//!
//! # Cost
//!
//! Views are one pointer (or the array itself), accessors are `#[inline(always)]` and
//! compile to the same loads and stores as hand-written indexing; nothing allocates
//! (the crate is `no_std`), and there is no `unsafe`.

#![cfg_attr(not(test), no_std)]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

#[macro_use]
mod view;
mod bytes;

pub mod arp;
pub mod ethernet;
pub mod ethertype;
pub mod icmp;
pub mod igmp;
pub mod ip_proto;
pub mod ipv4;
pub mod ipv6;
pub mod ipv6_ext;
pub mod mpls;
pub mod nd;
pub mod pbb;
pub mod sctp;
pub mod tcp;
pub mod udp;
pub mod vlan;

pub use arp::{ArpEthIpv4, ArpHeader};
pub use ethernet::EthernetHeader;
pub use icmp::IcmpHeader;
pub use igmp::IgmpHeader;
pub use ipv4::Ipv4Header;
pub use ipv6::Ipv6Header;
pub use ipv6_ext::{Ipv6ExtHeader, Ipv6FragHeader};
pub use mpls::MplsEntry;
pub use nd::{NdLinkLayerOption, NdMessage, NdOption};
pub use pbb::PbbItag;
pub use sctp::SctpHeader;
pub use tcp::TcpHeader;
pub use udp::UdpHeader;
pub use vlan::VlanTag;
