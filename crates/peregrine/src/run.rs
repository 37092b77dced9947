//! `peregrine run`: the switch on real interfaces. Opens the ports, builds the datapath
//! (in standalone mode with the learning switch as table 0's priority-0 NORMAL rule, and
//! the flows given with `--flow`/`--flows` over it), starts the workers and a link
//! monitor, and runs until SIGINT or SIGTERM, then prints per-port statistics.
//!
//! [`Switch`] is the running switch as a value (the demo and the tests start it the
//! same way); dropping it stops the workers and closes the ports.

use std::fmt::Write as _;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use datapath::action::{port as ofport, Action};
use datapath::key::FlowMatch;
use datapath::normal::{MacTable, MacTableConfig, SECOND_NS};
use datapath::pipeline::{Datapath, DatapathConfig, Instructions, PortInfo, Rule};
use datapath::runtime::{NormalWorker, Runtime, WorkerPort, WorkerSpec};
use ports::afxdp::AttachMode;
use ports::{Backend, LinkEvent, LinkMonitor, PortCounters};

use crate::config::{BackendName, FailMode, RunConfig, RunFlags};

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
    backend: BackendName,
    counters: Vec<Arc<PortCounters>>,
}

/// A port as the link monitor follows it.
struct Watched {
    ifindex: u32,
    slot: u16,
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
    _links: Option<LinkMonitor>,
    started: Instant,
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
        let mut opened = Vec::with_capacity(cfg.ports.len() + 1);
        let mut handles = Vec::with_capacity(cfg.ports.len() + 1);
        let numbered = cfg
            .ports
            .iter()
            .enumerate()
            .map(|(i, p)| (i as u32 + 1, p.name.as_str(), p.backend));
        let local = cfg
            .local
            .iter()
            .map(|name| (ofport::LOCAL, name.as_str(), BackendName::Tap));
        for (no, name, backend) in numbered.chain(local) {
            let what = format!("port {} ({name}, {})", label(no), backend.as_str());
            let port = ports::open(name, backend_of(backend), cfg.workers).context(what.clone())?;
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
        let (dp, mut writer, packet_ins) = Datapath::new(dcfg, PACKET_IN_QUEUE);
        // Nobody reads packet-ins until the agent exists: the bounded queue fills and
        // further ones are dropped and counted, which costs the workers nothing.
        drop(packet_ins);
        if cfg.fail_mode == FailMode::Standalone {
            // The learning switch, as an ordinary rule so the tracer and stats see it.
            let normal = Rule::new(
                FlowMatch::ANY,
                0,
                Instructions {
                    apply: vec![Action::Output(ofport::NORMAL)],
                    ..Instructions::default()
                },
            );
            writer
                .insert_rule(0, normal)
                .map_err(|e| anyhow::anyhow!("installing the NORMAL rule: {e:?}"))?;
        }
        for (place, fm) in &cfg.flows {
            let rule = switch::translate::flow_mod_to_rule(fm, fm.table_id)
                .map_err(|e| anyhow::anyhow!("{place}: {e}"))?;
            writer
                .insert_rule(fm.table_id, rule)
                .map_err(|e| anyhow::anyhow!("{place}: {e:?}"))?;
        }
        writer.publish();
        let dp = Arc::new(dp);
        let macs = MacTable::new(MacTableConfig {
            aging_ns: cfg.mac_aging_s.saturating_mul(SECOND_NS),
            ..MacTableConfig::default()
        });
        macs.set_ports(&opened.iter().map(|p| p.no).collect::<Vec<_>>());
        let mut specs: Vec<WorkerSpec> = (0..cfg.workers)
            .map(|w| WorkerSpec {
                cpu: cfg.cpus.get(w).copied(),
                ports: Vec::new(),
                cache_entries: cfg.cache_entries,
                normal: Some(Box::new(macs.handler()) as Box<dyn NormalWorker>),
            })
            .collect();
        for (p, hs) in opened.iter().zip(handles) {
            for (w, io) in hs.into_iter().enumerate() {
                if let Some(s) = specs.get_mut(w) {
                    s.ports.push(WorkerPort { no: p.no, io });
                }
            }
        }
        let started = Instant::now();
        let runtime = Runtime::start(dp.clone(), specs, started).context("starting workers")?;
        let links = {
            let mut watched: Vec<Watched> = opened
                .iter()
                .map(|p| Watched {
                    ifindex: p.ifindex,
                    slot: p.slot,
                    no: p.no,
                    name: p.name.clone(),
                    state: if p.up { "up" } else { "down" },
                })
                .collect();
            let (dp, macs) = (dp.clone(), macs.clone());
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
                dp.set_port_live(w.slot, live);
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
            _links: links,
            started,
        })
    }

    /// The per-port statistics as a table: the switch's counts per port, the backend's
    /// drops and errors, and the learning switch's counts.
    pub fn stats_table(&self) -> String {
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

    /// Stops forwarding and closes the ports.
    pub fn stop(mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.stop();
        }
    }
}

impl Drop for Switch {
    fn drop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.stop();
        }
    }
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
        BackendName::Afpacket => Backend::AfPacket,
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
    if !cfg.controllers.is_empty() || !cfg.listen.is_empty() {
        if cfg.fail_mode == FailMode::Secure {
            anyhow::bail!(
                "controller connections are not implemented in this version, and fail mode secure would forward nothing: use --fail-mode standalone or no controller"
            );
        }
        eprintln!(
            "peregrine run: controller connections are not implemented in this version; running standalone (learning switch)"
        );
    }
    let (tx, rx) = std::sync::mpsc::channel();
    ctrlc::set_handler(move || {
        let _ = tx.send(());
    })
    .context("installing the signal handler")?;
    let switch = Switch::start(&cfg)?;
    eprintln!(
        "peregrine: switching between {} port(s) with {} worker(s), dpid {:016x}, fail mode {}; Ctrl-C to stop",
        cfg.ports.len(),
        cfg.workers,
        cfg.dpid,
        match cfg.fail_mode {
            FailMode::Standalone => "standalone",
            FailMode::Secure => "secure",
        }
    );
    let _ = rx.recv();
    let table = switch.stats_table();
    switch.stop();
    print!("{table}");
    Ok(())
}
