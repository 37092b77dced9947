//! The flow key: every OpenFlow 1.3 match field of a packet in a fixed array of words.
//!
//! A [`FlowKey`] is `KEY_WORDS` u64 words. Each [`Field`] lives at a fixed place: a bit
//! range inside one word (fields up to 64 bits) or two whole words (the 128-bit IPv6
//! addresses). Fields that the OpenFlow prerequisites make mutually exclusive share a
//! place (TCP/UDP/SCTP ports; IPv4 and ARP protocol addresses; ARP hardware addresses and
//! IPv6 ND link-layer addresses), exactly as a rule on one of them must also match the
//! protocol that selects it. A field absent from the packet is zero.
//!
//! A [`FlowMatch`] is a key and a mask of the same layout: a packet matches when
//! `packet & mask == key & mask` word by word. Masking and hashing therefore work on whole
//! words, and a classifier subtable only needs to look at the words its mask uses.
//!
//! Invariant: `FlowMatch::key` has no bits outside `mask` (setters mask the value).

/// Number of u64 words in a key.
pub const KEY_WORDS: usize = 18;

/// The packet's header fields, laid out as described in the module comment.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(C)]
pub struct FlowKey {
    pub words: [u64; KEY_WORDS],
}

/// Where a field lives in the key: `bits` bits at `shift` of word `word`, or two whole
/// words (`word`, `word + 1`, high half first) when `bits == 128`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    pub word: usize,
    pub shift: u32,
    pub bits: u32,
}

macro_rules! fields {
    ($( $(#[$doc:meta])* $name:ident = ($word:expr, $shift:expr, $bits:expr) ),* $(,)?) => {
        /// A matchable field of the flow key.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Field { $( $(#[$doc])* $name, )* }

        impl Field {
            /// Every field, in declaration order.
            pub const ALL: &'static [Field] = &[ $( Field::$name, )* ];

            /// Where the field lives in the key.
            pub const fn place(self) -> Place {
                match self {
                    $( Field::$name => Place { word: $word, shift: $shift, bits: $bits }, )*
                }
            }
        }
    };
}

fields! {
    InPort = (0, 32, 32),
    InPhyPort = (0, 0, 32),
    Metadata = (1, 0, 64),
    TunnelId = (2, 0, 64),
    EthDst = (3, 16, 48),
    EthType = (3, 0, 16),
    EthSrc = (4, 16, 48),
    /// 13 bits: `OFPVID_PRESENT` (0x1000) | VID, zero when untagged.
    VlanVid = (4, 0, 16),
    /// IPv4 source, or ARP SPA.
    Ipv4Src = (5, 32, 32),
    /// IPv4 destination, or ARP TPA.
    Ipv4Dst = (5, 0, 32),
    /// TCP, UDP or SCTP source port.
    TpSrc = (6, 48, 16),
    /// TCP, UDP or SCTP destination port.
    TpDst = (6, 32, 16),
    IpProto = (6, 24, 8),
    IpDscp = (6, 16, 8),
    IpEcn = (6, 8, 8),
    VlanPcp = (6, 0, 8),
    /// ICMPv4 or ICMPv6 type.
    IcmpType = (7, 56, 8),
    /// ICMPv4 or ICMPv6 code.
    IcmpCode = (7, 48, 8),
    ArpOp = (7, 32, 16),
    MplsLabel = (7, 0, 32),
    MplsTc = (8, 56, 8),
    MplsBos = (8, 48, 8),
    /// The `OFPIEH_*` bits of the IPv6 extension headers seen.
    Ipv6Exthdr = (8, 32, 16),
    PbbIsid = (8, 0, 24),
    /// The I-TAG's "use customer addresses" bit (OpenFlow 1.4's `PBB_UCA`).
    PbbUca = (8, 24, 8),
    Ipv6Flabel = (9, 32, 32),
    /// TCP flags (12 bits); not an OpenFlow 1.3 match field, kept for the tracer and later
    /// versions.
    TcpFlags = (9, 16, 16),
    /// The IP fragment state: bit 0 = is a fragment, bit 1 = not the first fragment.
    IpFrag = (9, 8, 8),
    /// IPv4 or IPv6 TTL / hop limit (for the tracer and TTL actions; not matchable in 1.3).
    IpTtl = (9, 0, 8),
    Ipv6Src = (10, 0, 128),
    Ipv6Dst = (12, 0, 128),
    Ipv6NdTarget = (14, 0, 128),
    /// ARP SHA, or IPv6 ND source link-layer address.
    ArpSha = (16, 16, 48),
    /// ARP THA, or IPv6 ND target link-layer address.
    ArpTha = (17, 16, 48),
}

impl Field {
    /// The mask of all bits of the field, as a value of its width.
    pub const fn full(self) -> u128 {
        let b = self.place().bits;
        if b == 128 {
            u128::MAX
        } else {
            (1u128 << b) - 1
        }
    }
}

impl FlowKey {
    pub const ZERO: FlowKey = FlowKey { words: [0; KEY_WORDS] };

    /// Reads a field (right-aligned).
    #[inline]
    pub fn get(&self, f: Field) -> u128 {
        let p = f.place();
        if p.bits == 128 {
            ((self.words[p.word] as u128) << 64) | self.words[p.word + 1] as u128
        } else {
            let m = if p.bits == 64 { u64::MAX } else { (1u64 << p.bits) - 1 };
            ((self.words[p.word] >> p.shift) & m) as u128
        }
    }

    /// Writes a field; bits of `v` beyond the field's width are dropped.
    #[inline]
    pub fn set(&mut self, f: Field, v: u128) {
        let p = f.place();
        if p.bits == 128 {
            self.words[p.word] = (v >> 64) as u64;
            self.words[p.word + 1] = v as u64;
        } else {
            let m = if p.bits == 64 { u64::MAX } else { (1u64 << p.bits) - 1 };
            let w = &mut self.words[p.word];
            *w = (*w & !(m << p.shift)) | ((v as u64 & m) << p.shift);
        }
    }

    /// `self & mask`, word by word.
    #[inline]
    pub fn masked(&self, mask: &FlowKey) -> FlowKey {
        let mut out = FlowKey::ZERO;
        for i in 0..KEY_WORDS {
            out.words[i] = self.words[i] & mask.words[i];
        }
        out
    }

    /// `self | other`, word by word (the union of two masks).
    #[inline]
    pub fn union(&self, other: &FlowKey) -> FlowKey {
        let mut out = *self;
        for (o, w) in out.words.iter_mut().zip(other.words) {
            *o |= w;
        }
        out
    }
}

impl std::fmt::Debug for FlowKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_map();
        for &fld in Field::ALL {
            let v = self.get(fld);
            if v != 0 {
                d.entry(&fld, &format_args!("{v:#x}"));
            }
        }
        d.finish()
    }
}

/// A match: the values and the mask of the bits that must be equal.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, Debug)]
pub struct FlowMatch {
    pub key: FlowKey,
    pub mask: FlowKey,
}

impl FlowMatch {
    /// The match-everything match.
    pub const ANY: FlowMatch = FlowMatch { key: FlowKey::ZERO, mask: FlowKey::ZERO };

    /// Matches `f` exactly equal to `v`.
    pub fn exact(mut self, f: Field, v: u128) -> Self {
        self.set(f, v, f.full());
        self
    }

    /// Matches the bits of `f` selected by `mask` against `v`.
    pub fn masked(mut self, f: Field, v: u128, mask: u128) -> Self {
        self.set(f, v, mask);
        self
    }

    /// Sets field `f` to match `v` under `mask` (the value is masked first).
    pub fn set(&mut self, f: Field, v: u128, mask: u128) {
        self.mask.set(f, mask);
        self.key.set(f, v & mask);
    }

    /// Whether `pkt` matches.
    #[inline]
    pub fn matches(&self, pkt: &FlowKey) -> bool {
        (0..KEY_WORDS).all(|i| pkt.words[i] & self.mask.words[i] == self.key.words[i])
    }
}

/// A [`FlowMatch`] in the room its constraints need, for storing many: which words its
/// mask sets (bit `i` of `words` for word `i`), and for each of those, in order, the
/// key's word and the mask's. A rule keeps its match so (the 288 bytes of a
/// `FlowMatch` would be most of a rule); [`CompactMatch::get`] gives it back (key bits
/// outside the mask, which match nothing, are not kept).
/// Invariant: `vals` holds two words per bit of `words`, and no mask word is zero.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Default)]
pub struct CompactMatch {
    words: u32,
    vals: Box<[u64]>,
}

const _: () = assert!(KEY_WORDS <= 32, "a CompactMatch names words by a 32-bit set");

impl CompactMatch {
    /// The match as a [`FlowMatch`].
    pub fn get(&self) -> FlowMatch {
        let mut m = FlowMatch::ANY;
        let mut vals = self.vals.chunks_exact(2);
        for i in 0..KEY_WORDS {
            if self.words & (1 << i) != 0 {
                if let Some([k, mask]) = vals.next() {
                    m.key.words[i] = *k;
                    m.mask.words[i] = *mask;
                }
            }
        }
        m
    }

    /// Whether it matches every packet (no mask bit set).
    pub fn is_any(&self) -> bool {
        self.words == 0
    }
}

impl From<&FlowMatch> for CompactMatch {
    fn from(m: &FlowMatch) -> CompactMatch {
        let mut words = 0;
        let mut vals = Vec::new();
        for i in 0..KEY_WORDS {
            if m.mask.words[i] != 0 {
                words |= 1 << i;
                vals.extend([m.key.words[i] & m.mask.words[i], m.mask.words[i]]);
            }
        }
        CompactMatch { words, vals: vals.into_boxed_slice() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_compact_match_gives_the_match_back() {
        let m = FlowMatch::ANY
            .exact(Field::InPort, 3)
            .masked(Field::Ipv4Src, 0x0a00_0001, 0xffff_ff00)
            .exact(Field::TpDst, 80);
        let c = CompactMatch::from(&m);
        assert_eq!(c.get(), m);
        assert!(!c.is_any() && CompactMatch::from(&FlowMatch::ANY).is_any());
        assert_eq!(CompactMatch::from(&FlowMatch::ANY).get(), FlowMatch::ANY);
        assert!(std::mem::size_of::<CompactMatch>() <= 24);
    }

    #[test]
    fn fields_do_not_overlap_and_fit() {
        let mut used = [0u64; KEY_WORDS];
        for &f in Field::ALL {
            let p = f.place();
            if p.bits == 128 {
                for w in [p.word, p.word + 1] {
                    assert_eq!(used[w], 0, "{f:?} overlaps");
                    used[w] = u64::MAX;
                }
            } else {
                assert!(p.shift + p.bits <= 64, "{f:?} overflows its word");
                let m = if p.bits == 64 { u64::MAX } else { ((1u64 << p.bits) - 1) << p.shift };
                assert_eq!(used[p.word] & m, 0, "{f:?} overlaps");
                used[p.word] |= m;
            }
        }
    }

    #[test]
    fn set_get_round_trip_every_field() {
        for &f in Field::ALL {
            let mut k = FlowKey::ZERO;
            k.set(f, u128::MAX);
            assert_eq!(k.get(f), f.full(), "{f:?}");
            for &g in Field::ALL {
                if g != f {
                    assert_eq!(k.get(g), 0, "{f:?} leaks into {g:?}");
                }
            }
            k.set(f, 0x1234 & f.full());
            assert_eq!(k.get(f), 0x1234 & f.full());
        }
    }

    #[test]
    fn masked_match() {
        let m = FlowMatch::ANY.exact(Field::EthType, 0x0800).masked(
            Field::Ipv4Dst,
            0x0a01_0203,
            0xffff_0000,
        );
        assert_eq!(m.key.get(Field::Ipv4Dst), 0x0a01_0000);
        let mut p = FlowKey::ZERO;
        p.set(Field::EthType, 0x0800);
        p.set(Field::Ipv4Dst, 0x0a01_ffff);
        assert!(m.matches(&p));
        p.set(Field::Ipv4Dst, 0x0a02_0000);
        assert!(!m.matches(&p));
    }
}
