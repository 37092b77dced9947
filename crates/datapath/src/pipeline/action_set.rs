//! The action set: at most one action of each type, executed at the end of the pipeline
//! (and by group buckets) in the order OpenFlow 1.3 §5.10 fixes, not in the order they
//! were written:
//!
//! 1. copy TTL inwards
//! 2. pop (VLAN, PBB, MPLS)
//! 3. push-MPLS
//! 4. push-PBB
//! 5. push-VLAN
//! 6. copy TTL outwards
//! 7. decrement TTL (MPLS, then IP)
//! 8. set (the TTL sets, then every set-field in field order)
//! 9. qos (set-queue)
//! 10. group
//! 11. output — skipped when a group is present.
//!
//! Writing an action replaces the one of the same type (set-field: of the same field).
//! The set has a fixed size and never allocates. OpenFlow 1.0's conditional rewrites
//! (`ModVlanVid`, `ModVlanPcp`, `SetFieldIfPresent`) have no slot: writing one does
//! nothing (1.0 has no action set, and the agent never writes them).

use std::ops::ControlFlow;

use crate::action::Action;
use crate::key::Field;

const FIELDS: usize = Field::ALL.len();

/// An OpenFlow action set.
#[derive(Clone, PartialEq, Eq)]
pub struct ActionSet {
    copy_ttl_in: bool,
    pop_vlan: bool,
    pop_pbb: bool,
    pop_mpls: Option<u16>,
    push_mpls: Option<u16>,
    push_pbb: Option<u16>,
    push_vlan: Option<u16>,
    copy_ttl_out: bool,
    dec_mpls_ttl: bool,
    dec_nw_ttl: bool,
    set_mpls_ttl: Option<u8>,
    set_nw_ttl: Option<u8>,
    /// Bit `i` set: `field_values[i]` holds a set-field for `Field::ALL[i]`.
    fields: u64,
    field_values: [u128; FIELDS],
    queue: Option<u32>,
    group: Option<u32>,
    /// `Action::Output` or `Action::Controller`.
    output: Option<Action>,
}

impl Default for ActionSet {
    fn default() -> Self {
        ActionSet::new()
    }
}

impl ActionSet {
    pub const fn new() -> ActionSet {
        ActionSet {
            copy_ttl_in: false,
            pop_vlan: false,
            pop_pbb: false,
            pop_mpls: None,
            push_mpls: None,
            push_pbb: None,
            push_vlan: None,
            copy_ttl_out: false,
            dec_mpls_ttl: false,
            dec_nw_ttl: false,
            set_mpls_ttl: None,
            set_nw_ttl: None,
            fields: 0,
            field_values: [0; FIELDS],
            queue: None,
            group: None,
            output: None,
        }
    }

    /// The set holding `actions` written in order.
    pub fn from_actions(actions: &[Action]) -> ActionSet {
        let mut s = ActionSet::new();
        for a in actions {
            s.write(a);
        }
        s
    }

    /// Empties the set (clear-actions).
    pub fn clear(&mut self) {
        *self = ActionSet::new();
    }

    /// Whether the set holds no action.
    pub fn is_empty(&self) -> bool {
        *self == ActionSet::new()
    }

    /// Writes one action, replacing the one of its type.
    #[inline]
    pub fn write(&mut self, a: &Action) {
        match *a {
            Action::Output(_) | Action::Controller { .. } => self.output = Some(a.clone()),
            Action::SetField(f, v) => {
                let i = f as usize;
                self.fields |= 1 << i;
                self.field_values[i] = v;
            }
            Action::PushVlan(t) => self.push_vlan = Some(t),
            Action::PopVlan => self.pop_vlan = true,
            Action::PushMpls(t) => self.push_mpls = Some(t),
            Action::PopMpls(t) => self.pop_mpls = Some(t),
            Action::SetMplsTtl(t) => self.set_mpls_ttl = Some(t),
            Action::DecMplsTtl => self.dec_mpls_ttl = true,
            Action::SetNwTtl(t) => self.set_nw_ttl = Some(t),
            Action::DecNwTtl => self.dec_nw_ttl = true,
            Action::CopyTtlOut => self.copy_ttl_out = true,
            Action::CopyTtlIn => self.copy_ttl_in = true,
            Action::PushPbb(t) => self.push_pbb = Some(t),
            Action::PopPbb => self.pop_pbb = true,
            Action::SetQueue(q) => self.queue = Some(q),
            Action::Group(g) => self.group = Some(g),
            // OpenFlow 1.0's conditional rewrites run only in action lists (1.0 has no
            // action set); the agent refuses them in write-actions and group buckets.
            Action::ModVlanVid(_) | Action::ModVlanPcp(_) | Action::SetFieldIfPresent(..) => {}
        }
    }

    /// Merges `other` into `self` as if its actions were written (write-actions).
    pub fn merge(&mut self, actions: &[Action]) {
        for a in actions {
            self.write(a);
        }
    }

    /// Calls `f` with each action in execution order; stops early when `f` breaks. The
    /// output is not offered when a group is present.
    #[inline]
    pub fn for_each<B>(&self, mut f: impl FnMut(&Action) -> ControlFlow<B>) -> ControlFlow<B> {
        if self.copy_ttl_in {
            f(&Action::CopyTtlIn)?;
        }
        if self.pop_vlan {
            f(&Action::PopVlan)?;
        }
        if self.pop_pbb {
            f(&Action::PopPbb)?;
        }
        if let Some(t) = self.pop_mpls {
            f(&Action::PopMpls(t))?;
        }
        if let Some(t) = self.push_mpls {
            f(&Action::PushMpls(t))?;
        }
        if let Some(t) = self.push_pbb {
            f(&Action::PushPbb(t))?;
        }
        if let Some(t) = self.push_vlan {
            f(&Action::PushVlan(t))?;
        }
        if self.copy_ttl_out {
            f(&Action::CopyTtlOut)?;
        }
        if self.dec_mpls_ttl {
            f(&Action::DecMplsTtl)?;
        }
        if self.dec_nw_ttl {
            f(&Action::DecNwTtl)?;
        }
        if let Some(t) = self.set_mpls_ttl {
            f(&Action::SetMplsTtl(t))?;
        }
        if let Some(t) = self.set_nw_ttl {
            f(&Action::SetNwTtl(t))?;
        }
        let mut bits = self.fields;
        while bits != 0 {
            let i = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            if let (Some(&fld), Some(&v)) = (Field::ALL.get(i), self.field_values.get(i)) {
                f(&Action::SetField(fld, v))?;
            }
        }
        if let Some(q) = self.queue {
            f(&Action::SetQueue(q))?;
        }
        if let Some(g) = self.group {
            f(&Action::Group(g))?;
        } else if let Some(o) = &self.output {
            f(o)?;
        }
        ControlFlow::Continue(())
    }

    /// The actions in execution order (for the tracer and tests).
    pub fn to_vec(&self) -> Vec<Action> {
        let mut v = Vec::new();
        let _ = self.for_each(|a| {
            v.push(a.clone());
            ControlFlow::<()>::Continue(())
        });
        v
    }
}

impl std::fmt::Debug for ActionSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.to_vec()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::action::port;

    #[test]
    fn executes_in_the_specified_order_whatever_the_write_order() {
        let written = [
            Action::Output(3),
            Action::SetQueue(7),
            Action::SetField(Field::Ipv4Dst, 1),
            Action::SetField(Field::EthDst, 2),
            Action::DecNwTtl,
            Action::CopyTtlOut,
            Action::PushVlan(0x8100),
            Action::PushPbb(0x88e7),
            Action::PushMpls(0x8847),
            Action::PopVlan,
            Action::CopyTtlIn,
            Action::SetNwTtl(9),
        ];
        let s = ActionSet::from_actions(&written);
        assert_eq!(
            s.to_vec(),
            vec![
                Action::CopyTtlIn,
                Action::PopVlan,
                Action::PushMpls(0x8847),
                Action::PushPbb(0x88e7),
                Action::PushVlan(0x8100),
                Action::CopyTtlOut,
                Action::DecNwTtl,
                Action::SetNwTtl(9),
                Action::SetField(Field::EthDst, 2),
                Action::SetField(Field::Ipv4Dst, 1),
                Action::SetQueue(7),
                Action::Output(3),
            ]
        );
    }

    #[test]
    fn one_action_per_type_newest_wins_and_group_hides_output() {
        let mut s = ActionSet::new();
        s.write(&Action::Output(1));
        s.write(&Action::Output(2));
        s.write(&Action::SetField(Field::EthType, 1));
        s.write(&Action::SetField(Field::EthType, 2));
        assert_eq!(s.to_vec(), vec![Action::SetField(Field::EthType, 2), Action::Output(2)]);
        s.write(&Action::Controller { max_len: 128 });
        assert_eq!(s.to_vec()[1], Action::Controller { max_len: 128 });
        s.write(&Action::Group(5));
        assert_eq!(s.to_vec().last(), Some(&Action::Group(5)));
        assert!(!s.to_vec().contains(&Action::Output(port::FLOOD)));
        assert!(!s.is_empty());
        s.clear();
        assert!(s.is_empty());
        assert_eq!(s.to_vec(), vec![]);
    }
}
