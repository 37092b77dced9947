//! The switch's in-kernel fast tier, as the agent and the operator see it: loading it for
//! `peregrine run`, and the view ([`TierView`]) that serves `ctl dump-fastpath`, the
//! tracer's verdict and statistics.
//!
//! The `FAST_PATH` reply (`ctl dump-fastpath --json` prints it as is):
//! `{"enabled": true, "generation", "capacity", "entries": [{"key", "megaflow", "actions",
//! "generation", "live", "packets", "bytes", "out_ports", "normal", "groups", "meter"}], "masks": [{"slot",
//! "mask", "entries"}], "events": {"hit", "miss", "stale", "unparsed", "passed",
//! "rewrite_failed", "partial_csum", "csum_finished", "undelivered", "metered",
//! "meter_dropped"}, "tier": {"offers", "offers_lost",
//! "installed", "refused", "mismatched", "evicted", "publishes", "revalidated",
//! "flushes", "group_scans", "mac_withdrawn", "mac_stale"}, "ports": [{"port",
//! "name", "mode", "delivery", "why", "lost"}], "lost_counted": true or why not}`. `key`
//! and `actions` are in ovs-ofctl-like text, the key showing only the fields its mask
//! holds (a `megaflow` covers every frame equal to it there; otherwise it is one
//! microflow, all fields shown); `masks` are the megaflow masks in the order the program
//! tries them (only masks with entries; slot 0 holds the exact one), `mask` naming the
//! fields each holds, as `FIELD` (every bit) or `FIELD/BITS`; `out_ports` are the
//! OpenFlow ports sent to (none for a drop); `normal` says the entry copies a decision of
//! NORMAL (the learning switch); `groups` the groups its decision runs, in order; `meter`
//! the meter it runs in the kernel (null: none);
//! `packets` counts hits credited so far, `bytes` the bytes received on the entry's
//! counter slot. Per port: its attach `mode` (`native`/`generic`); `delivery`
//! (`delivered`, `dropped`, `unknown`): whether the kernel delivers frames forwarded to it
//! from native ports, with `why` not; `lost`: frames the kernel dropped after the program
//! sent them there (see `xdp::delivery`).

use std::sync::Arc;

use datapath::key::FlowKey;
use serde_json::{json, Value};
use switch::fastpath::FastPathView;
use xdp::delivery::Delivery;
use xdp::layout::{event, FpKey};
use xdp::tier::KernelTier;

/// The tier as the agent sees it.
pub struct TierView(pub Arc<KernelTier>);

impl FastPathView for TierView {
    fn dump(&self) -> Value {
        let (entries, stats) = self.0.dump();
        let fp = self.0.program();
        let ev = fp.events();
        let at = |i: u32| ev.get(i as usize).copied().unwrap_or(0);
        let entries: Vec<serde_json::Value> = entries
            .iter()
            .map(|d| {
                json!({
                    "key": d.key.describe_masked(&d.mask),
                    "megaflow": d.mask != FpKey::EXACT,
                    "actions": d.entry.describe_to(&d.out_ports),
                    "generation": d.entry.version,
                    "live": d.live,
                    "packets": d.packets,
                    "bytes": d.bytes,
                    "out_ports": d.out_ports,
                    "normal": d.normal,
                    "groups": d.groups,
                    "meter": d.meter,
                })
            })
            .collect();
        let masks: Vec<Value> = self
            .0
            .masks()
            .iter()
            .map(|m| {
                json!({
                    "slot": m.slot,
                    "mask": m.mask.describe_mask(),
                    "entries": m.entries,
                })
            })
            .collect();
        let lost = fp.lost();
        let ports: Vec<Value> = fp
            .ports()
            .iter()
            .map(|p| {
                let n = lost
                    .as_ref()
                    .ok()
                    .and_then(|l| l.iter().find(|(q, _)| *q == p.of_port).map(|(_, n)| *n));
                json!({
                    "port": p.of_port,
                    "name": p.name,
                    "mode": if p.native { "native" } else { "generic" },
                    "delivery": match p.delivery {
                        Delivery::Delivered => "delivered",
                        Delivery::Dropped => "dropped",
                        Delivery::Unknown => "unknown",
                    },
                    "why": p.why_not(),
                    "lost": n,
                })
            })
            .collect();
        json!({
            "enabled": true,
            "generation": fp.version().ok(),
            "capacity": fp.capacity(),
            "entries": entries,
            "masks": masks,
            "events": {
                "hit": at(event::HIT),
                "miss": at(event::MISS),
                "stale": at(event::STALE),
                "unparsed": at(event::UNPARSED),
                "passed": at(event::PASSED),
                "rewrite_failed": at(event::REWRITE_FAILED),
                "partial_csum": at(event::PARTIAL_CSUM),
                "csum_finished": at(event::CSUM_FINISHED),
                "undelivered": at(event::UNDELIVERED),
                "metered": at(event::METERED),
                "meter_dropped": at(event::METER_DROPPED),
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
                "mac_withdrawn": stats.mac_withdrawn,
                "mac_stale": stats.mac_stale,
            },
            "ports": ports,
            "lost_counted": match lost {
                Ok(_) => Value::Bool(true),
                Err(why) => Value::String(why),
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
