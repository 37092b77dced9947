//! A test bed: one topology with a device under test (or none, for the ceiling), where
//! its traffic enters and leaves, and one measured run of traffic through it with the
//! study's method (CPU accounting, disturbed runs redone).
//!
//! Layout with a device: input hosts `h1..hn` (the generator sends from their `eth0`),
//! the sink host `h(n+1)` (the sink reads its `eth0`), the device on the hosts' root-side
//! ends. Without a device (the ceiling) one host: the generator sends from its `eth0`
//! and the sink reads the root-side end of the same veth pair, so the path is one veth
//! hop where a device's is two. The wire ([`Bed::wire`], the packet-time experiment's
//! baseline) is a device bed whose device does nothing: the input host's root-side end
//! is joined to the sink host's by a tc redirect, so its path is a device's path, hosts,
//! generator, sink and pinning included.
//!
//! Every veth pair of a bed has [`super::Options::bed_queues`] receive and transmit
//! queues; the generator spreads its flows over them, and the NAPI threads of every
//! queue of the device's ports are pinned to the device's CPUs (those of its workers).
//!
//! Field order matters: the device is dropped (stopped) before the topology under it.

use std::net::Ipv4Addr;
use std::time::{Duration, Instant};

use crate::dut::{Running, Setup, Target, NOBODY};
use crate::method::cpu::{self, Thresholds};
use crate::topo::{Host, Topology};
use crate::traffic::{self, Endpoint, FlowHeader, Outcome, Spread, Stream};

use super::{Ctx, Dut};

/// A started peregrine, kept alive while held (stopped when dropped).
pub trait Switch: Send {
    /// Its OpenFlow management connection in `ovs-ofctl` syntax (`unix:PATH`), if any.
    fn openflow_target(&self) -> Option<String>;
}

/// Starts peregrine for the study (the `peregrine` binary implements it; this crate
/// never depends on the switch).
pub trait Launcher {
    /// Starts peregrine with `backend` ports (`afxdp`, `afxdp-generic`, `afpacket`) on
    /// the setup's hosts' root-side ends (inputs first, sink last, as OpenFlow ports
    /// 1..), holding exactly the setup's meters, groups and flows (fail mode secure),
    /// with `workers` workers pinned to `cpus` and a management socket.
    fn start(
        &self,
        backend: &str,
        setup: &Setup,
        workers: usize,
        cpus: &[usize],
    ) -> Result<Box<dyn Switch>, String>;
}

/// Makes a device's load from its input hosts and its sink host (rules that must match
/// the traffic those hosts send).
pub type LoadFn<'a> = dyn Fn(&[Host], &Host) -> Result<Loadout, String> + 'a;

/// What a device is loaded with.
#[derive(Clone, Debug, Default)]
pub struct Loadout {
    /// OpenFlow devices: the flows (none: the default forwarding).
    pub flows: Option<Vec<String>>,
    /// OpenFlow devices: groups, installed before the flows.
    pub groups: Vec<String>,
    /// OpenFlow devices: meters, installed before the groups and the flows.
    pub meters: Vec<String>,
    /// The bridge: static FDB entries towards the sink.
    pub fdb: Vec<[u8; 6]>,
    /// The router: extra routes towards the sink.
    pub routes: usize,
}

/// A started device.
enum Device {
    Peregrine(Box<dyn Switch>),
    Other(Running),
}

/// One topology and its device; see the module comment.
pub struct Bed {
    device: Option<Device>,
    /// Where the generator sends, one per input.
    pub tx: Vec<Endpoint>,
    /// Where the sink reads.
    pub rx: Endpoint,
    /// How traffic from each input must be addressed.
    pub targets: Vec<Target>,
    /// The input hosts (their MAC and address are the generated frames' source).
    pub inputs: Vec<Host>,
    /// The sink host (absent for the ceiling).
    pub sink: Option<Host>,
    /// Processes of the device other than this one (OVS's daemons, the NAPI threads of
    /// its ports), for CPU accounting.
    pub pids: Vec<u32>,
    /// Receive and transmit queues of every veth pair.
    pub queues: u32,
    /// The device-side port of the first input (namespace, name), whose receive
    /// queues' statistics show how the traffic spread over them.
    watch: (Option<String>, String),
    topo: Topology,
}

impl Bed {
    /// The resident memory of the device's process in MiB: ovs-vswitchd's for Open
    /// vSwitch, this process's for peregrine (which runs in it); `None` for the kernel's
    /// devices and the ceiling. Read once it has settled: memory the loading freed (the
    /// rule texts, the change log) goes back to the system over a few seconds, and the
    /// reading waits until it stops falling (at most [`SETTLE_MAX`]).
    pub fn device_rss_mib(&self) -> Option<f64> {
        let pid = match self.device.as_ref()? {
            Device::Peregrine(_) => std::process::id(),
            Device::Other(Running::Ovs(o)) => o.vswitchd_pid()?,
            Device::Other(_) => return None,
        };
        let start = Instant::now();
        let mut last = rss_kib(pid)?;
        let mut steady_since = Instant::now();
        while start.elapsed() < SETTLE_MAX && steady_since.elapsed() < SETTLE_STEADY {
            std::thread::sleep(Duration::from_millis(250));
            let now = rss_kib(pid)?;
            if now + now / 200 < last {
                steady_since = Instant::now();
            }
            last = now;
        }
        Some(last as f64 / 1024.0)
    }

    /// Builds a bed for `dut` (none: the ceiling) with `inputs` input hosts (1 or 2),
    /// loaded with what `load` makes of the input hosts and the sink host.
    pub fn new(ctx: &Ctx, dut: Option<Dut>, inputs: usize, load: &LoadFn) -> Result<Bed, String> {
        let mut topo = Topology::new();
        let queues = ctx.opts.bed_queues();
        let dut_cpus: Vec<usize> = ctx.dut_cpus().into_iter().collect();
        let Some(dut) = dut else {
            let h = topo.add_host_with_queues(1, queues).map_err(|e| e.to_string())?;
            let mut pids = Vec::new();
            if ctx.opts.steer {
                // The sink reads the root end of the generator's own veth; its receive
                // work goes to the device CPU as it would with a device there, so the
                // ceiling is what the generator's CPU alone can send.
                pids = crate::dut::thread_napi(
                    None,
                    std::slice::from_ref(&h.port),
                    topo.prefix(),
                    &dut_cpus,
                )?;
            }
            wait_quiet(&pids);
            return Ok(Bed {
                device: None,
                tx: vec![Endpoint { ns: Some(h.ns.clone()), ifname: "eth0".into() }],
                rx: Endpoint { ns: None, ifname: h.port.clone() },
                targets: vec![Target { dst_mac: NOBODY, dst_ip: parse_ip(&h.ip)? }],
                watch: (None, h.port.clone()),
                inputs: vec![h],
                sink: None,
                pids,
                queues,
                topo,
            });
        };
        let mut hosts = Vec::with_capacity(inputs + 1);
        for i in 1..=inputs + 1 {
            hosts.push(topo.add_host_with_queues(i as u8, queues).map_err(|e| e.to_string())?);
        }
        let sink = hosts.pop().ok_or("no sink host")?;
        let load = load(&hosts, &sink)?;
        let setup = Setup {
            inputs: hosts.iter().collect(),
            sink: &sink,
            cpu: Some(ctx.opts.dut_cpu),
            flows: load.flows.clone(),
            groups: load.groups.clone(),
            meters: load.meters.clone(),
            fdb: load.fdb.clone(),
            queues,
        };
        let ports: Vec<String> = setup.hosts().iter().map(|h| h.port.clone()).collect();
        let device = match dut.peregrine_backend() {
            Some(backend) => {
                let workers = ctx.workers.unwrap_or(1).max(1);
                let cpus = ctx.opts.worker_cpus(workers);
                Device::Peregrine(ctx.launcher.start(backend, &setup, workers, &cpus)?)
            }
            None => {
                let spec = dut.spec(load.routes).ok_or("no driver for this device")?;
                Device::Other(spec.start_on(&mut topo, &setup)?)
            }
        };
        let ns = match &device {
            Device::Other(r) => r.namespace(),
            Device::Peregrine(_) => None,
        };
        let watch = (ns.map(str::to_string), ports[0].clone());
        let napi = if ctx.opts.steer {
            crate::dut::thread_napi(ns, &ports, topo.prefix(), &dut_cpus)?
        } else {
            Vec::new()
        };
        let targets = (0..inputs)
            .map(|i| match &device {
                Device::Other(r) => r.target_from(i, &sink),
                Device::Peregrine(_) => Target {
                    dst_mac: NOBODY,
                    dst_ip: parse_ip(&sink.ip).unwrap_or(Ipv4Addr::UNSPECIFIED),
                },
            })
            .collect();
        let mut pids = match &device {
            Device::Other(Running::Ovs(o)) => o.pids(),
            _ => Vec::new(),
        };
        pids.extend(napi);
        wait_quiet(&pids);
        Ok(Bed {
            device: Some(device),
            tx: hosts
                .iter()
                .map(|h| Endpoint { ns: Some(h.ns.clone()), ifname: "eth0".into() })
                .collect(),
            rx: Endpoint { ns: Some(sink.ns.clone()), ifname: "eth0".into() },
            targets,
            watch,
            inputs: hosts,
            sink: Some(sink),
            pids,
            queues,
            topo,
        })
    }

    /// The wire: a bed like a device's with one input, whose "device" is a tc redirect
    /// from the input host's root-side end to the sink host's (see the module comment),
    /// with the same queues and the same NAPI threads pinned to the device's CPUs.
    pub fn wire(ctx: &Ctx) -> Result<Bed, String> {
        let mut topo = Topology::new();
        let queues = ctx.opts.bed_queues();
        let dut_cpus: Vec<usize> = ctx.dut_cpus().into_iter().collect();
        let h = topo.add_host_with_queues(1, queues).map_err(|e| e.to_string())?;
        let sink = topo.add_host_with_queues(2, queues).map_err(|e| e.to_string())?;
        crate::dut::wire(None, &h.port, &sink.port)?;
        crate::dut::wire(None, &sink.port, &h.port)?;
        let ports = [h.port.clone(), sink.port.clone()];
        let pids = if ctx.opts.steer {
            crate::dut::thread_napi(None, &ports, topo.prefix(), &dut_cpus)?
        } else {
            Vec::new()
        };
        wait_quiet(&pids);
        Ok(Bed {
            device: None,
            tx: vec![Endpoint { ns: Some(h.ns.clone()), ifname: "eth0".into() }],
            rx: Endpoint { ns: Some(sink.ns.clone()), ifname: "eth0".into() },
            targets: vec![Target { dst_mac: NOBODY, dst_ip: parse_ip(&sink.ip)? }],
            watch: (None, h.port.clone()),
            inputs: vec![h],
            sink: Some(sink),
            pids,
            queues,
            topo,
        })
    }

    /// The packets each receive queue of the first input's device-side port took so
    /// far; empty with one queue (or when the statistics cannot be read).
    fn queue_packets(&self) -> Vec<u64> {
        if self.queues < 2 {
            return Vec::new();
        }
        crate::dut::rx_queue_packets(self.watch.0.as_deref(), &self.watch.1).unwrap_or_default()
    }

    /// The device's OpenFlow connection (`unix:PATH`), if it speaks OpenFlow.
    pub fn openflow_target(&self) -> Option<String> {
        match &self.device {
            Some(Device::Peregrine(s)) => s.openflow_target(),
            Some(Device::Other(r)) => r.openflow_target(),
            None => None,
        }
    }

    /// `n` flows from input `i` spread as `spread` says (random destination addresses
    /// inside `ip_space` for [`Spread::DstIps`]).
    pub fn flows(
        &self,
        i: usize,
        spread: Spread,
        n: usize,
        ip_space: (Ipv4Addr, u8),
        seed: u64,
    ) -> Result<Vec<FlowHeader>, String> {
        let h = &self.inputs[i];
        Ok(traffic::flows(
            spread,
            n,
            crate::dut::parse_mac(&h.mac)?,
            parse_ip(&h.ip)?,
            self.targets[i],
            ip_space,
            seed,
        ))
    }

    /// The topology's name prefix (for log lines).
    pub fn name(&self) -> &str {
        self.topo.prefix()
    }
}

/// The longest a memory reading waits for the device's memory to settle.
pub const SETTLE_MAX: Duration = Duration::from_secs(20);
/// How long memory must not fall (by more than 0.5 %) to count as settled.
const SETTLE_STEADY: Duration = Duration::from_secs(3);

/// Process `pid`'s resident set size (`VmRSS`), in KiB.
fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find_map(|l| l.strip_prefix("VmRSS:"))?.split_whitespace().next()?.parse().ok()
}

fn parse_ip(s: &str) -> Result<Ipv4Addr, String> {
    s.parse().map_err(|_| format!("bad IPv4 address {s:?}"))
}

/// What one measured run gave.
#[derive(Clone, Debug)]
pub struct Measured {
    pub outcome: Outcome,
    /// The device's CPU time per received packet (busy time of the device's CPUs), ns.
    pub cpu_ns_per_pkt: Option<f64>,
    /// The same, split as `/proc/stat` splits it (`split.busy == cpu_ns_per_pkt`).
    pub split: Option<cpu::SplitNs>,
    /// Each receive queue's share of what the first input's device-side port received
    /// in the run ([`crate::dut::queue_shares`]); empty with one queue.
    pub queue_shares: Vec<f64>,
}

impl Measured {
    pub fn offered_mpps(&self) -> f64 {
        self.outcome.offered_pps() / 1e6
    }
    pub fn forwarded_mpps(&self) -> f64 {
        self.outcome.received_pps() / 1e6
    }
    pub fn loss(&self) -> f64 {
        crate::method::stats::loss_ratio(self.outcome.sent(), self.outcome.received())
    }
}

/// How long [`wait_quiet`] waits at most.
const QUIET_WAIT: Duration = Duration::from_secs(5);
/// The window [`wait_quiet`] judges the machine by.
const QUIET_WINDOW: Duration = Duration::from_millis(300);
/// The busy share of the machine, beyond this process and `pids`, below which it counts
/// as quiet.
const QUIET_SHARE: f64 = 0.10;

/// Waits (at most [`QUIET_WAIT`]) until the machine is quiet: the CPU time of everything
/// but this process and `pids` (the new device's processes) is below [`QUIET_SHARE`] of
/// the CPUs over a [`QUIET_WINDOW`]. Tearing down a bed leaves the kernel up to seconds
/// of cleanup (namespaces, sockets, RCU frees) on an unbound worker thread; a run under
/// it gives the generator half its CPU. Returns whether it got quiet.
pub fn wait_quiet(pids: &[u32]) -> bool {
    let mut ours = vec![std::process::id()];
    ours.extend(pids);
    let t = std::time::Instant::now();
    while t.elapsed() < QUIET_WAIT {
        let Ok(a) = cpu::read_sample_of_living(&ours) else {
            return false;
        };
        std::thread::sleep(QUIET_WINDOW);
        let Ok(b) = cpu::read_sample_of_living(&ours) else {
            return false;
        };
        let d = a.delta(&b);
        let busy: u64 = d.cpus.values().map(|c| c.busy()).sum();
        let total: u64 = d.cpus.values().map(|c| c.total()).sum();
        let foreign = busy.saturating_sub(d.procs_jiffies(&ours));
        if total > 0 && (foreign as f64) < QUIET_SHARE * total as f64 {
            return true;
        }
    }
    false
}

/// The pause before each run.
const SETTLE: Duration = Duration::from_millis(50);

/// Attempts at a run before a disturbed one is kept (and flagged in the log).
pub const ATTEMPTS: usize = 3;

/// Runs `streams` through `bed` for `seconds`, with the study's method: the device
/// CPU's busy time is read from `/proc` around the run, and a run that foreign load
/// disturbed ([`cpu::detect_disturbance`]) is redone, up to [`ATTEMPTS`] times. Ours
/// are this process (generator, sink and an in-process peregrine), the device's own
/// processes and NAPI threads, and the kernel's per-CPU threads of the pinned CPUs
/// (`ksoftirqd`, `kworker`); in the churn experiment also the rule client's, which
/// come and go too fast to follow, so there the check is off ([`Ctx::check_foreign`]).
pub fn measure(
    ctx: &mut Ctx,
    bed: &Bed,
    streams: Vec<Stream>,
    seconds: f64,
) -> Result<Measured, String> {
    measure_each(ctx, bed, streams, seconds, &mut || {})
}

/// [`measure`], calling `before_attempt` before each attempt (before the pause that
/// precedes it): what the device counts from the last call to the return is what the
/// run kept did, whichever attempt that was.
pub fn measure_each(
    ctx: &mut Ctx,
    bed: &Bed,
    streams: Vec<Stream>,
    seconds: f64,
    before_attempt: &mut dyn FnMut(),
) -> Result<Measured, String> {
    let ours = ctx.opts.pinning().cpus();
    let dut_cpus = ctx.dut_cpus();
    let mut pids = vec![std::process::id()];
    pids.extend(&bed.pids);
    pids.extend(cpu::ksoftirqd_pids(&ours).unwrap_or_default());
    let fixed = pids.len();
    let mut last = None;
    for attempt in 1..=ATTEMPTS {
        if ctx.stopped() {
            return Err("interrupted".into());
        }
        before_attempt();
        // What the device still holds from the run before (an overload leaves queues
        // full) drains first, so it neither delays nor drops this run's frames.
        std::thread::sleep(SETTLE);
        let spec = traffic::Spec {
            tx: bed.tx.clone(),
            rx: bed.rx.clone(),
            tx_backend: ctx.opts.tx_backend(),
            rx_backend: ctx.opts.tx_backend(),
            streams: streams.clone(),
            duration: Duration::from_secs_f64(seconds),
            max_packets: None,
            drain: Duration::from_millis(100),
            cpu: Some(ctx.opts.gen_cpu),
            batch: 32,
            tx_queues: bed.queues,
        };
        pids.truncate(fixed);
        pids.extend(cpu::kworker_pids(&ours).unwrap_or_default());
        let queues_before = bed.queue_packets();
        let before =
            cpu::read_sample_of_living(&pids).map_err(|e| format!("reading /proc: {e}"))?;
        let outcome = traffic::run(spec)?;
        let after = cpu::read_sample_of_living(&pids).map_err(|e| format!("reading /proc: {e}"))?;
        let queue_shares = crate::dut::queue_shares(&queues_before, &bed.queue_packets());
        let delta = before.delta(&after);
        let received = outcome.received();
        let split = if bed.device.is_some() {
            cpu::split_per_packet(&delta.cpus_sum(&dut_cpus), received)
        } else {
            None
        };
        let cpu_ns_per_pkt = split.map(|s| s.busy);
        let mut verdict = cpu::detect_disturbance(&delta, &ours, &pids, &Thresholds::default());
        if !ctx.check_foreign {
            verdict.disturbed = false;
        }
        let m = Measured { outcome, cpu_ns_per_pkt, split, queue_shares };
        if !verdict.disturbed {
            return Ok(m);
        }
        ctx.disturbed += 1;
        ctx.progress(&format!(
            "  disturbed run (attempt {attempt} of {ATTEMPTS}): {}",
            verdict.reasons.join("; ")
        ));
        last = Some(m);
    }
    ctx.kept_disturbed += 1;
    last.ok_or_else(|| "no run".to_string())
}
