//! The in-kernel fast tier as the agent sees it: something that can show its entries
//! (`peregrine ctl dump-fastpath`), say what it does with a flow (the tracer), and credit
//! its hits to the datapath's counters on demand (before a statistics reply). The tier
//! itself lives in the `xdp` crate; the binary hands the agent a view of it.

use datapath::key::FlowKey;

/// A view of the fast tier (see the module comment).
pub trait FastPathView: Send + Sync {
    /// The tier's entries and counts, as the `FAST_PATH` request's reply (see
    /// `agent::extension`).
    fn dump(&self) -> serde_json::Value;
    /// What the tier does with frames whose flow key is `key`, in words.
    fn verdict(&self, key: &FlowKey) -> String;
    /// Credits the kernel's hits so far to the datapath's counters.
    fn sync_counters(&self);
}
