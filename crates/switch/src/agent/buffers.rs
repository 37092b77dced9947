//! Packet buffers: the packets the switch keeps for a while after sending a truncated
//! packet-in, so that a controller can refer to them by `buffer_id` in a packet-out or
//! flow-mod instead of sending them back (OpenFlow 1.3.5 §6.2, §7.4.1).
//!
//! A fixed number of slots is reused round-robin. A buffer id is the slot in its low
//! bits and a generation count above them, so an id whose slot was reused since is
//! recognised as stale (`OFPBRC_BUFFER_UNKNOWN`) rather than releasing some other packet;
//! a packet is released at most once (`OFPBRC_BUFFER_EMPTY` the second time). Buffers
//! older than the timeout are dropped. Invariants: ids are never `OFP_NO_BUFFER`
//! (0xffffffff); `slots.len()` is the capacity given, at most [`MAX_BUFFERS`].

use openflow::{ErrorKind, OfpError};

/// Most buffers a switch keeps (slot bits of an id: 16).
pub const MAX_BUFFERS: usize = 1 << SLOT_BITS;
const SLOT_BITS: u32 = 16;
const SLOT_MASK: u32 = (1 << SLOT_BITS) - 1;
/// Generations wrap below this so that no id is `OFP_NO_BUFFER`.
const MAX_GENERATION: u32 = (u32::MAX >> SLOT_BITS) - 1;

/// A buffered packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Buffered {
    pub in_port: u32,
    pub data: Vec<u8>,
}

enum Slot {
    Empty {
        generation: u32,
    },
    Full {
        generation: u32,
        at: u64,
        packet: Buffered,
    },
    /// Released by a packet-out or flow-mod (so a second use is `BUFFER_EMPTY`).
    Used {
        generation: u32,
    },
}

impl Slot {
    fn generation(&self) -> u32 {
        match self {
            Slot::Empty { generation } | Slot::Used { generation } => *generation,
            Slot::Full { generation, .. } => *generation,
        }
    }
}

/// The switch's packet buffers (see the module comment).
pub struct PacketBuffers {
    slots: Vec<Slot>,
    next: usize,
    timeout_ns: u64,
}

impl PacketBuffers {
    /// `capacity` buffers (capped at [`MAX_BUFFERS`]; 0 buffers nothing), each kept for
    /// at most `timeout_ns`.
    pub fn new(capacity: usize, timeout_ns: u64) -> PacketBuffers {
        PacketBuffers {
            slots: (0..capacity.min(MAX_BUFFERS)).map(|_| Slot::Empty { generation: 0 }).collect(),
            next: 0,
            timeout_ns,
        }
    }

    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Keeps `packet` at `now` and returns its id, or `None` when the next slot holds a
    /// packet younger than the timeout (the switch then sends the whole packet
    /// unbuffered, as OpenFlow asks when it runs out of buffers).
    pub fn store(&mut self, packet: Buffered, now: u64) -> Option<u32> {
        let n = self.slots.len();
        if n == 0 {
            return None;
        }
        let i = self.next;
        let slot = self.slots.get_mut(i)?;
        if let Slot::Full { at, .. } = slot {
            if now.saturating_sub(*at) < self.timeout_ns {
                return None;
            }
        }
        let generation =
            if slot.generation() >= MAX_GENERATION { 0 } else { slot.generation() + 1 };
        *slot = Slot::Full { generation, at: now, packet };
        self.next = (i + 1) % n;
        Some((generation << SLOT_BITS) | i as u32)
    }

    /// Releases the packet of `id` at `now`: `OFPBRC_BUFFER_UNKNOWN` for an id the
    /// switch never gave or whose slot was reused or timed out, `OFPBRC_BUFFER_EMPTY`
    /// for one already used.
    pub fn take(&mut self, id: u32, now: u64) -> Result<Buffered, OfpError> {
        let unknown = || {
            OfpError::new(
                ErrorKind::BAD_REQUEST_BUFFER_UNKNOWN,
                format!("buffer {id:#x} is not held by the switch"),
            )
        };
        let slot = self.slots.get_mut((id & SLOT_MASK) as usize).ok_or_else(unknown)?;
        let generation = id >> SLOT_BITS;
        if slot.generation() != generation {
            return Err(unknown());
        }
        match std::mem::replace(slot, Slot::Used { generation }) {
            Slot::Full { at, packet, .. } if now.saturating_sub(at) < self.timeout_ns => Ok(packet),
            Slot::Full { .. } | Slot::Empty { .. } => Err(unknown()),
            Slot::Used { .. } => Err(OfpError::new(
                ErrorKind::BAD_REQUEST_BUFFER_EMPTY,
                format!("buffer {id:#x} was already used"),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(b: u8) -> Buffered {
        Buffered { in_port: 1, data: vec![b; 60] }
    }

    #[test]
    fn stores_and_releases_once() {
        let mut b = PacketBuffers::new(2, 1000);
        let id = b.store(pkt(1), 0).unwrap();
        assert_ne!(id, u32::MAX);
        assert_eq!(b.take(id, 10).unwrap(), pkt(1));
        assert_eq!(b.take(id, 10).unwrap_err().kind, ErrorKind::BAD_REQUEST_BUFFER_EMPTY);
        assert_eq!(b.take(0xdead, 10).unwrap_err().kind, ErrorKind::BAD_REQUEST_BUFFER_UNKNOWN);
    }

    #[test]
    fn full_buffers_refuse_until_the_timeout_and_reused_ids_are_stale() {
        let mut b = PacketBuffers::new(2, 1000);
        let a = b.store(pkt(1), 0).unwrap();
        let _ = b.store(pkt(2), 0).unwrap();
        assert_eq!(b.store(pkt(3), 500), None);
        let c = b.store(pkt(3), 1000).unwrap();
        assert_eq!(a & SLOT_MASK, c & SLOT_MASK);
        assert_eq!(b.take(a, 1000).unwrap_err().kind, ErrorKind::BAD_REQUEST_BUFFER_UNKNOWN);
        assert_eq!(b.take(c, 1001).unwrap(), pkt(3));
    }

    #[test]
    fn timed_out_buffers_are_unknown_and_no_buffers_store_nothing() {
        let mut b = PacketBuffers::new(1, 1000);
        let a = b.store(pkt(1), 0).unwrap();
        assert_eq!(b.take(a, 1000).unwrap_err().kind, ErrorKind::BAD_REQUEST_BUFFER_UNKNOWN);
        assert_eq!(PacketBuffers::new(0, 1000).store(pkt(1), 0), None);
    }
}
