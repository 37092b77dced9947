//! The loader of the fast-path XDP program (bpf/fastpath.c, compiled into the committed
//! bpf/fastpath.o by scripts/bpf-build.sh and embedded here): its maps, its attachment
//! to interfaces, and the reads and writes user space makes on them.
//!
//! One [`FastPath`] holds one loaded program and its maps; the same program is attached
//! to every interface of the switch ([`FastPath::attach`]), each getting a port slot
//! `0..max_ports`: its `ports` record (OpenFlow number, XSKMAP base `slot * 64`, queue
//! count) and devmap entry `tx_ports[slot] = ifindex`, so that an entry's `out` is the
//! slot of its output port ([`FastPath::port_slot`]). The [`Attached`] guard detaches
//! the program from its interface and clears the slot when dropped.
//!
//! The `counters` map is mmapped read-only at load: [`FastPath::counter`] sums a slot
//! over the CPUs without a syscall. Everything else goes through the bpf syscall (aya),
//! under one mutex.
//!
//! Invariants: `state.slots == capacity` (written at load); a slot's `ports`/`tx_ports`
//! entries exist exactly while its `Attached` lives; the mapping is as long as the map
//! (`possible CPUs * capacity` elements of 16 bytes, rounded up to a page).

use std::error::Error;
use std::io;
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::ptr::NonNull;
use std::sync::{Arc, Mutex, MutexGuard};

use aya::maps::{Array, DevMap, DevMapHash, HashMap, Map, MapError, PerCpuArray, XskMap};
use aya::programs::{ProgramError, TestRun, TestRunOptions, Xdp};
use aya::{Ebpf, EbpfLoader};
use datapath::mirror::{Capabilities, Capability};
use ports::afxdp::AttachMode;
use ports::error::{errno_in_chain as errno_of, error_chain as chain};

use crate::delivery::{self, PortUse};
use crate::layout::{
    event, FpCounter, FpEntry, FpKey, FpPort, FpState, FpWalk, FP_EXACT_MASK, FP_GROUPS, FP_MASKS,
    FP_METER_BANDS, FP_PORT_NATIVE,
};

/// The compiled program (an ELF object for the bpf target).
static PROGRAM: &[u8] = include_bytes!("../bpf/fastpath.o");
const PROGRAM_NAME: &str = "fastpath";

/// What the fast tier redoes of the datapath's decisions: every capability the datapath
/// names, each where `bpf/fastpath.c` (or, for groups and NORMAL, the tier's user-space
/// side) implements it. The tier hands it to the datapath
/// ([`Mirror::capabilities`](datapath::mirror::Mirror::capabilities)), which refuses
/// decisions needing anything else. A capability added here must be done by the
/// program (and its model, `model.rs`, which checks each entry before it is written).
pub const CAPABILITIES: Capabilities = Capabilities::of(&[
    // rewrite(): FP_SET_ETH_DST, FP_SET_ETH_SRC.
    Capability::SetEth,
    // rewrite(): FP_VLAN_SET (VID and PCP of the tag, its CFI kept).
    Capability::SetVlan,
    // rewrite(): FP_SET_TOS, with the IPv4 header checksum.
    Capability::SetIpTos,
    // rewrite(): FP_SET_IPV4_SRC, FP_SET_IPV4_DST, with the IPv4 and TCP/UDP checksums
    // (csum_update, csum_update_udp).
    Capability::SetIpv4,
    // rewrite(): FP_SET_TP_SRC, FP_SET_TP_DST.
    Capability::SetTransport,
    // rewrite_mpls(): FP_MPLS_SET (the outermost entry's label, TC and BoS).
    Capability::SetMpls,
    // rewrite(): FP_VLAN_PUSH.
    Capability::PushVlan,
    // rewrite(): FP_VLAN_POP (can_rewrite() leaves frames that would need padding to
    // user space).
    Capability::PopVlan,
    // rewrite_mpls(): FP_MPLS_PUSH (FP_MPLS_MCAST for 0x8848), onto frames without a
    // label stack (others: `tier/entry.rs` refuses them).
    Capability::PushMpls,
    // rewrite_mpls(): FP_MPLS_POP (can_rewrite_mpls() leaves frames that would need
    // padding or trimming to user space).
    Capability::PopMpls,
    // rewrite(): FP_SET_TTL (a decrement is read off the frames as a set of the TTL,
    // which the entry's megaflow then holds: `tier/judge.rs`).
    Capability::IpTtl,
    // rewrite_mpls(): FP_MPLS_TTL_SET, FP_MPLS_TTL_DEC; can_rewrite_mpls():
    // FP_MPLS_TTL_CHECK hands TTLs 0 and 1 to user space where a decrement fails.
    Capability::MplsTtl,
    // Groups are not in the program: an entry holds the outcome of the buckets the
    // worker takes for its microflow. All: several outputs (Broadcast below).
    Capability::GroupAll,
    // Select: the entry covers its microflow alone (the datapath's mask), and a
    // liveness change of a port its choice read takes it out (`tier/liveness.rs`).
    Capability::GroupSelect,
    Capability::GroupIndirect,
    // Fast-failover: as select's liveness (`tier/liveness.rs`).
    Capability::GroupFastFailover,
    // fastpath(): to_group(), a broadcast through one of the FP_GROUPS group maps
    // (`tier/broadcast.rs`).
    Capability::Broadcast,
    // The entry is an output like any other; the tier withdraws it when the MAC table
    // changes what it read (`tier/normal.rs`, the table's listener).
    Capability::Normal,
    // fastpath(): meter() on the `bands` cells the datapath's meters share
    // (`bands.rs`), FP_METER_BANDS per meter (below); drop bands drop and count.
    Capability::Meter,
    // remark(): an AF code point's drop precedence raised, with the checksum.
    Capability::DscpRemark,
])
// meter()'s loop bound.
.with_meter_bands(FP_METER_BANDS as u8);

/// XSKMAP entries per port: a port has at most this many rx queues.
pub const QUEUES_PER_PORT: u32 = 64;

// Each of the six is a #[repr(C)] struct of integers and byte arrays with every padding
// byte spelled out as a field (see layout.rs), so any bit pattern is a valid value and
// no byte of it is uninitialised.
// SAFETY: see above.
unsafe impl aya::Pod for FpKey {}
// SAFETY: see above.
unsafe impl aya::Pod for FpEntry {}
// SAFETY: see above.
unsafe impl aya::Pod for FpPort {}
// SAFETY: see above.
unsafe impl aya::Pod for FpState {}
// SAFETY: see above.
unsafe impl aya::Pod for FpCounter {}
// SAFETY: see above.
unsafe impl aya::Pod for FpWalk {}

/// What can go wrong loading or using the fast path.
#[derive(Debug, thiserror::Error)]
pub enum FastPathError {
    /// The kernel refused for lack of privilege.
    #[error("{step}: not permitted (loading and attaching XDP programs needs CAP_BPF and CAP_NET_ADMIN)")]
    NotPermitted { step: &'static str },
    /// Any other failure of one step, with the kernel's or aya's words.
    #[error("{step}: {detail}")]
    Failed { step: &'static str, detail: String },
    /// The flow map holds `capacity` entries already.
    #[error("the fast-path flow map is full ({capacity} entries)")]
    Full { capacity: u32 },
    /// Every port slot is taken.
    #[error("attaching {name}: all {max_ports} fast-path port slots are in use")]
    NoPortSlot { name: String, max_ports: u32 },
    /// A queue number at or above the port's queue count.
    #[error("queue {queue} is outside the port's {queues} queues")]
    BadQueue { queue: u32, queues: u32 },
}

/// The loaded program with its maps; `Send + Sync`, cheap to share.
pub struct FastPath {
    pub(crate) shared: Arc<Shared>,
}

pub(crate) struct Shared {
    inner: Mutex<Inner>,
    counters: CounterMap,
    bands: &'static [datapath::meter::BandCell],
    capacity: u32,
    max_ports: u32,
}

pub(crate) struct Inner {
    pub(crate) ebpf: Ebpf,
    /// Per port slot: the port using it.
    pub(crate) slots: Vec<Option<PortUse>>,
    /// Whether the kernel's drops after the program are counted, or why not.
    pub(crate) lost_counting: Result<(), String>,
    /// The hand-over across a restart (see [`crate::handover`]).
    pub(crate) pins: crate::handover::Pins,
}

/// The read-only mapping of the `counters` map.
struct CounterMap {
    ptr: NonNull<u8>,
    /// Bytes mapped.
    len: usize,
    /// Elements in the map (`cpus * capacity`).
    elements: usize,
    cpus: usize,
}

// SAFETY: the mapping is shared memory owned by this value until Drop; it is only read
// (volatile reads of u64 words the kernel updates), which is sound from any thread.
unsafe impl Send for CounterMap {}
// SAFETY: as above: no &mut access to the mapping exists.
unsafe impl Sync for CounterMap {}

impl Drop for CounterMap {
    fn drop(&mut self) {
        // SAFETY: ptr/len are the exact region mmap returned and nothing else unmaps it.
        unsafe {
            libc::munmap(self.ptr.as_ptr().cast(), self.len);
        }
    }
}

impl std::fmt::Debug for FastPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FastPath")
            .field("capacity", &self.shared.capacity)
            .field("max_ports", &self.shared.max_ports)
            .finish()
    }
}

impl FastPath {
    /// Loads the program with room for `capacity` flow entries (and counter slots per
    /// CPU) and `max_ports` ports, sets version 0, and maps the counters.
    pub fn load(capacity: u32, max_ports: u32) -> Result<FastPath, FastPathError> {
        let capacity = capacity.max(1);
        let max_ports = max_ports.max(1);
        let cpus = aya::util::nr_cpus().map_err(|(path, e)| FastPathError::Failed {
            step: "counting the possible CPUs",
            detail: format!("{path}: {e}"),
        })?;
        let elements = cpus
            .checked_mul(capacity as usize)
            .filter(|&n| n <= u32::MAX as usize)
            .ok_or_else(|| FastPathError::Failed {
                step: "sizing the counters map",
                detail: format!("{cpus} CPUs x {capacity} slots is too many"),
            })?;
        let groups: Vec<String> = (0..FP_GROUPS).map(group_map).collect();
        let mut loader = EbpfLoader::new();
        loader
            .map_max_entries("flows", capacity)
            .map_max_entries("counters", elements as u32)
            .map_max_entries("ports", max_ports)
            .map_max_entries("tx_ports", max_ports)
            .map_max_entries("lost", max_ports)
            .map_max_entries("xsks", max_ports.saturating_mul(QUEUES_PER_PORT));
        for g in &groups {
            loader.map_max_entries(g, max_ports);
        }
        let mut ebpf = loader.load(PROGRAM).map_err(|e| fail("creating the fast-path maps", &e))?;
        let prog: &mut Xdp = ebpf
            .program_mut(PROGRAM_NAME)
            .ok_or_else(|| missing("program"))?
            .try_into()
            .map_err(|e: ProgramError| fail("loading the fast-path program", &e))?;
        prog.load().map_err(|e| fail("loading the fast-path program (BPF_PROG_LOAD)", &e))?;

        let mut st: Array<_, FpState> =
            Array::try_from(ebpf.map_mut("state").ok_or_else(|| missing("state map"))?)
                .map_err(|e| fail("opening the state map", &e))?;
        st.set(0, FpState { version: 0, slots: capacity, orphan_until: 0 }, 0)
            .map_err(|e| fail("writing the fast-path state", &e))?;

        let mut masks: Array<_, FpKey> =
            Array::try_from(ebpf.map_mut("masks").ok_or_else(|| missing("masks map"))?)
                .map_err(|e| fail("opening the masks map", &e))?;
        masks
            .set(u32::from(FP_EXACT_MASK), FpKey::EXACT, 0)
            .map_err(|e| fail("writing the exact mask", &e))?;
        let mut order = [0u8; FP_MASKS];
        order[0] = FP_EXACT_MASK as u8;
        write_walk(&mut ebpf, &FpWalk { n: 1, order, pad: 0 })?;

        let counters = map_counters(&ebpf, elements, cpus)?;
        let bands = crate::bands::map_bands(&ebpf)?;
        let lost_counting = delivery::attach_lost_counters(&mut ebpf);
        Ok(FastPath {
            shared: Arc::new(Shared {
                inner: Mutex::new(Inner {
                    ebpf,
                    slots: vec![None; max_ports as usize],
                    lost_counting,
                    pins: Default::default(),
                }),
                counters,
                bands,
                capacity,
                max_ports,
            }),
        })
    }

    /// The meter band cells the program shares (see [`crate::bands`]).
    pub fn band_cells(&self) -> &'static [datapath::meter::BandCell] {
        self.shared.bands
    }

    /// The flow map's size (and the counter slots per CPU).
    pub fn capacity(&self) -> u32 {
        self.shared.capacity
    }

    /// Attaches the program to interface `name` (index `ifindex`) as OpenFlow port
    /// `of_port` with `queues` rx queues (at most 64), in `mode`.
    pub fn attach(
        &self,
        name: &str,
        ifindex: u32,
        of_port: u32,
        queues: u32,
        mode: AttachMode,
    ) -> Result<Attached, FastPathError> {
        let queues = queues.clamp(1, QUEUES_PER_PORT);
        let mut inner = self.shared.lock();
        let slot = inner.slots.iter().position(Option::is_none).ok_or_else(|| {
            FastPathError::NoPortSlot { name: name.to_string(), max_ports: self.shared.max_ports }
        })? as u32;
        let mut port = FpPort { of_port, xsk_base: slot * QUEUES_PER_PORT, queues, flags: 0 };
        ports_map(&mut inner.ebpf)?
            .insert(ifindex, port, 0)
            .map_err(|e| fail("writing the fast-path port record", &e))?;
        if let Err(e) = devmap(&mut inner.ebpf).and_then(|mut m| {
            m.set(slot, ifindex, None, 0).map_err(|e| fail("writing the fast-path devmap", &e))
        }) {
            let _ = ports_map(&mut inner.ebpf).map(|mut m| m.remove(&ifindex));
            return Err(e);
        }

        // The link the last run left forwarding, taken over (its program replaced by
        // `take_over`); else a new attachment.
        let mut made = crate::handover::adopt(&mut inner, name, ifindex, mode).map(|m| (None, m));
        let mut failures: Vec<(&str, ProgramError)> = Vec::new();
        let order = if made.is_some() { &[][..] } else { mode.tries() };
        for &(xdp_mode, attached, label) in order {
            let result = xdp_prog(&mut inner.ebpf)
                .and_then(|p| p.attach_to_if_index(ifindex, xdp_mode).map_err(Some));
            match result {
                Ok(link) => {
                    made = Some((Some(link), attached));
                    break;
                }
                Err(Some(e)) => failures.push((label, e)),
                Err(None) => break,
            }
        }
        if let Some((link, attached)) = made {
            let label = if attached == AttachMode::Native {
                "native (driver) mode"
            } else {
                "generic (SKB) mode"
            };
            if attached == AttachMode::Native {
                port.flags |= FP_PORT_NATIVE;
                let written = ports_map(&mut inner.ebpf).and_then(|mut m| {
                    m.insert(ifindex, port, 0)
                        .map_err(|e| fail("writing the fast-path port record", &e))
                });
                if let Err(e) = written {
                    eprintln!(
                        "xdp: fast path on {name}: writing the port's mode: {e}; \
                         frames with unfinished checksums go to user space"
                    );
                }
            }
            if let Some((failed, why)) = failures.first() {
                eprintln!(
                    "xdp: fast path on {name}: XDP {failed} not available ({}); \
                     attached in {label}",
                    chain(why)
                );
            }
            delivery::reset_lost(&mut inner.ebpf, slot);
            inner.slots[slot as usize] = Some(PortUse::new(of_port, name, ifindex, attached));
            write_reach(&mut inner);
            return Ok(Attached {
                shared: self.shared.clone(),
                slot,
                ifindex,
                queues,
                xsk_base: port.xsk_base,
                mode: attached,
                link,
            });
        }
        clear_slot(&mut inner.ebpf, slot, ifindex);
        Err(attach_error(name, &failures))
    }

    /// The devmap slot of OpenFlow port `of_port`, if it is attached.
    pub fn port_slot(&self, of_port: u32) -> Option<u32> {
        let inner = self.shared.lock();
        inner
            .slots
            .iter()
            .position(|s| s.as_ref().is_some_and(|s| s.of_port == of_port))
            .map(|s| s as u32)
    }

    /// Makes broadcast group `group` (below [`FP_GROUPS`]) the ports in devmap `slots`,
    /// each of which must be attached.
    pub fn set_group(&self, group: u32, slots: &[u32]) -> Result<(), FastPathError> {
        const STEP: &str = "writing a fast-path broadcast group";
        let mut inner = self.shared.lock();
        let targets: Vec<(u32, u32)> = slots
            .iter()
            .map(|&s| match inner.slots.get(s as usize) {
                Some(Some(p)) => Ok((s, p.ifindex)),
                _ => Err(FastPathError::Failed {
                    step: STEP,
                    detail: format!("port slot {s} is not attached"),
                }),
            })
            .collect::<Result<_, _>>()?;
        let mut map = group_mut(&mut inner.ebpf, group)?;
        let old: Vec<u32> = map.keys().filter_map(Result::ok).collect();
        for k in old {
            if !targets.iter().any(|(s, _)| *s == k) {
                map.remove(k).map_err(|e| fail(STEP, &e))?;
            }
        }
        for (slot, ifindex) in &targets {
            map.insert(*slot, *ifindex, None, 0).map_err(|e| fail(STEP, &e))?;
        }
        // Its slots, for the program's check that each takes XDP frames (a slot past
        // 63 has no bit: all of them then, so the group never counts as delivered from a
        // native port).
        let members = targets.iter().fold(0u64, |m, (s, _)| match 1u64.checked_shl(*s) {
            Some(bit) if *s < 64 => m | bit,
            _ => u64::MAX,
        });
        reach_mut(&mut inner.ebpf)?.set(1 + group, members, 0).map_err(|e| fail(STEP, &e))
    }

    /// The devmap slots in broadcast group `group`.
    pub fn group(&self, group: u32) -> Result<Vec<u32>, FastPathError> {
        let mut inner = self.shared.lock();
        let map = group_mut(&mut inner.ebpf, group)?;
        let mut slots: Vec<u32> = map.keys().filter_map(Result::ok).collect();
        slots.sort_unstable();
        Ok(slots)
    }

    /// Makes `v` the live version: entries of other versions are no longer used.
    pub fn set_version(&self, v: u64) -> Result<(), FastPathError> {
        let mut inner = self.shared.lock();
        let mut st = state_map(&mut inner.ebpf)?;
        st.set(0, FpState { version: v, slots: self.shared.capacity, orphan_until: 0 }, 0)
            .map_err(|e| fail("writing the fast-path state", &e))
    }

    /// The live version.
    pub fn version(&self) -> Result<u64, FastPathError> {
        let inner = self.shared.lock();
        let st: Array<_, FpState> =
            Array::try_from(inner.ebpf.map("state").ok_or_else(|| missing("state map"))?)
                .map_err(|e| fail("opening the state map", &e))?;
        st.get(&0, 0).map(|s| s.version).map_err(|e| fail("reading the fast-path state", &e))
    }

    /// Writes `mask` to mask slot `slot` (below [`FP_MASKS`]). The caller makes sure no
    /// walk names the slot and no entry uses it (see the program's comment).
    pub fn set_mask(&self, slot: u16, mask: &FpKey) -> Result<(), FastPathError> {
        let mut inner = self.shared.lock();
        let mut masks: Array<_, FpKey> =
            Array::try_from(inner.ebpf.map_mut("masks").ok_or_else(|| missing("masks map"))?)
                .map_err(|e| fail("opening the masks map", &e))?;
        masks.set(u32::from(slot), *mask, 0).map_err(|e| fail("writing a fast-path mask", &e))
    }

    /// Sets the mask slots the lookup walks, in order (at most [`FP_MASKS`]).
    pub fn set_walk(&self, slots: &[u16]) -> Result<(), FastPathError> {
        let mut w = FpWalk::default();
        for (o, s) in w.order.iter_mut().zip(slots) {
            *o = *s as u8;
        }
        w.n = slots.len().min(FP_MASKS) as u32;
        write_walk(&mut self.shared.lock().ebpf, &w)
    }

    /// Inserts or replaces the entry for `key`.
    pub fn insert(&self, key: &FpKey, entry: &FpEntry) -> Result<(), FastPathError> {
        let mut inner = self.shared.lock();
        let mut flows = flows_mut(&mut inner.ebpf)?;
        flows.insert(key, entry, 0).map_err(|e| {
            if errno_of(&e) == Some(libc::E2BIG) {
                FastPathError::Full { capacity: self.shared.capacity }
            } else {
                fail("inserting a fast-path entry", &e)
            }
        })
    }

    /// Removes the entry for `key`; whether there was one.
    pub fn remove(&self, key: &FpKey) -> Result<bool, FastPathError> {
        let mut inner = self.shared.lock();
        let mut flows = flows_mut(&mut inner.ebpf)?;
        match flows.remove(key) {
            Ok(()) => Ok(true),
            Err(MapError::KeyNotFound) => Ok(false),
            Err(e) if errno_of(&e) == Some(libc::ENOENT) => Ok(false),
            Err(e) => Err(fail("removing a fast-path entry", &e)),
        }
    }

    /// Every entry of the flow map (in the map's order).
    pub fn entries(&self) -> Result<Vec<(FpKey, FpEntry)>, FastPathError> {
        let inner = self.shared.lock();
        let flows: HashMap<_, FpKey, FpEntry> =
            HashMap::try_from(inner.ebpf.map("flows").ok_or_else(|| missing("flows map"))?)
                .map_err(|e| fail("opening the flow map", &e))?;
        let mut out = Vec::new();
        for item in flows.iter() {
            match item {
                Ok(kv) => out.push(kv),
                // An entry removed while iterating.
                Err(MapError::KeyNotFound) => {}
                Err(e) => return Err(fail("reading the fast-path flow map", &e)),
            }
        }
        Ok(out)
    }

    /// Counter slot `slot` summed over the CPUs (zero for a slot out of range).
    pub fn counter(&self, slot: u32) -> FpCounter {
        let c = &self.shared.counters;
        let cap = self.shared.capacity as usize;
        let mut sum = FpCounter::default();
        if slot as usize >= cap {
            return sum;
        }
        for cpu in 0..c.cpus {
            let i = cpu * cap + slot as usize;
            if i >= c.elements {
                break;
            }
            let at = i * std::mem::size_of::<FpCounter>();
            // SAFETY: i < elements, so the 16 bytes at `at` lie inside the mapping
            // (elements * 16 <= len); the mapping is page aligned and `at` a multiple of
            // 16, so both u64 reads are aligned. Volatile: the kernel writes them.
            let (p, b) = unsafe {
                let base = c.ptr.as_ptr().add(at).cast::<u64>();
                (base.read_volatile(), base.add(1).read_volatile())
            };
            sum.packets = sum.packets.wrapping_add(p);
            sum.bytes = sum.bytes.wrapping_add(b);
        }
        sum
    }

    /// The event counts (indexed by `layout::event`), summed over the CPUs. A count
    /// that cannot be read reads as zero.
    pub fn events(&self) -> [u64; event::COUNT as usize] {
        let mut out = [0u64; event::COUNT as usize];
        let inner = self.shared.lock();
        let Some(map) = inner.ebpf.map("events") else {
            return out;
        };
        let Ok(ev) = PerCpuArray::<_, u64>::try_from(map) else {
            return out;
        };
        for (i, slot) in out.iter_mut().enumerate() {
            if let Ok(values) = ev.get(&(i as u32), 0) {
                *slot = values.iter().fold(0u64, |a, v| a.wrapping_add(*v));
            }
        }
        out
    }

    /// Runs the program once on `frame` with BPF_PROG_TEST_RUN, as if it arrived on
    /// interface `ifindex` (which must exist in the caller's namespace), rx queue
    /// `queue`: the program's return code and the frame as it left the program.
    pub fn test_run(
        &self,
        frame: &[u8],
        ifindex: u32,
        queue: u32,
    ) -> Result<(u32, Vec<u8>), FastPathError> {
        let inner = self.shared.lock();
        let prog: &Xdp = inner
            .ebpf
            .program(PROGRAM_NAME)
            .ok_or_else(|| missing("program"))?
            .try_into()
            .map_err(|e: ProgramError| fail("finding the fast-path program", &e))?;
        // struct xdp_md: data, data_end, data_meta, ingress_ifindex, rx_queue_index,
        // egress_ifindex. The kernel takes data_end as the frame length.
        let mut ctx = [0u8; 24];
        ctx[4..8].copy_from_slice(&(frame.len() as u32).to_ne_bytes());
        ctx[12..16].copy_from_slice(&ifindex.to_ne_bytes());
        ctx[16..20].copy_from_slice(&queue.to_ne_bytes());
        let mut out = vec![0u8; frame.len() + 256];
        let mut opts = TestRunOptions::new();
        opts.data_in = Some(frame);
        opts.data_out = Some(&mut out);
        opts.ctx_in = Some(&ctx);
        let r = prog
            .test_run(opts)
            .map_err(|e| fail("running the fast-path program (BPF_PROG_TEST_RUN)", &e))?;
        out.truncate(r.data_size_out as usize);
        Ok((r.return_value, out))
    }
}

/// The program attached to one interface, with its port slot; dropping it detaches the
/// program from that interface and frees the slot.
pub struct Attached {
    shared: Arc<Shared>,
    slot: u32,
    ifindex: u32,
    queues: u32,
    xsk_base: u32,
    mode: AttachMode,
    link: Option<aya::programs::xdp::XdpLinkId>,
}

impl std::fmt::Debug for Attached {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Attached")
            .field("slot", &self.slot)
            .field("ifindex", &self.ifindex)
            .field("mode", &self.mode)
            .finish()
    }
}

impl Attached {
    /// The mode the program is attached in: `Native` or `Generic`.
    pub fn mode(&self) -> AttachMode {
        self.mode
    }

    /// The port's devmap slot.
    pub fn slot(&self) -> u32 {
        self.slot
    }

    /// Sends the frames of rx queue `queue` that the program gives to user space to the
    /// AF_XDP socket `fd`.
    pub fn insert_xsk(&self, queue: u32, fd: RawFd) -> Result<(), FastPathError> {
        if queue >= self.queues {
            return Err(FastPathError::BadQueue { queue, queues: self.queues });
        }
        let mut inner = self.shared.lock();
        let mut xsks =
            XskMap::try_from(inner.ebpf.map_mut("xsks").ok_or_else(|| missing("xsks map"))?)
                .map_err(|e| fail("opening the XSKMAP", &e))?;
        xsks.set(self.xsk_base + queue, fd, 0)
            .map_err(|e| fail("adding an AF_XDP socket to the XSKMAP", &e))
    }
}

impl Drop for Attached {
    fn drop(&mut self) {
        let mut inner = self.shared.lock();
        if self.link.is_none() {
            self.link = crate::handover::release_port(&mut inner, self.ifindex);
        }
        if crate::handover::handing_over(&inner) {
            if let Some(link) = self.link.take() {
                // The program keeps forwarding through the pinned link, with this
                // port's records in its maps, until the next run takes it over.
                match crate::handover::pin_link(&mut inner, link, self.ifindex, self.mode) {
                    Ok(()) => return,
                    Err(e) => eprintln!(
                        "xdp: fast path on ifindex {}: not left forwarding for the restart: {e}",
                        self.ifindex
                    ),
                }
            }
        }
        if let (Some(link), Some(prog)) = (self.link.take(), xdp_prog(&mut inner.ebpf).ok()) {
            if let Err(e) = prog.detach(link) {
                eprintln!(
                    "xdp: detaching the fast path from ifindex {}: {}",
                    self.ifindex,
                    chain(&e)
                );
            }
        }
        if let Ok(mut xsks) =
            inner.ebpf.map_mut("xsks").ok_or(()).and_then(|m| XskMap::try_from(m).map_err(drop))
        {
            for q in 0..self.queues {
                let _ = xsks.unset(self.xsk_base + q);
            }
        }
        clear_slot(&mut inner.ebpf, self.slot, self.ifindex);
        for g in 0..FP_GROUPS {
            if let Ok(mut m) = group_mut(&mut inner.ebpf, g) {
                let _ = m.remove(self.slot);
            }
        }
        if let Some(s) = inner.slots.get_mut(self.slot as usize) {
            *s = None;
        }
        write_reach(&mut inner);
    }
}

impl Shared {
    pub(crate) fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while holding the lock leaves the maps as consistent as the kernel
        // keeps them; go on.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Removes slot `slot`'s `ports` and `tx_ports` entries (best effort: the interface may
/// be gone, and the kernel clears its devmap entries itself then).
fn reach_mut(ebpf: &mut Ebpf) -> Result<Array<&mut aya::maps::MapData, u64>, FastPathError> {
    Array::try_from(ebpf.map_mut("reach").ok_or_else(|| missing("reach map"))?)
        .map_err(|e| fail("opening the reach map", &e))
}

/// Writes the program's set of slots whose interface takes XDP frames (see
/// `delivery.rs`) from the ports as known now: a slot past 63 is never in it, so frames
/// from native ports to it always go to user space.
pub(crate) fn write_reach(inner: &mut Inner) {
    let ok = inner
        .slots
        .iter()
        .enumerate()
        .take(64)
        .filter(|(_, p)| p.as_ref().is_some_and(|p| p.delivery == delivery::Delivery::Delivered))
        .fold(0u64, |m, (s, _)| m | 1 << s);
    if let Err(e) = reach_mut(&mut inner.ebpf)
        .and_then(|mut m| m.set(0, ok, 0).map_err(|e| fail("writing the reach map", &e)))
    {
        eprintln!("xdp: {e}");
    }
}

fn clear_slot(ebpf: &mut Ebpf, slot: u32, ifindex: u32) {
    if let Ok(mut m) = ports_map(ebpf) {
        let _ = m.remove(&ifindex);
    }
    if let Some(Map::DevMap(data)) = ebpf.map("tx_ports") {
        delete_elem(data.fd().as_fd().as_raw_fd(), slot);
    }
}

/// BPF_MAP_DELETE_ELEM of a u32 key (aya's DevMap has no removal).
fn delete_elem(fd: RawFd, key: u32) {
    #[repr(C)]
    struct Attr {
        map_fd: u32,
        pad: u32,
        key: u64,
        value: u64,
        flags: u64,
    }
    const BPF_MAP_DELETE_ELEM: libc::c_long = 3;
    let attr =
        Attr { map_fd: fd as u32, pad: 0, key: &key as *const u32 as u64, value: 0, flags: 0 };
    // SAFETY: `attr` is the map-element form of union bpf_attr, fully initialised, and
    // lives (with `key`, which it points to) until the call returns; the kernel only
    // reads it. The size passed is its size.
    unsafe {
        libc::syscall(
            libc::SYS_bpf,
            BPF_MAP_DELETE_ELEM,
            &attr as *const Attr,
            std::mem::size_of::<Attr>() as libc::c_uint,
        );
    }
}

fn ports_map(
    ebpf: &mut Ebpf,
) -> Result<HashMap<&mut aya::maps::MapData, u32, FpPort>, FastPathError> {
    HashMap::try_from(ebpf.map_mut("ports").ok_or_else(|| missing("ports map"))?)
        .map_err(|e| fail("opening the ports map", &e))
}

fn devmap(ebpf: &mut Ebpf) -> Result<DevMap<&mut aya::maps::MapData>, FastPathError> {
    DevMap::try_from(ebpf.map_mut("tx_ports").ok_or_else(|| missing("tx_ports map"))?)
        .map_err(|e| fail("opening the devmap", &e))
}

/// The name of broadcast group `g`'s map.
fn group_map(g: u32) -> String {
    format!("group{g}")
}

fn group_mut(
    ebpf: &mut Ebpf,
    g: u32,
) -> Result<DevMapHash<&mut aya::maps::MapData>, FastPathError> {
    let name = group_map(g);
    DevMapHash::try_from(ebpf.map_mut(&name).ok_or_else(|| missing(&name))?)
        .map_err(|e| fail("opening a broadcast group map", &e))
}

fn flows_mut(
    ebpf: &mut Ebpf,
) -> Result<HashMap<&mut aya::maps::MapData, FpKey, FpEntry>, FastPathError> {
    HashMap::try_from(ebpf.map_mut("flows").ok_or_else(|| missing("flows map"))?)
        .map_err(|e| fail("opening the flow map", &e))
}

/// The program; `Err(None)` if it is missing (cannot happen with the embedded object).
fn write_walk(ebpf: &mut Ebpf, w: &FpWalk) -> Result<(), FastPathError> {
    let mut walk: Array<_, FpWalk> =
        Array::try_from(ebpf.map_mut("walk").ok_or_else(|| missing("walk map"))?)
            .map_err(|e| fail("opening the walk map", &e))?;
    walk.set(0, *w, 0).map_err(|e| fail("writing the fast-path mask walk", &e))
}

/// The program's `state` array.
pub(crate) fn state_map(
    ebpf: &mut Ebpf,
) -> Result<Array<&mut aya::maps::MapData, FpState>, FastPathError> {
    Array::try_from(ebpf.map_mut("state").ok_or_else(|| missing("state map"))?)
        .map_err(|e| fail("opening the state map", &e))
}

pub(crate) fn xdp_prog(ebpf: &mut Ebpf) -> Result<&mut Xdp, Option<ProgramError>> {
    ebpf.program_mut(PROGRAM_NAME).ok_or(None)?.try_into().map_err(Some)
}

/// Maps the counters array read-only.
fn map_counters(ebpf: &Ebpf, elements: usize, cpus: usize) -> Result<CounterMap, FastPathError> {
    const STEP: &str = "mapping the fast-path counters";
    let Some(Map::Array(data)) = ebpf.map("counters") else {
        return Err(missing("counters map"));
    };
    let fd = data.fd().as_fd().as_raw_fd();
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    let page = if page > 0 { page as usize } else { 4096 };
    let bytes = elements * std::mem::size_of::<FpCounter>();
    let len = bytes.div_ceil(page) * page;
    // SAFETY: a fresh shared read-only mapping of a BPF_F_MMAPABLE array map fd, at an
    // address the kernel picks; no existing memory is affected. The result is checked.
    let ptr =
        unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ, libc::MAP_SHARED, fd, 0) };
    if ptr == libc::MAP_FAILED {
        let e = io::Error::last_os_error();
        return Err(fail(STEP, &e));
    }
    let ptr = NonNull::new(ptr.cast::<u8>())
        .ok_or_else(|| FastPathError::Failed { step: STEP, detail: "mmap returned null".into() })?;
    Ok(CounterMap { ptr, len, elements, cpus })
}

/// A failed step: not permitted, or the whole story.
pub(crate) fn fail(step: &'static str, e: &(dyn Error + 'static)) -> FastPathError {
    match errno_of(e) {
        Some(libc::EPERM) | Some(libc::EACCES) => FastPathError::NotPermitted { step },
        _ => FastPathError::Failed { step, detail: chain(e) },
    }
}

/// The embedded object lacks a part it was built with (a build problem).
pub(crate) fn missing(what: &str) -> FastPathError {
    FastPathError::Failed {
        step: "loading the fast-path program",
        detail: format!("the embedded object has no {what}"),
    }
}

/// Attaching failed in every mode tried.
fn attach_error(name: &str, tries: &[(&str, ProgramError)]) -> FastPathError {
    if !tries.is_empty()
        && tries.iter().all(|(_, e)| matches!(errno_of(e), Some(libc::EPERM) | Some(libc::EACCES)))
    {
        return FastPathError::NotPermitted { step: "attaching the fast-path program" };
    }
    let mut text = format!("{name}: no XDP attach mode worked: ");
    for (i, (mode, e)) in tries.iter().enumerate() {
        if i > 0 {
            text.push_str("; ");
        }
        text.push_str(&format!("{mode}: {}", chain(e)));
        if matches!(errno_of(e), Some(libc::EBUSY) | Some(libc::EEXIST)) {
            text.push_str(" (another XDP program is attached to the interface)");
        }
    }
    if tries.is_empty() {
        text.push_str("the program is missing from its object");
    }
    FastPathError::Failed { step: "attaching the fast-path program", detail: text }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_object_has_the_program_and_maps() {
        assert_eq!(&PROGRAM[..4], b"\x7fELF");
        assert_eq!(u16::from_le_bytes([PROGRAM[18], PROGRAM[19]]), 247);
        let has = |s: &str| PROGRAM.windows(s.len()).any(|w| w == s.as_bytes());
        for name in [
            PROGRAM_NAME,
            "ports",
            "xsks",
            "tx_ports",
            "flows",
            "state",
            "counters",
            "events",
            "masks",
            "walk",
            "bands",
            ".maps",
        ] {
            assert!(has(name), "{name} missing from the object");
        }
    }

    #[test]
    fn records_have_the_c_sizes() {
        use std::mem::size_of;
        // The sizes bpf/fastpath.c asserts with _Static_assert.
        assert_eq!(size_of::<FpKey>(), 40);
        assert_eq!(size_of::<FpEntry>(), 56);
        assert_eq!(size_of::<FpPort>(), 16);
        assert_eq!(size_of::<FpState>(), 16);
        assert_eq!(size_of::<FpCounter>(), 16);
        assert_eq!(size_of::<FpWalk>(), 40);
        assert_eq!(size_of::<datapath::meter::BandCell>(), 64);
    }

    #[test]
    fn the_program_redoes_all_the_datapath_describes_with_its_cell_blocks() {
        // Every capability the datapath names today: decisions are judged as when the
        // datapath took this set for granted. A capability added there must be
        // declared here (and done by the program) or left out on purpose.
        assert_eq!(CAPABILITIES, Capabilities::ALL);
        // The program meters with blocks of the datapath's shared cells.
        assert_eq!(usize::from(CAPABILITIES.meter_bands()), FP_METER_BANDS);
        assert_eq!(FP_METER_BANDS, datapath::meter::KERNEL_BANDS);
    }

    #[test]
    fn permission_errors_name_the_capabilities() {
        let e = fail("loading the fast-path program", &io::Error::from_raw_os_error(libc::EPERM));
        let text = e.to_string();
        assert!(text.contains("CAP_BPF") && text.contains("CAP_NET_ADMIN"), "{text}");
        assert!(text.contains("loading the fast-path program"), "{text}");
    }
}
