//! `OFPT_QUEUE_GET_CONFIG_REQUEST` / `_REPLY` (OpenFlow 1.3): the queues of a port.
//!
//! Request wire form (8 bytes): `port:u32, pad[4]`.
//!
//! The reply is one type for every version, [`crate::model::queue`].

pub use crate::model::queue::{
    PacketQueue, QueueGetConfigReply, QueueProperty, OFPQT_EXPERIMENTER, OFPQT_MAX_RATE,
    OFPQT_MIN_RATE,
};
/// `OFPQ_ALL`: every queue (and in a request's port field, `OFPP_ANY` means every port).
pub const OFPQ_ALL: u32 = 0xffff_ffff;

/// proptest strategies for queue configuration.
#[cfg(test)]
pub(crate) mod strategy {
    use super::*;
    use proptest::prelude::*;

    pub fn arb_queue_property() -> impl Strategy<Value = QueueProperty> {
        let data = || proptest::collection::vec(any::<u8>(), 0..12);
        prop_oneof![
            any::<u16>().prop_map(QueueProperty::MinRate),
            any::<u16>().prop_map(QueueProperty::MaxRate),
            (any::<u32>(), data()).prop_map(|(experimenter, data)| {
                QueueProperty::Experimenter { experimenter, data }
            }),
            (3u16..0xffff, data()).prop_map(|(ty, data)| QueueProperty::Unknown { ty, data }),
        ]
    }

    pub fn arb_packet_queue() -> impl Strategy<Value = PacketQueue> {
        (any::<u32>(), any::<u32>(), proptest::collection::vec(arb_queue_property(), 0..3))
            .prop_map(|(queue_id, port, properties)| PacketQueue { queue_id, port, properties })
    }

    pub fn arb_queue_get_config_reply() -> impl Strategy<Value = QueueGetConfigReply> {
        (any::<u32>(), proptest::collection::vec(arb_packet_queue(), 0..3))
            .prop_map(|(port, queues)| QueueGetConfigReply { port, queues })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{ErrorKind, OfpError};
    use crate::header::OFP13_VERSION;
    use crate::wire::{assert_roundtrip, assert_roundtrip_in, encoded, Reader};
    use proptest::prelude::*;

    fn decode(bytes: &[u8]) -> Result<QueueGetConfigReply, OfpError> {
        QueueGetConfigReply::decode(OFP13_VERSION, &mut Reader::new(bytes))
    }

    fn spec_reply() -> Vec<u8> {
        let mut b = vec![0, 0, 0, 1, 0, 0, 0, 0]; // port 1
        b.extend_from_slice(&[0, 0, 0, 5, 0, 0, 0, 1, 0, 48, 0, 0, 0, 0, 0, 0]); // queue 5, len 48
        b.extend_from_slice(&[0, 1, 0, 16, 0, 0, 0, 0, 0x01, 0xf4, 0, 0, 0, 0, 0, 0]); // min 500
        b.extend_from_slice(&[0, 2, 0, 16, 0, 0, 0, 0, 0x03, 0xe8, 0, 0, 0, 0, 0, 0]); // max 1000
        b
    }

    #[test]
    fn spec_bytes() {
        let bytes = spec_reply();
        let q = decode(&bytes).unwrap();
        assert_eq!(
            q,
            QueueGetConfigReply {
                port: 1,
                queues: vec![PacketQueue {
                    queue_id: 5,
                    port: 1,
                    properties: vec![QueueProperty::MinRate(500), QueueProperty::MaxRate(1000)]
                }]
            }
        );
        assert_eq!(encoded(|w| q.encode(OFP13_VERSION, w)), bytes);
    }

    #[test]
    fn bad_lengths() {
        let cases: Vec<(usize, u8)> = vec![
            (17, 15), // queue len below 16
            (17, 64), // queue len past the end
            (27, 15), // min-rate property len not 16
            (27, 7),  // property len below 8
            (27, 40), // property len past the queue
        ];
        for (at, v) in cases {
            let mut b = spec_reply();
            b[at] = v;
            let e = decode(&b).unwrap_err();
            assert_eq!(e.kind, ErrorKind::BAD_REQUEST_BAD_LEN, "byte {at} = {v}");
        }
        // A consistent queue whose rate property is only its 8-byte header.
        let mut b = vec![0, 0, 0, 1, 0, 0, 0, 0];
        b.extend_from_slice(&[0, 0, 0, 5, 0, 0, 0, 1, 0, 24, 0, 0, 0, 0, 0, 0]);
        b.extend_from_slice(&[0, 1, 0, 8, 0, 0, 0, 0]);
        assert_eq!(decode(&b).unwrap_err().kind, ErrorKind::BAD_REQUEST_BAD_LEN);
        // An experimenter property too short for its id.
        b[24] = 0xff;
        b[25] = 0xff;
        assert_eq!(decode(&b).unwrap_err().kind, ErrorKind::BAD_REQUEST_BAD_LEN);
        // An unknown property of 8 bytes is kept.
        b[24] = 0;
        b[25] = 9;
        assert_eq!(
            decode(&b).unwrap().queues[0].properties,
            vec![QueueProperty::Unknown { ty: 9, data: vec![] }]
        );
        // Trailing bytes that cannot be a queue.
        let mut b = spec_reply();
        b.extend_from_slice(&[0; 8]);
        assert_eq!(decode(&b).unwrap_err().kind, ErrorKind::BAD_REQUEST_BAD_LEN);
    }

    #[test]
    fn request() {
        use crate::header::t13;
        use crate::v13::Message;
        let m = Message::QueueGetConfigRequest(0xffff_fffc);
        let bytes = assert_roundtrip(&m, Message::encode_body, |r| {
            Message::decode(t13::QUEUE_GET_CONFIG_REQUEST, r)
        });
        assert_eq!(bytes, [0xff, 0xff, 0xff, 0xfc, 0, 0, 0, 0]);
    }

    proptest! {
        #[test]
        fn roundtrip(q in strategy::arb_queue_get_config_reply()) {
            assert_roundtrip_in(OFP13_VERSION, &q, QueueGetConfigReply::encode, QueueGetConfigReply::decode);
        }
    }
}
