//! The study's figures as SVG files, drawn with `plotters`.
//!
//! SVG only: PNG would need `plotters`' bitmap backend and a font rasteriser, dependencies
//! this crate does not take. Text in the SVG files is left to the viewer's sans-serif font.
//!
//! Which files an experiment gets is decided by [`plan`], which the markdown report also
//! reads, so the names it lists are the names written. Names are stable: the experiment
//! kind's name (`throughput_vs_size.svg`, `table_size.svg`, …), the load experiment as
//! `throughput_vs_load.svg` and `latency_vs_load.svg`, and a second experiment of one kind
//! gets `_2` before the extension, a third `_3`. A figure whose metric no point has is
//! not drawn.
//!
//! Lines and bars are medians; the whiskers span each point's min–max.

use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::prelude::*;

use super::markdown::{at, fairness_index, fmt_num, same_x};
use super::results::{Experiment, ExperimentKind, Metric, Point, Results, Summary};

/// Size of every figure in pixels.
const SIZE: (u32, u32) = (960, 540);

/// How a figure draws its series.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// A line per device (and the ceiling) over a numeric `x`.
    Lines,
    /// Two panels of lines: Mpps, and Gbit/s of frame bytes (`x` is the frame size).
    LinesAndGbps,
    /// Bars grouped by `x`, one bar per device.
    Bars,
}

/// One figure to draw for an experiment.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    /// File name in the output folder, `….svg`.
    pub file: String,
    pub style: Style,
    /// The metric on the `y` axis.
    pub metric: Metric,
    /// Caption.
    pub title: String,
}

/// The figures of each experiment of `results`, in order (one list per experiment).
pub fn plan(results: &Results) -> Vec<Vec<Figure>> {
    let mut seen: HashMap<ExperimentKind, usize> = HashMap::new();
    results
        .experiments
        .iter()
        .map(|exp| {
            let count = seen.entry(exp.kind).or_insert(0);
            *count += 1;
            let suffix = if *count == 1 { String::new() } else { format!("_{count}") };
            figures(exp)
                .into_iter()
                .filter(|(_, _, metric, _)| has(exp, *metric))
                .map(|(base, style, metric, title)| Figure {
                    file: format!("{base}{suffix}.svg"),
                    style,
                    metric,
                    title,
                })
                .collect()
        })
        .collect()
}

/// The figures an experiment's kind calls for: (file base name, style, metric, title).
fn figures(exp: &Experiment) -> Vec<(&'static str, Style, Metric, String)> {
    let kind = exp.kind;
    let name = kind.name();
    let heading = kind.heading().to_string();
    match kind {
        ExperimentKind::ThroughputVsSize => {
            vec![(name, Style::LinesAndGbps, Metric::Forwarded, heading)]
        }
        ExperimentKind::Load => vec![
            (
                "throughput_vs_load",
                Style::Lines,
                Metric::Forwarded,
                "Throughput vs offered load".to_string(),
            ),
            (
                "latency_vs_load",
                Style::Lines,
                Metric::Latency,
                "Latency vs offered load".to_string(),
            ),
        ],
        ExperimentKind::TableSize
        | ExperimentKind::ExactVsWildcard
        | ExperimentKind::FlowCount
        | ExperimentKind::SelectGroup
        | ExperimentKind::Meter => {
            vec![(name, Style::Bars, Metric::Forwarded, heading)]
        }
        ExperimentKind::Fairness => {
            let metric = if has(exp, Metric::Forwarded) { Metric::Forwarded } else { Metric::Loss };
            let indices: Vec<String> = exp
                .series
                .iter()
                .filter_map(|s| fairness_index(&s.points).map(|(j, _)| (s, j)))
                .map(|(s, j)| format!("{} {j:.3}", s.dut))
                .collect();
            let title = if indices.is_empty() {
                heading
            } else {
                format!("{heading}: Jain's index {}", indices.join(", "))
            };
            vec![(name, Style::Bars, metric, title)]
        }
        ExperimentKind::WorkerScaling | ExperimentKind::ZeroLoss => {
            vec![(name, Style::Lines, Metric::Forwarded, heading)]
        }
        ExperimentKind::LatencyProbe => vec![(name, Style::Lines, Metric::Latency, heading)],
        ExperimentKind::FlowInstall => vec![(name, Style::Bars, Metric::FlowMods, heading)],
        ExperimentKind::PacketTime => vec![(name, Style::Bars, Metric::Latency, heading)],
        ExperimentKind::Churn => vec![(name, Style::Lines, Metric::Forwarded, heading)],
    }
}

/// Whether any point of the experiment (ceiling included) has `metric`.
fn has(exp: &Experiment, metric: Metric) -> bool {
    exp.ceiling
        .iter()
        .chain(exp.series.iter().flat_map(|s| s.points.iter()))
        .any(|p| metric.of(p).is_some())
}

/// Draws every figure of `results` into `dir` (which must exist), replacing files of the
/// same names, and returns the paths written.
pub fn render_plots(results: &Results, dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut written = Vec::new();
    for (exp, figures) in results.experiments.iter().zip(plan(results)) {
        for fig in figures {
            let path = dir.join(&fig.file);
            draw(exp, &fig, &path).map_err(|e| format!("{}: {e}", path.display()))?;
            written.push(path);
        }
    }
    Ok(written)
}

/// A named list of (x, value) to draw.
struct Line {
    name: String,
    points: Vec<(f64, Summary)>,
}

/// The lines of `metric`: the ceiling first (where it has the metric), then each device.
fn lines(exp: &Experiment, metric: Metric) -> Vec<Line> {
    // The load experiment's `x` is relative to each device's own saturation; its
    // figures put the offered rate itself on the axis, as the classic ones do.
    let by_offered = exp.kind == ExperimentKind::Load;
    let pick = |points: &[Point]| -> Vec<(f64, Summary)> {
        let mut v: Vec<(f64, Summary)> = points
            .iter()
            .filter_map(|p| {
                let x = if by_offered { p.offered_mpps?.median } else { p.x };
                x.is_finite().then_some(x).zip(metric.of(p))
            })
            .collect();
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
        v
    };
    let mut out = Vec::new();
    let ceiling = pick(&exp.ceiling);
    if !ceiling.is_empty() {
        out.push(Line { name: "ceiling (no DUT)".to_string(), points: ceiling });
    }
    for s in &exp.series {
        out.push(Line { name: s.dut.clone(), points: pick(&s.points) });
    }
    out
}

/// The colour of the `i`th line; the ceiling is black.
fn colour(line: &Line, i: usize) -> RGBColor {
    if line.name.starts_with("ceiling") {
        BLACK
    } else {
        let c = Palette99::pick(i).to_rgba();
        RGBColor(c.0, c.1, c.2)
    }
}

/// Draws one figure to `path`.
fn draw(exp: &Experiment, fig: &Figure, path: &Path) -> Result<(), String> {
    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let data = lines(exp, fig.metric);
    let x_label =
        if exp.kind == ExperimentKind::Load { "offered load (Mpps)" } else { exp.kind.x_label() };
    let y_label = fig.metric.axis_label();
    // Forwarded against offered load: the line where nothing is lost.
    let diagonal = exp.kind == ExperimentKind::Load && fig.metric == Metric::Forwarded;
    match fig.style {
        Style::Lines => line_chart(&root, &fig.title, x_label, y_label, &data, diagonal)?,
        Style::LinesAndGbps => {
            let (left, right) = root.split_horizontally(SIZE.0 / 2);
            line_chart(&left, &fig.title, x_label, y_label, &data, false)?;
            // Gbit/s of frame bytes: Mpps × bytes × 8 / 1000.
            let gbps: Vec<Line> = data
                .iter()
                .map(|l| Line {
                    name: l.name.clone(),
                    points: l
                        .points
                        .iter()
                        .map(|&(x, s)| (x, scale(s, x * 8.0 / 1000.0)))
                        .collect(),
                })
                .collect();
            line_chart(
                &right,
                &format!("{} (Gbit/s)", fig.title),
                x_label,
                "forwarded (Gbit/s of frames)",
                &gbps,
                false,
            )?;
        }
        Style::Bars => bar_chart(&root, &fig.title, x_label, fig.metric, exp)?,
    }
    root.present().map_err(|e| e.to_string())
}

/// `s` with every value multiplied by `k`.
fn scale(s: Summary, k: f64) -> Summary {
    Summary { median: s.median * k, min: s.min * k, max: s.max * k, n: s.n }
}

/// The `x` range spanning `xs`, padded so a single value still has a width.
fn x_range(xs: impl Iterator<Item = f64>) -> Range<f64> {
    let (lo, hi) =
        xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| (lo.min(x), hi.max(x)));
    if !lo.is_finite() || !hi.is_finite() {
        return 0.0..1.0;
    }
    let pad = if hi > lo { (hi - lo) * 0.05 } else { 1.0 };
    (lo - pad)..(hi + pad)
}

/// The `y` range from 0 to a little over the largest value.
fn y_range(ys: impl Iterator<Item = f64>) -> Range<f64> {
    let hi = ys.filter(|y| y.is_finite()).fold(0.0, f64::max);
    if hi > 0.0 {
        0.0..hi * 1.1
    } else {
        0.0..1.0
    }
}

/// Lines with a marker and a min–max whisker at each point; with `diagonal`, a dashed
/// grey `y = x` line labelled "no loss" under them. When every `x` is a whole number,
/// only whole-number ticks are labelled.
fn line_chart(
    area: &DrawingArea<SVGBackend, plotters::coord::Shift>,
    title: &str,
    x_label: &str,
    y_label: &str,
    data: &[Line],
    diagonal: bool,
) -> Result<(), String> {
    let err = |e: DrawingAreaErrorKind<_>| e.to_string();
    let xs = x_range(data.iter().flat_map(|l| l.points.iter().map(|p| p.0)));
    let ys = y_range(data.iter().flat_map(|l| l.points.iter().map(|p| p.1.max)));
    let whole = data.iter().flat_map(|l| l.points.iter()).all(|p| p.0.fract() == 0.0);
    let x_format = move |v: &f64| {
        if !whole {
            fmt_num(*v)
        } else if v.fract() == 0.0 {
            format!("{}", *v as i64)
        } else {
            String::new()
        }
    };
    // The diagonal kept inside both ranges (points outside them are not clipped).
    let diagonal_span = (xs.start.max(ys.start), xs.end.min(ys.end));
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(65)
        .build_cartesian_2d(xs, ys)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc(y_label)
        .x_label_formatter(&x_format)
        .y_label_formatter(&|v| fmt_num(*v))
        .draw()
        .map_err(err)?;
    let (d0, d1) = diagonal_span;
    if diagonal && d1 > d0 {
        let grey = RGBColor(150, 150, 150);
        chart
            .draw_series(DashedLineSeries::new([(d0, d0), (d1, d1)], 6, 4, grey.stroke_width(1)))
            .map_err(err)?
            .label("no loss")
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], grey));
    }
    for (i, line) in data.iter().enumerate() {
        let c = colour(line, i);
        chart
            .draw_series(LineSeries::new(
                line.points.iter().map(|&(x, s)| (x, s.median)),
                c.stroke_width(2),
            ))
            .map_err(err)?
            .label(line.name.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2)));
        chart
            .draw_series(
                line.points.iter().map(|&(x, s)| Circle::new((x, s.median), 3, c.filled())),
            )
            .map_err(err)?;
        chart
            .draw_series(
                line.points
                    .iter()
                    .filter(|(_, s)| s.max > s.min)
                    .map(|&(x, s)| ErrorBar::new_vertical(x, s.min, s.median, s.max, c, 6)),
            )
            .map_err(err)?;
    }
    legend(&mut chart)
}

/// Bars grouped by `x` (one group per distinct `x`, one bar per device), with min–max
/// whiskers. The ceiling, where measured, is drawn as a black tick over each group.
fn bar_chart(
    area: &DrawingArea<SVGBackend, plotters::coord::Shift>,
    title: &str,
    x_label: &str,
    metric: Metric,
    exp: &Experiment,
) -> Result<(), String> {
    let err = |e: DrawingAreaErrorKind<_>| e.to_string();
    let mut cats: Vec<f64> = exp
        .series
        .iter()
        .flat_map(|s| s.points.iter())
        .chain(exp.ceiling.iter())
        .filter(|p| p.x.is_finite() && metric.of(p).is_some())
        .map(|p| p.x)
        .collect();
    cats.sort_by(f64::total_cmp);
    cats.dedup_by(|a, b| same_x(*a, *b));
    let n = cats.len().max(1);
    let ys = y_range(
        exp.series
            .iter()
            .flat_map(|s| s.points.iter())
            .chain(exp.ceiling.iter())
            .filter_map(|p| metric.of(p).map(|s| s.max)),
    );
    let labels = cats.clone();
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(65)
        .build_cartesian_2d(Categories(n), ys)
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_desc(x_label)
        .y_desc(metric.axis_label())
        .x_label_formatter(&|v| {
            labels.get(v.floor().max(0.0) as usize).map_or_else(String::new, |x| short(*x))
        })
        .y_label_formatter(&|v| fmt_num(*v))
        .draw()
        .map_err(err)?;
    let duts = exp.series.len().max(1);
    let width = 0.8 / duts as f64;
    for (k, s) in exp.series.iter().enumerate() {
        let c = {
            let c = Palette99::pick(k + usize::from(!exp.ceiling.is_empty())).to_rgba();
            RGBColor(c.0, c.1, c.2)
        };
        let bars: Vec<(f64, Summary)> = cats
            .iter()
            .enumerate()
            .filter_map(|(i, &x)| {
                at(&s.points, x)
                    .and_then(|p| metric.of(p))
                    .map(|v| (i as f64 + 0.1 + k as f64 * width, v))
            })
            .collect();
        chart
            .draw_series(
                bars.iter().map(|&(x0, v)| {
                    Rectangle::new([(x0, 0.0), (x0 + width, v.median)], c.filled())
                }),
            )
            .map_err(err)?
            .label(s.dut.as_str())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], c.filled()));
        chart
            .draw_series(bars.iter().filter(|(_, v)| v.max > v.min).map(|&(x0, v)| {
                ErrorBar::new_vertical(x0 + width / 2.0, v.min, v.median, v.max, BLACK, 6)
            }))
            .map_err(err)?;
    }
    let ceiling: Vec<(f64, f64)> = cats
        .iter()
        .enumerate()
        .filter_map(|(i, &x)| {
            at(&exp.ceiling, x).and_then(|p| metric.of(p)).map(|v| (i as f64, v.median))
        })
        .collect();
    if !ceiling.is_empty() {
        chart
            .draw_series(ceiling.iter().map(|&(i, y)| {
                PathElement::new(vec![(i + 0.05, y), (i + 0.95, y)], BLACK.stroke_width(2))
            }))
            .map_err(err)?
            .label("ceiling (no DUT)")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.stroke_width(2)));
    }
    legend(&mut chart)
}

/// Draws `chart`'s legend: the series' labels in its upper right corner.
fn legend<'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, CT>,
) -> Result<(), String> {
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(|e| e.to_string())
}

/// An `x` axis of `n` categories, category `i` spanning `i..i + 1`; its ticks are at the
/// categories' centres (at most 16 of them, evenly spread).
struct Categories(usize);

impl Ranged for Categories {
    type ValueType = f64;
    type FormatOption = DefaultFormatting;

    fn range(&self) -> Range<f64> {
        0.0..self.0 as f64
    }

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let span = f64::from(limit.1 - limit.0);
        limit.0 + (span * value / self.0.max(1) as f64).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            return Vec::new();
        }
        let step = self.0.div_ceil(16).max(1);
        (0..self.0).step_by(step).map(|i| i as f64 + 0.5).collect()
    }
}

/// A category label: integers with K or M when round, else three digits.
fn short(x: f64) -> String {
    if x.fract() == 0.0 && x >= 1e6 && x % 1e6 == 0.0 {
        format!("{}M", x / 1e6)
    } else if x.fract() == 0.0 && x >= 1e3 && x % 1e3 == 0.0 {
        format!("{}K", x / 1e3)
    } else if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        fmt_num(x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn category_labels_use_k_and_m() {
        assert_eq!(short(1_000_000.0), "1M");
        assert_eq!(short(100_000.0), "100K");
        assert_eq!(short(1500.0), "1500");
        assert_eq!(short(64.0), "64");
    }

    #[test]
    fn ranges_have_width() {
        assert_eq!(x_range([5.0].into_iter()), 4.0..6.0);
        assert_eq!(x_range(std::iter::empty()), 0.0..1.0);
        assert_eq!(y_range([0.0].into_iter()), 0.0..1.0);
        let r = y_range([2.0, 1.0].into_iter());
        assert_eq!(r.start, 0.0);
        assert!((r.end - 2.2).abs() < 1e-12);
    }
}
