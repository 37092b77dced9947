//! Reads and writes of big-endian fields inside a fixed-size header array.
//!
//! Every view holds a `[u8; LEN]` (by reference or by value), and its accessors read
//! at the constant offsets of its `field` module. With the offset a constant and the
//! array length a type parameter, the range check of each helper folds away after
//! inlining: no bounds check is left in the code and no panic path exists. A range
//! outside the array (a bug in a `field` module, which the module's `const` assertion
//! and its tests rule out) reads zeros and writes nothing.

use core::ops::Range;

/// The `M` bytes at `at` of `b`, or zeros if they are not all inside it.
#[inline(always)]
pub(crate) fn get<const N: usize, const M: usize>(b: &[u8; N], at: usize) -> [u8; M] {
    match b.get(at..) {
        Some(rest) => match rest.first_chunk::<M>() {
            Some(a) => *a,
            None => [0; M],
        },
        None => [0; M],
    }
}

/// Writes `v` at `at` of `b` if it fits inside it.
#[inline(always)]
pub(crate) fn set<const N: usize, const M: usize>(b: &mut [u8; N], at: usize, v: [u8; M]) {
    if let Some(rest) = b.get_mut(at..) {
        if let Some(a) = rest.first_chunk_mut::<M>() {
            *a = v;
        }
    }
}

/// The byte at `at`.
#[inline(always)]
pub(crate) fn u8_at<const N: usize>(b: &[u8; N], at: usize) -> u8 {
    let [v] = get(b, at);
    v
}

/// Writes the byte at `at`.
#[inline(always)]
pub(crate) fn set_u8_at<const N: usize>(b: &mut [u8; N], at: usize, v: u8) {
    set(b, at, [v]);
}

/// The big-endian `u16` of field `r` (2 bytes).
#[inline(always)]
pub(crate) fn be16<const N: usize>(b: &[u8; N], r: Range<usize>) -> u16 {
    u16::from_be_bytes(get(b, r.start))
}

/// The big-endian `u32` of field `r` (4 bytes).
#[inline(always)]
pub(crate) fn be32<const N: usize>(b: &[u8; N], r: Range<usize>) -> u32 {
    u32::from_be_bytes(get(b, r.start))
}

/// The big-endian `u128` of field `r` (16 bytes).
#[inline(always)]
pub(crate) fn be128<const N: usize>(b: &[u8; N], r: Range<usize>) -> u128 {
    u128::from_be_bytes(get(b, r.start))
}

/// Writes `v` big-endian into field `r` (2 bytes).
#[inline(always)]
pub(crate) fn set_be16<const N: usize>(b: &mut [u8; N], r: Range<usize>, v: u16) {
    set(b, r.start, v.to_be_bytes());
}

/// Writes `v` big-endian into field `r` (4 bytes).
#[inline(always)]
pub(crate) fn set_be32<const N: usize>(b: &mut [u8; N], r: Range<usize>, v: u32) {
    set(b, r.start, v.to_be_bytes());
}

/// Writes `v` big-endian into field `r` (16 bytes).
#[inline(always)]
pub(crate) fn set_be128<const N: usize>(b: &mut [u8; N], r: Range<usize>, v: u128) {
    set(b, r.start, v.to_be_bytes());
}

/// A bit-field of a header word (the views' `word[MASK]` accessors): `Self` is the word,
/// `T` the field's value.
pub(crate) trait Bits<T>: Sized {
    /// The bits of `mask` (set bits in one run), shifted down; for `bool`, whether any
    /// of them is set.
    fn bits(self, mask: Self) -> T;
    /// The word with the bits of `mask` replaced by the low bits of `v` (for `bool`, all
    /// set or all clear).
    fn with_bits(self, mask: Self, v: T) -> Self;
}

macro_rules! bits_impls {
    ($($word:ty: $($t:ty),*;)*) => {$($(
        impl Bits<$t> for $word {
            #[inline(always)]
            fn bits(self, mask: Self) -> $t {
                let shift = mask.trailing_zeros();
                ((self >> shift) & (mask >> shift)) as $t
            }
            #[inline(always)]
            fn with_bits(self, mask: Self, v: $t) -> Self {
                let shift = mask.trailing_zeros();
                (self & !mask) | ((<$word>::from(v) & (mask >> shift)) << shift)
            }
        }
        )*
        impl Bits<bool> for $word {
            #[inline(always)]
            fn bits(self, mask: Self) -> bool {
                self & mask != 0
            }
            #[inline(always)]
            fn with_bits(self, mask: Self, v: bool) -> Self {
                (self & !mask) | if v { mask } else { 0 }
            }
        }
    )*};
}

bits_impls! {
    u8: u8;
    u16: u8, u16;
    u32: u8, u32;
}

/// Whether every range in `fields` lies inside a header of `len` bytes and is `width`
/// bytes wide (`width` 0: any width); for the `field` modules' `const` assertions.
pub(crate) const fn fields_fit(len: usize, fields: &[(Range<usize>, usize)]) -> bool {
    let mut i = 0;
    while i < fields.len() {
        let (r, width) = (&fields[i].0, fields[i].1);
        if r.start >= r.end || r.end > len || (width != 0 && r.end - r.start != width) {
            return false;
        }
        i += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_range_reads_zeros_and_writes_nothing() {
        let mut b = [1u8, 2, 3, 4];
        assert_eq!(be16(&b, 2..4), 0x0304);
        assert_eq!(be16(&b, 3..5), 0);
        assert_eq!(be32(&b, 8..12), 0);
        assert_eq!(u8_at(&b, 4), 0);
        set_be16(&mut b, 3..5, 0xffff);
        set_u8_at(&mut b, 9, 0xff);
        assert_eq!(b, [1, 2, 3, 4]);
    }

    #[test]
    fn bit_fields_read_shifted_down_and_write_the_low_bits() {
        let w: u16 = 0xb123;
        assert_eq!(Bits::<u8>::bits(w, 0xe000), 5);
        assert_eq!(Bits::<u16>::bits(w, 0x0fff), 0x123);
        assert!(Bits::<bool>::bits(w, 0x1000));
        assert_eq!(w.with_bits(0xe000, 0xfa_u8), 0x5123);
        assert_eq!(w.with_bits(0x0fff, 0xffff_u16), 0xbfff);
        assert_eq!(w.with_bits(0x1000, false), 0xa123);
        assert_eq!(0u32.with_bits(0x100, true), 0x100);
    }

    #[test]
    fn fields_fit_checks_bounds_and_widths() {
        assert!(fields_fit(4, &[(0..2, 2), (2..4, 0)]));
        assert!(!fields_fit(4, &[(3..5, 2)]));
        assert!(!fields_fit(4, &[(0..3, 2)]));
        assert!(!fields_fit(4, &[(2..2, 0)]));
    }
}
