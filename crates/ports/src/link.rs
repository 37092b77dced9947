//! Link monitor: reports interfaces going up, down, appearing and disappearing, from
//! the kernel's rtnetlink link notifications.
//!
//! [`LinkMonitor`] opens a NETLINK_ROUTE socket subscribed to RTMGRP_LINK (in the
//! calling thread's network namespace) and reads it on a thread of its own, turning
//! every RTM_NEWLINK / RTM_DELLINK message into a [`LinkEvent`] for a callback (or a
//! channel). The kernel sends RTM_NEWLINK for many changes besides up/down (addresses,
//! MTU, promiscuity), so consumers should compare with the last state they saw.
//! If the socket's buffer overflows (ENOBUFS) the kernel has discarded notifications;
//! the monitor keeps going and those events are lost.
//!
//! Messages are parsed by hand ([`parse_link_messages`]): every length is checked
//! against the bytes present, and a short or odd message ends the parse of its buffer
//! (or is skipped) without panicking. Netlink uses host byte order.
//!
//! Stopping (`stop`, or dropping the monitor) wakes the thread through an eventfd and
//! joins it; the callback is not called after `stop` returns. That thread
//! (`NetlinkThread`) also serves the XDP feature watch (`crate::xdp_features`).

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::mpsc;
use std::thread::JoinHandle;

use crate::error::PortError;
use crate::sys;

/// A change of one interface.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkEvent {
    pub ifindex: u32,
    /// The interface name, when the message carried one (IFLA_IFNAME).
    pub name: Option<String>,
    /// IFF_UP and IFF_RUNNING both set (administratively up with carrier); false for a
    /// removed interface.
    pub up: bool,
    /// The interface was deleted (RTM_DELLINK).
    pub removed: bool,
}

pub(crate) const NLMSG_HDRLEN: usize = 16;
const IFINFOMSG_LEN: usize = 16;
const RTA_HDRLEN: usize = 4;
const IFLA_IFNAME: u16 = 3;
/// Attribute type bits (the top two are the nested / byte-order flags).
const NLA_TYPE_MASK: u16 = 0x3fff;

pub(crate) fn align4(n: usize) -> usize {
    n.saturating_add(3) & !3
}

pub(crate) fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_ne_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

pub(crate) fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// Appends the link events in a buffer of netlink messages (one datagram) to `out`.
/// Messages other than RTM_NEWLINK / RTM_DELLINK are skipped; a message whose length
/// is impossible ends the parse; a link message too short for its ifinfomsg is skipped.
pub fn parse_link_messages(buf: &[u8], out: &mut Vec<LinkEvent>) {
    let mut rest = buf;
    while let (Some(len), Some(ty)) = (u32_at(rest, 0), u16_at(rest, 4)) {
        let len = len as usize;
        if len < NLMSG_HDRLEN || len > rest.len() {
            break;
        }
        if ty == libc::RTM_NEWLINK || ty == libc::RTM_DELLINK {
            if let Some(ev) = parse_link(ty == libc::RTM_DELLINK, &rest[NLMSG_HDRLEN..len]) {
                out.push(ev);
            }
        }
        rest = rest.get(align4(len)..).unwrap_or(&[]);
    }
}

/// One ifinfomsg with its attributes.
fn parse_link(removed: bool, payload: &[u8]) -> Option<LinkEvent> {
    if payload.len() < IFINFOMSG_LEN {
        return None;
    }
    let ifindex = u32_at(payload, 4)?;
    let flags = u32_at(payload, 8)?;
    let mut name = None;
    let mut attrs = &payload[IFINFOMSG_LEN..];
    while let (Some(len), Some(ty)) = (u16_at(attrs, 0), u16_at(attrs, 2)) {
        let len = len as usize;
        if len < RTA_HDRLEN || len > attrs.len() {
            break;
        }
        if ty & NLA_TYPE_MASK == IFLA_IFNAME {
            let value = &attrs[RTA_HDRLEN..len];
            let value = value.split(|&b| b == 0).next().unwrap_or(&[]);
            name = Some(String::from_utf8_lossy(value).into_owned());
        }
        attrs = attrs.get(align4(len)..).unwrap_or(&[]);
    }
    let up = !removed && flags & libc::IFF_UP as u32 != 0 && flags & libc::IFF_RUNNING as u32 != 0;
    Some(LinkEvent {
        ifindex,
        name,
        up,
        removed,
    })
}

/// A running link monitor. See the module comment.
pub struct LinkMonitor {
    thread: NetlinkThread,
}

impl std::fmt::Debug for LinkMonitor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LinkMonitor")
            .field("running", &self.thread.running())
            .finish()
    }
}

impl LinkMonitor {
    /// Starts monitoring, calling `on_event` on the monitor's thread for every event.
    pub fn start<F>(mut on_event: F) -> Result<LinkMonitor, PortError>
    where
        F: FnMut(LinkEvent) + Send + 'static,
    {
        let err = |op| move |e| PortError::os(op, "rtnetlink", "CAP_NET_ADMIN", e);
        let sock = sys::socket(libc::AF_NETLINK, libc::SOCK_RAW, libc::NETLINK_ROUTE)
            .map_err(err("socket(NETLINK_ROUTE)"))?;
        // SAFETY: sockaddr_nl is plain integers; all zeroes is valid.
        let mut addr: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
        addr.nl_family = libc::AF_NETLINK as u16;
        addr.nl_groups = libc::RTMGRP_LINK as u32;
        // SAFETY: `addr` is a live sockaddr_nl and we pass its exact size.
        sys::cvt(unsafe {
            libc::bind(
                sock.as_raw_fd(),
                (&addr as *const libc::sockaddr_nl).cast(),
                std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t,
            )
        })
        .map_err(err("bind(RTMGRP_LINK)"))?;
        let mut events = Vec::new();
        let thread = NetlinkThread::spawn("link-monitor", sock, move |buf| {
            events.clear();
            parse_link_messages(buf, &mut events);
            for ev in events.drain(..) {
                on_event(ev);
            }
        })
        .map_err(err("starting the link monitor thread"))?;
        Ok(LinkMonitor { thread })
    }

    /// Starts monitoring, delivering events to the returned channel.
    pub fn channel() -> Result<(LinkMonitor, mpsc::Receiver<LinkEvent>), PortError> {
        let (tx, rx) = mpsc::channel();
        let monitor = LinkMonitor::start(move |ev| {
            let _ = tx.send(ev);
        })?;
        Ok((monitor, rx))
    }

    /// Stops the monitor thread and waits for it.
    pub fn stop(mut self) {
        self.thread.stop();
    }
}

/// A thread reading one netlink socket with [`pump`] until stopped (by `stop` or on
/// drop); the callback is not called after either returns.
pub(crate) struct NetlinkThread {
    wake: Wake,
    thread: Option<JoinHandle<()>>,
}

impl NetlinkThread {
    /// Starts thread `name` handing every datagram read from `sock` to `on_datagram`.
    pub(crate) fn spawn(
        name: &str,
        sock: OwnedFd,
        mut on_datagram: impl FnMut(&[u8]) + Send + 'static,
    ) -> std::io::Result<NetlinkThread> {
        let wake = Wake::new()?;
        let wake_thread = wake.try_clone()?;
        let thread = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || pump(&sock, &wake_thread, &mut on_datagram))?;
        Ok(NetlinkThread {
            wake,
            thread: Some(thread),
        })
    }

    pub(crate) fn running(&self) -> bool {
        self.thread.is_some()
    }

    /// Wakes the thread to end and waits for it.
    pub(crate) fn stop(&mut self) {
        if let Some(thread) = self.thread.take() {
            self.wake.wake();
            let _ = thread.join();
        }
    }
}

impl Drop for NetlinkThread {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A thread's wake-up: an eventfd that [`wake`](Wake::wake) makes readable.
struct Wake(OwnedFd);

impl Wake {
    fn new() -> std::io::Result<Wake> {
        // SAFETY: eventfd(2) takes integers; a non-negative result is a new descriptor.
        let fd = sys::cvt(unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) })?;
        // SAFETY: `fd` is the fresh descriptor returned above, owned by nothing else.
        Ok(Wake(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    fn try_clone(&self) -> std::io::Result<Wake> {
        self.0.try_clone().map(Wake)
    }

    fn wake(&self) {
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a live u64 to our eventfd.
        unsafe {
            libc::write(self.0.as_raw_fd(), (&one as *const u64).cast(), 8);
        }
    }
}

/// Reads netlink datagrams from `sock` until `wake` is woken or the socket fails,
/// handing each to `on_datagram`. A receive buffer overrun (ENOBUFS: the kernel dropped
/// notifications) is skipped.
fn pump(sock: &OwnedFd, wake: &Wake, mut on_datagram: impl FnMut(&[u8])) {
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let mut fds = [
            libc::pollfd {
                fd: sock.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: wake.0.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: `fds` is a live array of two pollfds.
        let r = unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) };
        if r < 0 {
            if sys::errno() == libc::EINTR {
                continue;
            }
            return;
        }
        if fds[1].revents != 0 {
            return;
        }
        loop {
            // SAFETY: receives into our own buffer, at most its length.
            let n = unsafe {
                libc::recv(
                    sock.as_raw_fd(),
                    buf.as_mut_ptr().cast(),
                    buf.len(),
                    libc::MSG_DONTWAIT,
                )
            };
            if n < 0 {
                match sys::errno() {
                    libc::EINTR | libc::ENOBUFS => continue,
                    libc::EAGAIN => break,
                    _ => return,
                }
            }
            if n == 0 {
                break;
            }
            on_datagram(&buf[..(n as usize).min(buf.len())]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An RTM_NEWLINK/DELLINK message; `name` as IFLA_IFNAME (NUL-terminated).
    fn link_msg(ty: u16, ifindex: i32, flags: u32, name: Option<&str>) -> Vec<u8> {
        let mut payload = Vec::new();
        payload.extend_from_slice(&[0, 0]); // family, pad
        payload.extend_from_slice(&1u16.to_ne_bytes()); // ARPHRD_ETHER
        payload.extend_from_slice(&ifindex.to_ne_bytes());
        payload.extend_from_slice(&flags.to_ne_bytes());
        payload.extend_from_slice(&0xffff_ffffu32.to_ne_bytes());
        // An unrelated attribute first (IFLA_MTU).
        payload.extend_from_slice(&8u16.to_ne_bytes());
        payload.extend_from_slice(&4u16.to_ne_bytes());
        payload.extend_from_slice(&1500u32.to_ne_bytes());
        if let Some(n) = name {
            let len = RTA_HDRLEN + n.len() + 1;
            payload.extend_from_slice(&(len as u16).to_ne_bytes());
            payload.extend_from_slice(&IFLA_IFNAME.to_ne_bytes());
            payload.extend_from_slice(n.as_bytes());
            payload.push(0);
            payload.resize(align4(payload.len()), 0);
        }
        nl_msg(ty, &payload)
    }

    fn nl_msg(ty: u16, payload: &[u8]) -> Vec<u8> {
        let len = NLMSG_HDRLEN + payload.len();
        let mut m = Vec::new();
        m.extend_from_slice(&(len as u32).to_ne_bytes());
        m.extend_from_slice(&ty.to_ne_bytes());
        m.extend_from_slice(&0u16.to_ne_bytes());
        m.extend_from_slice(&7u32.to_ne_bytes());
        m.extend_from_slice(&0u32.to_ne_bytes());
        m.extend_from_slice(payload);
        m.resize(align4(m.len()), 0);
        m
    }

    fn parse(buf: &[u8]) -> Vec<LinkEvent> {
        let mut v = Vec::new();
        parse_link_messages(buf, &mut v);
        v
    }

    const UP_RUNNING: u32 = (libc::IFF_UP | libc::IFF_RUNNING) as u32;

    #[test]
    fn new_and_del_link_messages() {
        let mut buf = link_msg(libc::RTM_NEWLINK, 5, UP_RUNNING, Some("veth0"));
        buf.extend(nl_msg(3, &[0; 4])); // NLMSG_DONE: skipped
        buf.extend(link_msg(libc::RTM_NEWLINK, 6, libc::IFF_UP as u32, None));
        buf.extend(link_msg(libc::RTM_DELLINK, 5, UP_RUNNING, Some("veth0")));
        assert_eq!(
            parse(&buf),
            vec![
                LinkEvent {
                    ifindex: 5,
                    name: Some("veth0".into()),
                    up: true,
                    removed: false
                },
                LinkEvent {
                    ifindex: 6,
                    name: None,
                    up: false,
                    removed: false
                },
                LinkEvent {
                    ifindex: 5,
                    name: Some("veth0".into()),
                    up: false,
                    removed: true
                },
            ]
        );
    }

    #[test]
    fn truncated_buffers_give_a_prefix_of_the_events() {
        let mut buf = link_msg(libc::RTM_NEWLINK, 1, UP_RUNNING, Some("a"));
        let first = buf.len();
        buf.extend(link_msg(libc::RTM_NEWLINK, 2, 0, Some("bb")));
        let all = parse(&buf);
        assert_eq!(all.len(), 2);
        for cut in 0..buf.len() {
            let got = parse(&buf[..cut]);
            let expect = if cut >= first { 1 } else { 0 };
            assert_eq!(got.len(), expect, "cut at {cut}");
            assert_eq!(got[..], all[..expect]);
        }
    }

    #[test]
    fn odd_messages_are_skipped_or_end_the_parse() {
        // Link message too short for its ifinfomsg: skipped, the next one still read.
        let mut buf = nl_msg(libc::RTM_NEWLINK, &[0; 8]);
        buf.extend(link_msg(libc::RTM_NEWLINK, 9, UP_RUNNING, None));
        assert_eq!(parse(&buf).len(), 1);
        // Length below the header, or beyond the buffer: parse ends.
        let mut zero = link_msg(libc::RTM_NEWLINK, 9, 0, None);
        zero[..4].copy_from_slice(&0u32.to_ne_bytes());
        assert!(parse(&zero).is_empty());
        let mut long = link_msg(libc::RTM_NEWLINK, 9, 0, None);
        long[..4].copy_from_slice(&u32::MAX.to_ne_bytes());
        assert!(parse(&long).is_empty());
        // Attribute with a bad length: attributes end, the event stays.
        let mut attr = link_msg(libc::RTM_NEWLINK, 4, UP_RUNNING, Some("x"));
        let at = NLMSG_HDRLEN + IFINFOMSG_LEN;
        attr[at..at + 2].copy_from_slice(&2u16.to_ne_bytes());
        assert_eq!(
            parse(&attr),
            vec![LinkEvent {
                ifindex: 4,
                name: None,
                up: true,
                removed: false
            }]
        );
        // A name with no NUL and invalid UTF-8 is still a name.
        let mut payload = link_msg(libc::RTM_NEWLINK, 4, 0, None)[NLMSG_HDRLEN..].to_vec();
        payload.extend_from_slice(&6u16.to_ne_bytes());
        payload.extend_from_slice(&IFLA_IFNAME.to_ne_bytes());
        payload.extend_from_slice(&[b'e', 0xff]);
        let ev = parse(&nl_msg(libc::RTM_NEWLINK, &payload));
        assert_eq!(ev[0].name.as_deref(), Some("e\u{fffd}"));
    }

    #[test]
    fn random_bytes_never_panic() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut buf = vec![0u8; 256];
        for _ in 0..20_000 {
            for b in buf.iter_mut() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *b = x as u8;
            }
            // Plausible lengths make the parser go deeper.
            let len = (x as usize % 200) as u32;
            buf[..4].copy_from_slice(&len.to_ne_bytes());
            buf[4..6].copy_from_slice(&libc::RTM_NEWLINK.to_ne_bytes());
            let _ = parse(&buf[..(x as usize >> 8) % 256]);
        }
    }

    #[test]
    fn monitor_starts_and_stops() {
        let (monitor, rx) = LinkMonitor::channel().expect("netlink socket");
        monitor.stop();
        // The thread is gone and its sender with it: after any events that were already
        // queued, the channel reports disconnection (not a timeout).
        for _ in 0..10_000 {
            match rx.recv_timeout(std::time::Duration::from_secs(2)) {
                Ok(_) => continue,
                Err(mpsc::RecvTimeoutError::Disconnected) => return,
                Err(mpsc::RecvTimeoutError::Timeout) => panic!("monitor thread still running"),
            }
        }
        panic!("endless events");
    }
}
