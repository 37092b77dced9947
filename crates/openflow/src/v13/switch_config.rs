//! `OFPT_GET_CONFIG_REPLY` / `OFPT_SET_CONFIG` (OpenFlow 1.3): the switch configuration,
//! and `OFPT_TABLE_MOD`.
//!
//! Switch config wire form (4 bytes): `flags:u16, miss_send_len:u16`. In 1.3 only the
//! IP-fragment handling bits (`OFPC_FRAG_MASK`) are defined.
//!
//! Table mod: [`TableMod`] (1.3's 8 bytes, and 1.4's properties after them), and 1.4's
//! table description [`TableDesc`] with the properties both share ([`TableModProp`]), and
//! the table-status message that carries a description ([`TableStatus`]).

use crate::error::{ErrorKind, OfpError};
use crate::header::OFP14_VERSION;
use crate::v13::flow_mod::{OFPTT_ALL, OFPTT_MAX};
use crate::v13::property::{self, Property};
use crate::wire::{take_sized, Reader, Writer};

spec_table! {
    /// `ofp_config_flags` values.
    pub mod config_flags: u16 as numbers {
        FRAG_NORMAL, FRAG_DROP, FRAG_REASM, FRAG_MASK,
    }
}

/// `OFP_DEFAULT_MISS_SEND_LEN`: the `miss_send_len` a switch starts with.
pub const OFP_DEFAULT_MISS_SEND_LEN: u16 = 128;

/// `OFPTC_DEPRECATED_MASK`: the only table-config bits OpenFlow 1.3 knows.
pub const OFPTC_DEPRECATED_MASK: u32 = table_config::DEPRECATED_MASK;

record! {
    /// A switch configuration (body of get-config reply and set-config), the same in
    /// OpenFlow 1.0.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub struct SwitchConfig {
        pub flags: u16,
        /// Bytes of a table-miss packet sent to the controller (`0xffff`: all, unbuffered).
        pub miss_send_len: u16,
    }
}

impl Default for SwitchConfig {
    fn default() -> Self {
        SwitchConfig { flags: config_flags::FRAG_NORMAL, miss_send_len: OFP_DEFAULT_MISS_SEND_LEN }
    }
}

impl SwitchConfig {
    pub const BODY_LEN: usize = 4;

    /// Rejects flag bits outside `OFPC_FRAG_MASK` (`OFPSCFC_BAD_FLAGS`).
    pub fn validate(&self) -> Result<(), OfpError> {
        if self.flags & !config_flags::FRAG_MASK != 0 {
            return Err(OfpError::new(
                ErrorKind::SWITCH_CONFIG_FAILED_BAD_FLAGS,
                format!("switch config flags 0x{:04x} set undefined bits", self.flags),
            ));
        }
        Ok(())
    }
}

/// The table-config bits OpenFlow 1.4 defines: 1.3's deprecated ones, then
/// `OFPTC_EVICTION` and `OFPTC_VACANCY_EVENTS`.
pub mod table_config {
    /// `OFPTC_DEPRECATED_MASK`.
    pub const DEPRECATED_MASK: u32 = 3;
    /// `OFPTC_EVICTION`: the switch may evict flows to make room.
    pub const EVICTION: u32 = 1 << 2;
    /// `OFPTC_VACANCY_EVENTS`: the switch sends vacancy table-status events.
    pub const VACANCY_EVENTS: u32 = 1 << 3;
    /// Every bit 1.4 defines.
    pub const ALL14: u32 = DEPRECATED_MASK | EVICTION | VACANCY_EVENTS;
}

spec_table! {
    /// `ofp_table_mod_prop_type` numbers (1.4), also those of table descriptions.
    pub mod table_mod_prop_type: u16 as numbers {
        EVICTION = 2, VACANCY, EXPERIMENTER = 0xffff,
    }
}

/// A 1.4 table-mod or table-description property (`ofp_table_mod_prop_*`).
///
/// Wire forms after the 4-byte property header: eviction `flags:u32`
/// (`OFPTMPEF_*`); vacancy `vacancy_down:u8, vacancy_up:u8, vacancy:u8, pad[1]`; both
/// 8 bytes in all (`OFPBPC_BAD_LEN` otherwise). Any other type is kept in `Other`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TableModProp {
    /// `OFPTMPT_EVICTION`: which flows eviction considers (`OFPTMPEF_OTHER`,
    /// `_IMPORTANCE`, `_LIFETIME`).
    Eviction { flags: u32 },
    /// `OFPTMPT_VACANCY`: the thresholds (percent) of vacancy events and, in a
    /// description or status, the table's current vacancy (percent).
    Vacancy { vacancy_down: u8, vacancy_up: u8, vacancy: u8 },
    /// An experimenter's property or one of a type 1.4 does not define.
    Other(Property),
}

impl TableModProp {
    /// The property type number.
    pub fn prop_type(&self) -> u16 {
        match self {
            TableModProp::Eviction { .. } => table_mod_prop_type::EVICTION,
            TableModProp::Vacancy { .. } => table_mod_prop_type::VACANCY,
            TableModProp::Other(p) => p.prop_type(),
        }
    }

    /// Reads a list of properties to the end of `r`.
    pub fn decode_list(r: &mut Reader) -> Result<Vec<Self>, OfpError> {
        property::read_list(r, "table", |ty, body| {
            Ok(match ty {
                table_mod_prop_type::EVICTION => {
                    property::expect_len(body, 4, "table eviction")?;
                    TableModProp::Eviction { flags: body.u32()? }
                }
                table_mod_prop_type::VACANCY => {
                    property::expect_len(body, 4, "table vacancy")?;
                    let p = TableModProp::Vacancy {
                        vacancy_down: body.u8()?,
                        vacancy_up: body.u8()?,
                        vacancy: body.u8()?,
                    };
                    body.skip(1)?;
                    p
                }
                _ => TableModProp::Other(Property::from_body(ty, body, "table")?),
            })
        })
    }

    /// Writes the property with its padding.
    pub fn encode(&self, w: &mut Writer) {
        match self {
            TableModProp::Eviction { flags } => {
                property::write(w, table_mod_prop_type::EVICTION, |w| w.u32(*flags))
            }
            TableModProp::Vacancy { vacancy_down, vacancy_up, vacancy } => {
                property::write(w, table_mod_prop_type::VACANCY, |w| {
                    w.u8(*vacancy_down);
                    w.u8(*vacancy_up);
                    w.u8(*vacancy);
                    w.u8(0);
                })
            }
            TableModProp::Other(p) => p.encode(w),
        }
    }

    /// The checks a switch makes on the properties of a table-mod: no type twice
    /// (`OFPBPC_DUP_TYPE`), vacancy thresholds at most 100 and `vacancy_down` not above
    /// `vacancy_up` (`OFPBPC_BAD_VALUE`), and no experimenter's or undefined property
    /// ([`Property::unsupported`]).
    pub fn validate_list(props: &[Self]) -> Result<(), OfpError> {
        for (i, p) in props.iter().enumerate() {
            if props[..i].iter().any(|q| q.prop_type() == p.prop_type()) {
                return Err(OfpError::new(
                    ErrorKind::BAD_PROPERTY_DUP_TYPE,
                    format!("table property {:#x} appears twice", p.prop_type()),
                ));
            }
            match p {
                TableModProp::Eviction { .. } => {}
                TableModProp::Vacancy { vacancy_down, vacancy_up, .. } => {
                    if *vacancy_up > 100 || vacancy_down > vacancy_up {
                        return Err(OfpError::new(
                            ErrorKind::BAD_PROPERTY_BAD_VALUE,
                            format!(
                                "vacancy thresholds down {vacancy_down}% and up {vacancy_up}% \
                                 (at most 100, down not above up)"
                            ),
                        ));
                    }
                }
                TableModProp::Other(o) => return Err(o.unsupported("table-mod")),
            }
        }
        Ok(())
    }
}

/// An `OFPT_TABLE_MOD` body.
///
/// Wire form: `table_id:u8, pad[3], config:u32` (8 bytes), then in 1.4 properties to the
/// end of the message ([`TableModProp`]). In 1.3 every config bit is deprecated
/// (`OFPTC_DEPRECATED_MASK`); 1.4 adds `OFPTC_EVICTION` and `OFPTC_VACANCY_EVENTS`
/// ([`table_config`]). Decoding 1.3 gives no properties; encoding 1.3 leaves them out.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct TableMod {
    /// A table or `OFPTT_ALL`.
    pub table_id: u8,
    pub config: u32,
    /// 1.4's properties, in wire order.
    pub properties: Vec<TableModProp>,
}

impl TableMod {
    /// Length of the fixed part.
    pub const FIXED_LEN: usize = 8;

    /// Reads a body of a frame of `version`.
    pub fn decode(version: u8, r: &mut Reader) -> Result<TableMod, OfpError> {
        let table_id = r.u8()?;
        r.skip(3)?;
        let config = r.u32()?;
        let properties =
            if version >= OFP14_VERSION { TableModProp::decode_list(r)? } else { Vec::new() };
        Ok(TableMod { table_id, config, properties })
    }

    /// Writes the body for a frame of `version`.
    pub fn encode(&self, version: u8, w: &mut Writer) {
        w.u8(self.table_id);
        w.zeros(3);
        w.u32(self.config);
        if version >= OFP14_VERSION {
            self.properties.iter().for_each(|p| p.encode(w));
        }
    }

    /// Checks the table id (`OFPTMFC_BAD_TABLE`; every `u8` is at most `OFPTT_MAX` or
    /// `OFPTT_ALL`, so this cannot fail today but keeps the rule in one place), rejects
    /// config bits `version` does not define (`OFPTMFC_BAD_CONFIG`) and, for 1.4, checks
    /// the properties ([`TableModProp::validate_list`]).
    pub fn validate(&self, version: u8) -> Result<(), OfpError> {
        if self.table_id > OFPTT_MAX && self.table_id != OFPTT_ALL {
            return Err(OfpError::new(
                ErrorKind::TABLE_MOD_FAILED_BAD_TABLE,
                format!("table id {} is not a table", self.table_id),
            ));
        }
        let defined = if version >= OFP14_VERSION {
            table_config::ALL14
        } else {
            table_config::DEPRECATED_MASK
        };
        if self.config & !defined != 0 {
            return Err(OfpError::new(
                ErrorKind::TABLE_MOD_FAILED_BAD_CONFIG,
                format!("table config 0x{:08x} sets undefined bits", self.config),
            ));
        }
        TableModProp::validate_list(&self.properties)
    }
}

/// An `ofp_table_desc` (OpenFlow 1.4): one table's configuration, in the table-status
/// message and the `OFPMP_TABLE_DESC` reply.
///
/// Wire form: `length:u16, table_id:u8, pad[1], config:u32` (8 bytes), then properties
/// ([`TableModProp`]) to `length`, which counts the whole structure: below 8 or beyond
/// what holds it is `OFPBRC_BAD_LEN`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct TableDesc {
    pub table_id: u8,
    /// `OFPTC_*` bits ([`table_config`]).
    pub config: u32,
    pub properties: Vec<TableModProp>,
}

impl TableDesc {
    /// Length of the fixed part.
    pub const FIXED_LEN: usize = 8;

    /// Reads one description (its length says how far).
    pub fn decode(r: &mut Reader) -> Result<TableDesc, OfpError> {
        let mut s = take_sized(r, 0, Self::FIXED_LEN, "table description")?;
        s.skip(2)?;
        let table_id = s.u8()?;
        s.skip(1)?;
        let config = s.u32()?;
        let properties = TableModProp::decode_list(&mut s)?;
        Ok(TableDesc { table_id, config, properties })
    }

    /// Writes the description with its length.
    pub fn encode(&self, w: &mut Writer) {
        w.sized(0, |w| {
            w.u16(0);
            w.u8(self.table_id);
            w.u8(0);
            w.u32(self.config);
            self.properties.iter().for_each(|p| p.encode(w));
        });
    }
}

spec_table! {
    /// `ofp_table_mod_prop_eviction_flag` bits: what the switch evicts by.
    pub mod eviction_flag: u32 as bits {
        OTHER, IMPORTANCE, LIFETIME,
    }
}

impl TableDesc {
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

list_item_by_methods!(TableDesc, strategy::arb_table_desc());

wire_enum! {
    /// `ofp_table_reason` (1.4): why a table-status was sent.
    pub enum TableReason: u8 as from_u8 / to_u8 {
        /// The table's vacancy fell below `vacancy_down`.
        VacancyDown = 3,
        /// The table's vacancy rose above `vacancy_up`.
        VacancyUp = 4,
    }
}

/// An `OFPT_TABLE_STATUS` body (OpenFlow 1.4): `reason:u8, pad[7]`, then the table's
/// description ([`TableDesc`]) ending the message.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TableStatus {
    pub reason: TableReason,
    pub table: TableDesc,
}

impl TableStatus {
    pub fn decode(r: &mut Reader) -> Result<TableStatus, OfpError> {
        let reason = TableReason::from_u8(r.u8()?);
        r.skip(7)?;
        Ok(TableStatus { reason, table: TableDesc::decode(r)? })
    }

    pub fn encode(&self, w: &mut Writer) {
        w.u8(self.reason.to_u8());
        w.zeros(7);
        self.table.encode(w);
    }
}

/// proptest strategies for table-mods and descriptions.
#[cfg(test)]
pub(crate) mod strategy {
    use super::*;
    use proptest::prelude::*;

    /// Every table property: both defined ones, experimenters' and unknown types.
    pub fn arb_table_mod_prop() -> impl Strategy<Value = TableModProp> {
        prop_oneof![
            any::<u32>().prop_map(|flags| TableModProp::Eviction { flags }),
            any::<[u8; 3]>().prop_map(|[vacancy_down, vacancy_up, vacancy]| {
                TableModProp::Vacancy { vacancy_down, vacancy_up, vacancy }
            }),
            crate::v13::property::strategy::arb_property(&[
                table_mod_prop_type::EVICTION,
                table_mod_prop_type::VACANCY
            ])
            .prop_map(TableModProp::Other),
        ]
    }

    fn arb_props() -> impl Strategy<Value = Vec<TableModProp>> {
        proptest::collection::vec(arb_table_mod_prop(), 0..4)
    }

    /// Table-mods as a frame of `version` carries them (no properties before 1.4).
    pub fn arb_table_mod(version: u8) -> impl Strategy<Value = TableMod> {
        (any::<u8>(), any::<u32>(), arb_props()).prop_map(move |(table_id, config, props)| {
            let properties = if version >= OFP14_VERSION { props } else { Vec::new() };
            TableMod { table_id, config, properties }
        })
    }

    pub fn arb_table_desc() -> impl Strategy<Value = TableDesc> {
        (any::<u8>(), any::<u32>(), arb_props())
            .prop_map(|(table_id, config, properties)| TableDesc { table_id, config, properties })
    }

    pub fn arb_table_status() -> impl Strategy<Value = TableStatus> {
        (any::<u8>(), arb_table_desc())
            .prop_map(|(r, table)| TableStatus { reason: TableReason::from_u8(r), table })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::header::OFP13_VERSION;
    use crate::wire::{assert_padded_roundtrip, assert_roundtrip, assert_roundtrip_in, encoded};
    use proptest::prelude::*;

    #[test]
    fn spec_bytes() {
        let c = SwitchConfig::decode(&mut Reader::new(&[0, 1, 0xff, 0xff])).unwrap();
        assert_eq!(c, SwitchConfig { flags: config_flags::FRAG_DROP, miss_send_len: 0xffff });
        let t =
            TableMod::decode(OFP13_VERSION, &mut Reader::new(&[3, 0, 0, 0, 0, 0, 0, 3])).unwrap();
        assert_eq!(t, TableMod { table_id: 3, config: 3, properties: vec![] });
        assert_eq!(encoded(|w| t.encode(OFP13_VERSION, w)), [3, 0, 0, 0, 0, 0, 0, 3]);
    }

    /// A 1.4 table-mod: all tables, eviction and vacancy events on, eviction by
    /// importance (flags 2), vacancy thresholds 10% and 20%.
    #[test]
    fn spec_bytes_14() {
        let bytes = [
            0xff, 0, 0, 0, 0, 0, 0, 0x0c, // table ALL, config EVICTION | VACANCY_EVENTS
            0, 2, 0, 8, 0, 0, 0, 2, // eviction, flags IMPORTANCE
            0, 3, 0, 8, 10, 20, 0, 0, // vacancy, down 10, up 20
        ];
        let t = TableMod::decode(OFP14_VERSION, &mut Reader::new(&bytes)).unwrap();
        let want = TableMod {
            table_id: 0xff,
            config: table_config::EVICTION | table_config::VACANCY_EVENTS,
            properties: vec![
                TableModProp::Eviction { flags: 2 },
                TableModProp::Vacancy { vacancy_down: 10, vacancy_up: 20, vacancy: 0 },
            ],
        };
        assert_eq!(t, want);
        assert_eq!(encoded(|w| t.encode(OFP14_VERSION, w)), bytes);
        assert!(t.validate(OFP14_VERSION).is_ok());
        // The 1.4 bits are undefined in 1.3; 1.3 writes no properties.
        assert_eq!(
            t.validate(OFP13_VERSION).unwrap_err().kind,
            ErrorKind::TABLE_MOD_FAILED_BAD_CONFIG
        );
        assert_eq!(encoded(|w| t.encode(OFP13_VERSION, w)), bytes[..8]);

        // A description of table 8: length 24, config 0, the same two properties.
        let mut d = vec![0, 24, 8, 0, 0, 0, 0, 0];
        d.extend_from_slice(&bytes[8..]);
        let desc = TableDesc::decode(&mut Reader::new(&d)).unwrap();
        assert_eq!(desc, TableDesc { table_id: 8, config: 0, properties: want.properties });
        assert_eq!(encoded(|w| desc.encode(w)), d);

        // As a table-status: vacancy down.
        let mut st = vec![3, 0, 0, 0, 0, 0, 0, 0];
        st.extend_from_slice(&d);
        let s = TableStatus::decode(&mut Reader::new(&st)).unwrap();
        assert_eq!(s, TableStatus { reason: TableReason::VacancyDown, table: desc });
        assert_eq!(encoded(|w| s.encode(w)), st);
    }

    #[test]
    fn bad_lengths() {
        use crate::wire::assert_refused;
        // A vacancy property of length 12.
        let bad = [0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 12, 1, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        assert_refused(
            &[&bad],
            |r| TableMod::decode(OFP14_VERSION, r),
            ErrorKind::BAD_PROPERTY_BAD_LEN,
        );
        // A description whose length is below 8 or beyond the bytes.
        let cases: &[&[u8]] = &[&[0, 4, 0, 0, 0, 0, 0, 0], &[0, 16, 0, 0, 0, 0, 0, 0]];
        assert_refused(cases, TableDesc::decode, ErrorKind::BAD_REQUEST_BAD_LEN);
    }

    #[test]
    fn validate_properties() {
        let kind = |properties: Vec<TableModProp>| {
            TableMod { table_id: 0, config: 0, properties }
                .validate(OFP14_VERSION)
                .unwrap_err()
                .kind
        };
        let vacancy = |vacancy_down, vacancy_up| TableModProp::Vacancy {
            vacancy_down,
            vacancy_up,
            vacancy: 0,
        };
        assert_eq!(kind(vec![vacancy(30, 20)]), ErrorKind::BAD_PROPERTY_BAD_VALUE);
        assert_eq!(kind(vec![vacancy(30, 101)]), ErrorKind::BAD_PROPERTY_BAD_VALUE);
        assert_eq!(kind(vec![vacancy(1, 2), vacancy(1, 2)]), ErrorKind::BAD_PROPERTY_DUP_TYPE);
        let exp = Property::Experimenter { experimenter: 0x65, exp_type: 0, data: vec![] };
        assert_eq!(kind(vec![TableModProp::Other(exp)]), ErrorKind::BAD_PROPERTY_BAD_EXPERIMENTER);
        let unknown = Property::Unknown { ty: 7, data: vec![] };
        assert_eq!(kind(vec![TableModProp::Other(unknown)]), ErrorKind::BAD_PROPERTY_BAD_TYPE);
    }

    #[test]
    fn validate() {
        assert!(SwitchConfig::default().validate().is_ok());
        let bad = SwitchConfig { flags: 4, miss_send_len: 0 };
        assert_eq!(bad.validate().unwrap_err().kind, ErrorKind::SWITCH_CONFIG_FAILED_BAD_FLAGS);
        let all = TableMod { table_id: OFPTT_ALL, config: 3, properties: vec![] };
        assert!(all.validate(OFP13_VERSION).is_ok());
        let bad = TableMod { table_id: 0, config: 4, properties: vec![] };
        let kind = bad.validate(OFP13_VERSION).unwrap_err().kind;
        assert_eq!(kind, ErrorKind::TABLE_MOD_FAILED_BAD_CONFIG);
        assert!(bad.validate(OFP14_VERSION).is_ok());
        let bad = TableMod { table_id: 0, config: 16, properties: vec![] };
        let kind = bad.validate(OFP14_VERSION).unwrap_err().kind;
        assert_eq!(kind, ErrorKind::TABLE_MOD_FAILED_BAD_CONFIG);
    }

    proptest! {
        #[test]
        fn roundtrip(
            c in SwitchConfig::arb(),
            t13 in strategy::arb_table_mod(OFP13_VERSION),
            t14 in strategy::arb_table_mod(OFP14_VERSION),
            d in strategy::arb_table_desc(),
        ) {
            assert_roundtrip(&c, SwitchConfig::encode, SwitchConfig::decode);
            let bytes = assert_roundtrip_in(OFP13_VERSION, &t13, TableMod::encode, TableMod::decode);
            prop_assert_eq!(bytes.len(), 8);
            assert_padded_roundtrip(&t14, |t, w| t.encode(OFP14_VERSION, w), |r| {
                TableMod::decode(OFP14_VERSION, r)
            });
            assert_padded_roundtrip(&d, TableDesc::encode, TableDesc::decode);
        }

        #[test]
        fn table_status_roundtrip(s in strategy::arb_table_status()) {
            assert_padded_roundtrip(&s, TableStatus::encode, TableStatus::decode);
        }
    }
}
