//! Statistics the agent gives beyond OpenFlow's multipart replies: each datapath
//! worker's own counters (the peregrine `WORKERS` request, [`exp_type::WORKERS`]), and
//! read access to the group and meter tables for [`crate::metrics`].
//!
//! Worker counters are read from the datapath as they are (not summed): one entry per
//! registered worker, in registration order. That includes the agent's own worker, which
//! runs packet-outs (it counts what they send and drop, never received packets).
//!
//! [`exp_type::WORKERS`]: super::exp_type::WORKERS

use datapath::counters::{Misc, WorkerStats};
use datapath::parse::ParseError;
use serde_json::{json, Map, Value};

use super::Agent;
use crate::groups::GroupTable;
use crate::meters::MeterTable;

/// The [`Misc`] counters that count packets dropped, with the reason each names.
pub const DROP_REASONS: [(Misc, &str); 7] = [
    (Misc::TableMissDrops, "table_miss"),
    (Misc::NoRecvDrops, "no_recv"),
    (Misc::MeterDrops, "meter"),
    (Misc::InvalidTtl, "invalid_ttl"),
    (Misc::OutputToInPortDrops, "output_to_in_port"),
    (Misc::OutputDrops, "output"),
    (Misc::GroupDrops, "group"),
];

impl Agent {
    /// The group table (groups as controllers installed them).
    pub fn groups(&self) -> &GroupTable {
        &self.groups
    }

    /// The meter table (meters as controllers installed them).
    pub fn meters(&self) -> &MeterTable {
        &self.meters
    }

    /// Every datapath worker's own counters, in registration order.
    pub fn worker_stats(&self) -> Vec<WorkerStats> {
        self.flows.datapath().read_workers()
    }

    /// The `WORKERS` reply document (see [`workers_json`]).
    pub(super) fn workers_json(&self) -> Vec<u8> {
        workers_json(&self.worker_stats()).to_string().into_bytes()
    }
}

/// The `WORKERS` reply: `{"workers": [...]}`, one object per worker in registration
/// order:
///
/// ```json
/// {"worker": 0, "thread": "worker0", "packets": 10, "cache_hits": 8,
///  "cache_misses": 2, "kernel_hits": 0, "packet_ins": 1, "packet_ins_dropped": 0,
///  "parse_errors": 1, "missing_header": 0,
///  "drops": {"table_miss": 1, "no_recv": 0, "meter": 0, "invalid_ttl": 0,
///            "output_to_in_port": 0, "output": 0, "group": 0},
///  "parse_errors_by_kind": {"truncated_ipv4": 1}}
/// ```
///
/// `thread` is null for a worker registered on an unnamed thread, `kernel` for the
/// counters of the in-kernel fast tier's hits (which only it counts); `drops` holds every
/// reason of [`DROP_REASONS`]; `parse_errors_by_kind` only the kinds seen.
pub fn workers_json(workers: &[WorkerStats]) -> Value {
    let list: Vec<Value> = workers
        .iter()
        .map(|w| {
            let drops: Map<String, Value> = DROP_REASONS
                .iter()
                .map(|(m, reason)| (reason.to_string(), w.get(*m).into()))
                .collect();
            let kinds: Map<String, Value> = w
                .parse_errors
                .iter()
                .map(|(k, n): &(ParseError, u64)| (k.name().to_string(), (*n).into()))
                .collect();
            json!({
                "worker": w.index,
                "thread": w.thread,
                "packets": w.get(Misc::Packets),
                "cache_hits": w.get(Misc::CacheHits),
                "cache_misses": w.get(Misc::CacheMisses),
                "kernel_hits": w.get(Misc::KernelHits),
                "packet_ins": w.get(Misc::PacketIns),
                "packet_ins_dropped": w.get(Misc::PacketInDropped),
                "parse_errors": w.get(Misc::ParseErrors),
                "missing_header": w.get(Misc::MissingHeader),
                "drops": drops,
                "parse_errors_by_kind": kinds,
            })
        })
        .collect();
    json!({ "workers": list })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drop_reasons_name_every_drop_counter_once() {
        for (i, (m, r)) in DROP_REASONS.iter().enumerate() {
            assert!(!DROP_REASONS[..i].iter().any(|(n, s)| n == m || s == r));
        }
        // The non-drop counters are reported on their own.
        for m in [
            Misc::Packets,
            Misc::ParseErrors,
            Misc::PacketIns,
            Misc::PacketInDropped,
            Misc::MissingHeader,
            Misc::CacheHits,
            Misc::CacheMisses,
            Misc::KernelHits,
        ] {
            assert!(!DROP_REASONS.iter().any(|(n, _)| *n == m), "{m:?}");
        }
        assert_eq!(DROP_REASONS.len() + 8, Misc::ALL.len());
    }

    #[test]
    fn workers_json_lists_every_worker_with_its_counters() {
        let mut misc = [0u64; Misc::ALL.len()];
        misc[Misc::Packets as usize] = 10;
        misc[Misc::CacheHits as usize] = 8;
        misc[Misc::CacheMisses as usize] = 2;
        misc[Misc::TableMissDrops as usize] = 3;
        misc[Misc::ParseErrors as usize] = 1;
        let w = [
            WorkerStats {
                index: 0,
                thread: None,
                misc: [0; Misc::ALL.len()],
                parse_errors: vec![],
            },
            WorkerStats {
                index: 1,
                thread: Some("worker0".into()),
                misc,
                parse_errors: vec![(ParseError::TruncatedIpv4, 1)],
            },
        ];
        let v = workers_json(&w);
        assert_eq!(v["workers"].as_array().unwrap().len(), 2);
        assert_eq!(v["workers"][0]["thread"], Value::Null);
        assert_eq!(v["workers"][0]["packets"], 0);
        let w1 = &v["workers"][1];
        assert_eq!(w1["worker"], 1);
        assert_eq!(w1["thread"], "worker0");
        assert_eq!(
            (&w1["packets"], &w1["cache_hits"], &w1["cache_misses"]),
            (&json!(10), &json!(8), &json!(2))
        );
        assert_eq!(w1["drops"]["table_miss"], 3);
        assert_eq!(w1["drops"].as_object().unwrap().len(), DROP_REASONS.len());
        assert_eq!(w1["parse_errors"], 1);
        assert_eq!(w1["parse_errors_by_kind"], json!({"truncated_ipv4": 1}));
    }
}
