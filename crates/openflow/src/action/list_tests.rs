//! Checks shared by the tests of the two 1.3 TLV lists, actions and instructions: every
//! element is `type:u16, len:u16, body` padded to 8 bytes, and a list is read to the end
//! of its reader. Each function asserts one property for the element type `T`.

use crate::action::Action;
use crate::error::{ErrorKind, OfpError};
use crate::instruction::Instruction;
use crate::model::{WireAction, WireActions};
use crate::wire::{Reader, Writer};
use proptest::prelude::*;
use proptest::sample::Index;
use std::fmt::Debug;

/// An element of a 1.3 TLV list, as the shared checks use it.
pub(crate) trait ListItem: Sized + Clone + PartialEq + Debug {
    /// The `type` field of the encoded element.
    fn type_number(&self) -> u16;
    /// The `len` field of the encoded element.
    fn wire_len(&self) -> usize;
    /// Total bytes [`ListItem::encode_list`] writes.
    fn list_wire_len(list: &[Self]) -> usize;
    /// Writes the list.
    fn encode_list(list: &[Self], w: &mut Writer);
    /// Reads the list to the end of the reader.
    fn decode_list(r: &mut Reader) -> Result<Vec<Self>, OfpError>;
}

/// Implements [`ListItem`] with the element's type-number method and the trait that
/// reads and writes its lists.
macro_rules! list_item {
    ($item:ty, $type_number:ident, $lists:path) => {
        impl ListItem for $item {
            fn type_number(&self) -> u16 {
                self.$type_number()
            }
            fn wire_len(&self) -> usize {
                <$item>::wire_len(self)
            }
            fn list_wire_len(list: &[Self]) -> usize {
                <$item>::list_wire_len(list)
            }
            fn encode_list(list: &[Self], w: &mut Writer) {
                <$item as $lists>::encode_list(list, w)
            }
            fn decode_list(r: &mut Reader) -> Result<Vec<Self>, OfpError> {
                <$item as $lists>::decode_list(r)
            }
        }
    };
}

list_item!(Action, action_type, WireAction);
list_item!(Instruction, instruction_type, WireActions);

/// The bytes of `list`.
pub(crate) fn encode<T: ListItem>(list: &[T]) -> Vec<u8> {
    let mut w = Writer::new();
    T::encode_list(list, &mut w);
    w.into_vec()
}

/// The list `bytes` hold.
pub(crate) fn decode<T: ListItem>(bytes: &[u8]) -> Result<Vec<T>, OfpError> {
    T::decode_list(&mut Reader::new(bytes))
}

/// Why `bytes` do not decode as a list.
pub(crate) fn decode_err<T: ListItem>(bytes: &[u8]) -> ErrorKind {
    decode::<T>(bytes).expect_err("decode must fail").kind
}

/// `item` encodes to `bytes`, with that length (for elements that do not decode back to
/// themselves, such as experimenter data that gets padding).
pub(crate) fn assert_encodes<T: ListItem>(item: &T, bytes: &[u8]) {
    assert_eq!(encode(std::slice::from_ref(item)), bytes, "{item:?}");
    assert_eq!(item.wire_len(), bytes.len(), "{item:?}");
}

/// Each of `cases` fails to decode with `kind`.
pub(crate) fn assert_all_fail<T: ListItem>(cases: &[Vec<u8>], kind: ErrorKind) {
    for bytes in cases {
        assert_eq!(decode_err::<T>(bytes), kind, "{bytes:?}");
    }
}

/// An 8-byte element of each type number in `types` fails with `kind`.
pub(crate) fn assert_unknown_types<T: ListItem>(types: &[u16], kind: ErrorKind) {
    for ty in types {
        let [a, b] = ty.to_be_bytes();
        assert_eq!(decode_err::<T>(&[a, b, 0, 8, 0, 0, 0, 0]), kind, "type {ty}");
    }
}

/// Each element encodes to its bytes, with that length and type number, and the bytes
/// decode to it.
pub(crate) fn assert_layouts<T: ListItem>(cases: Vec<(T, Vec<u8>)>) {
    for (item, bytes) in cases {
        assert_eq!(encode(std::slice::from_ref(&item)), bytes, "{item:?}");
        assert_eq!(item.wire_len(), bytes.len(), "{item:?}");
        assert_eq!(u16::from_be_bytes([bytes[0], bytes[1]]), item.type_number());
        assert_eq!(decode::<T>(&bytes).unwrap(), vec![item]);
    }
}

/// A list encodes to its announced length, a multiple of 8, and decodes to itself.
pub(crate) fn value_bytes_value<T: ListItem>(list: Vec<T>) -> Result<(), TestCaseError> {
    let bytes = encode(&list);
    prop_assert_eq!(bytes.len(), T::list_wire_len(&list));
    prop_assert_eq!(bytes.len() % 8, 0);
    prop_assert_eq!(decode::<T>(&bytes)?, list);
    Ok(())
}

/// The bytes of a list decode to a list that encodes to the same bytes.
pub(crate) fn bytes_value_bytes<T: ListItem>(list: &[T]) -> Result<(), TestCaseError> {
    let bytes = encode(list);
    prop_assert_eq!(encode(&decode::<T>(&bytes)?), bytes);
    Ok(())
}

/// Whatever `bytes` decode to (they need not) re-encodes to the same length and decodes
/// to itself; nothing panics.
pub(crate) fn arbitrary_bytes<T: ListItem>(bytes: &[u8]) -> Result<(), TestCaseError> {
    if let Ok(list) = decode::<T>(bytes) {
        let again = encode(&list);
        prop_assert_eq!(again.len(), bytes.len());
        prop_assert_eq!(decode::<T>(&again)?, list);
    }
    Ok(())
}

/// The bytes of `list` with `flips` written over them decode, if they do, to a list of
/// the same length; nothing panics.
pub(crate) fn mutated_bytes<T: ListItem>(
    list: &[T],
    flips: Vec<(Index, u8)>,
) -> Result<(), TestCaseError> {
    let mut bytes = encode(list);
    for (at, v) in flips {
        let i = at.index(bytes.len());
        bytes[i] = v;
    }
    if let Ok(l) = decode::<T>(&bytes) {
        prop_assert_eq!(encode(&l).len(), bytes.len());
    }
    Ok(())
}

/// The bytes of `item` cut short (at `cut`, not to nothing) fail with `kind`.
pub(crate) fn truncated<T: ListItem>(
    item: &T,
    cut: Index,
    kind: ErrorKind,
) -> Result<(), TestCaseError> {
    let bytes = encode(std::slice::from_ref(item));
    let n = cut.index(bytes.len());
    if n > 0 {
        let e = decode::<T>(&bytes[..n]).unwrap_err();
        prop_assert_eq!(e.kind, kind);
    }
    Ok(())
}

/// The codec properties of a list of `$item`s as proptest tests: lists of up to `$max`
/// elements of `$arb` round-trip, arbitrary and mutated bytes (up to `$bytes` of them)
/// never panic, and a truncated element fails with `$short`.
macro_rules! list_properties {
    ($item:ty, $arb:expr, max: $max:expr, bytes: $bytes:expr, short: $short:expr) => {
        proptest! {
            #[test]
            fn value_bytes_value(list in proptest::collection::vec($arb, 0..$max)) {
                list::value_bytes_value(list)?;
            }

            #[test]
            fn bytes_value_bytes(list in proptest::collection::vec($arb, 1..$max)) {
                list::bytes_value_bytes(&list)?;
            }

            #[test]
            fn arbitrary_bytes_never_panic(
                bytes in proptest::collection::vec(any::<u8>(), 0..$bytes),
            ) {
                list::arbitrary_bytes::<$item>(&bytes)?;
            }

            #[test]
            fn mutated_encodings_never_panic(
                list in proptest::collection::vec($arb, 1..4),
                flips in proptest::collection::vec((any::<Index>(), any::<u8>()), 1..4),
            ) {
                list::mutated_bytes(&list, flips)?;
            }

            #[test]
            fn truncated_element_fails(item in $arb, cut in any::<Index>()) {
                list::truncated(&item, cut, $short)?;
            }
        }
    };
}
pub(crate) use list_properties;
