//! One AF_XDP socket bound to one rx queue of an interface, with a UMEM of its own.
//!
//! # Rings and frames
//!
//! The socket owns its UMEM ([`Area`], see [`super::umem`]) and all four rings, each as
//! long as a half of the UMEM has frames:
//! - RX half: every RX frame starts in the fill ring. `recv` copies each frame the RX
//!   ring hands over into a pooled [`Packet`] and puts that frame straight back into the
//!   fill ring, so the fill ring never runs dry while the worker keeps up, and nothing is
//!   allocated per packet. The fill ring has room for every RX frame, so giving frames
//!   back cannot fail; should it ever, they wait in `refill` for the next call.
//! - TX half: free TX frames wait in `free_tx`. `send` copies each packet into one,
//!   queues its descriptor on the TX ring and kicks the kernel; the completion ring
//!   returns the frames (reaped at the start of every `send`, and whenever a batch has
//!   used every free frame: what it queued is kicked first). No free frame (all in
//!   flight) means the packet is dropped and counted.
//!
//! # Frames longer than a UMEM frame
//!
//! Receive: a socket bound with XDP_USE_SG (copy mode, where the kernel takes the flag)
//! is given a frame longer than one UMEM frame as several descriptors, each but the last
//! with XDP_PKT_CONTD in its options; `recv` gathers them into one packet ([`Gather`],
//! kept across calls when a batch ends inside a frame), at most [`MAX_GATHERED`] bytes.
//! A longer chain, or one with a descriptor outside the UMEM, is dropped whole and
//! counted as an rx error; every descriptor's frame still goes back to the fill ring.
//! Generic-mode XDP hands the socket a host's GSO/GRO super-frames (up to 64 KiB) so.
//!
//! Transmit: a packet longer than `max_frame` that is IPv4/IPv6 TCP is cut into segments
//! that fit (`datapath::rewrite::segment_tcp`, what the kernel's GSO would have done);
//! any other (UDP, non-IP: IP fragmentation is not done) is a tx error.
//!
//! # Wakeups (XDP_USE_NEED_WAKEUP)
//!
//! The kernel is only kicked when a ring's flags ask for it: `sendto(MSG_DONTWAIT)` for
//! the TX ring, `poll(2)` for the fill ring. In copy mode the TX flag is always set and
//! each `sendto` transmits at most a kernel budget of descriptors (32 by default)
//! synchronously, so `send` kicks until the ring is empty (bounded by the number queued),
//! and a kick that returns EBUSY means the kernel consumed and dropped its last
//! descriptor (no carrier: the device dropped it).
//!
//! An interface that is administratively down refuses kicks (ENETDOWN) and leaves the
//! descriptors on the ring: the kernel offers no way to take them back, so the frames
//! of the batch that met the link going down are sent when it comes back up (a late
//! batch, unlike afpacket). Every packet given to `send` while the link is known to be
//! down is dropped and counted, not queued, and each `send` kicks once to notice the
//! link's return.
//!
//! # Counting
//!
//! TX counters are settled when the kernel consumes descriptors, in ring order
//! (`inflight` holds the lengths of queued descriptors, oldest first): consumed without
//! error is `tx_packets`/`tx_bytes`, consumed-and-dropped is `tx_dropped`. In copy mode
//! that is all known when `send` returns; in zero-copy mode the driver consumes
//! asynchronously and later calls settle what it took. A socket whose interface went
//! away (ENXIO: unbound) is dead: its queued descriptors and every later packet are
//! dropped and counted, and receiving returns nothing; the port must be reopened.
//!
//! The kernel's XDP_STATISTICS are cumulative; [`XskSocket::kernel_stats`] returns the
//! growth since the previous read: `rx_dropped + rx_ring_full` (frame too long for a
//! chunk, fill ring empty, RX ring full), `rx_invalid_descs` and `tx_invalid_descs`.

use std::collections::VecDeque;
use std::ffi::CString;
use std::io;
use std::num::NonZeroU32;
use std::os::fd::RawFd;

use datapath::packet::Packet;
use datapath::rewrite::segment_tcp;
use xdpilone::xdp::XdpDesc;
use xdpilone::{DeviceQueue, IfInfo, RingRx, RingTx, Socket, SocketConfig, Umem, UmemConfig, User};

use super::gather::{Gather, Gathered, MAX_GATHERED};
use super::umem::{Area, Geometry, UMEM_BYTES};
use crate::error::PortError;

/// Bind flag XDP_USE_SG (<linux/if_xdp.h>): frames may span several descriptors.
const XDP_USE_SG: u16 = 1 << 4;
/// Descriptor option XDP_PKT_CONTD: the frame continues in the next descriptor.
const XDP_PKT_CONTD: u32 = 1;

/// What one `recv` call on one socket gave.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct RxCount {
    pub frames: usize,
    pub bytes: u64,
    /// Frames dropped here: a descriptor that did not fit the UMEM (a kernel bug if ever
    /// non-zero), or a multi-descriptor frame longer than [`MAX_GATHERED`].
    pub errors: u64,
}

/// What one `send` call (or the settling of earlier ones) accounts.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct TxCount {
    pub packets: u64,
    pub bytes: u64,
    pub dropped: u64,
    pub errors: u64,
}

/// Growth of the kernel's XDP_STATISTICS since the last read.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct KernelDrops {
    pub rx_dropped: u64,
    pub rx_errors: u64,
    pub tx_errors: u64,
}

/// Why building a socket failed: at bind time (a mode the driver may not support) or
/// before (no point trying another mode).
pub(super) enum BuildError {
    Bind(io::Error),
    Other(PortError),
}

/// One bound AF_XDP socket. Fields are dropped in order: rings, fill/completion
/// queues, socket, UMEM registration, and the mapping last.
pub(super) struct XskSocket {
    rx: RingRx,
    tx: RingTx,
    device: DeviceQueue,
    user: User,
    /// Held for ownership and drop order only (the UMEM registration).
    _umem: Umem,
    area: Area,
    geometry: Geometry,
    /// TX frames not in flight.
    free_tx: Vec<u64>,
    /// RX frames taken from the RX ring and not yet back in the fill ring.
    refill: Vec<u64>,
    /// The frame being gathered from descriptors with XDP_PKT_CONTD (bound with
    /// XDP_USE_SG only), kept across `recv` calls.
    gather: Gather,
    /// Scratch: the segments of one packet cut by `send` (empty between calls).
    segments: Vec<Packet>,
    /// Lengths of the descriptors queued on the TX ring and not yet consumed, oldest first.
    inflight: VecDeque<u32>,
    /// Scratch: one batch of TX descriptors.
    batch: Vec<XdpDesc>,
    /// Last cumulative kernel statistics read.
    last_stats: [u64; 3],
    zero_copy: bool,
    /// Bound with XDP_USE_SG: frames longer than a UMEM frame arrive in several descriptors.
    sg: bool,
    /// Unbound by the kernel (interface gone): transmit and receive nothing.
    dead: bool,
    /// The last kick met an interface that is administratively down (ENETDOWN): new
    /// packets are dropped, and each `send` kicks once to see whether it is back.
    link_down: bool,
    queue: u32,
}

// SAFETY: the raw pointers inside (the UMEM area, the rings' mappings, xdpilone's Umem
// which points at the area) refer to memory this struct owns alone and unmaps on drop;
// nothing in it is tied to the thread that created it, and it is used by one thread at a
// time (`&mut self` for every ring operation).
unsafe impl Send for XskSocket {}

impl std::fmt::Debug for XskSocket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("XskSocket")
            .field("queue", &self.queue)
            .field("fd", &self.fd())
            .field("zero_copy", &self.zero_copy)
            .field("sg", &self.sg)
            .finish()
    }
}

fn errno_io(e: xdpilone::Errno) -> io::Error {
    io::Error::from_raw_os_error(e.get_raw().abs())
}

impl XskSocket {
    /// Makes a socket for rx queue `queue` of interface `name` (index `ifindex`, in the
    /// calling thread's namespace) and binds it, zero-copy if `zero_copy` else copy mode,
    /// and with XDP_USE_SG if `sg`.
    pub fn build(
        name: &str,
        ifindex: u32,
        queue: u32,
        geometry: Geometry,
        zero_copy: bool,
        sg: bool,
    ) -> Result<XskSocket, BuildError> {
        let other = |op: &'static str, capability: &'static str| {
            move |e: xdpilone::Errno| {
                BuildError::Other(PortError::os(op, name, capability, errno_io(e)))
            }
        };
        let area = Area::new(geometry).map_err(|e| {
            BuildError::Other(PortError::Io {
                op: "mapping AF_XDP UMEM memory",
                name: name.to_string(),
                source: e,
            })
        })?;
        let config = UmemConfig {
            fill_size: geometry.half,
            complete_size: geometry.half,
            frame_size: geometry.frame_size,
            headroom: 0,
            flags: 0,
        };
        // SAFETY: the area is a page-aligned mapping of exactly this length, owned by the
        // returned socket and dropped after the Umem (field order).
        let umem = unsafe { Umem::new(config, area.as_slice_ptr()) }
            .map_err(|e| BuildError::Other(umem_error(name, errno_io(e))))?;

        let mut info = IfInfo::invalid();
        let cname = CString::new(name).map_err(|_| {
            BuildError::Other(PortError::InvalidName {
                name: name.to_string(),
                reason: "contains NUL",
            })
        })?;
        info.from_name(&cname).map_err(other("if_nametoindex", "CAP_NET_RAW"))?;
        if info.ifindex() != ifindex {
            return Err(BuildError::Other(PortError::NoSuchInterface { name: name.to_string() }));
        }
        info.set_queue(queue);
        let sock = Socket::with_shared(&info, &umem)
            .map_err(other("creating the AF_XDP socket", "CAP_NET_RAW"))?;
        let mut device = umem
            .fq_cq(&sock)
            .map_err(other("setting up AF_XDP fill/completion rings", "CAP_NET_RAW"))?;
        let ring = NonZeroU32::new(geometry.half);
        let mut bind_flags = SocketConfig::XDP_BIND_NEED_WAKEUP;
        bind_flags |=
            if zero_copy { SocketConfig::XDP_BIND_ZEROCOPY } else { SocketConfig::XDP_BIND_COPY };
        if sg {
            bind_flags |= XDP_USE_SG;
        }
        let user = umem
            .rx_tx(&sock, &SocketConfig { rx_size: ring, tx_size: ring, bind_flags })
            .map_err(other("setting up AF_XDP rx/tx rings", "CAP_NET_RAW"))?;
        let rx = user.map_rx().map_err(other("mapping the AF_XDP rx ring", "CAP_NET_RAW"))?;
        let tx = user.map_tx().map_err(other("mapping the AF_XDP tx ring", "CAP_NET_RAW"))?;

        // Every RX frame into the fill ring (it has room for exactly these).
        let rx_frames: Vec<u64> = (0..geometry.half).map(|i| geometry.rx_frame(i)).collect();
        {
            let mut fill = device.fill(geometry.half);
            let n = fill.insert(rx_frames.iter().copied());
            fill.commit();
            if n != geometry.half {
                return Err(BuildError::Other(PortError::Io {
                    op: "filling the AF_XDP fill ring",
                    name: name.to_string(),
                    source: io::Error::other(format!(
                        "the kernel took {n} of {} frames",
                        geometry.half
                    )),
                }));
            }
        }

        umem.bind(&user).map_err(|e| BuildError::Bind(errno_io(e)))?;

        let half = geometry.half as usize;
        Ok(XskSocket {
            rx,
            tx,
            device,
            user,
            _umem: umem,
            area,
            geometry,
            free_tx: {
                let mut free = Vec::with_capacity(half);
                free.extend((0..geometry.half).map(|i| geometry.tx_frame(i)));
                free
            },
            refill: Vec::with_capacity(half),
            gather: Gather::default(),
            segments: Vec::new(),
            inflight: VecDeque::with_capacity(half),
            batch: Vec::with_capacity(half),
            last_stats: [0; 3],
            zero_copy,
            sg,
            dead: false,
            link_down: false,
            queue,
        })
    }

    /// The socket's descriptor (for the XSKMAP and for poll).
    pub fn fd(&self) -> RawFd {
        self.user.as_raw_fd()
    }

    /// The rx queue it is bound to.
    pub fn queue(&self) -> u32 {
        self.queue
    }

    /// Bound in zero-copy mode (else copy mode).
    pub fn zero_copy(&self) -> bool {
        self.zero_copy
    }

    /// Bound with XDP_USE_SG (frames longer than a UMEM frame are received).
    pub fn sg(&self) -> bool {
        self.sg
    }

    /// Longest frame the kernel can deliver to this socket (and `recv` passes on).
    pub fn max_rx_frame(&self) -> u32 {
        if self.sg {
            MAX_GATHERED as u32
        } else {
            self.geometry.max_rx_frame()
        }
    }

    /// Appends up to `max` received frames to `rx`, buffers taken from `pool` first, and
    /// gives their UMEM frames back to the fill ring.
    pub fn recv(&mut self, rx: &mut Vec<Packet>, max: usize, pool: &mut Vec<Packet>) -> RxCount {
        let mut count = RxCount::default();
        let budget = u32::try_from(max).unwrap_or(u32::MAX);
        if budget > 0 && self.rx.available() > 0 {
            let mut ring = self.rx.receive(budget);
            while let Some(desc) = ring.read() {
                let bytes = self.area.frame(desc.addr, desc.len);
                let last = desc.options & XDP_PKT_CONTD == 0;
                let done = self.gather.push(bytes, last, pool);
                // A frame whose address is not in the UMEM cannot be given back (and was
                // never ours); any other goes back to the kernel.
                if let Some(chunk) = self.area.chunk_of(desc.addr) {
                    self.refill.push(chunk);
                }
                match done {
                    Gathered::More => {}
                    Gathered::Frame(mut p) => {
                        // The frame as bytes has lost the kernel's note that its sender
                        // left the checksum to the device: finish it here, as the device
                        // would have.
                        datapath::rewrite::finish_offloaded_checksum(p.data_mut());
                        count.frames += 1;
                        count.bytes += p.len() as u64;
                        rx.push(p);
                    }
                    Gathered::Dropped => count.errors += 1,
                }
            }
            ring.release();
        }
        self.give_back_rx_frames();
        count
    }

    /// Puts frames from `refill` into the fill ring, waking the kernel if it asks.
    fn give_back_rx_frames(&mut self) {
        if !self.refill.is_empty() {
            let want = u32::try_from(self.refill.len()).unwrap_or(u32::MAX);
            let mut fill = self.device.fill(want);
            let n = fill.insert(self.refill.iter().copied());
            fill.commit();
            drop(fill);
            self.refill.drain(..n as usize);
        }
        if self.device.needs_wakeup() {
            self.device.wake();
        }
    }

    /// Queues every packet of `tx` that fits a free TX frame (others are dropped or, if
    /// too short, errors), cutting TCP packets longer than `max_frame` into segments of
    /// at most `max_frame` bytes and IP packets of at most `mtu` (other long packets are
    /// errors), kicks the kernel as its ring asks, and returns the packets to `pool`.
    /// Returns what was settled, this batch's and earlier ones'.
    pub fn send(
        &mut self,
        tx: &mut Vec<Packet>,
        pool: &mut Vec<Packet>,
        max_frame: usize,
        mtu: usize,
    ) -> TxCount {
        let mut count = TxCount::default();
        self.reap_completions();
        if self.link_down {
            // One kick to learn whether the interface is up again.
            self.kick_once(&mut count);
        }
        self.batch.clear();
        let mut segments = std::mem::take(&mut self.segments);
        for p in tx.drain(..) {
            let len = p.len();
            if len < 14 {
                count.errors += 1;
            } else if len <= max_frame {
                self.enqueue(p.data(), &mut count);
            } else if segment_tcp(p.data(), mtu, max_frame, pool, &mut segments).is_ok() {
                for s in segments.drain(..) {
                    self.enqueue(s.data(), &mut count);
                    pool.push(s);
                }
            } else {
                count.errors += 1;
            }
            pool.push(p);
        }
        self.segments = segments;
        self.flush(&mut count);
        self.reap_completions();
        count
    }

    /// Copies one frame (at most `max_frame` bytes) into a free TX frame and adds it to
    /// the batch; with none free, the batch so far is flushed first to get some back.
    fn enqueue(&mut self, data: &[u8], count: &mut TxCount) {
        if self.free_tx.is_empty() && !self.batch.is_empty() {
            // Every TX frame is in this batch or in flight: send the batch (in copy mode
            // the kick transmits it and the frames come back at once).
            self.flush(count);
            self.reap_completions();
        }
        if self.dead || self.link_down {
            count.dropped += 1;
        } else if let Some(addr) = self.free_tx.pop() {
            if self.area.write(addr, data) {
                self.batch.push(XdpDesc { addr, len: data.len() as u32, options: 0 });
            } else {
                // Longer than a frame: `max_frame` is never above the frame size, so
                // this does not happen; counted rather than trusted.
                self.free_tx.push(addr);
                count.errors += 1;
            }
        } else {
            count.dropped += 1;
        }
    }

    /// Puts the batch on the TX ring, kicks the kernel as the ring asks and settles what
    /// it consumed.
    fn flush(&mut self, count: &mut TxCount) {
        if !self.batch.is_empty() {
            let want = u32::try_from(self.batch.len()).unwrap_or(u32::MAX);
            let mut ring = self.tx.transmit(want);
            let n = ring.insert(self.batch.iter().copied()) as usize;
            ring.commit();
            drop(ring);
            // The TX ring has room for every TX frame, so this is all of them; any it
            // did not take go back to the free list, dropped.
            for d in self.batch.drain(n..) {
                self.free_tx.push(d.addr);
                count.dropped += 1;
            }
            self.inflight.extend(self.batch.iter().map(|d| d.len));
            self.batch.clear();
        }
        self.kick(count);
        self.settle(count, false);
    }

    /// Kicks the TX ring while the kernel asks for it and leaves descriptors there;
    /// bounded by the number queued, and ended by two kicks in a row that move nothing
    /// (a busy device queue: what is left goes with the next `send`'s kicks).
    fn kick(&mut self, count: &mut TxCount) {
        let limit = self.inflight.len() + 2;
        let mut idle = 0;
        for _ in 0..limit {
            if self.dead || self.link_down || self.tx.pending() == 0 || !self.tx.needs_wakeup() {
                return;
            }
            let before = self.tx.pending();
            if !self.kick_once(count) {
                return;
            }
            idle = if self.tx.pending() == before { idle + 1 } else { 0 };
            if idle == 2 {
                return;
            }
        }
    }

    /// One `sendto` kick, settling what it consumed and noting a link that is down or
    /// gone. Returns whether kicking again may make progress.
    fn kick_once(&mut self, count: &mut TxCount) -> bool {
        let before = self.tx.pending();
        // SAFETY: sendto(2) with a null buffer of length 0 and no address is the AF_XDP
        // TX kick; it reads no user memory.
        let r = unsafe {
            libc::sendto(self.fd(), std::ptr::null(), 0, libc::MSG_DONTWAIT, std::ptr::null(), 0)
        };
        let errno = if r < 0 { crate::sys::errno() } else { 0 };
        let consumed = before.saturating_sub(self.tx.pending());
        if errno == libc::EBUSY && consumed > 0 {
            // The last descriptor this kick consumed was dropped by the device.
            self.settle_n(consumed - 1, count);
            if self.inflight.pop_front().is_some() {
                count.dropped += 1;
            }
        } else {
            self.settle_n(consumed, count);
        }
        self.link_down = errno == libc::ENETDOWN;
        match errno {
            0 => consumed > 0,
            libc::EAGAIN | libc::EBUSY | libc::EINTR => true,
            libc::ENXIO => {
                self.dead = true;
                self.settle(count, true);
                false
            }
            _ => false,
        }
    }

    /// Settles descriptors the kernel consumed since the last look: sent. With
    /// `all_dropped`, every queued descriptor is settled as dropped instead (the socket
    /// is dead and the kernel will never take them).
    fn settle(&mut self, count: &mut TxCount, all_dropped: bool) {
        if all_dropped {
            count.dropped += self.inflight.len() as u64;
            self.inflight.clear();
            return;
        }
        let queued = self.inflight.len() as u32;
        let consumed = queued.saturating_sub(self.tx.pending());
        self.settle_n(consumed, count);
    }

    /// Settles the oldest `n` queued descriptors as sent.
    fn settle_n(&mut self, n: u32, count: &mut TxCount) {
        for _ in 0..n {
            match self.inflight.pop_front() {
                Some(len) => {
                    count.packets += 1;
                    count.bytes += u64::from(len);
                }
                None => break,
            }
        }
    }

    /// Settles what the kernel consumed since the last call, for sockets whose driver
    /// transmits asynchronously (zero-copy); cheap (one shared-memory load).
    pub fn settle_async(&mut self) -> TxCount {
        let mut count = TxCount::default();
        if !self.inflight.is_empty() && !self.dead {
            self.settle(&mut count, false);
            self.reap_completions();
        }
        count
    }

    /// Moves completed TX frames back to the free list.
    fn reap_completions(&mut self) {
        let outstanding = self.geometry.half as usize - self.free_tx.len();
        if outstanding == 0 {
            return;
        }
        let mut done = self.device.complete(outstanding as u32);
        while let Some(addr) = done.read() {
            if let Some(chunk) = self.area.chunk_of(addr) {
                // Only TX frames, and never more than there are (a confused kernel
                // cannot make the list grow).
                let half = self.geometry.half as usize;
                if chunk >= self.geometry.tx_frame(0) && self.free_tx.len() < half {
                    self.free_tx.push(chunk);
                }
            }
        }
        done.release();
    }

    /// Frames the RX ring (and the fill ring) hold.
    pub fn rx_depth(&self) -> usize {
        self.geometry.half as usize
    }

    /// Growth of the kernel's drop statistics since the last call (zero if they cannot
    /// be read).
    pub fn kernel_stats(&mut self) -> KernelDrops {
        let Ok(st) = self.device.statistics_v2() else {
            return KernelDrops::default();
        };
        let now =
            [st.rx_dropped.wrapping_add(st.rx_ring_full), st.rx_invalid_descs, st.tx_invalid_descs];
        let [a, b, c] = std::array::from_fn(|i| now[i].wrapping_sub(self.last_stats[i]));
        self.last_stats = now;
        KernelDrops { rx_dropped: a, rx_errors: b, tx_errors: c }
    }
}

/// A UMEM that could not be made: which limit, and what to do about it.
fn umem_error(name: &str, e: io::Error) -> PortError {
    let mib = UMEM_BYTES >> 20;
    match e.raw_os_error() {
        Some(libc::EPERM) | Some(libc::EACCES) => PortError::NotPermitted {
            op: "creating an AF_XDP socket and registering its UMEM",
            name: name.to_string(),
            capability: "CAP_NET_RAW, and CAP_IPC_LOCK or a RLIMIT_MEMLOCK above the UMEM size",
        },
        Some(libc::ENOMEM) | Some(libc::ENOBUFS) => PortError::Io {
            op: "registering AF_XDP UMEM (XDP_UMEM_REG)",
            name: name.to_string(),
            source: io::Error::new(
                e.kind(),
                format!(
                    "cannot pin {mib} MiB of UMEM for this queue ({e}); without CAP_IPC_LOCK it \
                     counts against RLIMIT_MEMLOCK ({}), raise that limit or run as root",
                    memlock_limit()
                ),
            ),
        },
        Some(libc::EAFNOSUPPORT) => PortError::Io {
            op: "creating an AF_XDP socket",
            name: name.to_string(),
            source: io::Error::new(
                io::ErrorKind::Unsupported,
                "this kernel has no AF_XDP sockets (CONFIG_XDP_SOCKETS)",
            ),
        },
        _ => PortError::Io {
            op: "creating an AF_XDP socket with its UMEM",
            name: name.to_string(),
            source: e,
        },
    }
}

/// The soft RLIMIT_MEMLOCK, in words.
fn memlock_limit() -> String {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes one rlimit into our live struct.
    if unsafe { libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut lim) } != 0 {
        return "unknown".to_string();
    }
    if lim.rlim_cur == libc::RLIM_INFINITY {
        "unlimited".to_string()
    } else {
        format!("{} KiB", lim.rlim_cur / 1024)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn umem_errors_say_what_to_do() {
        let e = umem_error("p0", io::Error::from_raw_os_error(libc::ENOBUFS));
        let text = e.to_string();
        assert!(text.contains("RLIMIT_MEMLOCK") && text.contains("8 MiB"), "{text}");
        assert!(text.contains("p0"), "{text}");
        let e = umem_error("p0", io::Error::from_raw_os_error(libc::EPERM));
        assert!(matches!(e, PortError::NotPermitted { .. }), "{e}");
        let e = umem_error("p0", io::Error::from_raw_os_error(libc::EAFNOSUPPORT));
        assert!(e.to_string().contains("CONFIG_XDP_SOCKETS"), "{e}");
    }
}
