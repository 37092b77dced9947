use super::strategy::{arb_match, arb_valid_match};
use super::*;
use crate::action::port;
use crate::oxm::{OFPVID_NONE, OFPVID_PRESENT};
use crate::wire::MacAddr;
use proptest::prelude::*;
use std::net::{Ipv4Addr, Ipv6Addr};

fn encode(m: &Match) -> Vec<u8> {
    let mut w = Writer::new();
    m.encode(&mut w);
    w.into_vec()
}

fn decode_err(bytes: &[u8]) -> ErrorKind {
    Match::decode(&mut Reader::new(bytes)).unwrap_err().kind
}

/// Each of `cases` fails to decode with `kind`.
fn assert_all_fail(cases: &[&[u8]], kind: ErrorKind) {
    for bytes in cases {
        assert_eq!(decode_err(bytes), kind, "{bytes:?}");
    }
}

fn invalid(fields: Vec<Oxm>) -> ErrorKind {
    match Match::new(fields.clone()).validate() {
        Ok(()) => panic!("accepted {fields:?}"),
        Err(e) => e.kind,
    }
}

fn valid(fields: Vec<Oxm>) {
    if let Err(e) = Match::new(fields.clone()).validate() {
        panic!("rejected {fields:?}: {e}");
    }
}

#[test]
fn decodes_real_match() {
    // in_port=1, eth_dst=00:11:22:33:44:55, eth_type=0x0800, ipv4_src=10.0.0.0/8, as a
    // controller sends it: length 40, no padding needed; trailing bytes stay unread.
    let bytes = [
        0x00, 0x01, 0x00, 0x28, // type OXM, length 40
        0x80, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x01, // in_port
        0x80, 0x00, 0x06, 0x06, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, // eth_dst
        0x80, 0x00, 0x0a, 0x02, 0x08, 0x00, // eth_type
        0x80, 0x00, 0x17, 0x08, 0x0a, 0x00, 0x00, 0x00, 0xff, 0x00, 0x00, 0x00, // ipv4_src/8
        0xaa, 0xbb,
    ];
    let mut r = Reader::new(&bytes);
    let m = Match::decode(&mut r).unwrap();
    assert_eq!(
        m.fields,
        [
            Oxm::InPort(1),
            Oxm::EthDst(MacAddr([0, 0x11, 0x22, 0x33, 0x44, 0x55]), None),
            Oxm::EthType(0x0800),
            Oxm::Ipv4Src(Ipv4Addr::new(10, 0, 0, 0), Some(Ipv4Addr::new(255, 0, 0, 0))),
        ]
    );
    assert_eq!(r.rest(), [0xaa, 0xbb]);
    assert_eq!(m.validate(), Ok(()));
    assert_eq!(m.get(OxmField::EthType), Some(&Oxm::EthType(0x0800)));
    assert_eq!(m.get(OxmField::TcpSrc), None);
    assert_eq!(encode(&m), bytes[..40]);
    assert_eq!(m.wire_len(), 40);
}

#[test]
fn pads_to_eight() {
    let m = Match::new(vec![Oxm::InPort(3)]);
    assert_eq!(encode(&m), [0, 1, 0, 12, 0x80, 0, 0, 4, 0, 0, 0, 3, 0, 0, 0, 0]);
    assert_eq!(m.unpadded_len(), 12);
    assert_eq!(m.wire_len(), 16);
    let empty = Match::default();
    assert_eq!(encode(&empty), [0, 1, 0, 4, 0, 0, 0, 0]);
    assert_eq!(Match::decode(&mut Reader::new(&[0, 1, 0, 4, 0, 0, 0, 0])).unwrap(), empty);
}

#[test]
fn type_other_than_oxm_is_bad_type() {
    let cases: [&[u8]; 3] =
        [&[0, 0, 0, 88], &[0, 2, 0, 4, 0, 0, 0, 0], &[0xff, 0xff, 0, 4, 0, 0, 0, 0]];
    assert_all_fail(&cases, ErrorKind::BAD_MATCH_BAD_TYPE);
}

#[test]
fn length_errors_are_bad_len() {
    let cases: [&[u8]; 7] = [
        // Header shorter than 4 bytes.
        &[0, 1, 0],
        // length below the header size.
        &[0, 1, 0, 3, 0, 0, 0, 0],
        &[0, 1, 0, 0, 0, 0, 0, 0],
        // length past the input.
        &[0, 1, 0, 12, 0x80, 0, 0, 4, 0, 0, 0],
        // padding missing at the end of the input.
        &[0, 1, 0, 12, 0x80, 0, 0, 4, 0, 0, 0, 3, 0, 0, 0],
        // length ends inside a TLV (TLVs do not fill `length` exactly).
        &[0, 1, 0, 10, 0x80, 0, 0, 4, 0, 0, 0, 3, 0, 0, 0, 0],
        // length leaves 2 bytes after the last TLV: too short for another header.
        &[0, 1, 0, 14, 0x80, 0, 0, 4, 0, 0, 0, 3, 0, 0, 0, 0],
    ];
    assert_all_fail(&cases, ErrorKind::BAD_MATCH_BAD_LEN);
}

#[test]
fn tlv_errors_propagate() {
    // eth_type with hasmask inside a match.
    assert_eq!(
        decode_err(&[0, 1, 0, 12, 0x80, 0, 0x0b, 4, 8, 0, 0xff, 0xff, 0, 0, 0, 0]),
        ErrorKind::BAD_MATCH_BAD_MASK
    );
    // unknown basic field 50.
    assert_eq!(
        decode_err(&[0, 1, 0, 8, 0x80, 0, 100, 0, 0, 0, 0, 0]),
        ErrorKind::BAD_MATCH_BAD_FIELD
    );
}

#[test]
fn validate_rejects_other_classes() {
    let nx = Oxm::Other { class: 0x0001, field: 0, has_mask: false, payload: vec![0, 0, 0, 1] };
    assert_eq!(invalid(vec![nx.clone()]), ErrorKind::BAD_MATCH_BAD_FIELD);
    // Checked before duplicates that come later.
    assert_eq!(invalid(vec![Oxm::InPort(1), nx, Oxm::InPort(1)]), ErrorKind::BAD_MATCH_BAD_FIELD);
}

#[test]
fn validate_rejects_duplicates() {
    assert_eq!(invalid(vec![Oxm::InPort(1), Oxm::InPort(2)]), ErrorKind::BAD_MATCH_DUP_FIELD);
    assert_eq!(
        invalid(vec![
            Oxm::EthType(0x0800),
            Oxm::Ipv4Src(Ipv4Addr::new(1, 2, 3, 4), None),
            Oxm::Ipv4Src(Ipv4Addr::new(1, 0, 0, 0), Some(Ipv4Addr::new(255, 0, 0, 0))),
        ]),
        ErrorKind::BAD_MATCH_DUP_FIELD
    );
}

#[test]
fn validate_rejects_value_bits_outside_mask() {
    let w = ErrorKind::BAD_MATCH_BAD_WILDCARDS;
    let v4 = Oxm::EthType(0x0800);
    let ip = Oxm::Ipv4Dst(Ipv4Addr::new(10, 0, 0, 1), Some(Ipv4Addr::new(255, 0, 0, 0)));
    assert_eq!(invalid(vec![v4, ip]), w);
    let mac = MacAddr([1, 2, 3, 4, 5, 6]);
    let half = MacAddr([0xff, 0xff, 0xff, 0, 0, 0]);
    assert_eq!(invalid(vec![Oxm::EthSrc(mac, Some(half))]), w);
    assert_eq!(invalid(vec![Oxm::Metadata(3, Some(1))]), w);
    assert_eq!(invalid(vec![Oxm::VlanVid(0x1005, Some(0x1000))]), w);
    let v6 = Oxm::EthType(0x86dd);
    let a = Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1);
    let p = Ipv6Addr::new(0xffff, 0xffff, 0, 0, 0, 0, 0, 0);
    assert_eq!(invalid(vec![v6, Oxm::Ipv6Src(a, Some(p))]), w);
    // Checked before the value range.
    assert_eq!(invalid(vec![Oxm::VlanVid(0x2000, Some(0x1fff))]), w);
    valid(vec![Oxm::Metadata(0x10, Some(0xf0)), Oxm::TunnelId(0, Some(0))]);
}

#[test]
fn validate_checks_vlan_vid() {
    let v = ErrorKind::BAD_MATCH_BAD_VALUE;
    valid(vec![Oxm::VlanVid(OFPVID_NONE, None)]);
    valid(vec![Oxm::VlanVid(OFPVID_PRESENT | 100, None)]);
    valid(vec![Oxm::VlanVid(OFPVID_PRESENT, Some(OFPVID_PRESENT))]);
    valid(vec![Oxm::VlanVid(OFPVID_NONE, Some(OFPVID_PRESENT))]);
    valid(vec![Oxm::VlanVid(5, Some(0x0fff))]);
    valid(vec![Oxm::VlanVid(OFPVID_PRESENT | 5, Some(0xffff))]);
    assert_eq!(invalid(vec![Oxm::VlanVid(5, None)]), v);
    assert_eq!(invalid(vec![Oxm::VlanVid(0x2000 | OFPVID_PRESENT, None)]), v);
    assert_eq!(invalid(vec![Oxm::VlanVid(5, Some(0x1fff))]), v);
}

#[test]
fn validate_checks_value_ranges() {
    let v = ErrorKind::BAD_MATCH_BAD_VALUE;
    let ip4 = || Oxm::EthType(0x0800);
    let mpls = || Oxm::EthType(0x8847);
    let ip6 = || Oxm::EthType(0x86dd);
    let tagged = || Oxm::VlanVid(OFPVID_PRESENT | 1, None);
    assert_eq!(invalid(vec![tagged(), Oxm::VlanPcp(8)]), v);
    valid(vec![tagged(), Oxm::VlanPcp(7)]);
    assert_eq!(invalid(vec![ip4(), Oxm::IpDscp(64)]), v);
    valid(vec![ip4(), Oxm::IpDscp(63)]);
    assert_eq!(invalid(vec![ip4(), Oxm::IpEcn(4)]), v);
    valid(vec![ip4(), Oxm::IpEcn(3)]);
    assert_eq!(invalid(vec![mpls(), Oxm::MplsLabel(1 << 20)]), v);
    valid(vec![mpls(), Oxm::MplsLabel((1 << 20) - 1)]);
    assert_eq!(invalid(vec![mpls(), Oxm::MplsTc(8)]), v);
    assert_eq!(invalid(vec![mpls(), Oxm::MplsBos(2)]), v);
    valid(vec![mpls(), Oxm::MplsTc(7), Oxm::MplsBos(1)]);
    assert_eq!(invalid(vec![ip6(), Oxm::Ipv6Flabel(1 << 20, None)]), v);
    valid(vec![ip6(), Oxm::Ipv6Flabel(0xfffff, Some(0xfffff))]);
    assert_eq!(invalid(vec![Oxm::EthType(0x88e7), Oxm::PbbIsid(1 << 24, None)]), v);
    assert_eq!(invalid(vec![ip6(), Oxm::Ipv6Exthdr(0x200, None)]), v);
    valid(vec![ip6(), Oxm::Ipv6Exthdr(0x1ff, Some(0x1ff))]);
    // Checked before prerequisites.
    assert_eq!(invalid(vec![Oxm::IpDscp(64)]), v);
}

#[test]
fn validate_checks_ports() {
    let v = ErrorKind::BAD_MATCH_BAD_VALUE;
    for p in [1, 65534, port::MAX, port::LOCAL, port::CONTROLLER] {
        valid(vec![Oxm::InPort(p)]);
    }
    for p in [0, port::MAX + 1, port::IN_PORT, port::NORMAL, port::FLOOD, port::ALL, port::ANY] {
        assert_eq!(invalid(vec![Oxm::InPort(p)]), v, "in_port {p:#x}");
    }
    valid(vec![Oxm::InPort(1), Oxm::InPhyPort(2)]);
    assert_eq!(invalid(vec![Oxm::InPort(1), Oxm::InPhyPort(0)]), v);
    assert_eq!(invalid(vec![Oxm::InPort(port::LOCAL), Oxm::InPhyPort(port::LOCAL)]), v);
}

#[test]
fn validate_checks_prerequisites() {
    let p = ErrorKind::BAD_MATCH_BAD_PREREQ;
    let a4 = Ipv4Addr::new(10, 0, 0, 1);
    let a6 = Ipv6Addr::LOCALHOST;
    let mac = MacAddr([2, 0, 0, 0, 0, 1]);
    let e = Oxm::EthType;
    let ip = Oxm::IpProto;
    // Each case: the fields, and whether they pass.
    let cases: Vec<(Vec<Oxm>, bool)> = vec![
        (vec![Oxm::InPhyPort(1)], false),
        (vec![Oxm::InPhyPort(1), Oxm::InPort(1)], true),
        (vec![Oxm::VlanPcp(1)], false),
        (vec![Oxm::VlanVid(OFPVID_NONE, None), Oxm::VlanPcp(1)], false),
        (vec![Oxm::VlanPcp(1), Oxm::VlanVid(0x1000, Some(0x1000))], true),
        (vec![Oxm::IpDscp(1)], false),
        (vec![Oxm::IpEcn(1), e(0x0806)], false),
        (vec![Oxm::IpEcn(1), e(0x86dd)], true),
        (vec![ip(6), e(0x8847)], false),
        (vec![Oxm::Ipv4Src(a4, None), e(0x86dd)], false),
        (vec![Oxm::Ipv4Dst(a4, None), e(0x0800)], true),
        (vec![Oxm::TcpSrc(80), e(0x0800)], false),
        (vec![Oxm::TcpSrc(80), e(0x0800), ip(17)], false),
        (vec![Oxm::TcpDst(80), ip(6), e(0x86dd)], true),
        (vec![Oxm::UdpSrc(53), e(0x0800), ip(6)], false),
        (vec![Oxm::UdpDst(53), e(0x0800), ip(17)], true),
        (vec![Oxm::SctpSrc(1), e(0x0800), ip(17)], false),
        (vec![Oxm::SctpDst(1), e(0x86dd), ip(132)], true),
        (vec![Oxm::Icmpv4Type(8), e(0x86dd), ip(1)], false),
        (vec![Oxm::Icmpv4Code(0), e(0x0800), ip(1)], true),
        (vec![Oxm::ArpOp(1), e(0x0800)], false),
        (vec![Oxm::ArpSpa(a4, None), Oxm::ArpTha(mac, None), e(0x0806)], true),
        (vec![Oxm::Ipv6Src(a6, None), e(0x0800)], false),
        (vec![Oxm::Ipv6Flabel(1, None), Oxm::Ipv6Exthdr(1, None), e(0x86dd)], true),
        (vec![Oxm::Icmpv6Type(135), e(0x86dd), ip(17)], false),
        (vec![Oxm::Icmpv6Code(0), e(0x0800), ip(58)], false),
        (vec![Oxm::Icmpv6Code(0), e(0x86dd), ip(58)], true),
        (vec![Oxm::Ipv6NdTarget(a6), e(0x86dd), ip(58)], false),
        (vec![Oxm::Ipv6NdTarget(a6), e(0x86dd), ip(58), Oxm::Icmpv6Type(128)], false),
        (vec![Oxm::Ipv6NdTarget(a6), Oxm::Icmpv6Type(136), ip(58), e(0x86dd)], true),
        (vec![Oxm::Ipv6NdSll(mac), Oxm::Icmpv6Type(136), ip(58), e(0x86dd)], false),
        (vec![Oxm::Ipv6NdSll(mac), Oxm::Icmpv6Type(135), ip(58), e(0x86dd)], true),
        (vec![Oxm::Ipv6NdTll(mac), Oxm::Icmpv6Type(135), ip(58), e(0x86dd)], false),
        (vec![Oxm::Ipv6NdTll(mac), Oxm::Icmpv6Type(136), ip(58), e(0x86dd)], true),
        (vec![Oxm::MplsLabel(1), e(0x0800)], false),
        (vec![Oxm::MplsLabel(1), e(0x8848)], true),
        (vec![Oxm::PbbIsid(1, None), e(0x8847)], false),
        (vec![Oxm::PbbIsid(1, Some(1)), e(0x88e7)], true),
    ];
    for (fields, ok) in cases {
        if ok {
            valid(fields);
        } else {
            assert_eq!(invalid(fields.clone()), p, "{fields:?}");
        }
    }
}

/// Fields whose prerequisites include an `ETH_TYPE`.
fn needs_eth_type(f: OxmField) -> bool {
    use OxmField as F;
    !matches!(
        f,
        F::InPort
            | F::InPhyPort
            | F::Metadata
            | F::EthDst
            | F::EthSrc
            | F::EthType
            | F::VlanVid
            | F::VlanPcp
            | F::TunnelId
    )
}

proptest! {
    #[test]
    fn roundtrip(m in arb_match(), tail in proptest::collection::vec(any::<u8>(), 0..4)) {
        let bytes = encode(&m);
        prop_assert_eq!(bytes.len(), m.wire_len());
        prop_assert_eq!(bytes.len() % 8, 0);
        prop_assert_eq!(usize::from(u16::from_be_bytes([bytes[2], bytes[3]])), m.unpadded_len());
        prop_assert!(bytes[m.unpadded_len()..].iter().all(|&b| b == 0));
        let mut input = bytes.clone();
        input.extend(&tail);
        let mut r = Reader::new(&input);
        prop_assert_eq!(Match::decode(&mut r).unwrap(), m);
        prop_assert_eq!(r.rest(), &tail[..]);
    }

    #[test]
    fn every_prefix_is_bad_len(m in arb_match(), cut in any::<prop::sample::Index>()) {
        let bytes = encode(&m);
        let cut = cut.index(bytes.len());
        prop_assert_eq!(decode_err(&bytes[..cut]), ErrorKind::BAD_MATCH_BAD_LEN);
    }

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..96)) {
        let mut r = Reader::new(&bytes);
        if let Ok(m) = Match::decode(&mut r) {
            let used = bytes.len() - r.remaining();
            let unpadded = m.unpadded_len();
            prop_assert_eq!(used, m.wire_len());
            // The decoder skips padding without reading it; all else re-encodes exactly.
            prop_assert_eq!(&encode(&m)[..unpadded], &bytes[..unpadded]);
        }
    }

    #[test]
    fn random_tlv_bodies_never_panic(body in proptest::collection::vec(any::<u8>(), 0..60)) {
        let mut w = Writer::new();
        w.u16(OFPMT_OXM);
        w.u16((4 + body.len()) as u16);
        w.bytes(&body);
        w.pad_to(0, 8);
        let bytes = w.into_vec();
        match Match::decode(&mut Reader::new(&bytes)) {
            Ok(m) => prop_assert_eq!(encode(&m), bytes),
            Err(e) => prop_assert_eq!(e.kind.ty, crate::error::error_type::BAD_MATCH),
        }
    }

    #[test]
    fn valid_matches_validate(m in arb_valid_match()) {
        prop_assert_eq!(m.validate(), Ok(()));
        let bytes = encode(&m);
        prop_assert_eq!(Match::decode(&mut Reader::new(&bytes)).unwrap(), m);
    }

    #[test]
    fn duplicated_field_is_dup(m in arb_valid_match(), pick in any::<prop::sample::Index>(),
                               at in any::<prop::sample::Index>()) {
        prop_assume!(!m.fields.is_empty());
        let mut fields = m.fields.clone();
        let dup = fields[pick.index(fields.len())].clone();
        fields.insert(at.index(fields.len() + 1), dup);
        prop_assert_eq!(Match::new(fields).validate().unwrap_err().kind, ErrorKind::BAD_MATCH_DUP_FIELD);
    }

    #[test]
    fn other_class_is_bad_field(m in arb_valid_match(), other in crate::oxm::strategy::arb_other_oxm(),
                                at in any::<prop::sample::Index>()) {
        let mut fields = m.fields.clone();
        fields.insert(at.index(fields.len() + 1), other);
        prop_assert_eq!(Match::new(fields).validate().unwrap_err().kind, ErrorKind::BAD_MATCH_BAD_FIELD);
    }

    #[test]
    fn dropping_eth_type_breaks_dependents(m in arb_valid_match()) {
        let fields: Vec<Oxm> = m.fields.iter().filter(|x| x.field() != Some(OxmField::EthType)).cloned().collect();
        let dependents = fields.iter().filter_map(Oxm::field).any(needs_eth_type);
        let r = Match::new(fields).validate();
        if dependents {
            prop_assert_eq!(r.unwrap_err().kind, ErrorKind::BAD_MATCH_BAD_PREREQ);
        } else {
            prop_assert_eq!(r, Ok(()));
        }
    }
}
