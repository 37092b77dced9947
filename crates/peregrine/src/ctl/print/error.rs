//! Error messages: the error's name as Open vSwitch names it (its `ofperr` names, which
//! differ from the 1.3 specification's in a few places: `OFPBRC_BAD_STAT` for
//! `OFPBRC_BAD_MULTIPART`, `OFPBRC_IS_SECONDARY` for `OFPBRC_IS_SLAVE`, ...), then the
//! offending request printed whole when the switch sent it back whole, else its header
//! and a hex dump.

use openflow::v13::ErrorMsg;
use openflow::ErrorKind;

/// Open vSwitch's name for an error of `version` (1.0 numbering when `version` is 1).
/// Codes it has no name for print as `OFPET_BAD_ACTION(code=99)`.
pub fn error_name(ty: u16, code: u16, version: u8) -> String {
    if version == openflow::OFP10_VERSION {
        return error_name10(ty, code);
    }
    let kind = ErrorKind { ty, code };
    match kind.code_name() {
        Some(n) => match n {
            "OFPBRC_BAD_MULTIPART" => "OFPBRC_BAD_STAT",
            "OFPBRC_BAD_EXPERIMENTER" => "OFPBRC_BAD_VENDOR",
            "OFPBRC_BAD_EXP_TYPE" => "OFPBRC_BAD_SUBTYPE",
            "OFPBRC_IS_SLAVE" => "OFPBRC_IS_SECONDARY",
            "OFPBAC_BAD_EXPERIMENTER" => "OFPBAC_BAD_VENDOR",
            "OFPBAC_BAD_EXP_TYPE" => "OFPBAC_BAD_VENDOR_TYPE",
            other => other,
        }
        .to_string(),
        None => match kind.type_name() {
            Some(t) => format!("{t}(code={code})"),
            None => format!("OFPET_{ty}(code={code})"),
        },
    }
}

fn error_name10(ty: u16, code: u16) -> String {
    const HELLO: &[&str] = &["OFPHFC_INCOMPATIBLE", "OFPHFC_EPERM"];
    const REQUEST: &[&str] = &[
        "OFPBRC_BAD_VERSION",
        "OFPBRC_BAD_TYPE",
        "OFPBRC_BAD_STAT",
        "OFPBRC_BAD_VENDOR",
        "OFPBRC_BAD_SUBTYPE",
        "OFPBRC_EPERM",
        "OFPBRC_BAD_LEN",
        "OFPBRC_BUFFER_EMPTY",
        "OFPBRC_BUFFER_UNKNOWN",
    ];
    const ACTION: &[&str] = &[
        "OFPBAC_BAD_TYPE",
        "OFPBAC_BAD_LEN",
        "OFPBAC_BAD_VENDOR",
        "OFPBAC_BAD_VENDOR_TYPE",
        "OFPBAC_BAD_OUT_PORT",
        "OFPBAC_BAD_ARGUMENT",
        "OFPBAC_EPERM",
        "OFPBAC_TOO_MANY",
        "OFPBAC_BAD_QUEUE",
    ];
    const FLOW_MOD: &[&str] = &[
        "OFPFMFC_TABLE_FULL",
        "OFPFMFC_OVERLAP",
        "OFPFMFC_EPERM",
        "OFPFMFC_BAD_EMERG_TIMEOUT",
        "OFPFMFC_BAD_COMMAND",
        "OFPFMFC_UNSUPPORTED",
    ];
    const PORT_MOD: &[&str] = &["OFPPMFC_BAD_PORT", "OFPPMFC_BAD_HW_ADDR"];
    const QUEUE_OP: &[&str] = &["OFPQOFC_BAD_PORT", "OFPQOFC_BAD_QUEUE", "OFPQOFC_EPERM"];
    const TYPES: [(&str, &[&str]); 6] = [
        ("OFPET_HELLO_FAILED", HELLO),
        ("OFPET_BAD_REQUEST", REQUEST),
        ("OFPET_BAD_ACTION", ACTION),
        ("OFPET_FLOW_MOD_FAILED", FLOW_MOD),
        ("OFPET_PORT_MOD_FAILED", PORT_MOD),
        ("OFPET_QUEUE_OP_FAILED", QUEUE_OP),
    ];
    match TYPES.get(usize::from(ty)) {
        Some((t, codes)) => codes
            .get(usize::from(code))
            .map_or_else(|| format!("{t}(code={code})"), |c| (*c).to_string()),
        None => format!("OFPET_{ty}(code={code})"),
    }
}

/// The offending request of an error: printed when it decodes, else header and dump.
fn payload(ty: u16, data: &[u8]) -> String {
    if ty == 0 {
        // Hello failures carry text.
        return String::from_utf8_lossy(data)
            .chars()
            .map(|c| if c.is_control() && c != '\n' { '.' } else { c })
            .collect();
    }
    if data.is_empty() {
        return String::new();
    }
    super::raw(data, 1)
}

pub(super) fn error13(e: &ErrorMsg, version: u8) -> String {
    match e {
        ErrorMsg::Standard { kind, data } => format!(
            " {}\n{}",
            error_name(kind.ty, kind.code, version),
            payload(kind.ty, data)
        ),
        ErrorMsg::Experimenter {
            exp_type,
            experimenter,
            data,
        } => format!(
            " OFPET_EXPERIMENTER experimenter={experimenter:#010x} exp_type={exp_type}\n{}",
            payload(1, data)
        ),
    }
}

pub(super) fn error10(e: &openflow::v10::ErrorMsg) -> String {
    format!(
        " {}\n{}",
        error_name10(e.err_type, e.code),
        payload(e.err_type, &e.data)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_open_vswitch() {
        assert_eq!(error_name(5, 3, 4), "OFPFMFC_OVERLAP");
        assert_eq!(error_name(1, 2, 4), "OFPBRC_BAD_STAT");
        assert_eq!(error_name(1, 10, 4), "OFPBRC_IS_SECONDARY");
        assert_eq!(error_name(2, 99, 4), "OFPET_BAD_ACTION(code=99)");
        assert_eq!(error_name(3, 1, 1), "OFPFMFC_OVERLAP");
        assert_eq!(error_name(3, 0, 1), "OFPFMFC_TABLE_FULL");
        assert_eq!(error_name(2, 4, 1), "OFPBAC_BAD_OUT_PORT");
        assert_eq!(error_name(9, 0, 1), "OFPET_9(code=0)");
    }
}
