//! The multi-table OpenFlow 1.3 pipeline: tables of compiled rules, groups and meters,
//! published as versions to workers that forward without ever waiting for the writer.
//!
//! # Data model
//!
//! A [`PipelineVersion`] holds 254 tables (ids 0..=253), each a classifier of
//! `Arc<`[`Rule`]`>`; the groups and meters by id; the [`DatapathConfig`]; and an
//! id → rule table so that rule ids (dense counter slots) lead back to rules. A table
//! with no matching rule drops the packet (OpenFlow 1.3; the table-miss entry is an
//! ordinary priority-0 match-all rule), unless [`MissBehaviour::Controller`] asks for
//! the 1.0 behaviour.
//!
//! # Execution (see `exec.rs`)
//!
//! Per packet: parse → (exact-match cache, see [`crate::cache`]) → table 0 → the rule's
//! instructions in the specified order: meter, apply-actions, clear-actions,
//! write-actions, write-metadata, goto-table. Metadata lives in the flow key, so goto
//! looks the next table up with the key as the apply-actions and write-metadata left
//! it. When no goto follows, the [`ActionSet`] executes in its fixed order. Outputs
//! collect in [`Outputs`]; packet-ins (the whole frame, see [`PacketIn`]) go to a bounded
//! queue. A packet-out ([`Batch::packet_out`]) runs its action list like an apply-actions
//! instruction, its `Output(TABLE)` through the tables above.
//!
//! A port loop hands whole batches to [`Batch::process_batch`] (see `batch.rs`): every
//! packet is parsed, probed in the cache and looked up in table 0 before any runs, with
//! the memory each will need prefetched; results are those of per-packet processing. A
//! table-0 rule of the plainest shape (one apply-output to a port) skips the general
//! instruction walk.
//!
//! # Versions: two copies, one published (left-right)
//!
//! Rebuilding a table of a million rules per change is far too slow, and so is cloning
//! one (copy-on-write per table). Instead the datapath keeps **two copies** of the
//! pipeline state, each behind a `RwLock`, with an index saying which one is published:
//!
//! - A worker starting a batch read-locks the published copy ([`Datapath::batch`]) and
//!   holds it for the batch; between batches, and when idle, it holds nothing (that is its
//!   quiescent state: an idle worker never delays a publish). A read lock never waits for
//!   the writer: the writer only ever locks the *unpublished* copy, and a worker that
//!   finds the copy it picked locked (it has just been unpublished) picks again. The lock
//!   is one atomic read-modify-write per batch, none per packet.
//! - The [`Writer`] applies each change at once to the unpublished copy (so it can answer
//!   with what was replaced) and logs it. [`Writer::publish`] bumps the version number,
//!   swaps the index, then write-locks the previously published copy: that waits exactly
//!   until every worker that was using it has finished its batch. It then replays the
//!   log on that copy, so both copies are equal again. When `publish` returns every
//!   worker has moved to the new version — the barrier promise — and a worker's next
//!   batch sees the new rules, its exact-match cache included (entries are tagged with the
//!   version).
//! - Rules, groups and meters are `Arc`s shared by the two copies, so memory doubles only
//!   for the classifier structures, and one change costs two classifier updates plus at
//!   most one batch of waiting.
//!
//! Meter token buckets live in the shared `Arc<Meter>`, so both copies (and every
//! version until the meter is replaced) meter against the same state. Port liveness is
//! outside the versions altogether ([`PortLiveness`]).

mod action_set;
mod batch;
mod config;
pub(crate) mod event;
pub(crate) mod exec;
mod output;
mod rule;
mod scratch;
mod version;
mod worker;

#[cfg(test)]
mod tests;

pub use action_set::ActionSet;
pub use config::{
    DatapathConfig, MissBehaviour, PortInfo, PortLiveness, RewriteFn, MAX_PORT_SLOTS,
};
pub use output::{NormalHandler, NormalPacket, Outputs, PacketIn, PacketInReason, Tx};
pub use rule::{Instructions, Rule, RuleId, TableRule};
pub use scratch::BATCH;
pub use version::{Datapath, PipelineVersion, Published, RemovedRule, WriteError, Writer};
pub use worker::{Batch, WorkerState};

use crate::classifier::{Classify, TupleSpace};

/// Number of flow tables (ids 0..=253; 254 and 255 are not tables in OpenFlow 1.3).
pub const NUM_TABLES: usize = 254;

/// What a table is: any classifier of shared rules (as [`TableRule`]s).
pub trait RuleTable: Classify<TableRule> + Default + Send + Sync + 'static {}
impl<T: Classify<TableRule> + Default + Send + Sync + 'static> RuleTable for T {}

/// The classifier the pipeline uses unless told otherwise: tuple-space search, whose
/// lookup cost does not grow with the number of rules.
pub type DefaultClassifier = TupleSpace<TableRule>;

/// A small map from 32-bit ids (group and meter ids) kept sorted: lookups are binary
/// searches, changes move the tail (groups and meters change rarely).
#[derive(Clone, Debug)]
pub struct IdMap<T> {
    items: Vec<(u32, T)>,
}

impl<T> Default for IdMap<T> {
    fn default() -> Self {
        IdMap { items: Vec::new() }
    }
}

impl<T> IdMap<T> {
    #[inline]
    pub fn get(&self, id: u32) -> Option<&T> {
        let i = self.items.binary_search_by_key(&id, |e| e.0).ok()?;
        self.items.get(i).map(|e| &e.1)
    }

    pub fn insert(&mut self, id: u32, v: T) -> Option<T> {
        match self.items.binary_search_by_key(&id, |e| e.0) {
            Ok(i) => self.items.get_mut(i).map(|e| std::mem::replace(&mut e.1, v)),
            Err(i) => {
                self.items.insert(i, (id, v));
                None
            }
        }
    }

    pub fn remove(&mut self, id: u32) -> Option<T> {
        let i = self.items.binary_search_by_key(&id, |e| e.0).ok()?;
        Some(self.items.remove(i).1)
    }

    pub fn iter(&self) -> impl Iterator<Item = (u32, &T)> {
        self.items.iter().map(|(k, v)| (*k, v))
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}
