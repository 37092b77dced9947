//! The OpenFlow 1.3 match (`ofp_match`, type `OFPMT_OXM`).
//!
//! Wire form: `type:u16 = 1, length:u16, oxm_fields…, pad to 8`; `length` excludes the
//! padding. [`Match`] keeps the TLVs in wire order so a decoded match re-encodes byte
//! for byte. An empty match matches everything.

use crate::oxm::Oxm;

/// `OFPMT_STANDARD` (1.1/1.2, rejected) and `OFPMT_OXM`.
pub const OFPMT_STANDARD: u16 = 0;
pub const OFPMT_OXM: u16 = 1;

/// An OpenFlow 1.3 match: a list of OXM TLVs.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Match {
    pub fields: Vec<Oxm>,
}

use crate::error::{ErrorKind, OfpError};
use crate::wire::{Reader, Writer};

impl Match {
    /// Reads an `ofp_match` including its padding.
    pub fn decode(_r: &mut Reader) -> Result<Match, OfpError> {
        Err(OfpError::new(ErrorKind::BAD_MATCH_BAD_TYPE, "not yet"))
    }

    /// Writes an `ofp_match` including its padding.
    pub fn encode(&self, _w: &mut Writer) {}

    /// Checks value/mask consistency, duplicates and prerequisites.
    pub fn validate(&self) -> Result<(), OfpError> {
        Ok(())
    }
}

/// proptest strategies for matches (replaced by complete ones).
#[cfg(test)]
pub(crate) mod strategy {
    use super::*;
    use proptest::prelude::*;

    pub fn arb_match() -> impl Strategy<Value = Match> {
        proptest::collection::vec(crate::oxm::strategy::arb_oxm(), 0..2)
            .prop_map(|fields| Match { fields })
    }
}
