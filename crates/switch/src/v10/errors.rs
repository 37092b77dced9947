//! Errors for OpenFlow 1.0 peers.
//!
//! The agent's errors are [`OfpError`]s numbered as in 1.3; `openflow`'s
//! [`ErrorKind::to_v10`] renumbers a kind into the 1.0 type and code that mean the same,
//! or the nearest 1.0 code where 1.0 has none (it is what [`openflow::error_reply`], and
//! so the connection, sends on a 1.0 connection). These wrappers build the 1.0
//! `OFPT_ERROR` body from it, so a body built here and an error reply sent by the
//! connection always agree.

use openflow::error::ERROR_DATA_LEN;
use openflow::v10::ErrorMsg as ErrorMsg10;
use openflow::v13::ErrorMsg as ErrorMsg13;
use openflow::{ErrorKind, OfpError};

/// The 1.0 `OFPT_ERROR` body for `err`, answering the request whose first bytes are
/// `offending` (at most [`ERROR_DATA_LEN`] of them are kept, as in
/// [`openflow::error_reply`]).
pub fn error_to_v10(err: &OfpError, offending: &[u8]) -> ErrorMsg10 {
    let (err_type, code) = err.kind.to_v10();
    ErrorMsg10 { err_type, code, data: offending[..offending.len().min(ERROR_DATA_LEN)].to_vec() }
}

/// A 1.3 `OFPT_ERROR` body as a 1.0 one (type and code by [`ErrorKind::to_v10`], data
/// unchanged). Experimenter errors have no 1.0 form: `OFPBRC_BAD_VENDOR`.
pub fn error_msg_to_v10(e: &ErrorMsg13) -> Result<ErrorMsg10, OfpError> {
    match e {
        ErrorMsg13::Standard { kind, data } => {
            let (err_type, code) = kind.to_v10();
            Ok(ErrorMsg10 { err_type, code, data: data.clone() })
        }
        ErrorMsg13::Experimenter { experimenter, .. } => Err(OfpError::new(
            ErrorKind::BAD_REQUEST_BAD_EXPERIMENTER,
            format!("experimenter {experimenter:#x} error has no OpenFlow 1.0 form"),
        )),
    }
}
