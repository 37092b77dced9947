//! Protocol vectors written by a third party: every OpenFlow 1.0, 1.3 and 1.4 message
//! capture that os-ken ships (`os_ken/tests/packet_data/of10`, `of13` and `of14`) must
//! decode and re-encode byte-identically.
//!
//! The captures come from the installed os-ken package; `.ci/run` installs it into
//! `.venv` and exports `OSKEN_PACKET_DATA`. Each `.packet` file holds one or more
//! concatenated messages. The one file of another kind, `libofproto-OFP13-flow_mod.truncated64`,
//! is empty in os-ken 4.2.2 (wheel and sdist alike): it holds no message, so it is not a
//! vector; the test below only checks that decoding nothing is a clean `OFPBRC_BAD_LEN`.

use openflow::{ErrorKind, Frame};
use std::path::PathBuf;

fn packet_data() -> PathBuf {
    if let Ok(p) = std::env::var("OSKEN_PACKET_DATA") {
        return PathBuf::from(p);
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.venv/lib");
    if let Ok(rd) = std::fs::read_dir(&root) {
        for e in rd.flatten() {
            let p = e.path().join("site-packages/os_ken/tests/packet_data");
            if p.is_dir() {
                return p;
            }
        }
    }
    panic!(
        "os-ken packet data not found: run .ci/run (it installs os-ken into .venv) \
         or set OSKEN_PACKET_DATA to os_ken/tests/packet_data"
    );
}

/// Splits a capture into messages by their header lengths.
fn split(bytes: &[u8]) -> Result<Vec<&[u8]>, String> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < bytes.len() {
        let rest = &bytes[pos..];
        if rest.len() < 8 {
            return Err(format!("{} stray bytes at offset {pos}", rest.len()));
        }
        let len = u16::from_be_bytes([rest[2], rest[3]]) as usize;
        if len < 8 || len > rest.len() {
            return Err(format!("bad length {len} at offset {pos}"));
        }
        out.push(&rest[..len]);
        pos += len;
    }
    Ok(out)
}

/// Every message of every capture in `version`'s folder (at least `min_files` of them,
/// os-ken's count) decodes as OpenFlow `expect_version` and re-encodes to its bytes.
fn check_dir(version: &str, expect_version: u8, min_files: usize) {
    let dir = packet_data().join(version);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "packet"))
        .collect();
    files.sort();
    let mut failures = Vec::new();
    let mut messages = 0;
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let msgs = match split(&bytes) {
            Ok(m) => m,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        for (i, m) in msgs.iter().enumerate() {
            messages += 1;
            match Frame::decode(m) {
                Err(e) => failures.push(format!("{name} message {i}: decode: {e}")),
                Ok(frame) => {
                    assert_eq!(frame.version, expect_version, "{name}");
                    match frame.encode() {
                        Err(e) => failures.push(format!("{name} message {i}: encode: {e}")),
                        Ok(out) if out != *m => failures.push(format!(
                            "{name} message {i}: re-encoded bytes differ (first at {})\n  in:  {:02x?}\n  out: {:02x?}",
                            m.iter().zip(&out).position(|(a, b)| a != b).unwrap_or(m.len().min(out.len())),
                            m,
                            out
                        )),
                        Ok(_) => {}
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} {version} files failed:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
    eprintln!("{version}: {} files, {messages} messages round-trip", files.len());
    assert!(
        files.len() >= min_files,
        "expected os-ken's {min_files} {version} captures, found {}",
        files.len()
    );
}

#[test]
#[ignore = "needs os-ken's captures (.venv from .ci/run, or OSKEN_PACKET_DATA)"]
fn of10_captures_roundtrip() {
    check_dir("of10", 1, 13);
}

#[test]
#[ignore = "needs os-ken's captures (.venv from .ci/run, or OSKEN_PACKET_DATA)"]
fn of13_captures_roundtrip() {
    check_dir("of13", 4, 104);
}

#[test]
#[ignore = "needs os-ken's captures (.venv from .ci/run, or OSKEN_PACKET_DATA)"]
fn of14_captures_roundtrip() {
    check_dir("of14", 5, 73);
}

#[test]
#[ignore = "needs os-ken's captures (.venv from .ci/run, or OSKEN_PACKET_DATA)"]
fn truncated_flow_mod_is_rejected() {
    let p = packet_data().join("of13/libofproto-OFP13-flow_mod.truncated64");
    let bytes = std::fs::read(&p).unwrap();
    let e = Frame::decode(&bytes).unwrap_err();
    assert_eq!(e.kind, ErrorKind::BAD_REQUEST_BAD_LEN, "{e}");
    // Cut a real flow-mod capture at 64 bytes, as the file's name intends.
    let full = std::fs::read(packet_data().join("of13/libofproto-OFP13-flow_mod.packet")).unwrap();
    assert!(full.len() > 64);
    let e = Frame::decode(&full[..64]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::BAD_REQUEST_BAD_LEN, "{e}");
}
