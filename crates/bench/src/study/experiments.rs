//! The study's experiments, each a function from the study's state to one or more
//! [`Experiment`]s of results. What each measures, and how:
//!
//! - **ceiling**: generator → sink over one veth pair, no device, flat out at 64 B.
//! - **throughput vs size**: flat out, each frame size; the 64-byte figure is the
//!   device's saturation rate, which the load-relative experiments scale by.
//! - **load**: 64 B paced at fractions of the device's saturation rate (under- and
//!   overload): forwarded rate, loss and one-way latency (median).
//! - **packet time**: one-way latency at 10 kpps (idle device) less the wire's (the
//!   same path with a tc redirect for a device, [`Bed::wire`]), every CPU kept from
//!   halting while idle ([`crate::method::awake`]).
//! - **table size**: N rules that the traffic's N random flows all hit: exact 5-tuple
//!   flows (OpenFlow devices, random UDP ports), static FDB entries (the bridge, random
//!   destination MACs), routes (the router, random destinations in them).
//! - **exact vs wildcard**: OpenFlow devices only; rules for random destination
//!   addresses, a share of them wildcard (8 prefix lengths).
//! - **fairness**: F1 at `fairness_f1` % and F2 at each `fairness_f2` % of the ceiling
//!   rate, from one input port and from two; per-flow forwarded rate and loss, the loss
//!   difference, and Jain's index of the max-min normalised shares (in the report).
//! - **worker scaling**: the in-memory datapath benchmark (no veth, no generator) at
//!   each worker count, 1,000 exact rules and flows.
//! - **latency probe**: a 1 kpps probe flow beside bulk traffic at fractions of the
//!   saturation rate; the probe's one-way latency.
//! - **zero loss**: the RFC 2544 binary search at 64 B up to the ceiling rate.
//!
//! The select-group experiment is in [`super::select`], the meter experiment in
//! [`super::meter`], the control-plane experiments (flow installation, churn) in
//! [`super::control`].
//!
//! A device that fails to start or to forward is logged and left out of that
//! experiment (its error in the note); the study goes on.

use std::net::Ipv4Addr;
use std::time::Instant;

use crate::datapath_bench;
use crate::method::search::{zero_loss_search, SearchConfig, SearchError, TrialOutcome};
use crate::method::stats::{loss_difference, Summary};
use crate::report::results::{CpuSplit, Experiment, ExperimentKind, Point, Series};
use crate::traffic::{self, FlowHeader, Spread, Stream};
use crate::workload::RuleKind;

use super::bed::{measure, Bed, Loadout, Measured};
use super::{rules, Ctx, Dut};

/// Seed of every flow set (the same flows for the rules and the traffic).
pub(super) const SEED: u64 = 0x5eed;
/// The probe's and the idle measurement's rate, packets per second.
const PROBE_PPS: f64 = 1_000.0;
const IDLE_PPS: f64 = 10_000.0;
/// Address space of random destinations (shared address space, RFC 6598).
pub(super) const SPACE: (Ipv4Addr, u8) = (Ipv4Addr::new(100, 64, 0, 0), 10);

/// Measures the ceiling (see the module comment) into `ctx.ceiling_pps`: the highest
/// rate the generator reached at 64 B over [`CEILING_RUNS`] runs, each after a pause.
/// The highest, not the median: the figure stands for what the generator can do (the
/// study's line rate, which the fairness flows and the zero-loss search are scaled by),
/// and a shared machine has slow spells (half the rate for seconds at a time on a
/// virtual machine whose host is busy) that no process on it can see.
pub fn ceiling(ctx: &mut Ctx) -> Result<(), String> {
    let bed = ceiling_bed(ctx)?;
    let frames = frames(&bed.flows(0, Spread::UdpPorts, ctx.opts.flows, SPACE, SEED)?, 64);
    let mut rates = Vec::new();
    for _ in 0..CEILING_RUNS {
        std::thread::sleep(std::time::Duration::from_millis(500));
        let secs = ctx.opts.seconds;
        let m = measure(ctx, &bed, vec![flat(&frames)], secs)?;
        rates.push(m.forwarded_mpps() * 1e6);
    }
    ctx.ceiling_pps = rates.iter().copied().fold(0.0, f64::max);
    ctx.progress(&format!(
        "ceiling: {:.3} Mpps at 64 B (highest of {}: {})",
        ctx.ceiling_pps / 1e6,
        rates.len(),
        rates.iter().map(|r| format!("{:.3}", r / 1e6)).collect::<Vec<_>>().join(", ")
    ));
    if ctx.ceiling_pps <= 0.0 {
        return Err("the generator's frames do not reach the sink with no device at all".into());
    }
    Ok(())
}

/// Runs of the ceiling at the start of a study.
const CEILING_RUNS: usize = 5;

/// A bed with no device, warmed up by a flat-out second (the first runs on a fresh
/// veth pair are slower: buffers, the XDP program, the NAPI thread are set up).
fn ceiling_bed(ctx: &mut Ctx) -> Result<Bed, String> {
    let bed = Bed::new(ctx, None, 1, &|_, _| Ok(Loadout::default()))?;
    let fr = frames(&bed.flows(0, Spread::UdpPorts, ctx.opts.flows, SPACE, SEED)?, 64);
    measure(ctx, &bed, vec![flat(&fr)], 1.0)?;
    Ok(bed)
}

/// Runs experiment `kind`.
pub fn run(ctx: &mut Ctx, kind: ExperimentKind) -> Result<Vec<Experiment>, String> {
    Ok(match kind {
        ExperimentKind::ThroughputVsSize => vec![throughput_vs_size(ctx)?],
        ExperimentKind::Load => vec![load(ctx)?],
        ExperimentKind::PacketTime => vec![packet_time(ctx)?],
        ExperimentKind::TableSize => vec![table_size(ctx)?],
        ExperimentKind::ExactVsWildcard => vec![exact_vs_wildcard(ctx)?],
        ExperimentKind::FlowCount => vec![flow_count(ctx)?],
        ExperimentKind::SelectGroup => vec![super::select::select_group(ctx)?],
        ExperimentKind::Meter => vec![super::meter::meter(ctx)?],
        ExperimentKind::Fairness => fairness(ctx)?,
        ExperimentKind::WorkerScaling => vec![worker_scaling(ctx)?],
        ExperimentKind::LatencyProbe => vec![latency_probe(ctx)?],
        ExperimentKind::ZeroLoss => vec![zero_loss(ctx)?],
        ExperimentKind::FlowInstall => vec![super::control::flow_install(ctx)?],
        ExperimentKind::Churn => vec![super::control::churn(ctx)?],
    })
}

/// A stream of `frames` from input 0, flat out.
pub(super) fn flat(frames: &[Vec<u8>]) -> Stream {
    Stream { tx: 0, frames: frames.to_vec(), rate_pps: None }
}

/// A stream of `frames` from input `tx` at `pps`.
fn paced(tx: usize, frames: &[Vec<u8>], pps: f64) -> Stream {
    Stream { tx, frames: frames.to_vec(), rate_pps: Some(pps) }
}

pub(super) fn frames(flows: &[FlowHeader], size: usize) -> Vec<Vec<u8>> {
    flows.iter().map(|h| traffic::frame(h, size)).collect()
}

/// The device's usual random flows: UDP ports for OpenFlow devices, destination MACs
/// for the bridge, destination addresses in the routed sink prefix for the router.
fn usual_flows(ctx: &Ctx, bed: &Bed, dut: Dut, input: usize) -> Result<Vec<FlowHeader>, String> {
    let (spread, space) = match dut {
        Dut::Bridge | Dut::BridgeStatic => (Spread::DstMacs, SPACE),
        Dut::Router => (Spread::DstIps, (bed.targets[input].dst_ip, 24)),
        _ => (Spread::UdpPorts, SPACE),
    };
    let space = (Ipv4Addr::from(u32::from(space.0) & (u32::MAX << (32 - space.1 as u32))), space.1);
    bed.flows(input, spread, ctx.opts.flows, space, SEED + input as u64)
}

/// `ctx.opts.runs` measured runs of the streams `make` gives, `ctx.opts.seconds` each.
fn repeat(
    ctx: &mut Ctx,
    bed: &Bed,
    make: &dyn Fn() -> Vec<Stream>,
) -> Result<Vec<Measured>, String> {
    let mut v = Vec::with_capacity(ctx.opts.runs);
    for _ in 0..ctx.opts.runs.max(1) {
        let secs = ctx.opts.seconds;
        v.push(measure(ctx, bed, make(), secs)?);
    }
    Ok(v)
}

pub(super) fn summary(xs: impl Iterator<Item = f64>) -> Option<Summary> {
    let v: Vec<f64> = xs.filter(|x| x.is_finite()).collect();
    Summary::of(&v)
}

/// A point at `x` from whole runs.
pub(super) fn point(x: f64, runs: &[Measured]) -> Point {
    Point {
        x,
        offered_mpps: summary(runs.iter().map(|m| m.offered_mpps())),
        forwarded_mpps: summary(runs.iter().map(|m| m.forwarded_mpps())),
        loss_ratio: summary(runs.iter().map(|m| m.loss())),
        latency_us: summary(
            runs.iter()
                .filter_map(|m| m.outcome.latency.as_ref())
                .map(|l| l.median_ns as f64 / 1e3),
        ),
        cpu_ns_per_pkt: summary(runs.iter().filter_map(|m| m.cpu_ns_per_pkt)),
        cpu_split: cpu_split(runs),
        packet_time_us: None,
        queue_shares: queue_shares(runs),
        flow_mods_per_s: None,
        rss_mib: None,
        bytes_per_rule: None,
    }
}

/// The CPU split of whole runs: each part's summary over the runs that have one.
fn cpu_split(runs: &[Measured]) -> Option<CpuSplit> {
    let splits: Vec<_> = runs.iter().filter_map(|m| m.split).collect();
    let of = |f: &dyn Fn(&crate::method::cpu::SplitNs) -> f64| summary(splits.iter().map(f));
    Some(CpuSplit {
        user_ns: of(&|s| s.user)?,
        system_ns: of(&|s| s.system)?,
        softirq_ns: of(&|s| s.softirq)?,
        irq_ns: of(&|s| s.irq)?,
        busy_share: of(&|s| s.busy_share)?,
    })
}

/// Each receive queue's median share over the runs that read the queues (all with the
/// same number of queues); empty when none did.
fn queue_shares(runs: &[Measured]) -> Vec<f64> {
    let read: Vec<&Vec<f64>> =
        runs.iter().map(|m| &m.queue_shares).filter(|q| !q.is_empty()).collect();
    let Some(n) = read.first().map(|q| q.len()) else {
        return Vec::new();
    };
    (0..n)
        .map(|i| {
            summary(read.iter().filter_map(|q| q.get(i).copied())).map(|s| s.median).unwrap_or(0.0)
        })
        .collect()
}

/// Rate of the warm-up, which is also the learning pass.
const LEARNING_PPS: f64 = 50_000.0;
/// Longest learning pass, in seconds.
const LEARNING_MAX_S: f64 = 10.0;

/// Checks that a bed forwards at all, so a broken device fails fast with a clear message
/// instead of giving zeros; the same run is the learning pass of RFC 2544 (section 23):
/// every flow of `frames` is sent at least once, at a rate every device forwards, before
/// the measured runs, so that devices that learn or cache flows (address learning, flow
/// caches, peregrine's kernel tier) are measured in their steady state (at least 0.2 s,
/// at most 10 s).
pub(super) fn warm_up(ctx: &mut Ctx, bed: &Bed, frames: &[Vec<u8>]) -> Result<(), String> {
    let seconds = (frames.len() as f64 / LEARNING_PPS).clamp(0.2, LEARNING_MAX_S);
    let m = measure(ctx, bed, vec![paced(0, frames, LEARNING_PPS)], seconds)?;
    if m.outcome.received() == 0 {
        return Err(format!(
            "forwards nothing ({} frames sent in the warm-up, none arrived)",
            m.outcome.sent()
        ));
    }
    Ok(())
}

/// The point at `x` of a freshly loaded bed: a warm-up, then `runs` flat-out runs of
/// `frames`, logged as "`x` `what`".
pub(super) fn flat_point(
    ctx: &mut Ctx,
    bed: &Bed,
    frames: &[Vec<u8>],
    x: f64,
    what: &str,
) -> Result<Point, String> {
    warm_up(ctx, bed, frames)?;
    let runs = repeat(ctx, bed, &|| vec![flat(frames)])?;
    let p = point(x, &runs);
    log_point(ctx, &format!("{x} {what}"), &p);
    Ok(p)
}

/// A bed for `dut` with its default forwarding, warmed up, and its usual 64-byte frames.
pub(super) fn plain_bed(ctx: &mut Ctx, dut: Dut) -> Result<(Bed, Vec<FlowHeader>), String> {
    let bed = Bed::new(ctx, Some(dut), 1, &|_, _| Ok(Loadout::default()))?;
    let flows = usual_flows(ctx, &bed, dut, 0)?;
    warm_up(ctx, &bed, &frames(&flows, 64))?;
    Ok((bed, flows))
}

/// One device's part of an experiment: its points.
pub(super) type PerDevice<'a> = dyn FnMut(&mut Ctx, Dut) -> Result<Vec<Point>, String> + 'a;

/// Runs `f` for each device; a device whose run fails is logged and noted.
pub(super) fn per_device(
    ctx: &mut Ctx,
    kind: ExperimentKind,
    duts: &[Dut],
    f: &mut PerDevice,
) -> (Vec<Series>, Vec<String>) {
    let mut series = Vec::new();
    let mut failed = Vec::new();
    for &dut in duts {
        for workers in ctx.opts.worker_counts(dut) {
            if ctx.stopped() {
                break;
            }
            let label = super::series_label(dut, workers, &ctx.opts);
            ctx.progress(&format!("{} {label}", kind.name()));
            ctx.workers = workers;
            let result = f(ctx, dut);
            ctx.workers = None;
            match result {
                Ok(points) => series.push(Series { dut: label, workers, points }),
                Err(e) => {
                    ctx.progress(&format!("  {label}: failed: {e}"));
                    failed.push(format!("{label} failed: {e}"));
                }
            }
        }
    }
    (series, failed)
}

pub(super) fn note(text: String, failed: &[String]) -> String {
    if failed.is_empty() {
        text
    } else {
        format!("{text} Left out: {}.", failed.join("; "))
    }
}

pub(super) fn log_point(ctx: &Ctx, what: &str, p: &Point) {
    let m = |s: Option<Summary>| s.map(|s| s.median).unwrap_or(f64::NAN);
    ctx.progress(&format!(
        "  {what}: {:.3} Mpps forwarded of {:.3} offered, loss {:.2}%, latency {:.1} µs, {:.0} ns/pkt{}{}",
        m(p.forwarded_mpps),
        m(p.offered_mpps),
        m(p.loss_ratio) * 100.0,
        m(p.latency_us),
        m(p.cpu_ns_per_pkt),
        split_text(p),
        queues_text(p)
    ));
}

/// ` (user U, system S, softirq Q, irq I; CPUs B% busy)` of a point's CPU split, in
/// ns per packet (medians); empty without one.
pub(super) fn split_text(p: &Point) -> String {
    match p.cpu_split {
        None => String::new(),
        Some(c) => format!(
            " (user {:.0}, system {:.0}, softirq {:.0}, irq {:.0}; CPUs {:.0}% busy)",
            c.user_ns.median,
            c.system_ns.median,
            c.softirq_ns.median,
            c.irq_ns.median,
            c.busy_share.median * 100.0
        ),
    }
}

/// `, rx queues 51/49%` of a point's queue shares; empty without them.
pub(super) fn queues_text(p: &Point) -> String {
    if p.queue_shares.is_empty() {
        return String::new();
    }
    let each: Vec<String> = p.queue_shares.iter().map(|s| format!("{:.0}", s * 100.0)).collect();
    format!(", rx queues {}%", each.join("/"))
}

fn throughput_vs_size(ctx: &mut Ctx) -> Result<Experiment, String> {
    let kind = ExperimentKind::ThroughputVsSize;
    let sizes = ctx.opts.sizes.clone();
    let duts = ctx.opts.duts.clone();
    let (series, failed) = per_device(ctx, kind, &duts, &mut |ctx, dut| {
        let (bed, flows) = plain_bed(ctx, dut)?;
        let mut points = Vec::new();
        for &size in &sizes {
            let fr = frames(&flows, size);
            let runs = repeat(ctx, &bed, &|| vec![flat(&fr)])?;
            let p = point(size as f64, &runs);
            log_point(ctx, &format!("{size} B"), &p);
            if size == 64 {
                if let Some(f) = p.forwarded_mpps {
                    ctx.saturation.push((dut, ctx.workers, f.median * 1e6));
                }
            }
            points.push(p);
        }
        Ok(points)
    });
    // The ceiling last: the first seconds of a study are often a slow spell of the
    // machine's (see `ceiling`), which holds the generator back; a device well below
    // the generator's rate does not notice it, the ceiling does.
    let mut ceiling = Vec::new();
    {
        let bed = ceiling_bed(ctx)?;
        let flows = bed.flows(0, Spread::UdpPorts, ctx.opts.flows, SPACE, SEED)?;
        for &size in &sizes {
            let fr = frames(&flows, size);
            let runs = repeat(ctx, &bed, &|| vec![flat(&fr)])?;
            let p = point(size as f64, &runs);
            log_point(ctx, &format!("ceiling {size} B"), &p);
            if size == 64 {
                let best = runs.iter().map(|m| m.forwarded_mpps() * 1e6);
                ctx.ceiling_pps = best.fold(ctx.ceiling_pps, f64::max);
            }
            ceiling.push(p);
        }
    }
    Ok(Experiment {
        kind,
        note: note(
            format!(
                "Flat out, {} random flows per device, {} s per run, {} runs per point.",
                ctx.opts.flows, ctx.opts.seconds, ctx.opts.runs
            ),
            &failed,
        ),
        ceiling,
        series,
    })
}

/// The device's flat-out forwarded rate at 64 B (measured now if not yet).
fn saturation(ctx: &mut Ctx, dut: Dut) -> Result<f64, String> {
    let workers = ctx.workers;
    if let Some(&(_, _, pps)) = ctx.saturation.iter().find(|(d, w, _)| *d == dut && *w == workers) {
        return Ok(pps);
    }
    let (bed, flows) = plain_bed(ctx, dut)?;
    let fr = frames(&flows, 64);
    let runs = repeat(ctx, &bed, &|| vec![flat(&fr)])?;
    let pps = point(64.0, &runs).forwarded_mpps.map(|s| s.median * 1e6).unwrap_or(0.0);
    if pps <= 0.0 {
        return Err("forwards nothing at 64 B".into());
    }
    ctx.saturation.push((dut, workers, pps));
    Ok(pps)
}

fn load(ctx: &mut Ctx) -> Result<Experiment, String> {
    let kind = ExperimentKind::Load;
    let loads = ctx.opts.loads.clone();
    let duts = ctx.opts.duts.clone();
    let (series, failed) = per_device(ctx, kind, &duts, &mut |ctx, dut| {
        let sat = saturation(ctx, dut)?;
        let (bed, flows) = plain_bed(ctx, dut)?;
        let fr = frames(&flows, 64);
        let mut points = Vec::new();
        for &f in &loads {
            let pps = (f * sat).min(ctx.ceiling_pps);
            let runs = repeat(ctx, &bed, &|| vec![paced(0, &fr, pps)])?;
            let p = point(f * 100.0, &runs);
            log_point(ctx, &format!("{:.0}% of saturation", f * 100.0), &p);
            points.push(p);
        }
        Ok(points)
    });
    Ok(Experiment {
        kind,
        note: note(
            "64 B frames paced at a share of each device's own flat-out forwarding rate at 64 B (its saturation; capped at the ceiling), so every device is seen under- and overloaded; `x` is that share, the offered table the rate itself (the plots put it on the axis). Latency is one-way, generator to sink on one clock, the median over the frames received.".to_string(),
            &failed,
        ),
        ceiling: Vec::new(),
        series,
    })
}

fn packet_time(ctx: &mut Ctx) -> Result<Experiment, String> {
    let kind = ExperimentKind::PacketTime;
    let sizes: Vec<usize> = vec![64, 1518];
    // Every CPU polls rather than halts for the whole experiment, wire and devices alike
    // (see `method::awake`): otherwise a device that busy-polls is spared the wake-up of
    // a halted CPU that the wire and the interrupt-driven devices pay on every frame.
    let awake = crate::method::awake::CpusAwake::hold();
    let awake_text = match &awake {
        Ok(_) => "Every CPU was kept polling instead of halting while idle (a PM QoS CPU latency request of 0), for the wire and the devices alike, so no figure includes the wake-up of a halted CPU.".to_string(),
        Err(e) => {
            ctx.progress(&format!("  the CPUs may halt while idle ({e}): a device that busy-polls is spared the wake-up the others pay"));
            format!("The CPUs could not be kept from halting ({e}): a device that busy-polls is spared the wake-up of a halted CPU that the wire and interrupt-driven devices pay on every frame, which can put it below the wire.")
        }
    };
    // The wire's median latency at each size: the baseline, measured on the devices'
    // path (same hosts, generator, sink, queues and NAPI pinning) with a tc redirect
    // for a device.
    let mut base = Vec::new();
    let mut ceiling = Vec::new();
    {
        let bed = Bed::wire(ctx)?;
        let flows = bed.flows(0, Spread::UdpPorts, ctx.opts.flows, SPACE, SEED)?;
        warm_up(ctx, &bed, &frames(&flows, 64))?;
        for &size in &sizes {
            let fr = frames(&flows, size);
            let runs = repeat(ctx, &bed, &|| vec![paced(0, &fr, IDLE_PPS)])?;
            let p = point(size as f64, &runs);
            ctx.progress(&format!(
                "  wire {size} B: {:.2} µs one-way",
                p.latency_us.map(|s| s.median).unwrap_or(f64::NAN)
            ));
            base.push(p.latency_us.map(|s| s.median));
            ceiling.push(Point { x: size as f64, latency_us: p.latency_us, ..Point::default() });
        }
    }
    let duts = ctx.opts.duts.clone();
    let (series, failed) = per_device(ctx, kind, &duts, &mut |ctx, dut| {
        let (bed, flows) = plain_bed(ctx, dut)?;
        let mut points = Vec::new();
        for (i, &size) in sizes.iter().enumerate() {
            let fr = frames(&flows, size);
            let runs = repeat(ctx, &bed, &|| vec![paced(0, &fr, IDLE_PPS)])?;
            let lat: Vec<f64> = runs
                .iter()
                .filter_map(|m| m.outcome.latency.as_ref())
                .map(|l| l.median_ns as f64 / 1e3)
                .collect();
            let p = Point {
                x: size as f64,
                latency_us: Summary::of(&lat),
                packet_time_us: base[i].and_then(|b| less_baseline(&lat, b)),
                ..Point::default()
            };
            ctx.progress(&format!(
                "  {size} B: {}",
                packet_time_text(p.latency_us, base[i], p.packet_time_us)
            ));
            points.push(p);
        }
        Ok(points)
    });
    drop(awake);
    Ok(Experiment {
        kind,
        note: note(
            format!("One-way latency through the idle device ({} kpps), and the same less the wire's: the wire is the devices' path (the same input and sink hosts, generator, sink, veth queues and NAPI threads pinned to the device's CPUs) with a tc redirect from the input port to the sink port for a device (its latency is the `wire` column). The per-packet time is then what the device adds to a frame's trip beyond that redirect. {awake_text} A device whose path is faster than the wire's gives a negative difference, shown as n.r. (not resolved): no processing time can be read from it.", IDLE_PPS / 1e3),
            &failed,
        ),
        ceiling,
        series,
    })
}

/// Each run's latency (`latencies_us`, one median per run) less the baseline's
/// (`baseline_us`, the wire's median at the same size), summarised; `None` without
/// runs. Not clamped: a negative result says the device's path was faster than the
/// baseline's, and is reported as such ([`packet_time_text`]).
pub(super) fn less_baseline(latencies_us: &[f64], baseline_us: f64) -> Option<Summary> {
    if !baseline_us.is_finite() {
        return None;
    }
    let d: Vec<f64> = latencies_us.iter().map(|l| l - baseline_us).collect();
    Summary::of(&d)
}

/// The console's words for a device's packet time: `12.30 µs one-way, 2.10 µs per packet
/// over the wire's 10.20 µs`, or, when the difference is negative, that it was not
/// resolved (never a negative time as a processing time).
pub(super) fn packet_time_text(
    latency: Option<Summary>,
    wire_us: Option<f64>,
    time: Option<Summary>,
) -> String {
    let (Some(l), Some(w), Some(t)) = (latency, wire_us, time) else {
        return format!(
            "{:.2} µs one-way; no per-packet time (the wire's latency or the device's is missing)",
            latency.map(|s| s.median).unwrap_or(f64::NAN)
        );
    };
    if t.median < 0.0 {
        format!(
            "{:.2} µs one-way, {:.2} µs below the wire's {w:.2} µs: per-packet time not resolved",
            l.median, -t.median
        )
    } else {
        format!(
            "{:.2} µs one-way, {:.2} µs per packet over the wire's {w:.2} µs",
            l.median, t.median
        )
    }
}

/// Fills in each point's resident bytes per rule beyond the smallest table's (the first
/// point with a memory reading).
fn per_rule_memory(points: &mut [Point]) {
    let Some((x0, r0)) = points.iter().find_map(|p| Some((p.x, p.rss_mib?.median))) else {
        return;
    };
    for p in points.iter_mut().filter(|p| p.x > x0) {
        if let Some(r) = p.rss_mib {
            let bytes = (r.median - r0) * 1024.0 * 1024.0 / (p.x - x0);
            p.bytes_per_rule = Summary::of(&[bytes]);
        }
    }
}

fn table_size(ctx: &mut Ctx) -> Result<Experiment, String> {
    let kind = ExperimentKind::TableSize;
    let sizes = ctx.opts.table_sizes.clone();
    let duts = ctx.opts.duts.clone();
    let (series, failed) = per_device(ctx, kind, &duts, &mut |ctx, dut| {
        let mut points = Vec::new();
        for &n in &sizes {
            let routes = if n > 1 { n } else { 0 };
            let t = Instant::now();
            let bed = Bed::new(ctx, Some(dut), 1, &|inputs, sink| {
                let base = traffic_base(inputs, sink)?;
                Ok(match dut {
                    Dut::Router => Loadout { routes, ..Loadout::default() },
                    Dut::Bridge | Dut::BridgeStatic => Loadout {
                        fdb: base
                            .flows(Spread::DstMacs, n, SEED)
                            .iter()
                            .map(|h| h.dst_mac)
                            .collect(),
                        ..Loadout::default()
                    },
                    _ => Loadout {
                        flows: Some(
                            base.flows(Spread::UdpPorts, n, SEED)
                                .iter()
                                .map(|h| rules::exact(h, 1, 2))
                                .collect(),
                        ),
                        ..Loadout::default()
                    },
                })
            })?;
            ctx.progress(&format!("  {n} rules loaded in {:.1} s", t.elapsed().as_secs_f64()));
            let rss = bed.device_rss_mib();
            let flows: Vec<FlowHeader> = match dut {
                Dut::Router if routes > 0 => {
                    let base = bed.flows(0, Spread::DstIps, 1, SPACE, SEED)?[0];
                    rules::addresses_in(&crate::dut::router::extra_prefixes(routes), n, SEED)
                        .into_iter()
                        .map(|dst_ip| FlowHeader { dst_ip, ..base })
                        .collect()
                }
                Dut::Router => usual_flows(ctx, &bed, dut, 0)?,
                Dut::Bridge | Dut::BridgeStatic => bed.flows(0, Spread::DstMacs, n, SPACE, SEED)?,
                _ => bed.flows(0, Spread::UdpPorts, n, SPACE, SEED)?,
            };
            let mut p = flat_point(ctx, &bed, &frames(&flows, 64), n as f64, "rules")?;
            p.rss_mib = rss.and_then(|r| Summary::of(&[r]));
            points.push(p);
        }
        per_rule_memory(&mut points);
        Ok(points)
    });
    Ok(Experiment {
        kind,
        note: note(
            "64 B frames flat out; N rules and N random flows that all hit them: exact 5-tuple flows for OpenFlow devices (random UDP ports), static FDB entries for the bridge (random destination MACs), routes for the router (/24 and /32 prefixes, random destinations inside). Device RSS is read once the rules are loaded and it has stopped falling (ovs-vswitchd's; peregrine's is the harness process's, which runs it); bytes/rule is its growth over the smallest table's, per rule.".into(),
            &failed,
        ),
        ceiling: Vec::new(),
        series,
    })
}

/// What flows from the first input of a bed not yet started look like (for rules that
/// must match the traffic): source from the input host, destination the sink host
/// (the OpenFlow devices and the bridge flood or match whatever MAC is used).
struct Base {
    src_mac: [u8; 6],
    src_ip: Ipv4Addr,
    target: crate::dut::Target,
}

impl Base {
    fn flows(&self, spread: Spread, n: usize, seed: u64) -> Vec<FlowHeader> {
        traffic::flows(spread, n, self.src_mac, self.src_ip, self.target, SPACE, seed)
    }
}

fn traffic_base(inputs: &[crate::topo::Host], sink: &crate::topo::Host) -> Result<Base, String> {
    let h = inputs.first().ok_or("no input host")?;
    Ok(Base {
        src_mac: crate::dut::parse_mac(&h.mac)?,
        src_ip: h.ipv4()?,
        target: crate::dut::Target { dst_mac: crate::dut::NOBODY, dst_ip: sink.ipv4()? },
    })
}

fn exact_vs_wildcard(ctx: &mut Ctx) -> Result<Experiment, String> {
    let kind = ExperimentKind::ExactVsWildcard;
    let shares = ctx.opts.wildcard_percents.clone();
    let n = ctx.opts.wildcard_rules;
    let duts: Vec<Dut> = ctx.opts.openflow_duts();
    let (series, failed) = per_device(ctx, kind, &duts, &mut |ctx, dut| {
        let mut points = Vec::new();
        for &pct in &shares {
            let bed = Bed::new(ctx, Some(dut), 1, &|inputs, sink| {
                let base = traffic_base(inputs, sink)?;
                Ok(Loadout {
                    flows: Some(rules::mixed(&base.flows(Spread::DstIps, n, SEED), pct, 1, 2)),
                    ..Loadout::default()
                })
            })?;
            let fr = frames(&bed.flows(0, Spread::DstIps, n, SPACE, SEED)?, 64);
            points.push(flat_point(ctx, &bed, &fr, pct as f64, "% wildcard")?);
        }
        Ok(points)
    });
    Ok(Experiment {
        kind,
        note: note(
            format!("OpenFlow devices only. {n} rules for {n} random flows (random destinations in 100.64.0.0/10), 64 B flat out; `x` is the share of the rules that are wildcard (destination prefixes of {} distinct lengths), the rest exact 5-tuple rules; 0 is all exact, 50 mixed, 100 all wildcard.", rules::MASKS.len()),
            &failed,
        ),
        ceiling: Vec::new(),
        series,
    })
}

/// N random flows (random UDP ports to the sink) under one rule: for OpenFlow devices a
/// wildcard rule on the input port and the sink's /24; the bridge and the router
/// forward them as they forward any traffic to the sink.
fn flow_count(ctx: &mut Ctx) -> Result<Experiment, String> {
    let kind = ExperimentKind::FlowCount;
    let counts = ctx.opts.flow_counts.clone();
    let duts = ctx.opts.duts.clone();
    let (series, failed) = per_device(ctx, kind, &duts, &mut |ctx, dut| {
        let bed = Bed::new(ctx, Some(dut), 1, &|_inputs, sink| {
            let sink = sink.ipv4()?;
            Ok(Loadout { flows: Some(vec![rules::covering(sink, 1, 2)]), ..Loadout::default() })
        })?;
        let mut points = Vec::new();
        for &n in &counts {
            let flows = bed.flows(0, Spread::UdpPorts, n, SPACE, SEED)?;
            points.push(flat_point(ctx, &bed, &frames(&flows, 64), n as f64, "flows")?);
        }
        Ok(points)
    });
    Ok(Experiment {
        kind,
        note: note(
            "64 B frames flat out; N random flows (random UDP source and destination ports) to the sink, all covered by one rule: `udp,in_port=1,nw_dst=SINK/24,actions=output:2` for OpenFlow devices; the bridge and the router forward them as any traffic.".into(),
            &failed,
        ),
        ceiling: Vec::new(),
        series,
    })
}

fn fairness(ctx: &mut Ctx) -> Result<Vec<Experiment>, String> {
    let kind = ExperimentKind::Fairness;
    let mut out = Vec::new();
    let f1 = ctx.opts.fairness_f1;
    for ports in [1usize, 2] {
        for f2 in ctx.opts.fairness_f2.clone() {
            let (r1, r2) = (f1 / 100.0 * ctx.ceiling_pps, f2 / 100.0 * ctx.ceiling_pps);
            let duts = ctx.opts.duts.clone();
            let mut diffs = Vec::new();
            let (series, failed) = per_device(ctx, kind, &duts, &mut |ctx, dut| {
                let bed = Bed::new(ctx, Some(dut), ports, &|_, _| Ok(Loadout::default()))?;
                let a = usual_flows(ctx, &bed, dut, 0)?;
                let b = usual_flows(ctx, &bed, dut, ports - 1)?;
                let fa = frames(&a[..1], 64);
                // F2 differs from F1 when both enter at the same port.
                let fb = frames(&b[b.len().min(2) - 1..b.len().min(2)], 64);
                warm_up(ctx, &bed, &fa)?;
                let mut runs = Vec::new();
                for _ in 0..ctx.opts.runs.max(1) {
                    let secs = ctx.opts.seconds;
                    runs.push(measure(
                        ctx,
                        &bed,
                        vec![paced(0, &fa, r1), paced(ports - 1, &fb, r2)],
                        secs,
                    )?);
                }
                let per = |k: usize| {
                    let secs = |m: &Measured| m.outcome.elapsed.as_secs_f64().max(1e-9);
                    Point {
                        x: (k + 1) as f64,
                        offered_mpps: summary(
                            runs.iter().map(|m| m.outcome.streams[k].sent as f64 / secs(m) / 1e6),
                        ),
                        forwarded_mpps: summary(
                            runs.iter()
                                .map(|m| m.outcome.streams[k].received as f64 / secs(m) / 1e6),
                        ),
                        loss_ratio: summary(runs.iter().map(|m| {
                            crate::method::stats::loss_ratio(
                                m.outcome.streams[k].sent,
                                m.outcome.streams[k].received,
                            )
                        })),
                        ..Point::default()
                    }
                };
                let d = summary(runs.iter().map(|m| {
                    loss_difference(
                        &m.outcome.streams.iter().map(|s| (s.sent, s.received)).collect::<Vec<_>>(),
                    )
                }));
                if let Some(d) = d {
                    diffs.push(format!("{} {:.2}%", dut.name(), d.median * 100.0));
                }
                let (p1, p2) = (per(0), per(1));
                log_point(ctx, "F1", &p1);
                log_point(ctx, "F2", &p2);
                Ok(vec![p1, p2])
            });
            out.push(Experiment {
                kind,
                note: note(
                    format!(
                        "F1 at {f1}% and F2 at {f2}% of the ceiling rate ({:.3} and {:.3} Mpps), 64 B, {}; `x` is the flow. Loss difference (F2's loss less F1's, median): {}.",
                        r1 / 1e6,
                        r2 / 1e6,
                        if ports == 1 { "both from one input port" } else { "each from its own input port" },
                        if diffs.is_empty() { "none measured".to_string() } else { diffs.join(", ") }
                    ),
                    &failed,
                ),
                ceiling: Vec::new(),
                series,
            });
        }
    }
    Ok(out)
}

fn worker_scaling(ctx: &mut Ctx) -> Result<Experiment, String> {
    let kind = ExperimentKind::WorkerScaling;
    let mut points = Vec::new();
    for &w in &ctx.opts.workers.clone() {
        let mut mpps = Vec::new();
        let mut ns = Vec::new();
        for _ in 0..ctx.opts.runs.max(1) {
            let opts = datapath_bench::Options {
                rules: 1_000,
                kind: RuleKind::Exact,
                flows: 1_000,
                workers: w,
                cpus: (0..w).collect(),
                size: 64,
                seconds: ctx.opts.seconds.max(0.5),
                churn: 0,
                tables: 1,
                cache: 65_536,
                seed: 1,
            };
            let r = datapath_bench::run(&opts)?;
            mpps.push(r.forwarding.mpps);
            ns.push(r.forwarding.ns_per_packet);
        }
        let p = Point {
            x: w as f64,
            forwarded_mpps: Summary::of(&mpps),
            cpu_ns_per_pkt: Summary::of(&ns),
            ..Point::default()
        };
        log_point(ctx, &format!("{w} workers"), &p);
        points.push(p);
    }
    Ok(Experiment {
        kind,
        note: "peregrine's datapath on in-memory ports (no veth, no generator): 1,000 exact rules, 1,000 flows, 64 B, workers pinned to CPUs 0..n-1; CPU is ns per packet per worker.".into(),
        ceiling: Vec::new(),
        series: vec![Series {
            dut: "peregrine (in-memory)".into(),
            workers: None,
            points,
        }],
    })
}

fn latency_probe(ctx: &mut Ctx) -> Result<Experiment, String> {
    let kind = ExperimentKind::LatencyProbe;
    let loads = ctx.opts.probe_loads.clone();
    let duts = ctx.opts.duts.clone();
    let (series, failed) = per_device(ctx, kind, &duts, &mut |ctx, dut| {
        let sat = saturation(ctx, dut)?;
        let (bed, flows) = plain_bed(ctx, dut)?;
        let bulk = frames(&flows[1.min(flows.len() - 1)..], 64);
        let probe = frames(&flows[..1], 64);
        let mut points = Vec::new();
        for &f in &loads {
            let pps = (f * sat).min(ctx.ceiling_pps);
            let mut runs = Vec::new();
            for _ in 0..ctx.opts.runs.max(1) {
                let mut streams = vec![paced(0, &probe, PROBE_PPS)];
                if pps > 0.0 {
                    streams.push(paced(0, &bulk, pps));
                }
                let secs = ctx.opts.seconds.max(0.5);
                runs.push(measure(ctx, &bed, streams, secs)?);
            }
            let mut p = point(f * 100.0, &runs);
            p.latency_us = summary(
                runs.iter()
                    .filter_map(|m| m.outcome.streams[0].latency.as_ref())
                    .map(|l| l.median_ns as f64 / 1e3),
            );
            log_point(ctx, &format!("probe beside {:.0}% load", f * 100.0), &p);
            points.push(p);
        }
        Ok(points)
    });
    Ok(Experiment {
        kind,
        note: note(
            format!("A {PROBE_PPS} pps probe flow (64 B) beside bulk 64 B traffic paced at {} of the device's flat-out rate; latency is the probe's one-way median, the other columns the whole traffic.", loads.iter().map(|f| format!("{:.0}%", f * 100.0)).collect::<Vec<_>>().join(", ")),
            &failed,
        ),
        ceiling: Vec::new(),
        series,
    })
}

fn zero_loss(ctx: &mut Ctx) -> Result<Experiment, String> {
    let kind = ExperimentKind::ZeroLoss;
    let duts = ctx.opts.duts.clone();
    let mut found = Vec::new();
    let (series, failed) = per_device(ctx, kind, &duts, &mut |ctx, dut| {
        let (bed, flows) = plain_bed(ctx, dut)?;
        let fr = frames(&flows, 64);
        let cfg = SearchConfig {
            resolution_pps: ctx.ceiling_pps / 50.0,
            acceptable_loss: ctx.opts.acceptable_loss,
            max_trials: ctx.opts.zero_loss_trials.max(2),
            ..SearchConfig::new(ctx.ceiling_pps / 100.0, ctx.ceiling_pps)
        };
        let secs = ctx.opts.seconds;
        // What each trial delivered, per second, in the order made.
        let mut delivered = Vec::new();
        let r = zero_loss_search(&cfg, |rate| {
            let m = measure(ctx, &bed, vec![paced(0, &fr, rate)], secs)?;
            ctx.progress(&format!(
                "  trial at {:.3} Mpps: {:.3} Mpps offered, loss {:.3}%",
                rate / 1e6,
                m.offered_mpps(),
                m.loss() * 100.0
            ));
            delivered.push(m.outcome.received_pps());
            Ok::<_, String>(TrialOutcome {
                offered: m.outcome.sent(),
                delivered: m.outcome.received(),
            })
        })
        .map_err(|e| match e {
            SearchError::BadConfig(s) => s.to_string(),
            SearchError::Trial { error, .. } => error,
        })?;
        // The most a passing trial delivered: a device that pushes back on the sender
        // is offered less than asked and passes; its figure is what it took.
        let best = r
            .trials
            .iter()
            .zip(&delivered)
            .filter(|(t, _)| t.passed)
            .map(|(_, &d)| d)
            .fold(0.0, f64::max);
        found.push(format!(
            "{} {} after {} trials{}",
            dut.name(),
            if r.rate_pps.is_some() { format!("{:.3} Mpps", best / 1e6) } else { "none".into() },
            r.trials.len(),
            if r.converged { "" } else { " (not converged)" }
        ));
        Ok(vec![Point {
            x: 64.0,
            forwarded_mpps: Some(Summary::single(best / 1e6)),
            offered_mpps: r.lowest_fail_pps.map(|p| Summary::single(p / 1e6)),
            ..Point::default()
        }])
    });
    Ok(Experiment {
        kind,
        note: note(
            format!(
                "RFC 2544 binary search at 64 B between 1% and 100% of the ceiling rate ({:.3} Mpps), {} s trials, at most {} trials, resolution 2% of the ceiling, acceptable loss {} (not the RFC's 0: veth drops a frame now and then for reasons other than capacity). Forwarded is the most a passing trial delivered (a device that pushes back on the sender, as veth does for the kernel devices, is offered less than asked and loses nothing: its figure is what it took), offered the lowest rate asked that failed. Found: {}.",
                ctx.ceiling_pps / 1e6,
                ctx.opts.seconds,
                ctx.opts.zero_loss_trials,
                ctx.opts.acceptable_loss,
                found.join(", ")
            ),
            &failed,
        ),
        ceiling: Vec::new(),
        series,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_per_rule_is_growth_over_the_smallest_table() {
        let at = |x: f64, rss: Option<f64>| Point {
            x,
            rss_mib: rss.map(Summary::single),
            ..Point::default()
        };
        let mut points = vec![at(1.0, Some(30.0)), at(1025.0, Some(31.0)), at(2049.0, None)];
        per_rule_memory(&mut points);
        assert_eq!(points[0].bytes_per_rule, None);
        assert_eq!(points[1].bytes_per_rule.map(|s| s.median), Some(1024.0));
        assert_eq!(points[2].bytes_per_rule, None, "no reading, no figure");
        let mut none = vec![at(1.0, None), at(8.0, None)];
        per_rule_memory(&mut none);
        assert!(none.iter().all(|p| p.bytes_per_rule.is_none()));
    }

    #[test]
    fn packet_time_is_each_run_less_the_wire_and_keeps_its_sign() {
        let t = less_baseline(&[12.0, 11.0, 13.5], 10.0).unwrap();
        assert_eq!((t.median, t.min, t.max, t.n), (2.0, 1.0, 3.5, 3));
        // Faster than the wire: negative, not clamped to 0.
        let t = less_baseline(&[8.0, 9.0], 10.0).unwrap();
        assert_eq!((t.median, t.min, t.max), (-1.5, -2.0, -1.0));
        assert_eq!(less_baseline(&[], 10.0), None);
        assert_eq!(less_baseline(&[5.0], f64::NAN), None);
    }

    #[test]
    fn a_negative_packet_time_is_never_printed_as_a_time() {
        let s = |v: f64| Some(Summary::single(v));
        assert_eq!(
            packet_time_text(s(12.3), Some(10.2), s(2.1)),
            "12.30 µs one-way, 2.10 µs per packet over the wire's 10.20 µs"
        );
        let below = packet_time_text(s(8.0), Some(22.5), s(-14.5));
        assert_eq!(
            below,
            "8.00 µs one-way, 14.50 µs below the wire's 22.50 µs: per-packet time not resolved"
        );
        assert!(!below.contains("-14"), "{below}");
        assert!(packet_time_text(s(8.0), None, None).contains("no per-packet time"));
    }
}
