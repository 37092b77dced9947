//! The queue configuration of a port (`OFPT_QUEUE_GET_CONFIG_REPLY`), one type for every
//! OpenFlow version, with `decode(version, ..)` / `encode(version, ..)`.
//!
//! Reply: `port, pad` (1.0: `port:u16, pad[6]`; 1.3: `port:u32, pad[4]`), then
//! `ofp_packet_queue`s to the end: 1.0 `queue_id:u32, len:u16, pad[2]`, 1.3
//! `queue_id:u32, port:u32, len:u16, pad[6]`, then properties up to `len`. A property is
//! `property:u16, len:u16, pad[4]` and a body: `rate:u16, pad[6]` for `OFPQT_MIN_RATE`
//! (1) and, from 1.3 on, `OFPQT_MAX_RATE` (2) (16 bytes in all), and in 1.3
//! `experimenter:u32, pad[4], data` for `OFPQT_EXPERIMENTER` (0xffff). Properties a
//! version does not define are kept as read (the bytes after the 8-byte header).
//!
//! Ports are in the 1.3 numbering (1.0's are renumbered by
//! [`port_to_v13`](crate::v10::port::port_to_v13)); a 1.0 queue has no port of its own
//! and takes the reply's. Every length is checked: a queue shorter than its header or a property shorter than 8 bytes, either running past its container,
//! or a rate property that is not 16 bytes long, is `OFPBRC_BAD_LEN`.

use super::{read_port, write_port};
use crate::error::{ErrorKind, OfpError};
use crate::header::OFP10_VERSION;
use crate::wire::{Reader, Writer};

pub const OFPQT_MIN_RATE: u16 = 1;
pub const OFPQT_MAX_RATE: u16 = 2;
pub const OFPQT_EXPERIMENTER: u16 = 0xffff;

fn bad_len(detail: String) -> OfpError {
    OfpError::new(ErrorKind::BAD_REQUEST_BAD_LEN, detail)
}

/// One queue property.
///
/// Invariant for round trips: `Unknown::ty` is none of the types the version it is
/// encoded for defines (1.0: min-rate; 1.3: min-rate, max-rate, experimenter).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum QueueProperty {
    /// Guaranteed rate in 1/10 of a percent of the port speed; > 1000 means disabled.
    MinRate(u16),
    /// Maximum rate in 1/10 of a percent; > 1000 means disabled (1.3).
    MaxRate(u16),
    /// An experimenter's property (1.3).
    Experimenter { experimenter: u32, data: Vec<u8> },
    /// A property the version does not define: its type and the bytes after its header.
    Unknown { ty: u16, data: Vec<u8> },
}

impl QueueProperty {
    pub fn decode(version: u8, r: &mut Reader) -> Result<QueueProperty, OfpError> {
        if r.remaining() < 8 {
            return Err(bad_len(format!(
                "queue property header needs 8 bytes, {} left",
                r.remaining()
            )));
        }
        let ty = r.u16()?;
        let len = usize::from(r.u16()?);
        if len < 8 || len - 4 > r.remaining() {
            return Err(bad_len(format!(
                "queue property {ty} has length {len}: below 8 or past the queue's end"
            )));
        }
        let mut body = r.sub(len - 4)?;
        body.skip(4)?;
        let v10 = version == OFP10_VERSION;
        match ty {
            OFPQT_MIN_RATE | OFPQT_MAX_RATE if ty == OFPQT_MIN_RATE || !v10 => {
                let (name, make): (_, fn(u16) -> QueueProperty) = if ty == OFPQT_MIN_RATE {
                    ("min-rate", QueueProperty::MinRate)
                } else {
                    ("max-rate", QueueProperty::MaxRate)
                };
                if len != 16 {
                    return Err(bad_len(format!("{name} queue property has length {len}, not 16")));
                }
                Ok(make(body.u16()?))
            }
            OFPQT_EXPERIMENTER if !v10 => {
                if len < 16 {
                    return Err(bad_len(format!(
                        "experimenter queue property length {len} is below 16"
                    )));
                }
                let experimenter = body.u32()?;
                body.skip(4)?;
                Ok(QueueProperty::Experimenter { experimenter, data: body.take_rest().to_vec() })
            }
            _ => Ok(QueueProperty::Unknown { ty, data: body.take_rest().to_vec() }),
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
    /// The queue's port (1.3 numbering); in 1.0, the reply's port.
    pub port: u32,
    pub properties: Vec<QueueProperty>,
}

impl PacketQueue {
    /// Reads one queue of a reply for `reply_port` (the port a 1.0 queue takes).
    pub fn decode(version: u8, reply_port: u32, r: &mut Reader) -> Result<PacketQueue, OfpError> {
        let header = if version == OFP10_VERSION { 8 } else { 16 };
        if r.remaining() < header {
            return Err(bad_len(format!(
                "queue header needs {header} bytes, {} left",
                r.remaining()
            )));
        }
        let queue_id = r.u32()?;
        let (port, len) = if version == OFP10_VERSION {
            let len = usize::from(r.u16()?);
            r.skip(2)?;
            (reply_port, len)
        } else {
            let port = r.u32()?;
            let len = usize::from(r.u16()?);
            r.skip(6)?;
            (port, len)
        };
        if len < header || len - header > r.remaining() {
            return Err(bad_len(format!(
                "queue {queue_id} has length {len}: below {header} or past the message end"
            )));
        }
        let mut body = r.sub(len - header)?;
        let mut properties = Vec::new();
        while !body.is_empty() {
            properties.push(QueueProperty::decode(version, &mut body)?);
        }
        Ok(PacketQueue { queue_id, port, properties })
    }

    pub fn encode(&self, version: u8, w: &mut Writer) {
        let start = w.len();
        w.u32(self.queue_id);
        let len_at = if version == OFP10_VERSION {
            w.u16(0);
            w.zeros(2);
            start + 4
        } else {
            w.u32(self.port);
            w.u16(0);
            w.zeros(6);
            start + 8
        };
        for p in &self.properties {
            p.encode(w);
        }
        w.patch_len16(len_at, start);
    }
}

/// An `OFPT_QUEUE_GET_CONFIG_REPLY` body.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct QueueGetConfigReply {
    /// In the 1.3 numbering; encoding for 1.0 writes a number with no 1.0 form as
    /// `OFPP_NONE`.
    pub port: u32,
    pub queues: Vec<PacketQueue>,
}

impl QueueGetConfigReply {
    pub fn decode(version: u8, r: &mut Reader) -> Result<QueueGetConfigReply, OfpError> {
        let port = read_port(version, r, 8)?;
        let mut queues = Vec::new();
        while !r.is_empty() {
            queues.push(PacketQueue::decode(version, port, r)?);
        }
        Ok(QueueGetConfigReply { port, queues })
    }

    pub fn encode(&self, version: u8, w: &mut Writer) {
        write_port(version, self.port, w, 8);
        for q in &self.queues {
            q.encode(version, w);
        }
    }
}
