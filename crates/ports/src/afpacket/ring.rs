//! The TPACKET_V3 rings of one AF_PACKET socket: the receive ring (variable-size frames
//! packed into blocks) and the transmit ring (fixed-size frame slots).
//!
//! # Memory
//!
//! One shared mapping holds the receive ring's blocks followed by the transmit ring's.
//! Ownership of each piece is passed between kernel and user by a status word in it:
//!
//! - RX block: `block_status` is `TP_STATUS_KERNEL` while the kernel fills it and gets
//!   `TP_STATUS_USER` when the kernel retires it (full, or after the block timeout).
//!   We read its frames only after seeing USER (acquire), and hand it back by storing
//!   KERNEL (release) once every frame is copied out. Blocks are retired in ring order,
//!   so `cur` walks them in order.
//! - TX slot: `tp_status` is AVAILABLE when we may fill it; we write the frame and store
//!   SEND_REQUEST (release); the kernel takes requested slots in ring order during our
//!   `send()` kick (SENDING) and marks them AVAILABLE once the frame left.
//!
//! # Invariants
//!
//! - Nothing in an RX block is read as a reference unless the block is user-owned, and
//!   no reference to it outlives the release store.
//! - Every offset, length and count read from the ring is checked against the block
//!   before use; a bad entry ends its block (counted as an error), never panics.
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

/// Offset of a block's status word (`hdr.bh1.block_status`).
const BLOCK_STATUS: usize = offset_of!(libc::tpacket_block_desc, hdr);
/// Offset of a block's frame count (`hdr.bh1.num_pkts`).
const BLOCK_NUM_PKTS: usize = BLOCK_STATUS + offset_of!(libc::tpacket_hdr_v1, num_pkts);
/// Offset of a block's first frame header (`hdr.bh1.offset_to_first_pkt`).
const BLOCK_FIRST: usize = BLOCK_STATUS + offset_of!(libc::tpacket_hdr_v1, offset_to_first_pkt);

const H_NEXT: usize = offset_of!(libc::tpacket3_hdr, tp_next_offset);
const H_SNAPLEN: usize = offset_of!(libc::tpacket3_hdr, tp_snaplen);
const H_LEN: usize = offset_of!(libc::tpacket3_hdr, tp_len);
const H_STATUS: usize = offset_of!(libc::tpacket3_hdr, tp_status);
const H_MAC: usize = offset_of!(libc::tpacket3_hdr, tp_mac);
const H_VLAN_TCI: usize =
    offset_of!(libc::tpacket3_hdr, hv1) + offset_of!(libc::tpacket_hdr_variant1, tp_vlan_tci);
const H_VLAN_TPID: usize =
    offset_of!(libc::tpacket3_hdr, hv1) + offset_of!(libc::tpacket_hdr_variant1, tp_vlan_tpid);
/// Bytes of a frame header.
const H_SIZE: usize = std::mem::size_of::<libc::tpacket3_hdr>();
/// Where a TX slot's frame starts: the header, 16-aligned (TPACKET3_HDRLEN minus the
/// sockaddr_ll the kernel reserves for RX only).
pub(crate) const TX_DATA: usize =
    (H_SIZE + libc::TPACKET_ALIGNMENT - 1) & !(libc::TPACKET_ALIGNMENT - 1);

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

    pub(crate) fn req(&self, retire_ms: u32) -> libc::tpacket_req3 {
        libc::tpacket_req3 {
            tp_block_size: self.block_size as u32,
            tp_block_nr: self.block_nr as u32,
            tp_frame_size: self.frame_size as u32,
            tp_frame_nr: self.frame_nr() as u32,
            tp_retire_blk_tov: retire_ms,
            tp_sizeof_priv: 0,
            tp_feature_req_word: 0,
        }
    }
}

/// One entry of an RX block, as found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Entry<'a> {
    /// A whole frame; `vlan` is the (TPID, TCI) the kernel took out of it, if any.
    Frame {
        data: &'a [u8],
        vlan: Option<(u16, u16)>,
    },
    /// A frame cut short by the ring (longer than a block can hold).
    Truncated,
    /// A header or frame outside the block: the rest of the block is skipped.
    Malformed,
}

/// A walk over the frames of one user-owned RX block; survives between batches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct BlockCursor {
    /// Frames in the block.
    num: u32,
    /// Frames already taken.
    taken: u32,
    /// Offset of the next frame header.
    offset: usize,
}

fn read_u32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(
        b.get(at..at.checked_add(4)?)?.try_into().ok()?,
    ))
}

fn read_u16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_ne_bytes(
        b.get(at..at.checked_add(2)?)?.try_into().ok()?,
    ))
}

impl BlockCursor {
    /// Starts a walk over `block` (a retired block's bytes).
    pub(crate) fn start(block: &[u8]) -> BlockCursor {
        match (
            read_u32(block, BLOCK_NUM_PKTS),
            read_u32(block, BLOCK_FIRST),
        ) {
            (Some(num), Some(first)) => BlockCursor {
                num,
                taken: 0,
                offset: first as usize,
            },
            _ => BlockCursor::default(),
        }
    }

    /// Whether every frame of the block was taken.
    pub(crate) fn done(&self) -> bool {
        self.taken >= self.num
    }

    /// The next entry of `block` (the same block `start` was given), or `None` at its
    /// end.
    pub(crate) fn next<'a>(&mut self, block: &'a [u8]) -> Option<Entry<'a>> {
        if self.done() {
            return None;
        }
        self.taken += 1;
        let at = self.offset;
        let Some(entry) = Self::entry(block, at) else {
            self.taken = self.num;
            return Some(Entry::Malformed);
        };
        if !self.done() {
            // Entries follow each other: a zero step would loop, so it points the walk
            // off the block and the next call reports the block malformed.
            self.offset = match read_u32(block, at + H_NEXT) {
                Some(next) if next > 0 => at.saturating_add(next as usize),
                _ => usize::MAX,
            };
        }
        Some(entry)
    }

    fn entry(block: &[u8], at: usize) -> Option<Entry<'_>> {
        if at.checked_add(H_SIZE)? > block.len() {
            return None;
        }
        let snaplen = read_u32(block, at + H_SNAPLEN)? as usize;
        let len = read_u32(block, at + H_LEN)? as usize;
        let status = read_u32(block, at + H_STATUS)?;
        let mac = read_u16(block, at + H_MAC)? as usize;
        let start = at.checked_add(mac)?;
        let data = block.get(start..start.checked_add(snaplen)?)?;
        if snaplen < len {
            return Some(Entry::Truncated);
        }
        let vlan = (status & libc::TP_STATUS_VLAN_VALID != 0).then(|| {
            let tci = read_u32(block, at + H_VLAN_TCI).unwrap_or(0) as u16;
            let tpid = match status & libc::TP_STATUS_VLAN_TPID_VALID {
                0 => 0x8100,
                _ => read_u16(block, at + H_VLAN_TPID).unwrap_or(0x8100),
            };
            (tpid, tci)
        });
        Some(Entry::Frame { data, vlan })
    }
}

/// What one receive batch found besides frames.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RxOutcome {
    pub frames: usize,
    pub bytes: u64,
    pub errors: u64,
    /// A retired block said the kernel dropped frames (TP_STATUS_LOSING).
    pub losing: bool,
}

/// The receive ring: blocks at the start of the mapping.
pub(crate) struct RxRing {
    geo: Geometry,
    /// The next block to read (the kernel retires blocks in order).
    cur: usize,
    /// The walk inside block `cur` when the last batch stopped in it.
    cursor: Option<BlockCursor>,
}

impl RxRing {
    pub(crate) fn new(geo: Geometry) -> RxRing {
        RxRing {
            geo,
            cur: 0,
            cursor: None,
        }
    }

    /// Copies up to `max` frames into packets from `pool` appended to `rx`, handing
    /// finished blocks back to the kernel.
    pub(crate) fn read(
        &mut self,
        map: &Mapping,
        rx: &mut Vec<Packet>,
        max: usize,
        pool: &mut Vec<Packet>,
    ) -> RxOutcome {
        let mut out = RxOutcome::default();
        while out.frames < max {
            let base = map.at(self.cur * self.geo.block_size);
            // SAFETY: `base` is a block start inside the mapping (page aligned), so its
            // status word is inside it and 4-aligned.
            let status = unsafe { status_word(base.add(BLOCK_STATUS)) };
            let s = status.load(Ordering::Acquire);
            if s & libc::TP_STATUS_USER == 0 {
                break;
            }
            out.losing |= s & libc::TP_STATUS_LOSING != 0;
            let finished = {
                // SAFETY: the block is user-owned (status USER, acquired above): the
                // kernel does not write it until we store KERNEL below, after this
                // slice is gone. It lies inside the mapping, which outlives the call.
                let block = unsafe { std::slice::from_raw_parts(base, self.geo.block_size) };
                let cursor = self.cursor.get_or_insert_with(|| BlockCursor::start(block));
                while out.frames < max {
                    match cursor.next(block) {
                        None => break,
                        Some(Entry::Frame { data, vlan }) => {
                            let mut p = pool.pop().unwrap_or_default();
                            p.refill(data);
                            if let Some((tpid, tci)) = vlan {
                                if data.len() < 12 {
                                    out.errors += 1;
                                    pool.push(p);
                                    continue;
                                }
                                let tag = p.insert(12, 4);
                                tag[..2].copy_from_slice(&tpid.to_be_bytes());
                                tag[2..].copy_from_slice(&tci.to_be_bytes());
                            }
                            out.bytes += p.len() as u64;
                            out.frames += 1;
                            rx.push(p);
                        }
                        Some(Entry::Truncated) | Some(Entry::Malformed) => out.errors += 1,
                    }
                }
                cursor.done()
            };
            if !finished {
                break;
            }
            self.cursor = None;
            status.store(libc::TP_STATUS_KERNEL, Ordering::Release);
            self.cur = (self.cur + 1) % self.geo.block_nr;
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

    /// Bytes of frame one slot holds.
    pub(crate) fn capacity(&self) -> usize {
        self.geo.frame_size - TX_DATA
    }

    fn slot(&self, map: &Mapping, i: usize) -> *mut u8 {
        let fpb = self.geo.frames_per_block();
        map.at(self.base + (i / fpb) * self.geo.block_size + (i % fpb) * self.geo.frame_size)
    }

    /// Copies `frame` (at most `capacity()` bytes) into the head slot and requests its
    /// sending; false when the head slot is still the kernel's (ring full).
    pub(crate) fn push(&mut self, map: &Mapping, frame: &[u8]) -> bool {
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
        // SAFETY: the slot is ours (not requested, not being sent) and the kernel reads
        // it only after the SEND_REQUEST store below; header fields and the frame lie
        // inside the slot (TX_DATA + capacity = frame_size), all naturally aligned.
        unsafe {
            slot.add(H_NEXT).cast::<u32>().write(0);
            slot.add(H_LEN).cast::<u32>().write(len as u32);
            slot.add(H_SNAPLEN).cast::<u32>().write(len as u32);
            std::ptr::copy_nonoverlapping(frame.as_ptr(), slot.add(TX_DATA), len);
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
            bytes += u64::from(len);
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

    /// A frame for `block`: bytes, original length, lifted VLAN tag.
    type Spec<'a> = (&'a [u8], u32, Option<(u16, u16)>);

    /// A fake retired block: frames laid out as the kernel does (header, gap, frame).
    fn block(frames: &[Spec<'_>], size: usize) -> Vec<u8> {
        let mut b = vec![0u8; size];
        let first = 48usize;
        b[BLOCK_NUM_PKTS..BLOCK_NUM_PKTS + 4].copy_from_slice(&(frames.len() as u32).to_ne_bytes());
        b[BLOCK_FIRST..BLOCK_FIRST + 4].copy_from_slice(&(first as u32).to_ne_bytes());
        let mut at = first;
        for (k, (data, len, vlan)) in frames.iter().enumerate() {
            let mac = 82usize;
            let total = (mac + data.len() + 15) & !15;
            let next = if k + 1 < frames.len() {
                total as u32
            } else {
                0
            };
            let put32 = |b: &mut Vec<u8>, o: usize, v: u32| {
                b[at + o..at + o + 4].copy_from_slice(&v.to_ne_bytes())
            };
            put32(&mut b, H_NEXT, next);
            put32(&mut b, H_SNAPLEN, data.len() as u32);
            put32(&mut b, H_LEN, *len);
            let mut status = libc::TP_STATUS_USER;
            if let Some((tpid, tci)) = vlan {
                status |= libc::TP_STATUS_VLAN_VALID | libc::TP_STATUS_VLAN_TPID_VALID;
                put32(&mut b, H_VLAN_TCI, u32::from(*tci));
                b[at + H_VLAN_TPID..at + H_VLAN_TPID + 2].copy_from_slice(&tpid.to_ne_bytes());
            }
            put32(&mut b, H_STATUS, status);
            b[at + H_MAC..at + H_MAC + 2].copy_from_slice(&(mac as u16).to_ne_bytes());
            b[at + mac..at + mac + data.len()].copy_from_slice(data);
            at += total;
        }
        b
    }

    fn walk(b: &[u8]) -> Vec<Entry<'_>> {
        let mut c = BlockCursor::start(b);
        let mut out = Vec::new();
        while let Some(e) = c.next(b) {
            out.push(e);
            assert!(out.len() < 1000);
        }
        assert!(c.done());
        out
    }

    #[test]
    fn block_walk_yields_frames_in_order() {
        let f1 = [1u8; 60];
        let f2 = [2u8; 100];
        let b = block(&[(&f1, 60, None), (&f2, 100, Some((0x88a8, 0x2005)))], 4096);
        assert_eq!(
            walk(&b),
            vec![
                Entry::Frame {
                    data: &f1[..],
                    vlan: None
                },
                Entry::Frame {
                    data: &f2[..],
                    vlan: Some((0x88a8, 0x2005))
                },
            ]
        );
    }

    #[test]
    fn truncated_and_malformed_entries_are_reported_not_panicked() {
        let f = [3u8; 64];
        let b = block(&[(&f, 9000, None), (&f, 64, None)], 4096);
        assert_eq!(
            walk(&b),
            vec![
                Entry::Truncated,
                Entry::Frame {
                    data: &f[..],
                    vlan: None
                }
            ]
        );

        // A frame that runs past the block ends the block.
        let mut bad = block(&[(&f, 64, None), (&f, 64, None)], 4096);
        bad[48 + H_SNAPLEN..48 + H_SNAPLEN + 4].copy_from_slice(&100_000u32.to_ne_bytes());
        assert_eq!(walk(&bad), vec![Entry::Malformed]);

        // A zero step with more frames announced.
        let mut zero = block(&[(&f, 64, None), (&f, 64, None)], 4096);
        zero[48 + H_NEXT..48 + H_NEXT + 4].copy_from_slice(&0u32.to_ne_bytes());
        assert_eq!(
            walk(&zero),
            vec![
                Entry::Frame {
                    data: &f[..],
                    vlan: None
                },
                Entry::Malformed
            ]
        );

        // First frame offset outside the block, a huge count, a block too short to
        // hold even its own header.
        let mut off = block(&[(&f, 64, None)], 4096);
        off[BLOCK_FIRST..BLOCK_FIRST + 4].copy_from_slice(&u32::MAX.to_ne_bytes());
        off[BLOCK_NUM_PKTS..BLOCK_NUM_PKTS + 4].copy_from_slice(&u32::MAX.to_ne_bytes());
        assert_eq!(walk(&off), vec![Entry::Malformed]);
        assert_eq!(walk(&[0u8; 10]), vec![]);
        // Steps that run off the end.
        let mut steps = block(&[(&f, 64, None), (&f, 64, None)], 4096);
        steps[48 + H_NEXT..48 + H_NEXT + 4].copy_from_slice(&4090u32.to_ne_bytes());
        assert_eq!(
            walk(&steps),
            vec![
                Entry::Frame {
                    data: &f[..],
                    vlan: None
                },
                Entry::Malformed
            ]
        );
    }

    #[test]
    fn a_walk_resumes_where_it_stopped() {
        let frames: Vec<[u8; 20]> = (0..5u8).map(|i| [i; 20]).collect();
        let spec: Vec<Spec<'_>> = frames.iter().map(|f| (&f[..], 20, None)).collect();
        let b = block(&spec, 4096);
        let mut c = BlockCursor::start(&b);
        let first: Vec<_> = (0..2).map(|_| c.next(&b).unwrap()).collect();
        assert!(!c.done());
        let mut rest = Vec::new();
        while let Some(e) = c.next(&b) {
            rest.push(e);
        }
        assert_eq!(first.len() + rest.len(), 5);
        assert_eq!(
            rest[2],
            Entry::Frame {
                data: &frames[4][..],
                vlan: None
            }
        );
    }

    #[test]
    fn geometry_is_consistent() {
        let g = Geometry {
            block_size: 1 << 16,
            block_nr: 16,
            frame_size: 2048,
        };
        let r = g.req(1);
        assert_eq!(r.tp_frame_nr, 32 * 16);
        assert_eq!(g.bytes(), 1 << 20);
        assert_eq!(TX_DATA, 48);
    }
}
