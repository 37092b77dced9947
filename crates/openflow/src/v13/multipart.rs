//! OpenFlow 1.3 multipart requests and replies (`OFPT_MULTIPART_REQUEST/REPLY`).

use crate::error::{ErrorKind, OfpError};
use crate::wire::{Reader, Writer};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MultipartRequest {}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MultipartReply {}

impl MultipartRequest {
    pub fn decode(_r: &mut Reader) -> Result<Self, OfpError> {
        Err(OfpError::new(
            ErrorKind::BAD_REQUEST_BAD_MULTIPART,
            "not yet",
        ))
    }
    pub fn encode(&self, _w: &mut Writer) {}
}

impl MultipartReply {
    pub fn decode(_r: &mut Reader) -> Result<Self, OfpError> {
        Err(OfpError::new(
            ErrorKind::BAD_REQUEST_BAD_MULTIPART,
            "not yet",
        ))
    }
    pub fn encode(&self, _w: &mut Writer) {}
}
