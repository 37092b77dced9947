//! OpenFlow 1.0 messages.

use crate::error::{ErrorKind, OfpError};
use crate::wire::{Reader, Writer};

/// An OpenFlow 1.0 message body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    BarrierRequest,
}

impl Message {
    pub fn decode(msg_type: u8, _r: &mut Reader) -> Result<Message, OfpError> {
        Err(OfpError::new(
            ErrorKind::BAD_REQUEST_BAD_TYPE,
            format!("message type {msg_type} not decoded yet"),
        ))
    }

    pub fn encode_body(&self, _w: &mut Writer) {}

    pub fn msg_type(&self) -> u8 {
        18
    }

    pub fn validate(&self) -> Result<(), OfpError> {
        Ok(())
    }
}
