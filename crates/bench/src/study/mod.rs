//! The benchmark study: the classic data-plane experiments run against every device
//! under test in one go, written as a [`Results`] document (then `results.json`,
//! `report.md` and the plots by [`crate::report`]).
//!
//! [`run`] measures, in order: the ceiling (generator → sink with no device, flat out
//! at 64 B, the study's "line rate"), then each chosen experiment ([`experiments`]) for
//! each device in turn. Every measured run goes through [`bed::measure`] (device CPU
//! time from `/proc`, disturbed runs redone) and every point is a summary of
//! `Options::runs` runs. Progress goes to standard error as it happens.
//!
//! Devices: peregrine with each port backend (started through a [`Launcher`] the
//! binary provides), the Linux bridge (learning or static), the Linux router and Open
//! vSwitch's userspace datapath (AF_PACKET and AF_XDP ports), all driven by
//! [`crate::dut`]. An experiment that does not apply to a device (OpenFlow rules for
//! the bridge) leaves it out and says so in its note.

pub mod bed;
pub mod control;
pub mod experiments;
pub mod meter;
pub mod rules;
pub mod select;

use std::path::PathBuf;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crate::dut::{bridge::Fdb, ovs::PortType, Spec};
use crate::method::pinning::Pinning;
use crate::report::results::{ExperimentKind, Results};

pub use bed::{Launcher, Switch};

/// A device under test of the study.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dut {
    /// peregrine with AF_XDP ports and its in-kernel fast tier (the XDP program forwards
    /// the megaflows it holds).
    PeregrineXdp,
    /// The same with the tier's entries exact microflows only (no megaflows).
    PeregrineXdpExact,
    /// peregrine with the tier as a standalone learning switch (its NORMAL flow; the
    /// experiments' rules are not loaded).
    PeregrineXdpNormal,
    /// peregrine with AF_XDP ports in generic (SKB) mode and its in-kernel fast tier.
    PeregrineXdpGeneric,
    /// peregrine with AF_XDP ports (native XDP where the driver has it), the fast tier
    /// off: every frame goes through the workers.
    PeregrineAfxdp,
    /// peregrine with AF_XDP ports in generic (SKB) mode.
    PeregrineAfxdpGeneric,
    /// peregrine with AF_PACKET ports.
    PeregrineAfpacket,
    /// The Linux bridge, learning.
    Bridge,
    /// The Linux bridge, learning off, static FDB entries.
    BridgeStatic,
    /// Linux IPv4 forwarding.
    Router,
    /// Open vSwitch userspace datapath, AF_PACKET ports.
    OvsAfpacket,
    /// Open vSwitch userspace datapath, AF_XDP ports.
    OvsAfxdp,
}

impl Dut {
    /// Every device, in the order a study lists them.
    pub const ALL: [Dut; 12] = [
        Dut::PeregrineXdp,
        Dut::PeregrineXdpExact,
        Dut::PeregrineXdpNormal,
        Dut::PeregrineXdpGeneric,
        Dut::PeregrineAfxdp,
        Dut::PeregrineAfxdpGeneric,
        Dut::PeregrineAfpacket,
        Dut::Bridge,
        Dut::BridgeStatic,
        Dut::Router,
        Dut::OvsAfpacket,
        Dut::OvsAfxdp,
    ];

    /// The name in tables, JSON and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Dut::PeregrineXdp => "peregrine-xdp",
            Dut::PeregrineXdpExact => "peregrine-xdp-exact",
            Dut::PeregrineXdpNormal => "peregrine-xdp-normal",
            Dut::PeregrineXdpGeneric => "peregrine-xdp-generic",
            Dut::PeregrineAfxdp => "peregrine-afxdp",
            Dut::PeregrineAfxdpGeneric => "peregrine-afxdp-generic",
            Dut::PeregrineAfpacket => "peregrine-afpacket",
            Dut::Bridge => "bridge",
            Dut::BridgeStatic => "bridge-static",
            Dut::Router => "router",
            Dut::OvsAfpacket => "ovs-afpacket",
            Dut::OvsAfxdp => "ovs-afxdp",
        }
    }

    /// peregrine's port backend, for the peregrine devices (`+xdp`: with the fast tier;
    /// every other one runs without it).
    pub fn peregrine_backend(self) -> Option<&'static str> {
        match self {
            Dut::PeregrineXdp => Some("afxdp+xdp"),
            Dut::PeregrineXdpExact => Some("afxdp+xdp-exact"),
            Dut::PeregrineXdpNormal => Some("afxdp+xdp-normal"),
            Dut::PeregrineXdpGeneric => Some("afxdp-generic+xdp"),
            Dut::PeregrineAfxdp => Some("afxdp"),
            Dut::PeregrineAfxdpGeneric => Some("afxdp-generic"),
            Dut::PeregrineAfpacket => Some("afpacket"),
            _ => None,
        }
    }

    /// Whether the device takes OpenFlow rules.
    pub fn openflow(self) -> bool {
        (self.peregrine_backend().is_some() && self != Dut::PeregrineXdpNormal)
            || matches!(self, Dut::OvsAfpacket | Dut::OvsAfxdp)
    }

    /// The [`crate::dut`] driver of a device other than peregrine, with `routes` extra
    /// routes for the router.
    pub fn spec(self, routes: usize) -> Option<Spec> {
        match self {
            Dut::Bridge => Some(Spec::Bridge(Fdb::Learned)),
            Dut::BridgeStatic => Some(Spec::Bridge(Fdb::Static)),
            Dut::Router => Some(Spec::Router { routes }),
            Dut::OvsAfpacket => Some(Spec::Ovs { ports: PortType::Afpacket }),
            Dut::OvsAfxdp => Some(Spec::Ovs { ports: PortType::Afxdp }),
            _ => None,
        }
    }
}

impl FromStr for Dut {
    type Err = String;
    fn from_str(s: &str) -> Result<Dut, String> {
        Dut::ALL.into_iter().find(|d| d.name() == s).ok_or_else(|| {
            let names: Vec<&str> = Dut::ALL.iter().map(|d| d.name()).collect();
            format!("unknown device `{s}` (one of {})", names.join(", "))
        })
    }
}

/// The experiments a study can run, in the order it runs them (names as in the
/// results).
pub const EXPERIMENTS: [ExperimentKind; 14] = ExperimentKind::ALL;

/// Parses an experiment's name (`throughput_vs_size`, …; `-` may stand for `_`).
pub fn parse_experiment(s: &str) -> Result<ExperimentKind, String> {
    let s = s.replace('-', "_");
    EXPERIMENTS.into_iter().find(|k| k.name() == s).ok_or_else(|| {
        let names: Vec<&str> = EXPERIMENTS.iter().map(|k| k.name()).collect();
        format!("unknown experiment `{s}` (one of {})", names.join(", "))
    })
}

/// How the generator and the sink reach the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Io {
    Afxdp,
    Afpacket,
}

/// Everything a study varies. [`Options::quick`] and [`Options::full`] are the two
/// presets; the command line changes single fields.
#[derive(Clone, Debug)]
pub struct Options {
    pub duts: Vec<Dut>,
    pub experiments: Vec<ExperimentKind>,
    pub gen_cpu: usize,
    pub dut_cpu: usize,
    /// peregrine's worker counts: every peregrine device is measured once with each
    /// (its series labelled with the count, see [`series_label`]); the other devices
    /// once. The workers of a count `n` are on [`Options::worker_cpus`]`(n)`. Never
    /// empty; every count at least 1.
    pub dut_workers: Vec<usize>,
    /// Receive and transmit queues of every veth pair of a bed (0: as many as the
    /// largest worker count, so each AF_XDP worker gets a queue of each port). The
    /// generator spreads its flows over the queues (AF_XDP generator only), the kernel's
    /// receive work of every queue runs on the device's CPUs, and a worker count below
    /// the queue count has its workers serve several queues each.
    pub queues: u32,
    /// Seconds of traffic per run.
    pub seconds: f64,
    /// Runs per point (median, min, max reported).
    pub runs: usize,
    /// Frame sizes of the throughput experiment (bytes, FCS included).
    pub sizes: Vec<usize>,
    /// Offered loads of the load experiment, as fractions of the device's own
    /// saturation rate at 64 B (so both regions, under and over, are covered).
    pub loads: Vec<f64>,
    /// Rule counts of the table size experiment.
    pub table_sizes: Vec<usize>,
    /// Wildcard shares (percent of rules) of the exact-vs-wildcard experiment.
    pub wildcard_percents: Vec<u8>,
    /// Rules (and flows) of the exact-vs-wildcard experiment.
    pub wildcard_rules: usize,
    /// Flow counts of the flow-count experiment.
    pub flow_counts: Vec<usize>,
    /// Flow counts of the select-group experiment.
    pub group_flows: Vec<usize>,
    /// Meter rates of the meter experiment, packets per second.
    pub meter_rates: Vec<u64>,
    /// The meter experiment's burst, in milliseconds of the meter's rate.
    pub meter_burst_ms: u64,
    /// Fairness: F1's rate, percent of the ceiling.
    pub fairness_f1: f64,
    /// Fairness: F2's rates, percent of the ceiling.
    pub fairness_f2: Vec<f64>,
    /// Background loads of the latency probe, fractions of the device's saturation rate.
    pub probe_loads: Vec<f64>,
    /// Worker counts of the worker scaling experiment (in-memory datapath).
    pub workers: Vec<usize>,
    /// Rules per batch of the flow installation experiment.
    pub install_rules: usize,
    /// Flow modifications per second asked for in the churn experiment.
    pub churn_rates: Vec<usize>,
    /// Distinct flows of the plain traffic (random per device kind).
    pub flows: usize,
    /// The most trials of one zero-loss search.
    pub zero_loss_trials: usize,
    /// The loss a zero-loss trial may show (0 is RFC 2544's).
    pub acceptable_loss: f64,
    pub io: Io,
    /// Whether the kernel's receive work for the device's ports runs on the device CPU
    /// (threaded NAPI; the default) or where the kernel puts it (the sender's CPU, on
    /// veth).
    pub steer: bool,
    /// The `peregrine` binary, for `peregrine ctl add-flows` (flow installation).
    pub ctl: Option<PathBuf>,
}

impl Options {
    /// The reduced study: every experiment, few points, short runs (a few minutes for
    /// every device on a 2-core box).
    pub fn quick() -> Options {
        Options {
            duts: vec![
                Dut::PeregrineXdp,
                Dut::PeregrineAfxdp,
                Dut::PeregrineAfpacket,
                Dut::Bridge,
                Dut::Router,
                Dut::OvsAfpacket,
                Dut::OvsAfxdp,
            ],
            experiments: EXPERIMENTS.to_vec(),
            gen_cpu: 0,
            dut_cpu: 1,
            dut_workers: vec![1],
            queues: 0,
            seconds: 0.5,
            runs: 1,
            sizes: vec![64, 512, 1518],
            loads: vec![0.25, 0.75, 1.5],
            table_sizes: vec![1, 8_000],
            wildcard_percents: vec![0, 50, 100],
            wildcard_rules: 1_000,
            flow_counts: vec![1, 128_000],
            group_flows: vec![64],
            meter_rates: vec![100_000],
            meter_burst_ms: meter::BURST_MS,
            fairness_f1: 10.0,
            fairness_f2: vec![90.0],
            probe_loads: vec![0.0, 0.9],
            workers: vec![1, 2],
            install_rules: 10_000,
            churn_rates: vec![0, 1_000],
            flows: 64,
            zero_loss_trials: 5,
            acceptable_loss: 1e-3,
            io: Io::Afxdp,
            steer: true,
            ctl: None,
        }
    }

    /// The whole study: the classic points, 3 runs of 2 s each.
    pub fn full() -> Options {
        let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        Options {
            duts: Dut::ALL.to_vec(),
            seconds: 2.0,
            runs: 3,
            sizes: vec![64, 128, 256, 512, 1024, 1518],
            loads: vec![0.1, 0.25, 0.5, 0.75, 0.9, 1.0, 1.25, 1.5, 2.0],
            table_sizes: vec![1, 8_000, 64_000, 128_000, 1_000_000],
            flow_counts: vec![1, 128_000, 1_000_000],
            group_flows: vec![64, 128_000],
            meter_rates: vec![100_000, 400_000],
            fairness_f2: vec![40.0, 50.0, 60.0, 70.0, 80.0, 90.0],
            probe_loads: vec![0.0, 0.5, 0.9, 1.2],
            workers: (1..=cores).collect(),
            install_rules: 100_000,
            churn_rates: vec![0, 1_000, 10_000],
            zero_loss_trials: 12,
            ..Options::quick()
        }
    }

    /// The devices that take OpenFlow rules, in order.
    pub fn openflow_duts(&self) -> Vec<Dut> {
        self.duts.iter().copied().filter(|d| d.openflow()).collect()
    }

    /// The largest worker count asked for.
    pub fn max_workers(&self) -> usize {
        self.dut_workers.iter().copied().max().unwrap_or(1).max(1)
    }

    /// The queues of every veth pair of a bed: [`Options::queues`], or the largest
    /// worker count when that is 0.
    pub fn bed_queues(&self) -> u32 {
        if self.queues > 0 {
            self.queues
        } else {
            self.max_workers() as u32
        }
    }

    /// The worker counts a device is measured at: each of `dut_workers` for peregrine,
    /// one run (reported as `None`) for the others.
    pub fn worker_counts(&self, dut: Dut) -> Vec<Option<usize>> {
        if dut.peregrine_backend().is_some() {
            self.dut_workers.iter().map(|&w| Some(w.max(1))).collect()
        } else {
            vec![None]
        }
    }

    /// How the study is pinned (with the largest worker count's CPUs).
    pub fn pinning(&self) -> Pinning {
        let mut dut = self.worker_cpus(self.max_workers());
        dut.sort_unstable();
        dut.dedup();
        Pinning { generator: self.gen_cpu, dut, sink: Some(self.gen_cpu) }
    }

    /// The CPU of each of `workers` workers: the first on `dut_cpu`, the others on the
    /// CPUs other than the generator's and the device's, in turn (the device's when
    /// there are none, as on a 2-core machine).
    pub fn worker_cpus(&self, workers: usize) -> Vec<usize> {
        let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        let spare: Vec<usize> =
            (0..cores).filter(|&c| c != self.gen_cpu && c != self.dut_cpu).collect();
        let mut v = vec![self.dut_cpu];
        for w in 1..workers.max(1) {
            v.push(if spare.is_empty() { self.dut_cpu } else { spare[(w - 1) % spare.len()] });
        }
        v
    }

    /// The `ports` backend of the generator and the sink.
    pub fn tx_backend(&self) -> ports::Backend {
        match self.io {
            Io::Afxdp => ports::Backend::AfXdp { mode: ports::afxdp::AttachMode::Auto },
            Io::Afpacket => ports::Backend::AfPacket,
        }
    }
}

/// The state of a running study: its options, the launcher, what was learnt so far
/// (the ceiling, each device's saturation rate) and the log counters.
pub struct Ctx<'a> {
    pub opts: Options,
    pub launcher: &'a dyn Launcher,
    started: Instant,
    /// The ceiling's flat-out rate at 64 B, packets per second (0 before it is measured).
    pub ceiling_pps: f64,
    /// Each device's (at each worker count) flat-out forwarded rate at 64 B, packets per
    /// second.
    pub saturation: Vec<(Dut, Option<usize>, f64)>,
    /// The worker count of the device being measured (`None` for a device other than
    /// peregrine, or outside a device's part); [`bed::Bed::new`] starts peregrine with
    /// it, 1 when `None`.
    pub workers: Option<usize>,
    /// Runs found disturbed (and redone).
    pub disturbed: usize,
    /// Runs kept although disturbed (every attempt was).
    pub kept_disturbed: usize,
    /// Whether runs are checked for foreign load (off while an experiment runs processes
    /// of its own beside the traffic).
    pub check_foreign: bool,
    /// Set (by a signal handler) when the user wants the study to end: the next run
    /// fails with "interrupted" and the study returns what it has.
    pub stop: &'a AtomicBool,
}

impl<'a> Ctx<'a> {
    pub fn new(opts: Options, launcher: &'a dyn Launcher, stop: &'a AtomicBool) -> Ctx<'a> {
        Ctx {
            opts,
            launcher,
            started: Instant::now(),
            ceiling_pps: 0.0,
            saturation: Vec::new(),
            workers: None,
            disturbed: 0,
            kept_disturbed: 0,
            check_foreign: true,
            stop,
        }
    }

    /// The device's CPUs for the device being measured: those of its workers (the
    /// device CPU alone for a device other than peregrine).
    pub fn dut_cpus(&self) -> std::collections::BTreeSet<usize> {
        self.opts.worker_cpus(self.workers.unwrap_or(1)).into_iter().collect()
    }

    /// Whether the study was asked to end.
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Prints a progress line with the time since the study started.
    pub fn progress(&self, msg: &str) {
        let s = self.started.elapsed().as_secs();
        eprintln!("[{:02}:{:02}] {msg}", s / 60, s % 60);
    }
}

/// The name of a device's series: the device's name, with the worker count after it
/// (`peregrine-afxdp ×2`) whenever a count other than 1 was asked for, so that a study
/// of one worker names its series as before.
pub fn series_label(dut: Dut, workers: Option<usize>, opts: &Options) -> String {
    match workers {
        Some(w) if opts.dut_workers != [1] => format!("{} ×{w}", dut.name()),
        _ => dut.name().to_string(),
    }
}

/// Runs the study `opts` describes and returns its results (also when a device fails:
/// its error is logged and its series left out). When `stop` is set midway the study
/// ends after tearing down what runs, and returns the experiments finished so far.
pub fn run(opts: Options, launcher: &dyn Launcher, stop: &AtomicBool) -> Result<Results, String> {
    let mut ctx = Ctx::new(opts, launcher, stop);
    let mut results = Results::new(format!(
        "{}; the generator and the sink are one thread; {}{}",
        ctx.opts.pinning(),
        queues_text(&ctx.opts),
        if ctx.opts.steer {
            "the kernel's receive work for the device's ports also runs on the DUT CPU(s) \
             (the NAPI of each port's every queue in a kernel thread pinned there), so \
             each device has its workers' CPUs, and no other, for all its work"
        } else {
            "the kernel's receive work for the device's ports runs where the kernel puts \
             it (on veth: the sender's CPU, the generator's or the device's own)"
        }
    ));
    experiments::ceiling(&mut ctx)?;
    for kind in ctx.opts.experiments.clone() {
        ctx.progress(&format!("experiment {}", kind.name()));
        let exps = experiments::run(&mut ctx, kind);
        if ctx.stopped() {
            ctx.progress("interrupted: keeping the experiments finished before");
            break;
        }
        results.experiments.extend(exps?);
    }
    ctx.progress(&format!(
        "done: {} disturbed runs redone, {} kept disturbed after {} attempts",
        ctx.disturbed,
        ctx.kept_disturbed,
        bed::ATTEMPTS
    ));
    Ok(results)
}

/// What the pinning text says of the queues and worker counts (empty for one queue and
/// one worker, the study's default).
fn queues_text(opts: &Options) -> String {
    let q = opts.bed_queues();
    if q <= 1 && opts.dut_workers == [1] {
        return String::new();
    }
    let counts: Vec<String> = opts.dut_workers.iter().map(|w| w.to_string()).collect();
    let cpus: Vec<String> = opts
        .dut_workers
        .iter()
        .map(|&w| {
            let on: Vec<String> = opts.worker_cpus(w).iter().map(|c| c.to_string()).collect();
            format!("{w} on CPU {}", on.join(", "))
        })
        .collect();
    format!(
        "every veth has {q} receive and transmit queue(s) and the generator spreads its flows over them{}; peregrine runs with {} worker(s) ({}){}; ",
        if opts.io == Io::Afpacket {
            " (not with the AF_PACKET generator: its frames take the queue of its CPU)"
        } else {
            ""
        },
        counts.join(" and "),
        cpus.join("; "),
        if opts.worker_cpus(opts.max_workers()).len() > 1
            && opts
                .worker_cpus(opts.max_workers())
                .iter()
                .skip(1)
                .all(|&c| c == opts.dut_cpu)
        {
            "; this machine has no CPU to spare, so extra workers share the device CPU and more workers cannot mean more speed here"
        } else {
            ""
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_and_experiments_parse_by_name() {
        for d in Dut::ALL {
            assert_eq!(d.name().parse::<Dut>(), Ok(d));
        }
        let e = "nope".parse::<Dut>().unwrap_err();
        assert!(e.contains("nope") && e.contains("ovs-afxdp"), "{e}");
        for k in EXPERIMENTS {
            assert_eq!(parse_experiment(k.name()), Ok(k));
        }
        assert_eq!(parse_experiment("zero-loss"), Ok(ExperimentKind::ZeroLoss));
        assert_eq!(parse_experiment("select-group"), Ok(ExperimentKind::SelectGroup));
        assert_eq!(parse_experiment("meter"), Ok(ExperimentKind::Meter));
        assert!(parse_experiment("speed").unwrap_err().contains("table_size"));
    }

    #[test]
    fn presets_cover_every_experiment_and_the_classic_points() {
        let q = Options::quick();
        assert_eq!(q.experiments, EXPERIMENTS.to_vec());
        let f = Options::full();
        assert_eq!(f.table_sizes, [1, 8_000, 64_000, 128_000, 1_000_000]);
        assert_eq!(q.group_flows, [64]);
        assert_eq!(f.group_flows, [64, 128_000]);
        assert_eq!(q.meter_rates, [100_000]);
        assert_eq!(f.meter_rates, [100_000, 400_000]);
        assert_eq!(f.fairness_f2.first(), Some(&40.0));
        assert_eq!(f.fairness_f2.last(), Some(&90.0));
        assert!(f.loads.iter().any(|&l| l < 1.0) && f.loads.iter().any(|&l| l > 1.0));
        assert_eq!(f.duts.len(), Dut::ALL.len());
        assert_eq!(
            q.pinning().to_string(),
            "generator on CPU 0, DUT workers on CPU 1, sink on CPU 0"
        );
    }

    #[test]
    fn extra_workers_keep_off_the_generator_cpu() {
        let o = Options { dut_workers: vec![1, 3], ..Options::quick() };
        let w = o.worker_cpus(3);
        assert_eq!(w.len(), 3);
        assert_eq!(w[0], o.dut_cpu);
        assert!(!w.contains(&o.gen_cpu), "{w:?}");
        assert_eq!(Options::quick().worker_cpus(1), [o.dut_cpu]);
    }

    #[test]
    fn openflow_devices() {
        assert!(Dut::PeregrineAfpacket.openflow() && Dut::OvsAfxdp.openflow());
        assert!(!Dut::Bridge.openflow() && !Dut::Router.openflow());
        assert!(Dut::PeregrineAfxdp.spec(0).is_none());
        assert_eq!(Dut::Router.spec(5), Some(Spec::Router { routes: 5 }));
    }
}
