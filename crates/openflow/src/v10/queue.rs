//! Queue configuration of OpenFlow 1.0 (`OFPT_QUEUE_GET_CONFIG_REPLY`): one type for
//! every version, [`crate::model::queue`] (1.0 defines only the min-rate property; a
//! queue takes the reply's port).

pub use crate::model::queue::{PacketQueue, QueueGetConfigReply, QueueProperty, OFPQT_MIN_RATE};

/// `OFPQT_NONE`.
pub const OFPQT_NONE: u16 = 0;

/// proptest strategies for queue configuration replies.
#[cfg(test)]
pub(crate) mod strategy {
    use super::*;
    use proptest::prelude::*;

    pub fn arb_property() -> impl Strategy<Value = QueueProperty> {
        prop_oneof![
            any::<u16>().prop_map(QueueProperty::MinRate),
            (
                any::<u16>().prop_filter("not min-rate", |p| *p != OFPQT_MIN_RATE),
                proptest::collection::vec(any::<u8>(), 0..24),
            )
                .prop_map(|(ty, data)| QueueProperty::Unknown { ty, data }),
        ]
    }

    pub fn arb_queue_config_reply() -> impl Strategy<Value = QueueGetConfigReply> {
        (
            any::<u16>().prop_map(crate::v10::port::port_to_v13),
            proptest::collection::vec(
                (any::<u32>(), proptest::collection::vec(arb_property(), 0..3)),
                0..3,
            ),
        )
            .prop_map(|(port, queues)| QueueGetConfigReply {
                port,
                queues: queues
                    .into_iter()
                    .map(|(queue_id, properties)| PacketQueue { queue_id, port, properties })
                    .collect(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use crate::header::OFP10_VERSION;
    use crate::wire::{assert_roundtrip_in, encoded, Reader};
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn roundtrip(q in strategy::arb_queue_config_reply()) {
            assert_roundtrip_in(OFP10_VERSION, &q, QueueGetConfigReply::encode, QueueGetConfigReply::decode);
        }
    }

    #[test]
    fn bytes_and_errors() {
        let q = QueueGetConfigReply {
            port: 2,
            queues: vec![PacketQueue {
                queue_id: 7,
                port: 2,
                properties: vec![QueueProperty::MinRate(500)],
            }],
        };
        let got = encoded(|w| q.encode(OFP10_VERSION, w));
        let want: Vec<u8> = vec![
            0, 2, 0, 0, 0, 0, 0, 0, // port, pad
            0, 0, 0, 7, 0, 24, 0, 0, // queue 7, len 24
            0, 1, 0, 16, 0, 0, 0, 0, 0x01, 0xf4, 0, 0, 0, 0, 0, 0, // min rate 500
        ];
        assert_eq!(got, want);
        // Min-rate property with a wrong length.
        let mut bad = want.clone();
        bad[13] = 16;
        bad[19] = 8;
        bad.truncate(24);
        let e = QueueGetConfigReply::decode(OFP10_VERSION, &mut Reader::new(&bad)).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BAD_REQUEST_BAD_LEN);
        assert!(e.detail.contains("min-rate"), "{e}");
        // Queue length beyond the message, and below its header.
        for l in [40u8, 4] {
            let mut bad = want.clone();
            bad[13] = l;
            let e = QueueGetConfigReply::decode(OFP10_VERSION, &mut Reader::new(&bad)).unwrap_err();
            assert_eq!(e.kind, ErrorKind::BAD_REQUEST_BAD_LEN);
        }
        // Property length zero.
        let mut bad = want.clone();
        bad[19] = 0;
        let e = QueueGetConfigReply::decode(OFP10_VERSION, &mut Reader::new(&bad)).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BAD_REQUEST_BAD_LEN);
        // Unknown properties keep their bytes.
        let mut other = want.clone();
        other[17] = 9;
        other[24] = 0xaa;
        let d = QueueGetConfigReply::decode(OFP10_VERSION, &mut Reader::new(&other)).unwrap();
        assert_eq!(
            d.queues[0].properties[0],
            QueueProperty::Unknown { ty: 9, data: vec![0xaa, 0xf4, 0, 0, 0, 0, 0, 0] }
        );
        assert_eq!(encoded(|w| d.encode(OFP10_VERSION, w)), other);
    }
}
