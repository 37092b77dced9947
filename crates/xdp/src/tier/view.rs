//! What the tier shows of itself: its entries for `dump-fastpath`, the masks in use, and
//! its verdict on one flow for the tracer.

use datapath::key::FlowKey;

use super::{covering, Judged, KernelTier, MaskUse, TierStats};
use crate::layout::*;

/// One entry as `dump-fastpath` shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DumpEntry {
    /// The megaflow's key: a microflow's key under `mask`, `pad` the mask's slot.
    pub key: FpKey,
    /// The megaflow's mask ([`FpKey::EXACT`]: one microflow).
    pub mask: FpKey,
    pub entry: FpEntry,
    /// Whether the program serves it (its version is the current one).
    pub live: bool,
    /// Hits credited, plus those not yet harvested.
    pub packets: u64,
    pub bytes: u64,
    /// The OpenFlow output ports (none: a drop).
    pub out_ports: Vec<u32>,
    /// Whether it copies a decision of NORMAL (the learning switch).
    pub normal: bool,
    /// The groups its decision runs, in order.
    pub groups: Vec<u32>,
    /// The meter its decision runs, if any.
    pub meter: Option<u32>,
}

/// What the kernel tier does with one microflow (for the tracer).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// A live entry serves it in the kernel: `packets` hits so far, and the megaflow's
    /// key if the entry covers more than this microflow.
    Served { packets: u64, megaflow: Option<String> },
    /// Its entry is of an older generation (the map was flushed since): the next packet
    /// goes to user space, which mirrors it again.
    Stale,
    /// It can be mirrored: its next packet in user space makes the entry.
    Eligible,
    /// It stays in user space, for this reason.
    Refused(String),
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Verdict::Served { packets, megaflow: None } => {
                write!(f, "served in the kernel (XDP fast path; {packets} packets so far)")
            }
            Verdict::Served { packets, megaflow: Some(m) } => write!(
                f,
                "served in the kernel (XDP fast path, megaflow {m}; {packets} packets so far)"
            ),
            Verdict::Stale => f.write_str(
                "in the kernel's map from before a flush: handled in user space, then \
                 mirrored again",
            ),
            Verdict::Eligible => f.write_str(
                "handled in user space, then mirrored: later packets are served in the kernel",
            ),
            Verdict::Refused(why) => write!(f, "handled in user space only: {why}"),
        }
    }
}

impl KernelTier {
    /// The entries as the program holds them, with their hit counts.
    pub fn dump(&self) -> (Vec<DumpEntry>, TierStats) {
        self.harvest();
        let t = self.lock();
        let mut out: Vec<DumpEntry> = t
            .entries
            .iter()
            .map(|(k, e)| {
                let c = self.fp.counter(e.entry.counter);
                DumpEntry {
                    key: *k,
                    mask: t.masks.mask(e.slot),
                    entry: e.entry,
                    live: e.entry.version == t.generation,
                    packets: e.hits,
                    bytes: c.bytes,
                    out_ports: e.out_ports.clone(),
                    normal: e.credit.normal.is_some(),
                    groups: e.credit.groups.iter().map(|g| g.group).collect(),
                    meter: e.credit.meter.map(|m| m.id),
                }
            })
            .collect();
        out.sort_by_key(|d| (std::cmp::Reverse(d.packets), d.key.in_port));
        (out, t.stats)
    }

    /// The megaflow masks in use, in the order the program walks them.
    pub fn masks(&self) -> Vec<MaskUse> {
        self.lock().masks.in_use()
    }

    /// What the tier does with frames whose flow key is `key` (for the tracer).
    pub fn verdict(&self, key: &FlowKey) -> Verdict {
        let Some(fk) = FpKey::from_flow_key(key) else {
            return Verdict::Refused(
                "the kernel program does not parse such frames (IPv6, ARP, PBB, fragments, \
                 SCTP, two VLAN tags, ...)"
                    .into(),
            );
        };
        self.harvest();
        let stale = {
            let t = self.lock();
            if let Some(e) = covering(&t, &fk) {
                if let Some(why) = self.undelivered(fk.in_port, &e.out_ports) {
                    return Verdict::Refused(why);
                }
                return Verdict::Served {
                    packets: e.hits,
                    megaflow: Some(t.masks.mask(e.slot))
                        .filter(|m| *m != FpKey::EXACT)
                        .map(|m| fk.masked(&m, e.slot).describe_masked(&m)),
                };
            }
            let stale = t.masks.walked().any(|(s, m)| t.entries.contains_key(&fk.masked(m, s)));
            stale
        };
        match self.judge(key) {
            Ok(j) if j.mismatch => Verdict::Refused("the kernel's rewrite would differ".into()),
            Ok(Judged { decision: d, .. }) => {
                let ports = d.output.map(|o| o.0).unwrap_or_default();
                match self.undelivered(d.in_port, &ports) {
                    Some(why) => Verdict::Refused(why),
                    None if stale => Verdict::Stale,
                    None => Verdict::Eligible,
                }
            }
            Err(r) => Verdict::Refused(r.why),
        }
    }

    /// Why the program would send hits from `in_port` to `ports` to user space now
    /// (an output takes no XDP frames from a native port), if it would.
    fn undelivered(&self, in_port: u32, ports: &[u32]) -> Option<String> {
        ports.iter().find_map(|p| self.fp.delivers(in_port, *p).err())
    }
}
