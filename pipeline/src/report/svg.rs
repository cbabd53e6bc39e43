//! Deterministic SVG plots for the markdown reports, written as plain text (no plotting dependency).
//!
//! - P1: the ROC curve with a pointwise interval band and the pre-registered `high` cut marked; the reliability
//!   diagram with bin sizes, Wilson intervals and a histogram of the confidences.
//! - P2: the bucket shares with their Wilson intervals; over many repositories, a forest plot of each one's share
//!   and the pooled share.
//! - P3: the share of eligible tasks with a signal by day since completion.
//! - Weekly: each headline share or score per week with its interval.
//!
//! Every plot says in its own legend what each mark is. The same data gives the same bytes: coordinates are
//! printed with two decimals (never `-0.00`), there is no clock, no random id, and no unordered map.
//! The functions here only draw: what they draw is computed by the callers ([`super::plots`]).

use std::fmt::Write as _;

use crate::stats::{Interval, ReliabilityBin};

const BLUE: &str = "#1f77b4";
const ORANGE: &str = "#ff7f0e";
const RED: &str = "#d62728";
const GREEN: &str = "#2ca02c";
const GREY: &str = "#7f7f7f";
const DARK: &str = "#222";

/// A coordinate as printed: two decimals, and `0.00` rather than `-0.00`.
fn n(value: f64) -> String {
    let text = format!("{value:.2}");
    if text == "-0.00" { "0.00".to_string() } else { text }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A rectangle of the picture and the data ranges it shows.
#[derive(Debug, Clone, Copy)]
struct Panel {
    left: f64,
    top: f64,
    width: f64,
    height: f64,
    x: (f64, f64),
    y: (f64, f64),
}

impl Panel {
    fn px(&self, value: f64) -> f64 {
        let t = ((value - self.x.0) / (self.x.1 - self.x.0)).clamp(0.0, 1.0);
        self.left + t * self.width
    }

    fn py(&self, value: f64) -> f64 {
        let t = ((value - self.y.0) / (self.y.1 - self.y.0)).clamp(0.0, 1.0);
        self.top + (1.0 - t) * self.height
    }

    fn right(&self) -> f64 {
        self.left + self.width
    }

    fn bottom(&self) -> f64 {
        self.top + self.height
    }
}

/// The opening tag, a white background and the `<title>`.
fn begin(out: &mut String, width: f64, height: f64, title: &str) {
    let (w, h) = (n(width), n(height));
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(out, "<title>{}</title>", escape(title));
    let _ = writeln!(out, r#"<rect x="0" y="0" width="{w}" height="{h}" fill="white"/>"#);
    let _ = writeln!(
        out,
        r#"<text x="{}" y="22" text-anchor="middle" font-weight="bold" font-size="14">{}</text>"#,
        n(width / 2.0),
        escape(title)
    );
}

fn end(out: &mut String) {
    out.push_str("</svg>\n");
}

fn text(out: &mut String, x: f64, y: f64, anchor: &str, size: u32, body: &str) {
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}" text-anchor="{anchor}" font-size="{size}">{}</text>"#,
        n(x),
        n(y),
        escape(body)
    );
}

fn line(out: &mut String, (x1, y1): (f64, f64), (x2, y2): (f64, f64), stroke: &str, width: f64, dash: Option<&str>) {
    let dash = dash.map_or_else(String::new, |d| format!(r#" stroke-dasharray="{d}""#));
    let _ = writeln!(
        out,
        r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{stroke}" stroke-width="{}"{dash}/>"#,
        n(x1),
        n(y1),
        n(x2),
        n(y2),
        n(width)
    );
}

/// A vertical error bar from `y1` to `y2` at `x`, with caps `cap` pixels wide.
fn v_whisker(out: &mut String, x: f64, y1: f64, y2: f64, cap: f64, stroke: &str) {
    line(out, (x, y1), (x, y2), stroke, 1.5, None);
    line(out, (x - cap / 2.0, y1), (x + cap / 2.0, y1), stroke, 1.5, None);
    line(out, (x - cap / 2.0, y2), (x + cap / 2.0, y2), stroke, 1.5, None);
}

/// A horizontal error bar from `x1` to `x2` at `y`.
fn h_whisker(out: &mut String, y: f64, x1: f64, x2: f64, cap: f64, stroke: &str) {
    line(out, (x1, y), (x2, y), stroke, 1.5, None);
    line(out, (x1, y - cap / 2.0), (x1, y + cap / 2.0), stroke, 1.5, None);
    line(out, (x2, y - cap / 2.0), (x2, y + cap / 2.0), stroke, 1.5, None);
}

/// The panel's border, tick labels (value, text) on both axes with light grid lines, and the axis labels.
fn axes(out: &mut String, panel: &Panel, x_ticks: &[(f64, String)], y_ticks: &[(f64, String)], labels: (&str, &str)) {
    for (value, label) in y_ticks {
        let y = panel.py(*value);
        line(out, (panel.left, y), (panel.right(), y), "#e5e5e5", 1.0, None);
        text(out, panel.left - 6.0, y + 4.0, "end", 11, label);
    }
    for (value, label) in x_ticks {
        let x = panel.px(*value);
        line(out, (x, panel.bottom()), (x, panel.bottom() + 4.0), "#444", 1.0, None);
        text(out, x, panel.bottom() + 16.0, "middle", 11, label);
    }
    let _ = writeln!(
        out,
        r##"<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#444"/>"##,
        n(panel.left),
        n(panel.top),
        n(panel.width),
        n(panel.height)
    );
    if !labels.0.is_empty() {
        text(
            out,
            panel.left + panel.width / 2.0,
            panel.bottom() + 32.0,
            "middle",
            12,
            labels.0,
        );
    }
    if !labels.1.is_empty() {
        let (x, y) = (panel.left - 40.0, panel.top + panel.height / 2.0);
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{}" text-anchor="middle" transform="rotate(-90 {} {})">{}</text>"#,
            n(x),
            n(y),
            n(x),
            n(y),
            escape(labels.1)
        );
    }
}

/// What a legend entry's swatch looks like.
#[derive(Debug, Clone, Copy)]
enum Swatch<'a> {
    Line { stroke: &'a str, dash: Option<&'a str> },
    Area { fill: &'a str, opacity: f64 },
    Dot { fill: &'a str },
    Whisker { stroke: &'a str },
    Note,
}

/// One legend line per entry, from `(left, top)`, 16 pixels apart; returns the y below the last.
fn legend(out: &mut String, left: f64, top: f64, entries: &[(Swatch<'_>, String)]) -> f64 {
    let mut y = top;
    for (swatch, label) in entries {
        let mid = y - 4.0;
        match *swatch {
            Swatch::Line { stroke, dash } => line(out, (left, mid), (left + 18.0, mid), stroke, 2.0, dash),
            Swatch::Area { fill, opacity } => {
                let _ = writeln!(
                    out,
                    r#"<rect x="{}" y="{}" width="18" height="10" fill="{fill}" fill-opacity="{opacity}" stroke="{fill}"/>"#,
                    n(left),
                    n(mid - 5.0)
                );
            }
            Swatch::Dot { fill } => {
                let _ = writeln!(
                    out,
                    r#"<circle cx="{}" cy="{}" r="4" fill="{fill}"/>"#,
                    n(left + 9.0),
                    n(mid)
                );
            }
            Swatch::Whisker { stroke } => v_whisker(out, left + 9.0, mid - 6.0, mid + 6.0, 6.0, stroke),
            Swatch::Note => {}
        }
        let x = if matches!(swatch, Swatch::Note) {
            left
        } else {
            left + 26.0
        };
        text(out, x, y, "start", 11, label);
        y += 16.0;
    }
    y
}

/// Tick values from 0 to `max` in steps of 1, 2 or 5 times a power of ten (at most about 6 ticks).
fn nice_ticks(max: f64) -> Vec<f64> {
    if max.is_nan() || max <= 0.0 {
        return vec![0.0];
    }
    let raw = max / 5.0;
    let power = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|&s| s >= raw)
        .unwrap_or(10.0 * power);
    let count = (max / step).ceil() as usize;
    (0..=count).map(|i| i as f64 * step).collect()
}

/// A range covering `[lo, hi]` whose ends and ticks are multiples of a step of 1, 2 or 5 times a power of ten
/// (about 4 steps).
fn nice_range(lo: f64, hi: f64) -> Vec<f64> {
    let span = (hi - lo).max(1e-9);
    let raw = span / 4.0;
    let power = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|&s| s >= raw)
        .unwrap_or(10.0 * power);
    let first = (lo / step).floor() as i64;
    let last = (hi / step).ceil() as i64;
    // Multiplying the integer index by the step (rather than adding steps) keeps every tick exact to print.
    (first..=last.max(first + 1)).map(|k| k as f64 * step).collect()
}

fn percent_label(value: f64) -> String {
    format!("{}%", plain_label(value * 100.0))
}

fn plain_label(value: f64) -> String {
    let text = n(value);
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        &text
    };
    if text == "-0" {
        "0".to_string()
    } else {
        text.to_string()
    }
}

/// At most this many points of a curve are drawn: a corpus of millions of distinct confidences would otherwise
/// make a plot of hundreds of megabytes.
const MAX_POINTS: usize = 2_000;

/// The indices of `pixels` kept: every point at least half a pixel from the last kept one, at most about
/// [`MAX_POINTS`] of them, and always the first and the last.
fn thin(pixels: &[(f64, f64)]) -> Vec<usize> {
    let step = pixels.len().div_ceil(MAX_POINTS).max(1);
    let mut kept: Vec<usize> = Vec::new();
    for (i, &(x, y)) in pixels.iter().enumerate() {
        let last = i + 1 == pixels.len();
        let far = kept.last().is_none_or(|&k| {
            let (kx, ky) = pixels[k];
            (kx - x).abs() >= 0.5 || (ky - y).abs() >= 0.5
        });
        if last || (far && i % step == 0) {
            kept.push(i);
        }
    }
    kept
}

fn points_attr(points: impl IntoIterator<Item = (f64, f64)>) -> String {
    points
        .into_iter()
        .map(|(x, y)| format!("{},{}", n(x), n(y)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The ROC plot's inputs.
#[derive(Debug, Clone)]
pub struct RocPlot<'a> {
    pub title: &'a str,
    /// `(false-positive rate, true-positive rate)` from `(0, 0)` to `(1, 1)`.
    pub points: &'a [(f64, f64)],
    /// The band around each point: `(lo, hi)` of the true-positive rate, as many as `points`; empty for none.
    pub band: &'a [(f64, f64)],
    /// The legend's words for the curve (with the AUC) and the band.
    pub curve_label: String,
    pub band_label: String,
    /// The pre-registered high-confidence cut: `(fpr, tpr)` and its legend text.
    pub high: Option<((f64, f64), String)>,
}

const ROC_PANEL: Panel = Panel {
    left: 64.0,
    top: 40.0,
    width: 320.0,
    height: 320.0,
    x: (0.0, 1.0),
    y: (0.0, 1.0),
};

fn unit_ticks() -> Vec<(f64, String)> {
    [0.0, 0.25, 0.5, 0.75, 1.0]
        .iter()
        .map(|&v| (v, plain_label(v)))
        .collect()
}

/// The ROC curve, its band, the chance diagonal and the high-confidence cut.
pub fn roc(plot: &RocPlot<'_>) -> String {
    let p = ROC_PANEL;
    let mut out = String::new();
    let (width, height) = (520.0, 500.0);
    begin(&mut out, width, height, plot.title);
    axes(
        &mut out,
        &p,
        &unit_ticks(),
        &unit_ticks(),
        (
            "false-positive rate (share of wrong rows at or above the cut)",
            "true-positive rate (share of correct rows)",
        ),
    );
    line(
        &mut out,
        (p.px(0.0), p.py(0.0)),
        (p.px(1.0), p.py(1.0)),
        GREY,
        1.0,
        Some("4 4"),
    );
    let pixels: Vec<(f64, f64)> = plot.points.iter().map(|&(x, y)| (p.px(x), p.py(y))).collect();
    let kept = thin(&pixels);
    if plot.band.len() == plot.points.len() && !plot.band.is_empty() {
        let upper = kept.iter().map(|&i| (pixels[i].0, p.py(plot.band[i].1)));
        let lower = kept.iter().rev().map(|&i| (pixels[i].0, p.py(plot.band[i].0)));
        let _ = writeln!(
            out,
            r#"<polygon fill="{BLUE}" fill-opacity="0.18" stroke="none" points="{}"/>"#,
            points_attr(upper.chain(lower))
        );
    }
    let _ = writeln!(
        out,
        r#"<polyline fill="none" stroke="{BLUE}" stroke-width="2" points="{}"/>"#,
        points_attr(kept.iter().map(|&i| pixels[i]))
    );
    let mut entries = vec![
        (
            Swatch::Line {
                stroke: BLUE,
                dash: None,
            },
            plot.curve_label.clone(),
        ),
        (
            Swatch::Area {
                fill: BLUE,
                opacity: 0.18,
            },
            plot.band_label.clone(),
        ),
    ];
    if let Some(((fpr, tpr), label)) = &plot.high {
        let _ = writeln!(
            out,
            r#"<circle cx="{}" cy="{}" r="5" fill="{ORANGE}" stroke="{DARK}"><title>{}</title></circle>"#,
            n(p.px(*fpr)),
            n(p.py(*tpr)),
            escape(label)
        );
        entries.push((Swatch::Dot { fill: ORANGE }, label.clone()));
    }
    entries.push((
        Swatch::Line {
            stroke: GREY,
            dash: Some("4 4"),
        },
        "chance (a curve no better than guessing: AUC 0.5)".to_string(),
    ));
    legend(&mut out, 24.0, 420.0, &entries);
    end(&mut out);
    out
}

/// One bin of the reliability diagram: the bin and its accuracy's interval.
#[derive(Debug, Clone, Copy)]
pub struct ReliabilityBar {
    pub bin: ReliabilityBin,
    /// The Wilson interval of the bin's accuracy.
    pub interval: Interval,
}

/// The reliability diagram's inputs.
#[derive(Debug, Clone)]
pub struct ReliabilityPlot<'a> {
    pub title: &'a str,
    pub bars: &'a [ReliabilityBar],
    /// `95%`: the level of the intervals, as the legend prints it.
    pub level: String,
}

/// Accuracy per confidence bin (bars over each bin's range, labelled with the bin's rows), each bin's accuracy at
/// its mean confidence with its Wilson interval, the diagonal of perfect calibration, and under it a histogram
/// of the rows per bin.
pub fn reliability(plot: &ReliabilityPlot<'_>) -> String {
    let main = Panel {
        left: 64.0,
        top: 56.0,
        width: 320.0,
        height: 300.0,
        x: (0.0, 1.0),
        y: (0.0, 1.0),
    };
    let max_n = plot.bars.iter().map(|b| b.bin.n).max().unwrap_or(0);
    let count_ticks = nice_ticks(max_n as f64);
    let count_max = count_ticks.last().copied().filter(|&m| m > 0.0).unwrap_or(1.0);
    let hist = Panel {
        top: 388.0,
        height: 90.0,
        y: (0.0, count_max),
        ..main
    };
    let mut out = String::new();
    begin(&mut out, 520.0, 636.0, plot.title);
    let tenths: Vec<(f64, String)> = (0..=10)
        .map(|k| f64::from(k) / 10.0)
        .map(|v| {
            (
                v,
                if (v * 10.0).round() as i64 % 2 == 0 {
                    plain_label(v)
                } else {
                    String::new()
                },
            )
        })
        .collect();
    axes(
        &mut out,
        &main,
        &tenths,
        &unit_ticks(),
        ("", "accuracy (share correct)"),
    );
    line(
        &mut out,
        (main.px(0.0), main.py(0.0)),
        (main.px(1.0), main.py(1.0)),
        GREY,
        1.0,
        Some("4 4"),
    );
    for bar in plot.bars {
        let b = &bar.bin;
        let (left, right) = (main.px(b.lo), main.px(b.hi.max(b.lo)));
        let top = main.py(b.accuracy);
        // Paler for fewer rows: a bin of one row is a faint bar, the fullest bin the strongest.
        let opacity = 0.08 + 0.32 * (b.n as f64 / max_n.max(1) as f64).sqrt();
        let _ = writeln!(
            out,
            r#"<rect x="{}" y="{}" width="{}" height="{}" fill="{BLUE}" fill-opacity="{}" stroke="{BLUE}"><title>[{}, {}]: n = {}, accuracy {:.3} [{:.3}, {:.3}], mean confidence {:.3}</title></rect>"#,
            n(left),
            n(top),
            n((right - left).max(1.0)),
            n(main.bottom() - top),
            n(opacity),
            b.lo,
            b.hi,
            b.n,
            b.accuracy,
            bar.interval.lo,
            bar.interval.hi,
            b.mean_confidence
        );
        // Kept 4 pixels inside the frame so that a mean confidence of 0 or 1 does not hide the whisker in it.
        let x = main.px(b.mean_confidence).clamp(main.left + 4.0, main.right() - 4.0);
        v_whisker(
            &mut out,
            x,
            main.py(bar.interval.lo),
            main.py(bar.interval.hi),
            6.0,
            DARK,
        );
        let _ = writeln!(out, r#"<circle cx="{}" cy="{}" r="3" fill="{DARK}"/>"#, n(x), n(top));
        // The bin's size above the panel, over its bar.
        text(
            &mut out,
            (left + right) / 2.0,
            main.top - 6.0,
            "middle",
            10,
            &b.n.to_string(),
        );
    }
    text(&mut out, main.left - 6.0, main.top - 6.0, "end", 10, "rows");
    axes(
        &mut out,
        &hist,
        &tenths,
        &[(0.0, "0".to_string()), (count_max, plain_label(count_max))],
        ("confidence", "rows"),
    );
    for bar in plot.bars {
        let b = &bar.bin;
        let (left, right) = (hist.px(b.lo), hist.px(b.hi.max(b.lo)));
        let top = hist.py(b.n as f64);
        let _ = writeln!(
            out,
            r##"<rect x="{}" y="{}" width="{}" height="{}" fill="{GREY}" fill-opacity="0.5" stroke="{GREY}"/>"##,
            n(left),
            n(top),
            n((right - left).max(1.0)),
            n(hist.bottom() - top)
        );
    }
    legend(
        &mut out,
        24.0,
        536.0,
        &[
            (
                Swatch::Area {
                    fill: BLUE,
                    opacity: 0.4,
                },
                "bar: share correct of the bin's rows (its rows above it; paler: fewer rows)".to_string(),
            ),
            (
                Swatch::Whisker { stroke: DARK },
                format!(
                    "dot, whisker: that share at the bin's mean confidence, Wilson {} interval",
                    plot.level
                ),
            ),
            (
                Swatch::Line {
                    stroke: GREY,
                    dash: Some("4 4"),
                },
                "perfect calibration (share correct = confidence)".to_string(),
            ),
            (
                Swatch::Area {
                    fill: GREY,
                    opacity: 0.5,
                },
                "histogram: rows per confidence bin (equal-width bins of 0.1)".to_string(),
            ),
            (
                Swatch::Note,
                "Empty bins are not drawn; a bin of few rows has a wide interval, whatever its bar.".to_string(),
            ),
        ],
    );
    end(&mut out);
    out
}

/// Starts a chart of one share per row on a 0–100% axis: the picture and its title, the panel (`rows` rows of
/// `row_height` from x `left`, 300 pixels wide) and its axis labelled `axis`. Returns the panel and the top of the
/// legend, which takes `legend_lines` lines below.
fn share_rows_begin(
    out: &mut String,
    title: &str,
    (rows, row_height): (usize, f64),
    (left, width): (f64, f64),
    legend_lines: usize,
    axis: &str,
) -> (Panel, f64) {
    let panel = Panel {
        left,
        top: 44.0,
        width: 300.0,
        height: row_height * rows.max(1) as f64,
        x: (0.0, 1.0),
        y: (0.0, 1.0),
    };
    let legend_top = panel.bottom() + 56.0;
    let height = legend_top + 16.0 * legend_lines as f64 + 4.0;
    begin(out, width, height, title);
    let ticks: Vec<(f64, String)> = [0.0, 0.25, 0.5, 0.75, 1.0]
        .iter()
        .map(|&v| (v, percent_label(v)))
        .collect();
    axes(out, &panel, &ticks, &[], (axis, ""));
    (panel, legend_top)
}

/// A row's label left of the panel at height `mid`, and `undefined (count)` in it when `share` is `None`.
fn share_row_label(out: &mut String, panel: &Panel, mid: f64, label: &str, share: Option<Interval>, count: &str) {
    text(out, panel.left - 8.0, mid + 4.0, "end", 12, label);
    if share.is_none() {
        text(
            out,
            panel.left + 6.0,
            mid + 4.0,
            "start",
            11,
            &format!("undefined ({count})"),
        );
    }
}

/// `share [lo, hi] (count)` right of the panel at height `mid`.
fn share_row_value(out: &mut String, panel: &Panel, mid: f64, share: &Interval, count: &str) {
    text(
        out,
        panel.right() + 8.0,
        mid + 4.0,
        "start",
        11,
        &format!(
            "{} [{}, {}] ({count})",
            percent1(share.estimate),
            percent1(share.lo),
            percent1(share.hi),
        ),
    );
}

/// One row of a horizontal share chart.
#[derive(Debug, Clone)]
pub struct ShareRow {
    pub label: String,
    /// `None`: undefined (no denominator), drawn as a note.
    pub share: Option<Interval>,
    /// What the share counts, `3/40`.
    pub count: String,
    /// Drawn greyed (a share of another denominator).
    pub muted: bool,
}

/// The bucket chart's inputs.
#[derive(Debug, Clone)]
pub struct SharesPlot<'a> {
    pub title: &'a str,
    pub rows: &'a [ShareRow],
    /// A vertical line across one row: `(row, share, legend text)`.
    pub threshold: Option<(usize, f64, String)>,
    pub level: String,
    /// Extra legend lines (what the denominators are).
    pub notes: Vec<String>,
}

/// Horizontal bars of shares (0–100%) with their intervals as error bars, each labelled with the share, the
/// interval and the counts; an optional threshold line.
pub fn shares(plot: &SharesPlot<'_>) -> String {
    let row_height = 34.0;
    let legend_lines = 2 + usize::from(plot.threshold.is_some()) + plot.notes.len();
    let mut out = String::new();
    let (panel, legend_top) = share_rows_begin(
        &mut out,
        plot.title,
        (plot.rows.len(), row_height),
        (190.0, 720.0),
        legend_lines,
        "share",
    );
    for (i, row) in plot.rows.iter().enumerate() {
        let mid = panel.top + row_height * (i as f64 + 0.5);
        let (fill, opacity) = if row.muted { (GREY, 0.35) } else { (BLUE, 0.5) };
        share_row_label(&mut out, &panel, mid, &row.label, row.share, &row.count);
        let Some(share) = row.share else {
            continue;
        };
        let right = panel.px(share.estimate);
        let _ = writeln!(
            out,
            r#"<rect x="{}" y="{}" width="{}" height="{}" fill="{fill}" fill-opacity="{opacity}" stroke="{fill}"/>"#,
            n(panel.left),
            n(mid - 10.0),
            n(right - panel.left),
            n(20.0)
        );
        h_whisker(&mut out, mid, panel.px(share.lo), panel.px(share.hi), 10.0, DARK);
        share_row_value(&mut out, &panel, mid, &share, &row.count);
    }
    let mut entries = vec![
        (
            Swatch::Area {
                fill: BLUE,
                opacity: 0.5,
            },
            "bar: the share (label: share [interval] (count))".to_string(),
        ),
        (
            Swatch::Whisker { stroke: DARK },
            format!("whisker: Wilson {} interval of the share", plot.level),
        ),
    ];
    if let Some((row, value, label)) = &plot.threshold {
        let x = panel.px(*value);
        let top = panel.top + row_height * *row as f64;
        line(
            &mut out,
            (x, top + 2.0),
            (x, top + row_height - 2.0),
            RED,
            2.0,
            Some("4 2"),
        );
        entries.push((
            Swatch::Line {
                stroke: RED,
                dash: Some("4 2"),
            },
            label.clone(),
        ));
    }
    entries.extend(plot.notes.iter().map(|note| (Swatch::Note, note.clone())));
    legend(&mut out, 24.0, legend_top, &entries);
    end(&mut out);
    out
}

/// One row of a forest plot.
#[derive(Debug, Clone)]
pub struct ForestRow {
    pub label: String,
    /// `None`: undefined (no denominator), drawn as a note.
    pub share: Option<Interval>,
    /// What the share counts, `3/40`.
    pub count: String,
    /// The pooled row: a diamond over its interval instead of a dot and a whisker.
    pub pooled: bool,
}

/// A forest plot's inputs.
#[derive(Debug, Clone)]
pub struct ForestPlot<'a> {
    pub title: &'a str,
    pub rows: &'a [ForestRow],
    /// A vertical line across every row: `(share, legend text)`.
    pub threshold: (f64, String),
    /// What the whiskers and the diamond are, one legend line each.
    pub row_legend: String,
    pub pooled_legend: String,
    pub notes: Vec<String>,
}

/// Each row's share as a dot with its interval as a whisker, the pooled row as a diamond spanning its interval,
/// on one 0–100% axis with the threshold drawn across all rows.
pub fn forest(plot: &ForestPlot<'_>) -> String {
    let row_height = 28.0;
    let mut out = String::new();
    let (panel, legend_top) = share_rows_begin(
        &mut out,
        plot.title,
        (plot.rows.len(), row_height),
        (220.0, 760.0),
        3 + plot.notes.len(),
        "only-self-reflection share",
    );
    for (i, row) in plot.rows.iter().enumerate() {
        let mid = panel.top + row_height * (i as f64 + 0.5);
        share_row_label(&mut out, &panel, mid, &row.label, row.share, &row.count);
        let Some(share) = row.share else {
            continue;
        };
        if row.pooled {
            let (lo, hi, at) = (panel.px(share.lo), panel.px(share.hi), panel.px(share.estimate));
            let _ = writeln!(
                out,
                r#"<polygon points="{},{} {},{} {},{} {},{}" fill="{ORANGE}" fill-opacity="0.7" stroke="{ORANGE}"/>"#,
                n(lo),
                n(mid),
                n(at),
                n(mid - 8.0),
                n(hi),
                n(mid),
                n(at),
                n(mid + 8.0)
            );
        } else {
            h_whisker(&mut out, mid, panel.px(share.lo), panel.px(share.hi), 8.0, DARK);
            let _ = writeln!(
                out,
                r#"<circle cx="{}" cy="{}" r="4" fill="{BLUE}"/>"#,
                n(panel.px(share.estimate)),
                n(mid)
            );
        }
        share_row_value(&mut out, &panel, mid, &share, &row.count);
    }
    let x = panel.px(plot.threshold.0);
    line(&mut out, (x, panel.top), (x, panel.bottom()), RED, 2.0, Some("4 2"));
    let mut entries = vec![
        (Swatch::Whisker { stroke: DARK }, plot.row_legend.clone()),
        (
            Swatch::Area {
                fill: ORANGE,
                opacity: 0.7,
            },
            plot.pooled_legend.clone(),
        ),
        (
            Swatch::Line {
                stroke: RED,
                dash: Some("4 2"),
            },
            plot.threshold.1.clone(),
        ),
    ];
    entries.extend(plot.notes.iter().map(|note| (Swatch::Note, note.clone())));
    legend(&mut out, 24.0, legend_top, &entries);
    end(&mut out);
    out
}

fn percent1(value: f64) -> String {
    format!("{:.1}%", value * 100.0)
}

/// The detection curve's inputs: the share of tasks with a signal by each day since completion.
#[derive(Debug, Clone)]
pub struct DetectionPlot<'a> {
    pub title: &'a str,
    /// Day `d` (0..=window): the share of the eligible tasks with a signal within `d` days, with its interval.
    pub by_day: &'a [Interval],
    /// The kill threshold on the share at the end of the window.
    pub threshold: Option<(f64, String)>,
    pub curve_label: String,
    pub band_label: String,
    /// What was left out (censoring), one legend line each.
    pub notes: Vec<String>,
}

/// A step function of the share by day with its pointwise band, and the threshold.
pub fn detection(plot: &DetectionPlot<'_>) -> String {
    let days = plot.by_day.len().saturating_sub(1).max(1) as f64;
    let top_value = plot
        .by_day
        .iter()
        .map(|i| i.hi)
        .chain(plot.threshold.as_ref().map(|(t, _)| *t))
        .fold(0.0f64, f64::max);
    let y_ticks = nice_ticks((top_value * 1.05).clamp(0.05, 1.0));
    let y_max = y_ticks.last().copied().unwrap_or(1.0).min(1.0);
    let panel = Panel {
        left: 64.0,
        top: 40.0,
        width: 400.0,
        height: 260.0,
        x: (0.0, days),
        y: (0.0, y_max),
    };
    let mut out = String::new();
    let legend_lines = 2 + usize::from(plot.threshold.is_some()) + plot.notes.len();
    let height = 360.0 + 16.0 * legend_lines as f64 + 4.0;
    begin(&mut out, 520.0, height, plot.title);
    let x_ticks: Vec<(f64, String)> = nice_ticks(days)
        .into_iter()
        .filter(|&d| d <= days)
        .map(|d| (d, plain_label(d)))
        .collect();
    let y_ticks: Vec<(f64, String)> = y_ticks
        .iter()
        .filter(|&&v| v <= y_max)
        .map(|&v| (v, percent_label(v)))
        .collect();
    axes(
        &mut out,
        &panel,
        &x_ticks,
        &y_ticks,
        (
            "days since the task's first completion",
            "share of eligible tasks with a signal",
        ),
    );
    // Each day's value holds from that day to the next: steps.
    let step = |value: &dyn Fn(&Interval) -> f64| -> Vec<(f64, f64)> {
        let mut points = Vec::with_capacity(plot.by_day.len() * 2);
        for (d, interval) in plot.by_day.iter().enumerate() {
            let y = panel.py(value(interval));
            let x0 = panel.px(d as f64);
            let x1 = panel.px((d as f64 + 1.0).min(days));
            points.push((x0, y));
            if x1 > x0 {
                points.push((x1, y));
            }
        }
        // Drop repeated points and the middle of straight runs: a 30-day step has a few corners, not 62.
        let mut kept: Vec<(f64, f64)> = Vec::with_capacity(points.len());
        for point in points {
            if kept.last() == Some(&point) {
                continue;
            }
            if let [.., a, b] = kept.as_slice()
                && ((a.1 == b.1 && b.1 == point.1) || (a.0 == b.0 && b.0 == point.0))
            {
                kept.pop();
            }
            kept.push(point);
        }
        kept
    };
    if !plot.by_day.is_empty() {
        let upper = step(&|i| i.hi);
        let mut lower = step(&|i| i.lo);
        lower.reverse();
        let _ = writeln!(
            out,
            r#"<polygon fill="{BLUE}" fill-opacity="0.18" stroke="none" points="{}"/>"#,
            points_attr(upper.into_iter().chain(lower))
        );
        let _ = writeln!(
            out,
            r#"<polyline fill="none" stroke="{BLUE}" stroke-width="2" points="{}"/>"#,
            points_attr(step(&|i| i.estimate))
        );
    }
    let mut entries = vec![
        (
            Swatch::Line {
                stroke: BLUE,
                dash: None,
            },
            plot.curve_label.clone(),
        ),
        (
            Swatch::Area {
                fill: BLUE,
                opacity: 0.18,
            },
            plot.band_label.clone(),
        ),
    ];
    if let Some((value, label)) = &plot.threshold {
        let y = panel.py(*value);
        line(&mut out, (panel.left, y), (panel.right(), y), RED, 1.5, Some("5 3"));
        entries.push((
            Swatch::Line {
                stroke: RED,
                dash: Some("5 3"),
            },
            label.clone(),
        ));
    }
    if let Some(last) = plot.by_day.last() {
        text(
            &mut out,
            panel.right() - 4.0,
            (panel.py(last.hi) - 6.0).max(panel.top + 12.0),
            "end",
            11,
            &format!("day {}: {}", plot.by_day.len() - 1, percent1(last.estimate)),
        );
    }
    entries.extend(plot.notes.iter().map(|note| (Swatch::Note, note.clone())));
    legend(&mut out, 24.0, 360.0, &entries);
    end(&mut out);
    out
}

/// One week's value of a trend panel.
#[derive(Debug, Clone)]
pub struct TrendPoint {
    pub week: String,
    /// The value and its interval (lo = hi = value when the report has none), or nothing that week.
    pub value: Option<(f64, Option<(f64, f64)>)>,
    /// `PASS`, `KILL`, `INCONCLUSIVE`, or how it did not run: the point's colour.
    pub verdict: String,
}

/// One panel of the weekly trend: one headline number over the weeks.
#[derive(Debug, Clone)]
pub struct TrendPanel {
    pub title: String,
    pub points: Vec<TrendPoint>,
    /// Shares print as percentages.
    pub percent: bool,
    pub threshold: Option<(f64, String)>,
}

fn verdict_colour(verdict: &str) -> &'static str {
    match verdict {
        "PASS" => GREEN,
        "KILL" => RED,
        _ => GREY,
    }
}

/// The weekly trend: a panel per headline number, weeks along the x axis, each week's value with its interval,
/// coloured by the week's verdict.
pub fn trend(title: &str, panels: &[TrendPanel]) -> String {
    let panel_height = 120.0;
    let gap = 64.0;
    let weeks = panels.iter().map(|p| p.points.len()).max().unwrap_or(0).max(1);
    let mut out = String::new();
    let width = 560.0;
    let legend_top = 40.0 + (panel_height + gap) * panels.len() as f64 + 8.0;
    let height = legend_top + 16.0 * 5.0;
    begin(&mut out, width, height, title);
    // Every k-th week is labelled so that labels do not overlap (a label is about 60 pixels wide).
    let label_every = (weeks * 60).div_ceil(420).max(1);
    for (k, trend) in panels.iter().enumerate() {
        let values = trend.points.iter().filter_map(|p| p.value);
        let mut lo = f64::INFINITY;
        let mut hi = f64::NEG_INFINITY;
        for (v, interval) in values {
            let (a, b) = interval.unwrap_or((v, v));
            lo = lo.min(a).min(v);
            hi = hi.max(b).max(v);
        }
        if let Some((t, _)) = &trend.threshold {
            lo = lo.min(*t);
            hi = hi.max(*t);
        }
        if !lo.is_finite() {
            (lo, hi) = (0.0, 1.0);
        }
        if trend.percent {
            (lo, hi) = (0.0, hi.min(1.0));
        }
        let ticks = nice_range(lo, hi);
        let (y0, y1) = (ticks[0], ticks[ticks.len() - 1]);
        let panel = Panel {
            left: 72.0,
            top: 40.0 + (panel_height + gap) * k as f64 + 18.0,
            width: 420.0,
            height: panel_height - 18.0,
            x: (-0.5, weeks as f64 - 0.5),
            y: (y0, y1),
        };
        text(&mut out, panel.left, panel.top - 6.0, "start", 12, &trend.title);
        let format = |v: f64| {
            if trend.percent { percent1(v) } else { format!("{v:.2}") }
        };
        let tick_label = |v: f64| {
            if trend.percent {
                percent_label(v)
            } else {
                plain_label(v)
            }
        };
        let y_ticks: Vec<(f64, String)> = ticks.iter().map(|&v| (v, tick_label(v))).collect();
        let x_ticks: Vec<(f64, String)> = trend
            .points
            .iter()
            .enumerate()
            .filter(|(i, _)| (trend.points.len() - 1 - i) % label_every == 0)
            .map(|(i, p)| (i as f64, p.week.clone()))
            .collect();
        axes(&mut out, &panel, &x_ticks, &y_ticks, ("", ""));
        if let Some((t, _)) = &trend.threshold {
            let y = panel.py(*t);
            line(&mut out, (panel.left, y), (panel.right(), y), RED, 1.5, Some("5 3"));
        }
        let path: Vec<(f64, f64)> = trend
            .points
            .iter()
            .enumerate()
            .filter_map(|(i, p)| p.value.map(|(v, _)| (panel.px(i as f64), panel.py(v))))
            .collect();
        if path.len() > 1 {
            let _ = writeln!(
                out,
                r#"<polyline fill="none" stroke="{GREY}" stroke-width="1" points="{}"/>"#,
                points_attr(path)
            );
        }
        for (i, point) in trend.points.iter().enumerate() {
            let x = panel.px(i as f64);
            let Some((value, interval)) = point.value else {
                text(
                    &mut out,
                    x,
                    panel.top + panel.height / 2.0 + 4.0,
                    "middle",
                    10,
                    "not run",
                );
                continue;
            };
            if let Some((a, b)) = interval {
                v_whisker(&mut out, x, panel.py(a), panel.py(b), 6.0, DARK);
            }
            let _ = writeln!(
                out,
                r#"<circle cx="{}" cy="{}" r="4" fill="{}" stroke="{DARK}"><title>{} {}: {}{}</title></circle>"#,
                n(x),
                n(panel.py(value)),
                verdict_colour(&point.verdict),
                escape(&point.week),
                escape(&point.verdict),
                format(value),
                interval.map_or_else(String::new, |(a, b)| format!(" [{}, {}]", format(a), format(b)))
            );
        }
        if let Some((_, label)) = &trend.threshold {
            text(&mut out, panel.right() - 4.0, panel.top + 12.0, "end", 10, label);
        }
    }
    legend(
        &mut out,
        24.0,
        legend_top + 8.0,
        &[
            (Swatch::Dot { fill: GREEN }, "week's value, verdict PASS".to_string()),
            (Swatch::Dot { fill: RED }, "week's value, verdict KILL".to_string()),
            (
                Swatch::Dot { fill: GREY },
                "week's value, verdict INCONCLUSIVE (or no verdict)".to_string(),
            ),
            (
                Swatch::Whisker { stroke: DARK },
                "the interval the report gives (DeLong for the AUC, Newcombe for the lift, Wilson for shares)"
                    .to_string(),
            ),
            (
                Swatch::Line {
                    stroke: RED,
                    dash: Some("5 3"),
                },
                "the pre-registered kill threshold, where the report records it".to_string(),
            ),
        ],
    );
    end(&mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_never_print_negative_zero() {
        assert_eq!(n(-0.001), "0.00");
        assert_eq!(n(12.345), "12.35");
        assert_eq!(percent_label(0.25), "25%");
        assert_eq!(percent_label(0.125), "12.5%");
        assert_eq!(plain_label(0.5), "0.5");
        assert_eq!(plain_label(10.0), "10");
    }

    #[test]
    fn nice_ticks_step_by_one_two_or_five() {
        assert_eq!(nice_ticks(30.0), [0.0, 10.0, 20.0, 30.0]);
        assert_eq!(nice_ticks(7.0), [0.0, 2.0, 4.0, 6.0, 8.0]);
        assert_eq!(nice_ticks(0.0), [0.0]);
        assert_eq!(nice_ticks(1.0), [0.0, 0.2, 0.4, 0.6000000000000001, 0.8, 1.0]);
    }

    #[test]
    fn long_curves_are_thinned_but_keep_their_ends() {
        let points: Vec<(f64, f64)> = (0..=1_000_000)
            .map(|i| (f64::from(i) / 1e6, (f64::from(i) / 1e6).sqrt()))
            .collect();
        let svg = roc(&RocPlot {
            title: "big",
            points: &points,
            band: &[],
            curve_label: String::new(),
            band_label: String::new(),
            high: None,
        });
        let drawn = svg
            .split("<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\" points=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap()
            .split(' ')
            .count();
        assert!(drawn <= MAX_POINTS + 1, "{drawn} points drawn");
        assert!(svg.contains("points=\"64.00,360.00 "));
        assert!(svg.contains(" 384.00,40.00\""));
        assert!(svg.len() < 60_000, "{} bytes", svg.len());
    }
}
