//! The map sync: keeps the fast-path program's flow map in step with the datapath.
//!
//! [`KernelTier`] is the datapath's [`Mirror`]. Its parts:
//!
//! - **Offers** from the workers go into a bounded queue (a full queue forgets the offer:
//!   the flow's next packet offers it again) and are handled by the tier's own thread:
//!   the decision the published version makes for the key ([`Datapath::decision`],
//!   which refuses what the program cannot redo: the tier's [`Mirror::capabilities`]
//!   are [`CAPABILITIES`](crate::program::CAPABILITIES)), the key the program would
//!   build for such frames ([`FpKey::from_flow_key`]), and the entry that redoes the
//!   decision: rewrites read off the frames before and after, then checked by running
//!   the program's model ([`model::apply`](crate::model::apply)) on the frame before
//!   and comparing with the pipeline's frame after, byte for byte
//!   (`tier/judge.rs`). Only then is the entry written, tagged with the program's
//!   current generation. Keys that cannot be mirrored are remembered until the next
//!   publish, so a flow is judged once per version.
//! - **MPLS**: the program parses MPLS frames (the outermost label stack entry's label,
//!   TC and BoS) and pushes an entry onto frames without a stack, pops the outermost
//!   one, and rewrites its label, TC, BoS and TTL (`entry::entry_for`). What a decision
//!   does with the TTL, which keys do not hold, is read off the decision's frame traced
//!   with other TTLs
//!   ([`Decision::ttl_variants`](datapath::mirror::Decision::ttl_variants),
//!   `entry::mpls_ttl`): kept, set or decremented, and frames of TTL 1 or 0 left to
//!   user space where the decision decrements it; the model must give each variant's
//!   output too (or hand the variant to user space where it goes another way). A push
//!   onto a label stack, two entries pushed, and what reads below a pop (see
//!   [`datapath::mirror::mpls`]) stay in user space.
//! - **Megaflows**: an entry is keyed by the microflow's key under the decision's mask
//!   (the bits its tables consulted, [`Credit::mask`], in program-key form, plus the
//!   fields a rewrite writes whole: see `judge::megaflow_mask`), so it serves every frame equal
//!   to the microflow there, new flows from their first frame. Each distinct mask takes
//!   one of the program's mask slots (see `tier/masks.rs`); when none is free the entry is the
//!   microflow's alone, under the exact mask. An offer already covered by a live entry
//!   is not judged again.
//! - **Publish** (called by the datapath's writer right after workers move to a new
//!   version, before it retires counter slots, with what changed): every entry is first
//!   credited its hits so far, while the rules it names still hold their counter slots.
//!   Then the entries whose decision the changes may alter are removed from the map
//!   before the publish returns, so no rule that was changed or deleted keeps forwarding
//!   after the barrier: an entry is altered when a rule on its path changed or went, or
//!   when an added rule in a table on its path could match a key that table looked up
//!   for a frame of the megaflow, at a priority no lower than the rule it matched. The others keep forwarding. When the
//!   settings changed (ports), or the check would be too long (more than
//!   `MAX_CHECKS` entry and rule pairs), the publish **flushes** instead: it starts a
//!   new generation, and the program treats every entry of an older one as a miss (they
//!   stay in the map until overwritten or evicted). A decision judged in a version that
//!   has been replaced by the time it would be written is dropped (the flow offers
//!   itself again), so every entry written was checked against every change after it.
//! - **Harvest** (every [`HARVEST_EVERY`], at each publish, when statistics or metrics
//!   are read and before the agent expires idle flows): per entry, the counter's growth since the last harvest is credited through
//!   the datapath's [`KernelCounters`] to the rules, tables and ports of its path, with
//!   the harvest time as the rules' last-used time (so idle timeouts see kernel hits).
//!   Growth on an entry after its last harvest at a publish that removed or flushed it
//!   (a frame that was inside the program at that moment) is not credited: its rules
//!   may be gone.
//! - **Capacity**: the flow map is a hash of fixed size that this side fills alone; when
//!   it is full, entries of older generations go first, then the eighth of the live
//!   entries idle longest.
//! - **Broadcast groups**: a decision that sends one frame to several ports (FLOOD, ALL,
//!   a list of outputs) points at one of the program's [`FP_GROUPS`] group maps, which
//!   holds those ports and the input port (the program's broadcast leaves the input port
//!   out, so a flood from any port shares one group). Groups are shared by every entry
//!   with the same port set. A group no live entry uses is given another set only after
//!   [`GROUP_GRACE`], so a frame still inside the program with an entry just removed is
//!   never sent to the new set. With every group in use, such decisions stay in user
//!   space.
//! - **Groups**: a decision through groups is mirrored like any other (the buckets the
//!   worker takes for the microflow, see [`datapath::mirror::groups`]); a publish that
//!   changes a group it ran or watched takes it out like a changed rule, and a port
//!   whose liveness its select or fast-failover choice read going down or up takes it
//!   out at once (`tier/liveness.rs`).
//!
//! - **Meters**: a decision through a meter is mirrored with it when the datapath's
//!   meters meter with this program's band cells (lent at [`KernelTier::new`], see
//!   [`crate::bands`]): the entry names the meter's block of cells and its band count,
//!   and counts the frames its meter dropped in a second counter slot, so a harvest
//!   credits the rules and tables up to the meter with every hit and the rest with what
//!   passed ([`Hits`]). A publish that changes the meter takes the entry out like a
//!   changed rule.
//!
//! - **NORMAL** (the learning switch; the `normal` submodule): a decision through
//!   NORMAL is read off the MAC table attached to the datapath, and holds while the
//!   table's entries for its source and destination, its ports and settings stay as
//!   they are. The tier is the table's listener: a change of any of those withdraws the
//!   entries that read it (credited first) from the table's write path, before workers
//!   see the change; a decision read before such a change is not written. Each change
//!   starts a new offer round ([`Datapath::reoffer`]), so that the flows withdrawn,
//!   refused for the table's sake (source not learned on the input port, which is not
//!   remembered as refused) or not written offer themselves again with their next
//!   packets; the thread also judges the withdrawn ones again at once, for flows that
//!   pause across the change. Harvested hits refresh the sources in the table (outside the tier's
//!   lock), and count in NORMAL's statistics; the thread also removes expired MAC
//!   entries (withdrawing what read them), and harvests at least four times per aging
//!   time.
//!
//! Lock order: the MAC table's, then the tier's; the tier never waits for the MAC
//! table's lock while holding its own.
//!
//! Invariant: every entry in the kernel map is in `Table::entries` with the counter slot
//! (and, metered, the dropped slot) it was written with, and no two entries share a slot; every entry's key is a key
//! under its mask with `pad` its mask slot, and that slot is walked and counts it. A live entry whose output is a
//! broadcast group was written after that group's map was set to its port set, and the
//! group keeps that set while any live entry points at it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use datapath::key::FlowKey;
use datapath::meter::BandPool;
use datapath::mirror::{Capabilities, Changes, Credit, Hits, KernelCounters, Mirror};
use datapath::normal::{MacListener, MacTable};
use datapath::pipeline::Datapath;

use crate::layout::*;
use crate::program::{FastPath, FastPathError};

mod broadcast;
mod entry;
mod judge;
mod liveness;
mod masks;
mod normal;
mod view;

use broadcast::Group;
pub use entry::entry_for;
use judge::{Judged, Refusal};
use masks::Masks;
pub use masks::{MaskUse, MASK_GRACE};
use normal::{Listener, NormalIndex};
pub use view::{DumpEntry, Verdict};

/// How often the tier credits kernel hits without being asked. Whoever reads counters
/// asks first (statistics replies, metrics, idle expiry, dumps), so this only bounds how
/// stale an unread count gets; a harvest walks every entry and the rule counters of the
/// hit ones, memory traffic that slows the program's own lookups among many entries
/// while it runs (measured: 128K flows forwarded 15-40 % slower with a harvest every
/// second).
pub const HARVEST_EVERY: Duration = Duration::from_secs(10);
/// How often the tier's thread refreshes the sources its NORMAL entries saw, removes
/// expired MAC entries and judges waiting flows again.
const CHORES_EVERY: Duration = Duration::from_millis(50);
/// Offers queued for the tier's thread.
const OFFER_QUEUE: usize = 4096;
/// Keys remembered as not mirrorable (cleared when it grows past this).
const REFUSED_MAX: usize = 65_536;
/// Most (entry, added rule) pairs a publish checks; above it the publish flushes.
const MAX_CHECKS: usize = 4_000_000;
/// How long a broadcast group stays unused before it may be given another port set.
pub const GROUP_GRACE: Duration = Duration::from_millis(100);

/// One entry written to the kernel map.
#[derive(Clone, Debug)]
struct Installed {
    entry: FpEntry,
    credit: Credit,
    /// The counter's value at the last harvest.
    base: FpCounter,
    /// With a meter: its dropped counter's value at the last harvest.
    dropped_base: FpCounter,
    /// When its counter last grew (the workers' clock), or when it was written.
    last_hit_ns: u64,
    /// Kernel hits credited so far.
    hits: u64,
    /// The OpenFlow output ports (none: a drop).
    out_ports: Vec<u32>,
    /// The datapath flow key of the microflow it was judged for (with the credit's
    /// mask, what a publish's changes are checked against; what is judged again).
    flow_key: FlowKey,
    /// Its mask's slot (the key is the microflow's under that mask).
    slot: u16,
}

impl Installed {
    /// What its counters grew by since the last call (none: nothing, or a counter that
    /// went back, as a reused slot's may once).
    fn grow(&mut self, fp: &FastPath) -> Option<Hits> {
        let c = fp.counter(self.entry.counter);
        let packets = c.packets.wrapping_sub(self.base.packets);
        let bytes = c.bytes.wrapping_sub(self.base.bytes);
        self.base = c;
        let (dropped, dropped_bytes) = if self.entry.meter != 0 {
            let d = fp.counter(self.entry.dropped);
            let grown = (
                d.packets.wrapping_sub(self.dropped_base.packets),
                d.bytes.wrapping_sub(self.dropped_base.bytes),
            );
            self.dropped_base = d;
            grown
        } else {
            (0, 0)
        };
        if packets == 0 || packets > u64::MAX / 2 || dropped > packets {
            return None;
        }
        Some(Hits { packets, bytes, dropped, dropped_bytes })
    }
}

/// What the tier knows of the kernel map.
struct Table {
    entries: HashMap<FpKey, Installed>,
    free: Vec<u32>,
    /// Keys judged not mirrorable, with the datapath version judged in and why.
    refused: HashMap<FpKey, (u64, String)>,
    /// The datapath version last published: only decisions computed in it are written.
    dp_version: u64,
    /// The program's generation: its entries of another generation are misses. It
    /// changes only when a publish flushes the whole map.
    generation: u64,
    /// The broadcast groups, by number.
    groups: Vec<Group>,
    /// The megaflow mask slots and their walk.
    masks: Masks,
    /// Port liveness changes so far (see `tier/liveness.rs`).
    live_epoch: u64,
    /// Entries removed or replaced so far, and generations ended: the events that can
    /// leave a broadcast group unused.
    removals: u64,
    /// After a search found no free group: `removals` then, and when the first group
    /// found unused will have been so for [`GROUP_GRACE`] (none: every group was used).
    /// Until either changes another search would find none either.
    group_search: Option<(u64, Option<Instant>)>,
    /// NORMAL's entries by the (VLAN, MAC)s they depend on, and its waiting flows.
    normal: NormalIndex,
    stats: TierStats,
}

/// What the tier did, for `dump-fastpath` and metrics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TierStats {
    pub offers: u64,
    pub offers_lost: u64,
    pub installed: u64,
    pub refused: u64,
    /// Decisions whose rewrite the program's model did not reproduce (not installed).
    pub mismatched: u64,
    pub evicted: u64,
    pub publishes: u64,
    /// Entries taken out because a publish changed a rule or group their decision
    /// depends on, or a port whose liveness their group choice read went down or up.
    pub revalidated: u64,
    /// Publishes that made every entry a miss (settings changed, or too many entries
    /// to check).
    pub flushes: u64,
    /// Searches of every entry for a broadcast group no live entry uses.
    pub group_scans: u64,
    /// Entries through NORMAL taken out because the MAC table changed what they depend
    /// on.
    pub mac_withdrawn: u64,
    /// Decisions through NORMAL not written because the MAC table changed what they
    /// depend on after they were read (the flow offers itself again).
    pub mac_stale: u64,
}

/// The in-kernel tier's user-space side (see the module comment).
pub struct KernelTier {
    fp: Arc<FastPath>,
    dp: Datapath,
    /// The learning switch's MAC table, if the datapath has one attached when the tier
    /// is made (the tier is its listener).
    macs: Option<MacTable>,
    counters: KernelCounters,
    table: Mutex<Table>,
    offers: SyncSender<FlowKey>,
    /// Taken by `start`'s thread.
    inbox: Mutex<Option<Receiver<FlowKey>>>,
    started: Instant,
    /// Whether the datapath's meters meter with this program's cells (see
    /// [`crate::bands`]); if not, metered flows stay in user space.
    meters: bool,
    /// Entries are exact microflows only (no megaflows).
    exact: AtomicBool,
    stop: AtomicBool,
    thread: Mutex<Option<JoinHandle<()>>>,
    /// What the MAC table holds (weakly) to tell the tier of its changes.
    listener: Arc<Listener>,
}

impl KernelTier {
    /// The tier for `dp` over the loaded program `fp`; `started` is the workers' clock
    /// origin (the MAC table's too). Call [`start`](Self::start) to run its thread, and
    /// set it as the datapath's mirror. Attach the datapath's MAC table first
    /// ([`Datapath::set_mac_table`]) for NORMAL's decisions to be mirrored: the tier
    /// becomes its listener.
    pub fn new(fp: Arc<FastPath>, dp: Datapath, started: Instant) -> Arc<KernelTier> {
        let (tx, rx) = sync_channel(OFFER_QUEUE);
        let counters = dp.kernel_counters();
        let dp_version = dp.current().version();
        let generation = 1;
        if let Err(e) = fp.set_version(generation) {
            eprintln!("xdp: setting the fast path's generation: {e}");
        }
        let free = (0..fp.capacity()).rev().collect();
        let masks = Masks::new(&fp);
        // Meters set from now on meter with the program's cells; a datapath that had
        // cells lent before (by another program) keeps them, and its metered flows stay
        // in user space.
        let meters = dp.set_band_cells(BandPool::new(
            fp.band_cells(),
            crate::bands::kernel_clock_offset(started),
        ));
        let macs = dp.mac_table().cloned();
        let tier = Arc::new_cyclic(|me| KernelTier {
            fp,
            dp,
            macs,
            counters,
            table: Mutex::new(Table {
                entries: HashMap::new(),
                free,
                refused: HashMap::new(),
                dp_version,
                generation,
                groups: vec![Group::default(); FP_GROUPS as usize],
                masks,
                live_epoch: 0,
                removals: 0,
                group_search: None,
                normal: NormalIndex::new(),
                stats: TierStats::default(),
            }),
            offers: tx,
            inbox: Mutex::new(Some(rx)),
            started,
            meters,
            exact: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            thread: Mutex::new(None),
            listener: Arc::new(Listener(me.clone())),
        });
        if let Some(m) = &tier.macs {
            let l: Arc<dyn MacListener> = tier.listener.clone();
            m.set_listener(Arc::downgrade(&l));
        }
        tier
    }

    /// Sets the tier as `dp`'s mirror and starts its thread, pinned to `cpu` if given
    /// (the switch pins it beside its first worker, which it works for).
    pub fn start(self: &Arc<Self>, cpu: Option<usize>) -> std::io::Result<()> {
        let rx = self.inbox.lock().unwrap_or_else(PoisonError::into_inner).take();
        let Some(rx) = rx else {
            return Ok(());
        };
        let me = self.clone();
        let h = std::thread::Builder::new().name("fastpath".into()).spawn(move || {
            if let Some(id) = cpu {
                core_affinity::set_for_current(core_affinity::CoreId { id });
            }
            me.run(rx)
        })?;
        *self.thread.lock().unwrap_or_else(PoisonError::into_inner) = Some(h);
        self.dp.set_mirror(self.clone());
        Ok(())
    }

    /// Whether entries made from now on are exact microflows only (no megaflows).
    pub fn set_exact(&self, exact: bool) {
        self.exact.store(exact, Ordering::Relaxed);
    }

    /// Stops the thread (the program keeps forwarding until detached).
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        let h = self.thread.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(h) = h {
            let _ = h.join();
        }
    }

    /// The loaded program.
    pub fn program(&self) -> &Arc<FastPath> {
        &self.fp
    }

    fn now_ns(&self) -> u64 {
        self.started.elapsed().as_nanos() as u64
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The thread: handles offers, harvests every [`HARVEST_EVERY`] (more often when the
    /// MAC table's aging asks: see [`Self::harvest_every`]), and does NORMAL's chores
    /// ([`Self::normal_chores`]).
    fn run(&self, rx: Receiver<FlowKey>) {
        let mut every = self.harvest_every();
        let mut next_harvest = Instant::now() + every;
        let mut next_chores = Instant::now();
        while !self.stop.load(Ordering::SeqCst) {
            let wait = next_harvest.saturating_duration_since(Instant::now());
            match rx.recv_timeout(wait.min(CHORES_EVERY)) {
                Ok(key) => self.consider(&key),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return,
            }
            if Instant::now() >= next_harvest {
                self.harvest();
                self.lock().masks.reorder(&self.fp);
                every = self.harvest_every();
                next_harvest = Instant::now() + every;
            }
            if Instant::now() >= next_chores {
                self.normal_chores();
                next_chores = Instant::now() + CHORES_EVERY;
            }
        }
    }

    /// Judges one offered key and writes its entry if it can be mirrored.
    pub fn consider(&self, key: &FlowKey) {
        let Some(fk) = FpKey::from_flow_key(key) else {
            return;
        };
        let version = self.dp.current().version();
        let epoch = {
            let mut t = self.lock();
            t.stats.offers += 1;
            if covering(&t, &fk).is_some() {
                return;
            }
            if t.refused.get(&fk).is_some_and(|(v, _)| *v == version) {
                return;
            }
            t.live_epoch
        };
        let judged = self.judge(key);
        let mut t = self.lock();
        if !liveness::same_epoch(&t, epoch) {
            // A port's liveness changed while it was judged: a group's choice may have
            // read it either way. Judged again.
            drop(t);
            return self.requeue(key);
        }
        match judged {
            // Not remembered: a change of the MAC table may make it eligible, and starts
            // a new offer round.
            Err(Refusal { macs: true, .. }) => t.stats.refused += 1,
            Err(Refusal { why, .. }) => refuse(&mut t, fk, version, why),
            Ok(Judged { decision: d, mut entry, mask, group, mismatch }) => {
                if mismatch {
                    t.stats.mismatched += 1;
                    t.refused.insert(fk, (d.version, "the kernel's rewrite would differ".into()));
                    return;
                }
                if d.version != t.dp_version {
                    // Computed in a version a publish has replaced since: its changes
                    // were not checked against this decision. The flow offers itself
                    // again.
                    return;
                }
                if let (Some(n), Some(gen)) = (&d.credit.normal, d.mac_gen) {
                    if t.normal.stale(n, gen) {
                        // The MAC table changed what it read since; the change started
                        // a new offer round: the flow offers itself again.
                        t.stats.mac_stale += 1;
                        return;
                    }
                }
                if let Some(slots) = &group {
                    match self.group_for(&mut t, slots) {
                        Some(g) => entry.out = FP_GROUP | g,
                        None => {
                            let why = format!(
                                "it is sent to several ports and all {FP_GROUPS} broadcast \
                                 groups hold other port sets"
                            );
                            return refuse(&mut t, fk, d.version, why);
                        }
                    }
                }
                // Written even where the kernel does not deliver now: the program sends
                // such hits to user space until it does (see `delivery.rs`).
                let out_ports = d.output.map(|o| o.0).unwrap_or_default();
                self.install(&mut t, fk, mask, entry, d.credit, out_ports, *key);
            }
        }
    }

    /// Writes `entry` for the megaflow of microflow `micro` under `mask` (reusing the
    /// megaflow's counter slot, else a free one, else evicting). The mask goes in a mask
    /// slot of its own if one is free, else the entry is the microflow's alone (exact).
    #[allow(clippy::too_many_arguments)]
    fn install(
        &self,
        t: &mut Table,
        micro: FpKey,
        mask: FpKey,
        mut entry: FpEntry,
        credit: Credit,
        out_ports: Vec<u32>,
        flow_key: FlowKey,
    ) {
        let (mask, mask_slot) = match t.masks.slot_for(&self.fp, &mask) {
            Ok(Some(s)) => (mask, s),
            Ok(None) => (FpKey::EXACT, FP_EXACT_MASK),
            Err(e) => {
                eprintln!("xdp: {e}");
                (FpKey::EXACT, FP_EXACT_MASK)
            }
        };
        let key = micro.masked(&mask, mask_slot);
        entry.version = t.generation;
        // A metered entry counts its meter's drops in a second slot (taken first: an
        // eviction for it may take out the entry being replaced).
        let old_dropped =
            t.entries.get(&key).filter(|o| o.entry.meter != 0).map(|o| o.entry.dropped);
        let new_dropped = match (entry.meter != 0, old_dropped) {
            (false, _) => None,
            (true, Some(d)) => Some(d),
            (true, None) => match self.free_slot(t) {
                Some(d) => Some(d),
                None => return self.not_installed(t, &key, mask_slot),
            },
        };
        let slot = match t.entries.get(&key) {
            Some(old) => old.entry.counter,
            None => match self.free_slot(t) {
                Some(s) => s,
                None => {
                    if let (Some(d), None) = (new_dropped, old_dropped) {
                        t.free.push(d);
                    }
                    return self.not_installed(t, &key, mask_slot);
                }
            },
        };
        entry.counter = slot;
        entry.dropped = new_dropped.unwrap_or(0);
        let base = self.fp.counter(slot);
        let dropped_base = new_dropped.map_or_else(FpCounter::default, |d| self.fp.counter(d));
        match self.fp.insert(&key, &entry) {
            Ok(()) => {
                t.stats.installed += 1;
                let hits = t.entries.get(&key).map_or(0, |e| e.hits);
                if let (Some(d), None) = (old_dropped, new_dropped) {
                    t.free.push(d);
                }
                if let Some(n) = t.entries.get(&key).and_then(|e| e.credit.normal) {
                    t.normal.remove(&key, &n);
                }
                if let Some(n) = &credit.normal {
                    t.normal.add(key, n);
                }
                let replaced = t.entries.insert(
                    key,
                    Installed {
                        entry,
                        credit,
                        base,
                        dropped_base,
                        last_hit_ns: self.now_ns(),
                        hits,
                        out_ports,
                        flow_key,
                        slot: mask_slot,
                    },
                );
                if replaced.is_some() {
                    t.removals += 1;
                } else {
                    t.masks.add_user(mask_slot);
                }
            }
            Err(e) => {
                if let (Some(d), None) = (new_dropped, old_dropped) {
                    t.free.push(d);
                }
                if !t.entries.contains_key(&key) {
                    t.free.push(slot);
                    t.masks.settle(&self.fp, mask_slot);
                }
                if !matches!(e, FastPathError::Full { .. }) {
                    eprintln!("xdp: writing a fast-path entry: {e}");
                }
            }
        }
    }

    /// After an entry for `key` under mask slot `mask_slot` could not be written: the
    /// mask slot settles if no entry uses it for that key.
    fn not_installed(&self, t: &mut Table, key: &FpKey, mask_slot: u16) {
        if !t.entries.contains_key(key) {
            t.masks.settle(&self.fp, mask_slot);
        }
    }

    /// A free counter slot, evicting entries if there is none.
    fn free_slot(&self, t: &mut Table) -> Option<u32> {
        if let Some(s) = t.free.pop() {
            return Some(s);
        }
        self.evict(t);
        t.free.pop()
    }

    /// Frees room in a full map: entries of older generations, else the idlest eighth.
    fn evict(&self, t: &mut Table) {
        let now = self.now_ns();
        self.harvest_locked(t, now);
        let generation = t.generation;
        let mut victims: Vec<(u64, FpKey)> = t
            .entries
            .iter()
            .filter(|(_, e)| e.entry.version != generation)
            .map(|(k, e)| (e.last_hit_ns, *k))
            .collect();
        if victims.is_empty() {
            victims = t.entries.iter().map(|(k, e)| (e.last_hit_ns, *k)).collect();
            victims.sort_unstable_by_key(|v| v.0);
            victims.truncate((t.entries.len() / 8).max(1));
        }
        for (_, k) in victims {
            match self.fp.remove(&k) {
                Ok(_) => {
                    if self.forget(t, &k) {
                        t.stats.evicted += 1;
                    }
                }
                // Kept (with its slot): it may still be in the map.
                Err(e) => eprintln!("xdp: removing a fast-path entry: {e}"),
            }
        }
    }

    /// Credits what every entry was hit since the last harvest (and refreshes the MAC
    /// table's entries of the sources NORMAL's entries saw).
    pub fn harvest(&self) {
        let now = self.now_ns();
        let mut t = self.lock();
        self.harvest_locked(&mut t, now);
        drop(t);
        self.refresh_sources(now);
    }

    /// Credits the growth of every entry of the current generation; other entries'
    /// growth is dropped (their rules may be gone).
    fn harvest_locked(&self, t: &mut Table, now: u64) {
        let g = t.generation;
        self.harvest_versions(t, now, |e| e == g);
    }

    /// Credits the growth of the entries whose generation `credited` accepts and drops
    /// the others'.
    fn harvest_versions(&self, t: &mut Table, now: u64, credited: impl Fn(u64) -> bool) {
        let mut hits = Vec::new();
        let Table { entries, masks, normal, .. } = t;
        let seen = &mut normal.seen;
        for e in entries.values_mut() {
            let Some(h) = e.grow(&self.fp) else {
                continue;
            };
            if credited(e.entry.version) {
                e.hits += h.packets;
                e.last_hit_ns = now;
                masks.hit(e.slot, h.packets);
                if let Some(n) = &e.credit.normal {
                    seen.push((n.vlan, n.src, n.in_port));
                }
                hits.push((&e.credit, h));
            }
        }
        self.counters.credit_many(hits, now);
    }
}

impl Mirror for KernelTier {
    fn capabilities(&self) -> Capabilities {
        crate::program::CAPABILITIES
    }

    fn offer(&self, key: &FlowKey, _version: u64) {
        if let Err(TrySendError::Full(_)) = self.offers.try_send(*key) {
            self.lock().stats.offers_lost += 1;
        }
    }

    fn port_liveness(&self, slot: u16, _live: bool) {
        self.liveness_changed(slot);
    }

    fn publish(&self, version: u64, changes: &Changes) {
        let now = self.now_ns();
        let mut t = self.lock();
        let checks = t.entries.len().saturating_mul(changes.added.len());
        if changes.config || checks > MAX_CHECKS {
            self.flush(&mut t, now);
        } else {
            // Credit everything up to now, then take out what the changes may alter.
            self.harvest_locked(&mut t, now);
            let generation = t.generation;
            let hit: Vec<FpKey> = t
                .entries
                .iter()
                .filter(|(_, e)| {
                    e.entry.version == generation && e.credit.affected_by(&e.flow_key, changes)
                })
                .map(|(k, _)| *k)
                .collect();
            let n = self.take_out(&mut t, hit, now, "a changed fast-path entry");
            t.stats.revalidated += n;
        }
        t.dp_version = version;
        t.stats.publishes += 1;
        t.refused.clear();
    }
}

impl KernelTier {
    /// Removes the entries of `keys` from the map (their hits credited already) and
    /// frees their slots: how many. If the map refuses a removal (`what` says which
    /// entry), the whole map is flushed instead, so none of them forwards any more.
    fn take_out(&self, t: &mut Table, keys: Vec<FpKey>, now: u64, what: &str) -> u64 {
        let mut n = 0;
        for k in keys {
            match self.fp.remove(&k) {
                Ok(_) => n += u64::from(self.forget(t, &k)),
                Err(e) => {
                    eprintln!("xdp: removing {what}: {e}");
                    self.flush(t, now);
                    break;
                }
            }
        }
        n
    }

    /// Forgets the entry of `k`, gone from the program's map: frees its counter slot,
    /// releases its mask and takes it out of NORMAL's index. Whether there was one.
    fn forget(&self, t: &mut Table, k: &FpKey) -> bool {
        let Some(e) = t.entries.remove(k) else {
            return false;
        };
        t.removals += 1;
        t.free.push(e.entry.counter);
        if e.entry.meter != 0 {
            t.free.push(e.entry.dropped);
        }
        t.masks.remove_user(&self.fp, e.slot);
        if let Some(n) = &e.credit.normal {
            t.normal.remove(k, n);
        }
        true
    }

    /// Makes every entry a miss at once (a new generation), after crediting what they
    /// were hit. If the program cannot be told, every entry is removed instead.
    fn flush(&self, t: &mut Table, now: u64) {
        let old = t.generation;
        t.generation += 1;
        t.removals += 1;
        t.stats.flushes += 1;
        if let Err(e) = self.fp.set_version(t.generation) {
            eprintln!("xdp: setting the fast path's generation: {e}; emptying its map");
            let keys: Vec<FpKey> = t.entries.keys().copied().collect();
            for k in keys {
                let _ = self.fp.remove(&k);
            }
        }
        // The new generation's entries cannot be hit before this point: there are none.
        self.harvest_versions(t, now, |g| g == old);
        // New settings may have moved ports to other interfaces (a slot detached and
        // taken again): each group is written again before its next use.
        for g in &mut t.groups {
            g.synced = false;
        }
    }
}

impl Drop for KernelTier {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// The live entry that serves frames with program key `fk`, if any: the first one the
/// program's walk finds.
fn covering<'a>(t: &'a Table, fk: &FpKey) -> Option<&'a Installed> {
    t.masks.walked().find_map(|(s, m)| {
        t.entries.get(&fk.masked(m, s)).filter(|e| e.entry.version == t.generation)
    })
}

/// Remembers that `key` cannot be mirrored in datapath version `version`, and why.
fn refuse(t: &mut Table, key: FpKey, version: u64, why: String) {
    t.stats.refused += 1;
    if t.refused.len() >= REFUSED_MAX {
        t.refused.clear();
    }
    t.refused.insert(key, (version, why));
}
