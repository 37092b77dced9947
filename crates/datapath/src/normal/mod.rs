//! The NORMAL output: a learning L2 switch shared by all workers.
//!
//! # Structure
//!
//! ```text
//! MacTable (Arc<Shared>, one per switch)
//!  ├─ gen:   AtomicU64, the number of changes ever made to the state (a hint, read
//!  │         once per batch by every worker)
//!  ├─ state: Mutex
//!  │   ├─ entries: (VLAN, MAC) → (port, last seen, sequence number)
//!  │   ├─ by_age:  (last seen, sequence number) → (VLAN, MAC)     oldest first
//!  │   ├─ ports:   the switch's ports, sorted
//!  │   └─ log:     the latest changes (set, remove, clear, ports, settings), in order
//!  └─ counters: every live handler's counters, and the totals of those gone
//!
//! NormalSwitch (one per worker, implements NormalHandler)
//!  ├─ view:  (VLAN, MAC) → (port, last seen)   the state's entries as of `seen_gen`
//!  ├─ ports, settings                          the same, as of `seen_gen`
//!  └─ counters (written only by this worker)
//! ```
//!
//! A worker forwards from its own `view`: looking up the source (is it already learned
//! on this port, and recently enough?) and the destination reads worker-local memory
//! only. It takes the state's lock only to *write*, when a source MAC is new, has moved,
//! or is due for an age refresh (at most once per `refresh_ns`, 1 s by default, per MAC);
//! and once per batch when `gen` says another thread changed something, to bring its view
//! up to date. Every write appends to `log`, so bringing a view up to date applies the
//! changes since `seen_gen` one by one; a worker that fell behind the log (it keeps the
//! latest `max(capacity, 1024)` changes) copies the whole state instead. A worker that
//! holds the lock always leaves with its view up to date.
//!
//! Per packet in the common case (source learned here and fresh, destination known):
//! two lookups in a worker-local hash map, one push, one increment of a counter that only
//! this worker writes. No lock, no shared atomic.
//!
//! # Rules
//!
//! For a packet on `in_port`, VLAN `v` (`Field::VlanVid`: 0 untagged, `0x1000 | vid`
//! tagged), source `s` and destination `d`, at time `now`:
//! 1. Learn `(v, s) → in_port` unless `s` is multicast (broadcast included) or zero, or
//!    `in_port` is not one of the switch's ports. An entry still alive on another port
//!    *moves*; a missing or expired one is *learned* (when the table is full, the oldest
//!    entry makes room: *evicted*, or *aged out* if it had expired); an entry alive on
//!    this port has its time set to `now` only once `refresh_ns` has passed since.
//! 2. If `d` is unicast and `(v, d)` is alive on a port: that port, or nothing (counted
//!    as *dropped*) when it is `in_port`. Otherwise: flood, one copy to every switch port
//!    except `in_port`.
//!
//! An entry is alive while `now - last_seen < aging_ns` (300 s by default); expired
//! entries are treated as absent by every lookup and removed by a sweep that each
//! worker runs at most once per `refresh_ns`, from [`NormalSwitch::begin_batch`].
//! [`MacTable::forget_port`] (link down, port removed) and [`MacTable::flush`] remove
//! entries at once; [`MacTable::set_ports`] removes the entries of ports that leave.
//!
//! # Invariants
//!
//! - `entries` and `by_age` hold the same entries; `entries.len() <= capacity`; every
//!   entry's port is in `ports`.
//! - `gen == log_start + log.len()`, and the atomic `gen` equals the state's once its
//!   lock is released. Applying `log` from position `g - log_start` to a copy of the
//!   state as of generation `g` yields the state as it is.
//! - A worker's `view`, `ports` and settings equal the state as of its `seen_gen`.
//!
//! # What a worker may briefly not see, and why that is safe
//!
//! Between another thread's change and this worker's next `begin_batch` (one batch),
//! the worker's view is stale:
//! - a MAC learned or moved elsewhere is unknown or at its old port here: the packet is
//!   flooded (it reaches the right port among others) or goes to the port where the MAC
//!   was a moment ago, as it would have had it arrived a moment earlier;
//! - a refresh made elsewhere is unseen: the entry may look expired here (flood) or due
//!   for refresh (this worker takes the lock, finds it fresh, and changes nothing);
//! - a removal (forget, flush, eviction, aging elsewhere, a port leaving) is unseen: the
//!   worker may send one batch to the port the entry named, as before the removal (a
//!   removed port's transmit drops it);
//! - a port added is not yet in the view: the worker does not learn on it (its packets
//!   still forward) and does not flood to it.
//!
//! No stale view creates an entry: learning is decided again under the lock against the
//! state itself (port set included). At worst a packet is flooded or goes where the MAC
//! was, for one batch.
//!
//! # Decisions copied elsewhere
//!
//! The kernel tier copies NORMAL's decision for a flow whose source is learned and alive
//! on its input port ([`MacTable::resolve`], read only): one port, a flood, or a drop.
//! Such a copy holds while the entries of its source and destination, the ports and the
//! settings stay as they are, so the table tells its [`MacListener`] of every change but
//! refreshes (learned, moved, removed for whatever reason: [`MacChange::Key`]; flush,
//! ports, settings: [`MacChange::All`]) while its lock is still held and before the
//! generation that workers read moves on: a copy is withdrawn before any worker
//! forwards by the change. Frames forwarded by copies keep their sources alive through
//! [`MacTable::refresh`], as a worker's would, and count in the statistics through
//! [`MacTable::credit_elsewhere`].
//!
//! Times are `u64` nanoseconds passed in by the caller; nothing here reads a clock.

mod handler;
mod stats;
mod table;

#[cfg(test)]
mod tests;

pub use handler::NormalSwitch;
pub use stats::NormalStats;
pub use table::{
    mac_key, MacChange, MacEntry, MacListener, MacTable, NormalTo, NormalWhy, Resolved,
};

use std::hash::{BuildHasher, Hasher};

/// Settings of a [`MacTable`]. [`MacTableConfig::normalized`] keeps them in range:
/// `capacity >= 1`, `aging_ns >= 1`, `1 <= refresh_ns <= aging_ns`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MacTableConfig {
    /// Most entries; when full, learning a new MAC evicts the oldest.
    pub capacity: usize,
    /// An entry not seen for this long is gone.
    pub aging_ns: u64,
    /// An entry seen again on its port has its time renewed only once this much has
    /// passed (the rate at which a busy MAC writes the shared state). Keep it well below
    /// `aging_ns`.
    pub refresh_ns: u64,
}

/// Nanoseconds in a second.
pub const SECOND_NS: u64 = 1_000_000_000;

impl Default for MacTableConfig {
    fn default() -> Self {
        MacTableConfig { capacity: 8192, aging_ns: 300 * SECOND_NS, refresh_ns: SECOND_NS }
    }
}

impl MacTableConfig {
    /// The settings brought into range (see the type's comment).
    pub fn normalized(self) -> Self {
        let aging_ns = self.aging_ns.max(1);
        MacTableConfig {
            capacity: self.capacity.max(1),
            aging_ns,
            refresh_ns: self.refresh_ns.clamp(1, aging_ns),
        }
    }
}

/// The 13 bits of `Field::VlanVid` (`OFPVID_PRESENT | VID`).
const VLAN_BITS: u64 = 0x1fff;
/// The 48 bits of a MAC address.
const MAC_BITS: u64 = 0xffff_ffff_ffff;
/// The group (multicast) bit of a MAC address: the low bit of its first octet.
const GROUP_BIT: u64 = 1 << 40;

/// A table key: the VLAN in bits 48..61, the MAC in bits 0..48.
#[inline]
fn pack(vlan: u64, mac: u64) -> u64 {
    ((vlan & VLAN_BITS) << 48) | (mac & MAC_BITS)
}

/// The VLAN and MAC of a packed key.
fn unpack(key: u64) -> (u16, u64) {
    (((key >> 48) & VLAN_BITS) as u16, key & MAC_BITS)
}

/// Whether `mac` is a group address (multicast or broadcast).
#[inline]
fn is_group(mac: u64) -> bool {
    mac & GROUP_BIT != 0
}

/// Whether a source MAC may be learned: unicast and not zero.
#[inline]
fn learnable(mac: u64) -> bool {
    !is_group(mac) && mac & MAC_BITS != 0
}

/// Whether an entry last seen at `last_seen` is alive at `now`.
#[inline]
fn alive(last_seen: u64, now: u64, aging_ns: u64) -> bool {
    now.saturating_sub(last_seen) < aging_ns
}

/// Hashes packed keys for the tables: the seed (random per [`MacTable`], so that MACs
/// chosen on the wire cannot be aimed at one bucket without knowing it) mixed in by
/// murmur3's 64-bit finalizer, a bijection whose every output bit depends on every
/// input bit. Much cheaper than SipHash for one word.
#[derive(Clone, Copy, Debug)]
struct KeyHash {
    seed: u64,
}

impl KeyHash {
    fn random() -> Self {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(0x7065_7265_6772_696e);
        KeyHash { seed: h.finish() }
    }
}

impl BuildHasher for KeyHash {
    type Hasher = KeyHasher;
    fn build_hasher(&self) -> KeyHasher {
        KeyHasher(self.seed)
    }
}

/// The hasher of [`KeyHash`]; takes one `u64`.
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    #[inline]
    fn write_u64(&mut self, k: u64) {
        let mut x = k ^ self.0;
        x ^= x >> 33;
        x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
        x ^= x >> 33;
        x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        x ^= x >> 33;
        self.0 = x;
    }

    /// Not used by the tables (their keys are `u64`); folds bytes in for completeness.
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(w));
        }
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// A hash map from packed keys.
type KeyMap<V> = std::collections::HashMap<u64, V, KeyHash>;
