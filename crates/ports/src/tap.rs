//! Tap ports: a multi-queue tap device, one queue per worker.
//!
//! A tap is a virtual Ethernet interface whose other end is a file descriptor: frames
//! the host stack sends out of the interface are read from the descriptor, frames
//! written to it arrive at the host stack as if received. It is the switch's LOCAL port,
//! and any tap (a VM's, a test's) can be a port.
//!
//! [`open`] attaches `workers` queues to the tap `name` with TUNSETIFF (IFF_TAP |
//! IFF_NO_PI | IFF_MULTI_QUEUE | IFF_VNET_HDR), creating the device if there is none,
//! and brings it up.
//! A device created here lives as long as its descriptors (it is not made persistent);
//! an existing persistent multi-queue tap (`ip tuntap add mode tap multi_queue`) is
//! reused and left in place. The kernel spreads the host's frames over the queues by
//! flow hash.
//!
//! Offloads: every frame read or written is preceded by a 10-byte `virtio_net_hdr`
//! (TUNSETVNETHDRSZ; [`crate::vnet`]), and TUNSETOFFLOAD lets the host hand the switch
//! TCP super-frames (TSO4, TSO6, with ECN) and partial checksums, which `recv` puts in
//! each packet's offload note. `send` writes the note back as the header, so the host
//! gets such frames as they came (the kernel segments or finishes them where it must);
//! a frame whose note no longer fits its headers is counted as a transmit error. UDP
//! segmentation is not offered, so the host segments UDP itself.
//!
//! Descriptors are non-blocking. `recv` reads one frame per read(2) until `max` or
//! EAGAIN; `send` writes one frame per writev(2) (header and frame), dropping (and
//! counting) a frame the kernel does not take. After the interface is deleted the descriptors stay open but
//! detached: `recv` returns 0, `send` drops, and poll(2) reports an error on `rx_fd`
//! until the port is closed, so the owner should close it on the link's removal.

use std::ffi::CStr;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::sync::Arc;

use datapath::packet::Packet;
use datapath::port::PortIo;
use datapath::rewrite::note_super_frame;

use crate::counters::PortCounters;
use crate::error::PortError;
use crate::info::{self, InterfaceInfo};
use crate::sys;
use crate::vnet;

/// Room for the largest frame a tap hands over (a 64 KiB super-frame, or MTU 65521,
/// plus headers) and its vnet header, with room to spare: a read that fills it is
/// counted as an error (it may have been cut).
const READ_BUF: usize = 128 << 10;

/// What TUNSETOFFLOAD offers the host: partial checksums and TCP segmentation.
const OFFLOADS: libc::c_uint =
    libc::TUN_F_CSUM | libc::TUN_F_TSO4 | libc::TUN_F_TSO6 | libc::TUN_F_TSO_ECN;

/// The clone device of the tun/tap driver.
const TUN_DEVICE: &CStr = c"/dev/net/tun";

/// One worker's queue of a tap. See the module comment.
pub struct TapPort {
    fd: OwnedFd,
    counters: Arc<PortCounters>,
    /// Scratch space for one frame (a frame is read whole or not at all).
    buf: Box<[u8]>,
    /// The tap's MTU when opened, and the longest frame it carries unsegmented.
    mtu: usize,
    max_frame: usize,
}

impl TapPort {
    /// This handle's counters.
    pub fn counters(&self) -> &Arc<PortCounters> {
        &self.counters
    }
}

/// Whether an errno from a tap read or write means "nothing now / not any more" rather
/// than a fault: no data, no room, link down, device gone.
fn transient(errno: i32) -> bool {
    matches!(
        errno,
        libc::EAGAIN
            | libc::ENOBUFS
            | libc::EIO
            | libc::EBADFD
            | libc::ENETDOWN
            | libc::ENXIO
            | libc::EPIPE
    )
}

impl PortIo for TapPort {
    fn recv(&mut self, rx: &mut Vec<Packet>, max: usize, pool: &mut Vec<Packet>) -> usize {
        let (mut got, mut bytes, mut errors) = (0usize, 0u64, 0u64);
        while got < max {
            // SAFETY: reads into our own buffer, at most its length.
            let n = unsafe {
                libc::read(self.fd.as_raw_fd(), self.buf.as_mut_ptr().cast(), self.buf.len())
            };
            if n < 0 {
                let e = sys::errno();
                if e == libc::EINTR {
                    continue;
                }
                if !transient(e) {
                    errors += 1;
                }
                break;
            }
            let n = n as usize;
            if n == 0 {
                break;
            }
            if n < vnet::LEN + 14 || n >= self.buf.len() {
                errors += 1;
                continue;
            }
            let (hdr, frame) = self.buf[..n].split_at(vnet::LEN);
            let mut p = pool.pop().unwrap_or_default();
            p.refill(frame);
            match vnet::note_from(hdr, p.data_mut()) {
                Ok(note) => p.set_offload(note),
                Err(_) => {
                    errors += 1;
                    pool.push(p);
                    continue;
                }
            }
            bytes += p.len() as u64;
            got += 1;
            rx.push(p);
        }
        self.counters.add_rx_batch(got as u64, bytes, errors);
        got
    }

    fn send(&mut self, tx: &mut Vec<Packet>, pool: &mut Vec<Packet>) {
        let (mut sent, mut bytes, mut dropped, mut errors) = (0u64, 0u64, 0u64, 0u64);
        for mut p in tx.drain(..) {
            if p.len() > self.max_frame {
                // A TCP frame gathered whole by a port without vnet header: the host's
                // stack takes it as a super-frame, as its sender's offload left it.
                note_super_frame(&mut p, self.mtu, self.max_frame);
            }
            let hdr = vnet::header_for(p.offload(), p.data());
            let (Some(hdr), true) = (hdr, p.len() >= 14) else {
                errors += 1;
                pool.push(p);
                continue;
            };
            let data = p.data();
            let iov = [sys::iovec(&hdr), sys::iovec(data)];
            let n = loop {
                // SAFETY: the iovecs point to the header and the packet's own bytes, of
                // their exact lengths, which the kernel only reads.
                let n = unsafe { libc::writev(self.fd.as_raw_fd(), iov.as_ptr(), 2) };
                if n >= 0 || sys::errno() != libc::EINTR {
                    break n;
                }
            };
            if n == (vnet::LEN + data.len()) as isize {
                sent += 1;
                bytes += data.len() as u64;
            } else if n < 0 && transient(sys::errno()) {
                dropped += 1;
            } else {
                errors += 1;
            }
            pool.push(p);
        }
        self.counters.add_tx_batch(sent, bytes, dropped, errors);
    }

    fn rx_fd(&self) -> Option<BorrowedFd<'_>> {
        Some(self.fd.as_fd())
    }
}

/// Attaches `workers` queues to tap `name` (creating it if missing, in the calling
/// thread's network namespace) and brings it up.
pub fn open(name: &str, workers: usize) -> Result<(InterfaceInfo, Vec<TapPort>), PortError> {
    if workers == 0 {
        return Err(PortError::NoWorkers);
    }
    sys::check_ifname(name)?;
    let mut ports = Vec::with_capacity(workers);
    for _ in 0..workers {
        ports.push(attach_queue(name)?);
    }
    info::set_admin_up(name)?;
    let info = InterfaceInfo::by_name(name)?;
    for p in &mut ports {
        p.mtu = info.mtu as usize;
        // Ethernet header and one VLAN tag.
        p.max_frame = p.mtu + 18;
    }
    Ok((info, ports))
}

/// Opens /dev/net/tun and attaches it as one queue of tap `name`.
fn attach_queue(name: &str) -> Result<TapPort, PortError> {
    // SAFETY: open(2) of a constant NUL-terminated path; a non-negative result is a
    // new descriptor we own.
    let raw = unsafe {
        libc::open(TUN_DEVICE.as_ptr(), libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC)
    };
    let raw =
        sys::cvt(raw).map_err(|e| PortError::os("open /dev/net/tun", name, "CAP_NET_ADMIN", e))?;
    // SAFETY: `raw` is the fresh descriptor opened above.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    let mut req = sys::ifreq(name);
    req.ifr_ifru.ifru_flags =
        (libc::IFF_TAP | libc::IFF_NO_PI | libc::IFF_MULTI_QUEUE | libc::IFF_VNET_HDR)
            as libc::c_short;
    if let Err(e) = sys::ioctl_ifreq(fd.as_raw_fd(), libc::TUNSETIFF, &mut req) {
        let tap_err = |reason| PortError::Tap { name: name.to_string(), reason };
        return Err(match e.raw_os_error() {
            Some(libc::EINVAL) => {
                tap_err("an interface of this name exists and is not a multi-queue tap")
            }
            Some(libc::EBUSY) => tap_err("in use by another process"),
            Some(libc::E2BIG) => tap_err("too many queues (the kernel allows 256)"),
            _ => PortError::os("TUNSETIFF", name, "CAP_NET_ADMIN", e),
        });
    }
    let raw = fd.as_raw_fd();
    let hdr_len = vnet::LEN as libc::c_int;
    // SAFETY: TUNSETVNETHDRSZ reads one int from the pointer, which lives across the call.
    sys::cvt(unsafe { libc::ioctl(raw, libc::TUNSETVNETHDRSZ, &hdr_len) })
        .map_err(|e| PortError::os("TUNSETVNETHDRSZ", name, "CAP_NET_ADMIN", e))?;
    // SAFETY: TUNSETOFFLOAD takes its flags as the argument value itself.
    sys::cvt(unsafe { libc::ioctl(raw, libc::TUNSETOFFLOAD, OFFLOADS as libc::c_ulong) })
        .map_err(|e| PortError::os("TUNSETOFFLOAD", name, "CAP_NET_ADMIN", e))?;
    Ok(TapPort {
        fd,
        counters: Arc::default(),
        buf: vec![0u8; READ_BUF].into_boxed_slice(),
        mtu: 1500,
        max_frame: 1518,
    })
}
