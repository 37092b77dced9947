//! OpenFlow 1.4's table description (`ofp_table_desc`: a table's configuration and
//! properties, the `OFPMP_TABLE_DESC` reply element and the body of a table-status
//! message) and the table-mod properties it carries (`ofp_table_mod_prop_*`, which a
//! 1.4 table-mod carries too).
//!
//! `ofp_table_desc` is `length:u16, table_id:u8, pad[1], config:u32`, then properties to
//! `length` (8 bytes and properties). Properties are framed as
//! [`crate::v13::multipart::prop`] describes: eviction (type 2, `flags:u32`), vacancy
//! (type 3, `vacancy_down:u8, vacancy_up:u8, vacancy:u8, pad[1]`), experimenter
//! (0xffff); other types are kept as read. Length faults are `OFPBRC_BAD_LEN`.

use crate::error::OfpError;
use crate::v13::multipart::prop::{self, OtherProp};
use crate::wire::{take_sized, Reader, Writer};

/// Length of `ofp_table_desc` before its properties.
pub const TABLE_DESC_FIXED_LEN: usize = 8;

spec_table! {
    /// `ofp_table_config` bits of OpenFlow 1.4 (bits 0-1 are 1.1's, deprecated).
    pub mod table_config: u32 as bits {
        DEPRECATED_0, DEPRECATED_1, EVICTION, VACANCY_EVENTS,
    }
}

spec_table! {
    /// `ofp_table_mod_prop_type` numbers.
    pub mod table_mod_prop: u16 as numbers {
        EVICTION = 2, VACANCY, EXPERIMENTER = 0xffff,
    }
}

spec_table! {
    /// `ofp_table_mod_prop_eviction_flag` bits: what the switch evicts by.
    pub mod eviction_flag: u32 as bits {
        OTHER, IMPORTANCE, LIFETIME,
    }
}

/// A table-mod property (`ofp_table_mod_prop_*`), as a 1.4 table description or
/// table-mod carries it.
///
/// Invariant: `Unknown` never holds the eviction, vacancy or experimenter type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TableModProp {
    /// `OFPTMPT_EVICTION`: the `eviction_flag` bits the table evicts by.
    Eviction { flags: u32 },
    /// `OFPTMPT_VACANCY`: the vacancy thresholds (percent) and, in a description or
    /// status, the current vacancy.
    Vacancy { vacancy_down: u8, vacancy_up: u8, vacancy: u8 },
    /// `OFPTMPT_EXPERIMENTER`.
    Experimenter { experimenter: u32, exp_type: u32, data: Vec<u8> },
    /// Any other type, its body as read.
    Unknown { ty: u16, data: Vec<u8> },
}

impl TableModProp {
    /// The property type number.
    pub fn prop_type(&self) -> u16 {
        match self {
            TableModProp::Eviction { .. } => table_mod_prop::EVICTION,
            TableModProp::Vacancy { .. } => table_mod_prop::VACANCY,
            TableModProp::Experimenter { .. } => table_mod_prop::EXPERIMENTER,
            TableModProp::Unknown { ty, .. } => *ty,
        }
    }

    /// Reads one property.
    pub fn decode(r: &mut Reader) -> Result<TableModProp, OfpError> {
        let (ty, mut body) = prop::take(r, "table-mod")?;
        Ok(match ty {
            table_mod_prop::EVICTION => {
                prop::expect_len(&body, 4, "table-mod eviction")?;
                TableModProp::Eviction { flags: body.u32()? }
            }
            table_mod_prop::VACANCY => {
                prop::expect_len(&body, 4, "table-mod vacancy")?;
                TableModProp::Vacancy {
                    vacancy_down: body.u8()?,
                    vacancy_up: body.u8()?,
                    vacancy: body.u8()?,
                }
            }
            ty => match OtherProp::from_body(ty, &mut body, "table-mod")? {
                OtherProp::Experimenter { experimenter, exp_type, data } => {
                    TableModProp::Experimenter { experimenter, exp_type, data }
                }
                OtherProp::Unknown { ty, data } => TableModProp::Unknown { ty, data },
            },
        })
    }

    /// Reads properties until `r` is empty.
    pub fn decode_list(r: &mut Reader) -> Result<Vec<TableModProp>, OfpError> {
        r.list(TableModProp::decode)
    }

    /// Writes the property and its padding.
    pub fn encode(&self, w: &mut Writer) {
        match self {
            TableModProp::Eviction { flags } => {
                prop::write(w, table_mod_prop::EVICTION, |w| w.u32(*flags))
            }
            TableModProp::Vacancy { vacancy_down, vacancy_up, vacancy } => {
                prop::write(w, table_mod_prop::VACANCY, |w| {
                    w.u8(*vacancy_down);
                    w.u8(*vacancy_up);
                    w.u8(*vacancy);
                    w.zeros(1);
                })
            }
            TableModProp::Experimenter { experimenter, exp_type, data } => {
                prop::write_experimenter(w, *experimenter, *exp_type, data)
            }
            TableModProp::Unknown { ty, data } => prop::write(w, *ty, |w| w.bytes(data)),
        }
    }
}

/// `ofp_table_desc`: a table's `table_config` bits and its table-mod properties (module
/// comment).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct TableDesc {
    pub table_id: u8,
    /// `table_config` bits.
    pub config: u32,
    /// In wire order.
    pub properties: Vec<TableModProp>,
}

impl TableDesc {
    /// Reads one description: its `length` must cover the fixed part and fit in `r`.
    pub fn decode(r: &mut Reader) -> Result<TableDesc, OfpError> {
        let mut s = take_sized(r, 0, TABLE_DESC_FIXED_LEN, "table desc")?;
        s.skip(2)?;
        let table_id = s.u8()?;
        s.skip(1)?;
        let config = s.u32()?;
        Ok(TableDesc { table_id, config, properties: TableModProp::decode_list(&mut s)? })
    }

    /// Writes the description with its length.
    pub fn encode(&self, w: &mut Writer) {
        w.sized(0, |w| {
            w.u16(0);
            w.u8(self.table_id);
            w.zeros(1);
            w.u32(self.config);
            self.properties.iter().for_each(|p| p.encode(w));
        });
    }

    /// The eviction property's flags, if the description has one.
    pub fn eviction_flags(&self) -> Option<u32> {
        self.properties.iter().find_map(|p| match p {
            TableModProp::Eviction { flags } => Some(*flags),
            _ => None,
        })
    }

    /// The vacancy property's `(vacancy_down, vacancy_up, vacancy)`, if the description
    /// has one.
    pub fn vacancy(&self) -> Option<(u8, u8, u8)> {
        self.properties.iter().find_map(|p| match p {
            TableModProp::Vacancy { vacancy_down, vacancy_up, vacancy } => {
                Some((*vacancy_down, *vacancy_up, *vacancy))
            }
            _ => None,
        })
    }
}

/// proptest strategies for table descriptions and table-mod properties.
#[cfg(test)]
pub(crate) mod strategy {
    use super::*;
    use crate::v13::multipart::prop::strategy::arb_other_prop;
    use proptest::prelude::*;

    /// Every table-mod property.
    pub fn arb_table_mod_prop() -> impl Strategy<Value = TableModProp> {
        prop_oneof![
            any::<u32>().prop_map(|flags| TableModProp::Eviction { flags }),
            any::<(u8, u8, u8)>().prop_map(|(vacancy_down, vacancy_up, vacancy)| {
                TableModProp::Vacancy { vacancy_down, vacancy_up, vacancy }
            }),
            arb_other_prop(&[table_mod_prop::EVICTION, table_mod_prop::VACANCY]).prop_map(|p| {
                match p {
                    OtherProp::Experimenter { experimenter, exp_type, data } => {
                        TableModProp::Experimenter { experimenter, exp_type, data }
                    }
                    OtherProp::Unknown { ty, data } => TableModProp::Unknown { ty, data },
                }
            }),
        ]
    }

    /// Descriptions with up to 3 properties.
    pub fn arb_table_desc() -> impl Strategy<Value = TableDesc> {
        (any::<u8>(), any::<u32>(), proptest::collection::vec(arb_table_mod_prop(), 0..4))
            .prop_map(|(table_id, config, properties)| TableDesc { table_id, config, properties })
    }
}

#[cfg(test)]
mod tests {
    use super::strategy::*;
    use super::*;
    use crate::error::ErrorKind;
    use crate::wire::{assert_padded_roundtrip, assert_refused, encoded};
    use proptest::prelude::*;

    roundtrip_tests! {
        table_desc_roundtrip: arb_table_desc() => TableDesc;
        table_mod_prop_roundtrip: arb_table_mod_prop() => TableModProp;
    }

    proptest! {
        #[test]
        fn descriptions_are_padded_and_sized(d in arb_table_desc()) {
            let bytes = assert_padded_roundtrip(&d, TableDesc::encode, TableDesc::decode);
            prop_assert_eq!(usize::from(u16::from_be_bytes([bytes[0], bytes[1]])), bytes.len());
            for n in 0..bytes.len() {
                prop_assert!(TableDesc::decode(&mut Reader::new(&bytes[..n])).is_err());
            }
        }
    }

    #[test]
    fn bytes_value_bytes() {
        let bytes = [
            0, 24, 7, 0, 0, 0, 0, 4, // table 7, eviction on
            0, 2, 0, 8, 0, 0, 0, 3, // eviction by other and importance
            0, 3, 0, 8, 10, 90, 50, 0, // vacancy 10% / 90%, now 50%
        ];
        let d = TableDesc::decode(&mut Reader::new(&bytes)).unwrap();
        assert_eq!(
            d,
            TableDesc {
                table_id: 7,
                config: table_config::EVICTION,
                properties: vec![
                    TableModProp::Eviction {
                        flags: eviction_flag::OTHER | eviction_flag::IMPORTANCE
                    },
                    TableModProp::Vacancy { vacancy_down: 10, vacancy_up: 90, vacancy: 50 },
                ],
            }
        );
        assert_eq!(d.eviction_flags(), Some(3));
        assert_eq!(d.vacancy(), Some((10, 90, 50)));
        assert_eq!(encoded(|w| d.encode(w)), bytes);
    }

    #[test]
    fn length_errors() {
        let cases: &[&[u8]] = &[
            // below the fixed part
            &[0, 4, 7, 0, 0, 0, 0, 0],
            // beyond the bytes
            &[0, 16, 7, 0, 0, 0, 0, 0],
            // an eviction property of length 12
            &[0, 24, 7, 0, 0, 0, 0, 0, 0, 2, 0, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
            // a vacancy property of length 4
            &[0, 16, 7, 0, 0, 0, 0, 0, 0, 3, 0, 4, 0, 0, 0, 0],
        ];
        assert_refused(cases, TableDesc::decode, ErrorKind::BAD_REQUEST_BAD_LEN);
    }
}
