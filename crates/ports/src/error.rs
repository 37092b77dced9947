//! The one error type of this crate: what went wrong opening or watching a port, worded
//! so that an operator can act on it (which interface, which permission, which value).
//!
//! Only opening fails with an error. Once a handle is open, trouble on the data path
//! (a full ring, a vanished interface) is dropped and counted in the handle's
//! [`crate::PortCounters`], never returned.

use std::io;
use std::path::PathBuf;

/// Why a port (or the link monitor) could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum PortError {
    /// The kernel has no interface of this name (in the caller's network namespace).
    #[error("no such network interface: {name:?}")]
    NoSuchInterface { name: String },

    /// The caller lacks the privilege an operation needs.
    #[error("{op} on {name:?}: operation not permitted (needs root or {capability})")]
    NotPermitted {
        op: &'static str,
        name: String,
        /// The capability that would allow it, e.g. "CAP_NET_RAW".
        capability: &'static str,
    },

    /// The name cannot be an interface name.
    #[error("invalid interface name {name:?}: {reason}")]
    InvalidName { name: String, reason: &'static str },

    /// A tap device could not be used for a reason of its own (not a tap, not
    /// multi-queue, held by another process).
    #[error("tap {name:?}: {reason}")]
    Tap { name: String, reason: &'static str },

    /// A pcap file could not be read or written.
    #[error("pcap file {}: {reason}", path.display())]
    Pcap { path: PathBuf, reason: String },

    /// A backend name that is not one of the allowed ones.
    #[error("unknown port backend {given:?} (allowed: {allowed})")]
    UnknownBackend { given: String, allowed: &'static str },

    /// `open` was asked for zero workers.
    #[error("a port needs at least one worker (asked for 0)")]
    NoWorkers,

    /// Any other failure of a system call.
    #[error("{op} on {name:?}: {source}")]
    Io {
        op: &'static str,
        name: String,
        #[source]
        source: io::Error,
    },
}

impl PortError {
    /// Classifies a failed system call `op` on interface (or file) `name`: permission
    /// errors name `capability`, ENODEV/ENXIO name the missing interface, the rest keep
    /// the OS error.
    pub(crate) fn os(
        op: &'static str,
        name: &str,
        capability: &'static str,
        err: io::Error,
    ) -> Self {
        match err.raw_os_error() {
            Some(libc::EPERM) | Some(libc::EACCES) => {
                PortError::NotPermitted { op, name: name.to_string(), capability }
            }
            Some(libc::ENODEV) | Some(libc::ENXIO) => {
                PortError::NoSuchInterface { name: name.to_string() }
            }
            _ => PortError::Io { op, name: name.to_string(), source: err },
        }
    }
}

/// `e` and its sources, joined with ": " (a source already in the text is left out).
pub fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut next = e.source();
    while let Some(s) = next {
        let part = s.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        next = s.source();
    }
    text
}

/// The OS error number somewhere in `e`'s source chain.
pub fn errno_in_chain(e: &(dyn std::error::Error + 'static)) -> Option<i32> {
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = next {
        if let Some(code) = s.downcast_ref::<io::Error>().and_then(io::Error::raw_os_error) {
            return Some(code);
        }
        next = s.source();
    }
    None
}
