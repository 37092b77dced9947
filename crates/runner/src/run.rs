//! `peregrine run`: the switch on real interfaces. Opens the ports (those configured and
//! those added at run time before the last stop, `live_ports`), builds the datapath and
//! the OpenFlow agent (in standalone mode without controllers, the learning switch as
//! table 0's priority-0 NORMAL flow, the flows given with `--flow`/`--flows` over it, and
//! the tables saved at the last stop over those, `state`), starts the workers, the
//! agent's controller channels and management socket, and a link monitor, and runs until
//! SIGINT or SIGTERM (SIGHUP reloads the configuration's ports). At the stop it saves its
//! state, leaves the in-kernel tier forwarding for the next start to take over
//! (`xdp::handover`), and prints per-port statistics.
//!
//! [`Switch`] is the running switch as a value (the demo and the tests start it the
//! same way); dropping it stops the workers and closes the ports.

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use anyhow::Context;
use datapath::action::port as ofport;
use datapath::normal::{MacTable, MacTableConfig, SECOND_NS};
use datapath::pipeline::{Datapath, DatapathConfig, Outputs, PortInfo};
use datapath::runtime::{
    InjectError, Injector, NormalWorker, Realtime, Runtime, WorkerPort, WorkerSpec,
};
use ports::afxdp::AttachMode;
use ports::{Backend, LinkEvent, LinkMonitor};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use switch::agent::{Agent, AgentConfig, PortRef, Transmit, TransmitError};
use switch::conn::{ConnConfig, SwitchFacts};
use switch::ports::{PortSpec, PortTable};
use switch::shell::{Input, Shell, Target};

use ports::xdp_features::FeatureWatch;
use xdp::delivery::{Delivery, PortUse};
use xdp::program::FastPath;
use xdp::tier::KernelTier;

use crate::config::{
    BackendName, FailMode, FastPath as FastPathMode, RunConfig, RunFlags, WorkerSched,
};
use crate::fastpath::TierView;
use crate::live_ports::{self, file_kept, Control, LinkAction, Ports, ReloadSource, SharedPorts};
use crate::state::{self, Saved};

/// Packet-in records the datapath queues for the agent.
const PACKET_IN_QUEUE: usize = 1024;
/// Ports the fast path has room for at least (those configured and those added later).
const MIN_FAST_PATH_PORTS: u32 = 64;
/// How long the in-kernel tier goes on forwarding after the switch stopped, for its
/// restart to take over (see `xdp::handover`).
const HANDOVER_GRACE: std::time::Duration = std::time::Duration::from_secs(30);
/// The exit status of a configuration error (sysexits' EX_CONFIG): a service manager
/// should not restart the switch until the configuration is fixed.
const EXIT_CONFIG: u8 = 78;

/// A running switch.
pub struct Switch {
    dp: Arc<Datapath>,
    ports: SharedPorts,
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
    /// Where the state is saved at stop, if anywhere.
    state_dir: Option<PathBuf>,
    /// Whether the tier's links are pinned for a restart to take over (a state
    /// directory is set and bpffs available).
    hands_over: bool,
}

/// Packet-out traffic to the workers, once they run.
struct ToWorkers(Arc<OnceLock<Injector>>);

impl Transmit for ToWorkers {
    fn transmit(&mut self, out: &mut Outputs) -> Result<(), TransmitError> {
        let inj =
            self.0.get().ok_or(TransmitError::Failed("the workers are not running".into()))?;
        inj.offer(out).map_err(|e| match e {
            InjectError::Full { .. } => TransmitError::Busy,
            InjectError::Stopped => TransmitError::Failed(e.to_string()),
        })
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
    /// Opens every port of `cfg` and starts forwarding (without a configuration to
    /// reload: see [`Switch::start_with`]).
    pub fn start(cfg: &RunConfig) -> anyhow::Result<Switch> {
        Self::start_with(cfg, None)
    }

    /// Opens every port of `cfg` (and the ports saved in its state directory), restores
    /// the saved tables, and starts forwarding; `reload`: where a reload reads the
    /// configuration again.
    pub fn start_with(cfg: &RunConfig, reload: Option<ReloadSource>) -> anyhow::Result<Switch> {
        let tls = match &cfg.tls {
            Some(files) => Some(switch::tls::Tls::load(files).context("loading the TLS files")?),
            None => None,
        };
        let saved = match &cfg.state_dir {
            Some(dir) => state::load(dir).unwrap_or_else(|e| {
                eprintln!("peregrine: the saved state cannot be read ({e}); starting without it");
                Saved::default()
            }),
            None => Saved::default(),
        };
        let numbers = cfg.port_numbers();
        // Each configured port's backend, `auto` resolved (and said) here; whether it was.
        let chosen: Vec<(BackendName, bool)> = cfg
            .ports
            .iter()
            .zip(&numbers)
            .map(|(p, &no)| match p.backend {
                BackendName::Auto => (choose_backend(no, &p.name, cfg.workers), true),
                b => (b, false),
            })
            .collect();
        let fast = load_fast_path(cfg, chosen.iter().map(|c| c.0));
        // The tier left forwarding by the last run (if any) is taken over port by port as
        // the ports attach; without a tier now, it is released.
        let pins = cfg.state_dir.as_ref().and_then(|_| {
            let mounted = xdp::handover::ensure_bpffs()
                .map_err(|e| {
                    eprintln!(
                        "peregrine: fast path: {e}; it is not left forwarding across a restart"
                    )
                })
                .ok()?;
            if mounted && fast.is_some() {
                eprintln!(
                    "peregrine: fast path: mounted bpffs at /sys/fs/bpf; in a mount namespace \
                     of its own (`ip netns exec` makes one) it ends with the switch, and the \
                     kernel is not left forwarding across a restart"
                );
            }
            Some(PathBuf::from(format!("/sys/fs/bpf/peregrine/{}", cfg.name)))
        });
        match (&fast, &pins) {
            (Some(fp), Some(dir)) => fp.set_pin_dir(dir),
            (None, Some(dir)) => xdp::handover::release_all(dir),
            _ => {}
        }
        let macs = MacTable::new(MacTableConfig {
            aging_ns: cfg.mac_aging_s.saturating_mul(SECOND_NS),
            ..MacTableConfig::default()
        });
        let ports: SharedPorts =
            Arc::new(Mutex::new(Ports::new(cfg.workers, fast.clone(), macs.clone(), reload)));
        let mut specs: Vec<PortSpec> = Vec::with_capacity(cfg.ports.len() + 1);
        {
            let mut p = live_ports::lock(&ports);
            for ((port, &no), &(backend, auto)) in cfg.ports.iter().zip(&numbers).zip(&chosen) {
                p.keep(file_kept(port, no));
                specs.push(
                    p.open_resolved(&port.name, backend, auto, no)
                        .map_err(|e| anyhow::anyhow!(e))?,
                );
            }
            // Ports added at run time before the last stop, under their numbers.
            for k in saved.ports {
                if cfg.ports.iter().any(|c| c.name == k.name) {
                    continue;
                }
                let no = k.no.or(k.ofport).filter(|n| !specs.iter().any(|s| s.no == *n));
                let name = k.name.clone();
                let backend = k.backend;
                p.keep(k);
                match no
                    .ok_or_else(|| "its number is configured for another port".to_string())
                    .and_then(|no| p.open(&name, backend, no))
                {
                    Ok(spec) => {
                        eprintln!(
                            "peregrine: port {} ({name}): added at run time before, added again",
                            label(spec.no)
                        );
                        specs.push(spec);
                    }
                    Err(e) => eprintln!(
                        "peregrine: port {name} (added at run time before) is not open: {e}; \
                         it is added when its interface appears"
                    ),
                }
            }
            if let Some(local) = &cfg.local {
                specs.push(
                    p.open(local, BackendName::Tap, ofport::LOCAL)
                        .map_err(|e| anyhow::anyhow!(e))?,
                );
            }
        }
        // What no port took over goes.
        if let Some(fp) = &fast {
            fp.release_pins();
        }
        let dcfg = DatapathConfig {
            ports: specs.iter().map(|p| PortInfo::new(p.no, p.slot)).collect(),
            ..DatapathConfig::default()
        };
        let (dp, writer, packet_ins) = Datapath::new(dcfg, PACKET_IN_QUEUE);
        let started = Instant::now();
        let attach: Vec<u32> = specs.iter().map(|s| s.no).collect();
        let mut targets = Vec::new();
        for t in cfg.controllers.iter().chain(&cfg.listen) {
            targets.push(Target::parse(t).map_err(|e| anyhow::anyhow!(e))?);
        }
        let acfg = AgentConfig {
            facts: SwitchFacts { datapath_id: cfg.dpid, ..SwitchFacts::default() },
            fail_mode: match cfg.fail_mode {
                FailMode::Standalone => switch::agent::FailMode::Standalone,
                FailMode::Secure => switch::agent::FailMode::Secure,
            },
            controllers: !targets.is_empty(),
            timing: ConnConfig { versions: cfg.protocols, ..ConnConfig::default() },
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
            agent.flow_mod(fm, 0).map_err(|e| anyhow::anyhow!("{place}: {e}"))?;
        }
        // The saved tables, before any controller connects or worker forwards.
        if !saved.tables.is_empty() {
            let r = agent.restore_tables(&saved.tables, 0);
            eprintln!(
                "peregrine: restored {} flow(s), {} group(s), {} meter(s) from {}",
                r.flows,
                r.groups,
                r.meters,
                cfg.state_dir.as_deref().unwrap_or(Path::new("")).display()
            );
            for e in r.errors {
                eprintln!("peregrine: not restored: {e}");
            }
        }
        agent.set_port_control(Box::new(Control(ports.clone())));
        {
            let mut p = live_ports::lock(&ports);
            for no in attach {
                p.attach(no).map_err(|e| anyhow::anyhow!(e))?;
            }
        }
        // The learning switch's table, attached so that the tier can mirror NORMAL's
        // decisions (it becomes the table's listener).
        dp.set_mac_table(macs.clone());
        // The tier starts from the version holding the flows above.
        let tier = fast.map(|fp| KernelTier::new(fp, dp.clone(), started));
        if let Some(t) = &tier {
            t.set_exact(cfg.fast_path_exact);
        }
        if let Some(t) = &tier {
            agent.set_fast_path(Arc::new(TierView(t.clone())));
            t.start(cfg.cpus.first().copied()).context("starting the fast path's thread")?;
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
        for (no, hs) in live_ports::lock(&ports).take_pending() {
            for (w, io) in hs.into_iter().enumerate() {
                if let Some(s) = wspecs.get_mut(w) {
                    s.ports.push(WorkerPort { no, io });
                }
            }
        }
        let runtime = Runtime::start(dp.clone(), wspecs, started).context("starting workers")?;
        live_ports::lock(&ports).set_changer(runtime.ports());
        // The workers run: the kernel program the last run left forwarding gives way to
        // this one (until now it forwarded the flows it held).
        if let Some(t) = &tier {
            let n = t.program().take_over();
            if n > 0 {
                eprintln!(
                    "peregrine: fast path: took over from the last run on {n} port(s), which the \
                     kernel kept forwarding"
                );
            }
        }
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
                switch::metrics::serve_on(&shell, a).context("starting the metrics endpoint")?,
            ),
            None => None,
        };
        let links = watch_links(ports.clone(), shell.input());
        Ok(Switch {
            dp,
            ports,
            macs,
            runtime: Some(runtime),
            shell: Some(shell),
            _links: links,
            started,
            metrics,
            tier,
            delivery_watch,
            state_dir: cfg.state_dir.clone(),
            hands_over: pins.is_some(),
        })
    }

    /// Saves the tables and the ports added at run time in the state directory (if
    /// the switch has one); says where, or what went wrong.
    pub fn save_state(&self) {
        let (Some(dir), Some(shell)) = (&self.state_dir, &self.shell) else {
            return;
        };
        let Some(tables) = shell.call(|a, _| a.saved_tables()) else {
            return;
        };
        let saved = Saved { ports: live_ports::lock(&self.ports).added(), tables };
        match state::save(dir, &saved) {
            Ok(()) => eprintln!(
                "peregrine: state saved in {} ({} bytes of tables, {} port(s) added at run time)",
                dir.display(),
                saved.tables.len(),
                saved.ports.len()
            ),
            Err(e) => eprintln!("peregrine: the state could not be saved: {e}"),
        }
    }

    /// Runs a reload of the configuration's ports on the agent's thread; the outcome in
    /// lines to say.
    pub fn reload(&self) -> Vec<String> {
        let Some(shell) = &self.shell else {
            return Vec::new();
        };
        match shell.call(|a, now| a.reload(now)) {
            None => vec!["reload: the agent has stopped".into()],
            Some(Err(e)) => vec![format!("reload: {e}")],
            Some(Ok(r)) => {
                let mut lines: Vec<String> =
                    r.removed
                        .iter()
                        .map(|p| format!("reload: port {} ({}) removed", label(p.port_no), p.name))
                        .chain(r.added.iter().map(|p| {
                            format!("reload: port {} ({}) added", label(p.port_no), p.name)
                        }))
                        .chain(r.errors.iter().map(|e| format!("reload: {e}")))
                        .collect();
                if lines.is_empty() {
                    lines.push("reload: the ports are as configured".into());
                }
                lines
            }
        }
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
        for p in live_ports::lock(&self.ports).open_ports() {
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

    /// [`Switch::stop`] for a restart: the in-kernel tier, if it runs and the switch has
    /// a state directory, goes on forwarding its entries for [`HANDOVER_GRACE`], until
    /// the next start takes it over (`xdp::handover`).
    pub fn stop_for_restart(mut self) {
        if let (Some(t), true) = (self.tier.take(), self.hands_over) {
            if let Some(sh) = self.shell.take() {
                sh.stop();
            }
            // Its thread would clear the deadline; the ports' links are pinned as the
            // workers close them.
            t.stop();
            match t.program().hand_over(HANDOVER_GRACE) {
                Ok(()) => eprintln!(
                    "peregrine: fast path: the kernel forwards the flows it holds for up to {} s, \
                     until the switch starts again",
                    HANDOVER_GRACE.as_secs()
                ),
                Err(e) => eprintln!("peregrine: fast path: not left forwarding: {e}"),
            }
            self.tier = Some(t);
        }
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

/// Follows the ports' links (`live_ports::Ports::on_link`): link changes, deleted
/// interfaces and kept ones that come back go to the agent's thread. Without the
/// monitor (no rtnetlink) it says so and the switch runs on.
fn watch_links(ports: SharedPorts, agent: std::sync::mpsc::Sender<Input>) -> Option<LinkMonitor> {
    LinkMonitor::start(move |ev: LinkEvent| {
        let Some(action) = live_ports::lock(&ports).on_link(&ev) else {
            return;
        };
        let input = match action {
            LinkAction::Link { no, up } => Input::Link { no, up },
            LinkAction::Gone { no } => Input::Call(Box::new(move |a, _| {
                match a.del_port(&PortRef::No(no), false) {
                    Ok(p) => eprintln!(
                        "peregrine: port {} ({}) deleted with its interface; added back if it returns",
                        label(no),
                        p.name
                    ),
                    Err(e) => eprintln!("peregrine: port {}: {e}", label(no)),
                }
            })),
            LinkAction::Back(req) => {
                let ports = ports.clone();
                Input::Call(Box::new(move |a, now| add_back(a, &req, now, &ports)))
            }
        };
        let _ = agent.send(input);
    })
    .map_err(|e| {
        eprintln!("peregrine: link monitor unavailable ({e}); link changes will not be noticed")
    })
    .ok()
}

/// Adds kept interface `req.name` back as a port now that it appeared (on the agent's
/// thread), and says how it went.
fn add_back(a: &mut Agent, req: &switch::agent::AddPort, now: u64, ports: &SharedPorts) {
    let added = a.add_port(req, now);
    live_ports::lock(ports).settled(&req.name);
    match added {
        Ok(p) => eprintln!(
            "peregrine: port {} ({}) added back: its interface appeared",
            label(p.port_no),
            p.name
        ),
        Err(e) => eprintln!("peregrine: {} appeared but is not added: {e}", req.name),
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
        matches!(b, BackendName::Afxdp | BackendName::AfxdpNative | BackendName::AfxdpGeneric)
    });
    if cfg.fast_path != FastPathMode::Xdp || !xdp_ports {
        return None;
    }
    // Room for ports added while the switch runs.
    let max_ports = (cfg.ports.len() as u32 + 1).max(MIN_FAST_PATH_PORTS);
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
    let head = format!("fast path: port {} ({}, {mode} XDP)", label(port.of_port), port.name);
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
pub(crate) fn choose_backend(no: u32, name: &str, workers: usize) -> BackendName {
    let Ok(facts) = ports::auto::Facts::of(name) else {
        return BackendName::Afpacket;
    };
    let choice = ports::auto::choose(facts, workers);
    let backend = if choice.afxdp { BackendName::AfxdpNative } else { BackendName::Afpacket };
    eprintln!(
        "peregrine: port {} ({name}): {} ({}; `--port {name},backend=B` chooses another)",
        label(no),
        if choice.afxdp { "afxdp" } else { "afpacket" },
        choice.why
    );
    backend
}

/// The `ports` backend of a configured one.
pub(crate) fn backend_of(b: BackendName) -> Backend {
    match b {
        BackendName::Afxdp => Backend::AfXdp { mode: AttachMode::Auto },
        BackendName::AfxdpNative => Backend::AfXdp { mode: AttachMode::Native },
        BackendName::AfxdpGeneric => Backend::AfXdp { mode: AttachMode::Generic },
        // `auto` is resolved before ports open (`choose_backend`); AF_PACKET works on
        // any interface.
        BackendName::Afpacket | BackendName::Auto => Backend::AfPacket,
        BackendName::Tap => Backend::Tap,
    }
}

/// How a port number is shown: its number, or LOCAL.
pub(crate) fn label(no: u32) -> String {
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
    let cfg = match RunConfig::load(flags, cpus_online()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("peregrine run: {e}");
            return ExitCode::from(EXIT_CONFIG);
        }
    };
    match run(flags, &cfg) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("peregrine run: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(flags: &RunFlags, cfg: &RunConfig) -> anyhow::Result<()> {
    require_root("run")?;
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])
        .context("installing the signal handlers")?;
    let reload = ReloadSource { flags: flags.clone(), cpus_online: cpus_online() };
    let switch = Switch::start_with(cfg, Some(reload))?;
    eprintln!(
        "peregrine: switching between {} port(s) with {} worker(s), dpid {:016x}, fail mode {}, fast path {}, protocols {}; Ctrl-C to stop",
        live_ports::lock(&switch.ports).open_ports().filter(|p| p.no != ofport::LOCAL).count(),
        cfg.workers,
        cfg.dpid,
        match cfg.fail_mode {
            FailMode::Standalone => "standalone",
            FailMode::Secure => "secure",
        },
        if switch.fast_path() { "xdp" } else { "off" },
        cfg.protocols
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
    for sig in signals.forever() {
        if sig == SIGHUP {
            for line in switch.reload() {
                eprintln!("peregrine: {line}");
            }
            continue;
        }
        break;
    }
    switch.save_state();
    let table = switch.stats_table();
    switch.stop_for_restart();
    print!("{table}");
    Ok(())
}
