//! Splitting a byte stream into OpenFlow messages.
//!
//! A [`Framer`] accepts bytes as they arrive from a socket (any split: a header may
//! straddle two reads) and yields whole messages. It checks only the header's length
//! field: below 8 or above the configured maximum is a framing error, after which the
//! stream cannot be resynchronised and the connection must be closed. The error carries
//! the bytes of the bad header so an `OFPT_ERROR` (`OFPBRC_BAD_LEN`) can be sent first.

use crate::error::{ErrorKind, OfpError};
use crate::header::{Header, HEADER_LEN};

/// Reassembles messages from stream reads.
#[derive(Debug)]
pub struct Framer {
    buf: Vec<u8>,
    start: usize,
    max_len: usize,
}

impl Default for Framer {
    fn default() -> Self {
        Framer::new()
    }
}

impl Framer {
    /// A framer accepting messages up to the protocol's maximum of 65535 bytes.
    pub fn new() -> Self {
        Framer::with_max_len(u16::MAX as usize)
    }

    /// A framer rejecting messages longer than `max_len` bytes (at least 8).
    pub fn with_max_len(max_len: usize) -> Self {
        Framer { buf: Vec::new(), start: 0, max_len: max_len.max(HEADER_LEN) }
    }

    /// Appends bytes read from the stream.
    pub fn push(&mut self, data: &[u8]) {
        if self.start > 0 && self.start == self.buf.len() {
            self.buf.clear();
            self.start = 0;
        } else if self.start > 64 * 1024 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        self.buf.extend_from_slice(data);
    }

    /// Bytes buffered but not yet returned as a message.
    pub fn pending(&self) -> usize {
        self.buf.len() - self.start
    }

    /// The next complete message, `Ok(None)` if more bytes are needed, or an error if the
    /// next header's length is invalid (the stream is then unusable).
    pub fn next_message(&mut self) -> Result<Option<&[u8]>, OfpError> {
        let avail = &self.buf[self.start..];
        if avail.len() < HEADER_LEN {
            return Ok(None);
        }
        let len = u16::from_be_bytes([avail[2], avail[3]]) as usize;
        if len < HEADER_LEN || len > self.max_len {
            let hdr = Header::peek(avail).map(|h| h.length).unwrap_or(len as u16);
            return Err(OfpError::new(
                ErrorKind::BAD_REQUEST_BAD_LEN,
                format!(
                    "message length {hdr} outside 8..={} at stream offset of this message",
                    self.max_len
                ),
            ));
        }
        if avail.len() < len {
            return Ok(None);
        }
        let s = self.start;
        self.start += len;
        Ok(Some(&self.buf[s..s + len]))
    }

    /// The bytes at the head of the buffer (for an error reply after a framing error).
    pub fn head(&self) -> &[u8] {
        let avail = &self.buf[self.start..];
        &avail[..avail.len().min(crate::error::ERROR_DATA_LEN)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn msg(ty: u8, body: &[u8]) -> Vec<u8> {
        let mut v = vec![4, ty, 0, 0, 0, 0, 0, 1];
        v.extend_from_slice(body);
        let l = v.len() as u16;
        v[2..4].copy_from_slice(&l.to_be_bytes());
        v
    }

    #[test]
    fn rejects_short_and_long_lengths() {
        let mut f = Framer::new();
        f.push(&[4, 0, 0, 7, 0, 0, 0, 0]);
        assert_eq!(f.next_message().unwrap_err().kind, ErrorKind::BAD_REQUEST_BAD_LEN);
        let mut f = Framer::with_max_len(100);
        f.push(&[4, 0, 0, 200, 0, 0, 0, 0]);
        assert!(f.next_message().is_err());
    }

    proptest! {
        #[test]
        fn any_split_yields_same_messages(
            bodies in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..40), 1..8),
            cuts in proptest::collection::vec(1usize..17, 1..40),
        ) {
            let msgs: Vec<Vec<u8>> = bodies.iter().enumerate().map(|(i, b)| msg(i as u8, b)).collect();
            let stream: Vec<u8> = msgs.concat();
            let mut f = Framer::new();
            let mut got = Vec::new();
            let mut pos = 0;
            let mut ci = 0;
            while pos < stream.len() {
                let n = cuts[ci % cuts.len()].min(stream.len() - pos);
                ci += 1;
                f.push(&stream[pos..pos + n]);
                pos += n;
                while let Some(m) = f.next_message().unwrap() {
                    got.push(m.to_vec());
                }
            }
            prop_assert_eq!(got, msgs);
            prop_assert_eq!(f.pending(), 0);
        }
    }
}
