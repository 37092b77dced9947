//! `peregrine bench study` and its experiments as single subcommands: the options, and
//! the launcher through which `bench::study` starts peregrine itself as a device under
//! test (in this process, as `peregrine run` would, with a private management socket;
//! a setup with meters or groups gets its meters, its groups and then its flows through
//! that socket, with `peregrine ctl`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use bench::dut::Setup;
use bench::report::results::ExperimentKind;
use bench::study::{self, Dut, Io, Launcher, Options};

use openflow::v13::flow_mod::{FlowMod, FlowModCommand};
use openflow::v13::group_mod::{GroupMod, GroupModCommand};
use openflow::v13::meter_mod::{MeterMod, MeterModCommand};

use runner::config::{BackendName, FailMode, FastPath, PortConfig, RunConfig};
use runner::run::Switch;

/// Options shared by `bench study` and the single experiments. Lists are comma
/// separated; what is not given comes from the preset (`--quick` or the full study).
#[derive(Clone, Debug, clap::Args)]
pub struct StudyArgs {
    /// The reduced study: few points, one short run each (minutes, not hours).
    #[arg(long)]
    pub quick: bool,
    /// Where results.json, report.md and the plots go (created if missing).
    #[arg(long, default_value = "bench-results")]
    pub out: PathBuf,
    /// Devices under test, in order.
    #[arg(long, value_delimiter = ',', value_parser = parse_dut)]
    pub dut: Vec<Dut>,
    /// Experiments to run (`bench study` only; default all).
    #[arg(long, value_delimiter = ',', value_parser = study::parse_experiment)]
    pub experiments: Vec<ExperimentKind>,
    /// Seconds of traffic per run.
    #[arg(long)]
    pub seconds: Option<f64>,
    /// Runs per point (median, min and max are reported).
    #[arg(long)]
    pub runs: Option<usize>,
    /// CPU of the generator and sink thread.
    #[arg(long, default_value_t = 0)]
    pub gen_cpu: usize,
    /// CPU of the device under test.
    #[arg(long, default_value_t = 1)]
    pub dut_cpu: usize,
    /// peregrine's worker counts: every peregrine device is measured at each (its series
    /// named `DEVICE ×N` when a count other than 1 is asked for). The first worker is on
    /// --dut-cpu, more on the CPUs left over (the device CPU when there are none).
    #[arg(long, value_delimiter = ',', default_value = "1")]
    pub dut_workers: Vec<usize>,
    /// Receive and transmit queues of every veth pair (default: the largest of
    /// --dut-workers, so each AF_XDP worker gets a queue of every port). The generator
    /// spreads its flows over them (AF_XDP generator only).
    #[arg(long)]
    pub queues: Option<u32>,
    /// How the generator and the sink reach the wire.
    #[arg(long, value_enum, default_value = "afxdp")]
    pub generator: GenIo,
    /// Where the kernel's receive work for the device's ports runs: on the device's CPU
    /// (`dut`: threaded NAPI pinned there, so each device has its workers' CPUs for all its
    /// work) or
    /// where the kernel puts it (`sender`: on veth, the sending side's CPU).
    #[arg(long, value_enum, default_value = "dut")]
    pub kernel_rx: KernelRx,
    /// Frame sizes (throughput vs size).
    #[arg(long, value_delimiter = ',')]
    pub sizes: Vec<usize>,
    /// Offered loads as fractions of each device's own 64-byte saturation rate.
    #[arg(long, value_delimiter = ',')]
    pub loads: Vec<f64>,
    /// Rule counts (table size); K and M suffixes allowed.
    #[arg(long, value_delimiter = ',', value_parser = crate::bench_cmd::parse_count)]
    pub table_sizes: Vec<usize>,
    /// Flow counts (flows under one wildcard rule); K and M suffixes allowed.
    #[arg(long, value_delimiter = ',', value_parser = crate::bench_cmd::parse_count)]
    pub flow_counts: Vec<usize>,
    /// Flow counts (random flows through a select group of 2 buckets); K and M suffixes
    /// allowed.
    #[arg(long, value_delimiter = ',', value_parser = crate::bench_cmd::parse_count)]
    pub group_flows: Vec<usize>,
    /// Meter rates in packets per second (a few flows sent flat out through one meter);
    /// K and M suffixes allowed.
    #[arg(long, value_delimiter = ',', value_parser = crate::bench_cmd::parse_count)]
    pub meter_rates: Vec<usize>,
    /// The meter's burst in milliseconds of its rate (default 10, 1 % of the rate; each
    /// run starts with it in the bucket).
    #[arg(long)]
    pub meter_burst_ms: Option<u64>,
    /// F2's rates in percent of the ceiling (fairness).
    #[arg(long, value_delimiter = ',')]
    pub fairness_f2: Vec<f64>,
    /// Worker counts (worker scaling).
    #[arg(long, value_delimiter = ',')]
    pub workers: Vec<usize>,
    /// Rules per batch (flow install); K and M suffixes allowed.
    #[arg(long, value_parser = crate::bench_cmd::parse_count)]
    pub install_rules: Option<usize>,
    /// Distinct flows in the plain traffic.
    #[arg(long)]
    pub flows: Option<usize>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum GenIo {
    Afxdp,
    Afpacket,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum KernelRx {
    Dut,
    Sender,
}

fn parse_dut(s: &str) -> Result<Dut, String> {
    s.parse()
}

impl StudyArgs {
    /// The study's options: the preset with what was given on the command line.
    pub fn options(&self, only: Option<ExperimentKind>) -> Result<Options, String> {
        let mut o = if self.quick { Options::quick() } else { Options::full() };
        if !self.dut.is_empty() {
            o.duts = self.dut.clone();
        }
        if let Some(k) = only {
            o.experiments = vec![k];
        } else if !self.experiments.is_empty() {
            o.experiments = self.experiments.clone();
        }
        if let Some(s) = self.seconds {
            if !(s > 0.0 && s <= 60.0) {
                return Err(format!("--seconds {s}: give 0 < seconds <= 60"));
            }
            o.seconds = s;
        }
        if let Some(r) = self.runs {
            if r == 0 {
                return Err("--runs 0: at least one run".into());
            }
            o.runs = r;
        }
        if self.gen_cpu == self.dut_cpu {
            return Err(format!(
                "--gen-cpu and --dut-cpu are both {}: the generator and the device need CPUs of their own",
                self.gen_cpu
            ));
        }
        o.gen_cpu = self.gen_cpu;
        o.dut_cpu = self.dut_cpu;
        if self.dut_workers.is_empty() || self.dut_workers.contains(&0) {
            return Err("--dut-workers: at least one worker".into());
        }
        // Each count once, in increasing order (series names stay unique).
        let mut counts = self.dut_workers.clone();
        counts.sort_unstable();
        counts.dedup();
        o.dut_workers = counts;
        if let Some(q) = self.queues {
            if !(1..=64).contains(&q) {
                return Err(format!("--queues {q}: give 1 to 64"));
            }
            if (q as usize) < o.max_workers() {
                return Err(format!(
                    "--queues {q}: fewer queues than workers ({}); every AF_XDP worker needs a queue of each port",
                    o.max_workers()
                ));
            }
            o.queues = q;
        }
        o.io = match self.generator {
            GenIo::Afxdp => Io::Afxdp,
            GenIo::Afpacket => Io::Afpacket,
        };
        o.steer = self.kernel_rx == KernelRx::Dut;
        set_list(&mut o.sizes, &self.sizes, |s| {
            (!(64..=1518).contains(s)).then(|| format!("--sizes {s}: frames are 64 to 1518 bytes"))
        })?;
        set_list(&mut o.loads, &self.loads, |l| {
            (!(*l > 0.0 && *l <= 10.0)).then(|| format!("--loads {l}: give fractions in (0, 10]"))
        })?;
        set_list(&mut o.table_sizes, &self.table_sizes, |&n| {
            (n == 0).then(|| "--table-sizes: a table holds at least 1 rule".into())
        })?;
        set_list(&mut o.flow_counts, &self.flow_counts, |&n| {
            (n == 0).then(|| "--flow-counts: at least 1 flow".into())
        })?;
        set_list(&mut o.group_flows, &self.group_flows, |&n| {
            (n == 0).then(|| "--group-flows: at least 1 flow".into())
        })?;
        if let Some(bad) = self.meter_rates.iter().find(|r| **r == 0 || **r > u32::MAX as usize) {
            return Err(format!("--meter-rates {bad}: give 1 to {} packets/s", u32::MAX));
        }
        if !self.meter_rates.is_empty() {
            o.meter_rates = self.meter_rates.iter().map(|&r| r as u64).collect();
        }
        if let Some(ms) = self.meter_burst_ms {
            if !(1..=1000).contains(&ms) {
                return Err(format!("--meter-burst-ms {ms}: give 1 to 1000 ms"));
            }
            o.meter_burst_ms = ms;
        }
        set_list(&mut o.fairness_f2, &self.fairness_f2, |f| {
            (!(*f > 0.0 && *f <= 100.0))
                .then(|| format!("--fairness-f2 {f}: give percents in (0, 100]"))
        })?;
        set_list(&mut o.workers, &self.workers, |&n| {
            (n == 0).then(|| "--workers: at least 1 worker".into())
        })?;
        if let Some(n) = self.install_rules {
            o.install_rules = n.max(1);
        }
        if let Some(n) = self.flows {
            o.flows = n.max(1);
        }
        o.ctl = std::env::current_exe().ok();
        Ok(o)
    }
}

/// Sets `into` to the values `given` (left as it is where none are given); the error
/// `fault` says of the first value it finds fault with, if any.
fn set_list<T: Clone>(
    into: &mut Vec<T>,
    given: &[T],
    fault: impl Fn(&T) -> Option<String>,
) -> Result<(), String> {
    if let Some(e) = given.iter().find_map(fault) {
        return Err(e);
    }
    if !given.is_empty() {
        *into = given.to_vec();
    }
    Ok(())
}

/// Runs the study (or the one experiment `only`) and writes the folder.
pub fn run(a: &StudyArgs, only: Option<ExperimentKind>) -> Result<(), String> {
    runner::run::require_root("bench study").map_err(|e| e.to_string())?;
    let opts = a.options(only)?;
    std::fs::create_dir_all(&a.out).map_err(|e| format!("{}: {e}", a.out.display()))?;
    eprintln!(
        "study: {} on {}; {}; {} s per run, {} runs per point; writing {}",
        opts.experiments.iter().map(|k| k.name()).collect::<Vec<_>>().join(", "),
        opts.duts.iter().map(|d| d.name()).collect::<Vec<_>>().join(", "),
        opts.pinning(),
        opts.seconds,
        opts.runs,
        a.out.display()
    );
    // Ctrl-C or a TERM ends the study between runs, with every namespace and process
    // it made removed and what was measured so far written.
    let stop = Arc::new(AtomicBool::new(false));
    {
        let flag = stop.clone();
        let _ = ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst));
    }
    let results = study::run(opts, &InProcess, &stop)?;
    bench::report::results::save(&results, &a.out.join("results.json"))?;
    println!("{}", a.out.join("results.json").display());
    for path in bench::report::write_report(&a.out)? {
        println!("{}", path.display());
    }
    if stop.load(Ordering::SeqCst) {
        return Err(format!(
            "interrupted; the experiments finished before are in {}",
            a.out.display()
        ));
    }
    Ok(())
}

/// Starts peregrine in this process.
struct InProcess;

/// A started peregrine and its management socket (removed on drop, after the switch).
struct Started {
    switch: Option<Switch>,
    mgmt: PathBuf,
}

impl study::Switch for Started {
    fn openflow_target(&self) -> Option<String> {
        Some(format!("unix:{}", self.mgmt.display()))
    }
}

impl Drop for Started {
    fn drop(&mut self) {
        if let Some(line) = self.switch.as_ref().and_then(Switch::fast_path_summary) {
            eprintln!("  {line}");
        }
        drop(self.switch.take());
        let _ = std::fs::remove_file(&self.mgmt);
    }
}

impl Launcher for InProcess {
    fn start(
        &self,
        backend: &str,
        setup: &Setup,
        workers: usize,
        cpus: &[usize],
    ) -> Result<Box<dyn study::Switch>, String> {
        let backend_name = backend;
        let (backend, fast_path) = match backend {
            "afxdp+xdp" | "afxdp+xdp-exact" | "afxdp+xdp-normal" => {
                (BackendName::Afxdp, FastPath::Xdp)
            }
            "afxdp-generic+xdp" => (BackendName::AfxdpGeneric, FastPath::Xdp),
            "afxdp" => (BackendName::Afxdp, FastPath::Off),
            "afxdp-generic" => (BackendName::AfxdpGeneric, FastPath::Off),
            "afpacket" => (BackendName::Afpacket, FastPath::Off),
            other => return Err(format!("no peregrine backend `{other}`")),
        };
        let ports = setup
            .hosts()
            .iter()
            .map(|h| PortConfig { name: h.port.clone(), backend, ofport: None })
            .collect();
        // The learning switch: standalone, its NORMAL flow only.
        let learning = backend_name == "afxdp+xdp-normal";
        let load = loadout(setup, learning)?;
        // Flows given at start are installed before anything could add a meter or a
        // group, so with either every flow waits for them and goes in over the
        // management socket.
        let over_socket = !load.meters.is_empty() || !load.groups.is_empty();
        let (at_start, later) =
            if over_socket { (Vec::new(), load.flows) } else { (load.flows, Vec::new()) };
        let name = format!("{}pg", setup.sink.ns);
        let mgmt = std::env::temp_dir().join(format!("{name}.mgmt"));
        let cfg = RunConfig {
            flows: at_start,
            workers,
            cpus: cpus.to_vec(),
            fail_mode: if learning { FailMode::Standalone } else { FailMode::Secure },
            mgmt: Some(mgmt.clone()),
            name,
            fast_path,
            fast_path_exact: backend_name == "afxdp+xdp-exact",
            ..RunConfig::with_ports(ports)
        };
        let switch = Switch::start(&cfg).map_err(|e| format!("{e:#}"))?;
        if fast_path == FastPath::Xdp && !switch.fast_path() {
            return Err("the XDP fast path did not load (see above)".into());
        }
        let started = Started { switch: Some(switch), mgmt };
        if over_socket {
            for (meter, _) in &load.meters {
                ctl(&started.mgmt, "add-meter", meter)?;
            }
            let groups: Vec<&str> = load.groups.iter().map(|(l, _)| l.as_str()).collect();
            let flows: Vec<&str> = later.iter().map(|(l, _)| l.as_str()).collect();
            install(&started.mgmt, "add-groups", &groups)?;
            install(&started.mgmt, "add-flows", &flows)?;
        }
        Ok(Box::new(started))
    }
}

/// Lines of ovs-ofctl text, each with what it parsed as.
type Checked<T> = Vec<(String, T)>;

/// Each of `lines` with what `parse` makes of it; the first error, after the line.
fn check<T, E: std::fmt::Display>(
    lines: impl IntoIterator<Item = String>,
    parse: impl Fn(&str) -> Result<T, E>,
) -> Result<Checked<T>, String> {
    lines
        .into_iter()
        .map(|l| {
            let parsed = parse(&l).map_err(|e| format!("{l}: {e}"))?;
            Ok((l, parsed))
        })
        .collect()
}

/// What a device is to hold, each line checked and with what it parsed as.
#[derive(Debug, Default, PartialEq)]
struct Load {
    meters: Checked<MeterMod>,
    groups: Checked<GroupMod>,
    flows: Checked<FlowMod>,
}

/// The meters, groups and flows a device of `setup` is to hold (none for the learning
/// switch).
fn loadout(setup: &Setup, learning: bool) -> Result<Load, String> {
    if learning {
        return Ok(Load::default());
    }
    let meters = check(setup.meters.iter().cloned(), |m| {
        openflow::text::parse_meter_mod(m, MeterModCommand::Add)
    })?;
    let groups = check(setup.groups.iter().cloned(), |g| {
        openflow::text::parse_group_mod(g, GroupModCommand::Add)
    })?;
    let flows =
        check(setup.openflow(), |f| openflow::text::parse_flow_mod(f, FlowModCommand::Add))?;
    Ok(Load { meters, groups, flows })
}

/// Sends `lines` to the switch whose management socket is `mgmt` with `peregrine ctl
/// -O OpenFlow13 COMMAND` (`add-groups` or `add-flows`, from a file next to the
/// socket), failing with what it printed.
fn install(mgmt: &Path, command: &str, lines: &[&str]) -> Result<(), String> {
    if lines.is_empty() {
        return Ok(());
    }
    let file = mgmt.with_extension(format!("{command}.txt"));
    let mut text = lines.join("\n");
    text.push('\n');
    std::fs::write(&file, text).map_err(|e| format!("{}: {e}", file.display()))?;
    let done = ctl(mgmt, command, &file.display().to_string());
    let _ = std::fs::remove_file(&file);
    done
}

/// Runs `peregrine ctl -O OpenFlow13 COMMAND unix:MGMT ARG` (`add-meter` with one meter,
/// `add-groups` or `add-flows` with a file) against the switch whose management socket
/// is `mgmt`, failing with what it printed.
fn ctl(mgmt: &Path, command: &str, arg: &str) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| format!("the peregrine binary: {e}"))?;
    let target = format!("unix:{}", mgmt.display());
    let out = Command::new(exe)
        .args(ctl_args(command, &target, arg))
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("peregrine ctl: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        let said = [&out.stdout, &out.stderr]
            .iter()
            .map(|b| String::from_utf8_lossy(b).trim().to_string())
            .filter(|t| !t.is_empty())
            .collect::<Vec<_>>()
            .join("; ");
        Err(format!("`peregrine ctl {command}` failed: {said}"))
    }
}

/// The arguments of `peregrine` for `ctl -O OpenFlow13 COMMAND TARGET ARG`.
fn ctl_args(command: &str, target: &str, arg: &str) -> Vec<String> {
    ["ctl", "-O", "OpenFlow13", command, target, arg].iter().map(|s| s.to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        a: StudyArgs,
    }

    fn args(v: &[&str]) -> StudyArgs {
        let mut all = vec!["x"];
        all.extend_from_slice(v);
        Cli::try_parse_from(all).unwrap().a
    }

    /// The options of `v` for the study (or the one experiment `only`), which must be
    /// accepted.
    fn opts(v: &[&str], only: Option<ExperimentKind>) -> Options {
        args(v).options(only).unwrap()
    }

    /// Why the options of `v` for the study are refused.
    fn refusal(v: &[&str]) -> String {
        args(v).options(None).unwrap_err()
    }

    #[test]
    fn options_take_the_preset_and_the_overrides() {
        let o = opts(&["--quick", "--dut", "bridge,router", "--runs", "2"], None);
        assert_eq!(o.duts, [Dut::Bridge, Dut::Router]);
        assert_eq!(o.runs, 2);
        assert_eq!(o.sizes, Options::quick().sizes);
        let o = opts(&["--table-sizes", "1,8K,1M"], Some(ExperimentKind::TableSize));
        assert_eq!(o.table_sizes, [1, 8_000, 1_000_000]);
        assert_eq!(o.experiments, [ExperimentKind::TableSize]);
        assert_eq!(o.runs, Options::full().runs);
        // One worker and one queue unless asked.
        assert_eq!(o.dut_workers, [1]);
        assert_eq!(o.bed_queues(), 1);
    }

    #[test]
    fn worker_counts_give_the_queues_and_label_the_series() {
        let o = opts(
            &["--dut", "peregrine-afxdp,bridge", "--dut-workers", "1,2"],
            Some(ExperimentKind::ThroughputVsSize),
        );
        assert_eq!(o.dut_workers, [1, 2]);
        assert_eq!(o.bed_queues(), 2);
        assert_eq!(o.worker_counts(Dut::PeregrineAfxdp), [Some(1), Some(2)]);
        assert_eq!(o.worker_counts(Dut::Bridge), [None]);
        assert_eq!(study::series_label(Dut::PeregrineAfxdp, Some(2), &o), "peregrine-afxdp ×2");
        assert_eq!(study::series_label(Dut::PeregrineAfxdp, Some(1), &o), "peregrine-afxdp ×1");
        assert_eq!(study::series_label(Dut::Bridge, None, &o), "bridge");
        // One worker over two queues: explicit queues.
        let o = opts(&["--queues", "2"], None);
        assert_eq!((o.bed_queues(), o.max_workers()), (2, 1));
        assert_eq!(study::series_label(Dut::PeregrineAfxdp, Some(1), &o), "peregrine-afxdp");
        let e = refusal(&["--dut-workers", "2", "--queues", "1"]);
        assert!(e.contains("fewer queues than workers"), "{e}");
        let e = refusal(&["--dut-workers", "1,0"]);
        assert!(e.contains("--dut-workers"), "{e}");
        let e = refusal(&["--queues", "0"]);
        assert!(e.contains("--queues 0"), "{e}");
    }

    #[test]
    fn group_flows_take_suffixes_and_the_subcommand_runs_only_its_experiment() {
        let o = opts(&["--quick", "--group-flows", "64,128K"], Some(ExperimentKind::SelectGroup));
        assert_eq!(o.group_flows, [64, 128_000]);
        assert_eq!(o.experiments, [ExperimentKind::SelectGroup]);
        assert_eq!(opts(&[], None).group_flows, [64, 128_000]);
        let o = opts(&["--experiments", "select-group,flow_count"], None);
        assert_eq!(o.experiments, [ExperimentKind::SelectGroup, ExperimentKind::FlowCount]);
        let e = refusal(&["--group-flows", "64,0"]);
        assert!(e.contains("--group-flows"), "{e}");
    }

    fn host(i: u8) -> bench::topo::Host {
        bench::topo::Host {
            ns: format!("h{i}"),
            port: format!("p{i}"),
            ip: format!("10.9.0.{i}"),
            mac: format!("02:00:00:00:00:0{i}"),
        }
    }

    #[test]
    fn the_select_group_and_its_rule_parse_as_peregrine_takes_them() {
        use bench::study::rules;
        let (a, b) = (host(1), host(2));
        let mut setup = Setup::pair(&a, &b);
        setup.groups = vec![rules::select_group(rules::GROUP, &rules::BUCKET_MACS, 2)];
        setup.flows = Some(vec![rules::covering_group(b.ip.parse().unwrap(), 1, rules::GROUP)]);
        let Load { meters, groups, flows } = loadout(&setup, false).unwrap();
        assert!(meters.is_empty());
        assert_eq!(groups.len(), 1);
        let gm = &groups[0].1;
        assert_eq!(gm.group_id, rules::GROUP);
        assert_eq!(gm.group_type, openflow::v13::group_mod::GroupType::Select);
        assert_eq!(gm.buckets.len(), 2);
        assert_eq!(flows.len(), 1);
        assert_eq!(flows[0].0, setup.openflow()[0]);
        assert_eq!(loadout(&setup, true).unwrap(), Load::default());
        setup.groups = vec!["group_id=1,type=sideways".into()];
        let e = loadout(&setup, false).unwrap_err();
        assert!(e.contains("sideways"), "{e}");
        // Without groups the default flows are what the device holds.
        let load = loadout(&Setup::pair(&a, &b), false).unwrap();
        assert!(load.meters.is_empty() && load.groups.is_empty());
        assert_eq!(load.flows.len(), 2);
    }

    #[test]
    fn the_meter_and_its_rule_parse_as_peregrine_takes_them() {
        use bench::study::{meter, rules};
        use openflow::v13::meter_mod::{meter_flags, MeterBand};
        let (a, b) = (host(1), host(2));
        let mut setup = Setup::pair(&a, &b);
        setup.meters = vec![rules::drop_meter(rules::METER, 100_000, meter::burst(100_000, 2))];
        setup.flows =
            Some(vec![rules::covering_metered(b.ip.parse().unwrap(), 1, rules::METER, 2)]);
        let load = loadout(&setup, false).unwrap();
        assert_eq!(load.meters.len(), 1);
        let mm = &load.meters[0].1;
        assert_eq!(mm.meter_id, rules::METER);
        assert_eq!(mm.flags, meter_flags::PKTPS | meter_flags::BURST);
        assert_eq!(mm.bands, [MeterBand::Drop { rate: 100_000, burst_size: 200 }]);
        assert!(load.groups.is_empty());
        assert_eq!(load.flows.len(), 1);
        assert_eq!(load.flows[0].0, setup.openflow()[0]);
        assert_eq!(loadout(&setup, true).unwrap(), Load::default());
        setup.meters = vec!["meter=1,pktps,bands=type=sideways,rate=1".into()];
        let e = loadout(&setup, false).unwrap_err();
        assert!(e.contains("sideways"), "{e}");
    }

    #[test]
    fn meter_rates_take_suffixes_and_the_subcommand_runs_only_its_experiment() {
        let o = opts(&["--quick", "--meter-rates", "100K,1M,5000"], Some(ExperimentKind::Meter));
        assert_eq!(o.meter_rates, [100_000, 1_000_000, 5_000]);
        assert_eq!(o.experiments, [ExperimentKind::Meter]);
        assert_eq!(opts(&["--quick"], None).meter_rates, [100_000]);
        assert_eq!(opts(&[], None).meter_rates, [100_000, 400_000]);
        let o = opts(&["--experiments", "meter"], None);
        assert_eq!(o.experiments, [ExperimentKind::Meter]);
        let e = refusal(&["--meter-rates", "100K,0"]);
        assert!(e.contains("--meter-rates 0"), "{e}");
        let e = refusal(&["--meter-rates", "5000M"]);
        assert!(e.contains("5000000000"), "{e}");
        assert!(Cli::try_parse_from(["x", "--meter-rates", "fast"]).is_err());
        assert_eq!(opts(&[], None).meter_burst_ms, bench::study::meter::BURST_MS);
        let o = opts(&["--meter-burst-ms", "2"], None);
        assert_eq!(o.meter_burst_ms, 2);
        let e = refusal(&["--meter-burst-ms", "0"]);
        assert!(e.contains("--meter-burst-ms 0"), "{e}");
    }

    #[test]
    fn meters_groups_and_flows_go_in_over_openflow_13() {
        let meter = "meter=1,pktps,burst,bands=type=drop,rate=10,burst_size=1";
        assert_eq!(
            ctl_args("add-meter", "unix:/tmp/x.mgmt", meter),
            ["ctl", "-O", "OpenFlow13", "add-meter", "unix:/tmp/x.mgmt", meter]
        );
        assert_eq!(
            ctl_args("add-groups", "unix:/tmp/x.mgmt", "/tmp/x.add-groups.txt"),
            ["ctl", "-O", "OpenFlow13", "add-groups", "unix:/tmp/x.mgmt", "/tmp/x.add-groups.txt"]
        );
    }

    #[test]
    fn bad_options_say_what_is_wrong() {
        let e = refusal(&["--sizes", "64,9000"]);
        assert!(e.contains("9000") && e.contains("1518"), "{e}");
        let e = refusal(&["--gen-cpu", "1"]);
        assert!(e.contains("both 1"), "{e}");
        let e = refusal(&["--runs", "0"]);
        assert!(e.contains("--runs"), "{e}");
        let e = refusal(&["--fairness-f2", "120"]);
        assert!(e.contains("120"), "{e}");
        let mut all = vec!["x", "--dut", "switchy"];
        let r = Cli::try_parse_from(all.drain(..));
        assert!(r.is_err());
        let r = Cli::try_parse_from(["x", "--experiments", "speed"]);
        assert!(r.is_err());
    }
}
