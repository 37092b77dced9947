//! Error messages: the error's name as Open vSwitch names it (its `ofperr` names, which
//! differ from the 1.3 specification's in a few places: `OFPBRC_BAD_STAT` for
//! `OFPBRC_BAD_MULTIPART`, `OFPBRC_IS_SECONDARY` for `OFPBRC_IS_SLAVE`, ...), then the
//! offending request printed whole when the switch sent it back whole, else its header
//! and a hex dump.

use crate::error::ONF_BUNDLE_ERROR_BASE;
use crate::v13::ErrorMsg;
use crate::ErrorKind;

/// Open vSwitch's name for an error of `version` (1.0 numbering when `version` is 1).
/// Codes it has no name for print as `OFPET_BAD_ACTION(code=99)`.
pub fn error_name(ty: u16, code: u16, version: u8) -> String {
    if version == crate::OFP10_VERSION {
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

/// Open vSwitch's name for an OpenFlow 1.0 error: the 1.0 names of `openflow`'s text
/// form, but `OFPFMFC_TABLE_FULL` for 1.0's `OFPFMFC_ALL_TABLES_FULL` (Open vSwitch
/// names the error by its 1.1+ name) and `OFPET_9(code=0)` for a type 1.0 lacks (its
/// types are 0 to 5), as for 1.3.
fn error_name10(ty: u16, code: u16) -> String {
    match (ty, code) {
        (3, 0) => "OFPFMFC_TABLE_FULL".into(),
        (0..=5, _) => crate::text::message::error_name10(ty, code),
        _ => format!("OFPET_{ty}(code={code})"),
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
        ErrorMsg::Standard { kind, data } => {
            format!(" {}\n{}", error_name(kind.ty, kind.code, version), payload(kind.ty, data))
        }
        ErrorMsg::Experimenter { exp_type, experimenter, data }
            if *experimenter == crate::error::ONF_EXPERIMENTER_ID
                && (ONF_BUNDLE_ERROR_BASE..=ONF_BUNDLE_ERROR_BASE + 15).contains(exp_type) =>
        {
            // OpenFlow 1.3's bundle extension: 1.4's bundle error, by its name.
            let code = exp_type - ONF_BUNDLE_ERROR_BASE;
            let name = error_name(crate::error::error_type::BUNDLE_FAILED, code, version);
            format!(" {name}\n{}", payload(1, data))
        }
        ErrorMsg::Experimenter { exp_type, experimenter, data } => format!(
            " OFPET_EXPERIMENTER experimenter={experimenter:#010x} exp_type={exp_type}\n{}",
            payload(1, data)
        ),
    }
}

pub(super) fn error10(e: &crate::v10::ErrorMsg) -> String {
    format!(" {}\n{}", error_name10(e.err_type, e.code), payload(e.err_type, &e.data))
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
        assert_eq!(error_name(1, 6, 1), "OFPBRC_BAD_LEN");
        assert_eq!(error_name(0, 1, 1), "OFPHFC_EPERM");
        assert_eq!(error_name(5, 2, 1), "OFPQOFC_EPERM");
        assert_eq!(error_name(1, 9, 1), "OFPET_BAD_REQUEST(code=9)");
        assert_eq!(error_name(5, 3, 1), "OFPET_QUEUE_OP_FAILED(code=3)");
        assert_eq!(error_name(6, 0, 1), "OFPET_6(code=0)");
    }
}
