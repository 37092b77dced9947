//! One-line, ovs-ofctl-style rendering of whole messages (`peregrine ofp-parse`).
//!
//! The head names the message, version and xid as `ovs-ofctl ofp-print` does
//! (`OFPT_FLOW_MOD (OF1.3) (xid=0x1): ...`); the body uses the flow text form for matches,
//! actions and instructions and a field list for everything else.

use crate::{Frame, Message};

/// Renders a whole message on one line.
pub fn format_frame(f: &Frame) -> String {
    let (name, body) = match &f.message {
        Message::V13(m) => (m.name(), format!("{m:?}")),
        Message::V10(m) => (m.name(), format!("{m:?}")),
    };
    format!(
        "{name} ({}) (xid={:#x}): {body}",
        version_name(f.version),
        f.xid
    )
}

/// `OF1.0`, `OF1.3`, or the raw number for others.
pub fn version_name(v: u8) -> String {
    match v {
        1 => "OF1.0".into(),
        2 => "OF1.1".into(),
        3 => "OF1.2".into(),
        4 => "OF1.3".into(),
        5 => "OF1.4".into(),
        6 => "OF1.5".into(),
        n => format!("OF 0x{n:02x}"),
    }
}
