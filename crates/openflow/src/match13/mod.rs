//! The OpenFlow 1.3 match (`ofp_match`, type `OFPMT_OXM`).
//!
//! Wire form: `type:u16 = 1, length:u16, oxm_fields…, pad to 8`; `length` excludes the
//! padding. [`Match`] keeps the TLVs in wire order so a decoded match re-encodes byte
//! for byte. An empty match matches everything.
//!
//! Decoding checks only the structure (type, lengths, each TLV's own form); the
//! semantic checks a switch applies to a flow-mod match (supported classes, duplicates,
//! value/mask consistency, value ranges, prerequisites) are [`Match::validate`], in
//! `validate.rs`.

use crate::oxm::Oxm;

/// `OFPMT_STANDARD` (1.1/1.2, rejected) and `OFPMT_OXM`.
pub const OFPMT_STANDARD: u16 = 0;
pub const OFPMT_OXM: u16 = 1;

/// An OpenFlow 1.3 match: a list of OXM TLVs.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Match {
    pub fields: Vec<Oxm>,
}

#[cfg(test)]
pub(crate) mod strategy;
#[cfg(test)]
mod tests;
mod validate;

pub use validate::Facts;

use crate::error::{ErrorKind, OfpError};
use crate::oxm::OxmField;
use crate::wire::{Reader, Writer};

/// Length of the `ofp_match` header (`type`, `length`).
pub const MATCH_HEADER_LEN: usize = 4;

fn bad_len(detail: String) -> OfpError {
    OfpError::new(ErrorKind::BAD_MATCH_BAD_LEN, detail)
}

impl Match {
    pub fn new(fields: Vec<Oxm>) -> Self {
        Match { fields }
    }

    /// Reads an `ofp_match` including its padding.
    ///
    /// Errors: a type other than `OFPMT_OXM` is `OFPBMC_BAD_TYPE`; a length below 4, a
    /// length or padding past the end of the input, or TLVs that do not exactly fill the
    /// length are `OFPBMC_BAD_LEN`; TLV errors are those of [`Oxm::decode`]. The padding
    /// bytes are skipped without checking that they are zero.
    pub fn decode(r: &mut Reader) -> Result<Match, OfpError> {
        let at = r.position();
        if r.remaining() < MATCH_HEADER_LEN {
            return Err(bad_len(format!(
                "ofp_match header truncated at offset {at}: {} bytes left",
                r.remaining()
            )));
        }
        let ty = r.u16()?;
        let len = usize::from(r.u16()?);
        if ty != OFPMT_OXM {
            let what =
                if ty == OFPMT_STANDARD { " (OFPMT_STANDARD is not OpenFlow 1.3)" } else { "" };
            return Err(OfpError::new(
                ErrorKind::BAD_MATCH_BAD_TYPE,
                format!("ofp_match type {ty}{what}, expected OFPMT_OXM (1)"),
            ));
        }
        if len < MATCH_HEADER_LEN {
            return Err(bad_len(format!(
                "ofp_match length {len} is shorter than its 4-byte header"
            )));
        }
        let body_len = len - MATCH_HEADER_LEN;
        let left = r.remaining();
        let mut body = r.sub(body_len).map_err(|_| {
            bad_len(format!(
                "ofp_match length {len} runs past the input ({} bytes from offset {at})",
                left + MATCH_HEADER_LEN
            ))
        })?;
        let mut fields = Vec::new();
        while !body.is_empty() {
            fields.push(Oxm::decode(&mut body)?);
        }
        let pad = len.next_multiple_of(8) - len;
        r.skip(pad).map_err(|_| {
            bad_len(format!(
                "ofp_match of length {len} lacks its {pad} padding bytes ({} left)",
                r.remaining()
            ))
        })?;
        Ok(Match { fields })
    }

    /// Writes an `ofp_match` including its zero padding.
    pub fn encode(&self, w: &mut Writer) {
        let start = w.len();
        w.u16(OFPMT_OXM);
        w.u16(0);
        for f in &self.fields {
            f.encode(w);
        }
        w.patch_len16(start + 2, start);
        w.pad_to(start, 8);
    }

    /// The `length` field: header and TLVs, without padding.
    pub fn unpadded_len(&self) -> usize {
        MATCH_HEADER_LEN + self.fields.iter().map(Oxm::wire_len).sum::<usize>()
    }

    /// Bytes the match takes on the wire, padding included (a multiple of 8).
    pub fn wire_len(&self) -> usize {
        self.unpadded_len().next_multiple_of(8)
    }

    /// The first TLV of basic field `f`, if any.
    pub fn get(&self, f: OxmField) -> Option<&Oxm> {
        self.fields.iter().find(|x| x.field() == Some(f))
    }

    /// Whether the match has no fields (matches every packet).
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// The stateless semantic checks a switch applies to a flow-mod match; see
    /// `validate.rs` for the rules and their order.
    pub fn validate(&self) -> Result<(), OfpError> {
        validate::validate(self)
    }
}

// OpenFlow 1.3's match as the match of version-neutral messages (`crate::model`).
wire_by_methods!(WireMatch for Match, crate::header::OFP13_VERSION);
