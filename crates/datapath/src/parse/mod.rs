//! Packet parser: frame bytes to a [`FlowKey`] and the offsets of the headers found.
//!
//! [`parse`] walks one Ethernet frame from the outside in and writes every OpenFlow 1.3
//! match field it finds into the key (see `key.rs` for the layout). It is the first step
//! of every packet on the hot path, so it allocates nothing, takes no locks, never panics
//! on any input, and reads each header through the views of the `headers` crate
//! (`Ipv4Header::new_checked_at` and the like: the header's length is checked once,
//! when the view is made, and a frame too short for it is the layer's `Truncated*`
//! error).
//!
//! What it understands, layer by layer:
//!
//! * **L2** (this module): Ethernet II; up to two VLAN tags (outer TPID 0x8100 or 0x88a8,
//!   inner 0x8100) — `VLAN_VID`/`VLAN_PCP` come from the outermost tag; `ETH_TYPE` is the
//!   ethertype after the tags. An 802.3 length field (< 0x0600) gives `ETH_TYPE` 0x05ff
//!   (`OFP_DL_TYPE_NOT_ETH_TYPE`) and parsing stops. PBB (0x88e7) fills `PBB_ISID` from the
//!   I-TAG and stops. MPLS (0x8847/0x8848) fills label/TC/BoS from the outermost label
//!   stack entry and stops: OpenFlow 1.3 does not look below MPLS.
//! * **L3** (`ip.rs`): Ethernet/IPv4 ARP, IPv4 (options skipped, fragments), IPv6 with its
//!   extension header chain and the `OFPIEH_*` bits.
//! * **L4** (`l4.rs`): TCP, UDP, SCTP, ICMPv4, ICMPv6 with neighbour discovery; only for
//!   non-fragments and first fragments.
//!
//! Invariants of the result:
//!
//! * `key` is fully overwritten: `IN_PORT` from the argument, every other field from the
//!   frame, zero when absent. Each field is written at most once per parse.
//! * When parsing stops at a problem, [`ParseOutcome::error`] names it and the key holds
//!   every field parsed before it (later fields stay zero). A frame whose IP length
//!   claims more bytes than the frame holds is parsed over the bytes present and flagged
//!   with [`ParseOutcome::ip_truncated`]; bytes past the IP length (Ethernet padding)
//!   are never read as headers.
//! * [`Layers`] offsets are set exactly for the headers that were present in full, and
//!   fit in `u16` because at most the first 65535 bytes of a frame are looked at.

mod ip;
mod l4;
#[cfg(test)]
mod tests;

use headers::{ethernet, vlan, EthernetHeader, MplsEntry, PbbItag, VlanTag};

use crate::key::{Field, FlowKey};
use crate::packet::Layers;

pub use ip::{ieh, proto};

/// Why parsing stopped early. The key holds every field parsed before the problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParseError {
    /// Shorter than an Ethernet header.
    TruncatedEthernet,
    /// A VLAN tag (or the ethertype after it) is cut off.
    TruncatedVlan,
    /// The PBB I-TAG is cut off.
    TruncatedPbb,
    /// The first MPLS label stack entry is cut off.
    TruncatedMpls,
    /// The ARP header is cut off.
    TruncatedArp,
    /// The IPv4 header (with its options) is cut off.
    TruncatedIpv4,
    /// IPv4 version is not 4, IHL < 5, or total length < header length.
    BadIpv4Header,
    /// The fixed IPv6 header is cut off.
    TruncatedIpv6,
    /// IPv6 version is not 6.
    BadIpv6Header,
    /// An IPv6 extension header runs past the end of the packet.
    BadIpv6ExtHeader,
    /// The TCP, UDP, SCTP or ICMP header is cut off (or TCP options run past the end).
    TruncatedL4,
    /// TCP data offset < 5.
    BadTcpHeader,
    /// An ND message (NS/NA with its target address, or one of its options) is cut off.
    TruncatedNd,
    /// An ND option has length 0, or a link-layer address option is repeated.
    BadNdOption,
}

impl ParseError {
    /// Every variant, in declaration order.
    pub const ALL: [ParseError; 14] = [
        ParseError::TruncatedEthernet,
        ParseError::TruncatedVlan,
        ParseError::TruncatedPbb,
        ParseError::TruncatedMpls,
        ParseError::TruncatedArp,
        ParseError::TruncatedIpv4,
        ParseError::BadIpv4Header,
        ParseError::TruncatedIpv6,
        ParseError::BadIpv6Header,
        ParseError::BadIpv6ExtHeader,
        ParseError::TruncatedL4,
        ParseError::BadTcpHeader,
        ParseError::TruncatedNd,
        ParseError::BadNdOption,
    ];

    /// A short snake_case name, for statistics output.
    pub const fn name(self) -> &'static str {
        match self {
            ParseError::TruncatedEthernet => "truncated_ethernet",
            ParseError::TruncatedVlan => "truncated_vlan",
            ParseError::TruncatedPbb => "truncated_pbb",
            ParseError::TruncatedMpls => "truncated_mpls",
            ParseError::TruncatedArp => "truncated_arp",
            ParseError::TruncatedIpv4 => "truncated_ipv4",
            ParseError::BadIpv4Header => "bad_ipv4_header",
            ParseError::TruncatedIpv6 => "truncated_ipv6",
            ParseError::BadIpv6Header => "bad_ipv6_header",
            ParseError::BadIpv6ExtHeader => "bad_ipv6_ext_header",
            ParseError::TruncatedL4 => "truncated_l4",
            ParseError::BadTcpHeader => "bad_tcp_header",
            ParseError::TruncatedNd => "truncated_nd",
            ParseError::BadNdOption => "bad_nd_option",
        }
    }
}

/// The result of parsing one frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ParseOutcome {
    /// Offsets of the headers found.
    pub layers: Layers,
    /// The problem that stopped parsing, if any.
    pub error: Option<ParseError>,
    /// The IPv4 total length or IPv6 payload length claims more bytes than the frame
    /// has. Parsing went on over the bytes present; this is not an error by itself.
    pub ip_truncated: bool,
}

/// Per-worker parse statistics: how many frames were parsed and how many stopped at
/// each [`ParseError`]. Plain counters, summed over workers when read ([`merge`]).
///
/// [`merge`]: ParseCounters::merge
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ParseCounters {
    pub packets: u64,
    pub truncated_ethernet: u64,
    pub truncated_vlan: u64,
    pub truncated_pbb: u64,
    pub truncated_mpls: u64,
    pub truncated_arp: u64,
    pub truncated_ipv4: u64,
    pub bad_ipv4_header: u64,
    pub truncated_ipv6: u64,
    pub bad_ipv6_header: u64,
    pub bad_ipv6_ext_header: u64,
    pub truncated_l4: u64,
    pub bad_tcp_header: u64,
    pub truncated_nd: u64,
    pub bad_nd_option: u64,
    /// Frames with [`ParseOutcome::ip_truncated`] set.
    pub ip_truncated: u64,
}

impl ParseCounters {
    /// Counts one parsed frame.
    #[inline]
    pub fn record(&mut self, outcome: &ParseOutcome) {
        self.packets += 1;
        self.ip_truncated += outcome.ip_truncated as u64;
        if let Some(e) = outcome.error {
            *self.slot(e) += 1;
        }
    }

    /// The count for one error.
    pub fn get(&self, e: ParseError) -> u64 {
        match e {
            ParseError::TruncatedEthernet => self.truncated_ethernet,
            ParseError::TruncatedVlan => self.truncated_vlan,
            ParseError::TruncatedPbb => self.truncated_pbb,
            ParseError::TruncatedMpls => self.truncated_mpls,
            ParseError::TruncatedArp => self.truncated_arp,
            ParseError::TruncatedIpv4 => self.truncated_ipv4,
            ParseError::BadIpv4Header => self.bad_ipv4_header,
            ParseError::TruncatedIpv6 => self.truncated_ipv6,
            ParseError::BadIpv6Header => self.bad_ipv6_header,
            ParseError::BadIpv6ExtHeader => self.bad_ipv6_ext_header,
            ParseError::TruncatedL4 => self.truncated_l4,
            ParseError::BadTcpHeader => self.bad_tcp_header,
            ParseError::TruncatedNd => self.truncated_nd,
            ParseError::BadNdOption => self.bad_nd_option,
        }
    }

    /// Frames that stopped at any error.
    pub fn errors(&self) -> u64 {
        ParseError::ALL.iter().map(|&e| self.get(e)).sum()
    }

    /// Adds another worker's counters to these.
    pub fn merge(&mut self, other: &ParseCounters) {
        self.packets += other.packets;
        self.ip_truncated += other.ip_truncated;
        for e in ParseError::ALL {
            *self.slot(e) += other.get(e);
        }
    }

    fn slot(&mut self, e: ParseError) -> &mut u64 {
        match e {
            ParseError::TruncatedEthernet => &mut self.truncated_ethernet,
            ParseError::TruncatedVlan => &mut self.truncated_vlan,
            ParseError::TruncatedPbb => &mut self.truncated_pbb,
            ParseError::TruncatedMpls => &mut self.truncated_mpls,
            ParseError::TruncatedArp => &mut self.truncated_arp,
            ParseError::TruncatedIpv4 => &mut self.truncated_ipv4,
            ParseError::BadIpv4Header => &mut self.bad_ipv4_header,
            ParseError::TruncatedIpv6 => &mut self.truncated_ipv6,
            ParseError::BadIpv6Header => &mut self.bad_ipv6_header,
            ParseError::BadIpv6ExtHeader => &mut self.bad_ipv6_ext_header,
            ParseError::TruncatedL4 => &mut self.truncated_l4,
            ParseError::BadTcpHeader => &mut self.bad_tcp_header,
            ParseError::TruncatedNd => &mut self.truncated_nd,
            ParseError::BadNdOption => &mut self.bad_nd_option,
        }
    }
}

/// Ethertypes the parser knows (those of the `headers` crate), and OpenFlow's for an
/// 802.3 frame.
pub mod ethertype {
    pub use headers::ethertype::*;
    /// `OFP_DL_TYPE_NOT_ETH_TYPE`: the `ETH_TYPE` of an 802.3 frame (length, no type).
    pub const NOT_ETH_TYPE: u16 = 0x05ff;
}

/// The most bytes of a frame the parser looks at (offsets must fit in `u16`).
const MAX_PARSED: usize = u16::MAX as usize;

/// Parses `frame` received on `in_port` into `key` (fully overwritten), returning the
/// header offsets and the problem that stopped parsing, if any. Never panics.
#[inline]
pub fn parse(frame: &[u8], in_port: u32, key: &mut FlowKey) -> ParseOutcome {
    *key = FlowKey::ZERO;
    put(key, Field::InPort, in_port as u64);
    let frame = frame.get(..MAX_PARSED).unwrap_or(frame);
    let mut out = ParseOutcome::default();
    out.error = l2(frame, key, &mut out).err();
    out
}

/// Ethernet, VLAN tags, then the protocol after them.
#[inline(always)]
fn l2(frame: &[u8], key: &mut FlowKey, out: &mut ParseOutcome) -> Result<(), ParseError> {
    use ethertype::*;
    let eth = EthernetHeader::new_checked(frame).ok_or(ParseError::TruncatedEthernet)?;
    put(key, Field::EthDst, mac(eth.dst()));
    put(key, Field::EthSrc, mac(eth.src()));
    let mut at = ethernet::field::ETHERTYPE.start;
    let mut ty = eth.ethertype();
    if is_vlan(ty) {
        let tag = VlanTag::new_checked_at(frame, at).ok_or(ParseError::TruncatedVlan)?;
        put(key, Field::VlanVid, 0x1000 | tag.vid() as u64);
        put(key, Field::VlanPcp, tag.pcp() as u64);
        out.layers.vlan = Some(at as u16);
        at += vlan::TAG_LEN;
        ty = ethernet::ethertype_at(frame, at).ok_or(ParseError::TruncatedVlan)?;
        if ty == VLAN {
            at += vlan::TAG_LEN;
            ty = ethernet::ethertype_at(frame, at).ok_or(ParseError::TruncatedVlan)?;
        }
    }
    out.layers.ethertype = at as u16;
    if ty < MIN {
        put(key, Field::EthType, NOT_ETH_TYPE as u64);
        return Ok(());
    }
    put(key, Field::EthType, ty as u64);
    let l3 = at + ethernet::field::ETHERTYPE.len();
    match ty {
        IPV4 => ip::ipv4(frame, l3, key, out),
        IPV6 => ip::ipv6(frame, l3, key, out),
        ARP => ip::arp(frame, l3, key, out),
        MPLS | MPLS_MCAST => {
            let lse = MplsEntry::new_checked_at(frame, l3).ok_or(ParseError::TruncatedMpls)?;
            put(key, Field::MplsLabel, lse.label() as u64);
            put(key, Field::MplsTc, lse.tc() as u64);
            put(key, Field::MplsBos, lse.bos() as u64);
            out.layers.mpls = Some(l3 as u16);
            Ok(())
        }
        PBB => {
            let itag = PbbItag::new_checked_at(frame, l3).ok_or(ParseError::TruncatedPbb)?;
            put(key, Field::PbbIsid, itag.isid() as u64);
            put(key, Field::PbbUca, itag.uca() as u64);
            Ok(())
        }
        _ => Ok(()),
    }
}

/// A 48-bit MAC address as the key holds it.
#[inline(always)]
pub(crate) fn mac(b: [u8; 6]) -> u64 {
    let [a, b, c, d, e, f] = b;
    (u64::from(u16::from_be_bytes([a, b])) << 32) | u64::from(u32::from_be_bytes([c, d, e, f]))
}

/// ORs `v` into field `f` of a key whose field is still zero (each field is written once
/// per parse). Bits of `v` beyond the field's width are dropped.
#[inline(always)]
pub(crate) fn put(key: &mut FlowKey, f: Field, v: u64) {
    let p = f.place();
    let m = if p.bits >= 64 { u64::MAX } else { (1u64 << p.bits) - 1 };
    if let Some(w) = key.words.get_mut(p.word) {
        *w |= (v & m) << p.shift;
    }
}

/// Writes a 128-bit field (the two words of an IPv6 address).
#[inline(always)]
pub(crate) fn put128(key: &mut FlowKey, f: Field, v: u128) {
    let p = f.place();
    if let Some([hi, lo]) = key.words.get_mut(p.word..p.word + 2) {
        *hi = (v >> 64) as u64;
        *lo = v as u64;
    }
}
