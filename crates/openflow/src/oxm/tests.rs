use super::strategy::{arb_basic_oxm, arb_oxm};
use super::*;
use proptest::prelude::*;

fn encode(x: &Oxm) -> Vec<u8> {
    let mut w = Writer::new();
    x.encode(&mut w);
    w.into_vec()
}

fn decode_err(bytes: &[u8]) -> ErrorKind {
    Oxm::decode(&mut Reader::new(bytes)).unwrap_err().kind
}

#[test]
fn field_table_is_numbered_in_order() {
    for (n, f) in OxmField::ALL.iter().enumerate() {
        assert_eq!(*f as usize, n);
        assert_eq!(OxmField::from_u8(n as u8), Some(*f));
        assert_eq!(OxmField::from_name(f.name()), Some(*f));
    }
    assert_eq!(OxmField::from_u8(40), None);
    assert_eq!(OxmField::from_u8(42), None);
    assert_eq!(OxmField::from_u8(127), None);
    // 1.4 adds PBB_UCA as field 41.
    assert_eq!(OxmField::ALL14[..40], OxmField::ALL);
    assert_eq!(OxmField::ALL14[40], OxmField::PbbUca);
    assert_eq!(OxmField::from_u8(41), Some(OxmField::PbbUca));
    assert_eq!(OxmField::from_name("pbb_uca"), Some(OxmField::PbbUca));
    let mut names: Vec<_> = OxmField::ALL14.iter().map(|f| f.name()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), 41);
}

#[test]
fn pbb_uca_spec_bytes() {
    // OXM_OF_PBB_UCA = 1: class 0x8000, field 41 (0x52 with hasmask 0), length 1.
    let bytes = [0x80, 0x00, 0x52, 0x01, 0x01];
    let x = Oxm::decode(&mut Reader::new(&bytes)).unwrap();
    assert_eq!(x, Oxm::PbbUca(1));
    assert_eq!(encode(&x), bytes);
    assert_eq!(OxmField::PbbUca.value_len(), 1);
    assert!(!OxmField::PbbUca.maskable());
    assert_eq!(decode_err(&[0x80, 0x00, 0x53, 0x02, 0x01, 0x01]), ErrorKind::BAD_MATCH_BAD_MASK);
    assert_eq!(decode_err(&[0x80, 0x00, 0x52, 0x02, 0x01, 0x01]), ErrorKind::BAD_MATCH_BAD_LEN);
}

#[test]
fn field_table_matches_spec() {
    use OxmField as F;
    let maskable: Vec<_> = OxmField::ALL.into_iter().filter(|f| f.maskable()).collect();
    assert_eq!(
        maskable,
        [
            F::Metadata,
            F::EthDst,
            F::EthSrc,
            F::VlanVid,
            F::Ipv4Src,
            F::Ipv4Dst,
            F::ArpSpa,
            F::ArpTpa,
            F::ArpSha,
            F::ArpTha,
            F::Ipv6Src,
            F::Ipv6Dst,
            F::Ipv6Flabel,
            F::PbbIsid,
            F::TunnelId,
            F::Ipv6Exthdr
        ]
    );
    let widths = [
        (F::InPort, 4),
        (F::Metadata, 8),
        (F::EthDst, 6),
        (F::EthType, 2),
        (F::VlanVid, 2),
        (F::VlanPcp, 1),
        (F::Ipv4Src, 4),
        (F::TcpSrc, 2),
        (F::Ipv6Src, 16),
        (F::Ipv6Flabel, 4),
        (F::Ipv6NdTarget, 16),
        (F::Ipv6NdSll, 6),
        (F::MplsLabel, 4),
        (F::MplsBos, 1),
        (F::PbbIsid, 3),
        (F::TunnelId, 8),
        (F::Ipv6Exthdr, 2),
    ];
    for (f, w) in widths {
        assert_eq!(f.value_len(), w, "{}", f.name());
    }
    assert_eq!(F::Ipv6NdTarget.name(), "ipv6_nd_target");
    assert_eq!(F::Icmpv4Type.name(), "icmpv4_type");
}

#[test]
fn known_encodings() {
    assert_eq!(encode(&Oxm::EthType(0x0800)), [0x80, 0x00, 0x0a, 0x02, 0x08, 0x00]);
    assert_eq!(Oxm::EthType(0x0800).header(), 0x8000_0a02);
    let isid = Oxm::PbbIsid(0x12_3456, Some(0xff_ffff));
    assert_eq!(encode(&isid), [0x80, 0x00, 0x4b, 0x06, 0x12, 0x34, 0x56, 0xff, 0xff, 0xff]);
    assert_eq!(isid.wire_len(), 10);
    assert!(isid.has_mask());
    let vid = Oxm::VlanVid(0x1000, Some(0x1000));
    assert_eq!(encode(&vid), [0x80, 0x00, 0x0d, 0x04, 0x10, 0x00, 0x10, 0x00]);
    let label = Oxm::MplsLabel(0xf_ffff);
    assert_eq!(encode(&label), [0x80, 0x00, 0x44, 0x04, 0x00, 0x0f, 0xff, 0xff]);
    let nx = Oxm::Other { class: 0x0001, field: 0x7f, has_mask: true, payload: vec![1, 2, 3, 4] };
    assert_eq!(encode(&nx), [0x00, 0x01, 0xff, 0x04, 1, 2, 3, 4]);
    assert_eq!(nx.field(), None);
    assert_eq!(nx.class(), 1);
}

#[test]
fn value_and_mask_bytes() {
    let ip = Oxm::Ipv4Src(Ipv4Addr::new(10, 0, 0, 0), Some(Ipv4Addr::new(255, 0, 0, 0)));
    assert_eq!(ip.value_bytes(), [10, 0, 0, 0]);
    assert_eq!(ip.mask_bytes(), Some(vec![255, 0, 0, 0]));
    assert_eq!(Oxm::InPort(7).value_bytes(), [0, 0, 0, 7]);
    assert_eq!(Oxm::InPort(7).mask_bytes(), None);
    assert_eq!(Oxm::PbbIsid(0xabcdef, None).value_bytes(), [0xab, 0xcd, 0xef]);
    let exp = Oxm::Other {
        class: OXM_CLASS_EXPERIMENTER,
        field: 3,
        has_mask: true,
        payload: vec![0, 0, 0x23, 0x20, 0xaa, 0xbb, 0xcc, 0xdd],
    };
    assert_eq!(exp.value_bytes(), [0xaa, 0xbb]);
    assert_eq!(exp.mask_bytes(), Some(vec![0xcc, 0xdd]));
}

#[test]
fn from_bytes_checks_width_and_mask() {
    assert_eq!(Oxm::from_bytes(OxmField::TcpDst, &[0, 80], None), Ok(Oxm::TcpDst(80)));
    assert_eq!(
        Oxm::from_bytes(OxmField::TcpDst, &[0, 80], Some(&[0xff, 0xff])).unwrap_err().kind,
        ErrorKind::BAD_MATCH_BAD_MASK
    );
    assert_eq!(
        Oxm::from_bytes(OxmField::TcpDst, &[80], None).unwrap_err().kind,
        ErrorKind::BAD_MATCH_BAD_LEN
    );
    assert_eq!(
        Oxm::from_bytes(OxmField::Ipv4Dst, &[1, 2, 3, 4], Some(&[255])).unwrap_err().kind,
        ErrorKind::BAD_MATCH_BAD_LEN
    );
}

#[test]
fn unknown_basic_field_is_bad_field() {
    assert_eq!(decode_err(&[0x80, 0x00, 40 << 1, 0]), ErrorKind::BAD_MATCH_BAD_FIELD);
    assert_eq!(decode_err(&[0x80, 0x00, 0xfe, 1, 0]), ErrorKind::BAD_MATCH_BAD_FIELD);
}

#[test]
fn wrong_length_is_bad_len() {
    // in_port with 3 and with 5 payload bytes.
    assert_eq!(decode_err(&[0x80, 0x00, 0x00, 3, 0, 0, 1]), ErrorKind::BAD_MATCH_BAD_LEN);
    assert_eq!(decode_err(&[0x80, 0x00, 0x00, 5, 0, 0, 0, 1, 0]), ErrorKind::BAD_MATCH_BAD_LEN);
    // masked eth_dst with the length of an unmasked one.
    assert_eq!(decode_err(&[0x80, 0x00, 0x07, 6, 0, 1, 2, 3, 4, 5]), ErrorKind::BAD_MATCH_BAD_LEN);
    // unmasked pbb_isid written as 4 bytes.
    assert_eq!(decode_err(&[0x80, 0x00, 0x4a, 4, 0, 1, 2, 3]), ErrorKind::BAD_MATCH_BAD_LEN);
}

#[test]
fn mask_on_unmaskable_field_is_bad_mask() {
    // eth_type with hasmask.
    assert_eq!(
        decode_err(&[0x80, 0x00, 0x0b, 4, 0x08, 0x00, 0xff, 0xff]),
        ErrorKind::BAD_MATCH_BAD_MASK
    );
    // in_port with hasmask.
    assert_eq!(
        decode_err(&[0x80, 0x00, 0x01, 8, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff]),
        ErrorKind::BAD_MATCH_BAD_MASK
    );
}

#[test]
fn truncation_is_bad_len() {
    assert_eq!(decode_err(&[]), ErrorKind::BAD_MATCH_BAD_LEN);
    assert_eq!(decode_err(&[0x80, 0x00, 0x0a]), ErrorKind::BAD_MATCH_BAD_LEN);
    assert_eq!(decode_err(&[0x80, 0x00, 0x0a, 2, 0x08]), ErrorKind::BAD_MATCH_BAD_LEN);
    assert_eq!(decode_err(&[0x00, 0x01, 0x02, 9, 1, 2]), ErrorKind::BAD_MATCH_BAD_LEN);
}

#[test]
fn other_classes_are_kept() {
    for class in [0x0000u16, 0x0001, 0x1234, 0x8001] {
        let mut bytes = class.to_be_bytes().to_vec();
        bytes.extend_from_slice(&[0x05, 3, 9, 8, 7, 0xee]);
        let mut r = Reader::new(&bytes);
        let x = Oxm::decode(&mut r).unwrap();
        assert_eq!(x, Oxm::Other { class, field: 2, has_mask: true, payload: vec![9, 8, 7] });
        assert_eq!(r.rest(), [0xee]);
        assert_eq!(encode(&x), bytes[..7]);
    }
}

#[test]
fn experimenter_needs_its_id() {
    assert_eq!(decode_err(&[0xff, 0xff, 0x00, 3, 0, 0, 0x23]), ErrorKind::BAD_MATCH_BAD_LEN);
    let ok = [0xff, 0xff, 0x00, 4, 0, 0, 0x23, 0x20];
    assert_eq!(
        Oxm::decode(&mut Reader::new(&ok)).unwrap(),
        Oxm::Other {
            class: OXM_CLASS_EXPERIMENTER,
            field: 0,
            has_mask: false,
            payload: vec![0, 0, 0x23, 0x20]
        }
    );
}

#[test]
fn every_field_roundtrips_at_extremes() {
    // A masked (where allowed) TLV of every field with all-ones bytes survives encode and
    // decode, so the decoder table and the encoder table agree field by field.
    for f in OxmField::ALL14 {
        let ones = vec![0xff; f.value_len()];
        let mask = f.maskable().then_some(ones.as_slice());
        let x = Oxm::from_bytes(f, &ones, mask).unwrap();
        assert_eq!(x.field(), Some(f));
        let bytes = encode(&x);
        assert_eq!(bytes.len(), x.wire_len());
        assert_eq!(bytes[2] >> 1, f as u8);
        assert_eq!(Oxm::decode(&mut Reader::new(&bytes)).unwrap(), x);
        assert_eq!(x.value_bytes(), ones);
        assert_eq!(x.mask_bytes().as_deref(), mask);
    }
}

proptest! {
    #[test]
    fn roundtrip(x in arb_oxm()) {
        let bytes = encode(&x);
        prop_assert_eq!(bytes.len(), x.wire_len());
        prop_assert_eq!(&bytes[..4], &x.header().to_be_bytes()[..]);
        let mut r = Reader::new(&bytes);
        prop_assert_eq!(Oxm::decode(&mut r).unwrap(), x.clone());
        prop_assert!(r.is_empty());
        // Value then mask are the payload (after the experimenter id of class 0xffff).
        let mut wire = bytes[4..].to_vec();
        if x.class() == OXM_CLASS_EXPERIMENTER {
            wire.drain(..4);
        }
        let mut parts = x.value_bytes();
        prop_assert_eq!(x.mask_bytes().is_some(), x.has_mask());
        parts.extend(x.mask_bytes().unwrap_or_default());
        prop_assert_eq!(parts, wire);
    }

    #[test]
    fn basic_strategy_yields_basic_fields(x in arb_basic_oxm()) {
        prop_assert!(x.field().is_some());
        prop_assert_eq!(x.class(), OXM_CLASS_BASIC);
    }

    #[test]
    fn truncated_tlv_is_bad_len(x in arb_oxm(), cut in any::<prop::sample::Index>()) {
        let bytes = encode(&x);
        let cut = cut.index(bytes.len());
        prop_assert_eq!(decode_err(&bytes[..cut]), ErrorKind::BAD_MATCH_BAD_LEN);
    }

    #[test]
    fn random_bytes_never_panic_and_reencode(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        let mut r = Reader::new(&bytes);
        if let Ok(x) = Oxm::decode(&mut r) {
            let used = bytes.len() - r.remaining();
            prop_assert_eq!(encode(&x), &bytes[..used]);
        }
    }

    #[test]
    fn basic_header_bytes_never_panic(field in 0..128u8, mask in any::<bool>(), len in 0..40u8,
                                       body in proptest::collection::vec(any::<u8>(), 0..40)) {
        let mut bytes = vec![0x80, 0x00, field << 1 | u8::from(mask), len];
        bytes.extend(body);
        let mut r = Reader::new(&bytes);
        match Oxm::decode(&mut r) {
            Ok(x) => {
                let used = bytes.len() - r.remaining();
                prop_assert_eq!(encode(&x), &bytes[..used]);
            }
            Err(e) => prop_assert_eq!(e.kind.ty, crate::error::error_type::BAD_MATCH),
        }
    }
}
