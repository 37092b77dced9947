//! Property tests: random and mutated bytes never panic, and every truncation of a valid
//! frame either reports an error or loses nothing, keeping what it parsed before the cut.

use super::cross::{build, spec, Net};
use super::*;
use crate::parse::ParseError;
use proptest::prelude::*;

/// Random bytes behind a prefix that steers the parser into a given protocol, with the
/// IP version nibble right so that random input gets past the first checks.
fn steered() -> impl Strategy<Value = Vec<u8>> {
    let ty = prop::sample::select(vec![
        0x0800u16, 0x86dd, 0x0806, 0x8100, 0x88a8, 0x8847, 0x88e7, 0x0100, 0x1234,
    ]);
    (ty, prop::collection::vec(any::<u8>(), 0..160)).prop_map(|(ty, mut tail)| {
        let mut f = eth(ty);
        if let Some(b) = tail.first_mut() {
            match ty {
                0x0800 => *b = 0x40 | (*b & 0x0f),
                0x86dd => *b = 0x60 | (*b & 0x0f),
                _ => {}
            }
        }
        f.append(&mut tail);
        f
    })
}

/// Fields parsed from a cut frame are either absent (zero) or the full frame's value.
fn assert_subset(cut: &FlowKey, full: &FlowKey) -> Result<(), TestCaseError> {
    for &f in Field::ALL {
        let v = cut.get(f);
        if f == Field::Ipv6Exthdr {
            prop_assert_eq!(v & !full.get(f), 0, "extra exthdr bits");
        } else if v != 0 {
            prop_assert_eq!(v, full.get(f), "field {:?}", f);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200), port in any::<u32>()) {
        let mut key = FlowKey::ZERO;
        let o = parse(&bytes, port, &mut key);
        prop_assert_eq!(key.get(Field::InPort), port as u128);
        let ty = key.get(Field::EthType);
        match o.error {
            _ if bytes.len() < 14 => prop_assert_eq!(o.error, Some(ParseError::TruncatedEthernet)),
            // A tag cut off before the ethertype behind it: ETH_TYPE is never reached.
            Some(ParseError::TruncatedVlan) => {
                prop_assert!(matches!(u16::from_be_bytes([bytes[12], bytes[13]]), 0x8100 | 0x88a8));
                prop_assert_eq!(ty, 0);
            }
            _ => prop_assert!(ty >= 0x05ff, "eth_type {:#x}", ty),
        }
    }

    #[test]
    fn steered_random_bytes_never_panic(f in steered()) {
        let (k, o) = run(&f);
        prop_assert_eq!(k.get(Field::InPort), IN_PORT as u128);
        if let Some(l4) = o.layers.l4 {
            prop_assert!((l4 as usize) < f.len());
            prop_assert!(o.layers.l3.is_some_and(|l3| l3 < l4));
        }
    }

    #[test]
    fn mutated_frames_never_panic(s in spec(), flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6)) {
        let mut f = build(&s).frame;
        for (i, v) in flips {
            let i = i.index(f.len());
            f[i] ^= v | 1;
        }
        let (k, _) = run(&f);
        prop_assert_eq!(k.get(Field::InPort), IN_PORT as u128);
    }

    #[test]
    fn truncations_report_an_error_and_keep_earlier_fields(s in spec()) {
        let b = build(&s);
        let (full, full_out) = run(&b.frame);
        prop_assert_eq!(full_out.error, None::<ParseError>);
        for cut in 0..b.frame.len() {
            let (k, o) = run(&b.frame[..cut]);
            assert_subset(&k, &full)?;
            if b.silent_cut == Some(cut) {
                prop_assert_eq!(o.error, None::<ParseError>);
                prop_assert!(o.ip_truncated);
            } else if cut < b.hdr_end {
                prop_assert!(o.error.is_some(), "cut {} of {}: no error", cut, b.hdr_end);
            } else {
                prop_assert_eq!(o.error, None::<ParseError>, "cut {}", cut);
                prop_assert_eq!(k, full, "cut {} after the headers lost a field", cut);
            }
            if cut >= 14 {
                prop_assert_eq!(k.get(Field::EthSrc), full.get(Field::EthSrc));
                prop_assert_eq!(k.get(Field::EthDst), full.get(Field::EthDst));
            }
            let l3 = b.layers.l3.unwrap_or(0) as usize;
            match s.net {
                Net::V4 { .. } if cut >= l3 + 20 => {
                    prop_assert_eq!(k.get(Field::Ipv4Src), full.get(Field::Ipv4Src));
                    prop_assert_eq!(k.get(Field::IpProto), full.get(Field::IpProto));
                    prop_assert!(o.ip_truncated);
                }
                Net::V6 { .. } if cut >= l3 + 40 => {
                    prop_assert_eq!(k.get(Field::Ipv6Dst), full.get(Field::Ipv6Dst));
                    prop_assert_eq!(k.get(Field::Ipv6Flabel), full.get(Field::Ipv6Flabel));
                    prop_assert!(o.ip_truncated);
                }
                _ => {}
            }
            if let (Some(l4), Some(cut_l4)) = (b.layers.l4, o.layers.l4) {
                prop_assert_eq!(l4, cut_l4);
            }
        }
    }
}
