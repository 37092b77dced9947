//! A study's results and their report: the versioned JSON document ([`results`]), the
//! markdown report ([`markdown`]) and the SVG figures ([`plot`]).
//!
//! `peregrine bench report DIR` reads `DIR/results.json` and writes `DIR/report.md` and
//! the figures next to it ([`write_report`]).

pub mod markdown;
pub mod plot;
pub mod results;

use std::path::{Path, PathBuf};

pub use markdown::render_markdown;
pub use plot::render_plots;
pub use results::{
    load, save, Experiment, ExperimentKind, Machine, Metric, Point, Results, Series, Summary,
    SCHEMA_VERSION,
};

/// The results file of a study folder.
pub const RESULTS_FILE: &str = "results.json";
/// The markdown report of a study folder.
pub const REPORT_FILE: &str = "report.md";

/// Reads `dir/results.json` and writes `dir/report.md` and the figures into `dir`;
/// returns the paths written, the report first.
pub fn write_report(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let results = load(&dir.join(RESULTS_FILE))?;
    let report = dir.join(REPORT_FILE);
    std::fs::write(&report, render_markdown(&results))
        .map_err(|e| format!("{}: cannot write: {e}", report.display()))?;
    let mut written = vec![report];
    written.extend(render_plots(&results, dir)?);
    Ok(written)
}
