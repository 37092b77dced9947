//! The UMEM of one AF_XDP socket: an anonymous, page-aligned mapping cut into frames of
//! one power-of-two size, shared with the kernel, and checked access to its frames.
//!
//! Frames are named by their byte offset in the area (the "address" of AF_XDP
//! descriptors). The area is split in two fixed halves ([`Geometry`]): the first half's
//! frames only ever circulate through the fill and RX rings, the second half's through
//! the TX and completion rings, so RX can never starve TX of frames or the reverse.
//!
//! Ownership protocol (what makes reading and writing the shared memory sound): a frame
//! belongs to the kernel from the moment its address is published in the fill or TX ring
//! until it comes back on the RX or completion ring; in between it belongs to this
//! process, and only then is it read or written here. Addresses read from the kernel's
//! rings are checked against the area ([`Area::frame`], [`Area::chunk_of`]), so a bad
//! descriptor is counted, never followed out of bounds.

use std::io;
use std::ptr::NonNull;

/// Bytes of UMEM per socket (both halves).
pub(super) const UMEM_BYTES: usize = 8 << 20;
/// Headroom the kernel keeps in front of a received frame in its chunk
/// (XDP_PACKET_HEADROOM): a chunk holds a received frame of `frame_size - 256` bytes.
pub(super) const XDP_PACKET_HEADROOM: u32 = 256;
/// Ethernet header plus one VLAN tag: the most a frame carries beyond the MTU.
pub(super) const L2_OVERHEAD: u32 = 18;

/// How one socket's UMEM is cut: frame size and how many frames each half has (also
/// the size of each of the four rings).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Geometry {
    /// Bytes per frame: 2048 or 4096 (aligned chunk mode needs a power of two between
    /// 2048 and the page size).
    pub frame_size: u32,
    /// Frames per half: RX frames = TX frames = each ring's size (a power of two).
    pub half: u32,
}

impl Geometry {
    /// The geometry for an interface MTU: 2048-byte frames while a full frame plus the
    /// kernel's headroom fits, else 4096; `None` when not even 4096 does (an MTU above
    /// 3822), since frames spread over several chunks (XDP_USE_SG) are not supported.
    pub fn for_mtu(mtu: u32) -> Option<Geometry> {
        let need = mtu.checked_add(L2_OVERHEAD + XDP_PACKET_HEADROOM)?;
        let frame_size = [2048u32, 4096].into_iter().find(|&s| need <= s)?;
        Some(Geometry { frame_size, half: (UMEM_BYTES / frame_size as usize / 2) as u32 })
    }

    /// Longest frame the kernel can deliver into one of these frames.
    pub fn max_rx_frame(&self) -> u32 {
        self.frame_size - XDP_PACKET_HEADROOM
    }

    /// Offset of RX frame `i` (`i < half`).
    pub fn rx_frame(&self, i: u32) -> u64 {
        u64::from(i) * u64::from(self.frame_size)
    }

    /// Offset of TX frame `i` (`i < half`).
    pub fn tx_frame(&self, i: u32) -> u64 {
        u64::from(self.half + i) * u64::from(self.frame_size)
    }
}

/// The mapping itself. Unmapped on drop, which must come after every ring and socket
/// that uses it is gone (the owner orders its fields so).
pub(super) struct Area {
    ptr: NonNull<u8>,
    len: usize,
    frame_size: u32,
}

impl Area {
    /// Maps `2 * half` frames of `geometry` (anonymous, private, populated).
    pub fn new(geometry: Geometry) -> io::Result<Area> {
        let len = 2 * geometry.half as usize * geometry.frame_size as usize;
        // SAFETY: an anonymous private mapping at an address of the kernel's choosing
        // touches no existing memory; the result is checked before use.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_POPULATE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let ptr = NonNull::new(p.cast::<u8>()).ok_or_else(|| io::Error::other("mmap gave NULL"))?;
        Ok(Area { ptr, len, frame_size: geometry.frame_size })
    }

    /// The whole area, for registering it as UMEM.
    pub fn as_slice_ptr(&self) -> NonNull<[u8]> {
        NonNull::slice_from_raw_parts(self.ptr, self.len)
    }

    /// Start of the frame that holds offset `addr`, if `addr` is inside the area.
    pub fn chunk_of(&self, addr: u64) -> Option<u64> {
        (addr < self.len as u64).then(|| addr & !(u64::from(self.frame_size) - 1))
    }

    /// The `len` bytes at `addr`, if they lie inside one frame of the area.
    ///
    /// Only for a frame this process owns (see the module comment).
    pub fn frame(&self, addr: u64, len: u32) -> Option<&[u8]> {
        let start = self.checked(addr, len as usize)?;
        // SAFETY: `checked` proved [start, start + len) inside the mapping, which lives
        // as long as `self`; the frame is ours (caller's contract), so the kernel does
        // not write it while the slice is borrowed.
        Some(unsafe { std::slice::from_raw_parts(self.ptr.as_ptr().add(start), len as usize) })
    }

    /// Copies `data` to the frame starting at `addr`; false (nothing written) if it would
    /// not fit inside that frame. Only for a frame this process owns.
    pub fn write(&mut self, addr: u64, data: &[u8]) -> bool {
        let Some(start) = self.checked(addr, data.len()) else {
            return false;
        };
        // SAFETY: `checked` proved the destination inside the mapping; the frame is ours
        // (caller's contract), so nothing else touches it, and `data` is a Rust slice
        // that cannot overlap the mapping's frames we own exclusively here.
        unsafe {
            std::ptr::copy_nonoverlapping(data.as_ptr(), self.ptr.as_ptr().add(start), data.len())
        };
        true
    }

    /// `addr` as an index, if `[addr, addr + len)` stays inside one frame of the area.
    fn checked(&self, addr: u64, len: usize) -> Option<usize> {
        let start = usize::try_from(addr).ok()?;
        let end = start.checked_add(len)?;
        let frame = self.frame_size as usize;
        let in_frame = (start % frame) + len <= frame;
        (start < self.len && end <= self.len && in_frame).then_some(start)
    }
}

impl Drop for Area {
    fn drop(&mut self) {
        // SAFETY: `ptr`/`len` are exactly the mapping made in `new`, unmapped once. Pages
        // the kernel still pins for a socket being torn down stay valid for it.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geometry_follows_the_mtu() {
        let g = Geometry::for_mtu(1500).unwrap();
        assert_eq!(g, Geometry { frame_size: 2048, half: 2048 });
        assert!(g.max_rx_frame() >= 1500 + L2_OVERHEAD);
        assert_eq!(g.tx_frame(0), 2048 * 2048);
        assert_eq!(g.rx_frame(2047) + 2048, g.tx_frame(0));
        let g = Geometry::for_mtu(1774).unwrap();
        assert_eq!(g.frame_size, 2048);
        let g = Geometry::for_mtu(1775).unwrap();
        assert_eq!(g, Geometry { frame_size: 4096, half: 1024 });
        assert!(Geometry::for_mtu(3822).is_some());
        assert!(Geometry::for_mtu(3823).is_none());
        assert!(Geometry::for_mtu(9000).is_none());
        assert!(Geometry::for_mtu(u32::MAX).is_none());
    }

    #[test]
    fn frames_are_bounds_checked() {
        let g = Geometry::for_mtu(1500).unwrap();
        let mut area = Area::new(g).expect("mmap");
        let end = 2 * 2048 * 2048u64;
        assert!(area.write(g.tx_frame(3), &[7u8; 2048]));
        assert_eq!(area.frame(g.tx_frame(3), 2048).unwrap(), &[7u8; 2048][..]);
        assert!(area.frame(g.tx_frame(3) + 256, 1792).is_some());
        // Crossing into the next frame, past the end, or absurd addresses: refused.
        assert!(area.frame(g.tx_frame(3) + 256, 1793).is_none());
        assert!(!area.write(g.tx_frame(3) + 1, &[0u8; 2048]));
        assert!(area.frame(end - 10, 11).is_none());
        assert!(area.frame(end, 0).is_none());
        assert!(area.frame(u64::MAX, 4).is_none());
        assert_eq!(area.chunk_of(g.rx_frame(5) + 256), Some(g.rx_frame(5)));
        assert_eq!(area.chunk_of(end), None);
    }
}
