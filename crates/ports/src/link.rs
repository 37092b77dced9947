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
//! Messages are read with the `netlink-packet-core` and `netlink-packet-route` crates
//! ([`parse_link_messages`]): each message's framing is checked against the bytes
//! present (a message whose length is impossible ends the parse of its datagram), the
//! ifinfomsg header gives the index and flags, and of the attributes only IFLA_IFNAME
//! is decoded, so that an attribute this version of the crate cannot parse (a newer
//! kernel's) costs no event. Nothing read from the socket can panic. The socket is
//! `netlink-sys`'s.
//!
//! Stopping (`stop`, or dropping the monitor) wakes the thread through an eventfd and
//! joins it; the callback is not called after `stop` returns. That thread
//! (`NetlinkThread`) also serves the XDP feature watch (`crate::xdp_features`).

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::sync::mpsc;
use std::thread::JoinHandle;

use netlink_packet_core::{Emitable, NetlinkBuffer, NlasIterator, ParseableParametrized};
use netlink_packet_route::link::{LinkAttribute, LinkFlags, LinkHeader};
use netlink_sys::{protocols::NETLINK_ROUTE, Socket, SocketAddr};

use crate::error::PortError;
use crate::sys;

/// A change of one interface.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkEvent {
    pub ifindex: u32,
    /// The interface name, when the message carried one (IFLA_IFNAME) in UTF-8.
    pub name: Option<String>,
    /// IFF_UP and IFF_RUNNING both set (administratively up with carrier); false for a
    /// removed interface.
    pub up: bool,
    /// The interface was deleted (RTM_DELLINK).
    pub removed: bool,
}

/// Appends the link events in a buffer of netlink messages (one datagram) to `out`.
/// Messages other than RTM_NEWLINK / RTM_DELLINK are skipped; a message whose length
/// is impossible ends the parse; a link message too short for its ifinfomsg is skipped.
pub fn parse_link_messages(buf: &[u8], out: &mut Vec<LinkEvent>) {
    let mut rest = buf;
    while let Ok(msg) = NetlinkBuffer::new_checked(rest) {
        let ty = msg.message_type();
        if ty == libc::RTM_NEWLINK || ty == libc::RTM_DELLINK {
            out.extend(link_event(ty == libc::RTM_DELLINK, msg.payload()));
        }
        // The next message starts 4-byte aligned; the length is at most `rest.len()`.
        let next = (msg.length() as usize).next_multiple_of(4);
        rest = rest.get(next..).unwrap_or_default();
    }
}

/// The event in one ifinfomsg with its attributes.
fn link_event(removed: bool, payload: &[u8]) -> Option<LinkEvent> {
    let header = LinkHeader::parse(payload).ok()?;
    let attrs = payload.get(header.buffer_len()..).unwrap_or_default();
    // Attributes end at the first malformed one.
    let name = NlasIterator::new(attrs)
        .map_while(Result::ok)
        .filter(|nla| nla.kind() == libc::IFLA_IFNAME)
        .find_map(|nla| match LinkAttribute::parse_with_param(&nla, header.interface_family) {
            Ok(LinkAttribute::IfName(name)) => Some(name),
            _ => None,
        });
    let up = !removed && header.flags.contains(LinkFlags::Up | LinkFlags::Running);
    Some(LinkEvent { ifindex: header.index, name, up, removed })
}

/// A running link monitor. See the module comment.
pub struct LinkMonitor {
    thread: NetlinkThread,
}

impl std::fmt::Debug for LinkMonitor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LinkMonitor").field("running", &self.thread.running()).finish()
    }
}

impl LinkMonitor {
    /// Starts monitoring, calling `on_event` on the monitor's thread for every event.
    pub fn start<F>(mut on_event: F) -> Result<LinkMonitor, PortError>
    where
        F: FnMut(LinkEvent) + Send + 'static,
    {
        let err = |op| move |e| PortError::os(op, "rtnetlink", "CAP_NET_ADMIN", e);
        let mut sock = Socket::new(NETLINK_ROUTE).map_err(err("socket(NETLINK_ROUTE)"))?;
        sock.bind(&SocketAddr::new(0, libc::RTMGRP_LINK as u32))
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
        sock: impl AsFd + Send + 'static,
        mut on_datagram: impl FnMut(&[u8]) + Send + 'static,
    ) -> std::io::Result<NetlinkThread> {
        let wake = Wake::new()?;
        let wake_thread = wake.try_clone()?;
        let thread = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || pump(sock.as_fd(), &wake_thread, &mut on_datagram))?;
        Ok(NetlinkThread { wake, thread: Some(thread) })
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
fn pump(sock: BorrowedFd<'_>, wake: &Wake, mut on_datagram: impl FnMut(&[u8])) {
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let mut fds = [
            libc::pollfd { fd: sock.as_raw_fd(), events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: wake.0.as_raw_fd(), events: libc::POLLIN, revents: 0 },
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
                libc::recv(sock.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), libc::MSG_DONTWAIT)
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
    use netlink_packet_core::{NetlinkHeader, NetlinkMessage, NetlinkPayload};
    use netlink_packet_route::link::{LinkLayerType, LinkMessage};
    use netlink_packet_route::RouteNetlinkMessage;

    use super::*;

    /// Bytes of a netlink header and of an ifinfomsg.
    const NLMSG_HDRLEN: usize = 16;
    const IFINFOMSG_LEN: usize = 16;

    /// An RTM_NEWLINK/DELLINK message as the crate encodes it: an unrelated attribute
    /// first (IFLA_MTU), then `name` as IFLA_IFNAME.
    fn link_msg(ty: u16, ifindex: u32, flags: u32, name: Option<&str>) -> Vec<u8> {
        let mut link = LinkMessage::default();
        link.header.index = ifindex;
        link.header.link_layer_type = LinkLayerType::Ether;
        link.header.flags = LinkFlags::from_bits_retain(flags);
        link.header.change_mask = LinkFlags::from_bits_retain(u32::MAX);
        link.attributes.push(LinkAttribute::Mtu(1500));
        if let Some(n) = name {
            link.attributes.push(LinkAttribute::IfName(n.into()));
        }
        let inner = match ty {
            libc::RTM_DELLINK => RouteNetlinkMessage::DelLink(link),
            _ => RouteNetlinkMessage::NewLink(link),
        };
        let mut header = NetlinkHeader::default();
        header.sequence_number = 7;
        let mut m = NetlinkMessage::new(header, NetlinkPayload::InnerMessage(inner));
        m.finalize();
        let mut buf = vec![0; m.buffer_len()];
        m.serialize(&mut buf);
        buf
    }

    /// A message of type `ty` with `payload` as it is, padded to 4 bytes.
    fn nl_msg(ty: u16, payload: &[u8]) -> Vec<u8> {
        let len = NLMSG_HDRLEN + payload.len();
        let mut m = vec![0; NLMSG_HDRLEN];
        m.extend_from_slice(payload);
        let mut b = NetlinkBuffer::new(&mut m[..]);
        b.set_length(len as u32);
        b.set_message_type(ty);
        b.set_sequence_number(7);
        m.resize(len.next_multiple_of(4), 0);
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
                LinkEvent { ifindex: 5, name: Some("veth0".into()), up: true, removed: false },
                LinkEvent { ifindex: 6, name: None, up: false, removed: false },
                LinkEvent { ifindex: 5, name: Some("veth0".into()), up: false, removed: true },
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
            vec![LinkEvent { ifindex: 4, name: None, up: true, removed: false }]
        );
        // A name with no NUL is a name; one that is not UTF-8 is none (no port can have
        // it), and the event stays.
        let header = &link_msg(libc::RTM_NEWLINK, 4, 0, None)[NLMSG_HDRLEN..][..IFINFOMSG_LEN];
        for (value, name) in [(&b"et"[..], Some("et")), (&[b'e', 0xff], None)] {
            let mut payload = header.to_vec();
            payload.extend_from_slice(&6u16.to_ne_bytes());
            payload.extend_from_slice(&libc::IFLA_IFNAME.to_ne_bytes());
            payload.extend_from_slice(value);
            let ev = parse(&nl_msg(libc::RTM_NEWLINK, &payload));
            assert_eq!(ev.len(), 1);
            assert_eq!((ev[0].ifindex, ev[0].name.as_deref()), (4, name));
        }
    }

    #[test]
    fn an_attribute_the_crate_cannot_parse_costs_no_event() {
        // IFLA_MTU with a 2-byte value, then the name: the crate refuses the whole
        // message, but the event and its name are read.
        let header = &link_msg(libc::RTM_DELLINK, 3, 0, None)[NLMSG_HDRLEN..][..IFINFOMSG_LEN];
        let mut payload = header.to_vec();
        payload.extend_from_slice(&6u16.to_ne_bytes());
        payload.extend_from_slice(&libc::IFLA_MTU.to_ne_bytes());
        payload.extend_from_slice(&[0xdc, 0x05, 0, 0]);
        payload.extend_from_slice(&9u16.to_ne_bytes());
        payload.extend_from_slice(&libc::IFLA_IFNAME.to_ne_bytes());
        payload.extend_from_slice(b"eth1\0\0\0\0");
        let buf = nl_msg(libc::RTM_DELLINK, &payload);
        assert!(NetlinkMessage::<RouteNetlinkMessage>::deserialize(&buf).is_err());
        assert_eq!(
            parse(&buf),
            vec![LinkEvent { ifindex: 3, name: Some("eth1".into()), up: false, removed: true }]
        );
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
