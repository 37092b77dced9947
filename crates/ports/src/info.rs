//! Facts about a network interface, by name: index, MAC address, MTU, link state and
//! speed.
//!
//! Everything but the speed comes from interface ioctls on a socket made in the calling
//! thread, so it answers for the caller's network namespace. The speed comes from
//! `/sys/class/net/<name>/speed`, which shows the namespace sysfs was mounted in; it is
//! trusted only when that directory's `ifindex` matches the interface's, and is `None`
//! otherwise, or when the driver does not know it (veths and taps may report a nominal
//! value; a link that is down reports none).

use std::os::fd::AsRawFd;

use crate::error::PortError;
use crate::sys;

/// What the kernel says about one interface at the time it was asked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InterfaceInfo {
    /// The interface name.
    pub name: String,
    /// The kernel's interface index; 0 for a port that is not a kernel interface (pcap,
    /// in-memory).
    pub ifindex: u32,
    /// The hardware address. Ports that have none (pcap, in-memory) get a locally
    /// administered address derived from their name.
    pub mac: [u8; 6],
    /// The MTU (L3 payload bytes; a frame may carry 14 more, 18 with a VLAN tag).
    pub mtu: u32,
    /// IFF_UP: administratively up.
    pub admin_up: bool,
    /// IFF_RUNNING: the link has carrier (operationally up).
    pub running: bool,
    /// Link speed in Mb/s, when the driver knows it.
    pub speed_mbps: Option<u32>,
}

impl InterfaceInfo {
    /// Looks `name` up in the calling thread's network namespace.
    pub fn by_name(name: &str) -> Result<InterfaceInfo, PortError> {
        sys::check_ifname(name)?;
        let sock = sys::ioctl_socket()
            .map_err(|e| PortError::os("socket(AF_INET)", name, "CAP_NET_ADMIN", e))?;
        let fd = sock.as_raw_fd();
        let get = |op: &'static str, request| {
            let mut req = sys::ifreq(name);
            sys::ioctl_ifreq(fd, request, &mut req)
                .map(|()| req)
                .map_err(|e| PortError::os(op, name, "CAP_NET_ADMIN", e))
        };
        // Each request fills the union member read after it (SIOCGIFINDEX: ifindex,
        // SIOCGIFHWADDR: hwaddr, SIOCGIFMTU: mtu, SIOCGIFFLAGS: flags); every member is
        // plain integers, so any bytes are valid.
        // SAFETY: SIOCGIFINDEX filled `ifru_ifindex` (see above).
        let ifindex = unsafe { get("SIOCGIFINDEX", libc::SIOCGIFINDEX)?.ifr_ifru.ifru_ifindex };
        // SAFETY: SIOCGIFHWADDR filled `ifru_hwaddr`.
        let hw = unsafe { get("SIOCGIFHWADDR", libc::SIOCGIFHWADDR)?.ifr_ifru.ifru_hwaddr };
        // SAFETY: SIOCGIFMTU filled `ifru_mtu`.
        let mtu = unsafe { get("SIOCGIFMTU", libc::SIOCGIFMTU)?.ifr_ifru.ifru_mtu };
        // SAFETY: SIOCGIFFLAGS filled `ifru_flags`.
        let flags = unsafe { get("SIOCGIFFLAGS", libc::SIOCGIFFLAGS)?.ifr_ifru.ifru_flags };
        let flags = flags as u16 as i32;
        let mut mac = [0u8; 6];
        for (dst, &src) in mac.iter_mut().zip(hw.sa_data.iter()) {
            *dst = src as u8;
        }
        let ifindex = u32::try_from(ifindex).unwrap_or(0);
        Ok(InterfaceInfo {
            name: name.to_string(),
            ifindex,
            mac,
            mtu: u32::try_from(mtu).unwrap_or(0),
            admin_up: flags & libc::IFF_UP != 0,
            running: flags & libc::IFF_RUNNING != 0,
            speed_mbps: sysfs_speed(name, ifindex),
        })
    }

    /// Facts for a port that is no kernel interface: index 0, a locally administered
    /// MAC derived from `name`, up and running, MTU 1500, speed unknown.
    pub fn synthetic(name: &str) -> InterfaceInfo {
        // FNV-1a over the name: stable across runs and builds.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in name.bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        let b = h.to_be_bytes();
        InterfaceInfo {
            name: name.to_string(),
            ifindex: 0,
            // Locally administered (bit 1), unicast (bit 0 clear).
            mac: [(b[0] & 0xfc) | 0x02, b[1], b[2], b[3], b[4], b[5]],
            mtu: 1500,
            admin_up: true,
            running: true,
            speed_mbps: None,
        }
    }

    /// Up in the sense of a switch port: administratively up and with carrier.
    pub fn is_up(&self) -> bool {
        self.admin_up && self.running
    }
}

/// Interface `name` (in the calling thread's namespace) for a port of `workers` workers
/// (at least one), brought administratively up if it is down.
pub(crate) fn for_workers(name: &str, workers: usize) -> Result<InterfaceInfo, PortError> {
    if workers == 0 {
        return Err(PortError::NoWorkers);
    }
    let info = InterfaceInfo::by_name(name)?;
    if info.admin_up {
        return Ok(info);
    }
    set_admin_up(name)?;
    InterfaceInfo::by_name(name)
}

/// Sets IFF_UP on interface `name` (in the calling thread's namespace).
pub(crate) fn set_admin_up(name: &str) -> Result<(), PortError> {
    sys::check_ifname(name)?;
    let err = |op| move |e| PortError::os(op, name, "CAP_NET_ADMIN", e);
    let sock = sys::ioctl_socket().map_err(err("socket(AF_INET)"))?;
    let mut req = sys::ifreq(name);
    sys::ioctl_ifreq(sock.as_raw_fd(), libc::SIOCGIFFLAGS, &mut req)
        .map_err(err("SIOCGIFFLAGS"))?;
    // SAFETY: SIOCGIFFLAGS filled the flags member; a c_short, any bits valid.
    let flags = unsafe { req.ifr_ifru.ifru_flags };
    if flags & libc::IFF_UP as libc::c_short != 0 {
        return Ok(());
    }
    req.ifr_ifru.ifru_flags = flags | libc::IFF_UP as libc::c_short;
    sys::ioctl_ifreq(sock.as_raw_fd(), libc::SIOCSIFFLAGS, &mut req)
        .map_err(err("bringing the interface up (SIOCSIFFLAGS)"))
}

/// Reads the speed from sysfs if sysfs shows the same interface (same index).
fn sysfs_speed(name: &str, ifindex: u32) -> Option<u32> {
    let dir = format!("/sys/class/net/{name}");
    let read = |file: &str| std::fs::read_to_string(format!("{dir}/{file}")).ok();
    let sys_index: u32 = read("ifindex")?.trim().parse().ok()?;
    if sys_index != ifindex {
        return None;
    }
    parse_speed(&read("speed")?)
}

/// Parses a sysfs `speed` file: a positive number of Mb/s; -1, 0 or junk is unknown.
fn parse_speed(text: &str) -> Option<u32> {
    match text.trim().parse::<i64>() {
        Ok(n) if n > 0 => u32::try_from(n).ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speed_text() {
        assert_eq!(parse_speed("10000\n"), Some(10000));
        assert_eq!(parse_speed("-1\n"), None);
        assert_eq!(parse_speed("0"), None);
        assert_eq!(parse_speed(""), None);
        assert_eq!(parse_speed("fast"), None);
    }

    #[test]
    fn loopback_is_found_and_missing_names_are_named() {
        let lo = InterfaceInfo::by_name("lo").expect("lo exists");
        assert_eq!(lo.name, "lo");
        assert!(lo.ifindex > 0);
        assert!(lo.mtu > 0);
        assert!(lo.admin_up);
        let err = InterfaceInfo::by_name("nonexistent0x").unwrap_err();
        assert!(matches!(err, PortError::NoSuchInterface { .. }), "{err:?}");
        assert!(err.to_string().contains("nonexistent0x"), "{err}");
        assert!(matches!(InterfaceInfo::by_name("bad/name"), Err(PortError::InvalidName { .. })));
    }

    #[test]
    fn synthetic_mac_is_local_unicast_and_stable() {
        let a = InterfaceInfo::synthetic("p1");
        assert_eq!(a.mac, InterfaceInfo::synthetic("p1").mac);
        assert_ne!(a.mac, InterfaceInfo::synthetic("p2").mac);
        assert_eq!(a.mac[0] & 0x03, 0x02);
        assert!(a.is_up());
    }
}

/// `struct ethtool_drvinfo` of <linux/ethtool.h> (the whole layout the kernel writes;
/// only the driver's name is read).
#[repr(C)]
#[allow(dead_code)]
struct EthtoolDrvinfo {
    cmd: u32,
    driver: [u8; 32],
    version: [u8; 32],
    fw_version: [u8; 32],
    bus_info: [u8; 32],
    erom_version: [u8; 32],
    reserved2: [u8; 12],
    n_priv_flags: u32,
    n_stats: u32,
    testinfo_len: u32,
    eedump_len: u32,
    regdump_len: u32,
}

/// ETHTOOL_GDRVINFO: get the driver's name and version.
const ETHTOOL_GDRVINFO: u32 = 0x03;

/// The name of the driver of interface `name` (in the calling thread's namespace), e.g.
/// `veth`, or `None` when it cannot be asked.
pub fn driver(name: &str) -> Option<String> {
    sys::check_ifname(name).ok()?;
    let sock = sys::ioctl_socket().ok()?;
    let mut info = EthtoolDrvinfo {
        cmd: ETHTOOL_GDRVINFO,
        driver: [0; 32],
        version: [0; 32],
        fw_version: [0; 32],
        bus_info: [0; 32],
        erom_version: [0; 32],
        reserved2: [0; 12],
        n_priv_flags: 0,
        n_stats: 0,
        testinfo_len: 0,
        eedump_len: 0,
        regdump_len: 0,
    };
    let mut req = sys::ifreq(name);
    req.ifr_ifru.ifru_data = (&mut info as *mut EthtoolDrvinfo).cast();
    sys::ioctl_ifreq(sock.as_raw_fd(), sys::SIOCETHTOOL, &mut req).ok()?;
    let end = info.driver.iter().position(|&b| b == 0).unwrap_or(32);
    Some(String::from_utf8_lossy(&info.driver[..end]).into_owned())
}

#[cfg(test)]
mod driver_tests {
    #[test]
    fn a_missing_interface_has_no_driver() {
        assert_eq!(super::driver("nosuchif7x"), None);
        assert_eq!(super::driver("bad/name"), None);
    }
}
