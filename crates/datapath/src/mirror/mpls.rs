//! MPLS on mirrored decisions (see the module comment of [`crate::mirror`]): what the
//! kernel may redo of a path that pushes, pops or rewrites label stack entries, and
//! the frames that show what a decision does with the MPLS TTL.
//!
//! A flow key holds the outermost label stack entry's label, TC and bottom-of-stack
//! bit, but neither its TTL nor anything below it. Hence:
//!
//! - After a pop_mpls the frame's key is read from bytes below the popped entry (the
//!   next entry, or the payload), which the received key does not hold: a path that
//!   looks at the frame after a pop (a table, a meter, a select group's bucket choice,
//!   or an action other than an output, a group, a MAC or VLAN rewrite and a VLAN push
//!   or pop) is refused (`AfterPop`).
//! - What a decision does with the outermost entry's TTL (keeps, sets or decrements
//!   it; a decrement fails at 1 and 0) is read off the decision's frame traced again
//!   with other TTLs ([`TtlVariant`], [`VARIANT_TTLS`]): the tier keeps the decisions
//!   whose treatment its program redoes.
//! - An MPLS microflow's frame (the composer's) gets bytes below its stack that read as
//!   an IPv4 header and as an IPv6 header whose lengths cover the rest of the frame
//!   (`shape`), so that a pop to IP keeps the rest as it is, as it does for frames
//!   without Ethernet padding (user space trims the padding after such a pop).

use headers::{ipv6, Ipv4Header, Ipv6Header, MplsEntry};

use crate::action::Action;
use crate::group::GroupKind;
use crate::key::Field;
use crate::pipeline::{Datapath, RuleTable};
use crate::trace::Trace;

use super::Ineligible;

/// The TTLs an MPLS decision's frame is traced again with: 1, where a decrement fails;
/// 2, where a second one would; 255, with the frame's own TTL
/// ([`DEFAULT_TTL`](crate::compose::DEFAULT_TTL)) a third point of what the decision
/// makes of the TTL.
pub const VARIANT_TTLS: [u8; 3] = [1, 2, 255];

/// A decision's MPLS frame with another TTL in its outermost label stack entry, and
/// what the published pipeline does with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TtlVariant {
    /// The outermost entry's TTL in `input`.
    pub ttl: u8,
    /// The decision's frame with that TTL.
    pub input: Vec<u8>,
    /// Whether it goes the decision's way: the same trace (tables, rules, actions,
    /// buckets, outputs) with one frame sent to every output.
    pub same_path: bool,
    /// Along the same path, the frame sent (`None`: dropped).
    pub output: Option<Vec<u8>>,
}

/// Fills the bytes below the label stack starting at `mpls` (a composed frame's) so
/// that they read as an IPv4 header whose total length, and an IPv6 header whose
/// payload length plus its 40 bytes, end where the frame ends (each where the frame is
/// long enough to hold it).
pub(super) fn shape(frame: &mut [u8], mpls: usize) {
    let mut at = mpls;
    while let Some(lse) = MplsEntry::new_checked_at(frame, at) {
        at += headers::mpls::ENTRY_LEN;
        if lse.bos() {
            break;
        }
    }
    let n = frame.len().saturating_sub(at);
    if let Some(mut ip) = Ipv4Header::new_checked_at_mut(frame, at) {
        ip.set_total_len(n as u16);
    }
    if let Some(mut ip) = Ipv6Header::new_checked_at_mut(frame, at) {
        ip.set_payload_len((n - ipv6::HEADER_LEN) as u16);
    }
}

/// Follows a decision's path for what it does after a pop_mpls (see the module
/// comment).
#[derive(Default)]
pub(super) struct AfterPop {
    popped: bool,
}

impl AfterPop {
    /// Action `a` executes.
    pub fn action(&mut self, a: &Action) -> Result<(), Ineligible> {
        let below = matches!(
            a,
            Action::Output(_)
                | Action::Group(_)
                | Action::SetField(
                    Field::EthDst | Field::EthSrc | Field::VlanVid | Field::VlanPcp,
                    _
                )
                | Action::PushVlan(_)
                | Action::PopVlan
        );
        if self.popped && !below {
            return Err(Ineligible::Mpls(format!(
                "its {a:?} after a pop_mpls reads the frame below the popped label stack \
                 entry, which its flow key does not hold"
            )));
        }
        if matches!(a, Action::PopMpls(_)) {
            self.popped = true;
        }
        Ok(())
    }

    /// Step `what` (a table lookup, a meter) looks at the frame.
    pub fn looks(&self, what: &str) -> Result<(), Ineligible> {
        if self.popped {
            return Err(Ineligible::Mpls(format!(
                "{what} after a pop_mpls, where its flow key is read from below the popped \
                 label stack entry"
            )));
        }
        Ok(())
    }

    /// A group of `kind` takes a bucket.
    pub fn bucket(&self, kind: GroupKind) -> Result<(), Ineligible> {
        if kind == GroupKind::Select {
            self.looks("a select group hashes it")?;
        }
        Ok(())
    }
}

/// The one frame `t` sends (`Some(None)`: none), or `None` if it sends different frames
/// or goes both to NORMAL and elsewhere.
fn sent(t: &Trace) -> Option<Option<&[u8]>> {
    match (t.outputs.normal.as_slice(), t.outputs.tx.as_slice()) {
        ([], []) => Some(None),
        ([n], []) => Some(Some(n.packet.data())),
        ([], [first, rest @ ..]) => {
            let f = first.packet.data();
            rest.iter().all(|tx| tx.packet.data() == f).then_some(Some(f))
        }
        _ => None,
    }
}

impl<C: RuleTable> Datapath<C> {
    /// The decision's frame `input`, traced as `main`, traced again with each of
    /// [`VARIANT_TTLS`] at `ttl_at` (its outermost label stack entry's TTL).
    pub(super) fn ttl_variants(
        &self,
        input: &[u8],
        ttl_at: usize,
        in_port: u32,
        now_ns: u64,
        main: &Trace,
    ) -> Result<Vec<TtlVariant>, Ineligible> {
        VARIANT_TTLS
            .iter()
            .map(|&ttl| {
                let mut f = input.to_vec();
                *f.get_mut(ttl_at).ok_or(Ineligible::Compose)? = ttl;
                let t = self.trace_passing_meters(&f, in_port, now_ns);
                if t.version != main.version {
                    return Err(Ineligible::Changed);
                }
                let out = sent(&t);
                Ok(TtlVariant {
                    ttl,
                    same_path: out.is_some() && t.events == main.events,
                    output: out.flatten().map(<[u8]>::to_vec),
                    input: f,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shaped_bytes_read_as_ip_lengths_that_end_with_the_frame() {
        // One entry (bottom of stack) at 14, 46 bytes below it.
        let mut f = vec![0u8; 64];
        f[14..18].copy_from_slice(&[0, 0, 1, 64]);
        shape(&mut f, 14);
        assert_eq!(u16::from_be_bytes([f[20], f[21]]), 46);
        assert_eq!(u16::from_be_bytes([f[22], f[23]]) + 40, 46);
        // Two entries: the lengths go below the second; 30 bytes there hold IPv4's only.
        let mut g = vec![0u8; 56];
        g[14..18].copy_from_slice(&[0, 0, 0, 64]);
        g[18..22].copy_from_slice(&[0, 0, 1, 64]);
        shape(&mut g, 14);
        assert_eq!(u16::from_be_bytes([g[24], g[25]]), 34);
        assert_eq!(&g[26..28], &[0, 0]);
    }

    #[test]
    fn after_a_pop_only_what_reads_no_more_than_the_key_goes() {
        let mut w = AfterPop::default();
        assert!(w.action(&Action::SetField(Field::MplsLabel, 5)).is_ok());
        assert!(w.looks("a table looks it up").is_ok());
        assert!(w.action(&Action::PopMpls(0x0800)).is_ok());
        for ok in [
            Action::Output(2),
            Action::SetField(Field::EthDst, 9),
            Action::PushVlan(0x8100),
            Action::PopVlan,
            Action::Group(1),
        ] {
            assert!(w.action(&ok).is_ok(), "{ok:?}");
        }
        for bad in [
            Action::DecNwTtl,
            Action::SetField(Field::Ipv4Dst, 1),
            Action::PopMpls(0x0800),
            Action::PushMpls(0x8847),
            Action::DecMplsTtl,
        ] {
            assert!(matches!(w.action(&bad), Err(Ineligible::Mpls(_))), "{bad:?}");
        }
        assert!(w.looks("a table looks it up").is_err());
        assert!(w.bucket(GroupKind::All).is_ok());
        assert!(w.bucket(GroupKind::Select).is_err());
    }
}
