//! Set-field on every field a packet header holds.

use super::frames;
use super::*;
use crate::rewrite::RewriteError;
use etherparse::{NetHeaders, PacketHeaders, TransportHeader};

/// Sets `f` to `v` on `frame`, checks that the key holds the value and describes the new
/// bytes, that every checksum verifies, and returns the new bytes.
fn set(frame: &[u8], f: Field, v: u128) -> Vec<u8> {
    let mut c = Case::new(frame);
    c.apply(&Action::SetField(f, v)).unwrap_or_else(|e| panic!("{f:?}: {e:?}"));
    assert_eq!(c.key.get(f), v, "{f:?} in the key");
    c.assert_consistent();
    verify_checksums(c.pkt.data());
    c.pkt.data().to_vec()
}

/// A test frame's maker.
type Frame = fn() -> Vec<u8>;

/// [`assert_missing`] of value 1 for each (frame, field) of `cases`.
fn assert_all_missing(cases: &[(Frame, Field)]) {
    for &(frame, f) in cases {
        assert_missing(&frame(), f, 1);
    }
}

/// Checks that setting `f` to `v` on `frame` fails with `MissingHeader` and leaves the
/// bytes, the key and the layers as they were.
fn assert_missing(frame: &[u8], f: Field, v: u128) {
    let mut c = Case::new(frame);
    let (p, k, l) = (c.pkt.clone(), c.key, c.layers);
    assert_eq!(c.apply(&Action::SetField(f, v)), Err(RewriteError::MissingHeader), "{f:?}");
    assert_eq!((c.pkt, c.key, c.layers), (p, k, l));
}

fn ethernet(b: &[u8]) -> etherparse::Ethernet2Header {
    let link = PacketHeaders::from_ethernet_slice(b).unwrap().link;
    link.and_then(|l| l.ethernet2()).expect("an Ethernet II header")
}

fn ipv4(b: &[u8]) -> etherparse::Ipv4Header {
    match PacketHeaders::from_ethernet_slice(b).unwrap().net {
        Some(NetHeaders::Ipv4(h, _)) => h,
        n => panic!("not IPv4: {n:?}"),
    }
}

fn ipv6(b: &[u8]) -> etherparse::Ipv6Header {
    match PacketHeaders::from_ethernet_slice(b).unwrap().net {
        Some(NetHeaders::Ipv6(h, _)) => h,
        n => panic!("not IPv6: {n:?}"),
    }
}

fn transport(b: &[u8]) -> TransportHeader {
    PacketHeaders::from_ethernet_slice(b).unwrap().transport.unwrap()
}

fn ports(b: &[u8]) -> (u16, u16) {
    match transport(b) {
        TransportHeader::Tcp(t) => (t.source_port, t.destination_port),
        TransportHeader::Udp(u) => (u.source_port, u.destination_port),
        t => panic!("no ports: {t:?}"),
    }
}

#[test]
fn ethernet_addresses() {
    let b = set(&frames::ipv4_tcp(), Field::EthDst, 0x0a0b_0c0d_0e0f);
    assert_eq!(ethernet(&b).destination, [0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f]);
    let b = set(&frames::vlan_ipv4_udp(), Field::EthSrc, 0x0011_2233_4455);
    assert_eq!(ethernet(&b).source, [0, 0x11, 0x22, 0x33, 0x44, 0x55]);
}

#[test]
fn eth_type_rewrites_the_inner_ethertype() {
    let mut c = Case::new(&frames::vlan_ipv4_udp());
    c.apply(&Action::SetField(Field::EthType, 0x88b5)).unwrap();
    assert_eq!(&c.pkt.data()[12..18], &[0x81, 0, 0, 100, 0x88, 0xb5]);
    let mut c = Case::new(&frames::ipv4_tcp());
    c.apply(&Action::SetField(Field::EthType, 0x88b5)).unwrap();
    assert_eq!(&c.pkt.data()[12..14], &[0x88, 0xb5]);
    assert_eq!(c.key.get(Field::EthType), 0x88b5);
    assert_eq!(c.layers.l3, None);
}

#[test]
fn vlan_vid_and_pcp() {
    let b = set(&frames::vlan_ipv4_udp(), Field::VlanVid, 0x1000 | 0xabc);
    let h = PacketHeaders::from_ethernet_slice(&b).unwrap();
    let etherparse::LinkExtHeader::Vlan(v) = &h.link_exts[0] else { panic!() };
    assert_eq!(v.vlan_id.value(), 0xabc);
    let mut c = Case::new(&frames::vlan_ipv4_udp());
    c.apply(&Action::SetField(Field::VlanPcp, 5)).unwrap();
    assert_eq!(c.key.get(Field::VlanPcp), 5);
    assert_eq!(c.key.get(Field::VlanVid), 0x1000 | 100);
    c.assert_consistent();
    let h = PacketHeaders::from_ethernet_slice(c.pkt.data()).unwrap();
    let etherparse::LinkExtHeader::Vlan(v) = &h.link_exts[0] else { panic!() };
    assert_eq!((v.pcp.value(), v.vlan_id.value()), (5, 100));
    assert_missing(&frames::ipv4_tcp(), Field::VlanVid, 0x1005);
}

#[test]
fn dscp_and_ecn_v4_and_v6() {
    let b = set(&frames::ipv4_tcp(), Field::IpDscp, 46);
    assert_eq!(ipv4(&b).dscp.value(), 46);
    let b = set(&b, Field::IpEcn, 3);
    assert_eq!((ipv4(&b).dscp.value(), ipv4(&b).ecn.value()), (46, 3));
    let b = set(&frames::ipv6_tcp(), Field::IpDscp, 10);
    assert_eq!(ipv6(&b).traffic_class, 10 << 2);
    let b = set(&b, Field::IpEcn, 1);
    assert_eq!(ipv6(&b).traffic_class, (10 << 2) | 1);
    assert_eq!(ipv6(&b).flow_label.value(), 0);
}

#[test]
fn ip_proto_rewrites_the_protocol_byte_and_the_pseudo_header_checksum() {
    // `set` verifies every checksum with the new protocol in the pseudo-header.
    let b = set(&frames::ipv4_tcp(), Field::IpProto, 17);
    assert_eq!(ipv4(&b).protocol.0, 17);
    assert_eq!(ones(&b[14..34]), 0xffff);
    let b = set(&frames::ipv6_udp(), Field::IpProto, 6);
    assert_eq!(b[20], 6);
    let b = set(&frames::ipv6_tcp(), Field::IpProto, 17);
    assert_eq!(b[20], 17);
}

#[test]
fn ipv4_addresses_fix_ip_and_l4_checksums() {
    for frame in
        [frames::ipv4_tcp(), frames::vlan_ipv4_udp(), frames::ipv4_icmp(), frames::ipv4_sctp()]
    {
        let b = set(&frame, Field::Ipv4Src, 0xc0a8_0101);
        assert_eq!(ipv4(&b).source, [192, 168, 1, 1]);
        let b = set(&b, Field::Ipv4Dst, 0xfeed_beef);
        assert_eq!(ipv4(&b).destination, [0xfe, 0xed, 0xbe, 0xef]);
    }
}

#[test]
fn udp_without_checksum_keeps_zero() {
    let b = set(&frames::ipv4_udp_nocsum(), Field::Ipv4Dst, 0x0102_0304);
    assert_eq!(&b[40..42], &[0, 0]);
    let b = set(&b, Field::TpDst, 9999);
    assert_eq!(&b[40..42], &[0, 0]);
}

#[test]
fn arp_fields() {
    let b = set(&frames::arp(), Field::Ipv4Src, 0x0a00_0063);
    assert_eq!(&b[28..32], &[10, 0, 0, 0x63]);
    let b = set(&b, Field::Ipv4Dst, 0x0a00_0064);
    assert_eq!(&b[38..42], &[10, 0, 0, 0x64]);
    let b = set(&b, Field::ArpOp, 2);
    let b = set(&b, Field::ArpSha, 0x0211_2233_4455);
    let b = set(&b, Field::ArpTha, 0x0266_7788_99aa);
    let h = PacketHeaders::from_ethernet_slice(&b).unwrap();
    let Some(NetHeaders::Arp(a)) = h.net else { panic!("not ARP") };
    assert_eq!(a.operation.0, 2);
    assert_eq!(a.sender_hw_addr(), &[0x02, 0x11, 0x22, 0x33, 0x44, 0x55]);
    assert_eq!(a.target_hw_addr(), &[0x02, 0x66, 0x77, 0x88, 0x99, 0xaa]);
    assert_eq!(a.sender_protocol_addr(), &[10, 0, 0, 0x63]);
    assert_eq!(a.target_protocol_addr(), &[10, 0, 0, 0x64]);
}

#[test]
fn ports_tcp_udp_sctp() {
    for frame in
        [frames::ipv4_tcp(), frames::vlan_ipv4_udp(), frames::ipv6_tcp(), frames::ipv6_udp()]
    {
        let b = set(&frame, Field::TpSrc, 40000);
        let b = set(&b, Field::TpDst, 8080);
        assert_eq!(ports(&b), (40000, 8080));
    }
    let b = set(&frames::ipv4_sctp(), Field::TpSrc, 7);
    let b = set(&b, Field::TpDst, 9);
    assert_eq!(&b[34..38], &[0, 7, 0, 9]);
    assert_missing(&frames::ipv4_icmp(), Field::TpSrc, 1);
}

#[test]
fn icmp_type_and_code() {
    let b = set(&frames::ipv4_icmp(), Field::IcmpType, 13);
    let b = set(&b, Field::IcmpCode, 1);
    assert_eq!(&b[34..36], &[13, 1]);
    let b = set(&frames::ipv6_icmp(), Field::IcmpType, 129);
    let b = set(&b, Field::IcmpCode, 3);
    let l4 = 14 + 40;
    assert_eq!(&b[l4..l4 + 2], &[129, 3]);
    let TransportHeader::Icmpv6(h) = transport(&b) else { panic!() };
    assert_eq!(h.icmp_type.type_u8(), 129);
}

#[test]
fn ipv6_addresses_and_flow_label() {
    for frame in [frames::ipv6_tcp(), frames::ipv6_udp(), frames::ipv6_icmp(), frames::nd(135)] {
        let b = set(&frame, Field::Ipv6Src, 0xfe80_0000_0000_0000_0000_0000_0000_1234);
        let b = set(&b, Field::Ipv6Dst, 0xff02_0000_0000_0000_0000_0001_ff00_0001);
        let b = set(&b, Field::Ipv6Flabel, 0xabcde);
        let h = ipv6(&b);
        assert_eq!(h.source[0..2], [0xfe, 0x80]);
        assert_eq!(h.destination[15], 1);
        assert_eq!(h.flow_label.value(), 0xabcde);
    }
}

#[test]
fn nd_target_and_link_layer_options() {
    let l4 = 14 + 40;
    let b = set(&frames::nd(135), Field::Ipv6NdTarget, 0xfe80_0000_0000_0000_0000_0000_0000_0099);
    assert_eq!(b[l4 + 8], 0xfe);
    assert_eq!(b[l4 + 23], 0x99);
    let b = set(&b, Field::ArpSha, 0x0201_0203_0405);
    assert_eq!(&b[l4 + 26..l4 + 32], &[0x02, 1, 2, 3, 4, 5]);
    let b = set(&frames::nd(136), Field::ArpTha, 0x02aa_0000_00bb);
    assert_eq!(&b[l4 + 26..l4 + 32], &[0x02, 0xaa, 0, 0, 0, 0xbb]);
    // NA has no source link-layer option.
    assert_missing(&frames::nd(136), Field::ArpSha, 1);
}

#[test]
fn mpls_fields() {
    let b = set(&frames::mpls_ipv4(), Field::MplsLabel, 0xfffff);
    let b = set(&b, Field::MplsTc, 2);
    let b = set(&b, Field::MplsBos, 0);
    let lse = u32::from_be_bytes([b[14], b[15], b[16], b[17]]);
    assert_eq!(lse, (0xfffff << 12) | (2 << 9) | 33);
}

#[test]
fn pbb_isid() {
    let mut c = Case::new(&frames::ipv4_tcp());
    c.apply(&Action::PushPbb(0x88e7)).unwrap();
    c.apply(&Action::SetField(Field::PbbIsid, 0x123456)).unwrap();
    assert_eq!(&c.pkt.data()[14..18], &[0, 0x12, 0x34, 0x56]);
    assert_eq!(c.key.get(Field::PbbIsid), 0x123456);
    c.assert_consistent();
}

#[test]
fn key_only_and_unsettable_fields() {
    let mut c = Case::new(&frames::ipv4_tcp());
    let before = c.pkt.clone();
    c.apply(&Action::SetField(Field::TunnelId, 77)).unwrap();
    c.apply(&Action::SetField(Field::Metadata, 88)).unwrap();
    assert_eq!((c.key.get(Field::TunnelId), c.key.get(Field::Metadata)), (77, 88));
    assert_eq!(c.pkt, before);
    for f in [Field::InPort, Field::IpFrag, Field::Ipv6Exthdr, Field::IpTtl] {
        assert_eq!(c.apply(&Action::SetField(f, 1)), Err(RewriteError::NotSettable));
    }
}

#[test]
fn wrong_packet_kind_is_missing_header_and_unchanged() {
    assert_all_missing(&[
        (frames::ipv6_tcp, Field::Ipv4Src),
        (frames::ipv4_tcp, Field::Ipv6Dst),
        (frames::ipv4_tcp, Field::MplsLabel),
        (frames::ipv4_tcp, Field::PbbIsid),
        (frames::ipv4_tcp, Field::IcmpType),
        (frames::ipv4_tcp, Field::ArpOp),
        (frames::ipv6_icmp, Field::Ipv6NdTarget),
        (frames::arp, Field::IpDscp),
    ]);
}

#[test]
fn headers_the_parser_does_not_read_are_missing() {
    assert_all_missing(&[
        // ND fields only for code 0.
        (frames::nd_bad_code, Field::Ipv6NdTarget),
        (frames::nd_bad_code, Field::ArpSha),
        // ARP fields only for Ethernet/IPv4 ARP.
        (frames::arp_not_ethernet, Field::ArpOp),
        (frames::arp_not_ethernet, Field::Ipv4Src),
        (frames::arp_not_ethernet, Field::ArpTha),
        // No Ethernet header in a runt frame.
        (|| frames::ipv4_tcp()[..13].to_vec(), Field::EthSrc),
    ]);
    // The SLL option of an NS is found past a TLL option, which an NS does not use.
    let b = set(&frames::nd_two_options(), Field::ArpSha, 0x0233_3333_3333);
    assert_eq!(&b[14 + 40 + 34..14 + 40 + 40], &[0x02, 0x33, 0x33, 0x33, 0x33, 0x33]);
}
