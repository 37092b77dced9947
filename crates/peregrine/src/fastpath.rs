//! The switch's in-kernel fast tier, as the agent and the operator see it: loading it for
//! `peregrine run`, and the view ([`TierView`]) that serves `ctl dump-fastpath`, the
//! tracer's verdict and statistics.
//!
//! The `FAST_PATH` reply (`ctl dump-fastpath --json` prints it as is):
//! `{"enabled": true, "generation", "capacity", "entries": [{"key", "actions", "generation",
//! "live", "packets", "bytes", "out_ports"}], "events": {"hit", "miss", "stale",
//! "unparsed", "passed", "rewrite_failed"}, "tier": {"offers", "offers_lost",
//! "installed", "refused", "mismatched", "evicted", "publishes", "revalidated",
//! "flushes", "group_scans"}}`. `key` and `actions`
//! are in ovs-ofctl-like text; `out_ports` are the OpenFlow ports sent to (none for a drop);
//! `packets` counts hits credited so far, `bytes` the bytes received on the entry's
//! counter slot.

use std::sync::Arc;

use datapath::key::FlowKey;
use serde_json::json;
use switch::fastpath::FastPathView;
use xdp::layout::event;
use xdp::tier::KernelTier;

/// The tier as the agent sees it.
pub struct TierView(pub Arc<KernelTier>);

impl FastPathView for TierView {
    fn dump(&self) -> serde_json::Value {
        let (entries, stats) = self.0.dump();
        let fp = self.0.program();
        let ev = fp.events();
        let at = |i: u32| ev.get(i as usize).copied().unwrap_or(0);
        let entries: Vec<serde_json::Value> = entries
            .iter()
            .map(|d| {
                json!({
                    "key": d.key.describe(),
                    "actions": d.entry.describe_to(&d.out_ports),
                    "generation": d.entry.version,
                    "live": d.live,
                    "packets": d.packets,
                    "bytes": d.bytes,
                    "out_ports": d.out_ports,
                })
            })
            .collect();
        json!({
            "enabled": true,
            "generation": fp.version().ok(),
            "capacity": fp.capacity(),
            "entries": entries,
            "events": {
                "hit": at(event::HIT),
                "miss": at(event::MISS),
                "stale": at(event::STALE),
                "unparsed": at(event::UNPARSED),
                "passed": at(event::PASSED),
                "rewrite_failed": at(event::REWRITE_FAILED),
            },
            "tier": {
                "offers": stats.offers,
                "offers_lost": stats.offers_lost,
                "installed": stats.installed,
                "refused": stats.refused,
                "mismatched": stats.mismatched,
                "evicted": stats.evicted,
                "publishes": stats.publishes,
                "revalidated": stats.revalidated,
                "flushes": stats.flushes,
                "group_scans": stats.group_scans,
            },
        })
    }

    fn verdict(&self, key: &FlowKey) -> String {
        self.0.verdict(key).to_string()
    }

    fn sync_counters(&self) {
        self.0.harvest();
    }
}
