//! The `view!` macro: the struct, constructors and byte access every header view has.

/// Declares a view type `$name<B>` over a header of `$len` bytes: `new` over any buffer
/// that borrows as `[u8; $len]`, `new_checked`/`new_checked_at` over a byte slice (and
/// their `_mut` twins), `as_bytes`, `as_bytes_mut` and `into_inner`. The accessors are
/// written by hand in each protocol's module.
macro_rules! view {
    ($(#[$doc:meta])* $name:ident, $len:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub struct $name<B>(B);

        impl<B: core::borrow::Borrow<[u8; $len]>> $name<B> {
            #[doc = concat!(
                "A view of `buffer`, which is exactly the header's [`", stringify!($len),
                "`] bytes (its type says so: nothing is checked)."
            )]
            #[inline(always)]
            pub fn new(buffer: B) -> Self {
                $name(buffer)
            }

            /// The header's bytes.
            #[inline(always)]
            pub fn as_bytes(&self) -> &[u8; $len] {
                self.0.borrow()
            }

            /// The buffer the view was made of.
            #[inline(always)]
            pub fn into_inner(self) -> B {
                self.0
            }
        }

        impl<B: core::borrow::BorrowMut<[u8; $len]>> $name<B> {
            /// The header's bytes, writable.
            #[inline(always)]
            pub fn as_bytes_mut(&mut self) -> &mut [u8; $len] {
                self.0.borrow_mut()
            }
        }

        impl<'a> $name<&'a [u8; $len]> {
            #[doc = concat!(
                "A view of the first [`", stringify!($len), "`] bytes of `buf`, or `None` ",
                "if `buf` is shorter. This is the only length check: no accessor can fail ",
                "or panic after it."
            )]
            #[inline(always)]
            pub fn new_checked(buf: &'a [u8]) -> Option<Self> {
                match buf.first_chunk::<$len>() {
                    Some(b) => Some($name(b)),
                    None => None,
                }
            }

            /// A view of the header that starts at `offset` of `buf`, or `None` if `buf`
            /// ends before the header does.
            #[inline(always)]
            pub fn new_checked_at(buf: &'a [u8], offset: usize) -> Option<Self> {
                // One comparison (`offset + LEN <= buf.len()`) where the offset is known
                // not to overflow, as it always is for offsets into a frame.
                let end = offset.checked_add($len)?;
                match buf.get(offset..end) {
                    Some(b) => Self::new_checked(b),
                    None => None,
                }
            }
        }

        impl<'a> $name<&'a mut [u8; $len]> {
            #[doc = concat!("[`", stringify!($name), "::new_checked`] over writable bytes.")]
            #[inline(always)]
            pub fn new_checked_mut(buf: &'a mut [u8]) -> Option<Self> {
                match buf.first_chunk_mut::<$len>() {
                    Some(b) => Some($name(b)),
                    None => None,
                }
            }

            #[doc = concat!("[`", stringify!($name), "::new_checked_at`] over writable bytes.")]
            #[inline(always)]
            pub fn new_checked_at_mut(buf: &'a mut [u8], offset: usize) -> Option<Self> {
                let end = offset.checked_add($len)?;
                match buf.get_mut(offset..end) {
                    Some(b) => Self::new_checked_mut(b),
                    None => None,
                }
            }
        }
    };
}
