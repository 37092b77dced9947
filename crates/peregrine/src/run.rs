//! `peregrine run`: the switch on real interfaces. Opens the ports, builds the datapath
//! and the OpenFlow agent (in standalone mode without controllers, the learning switch
//! as table 0's priority-0 NORMAL flow, and the flows given with `--flow`/`--flows` over
//! it), starts the workers, the agent's controller channels and management socket, and a
//! link monitor, and runs until SIGINT or SIGTERM, then prints per-port statistics.
//!
//! [`Switch`] is the running switch as a value (the demo and the tests start it the
//! same way); dropping it stops the workers and closes the ports.

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use anyhow::Context;
use datapath::action::port as ofport;
use datapath::normal::{MacTable, MacTableConfig, SECOND_NS};
use datapath::pipeline::{Datapath, DatapathConfig, Outputs, PortInfo};
use datapath::runtime::{Injector, NormalWorker, Realtime, Runtime, WorkerPort, WorkerSpec};
use ports::afxdp::AttachMode;
use ports::{Backend, LinkEvent, LinkMonitor, PortCounters};
use switch::agent::{Agent, AgentConfig, Transmit};
use switch::conn::SwitchFacts;
use switch::ports::{BackendStats, PortSpec, PortTable};
use switch::shell::{Input, Shell, Target};

use ports::xdp_features::FeatureWatch;
use xdp::delivery::{Delivery, PortUse};
use xdp::program::FastPath;
use xdp::tier::KernelTier;

use crate::config::{
    BackendName, FailMode, FastPath as FastPathMode, RunConfig, RunFlags, WorkerSched,
};
use crate::fastpath::TierView;

/// Packet-in records the datapath queues for the agent.
const PACKET_IN_QUEUE: usize = 1024;

/// One opened switch port.
struct SwitchPort {
    no: u32,
    /// Its counter slot in the datapath.
    slot: u16,
    name: String,
    ifindex: u32,
    /// Whether the link was up when opened.
    up: bool,
    mac: [u8; 6],
    speed_mbps: Option<u32>,
    backend: BackendName,
    counters: Vec<Arc<PortCounters>>,
}

/// A port as the link monitor follows it.
struct Watched {
    ifindex: u32,
    no: u32,
    name: String,
    /// The state last reported: up, down or removed.
    state: &'static str,
}

/// A running switch.
pub struct Switch {
    dp: Arc<Datapath>,
    ports: Vec<SwitchPort>,
    macs: MacTable,
    runtime: Option<Runtime>,
    shell: Option<Shell>,
    _links: Option<LinkMonitor>,
    started: Instant,
    /// Where the Prometheus metrics are served, if anywhere.
    metrics: Option<SocketAddr>,
    /// The in-kernel fast tier, if it runs.
    tier: Option<Arc<KernelTier>>,
    /// Tells the tier when the kernel starts or stops delivering to a port.
    delivery_watch: Option<FeatureWatch>,
}

/// Packet-out traffic to the workers, once they run.
struct ToWorkers(Arc<OnceLock<Injector>>);

impl Transmit for ToWorkers {
    fn transmit(&mut self, out: Outputs) -> Result<(), String> {
        let inj = self.0.get().ok_or("the workers are not running")?;
        inj.send(out).map_err(|e| e.to_string())
    }
}

/// Fails unless running as root (ports need CAP_NET_RAW and CAP_NET_ADMIN).
pub fn require_root(what: &str) -> anyhow::Result<()> {
    if !nix::unistd::geteuid().is_root() {
        anyhow::bail!(
            "needs root (CAP_NET_RAW and CAP_NET_ADMIN; CAP_BPF for AF_XDP) to open ports: run `peregrine {what}` with sudo"
        );
    }
    Ok(())
}

impl Switch {
    /// Opens every port of `cfg` and starts forwarding.
    pub fn start(cfg: &RunConfig) -> anyhow::Result<Switch> {
        let tls = match &cfg.tls {
            Some(files) => Some(switch::tls::Tls::load(files).context("loading the TLS files")?),
            None => None,
        };
        // Each port's backend, `auto` resolved (and said) here; whether it was.
        let chosen: Vec<(BackendName, bool)> = cfg
            .ports
            .iter()
            .enumerate()
            .map(|(i, p)| match p.backend {
                BackendName::Auto => (choose_backend(i as u32 + 1, &p.name, cfg.workers), true),
                b => (b, false),
            })
            .collect();
        let fast = load_fast_path(cfg, chosen.iter().map(|c| c.0));
        let mut opened = Vec::with_capacity(cfg.ports.len() + 1);
        let mut handles = Vec::with_capacity(cfg.ports.len() + 1);
        let numbered = cfg
            .ports
            .iter()
            .zip(&chosen)
            .enumerate()
            .map(|(i, (p, &(b, auto)))| (i as u32 + 1, p.name.as_str(), b, auto));
        let local = cfg
            .local
            .iter()
            .map(|name| (ofport::LOCAL, name.as_str(), BackendName::Tap, false));
        for (no, name, mut backend, auto) in numbered.chain(local) {
            let steering = fast.as_ref().map(|fp| xdp::steering::PortSteering {
                fp: fp.clone(),
                of_port: no,
            });
            let open = |backend: BackendName| {
                ports::open_steered(
                    name,
                    backend_of(backend),
                    cfg.workers,
                    steering.as_ref().map(|s| s as &dyn ports::afxdp::Steering),
                )
            };
            let port = match open(backend) {
                // A port given no backend works wherever AF_PACKET does.
                Err(e) if auto && backend != BackendName::Afpacket => {
                    eprintln!(
                        "peregrine: port {} ({name}): AF_XDP failed ({e}); afpacket instead",
                        label(no)
                    );
                    backend = BackendName::Afpacket;
                    open(backend)
                }
                other => other,
            };
            let what = format!("port {} ({name}, {})", label(no), backend.as_str());
            let port = port.context(what.clone())?;
            // Every worker must be able to send on every port.
            if port.handles.len() < cfg.workers {
                anyhow::bail!(
                    "{what}: {} queue(s) for {} workers; give the interface at least as many queues as workers (a veth: `ip link add … numrxqueues N numtxqueues N`) or use fewer workers",
                    port.handles.len(),
                    cfg.workers
                );
            }
            opened.push(SwitchPort {
                no,
                slot: opened.len() as u16,
                name: name.to_string(),
                ifindex: port.info.ifindex,
                up: port.info.is_up(),
                mac: port.info.mac,
                speed_mbps: port.info.speed_mbps,
                backend,
                counters: port.counters,
            });
            handles.push(port.handles);
        }
        // Slots in opening order (LOCAL, if any, comes last, as its number sorts last).
        let dcfg = DatapathConfig {
            ports: opened.iter().map(|p| PortInfo::new(p.no, p.slot)).collect(),
            ..DatapathConfig::default()
        };
        let (dp, writer, packet_ins) = Datapath::new(dcfg, PACKET_IN_QUEUE);
        let started = Instant::now();
        let specs: Vec<PortSpec> = opened
            .iter()
            .map(|p| {
                let counters = p.counters.clone();
                let fp = fast.clone();
                let no = p.no;
                PortSpec {
                    no: p.no,
                    slot: p.slot,
                    name: p.name.clone(),
                    hw_addr: p.mac,
                    speed_mbps: p.speed_mbps,
                    up: p.up,
                    backend: Some(Arc::new(move || {
                        let mut b = BackendStats::default();
                        for c in &counters {
                            let s = c.snapshot();
                            b.rx_dropped += s.rx_dropped;
                            b.tx_dropped += s.tx_dropped;
                            b.rx_errors += s.rx_errors;
                            b.tx_errors += s.tx_errors;
                        }
                        // What the kernel dropped after the fast path sent it here.
                        if let Some(Ok(n)) = fp.as_ref().map(|f| f.lost_of(no)) {
                            b.tx_dropped += n;
                        }
                        b
                    })),
                }
            })
            .collect();
        let mut targets = Vec::new();
        for t in cfg.controllers.iter().chain(&cfg.listen) {
            targets.push(Target::parse(t).map_err(|e| anyhow::anyhow!(e))?);
        }
        let acfg = AgentConfig {
            facts: SwitchFacts {
                datapath_id: cfg.dpid,
                ..SwitchFacts::default()
            },
            fail_mode: match cfg.fail_mode {
                FailMode::Standalone => switch::agent::FailMode::Standalone,
                FailMode::Secure => switch::agent::FailMode::Secure,
            },
            controllers: !targets.is_empty(),
            ..AgentConfig::default()
        };
        let injector = Arc::new(OnceLock::new());
        let mut agent = Agent::new(
            acfg,
            dp.clone(),
            writer,
            PortTable::new(specs, 0),
            Box::new(ToWorkers(injector.clone())),
        );
        if cfg.fail_mode == FailMode::Standalone && targets.is_empty() {
            // The learning switch, as an ordinary flow that controllers and `ctl` see.
            let normal = openflow::text::parse_flow_mod(
                "priority=0,actions=NORMAL",
                openflow::v13::flow_mod::FlowModCommand::Add,
            )
            .map_err(|e| anyhow::anyhow!("the NORMAL flow: {e:?}"))?;
            agent
                .flow_mod(&normal, 0)
                .map_err(|e| anyhow::anyhow!("installing the NORMAL flow: {e}"))?;
        }
        for (place, fm) in &cfg.flows {
            agent
                .flow_mod(fm, 0)
                .map_err(|e| anyhow::anyhow!("{place}: {e}"))?;
        }
        // The learning switch's table, attached so that the tier can mirror NORMAL's
        // decisions (it becomes the table's listener).
        let macs = MacTable::new(MacTableConfig {
            aging_ns: cfg.mac_aging_s.saturating_mul(SECOND_NS),
            ..MacTableConfig::default()
        });
        macs.set_ports(&opened.iter().map(|p| p.no).collect::<Vec<_>>());
        dp.set_mac_table(macs.clone());
        // The tier starts from the version holding the flows above.
        let tier = fast.map(|fp| KernelTier::new(fp, dp.clone(), started));
        if let Some(t) = &tier {
            t.set_exact(cfg.fast_path_exact);
        }
        if let Some(t) = &tier {
            agent.set_fast_path(Arc::new(TierView(t.clone())));
            t.start(cfg.cpus.first().copied())
                .context("starting the fast path's thread")?;
        }
        let delivery_watch = tier.as_ref().and_then(watch_delivery);
        let dp = Arc::new(dp);
        let mut wspecs: Vec<WorkerSpec> = (0..cfg.workers)
            .map(|w| WorkerSpec {
                cpu: cfg.cpus.get(w).copied(),
                ports: Vec::new(),
                cache_entries: cfg.cache_entries,
                normal: Some(Box::new(macs.handler()) as Box<dyn NormalWorker>),
                realtime: cfg.worker_sched == WorkerSched::Realtime,
            })
            .collect();
        for (p, hs) in opened.iter().zip(handles) {
            for (w, io) in hs.into_iter().enumerate() {
                if let Some(s) = wspecs.get_mut(w) {
                    s.ports.push(WorkerPort { no: p.no, io });
                }
            }
        }
        let runtime = Runtime::start(dp.clone(), wspecs, started).context("starting workers")?;
        match runtime.realtime() {
            Realtime::Granted => {
                eprintln!("peregrine: workers run real-time (SCHED_FIFO, lowest priority)")
            }
            Realtime::Refused(why) => eprintln!(
                "peregrine: workers run as ordinary threads: {why}; under overload the \
                 kernel's receive work on their CPUs can take time they need to forward"
            ),
            Realtime::NotAsked => {}
        }
        let _ = injector.set(runtime.injector());
        let shell = Shell::start(agent, targets, tls, cfg.mgmt.clone(), packet_ins, started)
            .context("starting the OpenFlow channels")?;
        let metrics = match cfg.metrics {
            Some(a) => Some(
                shell
                    .serve_metrics(a)
                    .context("starting the metrics endpoint")?,
            ),
            None => None,
        };
        let agent_input = shell.input();
        let links = {
            let mut watched: Vec<Watched> = opened
                .iter()
                .map(|p| Watched {
                    ifindex: p.ifindex,
                    no: p.no,
                    name: p.name.clone(),
                    state: if p.up { "up" } else { "down" },
                })
                .collect();
            let macs = macs.clone();
            LinkMonitor::start(move |ev: LinkEvent| {
                let Some(w) = watched.iter_mut().find(|w| w.ifindex == ev.ifindex) else {
                    return;
                };
                let live = ev.up && !ev.removed;
                let state = if ev.removed {
                    "removed"
                } else if live {
                    "up"
                } else {
                    "down"
                };
                if state == w.state {
                    return;
                }
                w.state = state;
                let _ = agent_input.send(Input::Link { no: w.no, up: live });
                if !live {
                    macs.forget_port(w.no);
                }
                eprintln!("peregrine: port {} ({}) link {state}", label(w.no), w.name);
            })
            .map_err(|e| {
                eprintln!(
                    "peregrine: link monitor unavailable ({e}); link changes will not be noticed"
                )
            })
            .ok()
        };
        Ok(Switch {
            dp,
            ports: opened,
            macs,
            runtime: Some(runtime),
            shell: Some(shell),
            _links: links,
            started,
            metrics,
            tier,
            delivery_watch,
        })
    }

    /// The address the Prometheus metrics are served on (the port chosen, when the
    /// configured one was 0).
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics
    }

    /// The per-port statistics as a table: the switch's counts per port, the backend's
    /// drops and errors, and the learning switch's counts.
    pub fn stats_table(&self) -> String {
        if let Some(t) = &self.tier {
            // The kernel's hits since the last harvest count too.
            t.harvest();
        }
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{:<5} {:<15} {:<8} {:>10} {:>12} {:>10} {:>12} {:>8} {:>8}",
            "port",
            "name",
            "backend",
            "rx pkts",
            "rx bytes",
            "tx pkts",
            "tx bytes",
            "drops",
            "errors"
        );
        for p in &self.ports {
            let c = self.dp.read_port(p.slot);
            let mut b = ports::PortStats::default();
            for k in &p.counters {
                b += k.snapshot();
            }
            let _ = writeln!(
                s,
                "{:<5} {:<15} {:<8} {:>10} {:>12} {:>10} {:>12} {:>8} {:>8}",
                label(p.no),
                p.name,
                p.backend.as_str(),
                c.rx_packets,
                c.rx_bytes,
                c.tx_packets,
                c.tx_bytes,
                b.rx_dropped + b.tx_dropped,
                b.rx_errors + b.tx_errors
            );
        }
        let n = self.macs.stats();
        let _ = writeln!(
            s,
            "learning switch: {} MACs learned ({} moved), {} forwarded, {} flooded, {} dropped",
            n.learned, n.moved, n.forwarded, n.flooded, n.dropped
        );
        let _ = writeln!(s, "up {:.1} s", self.started.elapsed().as_secs_f64());
        s
    }

    /// Stops the agent and forwarding, and closes the ports.
    pub fn stop(mut self) {
        self.halt();
    }

    fn halt(&mut self) {
        if let Some(sh) = self.shell.take() {
            sh.stop();
        }
        if let Some(rt) = self.runtime.take() {
            rt.stop();
        }
        self.delivery_watch.take();
        if let Some(t) = self.tier.take() {
            t.stop();
        }
    }

    /// One line on what the in-kernel fast tier did, if it runs.
    pub fn fast_path_summary(&self) -> Option<String> {
        let t = self.tier.as_ref()?;
        let (entries, s) = t.dump();
        let ev = t.program().events();
        let at = |i: u32| ev.get(i as usize).copied().unwrap_or(0);
        use xdp::layout::event;
        Some(format!(
            "fast path: {} entries ({} live); kernel hit {} miss {} stale {} unparsed {}; \
             mirrored {} refused {} mismatched {} evicted {} revalidated {} flushes {} \
             offers {} (lost {})",
            entries.len(),
            entries.iter().filter(|e| e.live).count(),
            at(event::HIT),
            at(event::MISS),
            at(event::STALE),
            at(event::UNPARSED),
            s.installed,
            s.refused,
            s.mismatched,
            s.evicted,
            s.revalidated,
            s.flushes,
            s.offers,
            s.offers_lost
        ))
    }

    /// Whether the in-kernel fast tier runs.
    pub fn fast_path(&self) -> bool {
        self.tier.is_some()
    }
}

impl Drop for Switch {
    fn drop(&mut self) {
        self.halt();
    }
}

/// The fast tier's program, loaded when the configuration asks for it and some port is
/// an AF_XDP one. A failure to load it is said on stderr and the switch runs without
/// it (everything then goes through the workers, as with `--fast-path off`).
fn load_fast_path(
    cfg: &RunConfig,
    mut backends: impl Iterator<Item = BackendName>,
) -> Option<Arc<FastPath>> {
    let xdp_ports = backends.any(|b| {
        matches!(
            b,
            BackendName::Afxdp | BackendName::AfxdpNative | BackendName::AfxdpGeneric
        )
    });
    if cfg.fast_path != FastPathMode::Xdp || !xdp_ports {
        return None;
    }
    let max_ports = cfg.ports.len() as u32 + 1;
    match FastPath::load(cfg.fast_path_entries, max_ports) {
        Ok(fp) => Some(Arc::new(fp)),
        Err(e) => {
            eprintln!("peregrine: the XDP fast path could not be loaded ({e}); running without it");
            None
        }
    }
}

/// Says for each fast-path port what the kernel does with frames forwarded to it, then
/// watches for changes and says them: where the kernel stops delivering to a port (a
/// veth's peer turned GRO off, say), the program sends the frames of every entry to it
/// from native ports to user space from then on; where it starts, the kernel serves
/// them again (`FastPath::refresh` tells the program). Without the kernel's
/// announcements (before Linux 6.3) the ports keep their state from start.
fn watch_delivery(tier: &Arc<KernelTier>) -> Option<FeatureWatch> {
    let fp = tier.program().clone();
    let t = tier.clone();
    let watch = match FeatureWatch::start(move |ifindex| {
        if let Some((port, _)) = t.program().refresh(ifindex) {
            eprintln!("peregrine: {}", delivery_line(&port, &t.program().ports()));
        }
    }) {
        Ok(w) => w,
        Err(e) => {
            eprintln!(
                "peregrine: fast path: cannot watch the ports' XDP features ({e}); a change \
                 at a port's far end after start is not noticed"
            );
            None
        }
    };
    // A change between attaching and watching: the watch may have missed it.
    for p in fp.ports() {
        fp.refresh(p.ifindex);
    }
    let all = fp.ports();
    for p in &all {
        eprintln!("peregrine: {}", delivery_line(p, &all));
    }
    watch
}

/// What happens to frames the fast path forwards to `port`, given every port `all`.
fn delivery_line(port: &PortUse, all: &[PortUse]) -> String {
    let mode = if port.native { "native" } else { "generic" };
    let head = format!(
        "fast path: port {} ({}, {mode} XDP)",
        label(port.of_port),
        port.name
    );
    let from_native = all.iter().any(|q| q.native && q.of_port != port.of_port);
    match port.why_not() {
        Some(why) if from_native => {
            let fix = if port.veth && port.delivery == Delivery::Dropped {
                "; `ethtool -K PEER gro on` at the peer lets the kernel serve them"
            } else {
                ""
            };
            format!("{head}: flows into it from native-XDP ports stay in user space ({why}){fix}")
        }
        _ => format!("{head}: the kernel forwards flows into it"),
    }
}

/// The backend for port `no` (interface `name`) configured as `auto`, said on stderr
/// with the reason (`ports::auto`). An interface that cannot be looked at gets
/// afpacket, whose opening then says what is wrong.
fn choose_backend(no: u32, name: &str, workers: usize) -> BackendName {
    let Ok(facts) = ports::auto::Facts::of(name) else {
        return BackendName::Afpacket;
    };
    let choice = ports::auto::choose(facts, workers);
    let backend = if choice.afxdp {
        BackendName::AfxdpNative
    } else {
        BackendName::Afpacket
    };
    eprintln!(
        "peregrine: port {} ({name}): {} ({}; `--port {name},backend=B` chooses another)",
        label(no),
        if choice.afxdp { "afxdp" } else { "afpacket" },
        choice.why
    );
    backend
}

/// The `ports` backend of a configured one.
fn backend_of(b: BackendName) -> Backend {
    match b {
        BackendName::Afxdp => Backend::AfXdp {
            mode: AttachMode::Auto,
        },
        BackendName::AfxdpNative => Backend::AfXdp {
            mode: AttachMode::Native,
        },
        BackendName::AfxdpGeneric => Backend::AfXdp {
            mode: AttachMode::Generic,
        },
        // `auto` is resolved before ports open (`choose_backend`); AF_PACKET works on
        // any interface.
        BackendName::Afpacket | BackendName::Auto => Backend::AfPacket,
        BackendName::Tap => Backend::Tap,
    }
}

/// How a port number is shown: its number, or LOCAL.
fn label(no: u32) -> String {
    if no == ofport::LOCAL {
        "LOCAL".to_string()
    } else {
        no.to_string()
    }
}

/// CPUs this process may run on (CPU numbers below this exist).
pub fn cpus_online() -> usize {
    core_affinity::get_core_ids()
        .map(|ids| ids.iter().map(|c| c.id + 1).max().unwrap_or(1))
        .unwrap_or(1)
}

pub fn main(flags: &RunFlags) -> ExitCode {
    match run(flags) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("peregrine run: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(flags: &RunFlags) -> anyhow::Result<()> {
    let cfg = RunConfig::load(flags, cpus_online())?;
    require_root("run")?;
    let (tx, rx) = std::sync::mpsc::channel();
    ctrlc::set_handler(move || {
        let _ = tx.send(());
    })
    .context("installing the signal handler")?;
    let switch = Switch::start(&cfg)?;
    eprintln!(
        "peregrine: switching between {} port(s) with {} worker(s), dpid {:016x}, fail mode {}, fast path {}; Ctrl-C to stop",
        cfg.ports.len(),
        cfg.workers,
        cfg.dpid,
        match cfg.fail_mode {
            FailMode::Standalone => "standalone",
            FailMode::Secure => "secure",
        },
        if switch.fast_path() { "xdp" } else { "off" }
    );
    for c in &cfg.controllers {
        eprintln!("peregrine: controller {c} (reconnecting with backoff while unreachable)");
    }
    for l in &cfg.listen {
        eprintln!("peregrine: listening for controllers on {l}");
    }
    if let Some(m) = &cfg.mgmt {
        eprintln!(
            "peregrine: management socket {} (peregrine ctl COMMAND {})",
            m.display(),
            m.display()
        );
    }
    if let Some(a) = switch.metrics_addr() {
        eprintln!("peregrine: metrics on http://{a}/metrics");
    }
    let _ = rx.recv();
    let table = switch.stats_table();
    switch.stop();
    print!("{table}");
    Ok(())
}
