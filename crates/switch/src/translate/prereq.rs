//! Set-field prerequisites against the match that leads to the action
//! (`OFPBAC_MATCH_INCONSISTENT`, OpenFlow 1.3.5 §7.2.5).
//!
//! The facts of the flow's match ([`Facts`]: VLAN tag present, ethertype, IP protocol,
//! ICMPv6 type) are followed through the actions as they change the packet, the way Open
//! vSwitch checks a flow's actions; each set-field must find its field's prerequisites
//! (1.3.5 table 12, the same table that checks matches: [`Facts::unmet`]) met:
//!
//! - apply-actions run in list order from the match's facts: `push_vlan` leaves the
//!   packet tagged, `pop_vlan` untagged (a second tag is not known from the match),
//!   `push_mpls`/`pop_mpls` set the ethertype to their argument (after a push the IP
//!   protocol is hidden), `push_pbb` leaves an untagged PBB frame and `pop_pbb` a frame
//!   nothing is known of. A set-field of `ETH_TYPE`, `IP_PROTO` or `ICMPV6_TYPE` to a value
//!   other than the known one leaves that fact unknown (a new protocol number does not
//!   bring the new protocol's header); `VLAN_VID` has no prerequisite and changes no
//!   fact (it does not push a tag); `VLAN_PCP` needs a tag;
//! - write-actions are an action set, which runs at the end of the pipeline in the
//!   spec's fixed order (pops, push-MPLS, push-PBB, push-VLAN, then the set-fields), so
//!   they are checked in that order, from the facts the apply-actions leave. The
//!   set-fields of one set are checked against the facts after its pushes and pops, not
//!   against each other (the datapath runs them in its own field order);
//! - a group's buckets are action sets too; what leads to a bucket is the flow that sends
//!   the packet to the group, so a group action is checked by checking every bucket of
//!   the group from the facts at that action (in apply-actions: where it stands in the
//!   list; in an action set: after the set's pushes, pops and set-fields), through
//!   chained groups, up to [`MAX_CHAIN`] deep. A group-mod has no match of its own: its
//!   buckets are checked against the flows that reach the group (the agent does that
//!   for a modify; an added group has no flow yet). Open vSwitch checks neither: it
//!   installs such a group and skips the set-field at run time.
//!
//! Known exceptions to "the facts the packet has": later tables' apply-actions run
//! before the action set and may pop or push further; they are not known here.

use std::cell::RefCell;
use std::collections::HashSet;

use openflow::action::Action;
use openflow::instruction::Instruction;
use openflow::match13::{Facts, Match};
use openflow::oxm::Oxm;
use openflow::v13::group_mod::Bucket;
use openflow::{ErrorKind, OfpError};

/// How deep a group chain is followed (the datapath's bound).
pub const MAX_CHAIN: usize = datapath::group::MAX_DEPTH;

const ETH_PBB: u16 = 0x88e7;

/// A set-field whose prerequisites the match that leads to it does not meet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inconsistent {
    /// The error answered (`OFPBAC_MATCH_INCONSISTENT`, with the field and its need).
    pub error: OfpError,
    /// Whether the set-field is in a group's bucket (a group-mod or a flow's group).
    pub in_group: bool,
}

/// Checks the set-fields of `insts`, and of the groups they send to (looked up with
/// `groups`; `None` leaves a group unchecked), against the facts of match `m`.
pub fn check_instructions<'g>(
    m: &Match,
    insts: &[Instruction],
    groups: &dyn Fn(u32) -> Option<&'g [Bucket]>,
) -> Result<(), Inconsistent> {
    let mut facts = Facts::of(m);
    let done = RefCell::default();
    let cx = Walk::new(groups, &done);
    for i in insts {
        if let Instruction::ApplyActions(a) = i {
            cx.list(a, &mut facts)?;
        }
    }
    for i in insts {
        if let Instruction::WriteActions(a) = i {
            cx.set(a, &mut facts.clone())?;
        }
    }
    Ok(())
}

struct Walk<'a, 'g> {
    groups: &'a dyn Fn(u32) -> Option<&'g [Bucket]>,
    /// Groups entered so far.
    depth: usize,
    /// The groups already checked, with the facts they were checked from: a group
    /// reached again with the same facts is not walked again (buckets of chained groups
    /// would otherwise multiply).
    done: &'a RefCell<HashSet<(u32, Facts)>>,
}

impl<'a, 'g> Walk<'a, 'g> {
    fn new(
        groups: &'a dyn Fn(u32) -> Option<&'g [Bucket]>,
        done: &'a RefCell<HashSet<(u32, Facts)>>,
    ) -> Walk<'a, 'g> {
        Walk { groups, depth: 0, done }
    }

    /// An action list run in order (apply-actions).
    fn list(&self, actions: &[Action], facts: &mut Facts) -> Result<(), Inconsistent> {
        for a in actions {
            match a {
                Action::SetField(oxm) => {
                    self.check(oxm, facts)?;
                    set(oxm, facts);
                }
                Action::Group(g) => self.group(*g, facts)?,
                other => change(other, facts),
            }
        }
        Ok(())
    }

    /// An action set (write-actions, a bucket), in the order it runs.
    fn set(&self, actions: &[Action], facts: &mut Facts) -> Result<(), Inconsistent> {
        let kinds: [fn(&Action) -> bool; 6] = [
            |a| matches!(a, Action::PopVlan),
            |a| matches!(a, Action::PopPbb),
            |a| matches!(a, Action::PopMpls(_)),
            |a| matches!(a, Action::PushMpls(_)),
            |a| matches!(a, Action::PushPbb(_)),
            |a| matches!(a, Action::PushVlan(_)),
        ];
        for kind in kinds {
            actions.iter().filter(|a| kind(a)).for_each(|a| change(a, facts));
        }
        let before = *facts;
        for a in actions {
            if let Action::SetField(oxm) = a {
                self.check(oxm, &before)?;
                set(oxm, facts);
            }
        }
        for a in actions {
            if let Action::Group(g) = a {
                self.group(*g, facts)?;
            }
        }
        Ok(())
    }

    fn group(&self, id: u32, facts: &Facts) -> Result<(), Inconsistent> {
        if self.depth >= MAX_CHAIN || !self.done.borrow_mut().insert((id, *facts)) {
            return Ok(());
        }
        let Some(buckets) = (self.groups)(id) else {
            return Ok(());
        };
        let inner = Walk { groups: self.groups, depth: self.depth + 1, done: self.done };
        for (i, b) in buckets.iter().enumerate() {
            inner.set(&b.actions, &mut facts.clone()).map_err(|mut e| {
                e.error.detail = format!("group {id} bucket {i}: {}", e.error.detail);
                e
            })?;
        }
        Ok(())
    }

    fn check(&self, oxm: &Oxm, facts: &Facts) -> Result<(), Inconsistent> {
        let Some(f) = oxm.field() else { return Ok(()) };
        match facts.unmet(f) {
            None => Ok(()),
            Some(need) => Err(Inconsistent {
                error: OfpError::new(
                    ErrorKind::BAD_ACTION_MATCH_INCONSISTENT,
                    format!(
                        "set_field {} requires {need}, which the match (with the actions \
                         before it) does not ensure",
                        f.name()
                    ),
                ),
                in_group: self.depth > 0,
            }),
        }
    }
}

/// What an action other than set-field and group does to the facts.
fn change(a: &Action, facts: &mut Facts) {
    match *a {
        Action::PushVlan(_) => facts.vlan_tagged = true,
        Action::PopVlan => facts.vlan_tagged = false,
        Action::PushMpls(t) => {
            facts.eth_type = Some(t);
            facts.ip_proto = None;
            facts.icmpv6_type = None;
        }
        Action::PopMpls(t) => facts.eth_type = Some(t),
        Action::PushPbb(_) => {
            *facts = Facts { in_port: facts.in_port, eth_type: Some(ETH_PBB), ..Facts::default() }
        }
        Action::PopPbb => *facts = Facts { in_port: facts.in_port, ..Facts::default() },
        _ => {}
    }
}

/// What a set-field does to the facts: a protocol number changed to another value is no
/// longer known to describe the headers that follow.
fn set(oxm: &Oxm, facts: &mut Facts) {
    match *oxm {
        Oxm::EthType(t) if facts.eth_type != Some(t) => {
            facts.eth_type = None;
            facts.ip_proto = None;
            facts.icmpv6_type = None;
        }
        Oxm::IpProto(p) if facts.ip_proto != Some(p) => {
            facts.ip_proto = None;
            facts.icmpv6_type = None;
        }
        Oxm::Icmpv6Type(t) if facts.icmpv6_type != Some(t) => facts.icmpv6_type = None,
        _ => {}
    }
}
