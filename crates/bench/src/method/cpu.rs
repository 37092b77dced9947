//! CPU accounting from `/proc`, for the CPU time a device spends per forwarded packet
//! and for telling apart runs that foreign load disturbed (this machine has no hardware
//! performance counters, so jiffies are what there is).
//!
//! Parsers take the text of the file, so tests feed recorded text; the `read_*`
//! functions and [`CpuSample::read`] read the real files. Times are in jiffies of
//! `USER_HZ` ([`USER_HZ`], 100 per second on every architecture Linux builds the study
//! for), so a one-second run gives 100 ticks per CPU: runs shorter than a second or two
//! give coarse figures.
//!
//! # Where the kernel puts softirq time
//!
//! Forwarding in the kernel (veth, the Linux bridge, the receive path of every
//! AF_PACKET/AF_XDP socket) runs as NET_RX softirq. `/proc/stat` counts it in the
//! `softirq` column of the CPU it ran on. With tick-based accounting, a softirq tick
//! taken while a task ran is charged to that task's system time as well; when the work
//! is deferred to the `ksoftirqd/N` thread it is that thread's time (and, with
//! `CONFIG_IRQ_TIME_ACCOUNTING`, also `softirq` in `/proc/stat`). The figures below can
//! therefore count some softirq time twice; they never leave the device's own time out.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::io;

use serde::{Deserialize, Serialize};

/// Ticks per second of the times in `/proc/stat` and `/proc/PID/stat` (`USER_HZ`, fixed
/// at 100 by the kernel's ABI on x86, arm and the other architectures the study runs
/// on).
pub const USER_HZ: u64 = 100;

/// Nanoseconds in `jiffies` ticks of [`USER_HZ`].
pub fn jiffies_to_ns(jiffies: u64) -> u64 {
    jiffies.saturating_mul(1_000_000_000 / USER_HZ)
}

/// A `/proc` text that did not have the expected shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError(pub String);

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "malformed /proc text: {}", self.0)
    }
}

impl std::error::Error for ParseError {}

impl From<ParseError> for io::Error {
    fn from(e: ParseError) -> io::Error {
        io::Error::new(io::ErrorKind::InvalidData, e)
    }
}

fn number(field: &str, what: &str) -> Result<u64, ParseError> {
    field.parse().map_err(|_| ParseError(format!("{what}: {field:?} is not a count")))
}

/// One CPU's times from a `cpuN` line of `/proc/stat`, in jiffies (cumulative since
/// boot in a sample, or the difference of two samples). `guest` time is already part of
/// `user` and is not kept.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuTimes {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    /// Time a hypervisor ran something else while this virtual CPU wanted to run.
    pub steal: u64,
}

impl CpuTimes {
    /// Time the CPU was not available to idle: everything but `idle` and `iowait`
    /// (steal included: the CPU was taken from us).
    pub fn busy(&self) -> u64 {
        self.user + self.nice + self.system + self.irq + self.softirq + self.steal
    }

    /// All the time accounted: [`CpuTimes::busy`] plus `idle` and `iowait`.
    pub fn total(&self) -> u64 {
        self.busy() + self.idle + self.iowait
    }

    /// `later − self`, field by field, saturating at 0 (counters only grow, but a CPU
    /// that went offline and back may restart some).
    pub fn delta(&self, later: &CpuTimes) -> CpuTimes {
        CpuTimes {
            user: later.user.saturating_sub(self.user),
            nice: later.nice.saturating_sub(self.nice),
            system: later.system.saturating_sub(self.system),
            idle: later.idle.saturating_sub(self.idle),
            iowait: later.iowait.saturating_sub(self.iowait),
            irq: later.irq.saturating_sub(self.irq),
            softirq: later.softirq.saturating_sub(self.softirq),
            steal: later.steal.saturating_sub(self.steal),
        }
    }
}

/// The per-CPU lines (`cpu0`, `cpu1`, …) of a `/proc/stat` text, by CPU number. The
/// aggregate `cpu` line and other lines are skipped; fields that old kernels lack
/// (iowait, irq, softirq, steal) read as 0.
pub fn parse_proc_stat(text: &str) -> Result<BTreeMap<usize, CpuTimes>, ParseError> {
    let mut cpus = BTreeMap::new();
    for line in text.lines() {
        let mut fields = line.split_whitespace();
        let Some(name) = fields.next() else { continue };
        let Some(num) = name.strip_prefix("cpu").filter(|n| !n.is_empty()) else {
            continue;
        };
        let cpu: usize =
            num.parse().map_err(|_| ParseError(format!("/proc/stat: bad CPU name {name:?}")))?;
        let v = fields.take(8).map(|f| number(f, "/proc/stat")).collect::<Result<Vec<u64>, _>>()?;
        if v.len() < 4 {
            return Err(ParseError(format!("/proc/stat: short line for {name}")));
        }
        let at = |i: usize| v.get(i).copied().unwrap_or(0);
        cpus.insert(
            cpu,
            CpuTimes {
                user: at(0),
                nice: at(1),
                system: at(2),
                idle: at(3),
                iowait: at(4),
                irq: at(5),
                softirq: at(6),
                steal: at(7),
            },
        );
    }
    if cpus.is_empty() {
        return Err(ParseError("/proc/stat: no cpuN line".into()));
    }
    Ok(cpus)
}

/// Reads and parses `/proc/stat`.
pub fn read_proc_stat() -> io::Result<BTreeMap<usize, CpuTimes>> {
    Ok(parse_proc_stat(&std::fs::read_to_string("/proc/stat")?)?)
}

/// A process's CPU times from `/proc/PID/stat`, in jiffies: all its threads, live and
/// ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcTimes {
    /// User time (`utime`, field 14).
    pub utime: u64,
    /// System time (`stime`, field 15).
    pub stime: u64,
}

impl ProcTimes {
    /// User plus system time.
    pub fn total(&self) -> u64 {
        self.utime + self.stime
    }

    /// `later − self`, saturating at 0.
    pub fn delta(&self, later: &ProcTimes) -> ProcTimes {
        ProcTimes {
            utime: later.utime.saturating_sub(self.utime),
            stime: later.stime.saturating_sub(self.stime),
        }
    }
}

/// The times in a `/proc/PID/stat` text. The command name (field 2) is in parentheses
/// and may itself hold spaces and parentheses, so fields are counted from the last `)`.
pub fn parse_pid_stat(text: &str) -> Result<ProcTimes, ParseError> {
    let close =
        text.rfind(')').ok_or_else(|| ParseError("/proc/PID/stat: no command name".into()))?;
    // Fields after the name start at field 3 (state); utime is field 14.
    let rest: Vec<&str> = text[close + 1..].split_whitespace().collect();
    if rest.len() < 13 {
        return Err(ParseError("/proc/PID/stat: short line".into()));
    }
    Ok(ProcTimes {
        utime: number(rest[11], "/proc/PID/stat utime")?,
        stime: number(rest[12], "/proc/PID/stat stime")?,
    })
}

/// Reads and parses `/proc/<pid>/stat`.
pub fn read_pid_stat(pid: u32) -> io::Result<ProcTimes> {
    Ok(parse_pid_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat"))?)?)
}

/// The process ids of the `ksoftirqd/N` threads of `cpus`, the kernel threads that run
/// softirq work a CPU could not finish in interrupt context. CPUs without one (offline)
/// are left out.
pub fn ksoftirqd_pids(cpus: &BTreeSet<usize>) -> io::Result<Vec<u32>> {
    per_cpu_thread_pids(cpus, |comm| comm.strip_prefix("ksoftirqd/"))
}

/// The process ids of the workqueue threads that may run on `cpus`: the per-CPU ones
/// bound to them (`kworker/N:M…`) and the unbound ones (`kworker/uN:M…`, which run
/// anywhere). Kernel work the traffic causes runs there (deferred and RCU frees, socket
/// teardown: a flood of AF_PACKET traffic keeps an unbound worker busy reclaiming), so
/// on a machine kept for benchmarks they count as the benchmark's. They come and go, so
/// a list is good for one run at most.
pub fn kworker_pids(cpus: &BTreeSet<usize>) -> io::Result<Vec<u32>> {
    let any: BTreeSet<usize> = [usize::MAX].into();
    let mut v = per_cpu_thread_pids(cpus, |comm| {
        comm.strip_prefix("kworker/").and_then(|rest| rest.split_once(':')).map(|(cpu, _)| cpu)
    })?;
    v.extend(per_cpu_thread_pids(&any, |comm| {
        comm.strip_prefix("kworker/u")
            .and_then(|rest| rest.split_once(':'))
            .map(|_| "18446744073709551615")
    })?);
    v.sort_unstable();
    Ok(v)
}

/// The pids of the kernel threads whose `comm`, read by `cpu_of`, names one of `cpus`.
fn per_cpu_thread_pids(
    cpus: &BTreeSet<usize>,
    cpu_of: impl Fn(&str) -> Option<&str>,
) -> io::Result<Vec<u32>> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc")? {
        let entry = entry?;
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        // A process may end between the listing and the read.
        let Ok(comm) = std::fs::read_to_string(entry.path().join("comm")) else {
            continue;
        };
        let cpu = cpu_of(comm.trim()).and_then(|n| n.parse().ok());
        if cpu.is_some_and(|c| cpus.contains(&c)) {
            pids.push(pid);
        }
    }
    pids.sort_unstable();
    Ok(pids)
}

/// [`CpuSample::read`] of those of `pids` still running: a process that ended is left
/// out (its times went with it) instead of failing the sample.
pub fn read_sample_of_living(pids: &[u32]) -> io::Result<CpuSample> {
    let mut last = None;
    for _ in 0..3 {
        let living: Vec<u32> = pids
            .iter()
            .copied()
            .filter(|p| std::path::Path::new(&format!("/proc/{p}/stat")).exists())
            .collect();
        match CpuSample::read(&living) {
            Ok(s) => return Ok(s),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("no sample")))
}

/// NET_TX and NET_RX counts of `/proc/softirqs` by CPU: how many times each softirq
/// ran (not how long).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Softirqs {
    pub net_tx: BTreeMap<usize, u64>,
    pub net_rx: BTreeMap<usize, u64>,
}

impl Softirqs {
    /// `later − self` per CPU, saturating at 0; CPUs missing from either are left out.
    pub fn delta(&self, later: &Softirqs) -> Softirqs {
        let d = |a: &BTreeMap<usize, u64>, b: &BTreeMap<usize, u64>| {
            a.iter().filter_map(|(c, x)| b.get(c).map(|y| (*c, y.saturating_sub(*x)))).collect()
        };
        Softirqs { net_tx: d(&self.net_tx, &later.net_tx), net_rx: d(&self.net_rx, &later.net_rx) }
    }
}

/// The NET_TX and NET_RX rows of a `/proc/softirqs` text. The header names the CPU of
/// each column (`CPU0 CPU1 …`).
pub fn parse_softirqs(text: &str) -> Result<Softirqs, ParseError> {
    let mut lines = text.lines();
    let header = lines.next().ok_or_else(|| ParseError("/proc/softirqs: empty".into()))?;
    let cpus = header
        .split_whitespace()
        .map(|h| {
            h.strip_prefix("CPU")
                .and_then(|n| n.parse::<usize>().ok())
                .ok_or_else(|| ParseError(format!("/proc/softirqs: bad column {h:?}")))
        })
        .collect::<Result<Vec<usize>, _>>()?;
    let mut out = Softirqs::default();
    let (mut tx, mut rx) = (false, false);
    for line in lines {
        let mut fields = line.split_whitespace();
        let map = match fields.next() {
            Some("NET_TX:") => {
                tx = true;
                &mut out.net_tx
            }
            Some("NET_RX:") => {
                rx = true;
                &mut out.net_rx
            }
            _ => continue,
        };
        for (cpu, f) in cpus.iter().zip(fields) {
            map.insert(*cpu, number(f, "/proc/softirqs")?);
        }
    }
    if !(tx && rx) {
        return Err(ParseError("/proc/softirqs: no NET_TX or NET_RX row".into()));
    }
    Ok(out)
}

/// Reads and parses `/proc/softirqs`.
pub fn read_softirqs() -> io::Result<Softirqs> {
    Ok(parse_softirqs(&std::fs::read_to_string("/proc/softirqs")?)?)
}

/// What `/proc` said at one instant: every CPU's times, the times of the processes the
/// benchmark follows, and the network softirq counts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuSample {
    pub cpus: BTreeMap<usize, CpuTimes>,
    pub procs: BTreeMap<u32, ProcTimes>,
    pub softirqs: Softirqs,
}

impl CpuSample {
    /// A sample from recorded texts: `/proc/stat`, `(pid, /proc/PID/stat)` pairs and
    /// `/proc/softirqs`.
    pub fn parse(
        stat: &str,
        procs: &[(u32, &str)],
        softirqs: &str,
    ) -> Result<CpuSample, ParseError> {
        Ok(CpuSample {
            cpus: parse_proc_stat(stat)?,
            procs: procs
                .iter()
                .map(|&(pid, t)| Ok((pid, parse_pid_stat(t)?)))
                .collect::<Result<_, ParseError>>()?,
            softirqs: parse_softirqs(softirqs)?,
        })
    }

    /// A sample of the real files, following `pids` (an error if one has ended).
    pub fn read(pids: &[u32]) -> io::Result<CpuSample> {
        Ok(CpuSample {
            cpus: read_proc_stat()?,
            procs: pids
                .iter()
                .map(|&pid| Ok((pid, read_pid_stat(pid)?)))
                .collect::<io::Result<_>>()?,
            softirqs: read_softirqs()?,
        })
    }

    /// What happened between `self` and `later`. CPUs and processes missing from either
    /// sample are left out (a process that ended took its times with it).
    pub fn delta(&self, later: &CpuSample) -> CpuDelta {
        CpuDelta {
            cpus: self
                .cpus
                .iter()
                .filter_map(|(c, a)| later.cpus.get(c).map(|b| (*c, a.delta(b))))
                .collect(),
            procs: self
                .procs
                .iter()
                .filter_map(|(p, a)| later.procs.get(p).map(|b| (*p, a.delta(b))))
                .collect(),
            softirqs: self.softirqs.delta(&later.softirqs),
        }
    }
}

/// The difference of two [`CpuSample`]s: jiffies per CPU and per process, and softirq
/// counts per CPU, spent during a run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuDelta {
    pub cpus: BTreeMap<usize, CpuTimes>,
    pub procs: BTreeMap<u32, ProcTimes>,
    pub softirqs: Softirqs,
}

impl CpuDelta {
    /// User plus system time of the processes `pids` (those the delta knows).
    pub fn procs_jiffies(&self, pids: &[u32]) -> u64 {
        let set: BTreeSet<u32> = pids.iter().copied().collect();
        set.iter().filter_map(|p| self.procs.get(p)).map(ProcTimes::total).sum()
    }

    /// The times of `cpus` added up, field by field (CPUs the delta lacks add nothing).
    pub fn cpus_sum(&self, cpus: &BTreeSet<usize>) -> CpuTimes {
        cpus.iter().filter_map(|c| self.cpus.get(c)).fold(CpuTimes::default(), |a, t| CpuTimes {
            user: a.user + t.user,
            nice: a.nice + t.nice,
            system: a.system + t.system,
            idle: a.idle + t.idle,
            iowait: a.iowait + t.iowait,
            irq: a.irq + t.irq,
            softirq: a.softirq + t.softirq,
            steal: a.steal + t.steal,
        })
    }

    /// The `/proc/stat` softirq time of `cpus`.
    pub fn softirq_jiffies(&self, cpus: &BTreeSet<usize>) -> u64 {
        cpus.iter().filter_map(|c| self.cpus.get(c)).map(|t| t.softirq).sum()
    }

    /// How many NET_RX softirqs ran on `cpus`.
    pub fn net_rx(&self, cpus: &BTreeSet<usize>) -> u64 {
        cpus.iter().filter_map(|c| self.softirqs.net_rx.get(c)).sum()
    }

    /// How many NET_TX softirqs ran on `cpus`.
    pub fn net_tx(&self, cpus: &BTreeSet<usize>) -> u64 {
        cpus.iter().filter_map(|c| self.softirqs.net_tx.get(c)).sum()
    }
}

/// The device's CPU time per forwarded packet, in nanoseconds: its processes' user and
/// system time (`dut`, a delta) plus the softirq time on its CPUs
/// (`softirq_jiffies`, from [`CpuDelta::softirq_jiffies`] over the DUT's CPUs), over
/// `packets` forwarded. `None` when nothing was forwarded. For a kernel DUT (bridge,
/// router) `dut` is zero and the softirq time is all of it.
pub fn cpu_ns_per_packet(dut: ProcTimes, softirq_jiffies: u64, packets: u64) -> Option<f64> {
    if packets == 0 {
        return None;
    }
    let jiffies = dut.total().saturating_add(softirq_jiffies);
    Some(jiffies_to_ns(jiffies) as f64 / packets as f64)
}

/// The busy time of a device's CPUs per forwarded packet, split as `/proc/stat` splits
/// it, in nanoseconds. Invariant: `user + system + softirq + irq + steal == busy`
/// (up to rounding); see [`split_per_packet`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SplitNs {
    /// User and nice time.
    pub user: f64,
    pub system: f64,
    pub softirq: f64,
    pub irq: f64,
    /// Time a hypervisor took from the CPUs.
    pub steal: f64,
    /// All of the above: [`CpuTimes::busy`].
    pub busy: f64,
    /// The busy share of the time accounted on the CPUs, 0..=1 (0 when none was).
    pub busy_share: f64,
}

/// `times` (the device's CPUs added up over a run, [`CpuDelta::cpus_sum`]) split per
/// packet over `packets` forwarded; `None` when nothing was forwarded.
pub fn split_per_packet(times: &CpuTimes, packets: u64) -> Option<SplitNs> {
    if packets == 0 {
        return None;
    }
    let per = |j: u64| jiffies_to_ns(j) as f64 / packets as f64;
    let total = times.total();
    Some(SplitNs {
        user: per(times.user + times.nice),
        system: per(times.system),
        softirq: per(times.softirq),
        irq: per(times.irq),
        steal: per(times.steal),
        busy: per(times.busy()),
        busy_share: if total == 0 { 0.0 } else { times.busy() as f64 / total as f64 },
    })
}

/// The limits of [`detect_disturbance`], as fractions of the CPU time that passed.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Thresholds {
    /// The largest busy fraction of any CPU outside the pinning.
    pub outside_busy: f64,
    /// The largest fraction of our CPUs' time that neither our processes nor interrupt
    /// work explain.
    pub foreign_on_ours: f64,
    /// The foreign time on our CPUs must also exceed this many jiffies: process and CPU
    /// times are accounted differently (scaled run time against ticks), which leaves a
    /// few ticks unexplained in any run, a large fraction of a short one.
    pub min_foreign_jiffies: u64,
}

impl Default for Thresholds {
    /// 10% busy outside, 10% foreign on our CPUs and at least 10 ticks (0.1 s) of it:
    /// kernel housekeeping (memory monitoring, RCU) and the two ways of accounting leave
    /// up to about 6% unexplained on a quiet 2-core machine under a flood; a compiler or
    /// a second benchmark takes far more.
    fn default() -> Thresholds {
        Thresholds { outside_busy: 0.10, foreign_on_ours: 0.10, min_foreign_jiffies: 10 }
    }
}

/// The verdict of [`detect_disturbance`] on one run, with the figures behind it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Disturbance {
    /// Whether the run must be redone.
    pub disturbed: bool,
    /// The busy fraction of each CPU outside the pinning.
    pub outside_busy: BTreeMap<usize, f64>,
    /// The unexplained fraction of our CPUs' time.
    pub foreign_on_ours: f64,
    /// One line per limit broken, for the log.
    pub reasons: Vec<String>,
}

/// Decides whether foreign CPU load disturbed a run, from `delta` (the run's
/// [`CpuDelta`]), the CPUs the benchmark uses (`ours`: generator, DUT, sink; see
/// [`super::pinning::Pinning::cpus`]) and the processes that are ours (`our_pids`:
/// generator, DUT, sink, and `ksoftirqd/N` of our CPUs from [`ksoftirqd_pids`]).
///
/// The rule, with jiffies over the run:
///
/// 1. For every CPU `c` outside `ours` with time accounted (`total > 0`):
///    `busy(c) / total(c)`; the run is disturbed if any exceeds `th.outside_busy`.
/// 2. On `ours` together:
///    `foreign = max(0, Σ busy − Σ_{our_pids} (utime + stime) − Σ (irq + softirq))`,
///    `fraction = foreign / Σ total` (0 when `Σ total` is 0); the run is disturbed if
///    it exceeds `th.foreign_on_ours` and `foreign` exceeds `th.min_foreign_jiffies`.
///    Steal time counts as foreign.
///
/// Rule 2 needs every thread of `our_pids` pinned to `ours`: time they spend elsewhere
/// would hide foreign time on ours. Softirq time counted twice (see the module comment)
/// can only make rule 2 more lenient, never flag a quiet run.
pub fn detect_disturbance(
    delta: &CpuDelta,
    ours: &BTreeSet<usize>,
    our_pids: &[u32],
    th: &Thresholds,
) -> Disturbance {
    let mut reasons = Vec::new();
    let mut outside_busy = BTreeMap::new();
    for (&cpu, t) in delta.cpus.iter().filter(|(c, _)| !ours.contains(c)) {
        if t.total() == 0 {
            continue;
        }
        let f = t.busy() as f64 / t.total() as f64;
        if f > th.outside_busy {
            reasons.push(format!(
                "CPU {cpu} outside the pinning was {:.1}% busy (limit {:.1}%)",
                f * 100.0,
                th.outside_busy * 100.0
            ));
        }
        outside_busy.insert(cpu, f);
    }
    let mine: Vec<&CpuTimes> = ours.iter().filter_map(|c| delta.cpus.get(c)).collect();
    let busy: u64 = mine.iter().map(|t| t.busy()).sum();
    let total: u64 = mine.iter().map(|t| t.total()).sum();
    let interrupts: u64 = mine.iter().map(|t| t.irq + t.softirq).sum();
    let explained = delta.procs_jiffies(our_pids).saturating_add(interrupts);
    let foreign = busy.saturating_sub(explained);
    let foreign_on_ours = if total == 0 { 0.0 } else { foreign as f64 / total as f64 };
    if foreign_on_ours > th.foreign_on_ours && foreign > th.min_foreign_jiffies {
        reasons.push(format!(
            "{:.1}% of the pinned CPUs' time was foreign load (limit {:.1}%)",
            foreign_on_ours * 100.0,
            th.foreign_on_ours * 100.0
        ));
    }
    Disturbance { disturbed: !reasons.is_empty(), outside_busy, foreign_on_ours, reasons }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT_BEFORE: &str = "\
cpu  1840958 84747 353853 2317802 12756 0 27783 1353 0 0
cpu0 768703 41655 179464 1306777 3721 0 16196 720 0 0
cpu1 1072255 43092 174389 1011025 9034 0 11587 633 0 0
cpu2 1000 0 1000 50000 0 0 0 0 0 0
intr 123 4 5
ctxt 99
btime 1700000000
softirq 1 2 3
";

    // One second (100 ticks per CPU) later.
    // cpu0 (generator): user +60, system +30, softirq +5, idle +5.
    // cpu1 (DUT): user +40, system +20, softirq +30, idle +10.
    // cpu2 (outside): user +3, idle +97.
    const STAT_QUIET: &str = "\
cpu  0 0 0 0 0 0 0 0 0 0
cpu0 768763 41655 179494 1306782 3721 0 16201 720 0 0
cpu1 1072295 43092 174409 1011035 9034 0 11617 633 0 0
cpu2 1003 0 1000 50097 0 0 0 0 0 0
";

    // As quiet, but cpu2 ran a compiler (80 busy), and someone else's user time took
    // the idle ticks of our CPUs: 5 on cpu0, 10 on cpu1.
    const STAT_LOADED: &str = "\
cpu  0 0 0 0 0 0 0 0 0 0
cpu0 768768 41655 179494 1306777 3721 0 16201 720 0 0
cpu1 1072305 43092 174409 1011025 9034 0 11617 633 0 0
cpu2 1080 0 1000 50020 0 0 0 0 0 0
";

    // Generator, pid 100, with a command name that holds ") (" and spaces.
    const GEN_BEFORE: &str = "100 (gen ) (x) R 1 100 100 0 -1 4194304 102 0 0 0 500 200 0 0 20 0 1 0 2330411 3133440 416 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n";
    const GEN_AFTER: &str = "100 (gen ) (x) R 1 100 100 0 -1 4194304 102 0 0 0 560 230 0 0 20 0 1 0 2330411 3133440 416 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n";
    // DUT, pid 200.
    const DUT_BEFORE: &str = "200 (peregrine) S 1 200 200 0 -1 4194304 102 0 0 0 1000 1000 0 0 20 0 3 0 2330411 3133440 416 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
    const DUT_AFTER: &str = "200 (peregrine) S 1 200 200 0 -1 4194304 102 0 0 0 1040 1020 0 0 20 0 3 0 2330411 3133440 416 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";

    const SOFTIRQS_BEFORE: &str = "                    CPU0       CPU1       CPU2
          HI:          0          0          0
       TIMER:     785762     776783     1000
      NET_TX:       1569       1647       3
      NET_RX:  135904340   91000977       7
       BLOCK:      10          10         10
";
    const SOFTIRQS_AFTER: &str = "                    CPU0       CPU1       CPU2
          HI:          0          0          0
       TIMER:     785862     776883     1100
      NET_TX:       1569       1650       3
      NET_RX:  135904840   91090977       7
       BLOCK:      10          10         10
";

    fn sample(stat: &str, gen: &str, dut: &str, softirqs: &str) -> CpuSample {
        CpuSample::parse(stat, &[(100, gen), (200, dut)], softirqs).unwrap()
    }

    fn ours() -> BTreeSet<usize> {
        [0, 1].into_iter().collect()
    }

    #[test]
    fn parses_recorded_texts() {
        let s = sample(STAT_BEFORE, GEN_BEFORE, DUT_BEFORE, SOFTIRQS_BEFORE);
        assert_eq!(s.cpus.len(), 3);
        assert_eq!(
            s.cpus[&1],
            CpuTimes {
                user: 1072255,
                nice: 43092,
                system: 174389,
                idle: 1011025,
                iowait: 9034,
                irq: 0,
                softirq: 11587,
                steal: 633,
            }
        );
        assert_eq!(s.procs[&100], ProcTimes { utime: 500, stime: 200 });
        assert_eq!(s.softirqs.net_rx[&1], 91000977);
        assert_eq!(s.softirqs.net_tx[&2], 3);
        // Old kernels: four fields.
        let old = parse_proc_stat("cpu0 1 2 3 4\n").unwrap();
        assert_eq!(old[&0].total(), 10);
        assert_eq!(old[&0].softirq, 0);
    }

    #[test]
    fn malformed_texts_are_errors() {
        assert!(parse_proc_stat("").is_err());
        assert!(parse_proc_stat("cpu0 1 2 x 4\n").is_err());
        assert!(parse_proc_stat("cpu0 1 2\n").is_err());
        assert!(parse_proc_stat("cpuX 1 2 3 4\n").is_err());
        assert!(parse_pid_stat("100 gen R 1").is_err());
        assert!(parse_pid_stat("100 (gen) R 1 2 3").is_err());
        assert!(parse_pid_stat("100 (gen) R 1 100 100 0 -1 4194304 102 0 0 0 -5 200").is_err());
        assert!(parse_softirqs("").is_err());
        assert!(parse_softirqs("CPU0\n NET_RX: 1\n").is_err());
        assert!(parse_softirqs("CPU0 X\n NET_TX: 1 2\n NET_RX: 1 2\n").is_err());
    }

    #[test]
    fn cpu_time_per_packet() {
        let d = sample(STAT_BEFORE, GEN_BEFORE, DUT_BEFORE, SOFTIRQS_BEFORE).delta(&sample(
            STAT_QUIET,
            GEN_AFTER,
            DUT_AFTER,
            SOFTIRQS_AFTER,
        ));
        let dut_cpus: BTreeSet<usize> = [1].into_iter().collect();
        assert_eq!(d.procs[&200], ProcTimes { utime: 40, stime: 20 });
        assert_eq!(d.softirq_jiffies(&dut_cpus), 30);
        assert_eq!(d.net_rx(&dut_cpus), 90_000);
        assert_eq!(d.net_tx(&ours()), 3);
        // (60 + 30) jiffies = 900 ms over 1 M packets = 900 ns each.
        assert_eq!(cpu_ns_per_packet(d.procs[&200], 30, 1_000_000), Some(900.0));
        assert_eq!(cpu_ns_per_packet(d.procs[&200], 30, 0), None);
    }

    #[test]
    fn the_split_adds_up_to_the_busy_time() {
        let d = sample(STAT_BEFORE, GEN_BEFORE, DUT_BEFORE, SOFTIRQS_BEFORE).delta(&sample(
            STAT_QUIET,
            GEN_AFTER,
            DUT_AFTER,
            SOFTIRQS_AFTER,
        ));
        // cpu1, the DUT: user 40, system 20, softirq 30, idle 10 ticks.
        let dut: BTreeSet<usize> = [1].into_iter().collect();
        let t = d.cpus_sum(&dut);
        assert_eq!((t.user, t.system, t.softirq, t.idle), (40, 20, 30, 10));
        let s = split_per_packet(&t, 1_000_000).unwrap();
        // 40 ticks = 400 ms over 1 M packets = 400 ns each.
        assert_eq!((s.user, s.system, s.softirq, s.irq), (400.0, 200.0, 300.0, 0.0));
        assert_eq!(s.busy, 900.0);
        assert_eq!(s.user + s.system + s.softirq + s.irq + s.steal, s.busy);
        assert!((s.busy_share - 0.9).abs() < 1e-12);
        // Two CPUs: both summed; nice counts as user, steal apart.
        let t = d.cpus_sum(&ours());
        assert_eq!(t.busy(), 95 + 90);
        let s = split_per_packet(&t, 100).unwrap();
        assert_eq!(s.user, jiffies_to_ns(100) as f64 / 100.0);
        assert_eq!(s.user + s.system + s.softirq + s.irq + s.steal, s.busy);
        assert!((s.busy_share - 185.0 / 200.0).abs() < 1e-12);
        let nice = CpuTimes { nice: 3, steal: 2, idle: 5, ..CpuTimes::default() };
        let s = split_per_packet(&nice, 1).unwrap();
        assert_eq!((s.user, s.steal, s.busy), (3e7, 2e7, 5e7));
        assert_eq!(split_per_packet(&t, 0), None);
        assert_eq!(split_per_packet(&CpuTimes::default(), 5).unwrap().busy_share, 0.0);
    }

    #[test]
    fn a_quiet_run_passes() {
        let d = sample(STAT_BEFORE, GEN_BEFORE, DUT_BEFORE, SOFTIRQS_BEFORE).delta(&sample(
            STAT_QUIET,
            GEN_AFTER,
            DUT_AFTER,
            SOFTIRQS_AFTER,
        ));
        let v = detect_disturbance(&d, &ours(), &[100, 200], &Thresholds::default());
        assert!(!v.disturbed, "{:?}", v.reasons);
        assert!((v.outside_busy[&2] - 0.03).abs() < 1e-12);
        // busy 95 + 90 = 185; ours 90 + 60 = 150; softirq 35: nothing unexplained.
        assert_eq!(v.foreign_on_ours, 0.0);
    }

    #[test]
    fn foreign_load_is_detected() {
        let before = sample(STAT_BEFORE, GEN_BEFORE, DUT_BEFORE, SOFTIRQS_BEFORE);
        let d = before.delta(&sample(STAT_LOADED, GEN_AFTER, DUT_AFTER, SOFTIRQS_AFTER));
        // A stricter limit than the default's 10% on our CPUs.
        let strict = Thresholds { foreign_on_ours: 0.05, ..Thresholds::default() };
        let v = detect_disturbance(&d, &ours(), &[100, 200], &strict);
        assert!(v.disturbed);
        assert_eq!(v.reasons.len(), 2, "{:?}", v.reasons);
        assert!((v.outside_busy[&2] - 0.80).abs() < 1e-12);
        // busy 100 + 100 = 200, explained 150 + 35: 15 of 200 ticks foreign.
        assert!((v.foreign_on_ours - 0.075).abs() < 1e-12);
        // The default limit lets 7.5% pass; the outside CPU still fails it.
        let v = detect_disturbance(&d, &ours(), &[100, 200], &Thresholds::default());
        assert_eq!(v.reasons.len(), 1, "{:?}", v.reasons);
        // Only the outside CPU with a lenient outside limit.
        let th = Thresholds { outside_busy: 0.9, ..strict };
        let v = detect_disturbance(&d, &ours(), &[100, 200], &th);
        assert!(v.disturbed && v.reasons.len() == 1);
        // 15 foreign ticks are tick noise when the floor is higher.
        let th = Thresholds { outside_busy: 0.9, min_foreign_jiffies: 15, ..strict };
        let v = detect_disturbance(&d, &ours(), &[100, 200], &th);
        assert!(!v.disturbed, "{:?}", v.reasons);
        // Forgetting the DUT process makes its time foreign: the rule needs our pids.
        let d = before.delta(&sample(STAT_QUIET, GEN_AFTER, DUT_AFTER, SOFTIRQS_AFTER));
        let v = detect_disturbance(&d, &ours(), &[100], &strict);
        assert!(v.disturbed);
        assert!((v.foreign_on_ours - 60.0 / 200.0).abs() < 1e-12);
    }

    #[test]
    fn real_files_parse() {
        let me = std::process::id();
        let a = CpuSample::read(&[me]).unwrap();
        assert!(!a.cpus.is_empty());
        assert!(a.softirqs.net_rx.len() >= a.cpus.len());
        let b = CpuSample::read(&[me]).unwrap();
        let d = a.delta(&b);
        assert!(d.procs.contains_key(&me));
        let all: BTreeSet<usize> = a.cpus.keys().copied().collect();
        let k = ksoftirqd_pids(&all).unwrap();
        assert_eq!(k.len(), all.len());
        assert!(CpuSample::read(&[u32::MAX]).is_err());
    }
}
