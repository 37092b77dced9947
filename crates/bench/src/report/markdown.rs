//! The markdown report of a study: the machine and pinning, then one section per
//! experiment with a table that puts every device under test side by side.
//!
//! An experiment gets one table per metric measured (forwarded, offered, loss, latency,
//! CPU, flow mods), each with one row per `x` value seen in the experiment and one
//! column for the ceiling and for each device that has that metric. A cell is
//! the median, with `(min–max)` after it when more than one run was taken; `–` marks a
//! value not measured. Loss is shown in percent. A device's forwarded rate within 5% of
//! the ceiling at the same `x` is marked `†` and listed under the table: the generator,
//! not the device, set that figure.
//!
//! Where points carry a CPU split, a table gives it (user / system / softirq / irq ns
//! per packet and the busy share of the device's CPUs); where they carry receive-queue
//! shares, a line lists them. In the packet-time experiment the ceiling column is the
//! wire's, and a per-packet time (or, in documents written before it was kept apart, a
//! latency) below zero is printed as `n.r.` ("not resolved": the device's path was
//! faster than the wire's by that much), never as a time.

use std::fmt::Write;

use super::plot;
use super::results::{
    jain_index, CpuSplit, Experiment, ExperimentKind, Metric, Point, Results, Summary,
};

/// How close to the ceiling a forwarded rate must be to count as generator-bound.
const CEILING_MARGIN: f64 = 0.05;

/// The report of `results` as markdown.
pub fn render_markdown(results: &Results) -> String {
    let mut out = String::new();
    let m = &results.machine;
    let cpu = if m.cpu_model.is_empty() { "unknown CPU" } else { &m.cpu_model };
    let _ = writeln!(out, "# Benchmark study\n");
    let _ = writeln!(out, "- Machine: {cpu}, {} cores, Linux {}", m.cores, m.kernel);
    let _ = writeln!(out, "- Pinning: {}", results.pinning);
    let _ = writeln!(out, "- Started: {}", results.started);
    let _ = writeln!(out, "- Schema: {}", results.schema);
    let plans = plot::plan(results);
    for (exp, figures) in results.experiments.iter().zip(&plans) {
        let files: Vec<&str> = figures.iter().map(|f| f.file.as_str()).collect();
        section(&mut out, exp, &files);
    }
    out
}

/// One experiment's section.
fn section(out: &mut String, exp: &Experiment, files: &[&str]) {
    let _ = writeln!(out, "\n## {} (`{}`)\n", exp.kind.heading(), exp.kind.name());
    if !exp.note.is_empty() {
        let _ = writeln!(out, "{}\n", exp.note);
    }
    if !files.is_empty() {
        let list: Vec<String> = files.iter().map(|f| format!("`{f}`")).collect();
        let _ = writeln!(out, "Plots: {}\n", list.join(", "));
    }

    // Groups: (device name, None for the ceiling; its points).
    let mut groups: Vec<(Option<&str>, &[Point])> = Vec::new();
    if !exp.ceiling.is_empty() {
        groups.push((None, &exp.ceiling));
    }
    for s in &exp.series {
        groups.push((Some(&s.dut), &s.points));
    }
    let mut xs: Vec<f64> = groups
        .iter()
        .flat_map(|(_, points)| points.iter().map(|p| p.x))
        .filter(|x| x.is_finite())
        .collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup_by(|a, b| same_x(*a, *b));

    let mut bound: Vec<String> = Vec::new();
    let mut unresolved = false;
    let mut any = false;
    for metric in Metric::ALL {
        // The groups that have this metric at some point: one column each.
        let cols: Vec<(Option<&str>, &[Point])> = groups
            .iter()
            .copied()
            .filter(|(_, points)| points.iter().any(|p| metric.of(p).is_some()))
            .collect();
        if cols.is_empty() {
            continue;
        }
        any = true;
        let _ = writeln!(out, "{}:\n", capitalised(metric.label()));
        let _ = write!(out, "| {} |", exp.kind.x_label());
        for (name, _) in &cols {
            let _ = write!(out, " {} |", name.unwrap_or(ceiling_name(exp)).replace('|', "\\|"));
        }
        let _ = write!(out, "\n|---:|");
        for _ in &cols {
            let _ = write!(out, "---:|");
        }
        out.push('\n');
        for &x in &xs {
            let _ = write!(out, "| {} |", fmt_x(x));
            let ceiling = at(&exp.ceiling, x).and_then(|p| p.forwarded_mpps);
            for &(dut, points) in &cols {
                let value = at(points, x).and_then(|p| metric.of(p));
                let cell = match value {
                    None => "–".to_string(),
                    Some(s) if is_time_difference(exp, metric, dut) && s.median < 0.0 => {
                        unresolved = true;
                        fmt_unresolved(&s)
                    }
                    Some(s) => fmt_summary(metric, &s),
                };
                let marked = match (dut, metric, value, ceiling) {
                    (Some(dut), Metric::Forwarded, Some(v), Some(c))
                        if generator_bound(v.median, c.median) =>
                    {
                        bound.push(format!("{dut} at {} {}", fmt_x(x), unit_of(exp.kind)));
                        " †"
                    }
                    _ => "",
                };
                let _ = write!(out, " {cell}{marked} |");
            }
            out.push('\n');
        }
        out.push('\n');
    }
    if !any {
        let _ = writeln!(out, "No measurements.");
        return;
    }
    if !bound.is_empty() {
        let _ = writeln!(
            out,
            "† generator-bound (within 5% of the ceiling): a floor, not a measurement: {}.",
            bound.join(", ")
        );
    }
    if unresolved {
        let _ = writeln!(
            out,
            "n.r.: not resolved. The device's path was faster than the baseline's (the brackets hold the negative difference: median, min–max), so the difference is no processing time: the device's time is below what this measurement can tell apart from the baseline."
        );
    }
    cpu_split_table(out, exp, &groups, &xs);
    list_line(
        out,
        "Receive queues of the device's first input port, share of its packets (medians)",
        &queue_share_lines(exp),
        "; ",
    );
    if exp.kind == ExperimentKind::Meter {
        list_line(out, "Forwarded rate over the meter rate (medians)", &meter_ratios(exp), ", ");
    }
    if exp.kind == ExperimentKind::Fairness {
        let indices: Vec<(&str, f64, &str)> = exp
            .series
            .iter()
            .filter_map(|s| fairness_index(&s.points).map(|(j, m)| (s.dut.as_str(), j, m)))
            .collect();
        if let Some(&(_, _, first)) = indices.first() {
            // One basis for all is said once; mixed bases are said per device.
            let line = if indices.iter().all(|&(_, _, m)| m == first) {
                let each: Vec<String> =
                    indices.iter().map(|(d, j, _)| format!("{d} {j:.3}")).collect();
                format!("Jain's fairness index (over {first}): {}.", each.join(", "))
            } else {
                let each: Vec<String> =
                    indices.iter().map(|(d, j, m)| format!("{d} {j:.3} (over {m})")).collect();
                format!("Jain's fairness index: {}.", each.join(", "))
            };
            let _ = writeln!(out, "\n{line}");
        }
    }
}

/// Writes a paragraph "`lead`: `items` (joined by `sep`)." to `out`; nothing if there
/// are no items.
fn list_line(out: &mut String, lead: &str, items: &[String], sep: &str) {
    if !items.is_empty() {
        let _ = writeln!(out, "\n{lead}: {}.", items.join(sep));
    }
}

/// The name of the ceiling's column: the wire in a packet-time experiment that measured
/// one (its points have `packet_time_us`; before, the ceiling's path was the baseline).
fn ceiling_name(exp: &Experiment) -> &'static str {
    if exp.kind == ExperimentKind::PacketTime && has_packet_times(exp) {
        "wire"
    } else {
        "ceiling"
    }
}

/// Whether any device point of `exp` has a per-packet time kept apart.
fn has_packet_times(exp: &Experiment) -> bool {
    exp.series.iter().flat_map(|s| &s.points).any(|p| p.packet_time_us.is_some())
}

/// A negative time difference as `n.r. (median, min–max)`: not a time (see the module
/// comment).
fn fmt_unresolved(s: &Summary) -> String {
    if s.n > 1 {
        format!("n.r. ({}, {}–{})", fmt_num(s.median), fmt_num(s.min), fmt_num(s.max))
    } else {
        format!("n.r. ({})", fmt_num(s.median))
    }
}

/// Whether a cell of `metric` for `dut` (None: the ceiling) of experiment `exp` holds a
/// device's time less a baseline's, which may come out negative: the per-packet time,
/// and the device latencies of a packet-time experiment written before the difference
/// was kept apart (no point has `packet_time_us`: `latency_us` held the difference).
fn is_time_difference(exp: &Experiment, metric: Metric, dut: Option<&str>) -> bool {
    if metric == Metric::PacketTime {
        return true;
    }
    let old_packet_time = exp.kind == ExperimentKind::PacketTime && !has_packet_times(exp);
    old_packet_time && metric == Metric::Latency && dut.is_some()
}

/// The CPU split table of an experiment (see the module comment); nothing when no point
/// has a split.
fn cpu_split_table(
    out: &mut String,
    exp: &Experiment,
    groups: &[(Option<&str>, &[Point])],
    xs: &[f64],
) {
    let cols: Vec<(&str, &[Point])> = groups
        .iter()
        .filter_map(|&(name, points)| Some((name?, points)))
        .filter(|(_, points)| points.iter().any(|p| p.cpu_split.is_some()))
        .collect();
    if cols.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\nCPU split, ns per forwarded packet (medians): user / system / softirq / irq, and the busy share of the device's CPUs (over a window that also holds the generator's setup and the drain, so a device saturated while traffic flowed shows less than 100%). From `/proc/stat` of the device's CPUs; the kernel's receive work in a threaded NAPI thread counts as system time, softirq run on the way out of an interrupt or in ksoftirqd as softirq; the parts add up to the CPU column (steal time aside).\n"
    );
    let _ = write!(out, "| {} |", exp.kind.x_label());
    for (name, _) in &cols {
        let _ = write!(out, " {} |", name.replace('|', "\\|"));
    }
    let _ = write!(out, "\n|---:|");
    for _ in &cols {
        let _ = write!(out, "---:|");
    }
    out.push('\n');
    for &x in xs {
        let _ = write!(out, "| {} |", fmt_x(x));
        for (_, points) in &cols {
            let cell = at(points, x)
                .and_then(|p| p.cpu_split)
                .map_or_else(|| "–".to_string(), |c| fmt_split(&c));
            let _ = write!(out, " {cell} |");
        }
        out.push('\n');
    }
}

/// A split as `user / system / softirq / irq (busy%)`, medians.
fn fmt_split(c: &CpuSplit) -> String {
    format!(
        "{} / {} / {} / {} ({:.0}%)",
        fmt_num(c.user_ns.median),
        fmt_num(c.system_ns.median),
        fmt_num(c.softirq_ns.median),
        fmt_num(c.irq_ns.median),
        c.busy_share.median * 100.0
    )
}

/// `DUT at X UNIT: 50/50%` for every point with receive-queue shares.
fn queue_share_lines(exp: &Experiment) -> Vec<String> {
    let mut v = Vec::new();
    for s in &exp.series {
        for p in s.points.iter().filter(|p| !p.queue_shares.is_empty()) {
            let each: Vec<String> =
                p.queue_shares.iter().map(|q| format!("{:.0}", q * 100.0)).collect();
            v.push(format!(
                "{} at {} {}: {}%",
                s.dut,
                fmt_x(p.x),
                unit_of(exp.kind),
                each.join("/")
            ));
        }
    }
    v
}

/// Each device's median forwarded rate over the meter rate (`x`, packets per second) of
/// a meter experiment: `peregrine-xdp 1.002× at 100000 packets/s`.
pub(super) fn meter_ratios(exp: &Experiment) -> Vec<String> {
    let mut v = Vec::new();
    for s in &exp.series {
        for p in &s.points {
            if let (Some(f), true) = (p.forwarded_mpps, p.x > 0.0) {
                v.push(format!(
                    "{} {:.3}× at {} packets/s",
                    s.dut,
                    f.median * 1e6 / p.x,
                    fmt_x(p.x)
                ));
            }
        }
    }
    v
}

/// `text` with its first letter upper case.
fn capitalised(text: &str) -> String {
    let mut c = text.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// Jain's index of a fairness series over its per-flow medians. When every flow has its
/// offered and forwarded rate, of each flow's forwarded rate over its max-min fair share
/// of what the device forwarded in all (so flows offered unequal loads can still score
/// 1); else of the forwarded rate where measured, else of the loss.
pub(super) fn fairness_index(points: &[Point]) -> Option<(f64, &'static str)> {
    let both: Option<Vec<(f64, f64)>> =
        points.iter().map(|p| Some((p.offered_mpps?.median, p.forwarded_mpps?.median))).collect();
    if let Some(both) = both.filter(|b| !b.is_empty()) {
        let offered: Vec<f64> = both.iter().map(|b| b.0).collect();
        let total: f64 = both.iter().map(|b| b.1).sum();
        let shares = crate::method::stats::max_min_shares(&offered, total);
        let normalised: Option<Vec<f64>> =
            both.iter().zip(&shares).map(|(b, &s)| (s > 0.0).then(|| b.1 / s)).collect();
        if let Some(j) = normalised.and_then(|n| jain_index(&n)) {
            return Some((j, "per-flow forwarded over max-min fair share"));
        }
    }
    [Metric::Forwarded, Metric::Loss].into_iter().find_map(|m| {
        let shares: Vec<f64> = points.iter().filter_map(|p| m.of(p)).map(|s| s.median).collect();
        jain_index(&shares).map(|j| {
            (j, if m == Metric::Loss { "per-flow loss" } else { "per-flow forwarded (Mpps)" })
        })
    })
}

/// Whether a forwarded rate is within [`CEILING_MARGIN`] of the ceiling's.
fn generator_bound(forwarded: f64, ceiling: f64) -> bool {
    ceiling > 0.0 && (forwarded - ceiling).abs() <= CEILING_MARGIN * ceiling
}

/// The unit of an experiment's `x` for running text.
fn unit_of(kind: ExperimentKind) -> &'static str {
    match kind {
        ExperimentKind::ThroughputVsSize
        | ExperimentKind::ZeroLoss
        | ExperimentKind::PacketTime => "B",
        ExperimentKind::Load | ExperimentKind::LatencyProbe => "% of saturation",
        ExperimentKind::TableSize | ExperimentKind::FlowInstall => "rules",
        ExperimentKind::ExactVsWildcard => "% wildcard",
        ExperimentKind::FlowCount | ExperimentKind::SelectGroup => "flows",
        ExperimentKind::Meter => "packets/s",
        ExperimentKind::Churn => "flow mods/s",
        ExperimentKind::Fairness => "(flow)",
        ExperimentKind::WorkerScaling => "workers",
    }
}

/// Whether two `x` values name the same point (equal up to rounding).
pub(super) fn same_x(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// The point of `points` at `x`.
pub(super) fn at(points: &[Point], x: f64) -> Option<&Point> {
    points.iter().find(|p| same_x(p.x, x))
}

/// `x` as an integer when it is one, else with three significant digits.
fn fmt_x(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        fmt_num(x)
    }
}

/// A value with about three significant digits (judged after rounding, so 0.99999 is
/// `1.00`, not `1.000`).
pub(super) fn fmt_num(v: f64) -> String {
    let a = v.abs();
    if a >= 99.95 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 9.995 {
        format!("{v:.1}")
    } else if a >= 0.9995 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// A summary as `median (min–max)`, loss in percent.
fn fmt_summary(metric: Metric, s: &Summary) -> String {
    let (scale, suffix) = if metric == Metric::Loss { (100.0, "%") } else { (1.0, "") };
    let median = fmt_num(s.median * scale);
    if s.n > 1 {
        format!("{median}{suffix} ({}–{}{suffix})", fmt_num(s.min * scale), fmt_num(s.max * scale))
    } else {
        format!("{median}{suffix}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::results::Series;

    #[test]
    fn numbers_keep_three_digits() {
        assert_eq!(fmt_num(1234.4), "1234");
        assert_eq!(fmt_num(12.34), "12.3");
        assert_eq!(fmt_num(1.234), "1.23");
        assert_eq!(fmt_num(0.01234), "0.012");
        assert_eq!(fmt_num(0.0), "0");
        assert_eq!(fmt_num(0.99999), "1.00");
        assert_eq!(fmt_num(9.999), "10.0");
        assert_eq!(fmt_x(64.0), "64");
        assert_eq!(fmt_x(0.5), "0.500");
    }

    #[test]
    fn loss_is_shown_in_percent_with_range() {
        let s = Summary { median: 0.02, min: 0.01, max: 0.5, n: 3 };
        assert_eq!(fmt_summary(Metric::Loss, &s), "2.00% (1.00–50.0%)");
        assert_eq!(fmt_summary(Metric::Forwarded, &Summary::single(1.5)), "1.50");
    }

    #[test]
    fn meter_experiments_give_the_rate_over_the_meter_rate() {
        let p = |x: f64, mpps: Option<f64>| Point {
            x,
            forwarded_mpps: mpps.map(Summary::single),
            ..Point::default()
        };
        let exp = Experiment {
            kind: ExperimentKind::Meter,
            note: String::new(),
            ceiling: Vec::new(),
            series: vec![
                series(
                    "peregrine-xdp",
                    None,
                    vec![p(100_000.0, Some(0.1002)), p(400_000.0, Some(0.3996))],
                ),
                series("ovs-afxdp", None, vec![p(100_000.0, Some(0.099)), p(400_000.0, None)]),
            ],
        };
        assert_eq!(
            meter_ratios(&exp),
            [
                "peregrine-xdp 1.002× at 100000 packets/s",
                "peregrine-xdp 0.999× at 400000 packets/s",
                "ovs-afxdp 0.990× at 100000 packets/s"
            ]
        );
        let md = render_markdown(&doc(exp));
        assert!(md.contains("| meter rate (packets/s) | peregrine-xdp | ovs-afxdp |"), "{md}");
        assert!(
            md.contains("Forwarded rate over the meter rate (medians): peregrine-xdp 1.002×"),
            "{md}"
        );
    }

    fn doc(exp: Experiment) -> Results {
        Results {
            schema: crate::report::results::SCHEMA_VERSION,
            machine: crate::report::results::Machine {
                cpu_model: String::new(),
                cores: 2,
                kernel: "6.18".into(),
            },
            pinning: "p".into(),
            started: "s".into(),
            experiments: vec![exp],
        }
    }

    fn series(dut: &str, workers: Option<usize>, points: Vec<Point>) -> Series {
        Series { dut: dut.into(), workers, points }
    }

    /// A point at `x` whose only value is a latency of `us` µs.
    fn latency_at(x: f64, us: f64) -> Point {
        Point { x, latency_us: Some(Summary::single(us)), ..Point::default() }
    }

    /// A point at `x` whose only value is a forwarded rate of `mpps` Mpps.
    fn forwarded_at(x: f64, mpps: f64) -> Point {
        Point { x, forwarded_mpps: Some(Summary::single(mpps)), ..Point::default() }
    }

    /// An experiment of `kind` with no ceiling whose one series, the bridge's, is `p`.
    fn bridge_only(kind: ExperimentKind, p: Point) -> Experiment {
        Experiment {
            kind,
            note: String::new(),
            ceiling: vec![],
            series: vec![series("bridge", None, vec![p])],
        }
    }

    #[test]
    fn negative_packet_times_are_not_resolved_and_the_baseline_is_the_wire() {
        let p = |x: f64, lat: f64, t: f64| Point {
            x,
            latency_us: Some(Summary::single(lat)),
            packet_time_us: Some(Summary::single(t)),
            ..Point::default()
        };
        let exp = Experiment {
            kind: ExperimentKind::PacketTime,
            note: String::new(),
            ceiling: vec![latency_at(64.0, 20.0)],
            series: vec![
                series("peregrine-afxdp", Some(1), vec![p(64.0, 25.0, 5.0)]),
                series("bridge", None, vec![p(64.0, 5.5, -14.5)]),
            ],
        };
        let md = render_markdown(&doc(exp));
        assert!(md.contains("| frame size (B) | wire | peregrine-afxdp | bridge |"), "{md}");
        assert!(md.contains("| 64 | 20.0 | 25.0 | 5.50 |"), "{md}");
        assert!(
            md.contains("| frame size (B) | peregrine-afxdp | bridge |\n|---:|---:|---:|\n| 64 | 5.00 | n.r. (-14.5) |"),
            "{md}"
        );
        assert!(md.contains("n.r.: not resolved"), "{md}");

        // A document from before the difference was kept apart: latency_us held it.
        let old = Experiment {
            kind: ExperimentKind::PacketTime,
            note: String::new(),
            ceiling: vec![latency_at(64.0, 20.0)],
            series: vec![series("bridge", None, vec![latency_at(64.0, -14.5)])],
        };
        let md = render_markdown(&doc(old));
        assert!(md.contains("| frame size (B) | ceiling | bridge |"), "{md}");
        assert!(md.contains("| 64 | 20.0 | n.r. (-14.5) |"), "{md}");
        assert_eq!(
            fmt_unresolved(&Summary { median: -14.5, min: -14.8, max: -13.1, n: 3 }),
            "n.r. (-14.5, -14.8–-13.1)"
        );
        // Elsewhere a latency is a latency and the ceiling keeps its name.
        let load = bridge_only(ExperimentKind::Load, latency_at(50.0, 3.0));
        let md = render_markdown(&doc(load));
        assert!(!md.contains("n.r.") && !md.contains("wire"), "{md}");
    }

    #[test]
    fn the_cpu_split_and_the_queue_shares_are_tabled_per_device() {
        let split = CpuSplit {
            user_ns: Summary::single(120.0),
            system_ns: Summary::single(310.0),
            softirq_ns: Summary::single(45.5),
            irq_ns: Summary::single(0.0),
            busy_share: Summary::single(0.98),
        };
        let exp = Experiment {
            kind: ExperimentKind::ThroughputVsSize,
            note: String::new(),
            ceiling: vec![forwarded_at(64.0, 3.0)],
            series: vec![
                series(
                    "peregrine-afxdp ×2",
                    Some(2),
                    vec![Point {
                        x: 64.0,
                        forwarded_mpps: Some(Summary::single(1.0)),
                        cpu_ns_per_pkt: Some(Summary::single(475.5)),
                        cpu_split: Some(split),
                        queue_shares: vec![0.52, 0.48],
                        ..Point::default()
                    }],
                ),
                series("bridge", None, vec![forwarded_at(64.0, 1.5)]),
            ],
        };
        let md = render_markdown(&doc(exp));
        assert!(md.contains("CPU split, ns per forwarded packet"), "{md}");
        // Only the device with a split gets a column; the ceiling never does.
        assert!(
            md.contains("| frame size (B) | peregrine-afxdp ×2 |\n|---:|---:|\n| 64 | 120 / 310 / 45.5 / 0 (98%) |"),
            "{md}"
        );
        assert!(
            md.contains("share of its packets (medians): peregrine-afxdp ×2 at 64 B: 52/48%."),
            "{md}"
        );
        // Without splits or shares neither appears.
        let bare = bridge_only(ExperimentKind::ThroughputVsSize, forwarded_at(64.0, 1.5));
        let md = render_markdown(&doc(bare));
        assert!(!md.contains("CPU split") && !md.contains("Receive queues"), "{md}");
    }

    #[test]
    fn ceiling_margin_is_five_percent_both_ways() {
        assert!(generator_bound(0.96, 1.0));
        assert!(generator_bound(1.04, 1.0));
        assert!(!generator_bound(0.94, 1.0));
        assert!(!generator_bound(0.0, 0.0));
    }

    #[test]
    fn fairness_is_judged_against_max_min_fair_shares() {
        let p = |x: f64, offered: f64, forwarded: f64| Point {
            x,
            offered_mpps: Some(Summary::single(offered)),
            forwarded_mpps: Some(Summary::single(forwarded)),
            ..Point::default()
        };
        // F1 asks 1, F2 asks 9, 4 get through: the fair shares are 1 and 3.
        let (j, over) = fairness_index(&[p(1.0, 1.0, 1.0), p(2.0, 9.0, 3.0)]).unwrap();
        assert!((j - 1.0).abs() < 1e-12, "{j}");
        assert!(over.contains("max-min"), "{over}");
        // F1 starved to 0.1 while F2 takes 3.9: normalised shares 0.1 and 1.3.
        let (j, _) = fairness_index(&[p(1.0, 1.0, 0.1), p(2.0, 9.0, 3.9)]).unwrap();
        assert!((j - 1.96 / 3.4).abs() < 1e-9, "{j}");
        // Without offered rates: Jain's index of the forwarded rates themselves.
        let bare = |x: f64, f: f64| Point {
            x,
            forwarded_mpps: Some(Summary::single(f)),
            ..Point::default()
        };
        let (j, over) = fairness_index(&[bare(1.0, 1.0), bare(2.0, 3.0)]).unwrap();
        assert!((j - 16.0 / 20.0).abs() < 1e-12, "{j}");
        assert_eq!(over, "per-flow forwarded (Mpps)");
    }
}
