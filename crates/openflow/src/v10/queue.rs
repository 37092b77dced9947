//! Queue configuration of OpenFlow 1.0 (`OFPT_QUEUE_GET_CONFIG_REPLY`).
//!
//! Reply body: `port:u16, pad[6]`, then `ofp_packet_queue`s to the end. A queue is
//! `queue_id:u32, len:u16, pad[2]` and its properties (`len` counts the 8-byte header);
//! a property is `property:u16, len:u16, pad[4]` and a body (`len` counts the header).
//! `OFPQT_MIN_RATE` (1) has a body `rate:u16, pad[6]` (16 bytes in all); any other
//! property keeps the bytes after its header as read.

use crate::error::{ErrorKind, OfpError};
use crate::wire::{Reader, Writer};

/// `OFPQT_NONE` and `OFPQT_MIN_RATE`.
pub const OFPQT_NONE: u16 = 0;
pub const OFPQT_MIN_RATE: u16 = 1;

fn bad_len(detail: String) -> OfpError {
    OfpError::new(ErrorKind::BAD_REQUEST_BAD_LEN, detail)
}

/// One queue property.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum QueueProperty {
    /// Guaranteed minimum rate in 1/10 of a percent; above 1000 means disabled.
    MinRate(u16),
    /// Any other property: its number and the bytes after its 8-byte header.
    Other { property: u16, data: Vec<u8> },
}

impl QueueProperty {
    pub fn decode(r: &mut Reader) -> Result<QueueProperty, OfpError> {
        let property = r.peek_u16(0)?;
        let len = usize::from(r.peek_u16(2)?);
        if len < 8 || len > r.remaining() {
            return Err(bad_len(format!(
                "queue property {property} has length {len} ({} bytes left, at least 8 needed)",
                r.remaining()
            )));
        }
        let mut b = r.sub(len)?;
        b.skip(8)?;
        if property == OFPQT_MIN_RATE {
            if len != 16 {
                return Err(bad_len(format!(
                    "min-rate queue property has length {len}, must be 16"
                )));
            }
            return Ok(QueueProperty::MinRate(b.u16()?));
        }
        Ok(QueueProperty::Other {
            property,
            data: b.take_rest().to_vec(),
        })
    }

    pub fn encode(&self, w: &mut Writer) {
        let start = w.len();
        match self {
            QueueProperty::MinRate(rate) => {
                w.u16(OFPQT_MIN_RATE);
                w.u16(16);
                w.zeros(4);
                w.u16(*rate);
                w.zeros(6);
            }
            QueueProperty::Other { property, data } => {
                w.u16(*property);
                w.u16(0);
                w.zeros(4);
                w.bytes(data);
                w.patch_len16(start + 2, start);
            }
        }
    }
}

/// `ofp_packet_queue`: a queue id and its properties.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PacketQueue {
    pub queue_id: u32,
    pub properties: Vec<QueueProperty>,
}

impl PacketQueue {
    pub fn decode(r: &mut Reader) -> Result<PacketQueue, OfpError> {
        let queue_id = r.u32()?;
        let len = usize::from(r.u16()?);
        r.skip(2)?;
        if len < 8 || len - 8 > r.remaining() {
            return Err(bad_len(format!(
                "queue {queue_id} has length {len} ({} bytes left after its header)",
                r.remaining()
            )));
        }
        let mut b = r.sub(len - 8)?;
        let mut properties = Vec::new();
        while !b.is_empty() {
            properties.push(QueueProperty::decode(&mut b)?);
        }
        Ok(PacketQueue {
            queue_id,
            properties,
        })
    }

    pub fn encode(&self, w: &mut Writer) {
        let start = w.len();
        w.u32(self.queue_id);
        w.u16(0);
        w.zeros(2);
        for p in &self.properties {
            p.encode(w);
        }
        w.patch_len16(start + 4, start);
    }
}

/// An `OFPT_QUEUE_GET_CONFIG_REPLY` body.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct QueueGetConfigReply {
    pub port: u16,
    pub queues: Vec<PacketQueue>,
}

impl QueueGetConfigReply {
    pub fn decode(r: &mut Reader) -> Result<QueueGetConfigReply, OfpError> {
        let port = r.u16()?;
        r.skip(6)?;
        let mut queues = Vec::new();
        while !r.is_empty() {
            queues.push(PacketQueue::decode(r)?);
        }
        Ok(QueueGetConfigReply { port, queues })
    }

    pub fn encode(&self, w: &mut Writer) {
        w.u16(self.port);
        w.zeros(6);
        for q in &self.queues {
            q.encode(w);
        }
    }
}

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
                .prop_map(|(property, data)| QueueProperty::Other { property, data }),
        ]
    }

    pub fn arb_queue_config_reply() -> impl Strategy<Value = QueueGetConfigReply> {
        (
            any::<u16>(),
            proptest::collection::vec(
                (
                    any::<u32>(),
                    proptest::collection::vec(arb_property(), 0..3),
                )
                    .prop_map(|(queue_id, properties)| PacketQueue {
                        queue_id,
                        properties,
                    }),
                0..3,
            ),
        )
            .prop_map(|(port, queues)| QueueGetConfigReply { port, queues })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn roundtrip(q in strategy::arb_queue_config_reply()) {
            let mut w = Writer::new();
            q.encode(&mut w);
            prop_assert_eq!(QueueGetConfigReply::decode(&mut Reader::new(&w.buf)).unwrap(), q);
        }
    }

    #[test]
    fn bytes_and_errors() {
        let q = QueueGetConfigReply {
            port: 2,
            queues: vec![PacketQueue {
                queue_id: 7,
                properties: vec![QueueProperty::MinRate(500)],
            }],
        };
        let mut w = Writer::new();
        q.encode(&mut w);
        let want: Vec<u8> = vec![
            0, 2, 0, 0, 0, 0, 0, 0, // port, pad
            0, 0, 0, 7, 0, 24, 0, 0, // queue 7, len 24
            0, 1, 0, 16, 0, 0, 0, 0, 0x01, 0xf4, 0, 0, 0, 0, 0, 0, // min rate 500
        ];
        assert_eq!(w.buf, want);
        // Min-rate property with a wrong length.
        let mut bad = want.clone();
        bad[13] = 16;
        bad[19] = 8;
        bad.truncate(24);
        let e = QueueGetConfigReply::decode(&mut Reader::new(&bad)).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BAD_REQUEST_BAD_LEN);
        assert!(e.detail.contains("min-rate"), "{e}");
        // Queue length beyond the message, and below its header.
        for l in [40u8, 4] {
            let mut bad = want.clone();
            bad[13] = l;
            let e = QueueGetConfigReply::decode(&mut Reader::new(&bad)).unwrap_err();
            assert_eq!(e.kind, ErrorKind::BAD_REQUEST_BAD_LEN);
        }
        // Property length zero.
        let mut bad = want.clone();
        bad[19] = 0;
        let e = QueueGetConfigReply::decode(&mut Reader::new(&bad)).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BAD_REQUEST_BAD_LEN);
        // Unknown properties keep their bytes.
        let mut other = want.clone();
        other[17] = 9;
        other[24] = 0xaa;
        let d = QueueGetConfigReply::decode(&mut Reader::new(&other)).unwrap();
        assert_eq!(
            d.queues[0].properties[0],
            QueueProperty::Other {
                property: 9,
                data: vec![0xaa, 0xf4, 0, 0, 0, 0, 0, 0]
            }
        );
        let mut w = Writer::new();
        d.encode(&mut w);
        assert_eq!(w.buf, other);
    }
}
