//! Counters: per worker, summed when read.
//!
//! Each worker owns a [`WorkerCounters`] and is the only thread that writes it. A counter
//! is an `AtomicU64` updated with a relaxed load and a relaxed store (no read-modify-write,
//! no shared cache line between workers), so the per-packet cost is that of a plain
//! increment; the atomics only make the values readable by another thread. Readers sum
//! every registered worker's value (workers that stop keep their counters registered, so
//! totals never go back).
//!
//! Rules, groups, buckets, meters and bands are counted by a dense slot assigned by the
//! writer ([`SlotAlloc`]). A slot freed by a change is zeroed in every worker and reused
//! only after the publish that retired it has returned: by then no worker can still be
//! crediting it (they have all left the old version, and a worker's exact-match cache
//! never uses an entry of an older version), so the writer's zeroing races with no
//! writer. Counter storage grows in chunks of [`CHUNK`] slots (rules: 64 Ki slots of 32
//! bytes, mapped with huge pages where the kernel gives them), allocated when a worker
//! first credits a slot of the chunk.
//!
//! A worker adds the counters every packet touches (packets seen, cache hits and misses,
//! table 0's lookups and matches, the input port's receive counts) to a `Tally` first
//! and moves the sums to its counters at the end of each batch: readers see them once
//! the batch is over, as they see everything else of a batch.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use crate::parse::ParseError;

/// Slots per storage chunk.
pub const CHUNK: usize = 1024;
/// Most rule slots.
pub const MAX_RULES: usize = 1 << 24;
/// Most group, bucket, meter and band slots (each).
pub const MAX_OBJECTS: usize = 1 << 20;
/// Distinct parse error kinds counted per worker.
const PARSE_SLOTS: usize = 32;

/// Rule slots per chunk (as a shift): 64 Ki slots of 32 bytes, one 2 MiB huge page.
const RULE_CHUNK_SHIFT: u32 = 16;
/// A huge page (x86-64, aarch64 with 4 KiB pages).
const HUGE_PAGE: usize = 2 << 20;

/// One chunk of slots of `N` counters: a boxed slice, or (for rules) memory mapped on
/// its own with the kernel asked for huge pages, because a million rules' counters are
/// read at random and a TLB miss per packet costs as much as the cache miss.
enum Chunk<const N: usize> {
    Boxed(Box<[[AtomicU64; N]]>),
    Mapped(Mapped<N>),
}

impl<const N: usize> Chunk<N> {
    fn new(slots: usize, huge: bool) -> Self {
        match huge.then(|| Mapped::new(slots)).flatten() {
            Some(m) => Chunk::Mapped(m),
            None => Chunk::Boxed(
                (0..slots).map(|_| std::array::from_fn(|_| AtomicU64::new(0))).collect(),
            ),
        }
    }

    #[inline]
    fn slots(&self) -> &[[AtomicU64; N]] {
        match self {
            Chunk::Boxed(b) => b,
            Chunk::Mapped(m) => m.slots(),
        }
    }
}

/// `len` slots in an anonymous mapping of their own, aligned to [`HUGE_PAGE`].
struct Mapped<const N: usize> {
    ptr: std::ptr::NonNull<[AtomicU64; N]>,
    len: usize,
}

// SAFETY: the mapping holds only atomics and is owned by this value alone.
unsafe impl<const N: usize> Send for Mapped<N> {}
// SAFETY: shared access only reads or writes the atomics.
unsafe impl<const N: usize> Sync for Mapped<N> {}

impl<const N: usize> Mapped<N> {
    #[cfg(target_os = "linux")]
    fn new(len: usize) -> Option<Self> {
        let bytes = len
            .checked_mul(std::mem::size_of::<[AtomicU64; N]>())?
            .checked_next_multiple_of(HUGE_PAGE)?;
        let total = bytes.checked_add(HUGE_PAGE)?;
        // SAFETY: a new private anonymous mapping; no memory in use is affected.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                total,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return None;
        }
        let start = p as usize;
        let aligned = start.next_multiple_of(HUGE_PAGE);
        let (head, tail) = (aligned - start, total - (aligned - start) - bytes);
        // SAFETY: unmaps only the parts of the mapping just made outside the aligned
        // range kept; munmap of a valid range of our own cannot fail harmfully. The
        // advice only asks for huge pages (failure leaves ordinary pages).
        unsafe {
            if head > 0 {
                libc::munmap(p, head);
            }
            if tail > 0 {
                libc::munmap((aligned + bytes) as *mut libc::c_void, tail);
            }
            libc::madvise(aligned as *mut libc::c_void, bytes, libc::MADV_HUGEPAGE);
        }
        let ptr = std::ptr::NonNull::new(aligned as *mut [AtomicU64; N])?;
        Some(Mapped { ptr, len })
    }

    #[cfg(not(target_os = "linux"))]
    fn new(_len: usize) -> Option<Self> {
        None
    }

    #[inline]
    fn slots(&self) -> &[[AtomicU64; N]] {
        // SAFETY: `ptr` starts a live mapping of at least `len` slots, zero-filled by the
        // kernel (a valid `AtomicU64` 0), page aligned, and unmapped only by `drop`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<const N: usize> Drop for Mapped<N> {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        {
            let bytes =
                (self.len * std::mem::size_of::<[AtomicU64; N]>()).next_multiple_of(HUGE_PAGE);
            // SAFETY: the range is exactly what `new` kept mapped; no reference to it
            // outlives `self`.
            unsafe {
                libc::munmap(self.ptr.as_ptr() as *mut libc::c_void, bytes);
            }
        }
    }
}

/// Slots of `N` counters each, allocated a chunk at a time.
pub struct CounterArray<const N: usize> {
    chunks: Box<[OnceLock<Chunk<N>>]>,
    /// Slots per chunk, as a shift.
    shift: u32,
    /// Whether chunks are mapped with huge pages.
    huge: bool,
}

impl<const N: usize> CounterArray<N> {
    /// Room for `max_slots` slots, in chunks of [`CHUNK`] slots.
    pub fn new(max_slots: usize) -> Self {
        Self::with_chunks(max_slots, CHUNK.trailing_zeros(), false)
    }

    fn with_chunks(max_slots: usize, shift: u32, huge: bool) -> Self {
        CounterArray {
            chunks: (0..max_slots.div_ceil(1 << shift)).map(|_| OnceLock::new()).collect(),
            shift,
            huge,
        }
    }

    /// The counters of `slot`, allocating its chunk if needed (writer side).
    #[inline]
    fn slot_mut(&self, slot: u32) -> Option<&[AtomicU64; N]> {
        let s = slot as usize;
        let chunk = self
            .chunks
            .get(s >> self.shift)?
            .get_or_init(|| Chunk::new(1 << self.shift, self.huge));
        chunk.slots().get(s & ((1 << self.shift) - 1))
    }

    /// The counters of `slot` if any were ever written (reader side).
    #[inline]
    pub fn get(&self, slot: u32) -> Option<&[AtomicU64; N]> {
        let s = slot as usize;
        self.chunks.get(s >> self.shift)?.get()?.slots().get(s & ((1 << self.shift) - 1))
    }

    /// Adds `d` to counter `k` of `slot`. Only the owning worker may call this.
    #[inline]
    pub fn add(&self, slot: u32, k: usize, d: u64) {
        if let Some(c) = self.slot_mut(slot).and_then(|s| s.get(k)) {
            c.store(c.load(Ordering::Relaxed).wrapping_add(d), Ordering::Relaxed);
        }
    }

    /// Sets counter `k` of `slot` to `v`. Only the owning worker may call this.
    #[inline]
    pub fn set(&self, slot: u32, k: usize, v: u64) {
        if let Some(c) = self.slot_mut(slot).and_then(|s| s.get(k)) {
            c.store(v, Ordering::Relaxed);
        }
    }

    /// Hints the CPU to fetch the line holding `slot`'s counters (a batch does this for
    /// the rules of its packets before crediting them).
    #[inline]
    pub(crate) fn prefetch(&self, slot: u32) {
        if let Some(s) = self.get(slot) {
            crate::prefetch::prefetch(s.as_ptr());
        }
    }

    /// Counter `k` of `slot` (0 when never written).
    #[inline]
    pub fn read(&self, slot: u32, k: usize) -> u64 {
        self.get(slot).and_then(|s| s.get(k)).map_or(0, |c| c.load(Ordering::Relaxed))
    }

    /// Zeroes `slot` (only while no worker can write it; see the module comment).
    pub fn zero(&self, slot: u32) {
        if let Some(s) = self.get(slot) {
            for c in s {
                c.store(0, Ordering::Relaxed);
            }
        }
    }
}

/// Counters that are not per object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(usize)]
pub enum Misc {
    /// Packets processed.
    Packets,
    /// Packets whose parse stopped early (also counted per reason).
    ParseErrors,
    /// No rule matched and the miss behaviour drops.
    TableMissDrops,
    /// Received on a port with `no_recv`.
    NoRecvDrops,
    /// Dropped by a meter band.
    MeterDrops,
    /// TTL expired (also when sent to the controller).
    InvalidTtl,
    /// Packet-ins queued.
    PacketIns,
    /// Packet-ins lost because the queue was full.
    PacketInDropped,
    /// Output to the ingress port by number (OpenFlow drops it; IN_PORT must be used).
    OutputToInPortDrops,
    /// Output to a port with `no_fwd`, to an unknown port, or to an unusable reserved
    /// port.
    OutputDrops,
    /// Rewrites skipped because the packet lacked the header.
    MissingHeader,
    /// Group actions naming an absent group, or chains deeper than `group::MAX_DEPTH`.
    GroupDrops,
    CacheHits,
    CacheMisses,
    /// Packets forwarded or dropped by the in-kernel tier (also counted as packets).
    KernelHits,
}

impl Misc {
    pub const ALL: [Misc; 15] = [
        Misc::Packets,
        Misc::ParseErrors,
        Misc::TableMissDrops,
        Misc::NoRecvDrops,
        Misc::MeterDrops,
        Misc::InvalidTtl,
        Misc::PacketIns,
        Misc::PacketInDropped,
        Misc::OutputToInPortDrops,
        Misc::OutputDrops,
        Misc::MissingHeader,
        Misc::GroupDrops,
        Misc::CacheHits,
        Misc::CacheMisses,
        Misc::KernelHits,
    ];

    /// A short snake_case name, for statistics output.
    pub const fn name(self) -> &'static str {
        match self {
            Misc::Packets => "packets",
            Misc::ParseErrors => "parse_errors",
            Misc::TableMissDrops => "table_miss_drops",
            Misc::NoRecvDrops => "no_recv_drops",
            Misc::MeterDrops => "meter_drops",
            Misc::InvalidTtl => "invalid_ttl",
            Misc::PacketIns => "packet_ins",
            Misc::PacketInDropped => "packet_in_dropped",
            Misc::OutputToInPortDrops => "output_to_in_port_drops",
            Misc::OutputDrops => "output_drops",
            Misc::MissingHeader => "missing_header",
            Misc::GroupDrops => "group_drops",
            Misc::CacheHits => "cache_hits",
            Misc::CacheMisses => "cache_misses",
            Misc::KernelHits => "kernel_hits",
        }
    }
}

/// Rule counter indices.
pub(crate) const PACKETS: usize = 0;
pub(crate) const BYTES: usize = 1;
pub(crate) const LAST_USED: usize = 2;
/// Port counter indices.
pub(crate) const RX_PACKETS: usize = 0;
pub(crate) const RX_BYTES: usize = 1;
pub(crate) const TX_PACKETS: usize = 2;
pub(crate) const TX_BYTES: usize = 3;

/// One worker's counters.
pub struct WorkerCounters {
    /// Per rule: packets, bytes, last used, and a spare counter that makes a slot 32
    /// bytes, so that no slot spans two cache lines.
    pub(crate) rules: CounterArray<4>,
    /// Per table: lookups, matches.
    pub(crate) tables: CounterArray<2>,
    pub(crate) groups: CounterArray<2>,
    pub(crate) buckets: CounterArray<2>,
    pub(crate) meters: CounterArray<2>,
    pub(crate) bands: CounterArray<2>,
    pub(crate) ports: CounterArray<4>,
    misc: [AtomicU64; Misc::ALL.len()],
    parse_kinds: [OnceLock<ParseError>; PARSE_SLOTS],
    parse_counts: [AtomicU64; PARSE_SLOTS],
    /// The name of the thread that created the counters (a worker registers its
    /// counters on its own thread; the runtime names its threads `worker{i}`), for
    /// statistics output.
    thread: Option<String>,
}

impl Default for WorkerCounters {
    fn default() -> Self {
        WorkerCounters {
            rules: CounterArray::with_chunks(MAX_RULES, RULE_CHUNK_SHIFT, true),
            tables: CounterArray::new(256),
            groups: CounterArray::new(MAX_OBJECTS),
            buckets: CounterArray::new(MAX_OBJECTS),
            meters: CounterArray::new(MAX_OBJECTS),
            bands: CounterArray::new(MAX_OBJECTS),
            ports: CounterArray::new(crate::pipeline::MAX_PORT_SLOTS),
            misc: std::array::from_fn(|_| AtomicU64::new(0)),
            parse_kinds: std::array::from_fn(|_| OnceLock::new()),
            parse_counts: std::array::from_fn(|_| AtomicU64::new(0)),
            thread: std::thread::current().name().map(str::to_string),
        }
    }
}

impl WorkerCounters {
    /// Counters registered under `name` rather than the current thread's name.
    pub(crate) fn named(name: &str) -> WorkerCounters {
        WorkerCounters { thread: Some(name.to_string()), ..WorkerCounters::default() }
    }

    #[inline]
    pub(crate) fn misc(&self, m: Misc, d: u64) {
        if let Some(c) = self.misc.get(m as usize) {
            c.store(c.load(Ordering::Relaxed).wrapping_add(d), Ordering::Relaxed);
        }
    }

    /// Hints the CPU to fetch rule slot `id`'s counters.
    #[inline]
    pub(crate) fn prefetch_rule(&self, id: u32) {
        self.rules.prefetch(id)
    }

    /// Credits rule slot `id` with `packets` packets of `bytes` bytes in all, the last
    /// seen at `now`.
    #[inline]
    pub(crate) fn credit_rule(&self, id: u32, packets: u64, bytes: u64, now: u64) {
        if let Some([p, b, t, _]) = self.rules.slot_mut(id) {
            p.store(p.load(Ordering::Relaxed).wrapping_add(packets), Ordering::Relaxed);
            b.store(b.load(Ordering::Relaxed).wrapping_add(bytes), Ordering::Relaxed);
            t.store(now, Ordering::Relaxed);
        }
    }

    pub(crate) fn read_misc(&self, m: Misc) -> u64 {
        self.misc.get(m as usize).map_or(0, |c| c.load(Ordering::Relaxed))
    }

    /// Counts a parse error by its kind (the first [`PARSE_SLOTS`] kinds seen get their
    /// own counter; a kind is registered once, then found by comparison).
    pub(crate) fn parse_error(&self, e: ParseError) {
        self.misc(Misc::ParseErrors, 1);
        for (k, c) in self.parse_kinds.iter().zip(&self.parse_counts) {
            let kind = match k.get() {
                Some(kind) => *kind,
                None => *k.get_or_init(|| e),
            };
            if kind == e {
                c.store(c.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
                return;
            }
        }
    }

    fn parse_errors(&self) -> impl Iterator<Item = (ParseError, u64)> + '_ {
        self.parse_kinds
            .iter()
            .zip(&self.parse_counts)
            .filter_map(|(k, c)| k.get().map(|k| (*k, c.load(Ordering::Relaxed))))
    }
}

/// Packets and bytes of a run of packets on one port slot, to be added to counters
/// `first` (packets) and `first + 1` (bytes) of the slot.
#[derive(Clone, Copy, Debug, Default)]
struct PortRun {
    slot: Option<u16>,
    counts: [u64; 2],
}

impl PortRun {
    #[inline]
    fn add(&mut self, c: Option<&WorkerCounters>, first: usize, slot: u16, bytes: u64) {
        if self.slot != Some(slot) {
            if let Some(c) = c {
                self.flush(c, first);
            }
            self.slot = Some(slot);
        }
        self.counts[0] += 1;
        self.counts[1] += bytes;
    }

    fn flush(&mut self, c: &WorkerCounters, first: usize) {
        if let Some(s) = self.slot.take() {
            c.ports.add(s as u32, first, self.counts[0]);
            c.ports.add(s as u32, first + 1, self.counts[1]);
        }
        self.counts = [0; 2];
    }
}

/// Rule credits held back before they reach the counters.
const HELD_RULES: usize = 32;

/// Rule credits not yet added to the counters: one entry per run of consecutive credits
/// to the same rule (packets of one flow arrive together, so most of a batch of one flow
/// costs one counter update), all with the batch's `now`. Holding a credit back until
/// the end of the batch also gives the prefetch of its counters, issued when it is held,
/// the rest of the batch to arrive instead of stalling the packet's store.
#[derive(Clone, Copy, Debug, Default)]
struct HeldRules {
    len: usize,
    now: u64,
    ids: [u32; HELD_RULES],
    packets: [u64; HELD_RULES],
    bytes: [u64; HELD_RULES],
}

impl HeldRules {
    #[inline]
    fn add(&mut self, c: &WorkerCounters, id: u32, bytes: u64, now: u64) {
        if let Some(last) = self.len.checked_sub(1) {
            if self.ids.get(last) == Some(&id) && self.now == now {
                if let (Some(p), Some(b)) = (self.packets.get_mut(last), self.bytes.get_mut(last)) {
                    *p += 1;
                    *b += bytes;
                    return;
                }
            }
        }
        if self.len >= HELD_RULES || (self.len > 0 && self.now != now) {
            self.flush(c);
        }
        let i = self.len;
        if let (Some(r), Some(p), Some(b)) =
            (self.ids.get_mut(i), self.packets.get_mut(i), self.bytes.get_mut(i))
        {
            *r = id;
            *p = 1;
            *b = bytes;
            self.len += 1;
            self.now = now;
            c.rules.prefetch(id);
        }
    }

    fn flush(&mut self, c: &WorkerCounters) {
        let n = self.len.min(HELD_RULES);
        for ((&id, &p), &b) in self.ids[..n].iter().zip(&self.packets[..n]).zip(&self.bytes[..n]) {
            c.credit_rule(id, p, b, self.now);
        }
        self.len = 0;
    }
}

/// Counts of one batch not yet added to the worker's counters (see the module comment).
/// Only counters whose packets mostly add to the same few places are tallied: packets
/// seen, cache hits and misses, table 0, runs of packets on one input or output port,
/// and rule credits (see `HeldRules`).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Tally {
    pub packets: u64,
    pub cache_hits: u64,
    pub cache_misses: u64,
    /// Table 0: lookups, matches.
    pub table0: [u64; 2],
    rx: PortRun,
    tx: PortRun,
    rules: HeldRules,
}

impl Tally {
    /// Counts a packet of `bytes` received on port slot `slot` (`c`: where a run that
    /// ends goes).
    #[inline]
    pub fn rx(&mut self, c: Option<&WorkerCounters>, slot: u16, bytes: u64) {
        self.rx.add(c, RX_PACKETS, slot, bytes)
    }

    /// Counts a packet of `bytes` sent to port slot `slot`.
    #[inline]
    pub fn tx(&mut self, c: Option<&WorkerCounters>, slot: u16, bytes: u64) {
        self.tx.add(c, TX_PACKETS, slot, bytes)
    }

    /// Credits rule slot `id` with one packet of `bytes` bytes seen at `now` (`c`: where
    /// credits go when too many are held).
    #[inline]
    pub fn rule(&mut self, c: &WorkerCounters, id: u32, bytes: u64, now: u64) {
        self.rules.add(c, id, bytes, now)
    }

    /// Adds everything to `c` and starts again from zero.
    pub fn flush(&mut self, c: &WorkerCounters) {
        self.rules.flush(c);
        let add = |m: Misc, n: u64| {
            if n > 0 {
                c.misc(m, n)
            }
        };
        add(Misc::Packets, self.packets);
        add(Misc::CacheHits, self.cache_hits);
        add(Misc::CacheMisses, self.cache_misses);
        if self.table0[0] > 0 {
            c.tables.add(0, 0, self.table0[0]);
            c.tables.add(0, 1, self.table0[1]);
        }
        self.rx.flush(c, RX_PACKETS);
        self.tx.flush(c, TX_PACKETS);
        *self = Tally::default();
    }
}

/// Packets and bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub packets: u64,
    pub bytes: u64,
}

/// A rule's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RuleStats {
    pub packets: u64,
    pub bytes: u64,
    /// Latest `now_ns` a packet matched (0: never).
    pub last_used_ns: u64,
}

/// A table's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TableStats {
    pub lookups: u64,
    pub matched: u64,
}

/// A port's counters as the pipeline sees them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortStats {
    pub rx_packets: u64,
    pub rx_bytes: u64,
    pub tx_packets: u64,
    pub tx_bytes: u64,
}

/// One worker's counters that are not per object (read by `Datapath::read_workers`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkerStats {
    /// The worker's place in registration order (0: the first `Datapath::worker` call).
    pub index: usize,
    /// The name of the thread that registered the worker, if it had one (the runtime's
    /// threads are `worker{i}`; the agent's own worker, which runs packet-outs, is
    /// created on the thread that built the agent).
    pub thread: Option<String>,
    /// Every [`Misc`] counter, in [`Misc::ALL`] order (read with [`WorkerStats::get`]).
    pub misc: [u64; Misc::ALL.len()],
    /// Parse errors by kind, in the order the worker first saw them (kinds never seen
    /// are absent).
    pub parse_errors: Vec<(ParseError, u64)>,
}

impl WorkerStats {
    /// The worker's counter `m`.
    pub fn get(&self, m: Misc) -> u64 {
        self.misc.get(m as usize).copied().unwrap_or(0)
    }
}

/// Sums over workers.
pub(crate) struct Sum<'a>(pub &'a [std::sync::Arc<WorkerCounters>]);

impl Sum<'_> {
    fn two(&self, f: impl Fn(&WorkerCounters) -> &CounterArray<2>, slot: u32) -> Stats {
        let mut s = Stats::default();
        for w in self.0 {
            s.packets += f(w).read(slot, PACKETS);
            s.bytes += f(w).read(slot, BYTES);
        }
        s
    }

    pub fn rule(&self, slot: u32) -> RuleStats {
        let mut s = RuleStats::default();
        for w in self.0 {
            s.packets += w.rules.read(slot, PACKETS);
            s.bytes += w.rules.read(slot, BYTES);
            s.last_used_ns = s.last_used_ns.max(w.rules.read(slot, LAST_USED));
        }
        s
    }

    pub fn table(&self, t: u8) -> TableStats {
        let s = self.two(|w| &w.tables, t as u32);
        TableStats { lookups: s.packets, matched: s.bytes }
    }

    pub fn group(&self, slot: u32) -> Stats {
        self.two(|w| &w.groups, slot)
    }

    pub fn bucket(&self, slot: u32) -> Stats {
        self.two(|w| &w.buckets, slot)
    }

    pub fn meter(&self, slot: u32) -> Stats {
        self.two(|w| &w.meters, slot)
    }

    pub fn band(&self, slot: u32) -> Stats {
        self.two(|w| &w.bands, slot)
    }

    pub fn port(&self, slot: u16) -> PortStats {
        let mut s = PortStats::default();
        for w in self.0 {
            s.rx_packets += w.ports.read(slot as u32, RX_PACKETS);
            s.rx_bytes += w.ports.read(slot as u32, RX_BYTES);
            s.tx_packets += w.ports.read(slot as u32, TX_PACKETS);
            s.tx_bytes += w.ports.read(slot as u32, TX_BYTES);
        }
        s
    }

    pub fn misc(&self, m: Misc) -> u64 {
        self.0.iter().map(|w| w.read_misc(m)).sum()
    }

    /// Each worker's own counters (not summed), in registration order.
    pub fn workers(&self) -> Vec<WorkerStats> {
        self.0
            .iter()
            .enumerate()
            .map(|(index, w)| WorkerStats {
                index,
                thread: w.thread.clone(),
                misc: Misc::ALL.map(|m| w.read_misc(m)),
                parse_errors: w.parse_errors().collect(),
            })
            .collect()
    }

    pub fn parse_errors(&self) -> Vec<(ParseError, u64)> {
        let mut out: Vec<(ParseError, u64)> = Vec::new();
        for w in self.0 {
            for (k, n) in w.parse_errors() {
                match out.iter_mut().find(|(e, _)| *e == k) {
                    Some((_, t)) => *t += n,
                    None => out.push((k, n)),
                }
            }
        }
        out
    }
}

/// Dense slot numbers with delayed reuse: a retired slot becomes free only when
/// [`SlotAlloc::release`] is called after the publish that retired it.
#[derive(Debug)]
pub(crate) struct SlotAlloc {
    next: u32,
    max: u32,
    free: Vec<u32>,
    retiring: Vec<u32>,
}

impl SlotAlloc {
    pub fn new(max: usize) -> SlotAlloc {
        SlotAlloc {
            next: 0,
            max: max.min(u32::MAX as usize) as u32,
            free: Vec::new(),
            retiring: Vec::new(),
        }
    }

    pub fn alloc(&mut self) -> Option<u32> {
        if let Some(s) = self.free.pop() {
            return Some(s);
        }
        if self.next < self.max {
            self.next += 1;
            Some(self.next - 1)
        } else {
            None
        }
    }

    pub fn retire(&mut self, slot: u32) {
        self.retiring.push(slot);
    }

    /// How many slots are retired and not yet released.
    pub fn retiring_len(&self) -> usize {
        self.retiring.len()
    }

    /// Takes back the retirements after the first `n` (their objects live again).
    pub fn unretire_after(&mut self, n: usize) {
        self.retiring.truncate(n);
    }

    /// Moves the retired slots to the free list, returning them (to be zeroed first).
    /// When every slot handed out is free again (a table of a million rules deleted),
    /// numbering restarts from 0 and the free list's memory goes back.
    pub fn release(&mut self) -> Vec<u32> {
        let r = std::mem::take(&mut self.retiring);
        self.free.extend_from_slice(&r);
        if self.free.len() == self.next as usize {
            self.free = Vec::new();
            self.next = 0;
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn slots_restart_from_zero_once_all_are_free() {
        let mut a = SlotAlloc::new(10);
        let s: Vec<u32> = (0..4).map(|_| a.alloc().unwrap()).collect();
        assert_eq!(s, vec![0, 1, 2, 3]);
        a.retire(1);
        a.retire(3);
        assert_eq!(a.alloc(), Some(4), "retired slots wait for the release");
        assert_eq!(a.release(), vec![1, 3]);
        assert_eq!(a.alloc(), Some(3));
        for k in [0, 2, 3, 4] {
            a.retire(k);
        }
        a.release();
        assert_eq!(a.free.capacity(), 0);
        assert_eq!((a.alloc(), a.alloc()), (Some(0), Some(1)));
    }

    #[test]
    fn held_rule_credits_merge_runs_and_reach_the_counters() {
        let w = WorkerCounters::default();
        let mut t = Tally::default();
        // Slots in two huge-page chunks; 40 credits overflow the held entries.
        for i in 0..40u32 {
            let id = if i % 3 == 2 { 70_000 + i } else { 7 };
            t.rule(&w, id, 64, 99);
        }
        t.flush(&w);
        let s = Sum(&[Arc::new(w)]);
        assert_eq!(s.rule(7).packets, 27);
        assert_eq!(s.rule(7).bytes, 27 * 64);
        assert_eq!(s.rule(7).last_used_ns, 99);
        assert_eq!(s.rule(70_002).packets, 1);
        assert_eq!(s.rule(70_003).packets, 0);
    }

    #[test]
    fn sums_over_workers_and_zeroes() {
        let ws: Vec<Arc<WorkerCounters>> = (0..3).map(|_| Arc::default()).collect();
        for (i, w) in ws.iter().enumerate() {
            w.rules.add(5000, PACKETS, 1 + i as u64);
            w.rules.add(5000, BYTES, 100);
            w.rules.set(5000, LAST_USED, 10 * i as u64);
            w.misc(Misc::Packets, 2);
        }
        let sum = Sum(&ws);
        assert_eq!(sum.rule(5000), RuleStats { packets: 6, bytes: 300, last_used_ns: 20 });
        assert_eq!(sum.rule(1), RuleStats::default());
        assert_eq!(sum.misc(Misc::Packets), 6);
        for w in &ws {
            w.rules.zero(5000);
        }
        assert_eq!(Sum(&ws).rule(5000), RuleStats::default());
        assert_eq!(sum.rule(u32::MAX), RuleStats::default(), "out of range reads 0");
        ws[0].rules.add(u32::MAX, PACKETS, 1);
    }

    #[test]
    fn parse_errors_by_kind() {
        let w = Arc::new(WorkerCounters::default());
        w.parse_error(ParseError::TruncatedEthernet);
        w.parse_error(ParseError::TruncatedEthernet);
        let ws = [w];
        assert_eq!(Sum(&ws).parse_errors(), vec![(ParseError::TruncatedEthernet, 2)]);
        assert_eq!(Sum(&ws).misc(Misc::ParseErrors), 2);
    }

    #[test]
    fn workers_read_one_by_one_with_their_thread_names() {
        let ws: Vec<Arc<WorkerCounters>> = (0..2)
            .map(|i| {
                std::thread::Builder::new()
                    .name(format!("w{i}"))
                    .spawn(|| Arc::new(WorkerCounters::default()))
                    .unwrap()
                    .join()
                    .unwrap()
            })
            .collect();
        ws[0].misc(Misc::Packets, 3);
        ws[1].misc(Misc::Packets, 5);
        ws[1].misc(Misc::CacheHits, 4);
        ws[1].parse_error(ParseError::TruncatedIpv4);
        let got = Sum(&ws).workers();
        assert_eq!(got.len(), 2);
        assert_eq!((got[0].index, got[0].thread.as_deref()), (0, Some("w0")));
        assert_eq!((got[1].index, got[1].thread.as_deref()), (1, Some("w1")));
        assert_eq!(got[0].get(Misc::Packets), 3);
        assert_eq!(got[0].get(Misc::CacheHits), 0);
        assert_eq!(got[0].parse_errors, vec![]);
        assert_eq!(got[1].get(Misc::Packets), 5);
        assert_eq!(got[1].get(Misc::CacheHits), 4);
        assert_eq!(got[1].get(Misc::ParseErrors), 1);
        assert_eq!(got[1].parse_errors, vec![(ParseError::TruncatedIpv4, 1)]);
    }

    #[test]
    fn misc_names_are_distinct_snake_case() {
        let names: Vec<&str> = Misc::ALL.iter().map(|m| m.name()).collect();
        for (i, n) in names.iter().enumerate() {
            assert!(n.chars().all(|c| c.is_ascii_lowercase() || c == '_'), "{n}");
            assert!(!names[..i].contains(n), "{n} twice");
        }
        assert!(Misc::ALL.iter().enumerate().all(|(i, m)| *m as usize == i));
    }

    #[test]
    fn slots_are_reused_only_after_release() {
        let mut a = SlotAlloc::new(3);
        assert_eq!((a.alloc(), a.alloc()), (Some(0), Some(1)));
        a.retire(0);
        assert_eq!(a.alloc(), Some(2));
        assert_eq!(a.alloc(), None);
        assert_eq!(a.release(), vec![0]);
        assert_eq!(a.alloc(), Some(0));
    }
}
