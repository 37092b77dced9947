//! Meters: rate limiters shared by every worker (OpenFlow 1.3 §5.7), and by the kernel
//! tier when one is attached.
//!
//! Each band is a token bucket, implemented as GCRA (the "virtual scheduling" form of a
//! token bucket) in one `AtomicU64` of its [`BandCell`]: the band keeps its theoretical
//! arrival time `tat` in units of 1/16 ns. A packet costing `inc` units (its packet or
//! byte cost, fixed-point integers computed once from the rate) conforms when
//! `max(tat, now) + inc - now <= tau`, where `tau` is the burst size over the rate; a
//! conforming packet advances `tat` by one compare-exchange. A bucket that has been idle
//! is full (it holds `burst` worth of tokens), exactly as a token bucket refilled at
//! `rate` and capped at `burst` would be.
//!
//! Several workers share one meter correctly because the whole band state is that one
//! atomic word: this is the one atomic read-modify-write the hot path does, and only for
//! packets of metered rules. Time is passed in (`now_ns`, the workers' clock), never read
//! here, so tests are deterministic.
//!
//! **Shared with the kernel.** The kernel tier lends the datapath an array of cells in
//! memory it shares with its program ([`Datapath::set_band_cells`]): a meter set after
//! that, with at most [`KERNEL_BANDS`] bands, takes a block of [`KERNEL_BANDS`] cells
//! there (its [`kernel_slot`](Meter::kernel_slot)), and the program meters with the very
//! same words, integer costs and rule, on the kernel's monotonic clock: the meter adds
//! the pool's clock offset to the workers' time. A flow split between the workers and
//! the kernel therefore draws on one bucket per band. The block goes back to the pool
//! when the meter is dropped (no version holds it any more). Other meters keep their
//! cells on the heap.
//!
//! A packet exceeds a band when the band's bucket lacks tokens for it. Of the exceeded
//! bands the one with the highest rate applies (the first of equal rates): `Drop`, or
//! `DscpRemark`, which raises the drop precedence of an AF DSCP (AFxy, y = 1..3) by
//! `prec_level`, capped at 3. Without the burst flag a band's burst is one second of its
//! rate.
//!
//! [`Datapath::set_band_cells`]: crate::pipeline::Datapath::set_band_cells

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// Units of time per nanosecond in a band's `tat`.
pub const UNITS_PER_NS: u64 = 16;
/// Fixed-point shift of [`BandCell::per_byte`].
pub const BYTE_COST_SHIFT: u32 = 16;
/// Bands of a meter the kernel can run, and cells per kernel meter slot.
pub const KERNEL_BANDS: usize = 4;
/// The cost (and largest burst tolerance) that no packet can fit.
const NEVER: u64 = u64::MAX / 4;

/// [`BandCell::action`]'s low byte: what an exceeding packet undergoes.
pub const CELL_DROP: u64 = 0;
/// [`BandCell::action`]'s low byte for a DSCP remark; the next byte holds `prec_level`.
pub const CELL_REMARK: u64 = 1;

/// One band's state: its GCRA word, the integer costs both sides meter with, and what
/// the kernel counted for it. Laid out as the kernel program's `struct fp_band` (64
/// bytes, one cache line): only `tat` and the kernel's counts change after the band is
/// set up, and a cell is set up before any entry names it.
#[repr(C, align(64))]
#[derive(Debug, Default)]
pub struct BandCell {
    /// Theoretical arrival time, in 1/16 ns of the kernel's monotonic clock (workers'
    /// time plus the pool's offset) or of the workers' clock (cells on the heap).
    pub tat: AtomicU64,
    /// Burst tolerance, in the same units.
    pub tau: AtomicU64,
    /// Cost of a packet (`Pktps`), in units.
    pub per_packet: AtomicU64,
    /// Cost of a byte (`Kbps`), in units << [`BYTE_COST_SHIFT`].
    pub per_byte: AtomicU64,
    /// Bits 0-7: [`CELL_DROP`] or [`CELL_REMARK`]; 8-15: the remark's `prec_level`;
    /// 32-63: the band's rate (the highest exceeded rate applies).
    pub action: AtomicU64,
    /// Frames the kernel program applied this band to, and their bytes.
    pub kernel_packets: AtomicU64,
    pub kernel_bytes: AtomicU64,
    pub reserved: AtomicU64,
}

impl BandCell {
    /// Sets the cell up for `band` of a meter measuring in `unit`, with the burst flag
    /// `burst`: bucket full, kernel counts zero.
    fn set_up(&self, unit: MeterUnit, burst: bool, band: &Band) {
        let per_sec = 1_000_000_000u128 * UNITS_PER_NS as u128;
        let rate = band.rate as u128;
        let (per_packet, per_byte) = match (rate, unit) {
            (0, _) => (NEVER, 0),
            (r, MeterUnit::Pktps) => (((per_sec + r / 2) / r) as u64, 0),
            // kbit/s: a byte is 8 bits of rate * 1000 per second.
            (r, MeterUnit::Kbps) => {
                let num = (per_sec * 8) << BYTE_COST_SHIFT;
                let den = r * 1000;
                (0, ((num + den / 2) / den).min(NEVER as u128) as u64)
            }
        };
        let amount = if burst && band.burst_size > 0 { band.burst_size } else { band.rate } as u128;
        // Burst in packets or kbit over the rate per second: seconds of burst.
        let tau = (amount * per_sec).checked_div(rate).map_or(0, |t| t.min(NEVER as u128) as u64);
        let action = match band.kind {
            BandKind::Drop => CELL_DROP,
            BandKind::DscpRemark { prec_level } => CELL_REMARK | (prec_level as u64) << 8,
        } | (band.rate as u64) << 32;
        self.tau.store(tau, Ordering::Relaxed);
        self.per_packet.store(per_packet, Ordering::Relaxed);
        self.per_byte.store(per_byte, Ordering::Relaxed);
        self.action.store(action, Ordering::Relaxed);
        self.kernel_packets.store(0, Ordering::Relaxed);
        self.kernel_bytes.store(0, Ordering::Relaxed);
        self.tat.store(0, Ordering::Release);
    }

    /// What a packet of `len` bytes costs in this band.
    #[inline]
    pub fn cost(&self, len: usize) -> u64 {
        let per_byte = self.per_byte.load(Ordering::Relaxed);
        let bytes = (len as u64).saturating_mul(per_byte) >> BYTE_COST_SHIFT;
        self.per_packet.load(Ordering::Relaxed).saturating_add(bytes).min(NEVER)
    }
}

/// Cells lent by the kernel tier (see the module comment): blocks of [`KERNEL_BANDS`],
/// handed out by the writer and given back when their meter is dropped.
pub struct BandPool {
    cells: &'static [BandCell],
    free: Mutex<Vec<u32>>,
    /// Added to the workers' time for the kernel's clock.
    offset_ns: u64,
}

impl BandPool {
    /// A pool of `cells` (whole blocks only), whose clock is the workers' plus
    /// `offset_ns`.
    pub fn new(cells: &'static [BandCell], offset_ns: u64) -> BandPool {
        let blocks = (cells.len() / KERNEL_BANDS) as u32;
        BandPool { cells, free: Mutex::new((0..blocks).rev().collect()), offset_ns }
    }

    fn take(&self) -> Option<u32> {
        self.free.lock().unwrap_or_else(PoisonError::into_inner).pop()
    }

    fn block(&self, slot: u32) -> &'static [BandCell] {
        let at = slot as usize * KERNEL_BANDS;
        self.cells.get(at..at + KERNEL_BANDS).unwrap_or(&[])
    }

    /// Blocks not in use.
    pub fn free_blocks(&self) -> usize {
        self.free.lock().unwrap_or_else(PoisonError::into_inner).len()
    }
}

impl std::fmt::Debug for BandPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BandPool")
            .field("cells", &self.cells.len())
            .field("offset_ns", &self.offset_ns)
            .finish()
    }
}

/// Where a meter's cells are.
#[derive(Debug)]
enum Cells {
    Heap(Box<[BandCell]>),
    Kernel { pool: Arc<BandPool>, slot: u32 },
}

/// How a meter measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MeterUnit {
    /// Rates in kbit/s, bursts in kbit.
    Kbps,
    /// Rates in packets/s, bursts in packets.
    Pktps,
}

/// What a band does to a packet that exceeds its rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BandKind {
    Drop,
    DscpRemark { prec_level: u8 },
}

/// One band's configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Band {
    pub kind: BandKind,
    pub rate: u32,
    pub burst_size: u32,
}

/// A band's counter slot.
#[derive(Debug)]
pub(crate) struct BandState {
    pub(crate) counter: u32,
}

/// A meter: bands and their shared state. Replacing a meter starts its buckets full.
#[derive(Debug)]
pub struct Meter {
    pub id: u32,
    pub unit: MeterUnit,
    /// `OFPMF_BURST`: use the bands' `burst_size`.
    pub burst: bool,
    pub bands: Vec<Band>,
    pub(crate) state: Box<[BandState]>,
    pub(crate) counter: u32,
    cells: Cells,
    /// Added to the workers' time before metering (the kernel clock's offset).
    offset_ns: u64,
}

/// The decision for one packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MeterOutcome {
    Pass,
    /// Band `band` (index) applies and drops the packet.
    Drop {
        band: usize,
    },
    /// Band `band` applies: raise the AF drop precedence by `prec_level`.
    Remark {
        band: usize,
        prec_level: u8,
    },
}

impl Meter {
    pub fn new(id: u32, unit: MeterUnit, burst: bool, bands: Vec<Band>) -> Meter {
        let cells: Box<[BandCell]> = bands.iter().map(|_| BandCell::default()).collect();
        for (c, b) in cells.iter().zip(&bands) {
            c.set_up(unit, burst, b);
        }
        Meter {
            id,
            unit,
            burst,
            state: bands.iter().map(|_| BandState { counter: 0 }).collect(),
            bands,
            counter: 0,
            cells: Cells::Heap(cells),
            offset_ns: 0,
        }
    }

    /// Moves the meter's cells into a block of `pool` if it has one free and the meter
    /// fits one (buckets full again); otherwise they stay on the heap.
    pub(crate) fn lend_cells(&mut self, pool: &Arc<BandPool>) {
        if self.bands.len() > KERNEL_BANDS || matches!(self.cells, Cells::Kernel { .. }) {
            return;
        }
        let Some(slot) = pool.take() else {
            return;
        };
        for (c, b) in pool.block(slot).iter().zip(&self.bands) {
            c.set_up(self.unit, self.burst, b);
        }
        self.cells = Cells::Kernel { pool: pool.clone(), slot };
        self.offset_ns = pool.offset_ns;
    }

    /// The block of the kernel's cells the meter meters with (cells `slot *
    /// KERNEL_BANDS ..`), if it has one.
    pub fn kernel_slot(&self) -> Option<u32> {
        match self.cells {
            Cells::Kernel { slot, .. } => Some(slot),
            Cells::Heap(_) => None,
        }
    }

    fn cells(&self) -> &[BandCell] {
        match &self.cells {
            Cells::Heap(c) => c,
            Cells::Kernel { pool, slot } => pool.block(*slot),
        }
    }

    /// What the kernel program counted for band `band`: frames it applied the band to,
    /// and their bytes.
    pub fn kernel_counts(&self, band: usize) -> (u64, u64) {
        match self.cells {
            Cells::Kernel { .. } => self.cells().get(band).map_or((0, 0), |c| {
                (c.kernel_packets.load(Ordering::Relaxed), c.kernel_bytes.load(Ordering::Relaxed))
            }),
            Cells::Heap(_) => (0, 0),
        }
    }

    /// Meters a packet of `len` bytes at `now_ns`, consuming tokens of the bands it fits.
    #[inline]
    pub fn apply(&self, len: usize, now_ns: u64) -> MeterOutcome {
        self.decide(len, now_ns, true)
    }

    /// What [`apply`](Self::apply) would decide, changing nothing (for the tracer).
    pub fn peek(&self, len: usize, now_ns: u64) -> MeterOutcome {
        self.decide(len, now_ns, false)
    }

    fn decide(&self, len: usize, now_ns: u64, consume: bool) -> MeterOutcome {
        let now = now_ns.saturating_add(self.offset_ns).saturating_mul(UNITS_PER_NS);
        let mut applied: Option<usize> = None;
        for (i, (band, cell)) in self.bands.iter().zip(self.cells()).enumerate() {
            let inc = cell.cost(len);
            let tau = cell.tau.load(Ordering::Relaxed);
            let exceeded = if consume {
                !take(&cell.tat, inc, tau, now)
            } else {
                let tat = cell.tat.load(Ordering::Relaxed).max(now);
                tat.saturating_add(inc) - now > tau
            };
            if exceeded
                && applied.is_none_or(|a| self.bands.get(a).is_some_and(|b| band.rate > b.rate))
            {
                applied = Some(i);
            }
        }
        match applied.and_then(|i| self.bands.get(i).map(|b| (i, b))) {
            None => MeterOutcome::Pass,
            Some((band, b)) => match b.kind {
                BandKind::Drop => MeterOutcome::Drop { band },
                BandKind::DscpRemark { prec_level } => MeterOutcome::Remark { band, prec_level },
            },
        }
    }
}

impl Drop for Meter {
    fn drop(&mut self) {
        if let Cells::Kernel { pool, slot } = &self.cells {
            pool.free.lock().unwrap_or_else(PoisonError::into_inner).push(*slot);
        }
    }
}

/// GCRA conformance test and update: true when the packet fits.
#[inline]
fn take(tat: &AtomicU64, inc: u64, tau: u64, now: u64) -> bool {
    let mut cur = tat.load(Ordering::Relaxed);
    loop {
        let next = cur.max(now).saturating_add(inc);
        if next - now > tau {
            return false;
        }
        match tat.compare_exchange_weak(cur, next, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return true,
            Err(c) => cur = c,
        }
    }
}

/// The DSCP after raising its AF drop precedence by `prec_level` (other code points are
/// left as they are).
pub fn remark_dscp(dscp: u8, prec_level: u8) -> u8 {
    let class = dscp >> 3;
    let prec = (dscp >> 1) & 3;
    if (1..=4).contains(&class) && dscp & 1 == 0 && (1..=3).contains(&prec) {
        let p = (prec as u16 + prec_level as u16).min(3) as u8;
        (class << 3) | (p << 1)
    } else {
        dscp
    }
}

/// A drop band of `rate` and `burst_size` (for tests).
#[cfg(test)]
pub(crate) fn drop_band(rate: u32, burst_size: u32) -> Band {
    Band { kind: BandKind::Drop, rate, burst_size }
}

/// Meter `id` with one drop band of `rate` and `burst_size` (for tests).
#[cfg(test)]
pub(crate) fn drop_meter(
    id: u32,
    unit: MeterUnit,
    burst: bool,
    rate: u32,
    burst_size: u32,
) -> Meter {
    Meter::new(id, unit, burst, vec![drop_band(rate, burst_size)])
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    const SEC: u64 = 1_000_000_000;

    /// How many of `n` frames of `len` bytes, all at `t`, `m` passes.
    fn passes(m: &Meter, n: usize, len: usize, t: u64) -> usize {
        (0..n).filter(|_| m.apply(len, t) == MeterOutcome::Pass).count()
    }

    #[test]
    fn pktps_burst_then_rate() {
        let m = drop_meter(1, MeterUnit::Pktps, true, 10, 5);
        let t0 = 1000 * SEC;
        assert_eq!(passes(&m, 8, 64, t0), 5, "a full bucket lets the burst through");
        // 10 pkt/s: one token every 100 ms.
        assert_eq!(m.apply(64, t0 + SEC / 20), MeterOutcome::Drop { band: 0 });
        assert_eq!(m.apply(64, t0 + SEC / 10), MeterOutcome::Pass);
        assert_eq!(m.apply(64, t0 + SEC / 10), MeterOutcome::Drop { band: 0 });
        // Steady 10 pkt/s passes entirely; 20 pkt/s passes half.
        let mut t = t0 + SEC;
        let mut pass = 0;
        for _ in 0..200 {
            t += SEC / 20;
            pass += (m.apply(64, t) == MeterOutcome::Pass) as usize;
        }
        assert!((99..=106).contains(&pass), "{pass}");
    }

    #[test]
    fn kbps_counts_bits_and_default_burst_is_one_second() {
        // 80 kbit/s = 10,000 bytes/s; no burst flag: bucket holds 80 kbit = 10,000 bytes.
        let m = drop_meter(1, MeterUnit::Kbps, false, 80, 0);
        let t0 = 5 * SEC;
        assert_eq!(passes(&m, 20, 1000, t0), 10);
        // 100 ms later: 1,000 bytes more.
        assert_eq!(m.apply(1000, t0 + SEC / 10), MeterOutcome::Pass);
        assert_eq!(m.apply(100, t0 + SEC / 10), MeterOutcome::Drop { band: 0 });
    }

    #[test]
    fn highest_exceeded_band_applies_and_peek_changes_nothing() {
        let m = Meter::new(
            1,
            MeterUnit::Pktps,
            true,
            vec![
                Band { kind: BandKind::DscpRemark { prec_level: 1 }, rate: 10, burst_size: 2 },
                drop_band(20, 4),
            ],
        );
        let t = 3 * SEC;
        assert_eq!(m.peek(64, t), MeterOutcome::Pass);
        assert_eq!(m.apply(64, t), MeterOutcome::Pass);
        assert_eq!(m.apply(64, t), MeterOutcome::Pass);
        assert_eq!(m.peek(64, t), MeterOutcome::Remark { band: 0, prec_level: 1 });
        assert_eq!(m.apply(64, t), MeterOutcome::Remark { band: 0, prec_level: 1 });
        assert_eq!(m.apply(64, t), MeterOutcome::Remark { band: 0, prec_level: 1 });
        assert_eq!(m.apply(64, t), MeterOutcome::Drop { band: 1 });
    }

    #[test]
    fn threads_share_one_meter() {
        let m = Arc::new(drop_meter(1, MeterUnit::Pktps, true, 1000, 100));
        // One simulated clock shared by the threads: 4000 packets over one second.
        let clock = Arc::new(AtomicU64::new(10 * SEC));
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let (m, clock) = (m.clone(), clock.clone());
                std::thread::spawn(move || {
                    (0..1000)
                        .filter(|_| {
                            let t = clock.fetch_add(SEC / 4000, Ordering::Relaxed);
                            m.apply(64, t) == MeterOutcome::Pass
                        })
                        .count()
                })
            })
            .collect();
        let total: usize = handles.into_iter().map(|h| h.join().unwrap()).sum();
        // At most one second at 1000 pkt/s plus the burst of 100, whatever the
        // interleaving; close to it since the clock is nearly monotonic.
        assert!((1050..=1101).contains(&total), "{total}");
    }

    #[test]
    fn costs_are_integer_units_of_the_rate() {
        // 1 Mpkt/s: 16,000 units (1 us) a packet whatever its size; bursts of one second.
        let p = drop_meter(1, MeterUnit::Pktps, false, 1_000_000, 0);
        assert_eq!(p.cells()[0].cost(1500), 16_000);
        assert_eq!(p.cells()[0].tau.load(Ordering::Relaxed), 16 * SEC);
        // 1 Gbit/s: 8 ns a byte, 128 units.
        let k = drop_meter(1, MeterUnit::Kbps, true, 1_000_000, 500);
        assert_eq!(k.cells()[0].cost(64), 64 * 128);
        // 500 kbit at 1 Gbit/s: half a millisecond.
        assert_eq!(k.cells()[0].tau.load(Ordering::Relaxed), SEC / 2000 * UNITS_PER_NS);
        // A rate of 0 passes nothing.
        let z = drop_meter(1, MeterUnit::Pktps, false, 0, 0);
        assert_eq!(z.apply(64, SEC), MeterOutcome::Drop { band: 0 });
    }

    #[test]
    fn a_lent_meter_shares_its_cells_on_the_pool_clock_and_gives_them_back() {
        let cells: &'static [BandCell] =
            Box::leak((0..2 * KERNEL_BANDS).map(|_| BandCell::default()).collect());
        let offset = 7 * SEC;
        let pool = Arc::new(BandPool::new(cells, offset));
        let mut m = drop_meter(1, MeterUnit::Pktps, true, 10, 2);
        m.lend_cells(&pool);
        assert_eq!(m.kernel_slot(), Some(0));
        assert_eq!(pool.free_blocks(), 1);
        let t = 3 * SEC;
        assert_eq!(m.apply(64, t), MeterOutcome::Pass);
        // The word is on the pool's clock: one packet (100 ms) past its time then.
        let inc = SEC / 10 * UNITS_PER_NS;
        assert_eq!(cells[0].tat.load(Ordering::Relaxed), (t + offset) * UNITS_PER_NS + inc);
        // The other side takes the last token from the same word: nothing is left.
        assert!(take(
            &cells[0].tat,
            inc,
            cells[0].tau.load(Ordering::Relaxed),
            (t + offset) * UNITS_PER_NS
        ));
        assert_eq!(m.apply(64, t), MeterOutcome::Drop { band: 0 });
        // What the other side counted shows as the band's.
        cells[0].kernel_packets.store(3, Ordering::Relaxed);
        assert_eq!(m.kernel_counts(0).0, 3);
        // Too many bands for a block: the meter keeps its own cells.
        let mut wide =
            Meter::new(2, MeterUnit::Pktps, false, vec![drop_band(10, 0); KERNEL_BANDS + 1]);
        wide.lend_cells(&pool);
        assert_eq!((wide.kernel_slot(), pool.free_blocks()), (None, 1));
        drop(m);
        assert_eq!(pool.free_blocks(), 2);
    }

    #[test]
    fn remark_raises_af_precedence_only() {
        assert_eq!(remark_dscp(10, 1), 12); // AF11 -> AF12
        assert_eq!(remark_dscp(10, 5), 14); // capped at AF13
        assert_eq!(remark_dscp(46, 1), 46); // EF untouched
        assert_eq!(remark_dscp(0, 2), 0);
    }
}
