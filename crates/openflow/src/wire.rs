//! Byte-level reading and writing for the codec.
//!
//! [`Reader`] is a cursor over a borrowed slice whose accessors never panic: running past
//! the end returns the `OfpError` given by the caller's context (normally
//! `BadRequest/BadLen`), so every decoder is total over its input. [`Writer`] appends
//! big-endian fields to a `Vec<u8>` and patches length fields once a body is known.

use crate::error::{ErrorKind, OfpError};
use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};

/// An Ethernet MAC address.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct MacAddr(pub [u8; 6]);

impl MacAddr {
    pub const BROADCAST: MacAddr = MacAddr([0xff; 6]);
    pub const ZERO: MacAddr = MacAddr([0; 6]);
}

impl fmt::Display for MacAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        write!(f, "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", b[0], b[1], b[2], b[3], b[4], b[5])
    }
}

impl fmt::Debug for MacAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::str::FromStr for MacAddr {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let mut out = [0u8; 6];
        let mut n = 0;
        for part in s.split(':') {
            if n == 6 || part.is_empty() || part.len() > 2 {
                return Err(format!("invalid MAC address `{s}`"));
            }
            out[n] =
                u8::from_str_radix(part, 16).map_err(|_| format!("invalid MAC address `{s}`"))?;
            n += 1;
        }
        if n != 6 {
            return Err(format!("invalid MAC address `{s}`"));
        }
        Ok(MacAddr(out))
    }
}

/// A value with one fixed-size big-endian form on the wire: what a `record!` field
/// holds. Enums with an `Unknown(n)` variant implement it too, so any bytes read.
pub trait Field: Sized {
    /// Bytes on the wire.
    const LEN: usize;
    /// Reads the value.
    fn read(r: &mut Reader) -> Result<Self, OfpError>;
    /// Writes the value.
    fn write(&self, w: &mut Writer);
    /// Every value of the type, for property tests.
    #[cfg(test)]
    fn arb() -> proptest::strategy::BoxedStrategy<Self>;
}

/// `Field` for values that convert to and from their wire bytes.
macro_rules! field_via_bytes {
    ($($ty:ty: $n:literal, $from:expr, $to:expr;)*) => {$(
        impl Field for $ty {
            const LEN: usize = $n;
            fn read(r: &mut Reader) -> Result<Self, OfpError> {
                Ok($from(r.array::<$n>()?))
            }
            fn write(&self, w: &mut Writer) {
                w.bytes(&$to(*self));
            }
            #[cfg(test)]
            fn arb() -> proptest::strategy::BoxedStrategy<Self> {
                use proptest::strategy::Strategy;
                proptest::arbitrary::any::<[u8; $n]>().prop_map($from).boxed()
            }
        }
    )*};
}

field_via_bytes! {
    u8: 1, u8::from_be_bytes, u8::to_be_bytes;
    u16: 2, u16::from_be_bytes, u16::to_be_bytes;
    u32: 4, u32::from_be_bytes, u32::to_be_bytes;
    u64: 8, u64::from_be_bytes, u64::to_be_bytes;
    i32: 4, i32::from_be_bytes, i32::to_be_bytes;
    MacAddr: 6, MacAddr, |m: MacAddr| m.0;
    Ipv4Addr: 4, Ipv4Addr::from, |a: Ipv4Addr| a.octets();
    Ipv6Addr: 16, Ipv6Addr::from, |a: Ipv6Addr| a.octets();
}

impl<T: Field + std::fmt::Debug + 'static, const N: usize> Field for [T; N] {
    const LEN: usize = N * T::LEN;
    fn read(r: &mut Reader) -> Result<Self, OfpError> {
        let mut items = Vec::with_capacity(N);
        for _ in 0..N {
            items.push(T::read(r)?);
        }
        Ok(items.try_into().expect("N items read"))
    }
    fn write(&self, w: &mut Writer) {
        for item in self {
            item.write(w);
        }
    }
    #[cfg(test)]
    fn arb() -> proptest::strategy::BoxedStrategy<Self> {
        use proptest::strategy::Strategy;
        proptest::array::uniform(T::arb()).boxed()
    }
}

/// A value read and written on its own, one after another to the end of what holds it:
/// the element of a `record!`'s `[list]` field. Every [`Field`] is one.
pub trait ListItem: Sized {
    /// Reads one element.
    fn read_item(r: &mut Reader) -> Result<Self, OfpError>;
    /// Writes one element.
    fn write_item(&self, w: &mut Writer);
    /// Every element, for property tests.
    #[cfg(test)]
    fn arb_item() -> proptest::strategy::BoxedStrategy<Self>;
}

impl<T: Field> ListItem for T {
    fn read_item(r: &mut Reader) -> Result<Self, OfpError> {
        T::read(r)
    }
    fn write_item(&self, w: &mut Writer) {
        self.write(w)
    }
    #[cfg(test)]
    fn arb_item() -> proptest::strategy::BoxedStrategy<Self> {
        T::arb()
    }
}

/// Reads [`ListItem`]s until `r` is empty.
pub fn read_items<T: ListItem>(r: &mut Reader) -> Result<Vec<T>, OfpError> {
    r.list(T::read_item)
}

/// Writes each of `items`.
pub fn write_items<T: ListItem>(items: &[T], w: &mut Writer) {
    items.iter().for_each(|x| x.write_item(w));
}

/// Takes a length-prefixed element as a sub-reader: the u16 length at `len_offset`
/// must be at least `min` and fit in `r` (`OFPBRC_BAD_LEN` otherwise).
pub(crate) fn take_sized<'a>(
    r: &mut Reader<'a>,
    len_offset: usize,
    min: usize,
    what: &str,
) -> Result<Reader<'a>, OfpError> {
    let len = r.peek_u16(len_offset)? as usize;
    if len < min || len > r.remaining() {
        return Err(OfpError::new(
            ErrorKind::BAD_REQUEST_BAD_LEN,
            format!(
                "{what} length {len} (at least {min} and at most the {} bytes left)",
                r.remaining()
            ),
        ));
    }
    r.sub(len)
}

/// Cuts `s` to at most `n` bytes on a character boundary.
fn truncate_on_char(s: &mut String, n: usize) {
    if s.len() > n {
        let mut end = n;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
    }
}

/// A bounds-checked cursor over received bytes. No accessor panics.
#[derive(Clone, Debug)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    /// Bytes not yet consumed.
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// Offset of the cursor from the start of the slice this reader was made from.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// The unconsumed bytes, without consuming them.
    pub fn rest(&self) -> &'a [u8] {
        &self.buf[self.pos..]
    }

    fn short(&self, want: usize) -> OfpError {
        OfpError::new(
            ErrorKind::BAD_REQUEST_BAD_LEN,
            format!(
                "truncated: need {want} bytes at offset {}, {} left",
                self.pos,
                self.remaining()
            ),
        )
    }

    /// Takes the next `n` bytes.
    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8], OfpError> {
        if self.remaining() < n {
            return Err(self.short(n));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// Takes the next `n` bytes as a sub-reader (for a length-delimited structure).
    pub fn sub(&mut self, n: usize) -> Result<Reader<'a>, OfpError> {
        Ok(Reader::new(self.bytes(n)?))
    }

    /// Takes everything that is left.
    pub fn take_rest(&mut self) -> &'a [u8] {
        let s = &self.buf[self.pos..];
        self.pos = self.buf.len();
        s
    }

    pub fn skip(&mut self, n: usize) -> Result<(), OfpError> {
        self.bytes(n).map(|_| ())
    }

    pub fn array<const N: usize>(&mut self) -> Result<[u8; N], OfpError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.bytes(N)?);
        Ok(out)
    }

    pub fn u8(&mut self) -> Result<u8, OfpError> {
        Ok(self.array::<1>()?[0])
    }

    pub fn u16(&mut self) -> Result<u16, OfpError> {
        Ok(u16::from_be_bytes(self.array()?))
    }

    pub fn u32(&mut self) -> Result<u32, OfpError> {
        Ok(u32::from_be_bytes(self.array()?))
    }

    pub fn u64(&mut self) -> Result<u64, OfpError> {
        Ok(u64::from_be_bytes(self.array()?))
    }

    pub fn mac(&mut self) -> Result<MacAddr, OfpError> {
        Ok(MacAddr(self.array()?))
    }

    pub fn ipv4(&mut self) -> Result<Ipv4Addr, OfpError> {
        Ok(Ipv4Addr::from(self.array::<4>()?))
    }

    pub fn ipv6(&mut self) -> Result<Ipv6Addr, OfpError> {
        Ok(Ipv6Addr::from(self.array::<16>()?))
    }

    /// Reads a fixed-size, NUL-padded string field (port names, descriptions). Bytes
    /// after the first NUL are dropped; invalid UTF-8 is replaced, and the result is cut
    /// on a character boundary to at most `n` bytes, so [`Writer::fixed_str`] writes it
    /// back unchanged.
    pub fn fixed_str(&mut self, n: usize) -> Result<String, OfpError> {
        let raw = self.bytes(n)?;
        let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
        let mut s = String::from_utf8_lossy(&raw[..end]).into_owned();
        truncate_on_char(&mut s, n);
        Ok(s)
    }

    /// Reads elements with `f` until the reader is empty.
    pub fn list<T>(
        &mut self,
        mut f: impl FnMut(&mut Reader<'a>) -> Result<T, OfpError>,
    ) -> Result<Vec<T>, OfpError> {
        let mut out = Vec::new();
        while !self.is_empty() {
            out.push(f(self)?);
        }
        Ok(out)
    }

    /// [`Reader::list`] of fixed-size entries, `size` bytes each: `OFPBRC_BAD_LEN` unless
    /// what is left is a whole number of them.
    pub fn fixed_list<T>(
        &mut self,
        size: usize,
        f: impl FnMut(&mut Reader<'a>) -> Result<T, OfpError>,
    ) -> Result<Vec<T>, OfpError> {
        if !self.remaining().is_multiple_of(size) {
            return Err(OfpError::new(
                ErrorKind::BAD_REQUEST_BAD_LEN,
                format!(
                    "a list of {} bytes is not a whole number of {size}-byte entries",
                    self.remaining()
                ),
            ));
        }
        self.list(f)
    }

    /// Fails with `OFPBRC_BAD_LEN` if bytes are left after `what`, something that
    /// must fill the reader (a message or statistics body).
    pub fn expect_end(&self, what: impl fmt::Display) -> Result<(), OfpError> {
        if self.is_empty() {
            return Ok(());
        }
        Err(OfpError::new(
            ErrorKind::BAD_REQUEST_BAD_LEN,
            format!("{} trailing bytes after the {what}", self.remaining()),
        ))
    }

    /// Peeks a big-endian u16 at `offset` bytes past the cursor without consuming.
    pub fn peek_u16(&self, offset: usize) -> Result<u16, OfpError> {
        let start = self.pos + offset;
        match self.buf.get(start..start + 2) {
            Some(b) => Ok(u16::from_be_bytes([b[0], b[1]])),
            None => Err(self.short(offset + 2)),
        }
    }

    /// Peeks a big-endian u32 at `offset` bytes past the cursor without consuming.
    pub fn peek_u32(&self, offset: usize) -> Result<u32, OfpError> {
        let start = self.pos + offset;
        match self.buf.get(start..start + 4) {
            Some(b) => Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]])),
            None => Err(self.short(offset + 4)),
        }
    }
}

/// How a kind of 8-aligned TLV (actions, instructions) is framed: its name in messages,
/// the names and fixed sizes of its types, and the error a framing fault gets.
pub(crate) struct Tlv8 {
    pub what: &'static str,
    pub type_name: fn(u16) -> &'static str,
    pub fixed_len: fn(u16) -> Option<usize>,
    pub bad_len: ErrorKind,
}

impl Tlv8 {
    /// Takes one `type:u16, len:u16, body` TLV whose `len` counts the header, is a
    /// multiple of 8 and at least 8, fits in `r`, and equals the type's fixed size if it
    /// has one; any fault is `self.bad_len`. Returns the type, `len` and the body after
    /// the 4-byte header.
    pub fn take<'a>(&self, r: &mut Reader<'a>) -> Result<(u16, usize, Reader<'a>), OfpError> {
        let err = |detail: String| OfpError::new(self.bad_len, detail);
        let what = self.what;
        if r.remaining() < 4 {
            return Err(err(format!("{what} header needs 4 bytes, {} left", r.remaining())));
        }
        let ty = r.peek_u16(0).map_err(|e| err(e.detail))?;
        let len = usize::from(r.peek_u16(2).map_err(|e| err(e.detail))?);
        let name = (self.type_name)(ty);
        if len < 8 || len % 8 != 0 {
            return Err(err(format!(
                "{name} {what} (type {ty}) has length {len}: must be a multiple of 8, at least 8"
            )));
        }
        if len > r.remaining() {
            return Err(err(format!(
                "{name} {what} (type {ty}) has length {len} but only {} bytes are left",
                r.remaining()
            )));
        }
        if let Some(want) = (self.fixed_len)(ty) {
            if len != want {
                return Err(err(format!("{name} {what} has length {len}, must be {want}")));
            }
        }
        let mut body = r.sub(len)?;
        body.skip(4)?;
        Ok((ty, len, body))
    }
}

/// Appends big-endian fields to an owned buffer.
#[derive(Clone, Debug, Default)]
pub struct Writer {
    pub buf: Vec<u8>,
}

impl Writer {
    pub fn new() -> Self {
        Writer { buf: Vec::new() }
    }

    pub fn with_capacity(n: usize) -> Self {
        Writer { buf: Vec::with_capacity(n) }
    }

    pub fn len(&self) -> usize {
        self.buf.len()
    }

    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    pub fn into_vec(self) -> Vec<u8> {
        self.buf
    }

    pub fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }

    pub fn u16(&mut self, v: u16) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    pub fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    pub fn u64(&mut self, v: u64) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    pub fn bytes(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }

    pub fn mac(&mut self, m: MacAddr) {
        self.buf.extend_from_slice(&m.0);
    }

    pub fn ipv4(&mut self, a: Ipv4Addr) {
        self.buf.extend_from_slice(&a.octets());
    }

    pub fn ipv6(&mut self, a: Ipv6Addr) {
        self.buf.extend_from_slice(&a.octets());
    }

    /// Appends `n` zero bytes.
    pub fn zeros(&mut self, n: usize) {
        self.buf.resize(self.buf.len() + n, 0);
    }

    /// Pads with zeros until the length from `start` is a multiple of `align`.
    pub fn pad_to(&mut self, start: usize, align: usize) {
        let len = self.buf.len() - start;
        let padded = len.div_ceil(align) * align;
        self.zeros(padded - len);
    }

    /// Writes `s` into a fixed `n`-byte field, NUL padded. A string of exactly `n` bytes
    /// fills the field without a terminator (as received); a longer one is cut on a
    /// character boundary.
    pub fn fixed_str(&mut self, s: &str, n: usize) {
        let mut end = s.len().min(n);
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        self.buf.extend_from_slice(&s.as_bytes()[..end]);
        self.zeros(n - end);
    }

    /// Overwrites a big-endian u16 at absolute offset `at` (a length field written as a
    /// placeholder before its body).
    pub fn patch_u16(&mut self, at: usize, v: u16) {
        self.buf[at..at + 2].copy_from_slice(&v.to_be_bytes());
    }

    /// Overwrites a big-endian u32 at absolute offset `at`.
    pub fn patch_u32(&mut self, at: usize, v: u32) {
        self.buf[at..at + 4].copy_from_slice(&v.to_be_bytes());
    }

    /// Writes a length-prefixed element with `body`, then sets its u16 length field,
    /// `len_at` bytes into it (which `body` wrote as a placeholder), to its length.
    pub fn sized(&mut self, len_at: usize, body: impl FnOnce(&mut Writer)) {
        let start = self.len();
        body(self);
        self.patch_len16(start + len_at, start);
    }

    /// Writes a `type:u16, len:u16, body` TLV of the kind [`Tlv8`] reads: the header,
    /// `body`, zeros up to a multiple of 8, and `len` counting all of it.
    pub fn tlv8(&mut self, ty: u16, body: impl FnOnce(&mut Writer)) {
        let start = self.len();
        self.u16(ty);
        self.u16(0);
        body(self);
        self.pad_to(start, 8);
        self.patch_len16(start + 2, start);
    }

    /// Patches the u16 length field at `at` with the number of bytes written since
    /// `start`. Lengths beyond 65535 saturate; the message-level encoder rejects them.
    pub fn patch_len16(&mut self, at: usize, start: usize) {
        let len = self.buf.len() - start;
        self.patch_u16(at, u16::try_from(len).unwrap_or(u16::MAX));
    }
}

/// Any `len` bytes (a length or a range of lengths), for tests' strategies.
#[cfg(test)]
pub(crate) fn arb_bytes(
    len: impl Into<proptest::collection::SizeRange>,
) -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
    proptest::collection::vec(proptest::arbitrary::any::<u8>(), len)
}

/// The bytes `enc` writes, for tests: `encoded(|w| x.encode(w))`.
#[cfg(test)]
pub(crate) fn encoded(enc: impl FnOnce(&mut Writer)) -> Vec<u8> {
    let mut w = Writer::new();
    enc(&mut w);
    w.buf
}

/// For tests: encodes `v` with `enc`, asserts that `dec` reads all of those bytes and
/// gives `v` back, and returns the bytes (for checks of their length or content). Inside
/// `proptest!` a failed assertion fails the case as `prop_assert_eq!` does.
#[cfg(test)]
pub(crate) fn assert_roundtrip<T: PartialEq + fmt::Debug>(
    v: &T,
    enc: impl FnOnce(&T, &mut Writer),
    dec: impl FnOnce(&mut Reader) -> Result<T, OfpError>,
) -> Vec<u8> {
    let bytes = encoded(|w| enc(v, w));
    let mut r = Reader::new(&bytes);
    match dec(&mut r) {
        Ok(back) => assert_eq!(&back, v, "decoded value differs from the encoded one"),
        Err(e) => panic!("{v:?} encodes to {bytes:02x?}, which does not decode: {e:?}"),
    }
    assert!(r.is_empty(), "{} of {bytes:02x?} left unread", r.remaining());
    bytes
}

/// [`assert_roundtrip`] for what OpenFlow pads to a multiple of 8 bytes (actions,
/// instructions, properties, table features): also asserts that the bytes are.
#[cfg(test)]
pub(crate) fn assert_padded_roundtrip<T: PartialEq + fmt::Debug>(
    v: &T,
    enc: impl FnOnce(&T, &mut Writer),
    dec: impl FnOnce(&mut Reader) -> Result<T, OfpError>,
) -> Vec<u8> {
    let bytes = assert_roundtrip(v, enc, dec);
    assert!(bytes.len().is_multiple_of(8), "{v:?}: {} bytes, not padded to 8", bytes.len());
    bytes
}

/// For tests: asserts that `dec` refuses each of `cases` with an error of `kind`.
#[cfg(test)]
pub(crate) fn assert_refused<T: fmt::Debug>(
    cases: &[&[u8]],
    dec: impl Fn(&mut Reader) -> Result<T, OfpError>,
    kind: ErrorKind,
) {
    for bytes in cases {
        match dec(&mut Reader::new(bytes)) {
            Ok(v) => panic!("{bytes:02x?} decodes, to {v:?}"),
            Err(e) => assert_eq!(e.kind, kind, "{bytes:02x?}: {e}"),
        }
    }
}

/// [`assert_roundtrip`] for codecs that take the protocol version first.
#[cfg(test)]
pub(crate) fn assert_roundtrip_in<T: PartialEq + fmt::Debug>(
    version: u8,
    v: &T,
    enc: impl FnOnce(&T, u8, &mut Writer),
    dec: impl FnOnce(u8, &mut Reader) -> Result<T, OfpError>,
) -> Vec<u8> {
    assert_roundtrip(v, |v, w| enc(v, version, w), |r| dec(version, r))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reader_never_reads_past_end() {
        let mut r = Reader::new(&[1, 2, 3]);
        assert_eq!(r.u16().unwrap(), 0x0102);
        let e = r.u16().unwrap_err();
        assert_eq!(e.kind, ErrorKind::BAD_REQUEST_BAD_LEN);
        assert_eq!(r.u8().unwrap(), 3);
        assert!(r.is_empty());
        assert!(r.peek_u16(0).is_err());
    }

    #[test]
    fn writer_pads_and_patches() {
        let mut w = Writer::new();
        w.u16(0);
        w.u8(7);
        w.pad_to(0, 8);
        assert_eq!(w.len(), 8);
        w.patch_len16(0, 0);
        assert_eq!(&w.buf[..3], &[0, 8, 7]);
        w.fixed_str("eth0", 6);
        assert_eq!(&w.buf[8..], b"eth0\0\0");
    }

    #[test]
    fn fixed_strings_survive_a_round_trip() {
        for raw in [
            &b"0123456789abcdef"[..],
            b"ab\0cdefghijklmno",
            b"\xff\xfe\xfdabcdefghijklm",
            b"caf\xc3\xa9\0\0\0\0\0\0\0\0\0\0\0",
        ] {
            let s = Reader::new(raw).fixed_str(16).unwrap();
            let mut w = Writer::new();
            w.fixed_str(&s, 16);
            assert_eq!(w.len(), 16);
            assert_eq!(Reader::new(&w.buf).fixed_str(16).unwrap(), s);
        }
        assert_eq!(Reader::new(b"0123456789abcdef").fixed_str(16).unwrap(), "0123456789abcdef");
    }

    #[test]
    fn mac_parse_and_print() {
        let m: MacAddr = "00:1a:2B:3c:4d:5e".parse().unwrap();
        assert_eq!(m.to_string(), "00:1a:2b:3c:4d:5e");
        assert!("00:1a:2b:3c:4d".parse::<MacAddr>().is_err());
        assert!("00:1a:2b:3c:4d:5e:6f".parse::<MacAddr>().is_err());
        assert!("zz:1a:2b:3c:4d:5e".parse::<MacAddr>().is_err());
    }
}
