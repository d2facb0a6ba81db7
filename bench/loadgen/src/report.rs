//! Output of one load-generator run.
//!
//! Owns the [`RunReport`] record (settings, rates, per-operation summaries, server probe,
//! machine facts) and its renderings: a text block, a JSON line, CSV rows and a PNG latency
//! plot. It reads recorders and probe reports but never records, probes or runs workloads;
//! files are only ever appended to or (for the plot) written whole.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

use plotters::coord::ranged1d::{KeyPointHint, NoDefaultFormatting, ValueFormatter};
use plotters::prelude::*;

use crate::probe::ProbeReport;
use crate::stats::{OpSummary, Recorder};

/// Columns of [`append_csv_line`], in order.
pub const CSV_HEADER: &str = "date,workload,op,records,operations,connections,value_size,\
durability,transport,protocol,client_sched,elapsed_secs,ops_per_sec,count,errors,mean_us,p50_us,p95_us,\
p99_us,p999_us,max_us,server_rss_max_bytes,server_cpu_cores";

/// Places where a TrueType font for plot text is looked for, in order.
const FONT_PATHS: &[&str] = &[
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/usr/share/fonts/liberation-sans/LiberationSans-Regular.ttf",
    "/usr/share/fonts/TTF/LiberationSans-Regular.ttf",
    "/usr/share/fonts/truetype/freefont/FreeSans.ttf",
    "/usr/share/fonts/gnu-free/FreeSans.ttf",
    "/usr/share/fonts/noto/NotoSans-Regular.ttf",
    "/usr/share/fonts/truetype/noto/NotoSans-Regular.ttf",
];

/// Font family name the plot text uses (and plotters' default for labels).
const FONT_FAMILY: &str = "sans-serif";

const PLOT_SIZE: (u32, u32) = (1280, 720);

/// Percentile axis ticks of the latency plot, with their labels.
const PERCENTILE_TICKS: &[(f64, &str)] = &[
    (0.0, "0"),
    (50.0, "50"),
    (90.0, "90"),
    (99.0, "99"),
    (99.9, "99.9"),
    (99.99, "99.99"),
    (99.999, "99.999"),
    (99.9999, "99.9999"),
    (99.99999, "99.99999"),
];

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("cannot write {path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error("cannot encode the report as JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("cannot draw the latency plot {path}: {message}")]
    Plot { path: PathBuf, message: String },
}

/// Facts about the machine the load generator ran on.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Machine {
    pub cores: usize,
    pub ram_bytes: u64,
    pub kernel: String,
}

impl Machine {
    /// Reads the core count, total RAM and kernel release; what cannot be read is 0 or empty.
    pub fn detect() -> Machine {
        let cores = std::thread::available_parallelism()
            .map(|cores| cores.get())
            .unwrap_or(0);
        let ram_bytes = fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|meminfo| parse_meminfo_total(&meminfo))
            .unwrap_or(0);
        let kernel = fs::read_to_string("/proc/sys/kernel/osrelease")
            .map(|release| release.trim().to_string())
            .unwrap_or_default();
        Machine {
            cores,
            ram_bytes,
            kernel,
        }
    }
}

/// `MemTotal` in bytes from the text of `/proc/meminfo` (given there in kB).
pub fn parse_meminfo_total(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|line| line.starts_with("MemTotal:"))?;
    let kib: u64 = line["MemTotal:".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    kib.checked_mul(1024)
}

/// The settings of a run, as the runner knows them before it starts.
#[derive(Debug, Clone, Default)]
pub struct RunSettings {
    pub workload: String,
    pub addr: String,
    pub records: u64,
    /// Operations to attempt.
    pub operations: u64,
    pub connections: usize,
    pub value_size: usize,
    pub durability: String,
    pub transport: String,
    pub protocol: String,
    /// Scheduling policy of the client's threads.
    pub client_sched: String,
    pub seed: u64,
}

/// Everything reported about one run.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RunReport {
    /// When the report was made, RFC 3339 UTC to the second.
    pub date: String,
    pub workload: String,
    pub addr: String,
    pub records: u64,
    /// Operations attempted.
    pub operations: u64,
    pub connections: usize,
    pub value_size: usize,
    pub durability: String,
    pub transport: String,
    pub protocol: String,
    /// Scheduling policy of the client's threads.
    pub client_sched: String,
    pub seed: u64,
    pub elapsed_secs: f64,
    /// Successful operations (latency samples) per second.
    pub ops_per_sec: f64,
    /// Units of work (e.g. rows, counting scans by the rows they returned) per second.
    pub units_per_sec: f64,
    pub errors: u64,
    pub ops: Vec<OpSummary>,
    pub server: Option<ProbeReport>,
    pub machine: Machine,
}

impl RunReport {
    /// Builds the report of a finished run, dated now, with the machine detected now.
    pub fn new(
        settings: RunSettings,
        elapsed: Duration,
        recorder: &Recorder,
        server: Option<ProbeReport>,
    ) -> RunReport {
        let date = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
        let elapsed_secs = elapsed.as_secs_f64();
        RunReport {
            date,
            workload: settings.workload,
            addr: settings.addr,
            records: settings.records,
            operations: settings.operations,
            connections: settings.connections,
            value_size: settings.value_size,
            durability: settings.durability,
            transport: settings.transport,
            protocol: settings.protocol,
            client_sched: settings.client_sched,
            seed: settings.seed,
            elapsed_secs,
            ops_per_sec: per_second(recorder.total_ops(), elapsed_secs),
            units_per_sec: per_second(recorder.total_units(), elapsed_secs),
            errors: recorder.total_errors(),
            ops: recorder.summaries(),
            server,
            machine: Machine::detect(),
        }
    }
}

fn per_second(count: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        count as f64 / seconds
    } else {
        0.0
    }
}

// ---------------------------------------------------------------------------------------
// Text

/// Writes a readable block: a header line, one row per operation (latencies in ms), and
/// the server's memory and CPU use when it was probed.
pub fn print_text(report: &RunReport, out: &mut impl Write) -> io::Result<()> {
    write_header(report, out)?;
    write_op_table(&report.ops, out)?;
    if let Some(server) = &report.server {
        write_server(server, out)?;
    }
    Ok(())
}

fn write_header(report: &RunReport, out: &mut impl Write) -> io::Result<()> {
    write!(out, "{}: {:.1} ops/s", report.workload, report.ops_per_sec)?;
    if (report.units_per_sec - report.ops_per_sec).abs() > f64::EPSILON {
        write!(out, " ({:.1} units/s)", report.units_per_sec)?;
    }
    writeln!(
        out,
        ", elapsed {:.3} s, {} errors",
        report.elapsed_secs, report.errors
    )?;
    writeln!(
        out,
        "  {} records, {} operations, {} connections, {} B values, durability {}, \
         transport {}, protocol {}, client {}, seed {}, server {}",
        report.records,
        report.operations,
        report.connections,
        report.value_size,
        report.durability,
        report.transport,
        report.protocol,
        report.client_sched,
        report.seed,
        report.addr
    )
}

fn write_op_table(ops: &[OpSummary], out: &mut impl Write) -> io::Result<()> {
    let width = ops.iter().map(|op| op.op.len()).max().unwrap_or(0).max(2);
    writeln!(
        out,
        "  {:<width$} {:>10} {:>8} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "op",
        "count",
        "errors",
        "units",
        "mean ms",
        "p50 ms",
        "p95 ms",
        "p99 ms",
        "p99.9 ms",
        "max ms"
    )?;
    for op in ops {
        writeln!(
            out,
            "  {:<width$} {:>10} {:>8} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
            op.op,
            op.count,
            op.errors,
            op.units,
            format_ms(op.mean_us),
            format_ms(op.p50_us as f64),
            format_ms(op.p95_us as f64),
            format_ms(op.p99_us as f64),
            format_ms(op.p999_us as f64),
            format_ms(op.max_us as f64),
        )?;
    }
    for op in ops {
        if let Some(first) = &op.first_error {
            writeln!(out, "  first {} error: {first}", op.op)?;
        }
    }
    Ok(())
}

fn write_server(server: &ProbeReport, out: &mut impl Write) -> io::Result<()> {
    writeln!(
        out,
        "  server pid {}: RSS max {:.1} MiB, mean {:.1} MiB, end {:.1} MiB; \
         CPU {:.2} cores ({:.2} s over {:.2} s, {} samples)",
        server.pid,
        mib(server.rss_max_bytes),
        mib(server.rss_mean_bytes),
        mib(server.rss_end_bytes),
        server.cpu_cores_used,
        server.cpu_seconds,
        server.wall_seconds,
        server.samples
    )
}

/// Microseconds as milliseconds with three decimals.
fn format_ms(micros: f64) -> String {
    format!("{:.3}", micros / 1000.0)
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

// ---------------------------------------------------------------------------------------
// JSON and CSV

/// Appends the report as one JSON object on one line.
pub fn append_json_line(report: &RunReport, path: &Path) -> Result<(), ReportError> {
    let mut line = serde_json::to_string(report)?;
    line.push('\n');
    let mut file = open_append(path)?;
    file.write_all(line.as_bytes())
        .map_err(|source| io_error(path, source))
}

/// Appends one CSV row per operation of the report (columns [`CSV_HEADER`]), preceded by
/// the header line when the file is new or empty.
pub fn append_csv_line(report: &RunReport, path: &Path) -> Result<(), ReportError> {
    let mut file = open_append(path)?;
    let is_empty = file
        .metadata()
        .map_err(|source| io_error(path, source))?
        .len()
        == 0;
    let mut text = String::new();
    if is_empty {
        text.push_str(CSV_HEADER);
        text.push('\n');
    }
    for op in &report.ops {
        text.push_str(&csv_row(report, op));
        text.push('\n');
    }
    file.write_all(text.as_bytes())
        .map_err(|source| io_error(path, source))
}

fn csv_row(report: &RunReport, op: &OpSummary) -> String {
    let (rss_max, cpu_cores) = match &report.server {
        Some(server) => (
            server.rss_max_bytes.to_string(),
            format!("{:.3}", server.cpu_cores_used),
        ),
        None => (String::new(), String::new()),
    };
    let fields = [
        csv_field(&report.date),
        csv_field(&report.workload),
        csv_field(&op.op),
        report.records.to_string(),
        report.operations.to_string(),
        report.connections.to_string(),
        report.value_size.to_string(),
        csv_field(&report.durability),
        csv_field(&report.transport),
        csv_field(&report.protocol),
        csv_field(&report.client_sched),
        format!("{:.3}", report.elapsed_secs),
        format!("{:.1}", report.ops_per_sec),
        op.count.to_string(),
        op.errors.to_string(),
        format!("{:.1}", op.mean_us),
        op.p50_us.to_string(),
        op.p95_us.to_string(),
        op.p99_us.to_string(),
        op.p999_us.to_string(),
        op.max_us.to_string(),
        rss_max,
        cpu_cores,
    ];
    fields.join(",")
}

/// Quotes a text field when it holds a comma, a quote or a line break (RFC 4180).
fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

fn open_append(path: &Path) -> Result<File, ReportError> {
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|source| io_error(path, source))
}

fn io_error(path: &Path, source: io::Error) -> ReportError {
    ReportError::Io {
        path: path.to_path_buf(),
        source,
    }
}

// ---------------------------------------------------------------------------------------
// Latency plot

/// Whether a latency plot carries its title, axis labels and legend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlotText {
    /// A system font was found: the plot has all its text.
    Drawn,
    /// No usable font was found: the plot has its lines and grid but no text.
    Missing,
}

/// Writes a PNG (the format follows `path`'s extension, so use `.png`) of the latency
/// distribution of every operation in `recorder`: x is the percentile on a
/// log(1/(1-p)) scale (50, 90, 99, 99.9, ...), y the latency in ms on a log scale.
/// Without a system font the plot is still written, without text, and a warning is logged.
pub fn write_latency_plot(
    report_title: &str,
    recorder: &Recorder,
    path: &Path,
) -> Result<PlotText, ReportError> {
    let text = if plot_font_registered() {
        PlotText::Drawn
    } else {
        tracing::warn!(
            path = %path.display(),
            "no TrueType font found; the latency plot has no text"
        );
        PlotText::Missing
    };
    draw_latency_plot(report_title, recorder, path, text)?;
    Ok(text)
}

/// Finds, loads and registers a plot font once per process; true if one is registered.
fn plot_font_registered() -> bool {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    *REGISTERED.get_or_init(register_first_font)
}

fn register_first_font() -> bool {
    FONT_PATHS
        .iter()
        .any(|path| register_font_file(Path::new(path)))
}

fn register_font_file(path: &Path) -> bool {
    let Ok(bytes) = fs::read(path) else {
        return false;
    };
    // Registered fonts must live for the whole process; this happens at most once.
    let bytes: &'static [u8] = Vec::leak(bytes);
    plotters::style::register_font(FONT_FAMILY, FontStyle::Normal, bytes).is_ok()
}

/// One operation's curve in plot coordinates: (x on the percentile axis, latency in ms).
struct Curve {
    op: &'static str,
    points: Vec<(f64, f64)>,
}

fn draw_latency_plot(
    title: &str,
    recorder: &Recorder,
    path: &Path,
    text: PlotText,
) -> Result<(), ReportError> {
    let plot_error = |error: &dyn std::fmt::Display| ReportError::Plot {
        path: path.to_path_buf(),
        message: error.to_string(),
    };
    let curves = plot_curves(recorder);
    let x_max = percentile_axis_end(recorder);
    let (y_low, y_high) = latency_axis_range(&curves);

    let root = BitMapBackend::new(path, PLOT_SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(|e| plot_error(&e))?;
    let mut builder = ChartBuilder::on(&root);
    builder.margin(20).margin_right(50);
    if text == PlotText::Drawn {
        builder
            .caption(title, (FONT_FAMILY, 24))
            .x_label_area_size(50)
            .y_label_area_size(70);
    }
    let mut chart = builder
        .build_cartesian_2d(
            PercentileAxis { end: x_max },
            LatencyAxis {
                low: y_low,
                high: y_high,
            },
        )
        .map_err(|e| plot_error(&e))?;

    let mut mesh = chart.configure_mesh();
    if text == PlotText::Drawn {
        mesh.x_desc("percentile")
            .y_desc("latency (ms)")
            .label_style((FONT_FAMILY, 15))
            .axis_desc_style((FONT_FAMILY, 16));
    }
    mesh.draw().map_err(|e| plot_error(&e))?;

    for (index, curve) in curves.iter().enumerate() {
        let color = series_color(index);
        let series = chart
            .draw_series(LineSeries::new(
                curve.points.iter().copied(),
                color.stroke_width(2),
            ))
            .map_err(|e| plot_error(&e))?;
        if text == PlotText::Drawn {
            series.label(curve.op).legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        }
    }
    if text == PlotText::Drawn && !curves.is_empty() {
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font((FONT_FAMILY, 15))
            .draw()
            .map_err(|e| plot_error(&e))?;
    }
    root.present().map_err(|e| plot_error(&e))
}

fn plot_curves(recorder: &Recorder) -> Vec<Curve> {
    let summaries = recorder.summaries();
    recorder
        .ops()
        .into_iter()
        .zip(summaries)
        .filter(|(_, summary)| summary.count > 0)
        .map(|(op, summary)| Curve {
            op,
            points: recorder
                .percentile_curve(op)
                .into_iter()
                .map(|(percentile, micros)| {
                    (
                        curve_x(percentile, summary.count),
                        micros_to_plot_ms(micros),
                    )
                })
                .collect(),
        })
        .collect()
}

/// Percentiles between the labelled ticks that get a light grid line.
const PERCENTILE_LIGHT_TICKS: &[f64] = &[75.0, 95.0, 99.5, 99.95, 99.995, 99.9995, 99.99995];

/// The x axis of the latency plot: `x = log10(1 / (1 - p))` from 0 to `end`, with grid
/// lines and labels at the percentiles of [`PERCENTILE_TICKS`].
struct PercentileAxis {
    end: f64,
}

impl Ranged for PercentileAxis {
    type FormatOption = NoDefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let fraction = if self.end > 0.0 {
            value / self.end
        } else {
            0.0
        };
        let length = f64::from(limit.1 - limit.0);
        limit.0 + (length * fraction).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        let percentiles: Vec<f64> = if hint.weight().allow_light_points() {
            PERCENTILE_LIGHT_TICKS.to_vec()
        } else {
            PERCENTILE_TICKS
                .iter()
                .map(|&(percentile, _)| percentile)
                .collect()
        };
        percentiles
            .into_iter()
            .map(percentile_to_x)
            .filter(|&x| x <= self.end + 1e-9)
            .collect()
    }

    fn range(&self) -> std::ops::Range<f64> {
        0.0..self.end
    }
}

impl ValueFormatter<f64> for PercentileAxis {
    fn format(x: &f64) -> String {
        percentile_label(*x).to_string()
    }
}

/// The y axis of the latency plot: milliseconds from `low` to `high` on a log scale, with
/// labelled grid lines at 1, 2 and 5 times powers of ten.
struct LatencyAxis {
    low: f64,
    high: f64,
}

impl LatencyAxis {
    /// Grid values `multiplier * 10^k` inside the axis range, ascending.
    fn grid(&self, multipliers: &[f64]) -> Vec<f64> {
        let first_decade = self.low.log10().floor() as i32;
        let last_decade = self.high.log10().ceil() as i32;
        (first_decade..=last_decade)
            .flat_map(|decade| {
                multipliers
                    .iter()
                    .map(move |multiplier| multiplier * 10f64.powi(decade))
            })
            .filter(|ms| (self.low..=self.high).contains(ms))
            .collect()
    }
}

impl Ranged for LatencyAxis {
    type FormatOption = NoDefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let low = self.low.log10();
        let span = self.high.log10() - low;
        let fraction = if span > 0.0 {
            (value.max(self.low).log10() - low) / span
        } else {
            0.0
        };
        let length = f64::from(limit.1 - limit.0);
        limit.0 + (length * fraction).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        let multipliers: &[f64] = if hint.weight().allow_light_points() {
            &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]
        } else {
            &[1.0, 2.0, 5.0]
        };
        let points = self.grid(multipliers);
        if points.len() <= hint.max_num_points() {
            points
        } else {
            self.grid(&[1.0])
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.low..self.high
    }
}

impl ValueFormatter<f64> for LatencyAxis {
    fn format(ms: &f64) -> String {
        format_axis_ms(*ms)
    }
}

/// Line colours that stay distinct from each other and readable on white.
fn series_color(index: usize) -> RGBColor {
    const COLORS: &[RGBColor] = &[
        RGBColor(31, 119, 180),
        RGBColor(214, 39, 40),
        RGBColor(44, 160, 44),
        RGBColor(255, 127, 14),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(127, 127, 127),
        RGBColor(188, 189, 34),
        RGBColor(23, 190, 207),
    ];
    COLORS[index % COLORS.len()]
}

/// x of a percentile on the log(1/(1-p)) axis: 0 at p=0, 1 at 90, 2 at 99, 3 at 99.9...
fn percentile_to_x(percentile: f64) -> f64 {
    (100.0 / (100.0 - percentile)).log10()
}

/// x of a curve point; 100% (the maximum) is placed at the last percentile `count` samples
/// resolve, 1 - 1/count.
fn curve_x(percentile: f64, count: u64) -> f64 {
    let resolvable = (count.max(1) as f64).log10();
    if percentile >= 100.0 {
        resolvable
    } else {
        percentile_to_x(percentile).min(resolvable)
    }
}

/// End of the percentile axis: the next whole "nine" past what the largest op resolves,
/// at least 99 and at most the last labelled tick.
fn percentile_axis_end(recorder: &Recorder) -> f64 {
    let max_count = recorder
        .summaries()
        .iter()
        .map(|summary| summary.count)
        .max()
        .unwrap_or(0);
    let last_tick = PERCENTILE_TICKS
        .last()
        .map_or(2.0, |&(percentile, _)| percentile_to_x(percentile));
    (max_count.max(1) as f64)
        .log10()
        .ceil()
        .clamp(2.0, last_tick.round())
}

/// Latency range (ms) of the y axis, with some room above and below the curves.
fn latency_axis_range(curves: &[Curve]) -> (f64, f64) {
    let latencies = curves
        .iter()
        .flat_map(|curve| curve.points.iter().map(|p| p.1));
    let (low, high) = latencies.fold((f64::MAX, 0.0_f64), |(low, high), ms| {
        (low.min(ms), high.max(ms))
    });
    if high <= 0.0 {
        return (0.001, 1.0);
    }
    let low = low * 0.8;
    let high = (high * 1.25).max(low * 10.0);
    (low, high)
}

/// Latency in ms for the log-scale axis; sub-microsecond samples are drawn at 1 us.
fn micros_to_plot_ms(micros: u64) -> f64 {
    micros.max(1) as f64 / 1000.0
}

fn percentile_label(x: f64) -> &'static str {
    PERCENTILE_TICKS
        .iter()
        .min_by(|a, b| {
            let distance = |percentile: f64| (percentile_to_x(percentile) - x).abs();
            distance(a.0).total_cmp(&distance(b.0))
        })
        .map_or("", |&(_, label)| label)
}

/// Axis label for a latency in ms, with as many decimals as small values need.
fn format_axis_ms(ms: f64) -> String {
    let decimals = if ms >= 10.0 {
        0
    } else if ms >= 1.0 {
        1
    } else if ms >= 0.1 {
        2
    } else {
        3
    };
    let text = format!("{ms:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample_recorder() -> Recorder {
        let mut recorder = Recorder::new();
        for i in 0..20_000u64 {
            recorder.record("read", Duration::from_micros(150 + i % 400 + i / 200));
        }
        for i in 0..5_000u64 {
            recorder.record("update", Duration::from_micros(900 + (i * 37) % 3_000));
        }
        for i in 0..200u64 {
            recorder.record_units("scan", Duration::from_micros(5_000 + i * 10), 100);
        }
        recorder.record_error("update", &"wrong value");
        recorder
    }

    fn sample_settings() -> RunSettings {
        RunSettings {
            workload: "ycsb-a".to_string(),
            addr: "127.0.0.1:9090".to_string(),
            records: 100_000,
            operations: 25_201,
            connections: 8,
            value_size: 1_024,
            durability: "sync".to_string(),
            transport: "framed".to_string(),
            protocol: "binary".to_string(),
            client_sched: "batch".to_string(),
            seed: 42,
        }
    }

    fn sample_probe() -> ProbeReport {
        ProbeReport {
            pid: 4242,
            samples: 20,
            rss_start_bytes: 50 << 20,
            rss_max_bytes: 120 << 20,
            rss_mean_bytes: 100 << 20,
            rss_end_bytes: 110 << 20,
            cpu_seconds: 15.0,
            wall_seconds: 10.0,
            cpu_cores_used: 1.5,
        }
    }

    fn sample_report(server: Option<ProbeReport>) -> RunReport {
        RunReport::new(
            sample_settings(),
            Duration::from_secs(10),
            &sample_recorder(),
            server,
        )
    }

    fn temp_dir() -> tempfile::TempDir {
        match tempfile::tempdir() {
            Ok(dir) => dir,
            Err(error) => panic!("no temp dir: {error}"),
        }
    }

    fn read(path: &Path) -> String {
        match fs::read_to_string(path) {
            Ok(text) => text,
            Err(error) => panic!("cannot read {}: {error}", path.display()),
        }
    }

    #[test]
    fn report_rates_come_from_the_recorder() {
        let report = sample_report(None);
        assert_eq!(report.ops.len(), 3);
        assert_eq!(report.errors, 1);
        assert!((report.ops_per_sec - 2_520.0).abs() < 1e-9);
        assert!((report.units_per_sec - 4_500.0).abs() < 1e-9);
        assert!(
            report.date.ends_with('Z') && report.date.contains('T'),
            "{}",
            report.date
        );
        assert!(humantime::parse_rfc3339(&report.date).is_ok());
    }

    #[test]
    fn zero_elapsed_gives_zero_rates() {
        let report = RunReport::new(sample_settings(), Duration::ZERO, &sample_recorder(), None);
        assert_eq!(report.ops_per_sec, 0.0);
        assert_eq!(report.units_per_sec, 0.0);
    }

    #[test]
    fn machine_is_detected() {
        let machine = Machine::detect();
        assert!(machine.cores > 0);
        assert!(machine.ram_bytes > 0);
        assert!(!machine.kernel.is_empty());
    }

    #[test]
    fn parses_meminfo_total() {
        let meminfo = "MemTotal:        8029340 kB\nMemFree:          220000 kB\n";
        assert_eq!(parse_meminfo_total(meminfo), Some(8_029_340 * 1024));
        assert_eq!(parse_meminfo_total("MemFree: 1 kB\n"), None);
    }

    #[test]
    fn text_lists_every_op_and_the_server() {
        let report = sample_report(Some(sample_probe()));
        let mut out = Vec::new();
        assert!(print_text(&report, &mut out).is_ok());
        let text = String::from_utf8_lossy(&out);
        assert!(
            text.starts_with("ycsb-a: 2520.0 ops/s (4500.0 units/s)"),
            "{text}"
        );
        for op in ["read", "scan", "update"] {
            assert!(
                text.lines().any(|line| line.trim_start().starts_with(op)),
                "{text}"
            );
        }
        assert!(text.contains("p99.9 ms"), "{text}");
        assert!(text.contains("RSS max 120.0 MiB, mean 100.0 MiB"), "{text}");
        assert!(text.contains("CPU 1.50 cores"), "{text}");
        assert!(text.contains("first update error: wrong value"), "{text}");
    }

    #[test]
    fn text_without_server_has_no_server_line() {
        let report = sample_report(None);
        let mut out = Vec::new();
        assert!(print_text(&report, &mut out).is_ok());
        let text = String::from_utf8_lossy(&out);
        assert!(!text.contains("server pid"), "{text}");
        // Header (2), table head, three operations, the first error of update.
        assert_eq!(text.lines().count(), 2 + 1 + 3 + 1, "{text}");
    }

    #[test]
    fn json_lines_parse_back() {
        let dir = temp_dir();
        let path = dir.path().join("runs.jsonl");
        let with_server = sample_report(Some(sample_probe()));
        assert!(append_json_line(&with_server, &path).is_ok());
        assert!(append_json_line(&sample_report(None), &path).is_ok());

        let text = read(&path);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2);
        let first: serde_json::Value = match serde_json::from_str(lines[0]) {
            Ok(value) => value,
            Err(error) => panic!("bad JSON line: {error}"),
        };
        assert_eq!(first["workload"], "ycsb-a");
        assert_eq!(first["addr"], "127.0.0.1:9090");
        assert_eq!(first["connections"], 8);
        assert_eq!(first["seed"], 42);
        assert_eq!(first["errors"], 1);
        assert_eq!(first["date"], with_server.date.as_str());
        assert_eq!(first["ops"].as_array().map(Vec::len), Some(3));
        assert_eq!(first["ops"][0]["op"], "read");
        assert_eq!(first["ops"][0]["count"], 20_000);
        assert!(first["ops"][0]["p99_us"]
            .as_u64()
            .is_some_and(|p99| p99 > 0));
        assert_eq!(first["server"]["rss_max_bytes"], 120u64 << 20);
        assert!(first["machine"]["cores"].as_u64().is_some_and(|c| c > 0));
        let second: serde_json::Value = match serde_json::from_str(lines[1]) {
            Ok(value) => value,
            Err(error) => panic!("bad JSON line: {error}"),
        };
        assert!(second["server"].is_null());
    }

    #[test]
    fn csv_gets_header_once_and_a_row_per_op() {
        let dir = temp_dir();
        let path = dir.path().join("runs.csv");
        assert!(append_csv_line(&sample_report(Some(sample_probe())), &path).is_ok());
        assert!(append_csv_line(&sample_report(None), &path).is_ok());

        let text = read(&path);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 1 + 3 + 3, "{text}");
        assert_eq!(lines[0], CSV_HEADER);
        assert_eq!(lines.iter().filter(|line| **line == CSV_HEADER).count(), 1);
        let columns = CSV_HEADER.split(',').count();
        assert_eq!(columns, 23);
        for row in &lines[1..] {
            assert_eq!(row.split(',').count(), columns, "{row}");
        }
        let first: Vec<&str> = lines[1].split(',').collect();
        assert_eq!(first[1], "ycsb-a");
        assert_eq!(first[2], "read");
        assert_eq!(first[10], "batch");
        assert_eq!(first[13], "20000");
        assert_eq!(first[21], (120u64 << 20).to_string());
        assert_eq!(first[22], "1.500");
        let scan: Vec<&str> = lines[2].split(',').collect();
        assert_eq!(scan[2], "scan");
        let no_server: Vec<&str> = lines[4].split(',').collect();
        assert_eq!(no_server[21], "");
        assert_eq!(no_server[22], "");
    }

    #[test]
    fn csv_fields_with_commas_are_quoted() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }

    #[test]
    fn csv_to_a_missing_directory_is_an_error() {
        let dir = temp_dir();
        let path = dir.path().join("missing").join("runs.csv");
        let result = append_csv_line(&sample_report(None), &path);
        assert!(matches!(result, Err(ReportError::Io { .. })), "{result:?}");
    }

    fn assert_is_png(path: &Path) {
        let bytes = match fs::read(path) {
            Ok(bytes) => bytes,
            Err(error) => panic!("no plot written: {error}"),
        };
        assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"));
        assert!(bytes.len() > 1024, "only {} bytes", bytes.len());
    }

    #[test]
    fn plot_is_a_png() {
        let dir = temp_dir();
        let path = dir.path().join("latency.png");
        let result = write_latency_plot("ycsb-a, 8 connections", &sample_recorder(), &path);
        assert!(result.is_ok(), "{result:?}");
        assert_is_png(&path);
    }

    #[test]
    fn plot_with_text_uses_the_system_font() {
        // The project's machines have DejaVu; elsewhere this only checks the fallback.
        let expected = if Path::new(FONT_PATHS[0]).exists() {
            PlotText::Drawn
        } else {
            PlotText::Missing
        };
        let dir = temp_dir();
        let path = dir.path().join("latency.png");
        let result = write_latency_plot("title", &sample_recorder(), &path);
        assert_eq!(result.ok(), Some(expected));
    }

    #[test]
    fn plot_without_text_is_still_drawn() {
        let dir = temp_dir();
        let path = dir.path().join("no-text.png");
        let result = draw_latency_plot("t", &sample_recorder(), &path, PlotText::Missing);
        assert!(result.is_ok(), "{result:?}");
        assert_is_png(&path);
    }

    #[test]
    fn plot_of_an_empty_recorder_is_drawn() {
        let dir = temp_dir();
        let path = dir.path().join("empty.png");
        let result = write_latency_plot("nothing", &Recorder::new(), &path);
        assert!(result.is_ok(), "{result:?}");
        assert_is_png(&path);
    }

    #[test]
    fn plot_to_a_missing_directory_is_an_error() {
        let dir = temp_dir();
        let path = dir.path().join("missing").join("latency.png");
        let result = write_latency_plot("t", &sample_recorder(), &path);
        assert!(
            matches!(result, Err(ReportError::Plot { .. })),
            "{result:?}"
        );
    }

    #[test]
    fn percentile_axis_maps_nines_to_whole_numbers() {
        assert!(percentile_to_x(0.0).abs() < 1e-12);
        assert!((percentile_to_x(90.0) - 1.0).abs() < 1e-9);
        assert!((percentile_to_x(99.9) - 3.0).abs() < 1e-9);
        assert_eq!(percentile_label(percentile_to_x(99.99)), "99.99");
        assert_eq!(percentile_label(percentile_to_x(50.0)), "50");
        assert!((curve_x(100.0, 1_000) - 3.0).abs() < 1e-9);
        assert!((curve_x(99.99, 1_000) - 3.0).abs() < 1e-9);
    }

    #[test]
    fn axis_labels_are_readable() {
        assert_eq!(format_axis_ms(250.0), "250");
        assert_eq!(format_axis_ms(2.5), "2.5");
        assert_eq!(format_axis_ms(2.0), "2");
        assert_eq!(format_axis_ms(0.25), "0.25");
        assert_eq!(format_axis_ms(0.5), "0.5");
        assert_eq!(format_axis_ms(0.012), "0.012");
        assert_eq!(format_ms(1234.0), "1.234");
    }
}
