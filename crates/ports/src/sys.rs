//! Thin checked wrappers over the system calls this crate repeats: socket options,
//! interface-request ioctls, and interface-name validation.
//!
//! Every `unsafe` block of the backends that is about calling a C function with
//! correctly sized arguments lives here, so the backends keep theirs for the parts that
//! are really theirs (shared ring memory, file descriptors they own).

use std::ffi::c_int;
use std::io;
use std::mem::{size_of, MaybeUninit};
use std::os::fd::{FromRawFd, OwnedFd, RawFd};

use crate::error::PortError;

/// Turns a C return value (-1 means failure, errno set) into a result.
pub(crate) fn cvt(ret: c_int) -> io::Result<c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// Opens a socket, owning the descriptor (close-on-exec).
pub(crate) fn socket(domain: c_int, ty: c_int, protocol: c_int) -> io::Result<OwnedFd> {
    // SAFETY: socket(2) takes plain integers; a non-negative return is a fresh
    // descriptor that nothing else owns, so OwnedFd may take it.
    let fd = cvt(unsafe { libc::socket(domain, ty | libc::SOCK_CLOEXEC, protocol) })?;
    // SAFETY: see above: `fd` is a new, open, unowned descriptor.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Binds AF_PACKET socket `fd` to interface `ifindex` for `protocol` (an ETH_P_ value in
/// host order; 0 receives nothing).
pub(crate) fn bind_packet(fd: RawFd, ifindex: u32, protocol: u16) -> io::Result<()> {
    // SAFETY: sockaddr_ll is plain integers and byte arrays; all zeroes is valid.
    let mut addr: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    addr.sll_family = libc::AF_PACKET as u16;
    addr.sll_protocol = protocol.to_be();
    addr.sll_ifindex = ifindex as i32;
    // SAFETY: `addr` is a live sockaddr_ll and we pass its exact size.
    cvt(unsafe {
        libc::bind(
            fd,
            (&addr as *const libc::sockaddr_ll).cast(),
            size_of::<libc::sockaddr_ll>() as libc::socklen_t,
        )
    })
    .map(drop)
}

/// Sets a socket option whose value is a `T`.
pub(crate) fn setsockopt<T>(fd: RawFd, level: c_int, name: c_int, value: &T) -> io::Result<()> {
    // SAFETY: `value` points to a live `T` and we pass exactly its size; the kernel only
    // reads it.
    cvt(unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (value as *const T).cast(),
            size_of::<T>() as libc::socklen_t,
        )
    })
    .map(drop)
}

/// Reads a socket option whose value is a `T` made of plain integers.
pub(crate) fn getsockopt<T: Copy>(fd: RawFd, level: c_int, name: c_int) -> io::Result<T> {
    let mut value = MaybeUninit::<T>::zeroed();
    let mut len = size_of::<T>() as libc::socklen_t;
    // SAFETY: `value` has room for `len` bytes and the kernel writes at most `len`.
    cvt(unsafe { libc::getsockopt(fd, level, name, value.as_mut_ptr().cast(), &mut len) })?;
    // SAFETY: T is plain integers (callers' bound), so the zeroed-then-partly-written
    // bytes are a valid T.
    Ok(unsafe { value.assume_init() })
}

/// Longest interface name (without the NUL).
pub(crate) const IFNAME_MAX: usize = libc::IFNAMSIZ - 1;

/// Checks that `name` can be a Linux interface name (what `dev_valid_name` accepts).
pub(crate) fn check_ifname(name: &str) -> Result<(), PortError> {
    let bad = |reason| Err(PortError::InvalidName { name: name.to_string(), reason });
    if name.is_empty() {
        return bad("empty");
    }
    if name.len() > IFNAME_MAX {
        return bad("longer than 15 bytes");
    }
    if name == "." || name == ".." {
        return bad("'.' and '..' are not interface names");
    }
    if name.bytes().any(|b| b == b'/' || b == b':' || b == 0 || b.is_ascii_whitespace()) {
        return bad("contains '/', ':', NUL or whitespace");
    }
    Ok(())
}

/// An interface request naming `name` (already checked), with a zeroed value.
pub(crate) fn ifreq(name: &str) -> libc::ifreq {
    // SAFETY: ifreq is a C struct of integers, byte arrays and a union of such; all
    // zeroes is a valid value of it.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (dst, &src) in req.ifr_name.iter_mut().zip(name.as_bytes().iter().take(IFNAME_MAX)) {
        *dst = src as libc::c_char;
    }
    req
}

/// An iovec of `b`'s bytes, for a write (`writev`, `sendmsg`: the kernel only reads
/// them, whatever the pointer's mutability).
pub(crate) fn iovec(b: &[u8]) -> libc::iovec {
    libc::iovec { iov_base: b.as_ptr() as *mut libc::c_void, iov_len: b.len() }
}

/// SIOCETHTOOL: the ethtool ioctl (its `struct ifreq` points at the command's struct).
pub(crate) const SIOCETHTOOL: libc::Ioctl = 0x8946;

/// Runs an interface ioctl (`SIOCGIF*`, `SIOCSIFFLAGS`, `TUNSETIFF`) with `req`.
pub(crate) fn ioctl_ifreq(
    fd: RawFd,
    request: libc::Ioctl,
    req: &mut libc::ifreq,
) -> io::Result<()> {
    // SAFETY: every request this crate passes takes a `struct ifreq *`, and `req` is one,
    // live and writable for the call.
    cvt(unsafe { libc::ioctl(fd, request, req as *mut libc::ifreq) }).map(drop)
}

/// A datagram socket for interface ioctls, in the calling thread's network namespace.
pub(crate) fn ioctl_socket() -> io::Result<OwnedFd> {
    socket(libc::AF_INET, libc::SOCK_DGRAM, 0)
}

/// The calling thread's last OS error number.
pub(crate) fn errno() -> c_int {
    io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interface_names() {
        assert!(check_ifname("veth0").is_ok());
        assert!(check_ifname("a-b_c.d@e").is_ok());
        assert!(check_ifname("123456789012345").is_ok());
        for bad in ["", "1234567890123456", "a/b", "a b", "eth0:1", ".", "..", "a\0"] {
            let err = check_ifname(bad).unwrap_err();
            assert!(matches!(err, PortError::InvalidName { .. }), "{bad:?}");
            assert!(err.to_string().contains("invalid interface name"));
        }
        let req = ifreq("veth0");
        assert_eq!(req.ifr_name[..6].iter().map(|&c| c as u8).collect::<Vec<_>>(), b"veth0\0");
    }
}
