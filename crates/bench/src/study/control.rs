//! The study's control-plane experiments, through each OpenFlow device's management
//! connection:
//!
//! - **flow install**: N exact flows added with one `add-flows` (OpenFlow 1.3 flow-mods
//!   and a barrier) by `peregrine ctl`, and by `ovs-ofctl` for Open vSwitch, the client
//!   pinned to the generator CPU; a fresh device each run.
//! - **churn**: flat-out 64 B traffic through the default flows while `peregrine ctl`
//!   adds batches of rules on other flows and deletes them again every 100 ms.

use std::process::Command;
use std::time::{Duration, Instant};

use crate::method::stats::Summary;
use crate::report::results::{Experiment, ExperimentKind, Point, Series};
use crate::traffic::Spread;

use super::bed::{measure, Bed, Loadout};
use super::experiments::{
    flat, frames, log_point, note, per_device, plain_bed, point, summary, SEED, SPACE,
};
use super::select::output_of;
use super::{rules, Ctx, Dut};

/// Runs `prog args…` pinned to `cpu`, failing with its stderr; returns the seconds taken.
fn timed(cpu: usize, prog: &str, args: &[&str]) -> Result<f64, String> {
    let t = Instant::now();
    let mut cmd = Command::new("taskset");
    cmd.args(["-c", &cpu.to_string(), prog]).args(args);
    output_of(cmd, prog, args)?;
    Ok(t.elapsed().as_secs_f64())
}

/// The flow installation experiment (see the module comment).
pub fn flow_install(ctx: &mut Ctx) -> Result<Experiment, String> {
    let kind = ExperimentKind::FlowInstall;
    let n = ctx.opts.install_rules;
    let duts: Vec<Dut> = ctx.opts.openflow_duts();
    let ctl = ctx.opts.ctl.clone();
    let mut series = Vec::new();
    let mut failed = Vec::new();
    for dut in duts {
        let mut clients: Vec<(&str, String)> = Vec::new();
        if let Some(c) = &ctl {
            clients.push(("peregrine ctl", c.display().to_string()));
        }
        if dut.peregrine_backend().is_none() {
            clients.push(("ovs-ofctl", "ovs-ofctl".into()));
        }
        for (client, prog) in clients {
            let name = format!("{} via {client}", dut.name());
            ctx.progress(&format!("{} {name}", kind.name()));
            let run = || -> Result<Point, String> {
                let mut rates = Vec::new();
                for _ in 0..ctx.opts.runs.max(1) {
                    let bed = Bed::new(ctx, Some(dut), 1, &|_, _| Ok(Loadout::default()))?;
                    let target = bed.openflow_target().ok_or("no OpenFlow connection")?;
                    let flows = bed.flows(0, Spread::UdpPorts, n, SPACE, SEED)?;
                    let file = std::env::temp_dir().join(format!("{}-flows.txt", bed.name()));
                    let text: String = flows.iter().map(|h| rules::exact(h, 1, 2) + "\n").collect();
                    std::fs::write(&file, text).map_err(|e| format!("{}: {e}", file.display()))?;
                    let mut args = vec![];
                    if prog == "ovs-ofctl" {
                        args.extend(["-O", "OpenFlow13"]);
                    } else {
                        args.push("ctl");
                    }
                    let path = file.display().to_string();
                    args.extend(["add-flows", target.as_str(), path.as_str()]);
                    let secs = timed(ctx.opts.gen_cpu, &prog, &args);
                    let _ = std::fs::remove_file(&file);
                    rates.push(n as f64 / secs?);
                }
                Ok(Point { x: n as f64, flow_mods_per_s: Summary::of(&rates), ..Point::default() })
            };
            match run() {
                Ok(p) => {
                    ctx.progress(&format!(
                        "  {:.0} flows/s",
                        p.flow_mods_per_s.map(|s| s.median).unwrap_or(0.0)
                    ));
                    series.push(Series { dut: name, workers: None, points: vec![p] });
                }
                Err(e) => {
                    ctx.progress(&format!("  failed: {e}"));
                    failed.push(format!("{name} failed: {e}"));
                }
            }
        }
    }
    Ok(Experiment {
        kind,
        note: note(
            format!("{n} exact flows added by one `add-flows` (OpenFlow 1.3 flow-mods and a barrier) into a device holding its default flows; the client pinned to CPU {}, the device to CPU {}.", ctx.opts.gen_cpu, ctx.opts.dut_cpu),
            &failed,
        ),
        ceiling: Vec::new(),
        series,
    })
}

/// The churn experiment (see the module comment).
pub fn churn(ctx: &mut Ctx) -> Result<Experiment, String> {
    let kind = ExperimentKind::Churn;
    let rates = ctx.opts.churn_rates.clone();
    let Some(ctl) = ctx.opts.ctl.clone() else {
        return Ok(Experiment {
            kind,
            note: "Not measured: no `peregrine` binary was given for the rule client.".into(),
            ceiling: Vec::new(),
            series: Vec::new(),
        });
    };
    let duts: Vec<Dut> = ctx.opts.openflow_duts();
    let mut done = Vec::new();
    ctx.check_foreign = false;
    let (series, failed) = per_device(ctx, kind, &duts, &mut |ctx, dut| {
        let (bed, flows) = plain_bed(ctx, dut)?;
        let fr = frames(&flows, 64);
        let target = bed.openflow_target().ok_or("no OpenFlow connection")?;
        let mut points = Vec::new();
        for &rate in &rates {
            let mut runs = Vec::new();
            let mut achieved = Vec::new();
            for _ in 0..ctx.opts.runs.max(1) {
                let secs = ctx.opts.seconds.max(0.5);
                let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
                let churner = (rate > 0).then(|| {
                    let (stop, ctl, target) = (stop.clone(), ctl.clone(), target.clone());
                    let file = std::env::temp_dir().join(format!("{}-churn.txt", bed.name()));
                    let cpu = ctx.opts.dut_cpu;
                    std::thread::spawn(move || churn_loop(&ctl, &target, &file, rate, cpu, &stop))
                });
                let m = measure(ctx, &bed, vec![flat(&fr)], secs);
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
                if let Some(h) = churner {
                    let r = h.join().map_err(|_| "churn thread panicked".to_string())??;
                    achieved.push(r);
                }
                runs.push(m?);
            }
            let p = point(rate as f64, &runs);
            log_point(ctx, &format!("{rate} mods/s asked"), &p);
            if let Some(a) = summary(achieved.into_iter()) {
                done.push(format!("{} at {rate}: {:.0}", dut.name(), a.median));
            }
            points.push(p);
        }
        Ok(points)
    });
    ctx.check_foreign = true;
    Ok(Experiment {
        kind,
        note: note(
            format!("64 B flat out through the device's default flows while `peregrine ctl` (pinned to the device CPU {}) adds batches of exact rules on other flows and deletes them again, every 100 ms, at the rate asked (adds plus deletes per second). Rates achieved: {}.", ctx.opts.dut_cpu, if done.is_empty() { "none".to_string() } else { done.join(", ") }),
            &failed,
        ),
        ceiling: Vec::new(),
        series,
    })
}

/// Adds and deletes rules through `ctl` against `target` at about `rate` changes per
/// second (half adds, half deletes, in 100 ms rounds) until `stop`; returns the rate
/// achieved.
fn churn_loop(
    ctl: &std::path::Path,
    target: &str,
    file: &std::path::Path,
    rate: usize,
    cpu: usize,
    stop: &std::sync::atomic::AtomicBool,
) -> Result<f64, String> {
    let per_round = (rate / 20).max(1);
    let t = Instant::now();
    let mut changes = 0usize;
    let mut round = 0u64;
    let prog = ctl.display().to_string();
    let path = file.display().to_string();
    while !stop.load(std::sync::atomic::Ordering::Relaxed) && t.elapsed() < Duration::from_secs(600)
    {
        let text: String = (0..per_round)
            .map(|i| {
                format!(
                    "priority=300,udp,nw_dst=198.18.{}.{},tp_dst=7,actions=drop\n",
                    (i / 250) % 250,
                    i % 250 + 1
                )
            })
            .collect();
        std::fs::write(file, text).map_err(|e| format!("{path}: {e}"))?;
        timed(cpu, &prog, &["ctl", "add-flows", target, &path])?;
        timed(cpu, &prog, &["ctl", "del-flows", target, "udp,tp_dst=7"])?;
        changes += 2 * per_round;
        round += 1;
        let due = Duration::from_millis(100 * round);
        if let Some(wait) = due.checked_sub(t.elapsed()) {
            std::thread::sleep(wait);
        }
    }
    let _ = std::fs::remove_file(file);
    Ok(changes as f64 / t.elapsed().as_secs_f64().max(1e-9))
}
