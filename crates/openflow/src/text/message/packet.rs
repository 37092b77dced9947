//! A short summary of an Ethernet frame (packet-in, packet-out data), printed as the flow
//! that matches it (`tcp,dl_src=..,dl_dst=..,nw_src=..,nw_dst=..,tp_src=..,tp_dst=..`),
//! like the second line of ovs-ofctl's packet-in output. Headers are read with
//! [`Reader`], so a cut or malformed frame only shortens the summary.

use crate::match13::Match;
use crate::oxm::Oxm;
use crate::wire::Reader;

const ETH_VLAN: u16 = 0x8100;
const ETH_QINQ: u16 = 0x88a8;
const ETH_IP: u16 = 0x0800;
const ETH_ARP: u16 = 0x0806;
const ETH_IPV6: u16 = 0x86dd;
const OFPVID_PRESENT: u16 = 0x1000;

/// The flow of `data` as a match, empty when `data` is shorter than an Ethernet header.
pub(super) fn summary(data: &[u8]) -> String {
    let mut fields = Vec::new();
    let mut r = Reader::new(data);
    parse_eth(&mut r, &mut fields);
    if fields.is_empty() {
        return String::new();
    }
    super::super::format_match(&Match { fields })
}

fn parse_eth(r: &mut Reader, f: &mut Vec<Oxm>) {
    let (Ok(dst), Ok(src), Ok(mut ty)) = (r.mac(), r.mac(), r.u16()) else {
        return;
    };
    f.push(Oxm::EthDst(dst, None));
    f.push(Oxm::EthSrc(src, None));
    if ty == ETH_VLAN || ty == ETH_QINQ {
        let (Ok(tci), Ok(inner)) = (r.u16(), r.u16()) else {
            return;
        };
        f.push(Oxm::VlanVid((tci & 0xfff) | OFPVID_PRESENT, None));
        f.push(Oxm::VlanPcp((tci >> 13) as u8));
        ty = inner;
    }
    f.push(Oxm::EthType(ty));
    match ty {
        ETH_IP => parse_ipv4(r, f),
        ETH_IPV6 => parse_ipv6(r, f),
        ETH_ARP => parse_arp(r, f),
        _ => {}
    }
}

fn parse_ipv4(r: &mut Reader, f: &mut Vec<Oxm>) {
    let Ok(hdr) = r.array::<20>() else { return };
    let ihl = usize::from(hdr[0] & 0x0f) * 4;
    let tos = hdr[1];
    let frag = u16::from_be_bytes([hdr[6], hdr[7]]) & 0x1fff;
    let proto = hdr[9];
    let src = std::net::Ipv4Addr::new(hdr[12], hdr[13], hdr[14], hdr[15]);
    let dst = std::net::Ipv4Addr::new(hdr[16], hdr[17], hdr[18], hdr[19]);
    f.push(Oxm::IpDscp(tos >> 2));
    f.push(Oxm::IpEcn(tos & 3));
    f.push(Oxm::IpProto(proto));
    f.push(Oxm::Ipv4Src(src, None));
    f.push(Oxm::Ipv4Dst(dst, None));
    if frag != 0 || ihl < 20 || r.skip(ihl - 20).is_err() {
        return;
    }
    parse_l4(r, f, proto, false);
}

fn parse_ipv6(r: &mut Reader, f: &mut Vec<Oxm>) {
    let (Ok(first), Ok(_len), Ok(next), Ok(_hops), Ok(src), Ok(dst)) =
        (r.u32(), r.u16(), r.u8(), r.u8(), r.ipv6(), r.ipv6())
    else {
        return;
    };
    let label = first & 0x000f_ffff;
    let tc = ((first >> 20) & 0xff) as u8;
    f.push(Oxm::Ipv6Src(src, None));
    f.push(Oxm::Ipv6Dst(dst, None));
    if label != 0 {
        f.push(Oxm::Ipv6Flabel(label, None));
    }
    f.push(Oxm::IpDscp(tc >> 2));
    f.push(Oxm::IpEcn(tc & 3));
    f.push(Oxm::IpProto(next));
    parse_l4(r, f, next, true);
}

fn parse_arp(r: &mut Reader, f: &mut Vec<Oxm>) {
    let (Ok(_htype), Ok(_ptype), Ok(_hlen), Ok(_plen), Ok(op)) =
        (r.u16(), r.u16(), r.u8(), r.u8(), r.u16())
    else {
        return;
    };
    f.push(Oxm::ArpOp(op));
    let (Ok(sha), Ok(spa), Ok(tha), Ok(tpa)) = (r.mac(), r.ipv4(), r.mac(), r.ipv4()) else {
        return;
    };
    f.push(Oxm::ArpSpa(spa, None));
    f.push(Oxm::ArpTpa(tpa, None));
    f.push(Oxm::ArpSha(sha, None));
    f.push(Oxm::ArpTha(tha, None));
}

fn parse_l4(r: &mut Reader, f: &mut Vec<Oxm>, proto: u8, v6: bool) {
    match (proto, v6) {
        (6, _) | (17, _) | (132, _) => {
            let (Ok(sp), Ok(dp)) = (r.u16(), r.u16()) else {
                return;
            };
            f.extend(match proto {
                6 => [Oxm::TcpSrc(sp), Oxm::TcpDst(dp)],
                17 => [Oxm::UdpSrc(sp), Oxm::UdpDst(dp)],
                _ => [Oxm::SctpSrc(sp), Oxm::SctpDst(dp)],
            });
        }
        (1, false) => {
            if let (Ok(t), Ok(c)) = (r.u8(), r.u8()) {
                f.extend([Oxm::Icmpv4Type(t), Oxm::Icmpv4Code(c)]);
            }
        }
        (58, true) => {
            if let (Ok(t), Ok(c)) = (r.u8(), r.u8()) {
                f.extend([Oxm::Icmpv6Type(t), Oxm::Icmpv6Code(c)]);
            }
        }
        _ => {}
    }
}
