//! What a flow table holds for each entry: its key ([`FlowKey`]: normalised match and
//! priority, which the table is ordered by) and the entry itself ([`FlowEntry`]: the
//! match as sent, cookie, timeouts, flags, instructions, when it was installed and the
//! datapath rule implementing it).

use super::norm::NormRef;
use super::{duration_since, NS_PER_SEC};
use datapath::pipeline::RuleId;
use openflow::action::{port, Action, OFPG_ANY};
use openflow::instruction::Instruction;
use openflow::match13::Match;
use openflow::v13::packet_in::{FlowRemoved, FlowRemovedReason};
use std::sync::Arc;

/// What identifies a flow entry within its table: its normalised match and priority,
/// packed (the priority's two bytes, big-endian, then the normal form's). Up to
/// [`FlowKey::INLINE`] bytes, such as `tcp,nw_src=10.0.0.1,tp_dst=80`'s 27, are held in
/// the key itself, with no allocation of their own; longer ones in one allocation. A key
/// is 32 bytes in the table's B-tree. Keys compare, order and hash by their bytes:
/// by priority, then match.
#[derive(Clone)]
pub struct FlowKey(Packed);

/// A key's bytes. Invariant: `Inline` exactly when there are at most
/// [`FlowKey::INLINE`] of them, its `len` first bytes of `bytes`.
#[derive(Clone)]
enum Packed {
    Inline { len: u8, bytes: [u8; FlowKey::INLINE] },
    Heap(Box<[u8]>),
}

const _: () = assert!(std::mem::size_of::<FlowKey>() == 32, "FlowKey is not 32 bytes");

impl FlowKey {
    /// The most bytes a key holds without an allocation of its own.
    pub const INLINE: usize = 30;

    pub fn new(match_: NormRef<'_>, priority: u16) -> FlowKey {
        let len = 2 + match_.0.len();
        if len <= Self::INLINE {
            let mut bytes = [0; Self::INLINE];
            bytes[..2].copy_from_slice(&priority.to_be_bytes());
            bytes[2..len].copy_from_slice(match_.0);
            return FlowKey(Packed::Inline { len: len as u8, bytes });
        }
        let mut packed = Vec::with_capacity(len);
        packed.extend_from_slice(&priority.to_be_bytes());
        packed.extend_from_slice(match_.0);
        FlowKey(Packed::Heap(packed.into_boxed_slice()))
    }

    /// The packed bytes: priority, then normal form.
    fn bytes(&self) -> &[u8] {
        match &self.0 {
            Packed::Inline { len, bytes } => bytes.get(..usize::from(*len)).unwrap_or_default(),
            Packed::Heap(b) => b,
        }
    }

    /// The normalised match.
    pub fn match_(&self) -> NormRef<'_> {
        NormRef(self.bytes().get(2..).unwrap_or_default())
    }

    pub fn priority(&self) -> u16 {
        match self.bytes().first_chunk::<2>() {
            Some(p) => u16::from_be_bytes(*p),
            None => 0,
        }
    }
}

impl PartialEq for FlowKey {
    fn eq(&self, other: &FlowKey) -> bool {
        self.bytes() == other.bytes()
    }
}

impl Eq for FlowKey {}

impl PartialOrd for FlowKey {
    fn partial_cmp(&self, other: &FlowKey) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for FlowKey {
    fn cmp(&self, other: &FlowKey) -> std::cmp::Ordering {
        self.bytes().cmp(other.bytes())
    }
}

impl std::hash::Hash for FlowKey {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.bytes().hash(state);
    }
}

impl std::fmt::Debug for FlowKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FlowKey")
            .field("priority", &self.priority())
            .field("match", &self.match_().0)
            .finish()
    }
}

/// A match kept as its wire bytes (an `ofp_match` with its OXM TLVs, without padding):
/// a tenth of the room its fields take decoded, for a table of a million entries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PackedMatch(pub(super) Box<[u8]>);

impl PackedMatch {
    pub fn new(m: &Match) -> PackedMatch {
        let mut w = openflow::wire::Writer::new();
        m.encode(&mut w);
        let mut bytes = w.into_vec();
        bytes.truncate(m.unpadded_len());
        PackedMatch(bytes.into_boxed_slice())
    }

    /// The match. (Its bytes came from [`Match::encode`], so they decode; were they not
    /// to, the match would read as empty.)
    pub fn get(&self) -> Match {
        decode_unpadded(self.0.to_vec()).unwrap_or_default()
    }
}

/// The match whose `ofp_match` bytes, without their padding, are `bytes`.
pub(super) fn decode_unpadded(mut bytes: Vec<u8>) -> Option<Match> {
    bytes.resize(bytes.len().next_multiple_of(8), 0);
    Match::decode(&mut openflow::wire::Reader::new(&bytes)).ok()
}

/// How an entry keeps the match its flow-mod sent, which flow-removed, flow-stats and
/// monitor messages give back as sent. Most matches are their normal form (the entry's
/// key) in some order: each field once, no value bit outside its mask, no all-zero mask,
/// a mask sent exactly when it is not full. Such a match is kept as the order its fields
/// came in, `Ranks` (at most 15 fields: their number in the top 4 bits, and field `i` the
/// key's constraint of rank `ranks >> 4i & 15`); any other as its wire bytes. Either
/// takes 16 bytes in the entry.
/// Invariant: [`SentMatch::get`] with the key's normal form gives the match as sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SentMatch {
    Ranks(u64),
    Packed(PackedMatch),
}

impl SentMatch {
    /// How to keep `m`, whose normal form is `norm`.
    pub fn new(m: &Match, norm: NormRef<'_>) -> SentMatch {
        match Self::ranked(m, norm) {
            Some(s) if s.get(norm) == *m => s,
            _ => SentMatch::Packed(PackedMatch::new(m)),
        }
    }

    fn ranked(m: &Match, norm: NormRef<'_>) -> Option<SentMatch> {
        let headers: Vec<u32> = norm.headers().collect();
        let n = m.fields.len();
        if n > 15 || headers.len() != n {
            return None;
        }
        let mut ranks = (n as u64) << 60;
        for (i, x) in m.fields.iter().enumerate() {
            let r = headers.iter().position(|&h| h == x.header() & 0xffff_fe00)?;
            ranks |= (r as u64) << (4 * i);
        }
        Some(SentMatch::Ranks(ranks))
    }

    /// The match as sent, given the normal form of the key it is stored under.
    pub fn get(&self, norm: NormRef<'_>) -> Match {
        match self {
            SentMatch::Packed(p) => p.get(),
            SentMatch::Ranks(ranks) => {
                let n = ranks >> 60;
                let r: Vec<u8> = (0..n).map(|i| (ranks >> (4 * i) & 15) as u8).collect();
                norm.to_match(Some(&r)).unwrap_or_default()
            }
        }
    }
}

/// One flow entry as the controller installed it.
/// Invariant: `FlowKey::new(NormMatch::new(&self.match_(key)).view(), self.priority)`
/// is `key`, the key it is stored under.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowEntry {
    /// The match as the flow-mod that installed the entry sent it (for flow-removed and
    /// flow-stats replies; [`FlowEntry::match_`] gives it).
    pub sent: SentMatch,
    pub priority: u16,
    pub cookie: u64,
    /// Seconds; 0 is none.
    pub idle_timeout: u16,
    /// Seconds; 0 is none.
    pub hard_timeout: u16,
    /// `ofp_flow_mod_flags` of the add.
    pub flags: u16,
    /// 1.4's eviction importance (0 from older versions); kept and reported, never used
    /// to evict (tables do not evict).
    pub importance: u16,
    /// Shared with the other entries of equal instructions (see [`FlowTables`]); a thin
    /// pointer, 8 bytes in every entry.
    pub instructions: Arc<Vec<Instruction>>,
    /// When the entry was added (ns, the caller's clock); its duration counts from here.
    pub installed_at: u64,
    /// The datapath rule implementing the entry, once the caller has set it.
    pub rule: Option<RuleId>,
}

// An entry is a 64-byte slot of the store (`store.rs`): a million entries, 64 MB.
const _: () = assert!(std::mem::size_of::<FlowEntry>() <= 64, "FlowEntry grew past 64 bytes");

impl FlowEntry {
    /// The match as the flow-mod that installed the entry sent it; `key` is the key the
    /// entry is stored under.
    pub fn match_(&self, key: &FlowKey) -> Match {
        self.sent.get(key.match_())
    }

    fn actions(&self) -> impl Iterator<Item = &Action> {
        self.instructions.iter().flat_map(|i| match i {
            Instruction::ApplyActions(a) | Instruction::WriteActions(a) => a.as_slice(),
            _ => &[],
        })
    }

    /// The out_port filter of deletes and stats: true for `OFPP_ANY`, otherwise whether
    /// one of the entry's own actions outputs to `out_port`.
    pub fn outputs_to(&self, out_port: u32) -> bool {
        out_port == port::ANY
            || self.actions().any(|a| matches!(a, Action::Output { port, .. } if *port == out_port))
    }

    /// The out_group filter: true for `OFPG_ANY`, otherwise whether one of the entry's
    /// own actions is `group:out_group`.
    pub fn outputs_to_group(&self, out_group: u32) -> bool {
        out_group == OFPG_ANY
            || self.actions().any(|a| matches!(a, Action::Group(g) if *g == out_group))
    }

    /// Whether `cookie & mask == entry cookie & mask`.
    pub fn cookie_matches(&self, cookie: u64, mask: u64) -> bool {
        self.cookie & mask == cookie & mask
    }

    /// Time since installation as `(seconds, nanoseconds)`, 0 if `now` is earlier.
    pub fn duration(&self, now: u64) -> (u32, u32) {
        duration_since(self.installed_at, now)
    }

    /// The `OFPT_FLOW_REMOVED` body for this entry (stored under `key`), removed from
    /// `table_id` at `now` with the datapath's final counters.
    pub fn flow_removed(
        &self,
        key: &FlowKey,
        table_id: u8,
        reason: FlowRemovedReason,
        now: u64,
        packet_count: u64,
        byte_count: u64,
    ) -> FlowRemoved {
        let (duration_sec, duration_nsec) = self.duration(now);
        FlowRemoved {
            cookie: self.cookie,
            priority: self.priority,
            reason,
            table_id,
            duration_sec,
            duration_nsec,
            idle_timeout: self.idle_timeout,
            hard_timeout: self.hard_timeout,
            packet_count,
            byte_count,
            match_: self.match_(key),
        }
    }

    /// Whether the entry has an idle or a hard timeout.
    pub(super) fn has_timeout(&self) -> bool {
        self.idle_timeout != 0 || self.hard_timeout != 0
    }

    pub(super) fn idle_expired(&self, now: u64, last_used: Option<u64>) -> bool {
        self.idle_deadline(last_used).is_some_and(|d| now >= d)
    }

    pub(super) fn hard_expired(&self, now: u64) -> bool {
        self.hard_deadline().is_some_and(|d| now >= d)
    }

    /// When the hard timeout falls, if the entry has one.
    pub(super) fn hard_deadline(&self) -> Option<u64> {
        (self.hard_timeout != 0)
            .then(|| self.installed_at.saturating_add(u64::from(self.hard_timeout) * NS_PER_SEC))
    }

    /// When the idle timeout falls if no packet comes after `last_used`.
    pub(super) fn idle_deadline(&self, last_used: Option<u64>) -> Option<u64> {
        let last = last_used.map_or(self.installed_at, |t| t.max(self.installed_at));
        (self.idle_timeout != 0)
            .then(|| last.saturating_add(u64::from(self.idle_timeout) * NS_PER_SEC))
    }
}
