//! The property lists of OpenFlow 1.4 messages (port, port-mod, table-mod and table
//! description, asynchronous configuration, role status, bundles) and multipart bodies
//! (port and queue statistics, queue description).
//!
//! A property is `type:u16, length:u16, body`, where `length` counts the 4-byte header
//! and the body but not the zeros that follow it up to a multiple of 8. Reading requires
//! `length` to be at least 4 and the body and its padding to fit in what holds the list
//! (`OFPBPC_BAD_LEN` otherwise, the 1.4 error for a length problem in a property, in a
//! request or a reply alike); the padding is skipped whatever it holds and written as
//! zeros. The experimenter property
//! (type 0xffff, and 0xfffe for the asynchronous configuration's slave one) is
//! `experimenter:u32, exp_type:u32` and experimenter-defined bytes: 8 body bytes at least.
//!
//! [`Property`] holds a property a list gives no fields to: an experimenter's, or one of
//! a type the list does not define, kept as read so that it re-encodes byte for byte. The
//! codec keeps such properties; refusing them (`OFPBPC_BAD_EXPERIMENTER`,
//! `OFPBPC_BAD_TYPE`) is for the messages' `validate`, as a switch does for requests.

use crate::error::{ErrorKind, OfpError};
use crate::wire::{Reader, Writer};

/// The type of experimenter properties in every 1.4 property list.
pub const EXPERIMENTER: u16 = 0xffff;
/// Length of a property's header (`type`, `length`).
pub const PROP_HEADER_LEN: usize = 4;

/// An `OFPBPC_BAD_LEN` error.
pub(crate) fn bad_len(detail: String) -> OfpError {
    OfpError::new(ErrorKind::BAD_PROPERTY_BAD_LEN, detail)
}

/// Takes one property from `r` (the rest of a list): its type and a reader over its body
/// (what `length` counts after the header). The padding after it is consumed too.
pub(crate) fn take<'a>(r: &mut Reader<'a>, what: &str) -> Result<(u16, Reader<'a>), OfpError> {
    if r.remaining() < PROP_HEADER_LEN {
        return Err(bad_len(format!(
            "{what} property header needs 4 bytes, {} left",
            r.remaining()
        )));
    }
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

/// Requires a fixed-size property body of exactly `want` bytes (`OFPBPC_BAD_LEN`).
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

/// Reads a list of properties to the end of `r`, each by `f` from its type and body;
/// `f` must consume the body (what it leaves is `OFPBPC_BAD_LEN`).
pub(crate) fn read_list<'a, T>(
    r: &mut Reader<'a>,
    what: &str,
    mut f: impl FnMut(u16, &mut Reader<'a>) -> Result<T, OfpError>,
) -> Result<Vec<T>, OfpError> {
    r.list(|r| {
        let (ty, mut body) = take(r, what)?;
        let p = f(ty, &mut body)?;
        if !body.is_empty() {
            return Err(bad_len(format!(
                "{what} property {ty:#x} has {} bytes more than its fields",
                body.remaining()
            )));
        }
        Ok(p)
    })
}

/// A property a list gives no fields to (module comment).
///
/// Invariant: `Unknown` never holds [`EXPERIMENTER`] nor a type the enclosing list gives
/// fields to (each list's doc comment names them).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Property {
    Experimenter { experimenter: u32, exp_type: u32, data: Vec<u8> },
    Unknown { ty: u16, data: Vec<u8> },
}

impl Property {
    /// The property of type `ty` with `body`, a type the list has no fields for; reads
    /// the whole body.
    pub(crate) fn from_body(ty: u16, body: &mut Reader, what: &str) -> Result<Self, OfpError> {
        if ty == EXPERIMENTER {
            let (experimenter, exp_type, data) = read_experimenter(body, what)?;
            Ok(Property::Experimenter { experimenter, exp_type, data })
        } else {
            Ok(Property::Unknown { ty, data: body.take_rest().to_vec() })
        }
    }

    /// The property type number.
    pub fn prop_type(&self) -> u16 {
        match self {
            Property::Experimenter { .. } => EXPERIMENTER,
            Property::Unknown { ty, .. } => *ty,
        }
    }

    /// Writes the property with its padding.
    pub fn encode(&self, w: &mut Writer) {
        match self {
            Property::Experimenter { experimenter, exp_type, data } => {
                write_experimenter(w, EXPERIMENTER, *experimenter, *exp_type, data)
            }
            Property::Unknown { ty, data } => write(w, *ty, |w| w.bytes(data)),
        }
    }

    /// Reads a list of properties of which the list defines none but the experimenter's
    /// (role status, bundles).
    pub fn decode_list(r: &mut Reader, what: &str) -> Result<Vec<Self>, OfpError> {
        read_list(r, what, |ty, body| Property::from_body(ty, body, what))
    }

    /// Writes each of `props`.
    pub fn encode_list(props: &[Self], w: &mut Writer) {
        props.iter().for_each(|p| p.encode(w));
    }

    /// The error a switch answers a request carrying this property with, when it knows
    /// no experimenter and the list defines no other type: `OFPBPC_BAD_EXPERIMENTER` or
    /// `OFPBPC_BAD_TYPE`.
    pub fn unsupported(&self, what: &str) -> OfpError {
        match self {
            Property::Experimenter { experimenter, .. } => OfpError::new(
                ErrorKind::BAD_PROPERTY_BAD_EXPERIMENTER,
                format!("{what} experimenter property of experimenter {experimenter:#x}"),
            ),
            Property::Unknown { ty, .. } => OfpError::new(
                ErrorKind::BAD_PROPERTY_BAD_TYPE,
                format!("{what} property type {ty:#x} is not defined"),
            ),
        }
    }
}

/// An experimenter property's fields, from its body (at least 8 bytes, `OFPBPC_BAD_LEN`).
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

/// Writes an experimenter property of type `ty`.
pub(crate) fn write_experimenter(
    w: &mut Writer,
    ty: u16,
    experimenter: u32,
    exp_type: u32,
    data: &[u8],
) {
    write(w, ty, |w| {
        w.u32(experimenter);
        w.u32(exp_type);
        w.bytes(data);
    });
}

/// proptest strategies for properties.
#[cfg(test)]
pub(crate) mod strategy {
    use super::*;
    use proptest::prelude::*;

    /// Experimenter properties, and unknown ones of a type not in `known` (nor 0xffff),
    /// with bodies of any length.
    pub fn arb_property(known: &'static [u16]) -> impl Strategy<Value = Property> {
        prop_oneof![
            (any::<u32>(), any::<u32>(), crate::wire::arb_bytes(0..12)).prop_map(
                |(experimenter, exp_type, data)| Property::Experimenter {
                    experimenter,
                    exp_type,
                    data
                }
            ),
            (any::<u16>(), crate::wire::arb_bytes(0..12))
                .prop_filter("a type the list has no fields for", move |(ty, _)| {
                    *ty != EXPERIMENTER && !known.contains(ty)
                })
                .prop_map(|(ty, data)| Property::Unknown { ty, data }),
        ]
    }

    /// Lists of up to 3 such properties.
    pub fn arb_properties(known: &'static [u16]) -> impl Strategy<Value = Vec<Property>> {
        proptest::collection::vec(arb_property(known), 0..3)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{assert_padded_roundtrip, assert_refused, encoded};
    use proptest::prelude::*;

    fn decode(r: &mut Reader) -> Result<Vec<Property>, OfpError> {
        Property::decode_list(r, "test")
    }

    #[test]
    fn spec_bytes() {
        // Experimenter 0x65, exp_type 2, data [1, 2]: length 20, then 4 pad bytes.
        let bytes =
            [0xff, 0xff, 0, 20, 0, 0, 0, 0x65, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0];
        let props = decode(&mut Reader::new(&bytes)).unwrap();
        let want = Property::Experimenter {
            experimenter: 0x65,
            exp_type: 2,
            data: vec![0, 0, 0, 1, 0, 0, 0, 2],
        };
        assert_eq!(props, vec![want]);
        assert_eq!(encoded(|w| Property::encode_list(&props, w)), bytes);
        // An unknown type with a 1-byte body: length 5, 3 pad bytes.
        let bytes = [0, 9, 0, 5, 7, 0, 0, 0];
        let props = decode(&mut Reader::new(&bytes)).unwrap();
        assert_eq!(props, vec![Property::Unknown { ty: 9, data: vec![7] }]);
        assert_eq!(encoded(|w| Property::encode_list(&props, w)), bytes);
        // An unknown type with an empty body: length 4, 4 pad bytes.
        let bytes = [0, 9, 0, 4, 0, 0, 0, 0];
        let props = decode(&mut Reader::new(&bytes)).unwrap();
        assert_eq!(props, vec![Property::Unknown { ty: 9, data: vec![] }]);
        assert_eq!(encoded(|w| Property::encode_list(&props, w)), bytes);
    }

    #[test]
    fn length_problems_are_bad_property_len() {
        let cases: &[&[u8]] = &[
            &[0xff, 0xff, 0],
            // Length below the header.
            &[0, 9, 0, 3, 0, 0, 0, 0],
            // Padding missing.
            &[0, 9, 0, 5, 7],
            // Past the end.
            &[0, 9, 0, 16, 0, 0, 0, 0],
            // Experimenter property too short for its ids.
            &[0xff, 0xff, 0, 8, 0, 0, 0, 1],
        ];
        assert_refused(cases, decode, ErrorKind::BAD_PROPERTY_BAD_LEN);
    }

    #[test]
    fn unsupported_kinds() {
        let e = Property::Experimenter { experimenter: 1, exp_type: 0, data: vec![] };
        assert_eq!(e.unsupported("x").kind, ErrorKind::BAD_PROPERTY_BAD_EXPERIMENTER);
        let u = Property::Unknown { ty: 3, data: vec![] };
        assert_eq!(u.unsupported("x").kind, ErrorKind::BAD_PROPERTY_BAD_TYPE);
    }

    proptest! {
        #[test]
        fn roundtrip(props in strategy::arb_properties(&[])) {
            assert_padded_roundtrip(&props, |p, w| Property::encode_list(p, w), decode);
        }
    }
}
