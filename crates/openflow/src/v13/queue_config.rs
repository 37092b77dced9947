//! `OFPT_QUEUE_GET_CONFIG_REQUEST` / `_REPLY` (OpenFlow 1.3): the queues of a port.
//!
//! Request wire form (8 bytes): `port:u32, pad[4]`.
//!
//! Reply wire form: `port:u32, pad[4]`, then `ofp_packet_queue`s to the end:
//! `queue_id:u32, port:u32, len:u16, pad[6]`, then properties up to `len`. A property
//! is `property:u16, len:u16, pad[4]` and a body: `rate:u16, pad[6]` for
//! `OFPQT_MIN_RATE` (1) and `OFPQT_MAX_RATE` (2) (16 bytes in all),
//! `experimenter:u32, pad[4], data` for `OFPQT_EXPERIMENTER` (0xffff). Properties of
//! other types are kept as read (the bytes after the 8-byte property header).
//!
//! Every length is checked: a queue shorter than 16 bytes or a property shorter than 8
//! bytes, either running past its container, or a rate property that is not 16 bytes
//! long, is `OFPBRC_BAD_LEN`.

use crate::error::OfpError;
use crate::v13::bad_len;
use crate::wire::{Reader, Writer};

pub const OFPQT_MIN_RATE: u16 = 1;
pub const OFPQT_MAX_RATE: u16 = 2;
pub const OFPQT_EXPERIMENTER: u16 = 0xffff;
/// `OFPQ_ALL`: every queue (and in a request's port field, `OFPP_ANY` means every port).
pub const OFPQ_ALL: u32 = 0xffff_ffff;

/// One queue property.
///
/// Invariant for round trips: `Unknown::ty` is none of the three named types.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum QueueProperty {
    /// Guaranteed rate in 1/10 of a percent of the port speed; > 1000 means disabled.
    MinRate(u16),
    /// Maximum rate in 1/10 of a percent; > 1000 means disabled.
    MaxRate(u16),
    Experimenter {
        experimenter: u32,
        data: Vec<u8>,
    },
    Unknown {
        ty: u16,
        data: Vec<u8>,
    },
}

impl QueueProperty {
    pub fn decode(r: &mut Reader) -> Result<QueueProperty, OfpError> {
        if r.remaining() < 8 {
            return Err(bad_len(format!(
                "queue property header needs 8 bytes, {} left",
                r.remaining()
            )));
        }
        let ty = r.u16()?;
        let len = r.u16()? as usize;
        if len < 8 || len - 4 > r.remaining() {
            return Err(bad_len(format!(
                "queue property length {len} is below 8 or past the queue's end"
            )));
        }
        let mut body = r.sub(len - 4)?;
        body.skip(4)?;
        match ty {
            OFPQT_MIN_RATE | OFPQT_MAX_RATE => {
                if len != 16 {
                    return Err(bad_len(format!(
                        "rate queue property has length {len}, not 16"
                    )));
                }
                let rate = body.u16()?;
                Ok(if ty == OFPQT_MIN_RATE {
                    QueueProperty::MinRate(rate)
                } else {
                    QueueProperty::MaxRate(rate)
                })
            }
            OFPQT_EXPERIMENTER => {
                if len < 16 {
                    return Err(bad_len(format!(
                        "experimenter queue property length {len} is below 16"
                    )));
                }
                let experimenter = body.u32()?;
                body.skip(4)?;
                Ok(QueueProperty::Experimenter {
                    experimenter,
                    data: body.take_rest().to_vec(),
                })
            }
            _ => Ok(QueueProperty::Unknown {
                ty,
                data: body.take_rest().to_vec(),
            }),
        }
    }

    pub fn encode(&self, w: &mut Writer) {
        let start = w.len();
        match self {
            QueueProperty::MinRate(rate) | QueueProperty::MaxRate(rate) => {
                let ty = if matches!(self, QueueProperty::MinRate(_)) {
                    OFPQT_MIN_RATE
                } else {
                    OFPQT_MAX_RATE
                };
                w.u16(ty);
                w.u16(16);
                w.zeros(4);
                w.u16(*rate);
                w.zeros(6);
            }
            QueueProperty::Experimenter { experimenter, data } => {
                w.u16(OFPQT_EXPERIMENTER);
                w.u16(0);
                w.zeros(4);
                w.u32(*experimenter);
                w.zeros(4);
                w.bytes(data);
            }
            QueueProperty::Unknown { ty, data } => {
                w.u16(*ty);
                w.u16(0);
                w.zeros(4);
                w.bytes(data);
            }
        }
        w.patch_len16(start + 2, start);
    }
}

/// One queue (`ofp_packet_queue`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct PacketQueue {
    pub queue_id: u32,
    pub port: u32,
    pub properties: Vec<QueueProperty>,
}

impl PacketQueue {
    pub fn decode(r: &mut Reader) -> Result<PacketQueue, OfpError> {
        if r.remaining() < 16 {
            return Err(bad_len(format!(
                "queue header needs 16 bytes, {} left",
                r.remaining()
            )));
        }
        let queue_id = r.u32()?;
        let port = r.u32()?;
        let len = r.u16()? as usize;
        r.skip(6)?;
        if len < 16 || len - 16 > r.remaining() {
            return Err(bad_len(format!(
                "queue length {len} is below 16 or past the message end"
            )));
        }
        let mut body = r.sub(len - 16)?;
        let mut properties = Vec::new();
        while !body.is_empty() {
            properties.push(QueueProperty::decode(&mut body)?);
        }
        Ok(PacketQueue {
            queue_id,
            port,
            properties,
        })
    }

    pub fn encode(&self, w: &mut Writer) {
        let start = w.len();
        w.u32(self.queue_id);
        w.u32(self.port);
        w.u16(0);
        w.zeros(6);
        for p in &self.properties {
            p.encode(w);
        }
        w.patch_len16(start + 8, start);
    }
}

/// An `OFPT_QUEUE_GET_CONFIG_REPLY` body.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct QueueGetConfigReply {
    pub port: u32,
    pub queues: Vec<PacketQueue>,
}

impl QueueGetConfigReply {
    pub fn decode(r: &mut Reader) -> Result<QueueGetConfigReply, OfpError> {
        let port = r.u32()?;
        r.skip(4)?;
        let mut queues = Vec::new();
        while !r.is_empty() {
            queues.push(PacketQueue::decode(r)?);
        }
        Ok(QueueGetConfigReply { port, queues })
    }

    pub fn encode(&self, w: &mut Writer) {
        w.u32(self.port);
        w.zeros(4);
        for q in &self.queues {
            q.encode(w);
        }
    }
}

/// Reads an `OFPT_QUEUE_GET_CONFIG_REQUEST` body: the port.
pub fn decode_request(r: &mut Reader) -> Result<u32, OfpError> {
    let port = r.u32()?;
    r.skip(4)?;
    Ok(port)
}

/// Writes an `OFPT_QUEUE_GET_CONFIG_REQUEST` body.
pub fn encode_request(port: u32, w: &mut Writer) {
    w.u32(port);
    w.zeros(4);
}

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
        (
            any::<u32>(),
            any::<u32>(),
            proptest::collection::vec(arb_queue_property(), 0..3),
        )
            .prop_map(|(queue_id, port, properties)| PacketQueue {
                queue_id,
                port,
                properties,
            })
    }

    pub fn arb_queue_get_config_reply() -> impl Strategy<Value = QueueGetConfigReply> {
        (
            any::<u32>(),
            proptest::collection::vec(arb_packet_queue(), 0..3),
        )
            .prop_map(|(port, queues)| QueueGetConfigReply { port, queues })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use proptest::prelude::*;

    fn decode(bytes: &[u8]) -> Result<QueueGetConfigReply, OfpError> {
        QueueGetConfigReply::decode(&mut Reader::new(bytes))
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
        let mut w = Writer::new();
        q.encode(&mut w);
        assert_eq!(w.buf, bytes);
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
            vec![QueueProperty::Unknown {
                ty: 9,
                data: vec![]
            }]
        );
        // Trailing bytes that cannot be a queue.
        let mut b = spec_reply();
        b.extend_from_slice(&[0; 8]);
        assert_eq!(decode(&b).unwrap_err().kind, ErrorKind::BAD_REQUEST_BAD_LEN);
    }

    #[test]
    fn request() {
        let mut w = Writer::new();
        encode_request(0xffff_fffc, &mut w);
        assert_eq!(w.buf, [0xff, 0xff, 0xff, 0xfc, 0, 0, 0, 0]);
        assert_eq!(
            decode_request(&mut Reader::new(&w.buf)).unwrap(),
            0xffff_fffc
        );
    }

    proptest! {
        #[test]
        fn roundtrip(q in strategy::arb_queue_get_config_reply()) {
            let mut w = Writer::new();
            q.encode(&mut w);
            prop_assert_eq!(decode(&w.buf).unwrap(), q);
        }
    }
}
