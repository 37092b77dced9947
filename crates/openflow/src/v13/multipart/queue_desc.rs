//! `OFPMP_QUEUE_DESC` (OpenFlow 1.4): the request names a port and a queue (`OFPP_ANY`,
//! `OFPQ_ALL` wildcards); the reply lists `ofp_queue_desc`s, `port_no:u32, queue_id:u32,
//! len:u16, pad[6]` (16 bytes) then properties to `len`: minimum and maximum rate
//! (types 1 and 2, `rate:u16, pad[2]`, in 1/10 of a percent, above 1000 disabled) and
//! experimenter (0xffff), framed as [`crate::v13::property`] describes; other types are
//! kept as read. A `len` below the fixed part or beyond the bytes is `OFPBRC_BAD_LEN`, a
//! length fault in a property `OFPBPC_BAD_LEN`.

use crate::error::OfpError;
use crate::v13::property::{self, Property};
use crate::wire::{take_sized, Reader, Writer};

/// Length of `ofp_queue_desc` before its properties.
pub const QUEUE_DESC_FIXED_LEN: usize = 16;

spec_table! {
    /// `ofp_queue_desc_prop_type` numbers.
    pub mod queue_desc_prop: u16 as numbers {
        MIN_RATE = 1, MAX_RATE, EXPERIMENTER = 0xffff,
    }
}

/// A queue-description property.
///
/// Invariant: `Other` never holds an unknown property of the min-rate or max-rate type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum QueueDescProp {
    /// `OFPQDPT_MIN_RATE`: the guaranteed rate, in 1/10 of a percent.
    MinRate(u16),
    /// `OFPQDPT_MAX_RATE`: the most the queue may use, in 1/10 of a percent.
    MaxRate(u16),
    /// `OFPQDPT_EXPERIMENTER`, or a type 1.4 does not define.
    Other(Property),
}

impl QueueDescProp {
    /// The property type number.
    pub fn prop_type(&self) -> u16 {
        match self {
            QueueDescProp::MinRate(_) => queue_desc_prop::MIN_RATE,
            QueueDescProp::MaxRate(_) => queue_desc_prop::MAX_RATE,
            QueueDescProp::Other(p) => p.prop_type(),
        }
    }

    /// Reads a list of properties to the end of `r`.
    pub fn decode_list(r: &mut Reader) -> Result<Vec<QueueDescProp>, OfpError> {
        property::read_list(r, "queue desc", |ty, body| {
            Ok(match ty {
                queue_desc_prop::MIN_RATE | queue_desc_prop::MAX_RATE => {
                    property::expect_len(body, 4, "queue desc rate")?;
                    let rate = body.u16()?;
                    body.skip(2)?;
                    if ty == queue_desc_prop::MIN_RATE {
                        QueueDescProp::MinRate(rate)
                    } else {
                        QueueDescProp::MaxRate(rate)
                    }
                }
                ty => QueueDescProp::Other(Property::from_body(ty, body, "queue desc")?),
            })
        })
    }

    /// Writes the property and its padding.
    pub fn encode(&self, w: &mut Writer) {
        match self {
            QueueDescProp::MinRate(rate) | QueueDescProp::MaxRate(rate) => {
                property::write(w, self.prop_type(), |w| {
                    w.u16(*rate);
                    w.zeros(2);
                })
            }
            QueueDescProp::Other(p) => p.encode(w),
        }
    }
}

/// `ofp_queue_desc`: one queue of a port and its properties (module comment).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct QueueDesc {
    pub port_no: u32,
    pub queue_id: u32,
    /// In wire order.
    pub properties: Vec<QueueDescProp>,
}

impl QueueDesc {
    /// Reads one description: its `len` must cover the fixed part and fit in `r`.
    pub fn decode(r: &mut Reader) -> Result<QueueDesc, OfpError> {
        let mut s = take_sized(r, 8, QUEUE_DESC_FIXED_LEN, "queue desc")?;
        let port_no = s.u32()?;
        let queue_id = s.u32()?;
        s.skip(8)?;
        Ok(QueueDesc { port_no, queue_id, properties: QueueDescProp::decode_list(&mut s)? })
    }

    /// Writes the description with its length.
    pub fn encode(&self, w: &mut Writer) {
        w.sized(8, |w| {
            w.u32(self.port_no);
            w.u32(self.queue_id);
            w.zeros(8);
            self.properties.iter().for_each(|p| p.encode(w));
        });
    }

    /// The minimum rate property's value, if there is one.
    pub fn min_rate(&self) -> Option<u16> {
        self.properties.iter().find_map(|p| match p {
            QueueDescProp::MinRate(r) => Some(*r),
            _ => None,
        })
    }

    /// The maximum rate property's value, if there is one.
    pub fn max_rate(&self) -> Option<u16> {
        self.properties.iter().find_map(|p| match p {
            QueueDescProp::MaxRate(r) => Some(*r),
            _ => None,
        })
    }
}

/// proptest strategies for queue descriptions.
#[cfg(test)]
pub(crate) mod strategy {
    use super::*;
    use crate::v13::property::strategy::arb_property;
    use proptest::prelude::*;

    /// Every queue-description property.
    pub fn arb_queue_desc_prop() -> impl Strategy<Value = QueueDescProp> {
        prop_oneof![
            any::<u16>().prop_map(QueueDescProp::MinRate),
            any::<u16>().prop_map(QueueDescProp::MaxRate),
            arb_property(&[queue_desc_prop::MIN_RATE, queue_desc_prop::MAX_RATE])
                .prop_map(QueueDescProp::Other),
        ]
    }

    /// Descriptions with up to 3 properties.
    pub fn arb_queue_desc() -> impl Strategy<Value = QueueDesc> {
        (any::<u32>(), any::<u32>(), proptest::collection::vec(arb_queue_desc_prop(), 0..4))
            .prop_map(|(port_no, queue_id, properties)| QueueDesc { port_no, queue_id, properties })
    }
}

#[cfg(test)]
mod tests {
    use super::strategy::*;
    use super::*;
    use crate::error::ErrorKind;
    use crate::wire::{assert_padded_roundtrip, assert_refused, encoded};
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn queue_desc_roundtrip(d in arb_queue_desc()) {
            let bytes = assert_padded_roundtrip(&d, QueueDesc::encode, QueueDesc::decode);
            prop_assert_eq!(usize::from(u16::from_be_bytes([bytes[8], bytes[9]])), bytes.len());
            for n in 0..bytes.len() {
                prop_assert!(QueueDesc::decode(&mut Reader::new(&bytes[..n])).is_err());
            }
        }
    }

    #[test]
    fn bytes_value_bytes() {
        let bytes = [
            0, 0, 0, 8, 0, 0, 0, 1, 0, 32, 0, 0, 0, 0, 0, 0, // port 8 queue 1, 32 bytes
            0, 1, 0, 8, 1, 44, 0, 0, // min rate 30%
            0, 2, 0, 8, 3, 132, 0, 0, // max rate 90%
        ];
        let d = QueueDesc::decode(&mut Reader::new(&bytes)).unwrap();
        assert_eq!(
            d,
            QueueDesc {
                port_no: 8,
                queue_id: 1,
                properties: vec![QueueDescProp::MinRate(300), QueueDescProp::MaxRate(900)],
            }
        );
        assert_eq!((d.min_rate(), d.max_rate()), (Some(300), Some(900)));
        assert_eq!(encoded(|w| d.encode(w)), bytes);
    }

    #[test]
    fn length_errors() {
        let cases: &[&[u8]] = &[
            // len below the fixed part, beyond the bytes
            &[0, 0, 0, 8, 0, 0, 0, 1, 0, 8, 0, 0, 0, 0, 0, 0],
            &[0, 0, 0, 8, 0, 0, 0, 1, 0, 24, 0, 0, 0, 0, 0, 0],
        ];
        assert_refused(cases, QueueDesc::decode, ErrorKind::BAD_REQUEST_BAD_LEN);
        // a rate property of length 6
        let rate6: &[u8] =
            &[0, 0, 0, 8, 0, 0, 0, 1, 0, 24, 0, 0, 0, 0, 0, 0, 0, 1, 0, 6, 0, 0, 0, 0];
        assert_refused(&[rate6], QueueDesc::decode, ErrorKind::BAD_PROPERTY_BAD_LEN);
    }
}
