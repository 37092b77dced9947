//! The one-line bodies of the messages that the ovs-ofctl printer ([`super::print`])
//! has no layout of its own for: hello, experimenter and vendor messages, table-mod,
//! queue configuration, role and asynchronous configuration, and the queue, table
//! features and experimenter multipart replies (and 1.0's queue and vendor stats). The
//! printer puts them after its own `NAME (OF1.3) (xid=0x..):` head.
//!
//! They follow Open vSwitch's wording where it has one (`role=master generation_id=7`,
//! `table_id=ALL config=0x0`); lists put each element on its own line after `"\n "`.
//! Every field is already decoded, so rendering cannot fail; data dumps are cut to
//! [`MAX_DUMP`] bytes and nothing indexes out of range. Messages the printer lays out
//! itself have an empty body here.
//!
//! Submodules: `v13` (OpenFlow 1.3 messages), `multipart` (1.3 multipart replies), `v10`
//! (OpenFlow 1.0 messages and stats).

mod multipart;
mod v10;
mod v13;

#[cfg(test)]
mod tests;

pub use v10::{error_name as error_name10, format_action10};
pub use v13::command_name as flow_mod_command_name;

use crate::{Frame, Message};

/// The most data bytes printed in hex (echo payloads, error data, experimenter bodies);
/// longer data is cut and marked with `...`.
pub const MAX_DUMP: usize = 64;

/// Renders a message on one line: `NAME (OFx.y) (xid=0x..): body` (see the module
/// comment for which messages have a body here). With an empty body the line ends at
/// the colon.
pub fn format_frame(f: &Frame) -> String {
    let (name, body) = match &f.message {
        Message::V13(m) => (m.name(), v13::body(m)),
        Message::V10(m) => (m.name(), v10::body(m)),
    };
    let mut s = format!("{name} ({}) (xid={:#x}):", version_name(f.version), f.xid);
    if !body.is_empty() {
        s.push(' ');
        s.push_str(&body);
    }
    s
}

/// `OF1.0`, `OF1.3`, ..., or `OF 0x..` for numbers no OpenFlow version has.
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

/// Lowercase hex of at most [`MAX_DUMP`] bytes, `...` appended when `data` is longer.
pub(super) fn hex_dump(data: &[u8]) -> String {
    let shown = data.get(..MAX_DUMP).unwrap_or(data);
    let mut s = super::match_format::hex_bytes(shown);
    if data.len() > shown.len() {
        s.push_str("...");
    }
    s
}

/// `data_len=N` and, when there is data, ` data=0x<hex>` (cut as [`hex_dump`] does).
pub(super) fn data_summary(data: &[u8]) -> String {
    if data.is_empty() {
        "data_len=0".into()
    } else {
        format!("data_len={} data=0x{}", data.len(), hex_dump(data))
    }
}

/// The names of the set bits of `bits` separated by spaces, as Open vSwitch's
/// `ofp_print_bit_names` does: bits without a name as one `0x..` value, `0` when none
/// are set.
pub(super) fn bit_names(bits: u32, names: &[(u32, &str)]) -> String {
    if bits == 0 {
        return "0".into();
    }
    let mut parts: Vec<String> = Vec::new();
    let mut rest = bits;
    for &(bit, name) in names {
        if bits & bit != 0 {
            parts.push(name.into());
            rest &= !bit;
        }
    }
    if rest != 0 {
        parts.push(format!("{rest:#x}"));
    }
    parts.join(" ")
}

/// A 32-bit port as the flow text form prints it (`LOCAL`, `CONTROLLER`, `5`).
pub(super) fn port_name(p: u32) -> String {
    super::value::format_port(p)
}

/// A 64-bit counter, `?` when all ones (the value for "not available").
pub(super) fn counter(v: u64) -> String {
    if v == u64::MAX {
        "?".into()
    } else {
        v.to_string()
    }
}

/// Joins list lines after a head: `head\n line\n line` (nothing added for no lines).
pub(super) fn with_lines(head: String, lines: impl IntoIterator<Item = String>) -> String {
    let mut s = head;
    for l in lines {
        s.push_str("\n ");
        s.push_str(&l);
    }
    s
}
