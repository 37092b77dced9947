//! The XDP program that steers an interface's frames into its AF_XDP sockets, and its
//! attachment.
//!
//! The program (crates/ports/bpf/redirect.c, compiled into the committed
//! crates/ports/bpf/redirect.o by scripts/bpf-build.sh and embedded here) redirects
//! every frame to the `xsks` XSKMAP entry of the rx queue it arrived on, and passes it
//! to the kernel stack when that entry is empty. [`Attachment::attach`] loads it with
//! `xsks` sized to the interface's rx queue count and attaches it natively
//! (XDP_FLAGS_DRV_MODE) or in generic (SKB) mode as asked, falling back from native to
//! generic in [`AttachMode::Auto`]. [`Attachment::insert`] puts a socket into the map.
//!
//! Dropping the [`Attachment`] detaches the program (aya closes the bpf_link, or clears
//! the netlink attachment on kernels without XDP links) and frees the map; sockets
//! still open are removed from the map by the kernel when they close.

use std::error::Error;
use std::io;
use std::os::fd::RawFd;

use aya::maps::XskMap;
use aya::programs::{Xdp, XdpMode};
use aya::{Ebpf, EbpfLoader};

use super::AttachMode;
use crate::error::{errno_in_chain as errno_of, error_chain as chain, PortError};

/// The compiled program (an ELF object for the bpf target).
static PROGRAM: &[u8] = include_bytes!("../../bpf/redirect.o");
/// Its function and map names in redirect.c.
const PROGRAM_NAME: &str = "redirect_to_xsk";
const MAP_NAME: &str = "xsks";

/// Capabilities that loading and attaching XDP programs need.
const BPF_CAPS: &str = "CAP_BPF and CAP_NET_ADMIN";

/// The loaded program, attached to one interface; detached when dropped.
pub(super) struct Attachment {
    ebpf: Ebpf,
    /// The mode it is attached in: `Native` or `Generic`, never `Auto`.
    mode: AttachMode,
    /// The interface's name, for errors.
    name: String,
}

impl std::fmt::Debug for Attachment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Attachment").field("mode", &self.mode).finish()
    }
}

impl Attachment {
    /// Loads the program with room for `queues` sockets and attaches it to interface
    /// `name` (index `ifindex`, in the calling thread's namespace) in `mode`.
    pub fn attach(
        name: &str,
        ifindex: u32,
        queues: u32,
        mode: AttachMode,
    ) -> Result<Attachment, PortError> {
        let mut ebpf = EbpfLoader::new()
            .map_max_entries(MAP_NAME, queues.max(1))
            .load(PROGRAM)
            .map_err(|e| load_error(name, "loading the XDP program and its XSKMAP", &e))?;
        let prog: &mut Xdp = ebpf
            .program_mut(PROGRAM_NAME)
            .ok_or_else(|| missing(name, "program"))?
            .try_into()
            .map_err(|e| load_error(name, "loading the XDP program", &e))?;
        prog.load().map_err(|e| load_error(name, "loading the XDP program (BPF_PROG_LOAD)", &e))?;

        let order = mode.tries();
        let mut failures: Vec<(&str, AttachFailure)> = Vec::new();
        for &(xdp_mode, attached, label) in order {
            match prog_attach(prog_mut(&mut ebpf), ifindex, xdp_mode) {
                Ok(()) => {
                    if let Some((failed, why)) = failures.first() {
                        eprintln!(
                            "ports: afxdp {name}: XDP {failed} not available ({why}); \
                             attached in {label}"
                        );
                    }
                    return Ok(Attachment { ebpf, mode: attached, name: name.to_string() });
                }
                Err(e) => failures.push((label, e)),
            }
        }
        Err(attach_error(name, &failures))
    }
}

impl super::SteeringAttachment for Attachment {
    fn mode(&self) -> AttachMode {
        self.mode
    }

    fn insert(&mut self, queue: u32, fd: RawFd) -> Result<(), PortError> {
        let name = self.name.as_str();
        let map = self.ebpf.map_mut(MAP_NAME).ok_or_else(|| missing(name, "map"))?;
        let mut xsks =
            XskMap::try_from(map).map_err(|e| load_error(name, "opening the XSKMAP", &e))?;
        xsks.set(queue, fd, 0)
            .map_err(|e| load_error(name, "adding an AF_XDP socket to the XSKMAP", &e))
    }
}

/// The program, which `attach` found and loaded just before.
fn prog_mut(ebpf: &mut Ebpf) -> Option<&mut Xdp> {
    ebpf.program_mut(PROGRAM_NAME)?.try_into().ok()
}

/// Attaches in one mode; the aya error on failure.
fn prog_attach(prog: Option<&mut Xdp>, ifindex: u32, mode: XdpMode) -> Result<(), AttachFailure> {
    let prog = prog.ok_or(AttachFailure::Lost)?;
    prog.attach_to_if_index(ifindex, mode).map(drop).map_err(AttachFailure::Aya)
}

/// Why one attach attempt failed.
#[derive(Debug)]
enum AttachFailure {
    Aya(aya::programs::ProgramError),
    /// The program vanished from the object between load and attach (cannot happen
    /// with the embedded object; kept as an error rather than a panic).
    Lost,
}

impl std::fmt::Display for AttachFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AttachFailure::Aya(e) => f.write_str(&chain(e)),
            AttachFailure::Lost => f.write_str("the XDP program is missing from its object"),
        }
    }
}

impl AttachFailure {
    fn errno(&self) -> Option<i32> {
        match self {
            AttachFailure::Aya(e) => errno_of(e),
            AttachFailure::Lost => None,
        }
    }
}

/// A failure to load the program or use its map: not permitted, or the whole story.
fn load_error(name: &str, op: &'static str, e: &(dyn Error + 'static)) -> PortError {
    match errno_of(e) {
        Some(libc::EPERM) | Some(libc::EACCES) => {
            PortError::NotPermitted { op, name: name.to_string(), capability: BPF_CAPS }
        }
        _ => PortError::Io { op, name: name.to_string(), source: io::Error::other(chain(e)) },
    }
}

/// The object lacks a part it was built with (a build problem, not a runtime one).
fn missing(name: &str, what: &str) -> PortError {
    PortError::Io {
        op: "loading the XDP program",
        name: name.to_string(),
        source: io::Error::other(format!(
            "the embedded object has no {what} named {PROGRAM_NAME:?}/{MAP_NAME:?}"
        )),
    }
}

/// Attaching failed in every mode tried: each mode with its reason.
fn attach_error(name: &str, tries: &[(&str, AttachFailure)]) -> PortError {
    let errnos: Vec<Option<i32>> = tries.iter().map(|(_, e)| e.errno()).collect();
    if errnos.iter().all(|e| matches!(e, Some(libc::EPERM) | Some(libc::EACCES))) {
        return PortError::NotPermitted {
            op: "attaching the XDP program",
            name: name.to_string(),
            capability: BPF_CAPS,
        };
    }
    if errnos.iter().all(|e| *e == Some(libc::ENODEV)) {
        return PortError::NoSuchInterface { name: name.to_string() };
    }
    let mut text = String::from("no XDP attach mode worked: ");
    for (i, (mode, e)) in tries.iter().enumerate() {
        if i > 0 {
            text.push_str("; ");
        }
        text.push_str(&format!("{mode}: {e}"));
        if matches!(e.errno(), Some(libc::EBUSY) | Some(libc::EEXIST)) {
            text.push_str(" (another XDP program is attached to the interface)");
        }
    }
    PortError::Io {
        op: "attaching the XDP program",
        name: name.to_string(),
        source: io::Error::new(io::ErrorKind::Unsupported, text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_object_has_the_program_and_map() {
        // An ELF object for the bpf machine (EM_BPF = 247), 64-bit little endian.
        assert_eq!(&PROGRAM[..4], b"\x7fELF");
        assert_eq!(u16::from_le_bytes([PROGRAM[18], PROGRAM[19]]), 247);
        let has = |s: &str| PROGRAM.windows(s.len()).any(|w| w == s.as_bytes());
        assert!(has(PROGRAM_NAME) && has(MAP_NAME) && has(".maps"));
    }

    #[test]
    fn errors_name_every_mode_tried() {
        let e = attach_error(
            "veth9",
            &[
                ("native (driver) mode", AttachFailure::Lost),
                ("generic (SKB) mode", AttachFailure::Lost),
            ],
        );
        let text = format!("{e}: {}", e.source().map(|s| s.to_string()).unwrap_or_default());
        assert!(text.contains("veth9"), "{text}");
        assert!(text.contains("native (driver) mode") && text.contains("generic (SKB) mode"));
    }
}
