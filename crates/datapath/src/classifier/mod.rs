//! Rule lookup: the highest-priority rule whose match covers a flow key.
//!
//! Semantics shared by every implementation here:
//! - A rule is a [`FlowMatch`] and a priority; a key matches when its masked words equal
//!   the rule's key.
//! - Lookup returns the matching rule of the highest priority. Among matching rules of
//!   equal priority the one inserted first wins (each rule gets an increasing sequence
//!   number at insertion; replacing a rule keeps its number), so the result never depends
//!   on internal layout.
//! - A rule is identified by its match and priority together: inserting the same pair
//!   again replaces the value and returns the old one.
//! - A classifier need not keep each rule's [`FlowMatch`] as given: lookups hand out the
//!   priority and the value, not a reference to a stored match. Where a classifier lists
//!   its rules it rebuilds their matches by value. The classifier is where a rule's
//!   match lives: the pipeline's rules do not keep a copy.
//!
//! [`LinearClassifier`] is the reference model: a plain list scanned in full.
//! [`TupleSpace`] is the fast one: a hash table per mask (tuple space search).

mod linear;
mod tuple_space;

pub use linear::LinearClassifier;
pub use tuple_space::{RuleRef, TupleSpace};

use crate::key::{FlowKey, FlowMatch};

/// The order of two matching rules: higher priority first, then earlier insertion.
#[inline]
pub fn better(a_prio: u16, a_seq: u64, b_prio: u16, b_seq: u64) -> bool {
    a_prio > b_prio || (a_prio == b_prio && a_seq < b_seq)
}

/// What every classifier offers (the reference model and the fast ones alike), so tests
/// can compare them and the pipeline can be written against one interface.
pub trait Classify<T> {
    /// Adds a rule, or replaces the value of the rule with the same match and priority
    /// (returning the old value; the rule keeps its insertion order).
    fn insert(&mut self, m: FlowMatch, priority: u16, value: T) -> Option<T>;
    /// Removes the rule with exactly this match and priority.
    fn remove(&mut self, m: &FlowMatch, priority: u16) -> Option<T>;
    /// The value of the rule with exactly this match and priority.
    fn get(&self, m: &FlowMatch, priority: u16) -> Option<&T>;
    /// Every rule: its match (rebuilt, by value), priority and value, in no set order.
    fn rules(&self) -> Box<dyn Iterator<Item = (FlowMatch, u16, &T)> + '_>;
    /// The best matching rule for `key`: its priority and value.
    fn lookup(&self, key: &FlowKey) -> Option<(u16, &T)>;
    /// Number of rules.
    fn len(&self) -> usize;
    /// The bits of `key` the lookup's result depends on (a megaflow mask): every key
    /// equal to `key` under this mask gets the same result from [`lookup`](Self::lookup)
    /// while the rules do not change. An implementation may give more bits than needed;
    /// the default gives all of them.
    fn consulted(&self, _key: &FlowKey) -> FlowKey {
        FlowKey { words: [u64::MAX; crate::key::KEY_WORDS] }
    }
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
