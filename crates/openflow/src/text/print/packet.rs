//! Packet-ins and packet-outs, and the one-line flow of an Ethernet frame that
//! ovs-ofctl prints under them (Open vSwitch's `ofp_packet_to_string`: the frame's flow
//! as `flow_format` prints it, then the transport checksum).
//!
//! [`summary`] reads Ethernet (up to two VLAN tags), IPv4, IPv6 (with hop-by-hop,
//! routing, destination-option and fragment headers), ARP, and TCP, UDP, SCTP, ICMP,
//! ICMPv6 (with neighbour discovery) and IGMP (and 802.3 frames with an LLC/SNAP
//! header), with Open vSwitch's rules for what a
//! malformed or cut frame still shows: a header that fails its checks leaves that
//! layer's fields at zero, as `flow_extract` does. Every read is bounds-checked: fixed
//! headers through the `headers` crate's views (whose length is checked when they are
//! made), the fields of a header that may be cut short one by one at the `headers`
//! crate's offsets.

use std::net::{Ipv4Addr, Ipv6Addr};

use headers::ethertype::{self, is_vlan};
use headers::{arp, ethernet, icmp, ip_proto, ipv6_ext, nd, sctp, tcp, udp, vlan};
use headers::{EthernetHeader, IcmpHeader, IgmpHeader, Ipv4Header, Ipv6ExtHeader, Ipv6Header};
use headers::{MplsEntry, SctpHeader, TcpHeader, UdpHeader, VlanTag};

use super::flow::PrintList;
use crate::model::PacketOut;

use super::hex_dump;
use crate::model::port_name;
use crate::wire::MacAddr;

/// A byte slice reader that never panics.
struct Bytes<'a>(&'a [u8]);

impl<'a> Bytes<'a> {
    fn get(&self, at: usize, n: usize) -> Option<&'a [u8]> {
        self.0.get(at..at.checked_add(n)?)
    }
    fn u8(&self, at: usize) -> Option<u8> {
        self.0.get(at).copied()
    }
    fn u16(&self, at: usize) -> Option<u16> {
        self.get(at, 2).map(|b| u16::from_be_bytes([b[0], b[1]]))
    }
    fn u32(&self, at: usize) -> Option<u32> {
        self.get(at, 4).map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn mac(&self, at: usize) -> Option<MacAddr> {
        self.get(at, 6).map(|b| MacAddr([b[0], b[1], b[2], b[3], b[4], b[5]]))
    }
    fn ipv4(&self, at: usize) -> Option<Ipv4Addr> {
        self.get(at, 4).map(|b| Ipv4Addr::new(b[0], b[1], b[2], b[3]))
    }
    fn ipv6(&self, at: usize) -> Option<Ipv6Addr> {
        self.get(at, 16).map(|b| {
            let mut a = [0u8; 16];
            a.copy_from_slice(b);
            Ipv6Addr::from(a)
        })
    }
}

/// Open vSwitch's `VLAN_CFI`: set in a flow's `vlan_tci` when the frame has a tag.
const VLAN_CFI: u16 = 0x1000;

/// An 802.2 LLC header with a SNAP header of Ethernet's OUI (0): what carries an
/// ethertype in an 802.3 frame, in the 2 bytes after it.
const LLC_SNAP: [u8; 6] = [0xaa, 0xaa, 0x03, 0, 0, 0];

/// The network layer of a frame as Open vSwitch's flow has it.
#[derive(Default)]
struct Net {
    proto: u8,
    tos: u8,
    ttl: u8,
    /// (fragment, later fragment)
    frag: (bool, bool),
}

/// The transport layer: ports (or ICMP type/code), TCP flags, checksum text.
#[derive(Default)]
struct Transport {
    masked: bool,
    src: u16,
    dst: u16,
    tcp_flags: Option<u16>,
    csum: Option<String>,
    nd: Option<(Ipv6Addr, MacAddr, MacAddr)>,
}

/// The flow of an Ethernet frame and its checksum, e.g. `tcp,vlan_tci=0x0000,dl_src=..,
/// ...,tcp_flags=syn tcp_csum:74c3`. A frame shorter than an Ethernet header shows
/// zero addresses and type, as Open vSwitch shows it.
pub fn summary(data: &[u8]) -> String {
    let b = Bytes(data);
    let Some(eth) = EthernetHeader::new_checked(data) else {
        // Open vSwitch parses nothing of a frame shorter than an Ethernet header.
        return "vlan_tci=0x0000,dl_src=00:00:00:00:00:00,dl_dst=00:00:00:00:00:00,dl_type=0x0000"
            .into();
    };
    let (dst, src, mut ty) = (MacAddr(eth.dst()), MacAddr(eth.src()), eth.ethertype());
    // Where the ethertype (or a tag's TPID) is.
    let mut et_at = ethernet::field::ETHERTYPE.start;
    let mut vlans: Vec<u16> = Vec::new();
    while is_vlan(ty) && vlans.len() < 2 {
        let tag = VlanTag::new_checked_at(data, et_at);
        let inner = ethernet::ethertype_at(data, et_at + vlan::TAG_LEN);
        let (Some(tag), Some(inner)) = (tag, inner) else {
            break;
        };
        vlans.push(tag.tci() | VLAN_CFI);
        ty = inner;
        et_at += vlan::TAG_LEN;
    }
    let mut off = et_at + ethernet::field::ETHERTYPE.len();
    if ty < ethertype::MIN {
        // An 802.3 length: only an LLC/SNAP header with Ethernet's OUI carries a type.
        let snap = b.get(off, LLC_SNAP.len()) == Some(&LLC_SNAP[..]);
        ty = match b.u16(off + LLC_SNAP.len()) {
            Some(t) if snap && t >= ethertype::MIN => {
                off += LLC_SNAP.len() + 2;
                t
            }
            _ => 0x05ff,
        };
    }
    let l3 = &data[off.min(data.len())..];
    let mut fields: Vec<String> = Vec::new();
    let mut shorthand: Option<&str> = None;
    let mut l3_fields: Vec<String> = Vec::new();
    let mut transport = Transport::default();
    match ty {
        ethertype::IPV4 => {
            let (addrs, net, t) = ipv4(l3);
            transport = t;
            shorthand = Some(match net.proto {
                ip_proto::ICMP => "icmp",
                ip_proto::TCP => "tcp",
                ip_proto::UDP => "udp",
                ip_proto::SCTP => "sctp",
                _ => "ip",
            });
            l3_fields.push(format!("nw_src={}", addrs.0));
            l3_fields.push(format!("nw_dst={}", addrs.1));
            ip_tail(&mut l3_fields, &net, shorthand == Some("ip"));
        }
        ethertype::IPV6 => {
            let (addrs, label, net, t) = ipv6(l3);
            transport = t;
            shorthand = Some(match net.proto {
                ip_proto::ICMPV6 => "icmp6",
                ip_proto::TCP => "tcp6",
                ip_proto::UDP => "udp6",
                ip_proto::SCTP => "sctp6",
                _ => "ipv6",
            });
            l3_fields.push(format!("ipv6_src={}", addrs.0));
            l3_fields.push(format!("ipv6_dst={}", addrs.1));
            l3_fields.push(format!("ipv6_label=0x{label:05x}"));
            ip_tail(&mut l3_fields, &net, shorthand == Some("ipv6"));
        }
        ethertype::ARP | ethertype::RARP => {
            shorthand = Some(if ty == ethertype::ARP { "arp" } else { "rarp" });
            // Ethernet/IPv4 only; each address as far as the frame holds it.
            let a = Bytes(l3);
            let valid = a.u16(arp::field::HTYPE.start) == Some(arp::HTYPE_ETHERNET)
                && a.u16(arp::field::PTYPE.start) == Some(ethertype::IPV4)
                && a.u8(arp::field::HLEN) == Some(6)
                && a.u8(arp::field::PLEN) == Some(4);
            let zero4 = Ipv4Addr::UNSPECIFIED;
            let (op, sha, spa, tha, tpa) = if valid {
                (
                    a.u16(arp::field::OPER.start).filter(|o| *o <= 0xff).unwrap_or(0),
                    a.mac(arp::field::SHA.start).unwrap_or(MacAddr::ZERO),
                    a.ipv4(arp::field::SPA.start).unwrap_or(zero4),
                    a.mac(arp::field::THA.start).unwrap_or(MacAddr::ZERO),
                    a.ipv4(arp::field::TPA.start).unwrap_or(zero4),
                )
            } else {
                (0, MacAddr::ZERO, zero4, MacAddr::ZERO, zero4)
            };
            l3_fields.push(format!("arp_spa={spa}"));
            l3_fields.push(format!("arp_tpa={tpa}"));
            l3_fields.push(format!("arp_op={op}"));
            l3_fields.push(format!("arp_sha={sha}"));
            l3_fields.push(format!("arp_tha={tha}"));
        }
        ethertype::MPLS | ethertype::MPLS_MCAST => {
            shorthand = Some(if ty == ethertype::MPLS { "mpls" } else { "mplsm" });
            if let Some(lse) = MplsEntry::new_checked(l3) {
                l3_fields.push(format!("mpls_label={}", lse.label()));
                l3_fields.push(format!("mpls_tc={}", lse.tc()));
                l3_fields.push(format!("mpls_ttl={}", lse.ttl()));
                l3_fields.push(format!("mpls_bos={}", u8::from(lse.bos())));
            }
        }
        _ => {}
    }
    if let Some(sh) = shorthand {
        fields.push(sh.into());
    }
    for (i, tci) in vlans.iter().chain(std::iter::once(&0)).enumerate().take(2) {
        let n = if i == 0 { String::new() } else { i.to_string() };
        if *tci == 0 {
            fields.push(format!("vlan_tci{n}=0x0000"));
            break;
        }
        fields.push(format!("dl_vlan{n}={}", tci & 0xfff));
        fields.push(format!("dl_vlan_pcp{n}={}", tci >> 13));
    }
    fields.push(format!("dl_src={src}"));
    fields.push(format!("dl_dst={dst}"));
    if shorthand.is_none() {
        fields.push(format!("dl_type=0x{ty:04x}"));
    }
    fields.extend(l3_fields);
    if transport.masked {
        let icmp = matches!(shorthand, Some("icmp") | Some("icmp6"));
        let (a, b) = if icmp { ("icmp_type", "icmp_code") } else { ("tp_src", "tp_dst") };
        fields.push(format!("{a}={}", transport.src));
        fields.push(format!("{b}={}", transport.dst));
        if let Some((target, sll, tll)) = transport.nd {
            fields.push(format!("nd_target={target}"));
            fields.push(format!("nd_sll={sll}"));
            fields.push(format!("nd_tll={tll}"));
        }
        if let Some(f) = transport.tcp_flags {
            fields.push(format!("tcp_flags={}", tcp_flag_names(f)));
        }
    }
    let mut s = fields.join(",");
    if let Some(c) = transport.csum {
        s.push(' ');
        s.push_str(&c);
    }
    s
}

/// `nw_proto` (unless the shorthand says it), `nw_tos`, `nw_ecn`, `nw_ttl`, `nw_frag`.
fn ip_tail(out: &mut Vec<String>, n: &Net, show_proto: bool) {
    if show_proto {
        out.push(format!("nw_proto={}", n.proto));
    }
    out.push(format!("nw_tos={}", n.tos & 0xfc));
    out.push(format!("nw_ecn={}", n.tos & 3));
    out.push(format!("nw_ttl={}", n.ttl));
    out.push(format!(
        "nw_frag={}",
        match n.frag {
            (false, false) => "no",
            (true, false) => "first",
            (_, true) => "later",
        }
    ));
}

fn ipv4(l3: &[u8]) -> ((Ipv4Addr, Ipv4Addr), Net, Transport) {
    let zero = Ipv4Addr::UNSPECIFIED;
    // A header shorter than its fixed part fails the length checks below anyway.
    let Some(ip) = Ipv4Header::new_checked(l3) else {
        return ((zero, zero), Net::default(), Transport::default());
    };
    let ihl = ip.header_len();
    let tot = usize::from(ip.total_len());
    let valid = ip.version() == headers::ipv4::VERSION
        && ihl >= headers::ipv4::HEADER_LEN
        && l3.len() >= ihl
        && tot >= ihl
        && tot <= l3.len();
    if !valid {
        return ((zero, zero), Net::default(), Transport::default());
    }
    let offset = ip.frag_offset();
    let net = Net {
        proto: ip.protocol(),
        tos: ip.tos(),
        ttl: ip.ttl(),
        frag: (ip.more_frags() || offset != 0, offset != 0),
    };
    let addrs = (Ipv4Addr::from(ip.src_addr()), Ipv4Addr::from(ip.dst_addr()));
    let l4 = &l3[ihl..tot];
    let t = if net.frag.1 {
        Transport { csum: checksum(net.proto, l4, false), ..Transport::default() }
    } else {
        transport(net.proto, l4, false)
    };
    (addrs, net, t)
}

fn ipv6(l3: &[u8]) -> ((Ipv6Addr, Ipv6Addr), u32, Net, Transport) {
    let b = Bytes(l3);
    let zero = Ipv6Addr::UNSPECIFIED;
    let Some(ip) = Ipv6Header::new_checked(l3) else {
        return ((zero, zero), 0, Net::default(), Transport::default());
    };
    let (src, dst) = (Ipv6Addr::from(ip.src_addr()), Ipv6Addr::from(ip.dst_addr()));
    let end = (headers::ipv6::HEADER_LEN + usize::from(ip.payload_len())).min(l3.len());
    let mut net = Net {
        proto: ip.next_header(),
        tos: ip.traffic_class(),
        ttl: ip.hop_limit(),
        frag: (false, false),
    };
    let mut off = headers::ipv6::HEADER_LEN;
    // Extension headers, as far as they are there.
    for _ in 0..8 {
        match net.proto {
            ip_proto::HOPOPT | ip_proto::ROUTING | ip_proto::DSTOPTS => {
                let Some(e) = Ipv6ExtHeader::new_checked_at(l3, off) else {
                    break;
                };
                net.proto = e.next_header();
                off += e.header_len();
            }
            ip_proto::FRAGMENT => {
                // The offset word is enough (the identification may be cut off).
                let nh = b.u8(off + ipv6_ext::frag::field::NXT_HDR);
                let fw = b.u16(off + ipv6_ext::frag::field::OFFSET_FLAGS.start);
                let (Some(nh), Some(fw)) = (nh, fw) else {
                    break;
                };
                net.proto = nh;
                let offset = fw >> 3;
                net.frag = (true, offset != 0);
                off += ipv6_ext::frag::HEADER_LEN;
                if offset != 0 {
                    break;
                }
            }
            _ => break,
        }
    }
    let l4 = l3.get(off..end).unwrap_or(&[]);
    let t = if net.frag.1 {
        Transport { csum: checksum(net.proto, l4, true), ..Transport::default() }
    } else {
        transport(net.proto, l4, true)
    };
    ((src, dst), ip.flow_label(), net, t)
}

/// The checksum text Open vSwitch appends when the transport header is there (it
/// looks at the bytes after the IP header even in later fragments).
fn checksum(proto: u8, l4: &[u8], v6: bool) -> Option<String> {
    let b = Bytes(l4);
    match proto {
        ip_proto::TCP if l4.len() >= tcp::HEADER_LEN => {
            b.u16(tcp::field::CHECKSUM.start).map(|c| format!("tcp_csum:{c:x}"))
        }
        ip_proto::UDP if l4.len() >= udp::HEADER_LEN => {
            b.u16(udp::field::CHECKSUM.start).map(|c| format!("udp_csum:{c:x}"))
        }
        ip_proto::SCTP if l4.len() >= sctp::HEADER_LEN => {
            b.u32(sctp::field::CHECKSUM.start).map(|c| format!("sctp_csum:{c:x}"))
        }
        ip_proto::ICMP if !v6 && l4.len() >= icmp::V4_HEADER_LEN => {
            b.u16(icmp::field::CHECKSUM.start).map(|c| format!("icmp_csum:{c:x}"))
        }
        ip_proto::ICMPV6 if v6 && l4.len() >= icmp::HEADER_LEN => {
            b.u16(icmp::field::CHECKSUM.start).map(|c| format!("icmp6_csum:{c:x}"))
        }
        _ => None,
    }
}

fn transport(proto: u8, l4: &[u8], v6: bool) -> Transport {
    let b = Bytes(l4);
    let mut t = Transport::default();
    match proto {
        ip_proto::TCP => {
            t.masked = true;
            if let Some(h) = TcpHeader::new_checked(l4) {
                let hlen = h.header_len();
                t.csum = Some(format!("tcp_csum:{:x}", h.checksum()));
                if hlen >= tcp::HEADER_LEN && l4.len() >= hlen {
                    t.src = h.src_port();
                    t.dst = h.dst_port();
                    t.tcp_flags = Some(h.flags());
                }
            }
            t.tcp_flags.get_or_insert(0);
        }
        ip_proto::UDP => {
            t.masked = true;
            if let Some(h) = UdpHeader::new_checked(l4) {
                t.src = h.src_port();
                t.dst = h.dst_port();
                t.csum = Some(format!("udp_csum:{:x}", h.checksum()));
            }
        }
        ip_proto::SCTP => {
            t.masked = true;
            if let Some(h) = SctpHeader::new_checked(l4) {
                t.src = h.src_port();
                t.dst = h.dst_port();
                t.csum = Some(format!("sctp_csum:{:x}", h.checksum()));
            }
        }
        ip_proto::ICMP if !v6 => {
            t.masked = true;
            if let (Some(h), true) = (IcmpHeader::new_checked(l4), l4.len() >= icmp::V4_HEADER_LEN)
            {
                t.src = u16::from(h.msg_type());
                t.dst = u16::from(h.code());
                t.csum = Some(format!("icmp_csum:{:x}", h.checksum()));
            }
        }
        ip_proto::IGMP if !v6 => {
            // Open vSwitch shows the type and the maximum response time as ICMP's.
            t.masked = true;
            if let Some(h) = IgmpHeader::new_checked(l4) {
                t.src = u16::from(h.msg_type());
                t.dst = u16::from(h.max_resp());
            }
        }
        ip_proto::ICMPV6 if v6 => {
            t.masked = true;
            if let Some(h) = IcmpHeader::new_checked(l4) {
                let (ty, code) = (h.msg_type(), h.code());
                t.src = u16::from(ty);
                t.dst = u16::from(code);
                t.csum = Some(format!("icmp6_csum:{:x}", h.checksum()));
                if (ty == nd::NS || ty == nd::NA) && code == 0 {
                    t.nd = Some(nd(&b));
                }
            }
        }
        _ => {}
    }
    t
}

/// The target and link-layer addresses of a neighbour solicitation/advertisement.
fn nd(b: &Bytes) -> (Ipv6Addr, MacAddr, MacAddr) {
    // The target and each option as far as the message holds them.
    let target = b.ipv6(nd::field::TARGET.start).unwrap_or(Ipv6Addr::UNSPECIFIED);
    let (mut sll, mut tll) = (MacAddr::ZERO, MacAddr::ZERO);
    let mut off = nd::HEADER_LEN;
    while let (Some(ty), Some(len)) =
        (b.u8(off + nd::opt_field::TYPE), b.u8(off + nd::opt_field::LEN))
    {
        if len == 0 {
            break;
        }
        if len == 1 {
            if let Some(m) = b.mac(off + nd::opt_field::LL_ADDR.start) {
                match ty {
                    nd::OPT_SOURCE_LL => sll = m,
                    nd::OPT_TARGET_LL => tll = m,
                    _ => {}
                }
            }
        }
        off += usize::from(len) * 8;
    }
    (target, sll, tll)
}

/// TCP flags as Open vSwitch names them, joined by `|` (`0` when none).
pub fn tcp_flag_names(flags: u16) -> String {
    if flags == 0 {
        return "0".into();
    }
    let names =
        ["fin", "syn", "rst", "psh", "ack", "urg", "ece", "cwr", "ns", "[200]", "[400]", "[800]"];
    (0..12)
        .filter(|i| flags & (1 << i) != 0)
        .map(|i| names[i].to_string())
        .collect::<Vec<_>>()
        .join("|")
}

/// `data_len=N (unbuffered)` etc., and the packet lines for `verbosity`.
fn data_tail(total_len: u16, buffer_id: u32, data: &[u8], verbosity: u8) -> String {
    let mut s = format!(" data_len={}", data.len());
    if buffer_id == u32::MAX {
        s.push_str(" (unbuffered)");
        if usize::from(total_len) != data.len() {
            s.push_str(" (***total_len != data_len***)");
        }
    } else {
        s.push_str(&format!(" buffer=0x{buffer_id:08x}"));
        if usize::from(total_len) < data.len() {
            s.push_str(" (***total_len < data_len***)");
        }
    }
    s.push('\n');
    s.push_str(&packet_lines(data, verbosity));
    s
}

fn packet_lines(data: &[u8], verbosity: u8) -> String {
    let mut s = String::new();
    if verbosity > 0 {
        s.push_str(&summary(data));
        s.push('\n');
    }
    if verbosity > 2 {
        s.push_str(&hex_dump(data));
    }
    s
}

/// The reason word of a packet-in.
pub fn reason(r: crate::model::PacketInReason) -> String {
    use crate::model::PacketInReason as R;
    match r {
        R::NoMatch => "no_match".into(),
        R::Action => "action".into(),
        R::InvalidTtl => "invalid_ttl".into(),
        R::ActionSet => "action_set".into(),
        R::Group => "group".into(),
        R::PacketOut => "packet_out".into(),
        R::Unknown(n) => n.to_string(),
    }
}

/// A packet-in of either version: a 1.0 one has table 0, no cookie (all ones) and a
/// match of only its input port, so it prints as ovs-ofctl prints 1.0's.
pub(super) fn packet_in(p: &crate::model::PacketIn, verbosity: u8) -> String {
    let mut s = String::new();
    if p.table_id != 0 {
        s.push_str(&format!(" table_id={}", p.table_id));
    }
    if p.cookie != u64::MAX {
        s.push_str(&format!(" cookie={:#x}", p.cookie));
    }
    s.push_str(&format!(
        " total_len={} {} (via {})",
        p.total_len,
        crate::text::format_match(&p.match_),
        reason(p.reason)
    ));
    s.push_str(&data_tail(p.total_len, p.buffer_id, &p.data, verbosity));
    s
}

/// The body of a packet-out of either version.
pub(super) fn packet_out<A: PrintList>(p: &PacketOut<A>, verbosity: u8) -> String {
    let mut s = format!(" in_port={} actions={}", port_name(p.in_port), A::list_text(&p.actions));
    if p.buffer_id == u32::MAX {
        s.push_str(&format!(" data_len={}", p.data.len()));
        if verbosity > 0 && !p.data.is_empty() {
            s.push('\n');
            s.push_str(&summary(&p.data));
            s.push('\n');
        }
        if verbosity > 2 {
            s.push_str(&hex_dump(&p.data));
        }
    } else {
        s.push_str(&format!(" buffer=0x{:08x}", p.buffer_id));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        crate::text::decode_hex(s).unwrap()
    }

    #[test]
    fn tcp_syn_prints_like_ovs() {
        let p = hex("aa55aa550000aa55aa5500010800450000280001000040063ccd0a0000010a0000020400005000000000000000005002200074c30000");
        assert_eq!(
            summary(&p),
            "tcp,vlan_tci=0x0000,dl_src=aa:55:aa:55:00:01,dl_dst=aa:55:aa:55:00:00,nw_src=10.0.0.1,nw_dst=10.0.0.2,nw_tos=0,nw_ecn=0,nw_ttl=64,nw_frag=no,tp_src=1024,tp_dst=80,tcp_flags=syn tcp_csum:74c3"
        );
    }

    #[test]
    fn bad_ipv4_header_leaves_zeros() {
        // IPv4 total length (84) beyond the 80 bytes present: Open vSwitch leaves the
        // network fields at zero.
        let mut p = hex(
            "ffffffffffffaa55aa550001080045000054000040004001f95c0a0000010a000002080047ac00010001",
        );
        p.resize(94, 0);
        assert_eq!(
            summary(&p),
            "ip,vlan_tci=0x0000,dl_src=aa:55:aa:55:00:01,dl_dst=ff:ff:ff:ff:ff:ff,nw_src=0.0.0.0,nw_dst=0.0.0.0,nw_proto=0,nw_tos=0,nw_ecn=0,nw_ttl=0,nw_frag=no"
        );
    }

    #[test]
    fn vlan_arp_and_short_frames() {
        let arp = hex("ffffffffffff0000000000018100200508060001080006040001000000000001c0a80001000000000000c0a80002");
        assert_eq!(
            summary(&arp),
            "arp,dl_vlan=5,dl_vlan_pcp=1,vlan_tci1=0x0000,dl_src=00:00:00:00:00:01,dl_dst=ff:ff:ff:ff:ff:ff,arp_spa=192.168.0.1,arp_tpa=192.168.0.2,arp_op=1,arp_sha=00:00:00:00:00:01,arp_tha=00:00:00:00:00:00"
        );
        assert_eq!(
            summary(&[1, 2, 3]),
            "vlan_tci=0x0000,dl_src=00:00:00:00:00:00,dl_dst=00:00:00:00:00:00,dl_type=0x0000"
        );
        // 802.3 with a length and no SNAP header.
        let llc = hex("ffffffffffff0000000000010026424203000000");
        assert!(summary(&llc).ends_with(",dl_type=0x05ff"), "{}", summary(&llc));
        let other = hex("ffffffffffff00000000000188cc00");
        assert_eq!(
            summary(&other),
            "vlan_tci=0x0000,dl_src=00:00:00:00:00:01,dl_dst=ff:ff:ff:ff:ff:ff,dl_type=0x88cc"
        );
    }

    #[test]
    fn random_frames_never_panic() {
        let mut x: u32 = 7;
        for len in 0..300usize {
            for ty in [0x0800u16, 0x86dd, 0x0806, 0x8100, 0x8847, 0x1234] {
                let mut b = crate::text::print::tests::pseudo_random_bytes(&mut x, len);
                if b.len() >= 14 {
                    b[12..14].copy_from_slice(&ty.to_be_bytes());
                }
                if b.len() >= 15 && ty == 0x0800 {
                    b[14] = 0x45;
                }
                assert!(summary(&b).contains("dl_src="), "{len} {ty:#x}");
            }
        }
    }

    #[test]
    fn tcp_flag_words() {
        assert_eq!(tcp_flag_names(0x12), "syn|ack");
        assert_eq!(tcp_flag_names(0), "0");
    }

    #[test]
    fn truncated_frames_never_panic() {
        let p = hex("aa55aa550000aa55aa5500010800450000280001000040063ccd0a0000010a0000020400005000000000000000005002200074c30000");
        for n in 0..p.len() {
            let _ = summary(&p[..n]);
        }
        let v6 = hex("3333000000010000000000010086dd6000000000203aff fe800000000000000000000000000001ff0200000000000000000000000000018700000000000000fe800000000000000000000000000002".replace(' ', "").as_str());
        for n in 0..v6.len() {
            let _ = summary(&v6[..n]);
        }
    }
}
