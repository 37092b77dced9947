//! AF_XDP ports: an interface's frames steered by an XDP program into AF_XDP sockets,
//! one socket per rx queue, each with its own UMEM.
//!
//! # Opening
//!
//! [`open`] (or [`crate::open`] with [`crate::Backend::AfXdp`]) on interface `name`:
//! 1. brings the interface up if it is down, and refuses an MTU above 3822 (frames must
//!    fit one 4096-byte UMEM frame with the kernel's 256 bytes of headroom: longer
//!    frames are received, see below, but not sent);
//! 2. asks the driver for its rx queue count (ETHTOOL_GCHANNELS; veth: its
//!    `numrxqueues`, usually 1);
//! 3. loads the XDP program (program.rs, bpf/redirect.c) and attaches it as [`AttachMode`] says:
//!    `Auto` tries native (driver) mode and falls back to generic (SKB) mode, printing a
//!    line on stderr that says so and why; `Native` and `Generic` try only that mode;
//! 4. makes one AF_XDP socket per rx queue (socket.rs), binding it zero-copy
//!    (XDP_ZEROCOPY) when the program is attached natively and, where the driver
//!    refuses (veth does) or in generic mode, in copy mode (XDP_COPY; a fallback is
//!    noted on stderr), always with XDP_USE_NEED_WAKEUP, in copy mode also with
//!    XDP_USE_SG (multi-buffer receive) where the kernel takes it (6.6 and later; a
//!    refusal is noted on stderr once), and puts it in the program's XSKMAP.
//!
//! # Handles and queues
//!
//! There are `min(workers, queues)` handles; handle `i` belongs to worker `i` and serves
//! queues `i`, `i + handles`, `i + 2 * handles`, …: every queue has a socket, so no
//! frame reaches the kernel stack while the port is open. **More workers than queues:
//! the extra workers get no handle for this port** (a veth with one queue gives one
//! handle, for worker 0), as with pcap ports; such a worker cannot transmit on the
//! port either (the runtime drops what it would forward there). Fewer workers than
//! queues: a handle reads its queues round-robin and its `rx_fd` is an epoll descriptor
//! over their sockets (readable when any has frames); it transmits on its first
//! queue's socket.
//!
//! The program stays attached while any handle lives and is detached when the last
//! one is dropped. A queue whose socket is closed passes its frames to the kernel stack.
//!
//! # Data path
//!
//! `recv` copies frames out of the UMEM into pooled packets and hands the frames back
//! to the fill ring at once; `send` copies packets into free TX frames and kicks the
//! kernel when the ring asks (need_wakeup). Nothing is allocated per packet once the
//! pool is warm. IPv4/IPv6 TCP frames longer than `mtu + 18` are cut into segments
//! that fit (software GSO: `datapath::rewrite::segment_tcp`); other frames that long,
//! and frames shorter than 14 bytes, are refused (`tx_errors`: IP fragmentation is not
//! done); no free TX frame (a socket has 2048 of them, 1024 above MTU 1774, all in
//! flight, even after kicking what the batch queued so far) drops and counts
//! (`tx_dropped`).
//!
//! The kernel's drops (XDP_STATISTICS: frame too long for a UMEM frame, fill ring
//! empty, RX ring full; invalid descriptors) are read after runs of empty polls and
//! every few thousand calls and added to `rx_dropped`, `rx_errors` and `tx_errors`.
//! Frames dropped inside the driver before XDP runs (a veth's own ring overflowing) are
//! the interface's statistics, not the port's.
//!
//! In generic (SKB) mode the kernel hands the program GRO- or GSO-merged frames (a
//! sending veth with TSO on, its default, makes them up to 64 KiB) as one linear frame;
//! a socket bound with XDP_USE_SG receives one longer than a UMEM frame as several
//! descriptors, gathered into one packet (socket.rs), and such TCP frames are segmented
//! again on output. Without XDP_USE_SG (kernels before 6.6), or beyond 64 KiB, they are
//! dropped (counted in `rx_dropped`, or `rx_errors` past 64 KiB). After the interface goes away the sockets are unbound: `recv` returns 0
//! and `send` drops and counts; reopen the port. Without carrier every frame is dropped
//! and counted. One difference from afpacket: when the interface is set
//! administratively down, the batch already on the TX ring when that happened stays
//! there (the kernel gives no way to take it back) and is sent when the link is up
//! again; everything given to `send` after that is dropped and counted.
//!
//! Opening needs root, or CAP_NET_RAW, CAP_BPF and CAP_NET_ADMIN, and each queue pins
//! 8 MiB of UMEM (CAP_IPC_LOCK, or a RLIMIT_MEMLOCK that large); errors say which.

mod channels;
mod gather;
mod program;
mod socket;
mod umem;

use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::sync::Arc;

use datapath::packet::Packet;
use datapath::port::PortIo;

use crate::counters::PortCounters;
use crate::error::PortError;
use crate::info::InterfaceInfo;
use crate::sys;
use program::Attachment;
use socket::{BuildError, TxCount, XskSocket};
use umem::{Geometry, L2_OVERHEAD, XDP_PACKET_HEADROOM};

/// How the XDP program is attached to the interface.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AttachMode {
    /// Native if the driver supports it, else generic (with a note on stderr).
    #[default]
    Auto,
    /// Native (driver) mode only (XDP_FLAGS_DRV_MODE); opening fails without it.
    Native,
    /// Generic (SKB) mode only (XDP_FLAGS_SKB_MODE): works on every interface, slower.
    Generic,
}

/// The XDP program of an AF_XDP port: what attaches it to the interface. Every frame it
/// does not handle itself must go to the socket of the rx queue it arrived on, through
/// the XSKMAP entries [`SteeringAttachment::insert`] fills (a queue without one passes
/// its frames to the kernel stack). The port's own program ([`open`]) redirects every
/// frame; the in-kernel fast tier (`xdp` crate) supplies one that forwards some itself.
pub trait Steering {
    /// Attaches the program to interface `name` (`ifindex`, with `queues` rx queues) in
    /// `mode`; detached when the returned attachment is dropped.
    fn attach(
        &self,
        name: &str,
        ifindex: u32,
        queues: u32,
        mode: AttachMode,
    ) -> Result<Box<dyn SteeringAttachment>, PortError>;
}

/// An attached steering program (see [`Steering`]); detached when dropped.
pub trait SteeringAttachment: Send + Sync {
    /// The mode it is attached in: `Native` or `Generic`, never `Auto`.
    fn mode(&self) -> AttachMode;
    /// Sends the frames of rx queue `queue` to the AF_XDP socket `fd`.
    fn insert(&mut self, queue: u32, fd: RawFd) -> Result<(), PortError>;
}

/// The port's own program: every frame to its queue's socket (program.rs).
struct OwnProgram;

impl Steering for OwnProgram {
    fn attach(
        &self,
        name: &str,
        ifindex: u32,
        queues: u32,
        mode: AttachMode,
    ) -> Result<Box<dyn SteeringAttachment>, PortError> {
        Ok(Box::new(Attachment::attach(name, ifindex, queues, mode)?))
    }
}

impl AttachMode {
    /// The attach attempts this mode makes, in order: aya's mode, the mode it gives, and
    /// its name for messages.
    pub fn tries(self) -> &'static [(aya::programs::XdpMode, AttachMode, &'static str)] {
        use aya::programs::XdpMode;
        const NATIVE: (XdpMode, AttachMode, &str) =
            (XdpMode::Driver, AttachMode::Native, "native (driver) mode");
        const GENERIC: (XdpMode, AttachMode, &str) =
            (XdpMode::Skb, AttachMode::Generic, "generic (SKB) mode");
        match self {
            AttachMode::Auto => &[NATIVE, GENERIC],
            AttachMode::Native => &[NATIVE],
            AttachMode::Generic => &[GENERIC],
        }
    }
}

/// The receive queues of interface `name` (at least 1): the most AF_XDP handles it gives.
pub fn rx_queues(name: &str) -> Result<u32, PortError> {
    channels::rx_queue_count(name)
}

/// Whether AF_XDP's frames hold a full frame at interface MTU `mtu` (up to 3822).
pub fn fits_mtu(mtu: u32) -> bool {
    Geometry::for_mtu(mtu).is_some()
}

/// Calls between unconditional XDP_STATISTICS reads.
const STATS_EVERY: u32 = 4096;
/// Empty receive calls in a row between XDP_STATISTICS reads.
const IDLE_CHECK_EVERY: u32 = 16;

/// One worker's handle on an AF_XDP port: the sockets of the queues it serves. See the
/// module comment.
pub struct AfXdpPort {
    /// At least one; `sockets[0]` also transmits.
    sockets: Vec<XskSocket>,
    /// The socket `recv` starts with (round-robin over the sockets).
    next: usize,
    /// With more than one socket: an epoll descriptor over all of them, for `rx_fd`.
    epoll: Option<OwnedFd>,
    counters: Arc<PortCounters>,
    /// Longest frame `send` passes on (MTU plus Ethernet and VLAN headers).
    max_frame: usize,
    /// The interface's MTU when opened: the most a TCP segment's IP packet carries when
    /// `send` cuts a longer frame.
    mtu: usize,
    calls: u32,
    empty_streak: u32,
    /// The XDP program: detached when the last handle's Arc goes (after the sockets,
    /// by field order).
    attachment: Arc<dyn SteeringAttachment>,
}

impl std::fmt::Debug for AfXdpPort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AfXdpPort")
            .field("queues", &self.queues())
            .field("mode", &self.attach_mode())
            .field("zero_copy", &self.zero_copy())
            .finish()
    }
}

impl AfXdpPort {
    /// This handle's counters.
    pub fn counters(&self) -> &Arc<PortCounters> {
        &self.counters
    }

    /// The mode the XDP program was attached in: `Native` or `Generic` (never `Auto`).
    pub fn attach_mode(&self) -> AttachMode {
        self.attachment.mode()
    }

    /// Whether this handle's sockets are bound in zero-copy mode (else copy mode).
    pub fn zero_copy(&self) -> bool {
        self.sockets.iter().all(XskSocket::zero_copy)
    }

    /// The rx queues this handle serves.
    pub fn queues(&self) -> Vec<u32> {
        self.sockets.iter().map(XskSocket::queue).collect()
    }

    /// Longest frame the kernel can deliver to this handle (longer ones are dropped and
    /// counted in `rx_dropped` or `rx_errors`): more than a UMEM frame when its sockets
    /// are bound with XDP_USE_SG.
    pub fn max_rx_frame(&self) -> u32 {
        self.sockets.iter().map(XskSocket::max_rx_frame).min().unwrap_or(0)
    }

    /// Whether this handle's sockets receive frames longer than a UMEM frame
    /// (XDP_USE_SG).
    pub fn multi_buffer(&self) -> bool {
        self.sockets.iter().all(XskSocket::sg)
    }

    fn add_tx(&self, c: TxCount) {
        if c.packets > 0 {
            self.counters.add_tx(c.packets, c.bytes);
        }
        if c.dropped > 0 {
            self.counters.add_tx_dropped(c.dropped);
        }
        if c.errors > 0 {
            self.counters.add_tx_errors(c.errors);
        }
    }

    /// Adds the kernel's drop counts since the last read to the counters.
    fn read_kernel_stats(&mut self) {
        for s in &mut self.sockets {
            let k = s.kernel_stats();
            if k.rx_dropped > 0 {
                self.counters.add_rx_dropped(k.rx_dropped);
            }
            if k.rx_errors > 0 {
                self.counters.add_rx_errors(k.rx_errors);
            }
            if k.tx_errors > 0 {
                self.counters.add_tx_errors(k.tx_errors);
            }
        }
    }
}

impl PortIo for AfXdpPort {
    fn recv(&mut self, rx: &mut Vec<Packet>, max: usize, pool: &mut Vec<Packet>) -> usize {
        let n = self.sockets.len();
        let (mut frames, mut bytes, mut errors) = (0usize, 0u64, 0u64);
        for i in 0..n {
            if frames >= max {
                break;
            }
            let c = self.sockets[(self.next + i) % n].recv(rx, max - frames, pool);
            frames += c.frames;
            bytes += c.bytes;
            errors += c.errors;
        }
        self.next = (self.next + 1) % n;
        self.counters.add_rx(frames as u64, bytes);
        if errors > 0 {
            self.counters.add_rx_errors(errors);
        }
        if self.sockets[0].zero_copy() {
            let settled = self.sockets[0].settle_async();
            self.add_tx(settled);
        }
        self.calls = self.calls.wrapping_add(1);
        if frames == 0 {
            self.empty_streak = self.empty_streak.wrapping_add(1);
            if self.empty_streak % IDLE_CHECK_EVERY == 1 {
                self.read_kernel_stats();
            }
        } else {
            self.empty_streak = 0;
            if self.calls.is_multiple_of(STATS_EVERY) {
                self.read_kernel_stats();
            }
        }
        frames
    }

    fn send(&mut self, tx: &mut Vec<Packet>, pool: &mut Vec<Packet>) {
        let c = self.sockets[0].send(tx, pool, self.max_frame, self.mtu);
        self.add_tx(c);
    }

    fn rx_depth(&self) -> Option<usize> {
        self.sockets.iter().map(XskSocket::rx_depth).min()
    }

    fn rx_fd(&self) -> Option<BorrowedFd<'_>> {
        let fd = match &self.epoll {
            Some(ep) => ep.as_raw_fd(),
            None => self.sockets[0].fd(),
        };
        // SAFETY: `fd` belongs to a socket or epoll descriptor this handle owns, open
        // for as long as `self` is borrowed.
        Some(unsafe { BorrowedFd::borrow_raw(fd) })
    }
}

/// Opens interface `name` (in the calling thread's network namespace) as an AF_XDP
/// port for `workers` workers: `min(workers, rx queues)` handles. See the module
/// comment.
pub fn open(
    name: &str,
    workers: usize,
    mode: AttachMode,
) -> Result<(InterfaceInfo, Vec<AfXdpPort>), PortError> {
    open_steered(name, workers, mode, &OwnProgram)
}

/// [`open`], with `steering`'s XDP program on the interface instead of the port's own
/// (see [`Steering`]).
pub fn open_steered(
    name: &str,
    workers: usize,
    mode: AttachMode,
    steering: &dyn Steering,
) -> Result<(InterfaceInfo, Vec<AfXdpPort>), PortError> {
    let info = crate::info::for_workers(name, workers)?;
    let geometry = Geometry::for_mtu(info.mtu).ok_or_else(|| PortError::Io {
        op: "opening an AF_XDP port",
        name: name.to_string(),
        source: std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "MTU {} is too large: a frame must fit one 4096-byte UMEM frame after {} \
                 bytes of headroom (MTU at most {}); lower the MTU or use afpacket",
                info.mtu,
                XDP_PACKET_HEADROOM,
                4096 - XDP_PACKET_HEADROOM - L2_OVERHEAD
            ),
        ),
    })?;
    let queues = channels::rx_queue_count(name)?;
    let handles = workers.min(queues as usize);
    let mut attachment = steering.attach(name, info.ifindex, queues, mode)?;

    let mut groups: Vec<Vec<XskSocket>> = (0..handles).map(|_| Vec::new()).collect();
    // Zero-copy needs the driver's own XDP path: not tried in generic mode.
    let mut try_zero_copy = attachment.mode() == AttachMode::Native;
    let mut try_sg = true;
    for q in 0..queues {
        let sock = bind_queue(name, info.ifindex, q, geometry, &mut try_zero_copy, &mut try_sg)?;
        attachment.insert(q, sock.fd())?;
        groups[q as usize % handles].push(sock);
    }
    let attachment: Arc<dyn SteeringAttachment> = Arc::from(attachment);
    let max_frame = (info.mtu + L2_OVERHEAD).min(geometry.frame_size) as usize;
    let mut ports = Vec::with_capacity(handles);
    for sockets in groups {
        let epoll = if sockets.len() > 1 { Some(epoll_over(name, &sockets)?) } else { None };
        ports.push(AfXdpPort {
            sockets,
            next: 0,
            epoll,
            counters: Arc::default(),
            max_frame,
            mtu: info.mtu as usize,
            calls: 0,
            empty_streak: 0,
            attachment: attachment.clone(),
        });
    }
    Ok((info, ports))
}

/// A socket for queue `queue`: zero-copy while `try_zero_copy` (cleared, with a note on
/// stderr, when the driver refuses), else copy mode, with XDP_USE_SG while `try_sg`
/// (cleared, with a note on stderr, when the kernel refuses).
fn bind_queue(
    name: &str,
    ifindex: u32,
    queue: u32,
    geometry: Geometry,
    try_zero_copy: &mut bool,
    try_sg: &mut bool,
) -> Result<XskSocket, PortError> {
    let mut zero_copy_err = None;
    if *try_zero_copy {
        match XskSocket::build(name, ifindex, queue, geometry, true, false) {
            Ok(s) => return Ok(s),
            Err(BuildError::Other(e)) => return Err(e),
            Err(BuildError::Bind(e)) => zero_copy_err = Some(e),
        }
    }
    if *try_sg {
        match XskSocket::build(name, ifindex, queue, geometry, false, true) {
            Ok(s) => {
                note_zero_copy_fallback(name, zero_copy_err, try_zero_copy);
                return Ok(s);
            }
            Err(BuildError::Other(e)) => return Err(e),
            Err(BuildError::Bind(e)) => {
                // Said once per process, like the zero-copy note.
                static SAID: std::sync::atomic::AtomicBool =
                    std::sync::atomic::AtomicBool::new(false);
                if !SAID.swap(true, std::sync::atomic::Ordering::Relaxed) {
                    eprintln!(
                        "ports: afxdp {name}: multi-buffer receive (XDP_USE_SG) not                          available ({e}); frames longer than a UMEM frame are dropped                          (said once for all ports)"
                    );
                }
                *try_sg = false;
            }
        }
    }
    match XskSocket::build(name, ifindex, queue, geometry, false, false) {
        Ok(s) => {
            note_zero_copy_fallback(name, zero_copy_err, try_zero_copy);
            Ok(s)
        }
        Err(BuildError::Other(e)) => Err(e),
        Err(BuildError::Bind(e)) => Err(bind_error(name, queue, zero_copy_err, e)),
    }
}

/// After a copy-mode bind: if zero-copy was tried and refused (`err`), says so on stderr
/// (once per process: a benchmark opens hundreds of such ports) and clears `try_zero_copy`.
fn note_zero_copy_fallback(name: &str, err: Option<std::io::Error>, try_zero_copy: &mut bool) {
    if let Some(e) = err {
        static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        if !SAID.swap(true, std::sync::atomic::Ordering::Relaxed) {
            eprintln!(
                "ports: afxdp {name}: zero-copy not available ({e}); \
                 AF_XDP sockets bound in copy mode (said once for all ports)"
            );
        }
        *try_zero_copy = false;
    }
}

/// Binding failed in copy mode too (and in zero-copy mode if tried).
fn bind_error(
    name: &str,
    queue: u32,
    zero_copy: Option<std::io::Error>,
    copy: std::io::Error,
) -> PortError {
    let reason = match copy.raw_os_error() {
        Some(libc::EPERM) | Some(libc::EACCES) => {
            return PortError::NotPermitted {
                op: "binding an AF_XDP socket",
                name: name.to_string(),
                capability: "CAP_NET_RAW",
            }
        }
        Some(libc::ENODEV) | Some(libc::ENXIO) => {
            return PortError::NoSuchInterface { name: name.to_string() }
        }
        Some(libc::EBUSY) => "the queue already has an AF_XDP socket (another program?)",
        Some(libc::EINVAL) => "no such queue, or the socket is misconfigured",
        _ => "",
    };
    let mut text = format!("queue {queue}: copy mode: {copy}");
    if !reason.is_empty() {
        text.push_str(&format!(" ({reason})"));
    }
    if let Some(zc) = zero_copy {
        text.push_str(&format!("; zero-copy mode: {zc}"));
    }
    PortError::Io {
        op: "binding an AF_XDP socket",
        name: name.to_string(),
        source: std::io::Error::new(copy.kind(), text),
    }
}

/// An epoll descriptor that is readable when any of `sockets` has frames.
fn epoll_over(name: &str, sockets: &[XskSocket]) -> Result<OwnedFd, PortError> {
    let err = |e| PortError::os("epoll over AF_XDP sockets", name, "CAP_NET_RAW", e);
    // SAFETY: epoll_create1 takes a flag; a non-negative result is a new descriptor.
    let raw = sys::cvt(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) }).map_err(err)?;
    // SAFETY: `raw` is the fresh descriptor just created, owned from here on.
    let ep = unsafe { OwnedFd::from_raw_fd(raw) };
    for s in sockets {
        let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: s.queue() as u64 };
        // SAFETY: both descriptors are open; `ev` is a live epoll_event the kernel reads.
        sys::cvt(unsafe { libc::epoll_ctl(ep.as_raw_fd(), libc::EPOLL_CTL_ADD, s.fd(), &mut ev) })
            .map_err(err)?;
    }
    Ok(ep)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_interface_is_named() {
        match open("nosuchxdp0", 2, AttachMode::Auto) {
            Err(e @ PortError::NoSuchInterface { .. }) => {
                assert!(e.to_string().contains("nosuchxdp0"))
            }
            Err(e) => panic!("wrong error {e}"),
            Ok(_) => panic!("opened a missing interface"),
        }
        assert!(matches!(open("lo", 0, AttachMode::Auto), Err(PortError::NoWorkers)));
    }

    #[test]
    fn bind_errors_name_the_queue_and_both_modes() {
        let e = bind_error(
            "veth3",
            2,
            Some(std::io::Error::from_raw_os_error(libc::EOPNOTSUPP)),
            std::io::Error::from_raw_os_error(libc::EBUSY),
        );
        let text = e.to_string();
        assert!(text.contains("veth3") && text.contains("queue 2"), "{text}");
        assert!(text.contains("copy mode") && text.contains("zero-copy mode"), "{text}");
        assert!(text.contains("already has an AF_XDP socket"), "{text}");
        let e = bind_error("veth3", 0, None, std::io::Error::from_raw_os_error(libc::ENODEV));
        assert!(matches!(e, PortError::NoSuchInterface { .. }));
    }
}
