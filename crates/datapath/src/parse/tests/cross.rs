//! Cross-check against `etherparse`: random frames of every supported protocol
//! combination are serialised by etherparse's `PacketBuilder` (an independent
//! implementation of the header layouts), and the parsed key and offsets must match the
//! values the frame was built from. [`build`] is also used by the truncation properties.

use super::*;
use crate::packet::Layers;
use crate::parse::{ieh, ParseError};
use etherparse::{
    ArpHardwareId, ArpOperation, ArpPacket, DoubleVlanHeader, EtherType, IpAuthHeader, IpDscp,
    IpEcn, IpFragOffset, IpHeaders, IpNumber, Ipv4Extensions, Ipv4Header, Ipv4Options,
    Ipv6Extensions, Ipv6FlowLabel, Ipv6FragmentHeader, Ipv6Header, Ipv6RawExtHeader,
    Ipv6RoutingExtensions, PacketBuilder, PacketBuilderStep, SingleVlanHeader, VlanHeader, VlanId,
    VlanPcp,
};
use proptest::prelude::*;

/// A frame to build.
#[derive(Clone, Debug)]
pub(super) struct Spec {
    pub src: [u8; 6],
    pub dst: [u8; 6],
    /// 0: untagged, 1: one C-tag, 2: S-tag + C-tag.
    pub tags: u8,
    pub outer: (u16, u8, bool),
    pub inner_vid: u16,
    pub net: Net,
    pub l4: L4,
    pub payload: Vec<u8>,
}

#[derive(Clone, Debug)]
pub(super) enum Net {
    V4 {
        src: [u8; 4],
        dst: [u8; 4],
        ttl: u8,
        dscp: u8,
        ecn: u8,
        opt_words: usize,
        df: bool,
        more: bool,
        offset: u16,
    },
    V6 {
        src: [u8; 16],
        dst: [u8; 16],
        hops: u8,
        tc: u8,
        flow: u32,
        /// Bits: hop-by-hop, destination, routing, final destination, fragment, auth.
        exts: u8,
        more: bool,
        offset: u16,
        big: bool,
    },
    Arp {
        op: u16,
        sha: [u8; 6],
        spa: [u8; 4],
        tha: [u8; 6],
        tpa: [u8; 4],
    },
}

#[derive(Clone, Debug)]
pub(super) enum L4 {
    Tcp {
        sport: u16,
        dport: u16,
        flags: u16,
    },
    Udp {
        sport: u16,
        dport: u16,
    },
    Sctp {
        sport: u16,
        dport: u16,
    },
    Icmp {
        ty: u8,
        code: u8,
    },
    /// ICMPv6 NS (or NA) with a link-layer option of the matching kind (or none).
    Nd {
        ns: bool,
        target: [u8; 16],
        ll: Option<[u8; 6]>,
    },
    Other(u8),
}

/// A built frame and what parsing it must give.
pub(super) struct Built {
    pub frame: Vec<u8>,
    pub want: Vec<(Field, u128)>,
    pub layers: Layers,
    /// Where the last header the parser reads ends: a cut before it loses information.
    pub hdr_end: usize,
    /// Cuts before `hdr_end` that leave a valid shorter frame (an ND message cut at an
    /// option boundary): no error, only `ip_truncated`.
    pub silent_cut: Option<usize>,
}

pub(super) fn spec() -> impl Strategy<Value = Spec> {
    let v4 =
        (
            any::<([u8; 4], [u8; 4], u8)>(),
            (0u8..64, 0u8..4, 0usize..=10),
            (any::<bool>(), any::<bool>(), prop_oneof![Just(0u16), 1u16..8192]),
        )
            .prop_map(|((src, dst, ttl), (dscp, ecn, opt_words), (df, more, offset))| {
                Net::V4 { src, dst, ttl, dscp, ecn, opt_words, df, more, offset }
            });
    let v6 =
        (
            any::<([u8; 16], [u8; 16], u8, u8)>(),
            (0u32..1 << 20, 0u8..64),
            (any::<bool>(), prop_oneof![Just(0u16), 1u16..8192], any::<bool>()),
        )
            .prop_map(|((src, dst, hops, tc), (flow, exts), (more, offset, big))| {
                Net::V6 { src, dst, hops, tc, flow, exts, more, offset, big }
            });
    let arp = any::<(u16, [u8; 6], [u8; 4], [u8; 6], [u8; 4])>()
        .prop_map(|(op, sha, spa, tha, tpa)| Net::Arp { op, sha, spa, tha, tpa });
    let l4 = prop_oneof![
        any::<(u16, u16, u16)>().prop_map(|(sport, dport, f)| L4::Tcp {
            sport,
            dport,
            flags: f & 0x1ff
        }),
        any::<(u16, u16)>().prop_map(|(sport, dport)| L4::Udp { sport, dport }),
        any::<(u16, u16)>().prop_map(|(sport, dport)| L4::Sctp { sport, dport }),
        any::<(u8, u8)>().prop_map(|(ty, code)| L4::Icmp { ty, code }),
        any::<(bool, [u8; 16], Option<[u8; 6]>)>().prop_map(|(ns, target, ll)| L4::Nd {
            ns,
            target,
            ll
        }),
        prop::sample::select(vec![4u8, 41, 47, 89, 103, 115]).prop_map(L4::Other),
    ];
    (
        any::<([u8; 6], [u8; 6])>(),
        (0u8..3, (0u16..4096, 0u8..8, any::<bool>()), 0u16..4096),
        prop_oneof![v4, v6, arp],
        l4,
        prop::collection::vec(any::<u8>(), 0..24),
    )
        .prop_map(|((src, dst), (tags, outer, inner_vid), net, l4, payload)| Spec {
            src,
            dst,
            tags,
            outer,
            inner_vid,
            net,
            l4,
            payload,
        })
}

fn tag(vid: u16, pcp: u8, dei: bool) -> SingleVlanHeader {
    SingleVlanHeader {
        pcp: VlanPcp::try_new(pcp).unwrap(),
        drop_eligible_indicator: dei,
        vlan_id: VlanId::try_new(vid).unwrap(),
        ether_type: EtherType(0),
    }
}

fn ext_hdr(big: bool) -> Ipv6RawExtHeader {
    Ipv6RawExtHeader::new_raw(IpNumber(0), if big { &[0x01; 14] } else { &[0x01; 6] }).unwrap()
}

/// Builds the frame of `s` with etherparse and says what the parser must find.
pub(super) fn build(s: &Spec) -> Built {
    let mut want = vec![(Field::EthDst, mac_u(s.dst)), (Field::EthSrc, mac_u(s.src))];
    let mut layers = Layers::default();
    let (vid, pcp, dei) = s.outer;
    let vlan = match s.tags {
        0 => None,
        1 => Some(VlanHeader::Single(tag(vid, pcp, dei))),
        _ => Some(VlanHeader::Double(DoubleVlanHeader {
            outer: tag(vid, pcp, dei),
            inner: tag(s.inner_vid, 0, false),
        })),
    };
    if s.tags > 0 {
        want.push((Field::VlanVid, 0x1000 | vid as u128));
        want.push((Field::VlanPcp, pcp as u128));
        layers.vlan = Some(12);
    }
    layers.ethertype = 12 + 4 * s.tags as u16;
    let l3 = layers.ethertype as usize + 2;
    layers.l3 = Some(l3 as u16);

    let mut frame = Vec::new();
    let ip = match &s.net {
        Net::Arp { op, sha, spa, tha, tpa } => {
            let a = ArpPacket::new(
                ArpHardwareId::ETHERNET,
                EtherType::IPV4,
                ArpOperation(*op),
                sha,
                spa,
                tha,
                tpa,
            )
            .unwrap();
            let b = PacketBuilder::ethernet2(s.src, s.dst);
            match vlan {
                None => b.arp(a).write(&mut frame).unwrap(),
                Some(v) => b.vlan(v).arp(a).write(&mut frame).unwrap(),
            }
            want.extend([
                (Field::EthType, 0x0806),
                (Field::ArpOp, *op as u128),
                (Field::ArpSha, mac_u(*sha)),
                (Field::ArpTha, mac_u(*tha)),
                (Field::Ipv4Src, u32::from_be_bytes(*spa) as u128),
                (Field::Ipv4Dst, u32::from_be_bytes(*tpa) as u128),
            ]);
            return Built { frame, want, layers, hdr_end: l3 + 28, silent_cut: None };
        }
        Net::V4 { src, dst, ttl, dscp, ecn, opt_words, df, more, offset } => {
            let mut h = Ipv4Header::new(0, *ttl, IpNumber(0), *src, *dst).unwrap();
            h.dscp = IpDscp::try_new(*dscp).unwrap();
            h.ecn = IpEcn::try_new(*ecn).unwrap();
            let opts = vec![1u8; opt_words * 4];
            h.options = Ipv4Options::try_from(&opts[..]).unwrap();
            h.dont_fragment = *df;
            h.more_fragments = *more;
            h.fragment_offset = IpFragOffset::try_new(*offset).unwrap();
            want.extend([
                (Field::EthType, 0x0800),
                (Field::IpDscp, *dscp as u128),
                (Field::IpEcn, *ecn as u128),
                (Field::IpTtl, *ttl as u128),
                (Field::Ipv4Src, u32::from_be_bytes(*src) as u128),
                (Field::Ipv4Dst, u32::from_be_bytes(*dst) as u128),
                (Field::IpFrag, frag_bits(*more, *offset)),
            ]);
            (
                IpHeaders::Ipv4(h, Ipv4Extensions::default()),
                l3 + 20 + opt_words * 4,
                *offset != 0,
                None,
            )
        }
        Net::V6 { src, dst, hops, tc, flow, exts, more, offset, big } => {
            let h = Ipv6Header {
                traffic_class: *tc,
                flow_label: Ipv6FlowLabel::try_new(*flow).unwrap(),
                payload_length: 0,
                next_header: IpNumber(0),
                hop_limit: *hops,
                source: *src,
                destination: *dst,
            };
            let has = |b: u8| exts & (1 << b) != 0;
            let routing = has(2).then(|| Ipv6RoutingExtensions {
                routing: ext_hdr(*big),
                final_destination_options: has(3).then(|| ext_hdr(false)),
            });
            let final_dest =
                routing.as_ref().is_some_and(|r| r.final_destination_options.is_some());
            let e = Ipv6Extensions {
                hop_by_hop_options: has(0).then(|| ext_hdr(*big)),
                destination_options: has(1).then(|| ext_hdr(false)),
                routing,
                fragment: has(4).then(|| {
                    Ipv6FragmentHeader::new(
                        IpNumber(0),
                        IpFragOffset::try_new(*offset).unwrap(),
                        *more,
                        7,
                    )
                }),
                auth: has(5).then(|| IpAuthHeader::new(IpNumber(0), 1, 2, &[0; 12]).unwrap()),
            };
            let later = has(4) && *offset != 0;
            let mut bits = 0u16;
            for (b, bit) in [(0, ieh::HOP), (1, ieh::DEST), (2, ieh::ROUTER), (4, ieh::FRAG)] {
                if has(b) {
                    bits |= bit;
                }
            }
            if !later {
                if has(5) {
                    bits |= ieh::AUTH;
                }
                if final_dest {
                    bits |= ieh::DEST;
                }
            }
            let frag = if has(4) { frag_bits(*more, *offset) } else { 0 };
            want.extend([
                (Field::EthType, 0x86dd),
                (Field::IpDscp, (*tc >> 2) as u128),
                (Field::IpEcn, (*tc & 3) as u128),
                (Field::IpTtl, *hops as u128),
                (Field::Ipv6Flabel, *flow as u128),
                (Field::Ipv6Src, u128::from_be_bytes(*src)),
                (Field::Ipv6Dst, u128::from_be_bytes(*dst)),
                (Field::Ipv6Exthdr, bits as u128),
                (Field::IpFrag, frag),
            ]);
            let l4 = l3 + 40 + e.header_len();
            // A later fragment stops after the fragment header; IP_PROTO is its next header.
            let stop = later.then(|| {
                let before = e.hop_by_hop_options.as_ref().map_or(0, |x| x.header_len())
                    + e.destination_options.as_ref().map_or(0, |x| x.header_len())
                    + e.routing.as_ref().map_or(0, |x| x.routing.header_len());
                let next = if has(5) {
                    Some(51)
                } else if final_dest {
                    Some(60)
                } else {
                    None
                };
                (l3 + 40 + before + 8, next)
            });
            (IpHeaders::Ipv6(h, e), l4, later, stop)
        }
    };
    let (iph, l4_off, later, v6_stop) = ip;
    let v6 = matches!(s.net, Net::V6 { .. });
    let ipb: PacketBuilderStep<IpHeaders> = match vlan {
        None => PacketBuilder::ethernet2(s.src, s.dst).ip(iph),
        Some(v) => PacketBuilder::ethernet2(s.src, s.dst).vlan(v).ip(iph),
    };

    let mut l4_fields: Vec<(Field, u128)> = Vec::new();
    let (proto, l4_len, parsed) = match &s.l4 {
        L4::Tcp { sport, dport, flags } => {
            let mut t = ipb.tcp(*sport, *dport, 1, 2);
            for (bit, set) in [
                (0x001u16, 0),
                (0x002, 1),
                (0x004, 2),
                (0x008, 3),
                (0x010, 4),
                (0x020, 5),
                (0x040, 6),
                (0x080, 7),
                (0x100, 8),
            ] {
                if flags & bit != 0 {
                    t = match set {
                        0 => t.fin(),
                        1 => t.syn(),
                        2 => t.rst(),
                        3 => t.psh(),
                        4 => t.ack(9),
                        5 => t.urg(3),
                        6 => t.ece(),
                        7 => t.cwr(),
                        _ => t.ns(),
                    };
                }
            }
            t.write(&mut frame, &s.payload).unwrap();
            l4_fields.extend([
                (Field::TpSrc, *sport as u128),
                (Field::TpDst, *dport as u128),
                (Field::TcpFlags, *flags as u128),
            ]);
            (6u8, 20, true)
        }
        L4::Udp { sport, dport } => {
            ipb.udp(*sport, *dport).write(&mut frame, &s.payload).unwrap();
            l4_fields.extend([(Field::TpSrc, *sport as u128), (Field::TpDst, *dport as u128)]);
            (17, 8, true)
        }
        L4::Sctp { sport, dport } => {
            let mut p =
                [&sport.to_be_bytes()[..], &dport.to_be_bytes(), &[0; 8], &s.payload].concat();
            p.truncate(12 + s.payload.len());
            ipb.write(&mut frame, IpNumber(132), &p).unwrap();
            l4_fields.extend([(Field::TpSrc, *sport as u128), (Field::TpDst, *dport as u128)]);
            (132, 12, true)
        }
        L4::Icmp { ty, code } => {
            // Keep random ICMPv6 away from ND (tested in the `Nd` case).
            let ty = if v6 && (*ty == 135 || *ty == 136) { 128 } else { *ty };
            if v6 {
                ipb.icmpv6_raw(ty, *code, [1, 2, 3, 4]).write(&mut frame, &s.payload).unwrap();
            } else {
                ipb.icmpv4_raw(ty, *code, [1, 2, 3, 4]).write(&mut frame, &s.payload).unwrap();
            }
            l4_fields.extend([(Field::IcmpType, ty as u128), (Field::IcmpCode, *code as u128)]);
            (if v6 { 58 } else { 1 }, 4, true)
        }
        L4::Nd { ns, target, ll } => {
            let ty = if *ns { 135 } else { 136 };
            let mut body = target.to_vec();
            if let Some(m) = ll {
                body.extend_from_slice(&[if *ns { 1 } else { 2 }, 1]);
                body.extend_from_slice(m);
            }
            l4_fields.extend([(Field::IcmpType, ty as u128), (Field::IcmpCode, 0)]);
            if v6 {
                ipb.icmpv6_raw(ty, 0, [0x60, 0, 0, 0]).write(&mut frame, &body).unwrap();
                l4_fields.push((Field::Ipv6NdTarget, u128::from_be_bytes(*target)));
                if let Some(m) = ll {
                    l4_fields.push((if *ns { Field::ArpSha } else { Field::ArpTha }, mac_u(*m)));
                }
                (58, 8 + body.len(), true)
            } else {
                ipb.icmpv4_raw(ty, 0, [0x60, 0, 0, 0]).write(&mut frame, &body).unwrap();
                (1, 4, true)
            }
        }
        L4::Other(p) => {
            ipb.write(&mut frame, IpNumber(*p), &s.payload).unwrap();
            (*p, 0, false)
        }
    };
    let hdr_end;
    match v6_stop {
        Some((end, next)) => {
            want.push((Field::IpProto, next.unwrap_or(proto) as u128));
            hdr_end = end;
        }
        None => {
            want.push((Field::IpProto, proto as u128));
            if later {
                hdr_end = l4_off;
            } else {
                if parsed {
                    want.extend(l4_fields);
                    layers.l4 = Some(l4_off as u16);
                }
                hdr_end = l4_off + l4_len;
            }
        }
    }
    let silent_cut = match s.l4 {
        L4::Nd { ll: Some(_), .. } if v6 && layers.l4.is_some() => Some(l4_off + 24),
        _ => None,
    };
    Built { frame, want, layers, hdr_end, silent_cut }
}

fn frag_bits(more: bool, offset: u16) -> u128 {
    (more || offset != 0) as u128 | ((offset != 0) as u128) << 1
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn etherparse_frames_parse_to_their_fields(s in spec()) {
        let b = build(&s);
        let (k, o) = run(&b.frame);
        assert_fields(&k, &b.want);
        prop_assert_eq!(o.layers, b.layers);
        prop_assert_eq!(o.error, None::<ParseError>);
        prop_assert!(!o.ip_truncated);
    }
}
