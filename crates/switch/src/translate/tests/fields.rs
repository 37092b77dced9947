//! Match translation: every OXM basic field with and without a mask lands in its place
//! of the flow key with its value and mask unchanged; the VLAN cases; shared places; and
//! matches tried against the keys the datapath's parser makes from real frames.

use super::frames::*;
use super::*;
use datapath::parse::parse;
use openflow::oxm::OxmField;

/// One field: the OXM, the prerequisites it needs, and where it must land.
struct Case {
    prereqs: Vec<Oxm>,
    oxm: Oxm,
    field: Field,
    value: u128,
    mask: Option<u128>,
}

fn case(prereqs: &[Oxm], oxm: Oxm, field: Field, value: u128, mask: Option<u128>) -> Case {
    Case { prereqs: prereqs.to_vec(), oxm, field, value, mask }
}

/// The flow match of the prerequisite OXMs the cases use, built by hand.
fn prereq_flow(prereqs: &[Oxm]) -> FlowMatch {
    prereqs.iter().fold(FlowMatch::ANY, |m, o| match *o {
        Oxm::InPort(p) => m.exact(Field::InPort, p.into()),
        Oxm::EthType(t) => m.exact(Field::EthType, t.into()),
        Oxm::VlanVid(v, None) => m.exact(Field::VlanVid, v.into()),
        Oxm::IpProto(p) => m.exact(Field::IpProto, p.into()),
        Oxm::Icmpv6Type(t) => m.exact(Field::IcmpType, t.into()),
        ref other => panic!("not a prerequisite of the cases: {other:?}"),
    })
}

fn mac(b: [u8; 6]) -> MacAddr {
    MacAddr(b)
}

fn cases() -> Vec<Case> {
    use Field as F;
    let ip4 = [Oxm::EthType(0x0800)];
    let ip6 = [Oxm::EthType(0x86dd)];
    let arp = [Oxm::EthType(0x0806)];
    let tcp4 = [Oxm::EthType(0x0800), Oxm::IpProto(6)];
    let udp6 = [Oxm::EthType(0x86dd), Oxm::IpProto(17)];
    let sctp4 = [Oxm::EthType(0x0800), Oxm::IpProto(132)];
    let icmp4 = [Oxm::EthType(0x0800), Oxm::IpProto(1)];
    let icmp6 = [Oxm::EthType(0x86dd), Oxm::IpProto(58)];
    let ns = [Oxm::EthType(0x86dd), Oxm::IpProto(58), Oxm::Icmpv6Type(135)];
    let na = [Oxm::EthType(0x86dd), Oxm::IpProto(58), Oxm::Icmpv6Type(136)];
    let mpls = [Oxm::EthType(0x8847)];
    let pbb = [Oxm::EthType(0x88e7)];
    let m1 = [1, 2, 3, 4, 5, 6];
    let m1_hi = [1, 2, 3, 0, 0, 0];
    let oui = [0xff, 0xff, 0xff, 0, 0, 0];
    let a6 = v6("2001:db8::1:2:3:4");
    let a6_net = v6("2001:db8::");
    let m6 = v6("ffff:ffff:ffff:ffff::");
    let macv = 0x0102_0304_0506u128;
    vec![
        case(&[], Oxm::InPort(7), F::InPort, 7, None),
        case(&[Oxm::InPort(7)], Oxm::InPhyPort(9), F::InPhyPort, 9, None),
        case(
            &[],
            Oxm::Metadata(0x0123_4567_89ab_cdef, None),
            F::Metadata,
            0x0123_4567_89ab_cdef,
            None,
        ),
        case(
            &[],
            Oxm::Metadata(0x0123_0000_89ab_0000, Some(0xffff_0000_ffff_0000)),
            F::Metadata,
            0x0123_0000_89ab_0000,
            Some(0xffff_0000_ffff_0000),
        ),
        case(&[], Oxm::EthDst(mac(m1), None), F::EthDst, macv, None),
        case(
            &[],
            Oxm::EthDst(mac(m1_hi), Some(mac(oui))),
            F::EthDst,
            0x0102_0300_0000,
            Some(0xffff_ff00_0000),
        ),
        case(&[], Oxm::EthSrc(mac(m1), None), F::EthSrc, macv, None),
        case(
            &[],
            Oxm::EthSrc(mac(m1_hi), Some(mac(oui))),
            F::EthSrc,
            0x0102_0300_0000,
            Some(0xffff_ff00_0000),
        ),
        case(&[], Oxm::EthType(0x88cc), F::EthType, 0x88cc, None),
        case(&[], Oxm::VlanVid(0x1005, None), F::VlanVid, 0x1005, None),
        case(&[], Oxm::VlanVid(0x1000, Some(0x1000)), F::VlanVid, 0x1000, Some(0x1000)),
        case(&[Oxm::VlanVid(0x1005, None)], Oxm::VlanPcp(5), F::VlanPcp, 5, None),
        case(&ip4, Oxm::IpDscp(46), F::IpDscp, 46, None),
        case(&ip6, Oxm::IpEcn(3), F::IpEcn, 3, None),
        case(&ip4, Oxm::IpProto(47), F::IpProto, 47, None),
        case(&ip4, Oxm::Ipv4Src(v4("10.1.2.3"), None), F::Ipv4Src, 0x0a01_0203, None),
        case(
            &ip4,
            Oxm::Ipv4Src(v4("10.0.0.0"), Some(v4("255.0.0.0"))),
            F::Ipv4Src,
            0x0a00_0000,
            Some(0xff00_0000),
        ),
        case(&ip4, Oxm::Ipv4Dst(v4("192.168.0.1"), None), F::Ipv4Dst, 0xc0a8_0001, None),
        case(
            &ip4,
            Oxm::Ipv4Dst(v4("192.168.0.0"), Some(v4("255.255.0.0"))),
            F::Ipv4Dst,
            0xc0a8_0000,
            Some(0xffff_0000),
        ),
        case(&tcp4, Oxm::TcpSrc(1234), F::TpSrc, 1234, None),
        case(&tcp4, Oxm::TcpDst(80), F::TpDst, 80, None),
        case(&udp6, Oxm::UdpSrc(5353), F::TpSrc, 5353, None),
        case(&udp6, Oxm::UdpDst(53), F::TpDst, 53, None),
        case(&sctp4, Oxm::SctpSrc(2905), F::TpSrc, 2905, None),
        case(&sctp4, Oxm::SctpDst(36412), F::TpDst, 36412, None),
        case(&icmp4, Oxm::Icmpv4Type(8), F::IcmpType, 8, None),
        case(&icmp4, Oxm::Icmpv4Code(3), F::IcmpCode, 3, None),
        case(&arp, Oxm::ArpOp(2), F::ArpOp, 2, None),
        case(&arp, Oxm::ArpSpa(v4("10.0.0.1"), None), F::Ipv4Src, 0x0a00_0001, None),
        case(
            &arp,
            Oxm::ArpSpa(v4("10.0.0.0"), Some(v4("255.255.255.0"))),
            F::Ipv4Src,
            0x0a00_0000,
            Some(0xffff_ff00),
        ),
        case(&arp, Oxm::ArpTpa(v4("10.0.0.2"), None), F::Ipv4Dst, 0x0a00_0002, None),
        case(
            &arp,
            Oxm::ArpTpa(v4("10.0.0.0"), Some(v4("255.255.255.0"))),
            F::Ipv4Dst,
            0x0a00_0000,
            Some(0xffff_ff00),
        ),
        case(&arp, Oxm::ArpSha(mac(m1), None), F::ArpSha, macv, None),
        case(
            &arp,
            Oxm::ArpSha(mac(m1_hi), Some(mac(oui))),
            F::ArpSha,
            0x0102_0300_0000,
            Some(0xffff_ff00_0000),
        ),
        case(&arp, Oxm::ArpTha(mac(m1), None), F::ArpTha, macv, None),
        case(
            &arp,
            Oxm::ArpTha(mac(m1_hi), Some(mac(oui))),
            F::ArpTha,
            0x0102_0300_0000,
            Some(0xffff_ff00_0000),
        ),
        case(&ip6, Oxm::Ipv6Src(a6, None), F::Ipv6Src, u128::from(a6), None),
        case(
            &ip6,
            Oxm::Ipv6Src(a6_net, Some(m6)),
            F::Ipv6Src,
            u128::from(a6_net),
            Some(u128::from(m6)),
        ),
        case(&ip6, Oxm::Ipv6Dst(a6, None), F::Ipv6Dst, u128::from(a6), None),
        case(
            &ip6,
            Oxm::Ipv6Dst(a6_net, Some(m6)),
            F::Ipv6Dst,
            u128::from(a6_net),
            Some(u128::from(m6)),
        ),
        case(&ip6, Oxm::Ipv6Flabel(0x1_2345, None), F::Ipv6Flabel, 0x1_2345, None),
        case(
            &ip6,
            Oxm::Ipv6Flabel(0x1_2300, Some(0xf_ff00)),
            F::Ipv6Flabel,
            0x1_2300,
            Some(0xf_ff00),
        ),
        case(&icmp6, Oxm::Icmpv6Type(128), F::IcmpType, 128, None),
        case(&icmp6, Oxm::Icmpv6Code(1), F::IcmpCode, 1, None),
        case(&ns, Oxm::Ipv6NdTarget(a6), F::Ipv6NdTarget, u128::from(a6), None),
        case(&ns, Oxm::Ipv6NdSll(mac(m1)), F::ArpSha, macv, None),
        case(&na, Oxm::Ipv6NdTll(mac(m1)), F::ArpTha, macv, None),
        case(&mpls, Oxm::MplsLabel(0xa_bcde), F::MplsLabel, 0xa_bcde, None),
        case(&mpls, Oxm::MplsTc(5), F::MplsTc, 5, None),
        case(&mpls, Oxm::MplsBos(1), F::MplsBos, 1, None),
        case(&pbb, Oxm::PbbIsid(0xab_cdef, None), F::PbbIsid, 0xab_cdef, None),
        case(
            &pbb,
            Oxm::PbbIsid(0xab_0000, Some(0xff_0000)),
            F::PbbIsid,
            0xab_0000,
            Some(0xff_0000),
        ),
        case(
            &[],
            Oxm::TunnelId(0xfeed_beef_0000_0001, None),
            F::TunnelId,
            0xfeed_beef_0000_0001,
            None,
        ),
        case(
            &[],
            Oxm::TunnelId(0xfeed_0000, Some(0xffff_0000)),
            F::TunnelId,
            0xfeed_0000,
            Some(0xffff_0000),
        ),
        case(&ip6, Oxm::Ipv6Exthdr(0x41, None), F::Ipv6Exthdr, 0x41, None),
        case(&ip6, Oxm::Ipv6Exthdr(0x40, Some(0x40)), F::Ipv6Exthdr, 0x40, Some(0x40)),
    ]
}

#[test]
fn every_field_lands_in_its_place_with_value_and_mask() {
    for c in cases() {
        let mut fields = c.prereqs.clone();
        fields.push(c.oxm.clone());
        let got = flow(fields);
        let base = prereq_flow(&c.prereqs);
        let want = match c.mask {
            None => base.exact(c.field, c.value),
            Some(m) => base.masked(c.field, c.value, m),
        };
        assert_eq!(got, want, "{:?}", c.oxm);
        // The order of the TLVs does not matter.
        let mut reversed = c.prereqs.clone();
        reversed.insert(0, c.oxm.clone());
        reversed.reverse();
        assert_eq!(flow(reversed), want, "{:?} reversed", c.oxm);
    }
}

#[test]
fn the_cases_cover_every_basic_field_masked_and_not() {
    let cases = cases();
    for n in 0..=39u8 {
        let f = OxmField::from_u8(n).expect("OpenFlow 1.3 basic fields are 0..=39");
        assert!(
            cases.iter().any(|c| c.oxm.field() == Some(f) && !c.oxm.has_mask()),
            "no unmasked case for {}",
            f.name()
        );
        if f.maskable() {
            assert!(
                cases.iter().any(|c| c.oxm.field() == Some(f) && c.oxm.has_mask()),
                "no masked case for {}",
                f.name()
            );
        }
    }
}

#[test]
fn empty_match_matches_everything() {
    assert_eq!(flow(vec![]), FlowMatch::ANY);
}

#[test]
fn in_phy_port_equal_to_in_port_adds_nothing() {
    let fm = flow(vec![Oxm::InPort(3), Oxm::InPhyPort(3)]);
    assert_eq!(fm, FlowMatch::ANY.exact(Field::InPort, 3));
    let mut key = FlowKey::ZERO;
    parse(&tcp4(80), 3, &mut key);
    assert!(fm.matches(&key));
    // A different physical port can never be the input port: the match holds nothing.
    let never = flow(vec![Oxm::InPort(3), Oxm::InPhyPort(4)]);
    assert!(!never.matches(&key));
    parse(&tcp4(80), 4, &mut key);
    assert!(!never.matches(&key));
}

#[test]
fn vlan_vid_follows_ofpvid_present_semantics() {
    let untagged = eth_ipv4(&ipv4(0, 17, v4("1.1.1.1"), v4("2.2.2.2"), &udp(1, 2)));
    let vid5 = eth_vlan(
        MAC_B,
        MAC_A,
        (3 << 13) | 5,
        ETH_IPV4,
        &ipv4(0, 17, v4("1.1.1.1"), v4("2.2.2.2"), &udp(1, 2)),
    );
    let vid6 =
        eth_vlan(MAC_B, MAC_A, 6, ETH_IPV4, &ipv4(0, 17, v4("1.1.1.1"), v4("2.2.2.2"), &udp(1, 2)));
    let vid0 =
        eth_vlan(MAC_B, MAC_A, 0, ETH_IPV4, &ipv4(0, 17, v4("1.1.1.1"), v4("2.2.2.2"), &udp(1, 2)));
    let frames = [&untagged, &vid5, &vid6, &vid0];
    // (match, which of [untagged, vid 5, vid 6, priority-tagged vid 0] it matches)
    let table: Vec<(Vec<Oxm>, [bool; 4])> = vec![
        // No VLAN_VID: any packet.
        (vec![], [true, true, true, true]),
        // OFPVID_NONE: untagged only.
        (vec![Oxm::VlanVid(0, None)], [true, false, false, false]),
        // OFPVID_PRESENT/OFPVID_PRESENT: any tagged packet.
        (vec![Oxm::VlanVid(0x1000, Some(0x1000))], [false, true, true, true]),
        // OFPVID_PRESENT | 5: tagged with VID 5.
        (vec![Oxm::VlanVid(0x1005, None)], [false, true, false, false]),
        // OFPVID_PRESENT | 0: a priority tag (VID 0), not an untagged packet.
        (vec![Oxm::VlanVid(0x1000, None)], [false, false, false, true]),
        // Tagged with an even VID.
        (vec![Oxm::VlanVid(0x1000, Some(0x1001))], [false, false, true, true]),
        // Bits of VID without OFPVID_PRESENT in the mask: untagged packets have VID 0.
        (vec![Oxm::VlanVid(0, Some(0x0fff))], [true, false, false, true]),
        // A mask wider than the field constrains nothing more.
        (vec![Oxm::VlanVid(0x1005, Some(0xffff))], [false, true, false, false]),
        // VLAN_PCP with any tag.
        (vec![Oxm::VlanVid(0x1000, Some(0x1000)), Oxm::VlanPcp(3)], [false, true, false, false]),
        (vec![Oxm::VlanVid(0x1000, Some(0x1000)), Oxm::VlanPcp(0)], [false, false, true, true]),
    ];
    for (fields, want) in table {
        let fm = flow(fields.clone());
        for (frame, &w) in frames.iter().zip(&want) {
            let mut key = FlowKey::ZERO;
            parse(frame, 1, &mut key);
            assert_eq!(fm.matches(&key), w, "{fields:?} against {key:?}");
        }
    }
}

/// A frame, the matches its parsed key must meet and those it must not.
struct FrameCase {
    name: &'static str,
    frame: Vec<u8>,
    yes: Vec<Vec<Oxm>>,
    no: Vec<Vec<Oxm>>,
}

fn frame_cases() -> Vec<FrameCase> {
    use Oxm as O;
    let ip4 = || vec![O::EthType(0x0800)];
    let with = |mut base: Vec<Oxm>, more: &[Oxm]| {
        base.extend_from_slice(more);
        base
    };
    let tcp4m = |more: &[Oxm]| with(vec![O::EthType(0x0800), O::IpProto(6)], more);
    let udp4m = |more: &[Oxm]| with(vec![O::EthType(0x0800), O::IpProto(17)], more);
    let sctp4m = |more: &[Oxm]| with(vec![O::EthType(0x0800), O::IpProto(132)], more);
    let arpm = |more: &[Oxm]| with(vec![O::EthType(0x0806)], more);
    let ip6m = |more: &[Oxm]| with(vec![O::EthType(0x86dd)], more);
    let icmp6m = |more: &[Oxm]| with(vec![O::EthType(0x86dd), O::IpProto(58)], more);
    let a6 = v6("2001:db8::1");
    let b6 = v6("2001:db8::2");
    let t6 = v6("2001:db8::99");
    vec![
        FrameCase {
            name: "ipv4 tcp",
            frame: tcp4(80),
            yes: vec![
                vec![O::InPort(1)],
                vec![O::EthDst(MacAddr(MAC_B), None)],
                vec![O::EthSrc(
                    MacAddr([0x02, 0, 0, 0, 0, 0]),
                    Some(MacAddr([0xff, 0xff, 0, 0, 0, 0])),
                )],
                vec![O::VlanVid(0, None)],
                with(ip4(), &[O::IpDscp(46), O::IpEcn(1)]),
                with(ip4(), &[O::Ipv4Src(v4("10.0.0.0"), Some(v4("255.0.0.0")))]),
                with(ip4(), &[O::Ipv4Dst(v4("192.168.0.1"), None)]),
                tcp4m(&[O::TcpSrc(1234), O::TcpDst(80)]),
                vec![O::Metadata(0, None), O::TunnelId(0, None)],
            ],
            no: vec![
                vec![O::InPort(2)],
                vec![O::VlanVid(0x1000, Some(0x1000))],
                with(ip4(), &[O::IpDscp(47)]),
                with(ip4(), &[O::Ipv4Src(v4("11.0.0.0"), Some(v4("255.0.0.0")))]),
                tcp4m(&[O::TcpDst(81)]),
                // The port is in the shared place, but the protocol tells UDP/SCTP apart.
                udp4m(&[O::UdpDst(80)]),
                sctp4m(&[O::SctpDst(80)]),
                // IPv4 and ARP addresses share a place; the ethertype tells them apart.
                arpm(&[O::ArpSpa(v4("10.1.2.3"), None)]),
                ip6m(&[O::IpDscp(46)]),
            ],
        },
        FrameCase {
            name: "tagged ipv4 udp",
            frame: eth_vlan(
                MAC_B,
                MAC_A,
                (5 << 13) | 100,
                ETH_IPV4,
                &ipv4(0, 17, v4("1.1.1.1"), v4("2.2.2.2"), &udp(68, 67)),
            ),
            yes: vec![
                vec![O::VlanVid(0x1064, None), O::VlanPcp(5)],
                udp4m(&[O::UdpSrc(68), O::UdpDst(67)]),
            ],
            no: vec![vec![O::VlanVid(0x1064, None), O::VlanPcp(4)], tcp4m(&[O::TcpSrc(68)])],
        },
        FrameCase {
            name: "ipv4 sctp",
            frame: eth_ipv4(&ipv4(0, 132, v4("1.1.1.1"), v4("2.2.2.2"), &sctp(2905, 36412))),
            yes: vec![sctp4m(&[O::SctpSrc(2905), O::SctpDst(36412)])],
            no: vec![tcp4m(&[O::TcpSrc(2905)]), udp4m(&[O::UdpDst(36412)])],
        },
        FrameCase {
            name: "icmpv4 echo",
            frame: eth_ipv4(&ipv4(0, 1, v4("1.1.1.1"), v4("2.2.2.2"), &icmp(8, 0))),
            yes: vec![with(ip4(), &[O::IpProto(1), O::Icmpv4Type(8), O::Icmpv4Code(0)])],
            no: vec![with(ip4(), &[O::IpProto(1), O::Icmpv4Type(0)]), icmp6m(&[O::Icmpv6Type(8)])],
        },
        FrameCase {
            name: "arp reply",
            frame: eth(
                MAC_B,
                MAC_A,
                ETH_ARP,
                &arp(2, MAC_A, v4("10.0.0.1"), MAC_B, v4("10.0.0.2")),
            ),
            yes: vec![
                arpm(&[O::ArpOp(2)]),
                arpm(&[
                    O::ArpSpa(v4("10.0.0.1"), None),
                    O::ArpTpa(v4("10.0.0.0"), Some(v4("255.255.255.0"))),
                ]),
                arpm(&[O::ArpSha(MacAddr(MAC_A), None), O::ArpTha(MacAddr(MAC_B), None)]),
            ],
            no: vec![
                arpm(&[O::ArpOp(1)]),
                with(ip4(), &[O::Ipv4Src(v4("10.0.0.1"), None)]),
                arpm(&[O::ArpSha(MacAddr(MAC_B), None)]),
            ],
        },
        FrameCase {
            name: "ipv6 tcp",
            frame: eth(
                MAC_B,
                MAC_A,
                ETH_IPV6,
                &ipv6((10 << 2) | 2, 0xb_eef1, 6, a6, b6, &tcp(4000, 443)),
            ),
            yes: vec![
                ip6m(&[
                    O::Ipv6Src(a6, None),
                    O::Ipv6Dst(v6("2001:db8::"), Some(v6("ffff:ffff::"))),
                ]),
                ip6m(&[O::Ipv6Flabel(0xb_eef1, None)]),
                ip6m(&[O::Ipv6Flabel(0xb_0000, Some(0xf_0000))]),
                ip6m(&[O::IpDscp(10), O::IpEcn(2)]),
                ip6m(&[O::IpProto(6), O::TcpSrc(4000), O::TcpDst(443)]),
                ip6m(&[O::Ipv6Exthdr(0, Some(0x40))]),
            ],
            no: vec![
                ip6m(&[O::Ipv6Src(b6, None)]),
                ip6m(&[O::Ipv6Flabel(0xb_eef2, None)]),
                ip6m(&[O::Ipv6Exthdr(0x40, Some(0x40))]),
                ip6m(&[O::IpProto(17), O::UdpDst(443)]),
            ],
        },
        FrameCase {
            name: "ipv6 hop-by-hop udp",
            frame: eth(MAC_B, MAC_A, ETH_IPV6, &ipv6(0, 0, 0, a6, b6, &hop_by_hop(17, &udp(1, 2)))),
            yes: vec![
                ip6m(&[O::Ipv6Exthdr(0x40, Some(0x40))]),
                ip6m(&[O::Ipv6Exthdr(0x40, None)]),
                ip6m(&[O::IpProto(17), O::UdpDst(2)]),
            ],
            no: vec![ip6m(&[O::Ipv6Exthdr(0, Some(0x40))])],
        },
        FrameCase {
            name: "neighbor solicitation",
            frame: eth(MAC_B, MAC_A, ETH_IPV6, &ipv6(0, 0, 58, a6, b6, &nd(135, t6, MAC_A))),
            yes: vec![
                icmp6m(&[O::Icmpv6Type(135), O::Icmpv6Code(0)]),
                icmp6m(&[O::Icmpv6Type(135), O::Ipv6NdTarget(t6), O::Ipv6NdSll(MacAddr(MAC_A))]),
            ],
            no: vec![
                icmp6m(&[O::Icmpv6Type(135), O::Ipv6NdSll(MacAddr(MAC_B))]),
                icmp6m(&[O::Icmpv6Type(135), O::Ipv6NdTarget(a6)]),
                // ND SLL shares the ARP SHA place; the ethertype tells them apart.
                arpm(&[O::ArpSha(MacAddr(MAC_A), None)]),
            ],
        },
        FrameCase {
            name: "neighbor advertisement",
            frame: eth(MAC_B, MAC_A, ETH_IPV6, &ipv6(0, 0, 58, a6, b6, &nd(136, t6, MAC_B))),
            yes: vec![icmp6m(&[
                O::Icmpv6Type(136),
                O::Ipv6NdTarget(t6),
                O::Ipv6NdTll(MacAddr(MAC_B)),
            ])],
            no: vec![
                icmp6m(&[O::Icmpv6Type(136), O::Ipv6NdTll(MacAddr(MAC_A))]),
                arpm(&[O::ArpTha(MacAddr(MAC_B), None)]),
            ],
        },
        FrameCase {
            name: "mpls",
            frame: eth(
                MAC_B,
                MAC_A,
                ETH_MPLS,
                &mpls(0xa_bcde, 5, true, &ipv4(0, 17, v4("1.1.1.1"), v4("2.2.2.2"), &udp(1, 2))),
            ),
            yes: vec![vec![
                O::EthType(0x8847),
                O::MplsLabel(0xa_bcde),
                O::MplsTc(5),
                O::MplsBos(1),
            ]],
            no: vec![
                vec![O::EthType(0x8847), O::MplsLabel(0xa_bcdf)],
                vec![O::EthType(0x8847), O::MplsBos(0)],
            ],
        },
        FrameCase {
            name: "pbb",
            frame: eth(MAC_B, MAC_A, ETH_PBB, &pbb_itag(0x12_3456)),
            yes: vec![
                vec![O::EthType(0x88e7), O::PbbIsid(0x12_3456, None)],
                vec![O::EthType(0x88e7), O::PbbIsid(0x12_0000, Some(0xff_0000))],
            ],
            no: vec![vec![O::EthType(0x88e7), O::PbbIsid(0x12_3457, None)]],
        },
    ]
}

#[test]
fn translated_matches_select_the_frames_their_fields_describe() {
    for c in frame_cases() {
        let mut key = FlowKey::ZERO;
        let out = parse(&c.frame, 1, &mut key);
        assert_eq!(out.error, None, "{}: frame does not parse", c.name);
        for fields in &c.yes {
            assert!(
                flow(fields.clone()).matches(&key),
                "{}: {fields:?} should match {key:?}",
                c.name
            );
        }
        for fields in &c.no {
            assert!(
                !flow(fields.clone()).matches(&key),
                "{}: {fields:?} should not match {key:?}",
                c.name
            );
        }
    }
}

#[test]
fn match_errors_carry_the_bad_match_kind() {
    let kind = |fields: Vec<Oxm>| match_to_flow(&Match::new(fields)).unwrap_err().kind();
    // Experimenter and Nicira fields are refused, naming the field.
    let exp = Oxm::Other {
        class: 0xffff,
        field: 3,
        has_mask: false,
        payload: vec![0, 0, 0x23, 0x20, 1, 2],
    };
    let err = match_to_flow(&Match::new(vec![Oxm::InPort(1), exp])).unwrap_err();
    assert_eq!(err, TranslateError::UnsupportedField { class: 0xffff, field: 3 });
    assert_eq!(err.kind(), ErrorKind::BAD_MATCH_BAD_FIELD);
    assert!(err.to_string().contains("0xffff"), "{err}");
    let nxm = Oxm::Other { class: 1, field: 16, has_mask: false, payload: vec![0; 4] };
    assert_eq!(kind(vec![nxm]), ErrorKind::BAD_MATCH_BAD_FIELD);
    // The protocol's own rules, from `Match::validate`.
    assert_eq!(kind(vec![Oxm::TcpDst(80)]), ErrorKind::BAD_MATCH_BAD_PREREQ);
    assert_eq!(kind(vec![Oxm::EthType(0x0800), Oxm::TcpDst(80)]), ErrorKind::BAD_MATCH_BAD_PREREQ);
    assert_eq!(kind(vec![Oxm::InPhyPort(1)]), ErrorKind::BAD_MATCH_BAD_PREREQ);
    assert_eq!(kind(vec![Oxm::VlanPcp(1)]), ErrorKind::BAD_MATCH_BAD_PREREQ);
    assert_eq!(kind(vec![Oxm::InPort(1), Oxm::InPort(2)]), ErrorKind::BAD_MATCH_DUP_FIELD);
    assert_eq!(
        kind(vec![Oxm::EthType(0x0800), Oxm::Ipv4Src(v4("10.0.0.1"), Some(v4("255.0.0.0")))]),
        ErrorKind::BAD_MATCH_BAD_WILDCARDS
    );
    assert_eq!(kind(vec![Oxm::VlanVid(0x0005, None)]), ErrorKind::BAD_MATCH_BAD_VALUE);
    assert_eq!(kind(vec![Oxm::InPort(0)]), ErrorKind::BAD_MATCH_BAD_VALUE);
    let e: openflow::OfpError =
        match_to_flow(&Match::new(vec![Oxm::TcpDst(80)])).unwrap_err().into();
    assert_eq!(e.kind, ErrorKind::BAD_MATCH_BAD_PREREQ);
}
