//! `peregrine ofp-parse`: walk a file of back-to-back OpenFlow messages, print each one
//! decoded as ovs-ofctl prints it (`openflow::text::print`), optionally re-encode and compare. A malformed message is reported with its
//! offset and the OpenFlow error it would get; walking goes on while the header lengths
//! still delimit messages, and stops at a length that cannot be trusted.

use openflow::Frame;
use std::io::Write;

/// How much of each message is printed: what `ovs-ofctl ofp-parse` shows by default
/// (packet-ins and packet-outs with the packet's flow, no hex dump).
const VERBOSITY: u8 = 2;

/// What a run found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Report {
    pub messages: usize,
    pub failures: usize,
}

/// The length of the message at the start of `rest` from its header; why there is no
/// whole message there if there is not.
fn message_len(rest: &[u8]) -> Result<usize, String> {
    if rest.len() < 8 {
        return Err(format!("truncated header: {} of 8 bytes", rest.len()));
    }
    let len = u16::from_be_bytes([rest[2], rest[3]]) as usize;
    if len < 8 {
        return Err(format!("OFPET_BAD_REQUEST/OFPBRC_BAD_LEN: header length {len} is below 8"));
    }
    if len > rest.len() {
        return Err(format!(
            "OFPET_BAD_REQUEST/OFPBRC_BAD_LEN: header length {len} but only {} bytes left",
            rest.len()
        ));
    }
    Ok(len)
}

/// Parses `bytes`, writing one entry per message to `out`.
pub fn run(bytes: &[u8], roundtrip: bool, out: &mut impl Write) -> Report {
    let mut rep = Report::default();
    let mut pos = 0usize;
    while pos < bytes.len() {
        let rest = &bytes[pos..];
        rep.messages += 1;
        let len = match message_len(rest) {
            Ok(len) => len,
            Err(why) => {
                rep.failures += 1;
                let _ = writeln!(out, "offset {pos:#x}: error: {why}");
                break;
            }
        };
        let msg = &rest[..len];
        match Frame::decode(msg) {
            Err(e) => {
                rep.failures += 1;
                let _ = writeln!(out, "offset {pos:#x}: error: {e}");
            }
            Ok(frame) => {
                let _ = write!(
                    out,
                    "offset {pos:#x}: {}",
                    openflow::text::print::frame(&frame, VERBOSITY)
                );
                if roundtrip {
                    match frame.encode() {
                        Err(e) => {
                            rep.failures += 1;
                            let _ = writeln!(out, "  roundtrip: encode failed: {e}");
                        }
                        Ok(enc) if enc != msg => {
                            rep.failures += 1;
                            let at = enc
                                .iter()
                                .zip(msg)
                                .position(|(a, b)| a != b)
                                .unwrap_or(enc.len().min(msg.len()));
                            let _ = writeln!(
                                out,
                                "  roundtrip: MISMATCH at message byte {at} (file offset {:#x}); {} bytes in, {} out",
                                pos + at,
                                msg.len(),
                                enc.len()
                            );
                        }
                        Ok(_) => {}
                    }
                }
            }
        }
        pos += len;
    }
    rep
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_str(bytes: &[u8], roundtrip: bool) -> (Report, String) {
        let mut out = Vec::new();
        let r = run(bytes, roundtrip, &mut out);
        (r, String::from_utf8(out).unwrap())
    }

    #[test]
    fn decodes_concatenated_messages() {
        // hello (1.3, version bitmap 1.0+1.3), barrier request (1.3), echo request (1.0)
        let mut b = vec![4, 0, 0, 16, 0, 0, 0, 1, 0, 1, 0, 8, 0, 0, 0, 0x12];
        b.extend_from_slice(&[4, 20, 0, 8, 0, 0, 0, 2]);
        b.extend_from_slice(&[1, 2, 0, 10, 0, 0, 0, 3, 0xab, 0xcd]);
        let (r, out) = run_str(&b, true);
        assert_eq!(r, Report { messages: 3, failures: 0 }, "{out}");
        assert!(out.contains("offset 0x0: OFPT_HELLO"), "{out}");
        assert!(out.contains("offset 0x10: OFPT_BARRIER_REQUEST"), "{out}");
        assert!(out.contains("offset 0x18: OFPT_ECHO_REQUEST"), "{out}");
    }

    #[test]
    fn reports_offset_and_error_of_malformed_message() {
        // A barrier request with a 4-byte body (must be empty), then a valid one, then a
        // header whose length runs past the end.
        let mut b = vec![4, 20, 0, 12, 0, 0, 0, 1, 0, 0, 0, 0];
        b.extend_from_slice(&[4, 20, 0, 8, 0, 0, 0, 2]);
        b.extend_from_slice(&[4, 20, 0, 200, 0, 0, 0, 3]);
        let (r, out) = run_str(&b, false);
        assert_eq!(r.failures, 2, "{out}");
        assert_eq!(r.messages, 3, "{out}");
        assert!(out.contains("offset 0x0: error: OFPET_BAD_REQUEST/OFPBRC_BAD_LEN"), "{out}");
        assert!(out.contains("offset 0x14: error:"), "{out}");
        // unknown version
        let (r, out) = run_str(&[9, 5, 0, 8, 0, 0, 0, 1], false);
        assert_eq!(r.failures, 1);
        assert!(out.contains("OFPBRC_BAD_VERSION"), "{out}");
    }
}
