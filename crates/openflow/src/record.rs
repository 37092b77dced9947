//! The declarations most of the codec is written with.
//!
//! `wire_by_methods!` implements the traits through which the version-neutral messages
//! (`crate::model`) read one version's match and lists, by the type's own methods.
//!
//! `wire_enum!` declares a numbered code (a command, a reason, a role) with an
//! `Unknown(n)` variant for the numbers it does not name, so that nothing read is lost,
//! and its conversions to and from the number.
//!
//! `record!` declares a structure whose wire form is its fields in order, each with one
//! fixed-size form ([`crate::wire::Field`]), with padding after any of them (`[pad N]`)
//! and, last, optionally a `Vec<u8>` marked `[rest]` holding the rest of the message. From one
//! declaration it writes the struct, its length on the wire, `decode`, `encode` and,
//! for tests, a proptest strategy of every value the wire can carry. A record is a
//! [`crate::wire::Field`] itself, so records nest.
//!
//! ```text
//! record! {
//!     /// An `ofp_switch_config` body.
//!     #[derive(Clone, Debug, PartialEq, Eq)]
//!     pub struct SwitchConfig {
//!         pub flags: u16,
//!         pub miss_send_len: u16 [pad 2],
//!     }
//! }
//! ```
//!
//! `decode` reads exactly [`WIRE_LEN`](#) bytes (pads are skipped, whatever they hold),
//! then a `[rest]` field takes what is left, and fails as the reader does when fewer
//! remain; `encode` writes the same, pads as zeros. A record with a `[rest]` field is no
//! `Field` (using it as one fails to compile). The strategy decodes arbitrary bytes, so
//! it reaches every value of every field, unknown enum codes included.
//!
//! Instead of `[rest]`, a last `Vec<T>` field marked `[list]` holds
//! [`crate::wire::ListItem`]s to the end (its strategy: up to 3 of every element).
//! A structure that carries its own length, `struct Name [length at N] { .. }`, has a
//! u16 at byte `N` counting all of it: its fields cover those two bytes with a pad (or
//! begin after them: `[length at 0, fields at 4]` writes the length and 2 pad bytes
//! first), `decode` takes that many bytes ([`crate::wire::take_sized`]: at least
//! `WIRE_LEN`, `OFPBRC_BAD_LEN` otherwise) and `encode` writes the length.
//!
//! `spec_table!` (the `headers` crate's, used here throughout) declares a module of a
//! spec's constants (flag bits, type numbers) from their names in order, as the spec's C
//! enums list them.
//!
//! `messages!` declares a version's message enum and `stats_replies!` its statistics
//! reply body, each with what both versions share listed once in the macro.
//! `roundtrip_tests!` writes, for tests, the property test that a codec reads back what
//! it writes.

/// See the module comment.
macro_rules! record {
    (
        $(#[$attr:meta])*
        $vis:vis struct $name:ident
            $([length at $len_at:literal $(, fields at $lead:literal)?])? {
            $($(#[$fattr:meta])* $fvis:vis $field:ident: $ty:ty $([$($how:tt)*])?),* $(,)?
        }
    ) => {
        $(#[$attr])*
        $vis struct $name {
            $($(#[$fattr])* $fvis $field: $ty,)*
        }

        impl $name {
            /// Length of the structure on the wire (without a `rest` or `list` field's
            /// bytes).
            pub const WIRE_LEN: usize =
                0 $($(+ $lead)?)? $(+ record!(@len $ty $(, $($how)*)?))*;

            /// Whether a field holds the rest of the message.
            const HAS_REST: bool = false $(|| record!(@is_rest $($($how)*)?))*;

            /// Reads the structure in wire order.
            pub fn decode(
                r: &mut $crate::wire::Reader,
            ) -> Result<Self, $crate::error::OfpError> {
                $(
                    let mut s = $crate::wire::take_sized(
                        r,
                        $len_at,
                        Self::WIRE_LEN,
                        stringify!($name),
                    )?;
                    let r = &mut s;
                )?
                Self::decode_fields(r)
            }

            /// Reads the fields in wire order, from where the structure starts.
            fn decode_fields(
                r: &mut $crate::wire::Reader,
            ) -> Result<Self, $crate::error::OfpError> {
                $($(r.skip($lead)?;)?)?
                $(let $field = record!(@read r, $ty $(, $($how)*)?);)*
                Ok(Self { $($field),* })
            }

            /// Writes the structure's fields in wire order, pads as zeros.
            pub fn encode(&self, w: &mut $crate::wire::Writer) {
                let fields = |w: &mut $crate::wire::Writer| {
                    $($(w.zeros($lead);)?)?
                    $(record!(@write w, &self.$field, $ty $(, $($how)*)?);)*
                };
                record!(@sized w, fields $(, $len_at)?);
            }
        }

        impl $crate::wire::Field for $name {
            const LEN: usize = {
                assert!(!Self::HAS_REST, "a record that ends in the rest of the message has no fixed length");
                Self::WIRE_LEN
            };
            fn read(r: &mut $crate::wire::Reader) -> Result<Self, $crate::error::OfpError> {
                Self::decode(r)
            }
            fn write(&self, w: &mut $crate::wire::Writer) {
                self.encode(w)
            }
            #[cfg(test)]
            fn arb() -> proptest::strategy::BoxedStrategy<Self> {
                use proptest::strategy::Strategy;
                Self::arb().boxed()
            }
        }

        #[cfg(test)]
        impl $name {
            /// Every value of every field; pads hold arbitrary bytes, which decoding
            /// ignores.
            #[allow(dead_code)]
            pub(crate) fn arb() -> impl proptest::strategy::Strategy<Value = Self> {
                use proptest::strategy::Strategy;
                let parts: Vec<proptest::strategy::BoxedStrategy<Vec<u8>>> = vec![
                    $($($crate::record::pad_bytes($lead),)?)?
                    $(record!(@arb $ty $(, $($how)*)?)),*
                ];
                parts.prop_map(|parts| {
                    Self::decode_fields(&mut $crate::wire::Reader::new(&parts.concat()))
                        .expect("a record decodes from any bytes of its length")
                })
            }
        }
    };
    (@len $ty:ty) => { <$ty as $crate::wire::Field>::LEN };
    (@len $ty:ty, pad $pad:literal) => { <$ty as $crate::wire::Field>::LEN + $pad };
    (@len $ty:ty, rest) => { 0 };
    (@len $ty:ty, list) => { 0 };
    (@is_rest rest) => { true };
    (@is_rest list) => { true };
    (@is_rest $($other:tt)*) => { false };
    (@read $r:ident, $ty:ty) => { <$ty as $crate::wire::Field>::read($r)? };
    (@read $r:ident, $ty:ty, pad $pad:literal) => {{
        let v = <$ty as $crate::wire::Field>::read($r)?;
        $r.skip($pad)?;
        v
    }};
    (@read $r:ident, $ty:ty, rest) => { $r.take_rest().to_vec() };
    (@read $r:ident, $ty:ty, list) => { $crate::wire::read_items($r)? };
    (@write $w:ident, $v:expr, $ty:ty) => { $crate::wire::Field::write($v, $w) };
    (@write $w:ident, $v:expr, $ty:ty, pad $pad:literal) => {{
        $crate::wire::Field::write($v, $w);
        $w.zeros($pad);
    }};
    (@write $w:ident, $v:expr, $ty:ty, rest) => { $w.bytes($v) };
    (@write $w:ident, $v:expr, $ty:ty, list) => { $crate::wire::write_items($v, $w) };
    (@sized $w:ident, $fields:ident) => { $fields($w) };
    (@sized $w:ident, $fields:ident, $len_at:literal) => { $w.sized($len_at, $fields) };
    (@arb $ty:ty) => { $crate::record::field_bytes::<$ty>() };
    (@arb $ty:ty, pad $pad:literal) => {{
        use proptest::strategy::Strategy;
        ($crate::record::field_bytes::<$ty>(), $crate::record::pad_bytes($pad))
            .prop_map(|(f, p)| [f, p].concat())
            .boxed()
    }};
    (@arb $ty:ty, rest) => {{
        use proptest::strategy::Strategy;
        $crate::wire::arb_bytes(0..64).boxed()
    }};
    (@arb $ty:ty, list) => { <$ty as $crate::record::ListBytes>::arb_bytes() };
}

/// See the module comment: `pub enum Name: u8 as from_u8 / to_u8 { A = 0, B = 1, }`
/// declares the enum (a plain value: `Clone, Copy, Debug, PartialEq, Eq, Hash`),
/// `Unknown(u8)`, `from_u8`, `to_u8` and its [`crate::wire::Field`] form, so a `record!`
/// can hold it.
macro_rules! wire_enum {
    (
        $(#[$attr:meta])*
        $vis:vis enum $name:ident: $repr:ty as $from:ident / $to:ident {
            $($(#[$vattr:meta])* $variant:ident = $value:literal,)*
        }
    ) => {
        $(#[$attr])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        $vis enum $name {
            $($(#[$vattr])* $variant,)*
            /// A number with no name here, kept as it is.
            Unknown($repr),
        }

        impl $name {
            /// The value numbered `v` on the wire.
            pub fn $from(v: $repr) -> Self {
                match v {
                    $($value => Self::$variant,)*
                    n => Self::Unknown(n),
                }
            }

            /// The value's number on the wire.
            pub fn $to(self) -> $repr {
                match self {
                    $(Self::$variant => $value,)*
                    Self::Unknown(n) => n,
                }
            }
        }

        impl $crate::wire::Field for $name {
            const LEN: usize = core::mem::size_of::<$repr>();
            fn read(r: &mut $crate::wire::Reader) -> Result<Self, $crate::error::OfpError> {
                Ok(Self::$from(<$repr as $crate::wire::Field>::read(r)?))
            }
            fn write(&self, w: &mut $crate::wire::Writer) {
                $crate::wire::Field::write(&self.$to(), w);
            }
            /// The named values and any number.
            #[cfg(test)]
            fn arb() -> proptest::strategy::BoxedStrategy<Self> {
                use proptest::strategy::Strategy;
                proptest::prop_oneof![
                    proptest::sample::select(vec![$(Self::$variant),*]),
                    proptest::arbitrary::any::<$repr>().prop_map(Self::$from),
                ]
                .boxed()
            }
        }
    };
}

/// A field's strategy as the bytes it writes, for `record!`'s strategy.
#[cfg(test)]
pub(crate) fn field_bytes<T: crate::wire::Field + std::fmt::Debug + 'static>(
) -> proptest::strategy::BoxedStrategy<Vec<u8>> {
    use proptest::strategy::Strategy;
    T::arb()
        .prop_map(|v| {
            let mut w = crate::wire::Writer::new();
            v.write(&mut w);
            w.buf
        })
        .boxed()
}

/// A `[list]` field's strategy as the bytes it writes: up to 3 elements of every value.
#[cfg(test)]
pub(crate) trait ListBytes {
    /// See the trait.
    fn arb_bytes() -> proptest::strategy::BoxedStrategy<Vec<u8>>;
}

#[cfg(test)]
impl<T: crate::wire::ListItem + std::fmt::Debug + 'static> ListBytes for Vec<T> {
    fn arb_bytes() -> proptest::strategy::BoxedStrategy<Vec<u8>> {
        use proptest::strategy::Strategy;
        proptest::collection::vec(T::arb_item(), 0..4)
            .prop_map(|items| crate::wire::encoded(|w| crate::wire::write_items(&items, w)))
            .boxed()
    }
}

/// `n` arbitrary pad bytes, for `record!`'s strategy.
#[cfg(test)]
pub(crate) fn pad_bytes(n: usize) -> proptest::strategy::BoxedStrategy<Vec<u8>> {
    use proptest::strategy::Strategy;
    crate::wire::arb_bytes(n).boxed()
}

/// Declares one version family's message enum from its list of message types, with the
/// types both 1.0 and 1.3 have (and so write the same way) declared here once:
///
/// ```text
/// messages! {
///     /// An OpenFlow 1.3 message body.
///     pub enum Message: "1.3", t13, OFP13_VERSION, names type_name {
///         Hello(Hello) = HELLO plain,
///         GetAsyncRequest = GET_ASYNC_REQUEST none,
///         QueueGetConfigRequest(u32) = QUEUE_GET_CONFIG_REQUEST (pad 4) in 0..=OFP13_VERSION,
///         RoleStatus(RoleStatus) = ROLE_STATUS plain in OFP14_VERSION..=u8::MAX,
///     }
/// }
/// ```
///
/// Each variant names its `OFPT_*` number in the types module (`t13::HELLO`), how its
/// body is read and written: `none` (no body), `rest` (the bytes as they are), `plain`
/// (`T::decode(r)`, `m.encode(w)`), `versioned` (the same with the frame's version
/// first), `by_version` (`T::decode_version(version, r)`, `m.encode_version(version,
/// w)`), or `(pad N)` (a [`crate::wire::Field`] then `N` pad bytes), and optionally, after
/// `in`, the pattern of the versions that have the type (all of the family's otherwise).
///
/// From that it writes the enum; `decode_version` (the body of a frame of that version,
/// which fails with `OFPBRC_BAD_TYPE` on a number not listed or not in the version and
/// `OFPBRC_BAD_LEN` on bytes left after the body) and `decode` (the same for the family's
/// first version, the `$version` named); `encode_version` and `encode_body` likewise;
/// `in_version` (whether the version has the message's type), `msg_type`, `name` and the
/// function from numbers to names (`OFPT_` and the constant's name, for any version of
/// the family).
macro_rules! messages {
    (
        $(#[$attr:meta])*
        $vis:vis enum $name:ident: $vname:literal, $types:ident, $version:ident,
            names $names:ident { $($own:tt)* }
    ) => {
        messages! {
            @build [$(#[$attr])*] $vis $name $vname $types $version $names {
                Error(ErrorMsg) = ERROR plain,
                EchoRequest(Vec<u8>) = ECHO_REQUEST rest,
                EchoReply(Vec<u8>) = ECHO_REPLY rest,
                FeaturesRequest = FEATURES_REQUEST none,
                FeaturesReply(FeaturesReply) = FEATURES_REPLY versioned,
                GetConfigRequest = GET_CONFIG_REQUEST none,
                GetConfigReply(SwitchConfig) = GET_CONFIG_REPLY plain,
                SetConfig(SwitchConfig) = SET_CONFIG plain,
                PacketIn(PacketIn) = PACKET_IN versioned,
                FlowRemoved(FlowRemoved) = FLOW_REMOVED by_version,
                PortStatus(PortStatus) = PORT_STATUS versioned,
                PacketOut(PacketOut) = PACKET_OUT plain,
                FlowMod(FlowMod) = FLOW_MOD by_version,
                BarrierRequest = BARRIER_REQUEST none,
                BarrierReply = BARRIER_REPLY none,
                QueueGetConfigReply(QueueGetConfigReply) = QUEUE_GET_CONFIG_REPLY versioned
                    in 0..=$crate::header::OFP13_VERSION,
                $($own)*
            }
        }
    };
    (
        @build [$($attr:tt)*] $vis:vis $name:ident $vname:literal $types:ident $version:ident
            $names:ident {
            $($(#[$vattr:meta])* $variant:ident $(($ty:ty))? = $code:ident $codec:tt
                $(in $versions:pat)?,)*
        }
    ) => {
        $($attr)*
        $vis enum $name {
            $($(#[$vattr])* $variant $(($ty))?,)*
        }

        impl $name {
            /// Decodes the body of a message of type `msg_type` in a frame of the family's
            /// first version; `r` holds exactly the bytes after the header and must be
            /// consumed to its end.
            pub fn decode(
                msg_type: u8,
                r: &mut $crate::wire::Reader,
            ) -> Result<Self, $crate::error::OfpError> {
                Self::decode_version($version, msg_type, r)
            }

            /// Decodes the body of a message of type `msg_type` in a frame of `version`;
            /// `r` holds exactly the bytes after the header and must be consumed to its
            /// end.
            pub fn decode_version(
                version: u8,
                msg_type: u8,
                r: &mut $crate::wire::Reader,
            ) -> Result<Self, $crate::error::OfpError> {
                use $crate::error::{ErrorKind, OfpError};
                let m = match msg_type {
                    $($types::$code $(if matches!(version, $versions))? => {
                        messages!(@dec $codec, version, r, Self::$variant $(, $ty)?)
                    })*
                    n => {
                        return Err(OfpError::new(
                            ErrorKind::BAD_REQUEST_BAD_TYPE,
                            format!(
                                "message type {n} is not an OpenFlow {} message of version 0x{version:02x}",
                                $vname
                            ),
                        ))
                    }
                };
                r.expect_end(format_args!("{} body", m.name()))?;
                Ok(m)
            }

            /// Writes the body (everything after the header) for a frame of the family's
            /// first version.
            pub fn encode_body(&self, w: &mut $crate::wire::Writer) {
                self.encode_version($version, w)
            }

            /// Writes the body (everything after the header) for a frame of `version`.
            pub fn encode_version(&self, version: u8, w: &mut $crate::wire::Writer) {
                match self {
                    $(m @ Self::$variant { .. } => {
                        messages!(@enc $codec, version, w, m, Self::$variant $(, $ty)?)
                    })*
                }
            }

            /// Whether a frame of `version` can carry this message's type.
            pub fn in_version(&self, version: u8) -> bool {
                match self {
                    $(Self::$variant { .. } => true $(&& matches!(version, $versions))?,)*
                }
            }

            /// The `OFPT_*` type number of this message.
            pub fn msg_type(&self) -> u8 {
                match self {
                    $(Self::$variant { .. } => $types::$code,)*
                }
            }

            /// The spec's name of the message type (`OFPT_FLOW_MOD`).
            pub fn name(&self) -> &'static str {
                $names(self.msg_type()).unwrap_or("OFPT_UNKNOWN")
            }
        }

        /// The spec's name of message type `msg_type` in any version of this family, if
        /// it is one.
        pub fn $names(msg_type: u8) -> Option<&'static str> {
            Some(match msg_type {
                $($types::$code => concat!("OFPT_", stringify!($code)),)*
                _ => return None,
            })
        }
    };
    (@dec none, $v:ident, $r:ident, $var:path) => { $var };
    (@dec rest, $v:ident, $r:ident, $var:path, $ty:ty) => { $var($r.take_rest().to_vec()) };
    (@dec plain, $v:ident, $r:ident, $var:path, $ty:ty) => { $var(<$ty>::decode($r)?) };
    (@dec versioned, $v:ident, $r:ident, $var:path, $ty:ty) => { $var(<$ty>::decode($v, $r)?) };
    (@dec by_version, $v:ident, $r:ident, $var:path, $ty:ty) => {
        $var(<$ty>::decode_version($v, $r)?)
    };
    (@dec (pad $n:literal), $v:ident, $r:ident, $var:path, $ty:ty) => {{
        let value = <$ty as $crate::wire::Field>::read($r)?;
        $r.skip($n)?;
        $var(value)
    }};
    (@enc none, $v:ident, $w:ident, $m:ident, $var:path) => {{
        let _ = $m;
    }};
    (@enc rest, $v:ident, $w:ident, $m:ident, $var:path, $ty:ty) => {
        if let $var(b) = $m { $w.bytes(b) }
    };
    (@enc plain, $v:ident, $w:ident, $m:ident, $var:path, $ty:ty) => {
        if let $var(b) = $m { b.encode($w) }
    };
    (@enc versioned, $v:ident, $w:ident, $m:ident, $var:path, $ty:ty) => {
        if let $var(b) = $m { b.encode($v, $w) }
    };
    (@enc by_version, $v:ident, $w:ident, $m:ident, $var:path, $ty:ty) => {
        if let $var(b) = $m { b.encode_version($v, $w) }
    };
    (@enc (pad $n:literal), $v:ident, $w:ident, $m:ident, $var:path, $ty:ty) => {
        if let $var(b) = $m {
            $crate::wire::Field::write(b, $w);
            $w.zeros($n);
        }
    };
}

/// [`crate::wire::ListItem`] for types with inherent `decode(r)` and `encode(&self, w)`
/// and a test strategy: `list_item_by_methods!(Bucket, strategy::arb_bucket());`.
macro_rules! list_item_by_methods {
    ($ty:ty, $arb:expr) => {
        impl $crate::wire::ListItem for $ty {
            fn read_item(r: &mut $crate::wire::Reader) -> Result<Self, $crate::error::OfpError> {
                <$ty>::decode(r)
            }
            fn write_item(&self, w: &mut $crate::wire::Writer) {
                <$ty>::encode(self, w)
            }
            #[cfg(test)]
            fn arb_item() -> proptest::strategy::BoxedStrategy<Self> {
                use proptest::strategy::Strategy;
                $arb.boxed()
            }
        }
    };
}

/// Implements `crate::model::WireMatch`, `WireAction` or `StatsBody` (by
/// `multipart_type`, and `decode` and `encode` with the frame's version first) for one
/// version's type by its own methods of the same names: `wire_by_methods!(WireMatch for
/// Match, OFP13_VERSION);`.
macro_rules! wire_by_methods {
    (WireMatch for $ty:ty, $version:expr) => {
        impl $crate::model::WireMatch for $ty {
            const VERSION: u8 = $version;
            fn decode(r: &mut $crate::wire::Reader) -> Result<Self, $crate::error::OfpError> {
                <$ty>::decode(r)
            }
            fn encode(&self, w: &mut $crate::wire::Writer) {
                <$ty>::encode(self, w)
            }
        }
    };
    (StatsBody for $ty:ty, $version:expr) => {
        impl $crate::model::StatsBody for $ty {
            const VERSION: u8 = $version;
            fn stats_type(&self) -> u16 {
                self.multipart_type()
            }
            fn decode_body(
                version: u8,
                ty: u16,
                r: &mut $crate::wire::Reader,
            ) -> Result<Self, $crate::error::OfpError> {
                <$ty>::decode(version, ty, r)
            }
            fn encode_body(&self, version: u8, w: &mut $crate::wire::Writer) {
                <$ty>::encode(self, version, w)
            }
        }
    };
    (WireAction for $ty:ty, $version:expr) => {
        impl $crate::model::WireAction for $ty {
            const VERSION: u8 = $version;
            fn decode(r: &mut $crate::wire::Reader) -> Result<Self, $crate::error::OfpError> {
                <$ty>::decode(r)
            }
            fn encode(&self, w: &mut $crate::wire::Writer) {
                <$ty>::encode(self, w)
            }
            fn validate_list(list: &[Self]) -> Result<(), $crate::error::OfpError> {
                <$ty>::validate_list(list)
            }
        }
    };
}

/// For tests: one property test per codec, `name: strategy => Type;`: every value the
/// strategy makes encodes (`Type::encode`) to bytes that `Type::decode` reads whole,
/// giving the value back ([`crate::wire::assert_roundtrip`]). `name: strategy => Type in
/// VERSION;` does the same for codecs that take the version first
/// ([`crate::wire::assert_roundtrip_in`]).
#[cfg(test)]
macro_rules! roundtrip_tests {
    ($($name:ident: $strategy:expr => $ty:ident $(in $version:expr)?;)*) => {
        proptest::proptest! {
            $(
                #[test]
                fn $name(v in $strategy) {
                    roundtrip_tests!(@check v, $ty $(, $version)?);
                }
            )*
        }
    };
    (@check $v:ident, $ty:ident) => {
        $crate::wire::assert_roundtrip(&$v, $ty::encode, $ty::decode);
    };
    (@check $v:ident, $ty:ident, $version:expr) => {
        $crate::wire::assert_roundtrip_in($version, &$v, $ty::encode, $ty::decode);
    };
}

/// Declares one version family's statistics reply body (1.0 `OFPT_STATS_REPLY`, 1.3 and
/// 1.4 `OFPT_MULTIPART_REPLY`), with the six kinds every version has declared here once:
///
/// ```text
/// stats_replies! {
///     /// The statistics a reply carries.
///     pub enum StatsReplyBody: stats_type, OFP10_VERSION, bad_type, fn type_code {
///         port Port = PORT;
///         Vendor(VendorStats) = VENDOR plain VendorStats,
///         TableDesc(Vec<TableDesc>) = TABLE_DESC list TableDesc since OFP14_VERSION,
///     }
/// }
/// ```
///
/// The shared kinds are description, flows, aggregate, tables, ports (named `port`, as
/// each version names it) and queues; the version's own follow. Each variant names its
/// type number in the types module and how its body is read and written: `plain T`
/// (`T::decode(r)`, `v.encode(w)`), `list T` (such records to the end), `versioned T`
/// (records read with the frame's version first, to the end), `counters T` (the
/// counters of [`crate::model`]: `T::decode_list(version, r)`, each written with the
/// version) or `tlvs T` (`T::decode_list`, each written by `encode`). A variant marked
/// `since V` exists from version `V` on: an older frame with its number gets `bad(ty)`,
/// as does a number not listed. It writes the enum, the type number (`fn`), `decode`
/// and `encode` (both with the frame's version first) and the
/// [`crate::model::StatsBody`] implementation.
macro_rules! stats_replies {
    (
        $(#[$attr:meta])*
        $vis:vis enum $name:ident: $types:ident, $version:ident, $bad:ident, fn $typefn:ident {
            port $port:ident = $port_code:ident;
            $($own:tt)*
        }
    ) => {
        stats_replies! {
            @build [$(#[$attr])*] $vis $name $types $version $bad $typefn {
                Desc(Desc) = DESC plain Desc,
                Flow(Vec<FlowStats>) = FLOW versioned FlowStats,
                Aggregate(AggregateStats) = AGGREGATE plain AggregateStats,
                Table(Vec<TableStats>) = TABLE counters TableStats,
                $port(Vec<PortStats>) = $port_code counters PortStats,
                Queue(Vec<QueueStats>) = QUEUE counters QueueStats,
                $($own)*
            }
        }
    };
    (
        @build [$($attr:tt)*] $vis:vis $name:ident $types:ident $version:ident $bad:ident
            $typefn:ident {
            $($(#[$vattr:meta])* $variant:ident($ty:ty) = $code:ident $codec:ident $elem:ident
                $(since $since:ident)?,)*
        }
    ) => {
        $($attr)*
        $vis enum $name {
            $($(#[$vattr])* $variant($ty),)*
        }

        impl $name {
            /// The type number of the body.
            pub fn $typefn(&self) -> u16 {
                match self {
                    $(Self::$variant(_) => $types::$code,)*
                }
            }

            /// Reads the body of type `ty` in the layout of `version`; `r` must hold
            /// exactly the body.
            pub fn decode(
                version: u8,
                ty: u16,
                r: &mut $crate::wire::Reader,
            ) -> Result<Self, $crate::error::OfpError> {
                Ok(match ty {
                    $($types::$code => {
                        $(if version < $crate::header::$since {
                            return Err($bad(ty));
                        })?
                        Self::$variant(stats_replies!(@dec $codec $elem, version, r))
                    })*
                    _ => return Err($bad(ty)),
                })
            }

            /// Writes the body (without the statistics header) in the layout of
            /// `version`.
            pub fn encode(&self, version: u8, w: &mut $crate::wire::Writer) {
                match self {
                    $(Self::$variant(v) => stats_replies!(@enc $codec, version, v, w),)*
                }
            }
        }

        impl $crate::model::StatsBody for $name {
            const VERSION: u8 = $version;
            fn stats_type(&self) -> u16 {
                self.$typefn()
            }
            fn decode_body(
                version: u8,
                ty: u16,
                r: &mut $crate::wire::Reader,
            ) -> Result<Self, $crate::error::OfpError> {
                Self::decode(version, ty, r)
            }
            fn encode_body(&self, version: u8, w: &mut $crate::wire::Writer) {
                self.encode(version, w)
            }
        }
    };
    (@dec plain $elem:ident, $version:ident, $r:ident) => { $elem::decode($r)? };
    (@dec list $elem:ident, $version:ident, $r:ident) => { $r.list($elem::decode)? };
    (@dec tlvs $elem:ident, $version:ident, $r:ident) => { $elem::decode_list($r)? };
    (@dec versioned $elem:ident, $version:ident, $r:ident) => {
        $r.list(|r| $elem::decode($version, r))?
    };
    (@dec counters $elem:ident, $version:ident, $r:ident) => {
        $elem::decode_list($version, $r)?
    };
    (@enc plain, $version:ident, $v:ident, $w:ident) => { $v.encode($w) };
    (@enc list, $version:ident, $v:ident, $w:ident) => { $v.iter().for_each(|x| x.encode($w)) };
    (@enc tlvs, $version:ident, $v:ident, $w:ident) => { $v.iter().for_each(|x| x.encode($w)) };
    (@enc versioned, $version:ident, $v:ident, $w:ident) => {
        $v.iter().for_each(|x| x.encode($version, $w))
    };
    (@enc counters, $version:ident, $v:ident, $w:ident) => {
        $v.iter().for_each(|x| x.encode($version, $w))
    };
}
