//! The property framing of OpenFlow 1.4's multipart bodies (port and queue statistics,
//! queue and table descriptions): `type:u16, length:u16, body`, where `length` counts
//! the 4-byte header and the body but not the zeros that follow up to a multiple of 8.
//!
//! Reading requires `length` to be at least 4 and the body and its padding to fit in
//! the enclosing structure (`OFPBRC_BAD_LEN` otherwise); padding is skipped whatever it
//! holds and written as zeros. The experimenter property (type 0xffff) is
//! `experimenter:u32, exp_type:u32` and experimenter-defined bytes, 8 body bytes at least.

use crate::error::{ErrorKind, OfpError};
use crate::wire::{Reader, Writer};

/// The property type of experimenter properties in every 1.4 property list.
pub const EXPERIMENTER: u16 = 0xffff;
/// Length of a property's header (`type`, `length`).
pub const PROP_HEADER_LEN: usize = 4;

fn bad_len(detail: String) -> OfpError {
    OfpError::new(ErrorKind::BAD_REQUEST_BAD_LEN, detail)
}

/// Takes one property from `r` (a whole list's bytes): its type and a reader over its
/// body (what `length` counts after the header). The padding after it is consumed too.
pub(crate) fn take<'a>(r: &mut Reader<'a>, what: &str) -> Result<(u16, Reader<'a>), OfpError> {
    let ty = r.peek_u16(0)?;
    let len = usize::from(r.peek_u16(2)?);
    let padded = len.next_multiple_of(8);
    if len < PROP_HEADER_LEN || padded > r.remaining() {
        return Err(bad_len(format!(
            "{what} property {ty:#x} of length {len} (at least 4, and padded to 8 within the \
             {} bytes left)",
            r.remaining()
        )));
    }
    let mut whole = r.sub(padded)?;
    whole.skip(PROP_HEADER_LEN)?;
    let body = whole.sub(len - PROP_HEADER_LEN)?;
    Ok((ty, body))
}

/// Writes one property of type `ty`: the header, `body`, and zeros up to a multiple of 8.
pub(crate) fn write(w: &mut Writer, ty: u16, body: impl FnOnce(&mut Writer)) {
    let start = w.len();
    w.u16(ty);
    w.u16(0);
    body(w);
    w.patch_len16(start + 2, start);
    w.pad_to(start, 8);
}

/// Requires a fixed-size property body of exactly `want` bytes.
pub(crate) fn expect_len(body: &Reader, want: usize, what: &str) -> Result<(), OfpError> {
    if body.remaining() == want {
        Ok(())
    } else {
        Err(bad_len(format!(
            "{what} property of length {}, must be {}",
            body.remaining() + PROP_HEADER_LEN,
            want + PROP_HEADER_LEN
        )))
    }
}

/// An experimenter property's fields, from its body.
pub(crate) fn read_experimenter(
    body: &mut Reader,
    what: &str,
) -> Result<(u32, u32, Vec<u8>), OfpError> {
    if body.remaining() < 8 {
        return Err(bad_len(format!(
            "{what} experimenter property of length {}, below 12",
            body.remaining() + PROP_HEADER_LEN
        )));
    }
    Ok((body.u32()?, body.u32()?, body.take_rest().to_vec()))
}

/// Writes an experimenter property.
pub(crate) fn write_experimenter(w: &mut Writer, experimenter: u32, exp_type: u32, data: &[u8]) {
    write(w, EXPERIMENTER, |w| {
        w.u32(experimenter);
        w.u32(exp_type);
        w.bytes(data);
    });
}

/// A property the codec has no fields for: an experimenter's, or one of a type the list
/// does not define (its body kept as read, so that it re-encodes byte for byte).
///
/// Invariant: `Unknown` never holds [`EXPERIMENTER`] nor a type the enclosing list
/// gives fields to (each list's doc comment names them).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum OtherProp {
    Experimenter { experimenter: u32, exp_type: u32, data: Vec<u8> },
    Unknown { ty: u16, data: Vec<u8> },
}

impl OtherProp {
    /// The property of type `ty` with `body` (the list has no fields for `ty`).
    pub(crate) fn from_body(ty: u16, body: &mut Reader, what: &str) -> Result<Self, OfpError> {
        if ty == EXPERIMENTER {
            let (experimenter, exp_type, data) = read_experimenter(body, what)?;
            Ok(OtherProp::Experimenter { experimenter, exp_type, data })
        } else {
            Ok(OtherProp::Unknown { ty, data: body.take_rest().to_vec() })
        }
    }

    /// The property type number.
    pub fn prop_type(&self) -> u16 {
        match self {
            OtherProp::Experimenter { .. } => EXPERIMENTER,
            OtherProp::Unknown { ty, .. } => *ty,
        }
    }

    /// Writes the property with its padding.
    pub fn encode(&self, w: &mut Writer) {
        match self {
            OtherProp::Experimenter { experimenter, exp_type, data } => {
                write_experimenter(w, *experimenter, *exp_type, data)
            }
            OtherProp::Unknown { ty, data } => write(w, *ty, |w| w.bytes(data)),
        }
    }

    /// Reads a list of properties none of which has fields here (queue statistics').
    pub(crate) fn decode_list(r: &mut Reader, what: &str) -> Result<Vec<Self>, OfpError> {
        r.list(|r| {
            let (ty, mut body) = take(r, what)?;
            OtherProp::from_body(ty, &mut body, what)
        })
    }
}

/// proptest strategies for properties.
#[cfg(test)]
pub(crate) mod strategy {
    use super::*;
    use proptest::prelude::*;

    /// Experimenter properties, and unknown ones of a type not in `known` (nor 0xffff).
    pub fn arb_other_prop(known: &'static [u16]) -> impl Strategy<Value = OtherProp> {
        prop_oneof![
            (any::<u32>(), any::<u32>(), crate::wire::arb_bytes(0..12)).prop_map(
                |(experimenter, exp_type, data)| OtherProp::Experimenter {
                    experimenter,
                    exp_type,
                    data
                }
            ),
            (any::<u16>(), crate::wire::arb_bytes(0..12))
                .prop_filter("a type with fields of its own", move |(ty, _)| {
                    *ty != EXPERIMENTER && !known.contains(ty)
                })
                .prop_map(|(ty, data)| OtherProp::Unknown { ty, data }),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::encoded;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn other_props_roundtrip(p in strategy::arb_other_prop(&[])) {
            let bytes = encoded(|w| p.encode(w));
            prop_assert_eq!(bytes.len() % 8, 0);
            let mut r = Reader::new(&bytes);
            let back = OtherProp::decode_list(&mut r, "test").unwrap();
            prop_assert_eq!(back, vec![p]);
        }
    }

    #[test]
    fn framing_bytes() {
        let p = OtherProp::Experimenter { experimenter: 0x2320, exp_type: 7, data: vec![1] };
        let bytes = encoded(|w| p.encode(w));
        assert_eq!(bytes, [0xff, 0xff, 0, 13, 0, 0, 0x23, 0x20, 0, 0, 0, 7, 1, 0, 0, 0]);
        let u = OtherProp::Unknown { ty: 9, data: vec![] };
        assert_eq!(encoded(|w| u.encode(w)), [0, 9, 0, 4, 0, 0, 0, 0]);
    }

    #[test]
    fn bad_lengths() {
        let cases: &[&[u8]] = &[
            // length below the header
            &[0, 9, 0, 3, 0, 0, 0, 0],
            // padding missing
            &[0, 9, 0, 5, 0],
            // beyond the list
            &[0, 9, 0, 16, 0, 0, 0, 0],
            // experimenter without its exp_type
            &[0xff, 0xff, 0, 8, 0, 0, 0, 1],
            // a header cut short
            &[0, 9, 0],
        ];
        crate::wire::assert_refused(
            cases,
            |r| OtherProp::decode_list(r, "test"),
            ErrorKind::BAD_REQUEST_BAD_LEN,
        );
    }
}
