//! OpenFlow 1.3 matches normalised for comparison, and the two relations flow-mod
//! semantics need between them: "covers" (non-strict modify/delete and flow-stats
//! filters) and "overlaps" (`OFPFF_CHECK_OVERLAP`).
//!
//! A [`NormMatch`] is the set of a match's constraints, one per field, sorted by OXM
//! header (class, field), each as `(value, mask)` wire bytes of the field's width with:
//! - an absent mask written out as all ones, and mask bits beyond a field's meaningful
//!   width cleared (`VLAN_VID` 13 bits, `IPV6_FLABEL` 20, `IPV6_EXTHDR` 9): those bits
//!   constrain nothing, so `vlan_vid=0x1005/0xffff` equals `vlan_vid=0x1005`;
//! - value bits outside the mask cleared;
//! - fully wildcarded fields (mask all zero) dropped, as spec §7.2.3.5 makes an all-zero
//!   mask equal to omitting the TLV.
//!
//! Hence two matches that select the same packets field by field compare equal whatever
//! their TLV order or mask spelling. Prerequisites are not expanded: `tcp_dst=80` is only
//! valid with `eth_type` and `ip_proto`, which the match must then carry itself.

use openflow::match13::Match;
use openflow::oxm::{OxmField, OXM_CLASS_BASIC};

/// One field's constraint: a packet's field `p` satisfies it when `p & mask == value`.
/// Invariants: `value.len() == mask.len()`, `value & !mask == 0`, mask not all zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Constraint<'a> {
    /// The OXM header without `hasmask` and length: `class << 16 | field << 9`.
    header: u32,
    value: &'a [u8],
    mask: &'a [u8],
}

/// A match normalised for comparison (see the module comment), packed in one
/// allocation: per constraint, a 4-byte big-endian word — its header (`class << 16 |
/// field << 9`) with, in the 9 bits a header leaves zero, bit 8 set when the mask is
/// full (all the field's meaningful bits: then it is not stored) and the width `w` in
/// bits 0..8 — then `w` value bytes and, unless full, `w` mask bytes. An exact 5-tuple
/// match is 25 bytes. Invariant: constraints sorted by header, at most one per header,
/// "full" set exactly when the mask is full; so two normal forms are equal exactly when
/// their bytes are, and ordering the bytes orders the matches (by first header, ...).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NormMatch {
    packed: Box<[u8]>,
}

/// The constraints of a packed normal form, in order.
struct Constraints<'a>(&'a [u8]);

/// Bit 8 of a constraint's word: its mask is full (see [`NormMatch`]).
const FULL: u32 = 1 << 8;

/// All ones, the full mask of a field without a narrower meaning (an OXM value is at
/// most 255 bytes).
static ONES: [u8; 255] = [0xff; 255];

impl<'a> Iterator for Constraints<'a> {
    type Item = Constraint<'a>;

    fn next(&mut self) -> Option<Constraint<'a>> {
        let (head, rest) = self.0.split_first_chunk::<4>()?;
        let word = u32::from_be_bytes(*head);
        let (header, w) = (word & 0xffff_fe00, (word & 0xff) as usize);
        let (value, rest) = rest.split_at_checked(w)?;
        let (mask, rest) = if word & FULL != 0 {
            (full_mask(header, w)?, rest)
        } else {
            rest.split_at_checked(w)?
        };
        self.0 = rest;
        Some(Constraint { header, value, mask })
    }
}

/// The full mask of a field of `header` and width `w`: its meaningful bits.
fn full_mask(header: u32, w: usize) -> Option<&'static [u8]> {
    match narrow_mask(header) {
        Some(m) if m.len() == w => Some(m),
        Some(_) => None,
        None => ONES.get(..w),
    }
}

/// The meaningful bits of the fields narrower than their wire width, by header.
fn narrow_mask(header: u32) -> Option<&'static [u8]> {
    if header >> 16 != u32::from(OXM_CLASS_BASIC) {
        return None;
    }
    match OxmField::ALL.get((header >> 9 & 0x7f) as usize)? {
        OxmField::VlanVid => Some(&[0x1f, 0xff]),
        OxmField::Ipv6Flabel => Some(&[0x00, 0x0f, 0xff, 0xff]),
        OxmField::Ipv6Exthdr => Some(&[0x01, 0xff]),
        _ => None,
    }
}

impl NormMatch {
    /// Normalises `m`. Never fails: a match that `Match::validate` would refuse (a
    /// duplicate field) keeps the constraint that comes first in wire order.
    pub fn new(m: &Match) -> NormMatch {
        let mut fields: Vec<(u32, Vec<u8>, Vec<u8>)> = Vec::with_capacity(m.fields.len());
        for x in &m.fields {
            let header = x.header() & 0xffff_fe00;
            if fields.iter().any(|c| c.0 == header) {
                continue;
            }
            let mut value = x.value_bytes();
            let mut mask = x.mask_bytes().unwrap_or_else(|| vec![0xff; value.len()]);
            mask.resize(value.len(), 0);
            if let Some(w) = narrow_mask(header) {
                for (m, w) in mask.iter_mut().zip(w) {
                    *m &= w;
                }
            }
            for (v, m) in value.iter_mut().zip(&mask) {
                *v &= m;
            }
            // An OXM payload is at most 255 bytes, value and mask together.
            if mask.iter().all(|&b| b == 0) || value.len() > usize::from(u8::MAX) {
                continue;
            }
            fields.push((header, value, mask));
        }
        fields.sort_by_key(|c| c.0);
        let full = |h: u32, m: &[u8]| full_mask(h, m.len()) == Some(m);
        let size = fields
            .iter()
            .map(|(h, v, m)| 4 + v.len() + if full(*h, m) { 0 } else { m.len() })
            .sum();
        let mut packed = Vec::with_capacity(size);
        for (header, value, mask) in fields {
            let is_full = full(header, &mask);
            let word = header | if is_full { FULL } else { 0 } | value.len() as u32;
            packed.extend_from_slice(&word.to_be_bytes());
            packed.extend_from_slice(&value);
            if !is_full {
                packed.extend_from_slice(&mask);
            }
        }
        NormMatch { packed: packed.into_boxed_slice() }
    }

    /// The normal form, borrowed.
    pub fn view(&self) -> NormRef<'_> {
        NormRef(&self.packed)
    }

    /// The bytes of the packed form.
    #[cfg(test)]
    pub(crate) fn packed_len(&self) -> usize {
        self.packed.len()
    }

    /// Whether the match has no constraints (matches every packet).
    pub fn is_empty(&self) -> bool {
        self.packed.is_empty()
    }

    /// As [`NormRef::covers`].
    pub fn covers(&self, other: NormRef<'_>) -> bool {
        self.view().covers(other)
    }

    /// As [`NormRef::overlaps`].
    pub fn overlaps(&self, other: NormRef<'_>) -> bool {
        self.view().overlaps(other)
    }
}

/// A normal form, borrowed: a [`NormMatch`]'s bytes, or the match part of a
/// [`FlowKey`](super::FlowKey)'s. Two are equal exactly when they are the same match.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NormRef<'a>(pub(super) &'a [u8]);

impl<'a> NormRef<'a> {
    /// The match these constraints make, its TLVs in the order `ranks` gives: the
    /// `i`-th TLV is the constraint of rank `ranks[i]` in header order (all of them, in
    /// header order, when `ranks` is `None`), each with its mask unless it is full.
    /// `None` if `ranks` names a constraint that is not there, or the bytes do not decode.
    pub(crate) fn to_match(self, ranks: Option<&[u8]>) -> Option<Match> {
        let words: Vec<&[u8]> = self.words().collect();
        let mut tlvs = Vec::with_capacity(4 + self.0.len() * 2);
        tlvs.extend_from_slice(&[0, 1, 0, 0]);
        let all: Vec<u8> = (0..words.len()).map(|i| i as u8).collect();
        for &r in ranks.unwrap_or(&all) {
            let w = words.get(usize::from(r))?;
            let (head, rest) = w.split_first_chunk::<4>()?;
            let word = u32::from_be_bytes(*head);
            let (header, len) = (word & 0xffff_fe00, (word & 0xff) as usize);
            let masked = word & FULL == 0;
            let payload = if masked { 2 * len } else { len };
            let tlv_header = header | u32::from(masked) << 8 | u32::try_from(payload).ok()?;
            tlvs.extend_from_slice(&tlv_header.to_be_bytes());
            tlvs.extend_from_slice(rest);
        }
        let len = u16::try_from(tlvs.len()).ok()?.to_be_bytes();
        tlvs[2..4].copy_from_slice(&len);
        super::entry::decode_unpadded(tlvs)
    }

    /// Each constraint's stored bytes (word, value, mask if not full), in header order.
    fn words(self) -> impl Iterator<Item = &'a [u8]> {
        let mut rest: &'a [u8] = self.0;
        std::iter::from_fn(move || {
            let head = rest.first_chunk::<4>()?;
            let word = u32::from_be_bytes(*head);
            let w = (word & 0xff) as usize;
            let n = 4 + if word & FULL != 0 { w } else { 2 * w };
            let (this, next) = rest.split_at_checked(n)?;
            rest = next;
            Some(this)
        })
    }

    /// The headers of the constraints, in order.
    pub(crate) fn headers(self) -> impl Iterator<Item = u32> + 'a {
        self.constraints().map(|c| c.header)
    }

    /// Whether the match has no constraints (matches every packet).
    pub fn is_empty(self) -> bool {
        self.0.is_empty()
    }

    fn constraints(self) -> Constraints<'a> {
        Constraints(self.0)
    }

    fn get(self, header: u32) -> Option<Constraint<'a>> {
        self.constraints().take_while(|c| c.header <= header).find(|c| c.header == header)
    }

    /// Whether every packet `other` matches is matched by `self`: `other` is at least as
    /// specific as `self` in every field `self` constrains. This is how non-strict modify
    /// and delete, and flow-stats requests, select entries (spec §6.4).
    pub fn covers(self, other: NormRef<'_>) -> bool {
        self.constraints().all(|c| {
            other.get(c.header).is_some_and(|o| {
                o.value.len() == c.value.len()
                    && c.mask.iter().zip(o.mask).all(|(cm, om)| cm & !om == 0)
                    && o.value.iter().zip(c.mask).zip(c.value).all(|((ov, cm), cv)| ov & cm == *cv)
            })
        })
    }

    /// Whether some packet could match both: in every field both constrain, the values
    /// agree on the bits both masks care about. (Fields only one constrains leave the
    /// other free.)
    pub fn overlaps(self, other: NormRef<'_>) -> bool {
        self.constraints().all(|c| match other.get(c.header) {
            None => true,
            Some(o) => {
                o.value.len() == c.value.len()
                    && c.value
                        .iter()
                        .zip(o.value)
                        .zip(c.mask.iter().zip(o.mask))
                        .all(|((cv, ov), (cm, om))| (cv ^ ov) & cm & om == 0)
            }
        })
    }
}

/// Test helper: the normal form of a match of these fields.
#[cfg(test)]
pub(crate) fn norm(fields: Vec<openflow::oxm::Oxm>) -> NormMatch {
    NormMatch::new(&Match { fields })
}
