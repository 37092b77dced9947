//! Packet parser: frame bytes to a [`FlowKey`] and header offsets.
//!
//! (Interim: Ethernet only; the full parser replaces this.)

use crate::key::{Field, FlowKey};
use crate::packet::Layers;

/// Why parsing stopped early. The key holds every field parsed before the problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParseError {
    /// Shorter than an Ethernet header.
    TruncatedEthernet,
}

/// The result of parsing one frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ParseOutcome {
    pub layers: Layers,
    pub error: Option<ParseError>,
}

/// Parses `frame` received on `in_port` into `key` (fully overwritten).
pub fn parse(frame: &[u8], in_port: u32, key: &mut FlowKey) -> ParseOutcome {
    *key = FlowKey::ZERO;
    key.set(Field::InPort, in_port as u128);
    let mut out = ParseOutcome::default();
    if frame.len() < 14 {
        out.error = Some(ParseError::TruncatedEthernet);
        return out;
    }
    let mac = |b: &[u8]| b.iter().fold(0u128, |a, &x| (a << 8) | x as u128);
    key.set(Field::EthDst, mac(&frame[0..6]));
    key.set(Field::EthSrc, mac(&frame[6..12]));
    key.set(
        Field::EthType,
        u16::from_be_bytes([frame[12], frame[13]]) as u128,
    );
    out.layers.ethertype = 12;
    out
}
