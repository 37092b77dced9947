//! `peregrine bench …`: argument parsing for the benchmark harness in the `bench` crate.

use bench::datapath_bench::{self, Options};
use bench::report::results::ExperimentKind;
use bench::workload::RuleKind;
use clap::{Args, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Subcommand)]
pub enum BenchCommand {
    /// The datapath on in-memory ports: Mpps, ns/packet, cache hit rate, bytes per rule,
    /// build time, forwarding under rule churn.
    Datapath(DatapathArgs),
    /// The benchmark study: every experiment below against every device under test
    /// (peregrine, the Linux bridge, the Linux router, Open vSwitch), written to
    /// --out as results.json, report.md and SVG plots (needs root).
    Study(crate::bench_study::StudyArgs),
    /// Study experiment: throughput vs frame size.
    Throughput(crate::bench_study::StudyArgs),
    /// Study experiment: throughput, loss and latency vs offered load at 64 B.
    Load(crate::bench_study::StudyArgs),
    /// Study experiment: per-packet processing time from idle latency.
    PacketTime(crate::bench_study::StudyArgs),
    /// Study experiment: throughput vs table size (1 to 1M rules).
    TableSize(crate::bench_study::StudyArgs),
    /// Study experiment: exact vs wildcard vs mixed rules.
    ExactWildcard(crate::bench_study::StudyArgs),
    /// Study experiment: throughput vs the number of random flows one wildcard rule
    /// covers (1 to 1M).
    FlowCount(crate::bench_study::StudyArgs),
    /// Study experiment: throughput of random flows through an OpenFlow select group of
    /// 2 buckets (the bridge and the router forward them as usual, the baseline).
    SelectGroup(crate::bench_study::StudyArgs),
    /// Study experiment: a few flows sent flat out through one OpenFlow meter, the
    /// forwarded rate against the meter's (OpenFlow devices only).
    Meter(crate::bench_study::StudyArgs),
    /// Study experiment: fairness between two flows, one and two input ports.
    Fairness(crate::bench_study::StudyArgs),
    /// Study experiment: worker scaling of the in-memory datapath.
    Workers(crate::bench_study::StudyArgs),
    /// Study experiment: latency of a probe flow beside bulk traffic.
    Probe(crate::bench_study::StudyArgs),
    /// Study experiment: RFC 2544 zero-loss throughput.
    ZeroLoss(crate::bench_study::StudyArgs),
    /// Study experiment: flow installation rate through OpenFlow.
    FlowInstall(crate::bench_study::StudyArgs),
    /// Study experiment: forwarding while rules change.
    Churn(crate::bench_study::StudyArgs),
    /// Re-renders a study folder: reads DIR/results.json, writes DIR/report.md and the
    /// SVG figures next to it, and prints the paths written.
    Report {
        /// The study's folder.
        dir: PathBuf,
    },
}

#[derive(Clone, Copy, ValueEnum)]
pub enum Kind {
    Exact,
    Wildcard,
    Prefix,
    Mix,
}

#[derive(Args)]
pub struct DatapathArgs {
    /// Number of rules (suffixes K and M allowed: 100K, 1M).
    #[arg(long, default_value = "1", value_parser = parse_count)]
    rules: usize,
    /// Rule shape.
    #[arg(long, value_enum, default_value = "exact")]
    kind: Kind,
    /// Distinct masks for wildcard and mix rules.
    #[arg(long, default_value_t = 100)]
    masks: usize,
    /// Share of exact rules in a mix, in percent.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u8).range(0..=100))]
    exact_percent: u8,
    /// Number of distinct flows in the traffic (K and M allowed).
    #[arg(long, default_value = "1", value_parser = parse_count)]
    flows: usize,
    /// Forwarding threads.
    #[arg(long, default_value_t = 1)]
    workers: usize,
    /// CPUs to pin workers to, comma separated (the churn writer takes the next one).
    #[arg(long, value_delimiter = ',')]
    cpus: Vec<usize>,
    /// Frame size in bytes, 64..=1518.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u16).range(64..=1518))]
    size: u16,
    /// Length of each phase in seconds.
    #[arg(long, default_value_t = 3.0)]
    seconds: f64,
    /// Rule updates per second in a second, churn phase (0: none).
    #[arg(long, default_value = "0", value_parser = parse_count)]
    churn: usize,
    /// Tables the packet walks (rules in the last; the others goto the next).
    #[arg(long, default_value_t = 1)]
    tables: u8,
    /// Exact-match cache entries per worker (0: off). The datapath bypasses the cache
    /// while every table is a single hash probe, so it costs nothing there.
    #[arg(long, default_value = "64K", value_parser = parse_count)]
    cache: usize,
    /// Seed of the workload generator.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Write the result as JSON to this file.
    #[arg(long)]
    json: Option<PathBuf>,
}

/// A count with an optional K (×1000) or M (×1000000) suffix.
pub(crate) fn parse_count(s: &str) -> Result<usize, String> {
    let (num, mul) = match s.chars().last() {
        Some('k' | 'K') => (&s[..s.len() - 1], 1_000),
        Some('m' | 'M') => (&s[..s.len() - 1], 1_000_000),
        _ => (s, 1),
    };
    num.parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(mul))
        .ok_or_else(|| format!("`{s}` is not a count (like 1000, 100K or 1M)"))
}

/// The study of experiment `kind` alone.
fn only(a: &crate::bench_study::StudyArgs, kind: ExperimentKind) -> Result<(), String> {
    crate::bench_study::run(a, Some(kind))
}

pub fn run(cmd: BenchCommand) -> Result<(), String> {
    match cmd {
        BenchCommand::Study(a) => crate::bench_study::run(&a, None),
        BenchCommand::Throughput(a) => only(&a, ExperimentKind::ThroughputVsSize),
        BenchCommand::Load(a) => only(&a, ExperimentKind::Load),
        BenchCommand::PacketTime(a) => only(&a, ExperimentKind::PacketTime),
        BenchCommand::TableSize(a) => only(&a, ExperimentKind::TableSize),
        BenchCommand::ExactWildcard(a) => only(&a, ExperimentKind::ExactVsWildcard),
        BenchCommand::FlowCount(a) => only(&a, ExperimentKind::FlowCount),
        BenchCommand::SelectGroup(a) => only(&a, ExperimentKind::SelectGroup),
        BenchCommand::Meter(a) => only(&a, ExperimentKind::Meter),
        BenchCommand::Fairness(a) => only(&a, ExperimentKind::Fairness),
        BenchCommand::Workers(a) => only(&a, ExperimentKind::WorkerScaling),
        BenchCommand::Probe(a) => only(&a, ExperimentKind::LatencyProbe),
        BenchCommand::ZeroLoss(a) => only(&a, ExperimentKind::ZeroLoss),
        BenchCommand::FlowInstall(a) => only(&a, ExperimentKind::FlowInstall),
        BenchCommand::Churn(a) => only(&a, ExperimentKind::Churn),
        BenchCommand::Report { dir } => {
            for path in bench::report::write_report(&dir)? {
                println!("{}", path.display());
            }
            Ok(())
        }
        BenchCommand::Datapath(a) => {
            let kind = match a.kind {
                Kind::Exact => RuleKind::Exact,
                Kind::Wildcard => RuleKind::Wildcard { masks: a.masks },
                Kind::Prefix => RuleKind::Prefix,
                Kind::Mix => RuleKind::Mix { exact_percent: a.exact_percent, masks: a.masks },
            };
            let opts = Options {
                rules: a.rules,
                kind,
                flows: a.flows,
                workers: a.workers,
                cpus: a.cpus,
                size: a.size as usize,
                seconds: a.seconds,
                churn: a.churn as u64,
                tables: a.tables,
                cache: a.cache,
                seed: a.seed,
            };
            let report = datapath_bench::run(&opts)?;
            print!("{}", datapath_bench::format_report(&report));
            if let Some(path) = a.json {
                let json = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
                std::fs::write(&path, json + "\n")
                    .map_err(|e| format!("{}: {e}", path.display()))?;
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_take_suffixes_and_reject_junk() {
        assert_eq!(parse_count("100K"), Ok(100_000));
        assert_eq!(parse_count("1M"), Ok(1_000_000));
        assert_eq!(parse_count("42"), Ok(42));
        assert!(parse_count("1.5M").unwrap_err().contains("1.5M"));
        assert!(parse_count("M").is_err());
        assert!(parse_count("99999999999999999999M").is_err());
    }

    #[test]
    fn select_group_and_meter_are_subcommands_of_their_own() {
        use clap::Parser;
        #[derive(Parser)]
        struct Cli {
            #[command(subcommand)]
            cmd: BenchCommand,
        }
        let cli = Cli::try_parse_from(["bench", "select-group", "--group-flows", "64,1K"]);
        match cli.map(|c| c.cmd) {
            Ok(BenchCommand::SelectGroup(a)) => assert_eq!(a.group_flows, [64, 1_000]),
            _ => panic!("`select-group` is not the select-group experiment"),
        }
        let cli = Cli::try_parse_from(["bench", "meter", "--meter-rates", "100K,400K"]);
        match cli.map(|c| c.cmd) {
            Ok(BenchCommand::Meter(a)) => assert_eq!(a.meter_rates, [100_000, 400_000]),
            _ => panic!("`meter` is not the meter experiment"),
        }
    }

    #[test]
    fn report_renders_a_study_folder_and_names_a_missing_file() {
        let dir =
            std::env::temp_dir().join(format!("peregrine-bench-report-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let e = run(BenchCommand::Report { dir: dir.clone() }).unwrap_err();
        assert!(e.contains("results.json") && e.contains("cannot read"), "{e}");
        let fixture =
            concat!(env!("CARGO_MANIFEST_DIR"), "/../bench/tests/data/results_fixture.json");
        std::fs::copy(fixture, dir.join("results.json")).unwrap();
        assert_eq!(run(BenchCommand::Report { dir: dir.clone() }), Ok(()));
        let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
        assert!(report.starts_with("# Benchmark study"), "{report}");
        assert!(dir.join("throughput_vs_size.svg").exists());
    }
}
