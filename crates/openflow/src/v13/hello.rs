//! `OFPT_HELLO` (OpenFlow 1.3): the version-negotiation message and its elements.
//!
//! Wire form: header, then hello elements to the end. An element is
//! `type:u16, length:u16, body`, where `length` counts the 4-byte element header and the
//! body but not the padding that follows it up to a multiple of 8. Type 1
//! (`OFPHET_VERSIONBITMAP`) holds `u32` bitmaps: bit `v % 32` of word `v / 32` set means
//! version `v` is supported. Elements of other types are kept as read so they re-encode.
//!
//! Decoding is strict about lengths (`OFPBRC_BAD_LEN`) with one leniency: the padding
//! of the *last* element may be missing at the end of the message, since some peers
//! omit it; re-encoding then adds it.

use crate::error::OfpError;
use crate::v13::bad_len;
use crate::wire::{Reader, Writer};

/// `OFPHET_VERSIONBITMAP`.
pub const OFPHET_VERSIONBITMAP: u16 = 1;

/// One hello element.
///
/// Invariant for round trips: `Unknown::ty` is never [`OFPHET_VERSIONBITMAP`] (such an
/// element decodes as `VersionBitmap`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum HelloElement {
    /// The bitmap words, least significant word (versions 0..=31) first.
    VersionBitmap(Vec<u32>),
    /// An element of a type this codec does not interpret: its type and body (without
    /// the element header and padding).
    Unknown { ty: u16, data: Vec<u8> },
}

/// An `OFPT_HELLO` body: its elements in wire order (often none).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Hello {
    pub elements: Vec<HelloElement>,
}

impl Hello {
    /// A hello with one version-bitmap element announcing `versions`.
    pub fn with_versions(versions: &[u8]) -> Hello {
        let words = versions.iter().map(|&v| v as usize / 32 + 1).max().unwrap_or(1);
        let mut bitmap = vec![0u32; words];
        for &v in versions {
            if let Some(word) = bitmap.get_mut(v as usize / 32) {
                *word |= 1 << (v % 32);
            }
        }
        Hello { elements: vec![HelloElement::VersionBitmap(bitmap)] }
    }

    /// The versions announced by the first version-bitmap element, ascending; `None`
    /// when the hello carries no bitmap (negotiation then uses the header version).
    pub fn versions(&self) -> Option<Vec<u8>> {
        self.elements.iter().find_map(|e| match e {
            HelloElement::VersionBitmap(words) => Some(
                words
                    .iter()
                    .enumerate()
                    .take(8)
                    .flat_map(|(i, &word)| {
                        (0..32u32)
                            .filter(move |bit| word & (1 << bit) != 0)
                            .map(move |bit| (i as u32 * 32 + bit) as u8)
                    })
                    .collect(),
            ),
            HelloElement::Unknown { .. } => None,
        })
    }

    /// Reads the elements up to the end of `r`.
    pub fn decode(r: &mut Reader) -> Result<Hello, OfpError> {
        let mut elements = Vec::new();
        while !r.is_empty() {
            if r.remaining() < 4 {
                return Err(bad_len(format!(
                    "hello element header needs 4 bytes, {} left",
                    r.remaining()
                )));
            }
            let ty = r.u16()?;
            let len = r.u16()? as usize;
            if len < 4 {
                return Err(bad_len(format!("hello element length {len} is below 4")));
            }
            if len - 4 > r.remaining() {
                return Err(bad_len(format!(
                    "hello element length {len} runs past the message end"
                )));
            }
            let body = r.bytes(len - 4)?;
            let pad = len.next_multiple_of(8) - len;
            if r.remaining() >= pad {
                r.skip(pad)?;
            } else if !r.is_empty() {
                return Err(bad_len(format!(
                    "hello element of length {len} is followed by {} bytes, not its {pad} padding bytes",
                    r.remaining()
                )));
            }
            elements.push(if ty == OFPHET_VERSIONBITMAP {
                if body.len() % 4 != 0 {
                    return Err(bad_len(format!(
                        "version bitmap element length {len} is not 4 + a multiple of 4"
                    )));
                }
                HelloElement::VersionBitmap(
                    body.chunks_exact(4)
                        .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]))
                        .collect(),
                )
            } else {
                HelloElement::Unknown { ty, data: body.to_vec() }
            });
        }
        Ok(Hello { elements })
    }

    pub fn encode(&self, w: &mut Writer) {
        for e in &self.elements {
            let start = w.len();
            match e {
                HelloElement::VersionBitmap(words) => {
                    w.u16(OFPHET_VERSIONBITMAP);
                    w.u16(0);
                    for &word in words {
                        w.u32(word);
                    }
                }
                HelloElement::Unknown { ty, data } => {
                    w.u16(*ty);
                    w.u16(0);
                    w.bytes(data);
                }
            }
            w.patch_len16(start + 2, start);
            w.pad_to(start, 8);
        }
    }
}

/// proptest strategies for hellos.
#[cfg(test)]
pub(crate) mod strategy {
    use super::*;
    use proptest::prelude::*;

    pub fn arb_hello_element() -> impl Strategy<Value = HelloElement> {
        prop_oneof![
            proptest::collection::vec(any::<u32>(), 0..4).prop_map(HelloElement::VersionBitmap),
            (
                any::<u16>().prop_filter("not a bitmap", |t| *t != OFPHET_VERSIONBITMAP),
                proptest::collection::vec(any::<u8>(), 0..20)
            )
                .prop_map(|(ty, data)| HelloElement::Unknown { ty, data }),
        ]
    }

    pub fn arb_hello() -> impl Strategy<Value = Hello> {
        proptest::collection::vec(arb_hello_element(), 0..4).prop_map(|elements| Hello { elements })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use crate::wire::encoded;
    use proptest::prelude::*;

    fn decode(bytes: &[u8]) -> Result<Hello, OfpError> {
        Hello::decode(&mut Reader::new(bytes))
    }

    #[test]
    fn versions_bitmap_roundtrip() {
        let h = Hello::with_versions(&[1, 4]);
        assert_eq!(h.elements, vec![HelloElement::VersionBitmap(vec![0x12])]);
        assert_eq!(h.versions(), Some(vec![1, 4]));
        let h = Hello::with_versions(&[4, 33]);
        assert_eq!(h.elements, vec![HelloElement::VersionBitmap(vec![0x10, 0x2])]);
        assert_eq!(h.versions(), Some(vec![4, 33]));
        assert_eq!(Hello::default().versions(), None);
    }

    #[test]
    fn spec_bytes() {
        // OVS's hello body: one bitmap element announcing 1.0 and 1.3.
        let bytes = [0, 1, 0, 8, 0, 0, 0, 0x12];
        let h = decode(&bytes).unwrap();
        assert_eq!(h, Hello::with_versions(&[1, 4]));
        assert_eq!(encoded(|w| h.encode(w)), bytes);

        // Unknown element of 5 bytes, padded to 8, then a 2-word bitmap.
        let bytes = [0, 9, 0, 5, 0xaa, 0, 0, 0, 0, 1, 0, 12, 0, 0, 0, 0x10, 0, 0, 0, 1, 0, 0, 0, 0];
        let h = decode(&bytes).unwrap();
        assert_eq!(
            h.elements,
            vec![
                HelloElement::Unknown { ty: 9, data: vec![0xaa] },
                HelloElement::VersionBitmap(vec![0x10, 1])
            ]
        );
        assert_eq!(encoded(|w| h.encode(w)), bytes);
    }

    #[test]
    fn missing_final_padding_is_accepted() {
        let h = decode(&[0, 9, 0, 5, 0xaa]).unwrap();
        assert_eq!(h.elements, vec![HelloElement::Unknown { ty: 9, data: vec![0xaa] }]);
    }

    #[test]
    fn bad_lengths() {
        for bytes in [
            &[0u8, 1, 0][..],                      // short element header
            &[0, 1, 0, 3, 0, 0, 0, 0],             // length below 4
            &[0, 1, 0, 16, 0, 0, 0, 0],            // past the end
            &[0, 1, 0, 6, 0, 0, 0, 0],             // bitmap not a multiple of 4
            &[0, 9, 0, 5, 0xaa, 0, 0, 0, 1, 0, 0], // partial padding then more
            &[0, 9, 0, 5, 0xaa, 0, 0, 0, 0, 1, 0], // trailing short header
        ] {
            assert_eq!(
                decode(bytes).unwrap_err().kind,
                ErrorKind::BAD_REQUEST_BAD_LEN,
                "{bytes:?}"
            );
        }
    }

    proptest! {
        #[test]
        fn roundtrip(h in strategy::arb_hello()) {
            let mut w = Writer::new();
            h.encode(&mut w);
            prop_assert_eq!(w.len() % 8, 0);
            prop_assert_eq!(decode(&w.buf).unwrap(), h);
        }

        #[test]
        fn versions_survive(mut vs in proptest::collection::vec(any::<u8>(), 1..6)) {
            vs.sort();
            vs.dedup();
            prop_assert_eq!(Hello::with_versions(&vs).versions(), Some(vs));
        }
    }
}
