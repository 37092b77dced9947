//! Compiled rules: a match, a priority and OpenFlow 1.3 instructions, as the agent hands
//! them to the datapath (never wire types).
//!
//! Invariants kept by the [`Writer`](super::Writer) when a rule is inserted:
//! - `id` is a dense slot number unique among the rules of the published pipeline; it
//!   indexes the per-worker counters and the version's id → rule table.
//! - `cache_safe` says whether the rule's apply-actions change the flow key only as a
//!   function of the key itself (see [`Instructions::cache_safe`]); the exact-match cache
//!   relies on it.
//! - `fast` is the compiled shape of the instructions (see [`Fast`]), recomputed with the
//!   other derived fields whenever the rule changes.
//!
//! - `instructions` are shared: the writer gives rules with equal instructions one copy
//!   ([`crate::intern::Interner`]), so a table of a million flows that all output to a few ports holds a
//!   few instruction lists, not a million.
//!
//! - A rule carries its match only until it is inserted: the writer takes it
//!   ([`Rule::flow_match`] is `None` after), and the table, which must hold it anyway,
//!   is where it lives. A rule is thus 48 bytes.
//!
//! Layout: `Rule` is `repr(C)` with what a forwarded packet reads first (id, the fast
//! form, flags, cookie) at the start, so a rule of the common shape costs one cache line
//! per packet.

use std::ops::Deref;
use std::sync::Arc;

use crate::action::{port, Action};
use crate::key::{CompactMatch, FlowMatch};

/// A rule's dense counter slot.
pub type RuleId = u32;

/// The instructions of a rule, executed in this order (OpenFlow 1.3 §5.9): meter,
/// apply-actions, clear-actions, write-actions, write-metadata, goto-table.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Instructions {
    /// Meter the packet first; the meter may drop it or remark its DSCP.
    pub meter: Option<u32>,
    /// Actions executed at once, in list order (an output sends a copy).
    pub apply: Vec<Action>,
    /// Empty the action set.
    pub clear_actions: bool,
    /// Actions merged into the action set (one per action type, the newest wins).
    pub write_actions: Option<Vec<Action>>,
    /// `(value, mask)`: metadata = (metadata & !mask) | (value & mask).
    pub write_metadata: Option<(u64, u64)>,
    /// Continue in this table (which must be greater than the current one; a goto to an
    /// earlier or the same table ends the pipeline, as the agent should have refused it).
    pub goto_table: Option<u8>,
}

impl Instructions {
    /// Whether executing the apply-actions leaves a flow key that depends only on the
    /// key before them. Pops and TTL copies read header bytes the key does not hold
    /// (an inner tag, an MPLS TTL), so after them two packets with equal keys may differ;
    /// the exact-match cache does not record paths that look up a table after such a rule.
    pub fn cache_safe(&self) -> bool {
        !self.apply.iter().any(|a| {
            matches!(
                a,
                Action::PopVlan
                    | Action::PopMpls(_)
                    | Action::PopPbb
                    | Action::CopyTtlIn
                    | Action::CopyTtlOut
            )
        })
    }
}

/// The shape of a rule's instructions, for the fast paths of forwarding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fast {
    /// Exactly one instruction, apply-actions `[Output(port)]` to a port number (not a
    /// reserved port): the packet goes to that port and the pipeline ends.
    Output(u32),
    /// Exactly one instruction, a valid goto-table (to a later table): the packet moves
    /// on unchanged.
    Goto,
    /// Anything else: run the instructions in full.
    Other,
}

impl Fast {
    fn of(ins: &Instructions, table: u8) -> Fast {
        let only_apply = ins.meter.is_none()
            && !ins.clear_actions
            && ins.write_actions.is_none()
            && ins.write_metadata.is_none();
        match (only_apply, ins.apply.as_slice(), ins.goto_table) {
            (true, [Action::Output(p)], None) if *p <= port::MAX => Fast::Output(*p),
            (true, [], Some(t)) if t > table && (t as usize) < super::NUM_TABLES => Fast::Goto,
            _ => Fast::Other,
        }
    }
}

/// A flow entry of one table.
#[derive(Clone, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Rule {
    /// Counter slot, assigned by the writer on insertion (any value given is replaced).
    pub id: RuleId,
    pub(crate) fast: Fast,
    pub(crate) cache_safe: bool,
    pub(crate) table_miss: bool,
    pub(crate) table: u8,
    pub priority: u16,
    /// Kept for the agent (which expires rules from the counters' last-used time).
    pub idle_timeout: u16,
    pub hard_timeout: u16,
    /// OpenFlow `OFPFF_*` flags, kept for the agent.
    pub flags: u16,
    pub cookie: u64,
    /// Shared with other rules of equal instructions once inserted (change them through
    /// [`Arc::make_mut`]).
    pub instructions: Arc<Instructions>,
    /// The match, until the writer inserts the rule (then the table holds it).
    pub(crate) matches: Option<Box<CompactMatch>>,
}

// A shared rule is then a 64-byte allocation (with the `Arc`'s counts).
const _: () = assert!(std::mem::size_of::<Rule>() <= 48, "Rule grew past 48 bytes");

impl Rule {
    /// A rule with no cookie, timeouts or flags.
    pub fn new(flow_match: FlowMatch, priority: u16, instructions: Instructions) -> Rule {
        let mut r = Rule {
            id: 0,
            cookie: 0,
            priority,
            matches: Some(Box::new(CompactMatch::from(&flow_match))),
            instructions: Arc::new(instructions),
            idle_timeout: 0,
            hard_timeout: 0,
            flags: 0,
            fast: Fast::Other,
            cache_safe: true,
            table_miss: false,
            table: 0,
        };
        r.refresh();
        r
    }

    /// Recomputes the derived flags after the public fields changed.
    pub(crate) fn refresh(&mut self) {
        self.cache_safe = self.instructions.cache_safe();
        self.fast = Fast::of(&self.instructions, self.table);
        if let Some(m) = &self.matches {
            self.table_miss = self.priority == 0 && m.is_any();
        }
    }

    /// The rule's match as built; `None` once the rule is in a table (the table holds
    /// it: see [`Classify::rules`](crate::classifier::Classify::rules)).
    pub fn flow_match(&self) -> Option<FlowMatch> {
        self.matches.as_ref().map(|m| m.get())
    }

    /// Gives the rule another match (before it is inserted).
    pub fn set_flow_match(&mut self, m: &FlowMatch) {
        self.matches = Some(Box::new(CompactMatch::from(m)));
        self.refresh();
    }

    /// Whether this is the table-miss entry (priority 0, matches everything): packet-ins
    /// it sends carry reason `NoMatch`.
    pub fn is_table_miss(&self) -> bool {
        self.table_miss
    }

    /// The table the rule was inserted into.
    pub fn table(&self) -> u8 {
        self.table
    }
}

/// What a table's classifier holds for a rule: the shared rule, with what a packet of the
/// common shape reads copied beside it (the counter slot and, for a `Fast::Output` rule,
/// the port), so the classifier's entry answers such a packet without loading the rule
/// from memory. Derefs to the rule. Invariant: `id` and `out` are the rule's own `id`
/// and `fast` output port, fixed when it was built (rules are immutable once shared).
#[derive(Clone, Debug)]
pub struct TableRule {
    pub(crate) id: RuleId,
    /// The port of a `Fast::Output` rule, else [`TableRule::NOT_FAST`].
    out: u32,
    rule: Arc<Rule>,
}

impl TableRule {
    /// `out` of a rule that is not `Fast::Output` (above every port number it can hold).
    const NOT_FAST: u32 = u32::MAX;

    pub fn new(rule: Arc<Rule>) -> TableRule {
        let out = match rule.fast {
            Fast::Output(p) => p,
            _ => Self::NOT_FAST,
        };
        TableRule { id: rule.id, out, rule }
    }

    /// The port a `Fast::Output` rule sends to (read from the table entry itself).
    #[inline]
    pub(crate) fn fast_output(&self) -> Option<u32> {
        (self.out != Self::NOT_FAST).then_some(self.out)
    }

    /// The shared rule.
    pub fn rule(&self) -> &Arc<Rule> {
        &self.rule
    }

    /// Gives back the shared rule.
    pub fn into_rule(self) -> Arc<Rule> {
        self.rule
    }
}

impl Deref for TableRule {
    type Target = Rule;
    #[inline]
    fn deref(&self) -> &Rule {
        &self.rule
    }
}
