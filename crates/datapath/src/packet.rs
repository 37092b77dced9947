//! A packet buffer with headroom, and the header offsets the parser found.
//!
//! [`Packet`] owns its bytes with free space in front (`HEADROOM`), so pushing a VLAN or
//! MPLS header moves the start back instead of copying the frame. [`Layers`] records
//! where each parsed header starts; actions use it to rewrite fields in place and must
//! keep it true (or re-parse) when they insert or remove headers.

/// Bytes kept free in front of a received frame for pushed headers.
pub const HEADROOM: usize = 64;

/// A frame being processed. Two packets are equal when their frames are (the headroom
/// and the offload note are not compared).
///
/// The offload note ([`Offload`]) is set only by the receiving backend; every way of
/// filling a packet with new bytes (`from_slice`, `refill`) clears it, and clones keep
/// it (a flooded frame's copies carry the same note).
#[derive(Clone)]
pub struct Packet {
    buf: Vec<u8>,
    start: usize,
    offload: Option<Offload>,
}

/// What the sender of a frame left for the device to do, as the kernel noted it in the
/// `virtio_net_hdr` a port backend read with the frame: finish the TCP/UDP checksum,
/// cut a super-frame into segments. It holds no offsets into the frame, so header pushes
/// and pops never make it stale: whoever acts on it finds the L3/L4 headers in the frame
/// as it is then (`crate::rewrite::locate_l4`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Offload {
    /// The TCP/UDP checksum field holds only the pseudo-header's sum (not complemented);
    /// the rest of the segment is still to be added (the kernel's CHECKSUM_PARTIAL).
    pub partial_csum: bool,
    /// Segmentation still to be done, if any.
    pub gso: Option<Gso>,
}

/// A super-frame's segmentation: what kind, and the payload bytes of each segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gso {
    pub kind: GsoKind,
    /// Payload bytes per segment (the MSS for TCP); at least 1 when set by a backend.
    pub size: u16,
    /// TCP with ECN: the CWR flag belongs to the first segment only.
    pub ecn: bool,
}

/// The kinds of segmentation a backend can be handed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GsoKind {
    TcpV4,
    TcpV6,
    /// UDP segmentation (UDP_SEGMENT): each segment is a UDP datagram of `size` bytes.
    Udp,
}

/// An empty packet; holds no allocation.
impl Default for Packet {
    fn default() -> Self {
        Packet { buf: Vec::new(), start: 0, offload: None }
    }
}

impl Packet {
    /// Copies `frame` into a new buffer with headroom.
    pub fn from_slice(frame: &[u8]) -> Packet {
        let mut buf = Vec::with_capacity(HEADROOM + frame.len());
        buf.resize(HEADROOM, 0);
        buf.extend_from_slice(frame);
        Packet { buf, start: HEADROOM, offload: None }
    }

    /// The offload note, if the receiving backend set one (see [`Offload`]).
    #[inline]
    pub fn offload(&self) -> Option<Offload> {
        self.offload
    }

    /// Sets or clears the offload note (receiving backends, and the output side once it
    /// has done what the note asked).
    #[inline]
    pub fn set_offload(&mut self, offload: Option<Offload>) {
        self.offload = offload;
    }

    /// Whether the TCP/UDP checksum is partial (see [`Offload::partial_csum`]).
    #[inline]
    pub fn partial_csum(&self) -> bool {
        self.offload.is_some_and(|o| o.partial_csum)
    }

    /// Replaces the contents with `frame`, reusing this buffer's allocation (a receive
    /// loop recycles transmitted packets this way instead of allocating per packet).
    pub fn refill(&mut self, frame: &[u8]) {
        // The headroom's bytes are never read (`insert` zeroes what it uses), so a buffer
        // that has them keeps them as they are.
        if self.buf.len() >= HEADROOM {
            self.buf.truncate(HEADROOM);
        } else {
            self.buf.clear();
            self.buf.resize(HEADROOM, 0);
        }
        self.buf.extend_from_slice(frame);
        self.start = HEADROOM;
        self.offload = None;
    }

    /// Appends `bytes` to the end of the frame (a frame gathered from several pieces is
    /// built with `refill` and then this; the buffer grows only while it is too small).
    pub fn extend_from_slice(&mut self, bytes: &[u8]) {
        if self.buf.is_empty() {
            // A default packet: give it the headroom `refill` would have.
            self.buf.resize(HEADROOM, 0);
            self.start = HEADROOM;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// The frame's bytes.
    #[inline]
    pub fn data(&self) -> &[u8] {
        &self.buf[self.start..]
    }

    #[inline]
    pub fn data_mut(&mut self) -> &mut [u8] {
        &mut self.buf[self.start..]
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.buf.len() - self.start
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Inserts `n` zero bytes at offset `at` of the frame (shifting the `at` bytes before
    /// it towards the front), returning the new bytes. Uses headroom when there is some.
    pub fn insert(&mut self, at: usize, n: usize) -> &mut [u8] {
        let at = at.min(self.len());
        if self.start >= n {
            let s = self.start;
            self.buf.copy_within(s..s + at, s - n);
            self.start -= n;
            let region = &mut self.buf[self.start + at..self.start + at + n];
            region.fill(0);
            region
        } else {
            let pos = self.start + at;
            self.buf.splice(pos..pos, std::iter::repeat_n(0, n));
            &mut self.buf[pos..pos + n]
        }
    }

    /// Removes `n` bytes at offset `at` of the frame (moving the bytes before them back).
    /// Removes fewer if the frame is shorter.
    pub fn remove(&mut self, at: usize, n: usize) {
        let at = at.min(self.len());
        let n = n.min(self.len() - at);
        let s = self.start;
        self.buf.copy_within(s..s + at, s + n);
        self.start += n;
    }

    /// Cuts the frame to at most `len` bytes.
    pub fn truncate(&mut self, len: usize) {
        self.buf.truncate(self.start + len);
    }
}

impl PartialEq for Packet {
    fn eq(&self, other: &Packet) -> bool {
        self.data() == other.data()
    }
}

impl Eq for Packet {}

impl std::fmt::Debug for Packet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Packet({} bytes)", self.len())
    }
}

/// Offsets (from the frame start) of the headers the parser found; `None` when absent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Layers {
    /// Offset of the outermost VLAN tag (its TPID), if any.
    pub vlan: Option<u16>,
    /// Offset of the outermost MPLS label stack entry, if any.
    pub mpls: Option<u16>,
    /// Offset of the ethertype that names the L3 protocol (after tags).
    pub ethertype: u16,
    /// Offset of the IPv4/IPv6/ARP header.
    pub l3: Option<u16>,
    /// Offset of the TCP/UDP/SCTP/ICMP header (first fragment only).
    pub l4: Option<u16>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_and_remove_keep_the_rest() {
        let mut p = Packet::from_slice(&[1, 2, 3, 4, 5, 6]);
        p.insert(2, 3).copy_from_slice(&[9, 9, 9]);
        assert_eq!(p.data(), &[1, 2, 9, 9, 9, 3, 4, 5, 6]);
        p.remove(2, 3);
        assert_eq!(p.data(), &[1, 2, 3, 4, 5, 6]);
        let mut big = Packet::from_slice(&[7; 4]);
        big.insert(1, HEADROOM + 10);
        assert_eq!(big.len(), 4 + HEADROOM + 10);
        assert_eq!(big.data()[0], 7);
        assert_eq!(big.data()[big.len() - 1], 7);
        big.remove(0, 10_000);
        assert!(big.is_empty());
        let cap = big.buf.capacity();
        big.refill(&[1, 2, 3]);
        assert_eq!(big.data(), &[1, 2, 3]);
        assert_eq!(big.buf.capacity(), cap, "refill reuses the allocation");
    }
}
