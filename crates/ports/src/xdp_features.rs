//! What the kernel says an interface does with XDP frames, from the `netdev` generic
//! netlink family (Linux 6.3 and later), and notifications when that changes.
//!
//! The bit that matters to a switch is [`XdpFeatures::redirect_target`]
//! (`NETDEV_XDP_ACT_NDO_XMIT`): whether frames an XDP program redirects *to* the
//! interface are transmitted. The kernel's own redirect code checks this same bit and
//! drops the frame when it is clear. A veth sets it only while its peer runs NAPI (GRO on
//! at the peer, or an XDP program attached there), and clears it when that stops; a
//! driver without XDP transmit never sets it.
//!
//! [`query`] asks once; [`FeatureWatch`] calls back with the interface index whenever
//! the family announces a device added, changed or removed (its `mgmt` multicast group),
//! so a caller can ask again. On kernels without the family both say so (`Ok(None)`):
//! the caller then cannot know.
//!
//! Messages are built and parsed here by hand: every length is checked against the
//! bytes present; a short or odd message is skipped or ends the parse, never a panic.
//! The socket is read on the link monitor's kind of thread ([`crate::link`]).

use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicU32, Ordering};

use crate::error::PortError;
use crate::link::NetlinkThread;
use crate::sys;

/// `NETDEV_XDP_ACT_BASIC`, `_REDIRECT`, `_NDO_XMIT` and `_XSK_ZEROCOPY` in
/// `enum netdev_xdp_act`.
const ACT_BASIC: u64 = 1 << 0;
const ACT_REDIRECT: u64 = 1 << 1;
const ACT_NDO_XMIT: u64 = 1 << 2;
const ACT_XSK_ZEROCOPY: u64 = 1 << 3;
const GENL_ID_CTRL: u16 = 0x10;
const CTRL_CMD_GETFAMILY: u8 = 3;
const CTRL_ATTR_FAMILY_ID: u16 = 1;
const CTRL_ATTR_FAMILY_NAME: u16 = 2;
const CTRL_ATTR_MCAST_GROUPS: u16 = 7;
const CTRL_ATTR_MCAST_GRP_NAME: u16 = 1;
const CTRL_ATTR_MCAST_GRP_ID: u16 = 2;
const NETDEV_CMD_DEV_GET: u8 = 1;
const NETDEV_A_DEV_IFINDEX: u16 = 1;
const NETDEV_A_DEV_XDP_FEATURES: u16 = 3;
const GENL_HDRLEN: usize = 4;
const NLA_HDRLEN: usize = 4;
const NLA_TYPE_MASK: u16 = 0x3fff;
const NLMSG_ERROR: u16 = 2;
const SOL_NETLINK: i32 = 270;
const NETLINK_ADD_MEMBERSHIP: i32 = 1;
const NLMSG_HDRLEN: usize = 16;

fn align4(n: usize) -> usize {
    n.saturating_add(3) & !3
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_ne_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// The XDP features an interface announces (`enum netdev_xdp_act` bits).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct XdpFeatures(pub u64);

impl XdpFeatures {
    /// Whether frames that an XDP program redirects to the interface are transmitted
    /// (`NETDEV_XDP_ACT_NDO_XMIT`). See the module comment.
    pub fn redirect_target(self) -> bool {
        self.0 & ACT_NDO_XMIT != 0
    }

    /// Whether the driver runs XDP programs itself (native mode) and can redirect what
    /// they return to an AF_XDP socket (`NETDEV_XDP_ACT_BASIC` and `_REDIRECT`).
    pub fn native(self) -> bool {
        self.0 & (ACT_BASIC | ACT_REDIRECT) == ACT_BASIC | ACT_REDIRECT
    }

    /// Whether AF_XDP sockets can bind in zero-copy mode (`NETDEV_XDP_ACT_XSK_ZEROCOPY`).
    pub fn xsk_zerocopy(self) -> bool {
        self.0 & ACT_XSK_ZEROCOPY != 0
    }
}

/// The `netdev` family as the kernel numbered it.
#[derive(Clone, Copy, Debug)]
struct Family {
    id: u16,
    mgmt_group: Option<u32>,
}

static SEQ: AtomicU32 = AtomicU32::new(1);

fn err(op: &'static str) -> impl Fn(std::io::Error) -> PortError {
    move |e| PortError::os(op, "netdev netlink", "CAP_NET_ADMIN", e)
}

/// One generic netlink request: header, genl header, attributes (type, bytes).
fn request(ty: u16, cmd: u8, attrs: &[(u16, &[u8])]) -> (u32, Vec<u8>) {
    let seq = SEQ.fetch_add(1, Ordering::Relaxed);
    let mut m = vec![0u8; NLMSG_HDRLEN];
    m.extend_from_slice(&[cmd, 1, 0, 0]);
    for (t, v) in attrs {
        m.extend_from_slice(&((NLA_HDRLEN + v.len()) as u16).to_ne_bytes());
        m.extend_from_slice(&t.to_ne_bytes());
        m.extend_from_slice(v);
        m.resize(align4(m.len()), 0);
    }
    let len = m.len() as u32;
    m[0..4].copy_from_slice(&len.to_ne_bytes());
    m[4..6].copy_from_slice(&ty.to_ne_bytes());
    m[6..8].copy_from_slice(&(libc::NLM_F_REQUEST as u16).to_ne_bytes());
    m[8..12].copy_from_slice(&seq.to_ne_bytes());
    (seq, m)
}

/// The attributes of a generic netlink message's payload (after the nlmsghdr), as
/// (type without flags, value) pairs.
fn attrs(payload: &[u8]) -> Vec<(u16, &[u8])> {
    nested(payload.get(GENL_HDRLEN..).unwrap_or(&[]))
}

/// Back-to-back attributes (a message's, or a nested attribute's value).
fn nested(mut rest: &[u8]) -> Vec<(u16, &[u8])> {
    let mut out = Vec::new();
    while let (Some(len), Some(ty)) = (u16_at(rest, 0), u16_at(rest, 2)) {
        let len = len as usize;
        if len < NLA_HDRLEN || len > rest.len() {
            break;
        }
        out.push((ty & NLA_TYPE_MASK, &rest[NLA_HDRLEN..len]));
        rest = rest.get(align4(len)..).unwrap_or(&[]);
    }
    out
}

/// The messages of one datagram: (type, payload after the nlmsghdr, sequence number).
fn messages(buf: &[u8]) -> Vec<(u16, &[u8], u32)> {
    let mut out = Vec::new();
    let mut rest = buf;
    while let (Some(len), Some(ty), Some(seq)) = (u32_at(rest, 0), u16_at(rest, 4), u32_at(rest, 8))
    {
        let len = len as usize;
        if len < NLMSG_HDRLEN || len > rest.len() {
            break;
        }
        out.push((ty, &rest[NLMSG_HDRLEN..len], seq));
        rest = rest.get(align4(len)..).unwrap_or(&[]);
    }
    out
}

/// Sends `msg` and returns the payload of the reply with sequence number `seq`, or the
/// error the kernel answered with.
fn transact(sock: &OwnedFd, seq: u32, msg: &[u8]) -> std::io::Result<Vec<u8>> {
    // SAFETY: sends our own buffer, its exact length, to the kernel (the default peer).
    let n = unsafe { libc::send(sock.as_raw_fd(), msg.as_ptr().cast(), msg.len(), 0) };
    if n < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let mut buf = vec![0u8; 32 << 10];
    // Bounded: a reply comes at once; other traffic on a fresh socket is not expected.
    for _ in 0..64 {
        // SAFETY: receives into our own buffer, at most its length.
        let n = unsafe { libc::recv(sock.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return Err(e);
        }
        for (ty, payload, s) in messages(&buf[..(n as usize).min(buf.len())]) {
            if s != seq {
                continue;
            }
            if ty == NLMSG_ERROR {
                let code = u32_at(payload, 0).map_or(0, |c| c as i32);
                return Err(std::io::Error::from_raw_os_error(if code < 0 {
                    -code
                } else {
                    libc::EPROTO
                }));
            }
            return Ok(payload.to_vec());
        }
    }
    Err(std::io::Error::from_raw_os_error(libc::ETIMEDOUT))
}

fn open() -> Result<OwnedFd, PortError> {
    sys::socket(libc::AF_NETLINK, libc::SOCK_RAW, libc::NETLINK_GENERIC)
        .map_err(err("socket(NETLINK_GENERIC)"))
}

/// The `netdev` family's number and multicast group; `None` if the kernel has none.
fn family(sock: &OwnedFd) -> Result<Option<Family>, PortError> {
    let (seq, msg) =
        request(GENL_ID_CTRL, CTRL_CMD_GETFAMILY, &[(CTRL_ATTR_FAMILY_NAME, b"netdev\0")]);
    let payload = match transact(sock, seq, &msg) {
        Ok(p) => p,
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return Ok(None),
        Err(e) => return Err(err("resolving the netdev netlink family")(e)),
    };
    let mut id = None;
    let mut mgmt_group = None;
    for (t, v) in attrs(&payload) {
        match t {
            CTRL_ATTR_FAMILY_ID => id = u16_at(v, 0),
            CTRL_ATTR_MCAST_GROUPS => {
                for (_, group) in nested(v) {
                    let fields = nested(group);
                    let named_mgmt = fields
                        .iter()
                        .any(|(t, v)| *t == CTRL_ATTR_MCAST_GRP_NAME && v.starts_with(b"mgmt\0"));
                    let gid = fields
                        .iter()
                        .find(|(t, _)| *t == CTRL_ATTR_MCAST_GRP_ID)
                        .and_then(|(_, v)| u32_at(v, 0));
                    if named_mgmt {
                        mgmt_group = gid;
                    }
                }
            }
            _ => {}
        }
    }
    Ok(id.map(|id| Family { id, mgmt_group }))
}

/// The XDP features of interface `ifindex` (in the caller's network namespace), or
/// `None` if this kernel does not announce them (no `netdev` family: before 6.3).
pub fn query(ifindex: u32) -> Result<Option<XdpFeatures>, PortError> {
    let sock = open()?;
    let Some(fam) = family(&sock)? else {
        return Ok(None);
    };
    query_on(&sock, fam, ifindex)
}

fn query_on(sock: &OwnedFd, fam: Family, ifindex: u32) -> Result<Option<XdpFeatures>, PortError> {
    let (seq, msg) =
        request(fam.id, NETDEV_CMD_DEV_GET, &[(NETDEV_A_DEV_IFINDEX, &ifindex.to_ne_bytes())]);
    let payload = transact(sock, seq, &msg).map_err(|e| {
        PortError::os("reading XDP features", &format!("ifindex {ifindex}"), "CAP_NET_ADMIN", e)
    })?;
    Ok(attrs(&payload)
        .into_iter()
        .find(|(t, _)| *t == NETDEV_A_DEV_XDP_FEATURES)
        .map(|(_, v)| {
            let mut b = [0u8; 8];
            let n = v.len().min(8);
            b[..n].copy_from_slice(&v[..n]);
            XdpFeatures(u64::from_ne_bytes(b))
        })
        .or(Some(XdpFeatures(0))))
}

/// The interface indexes that the notifications in one datagram are about.
fn notified(buf: &[u8], family: u16) -> Vec<u32> {
    messages(buf)
        .into_iter()
        .filter(|(ty, _, _)| *ty == family)
        .filter_map(|(_, payload, _)| {
            attrs(payload)
                .into_iter()
                .find(|(t, _)| *t == NETDEV_A_DEV_IFINDEX)
                .and_then(|(_, v)| u32_at(v, 0))
        })
        .collect()
}

/// Calls back with an interface index whenever the kernel announces that interface's
/// XDP features (or the interface) changed. See the module comment. Stopped (the
/// callback not called again) by `stop` or on drop.
pub struct FeatureWatch {
    thread: NetlinkThread,
}

impl std::fmt::Debug for FeatureWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FeatureWatch").field("running", &self.thread.running()).finish()
    }
}

impl FeatureWatch {
    /// Starts watching (in the caller's network namespace), calling `on_change` on the
    /// watch's own thread. `Ok(None)`: this kernel announces no XDP features.
    pub fn start<F>(mut on_change: F) -> Result<Option<FeatureWatch>, PortError>
    where
        F: FnMut(u32) + Send + 'static,
    {
        let sock = open()?;
        let Some(Family { id, mgmt_group: Some(group) }) = family(&sock)? else {
            return Ok(None);
        };
        sys::setsockopt(sock.as_raw_fd(), SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &group)
            .map_err(err("joining the netdev family's mgmt group"))?;
        let thread = NetlinkThread::spawn("xdp-features", sock, move |buf| {
            for ifindex in notified(buf, id) {
                on_change(ifindex);
            }
        })
        .map_err(err("starting the XDP feature watch thread"))?;
        Ok(Some(FeatureWatch { thread }))
    }

    /// Stops the thread and waits for it.
    pub fn stop(mut self) {
        self.thread.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A generic netlink message of `family` and `cmd` with `attrs`.
    fn msg(family: u16, cmd: u8, seq: u32, attrs: &[(u16, &[u8])]) -> Vec<u8> {
        let (_, mut m) = request(family, cmd, attrs);
        m[8..12].copy_from_slice(&seq.to_ne_bytes());
        m
    }

    #[test]
    fn ndo_xmit_is_the_redirect_target_bit() {
        assert!(XdpFeatures(0b111).redirect_target());
        assert!(!XdpFeatures(0b011).redirect_target());
        assert!(!XdpFeatures::default().redirect_target());
    }

    #[test]
    fn notifications_name_their_interfaces() {
        let mut buf = msg(30, 4, 0, &[(NETDEV_A_DEV_IFINDEX, &7u32.to_ne_bytes())]);
        buf.extend(msg(31, 4, 0, &[(NETDEV_A_DEV_IFINDEX, &8u32.to_ne_bytes())]));
        buf.extend(msg(
            30,
            4,
            0,
            &[
                (NETDEV_A_DEV_XDP_FEATURES, &5u64.to_ne_bytes()),
                (NETDEV_A_DEV_IFINDEX, &9u32.to_ne_bytes()),
            ],
        ));
        assert_eq!(notified(&buf, 30), vec![7, 9]);
    }

    #[test]
    fn nested_attributes_and_odd_lengths() {
        let inner = msg(0, 0, 0, &[(CTRL_ATTR_MCAST_GRP_NAME, b"mgmt\0"), (2, &[4, 0, 0, 0])]);
        let found = nested(&inner[NLMSG_HDRLEN + GENL_HDRLEN..]);
        assert_eq!(found.len(), 2);
        assert_eq!(found[0], (CTRL_ATTR_MCAST_GRP_NAME, &b"mgmt\0"[..]));
        assert_eq!(found[1].1, &[4, 0, 0, 0]);
        // A length past the end ends the parse without panicking.
        let mut bad = msg(30, 4, 0, &[(NETDEV_A_DEV_IFINDEX, &7u32.to_ne_bytes())]);
        bad[NLMSG_HDRLEN + GENL_HDRLEN] = 200;
        assert!(notified(&bad, 30).is_empty());
        assert!(notified(&[1, 2, 3], 30).is_empty());
    }

    #[test]
    fn random_bytes_never_panic() {
        let mut x = 0x9e3779b97f4a7c15u64;
        for len in 0..400 {
            let bytes: Vec<u8> = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect();
            let _ = notified(&bytes, 30);
            let _ = attrs(&bytes);
            let _ = nested(&bytes);
        }
    }

    /// Needs a kernel with the netdev family (6.3+): the loopback has no XDP transmit.
    #[test]
    #[ignore = "reads the running kernel's netdev netlink family"]
    fn loopback_is_no_redirect_target() {
        if let Some(f) = query(1).expect("query lo") {
            assert!(!f.redirect_target(), "lo: {f:?}");
        }
    }
}
