//! The datapath's side of an in-kernel fast tier (the `xdp` crate): what a tier is told,
//! which decisions it may copy, and how its hits are counted.
//!
//! A tier is a [`Mirror`] set once on the datapath ([`Datapath::set_mirror`]). It
//! declares what its program can redo ([`Mirror::capabilities`]: [`Capabilities`], a
//! set of [`Capability`]s, such as set-field classes, VLAN and MPLS push and pop, TTL
//! sets and decrements, each group type, one frame to several ports, NORMAL, meters
//! with how many bands, DSCP remark): the datapath knows what each means for a
//! decision, the tier which ones its program has. Then:
//!
//! - Workers **offer** it the flow keys of packets they processed in batches
//!   ([`Batch::process_batch`](crate::pipeline::Batch::process_batch): parsed cleanly,
//!   input port accepting), at most once per key, version and offer round per worker
//!   slot of a small direct-mapped filter ([`OFFER_SLOTS`]), so a flow the tier cannot
//!   take costs one hash and one compare per packet. The tier starts a new round
//!   ([`Datapath::reoffer`]) when decisions changed without a publish (the MAC table
//!   changed under NORMAL): every flow then offers itself again with its next batch.
//!   Offers are held until the worker has handed the packets' output to the ports
//!   ([`Datapath::flush_offers`]): a kernel entry made from an offer then cannot
//!   overtake the flow's packets still inside the worker. `offer` must not block.
//! - The writer tells it of every **publish**, with what changed ([`Changes`]), right
//!   after the new version becomes the one workers take and before the publish retires
//!   anything: before it returns, the tier must stop serving every decision the changes
//!   may have altered, and credit what those were hit before the rule, group and bucket
//!   counter slots they name are reused. A barrier answered after a publish therefore
//!   covers the kernel tier too.
//! - The datapath tells it when a port's **liveness** changes
//!   ([`Datapath::set_port_live`], no publish): it must stop serving the decisions whose
//!   select or fast-failover choice read that port's liveness ([`Credit::reads_liveness`]).
//!
//! A decision the tier may copy is a [`Decision`] from [`Datapath::decision`]: the
//! microflow's frame (composed from its key) run through the published pipeline by the
//! tracer, accepted only when everything that happened to it is a function of the key
//! that a decision can carry and the tier says it redoes. Every tier is taken to redo
//! tables, goto, write-metadata, clear/write-actions, and outputs to ports, IN_PORT,
//! FLOOD and ALL included, as long as every port is sent the same frame once (or none:
//! a rule without outputs, a table miss, or a group with no live bucket: a drop). The
//! rest needs its [`Capability`]: set-field on Ethernet, VLAN, IPv4 TOS and addresses,
//! TCP/UDP port and MPLS label, TC and bottom-of-stack fields, push/pop VLAN, push_mpls
//! (ethertype 0x8847 or 0x8848), pop_mpls, set/dec IP and MPLS TTL, each group type
//! (the buckets the worker's code takes for this microflow, see [`groups`]), one frame
//! to several ports, NORMAL and meters (below); a decision that needs one the tier
//! lacks is [`Ineligible::Unsupported`], naming it. With no tier set, decisions are
//! judged against [`Capabilities::ALL`]. Capabilities are read only while a decision
//! is judged (the tier's slow path): workers never consult them.
//! An output to NORMAL (alone, [`Capability::Normal`]) is accepted when the learning
//! switch's decision is fixed by its MAC table as it is (attached with
//! [`Datapath::set_mac_table`], read with [`MacTable::resolve`]: the source learned and
//! alive on the input port, the destination then one port, a flood to every other
//! switch port, or a drop when it is the input port); the decision's [`NormalCredit`]
//! names the (VLAN, MAC)s it depends on and `mac_gen` the table's generation it was
//! read at, so the tier can withdraw it when the table changes (see
//! [`crate::normal::MacListener`]). NORMAL with another output, or from a source not
//! learned there ([`Ineligible::waits_for_macs`]), is refused.
//! A meter ([`Capability::Meter`]) is accepted when it is the path's only one, nothing
//! was sent, grouped or resized before it, it has at most the tier's
//! [`Capabilities::meter_bands`] bands and cells shared with the kernel (see
//! [`crate::meter`]; a block of them holds
//! [`KERNEL_BANDS`](crate::meter::KERNEL_BANDS)), and, if a band may remark the DSCP
//! ([`Capability::DscpRemark`]), no DSCP or ECN rewrite precedes it, no later table
//! reads them and no select group hashes them:
//! the decision is then the path of the frames it passes (traced with every meter
//! passing), and its [`MeterCredit`] tells the kernel which cells to meter with; a frame
//! a band drops there goes no further, one a band remarks is remarked as a worker would.
//! An MPLS frame's key holds its outermost label stack entry less the TTL, so what the
//! path does after a pop_mpls (whose frame's key comes from below the stack) is limited
//! to outputs, groups but select, and MAC and VLAN rewrites; and the decision carries
//! its frame traced again with other TTLs ([`Decision::ttl_variants`]), which show what
//! it does with the TTL (see [`mpls`]).
//! Other meters, a group that does not exist or nests too deep, the controller, set-queue,
//! PBB, TTL copies, OpenFlow 1.0's conditional rewrites (`ModVlanVid`,
//! `ModVlanPcp`, `SetFieldIfPresent`), different frames to different ports (an all group
//! whose buckets rewrite differently), two copies to one port, an output that sends
//! nothing and any other drop the tracer reports make it [`Ineligible`]. The decision
//! carries the frame before and after, so the tier can check its own rewrite of the one
//! into the other byte for byte.
//!
//! A decision covers more than its microflow: [`Credit::mask`] holds the bits of the
//! received key it depends on (the megaflow mask), the union of what each table's
//! classifier consulted for its lookup ([`Classify::consulted`]) and the input port and
//! ethertype (and IPv4's protocol); the IPv4 TTL where a decrement or a push_mpls reads
//! it; with NORMAL, the VLAN and both MACs as well (what the learning switch reads);
//! every bit when a select group runs (its bucket hashes the whole key). Every frame
//! equal to the key under the mask goes the same path with the same actions, so the tier
//! may serve them all with one entry; a publish's added rules are checked against the
//! whole megaflow ([`Credit::affected_by`]).
//!
//! Hits counted in the kernel come back through [`KernelCounters`]: a counter set of its
//! own, registered like a worker's (summed by every reader, zeroed with the others when
//! a slot is freed), crediting for each hit what a worker would have: the rules on the
//! path with their bytes, each table's lookup and match, each group run and bucket
//! taken with the frame's bytes there, the input port's receive and each output port's
//! transmit counts, packets seen, and for NORMAL its forwarded, flooded or dropped count
//! in the MAC table's statistics.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::action::{port, Action};
use crate::compose::compose;
use crate::group::GroupKind;
use crate::key::{Field, FlowKey, FlowMatch, KEY_WORDS};
use crate::normal::{MacTable, NormalTo, NormalWhy};
use crate::parse::{ethertype, parse};
use crate::pipeline::{Datapath, RuleId, RuleTable};
use crate::trace::TraceEvent;

mod capabilities;
pub mod groups;
mod kernel_counters;
mod meters;
pub mod mpls;

pub use capabilities::{Capabilities, Capability};
pub use groups::GroupHit;
use groups::GroupWalk;
pub use kernel_counters::{Hits, KernelCounters};
use meters::metered;
pub use meters::MeterCredit;
use mpls::AfterPop;
pub use mpls::TtlVariant;

/// Slots of a worker's offer filter (a power of two).
pub const OFFER_SLOTS: usize = 4096;

/// An in-kernel tier that mirrors decisions of the datapath (see the module comment).
pub trait Mirror: Send + Sync {
    /// What the tier's program can redo of a decision: [`Datapath::decision`] refuses
    /// a decision that needs anything else ([`Ineligible::Unsupported`]). A constant of
    /// the tier; asked on the slow path only (each decision judged), never per packet.
    fn capabilities(&self) -> Capabilities;
    /// A worker processed a packet with flow key `key` in version `version`. Must not
    /// block: queue it, or forget it.
    fn offer(&self, key: &FlowKey, version: u64);
    /// The writer published `version`, whose `changes` since the last publish are given
    /// (called before the publish retires counter slots).
    fn publish(&self, version: u64, changes: &Changes);
    /// Port slot `slot`'s liveness changed to `live` (workers already see it; no publish
    /// follows). Must not block on the datapath.
    fn port_liveness(&self, _slot: u16, _live: bool) {}
}

/// What a publish changed, as far as a mirrored decision can depend on it (see the
/// module comment).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Changes {
    /// Rules inserted, modified (same id), replaced or removed: a decision whose path
    /// names one of them may have changed.
    pub rules: Vec<RuleId>,
    /// Rules inserted or modified, as (table, match, priority): a decision that looked
    /// this table up with a key the match matches, and matched a rule of no higher
    /// priority (or none), may now take this rule instead.
    pub added: Vec<(u8, FlowMatch, u16)>,
    /// Groups added, modified or removed: a decision that ran or watched one of them
    /// may have changed.
    pub groups: Vec<u32>,
    /// Meters added, modified or removed: a decision that runs one of them may have
    /// changed (a modified meter has new cells).
    pub meters: Vec<u32>,
    /// The settings changed (ports and their config): every decision may have changed.
    pub config: bool,
}

/// Most offers a worker holds between flushes (more are forgotten: the flows offer
/// themselves again with their next packets).
const HELD_OFFERS: usize = 256;

/// A worker's record of the keys it offered lately (slot `hash % OFFER_SLOTS` holds a
/// tag of the last key and version offered there), and the offers it holds until its
/// output is sent.
pub(crate) struct OfferFilter {
    tags: Box<[u64]>,
    held: Vec<(FlowKey, u64)>,
}

impl OfferFilter {
    pub(crate) fn new() -> OfferFilter {
        OfferFilter { tags: vec![0; OFFER_SLOTS].into_boxed_slice(), held: Vec::new() }
    }

    /// Holds an offer of `key` (hash `hash`) in `version` if it is new to its slot in
    /// this `round` (a tag of the version and the offer round: [`offer_round`]).
    #[inline]
    pub(crate) fn hold(&mut self, key: &FlowKey, hash: u64, version: u64, round: u64) {
        if self.held.len() < HELD_OFFERS && self.fresh(hash, round) {
            self.held.push((*key, version));
        }
    }

    /// Makes every held offer through `offer`.
    pub(crate) fn flush(&mut self, mut offer: impl FnMut(&FlowKey, u64)) {
        for (k, v) in self.held.drain(..) {
            offer(&k, v);
        }
    }

    /// Whether `key` (hash `hash`) of `round` is new to its slot (and now recorded).
    #[inline]
    pub(crate) fn fresh(&mut self, hash: u64, round: u64) -> bool {
        let tag = (hash ^ round.wrapping_mul(0x9e37_79b9_7f4a_7c15)) | 1;
        match self.tags.get_mut(hash as usize & (OFFER_SLOTS - 1)) {
            Some(t) if *t != tag => {
                *t = tag;
                true
            }
            _ => false,
        }
    }
}

/// The offer filter's tag of datapath version `version` in offer round `epoch`.
#[inline]
pub(crate) fn offer_round(version: u64, epoch: u64) -> u64 {
    version ^ epoch.rotate_left(32)
}

/// Why a microflow's decision cannot be copied into the kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ineligible {
    /// No frame parses back to the key (a field the composer cannot carry).
    Compose,
    /// The frame does not parse cleanly.
    Parse,
    /// A meter on the path runs in a way the kernel cannot copy (why).
    Meter(String),
    /// A group runs in a way the tier cannot copy (why).
    Group(String),
    /// An MPLS frame is handled in a way its flow key does not fix (why).
    Mpls(String),
    /// The packet goes to the controller.
    Controller,
    /// The packet goes to NORMAL, whose decision for it is not fixed by the MAC table as
    /// it is (why).
    Normal(NormalWhy),
    /// An action a decision cannot carry, whatever the tier (named): no [`Capability`]
    /// covers it.
    Action(String),
    /// It needs a capability the tier does not declare ([`Mirror::capabilities`]).
    Unsupported(Capability),
    /// An output to a reserved port or with a queue.
    Output(u32),
    /// Copies that differ are sent, or two copies to one port.
    SeveralOutputs,
    /// Its output sends nothing (the port has `no_fwd`, or is the input port).
    Undeliverable(u32),
    /// The pipeline dropped it for a reason of its own (named).
    Dropped(&'static str),
    /// The rules changed while it was being judged (it is judged again when offered).
    Changed,
}

impl std::fmt::Display for Ineligible {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ineligible::Compose => f.write_str("no frame carries this key"),
            Ineligible::Parse => f.write_str("the frame does not parse cleanly"),
            Ineligible::Meter(why) => write!(f, "{why}"),
            Ineligible::Group(why) => write!(f, "{why}"),
            Ineligible::Mpls(why) => write!(f, "{why}"),
            Ineligible::Controller => f.write_str("it goes to the controller"),
            Ineligible::Normal(why) => write!(f, "it goes to NORMAL and {why}"),
            Ineligible::Action(a) => write!(f, "action {a} is not done in the kernel"),
            Ineligible::Unsupported(c) => write!(f, "the kernel tier does not do {c}"),
            Ineligible::Output(p) => write!(f, "output to port {p:#x} is not done in the kernel"),
            Ineligible::SeveralOutputs => f.write_str(
                "it is sent as different frames to different ports, or twice to one port",
            ),
            Ineligible::Undeliverable(p) => {
                write!(f, "its output to port {p} sends nothing (no_fwd, or the input port)")
            }
            Ineligible::Dropped(why) => write!(f, "the pipeline drops it ({why})"),
            Ineligible::Changed => f.write_str("the rules changed while it was judged"),
        }
    }
}

impl Ineligible {
    /// Whether the decision may become one the kernel can copy through a change of the
    /// MAC table alone (the learning switch learning or moving the flow's source), with
    /// no publish: the tier does not remember such flows as refused, and they offer
    /// themselves again after a change (a new offer round).
    pub fn waits_for_macs(&self) -> bool {
        matches!(self, Ineligible::Normal(NormalWhy::Unlearned | NormalWhy::Elsewhere(_)))
    }
}

/// One table a mirrored microflow visits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CreditStep {
    pub table: u8,
    /// The rule it matches there, if any, and its priority.
    pub rule: Option<RuleId>,
    pub priority: u16,
    /// Bytes the frame has there more than when received (a VLAN or MPLS push before:
    /// +4).
    pub len_delta: i32,
    /// The key the table is looked up with, when it is not the received frame's (an
    /// earlier set-field or push/pop changed it).
    pub key: Option<Box<FlowKey>>,
}

impl Credit {
    /// Whether a publish with `changes` may have altered the decision whose path this is,
    /// for any received frame whose flow key equals `key` under [`Credit::mask`] (the
    /// megaflow): a rule on the path changed, or an added rule in a table on the path
    /// could match one of the keys that table looked up for such frames, at a priority
    /// no lower than the rule matched there. A field a set-field rewrote before a table
    /// is taken at its rewritten value if the mask holds it and as free otherwise, which
    /// can only say "affected" more often.
    pub fn affected_by(&self, key: &FlowKey, changes: &Changes) -> bool {
        if changes.config {
            return true;
        }
        if changes.groups.iter().any(|g| self.groups_read.contains(g)) {
            return true;
        }
        if self.meter.is_some_and(|m| changes.meters.contains(&m.id)) {
            return true;
        }
        self.steps.iter().any(|s| {
            s.rule.is_some_and(|r| changes.rules.contains(&r))
                || changes.added.iter().any(|(t, m, p)| {
                    *t == s.table
                        && (s.rule.is_none() || *p >= s.priority)
                        && overlaps(m, s.key.as_deref().unwrap_or(key), &self.mask)
                })
        })
    }

    /// Whether the decision's group choices read port slot `slot`'s liveness.
    pub fn reads_liveness(&self, slot: u16) -> bool {
        self.live_slots.binary_search(&slot).is_ok()
    }
}

/// Whether some key equal to `key` under `mask` matches `m`.
fn overlaps(m: &FlowMatch, key: &FlowKey, mask: &FlowKey) -> bool {
    (0..KEY_WORDS).all(|i| (key.words[i] ^ m.key.words[i]) & m.mask.words[i] & mask.words[i] == 0)
}

/// Where a mirrored decision's hits are counted, and which received frames it covers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Credit {
    pub steps: Vec<CreditStep>,
    /// The bits of the received frame's flow key the decision depends on (its megaflow
    /// mask): every frame whose key equals the decision's under this mask is processed
    /// the same way, along the same path, while the rules and settings stay. Always
    /// holds the input port and the ethertype (and the IP protocol of IPv4 frames).
    pub mask: FlowKey,
    /// The input port's counter slot.
    pub in_slot: Option<u16>,
    /// The output ports' counter slots, in the order sent (none: dropped).
    pub out_slots: Vec<u16>,
    /// Bytes the sent frame has more than the received one.
    pub out_delta: i32,
    /// The groups run, in order, with the buckets taken.
    pub groups: Vec<GroupHit>,
    /// The groups run or watched (sorted): a change to one may alter the decision.
    pub groups_read: Vec<u32>,
    /// The port slots whose liveness a group choice read (sorted).
    pub live_slots: Vec<u16>,
    /// The learning switch's part, when the decision goes through NORMAL.
    pub normal: Option<NormalCredit>,
    /// The meter the decision runs, if any.
    pub meter: Option<MeterCredit>,
}

/// What a decision through NORMAL depends on in the MAC table, and what its hits count
/// there. It is fixed while the entries of (`vlan`, `src`) and (`vlan`, `dst`), the
/// switch's ports and the table's settings do not change (a refresh of `src` on
/// `in_port` changes nothing).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NormalCredit {
    pub outcome: NormalOutcome,
    /// `Field::VlanVid` form, as NORMAL saw the frame (after any rewrite before it).
    pub vlan: u16,
    pub src: u64,
    pub dst: u64,
    pub in_port: u32,
}

/// What the learning switch did with a mirrored microflow (which of [`NormalStats`]'s
/// counters its hits count in).
///
/// [`NormalStats`]: crate::normal::NormalStats
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NormalOutcome {
    /// Sent to the one port its destination is learned on.
    Forwarded,
    /// Flooded (destination unknown, multicast or broadcast).
    Flooded,
    /// Dropped: its destination is learned on its input port.
    Dropped,
}

/// Where a decision sends a frame: the output ports (distinct, at least one, in the
/// order sent) and the one frame sent to each.
pub type Sent = (Vec<u32>, Vec<u8>);

/// A microflow's decision in one version, which the kernel may reproduce.
#[derive(Clone, Debug)]
pub struct Decision {
    /// The version it was computed in.
    pub version: u64,
    pub in_port: u32,
    /// A frame of the microflow (composed from its key; an MPLS frame's bytes below its
    /// label stack as [`mpls`] says).
    pub input: Vec<u8>,
    /// Where the frame goes; `None`: it is dropped.
    pub output: Option<Sent>,
    pub credit: Credit,
    /// Through NORMAL: the MAC table's generation the decision was read at (a change of
    /// a later generation to what `credit.normal` names may have altered it).
    pub mac_gen: Option<u64>,
    /// An MPLS microflow's `input` with other TTLs in its outermost label stack entry,
    /// which its key does not hold, and what the pipeline does with each (empty for
    /// other frames).
    pub ttl_variants: Vec<TtlVariant>,
}

/// Whether action `a` is one the tier can redo: one a decision can carry, and, if a
/// [`Capability`] covers it, one the tier has (`caps`).
fn kernel_action(a: &Action, caps: Capabilities) -> Result<(), Ineligible> {
    if let Some(c) = Capability::of_action(a) {
        // NORMAL's answer is judged once the pipeline is through: see
        // `Datapath::decision`.
        return caps.need(c);
    }
    match a {
        Action::Output(p)
            if *p <= port::MAX || matches!(*p, port::IN_PORT | port::FLOOD | port::ALL) =>
        {
            Ok(())
        }
        Action::Output(port::CONTROLLER) | Action::Controller { .. } => Err(Ineligible::Controller),
        Action::Output(p) => Err(Ineligible::Output(*p)),
        // Its type is judged when it runs (`GroupWalk`).
        Action::Group(_) => Ok(()),
        // Whether these push a tag or rewrite depends on the packet; a decision has no
        // such conditional rewrite, so their flows stay in user space.
        Action::ModVlanVid(_) | Action::ModVlanPcp(_) | Action::SetFieldIfPresent(..) => {
            Err(Ineligible::Action(format!("{a:?} (a rewrite that depends on the packet)")))
        }
        // Set-queue, PBB, TTL copies, and a push_mpls with another ethertype than
        // MPLS's, whose new entry is not read as one (user space parses the frame anew
        // as that ethertype).
        other => Err(Ineligible::Action(format!("{other:?}"))),
    }
}

/// The bits every decision depends on whatever its rules consult: the input port, the
/// ethertype, and for IPv4 the protocol (which say how the frame is parsed and where
/// its rewrites land).
fn base_mask(key: &FlowKey) -> FlowKey {
    let mut m = FlowKey::ZERO;
    for f in [Field::InPort, Field::EthType] {
        m.set(f, f.full());
    }
    if key.get(Field::EthType) == u128::from(ethertype::IPV4) {
        m.set(Field::IpProto, Field::IpProto.full());
    }
    m
}

/// A match that gives every field `key` holds a value in (for the composer; a zero
/// where the composer's default is another: an IPv4 TTL, an MPLS bottom-of-stack bit).
fn match_of(key: &FlowKey) -> FlowMatch {
    let mut m = FlowMatch::ANY;
    let ty = key.get(Field::EthType) as u16;
    for &f in Field::ALL {
        let v = key.get(f);
        let given = v != 0
            || (f == Field::IpTtl && ty == ethertype::IPV4)
            || (f == Field::MplsBos && ethertype::is_mpls(ty));
        if given && !matches!(f, Field::InPhyPort | Field::Metadata | Field::TunnelId) {
            m.set(f, v, f.full());
        }
    }
    m
}

impl<C: RuleTable> Datapath<C> {
    /// Sets the in-kernel tier; false if one was set before (it stays).
    pub fn set_mirror(&self, m: Arc<dyn Mirror>) -> bool {
        self.shared.mirror.set(m).is_ok()
    }

    /// The decision the published version makes for the microflow of `key` (its input
    /// port is the key's), if the kernel tier may copy it: one a decision can carry that
    /// needs no capability the tier set with [`set_mirror`](Self::set_mirror) lacks
    /// ([`Mirror::capabilities`]; with no tier set, [`Capabilities::ALL`]). See the
    /// module comment.
    pub fn decision(&self, key: &FlowKey, now_ns: u64) -> Result<Decision, Ineligible> {
        let caps = self.shared.mirror.get().map_or(Capabilities::ALL, |m| m.capabilities());
        let in_port = key.get(Field::InPort) as u32;
        let mut input = compose(&match_of(key)).map_err(|_| Ineligible::Compose)?;
        let mut check = FlowKey::ZERO;
        let parsed = parse(&input, in_port, &mut check);
        if parsed.error.is_some() || parsed.ip_truncated {
            return Err(Ineligible::Parse);
        }
        if check != *key {
            return Err(Ineligible::Compose);
        }
        // The outermost label stack entry's TTL, if an MPLS frame.
        let ttl_at = parsed.layers.mpls.map(|m| {
            mpls::shape(&mut input, usize::from(m));
            usize::from(m) + headers::mpls::field::TTL
        });
        let trace = self.trace_passing_meters(&input, in_port, now_ns);
        let mut credit = Credit::default();
        let mut walk = GroupWalk::new(key, caps);
        let v = self.shared.read();
        let mut out_ports = Vec::new();
        // The last output an action asked for (an output to a port with no_fwd shows
        // no output event).
        let mut asked = None;
        // An apply-actions rewrite of the DSCP or ECN so far.
        let mut tos_set = false;
        let mut after_pop = AfterPop::default();
        // An action read the IP TTL: a decrement (which fails at 1) or a push_mpls
        // (whose new entry copies it).
        let mut ttl_read = false;
        for e in &trace.events {
            match e {
                TraceEvent::Parsed { error: Some(_), .. } => return Err(Ineligible::Parse),
                TraceEvent::Parsed { .. } => {}
                TraceEvent::Table { table, key: k, rule } => {
                    after_pop.looks("a table looks it up")?;
                    walk.table(k);
                    credit.steps.push(CreditStep {
                        table: *table,
                        rule: rule.map(|r| r.0),
                        priority: rule.map_or(0, |r| r.1),
                        len_delta: walk.len_delta(),
                        key: (k != key).then(|| Box::new(*k)),
                    })
                }
                TraceEvent::Meter { meter, .. } => {
                    after_pop.looks("a meter runs")?;
                    credit.meter = Some(metered(
                        &v,
                        *meter,
                        &credit,
                        asked.is_some() || !out_ports.is_empty() || !walk.hits.is_empty(),
                        tos_set,
                        caps,
                    )?)
                }
                // Output to the input port by number sends nothing (counted apart).
                TraceEvent::Apply(Action::Output(p)) | TraceEvent::SetAction(Action::Output(p))
                    if *p == in_port =>
                {
                    return Err(Ineligible::Undeliverable(*p))
                }
                TraceEvent::Apply(a) | TraceEvent::SetAction(a) => {
                    if matches!(e, TraceEvent::Apply(_)) {
                        walk.top_level();
                    }
                    kernel_action(a, caps)?;
                    after_pop.action(a)?;
                    ttl_read |= matches!(a, Action::DecNwTtl | Action::PushMpls(_));
                    walk.action(a, &v)?;
                    tos_set |= matches!(
                        (e, a),
                        (TraceEvent::Apply(_), Action::SetField(Field::IpDscp | Field::IpEcn, _))
                    );
                    if let Action::Output(p) = a {
                        asked = Some(*p);
                    }
                }
                TraceEvent::WriteActions(list) => {
                    list.iter().try_for_each(|a| kernel_action(a, caps))?
                }
                TraceEvent::ActionSet(list) => {
                    walk.top_level();
                    list.iter().try_for_each(|a| kernel_action(a, caps))?
                }
                TraceEvent::ClearActions | TraceEvent::WriteMetadata(_) | TraceEvent::Goto(_) => {}
                TraceEvent::Bucket { group, bucket } => {
                    if let Some(g) = v.group(*group) {
                        after_pop.bucket(g.kind)?;
                    }
                    walk.bucket(*group, *bucket, &v)?
                }
                TraceEvent::Output { port, queue } => {
                    if queue.is_some() {
                        return Err(Ineligible::Action("set_queue".into()));
                    }
                    if out_ports.contains(port) {
                        return Err(Ineligible::SeveralOutputs);
                    }
                    out_ports.push(*port);
                }
                TraceEvent::Normal => {}
                TraceEvent::PacketIn(_) => return Err(Ineligible::Controller),
                // The end of the pipeline with no rule: the program drops it as well.
                TraceEvent::Dropped("table miss") => {}
                TraceEvent::Dropped(why) => return Err(Ineligible::Dropped(why)),
            }
        }
        if v.version() != trace.version {
            // A publish between the trace and this read: the tables and groups read may
            // not be the traced ones.
            return Err(Ineligible::Changed);
        }
        // A select group's bucket depends on the hash of the whole key: such decisions
        // cover their microflow alone.
        let hashed =
            walk.hits.iter().any(|h| v.group(h.group).is_some_and(|g| g.kind == GroupKind::Select));
        let remark_after = credit.meter.filter(|m| m.remark).map(|m| m.step);
        if remark_after.is_some() && hashed {
            return Err(Ineligible::Meter(
                "its meter may remark the DSCP, which its select group's bucket choice hashes"
                    .into(),
            ));
        }
        credit.mask = if hashed {
            FlowKey { words: [u64::MAX; KEY_WORDS] }
        } else {
            let mut mask = base_mask(key);
            for (i, s) in credit.steps.iter().enumerate() {
                let looked_up = s.key.as_deref().unwrap_or(key);
                if let Some(t) = v.table(s.table) {
                    let consulted = t.consulted(looked_up);
                    if remark_after.is_some_and(|m| i > m)
                        && (consulted.get(Field::IpDscp) | consulted.get(Field::IpEcn)) != 0
                    {
                        return Err(Ineligible::Meter(format!(
                            "its meter may remark the DSCP, which table {} reads after it",
                            s.table
                        )));
                    }
                    mask = mask.union(&consulted);
                }
            }
            if ttl_read && key.get(Field::EthType) == u128::from(ethertype::IPV4) {
                mask.set(Field::IpTtl, Field::IpTtl.full());
            }
            mask
        };
        credit.in_slot = v.port(in_port).map(|p| p.slot);
        credit.groups = walk.hits;
        credit.groups_read = walk.groups;
        credit.live_slots = walk.live_slots;
        let mut mac_gen = None;
        let output = match (trace.outputs.normal.as_slice(), trace.outputs.tx.as_slice()) {
            ([], _) => None,
            ([n], []) => {
                let macs =
                    self.shared.normal.get().ok_or(Ineligible::Normal(NormalWhy::NoTable))?;
                let k = &n.key;
                let (vlan, src, dst) = (
                    k.get(Field::VlanVid) as u16,
                    k.get(Field::EthSrc) as u64,
                    k.get(Field::EthDst) as u64,
                );
                let r =
                    macs.resolve(n.in_port, vlan, src, dst, now_ns).map_err(Ineligible::Normal)?;
                let (ports, outcome) = match r.to {
                    NormalTo::Port(p) => (vec![p], NormalOutcome::Forwarded),
                    NormalTo::Flood(ps) => (ps, NormalOutcome::Flooded),
                    NormalTo::Drop => (Vec::new(), NormalOutcome::Dropped),
                };
                if ports.len() > 1 {
                    caps.need(Capability::Broadcast)?;
                }
                for p in &ports {
                    credit.out_slots.push(v.port(*p).ok_or(Ineligible::Output(*p))?.slot);
                }
                let frame = n.packet.data();
                credit.out_delta = frame.len() as i32 - input.len() as i32;
                credit.normal = Some(NormalCredit { outcome, vlan, src, dst, in_port: n.in_port });
                mac_gen = Some(r.gen);
                // What the learning switch reads: the frame's VLAN and MACs (as received;
                // a rewrite before NORMAL made them constants, which is as exact).
                for f in [Field::VlanVid, Field::EthSrc, Field::EthDst] {
                    credit.mask.set(f, f.full());
                }
                Some((!ports.is_empty()).then(|| (ports, frame.to_vec())))
            }
            _ => return Err(Ineligible::Normal(NormalWhy::Mixed)),
        };
        let output = match output {
            Some(o) => o,
            None => {
                let o = self.plain_output(&trace, &v, &input, &out_ports, asked, &mut credit)?;
                if o.as_ref().is_some_and(|(ports, _)| ports.len() > 1) {
                    caps.need(Capability::Broadcast)?;
                }
                o
            }
        };
        let ttl_variants = match ttl_at {
            Some(at) => self.ttl_variants(&input, at, in_port, now_ns, &trace)?,
            None => Vec::new(),
        };
        Ok(Decision {
            version: trace.version,
            in_port,
            input,
            output,
            credit,
            mac_gen,
            ttl_variants,
        })
    }

    /// The output of a decision not through NORMAL, as the trace shows it.
    fn plain_output(
        &self,
        trace: &crate::trace::Trace,
        v: &crate::pipeline::PipelineVersion<C>,
        input: &[u8],
        out_ports: &[u32],
        asked: Option<u32>,
        credit: &mut Credit,
    ) -> Result<Option<Sent>, Ineligible> {
        let output = match trace.outputs.tx.as_slice() {
            [] => match out_ports.first().copied().or(asked) {
                None => None,
                Some(p) => return Err(Ineligible::Undeliverable(p)),
            },
            [first, ..] => {
                let frame = first.packet.data();
                let mut ports = Vec::with_capacity(trace.outputs.tx.len());
                for tx in &trace.outputs.tx {
                    let p = v.port(tx.port).ok_or(Ineligible::Output(tx.port))?;
                    if tx.queue.is_some() {
                        return Err(Ineligible::Action("set_queue".into()));
                    }
                    if tx.packet.data() != frame || ports.contains(&tx.port) {
                        return Err(Ineligible::SeveralOutputs);
                    }
                    ports.push(tx.port);
                    credit.out_slots.push(p.slot);
                }
                if ports != out_ports {
                    return Err(Ineligible::SeveralOutputs);
                }
                credit.out_delta = frame.len() as i32 - input.len() as i32;
                Some((ports, frame.to_vec()))
            }
        };
        Ok(output)
    }

    /// Attaches the learning switch's MAC table, so that decisions through NORMAL can be
    /// read off it and their kernel hits counted in it; false if one was attached before
    /// (it stays).
    pub fn set_mac_table(&self, macs: MacTable) -> bool {
        self.shared.normal.set(macs).is_ok()
    }

    /// The MAC table attached with [`set_mac_table`](Self::set_mac_table).
    pub fn mac_table(&self) -> Option<&MacTable> {
        self.shared.normal.get()
    }

    /// Starts a new offer round: every worker offers again each flow it processes from
    /// its next batch on (once per filter slot, as after a publish), and holds those
    /// offers until the output is sent as ever. For a tier whose decisions changed
    /// without a publish (the MAC table's changes under NORMAL).
    pub fn reoffer(&self) {
        self.shared.offer_epoch.fetch_add(1, Ordering::Release);
    }
}

#[cfg(test)]
mod tests;
