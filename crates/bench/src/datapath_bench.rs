//! `peregrine bench datapath`: the in-memory datapath benchmark.
//!
//! Builds a [`Workload`] into table `tables - 1` of a fresh [`Datapath`] (earlier tables,
//! if any, hold one match-all rule each that goes to the next table: the multi-table
//! pipeline variant), then runs `workers` forwarding threads, each pinned to a CPU and
//! owning the flows whose index maps to it (a flow stays on one worker). Each thread loops
//! over its flows in batches of 32 for `seconds`, recycling packet buffers, and hands each
//! batch to `Batch::process_batch` (the staged path a port loop uses), prefetching the
//! next batch's frames as a NIC's receive ring would have them in cache; so the figure is
//! the pipeline's own cost: parse, cache, lookup, actions, counters. With `churn > 0` a
//! second phase of the same length runs while a writer thread inserts and removes rules
//! at that rate (publishing every millisecond), and the report gives both rates.

use crate::workload::{RuleKind, Workload};
use datapath::action::Action;
use datapath::counters::Misc;
use datapath::key::{Field, FlowMatch};
use datapath::packet::Packet;
use datapath::pipeline::{Datapath, DatapathConfig, Instructions, Outputs, PortInfo, Rule};
use serde::Serialize;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Packets per batch.
pub const BATCH: usize = 32;

/// What to measure.
#[derive(Clone, Debug)]
pub struct Options {
    pub rules: usize,
    pub kind: RuleKind,
    pub flows: usize,
    pub workers: usize,
    /// CPUs to pin the workers to, in order; empty: CPUs 0, 1, ...
    pub cpus: Vec<usize>,
    pub size: usize,
    pub seconds: f64,
    /// Rule updates per second during the churn phase (0: no churn phase).
    pub churn: u64,
    /// Number of tables the packet walks (the rules are in the last).
    pub tables: u8,
    /// Exact-match cache entries per worker (0: no cache).
    pub cache: usize,
    pub seed: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            rules: 1,
            kind: RuleKind::Exact,
            flows: 1,
            workers: 1,
            cpus: Vec::new(),
            size: 64,
            seconds: 3.0,
            churn: 0,
            tables: 1,
            cache: 0,
            seed: 1,
        }
    }
}

/// Forwarding figures of one phase.
#[derive(Clone, Debug, Serialize)]
pub struct Phase {
    pub packets: u64,
    pub seconds: f64,
    pub mpps: f64,
    /// Nanoseconds per packet per worker.
    pub ns_per_packet: f64,
    pub cache_hit_rate: Option<f64>,
    /// Time the workers were on a CPU (summed), from `/proc/thread-self/schedstat`; less
    /// than `seconds × workers` when other processes took the CPUs (0 if unknown).
    pub cpu_seconds: f64,
    /// Packets per second of worker CPU time, in millions: the rate an unshared CPU
    /// would give, steadier than `mpps` on a busy machine.
    pub mpps_per_cpu: f64,
    /// Packets that produced no output (should be 0: every flow hits a rule).
    pub dropped: u64,
}

/// The whole result, as written to JSON.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub rules: usize,
    pub kind: String,
    pub masks: usize,
    pub flows: usize,
    pub workers: usize,
    pub cpus: Vec<usize>,
    pub size: usize,
    pub tables: u8,
    pub cache_entries: usize,
    pub build_seconds: f64,
    /// The rule table's classifier estimate, per rule, for one of its two copies.
    pub classifier_bytes_per_rule: f64,
    /// Growth of the process's resident memory while building, per rule (both copies,
    /// rules, counters).
    pub rss_bytes_per_rule: f64,
    pub subtables: usize,
    pub forwarding: Phase,
    pub churn_updates_per_s_asked: u64,
    pub churn_updates_per_s_done: Option<f64>,
    pub churn: Option<Phase>,
    /// Forwarding rate under churn relative to without.
    pub churn_ratio: Option<f64>,
    /// The same ratio of the rates per CPU-second (`mpps_per_cpu`): how much the writer
    /// slows a worker's own work, apart from taking its CPU.
    pub churn_ratio_per_cpu: Option<f64>,
}

/// Nanoseconds the calling thread has spent on a CPU (0 if unknown).
fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

fn rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4096)
}

fn kind_name(k: RuleKind) -> (String, usize) {
    match k {
        RuleKind::Exact => ("exact".into(), 1),
        RuleKind::Wildcard { masks } => ("wildcard".into(), masks),
        RuleKind::Prefix => ("prefix".into(), 0),
        RuleKind::Mix { exact_percent, masks } => (format!("mix{exact_percent}"), masks),
    }
}

fn output_rule(m: FlowMatch, priority: u16) -> Rule {
    Rule::new(
        m,
        priority,
        Instructions { apply: vec![Action::Output(2)], ..Instructions::default() },
    )
}

/// Runs the benchmark.
pub fn run(opts: &Options) -> Result<Report, String> {
    if opts.workers == 0 {
        return Err("--workers must be at least 1".into());
    }
    if opts.tables == 0 || opts.tables as usize > datapath::pipeline::NUM_TABLES {
        return Err(format!("--tables must be 1..={}", datapath::pipeline::NUM_TABLES));
    }
    let cpus: Vec<usize> =
        if opts.cpus.is_empty() { (0..opts.workers).collect() } else { opts.cpus.clone() };
    if cpus.len() < opts.workers {
        return Err(format!("{} workers but only {} CPUs given", opts.workers, cpus.len()));
    }
    let w = Workload::generate(opts.kind, opts.rules, opts.flows, opts.size, opts.seed);
    let config = DatapathConfig {
        ports: vec![PortInfo::new(1, 0), PortInfo::new(2, 1)],
        ..DatapathConfig::default()
    };
    let (dp, mut writer, _packet_ins) =
        Datapath::<datapath::classifier::TupleSpace<_>>::new(config, 1024);
    let dp = Arc::new(dp);
    let last = opts.tables - 1;
    let rss0 = rss_bytes();
    let t0 = Instant::now();
    for t in 0..last {
        let goto = Rule::new(
            FlowMatch::ANY,
            0,
            Instructions { goto_table: Some(t + 1), ..Instructions::default() },
        );
        writer.insert_rule(t, goto).map_err(|e| format!("{e:?}"))?;
    }
    for r in &w.rules {
        writer.insert_rule(last, output_rule(r.m, r.priority)).map_err(|e| format!("{e:?}"))?;
    }
    writer.publish();
    let build_seconds = t0.elapsed().as_secs_f64();
    let rss_per_rule = rss_bytes().saturating_sub(rss0) as f64 / w.rules.len() as f64;
    let (classifier_bytes, subtables) = {
        let v = dp.current();
        let t = v.table(last).ok_or("rule table missing")?;
        (t.memory_bytes(), t.len_subtables())
    };

    let forwarding = forward_phase(&dp, &w, opts, &cpus, None)?;
    let (churn, done) = if opts.churn > 0 {
        let (p, done) = churn_phase(&dp, writer, &w, opts, &cpus, last)?;
        (Some(p), Some(done))
    } else {
        (None, None)
    };
    let (kind, masks) = kind_name(opts.kind);
    Ok(Report {
        rules: w.rules.len(),
        kind,
        masks,
        flows: w.frames.len(),
        workers: opts.workers,
        cpus: cpus[..opts.workers].to_vec(),
        size: opts.size,
        tables: opts.tables,
        cache_entries: opts.cache,
        build_seconds,
        classifier_bytes_per_rule: classifier_bytes as f64 / w.rules.len() as f64,
        rss_bytes_per_rule: rss_per_rule,
        subtables,
        churn_ratio: churn.as_ref().map(|c| c.mpps / forwarding.mpps),
        churn_ratio_per_cpu: churn
            .as_ref()
            .filter(|_| forwarding.mpps_per_cpu > 0.0)
            .map(|c| c.mpps_per_cpu / forwarding.mpps_per_cpu),
        forwarding,
        churn_updates_per_s_asked: opts.churn,
        churn_updates_per_s_done: done,
        churn,
    })
}

/// Forwards for `opts.seconds` on every worker; `stop_writer` is raised at the end.
fn forward_phase(
    dp: &Arc<Datapath<datapath::pipeline::DefaultClassifier>>,
    w: &Workload,
    opts: &Options,
    cpus: &[usize],
    stop_writer: Option<&AtomicBool>,
) -> Result<Phase, String> {
    let before_hits = dp.read_misc(Misc::CacheHits);
    let before_misses = dp.read_misc(Misc::CacheMisses);
    let dropped = AtomicU64::new(0);
    let total = AtomicU64::new(0);
    let cpu_ns = AtomicU64::new(0);
    let duration = Duration::from_secs_f64(opts.seconds.max(0.05));
    let start = Instant::now();
    std::thread::scope(|s| {
        for (i, &cpu) in cpus.iter().enumerate().take(opts.workers) {
            // The worker's frames side by side in one buffer, read in order, as a
            // receive ring hands them over (not one allocation per flow scattered over
            // the heap, which would add a page walk per packet that no port has).
            let mine: Vec<&Vec<u8>> = w
                .frames
                .iter()
                .enumerate()
                .filter(|(f, _)| f % opts.workers == i)
                .map(|(_, f)| f)
                .collect();
            let arena: Vec<u8> = mine.iter().flat_map(|f| f.iter().copied()).collect();
            let (dp, dropped, total, cpu_ns) = (dp.clone(), &dropped, &total, &cpu_ns);
            s.spawn(move || {
                core_affinity::set_for_current(core_affinity::CoreId { id: cpu });
                let mut at = 0usize;
                let frames: Vec<&[u8]> = mine
                    .iter()
                    .map(|f| {
                        at += f.len();
                        &arena[at - f.len()..at]
                    })
                    .collect();
                if frames.is_empty() {
                    return;
                }
                let mut worker = dp.worker(opts.cache);
                let mut pool: Vec<Packet> = Vec::with_capacity(BATCH);
                let mut batch_in: Vec<(Packet, u32)> = Vec::with_capacity(BATCH);
                let mut out = Outputs::new();
                let mut next = 0usize;
                let mut sent = 0u64;
                let mut lost = 0u64;
                let t0 = Instant::now();
                let cpu0 = thread_cpu_ns();
                loop {
                    // One clock read per batch: the end test and the batch's time.
                    let now = t0.elapsed();
                    if now >= duration {
                        break;
                    }
                    for _ in 0..BATCH {
                        let frame = frames[next];
                        next = if next + 1 == frames.len() { 0 } else { next + 1 };
                        let pkt = match pool.pop() {
                            Some(mut p) => {
                                p.refill(frame);
                                p
                            }
                            None => Packet::from_slice(frame),
                        };
                        batch_in.push((pkt, 1));
                    }
                    // What a NIC's receive ring gives: the next batch's frames are on
                    // their way to the cache while this one is processed.
                    let mut ahead = next;
                    for _ in 0..BATCH {
                        datapath::prefetch::prefetch(frames[ahead].as_ptr());
                        ahead = if ahead + 1 == frames.len() { 0 } else { ahead + 1 };
                    }
                    let mut batch = dp.batch(&mut worker, now.as_nanos() as u64);
                    batch.process_batch(&mut batch_in, &mut out);
                    drop(batch);
                    sent += BATCH as u64;
                    lost += (BATCH - out.tx.len().min(BATCH)) as u64;
                    pool.extend(out.tx.drain(..).map(|t| t.packet));
                    out.clear();
                }
                cpu_ns.fetch_add(thread_cpu_ns().saturating_sub(cpu0), Ordering::Relaxed);
                dropped.fetch_add(lost, Ordering::Relaxed);
                total.fetch_add(sent, Ordering::Relaxed);
            });
        }
    });
    let seconds = start.elapsed().as_secs_f64();
    if let Some(stop) = stop_writer {
        stop.store(true, Ordering::Relaxed);
    }
    let packets = total.load(Ordering::Relaxed);
    let hits = dp.read_misc(Misc::CacheHits) - before_hits;
    let misses = dp.read_misc(Misc::CacheMisses) - before_misses;
    let mpps = packets as f64 / seconds / 1e6;
    let cpu_seconds = cpu_ns.load(Ordering::Relaxed) as f64 / 1e9;
    Ok(Phase {
        cpu_seconds,
        mpps_per_cpu: if cpu_seconds > 0.0 { packets as f64 / cpu_seconds / 1e6 } else { 0.0 },
        packets,
        seconds,
        mpps,
        ns_per_packet: if packets == 0 {
            0.0
        } else {
            seconds * 1e9 * opts.workers as f64 / packets as f64
        },
        cache_hit_rate: (hits + misses > 0).then(|| hits as f64 / (hits + misses) as f64),
        dropped: dropped.load(Ordering::Relaxed),
    })
}

/// Forwards while a writer inserts and removes rules at `opts.churn` per second
/// (every millisecond a publish of the changes due), on the CPU after the workers' in
/// `cpus`, else on a CPU no worker uses. Returns the phase and the update rate the writer
/// reached.
fn churn_phase(
    dp: &Arc<Datapath<datapath::pipeline::DefaultClassifier>>,
    mut writer: datapath::pipeline::Writer<datapath::pipeline::DefaultClassifier>,
    w: &Workload,
    opts: &Options,
    cpus: &[usize],
    table: u8,
) -> Result<(Phase, f64), String> {
    let stop = AtomicBool::new(false);
    let rate = opts.churn;
    // The CPU after the workers' if given, else any CPU no worker uses (if there is one).
    let workers_cpus = &cpus[..opts.workers.min(cpus.len())];
    let n_cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let writer_cpu =
        cpus.get(opts.workers).copied().or_else(|| (0..n_cpus).find(|c| !workers_cpus.contains(c)));
    std::thread::scope(|s| {
        let stop_ref = &stop;
        let h = s.spawn(move || {
            if let Some(c) = writer_cpu {
                core_affinity::set_for_current(core_affinity::CoreId { id: c });
            }
            let mut rng = crate::workload::Rng::new(opts.seed ^ 0xc0ffee);
            let mut live: std::collections::VecDeque<(FlowMatch, u16)> = Default::default();
            let t0 = Instant::now();
            let mut done = 0u64;
            while !stop_ref.load(Ordering::Relaxed) {
                let due = (t0.elapsed().as_secs_f64() * rate as f64) as u64;
                while done < due {
                    // A churn rule has the mask and priority of a random workload rule
                    // (so it adds no subtable: lookups stay as in the steady phase), a
                    // random source address, and ip_proto 253, which the traffic never
                    // carries.
                    if live.len() < 1000 || done.is_multiple_of(2) {
                        let like = &w.rules[rng.below(w.rules.len() as u64) as usize];
                        let mut m = like.m;
                        m.set(Field::IpProto, 253, 0xff);
                        let src_mask = m.mask.get(Field::Ipv4Src);
                        m.set(Field::Ipv4Src, rng.next_u64() as u128, src_mask);
                        if writer.insert_rule(table, output_rule(m, like.priority)).is_ok() {
                            live.push_back((m, like.priority));
                        }
                    } else if let Some((m, prio)) = live.pop_front() {
                        writer.remove_rule(table, &m, prio);
                    }
                    done += 1;
                }
                writer.publish();
                std::thread::sleep(Duration::from_millis(1));
            }
            done as f64 / t0.elapsed().as_secs_f64()
        });
        let phase = forward_phase(dp, w, opts, cpus, Some(&stop));
        stop.store(true, Ordering::Relaxed);
        let done = h.join().map_err(|_| "churn writer panicked".to_string())?;
        Ok((phase?, done))
    })
}

/// The human-readable table.
pub fn format_report(r: &Report) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "rules={} kind={} masks={} subtables={} flows={} tables={} size={}B workers={} cpus={:?} cache={}\n",
        r.rules, r.kind, r.masks, r.subtables, r.flows, r.tables, r.size, r.workers, r.cpus, r.cache_entries
    ));
    s.push_str(&format!(
        "build {:.3} s, classifier {:.0} B/rule (one copy), RSS {:.0} B/rule\n",
        r.build_seconds, r.classifier_bytes_per_rule, r.rss_bytes_per_rule
    ));
    s.push_str("phase        Mpps   ns/pkt/worker  Mpps/CPU-s  cache-hit  dropped\n");
    let row = |name: &str, p: &Phase| {
        format!(
            "{name:<10} {:>6.2}  {:>13.1}  {:>10.2}  {:>9}  {}\n",
            p.mpps,
            p.ns_per_packet,
            p.mpps_per_cpu,
            p.cache_hit_rate.map_or("-".to_string(), |h| format!("{:.1}%", h * 100.0)),
            p.dropped
        )
    };
    s.push_str(&row("steady", &r.forwarding));
    if let Some(c) = &r.churn {
        s.push_str(&row("churn", c));
        s.push_str(&format!(
            "churn: {} updates/s asked, {:.0} done; forwarding at {:.1}% of steady ({:.1}% per CPU-second)\n",
            r.churn_updates_per_s_asked,
            r.churn_updates_per_s_done.unwrap_or(0.0),
            r.churn_ratio.unwrap_or(0.0) * 100.0,
            r.churn_ratio_per_cpu.unwrap_or(0.0) * 100.0
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_run_forwards_every_packet_and_reports() {
        let opts = Options {
            rules: 200,
            kind: RuleKind::Wildcard { masks: 4 },
            flows: 50,
            seconds: 0.1,
            churn: 2000,
            tables: 2,
            ..Options::default()
        };
        let r = run(&opts).unwrap();
        assert_eq!(r.rules, 200);
        assert!(r.forwarding.packets > 0);
        assert_eq!(r.forwarding.dropped, 0, "every flow hits a rule");
        let c = r.churn.as_ref().unwrap();
        assert!(c.packets > 0);
        assert_eq!(c.dropped, 0, "churn rules never take the traffic");
        assert!(r.churn_updates_per_s_done.unwrap() > 0.0);
        assert!(r.subtables >= 1 && r.subtables <= 5);
        let json = serde_json::to_string(&r).unwrap();
        assert!(json.contains("\"kind\":\"wildcard\""));
        assert!(format_report(&r).contains("steady"));
    }

    #[test]
    fn bad_options_are_errors() {
        let o = Options { workers: 0, ..Options::default() };
        assert!(run(&o).unwrap_err().contains("workers"));
        let o = Options { workers: 3, cpus: vec![0], ..Options::default() };
        assert!(run(&o).unwrap_err().contains("CPUs"));
    }
}
