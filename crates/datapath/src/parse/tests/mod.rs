//! Tests of the parser: hand-built frames for the corner cases (`hand`), a cross-check
//! against frames serialised by `etherparse` for every protocol combination (`cross`),
//! and property tests on random and truncated input (`fuzz`).

mod cross;
mod fuzz;
mod hand;

use super::{parse, ParseOutcome};
use crate::key::{Field, FlowKey};

pub(super) const IN_PORT: u32 = 7;
pub(super) const DST: [u8; 6] = [0x02, 0x11, 0x22, 0x33, 0x44, 0x55];
pub(super) const SRC: [u8; 6] = [0x02, 0x66, 0x77, 0x88, 0x99, 0xaa];

/// Parses into a key full of garbage, so a field the parser forgets to clear shows up.
pub(super) fn run(frame: &[u8]) -> (FlowKey, ParseOutcome) {
    let mut key = FlowKey { words: [0xdead_beef_dead_beef; crate::key::KEY_WORDS] };
    let out = parse(frame, IN_PORT, &mut key);
    (key, out)
}

pub(super) fn mac_u(m: [u8; 6]) -> u128 {
    m.iter().fold(0u128, |a, &b| (a << 8) | b as u128)
}

/// Asserts that exactly `expect` (plus IN_PORT) is set in `key`, every other field zero.
pub(super) fn assert_fields(key: &FlowKey, expect: &[(Field, u128)]) {
    for &f in Field::ALL {
        let want = if f == Field::InPort {
            IN_PORT as u128
        } else {
            expect.iter().find(|(g, _)| *g == f).map(|&(_, v)| v).unwrap_or(0)
        };
        assert_eq!(key.get(f), want, "field {f:?} in {key:?}");
    }
}

/// An Ethernet header with the test addresses and `ty`.
pub(super) fn eth(ty: u16) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(&DST);
    v.extend_from_slice(&SRC);
    v.extend_from_slice(&ty.to_be_bytes());
    v
}

/// The Ethernet fields of frames built by [`eth`].
pub(super) fn eth_fields(ty: u16) -> Vec<(Field, u128)> {
    vec![(Field::EthDst, mac_u(DST)), (Field::EthSrc, mac_u(SRC)), (Field::EthType, ty as u128)]
}
