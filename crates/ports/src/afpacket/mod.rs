//! AF_PACKET ports with TPACKET_V2 rings: any kernel interface (veth, NIC, bridge
//! port...) as a switch port, one socket per worker.
//!
//! # Sockets
//!
//! [`open`] makes one AF_PACKET socket per worker, each with its own RX and TX ring
//! (see [`ring`]), bound to the interface by index, receiving every protocol. Each
//! socket:
//! - asks for promiscuous mode (PACKET_MR_PROMISC membership; dropped when it closes);
//! - ignores frames the host transmits on the interface (PACKET_IGNORE_OUTGOING, and
//!   the fanout flag of the same name, since a fanout group has its own hook): a switch
//!   port receives what arrives from the link, not its own or the host's output;
//! - sends past the qdisc (PACKET_QDISC_BYPASS), so transmitted frames are not seen by
//!   other packet sockets (tcpdump) on the host either;
//! - sets PACKET_LOSS, so the kernel skips a slot it cannot send instead of stopping the
//!   ring on it;
//! - sets PACKET_VNET_HDR: every frame in and out carries a `virtio_net_hdr`
//!   ([`crate::vnet`]), so a host's offloads (partial checksums, TCP super-frames of up
//!   to 64 KiB) come in as the packet's offload note and go out as they came; hosts
//!   keep their default offloads. A frame without a note goes out with the header's
//!   `hdr_len` at its whole length, so the kernel copies it into the skb's head rather
//!   than attaching the TX ring's page, which a veth would copy once more;
//! - sets PACKET_COPY_THRESH and a 4 MiB receive buffer (SO_RCVBUFFORCE, else what
//!   SO_RCVBUF allows), for frames longer than an RX slot (below).
//!
//! With more than one worker the sockets join one fanout group of type
//! PACKET_FANOUT_HASH: the kernel spreads received frames over them by flow hash, so a
//! flow stays on one worker. The group id is allocated by the kernel
//! (PACKET_FANOUT_FLAG_UNIQUEID) and so is unique in the namespace, not only in this
//! process. PACKET_FANOUT_FLAG_DEFRAG is not set: it makes the kernel reassemble IPv4
//! fragments for the group, and a reassembled datagram is larger than the MTU and could
//! not be forwarded. Fragments stay together without it (the flow hash of a fragment
//! covers addresses only).
//!
//! # Data path
//!
//! `recv` copies frames out of user-owned RX slots into pooled packets (re-inserting a
//! VLAN tag the kernel lifted into the slot header, noting what the vnet header says)
//! and hands each slot back. `send` copies each frame, after the vnet header its note
//! gives, into a TX slot and makes one `send(fd, NULL, 0, MSG_DONTWAIT)` call per
//! batch; a full ring drops the rest of the batch (counted), and slots the kernel did
//! not take in that call (link down, interface gone, socket buffer full) are given back
//! and counted as dropped, so nothing is sent late. A frame whose note no longer fits
//! its headers (e.g. under a pushed MPLS label) is a transmit error.
//!
//! Super-frames: slots stay sized for the MTU (2 KiB at 1500), so the rings' memory
//! (2 MiB RX + 1 MiB TX per socket) and their depth in frames (1,024 RX slots) are those
//! of a port without offloads. Slots that held a 64 KiB frame would cost 68 KiB each:
//! 1,024 of them 68 MiB per socket, or a ring 30 times shallower for small frames at
//! today's memory. Instead a received frame longer than its slot is queued whole on the
//! socket by the kernel (PACKET_COPY_THRESH; its slot says TP_STATUS_COPY) and read with
//! one recv(2); if even that fails (the receive buffer is full), the slot holds a
//! truncated frame, which is counted as an error and never passed on. A super-frame to
//! send (longer than a TX slot, noted for segmentation) goes out, after whatever the
//! ring holds, on a second socket without rings (one sendmsg(2) each). Either way one
//! system call moves up to 64 KiB, never one per MTU-sized frame.
//!
//! The rings are TPACKET_V2, not V3: V3 packs frames into blocks that the kernel hands
//! over only when full or when the block timeout expires, which at low rates delays
//! every frame by up to that timeout (at least 1 ms) per hop. A V2 slot is handed over
//! as soon as its one frame is in it, and the socket becomes readable at once. The
//! version applies to both rings, so TX slots carry a `tpacket2_hdr` too. RX slots are
//! sized for a full frame at the interface's MTU and its headers.
//!
//! Kernel-side drops (RX ring full) are read from PACKET_STATISTICS when a slot reports
//! loss, after runs of empty polls, and every few thousand calls, and are added to
//! `rx_dropped`. After the interface goes away the socket stays open and idle: `recv`
//! returns 0 and `send` drops and counts; reopen the port when it comes back.

mod ring;

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::sync::Arc;

use datapath::packet::Packet;
use datapath::port::PortIo;
use datapath::rewrite::note_super_frame;

use crate::counters::PortCounters;
use crate::error::PortError;
use crate::info::InterfaceInfo;
use crate::sys;
use crate::vnet;
use ring::{Geometry, Mapping, RxRing, TxRing, RX_HEADROOM, TX_DATA};

/// RX ring size in bytes (more where a slot is so large that fewer than
/// `RX_MIN_FRAMES` would fit).
const RX_BYTES: usize = 2 << 20;
/// Fewest slots in an RX ring.
const RX_MIN_FRAMES: usize = 128;
/// TX ring size in bytes.
const TX_BYTES: usize = 1 << 20;
/// Ethernet header plus one VLAN tag: the most a frame may carry beyond the MTU (the
/// kernel refuses longer ones, and logs each).
const L2_OVERHEAD: usize = headers::ethernet::HEADER_LEN + headers::vlan::TAG_LEN;
/// Calls between unconditional PACKET_STATISTICS reads.
const STATS_EVERY: u32 = 4096;
/// Empty receive calls in a row between PACKET_STATISTICS / SO_ERROR reads.
const IDLE_CHECK_EVERY: u32 = 16;

/// Ring geometry for slots that hold `headroom` bytes and then a full frame at `mtu`:
/// slots of 2 KiB up to MTU 1500-ish, else the next power of two that holds one; blocks
/// of at least 64 KiB; `bytes` in all, or more to hold `min_frames` slots.
fn geometry(mtu: u32, headroom: usize, bytes: usize, min_frames: usize) -> Geometry {
    let need = headroom + mtu as usize + L2_OVERHEAD;
    let frame_size = need.next_power_of_two().clamp(2048, 1 << 17);
    let block_size = frame_size.max(64 << 10);
    let per_block = block_size / frame_size;
    Geometry {
        block_size,
        block_nr: (bytes / block_size).max(min_frames.div_ceil(per_block)).max(1),
        frame_size,
    }
}

/// RX ring geometry for an interface MTU.
fn rx_geometry(mtu: u32) -> Geometry {
    geometry(mtu, RX_HEADROOM, RX_BYTES, RX_MIN_FRAMES)
}

/// TX ring geometry for an interface MTU (a slot holds a vnet header and a frame).
fn tx_geometry(mtu: u32) -> Geometry {
    geometry(mtu, TX_DATA + vnet::LEN, TX_BYTES, 1)
}

/// Receive buffer of a socket, for frames too long for an RX slot (super-frames) that
/// wait to be read (see `ring`): room for a few dozen. Memory is taken only while
/// frames wait.
const RCVBUF: libc::c_int = 4 << 20;

/// One worker's AF_PACKET socket on a port. See the module comment.
pub struct AfPacketPort {
    rx: RxRing,
    tx: TxRing,
    /// The rings' memory: dropped (unmapped) before the socket closes.
    map: Mapping,
    fd: OwnedFd,
    /// A second socket on the interface, without rings and receiving nothing, that
    /// sends the frames too long for a TX slot (super-frames, with their vnet header)
    /// one send(2) each.
    big: OwnedFd,
    counters: Arc<PortCounters>,
    /// Longest frame `send` passes to the kernel unsegmented (slot capacity and MTU).
    max_frame: usize,
    /// The interface's MTU when opened.
    mtu: usize,
    calls: u32,
    empty_streak: u32,
}

// SAFETY: the raw pointers inside `map` point to a mapping this struct owns alone (the
// rings index it by offsets); nothing about it is tied to the thread that made it.
unsafe impl Send for AfPacketPort {}

impl AfPacketPort {
    /// This handle's counters.
    pub fn counters(&self) -> &Arc<PortCounters> {
        &self.counters
    }

    /// Adds the kernel's drop count (reset on each read) to `rx_dropped`.
    fn read_kernel_stats(&self) {
        if let Ok(st) = sys::getsockopt::<libc::tpacket_stats>(
            self.fd.as_raw_fd(),
            libc::SOL_PACKET,
            libc::PACKET_STATISTICS,
        ) {
            if st.tp_drops > 0 {
                self.counters.add_rx_dropped(u64::from(st.tp_drops));
            }
        }
    }

    /// Reads and clears a pending socket error (ENETDOWN after the link went down or
    /// the interface vanished), so that poll(2) stops reporting it.
    fn clear_socket_error(&self) {
        let _ =
            sys::getsockopt::<libc::c_int>(self.fd.as_raw_fd(), libc::SOL_SOCKET, libc::SO_ERROR);
    }

    /// One `send()` kick for the slots filled since the last. A failed call is tried
    /// again: the first send after the link came back fails with the socket's pending
    /// ENETDOWN, which that failure clears. Whether it succeeded or not, some slots may
    /// be left untaken (the caller checks).
    fn kick(&self) {
        for _ in 0..3 {
            // SAFETY: send(2) with a null buffer of length 0 is the TX ring's kick; it
            // reads no user memory.
            let r =
                unsafe { libc::send(self.fd.as_raw_fd(), std::ptr::null(), 0, libc::MSG_DONTWAIT) };
            if r >= 0 {
                return;
            }
        }
    }
}

/// One `send` call's tally.
#[derive(Default)]
struct TxCount {
    /// Slots filled since the last kick.
    filled: u64,
    sent: u64,
    bytes: u64,
    dropped: u64,
    errors: u64,
}

impl AfPacketPort {
    /// Kicks the slots filled since the last kick; those the kernel left (device down
    /// or gone, socket buffer full) are given back and counted as dropped, not sent
    /// later.
    fn flush(&mut self, c: &mut TxCount) {
        if c.filled == 0 {
            return;
        }
        self.kick();
        let mut sent = c.filled;
        if self.tx.last_untaken(&self.map) {
            let (lost, lost_bytes) = self.tx.rewind(&self.map, c.filled as usize);
            sent -= lost.min(sent);
            c.bytes -= lost_bytes.min(c.bytes);
            c.dropped += lost;
        }
        c.sent += sent;
        c.filled = 0;
    }

    /// Sends one frame with its vnet header on the ringless socket; false if the kernel
    /// did not take it.
    fn send_big(&self, hdr: &[u8; vnet::LEN], frame: &[u8]) -> bool {
        let iov = [sys::iovec(hdr), sys::iovec(frame)];
        // SAFETY: msghdr is plain integers and pointers; all zeroes is valid.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = iov.as_ptr() as *mut libc::iovec;
        msg.msg_iovlen = iov.len();
        // SAFETY: the iovecs point to live buffers of their stated lengths, which the
        // kernel only reads; the socket is bound, so no address is needed.
        let n = unsafe { libc::sendmsg(self.big.as_raw_fd(), &msg, libc::MSG_DONTWAIT) };
        n == (hdr.len() + frame.len()) as isize
    }
}

impl PortIo for AfPacketPort {
    fn recv(&mut self, rx: &mut Vec<Packet>, max: usize, pool: &mut Vec<Packet>) -> usize {
        let out = self.rx.read(&self.map, rx, max, pool);
        self.counters.add_rx_batch(out.frames as u64, out.bytes, out.errors);
        self.calls = self.calls.wrapping_add(1);
        if out.frames == 0 {
            self.empty_streak = self.empty_streak.wrapping_add(1);
            if self.empty_streak % IDLE_CHECK_EVERY == 1 {
                self.clear_socket_error();
                self.read_kernel_stats();
            }
        } else {
            self.empty_streak = 0;
            if out.losing || self.calls.is_multiple_of(STATS_EVERY) {
                self.read_kernel_stats();
            }
        }
        out.frames
    }

    fn send(&mut self, tx: &mut Vec<Packet>, pool: &mut Vec<Packet>) {
        let mut c = TxCount::default();
        for mut p in tx.drain(..) {
            let len = p.len();
            if len > self.max_frame {
                // A TCP frame gathered whole by a port without vnet header: the kernel
                // segments it as its sender's offload would have had it.
                note_super_frame(&mut p, self.mtu, self.max_frame);
            }
            let Some(mut hdr) = vnet::header_for(p.offload(), p.data()) else {
                // A note the frame no longer fits (headers it needs are gone).
                c.errors += 1;
                pool.push(p);
                continue;
            };
            if p.offload().is_none() && len <= usize::from(u16::MAX) {
                // The whole frame is header: the kernel copies it into the skb's head
                // instead of attaching the ring's page as a fragment, which a veth (any
                // device that cannot hold on to user pages) copies again into a fresh
                // page. Measured through a veth bed: +5-7 % at 64 B, +3-6 % at 512 and
                // 1518 B.
                hdr[2..4].copy_from_slice(&(len as u16).to_ne_bytes());
            }
            let gso = p.offload().is_some_and(|o| o.gso.is_some());
            if len < 14 || (len > self.max_frame && !gso) {
                c.errors += 1;
            } else if len > self.tx.capacity() {
                // A super-frame: after what the ring holds, so frames stay in order.
                self.flush(&mut c);
                if self.send_big(&hdr, p.data()) {
                    c.sent += 1;
                    c.bytes += len as u64;
                } else {
                    c.dropped += 1;
                }
            } else if self.tx.push(&self.map, &hdr, p.data())
                || (c.filled > 0 && {
                    // Every slot is filled: the kick sends them (a veth or a local device
                    // takes them at once) and gives the slots back.
                    self.flush(&mut c);
                    self.tx.push(&self.map, &hdr, p.data())
                })
            {
                c.filled += 1;
                c.bytes += len as u64;
            } else {
                c.dropped += 1;
            }
            pool.push(p);
        }
        self.flush(&mut c);
        self.counters.add_tx_batch(c.sent, c.bytes, c.dropped, c.errors);
    }

    fn rx_fd(&self) -> Option<BorrowedFd<'_>> {
        Some(self.fd.as_fd())
    }

    fn rx_depth(&self) -> Option<usize> {
        Some(self.rx.depth())
    }
}

/// Opens `workers` AF_PACKET sockets on interface `name` (in the calling thread's
/// network namespace), bringing the interface administratively up if it is down. With
/// more than one worker the sockets share a fanout group.
pub fn open(name: &str, workers: usize) -> Result<(InterfaceInfo, Vec<AfPacketPort>), PortError> {
    let info = crate::info::for_workers(name, workers)?;
    let mut ports = Vec::with_capacity(workers);
    let mut group: Option<u32> = None;
    for _ in 0..workers {
        let port = open_socket(&info)?;
        if workers > 1 {
            group = Some(join_fanout(&port, group, name)?);
        }
        ports.push(port);
    }
    Ok((info, ports))
}

/// Fanout type and flags of every group member (UNIQUEID is only for the first).
const FANOUT_FLAGS: u32 = libc::PACKET_FANOUT_HASH | libc::PACKET_FANOUT_FLAG_IGNORE_OUTGOING;

/// Joins `port` to fanout group `group`, or creates a group with a kernel-chosen id;
/// returns the group id.
fn join_fanout(port: &AfPacketPort, group: Option<u32>, name: &str) -> Result<u32, PortError> {
    let fd = port.fd.as_raw_fd();
    let err = |e| PortError::os("PACKET_FANOUT", name, "CAP_NET_RAW", e);
    let arg: libc::c_int = match group {
        Some(id) => (id | (FANOUT_FLAGS << 16)) as libc::c_int,
        None => ((FANOUT_FLAGS | libc::PACKET_FANOUT_FLAG_UNIQUEID) << 16) as libc::c_int,
    };
    sys::setsockopt(fd, libc::SOL_PACKET, libc::PACKET_FANOUT, &arg).map_err(err)?;
    match group {
        Some(id) => Ok(id),
        None => {
            let v = sys::getsockopt::<libc::c_int>(fd, libc::SOL_PACKET, libc::PACKET_FANOUT)
                .map_err(err)?;
            Ok(v as u32 & 0xffff)
        }
    }
}

/// One socket with its rings, bound to the interface, in promiscuous mode.
fn open_socket(info: &InterfaceInfo) -> Result<AfPacketPort, PortError> {
    // Before the rings: the vnet header changes the slots' layout.
    let fd = vnet_socket(info)?;
    let raw = fd.as_raw_fd();
    enable(info, raw, libc::PACKET_COPY_THRESH, "PACKET_COPY_THRESH")?;
    // Beyond the system's rmem_max needs CAP_NET_ADMIN; without it, what is allowed.
    if sys::setsockopt(raw, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, &RCVBUF).is_err() {
        let _ = sys::setsockopt(raw, libc::SOL_SOCKET, libc::SO_RCVBUF, &RCVBUF);
    }
    let v2 = libc::tpacket_versions::TPACKET_V2 as libc::c_int;
    sys::setsockopt(raw, libc::SOL_PACKET, libc::PACKET_VERSION, &v2)
        .map_err(raw_err(info, "PACKET_VERSION"))?;
    enable(info, raw, libc::PACKET_LOSS, "PACKET_LOSS")?;
    enable(info, raw, libc::PACKET_QDISC_BYPASS, "PACKET_QDISC_BYPASS")?;
    enable(info, raw, libc::PACKET_IGNORE_OUTGOING, "PACKET_IGNORE_OUTGOING")?;
    let rx_geo = rx_geometry(info.mtu);
    let tx_geo = tx_geometry(info.mtu);
    sys::setsockopt(raw, libc::SOL_PACKET, libc::PACKET_RX_RING, &rx_geo.req())
        .map_err(raw_err(info, "PACKET_RX_RING"))?;
    sys::setsockopt(raw, libc::SOL_PACKET, libc::PACKET_TX_RING, &tx_geo.req())
        .map_err(raw_err(info, "PACKET_TX_RING"))?;
    let map = Mapping::new(raw, rx_geo.bytes() + tx_geo.bytes())
        .map_err(raw_err(info, "mmap of packet rings"))?;

    sys::bind_packet(raw, info.ifindex, libc::ETH_P_ALL as u16).map_err(raw_err(info, "bind"))?;

    let big = big_socket(info)?;

    let mreq = libc::packet_mreq {
        mr_ifindex: info.ifindex as i32,
        mr_type: libc::PACKET_MR_PROMISC as u16,
        mr_alen: 0,
        mr_address: [0; 8],
    };
    sys::setsockopt(raw, libc::SOL_PACKET, libc::PACKET_ADD_MEMBERSHIP, &mreq)
        .map_err(raw_err(info, "PACKET_ADD_MEMBERSHIP"))?;

    let tx = TxRing::new(tx_geo, rx_geo.bytes());
    let max_frame = tx.capacity().min(info.mtu as usize + L2_OVERHEAD);
    Ok(AfPacketPort {
        rx: RxRing::new(rx_geo, raw),
        tx,
        map,
        fd,
        big,
        counters: Arc::default(),
        max_frame,
        mtu: info.mtu as usize,
        calls: 0,
        empty_streak: 0,
    })
}

/// The ringless socket that sends super-frames: vnet header, past the qdisc, bound to
/// the interface with protocol 0 (so it receives nothing).
fn big_socket(info: &InterfaceInfo) -> Result<OwnedFd, PortError> {
    let fd = vnet_socket(info)?;
    let raw = fd.as_raw_fd();
    enable(info, raw, libc::PACKET_QDISC_BYPASS, "PACKET_QDISC_BYPASS")?;
    sys::bind_packet(raw, info.ifindex, 0).map_err(raw_err(info, "bind"))?;
    Ok(fd)
}

/// An AF_PACKET socket for `info`'s interface with the vnet header on; protocol 0, so
/// it receives nothing before it is bound.
fn vnet_socket(info: &InterfaceInfo) -> Result<OwnedFd, PortError> {
    let fd = sys::socket(libc::AF_PACKET, libc::SOCK_RAW, 0)
        .map_err(raw_err(info, "socket(AF_PACKET)"))?;
    enable(info, fd.as_raw_fd(), libc::PACKET_VNET_HDR, "PACKET_VNET_HDR")?;
    Ok(fd)
}

/// Turns on SOL_PACKET option `opt` (named `what` in an error) of socket `fd` for
/// `info`'s interface.
fn enable(
    info: &InterfaceInfo,
    fd: RawFd,
    opt: libc::c_int,
    what: &'static str,
) -> Result<(), PortError> {
    let one: libc::c_int = 1;
    sys::setsockopt(fd, libc::SOL_PACKET, opt, &one).map_err(raw_err(info, what))
}

/// The error of setup step `op` of a socket for `info`'s interface (which needs
/// CAP_NET_RAW).
fn raw_err<'a>(
    info: &'a InterfaceInfo,
    op: &'static str,
) -> impl FnOnce(std::io::Error) -> PortError + 'a {
    move |e| PortError::os(op, &info.name, "CAP_NET_RAW", e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tx_slots_hold_a_full_frame() {
        for mtu in [576, 1500, 1600, 9000, 65535] {
            let g = tx_geometry(mtu);
            assert!(g.frame_size - TX_DATA - vnet::LEN >= mtu as usize + L2_OVERHEAD, "mtu {mtu}");
            assert_eq!(g.block_size % g.frame_size, 0);
            assert_eq!(g.block_size % 4096, 0);
            assert!(g.bytes() <= 1 << 20 || g.block_nr == 1);
        }
        assert_eq!(tx_geometry(1500).frame_size, 2048);
    }

    #[test]
    fn rx_slots_hold_a_full_frame() {
        for mtu in [576, 1500, 1600, 9000, 65535] {
            let g = rx_geometry(mtu);
            assert!(g.frame_size - RX_HEADROOM >= mtu as usize + L2_OVERHEAD, "mtu {mtu}");
            assert_eq!(g.block_size % g.frame_size, 0);
            assert_eq!(g.block_size % 4096, 0);
            assert!(g.frame_nr() >= RX_MIN_FRAMES, "mtu {mtu}");
            assert!(g.bytes() <= RX_BYTES || g.frame_nr() <= RX_MIN_FRAMES + g.frames_per_block());
        }
        assert_eq!(rx_geometry(1500).frame_size, 2048);
        assert_eq!(rx_geometry(1500).bytes(), RX_BYTES);
    }

    #[test]
    fn missing_interface_is_named() {
        match open("nosuchif0x", 2) {
            Err(e @ PortError::NoSuchInterface { .. }) => {
                assert!(e.to_string().contains("nosuchif0x"))
            }
            Err(e) => panic!("wrong error {e}"),
            Ok(_) => panic!("opened a missing interface"),
        }
        assert!(matches!(open("lo", 0), Err(PortError::NoWorkers)));
    }
}
