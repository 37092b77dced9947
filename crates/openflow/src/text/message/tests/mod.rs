//! Tests of the one-line bodies (exact strings; `v13`, `multipart`, `v10`) and, here,
//! proptests that every generated message prints, through the ovs-ofctl printer and
//! through the one-line form, without panicking and under the right head.

mod multipart;
mod v10;
mod v13;

use super::*;
use crate::action::port;
use crate::error::ErrorKind;
use crate::v10::{self as m10, Message as M10};
use crate::v13::multipart::{MultipartReply, MultipartReplyBody as RB, QueueStats};
use crate::v13::table_features::{FeatureId, TableFeatureProp, TableFeatures};
use crate::v13::{self as m13, Message as M13};
use proptest::prelude::*;

pub(super) fn p13(xid: u32, m: M13) -> String {
    format_frame(&Frame::v13(xid, m))
}

pub(super) fn p10(xid: u32, m: M10) -> String {
    format_frame(&Frame::v10(xid, m))
}

/// The head the ovs-ofctl printer starts a frame with (1.0 has no version tag).
fn head_of(f: &Frame) -> String {
    let name = crate::text::print::name(f);
    match f.message {
        crate::Message::V13(_) => {
            format!("{name} ({}) (xid={:#x}):", version_name(f.version), f.xid)
        }
        crate::Message::V10(_) => format!("{name} (xid={:#x}):", f.xid),
    }
}

/// `f` printed by the ovs-ofctl printer at `verbosity`, checked to start with its head.
fn print_under_head(f: &Frame, verbosity: u8) -> Result<String, TestCaseError> {
    let s = crate::text::print::frame(f, verbosity);
    prop_assert!(s.starts_with(&head_of(f)), "{}", s);
    Ok(s)
}

/// `f` prints under its head and ends with a newline, and its one-line form prints.
fn prints_whole(f: &Frame) -> Result<(), TestCaseError> {
    let s = print_under_head(f, 3)?;
    prop_assert!(s.ends_with('\n'), "{}", s);
    let _ = format_frame(f);
    Ok(())
}

// Every message, whichever printer lays it out, prints under its head and ends with a
// newline; no input makes either printer panic.
proptest! {
    #[test]
    fn prints_every_v13_message(m in crate::v13::strategy::arb_message(), xid in any::<u32>()) {
        prints_whole(&Frame::v13(xid, m))?;
    }

    #[test]
    fn prints_every_v10_message(m in crate::v10::strategy::arb_message(), xid in any::<u32>()) {
        prints_whole(&Frame::v10(xid, m))?;
    }

    #[test]
    fn prints_every_multipart_request(r in crate::v13::multipart::strategy::arb_multipart_request()) {
        let s = print_under_head(&Frame::v13(1, M13::MultipartRequest(r)), 1)?;
        prop_assert!(s.contains(" request (OF1.3) (xid=0x1):"), "{}", s);
    }

    #[test]
    fn prints_every_multipart_reply(r in crate::v13::multipart::strategy::arb_multipart_reply()) {
        let s = print_under_head(&Frame::v13(1, M13::MultipartReply(r)), 1)?;
        prop_assert!(s.contains(" reply (OF1.3) (xid=0x1):"), "{}", s);
    }

    #[test]
    fn error_data_never_panics(data in proptest::collection::vec(any::<u8>(), 0..200)) {
        let f = Frame::v13(1, M13::Error(m13::ErrorMsg::Standard {
            kind: ErrorKind::BAD_REQUEST_BAD_LEN,
            data: data.clone(),
        }));
        let s = crate::text::print::frame(&f, 2);
        prop_assert!(s.starts_with("OFPT_ERROR (OF1.3) (xid=0x1): OFPBRC_BAD_LEN"), "{}", s);
        let _ = crate::text::print::packet_summary(&data);
    }
}
