//! The study report: the results document, the markdown and the SVG figures rendered from
//! a recorded document (`tests/data/results_fixture.json`).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use bench::report::{self, ExperimentKind, Results};

fn fixture_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/results_fixture.json")
}

fn fixture() -> Results {
    report::load(&fixture_path()).expect("fixture loads")
}

/// A fresh empty folder under the system's temporary folder, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> TempDir {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("bench-report-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The lines of `text` that start with `|`.
fn table_lines(text: &str) -> Vec<&str> {
    text.lines().filter(|l| l.starts_with('|')).collect()
}

#[test]
fn markdown_puts_devices_side_by_side() {
    let md = report::render_markdown(&fixture());
    assert!(md.starts_with("# Benchmark study\n\n"), "{md}");
    for line in [
        "- Machine: Example CPU @ 2.00GHz, 2 cores, Linux 6.1.0-test",
        "- Pinning: generator CPU 0, DUT CPU 1",
        "- Started: 2026-11-22T23:26:23Z",
        "- Schema: 1",
        "## Throughput vs frame size (`throughput_vs_size`)",
        "3 runs of 3 s per point.",
        "Plots: `throughput_vs_size.svg`",
        "Plots: `throughput_vs_load.svg`, `latency_vs_load.svg`",
        "Plots: `table_size.svg`",
        "Plots: `fairness.svg`",
        "Plots: `worker_scaling.svg`",
        "† generator-bound (within 5% of the ceiling): a floor, not a measurement: peregrine-afxdp at 1500 B.",
        "Jain's fairness index (over per-flow forwarded (Mpps)): bridge 0.800.",
    ] {
        assert!(md.lines().any(|l| l == line), "missing {line:?} in\n{md}");
    }
    let tables = table_lines(&md);
    // One table per metric, one column per device that has it.
    assert_eq!(
        tables[..12],
        [
            "| frame size (B) | ceiling | peregrine-afxdp | bridge |",
            "|---:|---:|---:|---:|",
            "| 64 | 2.00 (1.90–2.10) | 1.50 (1.40–1.60) | 0.900 (0.850–0.950) |",
            "| 1500 | 0.800 (0.800–0.800) | 0.780 (0.770–0.790) † | – |",
            "| frame size (B) | peregrine-afxdp | bridge |",
            "|---:|---:|---:|",
            "| 64 | 2.00 (1.90–2.10) | 2.00 (1.90–2.10) |",
            "| 1500 | 0.800 (0.800–0.800) | – |",
            "| frame size (B) | peregrine-afxdp | bridge |",
            "|---:|---:|---:|",
            "| 64 | 25.0% (20.0–30.0%) | 55.0% (50.0–60.0%) |",
            "| 1500 | 2.50% (1.25–3.75%) | – |",
        ]
    );
    for heading in
        ["Forwarded (Mpps):", "Offered (Mpps):", "Loss:", "Latency (µs):", "CPU (ns/pkt):"]
    {
        assert!(md.lines().any(|l| l == heading), "missing {heading:?} in\n{md}");
    }
    assert_eq!(
        tables[12..20],
        [
            "| offered load (% of saturation) | peregrine-afxdp |",
            "|---:|---:|",
            "| 0.500 | 0.500 |",
            "| 1 | 0.990 |",
            "| offered load (% of saturation) | peregrine-afxdp |",
            "|---:|---:|",
            "| 0.500 | 12.0 |",
            "| 1 | 25.5 |",
        ]
    );
    assert_eq!(
        tables[20..24],
        [
            "| rules | peregrine-afxdp | ovs |",
            "|---:|---:|---:|",
            "| 1000 | 1.20 (1.10–1.30) | 1.10 (1.00–1.20) |",
            "| 1000000 | 1.00 (0.900–1.10) | 0.700 (0.600–0.800) |",
        ]
    );
    assert_eq!(
        tables[28..],
        [
            "| workers | peregrine-afxdp |",
            "|---:|---:|",
            "| 1 | 1.00 |",
            "| 2 | 1.80 |",
            "| workers | peregrine-afxdp |",
            "|---:|---:|",
            "| 1 | 950 |",
            "| 2 | 1010 |",
        ]
    );
}

#[test]
fn only_rates_within_five_percent_of_the_ceiling_are_marked() {
    let md = report::render_markdown(&fixture());
    assert_eq!(md.matches(" † |").count(), 1, "{md}");
}

/// The text of `dir/name`, checked to be one SVG document.
fn svg(dir: &Path, name: &str) -> String {
    let text = std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(text.trim_start().starts_with("<svg"), "{name}: {}", &text[..80.min(text.len())]);
    assert!(text.trim_end().ends_with("</svg>"), "{name} is not closed");
    assert_eq!(text.matches("<svg").count(), 1, "{name}");
    text
}

#[test]
fn plots_are_svg_with_series_and_axis_labels() {
    let dir = TempDir::new();
    let results = fixture();
    let written = report::render_plots(&results, &dir.0).expect("plots");
    let names: Vec<String> =
        written.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
    assert_eq!(
        names,
        [
            "throughput_vs_size.svg",
            "throughput_vs_load.svg",
            "latency_vs_load.svg",
            "table_size.svg",
            "fairness.svg",
            "worker_scaling.svg",
        ]
    );
    let expect: [(&str, &[&str]); 6] = [
        (
            "throughput_vs_size.svg",
            &[
                "ceiling (no DUT)",
                "peregrine-afxdp",
                "bridge",
                "frame size (B)",
                "forwarded (Mpps)",
                "forwarded (Gbit/s of frames)",
            ],
        ),
        (
            "throughput_vs_load.svg",
            &["peregrine-afxdp", "offered load (Mpps)", "forwarded (Mpps)", "no loss"],
        ),
        ("latency_vs_load.svg", &["peregrine-afxdp", "offered load (Mpps)", "latency (µs)"]),
        (
            "table_size.svg",
            &["peregrine-afxdp", "ovs", "rules", "forwarded (Mpps)", "\n1K\n", "\n1M\n"],
        ),
        ("fairness.svg", &["bridge", "flow", "Jain&apos;s index bridge 0.800"]),
        ("worker_scaling.svg", &["peregrine-afxdp", "workers", "forwarded (Mpps)"]),
    ];
    for (name, needles) in expect {
        let text = svg(&dir.0, name);
        for needle in needles {
            assert!(text.contains(needle), "{name} lacks {needle:?}");
        }
    }
    assert!(!svg(&dir.0, "throughput_vs_load.svg").contains("bridge"));
    assert!(!svg(&dir.0, "latency_vs_load.svg").contains("no loss"));
    // Whole numbers of workers: no fractional tick labels.
    assert!(!svg(&dir.0, "worker_scaling.svg").contains("\n1.50\n"));
}

#[test]
fn write_report_writes_markdown_and_figures_next_to_the_results() {
    let dir = TempDir::new();
    std::fs::copy(fixture_path(), dir.0.join("results.json")).unwrap();
    let written = report::write_report(&dir.0).expect("report");
    assert_eq!(written[0], dir.0.join("report.md"));
    assert_eq!(written.len(), 7);
    let md = std::fs::read_to_string(dir.0.join("report.md")).unwrap();
    assert_eq!(md, report::render_markdown(&fixture()));
    for path in &written[1..] {
        assert!(path.exists(), "{}", path.display());
    }
}

#[test]
fn results_round_trip_through_a_file() {
    let dir = TempDir::new();
    let mut results = fixture();
    results.experiments[0].series[1].points[0].cpu_ns_per_pkt =
        report::Summary::of(&[100.0, 120.0, 110.0]);
    let path = dir.0.join("results.json");
    report::save(&results, &path).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("\n  \"schema\": 1,\n"), "not pretty: {text}");
    assert_eq!(report::load(&path).unwrap(), results);
}

#[test]
fn a_new_study_describes_this_machine() {
    let results = Results::new("generator CPU 0");
    assert_eq!(results.schema, report::SCHEMA_VERSION);
    assert!(results.machine.cores >= 1);
    assert!(!results.machine.kernel.is_empty());
    assert_eq!(results.started.len(), "2026-11-22T23:26:23Z".len());
    assert!(results.experiments.is_empty());
    assert_eq!(report::plot::plan(&results).len(), 0, "no experiments, no figures");
}

#[test]
fn a_second_experiment_of_a_kind_gets_numbered_files() {
    let mut results = fixture();
    let again = results.experiments[2].clone();
    assert_eq!(again.kind, ExperimentKind::TableSize);
    results.experiments.push(again);
    let plan = report::plot::plan(&results);
    assert_eq!(plan[2][0].file, "table_size.svg");
    assert_eq!(plan[5][0].file, "table_size_2.svg");
}

#[test]
fn load_errors_name_the_file_and_the_problem() {
    let dir = TempDir::new();
    let missing = dir.0.join("nothing.json");
    let e = report::load(&missing).unwrap_err();
    assert!(e.starts_with(&missing.display().to_string()), "{e}");
    assert!(e.contains("cannot read"), "{e}");

    // A file `name` holding `text`, and the error of loading it.
    let load_written = |name: &str, text: &str| {
        let path = dir.0.join(name);
        std::fs::write(&path, text).unwrap();
        (path.display().to_string(), report::load(&path).unwrap_err())
    };

    let (bad, e) = load_written("bad.json", "{\n  \"schema\": 1,\n  \"machine\": [\n");
    assert!(e.starts_with(&bad), "{e}");
    assert!(e.contains("line 4 column 0"), "{e}");

    let (_, e) = load_written("typed.json", "{\n  \"schema\": 1,\n  \"machine\": 7\n}\n");
    assert!(e.contains("line 3"), "{e}");

    let (future, e) = load_written("future.json", "{\"schema\": 2, \"whatever\": true}");
    assert!(e.starts_with(&future), "{e}");
    assert!(e.contains("schema version 2 is not supported"), "{e}");

    let e = report::results::parse("{\"machine\": {}}").unwrap_err();
    assert!(e.contains("no `schema` field"), "{e}");

    let e = report::write_report(&dir.0).unwrap_err();
    assert!(e.contains("results.json"), "{e}");
    assert!(!dir.0.join("report.md").exists());
}

#[test]
fn an_empty_experiment_has_no_table_and_no_figures() {
    let mut results = fixture();
    results.experiments = vec![report::Experiment {
        kind: ExperimentKind::FlowInstall,
        note: String::new(),
        ceiling: Vec::new(),
        series: vec![report::Series {
            dut: "a|b".to_string(),
            workers: None,
            points: vec![report::Point { x: 1.0, ..Default::default() }],
        }],
    }];
    let md = report::render_markdown(&results);
    assert!(
        md.contains("## Flow installation rate (`flow_install`)\n\nNo measurements.\n"),
        "{md}"
    );
    assert!(!md.contains("Plots:"), "{md}");
    assert_eq!(report::plot::plan(&results), vec![Vec::new()]);

    results.experiments[0].series[0].points[0].flow_mods_per_s = Some(report::Summary::single(5e4));
    let md = report::render_markdown(&results);
    assert!(md.contains("Flow mods/s:\n\n| rules per batch | a\\|b |\n"), "{md}");
    assert!(md.contains("| 1 | 50000 |\n"), "{md}");
    assert!(md.contains("Plots: `flow_install.svg`"), "{md}");
}
