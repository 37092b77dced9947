//! The fast path across a restart of the switch: the program stays attached while no
//! switch runs, and the next switch takes its place without a gap.
//!
//! At a stop for a restart ([`FastPath::hand_over`]) the program's state gets a
//! deadline (`orphan_until`, a grace from now) and each port's XDP link, instead of
//! being detached, is pinned in the pin directory as `xdp-IFINDEX-MODE` (MODE: native
//! or generic). The pinned link holds the program, and the program its maps, so the
//! kernel goes on forwarding every entry it has until the deadline; frames it does not
//! serve find no AF_XDP socket and go to the host's stack, as when no switch runs. Past
//! the deadline it passes every frame to the host's stack, as if it were not attached: a
//! switch that does not come back leaves no stale forwarding behind (the pins stay in
//! bpffs until the next start releases them, or a reboot).
//!
//! At start, attaching to an interface that has such a pinned link ([`adopt`], called
//! by [`FastPath::attach`]) takes the link over without touching it: the old program
//! goes on forwarding while the new switch opens its ports and restores its tables.
//! Once the new switch's workers run, [`FastPath::take_over`] replaces the program in
//! every such link with the new one, atomically (`BPF_LINK_UPDATE`): from then on the
//! new program (with its own, empty maps) serves, handing what it does not to the new
//! switch's sockets, whose workers forward it and mirror the flows again. Links left pinned that no port took over are
//! released ([`FastPath::release_pins`], [`release_all`]), which detaches them.
//!
//! Only links the kernel made as BPF links (Linux 5.9 and later) can be pinned; a port
//! whose link cannot is detached at the stop as before.

use std::path::Path;
use std::time::Duration;

use aya::programs::links::{FdLink, PinnedLink};
use aya::programs::xdp::{XdpLink, XdpLinkId};
use ports::afxdp::AttachMode;
use ports::error::error_chain as chain;

use crate::program::{fail, missing, state_map, xdp_prog, FastPath, FastPathError, Inner};

/// The pin of the link of interface `ifindex` attached in `mode`.
fn pin_name(ifindex: u32, mode: AttachMode) -> String {
    let tag = if mode == AttachMode::Native { "native" } else { "generic" };
    format!("xdp-{ifindex}-{tag}")
}

/// CLOCK_MONOTONIC now, in ns (the clock of `bpf_ktime_get_ns`).
fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid timespec for the call to write; CLOCK_MONOTONIC exists on
    // every Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64).saturating_mul(1_000_000_000).saturating_add(ts.tv_nsec as u64)
}

impl FastPath {
    /// Where port links are pinned at a hand-over and taken over from at attach (see
    /// the module comment); set before the ports attach.
    pub fn set_pin_dir(&self, dir: &Path) {
        self.shared.lock().pins.dir = Some(dir.to_path_buf());
    }

    /// Leaves the program forwarding for a restart, for at most `grace` (see the module
    /// comment): from now on each port's link is pinned when its port closes, instead of
    /// being detached. Call after the tier's thread stopped (it would clear the
    /// deadline) and before the ports close.
    pub fn hand_over(&self, grace: Duration) -> Result<(), FastPathError> {
        let mut inner = self.shared.lock();
        let dir = inner.pins.dir.clone().ok_or_else(|| missing("pin directory"))?;
        std::fs::create_dir_all(&dir).map_err(|e| FastPathError::Failed {
            step: "creating the pin directory",
            detail: format!("{}: {e}", dir.display()),
        })?;
        let until = (monotonic_ns().saturating_add(grace.as_nanos() as u64) >> 30) + 1;
        let mut st = state_map(&mut inner.ebpf)?;
        let mut s = st.get(&0, 0).map_err(|e| fail("reading the fast-path state", &e))?;
        s.orphan_until = u32::try_from(until).unwrap_or(u32::MAX);
        st.set(0, s, 0).map_err(|e| fail("writing the fast-path state", &e))?;
        inner.pins.handing_over = true;
        Ok(())
    }

    /// Releases the links pinned by the last run that no port took over (their
    /// interfaces are no longer the switch's, or no longer AF_XDP ports).
    pub fn release_pins(&self) {
        if let Some(dir) = self.shared.lock().pins.dir.clone() {
            release_all(&dir);
        }
    }
}

/// Releases every link pinned in `dir` (the switch runs without the fast path, or
/// with other ports): their programs are detached.
pub fn release_all(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        if e.file_name().to_string_lossy().starts_with("xdp-") {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Finds the link the last run left pinned for interface `ifindex` (`name`), in a mode
/// `want` allows, and keeps it for [`FastPath::take_over`]: until then the old program
/// goes on forwarding. Returns its mode. A link that cannot be opened is released (and
/// said), and the caller attaches anew.
pub(crate) fn adopt(
    inner: &mut Inner,
    name: &str,
    ifindex: u32,
    want: AttachMode,
) -> Option<AttachMode> {
    let dir = inner.pins.dir.clone()?;
    for mode in [AttachMode::Native, AttachMode::Generic] {
        // A link in another mode than the one asked for is released with the rest.
        if want != AttachMode::Auto && want != mode {
            continue;
        }
        let path = dir.join(pin_name(ifindex, mode));
        if !path.exists() {
            continue;
        }
        let opened = PinnedLink::from_pin(&path)
            .map_err(|e| chain(&e))
            .and_then(|p| XdpLink::try_from(FdLink::from(p)).map_err(|e| chain(&e)));
        // Unpinned: the link now lives as long as this run holds it.
        let _ = std::fs::remove_file(&path);
        match opened {
            Ok(link) => {
                inner.pins.deferred.push((ifindex, mode, link));
                return Some(mode);
            }
            Err(e) => eprintln!(
                "xdp: fast path on {name}: the program the last run left attached cannot be \
                 taken over ({e}); attaching anew"
            ),
        }
    }
    None
}

impl FastPath {
    /// Puts this program in place of the last run's in every link taken over at attach,
    /// atomically (call once the workers run: until then the old program forwards the
    /// flows it holds). Returns how many links it took over; a link it cannot update is
    /// released and the program attached anew.
    pub fn take_over(&self) -> usize {
        let mut inner = self.shared.lock();
        let mut n = 0;
        for (ifindex, mode, link) in std::mem::take(&mut inner.pins.deferred) {
            let Ok(prog) = xdp_prog(&mut inner.ebpf) else {
                continue;
            };
            let id = match prog.attach_to_link(link) {
                Ok(id) => {
                    n += 1;
                    Ok(id)
                }
                Err(e) => {
                    eprintln!(
                        "xdp: fast path on ifindex {ifindex}: taking over from the last run: {}; \
                         attaching anew",
                        chain(&e)
                    );
                    let xdp_mode = if mode == AttachMode::Native {
                        aya::programs::XdpMode::Driver
                    } else {
                        aya::programs::XdpMode::Skb
                    };
                    prog.attach_to_if_index(ifindex, xdp_mode)
                }
            };
            match id {
                Ok(id) => {
                    inner.pins.links.insert(ifindex, id);
                }
                Err(e) => eprintln!("xdp: fast path on ifindex {ifindex}: {}", chain(&e)),
            }
        }
        n
    }
}

/// At a hand-over, pins the link `link` of interface `ifindex` (attached in `mode`)
/// instead of detaching it. On failure the link is detached and why is returned.
pub(crate) fn pin_link(
    inner: &mut Inner,
    link: XdpLinkId,
    ifindex: u32,
    mode: AttachMode,
) -> Result<(), String> {
    let dir = inner.pins.dir.clone().ok_or("no pin directory")?;
    let prog = xdp_prog(&mut inner.ebpf).map_err(|_| "the fast-path program is missing")?;
    let link = prog.take_link(link).map_err(|e| chain(&e))?;
    let fd = FdLink::try_from(link).map_err(|e| {
        format!("{} (a netlink attachment: the kernel is older than 5.9)", chain(&e))
    })?;
    fd.pin(dir.join(pin_name(ifindex, mode))).map(drop).map_err(|e| chain(&e))
}

/// bpffs' magic number (`statfs`'s `f_type`).
const BPF_FS_MAGIC: i64 = 0xcafe_4a11;

/// Mounts bpffs at `/sys/fs/bpf` unless it is there (systemd mounts it at boot; a
/// container may not have it). Pins need it. Returns whether it mounted it: inside a
/// private mount namespace (as `ip netns exec` makes, with its own /sys) that mount
/// ends with the switch, and so do its pins.
pub fn ensure_bpffs() -> Result<bool, String> {
    let path = c"/sys/fs/bpf";
    // SAFETY: an all-zero statfs is a valid value for the call to overwrite.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `path` is NUL-terminated and `st` is a valid statfs to write.
    if unsafe { libc::statfs(path.as_ptr(), &mut st) } == 0 && st.f_type as i64 == BPF_FS_MAGIC {
        return Ok(false);
    }
    // SAFETY: every pointer is a NUL-terminated string; no data argument.
    let r = unsafe {
        libc::mount(c"bpf".as_ptr(), path.as_ptr(), c"bpf".as_ptr(), 0, std::ptr::null())
    };
    if r == 0 {
        Ok(true)
    } else {
        Err(format!("mounting bpffs at /sys/fs/bpf: {}", std::io::Error::last_os_error()))
    }
}

/// Whether this run is handing over (see [`FastPath::hand_over`]).
pub(crate) fn handing_over(inner: &Inner) -> bool {
    inner.pins.handing_over
}

/// The hand-over state of a loaded program.
#[derive(Debug, Default)]
pub(crate) struct Pins {
    /// Where links are pinned and taken over from.
    pub(crate) dir: Option<std::path::PathBuf>,
    /// A hand-over began: closing ports pin their links.
    pub(crate) handing_over: bool,
    /// Links of the last run found at attach, by interface, still running its program
    /// until [`FastPath::take_over`].
    pub(crate) deferred: Vec<(u32, AttachMode, XdpLink)>,
    /// Links taken over, by interface (their ports' [`crate::program::Attached`] hold
    /// no link of their own).
    pub(crate) links: std::collections::HashMap<u32, XdpLinkId>,
}

/// The link of interface `ifindex` that a closing port holds through the hand-over
/// state: taken over (its id), or still the last run's (pinned again at a hand-over,
/// else dropped, which detaches it). Returns the id of a taken-over one.
pub(crate) fn release_port(inner: &mut Inner, ifindex: u32) -> Option<XdpLinkId> {
    if let Some(i) = inner.pins.deferred.iter().position(|d| d.0 == ifindex) {
        let (_, m, link) = inner.pins.deferred.remove(i);
        if inner.pins.handing_over {
            if let (Some(dir), Ok(fd)) = (inner.pins.dir.clone(), FdLink::try_from(link)) {
                let _ = fd.pin(dir.join(pin_name(ifindex, m)));
            }
        }
        return None;
    }
    inner.pins.links.remove(&ifindex)
}
