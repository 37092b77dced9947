//! The results document of a benchmark study, as saved to `results.json`.
//!
//! ```text
//! Results { schema: 1, machine, pinning, started, experiments[] }
//!  └─ Experiment { kind, title, ceiling[], series[] }
//!      ├─ ceiling: [Point]            generator → sink with no device under test
//!      └─ series:  [Series { dut, workers?, points: [Point] }]
//!          └─ Point { x, offered_mpps, forwarded_mpps, loss_ratio, latency_us,
//!                     cpu_ns_per_pkt, flow_mods_per_s,     each a Summary or absent
//!                     cpu_split?, packet_time_us?, queue_shares[] }
//! ```
//!
//! The meaning of a point's `x` depends on the experiment's kind
//! ([`ExperimentKind::x_label`]): frame size, offered load, table size, workers, flow
//! number, …. Every measured value is a [`Summary`] over the runs of one trial; a value an
//! experiment does not measure is absent (`null` or missing in the JSON). The document
//! carries its version in `schema`; [`load`] refuses any version but
//! [`SCHEMA_VERSION`].

use std::fmt;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// The version of the document written by this code, kept in its `schema` field.
pub const SCHEMA_VERSION: u32 = 1;

/// A benchmark study's results: where it ran and what it measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Results {
    /// Always [`SCHEMA_VERSION`] for a document this code wrote or accepted.
    pub schema: u32,
    pub machine: Machine,
    /// How the generator, the device under test and the sink were pinned to CPUs, in words.
    pub pinning: String,
    /// When the study started, UTC, RFC 3339 (`2026-11-22T23:26:23Z`).
    pub started: String,
    pub experiments: Vec<Experiment>,
}

/// The machine a study ran on, as read from `/proc`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    /// `model name` of the first CPU in `/proc/cpuinfo` (empty when absent).
    pub cpu_model: String,
    /// Online CPUs.
    pub cores: usize,
    /// `/proc/sys/kernel/osrelease`.
    pub kernel: String,
}

impl Machine {
    /// Reads this machine's description; what cannot be read is left empty (or 0 cores)
    /// rather than failing the study.
    pub fn detect() -> Machine {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
        let cores = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or_else(|_| count_processors(&cpuinfo));
        Machine { cpu_model: cpu_model(&cpuinfo), cores, kernel: kernel.trim().to_string() }
    }
}

/// The `model name` of the first CPU listed in the text of `/proc/cpuinfo`.
fn cpu_model(cpuinfo: &str) -> String {
    cpuinfo
        .lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim() == "model name")
        .map(|(_, v)| v.trim().to_string())
        .unwrap_or_default()
}

/// The number of `processor` entries in the text of `/proc/cpuinfo`.
fn count_processors(cpuinfo: &str) -> usize {
    cpuinfo
        .lines()
        .filter_map(|l| l.split_once(':'))
        .filter(|(k, _)| k.trim() == "processor")
        .count()
}

/// What an experiment varies, which fixes the meaning of its points' `x`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExperimentKind {
    /// Forwarding rate against frame size (`x`: bytes).
    ThroughputVsSize,
    /// Forwarding rate and latency against offered load (`x`: offered load in percent of
    /// the device's own saturation rate).
    Load,
    /// Forwarding rate against the number of rules (`x`: rules).
    TableSize,
    /// Forwarding rate with exact against wildcard rules (`x`: the share of wildcard
    /// rules in percent; 0 is all exact).
    ExactVsWildcard,
    /// Forwarding rate of many random flows that one wildcard rule covers (`x`: flows).
    FlowCount,
    /// Forwarding rate of random flows sent through a select group of two buckets (`x`:
    /// flows).
    SelectGroup,
    /// Forwarding rate of a few flows sent flat out through one OpenFlow meter (`x`: the
    /// meter's rate in packets per second).
    Meter,
    /// Per-flow share of many concurrent flows (`x`: flow number).
    Fairness,
    /// Forwarding rate against forwarding threads (`x`: workers).
    WorkerScaling,
    /// Latency of probes through a loaded device (`x`: background load in percent of the
    /// device's saturation rate).
    LatencyProbe,
    /// The highest rate forwarded with no loss (`x`: bytes).
    ZeroLoss,
    /// Rate of flow installation (`x`: rules installed per batch).
    FlowInstall,
    /// Per-packet processing time: one-way latency through the idle device less the
    /// wire's (the same path with nothing but a redirect for a device; `x`: frame
    /// size).
    PacketTime,
    /// Forwarding while a controller changes the rules (`x`: flow modifications per
    /// second asked for).
    Churn,
}

impl ExperimentKind {
    /// Every kind, in the order a report lists them.
    pub const ALL: [ExperimentKind; 14] = [
        ExperimentKind::ThroughputVsSize,
        ExperimentKind::Load,
        ExperimentKind::PacketTime,
        ExperimentKind::TableSize,
        ExperimentKind::ExactVsWildcard,
        ExperimentKind::FlowCount,
        ExperimentKind::SelectGroup,
        ExperimentKind::Meter,
        ExperimentKind::Fairness,
        ExperimentKind::WorkerScaling,
        ExperimentKind::LatencyProbe,
        ExperimentKind::ZeroLoss,
        ExperimentKind::FlowInstall,
        ExperimentKind::Churn,
    ];

    /// The name used in the JSON and in file names (`throughput_vs_size`).
    pub fn name(self) -> &'static str {
        match self {
            ExperimentKind::ThroughputVsSize => "throughput_vs_size",
            ExperimentKind::Load => "load",
            ExperimentKind::TableSize => "table_size",
            ExperimentKind::ExactVsWildcard => "exact_vs_wildcard",
            ExperimentKind::FlowCount => "flow_count",
            ExperimentKind::SelectGroup => "select_group",
            ExperimentKind::Meter => "meter",
            ExperimentKind::Fairness => "fairness",
            ExperimentKind::WorkerScaling => "worker_scaling",
            ExperimentKind::LatencyProbe => "latency_probe",
            ExperimentKind::ZeroLoss => "zero_loss",
            ExperimentKind::FlowInstall => "flow_install",
            ExperimentKind::PacketTime => "packet_time",
            ExperimentKind::Churn => "churn",
        }
    }

    /// A heading for the experiment in words.
    pub fn heading(self) -> &'static str {
        match self {
            ExperimentKind::ThroughputVsSize => "Throughput vs frame size",
            ExperimentKind::Load => "Throughput and latency vs offered load",
            ExperimentKind::TableSize => "Throughput vs table size",
            ExperimentKind::ExactVsWildcard => "Exact vs wildcard rules",
            ExperimentKind::FlowCount => "Throughput vs flows under one wildcard rule",
            ExperimentKind::SelectGroup => "Throughput through a select group of 2 buckets",
            ExperimentKind::Meter => "Forwarding through a meter",
            ExperimentKind::Fairness => "Fairness between flows",
            ExperimentKind::WorkerScaling => "Worker scaling",
            ExperimentKind::LatencyProbe => "Latency under load",
            ExperimentKind::ZeroLoss => "Zero-loss throughput",
            ExperimentKind::FlowInstall => "Flow installation rate",
            ExperimentKind::PacketTime => "Per-packet processing time",
            ExperimentKind::Churn => "Forwarding while rules change",
        }
    }

    /// What `x` is, with its unit.
    pub fn x_label(self) -> &'static str {
        match self {
            ExperimentKind::ThroughputVsSize
            | ExperimentKind::ZeroLoss
            | ExperimentKind::PacketTime => "frame size (B)",
            ExperimentKind::Load => "offered load (% of saturation)",
            ExperimentKind::TableSize => "rules",
            ExperimentKind::ExactVsWildcard => "wildcard rules (%)",
            ExperimentKind::FlowCount | ExperimentKind::SelectGroup => "flows",
            ExperimentKind::Meter => "meter rate (packets/s)",
            ExperimentKind::Fairness => "flow",
            ExperimentKind::WorkerScaling => "workers",
            ExperimentKind::LatencyProbe => "background load (% of saturation)",
            ExperimentKind::FlowInstall => "rules per batch",
            ExperimentKind::Churn => "flow mods/s asked",
        }
    }
}

impl fmt::Display for ExperimentKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One experiment: the same sweep of `x` for every device under test, and for the bare
/// generator → sink path.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Experiment {
    pub kind: ExperimentKind,
    /// Free text shown under the heading (the fixed parameters: frame size, rules, …).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
    /// Generator → sink with no device under test, at the same `x` values; empty when not
    /// measured.
    #[serde(default)]
    pub ceiling: Vec<Point>,
    /// One series per device under test, in the order they are shown.
    pub series: Vec<Series>,
}

/// The points of one device under test.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// The device's name (`peregrine-afxdp`, `bridge`, …), with its worker count when
    /// the study measured several (`peregrine-afxdp ×2`); unique in an experiment.
    pub dut: String,
    /// peregrine's worker count for this series (absent for the other devices and in
    /// documents written before worker counts were recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workers: Option<usize>,
    pub points: Vec<Point>,
}

/// What was measured at one value of the experiment's variable.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// The experiment's variable ([`ExperimentKind::x_label`]).
    pub x: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offered_mpps: Option<Summary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forwarded_mpps: Option<Summary>,
    /// Lost share of the offered frames, 0..=1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_ratio: Option<Summary>,
    /// One-way or round-trip latency in microseconds, as the experiment's note says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_us: Option<Summary>,
    /// CPU time of the device under test per forwarded packet, in nanoseconds: the busy
    /// time of the device's CPUs from `/proc/stat`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_ns_per_pkt: Option<Summary>,
    /// `cpu_ns_per_pkt` split by where `/proc/stat` put the time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_split: Option<CpuSplit>,
    /// The packet-time experiment: the device's one-way latency less the wire's
    /// (`latency_us` less the ceiling's, which there is the wire's, at the same `x`), in microseconds. Negative when
    /// the device's path was faster than the wire's: then it is no processing time, and
    /// the report says so instead of printing it as one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packet_time_us: Option<Summary>,
    /// The share of the packets each receive queue of the device's first input port
    /// took (medians over the runs; in queue order, summing to about 1); empty when the
    /// port has one queue or was not read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub queue_shares: Vec<f64>,
    /// Flow table modifications applied per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow_mods_per_s: Option<Summary>,
    /// The table-size experiment: the resident memory of the device's process once its
    /// rules were loaded, in MiB (ovs-vswitchd's for Open vSwitch; for peregrine, which
    /// runs inside the harness, the harness process's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rss_mib: Option<Summary>,
    /// The table-size experiment: what each rule beyond the smallest table's cost in
    /// resident memory, in bytes: `(rss - rss at the smallest size) / (rules - smallest
    /// size)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_per_rule: Option<Summary>,
}

/// Where the device's CPUs spent their busy time, in nanoseconds per forwarded packet,
/// from the per-CPU lines of `/proc/stat` over the device's CPUs. `user` is user plus
/// nice; the kernel's receive work in a threaded NAPI kernel thread counts as `system`,
/// softirq work run on the way out of an interrupt or in `ksoftirqd` as `softirq`
/// (tick sampling: each tick is charged to what it interrupted). `user + system +
/// softirq + irq` plus steal time is the busy time, `cpu_ns_per_pkt`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct CpuSplit {
    pub user_ns: Summary,
    pub system_ns: Summary,
    pub softirq_ns: Summary,
    pub irq_ns: Summary,
    /// The busy share of the device's CPUs over the sampled window, 0..=1: the window
    /// holds the generator's port setup and the 100 ms drain besides the sending, so a
    /// device saturated while traffic flowed shows somewhat less than 1 (about 0.8 to
    /// 0.9 for 2-second runs).
    pub busy_share: Summary,
}

/// The runs of one measurement (median, extremes, count): the method's summary.
pub use crate::method::stats::Summary;

/// A measured quantity of a [`Point`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    Forwarded,
    Offered,
    Loss,
    Latency,
    /// The packet-time experiment's latency less the wire's.
    PacketTime,
    Cpu,
    FlowMods,
    /// The device process's resident memory.
    Rss,
    /// Resident memory per rule, from `Rss`.
    BytesPerRule,
}

impl Metric {
    /// Every metric, in the order a report's columns list them.
    pub const ALL: [Metric; 9] = [
        Metric::Forwarded,
        Metric::Offered,
        Metric::Loss,
        Metric::Latency,
        Metric::PacketTime,
        Metric::Cpu,
        Metric::FlowMods,
        Metric::Rss,
        Metric::BytesPerRule,
    ];

    /// The metric's value at `p`, if measured.
    pub fn of(self, p: &Point) -> Option<Summary> {
        match self {
            Metric::Forwarded => p.forwarded_mpps,
            Metric::Offered => p.offered_mpps,
            Metric::Loss => p.loss_ratio,
            Metric::Latency => p.latency_us,
            Metric::PacketTime => p.packet_time_us,
            Metric::Cpu => p.cpu_ns_per_pkt,
            Metric::FlowMods => p.flow_mods_per_s,
            Metric::Rss => p.rss_mib,
            Metric::BytesPerRule => p.bytes_per_rule,
        }
    }

    /// A column or axis label with the unit.
    pub fn label(self) -> &'static str {
        match self {
            Metric::Forwarded => "forwarded (Mpps)",
            Metric::Offered => "offered (Mpps)",
            Metric::Loss => "loss",
            Metric::Latency => "latency (µs)",
            Metric::PacketTime => "per-packet time (µs)",
            Metric::Cpu => "CPU (ns/pkt)",
            Metric::FlowMods => "flow mods/s",
            Metric::Rss => "device RSS (MiB)",
            Metric::BytesPerRule => "bytes/rule (RSS)",
        }
    }

    /// An axis label with the unit, for values as stored (loss as a ratio, not percent).
    pub fn axis_label(self) -> &'static str {
        match self {
            Metric::Loss => "loss (share of offered)",
            other => other.label(),
        }
    }
}

impl Results {
    /// An empty study started now on this machine.
    pub fn new(pinning: impl Into<String>) -> Results {
        Results {
            schema: SCHEMA_VERSION,
            machine: Machine::detect(),
            pinning: pinning.into(),
            started: utc_now_rfc3339(),
            experiments: Vec::new(),
        }
    }
}

/// Jain's fairness index of `shares`: (Σx)² / (n·Σx²), 1 when all are equal, 1/n when
/// one takes everything; `None` for no shares or all zero.
pub fn jain_index(shares: &[f64]) -> Option<f64> {
    let squares: f64 = shares.iter().map(|x| x * x).sum();
    if shares.is_empty() || squares <= 0.0 || !squares.is_finite() {
        return None;
    }
    Some(crate::method::stats::jain_index(shares))
}

/// The first fields of a document, read before the rest so that a document of another
/// version is refused for its version rather than for a field it lacks.
#[derive(Deserialize)]
struct Version {
    schema: Option<u32>,
}

/// Reads a results document, refusing one of another schema version. Errors name the
/// file and, for bad JSON, the line and column.
pub fn load(path: &Path) -> Result<Results, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    parse(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Parses the text of a results document (see [`load`]).
pub fn parse(text: &str) -> Result<Results, String> {
    let version: Version =
        serde_json::from_str(text).map_err(|e| format!("not a results document: {e}"))?;
    match version.schema {
        Some(SCHEMA_VERSION) => {}
        Some(v) => {
            return Err(format!(
            "schema version {v} is not supported (this peregrine reads version {SCHEMA_VERSION})"
        ))
        }
        None => return Err("not a results document: no `schema` field".to_string()),
    }
    serde_json::from_str(text).map_err(|e| format!("not a results document: {e}"))
}

/// Writes `results` as pretty JSON to `path`, replacing it.
pub fn save(results: &Results, path: &Path) -> Result<(), String> {
    let json = serde_json::to_string_pretty(results)
        .map_err(|e| format!("{}: cannot encode: {e}", path.display()))?;
    std::fs::write(path, json + "\n").map_err(|e| format!("{}: cannot write: {e}", path.display()))
}

/// The current time, UTC, as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn utc_now_rfc3339() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    rfc3339(secs)
}

/// `secs` since the Unix epoch as `YYYY-MM-DDTHH:MM:SSZ` (proleptic Gregorian, UTC).
fn rfc3339(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Days to civil date, after Howard Hinnant's `civil_from_days`.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3_600,
        rem / 60 % 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_index_spans_one_over_n_to_one() {
        assert_eq!(jain_index(&[2.0, 2.0, 2.0, 2.0]), Some(1.0));
        assert_eq!(jain_index(&[4.0, 0.0, 0.0, 0.0]), Some(0.25));
        let j = jain_index(&[1.0, 3.0]).unwrap();
        assert!((j - 0.8).abs() < 1e-12, "{j}");
        assert_eq!(jain_index(&[]), None);
        assert_eq!(jain_index(&[0.0, 0.0]), None);
    }

    #[test]
    fn dates_are_civil_utc() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_795_389_983), "2026-11-22T23:26:23Z");
    }

    #[test]
    fn cpuinfo_fields_are_read() {
        let text = "processor\t: 0\nmodel name\t: Example CPU @ 2.0GHz\n\nprocessor\t: 1\nmodel name\t: Example CPU @ 2.0GHz\n";
        assert_eq!(cpu_model(text), "Example CPU @ 2.0GHz");
        assert_eq!(count_processors(text), 2);
        assert_eq!(cpu_model(""), "");
    }

    #[test]
    fn kinds_serialize_by_name() {
        for k in ExperimentKind::ALL {
            let json = serde_json::to_string(&k).unwrap();
            assert_eq!(json, format!("\"{}\"", k.name()));
        }
    }
}
