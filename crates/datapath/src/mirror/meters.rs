//! The meter on a mirrored decision's path (see the module comment of [`crate::mirror`]):
//! when the kernel may run it, and what it needs to.

use super::{Capabilities, Capability, Credit, Ineligible};
use crate::meter::{BandKind, KERNEL_BANDS};
use crate::pipeline::RuleTable;

/// The meter on a mirrored decision's path: the kernel runs it on the cells the meter
/// meters with in user space ([`Meter::kernel_slot`]), and a frame it drops goes no
/// further. Nothing before the meter sends the frame or changes its length, so the
/// kernel meters the frame as received.
///
/// [`Meter::kernel_slot`]: crate::meter::Meter::kernel_slot
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MeterCredit {
    pub id: u32,
    /// The meter's block of kernel cells, and how many bands it uses.
    pub slot: u32,
    pub bands: u8,
    /// The meter's counter slot.
    pub counter: u32,
    /// The index in [`Credit::steps`] of the table whose rule runs the meter: that step
    /// and those before see every frame, the later ones only what the meter passed.
    pub step: usize,
    /// Whether a band remarks DSCP (the kernel then remarks as the band says).
    pub remark: bool,
}

/// The kernel's part of meter `id`, run by the rule of the last step of `credit` so far;
/// `sent` whether anything was sent (or asked to be) before it, `tos_set` whether an
/// apply-action rewrote the DSCP or ECN before it; `caps` the tier's (meters, how many
/// bands, DSCP remark).
pub(super) fn metered<C: RuleTable>(
    v: &crate::pipeline::PipelineVersion<C>,
    id: u32,
    credit: &Credit,
    sent: bool,
    tos_set: bool,
    caps: Capabilities,
) -> Result<MeterCredit, Ineligible> {
    let why = |s: &str| Err(Ineligible::Meter(s.into()));
    caps.need(Capability::Meter)?;
    if credit.meter.is_some() {
        return why("it runs two meters (the kernel runs one)");
    }
    if sent {
        return why("it is sent before its meter runs (the kernel meters first)");
    }
    let Some(step) = credit.steps.len().checked_sub(1) else {
        return why("its meter runs outside the tables");
    };
    if credit.steps.get(step).is_some_and(|s| s.len_delta != 0) {
        return why("a VLAN or MPLS push or pop changes its length before its meter");
    }
    let m = v.meter(id).ok_or(Ineligible::Changed)?;
    if m.bands.len() > usize::from(caps.meter_bands()) {
        return Err(Ineligible::Meter(format!(
            "its meter has {} bands, more than the kernel tier runs ({})",
            m.bands.len(),
            caps.meter_bands()
        )));
    }
    let Some(slot) = m.kernel_slot() else {
        if m.bands.len() > KERNEL_BANDS {
            return Err(Ineligible::Meter(format!(
                "its meter has more bands than a block of cells shared with the kernel holds \
                 ({KERNEL_BANDS})"
            )));
        }
        return why(
            "its meter has no cells shared with the kernel (set before the tier was, or the \
             kernel's meters are all in use)",
        );
    };
    let remark = m.bands.iter().any(|b| matches!(b.kind, BandKind::DscpRemark { .. }));
    if remark {
        caps.need(Capability::DscpRemark)?;
    }
    if remark && tos_set {
        return why("its DSCP or ECN is rewritten before a meter that may remark it");
    }
    Ok(MeterCredit { id, slot, bands: m.bands.len() as u8, counter: m.counter, step, remark })
}

#[cfg(test)]
mod tests;
