//! Table-feature properties (`ofp_table_feature_prop_*`).
//!
//! A property is `type:u16, length:u16, body`, then zero padding up to a multiple of 8
//! that `length` does not count. The body depends on the type:
//!
//! - instructions / write-actions / apply-actions (and their `_MISS` forms): a list of
//!   [`FeatureId`]s packed back to back without padding between them — `type:u16,
//!   len:u16` (len 4), or for the experimenter type 0xffff `len` also covers the
//!   experimenter id and any experimenter data;
//! - next-tables (and miss): one byte per table id;
//! - match, wildcards, write-setfield, apply-setfield (and misses): a list of 32-bit OXM
//!   headers ([`OxmId`]), 64-bit for the experimenter class 0xffff (the header is followed
//!   by the experimenter id);
//! - experimenter (and miss): `experimenter:u32, exp_type:u32, data`.
//!
//! A property of any other type decodes to [`TableFeatureProp::Unknown`] with its body
//! kept, so a message re-encodes byte for byte; [`TableFeatureProp::validate`] rejects it
//! with `OFPTFFC_BAD_TYPE` when a switch has to act on it. Every length problem inside a
//! property is `OFPTFFC_BAD_LEN`.

use crate::error::{ErrorKind, OfpError};
use crate::oxm::OXM_CLASS_EXPERIMENTER;
use crate::v13::flow_mod::OFPTT_MAX;
use crate::wire::{Reader, Writer};

spec_table! {
    /// `ofp_table_feature_prop_type` numbers.
    pub mod prop_type: u16 as numbers {
        INSTRUCTIONS, INSTRUCTIONS_MISS, NEXT_TABLES, NEXT_TABLES_MISS, WRITE_ACTIONS,
        WRITE_ACTIONS_MISS, APPLY_ACTIONS, APPLY_ACTIONS_MISS, MATCH, WILDCARDS = 10,
        WRITE_SETFIELD = 12, WRITE_SETFIELD_MISS, APPLY_SETFIELD, APPLY_SETFIELD_MISS,
        EXPERIMENTER = 0xfffe, EXPERIMENTER_MISS,
    }
}

/// The instruction and action type number of experimenter ids.
const EXPERIMENTER_ID_TYPE: u16 = 0xffff;

/// Turns a truncation error of the reader into the table-features length error.
pub(crate) fn tf_len(e: OfpError) -> OfpError {
    if e.kind == ErrorKind::BAD_REQUEST_BAD_LEN {
        OfpError::new(ErrorKind::TABLE_FEATURES_FAILED_BAD_LEN, e.detail)
    } else {
        e
    }
}

fn bad_len(detail: String) -> OfpError {
    OfpError::new(ErrorKind::TABLE_FEATURES_FAILED_BAD_LEN, detail)
}

/// An instruction or action type named in a table-features property
/// (`ofp_instruction_id` / `ofp_action_id`).
///
/// Invariant: `Type(n)` never holds the experimenter type 0xffff; experimenter ids are
/// [`FeatureId::Experimenter`] (wire `len` = 8 + `data.len()`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum FeatureId {
    /// A standard instruction or action type (wire `len` 4).
    Type(u16),
    /// Type 0xffff: the experimenter id and any experimenter-defined bytes after it.
    Experimenter { experimenter: u32, data: Vec<u8> },
}

/// An instruction id (`ofp_instruction_id`).
pub type InstructionId = FeatureId;
/// An action id (`ofp_action_id`).
pub type ActionId = FeatureId;

impl FeatureId {
    /// The type number written on the wire.
    pub fn type_number(&self) -> u16 {
        match self {
            FeatureId::Type(t) => *t,
            FeatureId::Experimenter { .. } => EXPERIMENTER_ID_TYPE,
        }
    }

    /// Reads one id; `r` holds the property body.
    pub fn decode(r: &mut Reader) -> Result<FeatureId, OfpError> {
        let ty = r.u16().map_err(tf_len)?;
        let len = r.u16().map_err(tf_len)? as usize;
        if ty == EXPERIMENTER_ID_TYPE {
            if len < 8 {
                return Err(bad_len(format!(
                    "experimenter instruction/action id of length {len}, below 8"
                )));
            }
            let mut body = r.sub(len - 4).map_err(tf_len)?;
            let experimenter = body.u32().map_err(tf_len)?;
            Ok(FeatureId::Experimenter { experimenter, data: body.take_rest().to_vec() })
        } else if len != 4 {
            Err(bad_len(format!("instruction/action id {ty} has length {len}, expected 4")))
        } else {
            Ok(FeatureId::Type(ty))
        }
    }

    pub fn encode(&self, w: &mut Writer) {
        match self {
            FeatureId::Type(t) => {
                w.u16(*t);
                w.u16(4);
            }
            FeatureId::Experimenter { experimenter, data } => {
                let start = w.len();
                w.u16(EXPERIMENTER_ID_TYPE);
                w.u16(0);
                w.u32(*experimenter);
                w.bytes(data);
                w.patch_len16(start + 2, start);
            }
        }
    }
}

/// An OXM header naming a field in a match / wildcards / set-field property.
///
/// Invariant: `experimenter` is `Some` exactly when `class` is the experimenter class
/// 0xffff (the wire header is then 8 bytes). `length` is the payload length the header
/// announces (value, and mask when `has_mask`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct OxmId {
    pub class: u16,
    pub field: u8,
    pub has_mask: bool,
    pub length: u8,
    pub experimenter: Option<u32>,
}

impl OxmId {
    /// An OpenFlow-basic field header.
    pub fn basic(field: u8, has_mask: bool, length: u8) -> Self {
        OxmId { class: crate::oxm::OXM_CLASS_BASIC, field, has_mask, length, experimenter: None }
    }

    /// Reads one header; `r` holds the property body.
    pub fn decode(r: &mut Reader) -> Result<OxmId, OfpError> {
        let h = r.u32().map_err(tf_len)?;
        let class = (h >> 16) as u16;
        let experimenter =
            if class == OXM_CLASS_EXPERIMENTER { Some(r.u32().map_err(tf_len)?) } else { None };
        Ok(OxmId {
            class,
            field: ((h >> 9) & 0x7f) as u8,
            has_mask: (h >> 8) & 1 == 1,
            length: h as u8,
            experimenter,
        })
    }

    pub fn encode(&self, w: &mut Writer) {
        let h = (u32::from(self.class) << 16)
            | (u32::from(self.field & 0x7f) << 9)
            | (u32::from(self.has_mask) << 8)
            | u32::from(self.length);
        w.u32(h);
        if self.class == OXM_CLASS_EXPERIMENTER {
            w.u32(self.experimenter.unwrap_or(0));
        }
    }
}

/// One table-feature property. The `miss` flag selects the `_MISS` form of a type
/// (what the table-miss flow entry supports).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TableFeatureProp {
    /// `OFPTFPT_INSTRUCTIONS` / `_MISS`.
    Instructions { miss: bool, ids: Vec<InstructionId> },
    /// `OFPTFPT_NEXT_TABLES` / `_MISS`: tables reachable with goto-table.
    NextTables { miss: bool, tables: Vec<u8> },
    /// `OFPTFPT_WRITE_ACTIONS` / `_MISS`.
    WriteActions { miss: bool, ids: Vec<ActionId> },
    /// `OFPTFPT_APPLY_ACTIONS` / `_MISS`.
    ApplyActions { miss: bool, ids: Vec<ActionId> },
    /// `OFPTFPT_MATCH`: fields the table can match on (`has_mask` = maskable).
    Match(Vec<OxmId>),
    /// `OFPTFPT_WILDCARDS`: fields that may be omitted from a match.
    Wildcards(Vec<OxmId>),
    /// `OFPTFPT_WRITE_SETFIELD` / `_MISS`.
    WriteSetfield { miss: bool, fields: Vec<OxmId> },
    /// `OFPTFPT_APPLY_SETFIELD` / `_MISS`.
    ApplySetfield { miss: bool, fields: Vec<OxmId> },
    /// `OFPTFPT_EXPERIMENTER` / `_MISS`.
    Experimenter { miss: bool, experimenter: u32, exp_type: u32, data: Vec<u8> },
    /// A property type OpenFlow 1.3 does not define, body kept as read. Invariant: `ty`
    /// is none of the types above.
    Unknown { ty: u16, data: Vec<u8> },
}

impl TableFeatureProp {
    /// The property type number written on the wire.
    pub fn prop_type(&self) -> u16 {
        use prop_type as t;
        let pick = |miss: bool, hit: u16, missed: u16| if miss { missed } else { hit };
        match self {
            Self::Instructions { miss, .. } => pick(*miss, t::INSTRUCTIONS, t::INSTRUCTIONS_MISS),
            Self::NextTables { miss, .. } => pick(*miss, t::NEXT_TABLES, t::NEXT_TABLES_MISS),
            Self::WriteActions { miss, .. } => pick(*miss, t::WRITE_ACTIONS, t::WRITE_ACTIONS_MISS),
            Self::ApplyActions { miss, .. } => pick(*miss, t::APPLY_ACTIONS, t::APPLY_ACTIONS_MISS),
            Self::Match(_) => t::MATCH,
            Self::Wildcards(_) => t::WILDCARDS,
            Self::WriteSetfield { miss, .. } => {
                pick(*miss, t::WRITE_SETFIELD, t::WRITE_SETFIELD_MISS)
            }
            Self::ApplySetfield { miss, .. } => {
                pick(*miss, t::APPLY_SETFIELD, t::APPLY_SETFIELD_MISS)
            }
            Self::Experimenter { miss, .. } => pick(*miss, t::EXPERIMENTER, t::EXPERIMENTER_MISS),
            Self::Unknown { ty, .. } => *ty,
        }
    }

    /// Reads one property and its padding.
    pub fn decode(r: &mut Reader) -> Result<TableFeatureProp, OfpError> {
        use prop_type as t;
        let ty = r.u16().map_err(tf_len)?;
        let len = r.u16().map_err(tf_len)? as usize;
        if len < 4 {
            return Err(bad_len(format!("table-features property {ty} has length {len}, below 4")));
        }
        let mut body = r.sub(len - 4).map_err(|_| {
            bad_len(format!(
                "table-features property {ty} of length {len} overruns its table ({} bytes left)",
                r.remaining() + 4
            ))
        })?;
        let pad = len.next_multiple_of(8) - len;
        r.skip(pad).map_err(|_| {
            bad_len(format!("table-features property {ty} lacks its {pad} bytes of padding"))
        })?;
        let b = &mut body;
        let prop = match ty {
            t::INSTRUCTIONS | t::INSTRUCTIONS_MISS => Self::Instructions {
                miss: ty == t::INSTRUCTIONS_MISS,
                ids: b.list(FeatureId::decode)?,
            },
            t::NEXT_TABLES | t::NEXT_TABLES_MISS => {
                Self::NextTables { miss: ty == t::NEXT_TABLES_MISS, tables: b.take_rest().to_vec() }
            }
            t::WRITE_ACTIONS | t::WRITE_ACTIONS_MISS => Self::WriteActions {
                miss: ty == t::WRITE_ACTIONS_MISS,
                ids: b.list(FeatureId::decode)?,
            },
            t::APPLY_ACTIONS | t::APPLY_ACTIONS_MISS => Self::ApplyActions {
                miss: ty == t::APPLY_ACTIONS_MISS,
                ids: b.list(FeatureId::decode)?,
            },
            t::MATCH => Self::Match(b.list(OxmId::decode)?),
            t::WILDCARDS => Self::Wildcards(b.list(OxmId::decode)?),
            t::WRITE_SETFIELD | t::WRITE_SETFIELD_MISS => Self::WriteSetfield {
                miss: ty == t::WRITE_SETFIELD_MISS,
                fields: b.list(OxmId::decode)?,
            },
            t::APPLY_SETFIELD | t::APPLY_SETFIELD_MISS => Self::ApplySetfield {
                miss: ty == t::APPLY_SETFIELD_MISS,
                fields: b.list(OxmId::decode)?,
            },
            t::EXPERIMENTER | t::EXPERIMENTER_MISS => {
                let experimenter = b.u32().map_err(tf_len)?;
                let exp_type = b.u32().map_err(tf_len)?;
                Self::Experimenter {
                    miss: ty == t::EXPERIMENTER_MISS,
                    experimenter,
                    exp_type,
                    data: b.take_rest().to_vec(),
                }
            }
            _ => Self::Unknown { ty, data: b.take_rest().to_vec() },
        };
        Ok(prop)
    }

    /// Writes the property and its zero padding.
    pub fn encode(&self, w: &mut Writer) {
        let start = w.len();
        w.u16(self.prop_type());
        w.u16(0);
        match self {
            Self::Instructions { ids, .. }
            | Self::WriteActions { ids, .. }
            | Self::ApplyActions { ids, .. } => ids.iter().for_each(|id| id.encode(w)),
            Self::NextTables { tables, .. } => w.bytes(tables),
            Self::Match(fields)
            | Self::Wildcards(fields)
            | Self::WriteSetfield { fields, .. }
            | Self::ApplySetfield { fields, .. } => fields.iter().for_each(|f| f.encode(w)),
            Self::Experimenter { experimenter, exp_type, data, .. } => {
                w.u32(*experimenter);
                w.u32(*exp_type);
                w.bytes(data);
            }
            Self::Unknown { data, .. } => w.bytes(data),
        }
        w.patch_len16(start + 2, start);
        w.pad_to(start, 8);
    }

    /// Checks what a switch must check before acting on the property: its type is one
    /// OpenFlow 1.3 defines (`OFPTFFC_BAD_TYPE`) and next-table ids name real tables
    /// (`OFPTFFC_BAD_ARGUMENT`).
    pub fn validate(&self) -> Result<(), OfpError> {
        match self {
            Self::Unknown { ty, .. } => Err(OfpError::new(
                ErrorKind::TABLE_FEATURES_FAILED_BAD_TYPE,
                format!("unknown table-features property type {ty}"),
            )),
            Self::NextTables { tables, .. } => match tables.iter().find(|&&t| t > OFPTT_MAX) {
                Some(t) => Err(OfpError::new(
                    ErrorKind::TABLE_FEATURES_FAILED_BAD_ARGUMENT,
                    format!("next-tables property names table {t}, above OFPTT_MAX"),
                )),
                None => Ok(()),
            },
            _ => Ok(()),
        }
    }
}

/// proptest strategies for properties.
#[cfg(test)]
pub(crate) mod strategy {
    use super::*;
    use proptest::collection::vec;
    use proptest::prelude::*;

    pub fn arb_feature_id() -> impl Strategy<Value = FeatureId> {
        prop_oneof![
            (0u16..0xffff).prop_map(FeatureId::Type),
            (any::<u32>(), vec(any::<u8>(), 0..12))
                .prop_map(|(experimenter, data)| FeatureId::Experimenter { experimenter, data }),
        ]
    }

    pub fn arb_oxm_id() -> impl Strategy<Value = OxmId> {
        (any::<u16>(), 0u8..128, any::<bool>(), any::<u8>(), any::<u32>()).prop_map(
            |(class, field, has_mask, length, exp)| OxmId {
                class,
                field,
                has_mask,
                length,
                experimenter: (class == OXM_CLASS_EXPERIMENTER).then_some(exp),
            },
        )
    }

    fn arb_class() -> impl Strategy<Value = u16> {
        prop_oneof![Just(crate::oxm::OXM_CLASS_BASIC), Just(OXM_CLASS_EXPERIMENTER)]
    }

    /// Like [`arb_oxm_id`] but hitting the experimenter class often.
    pub fn arb_oxm_id_mixed() -> impl Strategy<Value = OxmId> {
        prop_oneof![
            arb_oxm_id(),
            (arb_class(), arb_oxm_id()).prop_map(|(class, mut id)| {
                id.class = class;
                id.experimenter = (class == OXM_CLASS_EXPERIMENTER).then_some(0x00d0_f0ff);
                id
            })
        ]
    }

    pub fn arb_prop() -> impl Strategy<Value = TableFeatureProp> {
        use TableFeatureProp as P;
        let ids = || vec(arb_feature_id(), 0..5);
        let oxms = || vec(arb_oxm_id_mixed(), 0..6);
        prop_oneof![
            (any::<bool>(), ids()).prop_map(|(miss, ids)| P::Instructions { miss, ids }),
            (any::<bool>(), vec(any::<u8>(), 0..10))
                .prop_map(|(miss, tables)| P::NextTables { miss, tables }),
            (any::<bool>(), ids()).prop_map(|(miss, ids)| P::WriteActions { miss, ids }),
            (any::<bool>(), ids()).prop_map(|(miss, ids)| P::ApplyActions { miss, ids }),
            oxms().prop_map(P::Match),
            oxms().prop_map(P::Wildcards),
            (any::<bool>(), oxms()).prop_map(|(miss, fields)| P::WriteSetfield { miss, fields }),
            (any::<bool>(), oxms()).prop_map(|(miss, fields)| P::ApplySetfield { miss, fields }),
            (any::<bool>(), any::<u32>(), any::<u32>(), vec(any::<u8>(), 0..13)).prop_map(
                |(miss, experimenter, exp_type, data)| P::Experimenter {
                    miss,
                    experimenter,
                    exp_type,
                    data
                }
            ),
            (prop_oneof![Just(9u16), Just(11u16), 16u16..0xfffe], vec(any::<u8>(), 0..13))
                .prop_map(|(ty, data)| P::Unknown { ty, data }),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{assert_padded_roundtrip, assert_refused, encoded};
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn roundtrip(p in strategy::arb_prop()) {
            assert_padded_roundtrip(&p, TableFeatureProp::encode, TableFeatureProp::decode);
        }

        #[test]
        fn truncation_is_an_error(p in strategy::arb_prop()) {
            let bytes = encoded(|w| p.encode(w));
            for n in 0..bytes.len() {
                let e = TableFeatureProp::decode(&mut Reader::new(&bytes[..n])).unwrap_err();
                prop_assert_eq!(e.kind, ErrorKind::TABLE_FEATURES_FAILED_BAD_LEN);
            }
        }

        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let mut r = Reader::new(&bytes);
            while TableFeatureProp::decode(&mut r).is_ok() && !r.is_empty() {}
        }
    }

    #[test]
    fn wire_form_of_each_body_kind() {
        // Instructions: goto-table, apply-actions, and one experimenter id; 4+4+4+8 = 20,
        // padded to 24.
        let p = TableFeatureProp::Instructions {
            miss: true,
            ids: vec![
                FeatureId::Type(1),
                FeatureId::Type(4),
                FeatureId::Experimenter { experimenter: 0x2320, data: vec![] },
            ],
        };
        assert_eq!(
            encoded(|w| p.encode(w)),
            [0, 1, 0, 20, 0, 1, 0, 4, 0, 4, 0, 4, 0xff, 0xff, 0, 8, 0, 0, 0x23, 0x20, 0, 0, 0, 0]
        );
        // Match: in_port (basic, 4 bytes) and an experimenter-class header (8 bytes).
        let p = TableFeatureProp::Match(vec![
            OxmId::basic(0, false, 4),
            OxmId {
                class: 0xffff,
                field: 1,
                has_mask: true,
                length: 8,
                experimenter: Some(0x4f4e4600),
            },
        ]);
        assert_eq!(
            encoded(|w| p.encode(w)),
            [0, 8, 0, 16, 0x80, 0, 0, 4, 0xff, 0xff, 3, 8, 0x4f, 0x4e, 0x46, 0]
        );
        let p = TableFeatureProp::NextTables { miss: false, tables: vec![1, 2, 3] };
        assert_eq!(encoded(|w| p.encode(w)), [0, 2, 0, 7, 1, 2, 3, 0]);
    }

    #[test]
    fn length_errors() {
        let cases: &[&[u8]] = &[
            // length below the 4-byte header
            &[0, 2, 0, 3, 0, 0, 0, 0],
            // length past the end
            &[0, 2, 0, 12, 1, 2, 3, 4],
            // padding missing
            &[0, 2, 0, 5, 1],
            // non-experimenter instruction id of length 8
            &[0, 0, 0, 12, 0, 1, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0],
            // experimenter action id of length 4
            &[0, 4, 0, 8, 0xff, 0xff, 0, 4],
            // experimenter OXM header without its experimenter id
            &[0, 8, 0, 8, 0xff, 0xff, 0, 4],
            // OXM list not a multiple of 4
            &[0, 10, 0, 6, 0x80, 0, 0, 0],
            // experimenter property without exp_type
            &[0xff, 0xfe, 0, 8, 0, 0, 0, 1],
        ];
        assert_refused(cases, TableFeatureProp::decode, ErrorKind::TABLE_FEATURES_FAILED_BAD_LEN);
    }

    #[test]
    fn unknown_type_round_trips_but_does_not_validate() {
        let bytes = [0, 9, 0, 6, 0xab, 0xcd, 0, 0];
        let p = TableFeatureProp::decode(&mut Reader::new(&bytes)).unwrap();
        assert_eq!(p, TableFeatureProp::Unknown { ty: 9, data: vec![0xab, 0xcd] });
        assert_eq!(encoded(|w| p.encode(w)), bytes);
        assert_eq!(p.validate().unwrap_err().kind, ErrorKind::TABLE_FEATURES_FAILED_BAD_TYPE);
    }

    #[test]
    fn next_table_beyond_max_is_bad_argument() {
        let ok = TableFeatureProp::NextTables { miss: false, tables: vec![0, 0xfe] };
        assert!(ok.validate().is_ok());
        let bad = TableFeatureProp::NextTables { miss: true, tables: vec![1, 0xff] };
        assert_eq!(bad.validate().unwrap_err().kind, ErrorKind::TABLE_FEATURES_FAILED_BAD_ARGUMENT);
    }
}
