//! Frame composer: builds an Ethernet frame whose parsed key matches a [`FlowMatch`].
//!
//! [`compose`] is the inverse of [`parse`](crate::parse::parse) for the tracer: given the
//! fields a user named (a match's key under its mask: a field is *given* when its mask
//! has a bit set, and its value is the key's bits under the mask), it writes the headers
//! that carry them and picks defaults for everything else:
//!
//! * MAC addresses zero; no VLAN tag unless `VLAN_VID` has `OFPVID_PRESENT` (or only
//!   `VLAN_PCP` is given, which needs a tag: VID 0);
//! * no `ETH_TYPE`: an 802.3 frame (length field and a 3-byte LLC header), which parses
//!   to `ETH_TYPE` 0x05ff as in Open vSwitch;
//! * IPv4/IPv6: TTL [`DEFAULT_TTL`], protocol 0 over IPv4 and 59 ("no next header") over
//!   IPv6, not a fragment; IPv6 extension headers as `IPV6_EXTHDR`'s bits ask, in the
//!   order RFC 8200 recommends (`UNREP`/`UNSEQ` cannot be composed);
//! * ARP: an Ethernet/IPv4 request (op 1) unless `ARP_OP` is given; MPLS: one label
//!   stack entry (bottom of stack unless `MPLS_BOS` = 0, then a second one that is);
//! * TCP/UDP/SCTP/ICMP headers with zero ports, types and flags; IPv6 neighbour
//!   discovery (ICMPv6 135/136, code 0) with `IPV6_ND_TARGET` and, when given nonzero,
//!   the link-layer address option the parser reads (SLL on NS, TLL on NA).
//!
//! Lengths and checksums are correct (IPv4 header, TCP/UDP/ICMP/ICMPv6 with their
//! pseudo-headers, SCTP CRC32c), and the frame is padded to [`MIN_FRAME`] bytes.
//!
//! Invariant: what `compose` returns parses (with `in_port` = the match's `IN_PORT`)
//! without error into a key that the match matches. It checks this itself by parsing the
//! frame, so a combination of fields that no frame can carry (a TCP port without
//! IP protocol 6, `METADATA`, a 13-bit VLAN value without `OFPVID_PRESENT`, ...) is a
//! [`ComposeError`] naming the first such field, never a frame that would mislead.

use std::fmt;

use headers::{ethernet, icmp, ipv4, ipv6, ipv6_ext, mpls, nd, tcp, udp, vlan};
use headers::{ArpEthIpv4, EthernetHeader, IcmpHeader, Ipv4Header, Ipv6ExtHeader};
use headers::{Ipv6FragHeader, Ipv6Header, MplsEntry, NdLinkLayerOption, NdMessage, PbbItag};
use headers::{SctpHeader, TcpHeader, UdpHeader, VlanTag};

use crate::key::{Field, FlowKey, FlowMatch};
use crate::parse::{ethertype, ieh, parse, proto, ParseError};

/// Frames are padded to this many bytes (the Ethernet minimum with its FCS).
pub const MIN_FRAME: usize = 64;

/// The IPv4 TTL / IPv6 hop limit when `IP_TTL` is not given.
pub const DEFAULT_TTL: u8 = 64;

/// Why no frame was composed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ComposeError {
    /// A given field that the frame cannot carry with the value asked.
    Field {
        field: Field,
        /// The value asked (under the field's mask).
        wanted: u128,
        /// What the frame carries there instead (under the same mask).
        got: u128,
    },
    /// The frame the fields describe does not parse to the end (a composer gap; not
    /// expected for any input, kept so that no misleading frame is ever returned).
    Malformed(ParseError),
}

impl ComposeError {
    /// The field that could not be carried, if that is the problem.
    pub fn field(&self) -> Option<Field> {
        match self {
            ComposeError::Field { field, .. } => Some(*field),
            ComposeError::Malformed(_) => None,
        }
    }
}

impl fmt::Display for ComposeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (field, wanted, got) = match *self {
            ComposeError::Field { field, wanted, got } => (field, wanted, got),
            ComposeError::Malformed(e) => {
                return write!(
                    f,
                    "the fields given make a frame that does not parse ({})",
                    e.name()
                )
            }
        };
        let name = field_name(field);
        match field {
            Field::Metadata | Field::TunnelId => write!(
                f,
                "{name}={wanted:#x}: {name} is not a header field; a packet enters the \
                 pipeline with 0"
            ),
            Field::InPhyPort => {
                write!(f, "in_phy_port={wanted}: a packet's physical input port is its input port")
            }
            _ => write!(
                f,
                "{name}={wanted:#x} cannot be carried by a frame with the other fields given \
                 (it would hold {got:#x}); check the field's prerequisites (dl_type, \
                 nw_proto, VLAN, fragment) and its width"
            ),
        }
    }
}

impl std::error::Error for ComposeError {}

/// The ovs-ofctl name of a key field (both names where two fields share the place).
pub fn field_name(f: Field) -> &'static str {
    match f {
        Field::InPort => "in_port",
        Field::InPhyPort => "in_phy_port",
        Field::Metadata => "metadata",
        Field::TunnelId => "tun_id",
        Field::EthDst => "dl_dst",
        Field::EthType => "dl_type",
        Field::EthSrc => "dl_src",
        Field::VlanVid => "vlan_vid",
        Field::Ipv4Src => "nw_src/arp_spa",
        Field::Ipv4Dst => "nw_dst/arp_tpa",
        Field::TpSrc => "tp_src",
        Field::TpDst => "tp_dst",
        Field::IpProto => "nw_proto",
        Field::IpDscp => "ip_dscp",
        Field::IpEcn => "nw_ecn",
        Field::VlanPcp => "vlan_pcp",
        Field::IcmpType => "icmp_type/icmpv6_type",
        Field::IcmpCode => "icmp_code/icmpv6_code",
        Field::ArpOp => "arp_op",
        Field::MplsLabel => "mpls_label",
        Field::MplsTc => "mpls_tc",
        Field::MplsBos => "mpls_bos",
        Field::Ipv6Exthdr => "ipv6_exthdr",
        Field::PbbIsid => "pbb_isid",
        Field::PbbUca => "pbb_uca",
        Field::Ipv6Flabel => "ipv6_label",
        Field::TcpFlags => "tcp_flags",
        Field::IpFrag => "nw_frag",
        Field::IpTtl => "nw_ttl",
        Field::Ipv6Src => "ipv6_src",
        Field::Ipv6Dst => "ipv6_dst",
        Field::Ipv6NdTarget => "nd_target",
        Field::ArpSha => "arp_sha/nd_sll",
        Field::ArpTha => "arp_tha/nd_tll",
    }
}

/// Builds a frame that `m` matches (see the module comment); the input port is the
/// caller's (`m`'s `IN_PORT` is only used to check the result).
pub fn compose(m: &FlowMatch) -> Result<Vec<u8>, ComposeError> {
    let s = Spec(m);
    let mut f = Vec::with_capacity(128);
    let et = s.or(Field::EthType, ethertype::NOT_ETH_TYPE.into()) as u16;
    let mut eth = EthernetHeader::new([0u8; ethernet::HEADER_LEN]);
    eth.set_dst(mac_bytes(s.val(Field::EthDst)));
    eth.set_src(mac_bytes(s.val(Field::EthSrc)));
    // 802.3: a length (of the 3-byte LLC header that follows), not a type.
    eth.set_ethertype(if et < ethertype::MIN { 3 } else { et });
    let tagged = if s.given(Field::VlanVid) {
        s.val(Field::VlanVid) & 0x1000 != 0
    } else {
        s.given(Field::VlanPcp)
    };
    let (macs, ty) = eth.as_bytes().split_at(ethernet::ADDRS_LEN);
    f.extend_from_slice(macs);
    if tagged {
        // The tag goes between the MACs and the ethertype.
        let mut tag = VlanTag::new([0u8; vlan::TAG_LEN]);
        tag.set_tpid(ethertype::VLAN);
        tag.set_vid(s.val(Field::VlanVid) as u16);
        tag.set_pcp(s.val(Field::VlanPcp) as u8);
        f.extend_from_slice(tag.as_bytes());
    }
    f.extend_from_slice(ty);
    if et < ethertype::MIN {
        // The LLC header: DSAP, SSAP, control.
        f.extend_from_slice(&[0x42, 0x42, 0x03]);
    } else {
        match et {
            ethertype::IPV4 => ipv4(&s, &mut f),
            ethertype::IPV6 => ipv6(&s, &mut f),
            ethertype::ARP => arp(&s, &mut f),
            ethertype::MPLS | ethertype::MPLS_MCAST => mpls(&s, &mut f),
            ethertype::PBB => pbb(&s, &mut f),
            _ => {}
        }
    }
    if f.len() < MIN_FRAME {
        f.resize(MIN_FRAME, 0);
    }
    check(m, &f)?;
    Ok(f)
}

/// Parses `frame` and finds the first given field it does not carry as asked.
fn check(m: &FlowMatch, frame: &[u8]) -> Result<(), ComposeError> {
    let mut key = FlowKey::ZERO;
    let out = parse(frame, m.key.get(Field::InPort) as u32, &mut key);
    for &field in Field::ALL {
        let mask = m.mask.get(field);
        let got = key.get(field) & mask;
        let wanted = m.key.get(field) & mask;
        if got != wanted {
            return Err(ComposeError::Field { field, wanted, got });
        }
    }
    match out.error {
        Some(e) => Err(ComposeError::Malformed(e)),
        None => Ok(()),
    }
}

/// The match being composed, read field by field.
struct Spec<'a>(&'a FlowMatch);

impl Spec<'_> {
    fn given(&self, f: Field) -> bool {
        self.0.mask.get(f) != 0
    }

    /// The given value (zero when not given).
    fn val(&self, f: Field) -> u128 {
        self.0.key.get(f) & self.0.mask.get(f)
    }

    /// The given value, or `default`.
    fn or(&self, f: Field, default: u128) -> u128 {
        if self.given(f) {
            self.val(f)
        } else {
            default
        }
    }

    fn tos(&self) -> u8 {
        ((self.val(Field::IpDscp) as u8) << 2) | (self.val(Field::IpEcn) as u8 & 3)
    }

    fn ttl(&self) -> u8 {
        self.or(Field::IpTtl, DEFAULT_TTL.into()) as u8
    }
}

fn mac_bytes(v: u128) -> [u8; 6] {
    let b = (v as u64).to_be_bytes();
    [b[2], b[3], b[4], b[5], b[6], b[7]]
}

/// One's-complement sum of big-endian 16-bit words (an odd last byte padded with zero),
/// added to `acc`.
fn sum(acc: u64, bytes: &[u8]) -> u64 {
    let mut acc = acc;
    let mut words = bytes.chunks_exact(2);
    for w in &mut words {
        acc += u64::from(u16::from_be_bytes([w[0], w[1]]));
    }
    if let [last] = words.remainder() {
        acc += u64::from(*last) << 8;
    }
    acc
}

/// The Internet checksum of a sum (RFC 1071): folded and complemented.
fn finish(mut acc: u64) -> u16 {
    while acc >> 16 != 0 {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    !(acc as u16)
}

/// Writes the checksum of `l4` (with the pseudo-header sum `pseudo`) at `at` of it.
/// Zero is sent as 0xffff, which UDP requires and the others accept.
fn l4_checksum(l4: &mut [u8], at: usize, pseudo: u64) {
    if let Some(b) = l4.get_mut(at..at + 2) {
        b.fill(0);
    }
    let c = match finish(sum(pseudo, l4)) {
        0 => 0xffff,
        c => c,
    };
    if let Some(b) = l4.get_mut(at..at + 2) {
        b.copy_from_slice(&c.to_be_bytes());
    }
}

/// The transport header of protocol `p` (ICMPv6 when `v6`), its checksum filled with
/// the pseudo-header sum `pseudo(len)` for its length.
fn l4(s: &Spec, p: u8, v6: bool, pseudo: impl Fn(usize) -> u64) -> Vec<u8> {
    let sport = s.val(Field::TpSrc) as u16;
    let dport = s.val(Field::TpDst) as u16;
    let mut h = Vec::with_capacity(32);
    match p {
        proto::TCP => {
            let mut t = TcpHeader::new([0u8; tcp::HEADER_LEN]);
            t.set_src_port(sport);
            t.set_dst_port(dport);
            t.set_header_len(tcp::HEADER_LEN);
            t.set_flags(s.val(Field::TcpFlags) as u16);
            t.set_window(8192);
            h.extend_from_slice(t.as_bytes());
            let ps = pseudo(h.len());
            l4_checksum(&mut h, tcp::field::CHECKSUM.start, ps);
        }
        proto::UDP => {
            let mut u = UdpHeader::new([0u8; udp::HEADER_LEN]);
            u.set_src_port(sport);
            u.set_dst_port(dport);
            u.set_length(udp::HEADER_LEN as u16);
            h.extend_from_slice(u.as_bytes());
            let ps = pseudo(h.len());
            l4_checksum(&mut h, udp::field::CHECKSUM.start, ps);
        }
        proto::SCTP => {
            let mut sh = SctpHeader::new([0u8; headers::sctp::HEADER_LEN]);
            sh.set_src_port(sport);
            sh.set_dst_port(dport);
            let crc = crc32c::crc32c(sh.as_bytes());
            sh.set_crc32c(crc);
            h.extend_from_slice(sh.as_bytes());
        }
        proto::ICMP if !v6 => {
            let mut i = IcmpHeader::new([0u8; icmp::HEADER_LEN]);
            i.set_msg_type(s.val(Field::IcmpType) as u8);
            i.set_code(s.val(Field::IcmpCode) as u8);
            h.extend_from_slice(i.as_bytes());
            // The rest of the ICMPv4 header (identifier and sequence of an echo).
            h.resize(icmp::V4_HEADER_LEN, 0);
            l4_checksum(&mut h, icmp::field::CHECKSUM.start, 0);
        }
        proto::ICMPV6 if v6 => {
            let (ty, code) = (s.val(Field::IcmpType) as u8, s.val(Field::IcmpCode) as u8);
            if (ty == nd::NS || ty == nd::NA) && code == 0 {
                let mut m = NdMessage::new([0u8; nd::HEADER_LEN]);
                m.set_msg_type(ty);
                m.set_code(code);
                m.set_target(s.val(Field::Ipv6NdTarget));
                h.extend_from_slice(m.as_bytes());
                let (opt, ll) = if ty == nd::NS {
                    (nd::OPT_SOURCE_LL, Field::ArpSha)
                } else {
                    (nd::OPT_TARGET_LL, Field::ArpTha)
                };
                if s.val(ll) != 0 {
                    let mut o = NdLinkLayerOption::new([0u8; nd::LL_OPT_LEN]);
                    o.set(opt, mac_bytes(s.val(ll)));
                    h.extend_from_slice(o.as_bytes());
                }
            } else {
                let mut i = IcmpHeader::new([0u8; icmp::HEADER_LEN]);
                i.set_msg_type(ty);
                i.set_code(code);
                h.extend_from_slice(i.as_bytes());
                // The message body's first 4 bytes (unused, or an echo's identifier
                // and sequence).
                h.resize(icmp::HEADER_LEN + 4, 0);
            }
            let ps = pseudo(h.len());
            l4_checksum(&mut h, icmp::field::CHECKSUM.start, ps);
        }
        _ => {}
    }
    h
}

fn ipv4(s: &Spec, f: &mut Vec<u8>) {
    let p = s.val(Field::IpProto) as u8;
    let frag = s.val(Field::IpFrag);
    let src = s.val(Field::Ipv4Src) as u32;
    let dst = s.val(Field::Ipv4Dst) as u32;
    // The pseudo-header: addresses, zero, protocol, length (RFC 793).
    let pseudo = |len: usize| {
        let mut b = [0u8; 12];
        b[..4].copy_from_slice(&src.to_be_bytes());
        b[4..8].copy_from_slice(&dst.to_be_bytes());
        b[9] = p;
        b[10..].copy_from_slice(&(len as u16).to_be_bytes());
        sum(0, &b)
    };
    // A later fragment carries no transport header; the parser does not look for one.
    let payload = if frag & 2 == 0 { l4(s, p, false, pseudo) } else { vec![0; 8] };
    // A first fragment has more to come; a later one an offset (of 8 bytes).
    let flags_offset: u16 = match frag {
        0 => 0,
        1 => ipv4::MORE_FRAGS,
        _ => 1,
    };
    let mut ip = Ipv4Header::new([0u8; ipv4::HEADER_LEN]);
    ip.set_version_header_len(ipv4::VERSION, ipv4::HEADER_LEN);
    ip.set_tos(s.tos());
    ip.set_total_len((ipv4::HEADER_LEN + payload.len()) as u16);
    ip.set_flags_frag_offset(flags_offset);
    ip.set_ttl(s.ttl());
    ip.set_protocol(p);
    ip.set_src_addr(src);
    ip.set_dst_addr(dst);
    ip.set_checksum(finish(sum(0, ip.as_bytes())));
    f.extend_from_slice(ip.as_bytes());
    f.extend_from_slice(&payload);
}

fn ipv6(s: &Spec, f: &mut Vec<u8>) {
    let bits = s.val(Field::Ipv6Exthdr) as u16;
    let frag = s.val(Field::IpFrag);
    let src = s.val(Field::Ipv6Src);
    let dst = s.val(Field::Ipv6Dst);
    // Extension headers in the recommended order, then the upper layer.
    let mut chain: Vec<u8> = Vec::new();
    for (bit, nh) in [
        (ieh::HOP, proto::HOPOPT),
        (ieh::DEST, proto::DSTOPTS),
        (ieh::ROUTER, proto::ROUTING),
        (ieh::FRAG, proto::FRAGMENT),
        (ieh::AUTH, proto::AH),
    ] {
        if bits & bit != 0 || (nh == proto::FRAGMENT && frag != 0) {
            chain.push(nh);
        }
    }
    let mut last = if bits & ieh::ESP != 0 {
        proto::ESP
    } else if bits & ieh::NONEXT != 0 {
        proto::NONXT
    } else {
        s.or(Field::IpProto, proto::NONXT.into()) as u8
    };
    // An extension header asked for as the protocol is written as one (it then parses
    // as an extension header, and the check names the protocol).
    if matches!(last, proto::HOPOPT | proto::ROUTING | proto::FRAGMENT | proto::AH | proto::DSTOPTS)
    {
        chain.push(last);
        last = proto::NONXT;
    }
    let mut payload = Vec::new();
    for (i, &h) in chain.iter().enumerate() {
        let nh = chain.get(i + 1).copied().unwrap_or(last);
        if h == proto::FRAGMENT {
            // An atomic fragment, a first fragment (more to come) or a later one (an
            // offset of 8 bytes); identification 1.
            let offlg: u16 = match frag {
                0 => 0,
                1 => ipv6_ext::frag::MORE_FRAGS,
                _ => 1 << 3,
            };
            let mut fh = Ipv6FragHeader::new([0u8; ipv6_ext::frag::HEADER_LEN]);
            fh.set_next_header(nh);
            fh.set_offset_flags(offlg);
            fh.set_ident(1);
            payload.extend_from_slice(fh.as_bytes());
            continue;
        }
        let mut e = Ipv6ExtHeader::new([0u8; ipv6_ext::HEADER_LEN]);
        e.set_next_header(nh);
        match h {
            proto::AH => {
                // 16 bytes: payload length 2 ((2 + 2) * 4), SPI, sequence, 4-byte ICV.
                e.set_hdr_ext_len(2);
                payload.extend_from_slice(e.as_bytes());
                payload.extend_from_slice(&[0; 14]);
            }
            proto::ROUTING => {
                // 8 bytes: routing type 253 (RFC 4727 experiment), no segments left.
                payload.extend_from_slice(e.as_bytes());
                payload.extend_from_slice(&[253, 0, 0, 0, 0, 0]);
            }
            _ => {
                // 8 bytes (length 0) of padding options.
                payload.extend_from_slice(e.as_bytes());
                payload.extend_from_slice(&[0; 6]);
            }
        }
    }
    // The pseudo-header: addresses, length, zeros, next header (RFC 8200 §8.1).
    let pseudo = |len: usize| {
        let mut b = [0u8; 40];
        b[..16].copy_from_slice(&src.to_be_bytes());
        b[16..32].copy_from_slice(&dst.to_be_bytes());
        b[32..36].copy_from_slice(&(len as u32).to_be_bytes());
        b[39] = last;
        sum(0, &b)
    };
    if last == proto::ESP {
        payload.extend_from_slice(&[0; 8]);
    } else if frag & 2 == 0 {
        payload.extend_from_slice(&l4(s, last, true, pseudo));
    } else {
        payload.extend_from_slice(&[0; 8]);
    }
    let mut ip = Ipv6Header::new([0u8; ipv6::HEADER_LEN]);
    ip.set_ver_tc_flow(u32::from(ipv6::VERSION) << 28);
    ip.set_traffic_class(s.tos());
    ip.set_flow_label(s.val(Field::Ipv6Flabel) as u32);
    ip.set_payload_len(payload.len() as u16);
    ip.set_next_header(chain.first().copied().unwrap_or(last));
    ip.set_hop_limit(s.ttl());
    ip.set_src_addr(src);
    ip.set_dst_addr(dst);
    f.extend_from_slice(ip.as_bytes());
    f.extend_from_slice(&payload);
}

fn arp(s: &Spec, f: &mut Vec<u8>) {
    let mut a = ArpEthIpv4::new([0u8; headers::arp::ETH_IPV4_LEN]);
    a.set_ethernet_ipv4(s.or(Field::ArpOp, 1) as u16);
    a.set_sha(mac_bytes(s.val(Field::ArpSha)));
    a.set_spa(s.val(Field::Ipv4Src) as u32);
    a.set_tha(mac_bytes(s.val(Field::ArpTha)));
    a.set_tpa(s.val(Field::Ipv4Dst) as u32);
    f.extend_from_slice(a.as_bytes());
}

fn mpls(s: &Spec, f: &mut Vec<u8>) {
    let bos = s.or(Field::MplsBos, 1) & 1 != 0;
    let mut e = MplsEntry::new([0u8; mpls::ENTRY_LEN]);
    e.set_label(s.val(Field::MplsLabel) as u32);
    e.set_tc(s.val(Field::MplsTc) as u8);
    e.set_bos(bos);
    e.set_ttl(DEFAULT_TTL);
    f.extend_from_slice(e.as_bytes());
    if !bos {
        let mut bottom = MplsEntry::new([0u8; mpls::ENTRY_LEN]);
        bottom.set_bos(true);
        bottom.set_ttl(DEFAULT_TTL);
        f.extend_from_slice(bottom.as_bytes());
    }
}

fn pbb(s: &Spec, f: &mut Vec<u8>) {
    let mut itag = PbbItag::new([0u8; headers::pbb::ITAG_LEN]);
    itag.set_isid(s.val(Field::PbbIsid) as u32);
    itag.set_uca(s.val(Field::PbbUca) as u8);
    f.extend_from_slice(itag.as_bytes());
    // The customer addresses (zero) and an empty customer payload of type 802.3.
    f.extend_from_slice(&[0; ethernet::ADDRS_LEN]);
    f.extend_from_slice(&0u16.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::ParseOutcome;
    use etherparse::{NetSlice, SlicedPacket, TransportSlice};
    use proptest::prelude::*;

    fn parsed(frame: &[u8], in_port: u32) -> (FlowKey, ParseOutcome) {
        let mut k = FlowKey::ZERO;
        let out = parse(frame, in_port, &mut k);
        (k, out)
    }

    /// Composes `m` and checks the invariants every frame has; returns it and its key.
    fn composed(m: &FlowMatch) -> (Vec<u8>, FlowKey) {
        let f = compose(m).unwrap_or_else(|e| panic!("{e} for {m:?}"));
        assert!(f.len() >= MIN_FRAME);
        let (k, out) = parsed(&f, m.key.get(Field::InPort) as u32);
        assert_eq!(out.error, None, "{m:?}");
        assert!(!out.ip_truncated, "{m:?}");
        assert!(m.matches(&k), "{m:?} does not match {k:?}");
        checksums(&f);
        (f, k)
    }

    /// The IPv4 header checksum and the TCP/UDP/ICMP/ICMPv6 checksums, where etherparse
    /// reads the frame (it stops at headers it does not know, such as routing type 253).
    fn checksums(f: &[u8]) {
        let Ok(p) = SlicedPacket::from_ethernet(f) else {
            return;
        };
        let (src4, dst4, src6, dst6) = match &p.net {
            Some(NetSlice::Ipv4(ip)) => {
                let h = ip.header();
                assert_eq!(h.to_header().calc_header_checksum(), h.header_checksum());
                (h.source(), h.destination(), [0; 16], [0; 16])
            }
            Some(NetSlice::Ipv6(ip)) => {
                let h = ip.header();
                ([0; 4], [0; 4], h.source(), h.destination())
            }
            _ => return,
        };
        let v4 = matches!(p.net, Some(NetSlice::Ipv4(_)));
        match &p.transport {
            Some(TransportSlice::Udp(u)) => {
                let h = u.to_header();
                let c = if v4 {
                    h.calc_checksum_ipv4_raw(src4, dst4, u.payload())
                } else {
                    h.calc_checksum_ipv6_raw(src6, dst6, u.payload())
                };
                assert_eq!(c.unwrap(), u.checksum());
            }
            Some(TransportSlice::Tcp(t)) => {
                let c = if v4 {
                    t.calc_checksum_ipv4(src4, dst4)
                } else {
                    t.calc_checksum_ipv6(src6, dst6)
                };
                assert_eq!(c.unwrap(), t.checksum());
            }
            // Over IPv6, protocol 1 gets no header of ours (ICMP there is ICMPv6):
            // etherparse reads the padding as one.
            Some(TransportSlice::Icmpv4(i)) if v4 => {
                let c = i.header().icmp_type.calc_checksum(i.payload());
                assert_eq!(c, i.checksum());
            }
            Some(TransportSlice::Icmpv6(i)) => assert!(i.is_checksum_valid(src6, dst6)),
            _ => {}
        }
    }

    #[test]
    fn nothing_given_is_an_802_3_frame_of_64_bytes() {
        let m = FlowMatch::ANY.exact(Field::InPort, 3);
        let (f, k) = composed(&m);
        assert_eq!(f.len(), 64);
        assert_eq!(k.get(Field::EthType), ethertype::NOT_ETH_TYPE as u128);
        assert_eq!(k.get(Field::InPort), 3);
        assert_eq!(k.get(Field::EthSrc), 0);
    }

    #[test]
    fn ipv4_udp_gets_defaults_and_the_fields_asked() {
        let m = FlowMatch::ANY
            .exact(Field::EthType, 0x0800)
            .exact(Field::IpProto, 17)
            .exact(Field::Ipv4Dst, 0x0a00_0002)
            .masked(Field::Ipv4Src, 0x0a01_0000, 0xffff_0000)
            .exact(Field::TpDst, 53);
        let (f, k) = composed(&m);
        assert_eq!(k.get(Field::IpTtl), 64);
        assert_eq!(k.get(Field::Ipv4Src), 0x0a01_0000);
        assert_eq!(k.get(Field::TpDst), 53);
        assert_eq!(k.get(Field::TpSrc), 0);
        let p = SlicedPacket::from_ethernet(&f).unwrap();
        assert!(matches!(p.transport, Some(TransportSlice::Udp(_))));
        // Ethernet 14 + IPv4 20 + UDP 8, padded.
        assert_eq!(u16::from_be_bytes([f[16], f[17]]), 28);
        assert_eq!(f.len(), 64);
    }

    #[test]
    fn vlan_tag_from_vid_or_pcp() {
        let m = FlowMatch::ANY
            .exact(Field::VlanVid, 0x1000 | 10)
            .exact(Field::VlanPcp, 5)
            .exact(Field::EthType, 0x0806);
        let (f, k) = composed(&m);
        assert_eq!(&f[12..16], &[0x81, 0x00, 0xa0, 10]);
        assert_eq!(k.get(Field::ArpOp), 1, "an ARP request by default");
        let pcp_only = FlowMatch::ANY.exact(Field::VlanPcp, 3);
        let (_, k) = composed(&pcp_only);
        assert_eq!(k.get(Field::VlanVid), 0x1000);
        let any_tagged = FlowMatch::ANY.masked(Field::VlanVid, 0x1000, 0x1000);
        composed(&any_tagged);
    }

    #[test]
    fn fields_no_frame_carries_are_named() {
        let cases = [
            (FlowMatch::ANY.exact(Field::TpDst, 80), Field::TpDst, "tp_dst=0x50"),
            (
                FlowMatch::ANY
                    .exact(Field::EthType, 0x0800)
                    .exact(Field::IpProto, 17)
                    .exact(Field::TcpFlags, 2),
                Field::TcpFlags,
                "tcp_flags",
            ),
            (FlowMatch::ANY.exact(Field::Metadata, 7), Field::Metadata, "not a header field"),
            (FlowMatch::ANY.exact(Field::VlanVid, 5), Field::VlanVid, "vlan_vid"),
            (
                FlowMatch::ANY.exact(Field::VlanVid, 0).exact(Field::VlanPcp, 1),
                Field::VlanPcp,
                "vlan_pcp",
            ),
            (FlowMatch::ANY.exact(Field::EthType, 0x8100), Field::EthType, "dl_type"),
            (
                FlowMatch::ANY.exact(Field::EthType, 0x86dd).exact(Field::IpProto, 0),
                Field::IpProto,
                "nw_proto",
            ),
            (
                FlowMatch::ANY
                    .exact(Field::EthType, 0x0800)
                    .exact(Field::IpProto, 6)
                    .exact(Field::IpFrag, 3)
                    .exact(Field::TpDst, 80),
                Field::TpDst,
                "tp_dst",
            ),
        ];
        for (m, field, text) in cases {
            let e = compose(&m).unwrap_err();
            assert_eq!(e.field(), Some(field), "{m:?}");
            assert!(e.to_string().contains(text), "{e}");
        }
    }

    #[test]
    fn neighbour_solicitation_with_source_link_layer_option() {
        let m = FlowMatch::ANY
            .exact(Field::EthType, 0x86dd)
            .exact(Field::IpProto, 58)
            .exact(Field::IcmpType, 135)
            .exact(Field::IcmpCode, 0)
            .exact(Field::Ipv6NdTarget, 0xfe80 << 112 | 1)
            .exact(Field::ArpSha, 0x0200_0000_0001);
        let (f, k) = composed(&m);
        assert_eq!(k.get(Field::ArpSha), 0x0200_0000_0001);
        // 14 + 40 + 24 + 8.
        assert_eq!(f.len(), 86);
    }

    #[test]
    fn ipv6_extension_headers_in_order() {
        let bits = ieh::HOP | ieh::DEST | ieh::ROUTER | ieh::FRAG | ieh::AUTH;
        let m = FlowMatch::ANY
            .exact(Field::EthType, 0x86dd)
            .exact(Field::Ipv6Exthdr, bits as u128)
            .exact(Field::IpProto, 6)
            .exact(Field::TpSrc, 1234);
        let (_, k) = composed(&m);
        assert_eq!(k.get(Field::IpFrag), 0, "an atomic fragment header");
        let later = FlowMatch::ANY
            .exact(Field::EthType, 0x86dd)
            .exact(Field::IpFrag, 3)
            .exact(Field::IpProto, 17);
        let (_, k) = composed(&later);
        assert_eq!(k.get(Field::Ipv6Exthdr), ieh::FRAG as u128);
        let esp =
            FlowMatch::ANY.exact(Field::EthType, 0x86dd).exact(Field::Ipv6Exthdr, ieh::ESP as u128);
        let (_, k) = composed(&esp);
        assert_eq!(k.get(Field::IpProto), 50);
    }

    #[test]
    fn mpls_below_bottom_of_stack_and_pbb() {
        let m = FlowMatch::ANY
            .exact(Field::EthType, 0x8847)
            .exact(Field::MplsLabel, 0xfffff)
            .exact(Field::MplsTc, 7)
            .exact(Field::MplsBos, 0);
        composed(&m);
        let p = FlowMatch::ANY.exact(Field::EthType, 0x88e7).exact(Field::PbbIsid, 0xabcdef);
        composed(&p);
    }

    /// What the generated frame is.
    #[derive(Clone, Debug)]
    enum Shape {
        None,
        Llc,
        Other(u16),
        Ipv4 { proto: u8, frag: u8 },
        Ipv6 { proto: u8, frag: u8, exts: u16 },
        Arp,
        Mpls(u16),
        Pbb,
    }

    fn shape() -> impl Strategy<Value = Shape> {
        let l4 =
            prop_oneof![Just(6u8), Just(17u8), Just(132u8), Just(1u8), Just(58u8), any::<u8>()];
        let frag = prop_oneof![Just(0u8), Just(1u8), Just(3u8)];
        let exts = (any::<u8>(), 0..3u8).prop_map(|(b, last)| {
            let mut bits = 0;
            for (i, bit) in
                [ieh::HOP, ieh::DEST, ieh::ROUTER, ieh::FRAG, ieh::AUTH].iter().enumerate()
            {
                if b & (1 << i) != 0 {
                    bits |= bit;
                }
            }
            bits | [0, ieh::ESP, ieh::NONEXT][last as usize]
        });
        prop_oneof![
            Just(Shape::None),
            Just(Shape::Llc),
            (0x0600u16..)
                .prop_filter("not a parsed ethertype", |t| ![
                    0x0800, 0x0806, 0x86dd, 0x8100, 0x88a8, 0x8847, 0x8848, 0x88e7
                ]
                .contains(t))
                .prop_map(Shape::Other),
            (l4.clone(), frag.clone()).prop_map(|(proto, frag)| Shape::Ipv4 { proto, frag }),
            (l4, frag, exts).prop_map(|(proto, frag, exts)| Shape::Ipv6 { proto, frag, exts }),
            Just(Shape::Arp),
            prop_oneof![Just(0x8847u16), Just(0x8848u16)].prop_map(Shape::Mpls),
            Just(Shape::Pbb),
        ]
    }

    /// A match of shape `s` with random values; `pick` says which optional fields are
    /// given (a field is given when its bit in `pick` is set).
    fn build(s: &Shape, vals: &[u128; 24], pick: u32, vlan: u8) -> FlowMatch {
        let mut m = FlowMatch::ANY.exact(Field::InPort, 1 + vals[0] % 0xffff_ff00);
        let mut n = 0;
        let mut opt = |m: &mut FlowMatch, f: Field, v: u128| {
            n += 1;
            if pick & (1 << n) != 0 {
                m.set(f, v & f.full(), f.full());
            }
        };
        opt(&mut m, Field::EthSrc, vals[1]);
        opt(&mut m, Field::EthDst, vals[2]);
        match vlan {
            1 => m.set(Field::VlanVid, 0, u128::MAX),
            2 => {
                m.set(Field::VlanVid, 0x1000 | (vals[3] & 0xfff), u128::MAX);
                opt(&mut m, Field::VlanPcp, vals[4] & 7);
            }
            _ => {}
        }
        let ip = |m: &mut FlowMatch, opt: &mut dyn FnMut(&mut FlowMatch, Field, u128)| {
            opt(m, Field::IpDscp, vals[5] & 0x3f);
            opt(m, Field::IpEcn, vals[6] & 3);
            opt(m, Field::IpTtl, vals[7]);
        };
        let l4 = |m: &mut FlowMatch,
                  opt: &mut dyn FnMut(&mut FlowMatch, Field, u128),
                  proto: u8,
                  v6: bool| {
            match proto {
                6 | 17 | 132 => {
                    opt(m, Field::TpSrc, vals[8]);
                    opt(m, Field::TpDst, vals[9]);
                    if proto == 6 {
                        opt(m, Field::TcpFlags, vals[10] & 0xfff);
                    }
                }
                1 if !v6 => {
                    opt(m, Field::IcmpType, vals[11]);
                    opt(m, Field::IcmpCode, vals[12]);
                }
                58 if v6 => {
                    let ty = [135, 136, vals[11] as u8][(vals[13] % 3) as usize];
                    m.set(Field::IcmpType, ty.into(), u128::MAX);
                    let code = if vals[14] & 1 == 0 { 0 } else { vals[12] & 0xff };
                    m.set(Field::IcmpCode, code, u128::MAX);
                    if (ty == 135 || ty == 136) && code == 0 {
                        opt(m, Field::Ipv6NdTarget, vals[15]);
                        let ll = if ty == 135 { Field::ArpSha } else { Field::ArpTha };
                        opt(m, ll, vals[16]);
                    }
                }
                _ => {}
            }
        };
        match *s {
            Shape::None => {}
            Shape::Llc => m.set(Field::EthType, 0x05ff, u128::MAX),
            Shape::Other(t) => m.set(Field::EthType, t.into(), u128::MAX),
            Shape::Ipv4 { proto, frag } => {
                m.set(Field::EthType, 0x0800, u128::MAX);
                m.set(Field::IpProto, proto.into(), u128::MAX);
                m.set(Field::IpFrag, frag.into(), u128::MAX);
                ip(&mut m, &mut opt);
                opt(&mut m, Field::Ipv4Src, vals[17]);
                opt(&mut m, Field::Ipv4Dst, vals[18]);
                if frag != 3 {
                    l4(&mut m, &mut opt, proto, false);
                }
            }
            Shape::Ipv6 { proto, frag, exts } => {
                m.set(Field::EthType, 0x86dd, u128::MAX);
                ip(&mut m, &mut opt);
                opt(&mut m, Field::Ipv6Src, vals[19]);
                opt(&mut m, Field::Ipv6Dst, vals[20]);
                opt(&mut m, Field::Ipv6Flabel, vals[21] & 0xf_ffff);
                m.set(Field::IpFrag, frag.into(), u128::MAX);
                // Headers a later fragment hides, and protocols that are themselves
                // extension headers, are not asked for.
                let ext_protos = [0, 43, 44, 50, 51, 59, 60];
                let proto = if ext_protos.contains(&proto) { 17 } else { proto };
                let mut exts = exts;
                if frag == 3 {
                    exts &= ieh::HOP | ieh::DEST | ieh::ROUTER;
                }
                if frag != 0 {
                    exts |= ieh::FRAG;
                }
                let ends = exts & (ieh::ESP | ieh::NONEXT) != 0;
                if exts != 0 {
                    m.set(Field::Ipv6Exthdr, exts.into(), u128::MAX);
                }
                if !ends {
                    m.set(Field::IpProto, proto.into(), u128::MAX);
                    if frag != 3 {
                        l4(&mut m, &mut opt, proto, true);
                    }
                }
            }
            Shape::Arp => {
                m.set(Field::EthType, 0x0806, u128::MAX);
                opt(&mut m, Field::ArpOp, vals[22]);
                opt(&mut m, Field::Ipv4Src, vals[17]);
                opt(&mut m, Field::Ipv4Dst, vals[18]);
                opt(&mut m, Field::ArpSha, vals[15]);
                opt(&mut m, Field::ArpTha, vals[16]);
            }
            Shape::Mpls(t) => {
                m.set(Field::EthType, t.into(), u128::MAX);
                opt(&mut m, Field::MplsLabel, vals[22] & 0xf_ffff);
                opt(&mut m, Field::MplsTc, vals[23] & 7);
                opt(&mut m, Field::MplsBos, vals[12] & 1);
            }
            Shape::Pbb => {
                m.set(Field::EthType, 0x88e7, u128::MAX);
                opt(&mut m, Field::PbbIsid, vals[22] & 0xff_ffff);
            }
        }
        m
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Compose then parse gives every given field back, with the defaults elsewhere.
        #[test]
        fn compose_then_parse_gives_the_fields_back(
            s in shape(),
            vals in prop::array::uniform24(any::<u128>()),
            pick in any::<u32>(),
            vlan in 0..3u8,
        ) {
            let m = build(&s, &vals, pick, vlan);
            let (_, k) = composed(&m);
            let ip = matches!(s, Shape::Ipv4 { .. } | Shape::Ipv6 { .. });
            if ip && m.mask.get(Field::IpTtl) == 0 {
                prop_assert_eq!(k.get(Field::IpTtl), DEFAULT_TTL as u128);
            }
            for f in [Field::EthSrc, Field::EthDst] {
                if m.mask.get(f) == 0 {
                    prop_assert_eq!(k.get(f), 0);
                }
            }
            if m.mask.get(Field::EthType) == 0 {
                prop_assert_eq!(k.get(Field::EthType), ethertype::NOT_ETH_TYPE as u128);
            }
        }

        /// Any match at all either composes to a frame it matches or is refused.
        #[test]
        fn arbitrary_matches_compose_or_fail_cleanly(
            key in prop::array::uniform18(any::<u64>()),
            mask in prop::array::uniform18(prop_oneof![Just(0u64), Just(u64::MAX), any::<u64>()]),
        ) {
            let mut m = FlowMatch::ANY;
            for i in 0..crate::key::KEY_WORDS {
                m.mask.words[i] = mask[i];
                m.key.words[i] = key[i] & mask[i];
            }
            if let Ok(f) = compose(&m) {
                let (k, out) = parsed(&f, m.key.get(Field::InPort) as u32);
                prop_assert_eq!(out.error, None);
                prop_assert!(m.matches(&k));
            }
        }
    }
}
