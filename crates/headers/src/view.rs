//! The macros every protocol module is written with: `fields!` declares a `field` module
//! of offsets and checks that they lie inside the header, `view!` declares a view type
//! with its constructors and byte access and, from a list of fields, its accessors; and
//! `spec_table!` (exported: the OpenFlow codec, the datapath and the tier use it too)
//! declares a module of a spec's numbers or flag bits from their names in order.

/// Declares a module `$module` of field offsets, `pub const NAME: Range<usize> = a..b;`
/// for `NAME: a..b` and `pub const NAME: usize = a;` for a one-byte `NAME: a`, and a
/// `const` assertion that every field is nonempty and lies inside a header of `$len`
/// bytes. (The accessors `view!` writes also check that each field they read or write
/// has their width, against the length of their view.)
macro_rules! fields {
    (
        $(#[$doc:meta])* pub mod $module:ident: $len:ident {
            $($(#[$m:meta])* $name:ident: $start:literal $(.. $end:literal)?,)*
        }
    ) => {
        $(#[$doc])*
        pub mod $module {
            $(field_const!($(#[$m])* $name: $start $(.. $end)?);)*
        }

        const _: () = assert!($crate::bytes::fields_fit(
            $len,
            &[$((field_const!(@range $module::$name $(.. $end)?), 0)),*]
        ));
    };
}

/// One constant of a `fields!` module, or (`@range`) the byte range it names.
macro_rules! field_const {
    ($(#[$m:meta])* $name:ident: $at:literal) => {
        $(#[$m])*
        pub const $name: usize = $at;
    };
    ($(#[$m:meta])* $name:ident: $start:literal .. $end:literal) => {
        $(#[$m])*
        pub const $name: core::ops::Range<usize> = $start..$end;
    };
    (@range $module:ident::$name:ident .. $end:literal) => {
        $module::$name
    };
    (@range $module:ident::$name:ident) => {
        $module::$name..$module::$name + 1
    };
}

/// Declares a view type `$name<B>` over a header of `$len` bytes: `new` over any buffer
/// that borrows as `[u8; $len]`, `new_checked`/`new_checked_at` over a byte slice (and
/// their `_mut` twins), `as_bytes`, `as_bytes_mut` and `into_inner`.
///
/// After `$len;` come its accessors, each `#[inline(always)]`, in the order they are
/// listed; those that read go to an impl over `Borrow`, those that write to one over
/// `BorrowMut`:
///
/// * `name: T = field::X;` reads field `X` as a `T`: `u8` (a one-byte field), `u16`,
///   `u32` or `u128` (big-endian), or `[u8; 6]` (a MAC address);
/// * `set_name(arg): T = field::X;` writes `arg: T` into it;
/// * `name / set_name: T = field::X;` is both: the getter `name` with the docs written
///   above it, and the setter `set_name(name: T)`, documented as setting `name`. (A
///   setter whose docs have more to say is written apart, in the form above.)
/// * `name: T = word[MASK];` reads a bit-field of the word that accessor `word` reads:
///   the bits of `MASK` (one run of set bits), shifted down, as a `T` (`u8`, `u16` or
///   `u32`), or for a `bool`, whether they are set (`bytes::Bits`);
/// * `name / set_name: T = word / set_word[MASK];` is both: the getter, and a setter
///   that writes the field through `word` and `set_word`, keeping the word's other bits.
/// * `pub fn ...` (with `&self` or `&mut self`) is any other accessor, as written.
///
/// Every field an accessor reads or writes is checked, in a `const` assertion, to lie
/// inside the header and to be as wide as its `T`.
macro_rules! view {
    ($(#[$doc:meta])* $name:ident, $len:ident $(; $($accessors:tt)*)?) => {
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

        accessors!(@munch $name $len [] [] [] $($($accessors)*)?);
    };
}

/// The accessors of `view!`: sorts the list into reads, writes and the fields to check,
/// one entry at a time, then writes the impls and the assertion. (A hand-written
/// accessor's `self` is taken from its own tokens: by hygiene, a `self` parameter the
/// macro wrote could not be named in a body it did not.)
macro_rules! accessors {
    (
        @munch $name:ident $len:ident [$($get:tt)*] [$($set:tt)*] [$($fit:tt)*]
        $(#[$m:meta])* pub fn $f:ident(&mut $self:ident $($args:tt)*) $(-> $ret:ty)? $body:block
        $($rest:tt)*
    ) => {
        accessors!(@munch $name $len [$($get)*]
            [$($set)* $(#[$m])* #[inline(always)] pub fn $f(&mut $self $($args)*) $(-> $ret)? $body]
            [$($fit)*] $($rest)*);
    };
    (
        @munch $name:ident $len:ident [$($get:tt)*] [$($set:tt)*] [$($fit:tt)*]
        $(#[$m:meta])* pub fn $f:ident(&$self:ident $($args:tt)*) $(-> $ret:ty)? $body:block
        $($rest:tt)*
    ) => {
        accessors!(@munch $name $len
            [$($get)* $(#[$m])* #[inline(always)] pub fn $f(&$self $($args)*) $(-> $ret)? $body]
            [$($set)*] [$($fit)*] $($rest)*);
    };
    (
        @munch $name:ident $len:ident [$($get:tt)*] [$($set:tt)*] [$($fit:tt)*]
        $(#[$m:meta])* $f:ident / $sf:ident: $ty:tt = $word:ident / $sword:ident[$mask:expr];
        $($rest:tt)*
    ) => {
        accessors!(@munch $name $len [$($get)*] [$($set)*] [$($fit)*]
            $(#[$m])* $f: $ty = $word[$mask];
            #[doc = concat!(
                "Sets [`", stringify!($f), "`](Self::", stringify!($f), "), keeping the ",
                "other bits of [`", stringify!($word), "`](Self::", stringify!($word), "); ",
                "a number's bits beyond the field's width are dropped."
            )]
            pub fn $sf(&mut self, $f: $ty) {
                let word = self.$word();
                self.$sword($crate::bytes::Bits::<$ty>::with_bits(word, $mask, $f));
            }
            $($rest)*);
    };
    (
        @munch $name:ident $len:ident [$($get:tt)*] [$($set:tt)*] [$($fit:tt)*]
        $(#[$m:meta])* $f:ident: $ty:tt = $word:ident[$mask:expr]; $($rest:tt)*
    ) => {
        accessors!(@munch $name $len
            [$($get)* $(#[$m])* #[inline(always)] pub fn $f(&self) -> $ty {
                $crate::bytes::Bits::<$ty>::bits(self.$word(), $mask)
            }]
            [$($set)*] [$($fit)*] $($rest)*);
    };
    (
        @munch $name:ident $len:ident [$($get:tt)*] [$($set:tt)*] [$($fit:tt)*]
        $(#[$m:meta])* $f:ident / $sf:ident: $ty:tt = $at:expr; $($rest:tt)*
    ) => {
        accessors!(@munch $name $len [$($get)*] [$($set)*] [$($fit)*]
            $(#[$m])* $f: $ty = $at;
            #[doc = concat!("Sets [`", stringify!($f), "`](Self::", stringify!($f), ").")]
            $sf($f): $ty = $at;
            $($rest)*);
    };
    (
        @munch $name:ident $len:ident [$($get:tt)*] [$($set:tt)*] [$($fit:tt)*]
        $(#[$m:meta])* $f:ident: $ty:tt = $at:expr; $($rest:tt)*
    ) => {
        accessors!(@munch $name $len
            [$($get)* $(#[$m])* #[inline(always)] pub fn $f(&self) -> $ty {
                field_rw!(get $ty, self.as_bytes(), $at)
            }]
            [$($set)*] [$($fit)* field_rw!(fit $ty, $at),] $($rest)*);
    };
    (
        @munch $name:ident $len:ident [$($get:tt)*] [$($set:tt)*] [$($fit:tt)*]
        $(#[$m:meta])* $f:ident($arg:ident): $ty:tt = $at:expr; $($rest:tt)*
    ) => {
        accessors!(@munch $name $len [$($get)*]
            [$($set)* $(#[$m])* #[inline(always)] pub fn $f(&mut self, $arg: $ty) {
                field_rw!(set $ty, self.as_bytes_mut(), $at, $arg);
            }]
            [$($fit)* field_rw!(fit $ty, $at),] $($rest)*);
    };
    (@munch $name:ident $len:ident [$($get:tt)*] [$($set:tt)*] [$($fit:tt)*]) => {
        accessors!(@impl Borrow, $name, $len, $($get)*);
        accessors!(@impl BorrowMut, $name, $len, $($set)*);
        const _: () = assert!($crate::bytes::fields_fit($len, &[$($fit)*]));
    };
    (@impl $bound:ident, $name:ident, $len:ident,) => {};
    (@impl $bound:ident, $name:ident, $len:ident, $($fns:tt)+) => {
        impl<B: core::borrow::$bound<[u8; $len]>> $name<B> {
            $($fns)+
        }
    };
}

/// How an accessor of type `$ty` reads (`get`), writes (`set`) and checks (`fit`: its
/// byte range and width) field `$at` of header bytes `$b`.
macro_rules! field_rw {
    (get u8, $b:expr, $at:expr) => {
        $crate::bytes::u8_at($b, $at)
    };
    (get u16, $b:expr, $at:expr) => {
        $crate::bytes::be16($b, $at)
    };
    (get u32, $b:expr, $at:expr) => {
        $crate::bytes::be32($b, $at)
    };
    (get u128, $b:expr, $at:expr) => {
        $crate::bytes::be128($b, $at)
    };
    (get [u8; 6], $b:expr, $at:expr) => {
        $crate::bytes::get($b, $at.start)
    };
    (set u8, $b:expr, $at:expr, $v:expr) => {
        $crate::bytes::set_u8_at($b, $at, $v)
    };
    (set u16, $b:expr, $at:expr, $v:expr) => {
        $crate::bytes::set_be16($b, $at, $v)
    };
    (set u32, $b:expr, $at:expr, $v:expr) => {
        $crate::bytes::set_be32($b, $at, $v)
    };
    (set u128, $b:expr, $at:expr, $v:expr) => {
        $crate::bytes::set_be128($b, $at, $v)
    };
    (set [u8; 6], $b:expr, $at:expr, $v:expr) => {
        $crate::bytes::set($b, $at.start, $v)
    };
    (fit u8, $at:expr) => {
        ($at..$at + 1, 1)
    };
    (fit $ty:tt, $at:expr) => {
        ($at, core::mem::size_of::<$ty>())
    };
}

/// Checks view type `$view` (over `$len` bytes) against a hand-made header, the first
/// `$len` bytes of `$bytes`:
///
/// * each getter listed reads the value listed (`name = v` or `name / set_name = v`);
/// * `new_checked` refuses every shorter prefix, and `new_checked_at` the header's
///   last offset in `$bytes` plus one (while it takes that last offset);
/// * unless the list starts with `read` (a view without setters), a zeroed header
///   that the statements of `build` (given the view as `$h`) and then the setters
///   listed (`set_name(v)`) write holds exactly those bytes.
#[cfg(test)]
macro_rules! check_view {
    (
        read $view:ident, $len:expr, $bytes:expr;
        $($get:ident $(/ $set:ident)? = $v:expr),* $(,)?
    ) => {{
        let bytes = &$bytes[..];
        let h = $view::new_checked(bytes).unwrap();
        $(assert_eq!(h.$get(), $v, stringify!($get));)*
        for n in 0..$len {
            assert!($view::new_checked(&bytes[..n]).is_none(), "{n} bytes");
        }
        let last = bytes.len() - $len;
        assert!($view::new_checked_at(bytes, last).is_some());
        assert!($view::new_checked_at(bytes, last + 1).is_none());
    }};
    (
        $view:ident, $len:expr, $bytes:expr;
        $($get:ident $(/ $set:ident)? = $v:expr),* $(,)?
        $(; build($h:ident) $build:block)?
    ) => {{
        check_view!(read $view, $len, $bytes; $($get $(/ $set)? = $v),*);
        let mut built = $view::new([0u8; $len]);
        $(let $h = &mut built;
        $build)?
        $($(built.$set($v);)?)*
        assert_eq!(built.as_bytes()[..], $bytes[..$len]);
    }};
}

/// A module of a spec's constants, named in order:
///
/// ```text
/// headers::spec_table! {
///     /// `ofp_flow_mod_flags` bits (1.0).
///     pub mod flow_mod_flags: u16 as bits {
///         SEND_FLOW_REM, CHECK_OVERLAP,
///         /// Install into the emergency flow cache.
///         EMERG,
///     }
/// }
/// spec_table! {
///     /// `ofp_instruction_type` numbers.
///     pub mod instruction_type: u16 as numbers {
///         GOTO_TABLE = 1, WRITE_METADATA, WRITE_ACTIONS, EXPERIMENTER = 0xffff,
///     }
/// }
/// ```
///
/// Each name takes the next place, counted from 0 as a C enum counts, or the place
/// given after `=` (where the spec skips some). The constant is the place itself
/// (`numbers`) or the bit at that place, `1 << place` (`bits`), and keeps its doc
/// comment. After the names, a `;` may introduce other items of the module
/// (a mask of all the bits, a field that is no single bit).
#[macro_export]
macro_rules! spec_table {
    (
        $(#[$attr:meta])*
        $vis:vis mod $name:ident: $ty:ty as $kind:ident { $($body:tt)* }
    ) => {
        $(#[$attr])*
        $vis mod $name {
            $crate::spec_table!(@next $kind $ty, 0; $($body)*);
        }
    };
    (@next $kind:ident $ty:ty, $at:expr;) => {};
    (@next $kind:ident $ty:ty, $at:expr; ; $($item:item)*) => { $($item)* };
    (@next $kind:ident $ty:ty, $at:expr;
        $(#[$cattr:meta])* $konst:ident = $place:expr, $($rest:tt)*) => {
        $crate::spec_table!(@next $kind $ty, $place; $(#[$cattr])* $konst, $($rest)*);
    };
    (@next $kind:ident $ty:ty, $at:expr;
        $(#[$cattr:meta])* $konst:ident = $place:expr; $($item:item)*) => {
        $crate::spec_table!(@next $kind $ty, $place; $(#[$cattr])* $konst, ; $($item)*);
    };
    (@next $kind:ident $ty:ty, $at:expr; $(#[$cattr:meta])* $konst:ident; $($item:item)*) => {
        $crate::spec_table!(@next $kind $ty, $at; $(#[$cattr])* $konst, ; $($item)*);
    };
    (@next $kind:ident $ty:ty, $at:expr; $(#[$cattr:meta])* $konst:ident, $($rest:tt)*) => {
        $(#[$cattr])*
        pub const $konst: $ty = $crate::spec_table!(@value $kind, $at);
        $crate::spec_table!(@next $kind $ty, $at + 1; $($rest)*);
    };
    (@value numbers, $at:expr) => { $at };
    (@value bits, $at:expr) => { 1 << ($at) };
}
