//! The TPACKET_V2 rings of one AF_PACKET socket: the receive ring and the transmit ring,
//! both fixed-size frame slots.
//!
//! # Memory
//!
//! One shared mapping holds the receive ring's blocks followed by the transmit ring's.
//! Each block holds `block_size / frame_size` slots (none spans two blocks); a slot is a
//! `tpacket2_hdr` followed by one frame. Ownership of each slot is passed between kernel
//! and user by its status word (`tp_status`, at offset 0):
//!
//! - RX slot: `TP_STATUS_KERNEL` while the kernel may fill it; it stores
//!   `TP_STATUS_USER` as soon as one frame is in it, so each frame is handed over at
//!   once (no block to wait for). We read the slot only after seeing USER (acquire), and
//!   hand it back by storing KERNEL (release) once the frame is copied out. The kernel
//!   fills slots in ring order, so `cur` walks them in order.
//! - TX slot: `tp_status` is AVAILABLE when we may fill it; we write the frame and store
//!   SEND_REQUEST (release); the kernel takes requested slots in ring order during our
//!   `send()` kick (SENDING) and marks them AVAILABLE once the frame left.
//!
//! The socket's version (set before the rings) fixes the slot header of both rings.
//! The socket has PACKET_VNET_HDR set, so every frame in either ring is preceded by a
//! `virtio_net_hdr` ([`crate::vnet`]): on RX the kernel writes it just before the
//! frame, on TX we write it at the slot's data offset and the frame after it.
//!
//! An RX frame longer than its slot is not cut short: the socket has PACKET_COPY_THRESH
//! set, so the kernel also queues the whole frame on the socket's receive queue and
//! marks the slot TP_STATUS_COPY; the ring reads it from there (one recv(2) for such a
//! frame, which is a super-frame of up to 64 KiB, never an MTU-sized one). Queued
//! frames are in slot order, so each COPY slot's frame is the next one queued. A frame
//! the kernel could not queue (receive buffer full) arrives truncated without COPY and
//! is counted as an error.
//!
//! # Invariants
//!
//! - Nothing in an RX slot is read as a reference unless the slot is user-owned, and no
//!   reference to it outlives the release store.
//! - Every offset and length read from the ring is checked against the slot before use;
//!   a bad entry is counted as an error and its slot handed back, never a panic.
//! - TX: `head` is the next slot to fill. After every kick, no SEND_REQUEST slot is left
//!   behind `head`: slots a kick left untaken are returned to AVAILABLE and `head` moves
//!   back to the first of them (the kernel, which takes slots strictly in order, stopped
//!   right there, so its position and `head` agree again).

use std::io;
use std::mem::offset_of;
use std::os::fd::RawFd;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};

use datapath::packet::Packet;
use headers::{ethernet, ethertype, VlanTag};

use crate::vnet;

const H_STATUS: usize = offset_of!(libc::tpacket2_hdr, tp_status);
const H_LEN: usize = offset_of!(libc::tpacket2_hdr, tp_len);
const H_SNAPLEN: usize = offset_of!(libc::tpacket2_hdr, tp_snaplen);
const H_MAC: usize = offset_of!(libc::tpacket2_hdr, tp_mac);
const H_VLAN_TCI: usize = offset_of!(libc::tpacket2_hdr, tp_vlan_tci);
const H_VLAN_TPID: usize = offset_of!(libc::tpacket2_hdr, tp_vlan_tpid);
/// Bytes of a slot header.
const H_SIZE: usize = std::mem::size_of::<libc::tpacket2_hdr>();
/// Where a TX slot's frame starts: the header, 16-aligned (TPACKET2_HDRLEN minus the
/// sockaddr_ll the kernel reserves for RX only).
pub(crate) const TX_DATA: usize =
    (H_SIZE + libc::TPACKET_ALIGNMENT - 1) & !(libc::TPACKET_ALIGNMENT - 1);
/// The most an RX slot holds before its frame: the kernel puts the MAC header so that
/// the network header lands at TPACKET_ALIGN(TPACKET2_HDRLEN + 16) or later.
pub(crate) const RX_HEADROOM: usize = 128;
const _: () =
    assert!(RX_HEADROOM >= libc::TPACKET2_HDRLEN + 2 * libc::TPACKET_ALIGNMENT + vnet::LEN);

/// The shared mapping of a socket's rings; unmapped on drop.
pub(crate) struct Mapping {
    ptr: NonNull<u8>,
    len: usize,
}

impl Mapping {
    /// Maps `len` bytes of `fd`'s rings (RX ring first, then TX).
    pub(crate) fn new(fd: RawFd, len: usize) -> io::Result<Mapping> {
        // SAFETY: a fresh shared mapping of the socket's rings, of the length the kernel
        // allocated for them; no existing memory is affected.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_POPULATE,
                fd,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let ptr =
            NonNull::new(ptr.cast::<u8>()).ok_or_else(|| io::Error::other("mmap returned null"))?;
        Ok(Mapping { ptr, len })
    }

    /// The address `offset` bytes into the mapping (callers keep `offset < len`).
    fn at(&self, offset: usize) -> *mut u8 {
        debug_assert!(offset < self.len);
        // SAFETY: callers pass offsets inside the mapping (ring geometry fixed at setup).
        unsafe { self.ptr.as_ptr().add(offset) }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the region mapped in `new`; the rings that point into
        // it live in the same port struct and are dropped with it.
        unsafe {
            libc::munmap(self.ptr.as_ptr().cast(), self.len);
        }
    }
}

/// A status word in the shared mapping (4-aligned: blocks and slots are 16-aligned).
///
/// # Safety
/// `p` must point into a live mapping, 4-aligned.
unsafe fn status_word<'a>(p: *mut u8) -> &'a AtomicU32 {
    // SAFETY: by the caller; AtomicU32 has the layout of u32, and the kernel accesses
    // this word concurrently, which atomics permit.
    unsafe { AtomicU32::from_ptr(p.cast()) }
}

/// Geometry of one ring.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Geometry {
    pub block_size: usize,
    pub block_nr: usize,
    pub frame_size: usize,
}

impl Geometry {
    pub(crate) fn bytes(&self) -> usize {
        self.block_size * self.block_nr
    }

    pub(crate) fn frames_per_block(&self) -> usize {
        self.block_size / self.frame_size
    }

    pub(crate) fn frame_nr(&self) -> usize {
        self.frames_per_block() * self.block_nr
    }

    pub(crate) fn req(&self) -> libc::tpacket_req {
        libc::tpacket_req {
            tp_block_size: self.block_size as u32,
            tp_block_nr: self.block_nr as u32,
            tp_frame_size: self.frame_size as u32,
            tp_frame_nr: self.frame_nr() as u32,
        }
    }

    /// The offset of slot `i` (below `frame_nr()`) from the ring's start.
    fn slot_offset(&self, i: usize) -> usize {
        let fpb = self.frames_per_block();
        (i / fpb) * self.block_size + (i % fpb) * self.frame_size
    }
}

/// What a user-owned RX slot holds.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Entry<'a> {
    /// A whole frame and the `virtio_net_hdr` before it; `vlan` is the (TPID, TCI) the
    /// kernel took out of it, if any.
    Frame { data: &'a [u8], vnet: &'a [u8], vlan: Option<(u16, u16)> },
    /// A frame too long for the slot, queued whole on the socket (TP_STATUS_COPY).
    Copied { vlan: Option<(u16, u16)> },
    /// A frame cut short by the ring (longer than a slot can hold).
    Truncated,
    /// A header or frame outside the slot.
    Malformed,
}

fn read_u32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(b.get(at..at.checked_add(4)?)?.try_into().ok()?))
}

fn read_u16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_ne_bytes(b.get(at..at.checked_add(2)?)?.try_into().ok()?))
}

/// The entry in `slot` (a user-owned RX slot's bytes, header first).
pub(crate) fn parse_slot(slot: &[u8]) -> Entry<'_> {
    parse(slot).unwrap_or(Entry::Malformed)
}

fn parse(slot: &[u8]) -> Option<Entry<'_>> {
    if slot.len() < H_SIZE {
        return None;
    }
    let status = read_u32(slot, H_STATUS)?;
    let len = read_u32(slot, H_LEN)? as usize;
    let snaplen = read_u32(slot, H_SNAPLEN)? as usize;
    let mac = read_u16(slot, H_MAC)? as usize;
    if mac < H_SIZE + vnet::LEN {
        return None;
    }
    let data = slot.get(mac..mac.checked_add(snaplen)?)?;
    let vnet = slot.get(mac - vnet::LEN..mac)?;
    let vlan = (status & libc::TP_STATUS_VLAN_VALID != 0).then(|| {
        let tci = read_u16(slot, H_VLAN_TCI).unwrap_or(0);
        let tpid = match status & libc::TP_STATUS_VLAN_TPID_VALID {
            0 => ethertype::VLAN,
            _ => read_u16(slot, H_VLAN_TPID).unwrap_or(ethertype::VLAN),
        };
        (tpid, tci)
    });
    if status & libc::TP_STATUS_COPY != 0 {
        return Some(Entry::Copied { vlan });
    }
    if snaplen < len {
        return Some(Entry::Truncated);
    }
    Some(Entry::Frame { data, vnet, vlan })
}

/// What one receive batch found besides frames.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RxOutcome {
    pub frames: usize,
    pub bytes: u64,
    pub errors: u64,
    /// A slot said the kernel dropped frames (TP_STATUS_LOSING).
    pub losing: bool,
}

/// The receive ring: slots at the start of the mapping.
pub(crate) struct RxRing {
    geo: Geometry,
    /// The next slot to read (the kernel fills slots in order).
    cur: usize,
    /// The socket, for frames queued on it (TP_STATUS_COPY).
    fd: RawFd,
    /// Room for one queued frame and its header (allocated once).
    big: Box<[u8]>,
}

/// The most a queued frame (with its `virtio_net_hdr`) may be: a 64 KiB super-frame
/// and its headers, with room to spare; a longer one is counted as an error.
pub(crate) const BIG_FRAME: usize = 128 << 10;

/// Turns one received frame (`data`, with its `virtio_net_hdr` `hdr` and the VLAN tag
/// the kernel lifted) into a noted packet from `pool` appended to `rx`; false (the
/// buffer back in `pool`) when the header is refused or the tag cannot be put back.
fn deliver(
    data: &[u8],
    hdr: &[u8],
    vlan: Option<(u16, u16)>,
    rx: &mut Vec<Packet>,
    pool: &mut Vec<Packet>,
) -> bool {
    // The tag goes back after the MACs.
    if vlan.is_some() && data.len() < ethernet::ADDRS_LEN {
        return false;
    }
    let mut p = pool.pop().unwrap_or_default();
    p.refill(data);
    // The header's offsets are those of the frame without the lifted tag.
    match vnet::note_from(hdr, p.data_mut()) {
        Ok(note) => p.set_offload(note),
        Err(_) => {
            pool.push(p);
            return false;
        }
    }
    if let Some((tpid, tci)) = vlan {
        let tag = p.insert(ethernet::ADDRS_LEN, headers::vlan::TAG_LEN);
        if let Some(mut tag) = VlanTag::new_checked_mut(tag) {
            tag.set_tpid(tpid);
            tag.set_tci(tci);
        }
    }
    rx.push(p);
    true
}

impl RxRing {
    /// Slots in the ring.
    pub(crate) fn depth(&self) -> usize {
        self.geo.frame_nr()
    }

    pub(crate) fn new(geo: Geometry, fd: RawFd) -> RxRing {
        RxRing { geo, cur: 0, fd, big: vec![0u8; BIG_FRAME].into_boxed_slice() }
    }

    /// Reads the next frame queued on the socket into `big`; its length with the
    /// header, or `None` if there is none or it did not fit.
    fn recv_queued(&mut self) -> Option<usize> {
        // SAFETY: receives into our own buffer, at most its length; MSG_TRUNC makes the
        // result the frame's real length, so a longer one is seen (and refused).
        let n = unsafe {
            libc::recv(
                self.fd,
                self.big.as_mut_ptr().cast(),
                self.big.len(),
                libc::MSG_DONTWAIT | libc::MSG_TRUNC,
            )
        };
        let n = usize::try_from(n).ok()?;
        (vnet::LEN + 14..=self.big.len()).contains(&n).then_some(n)
    }

    /// Copies up to `max` frames into packets from `pool` appended to `rx`, handing
    /// each slot back to the kernel once read.
    pub(crate) fn read(
        &mut self,
        map: &Mapping,
        rx: &mut Vec<Packet>,
        max: usize,
        pool: &mut Vec<Packet>,
    ) -> RxOutcome {
        let mut out = RxOutcome::default();
        while out.frames < max {
            let base = map.at(self.geo.slot_offset(self.cur));
            // SAFETY: `base` is a slot start inside the mapping (16-aligned), so its
            // status word is inside it and 4-aligned.
            let status = unsafe { status_word(base.add(H_STATUS)) };
            let s = status.load(Ordering::Acquire);
            if s & libc::TP_STATUS_USER == 0 {
                break;
            }
            out.losing |= s & libc::TP_STATUS_LOSING != 0;
            {
                // SAFETY: the slot is user-owned (status USER, acquired above): the
                // kernel does not write it until we store KERNEL below, after this
                // slice is gone. It lies inside the mapping, which outlives the call.
                let slot = unsafe { std::slice::from_raw_parts(base, self.geo.frame_size) };
                let ok = match parse_slot(slot) {
                    Entry::Frame { data, vnet, vlan } => deliver(data, vnet, vlan, rx, pool),
                    Entry::Copied { vlan } => match self.recv_queued() {
                        Some(n) => {
                            let (hdr, data) = self.big[..n].split_at(vnet::LEN);
                            deliver(data, hdr, vlan, rx, pool)
                        }
                        None => false,
                    },
                    Entry::Truncated | Entry::Malformed => false,
                };
                if ok {
                    out.bytes += rx.last().map_or(0, |p| p.len() as u64);
                    out.frames += 1;
                } else {
                    out.errors += 1;
                }
            }
            status.store(libc::TP_STATUS_KERNEL, Ordering::Release);
            self.cur = (self.cur + 1) % self.geo.frame_nr();
        }
        out
    }
}

/// The transmit ring: fixed slots after the RX ring in the mapping.
pub(crate) struct TxRing {
    geo: Geometry,
    /// Offset of the TX ring in the mapping.
    base: usize,
    /// The next slot to fill.
    head: usize,
}

impl TxRing {
    pub(crate) fn new(geo: Geometry, base: usize) -> TxRing {
        TxRing { geo, base, head: 0 }
    }

    /// Bytes of frame one slot holds (after its `virtio_net_hdr`).
    pub(crate) fn capacity(&self) -> usize {
        self.geo.frame_size - TX_DATA - vnet::LEN
    }

    fn slot(&self, map: &Mapping, i: usize) -> *mut u8 {
        map.at(self.base + self.geo.slot_offset(i))
    }

    /// Copies `hdr` and `frame` (at most `capacity()` bytes) into the head slot and
    /// requests its sending; false when the head slot is still the kernel's (ring full).
    pub(crate) fn push(&mut self, map: &Mapping, hdr: &[u8; vnet::LEN], frame: &[u8]) -> bool {
        debug_assert!(frame.len() <= self.capacity());
        let slot = self.slot(map, self.head);
        // SAFETY: `slot` is a 16-aligned slot inside the mapping.
        let status = unsafe { status_word(slot.add(H_STATUS)) };
        if status.load(Ordering::Acquire) & (libc::TP_STATUS_SEND_REQUEST | libc::TP_STATUS_SENDING)
            != 0
        {
            return false;
        }
        let len = frame.len().min(self.capacity());
        let total = (vnet::LEN + len) as u32;
        // SAFETY: the slot is ours (not requested, not being sent) and the kernel reads
        // it only after the SEND_REQUEST store below; header fields, the vnet header and
        // the frame lie inside the slot (TX_DATA + LEN + capacity = frame_size), the
        // slot header's fields naturally aligned.
        unsafe {
            slot.add(H_LEN).cast::<u32>().write(total);
            slot.add(H_SNAPLEN).cast::<u32>().write(total);
            std::ptr::copy_nonoverlapping(hdr.as_ptr(), slot.add(TX_DATA), vnet::LEN);
            std::ptr::copy_nonoverlapping(frame.as_ptr(), slot.add(TX_DATA + vnet::LEN), len);
        }
        status.store(libc::TP_STATUS_SEND_REQUEST, Ordering::Release);
        self.head = (self.head + 1) % self.geo.frame_nr();
        true
    }

    /// Whether the last pushed slot (before `head`) is still requested, i.e. the last
    /// kick did not take it.
    pub(crate) fn last_untaken(&self, map: &Mapping) -> bool {
        let nr = self.geo.frame_nr();
        let slot = self.slot(map, (self.head + nr - 1) % nr);
        // SAFETY: a slot inside the mapping.
        let status = unsafe { status_word(slot.add(H_STATUS)) };
        status.load(Ordering::Acquire) & libc::TP_STATUS_SEND_REQUEST != 0
    }

    /// After a kick that left slots untaken: gives back the slots of the last `count` pushes (those
    /// before `head`) that the kernel did not take, moving `head` back to the first of
    /// them. Returns how many frames and bytes were given back (not sent).
    pub(crate) fn rewind(&mut self, map: &Mapping, count: usize) -> (u64, u64) {
        let nr = self.geo.frame_nr();
        let first = (self.head + nr - count.min(nr)) % nr;
        let mut frames = 0;
        let mut bytes = 0;
        let mut new_head = None;
        for k in 0..count.min(nr) {
            let i = (first + k) % nr;
            let slot = self.slot(map, i);
            // SAFETY: a slot inside the mapping.
            let status = unsafe { status_word(slot.add(H_STATUS)) };
            if status.load(Ordering::Acquire) & libc::TP_STATUS_SEND_REQUEST == 0 {
                continue;
            }
            // SAFETY: a requested slot that the kernel did not take; it only takes
            // slots inside a send() on this socket, which only this handle calls, so
            // nothing reads it now.
            let len = unsafe { slot.add(H_LEN).cast::<u32>().read() };
            status.store(libc::TP_STATUS_AVAILABLE, Ordering::Release);
            new_head.get_or_insert(i);
            frames += 1;
            bytes += u64::from(len).saturating_sub(vnet::LEN as u64);
        }
        if let Some(h) = new_head {
            self.head = h;
        }
        (frames, bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where the kernel puts an untagged frame in a slot with a vnet header: the network
    /// header at TPACKET_ALIGN(52 + 16) + 10 = 90, so the MAC header at 76.
    const MAC: usize = 76;
    /// The vnet header the fake slots carry before the frame.
    const VNET: [u8; vnet::LEN] = [1, 0, 0, 0, 0, 0, 34, 0, 16, 0];

    /// A fake user-owned RX slot of `size` bytes holding `data` (original length `len`),
    /// laid out as the kernel does (header, gap, frame).
    fn slot(data: &[u8], len: u32, vlan: Option<(u16, u16)>, size: usize) -> Vec<u8> {
        let mut b = vec![0u8; size];
        let put32 =
            |b: &mut Vec<u8>, o: usize, v: u32| b[o..o + 4].copy_from_slice(&v.to_ne_bytes());
        let put16 =
            |b: &mut Vec<u8>, o: usize, v: u16| b[o..o + 2].copy_from_slice(&v.to_ne_bytes());
        let mut status = libc::TP_STATUS_USER;
        if let Some((tpid, tci)) = vlan {
            status |= libc::TP_STATUS_VLAN_VALID | libc::TP_STATUS_VLAN_TPID_VALID;
            put16(&mut b, H_VLAN_TCI, tci);
            put16(&mut b, H_VLAN_TPID, tpid);
        }
        put32(&mut b, H_STATUS, status);
        put32(&mut b, H_LEN, len);
        put32(&mut b, H_SNAPLEN, data.len() as u32);
        put16(&mut b, H_MAC, MAC as u16);
        b[MAC - vnet::LEN..MAC].copy_from_slice(&VNET);
        b[MAC..MAC + data.len()].copy_from_slice(data);
        b
    }

    #[test]
    fn slots_yield_their_frame_and_vlan_tag() {
        let f1 = [1u8; 60];
        let f2 = [2u8; 100];
        assert_eq!(
            parse_slot(&slot(&f1, 60, None, 2048)),
            Entry::Frame { data: &f1[..], vnet: &VNET[..], vlan: None }
        );
        assert_eq!(
            parse_slot(&slot(&f2, 100, Some((0x88a8, 0x2005)), 2048)),
            Entry::Frame { data: &f2[..], vnet: &VNET[..], vlan: Some((0x88a8, 0x2005)) }
        );
        // A tag without a valid TPID is 802.1Q.
        let mut s = slot(&f2, 100, Some((0x88a8, 7)), 2048);
        let st = libc::TP_STATUS_USER | libc::TP_STATUS_VLAN_VALID;
        s[H_STATUS..H_STATUS + 4].copy_from_slice(&st.to_ne_bytes());
        assert_eq!(
            parse_slot(&s),
            Entry::Frame { data: &f2[..], vnet: &VNET[..], vlan: Some((0x8100, 7)) }
        );
        // A frame that ends exactly at the slot's end.
        let full = [4u8; 2048 - MAC];
        assert_eq!(
            parse_slot(&slot(&full, full.len() as u32, None, 2048)),
            Entry::Frame { data: &full[..], vnet: &VNET[..], vlan: None }
        );
    }

    #[test]
    fn truncated_and_malformed_entries_are_reported_not_panicked() {
        let f = [3u8; 64];
        assert_eq!(parse_slot(&slot(&f, 9000, None, 2048)), Entry::Truncated);
        // Cut short, but queued whole on the socket.
        let mut copied = slot(&f, 9000, Some((0x8100, 5)), 2048);
        let st = libc::TP_STATUS_USER
            | libc::TP_STATUS_COPY
            | libc::TP_STATUS_VLAN_VALID
            | libc::TP_STATUS_VLAN_TPID_VALID;
        copied[H_STATUS..H_STATUS + 4].copy_from_slice(&st.to_ne_bytes());
        assert_eq!(parse_slot(&copied), Entry::Copied { vlan: Some((0x8100, 5)) });

        // A frame that runs past the slot.
        let mut bad = slot(&f, 64, None, 2048);
        bad[H_SNAPLEN..H_SNAPLEN + 4].copy_from_slice(&(2048 - MAC as u32 + 1).to_ne_bytes());
        assert_eq!(parse_slot(&bad), Entry::Malformed);
        bad[H_SNAPLEN..H_SNAPLEN + 4].copy_from_slice(&u32::MAX.to_ne_bytes());
        assert_eq!(parse_slot(&bad), Entry::Malformed);

        // A frame offset outside the slot, or inside its header.
        let mut off = slot(&f, 64, None, 2048);
        off[H_MAC..H_MAC + 2].copy_from_slice(&u16::MAX.to_ne_bytes());
        assert_eq!(parse_slot(&off), Entry::Malformed);
        off[H_MAC..H_MAC + 2].copy_from_slice(&4u16.to_ne_bytes());
        assert_eq!(parse_slot(&off), Entry::Malformed);
        // ... or with no room for the vnet header before it.
        off[H_MAC..H_MAC + 2].copy_from_slice(&(H_SIZE as u16 + 9).to_ne_bytes());
        assert_eq!(parse_slot(&off), Entry::Malformed);

        // A slot too short to hold even its own header.
        assert_eq!(parse_slot(&[0u8; 10]), Entry::Malformed);
        assert_eq!(parse_slot(&[]), Entry::Malformed);
    }

    #[test]
    fn geometry_is_consistent() {
        let g = Geometry { block_size: 1 << 16, block_nr: 16, frame_size: 2048 };
        let r = g.req();
        assert_eq!(r.tp_frame_nr, 32 * 16);
        assert_eq!(g.bytes(), 1 << 20);
        assert_eq!(g.slot_offset(0), 0);
        assert_eq!(g.slot_offset(31), 31 * 2048);
        assert_eq!(g.slot_offset(32), 1 << 16);
        assert_eq!(g.slot_offset(g.frame_nr() - 1) + 2048, g.bytes());
        assert_eq!(TX_DATA, 32);
    }
}
