//! Judging an offered flow: the decision the published version makes for it, the entry
//! that redoes it (its rewrites read off the decision's frames, see `entry.rs`, and
//! checked with the program's model on the decision's frame and, for an MPLS frame, on
//! its TTL variants), and the megaflow mask the entry is written under; or why the flow
//! stays in user space.

use std::sync::atomic::Ordering;

use datapath::key::FlowKey;
use datapath::mirror::{Decision, Ineligible};

use super::entry::{self, entry_for};
use super::KernelTier;
use crate::layout::*;
use crate::model;

/// A judged decision: the entry that redoes it (counter slot not yet set; a broadcast
/// group's number not yet chosen), the sorted devmap slots of its group if it sends to
/// several ports, and whether the model's rewrite differs from the pipeline's.
pub(super) struct Judged {
    pub decision: Decision,
    pub entry: FpEntry,
    /// The program-key mask of the decision's megaflow.
    pub mask: FpKey,
    pub group: Option<Vec<u32>>,
    pub mismatch: bool,
}

/// Why a flow is not mirrored, and whether a change of the MAC table alone may change
/// that (then it waits for one: see the `normal` module).
pub(super) struct Refusal {
    pub why: String,
    pub macs: bool,
}

impl From<String> for Refusal {
    fn from(why: String) -> Refusal {
        Refusal { why, macs: false }
    }
}

impl KernelTier {
    /// The decision for `key` and the entry that redoes it; or why not.
    pub(super) fn judge(&self, key: &FlowKey) -> Result<Judged, Refusal> {
        let d = self
            .dp
            .decision(key, self.now_ns())
            .map_err(|e: Ineligible| Refusal { macs: e.waits_for_macs(), why: e.to_string() })?;
        if d.credit.normal.is_some() && self.macs.is_none() {
            // Nothing would withdraw it when the MAC table changes.
            return Err(Refusal::from(
                "it goes to NORMAL, whose MAC table was attached after the fast path \
                 started"
                    .to_string(),
            ));
        }
        if self.fp.port_slot(d.in_port).is_none() {
            return Err(format!(
                "its input port {} has no XDP fast path (not an afxdp port)",
                d.in_port
            )
            .into());
        }
        let (out, group, after) = match &d.output {
            None => (FP_DROP, None, None),
            Some((ports, frame)) => {
                let mut slots = ports
                    .iter()
                    .map(|p| {
                        self.fp.port_slot(*p).ok_or_else(|| {
                            format!("its output port {p} has no XDP fast path (not an afxdp port)")
                        })
                    })
                    .collect::<Result<Vec<u32>, String>>()?;
                match slots.as_slice() {
                    [one] => (*one, None, Some(frame.as_slice())),
                    _ if ports.contains(&d.in_port) => {
                        return Err(Refusal::from(
                            "it is sent back out its input port and to other ports (the \
                             kernel's broadcast leaves the input port out)"
                                .to_string(),
                        ))
                    }
                    _ => {
                        slots.extend(self.fp.port_slot(d.in_port));
                        slots.sort_unstable();
                        (FP_GROUP, Some(slots), Some(frame.as_slice()))
                    }
                }
            }
        };
        let not_done = |why: &str| format!("its rewrite is not one the kernel program does: {why}");
        let mut entry = entry_for(&d.input, after).map_err(not_done)?;
        entry::mpls_ttl(&mut entry, &d.input, after, &d.ttl_variants).map_err(not_done)?;
        entry.out = out;
        if let Some(m) = d.credit.meter {
            if !self.meters {
                return Err(Refusal::from(
                    "its meter's buckets are not shared with this fast path".to_string(),
                ));
            }
            if m.remark && entry.flags & FP_SET_TOS != 0 {
                return Err(Refusal::from(
                    "its meter may remark the DSCP and its actions rewrite the TOS (the \
                     kernel remarks first)"
                        .to_string(),
                ));
            }
            let block = u16::try_from(m.slot + 1)
                .ok()
                .filter(|b| usize::from(*b) * FP_METER_BANDS <= FP_BAND_CELLS)
                .ok_or_else(|| format!("its meter's cells (block {}) are out of range", m.slot))?;
            entry.meter = block;
            entry.flags |= u32::from(m.bands) << FP_METER_SHIFT;
        }
        let mismatch = match after {
            Some(after) => model::apply(&d.input, &entry).as_deref() != Some(after),
            None => false,
        } || d.ttl_variants.iter().any(|v| match (v.same_path, &v.output) {
            (true, Some(out)) => model::apply(&v.input, &entry).as_ref() != Some(out),
            (true, None) => false,
            // Another path: the program must hand it to user space.
            (false, _) => model::apply(&v.input, &entry).is_some(),
        });
        let mask = if self.exact.load(Ordering::Relaxed) {
            FpKey::EXACT
        } else {
            megaflow_mask(&d.credit.mask, key, &entry)
        };
        Ok(Judged { decision: d, entry, mask, group, mismatch })
    }
}

/// The program-key mask of a decision whose flow-key mask is `mask`, made for frames
/// like `key`, with entry `entry`: `mask`'s bits ([`FpKey::mask_of`]) and the fields the
/// entry's rewrites write whole where the pipeline wrote part (the TOS byte of a DSCP
/// or ECN rewrite, TTL of a decrement, the tag of a VLAN rewrite, the tag's absence of
/// a push, an MPLS entry's label, TC and BoS of their rewrite), so every frame under it
/// gets the same bytes as the decision's (the IPv4 TTL a pushed MPLS entry copies is in
/// `mask` already: the decision depends on it). A mask that holds every bit the program
/// builds for such frames is the exact mask (its slot is always there), whatever it
/// leaves out of fields such frames never have.
fn megaflow_mask(mask: &FlowKey, key: &FlowKey, entry: &FpEntry) -> FpKey {
    let mut m = FpKey::mask_of(mask, key);
    if entry.flags & FP_SET_TOS != 0 {
        m.ip_tos = u8::MAX;
    }
    if entry.flags & FP_SET_TTL != 0 {
        m.ip_ttl = u8::MAX;
    }
    if entry.flags & (FP_VLAN_POP | FP_VLAN_PUSH | FP_VLAN_SET) != 0 {
        m.vlan_vid = u16::MAX;
        m.vlan_pcp = u8::MAX;
    }
    if entry.flags & FP_MPLS_SET != 0 {
        m.ipv4_src |= FP_MPLS_LSE;
    }
    let every = FlowKey { words: [u64::MAX; datapath::key::KEY_WORDS] };
    if m == FpKey::mask_of(&every, key) {
        return FpKey::EXACT;
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use datapath::key::{Field, KEY_WORDS};

    #[test]
    fn a_mask_of_every_bit_of_the_frame_is_the_exact_mask() {
        let mut icmp = FlowKey::ZERO;
        icmp.set(Field::EthType, 0x0800);
        icmp.set(Field::IpProto, 1);
        let every = FlowKey { words: [u64::MAX; KEY_WORDS] };
        let none = FpEntry::default();
        assert_eq!(megaflow_mask(&every, &icmp, &none), FpKey::EXACT);
        let mut part = FlowKey::ZERO;
        part.set(Field::InPort, Field::InPort.full());
        part.set(Field::Ipv4Dst, 0xffff_ff00);
        let m = megaflow_mask(&part, &icmp, &none);
        assert_ne!(m, FpKey::EXACT);
        assert_eq!((m.in_port, m.ipv4_dst, m.ip_ttl), (u32::MAX, 0xffff_ff00, 0));
        let ttl = FpEntry { flags: FP_SET_TTL, ..FpEntry::default() };
        assert_eq!(megaflow_mask(&part, &icmp, &ttl).ip_ttl, u8::MAX);
    }

    #[test]
    fn mpls_rewrites_widen_the_mask_to_what_they_write_and_copy() {
        let mut part = FlowKey::ZERO;
        for f in [Field::InPort, Field::EthType] {
            part.set(f, f.full());
        }
        let mut mpls = FlowKey::ZERO;
        mpls.set(Field::EthType, 0x8847);
        let set = FpEntry { flags: FP_MPLS_SET | FP_MPLS_TTL_DEC, ..FpEntry::default() };
        assert_eq!(megaflow_mask(&part, &mpls, &set).ipv4_src, FP_MPLS_LSE);
        let pop = FpEntry { flags: FP_MPLS_POP, ..FpEntry::default() };
        assert_eq!(megaflow_mask(&part, &mpls, &pop).ipv4_src, 0);
    }
}
