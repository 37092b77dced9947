//! OpenFlow 1.3 table features (`ofp_table_features`), the element of the
//! `OFPMP_TABLE_FEATURES` request and reply bodies.
//!
//! Wire form: `length:u16, table_id:u8, pad[5], name[32], metadata_match:u64,
//! metadata_write:u64, config:u32, max_entries:u32`, then properties (see [`property`])
//! to `length`. Every property is padded to 8 bytes, so `length` is a multiple of 8 and at
//! least 64. Every length problem is `OFPTFFC_BAD_LEN`; an unknown property type decodes
//! (it is kept for re-encoding) and is rejected by [`TableFeatures::validate`] with
//! `OFPTFFC_BAD_TYPE`.

pub mod property;

pub use property::{prop_type, ActionId, FeatureId, InstructionId, OxmId, TableFeatureProp};

use crate::error::{ErrorKind, OfpError};
use crate::v13::flow_mod::OFPTT_MAX;
use crate::wire::{Reader, Writer};
use property::tf_len;

/// Length of the fixed part of `ofp_table_features`.
pub const TABLE_FEATURES_LEN: usize = 64;
/// Length of the name field (`OFP_MAX_TABLE_NAME_LEN`).
pub const TABLE_NAME_LEN: usize = 32;

/// One table's features: its limits and the properties that say what it can match,
/// which instructions and actions it takes, and where it can go next.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct TableFeatures {
    pub table_id: u8,
    /// At most 32 bytes survive encoding (the field is 32 bytes, NUL padded).
    pub name: String,
    pub metadata_match: u64,
    pub metadata_write: u64,
    pub config: u32,
    pub max_entries: u32,
    pub properties: Vec<TableFeatureProp>,
}

impl TableFeatures {
    /// Reads one `ofp_table_features`, properties included.
    pub fn decode(r: &mut Reader) -> Result<TableFeatures, OfpError> {
        let len = r.peek_u16(0).map_err(tf_len)? as usize;
        if len < TABLE_FEATURES_LEN || !len.is_multiple_of(8) || len > r.remaining() {
            return Err(OfpError::new(
                ErrorKind::TABLE_FEATURES_FAILED_BAD_LEN,
                format!(
                    "table features length {len} (must be a multiple of 8, at least {TABLE_FEATURES_LEN} \
                     and within the {} bytes left)",
                    r.remaining()
                ),
            ));
        }
        let mut s = r.sub(len).map_err(tf_len)?;
        let fixed = (|| {
            s.skip(2)?;
            let table_id = s.u8()?;
            s.skip(5)?;
            Ok::<_, OfpError>(TableFeatures {
                table_id,
                name: s.fixed_str(TABLE_NAME_LEN)?,
                metadata_match: s.u64()?,
                metadata_write: s.u64()?,
                config: s.u32()?,
                max_entries: s.u32()?,
                properties: Vec::new(),
            })
        })();
        let mut tf = fixed.map_err(tf_len)?;
        tf.properties = s.list(TableFeatureProp::decode)?;
        Ok(tf)
    }

    /// Reads table features until `r` is empty.
    pub fn decode_list(r: &mut Reader) -> Result<Vec<TableFeatures>, OfpError> {
        r.list(TableFeatures::decode)
    }

    pub fn encode(&self, w: &mut Writer) {
        w.sized(0, |w| {
            w.u16(0);
            w.u8(self.table_id);
            w.zeros(5);
            w.fixed_str(&self.name, TABLE_NAME_LEN);
            w.u64(self.metadata_match);
            w.u64(self.metadata_write);
            w.u32(self.config);
            w.u32(self.max_entries);
            self.properties.iter().for_each(|p| p.encode(w));
        });
    }

    /// The property of type `ty`, if present.
    pub fn property(&self, ty: u16) -> Option<&TableFeatureProp> {
        self.properties.iter().find(|p| p.prop_type() == ty)
    }

    /// Checks what a switch checks before applying a table-features request: the table
    /// id names a table (`OFPTFFC_BAD_TABLE`) and every property is valid (see
    /// [`TableFeatureProp::validate`]).
    pub fn validate(&self) -> Result<(), OfpError> {
        if self.table_id > OFPTT_MAX {
            return Err(OfpError::new(
                ErrorKind::TABLE_FEATURES_FAILED_BAD_TABLE,
                format!("table id {} is above OFPTT_MAX", self.table_id),
            ));
        }
        self.properties.iter().try_for_each(TableFeatureProp::validate)
    }
}

/// proptest strategies for table features.
#[cfg(test)]
pub(crate) mod strategy {
    use super::*;
    use proptest::collection::vec;
    use proptest::prelude::*;

    prop_compose! {
        pub fn arb_table_features()(
            table_id in any::<u8>(),
            name in "[a-zA-Z0-9 _-]{0,32}",
            metadata_match in any::<u64>(),
            metadata_write in any::<u64>(),
            config in any::<u32>(),
            max_entries in any::<u32>(),
            properties in vec(property::strategy::arb_prop(), 0..6),
        ) -> TableFeatures {
            TableFeatures { table_id, name, metadata_match, metadata_write, config, max_entries, properties }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{assert_padded_roundtrip, encoded};
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn roundtrip(t in strategy::arb_table_features()) {
            let bytes =
                assert_padded_roundtrip(&vec![t], |l, w| l[0].encode(w), TableFeatures::decode_list);
            prop_assert_eq!(u16::from_be_bytes([bytes[0], bytes[1]]) as usize, bytes.len());
        }

        #[test]
        fn truncation_is_bad_len(t in strategy::arb_table_features()) {
            let bytes = encoded(|w| t.encode(w));
            for n in 0..bytes.len() {
                let e = TableFeatures::decode(&mut Reader::new(&bytes[..n])).unwrap_err();
                prop_assert_eq!(e.kind, ErrorKind::TABLE_FEATURES_FAILED_BAD_LEN);
            }
        }

        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = TableFeatures::decode_list(&mut Reader::new(&bytes));
        }
    }

    fn sample() -> TableFeatures {
        TableFeatures {
            table_id: 3,
            name: "acl".into(),
            metadata_match: u64::MAX,
            metadata_write: 0xff,
            config: 0,
            max_entries: 1_000_000,
            properties: vec![
                TableFeatureProp::NextTables { miss: false, tables: vec![4, 5] },
                TableFeatureProp::Match(vec![OxmId::basic(0, false, 4)]),
            ],
        }
    }

    #[test]
    fn bytes_value_bytes() {
        let mut bytes = vec![0, 80, 3, 0, 0, 0, 0, 0];
        let mut name = [0u8; 32];
        name[..3].copy_from_slice(b"acl");
        bytes.extend_from_slice(&name);
        bytes.extend_from_slice(&[0xff; 8]);
        bytes.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0xff]);
        bytes.extend_from_slice(&[0, 0, 0, 0, 0, 0x0f, 0x42, 0x40]);
        bytes.extend_from_slice(&[0, 2, 0, 6, 4, 5, 0, 0]);
        bytes.extend_from_slice(&[0, 8, 0, 8, 0x80, 0, 0, 4]);
        let t = TableFeatures::decode(&mut Reader::new(&bytes)).unwrap();
        assert_eq!(t, sample());
        assert_eq!(encoded(|w| t.encode(w)), bytes);
        assert_eq!(
            t.property(prop_type::MATCH),
            Some(&TableFeatureProp::Match(vec![OxmId::basic(0, false, 4)]))
        );
    }

    #[test]
    fn bad_lengths() {
        let good = encoded(|w| sample().encode(w));
        let with_len = |len: u16| {
            let mut b = good.clone();
            b[..2].copy_from_slice(&len.to_be_bytes());
            b
        };
        for b in [with_len(56), with_len(84), with_len(88), with_len(0)] {
            let e = TableFeatures::decode(&mut Reader::new(&b)).unwrap_err();
            assert_eq!(e.kind, ErrorKind::TABLE_FEATURES_FAILED_BAD_LEN, "{e}");
        }
        // A property whose length runs past the table's own length.
        let mut b = good.clone();
        b[66..68].copy_from_slice(&20u16.to_be_bytes());
        let e = TableFeatures::decode(&mut Reader::new(&b)).unwrap_err();
        assert_eq!(e.kind, ErrorKind::TABLE_FEATURES_FAILED_BAD_LEN);
    }

    #[test]
    fn validate_kinds() {
        assert!(sample().validate().is_ok());
        let mut t = sample();
        t.table_id = 0xff;
        assert_eq!(t.validate().unwrap_err().kind, ErrorKind::TABLE_FEATURES_FAILED_BAD_TABLE);
        let mut t = sample();
        t.properties.push(TableFeatureProp::Unknown { ty: 11, data: vec![] });
        assert_eq!(t.validate().unwrap_err().kind, ErrorKind::TABLE_FEATURES_FAILED_BAD_TYPE);
    }
}
