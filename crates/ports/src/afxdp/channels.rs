//! How many rx queues an interface has, from the ethtool channels ioctl
//! (ETHTOOL_GCHANNELS), which answers for the calling thread's network namespace
//! (sysfs may show another one).
//!
//! A driver's rx queues are its combined channels plus its rx-only channels; veth
//! reports its real rx queue count there. A driver that does not implement the request
//! (EOPNOTSUPP) is taken to have one queue.

use std::os::fd::AsRawFd;

use crate::error::PortError;
use crate::sys;

/// `struct ethtool_channels` of <linux/ethtool.h> (every field is part of the layout the
/// kernel writes; only the counts are read here).
#[repr(C)]
#[allow(dead_code)]
#[derive(Default)]
struct EthtoolChannels {
    cmd: u32,
    max_rx: u32,
    max_tx: u32,
    max_other: u32,
    max_combined: u32,
    rx_count: u32,
    tx_count: u32,
    other_count: u32,
    combined_count: u32,
}

/// ETHTOOL_GCHANNELS: get the channel counts.
const ETHTOOL_GCHANNELS: u32 = 0x3c;

/// The number of rx queues of interface `name` (at least 1).
pub(super) fn rx_queue_count(name: &str) -> Result<u32, PortError> {
    sys::check_ifname(name)?;
    let err = |e| PortError::os("ethtool ETHTOOL_GCHANNELS", name, "CAP_NET_ADMIN", e);
    let sock = sys::ioctl_socket().map_err(err)?;
    let mut ch = EthtoolChannels { cmd: ETHTOOL_GCHANNELS, ..EthtoolChannels::default() };
    let mut req = sys::ifreq(name);
    req.ifr_ifru.ifru_data = (&mut ch as *mut EthtoolChannels).cast();
    match sys::ioctl_ifreq(sock.as_raw_fd(), sys::SIOCETHTOOL, &mut req) {
        Ok(()) => Ok(rx_queues(&ch)),
        Err(e) if e.raw_os_error() == Some(libc::EOPNOTSUPP) => Ok(1),
        Err(e) => Err(err(e)),
    }
}

/// Rx queues from a channels answer: combined plus rx-only, at least 1.
fn rx_queues(ch: &EthtoolChannels) -> u32 {
    ch.combined_count.saturating_add(ch.rx_count).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_count_of_channels() {
        let mut ch = EthtoolChannels::default();
        assert_eq!(rx_queues(&ch), 1);
        ch.rx_count = 4;
        assert_eq!(rx_queues(&ch), 4);
        ch.combined_count = 8;
        ch.rx_count = 0;
        assert_eq!(rx_queues(&ch), 8);
    }

    #[test]
    fn loopback_has_one_queue_and_missing_is_named() {
        assert_eq!(rx_queue_count("lo").unwrap(), 1);
        let err = rx_queue_count("nosuchif7x").unwrap_err();
        assert!(matches!(err, PortError::NoSuchInterface { .. }), "{err:?}");
    }
}
