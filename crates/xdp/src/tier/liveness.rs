//! Port liveness in the tier: a select or fast-failover group's choice reads whether
//! ports are up, and a link going down or up is no publish (workers see it at once,
//! through the datapath's liveness flags), so the datapath tells the tier apart
//! ([`Mirror::port_liveness`](datapath::mirror::Mirror::port_liveness)).
//!
//! On such a change every entry whose decision read the port's liveness
//! ([`Credit::reads_liveness`](datapath::mirror::Credit::reads_liveness)) is credited
//! and taken out before the call returns, and its flow is queued to be judged again
//! (its workers offer it again only after the next publish). A decision judged while
//! the liveness changed is not written: `Table::live_epoch` changes with every such
//! change, under the table's lock, and an offer judged in another epoch is queued
//! again instead (see [`KernelTier::consider`]).

use datapath::key::FlowKey;

use super::{KernelTier, Table};
use crate::layout::FpKey;

impl KernelTier {
    /// Port slot `slot`'s liveness changed: takes out the entries whose group choice
    /// read it and queues their flows to be judged again.
    pub(super) fn liveness_changed(&self, slot: u16) {
        let now = self.now_ns();
        let again: Vec<FlowKey> = {
            let mut t = self.lock();
            t.live_epoch += 1;
            // Judged again: the group may now take a bucket it could not before.
            t.refused.clear();
            if !t.entries.values().any(|e| e.credit.reads_liveness(slot)) {
                return;
            }
            self.harvest_locked(&mut t, now);
            let gone: Vec<(FpKey, FlowKey)> = t
                .entries
                .iter()
                .filter(|(_, e)| e.credit.reads_liveness(slot))
                .map(|(k, e)| (*k, e.flow_key))
                .collect();
            let keys = gone.iter().map(|(k, _)| *k).collect();
            let n = self.take_out(&mut t, keys, now, "a fast-path entry through a group");
            t.stats.revalidated += n;
            gone.into_iter().map(|(_, f)| f).collect()
        };
        for k in &again {
            self.requeue(k);
        }
    }

    /// Queues `key` to be judged by the tier's thread (forgotten if the queue is full:
    /// the flow is offered again after the next publish).
    pub(super) fn requeue(&self, key: &FlowKey) {
        if self.offers.try_send(*key).is_err() {
            self.lock().stats.offers_lost += 1;
        }
    }
}

/// Whether a decision judged in liveness epoch `epoch` may be written now.
pub(super) fn same_epoch(t: &Table, epoch: u64) -> bool {
    t.live_epoch == epoch
}
