//! Matches: every combination of the single-bit wildcards with the address prefixes, the
//! VLAN, ToS and ICMP encodings, the ignored fields, and what 1.0 cannot express.

use std::net::Ipv4Addr;

use super::Rng;
use crate::v10::{match_from_v13, match_to_v13};
use openflow::match13::Match as Match13;
use openflow::oxm::{Oxm, OFPVID_NONE, OFPVID_PRESENT};
use openflow::v10::match10::{wildcards as fw, Match as Match10, OFP_VLAN_NONE};
use openflow::{ErrorKind, MacAddr};

/// The single-bit wildcards, in `ofp_flow_wildcards` order.
const BITS: [u32; 10] = [
    fw::IN_PORT,
    fw::DL_VLAN,
    fw::DL_SRC,
    fw::DL_DST,
    fw::DL_TYPE,
    fw::NW_PROTO,
    fw::TP_SRC,
    fw::TP_DST,
    fw::DL_VLAN_PCP,
    fw::NW_TOS,
];

/// The canonical form of a 1.0 match, written from the 1.0 rules (not from the code under
/// test): wildcarded and ignored fields are zero and wildcarded, address counts are
/// 32 − prefix, ToS keeps its DSCP bits, VID 12 bits, PCP 3 bits, ICMP type/code 8 bits.
fn canonical(m: &Match10) -> Match10 {
    let wild = |bit: u32| m.wildcards & bit != 0;
    let mut c = Match10 {
        wildcards: BITS.iter().fold(0, |a, b| a | b) | fw::NW_SRC_ALL | fw::NW_DST_ALL,
        ..Match10::all()
    };
    let keep = |c: &mut Match10, bit: u32| c.wildcards &= !bit;
    if !wild(fw::IN_PORT) {
        c.in_port = m.in_port;
        keep(&mut c, fw::IN_PORT);
    }
    if !wild(fw::DL_SRC) {
        c.dl_src = m.dl_src;
        keep(&mut c, fw::DL_SRC);
    }
    if !wild(fw::DL_DST) {
        c.dl_dst = m.dl_dst;
        keep(&mut c, fw::DL_DST);
    }
    if !wild(fw::DL_TYPE) {
        c.dl_type = m.dl_type;
        keep(&mut c, fw::DL_TYPE);
    }
    let untagged = !wild(fw::DL_VLAN) && m.dl_vlan == OFP_VLAN_NONE;
    if !wild(fw::DL_VLAN) {
        c.dl_vlan = if untagged { OFP_VLAN_NONE } else { m.dl_vlan & 0x0fff };
        keep(&mut c, fw::DL_VLAN);
    }
    if !wild(fw::DL_VLAN_PCP) && !untagged {
        c.dl_vlan_pcp = m.dl_vlan_pcp & 7;
        keep(&mut c, fw::DL_VLAN_PCP);
    }
    let ip = !wild(fw::DL_TYPE) && m.dl_type == 0x0800;
    let arp = !wild(fw::DL_TYPE) && m.dl_type == 0x0806;
    // IPv6 as Open vSwitch reads a 1.0 match: ToS, protocol and ports, no addresses.
    let ip6 = !wild(fw::DL_TYPE) && m.dl_type == 0x86dd;
    if (ip || arp || ip6) && !wild(fw::NW_PROTO) {
        c.nw_proto = m.nw_proto;
        keep(&mut c, fw::NW_PROTO);
    }
    if ip || arp {
        let prefix = |shift: u32, a: Ipv4Addr| {
            let count = (m.wildcards >> shift & 63).min(32);
            let mask = u32::MAX.checked_shl(count).unwrap_or(0);
            (count << shift, Ipv4Addr::from(u32::from(a) & mask))
        };
        let (count, a) = prefix(fw::NW_SRC_SHIFT, m.nw_src);
        c.wildcards = c.wildcards & !fw::NW_SRC_MASK | count;
        c.nw_src = a;
        let (count, a) = prefix(fw::NW_DST_SHIFT, m.nw_dst);
        c.wildcards = c.wildcards & !fw::NW_DST_MASK | count;
        c.nw_dst = a;
    }
    if (ip || ip6) && !wild(fw::NW_TOS) {
        c.nw_tos = m.nw_tos & 0xfc;
        keep(&mut c, fw::NW_TOS);
    }
    let transport = (ip || ip6) && !wild(fw::NW_PROTO);
    let width = match m.nw_proto {
        6 | 17 | 132 => Some(0xffff),
        1 if ip => Some(0xff),
        58 if ip6 => Some(0xff),
        _ => None,
    };
    if let (true, Some(width)) = (transport, width) {
        if !wild(fw::TP_SRC) {
            c.tp_src = m.tp_src & width;
            keep(&mut c, fw::TP_SRC);
        }
        if !wild(fw::TP_DST) {
            c.tp_dst = m.tp_dst & width;
            keep(&mut c, fw::TP_DST);
        }
    }
    c
}

/// A 1.0 match with `wildcards` and random fields, the protocol fields drawn from
/// values that exercise every rule.
fn random_match(rng: &mut Rng, wildcards: u32) -> Match10 {
    let mut mac = || {
        let v = rng.next().to_be_bytes();
        MacAddr([v[0], v[1], v[2], v[3], v[4], v[5]])
    };
    let (src, dst) = (mac(), mac());
    let (r16, r8) = (rng.u16(), rng.u8());
    Match10 {
        wildcards,
        in_port: rng.pick(&[1, 7, 0xff00, 0xfffe, 0xfffd, r16]),
        dl_src: src,
        dl_dst: dst,
        dl_vlan: rng.pick(&[OFP_VLAN_NONE, 0, 100, 4095, r16]),
        dl_vlan_pcp: rng.pick(&[0, 5, 7, r8]),
        dl_type: rng.pick(&[0x0800, 0x0806, 0x86dd, 0x8847, r16]),
        nw_tos: rng.u8(),
        nw_proto: rng.pick(&[1, 6, 17, 132, 47, 2, 58, r8]),
        nw_src: Ipv4Addr::from(rng.u32()),
        nw_dst: Ipv4Addr::from(rng.u32()),
        tp_src: rng.u16(),
        tp_dst: rng.u16(),
    }
}

fn round_trip(m: &Match10) -> Match10 {
    let oxm = match_to_v13(m);
    match_from_v13(&oxm)
        .unwrap_or_else(|e| panic!("{m:?} → {:?} does not come back: {e}", oxm.fields))
}

#[test]
fn canonical_matches_come_back_unchanged_for_every_wildcard_combination() {
    let mut rng = Rng::new(0x10_0001);
    let mut checked = 0;
    for combo in 0u32..1 << BITS.len() {
        let bits =
            BITS.iter().enumerate().filter(|(i, _)| combo >> i & 1 == 1).fold(0, |a, (_, b)| a | b);
        for dl_type in [0x0800, 0x0806, 0x86dd] {
            for nw_proto in [1, 6, 17, 132, 47, 58] {
                for dl_vlan in [OFP_VLAN_NONE, rng.u16() & 0x0fff] {
                    let counts = (rng.below(64) as u32) << fw::NW_SRC_SHIFT
                        | (rng.below(64) as u32) << fw::NW_DST_SHIFT;
                    let raw = Match10 {
                        dl_type,
                        nw_proto,
                        dl_vlan,
                        ..random_match(&mut rng, bits | counts)
                    };
                    let m = canonical(&raw);
                    assert_eq!(round_trip(&m), m, "from {raw:?}");
                    let valid_in_port = matches!(m.in_port, 1..=0xff00 | 0xfffd | 0xfffe);
                    if m.is_wildcarded(fw::IN_PORT) || valid_in_port {
                        let oxm = match_to_v13(&m);
                        assert!(oxm.validate().is_ok(), "{m:?} → {oxm:?}");
                    }
                    checked += 1;
                }
            }
        }
    }
    assert_eq!(checked, 1024 * 3 * 6 * 2);
}

#[test]
fn any_match_comes_back_as_its_canonical_form() {
    let mut rng = Rng::new(0x10_0002);
    for _ in 0..20_000 {
        let r = rng.u32();
        let wildcards = rng.pick(&[r, r & fw::ALL, 0, fw::ALL]);
        let m = random_match(&mut rng, wildcards);
        let c = canonical(&m);
        assert_eq!(round_trip(&m), c, "from {m:?}");
        assert_eq!(match_to_v13(&c), match_to_v13(&m), "same meaning: {m:?}");
    }
}

/// Every field but `bits` wildcarded, in the canonical form (address counts 32).
fn only(bits: u32) -> u32 {
    (fw::ALL & !(fw::NW_SRC_MASK | fw::NW_DST_MASK) | fw::NW_SRC_ALL | fw::NW_DST_ALL) & !bits
}

#[test]
fn vlan_none_and_tagged() {
    let none = Match10 { wildcards: only(fw::DL_VLAN), dl_vlan: OFP_VLAN_NONE, ..Match10::all() };
    assert_eq!(match_to_v13(&none).fields, vec![Oxm::VlanVid(OFPVID_NONE, None)]);
    assert_eq!(round_trip(&none).dl_vlan, OFP_VLAN_NONE);
    assert!(!round_trip(&none).is_wildcarded(fw::DL_VLAN));

    let tagged = Match10 {
        wildcards: only(fw::DL_VLAN | fw::DL_VLAN_PCP),
        dl_vlan: 10,
        dl_vlan_pcp: 3,
        ..Match10::all()
    };
    assert_eq!(
        match_to_v13(&tagged).fields,
        vec![Oxm::VlanVid(OFPVID_PRESENT | 10, None), Oxm::VlanPcp(3)]
    );
    // A PCP alone means "any tagged frame with that priority".
    let pcp = Match10 { wildcards: only(fw::DL_VLAN_PCP), dl_vlan_pcp: 6, ..Match10::all() };
    let back = round_trip(&pcp);
    assert!(back.is_wildcarded(fw::DL_VLAN));
    assert_eq!(back.dl_vlan_pcp, 6);
}

#[test]
fn nw_tos_is_the_dscp() {
    let m = |tos| Match10 {
        wildcards: only(fw::DL_TYPE | fw::NW_TOS),
        dl_type: 0x0800,
        nw_tos: tos,
        ..Match10::all()
    };
    assert_eq!(match_to_v13(&m(0xb8)).fields, vec![Oxm::EthType(0x0800), Oxm::IpDscp(46)]);
    assert_eq!(round_trip(&m(0xb8)).nw_tos, 0xb8);
    // The ECN bits are not matched in 1.0 either.
    assert_eq!(round_trip(&m(0xbb)).nw_tos, 0xb8);
}

#[test]
fn icmp_type_and_code_ride_in_tp_fields() {
    let m = Match10 {
        wildcards: only(fw::DL_TYPE | fw::NW_PROTO | fw::TP_SRC | fw::TP_DST),
        dl_type: 0x0800,
        nw_proto: 1,
        tp_src: 8,
        tp_dst: 0,
        ..Match10::all()
    };
    assert_eq!(
        match_to_v13(&m).fields,
        vec![Oxm::EthType(0x0800), Oxm::IpProto(1), Oxm::Icmpv4Type(8), Oxm::Icmpv4Code(0)]
    );
    assert_eq!(round_trip(&m), m);
}

#[test]
fn fields_without_prerequisites_are_ignored() {
    // nw_src without dl_type, tp_dst without nw_proto: ignored, as Open vSwitch does.
    let m = Match10 {
        wildcards: only(fw::IN_PORT | fw::NW_SRC_MASK | fw::TP_DST | fw::NW_TOS),
        in_port: 4,
        nw_src: Ipv4Addr::new(10, 0, 0, 1),
        tp_dst: 80,
        nw_tos: 0x10,
        ..Match10::all()
    };
    assert_eq!(match_to_v13(&m).fields, vec![Oxm::InPort(4)]);
    let back = round_trip(&m);
    assert_eq!(back.nw_src, Ipv4Addr::UNSPECIFIED);
    assert_eq!(back.nw_src_prefix_len(), 0);
    assert!(back.is_wildcarded(fw::TP_DST) && back.is_wildcarded(fw::NW_TOS));
    assert_eq!(back.wildcards & fw::NW_SRC_MASK, fw::NW_SRC_ALL);
}

#[test]
fn address_prefixes_and_arp() {
    let m = Match10 {
        wildcards: only(fw::DL_TYPE | fw::NW_PROTO | fw::NW_SRC_MASK | fw::NW_DST_MASK)
            | 8 << fw::NW_SRC_SHIFT,
        dl_type: 0x0806,
        nw_proto: 2,
        nw_src: Ipv4Addr::new(192, 168, 1, 0),
        nw_dst: Ipv4Addr::new(192, 168, 1, 9),
        ..Match10::all()
    };
    assert_eq!(
        match_to_v13(&m).fields,
        vec![
            Oxm::EthType(0x0806),
            Oxm::ArpOp(2),
            Oxm::ArpSpa(Ipv4Addr::new(192, 168, 1, 0), Some(Ipv4Addr::new(255, 255, 255, 0))),
            Oxm::ArpTpa(Ipv4Addr::new(192, 168, 1, 9), None),
        ]
    );
    assert_eq!(round_trip(&m), m);
}

#[test]
fn equivalent_1_3_forms_are_accepted() {
    // Other field order, full masks, /0 masks: all expressible in 1.0.
    let m13 = Match13::new(vec![
        Oxm::Ipv4Dst(Ipv4Addr::new(10, 1, 2, 3), Some(Ipv4Addr::BROADCAST)),
        Oxm::Ipv4Src(Ipv4Addr::UNSPECIFIED, Some(Ipv4Addr::UNSPECIFIED)),
        Oxm::EthDst(MacAddr([1, 2, 3, 4, 5, 6]), Some(MacAddr::BROADCAST)),
        Oxm::EthType(0x0800),
        Oxm::InPort(0xffff_fffe),
    ]);
    let m = match_from_v13(&m13).unwrap();
    assert_eq!(m.in_port, 0xfffe);
    assert_eq!(m.dl_dst, MacAddr([1, 2, 3, 4, 5, 6]));
    assert_eq!(m.nw_dst_prefix_len(), 32);
    assert_eq!(m.nw_src_prefix_len(), 0);
    assert_eq!(
        m.wildcards,
        fw::ALL & !(fw::IN_PORT | fw::DL_DST | fw::DL_TYPE | fw::NW_DST_MASK | fw::NW_SRC_MASK)
            | fw::NW_SRC_ALL
    );
}

#[test]
fn what_1_0_cannot_match_is_an_error() {
    let v6 = Ipv4Addr::new(10, 0, 0, 0);
    let cases: Vec<(Vec<Oxm>, ErrorKind)> = vec![
        (
            vec![Oxm::EthType(0x86dd), Oxm::Ipv6Src("::1".parse().unwrap(), None)],
            ErrorKind::BAD_MATCH_BAD_FIELD,
        ),
        (vec![Oxm::Metadata(1, None)], ErrorKind::BAD_MATCH_BAD_FIELD),
        (
            vec![Oxm::EthType(0x0800), Oxm::IpProto(6), Oxm::IpEcn(1)],
            ErrorKind::BAD_MATCH_BAD_FIELD,
        ),
        (
            vec![Oxm::EthSrc(MacAddr([1, 0, 0, 0, 0, 0]), Some(MacAddr([1, 0, 0, 0, 0, 0])))],
            ErrorKind::BAD_MATCH_BAD_DL_ADDR_MASK,
        ),
        (
            vec![Oxm::EthType(0x0800), Oxm::Ipv4Src(v6, Some(Ipv4Addr::new(255, 0, 255, 0)))],
            ErrorKind::BAD_MATCH_BAD_NW_ADDR_MASK,
        ),
        (vec![Oxm::VlanVid(OFPVID_PRESENT, Some(OFPVID_PRESENT))], ErrorKind::BAD_MATCH_BAD_VALUE),
        (vec![Oxm::VlanVid(OFPVID_PRESENT | 5, Some(0x1ff0))], ErrorKind::BAD_MATCH_BAD_VALUE),
        (vec![Oxm::InPort(70_000)], ErrorKind::BAD_MATCH_BAD_VALUE),
        (vec![Oxm::EthType(0x0806), Oxm::ArpOp(300)], ErrorKind::BAD_MATCH_BAD_VALUE),
        // 1.0 would ignore these for want of prerequisites.
        (vec![Oxm::Ipv4Src(v6, None)], ErrorKind::BAD_MATCH_BAD_PREREQ),
        (vec![Oxm::EthType(0x0800), Oxm::TcpDst(80)], ErrorKind::BAD_MATCH_BAD_PREREQ),
        (vec![Oxm::VlanVid(OFPVID_NONE, None), Oxm::VlanPcp(1)], ErrorKind::BAD_MATCH_BAD_PREREQ),
        (vec![Oxm::InPort(1), Oxm::InPort(2)], ErrorKind::BAD_MATCH_BAD_PREREQ),
    ];
    for (fields, kind) in cases {
        let e = match_from_v13(&Match13::new(fields.clone())).unwrap_err();
        assert_eq!(e.kind, kind, "{fields:?}: {e}");
    }
}
