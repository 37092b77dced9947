//! The switch's run configuration: a TOML file (`--config FILE`) and the flags of
//! `peregrine run`, merged and checked into one [`RunConfig`].
//!
//! Flags win over the file: `--port` given at least once replaces the file's ports (in
//! the order given, numbered 1, 2, …), and every other flag replaces its key. Every error
//! says where it is (the file with line and column, or the flag) and what is wrong.
//!
//! ```toml
//! dpid = "00000000000000a1"
//! workers = 2
//! cpus = "0-1"              # or [0, 1]
//! fail_mode = "standalone"  # or "secure"
//! protocols = "OpenFlow10,OpenFlow13"  # versions offered (default: all); or a list
//! cache = 65536             # exact-match cache entries per worker (0: off)
//! mac_aging = 300           # seconds
//! local = "pg0"             # a tap, the OpenFlow LOCAL port (to the host stack)
//! flows = ["in_port=1,actions=output:2", "in_port=2,actions=output:1"]
//! controller = ["tcp:192.0.2.1:6653"]
//! listen = ["ptcp:6653"]
//! name = "peregrine"        # the management socket is /run/peregrine/NAME.mgmt
//! mgmt = "/run/peregrine/peregrine.mgmt"  # or "none"
//! state_dir = "/var/lib/peregrine/peregrine"  # saved flows, groups, meters, ports; or "none"
//! private_key = "sc-privkey.pem"   # TLS identity and CA for ssl: and pssl: targets
//! certificate = "sc-cert.pem"
//! ca_cert = "cacert.pem"
//! metrics = "127.0.0.1:9464"  # Prometheus GET /metrics (off unless given)
//! fast_path = "xdp"         # or "off": the in-kernel tier on afxdp ports
//! fast_path_entries = 1048576 # its flow map's size (default: by the CPU count)
//! fast_path_exact = false   # true: one entry per microflow, no megaflows
//! worker_sched = "realtime" # or "normal": how the workers are scheduled
//!
//! [[port]]
//! name = "veth0"
//! backend = "auto"          # the default; or "afxdp" (-native, -generic), "afpacket", "tap"
//! ofport = 1                # its OpenFlow number (default: its place in the list)
//! ```
//!
//! Port numbers: a port's `ofport`, else its place in the list (the first is 1); two
//! ports with one number are an error. Ports added at run time (`peregrine ctl
//! add-port`) take the number asked for or the first one free.

use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use openflow::v13::flow_mod::{FlowMod, FlowModCommand};
use serde::Deserialize;
pub use switch::port_spec::{parse_port_flag, BackendName, PortConfig};

/// What the switch does without a controller.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum FailMode {
    /// Learning L2 switch (NORMAL) while no controller is connected.
    Standalone,
    /// Keep the flow table as it is; forward nothing new.
    Secure,
}

/// The in-kernel fast tier (the `xdp` crate) on the switch's AF_XDP ports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum FastPath {
    /// The XDP program forwards the flows (megaflows) the datapath mirrors into its map.
    Xdp,
    /// Every frame goes to the workers.
    Off,
}

/// How the worker threads are scheduled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum WorkerSched {
    /// SCHED_FIFO at the lowest real-time priority, where permitted (an ordinary thread
    /// otherwise, said at start): a worker sharing its CPU with the kernel's receive work
    /// then keeps forwarding at its peak under overload.
    Realtime,
    /// Ordinary threads.
    Normal,
}

/// Flow entries the fast tier's map holds by default: as many as 64 MiB of hit counters
/// (16 bytes per entry and CPU) allow, a power of two from 65,536 to 1,048,576 (1M on a
/// machine of up to 4 CPUs, 262,144 on 16). Entries take kernel memory only as they
/// are written.
pub fn fast_path_entries_default() -> u32 {
    const COUNTER_BUDGET: usize = 64 << 20;
    let cpus = std::fs::read_to_string("/sys/devices/system/cpu/possible")
        .ok()
        .and_then(|s| possible_cpus(s.trim()))
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    let fit = COUNTER_BUDGET / (16 * cpus);
    let pow = if fit.is_power_of_two() { fit } else { fit.next_power_of_two() / 2 };
    pow.clamp(65_536, 1_048_576) as u32
}

/// The number of CPUs in a `/sys/devices/system/cpu/possible` list (`0-3,8`).
fn possible_cpus(list: &str) -> Option<usize> {
    list.split(',').try_fold(0usize, |n, part| {
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (a.parse::<usize>().ok()?, b.parse::<usize>().ok()?),
            None => {
                let a = part.parse::<usize>().ok()?;
                (a, a)
            }
        };
        Some(n + b.checked_sub(a)? + 1)
    })
}

/// Everything `peregrine run` needs, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunConfig {
    /// The configured ports; `ports[i]` is numbered `ofport`, else `i + 1`
    /// ([`RunConfig::port_numbers`]).
    pub ports: Vec<PortConfig>,
    /// The tap that is the OpenFlow LOCAL port, if any (created if missing).
    pub local: Option<String>,
    /// Flows installed at start (ovs-ofctl `add-flow` syntax), each checked, with where
    /// it came from (for messages).
    pub flows: Vec<(String, FlowMod)>,
    pub workers: usize,
    /// One CPU per worker, or none (the OS places them).
    pub cpus: Vec<usize>,
    pub dpid: u64,
    pub fail_mode: FailMode,
    /// The OpenFlow versions the switch offers and accepts, on every connection.
    pub protocols: openflow::Versions,
    pub controllers: Vec<String>,
    pub listen: Vec<String>,
    /// The switch's name (its management socket's default name).
    pub name: String,
    /// The management socket (`peregrine ctl NAME` connects here), or none.
    pub mgmt: Option<PathBuf>,
    /// Where the switch saves its state at stop and restores it from at start, or none.
    pub state_dir: Option<PathBuf>,
    /// The configuration file, if any (a reload reads it again).
    pub file: Option<PathBuf>,
    /// TLS files for `ssl:` and `pssl:` targets (all three given, or none).
    pub tls: Option<switch::tls::TlsFiles>,
    pub cache_entries: usize,
    pub mac_aging_s: u64,
    /// Where to serve the Prometheus metrics (`GET /metrics`), if anywhere.
    pub metrics: Option<SocketAddr>,
    /// The in-kernel fast tier on AF_XDP ports.
    pub fast_path: FastPath,
    /// Entries of the fast tier's flow map.
    pub fast_path_entries: u32,
    /// Whether the fast tier's entries are exact microflows only (no megaflows).
    pub fast_path_exact: bool,
    pub worker_sched: WorkerSched,
}

/// A configuration error: where, and what is wrong.
#[derive(Debug, PartialEq, Eq)]
pub struct ConfigError {
    pub place: String,
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.place, self.message)
    }
}

impl std::error::Error for ConfigError {}

fn err(place: impl Into<String>, message: impl Into<String>) -> ConfigError {
    ConfigError { place: place.into(), message: message.into() }
}

/// The file's keys (all optional).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    dpid: Option<String>,
    workers: Option<usize>,
    cpus: Option<CpuList>,
    fail_mode: Option<FailMode>,
    protocols: Option<Protocols>,
    cache: Option<usize>,
    mac_aging: Option<u64>,
    local: Option<String>,
    #[serde(default)]
    flows: Vec<String>,
    #[serde(default)]
    controller: Vec<String>,
    #[serde(default)]
    listen: Vec<String>,
    name: Option<String>,
    mgmt: Option<String>,
    state_dir: Option<String>,
    private_key: Option<PathBuf>,
    certificate: Option<PathBuf>,
    ca_cert: Option<PathBuf>,
    metrics: Option<String>,
    fast_path: Option<FastPath>,
    fast_path_entries: Option<u32>,
    fast_path_exact: Option<bool>,
    worker_sched: Option<WorkerSched>,
    #[serde(default)]
    port: Vec<FilePort>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FilePort {
    name: String,
    #[serde(default = "default_backend")]
    backend: BackendName,
    ofport: Option<u32>,
}

fn default_backend() -> BackendName {
    BackendName::Auto
}

/// The file's `protocols`: `"OpenFlow10,OpenFlow13"` or `["OpenFlow10", "OpenFlow13"]`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Protocols {
    Text(String),
    List(Vec<String>),
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum CpuList {
    Text(String),
    List(Vec<usize>),
}

/// The flags of `peregrine run` that feed the configuration.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct RunFlags {
    /// TOML configuration file (flags override its keys).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// A port: IFACE[,backend=auto|afxdp|afxdp-native|afxdp-generic|afpacket|tap]; repeat
    /// for more (numbered 1, 2, … in order). The default, auto, is AF_XDP where the
    /// kernel and driver support it in full (native XDP, the MTU fits, a queue per
    /// worker), else AF_PACKET; the switch says at start which each port got and why.
    /// `ofport=N` asks for OpenFlow port number N.
    #[arg(long = "port", value_name = "IFACE[,backend=B][,ofport=N]")]
    pub ports: Vec<String>,
    /// Forwarding threads.
    #[arg(long)]
    pub workers: Option<usize>,
    /// CPUs to pin the workers to, one per worker: a list like 0,2-3.
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Datapath id, up to 16 hex digits.
    #[arg(long, value_name = "HEX")]
    pub dpid: Option<String>,
    /// Active controller connection (tcp:IP[:PORT]); repeatable.
    #[arg(long = "controller", value_name = "TARGET")]
    pub controllers: Vec<String>,
    /// Passive controller listener (ptcp:[PORT][:IP]); repeatable.
    #[arg(long = "listen", value_name = "TARGET")]
    pub listen: Vec<String>,
    /// The switch's name: its management socket is /run/peregrine/NAME.mgmt
    /// (default name: peregrine).
    #[arg(long)]
    pub name: Option<String>,
    /// The management socket's path, or `none` for no management socket.
    #[arg(long, value_name = "PATH|none")]
    pub mgmt: Option<String>,
    /// Where the switch saves its flows, groups, meters and ports at stop and restores
    /// them from at start (default /var/lib/peregrine/NAME), or `none`.
    #[arg(long, value_name = "DIR|none")]
    pub state_dir: Option<String>,
    /// PEM private key for ssl:/pssl: controller channels.
    #[arg(long, value_name = "FILE")]
    pub private_key: Option<PathBuf>,
    /// PEM certificate (chain) matching --private-key.
    #[arg(long, value_name = "FILE")]
    pub certificate: Option<PathBuf>,
    /// PEM CA certificate(s) that controllers' certificates must chain to.
    #[arg(long, value_name = "FILE")]
    pub ca_cert: Option<PathBuf>,
    /// What to do without a controller.
    #[arg(long, value_enum)]
    pub fail_mode: Option<FailMode>,
    /// The OpenFlow versions to offer and accept, comma separated (Open vSwitch's
    /// names: OpenFlow10, OpenFlow13, OpenFlow14; default: all three). A controller that
    /// offers none of
    /// them is refused.
    #[arg(long, value_name = "LIST")]
    pub protocols: Option<String>,
    /// Exact-match cache entries per worker (0: off).
    #[arg(long)]
    pub cache: Option<usize>,
    /// A tap (created if missing) as the OpenFlow LOCAL port, to the host stack.
    #[arg(long, value_name = "IFACE")]
    pub local: Option<String>,
    /// A flow to install at start, in ovs-ofctl add-flow syntax; repeatable.
    #[arg(long = "flow", value_name = "FLOW")]
    pub flows: Vec<String>,
    /// A file of flows to install at start, one per line (ovs-ofctl add-flows: `#`
    /// comments and blank lines skipped).
    #[arg(long = "flows", value_name = "FILE")]
    pub flows_file: Option<PathBuf>,
    /// Serve Prometheus metrics (HTTP GET /metrics) on this address, e.g.
    /// 127.0.0.1:9464.
    #[arg(long, value_name = "IP:PORT")]
    pub metrics: Option<String>,
    /// The in-kernel fast tier on AF_XDP ports: an XDP program that forwards the
    /// flows (megaflows: every frame equal under what the rules consulted) the datapath
    /// mirrors into it (default: xdp).
    #[arg(long, value_enum)]
    pub fast_path: Option<FastPath>,
    /// Entries of the fast tier's flow map (default: 1048576 up to 4 CPUs, fewer on
    /// more, as 64 MiB of per-CPU hit counters allow; at least 65536).
    #[arg(long, value_name = "N")]
    pub fast_path_entries: Option<u32>,
    /// One fast-tier entry per microflow (every header field), no megaflows: each new
    /// flow's first frames go through the workers (for comparison and diagnosis).
    #[arg(long)]
    pub fast_path_exact: bool,
    /// How the workers are scheduled: realtime (SCHED_FIFO at the lowest real-time
    /// priority, where permitted; the default) or normal.
    #[arg(long, value_enum)]
    pub worker_sched: Option<WorkerSched>,
}

impl RunConfig {
    /// A standalone switch on `ports` with every other setting at its default: one
    /// worker placed by the OS, dpid 1, no LOCAL port, flow or controller.
    pub fn with_ports(ports: Vec<PortConfig>) -> RunConfig {
        RunConfig {
            ports,
            local: None,
            flows: Vec::new(),
            workers: 1,
            cpus: Vec::new(),
            dpid: 1,
            fail_mode: FailMode::Standalone,
            protocols: openflow::Versions::default(),
            controllers: Vec::new(),
            listen: Vec::new(),
            name: DEFAULT_NAME.to_string(),
            mgmt: None,
            state_dir: None,
            file: None,
            tls: None,
            cache_entries: 65_536,
            mac_aging_s: 300,
            metrics: None,
            fast_path: FastPath::Xdp,
            fast_path_entries: fast_path_entries_default(),
            fast_path_exact: false,
            worker_sched: WorkerSched::Realtime,
        }
    }

    /// Reads the file named by `flags.config` (if any) and merges the flags over it.
    /// `cpus_online` is how many CPUs the machine has (CPU numbers must be below it).
    pub fn load(flags: &RunFlags, cpus_online: usize) -> Result<RunConfig, ConfigError> {
        let (file, place) = match &flags.config {
            Some(path) => (read_file(path)?, path.display().to_string()),
            None => (FileConfig::default(), String::new()),
        };
        Self::merge(file, &place, flags, cpus_online)
    }

    fn merge(
        file: FileConfig,
        file_place: &str,
        flags: &RunFlags,
        cpus_online: usize,
    ) -> Result<RunConfig, ConfigError> {
        let at = |key: &str| format!("{file_place}: {key}");
        let ports = if flags.ports.is_empty() {
            file.port
                .into_iter()
                .map(|p| PortConfig { name: p.name, backend: p.backend, ofport: p.ofport })
                .collect()
        } else {
            flags
                .ports
                .iter()
                .map(|s| parse_port_flag(s).map_err(|m| err(format!("--port {s}"), m)))
                .collect::<Result<Vec<_>, _>>()?
        };
        if ports.is_empty() {
            return Err(err(
                "ports",
                "no port given (use --port IFACE or [[port]] in the config file)",
            ));
        }
        for (i, p) in ports.iter().enumerate() {
            if let Err(m) = check_ifname(&p.name) {
                return Err(err(format!("port {}", i + 1), m));
            }
            if ports[..i].iter().any(|q| q.name == p.name) {
                return Err(err(format!("port {}", i + 1), format!("{} is given twice", p.name)));
            }
            if let Some(n) = p.ofport.filter(|n| *n == 0 || *n > datapath::action::port::MAX) {
                return Err(err(
                    format!("port {} ({})", i + 1, p.name),
                    format!("ofport {n}: a port number is 1 to 4294967040 (0xffffff00)"),
                ));
            }
        }
        let numbers = port_numbers(&ports);
        for (i, n) in numbers.iter().enumerate() {
            if let Some(j) = numbers[..i].iter().position(|m| m == n) {
                return Err(err(
                    format!("port {} ({})", i + 1, ports[i].name),
                    format!(
                        "OpenFlow port {n} is also {}'s (a port without ofport is numbered by its place in the list)",
                        ports[j].name
                    ),
                ));
            }
        }
        let local = flags.local.clone().or(file.local);
        if let Some(l) = &local {
            let place = if flags.local.is_some() { "--local".to_string() } else { at("local") };
            check_ifname(l).map_err(|m| err(place.clone(), m))?;
            if ports.iter().any(|p| &p.name == l) {
                return Err(err(place, format!("{l} is also a numbered port")));
            }
        }
        let mut flows = Vec::new();
        for (i, f) in file.flows.iter().enumerate() {
            let place = at(&format!("flows[{i}]"));
            flows.push((place.clone(), parse_flow(f).map_err(|m| err(place, m))?));
        }
        if let Some(path) = &flags.flows_file {
            let text = std::fs::read_to_string(path)
                .map_err(|e| err(path.display().to_string(), format!("cannot read: {e}")))?;
            for (n, line) in text.lines().enumerate() {
                let line = line.trim();
                if line.is_empty() || line.starts_with('#') {
                    continue;
                }
                let place = format!("{}:{}", path.display(), n + 1);
                flows.push((place.clone(), parse_flow(line).map_err(|m| err(place, m))?));
            }
        }
        for f in &flags.flows {
            let place = format!("--flow {f}");
            flows.push((place.clone(), parse_flow(f).map_err(|m| err(place, m))?));
        }
        let workers = flags.workers.or(file.workers).unwrap_or(1);
        let workers_place =
            if flags.workers.is_some() { "--workers".to_string() } else { at("workers") };
        if workers == 0 || workers > 64 {
            return Err(err(workers_place, "must be 1 to 64"));
        }
        let cpus = match (&flags.cpus, file.cpus) {
            (Some(s), _) => parse_cpu_list(s, cpus_online).map_err(|m| err("--cpus", m))?,
            (None, Some(CpuList::Text(s))) => {
                parse_cpu_list(&s, cpus_online).map_err(|m| err(at("cpus"), m))?
            }
            (None, Some(CpuList::List(l))) => {
                check_cpus(&l, cpus_online).map_err(|m| err(at("cpus"), m))?;
                l
            }
            (None, None) => Vec::new(),
        };
        if !cpus.is_empty() && cpus.len() != workers {
            return Err(err(
                if flags.cpus.is_some() { "--cpus".into() } else { at("cpus") },
                format!("{} CPUs for {workers} worker(s): give one CPU per worker", cpus.len()),
            ));
        }
        let dpid = match (&flags.dpid, &file.dpid) {
            (Some(s), _) => parse_dpid(s).map_err(|m| err("--dpid", m))?,
            (None, Some(s)) => parse_dpid(s).map_err(|m| err(at("dpid"), m))?,
            (None, None) => 1,
        };
        let controllers =
            if flags.controllers.is_empty() { file.controller } else { flags.controllers.clone() };
        for c in &controllers {
            check_target(c, "tcp:", "ssl:").map_err(|m| err(format!("controller {c}"), m))?;
            switch::shell::Target::parse(c).map_err(|m| err(format!("controller {c}"), m))?;
        }
        let listen = if flags.listen.is_empty() { file.listen } else { flags.listen.clone() };
        for l in &listen {
            check_target(l, "ptcp:", "pssl:").map_err(|m| err(format!("listen {l}"), m))?;
            switch::shell::Target::parse(l).map_err(|m| err(format!("listen {l}"), m))?;
        }
        let name = match (&flags.name, file.name) {
            (Some(n), _) => check_name(n).map_err(|m| err("--name", m))?,
            (None, Some(n)) => check_name(&n).map_err(|m| err(at("name"), m))?,
            (None, None) => DEFAULT_NAME.to_string(),
        };
        let mgmt = match flags.mgmt.clone().or(file.mgmt) {
            Some(p) if p == "none" => None,
            Some(p) if p.is_empty() => {
                return Err(err("mgmt", "empty path (use none for no management socket)"))
            }
            Some(p) => Some(PathBuf::from(p)),
            None => Some(mgmt_path(&name)),
        };
        let state_dir = match flags.state_dir.clone().or(file.state_dir) {
            Some(p) if p == "none" => None,
            Some(p) if p.is_empty() => {
                return Err(err("state_dir", "empty path (use none to save nothing)"))
            }
            Some(p) => Some(PathBuf::from(p)),
            None => Some(state_path(&name)),
        };
        let tls = {
            let key = flags.private_key.clone().or(file.private_key);
            let cert = flags.certificate.clone().or(file.certificate);
            let ca = flags.ca_cert.clone().or(file.ca_cert);
            let uses_tls = controllers
                .iter()
                .chain(&listen)
                .any(|t| t.starts_with("ssl:") || t.starts_with("pssl:"));
            match (key, cert, ca) {
                (Some(private_key), Some(certificate), Some(ca_cert)) => {
                    Some(switch::tls::TlsFiles { private_key, certificate, ca_cert })
                }
                (None, None, None) if !uses_tls => None,
                (k, c, a) => {
                    let missing: Vec<&str> = [
                        ("--private-key", k.is_none()),
                        ("--certificate", c.is_none()),
                        ("--ca-cert", a.is_none()),
                    ]
                    .into_iter()
                    .filter_map(|(n, m)| m.then_some(n))
                    .collect();
                    return Err(err(
                        "TLS",
                        format!(
                            "ssl:/pssl: channels need --private-key, --certificate and --ca-cert (or the file keys private_key, certificate, ca_cert); missing {}",
                            missing.join(", ")
                        ),
                    ));
                }
            }
        };
        let metrics = match (&flags.metrics, &file.metrics) {
            (Some(a), _) => Some(parse_metrics_addr(a).map_err(|m| err("--metrics", m))?),
            (None, Some(a)) => Some(parse_metrics_addr(a).map_err(|m| err(at("metrics"), m))?),
            (None, None) => None,
        };
        let protocols = match (&flags.protocols, &file.protocols) {
            (Some(p), _) => openflow::Versions::parse(p).map_err(|m| err("--protocols", m))?,
            (None, Some(Protocols::Text(p))) => {
                openflow::Versions::parse(p).map_err(|m| err(at("protocols"), m))?
            }
            (None, Some(Protocols::List(l))) => {
                openflow::Versions::parse(&l.join(",")).map_err(|m| err(at("protocols"), m))?
            }
            (None, None) => openflow::Versions::default(),
        };
        let fast_path_entries = flags
            .fast_path_entries
            .or(file.fast_path_entries)
            .unwrap_or_else(fast_path_entries_default);
        if !(1..=1 << 24).contains(&fast_path_entries) {
            return Err(err(
                if flags.fast_path_entries.is_some() {
                    "--fast-path-entries".into()
                } else {
                    at("fast_path_entries")
                },
                "must be 1 to 16777216",
            ));
        }
        Ok(RunConfig {
            ports,
            local,
            flows,
            workers,
            cpus,
            dpid,
            fail_mode: flags.fail_mode.or(file.fail_mode).unwrap_or(FailMode::Standalone),
            protocols,
            controllers,
            listen,
            name,
            mgmt,
            state_dir,
            file: flags.config.clone(),
            tls,
            cache_entries: flags.cache.or(file.cache).unwrap_or(65_536),
            mac_aging_s: file.mac_aging.unwrap_or(300),
            metrics,
            fast_path: flags.fast_path.or(file.fast_path).unwrap_or(FastPath::Xdp),
            fast_path_entries,
            fast_path_exact: flags.fast_path_exact || file.fast_path_exact.unwrap_or(false),
            worker_sched: flags.worker_sched.or(file.worker_sched).unwrap_or(WorkerSched::Realtime),
        })
    }
}

fn read_file(path: &Path) -> Result<FileConfig, ConfigError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| err(path.display().to_string(), format!("cannot read: {e}")))?;
    toml::from_str(&text).map_err(|e| {
        let place = match e.span() {
            Some(span) => {
                let (line, col) = line_col(&text, span.start);
                format!("{}:{line}:{col}", path.display())
            }
            None => path.display().to_string(),
        };
        err(place, e.message().to_string())
    })
}

/// 1-based line and column of byte `at` of `text`.
fn line_col(text: &str, at: usize) -> (usize, usize) {
    let before = &text.as_bytes()[..at.min(text.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let col = before.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
    (line, col)
}

/// A flow in ovs-ofctl add-flow syntax, with the OpenFlow 1.3 checks a switch applies
/// to a flow-mod (prerequisites, argument ranges).
fn parse_flow(s: &str) -> Result<FlowMod, String> {
    let fm = openflow::text::parse_flow_mod(s, FlowModCommand::Add)
        .map_err(|e| format!("column {}: {} ({:?})", e.pos + 1, e.message, e.token))?;
    fm.validate().map_err(|e| format!("{e}"))?;
    Ok(fm)
}

/// The metrics endpoint's address: `IP:PORT` (an IPv6 address in brackets).
fn parse_metrics_addr(s: &str) -> Result<SocketAddr, String> {
    s.parse().map_err(|_| {
        format!("{s:?} is not an address to listen on (write IP:PORT, e.g. 127.0.0.1:9464 or [::1]:9464)")
    })
}

/// Each configured port's OpenFlow number: its `ofport`, else its place (1-based).
pub fn port_numbers(ports: &[PortConfig]) -> Vec<u32> {
    ports.iter().enumerate().map(|(i, p)| p.ofport.unwrap_or(i as u32 + 1)).collect()
}

impl RunConfig {
    /// Each configured port's OpenFlow number (see [`port_numbers`]).
    pub fn port_numbers(&self) -> Vec<u32> {
        port_numbers(&self.ports)
    }
}

/// Where switch `name` saves its state by default.
pub fn state_path(name: &str) -> PathBuf {
    PathBuf::from(format!("/var/lib/peregrine/{name}"))
}

/// A Linux interface name: 1 to 15 bytes, no '/', whitespace or ':'.
fn check_ifname(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > 15 {
        return Err(format!("interface name {name:?} must be 1 to 15 characters"));
    }
    if name.chars().any(|c| c == '/' || c == ':' || c.is_whitespace()) {
        return Err(format!("interface name {name:?} has a '/', ':' or space"));
    }
    Ok(())
}

/// A CPU list like `0,2-3` (each CPU once, all below `online`).
pub fn parse_cpu_list(s: &str, online: usize) -> Result<Vec<usize>, String> {
    let mut cpus = Vec::new();
    for part in s.split(',').map(str::trim) {
        let num = |t: &str| {
            t.trim().parse::<usize>().map_err(|_| format!("{t:?} is not a CPU number (in {s:?})"))
        };
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (num(a)?, num(b)?);
                if a > b {
                    return Err(format!("range {part:?} runs backwards"));
                }
                cpus.extend(a..=b);
            }
            None => cpus.push(num(part)?),
        }
    }
    check_cpus(&cpus, online)?;
    Ok(cpus)
}

fn check_cpus(cpus: &[usize], online: usize) -> Result<(), String> {
    for (i, &c) in cpus.iter().enumerate() {
        if c >= online {
            return Err(format!(
                "CPU {c} does not exist (this machine has CPUs 0-{})",
                online.saturating_sub(1)
            ));
        }
        if cpus[..i].contains(&c) {
            return Err(format!("CPU {c} is listed twice"));
        }
    }
    if cpus.is_empty() {
        return Err("the CPU list is empty".into());
    }
    Ok(())
}

/// Up to 16 hex digits, optionally with a 0x prefix.
fn parse_dpid(s: &str) -> Result<u64, String> {
    let t = s.strip_prefix("0x").unwrap_or(s);
    if t.is_empty() || t.len() > 16 {
        return Err(format!("datapath id {s:?} must be 1 to 16 hex digits"));
    }
    u64::from_str_radix(t, 16).map_err(|_| format!("datapath id {s:?} is not hexadecimal"))
}

/// `active:IP[:PORT]` or `passive:[PORT][:IP]` as Open vSwitch writes them.
/// The switch name when none is given.
pub const DEFAULT_NAME: &str = "peregrine";

/// Where the management socket of switch `name` is.
pub fn mgmt_path(name: &str) -> PathBuf {
    PathBuf::from(format!("/run/peregrine/{name}.mgmt"))
}

/// A switch name: what can be part of a file name.
fn check_name(n: &str) -> Result<String, String> {
    let ok = !n.is_empty()
        && n.len() <= 64
        && n.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        && !n.starts_with('.');
    if ok {
        Ok(n.to_string())
    } else {
        Err(format!(
            "{n:?}: a name is 1-64 letters, digits, '-', '_' or '.', not starting with '.'"
        ))
    }
}

fn check_target(s: &str, plain: &str, tls: &str) -> Result<(), String> {
    let rest = s
        .strip_prefix(plain)
        .or_else(|| s.strip_prefix(tls))
        .ok_or_else(|| format!("must start with {plain} or {tls}"))?;
    let port_ok = |p: &str| p.is_empty() || p.parse::<u16>().is_ok_and(|n| n > 0);
    let ok = if plain == "tcp:" {
        // IP[:PORT]; an IPv6 address is written in brackets.
        match rest.rsplit_once(':') {
            _ if rest.is_empty() => false,
            Some((ip, port))
                if !ip.ends_with(':')
                    && (ip.parse::<std::net::IpAddr>().is_ok() || ip.starts_with('[')) =>
            {
                port_ok(port)
            }
            _ => rest.parse::<std::net::IpAddr>().is_ok() || rest.starts_with('['),
        }
    } else {
        // [PORT][:IP]
        match rest.split_once(':') {
            Some((port, ip)) => {
                port_ok(port) && (ip.parse::<std::net::IpAddr>().is_ok() || ip.starts_with('['))
            }
            None => port_ok(rest),
        }
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "cannot read {s:?} (write {plain}{} )",
            if plain == "tcp:" { "IP[:PORT]" } else { "[PORT][:IP]" }
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_map_size_follows_the_cpus() {
        assert_eq!(possible_cpus("0-3"), Some(4));
        assert_eq!(possible_cpus("0"), Some(1));
        assert_eq!(possible_cpus("0-3,8-11,16"), Some(9));
        assert_eq!(possible_cpus("x"), None);
        let n = fast_path_entries_default();
        assert!(n.is_power_of_two() && (65_536..=1_048_576).contains(&n), "{n}");
    }

    fn flags(ports: &[&str]) -> RunFlags {
        RunFlags { ports: ports.iter().map(|s| s.to_string()).collect(), ..RunFlags::default() }
    }

    fn from_toml(text: &str, f: &RunFlags) -> Result<RunConfig, ConfigError> {
        let file: FileConfig = toml::from_str(text).map_err(|e| err("t", e.message()))?;
        RunConfig::merge(file, "t.toml", f, 4)
    }

    #[test]
    fn flags_alone() {
        let mut f = flags(&["veth0", "tap1,backend=tap"]);
        f.workers = Some(2);
        f.cpus = Some("0,2".into());
        f.dpid = Some("0xa1".into());
        f.local = Some("pg0".into());
        let c = RunConfig::load(&f, 4).unwrap();
        assert_eq!(c.local.as_deref(), Some("pg0"));
        assert_eq!(
            c.ports,
            vec![
                PortConfig::named("veth0"),
                PortConfig { name: "tap1".into(), backend: BackendName::Tap, ofport: None },
            ]
        );
        assert_eq!((c.workers, c.cpus, c.dpid), (2, vec![0, 2], 0xa1));
        assert_eq!(c.fail_mode, FailMode::Standalone);
    }

    #[test]
    fn protocols_from_the_flag_or_the_file() {
        let list = |c: RunConfig| c.protocols.list();
        assert_eq!(list(RunConfig::load(&flags(&["a"]), 4).unwrap()), vec![1, 4, 5]);
        let mut f = flags(&["a"]);
        f.protocols = Some("OpenFlow10".into());
        assert_eq!(list(from_toml("protocols = \"OpenFlow13\"", &f).unwrap()), vec![1]);
        let none = flags(&["a"]);
        assert_eq!(list(from_toml("protocols = \"OpenFlow13\"", &none).unwrap()), vec![4]);
        let both = from_toml("protocols = [\"OpenFlow13\", \"OpenFlow10\"]", &none).unwrap();
        assert_eq!(list(both), vec![1, 4]);
        assert_eq!(list(from_toml("protocols = \"OpenFlow14\"", &none).unwrap()), vec![5]);
        let e = from_toml("protocols = \"OpenFlow15\"", &none).unwrap_err();
        assert_eq!(e.place, "t.toml: protocols");
        assert!(e.message.contains("OpenFlow15: this OpenFlow version is not supported"), "{e}");
        f.protocols = Some("OF13".into());
        let e = RunConfig::load(&f, 4).unwrap_err();
        assert_eq!(e.place, "--protocols");
        assert!(e.message.contains("OF13: unknown OpenFlow version"), "{e}");
    }

    #[test]
    fn ports_take_their_ofport_or_their_place_and_collisions_are_named() {
        let c = RunConfig::load(&flags(&["a,ofport=7", "b", "c,backend=tap,ofport=9"]), 4).unwrap();
        assert_eq!(c.port_numbers(), vec![7, 2, 9]);
        assert_eq!(c.ports[2].backend, BackendName::Tap);
        let e = |f: &RunFlags| RunConfig::load(f, 4).unwrap_err().to_string();
        assert!(
            e(&flags(&["a", "b,ofport=1"])).contains("OpenFlow port 1 is also a's"),
            "{}",
            e(&flags(&["a", "b,ofport=1"]))
        );
        assert!(e(&flags(&["a,ofport=0"])).contains("ofport=0: a port number is 1 to"));
        assert!(e(&flags(&["a,ofport=x"])).contains("ofport=x"));
        assert!(e(&flags(&["a,speed=1"])).contains("backend=… or ofport=…"));
    }

    #[test]
    fn file_then_flags_override() {
        let text = r#"
            dpid = "ff"
            workers = 2
            cpus = [1, 3]
            fail_mode = "secure"
            listen = ["ptcp:6653"]
            [[port]]
            name = "a"
            [[port]]
            name = "b"
            backend = "tap"
        "#;
        let c = from_toml(text, &RunFlags::default()).unwrap();
        assert_eq!(c.ports.len(), 2);
        assert_eq!(c.ports[1].backend, BackendName::Tap);
        assert_eq!((c.dpid, c.workers, c.cpus.clone()), (0xff, 2, vec![1, 3]));
        assert_eq!(c.fail_mode, FailMode::Secure);
        assert_eq!(c.listen, vec!["ptcp:6653".to_string()]);
        let mut f = flags(&["x"]);
        f.workers = Some(1);
        f.cpus = Some("2".into());
        let c = from_toml(text, &f).unwrap();
        assert_eq!(c.ports.len(), 1);
        assert_eq!((c.workers, c.cpus), (1, vec![2]));
    }

    #[test]
    fn names_management_sockets_and_tls_files() {
        let c = from_toml("", &flags(&["a"])).unwrap();
        assert_eq!((c.name.as_str(), c.mgmt), ("peregrine", Some(mgmt_path("peregrine"))));
        assert_eq!(c.tls, None);
        let c = from_toml("name = \"br1\"\nmgmt = \"none\"", &flags(&["a"])).unwrap();
        assert_eq!((c.name.as_str(), c.mgmt), ("br1", None));
        let mut f = flags(&["a"]);
        f.name = Some("br2".into());
        assert_eq!(from_toml("", &f).unwrap().mgmt, Some(PathBuf::from("/run/peregrine/br2.mgmt")));
        f.name = Some("../x".into());
        assert!(from_toml("", &f).unwrap_err().to_string().starts_with("--name: \"../x\""));
        let mut f = flags(&["a"]);
        f.listen = vec!["pssl:6634".into()];
        f.private_key = Some("k.pem".into());
        let e = from_toml("", &f).unwrap_err().to_string();
        assert!(e.contains("missing --certificate, --ca-cert"), "{e}");
        let c = from_toml("certificate = \"c.pem\"\nca_cert = \"ca.pem\"", &f).unwrap();
        assert_eq!(
            c.tls,
            Some(switch::tls::TlsFiles {
                private_key: "k.pem".into(),
                certificate: "c.pem".into(),
                ca_cert: "ca.pem".into()
            })
        );
    }

    #[test]
    fn errors_say_where_and_what() {
        let e = |text: &str, f: &RunFlags| from_toml(text, f).unwrap_err().to_string();
        assert_eq!(
            e("", &RunFlags::default()),
            "ports: no port given (use --port IFACE or [[port]] in the config file)"
        );
        assert!(e("", &flags(&["a,backend=foo"])).contains("unknown backend \"foo\""));
        assert!(e("", &flags(&["a,backend=xdp"]))
            .contains("(one of: auto, afxdp, afxdp-native, afxdp-generic, afpacket, tap)"));
        assert!(e("", &flags(&["a,speed=1"])).starts_with("--port a,speed=1: unknown option"));
        assert!(e("", &flags(&["a", "a"])).contains("port 2: a is given twice"));
        assert!(e("", &flags(&["averyveryverylongname"])).contains("1 to 15 characters"));
        assert_eq!(
            e("local = \"a\"\n", &flags(&["a"])),
            "t.toml: local: a is also a numbered port"
        );
        let mut f = flags(&["a"]);
        f.cpus = Some("7".into());
        assert_eq!(e("", &f), "--cpus: CPU 7 does not exist (this machine has CPUs 0-3)");
        f.cpus = Some("1,x".into());
        assert!(e("", &f).contains("\"x\" is not a CPU number"));
        f.cpus = Some("0-1".into());
        assert!(e("", &f).contains("2 CPUs for 1 worker(s)"));
        f.cpus = None;
        f.workers = Some(0);
        assert_eq!(e("", &f), "--workers: must be 1 to 64");
        assert!(e("workers = 0\n", &flags(&["a"])).starts_with("t.toml: workers"));
        assert!(e("dpid = \"xyz\"\n", &flags(&["a"]))
            .contains("dpid: datapath id \"xyz\" is not hexadecimal"));
        let mut f = flags(&["a"]);
        f.controllers = vec!["tcp:".into()];
        assert!(e("", &f).contains("controller tcp:"));
        f.controllers = vec!["udp:1.2.3.4".into()];
        assert!(e("", &f).contains("must start with tcp: or ssl:"));
    }

    #[test]
    fn flows_from_file_flags_and_toml_with_places() {
        let dir = std::env::temp_dir().join(format!("pg-flows-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("flows.txt");
        std::fs::write(&path, "# two\n\nin_port=1,actions=output:2\npriority=5,actions=drop\n")
            .unwrap();
        let mut f = flags(&["a"]);
        f.flows_file = Some(path.clone());
        f.flows = vec!["in_port=2,actions=output:1".into()];
        let c = from_toml("flows = [\"actions=normal\"]\n", &f).unwrap();
        let places: Vec<&str> = c.flows.iter().map(|(p, _)| p.as_str()).collect();
        let file_place = |n: usize| format!("{}:{n}", path.display());
        assert_eq!(
            places,
            vec![
                "t.toml: flows[0]",
                &file_place(3),
                &file_place(4),
                "--flow in_port=2,actions=output:1"
            ]
        );
        assert_eq!(c.flows[2].1.priority, 5);
        std::fs::write(&path, "in_port=1,actions=output:2\nin_port=1,tcp_dst=80,actions=drop\n")
            .unwrap();
        let e = from_toml("", &f).unwrap_err();
        assert_eq!(e.place, file_place(2));
        assert!(
            e.message.contains("prerequisite") || e.message.contains("PREREQ"),
            "{}",
            e.message
        );
        f.flows_file = None;
        f.flows = vec!["in_port=1,actions=outptu:2".into()];
        let e = from_toml("", &f).unwrap_err();
        assert!(e.to_string().starts_with("--flow in_port=1,actions=outptu:2: column 19"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn metrics_address_from_flag_or_file() {
        let c = from_toml("", &flags(&["a"])).unwrap();
        assert_eq!(c.metrics, None);
        let c = from_toml("metrics = \"127.0.0.1:9464\"\n", &flags(&["a"])).unwrap();
        assert_eq!(c.metrics, Some("127.0.0.1:9464".parse().unwrap()));
        let mut f = flags(&["a"]);
        f.metrics = Some("[::1]:9100".into());
        let c = from_toml("metrics = \"127.0.0.1:9464\"\n", &f).unwrap();
        assert_eq!(c.metrics, Some("[::1]:9100".parse().unwrap()));
        f.metrics = Some("localhost:9464".into());
        let e = from_toml("", &f).unwrap_err();
        assert_eq!(e.place, "--metrics");
        assert!(e.message.contains("\"localhost:9464\" is not an address"), "{e}");
        let e = from_toml("metrics = \"9464\"\n", &flags(&["a"])).unwrap_err();
        assert_eq!(e.place, "t.toml: metrics");
        assert!(e.message.contains("write IP:PORT"), "{e}");
    }

    #[test]
    fn controller_targets_as_ovs_writes_them() {
        for ok in ["tcp:10.0.0.1", "tcp:10.0.0.1:6653", "ssl:[::1]:6653", "tcp:::1"] {
            assert_eq!(check_target(ok, "tcp:", "ssl:"), Ok(()), "{ok}");
        }
        for ok in ["ptcp:", "ptcp:6653", "ptcp:6653:127.0.0.1", "pssl::10.0.0.1"] {
            assert_eq!(check_target(ok, "ptcp:", "pssl:"), Ok(()), "{ok}");
        }
        for bad in ["tcp:", "tcp:host", "tcp:1.2.3.4:0", "tcp:1.2.3.4:99999"] {
            assert!(check_target(bad, "tcp:", "ssl:").is_err(), "{bad}");
        }
        for bad in ["ptcp:x", "ptcp:6653:nohost", "tcp:6653"] {
            assert!(check_target(bad, "ptcp:", "pssl:").is_err(), "{bad}");
        }
    }

    #[test]
    fn bad_toml_names_file_line_and_column() {
        let dir = std::env::temp_dir().join(format!("pg-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("bad.toml");
        std::fs::write(&path, "workers = 2\nfail_mode = \"sometimes\"\n").unwrap();
        let f = RunFlags { config: Some(path.clone()), ..flags(&["a"]) };
        let e = RunConfig::load(&f, 4).unwrap_err();
        assert_eq!(e.place, format!("{}:2:13", path.display()));
        assert!(e.message.contains("sometimes"), "{}", e.message);
        std::fs::write(&path, "wrokers = 2\n").unwrap();
        let e = RunConfig::load(&f, 4).unwrap_err();
        assert_eq!(e.place, format!("{}:1:1", path.display()));
        assert!(e.message.contains("unknown field `wrokers`"), "{}", e.message);
        let missing = RunFlags { config: Some(dir.join("none.toml")), ..flags(&["a"]) };
        assert!(RunConfig::load(&missing, 4).unwrap_err().message.starts_with("cannot read"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
