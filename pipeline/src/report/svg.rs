//! Deterministic SVG plots for the markdown reports: a ROC curve and a reliability diagram.
//!
//! Plain SVG text, coordinates rounded to 0.01 px, no timestamps or ids that vary: the same data gives the same
//! bytes. The plot area is the unit square mapped to `SIZE`×`SIZE` pixels inside a margin.

use std::fmt::Write as _;

use crate::stats::ReliabilityBin;

const SIZE: f64 = 320.0;
const MARGIN: f64 = 48.0;

fn x(value: f64) -> f64 {
    MARGIN + value.clamp(0.0, 1.0) * SIZE
}

fn y(value: f64) -> f64 {
    MARGIN + (1.0 - value.clamp(0.0, 1.0)) * SIZE
}

/// The frame, ticks at 0, 0.5 and 1, axis labels, the chance diagonal and a title.
fn frame(out: &mut String, title: &str, x_label: &str, y_label: &str) {
    let full = SIZE + 2.0 * MARGIN;
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{full}" height="{full}" viewBox="0 0 {full} {full}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(out, r#"<title>{}</title>"#, escape(title));
    let _ = writeln!(
        out,
        r##"<rect x="{MARGIN}" y="{MARGIN}" width="{SIZE}" height="{SIZE}" fill="none" stroke="#444"/>"##
    );
    for tick in [0.0, 0.5, 1.0] {
        let _ = writeln!(
            out,
            r#"<text x="{:.2}" y="{:.2}" text-anchor="middle">{tick}</text>"#,
            x(tick),
            y(0.0) + 16.0
        );
        let _ = writeln!(
            out,
            r#"<text x="{:.2}" y="{:.2}" text-anchor="end">{tick}</text>"#,
            x(0.0) - 6.0,
            y(tick) + 4.0
        );
    }
    let _ = writeln!(
        out,
        r#"<text x="{:.2}" y="{:.2}" text-anchor="middle">{}</text>"#,
        x(0.5),
        full - 8.0,
        escape(x_label)
    );
    let _ = writeln!(
        out,
        r#"<text x="14" y="{:.2}" text-anchor="middle" transform="rotate(-90 14 {:.2})">{}</text>"#,
        y(0.5),
        y(0.5),
        escape(y_label)
    );
    let _ = writeln!(
        out,
        r#"<text x="{:.2}" y="28" text-anchor="middle" font-weight="bold">{}</text>"#,
        x(0.5),
        escape(title)
    );
    let _ = writeln!(
        out,
        r##"<line x1="{:.2}" y1="{:.2}" x2="{:.2}" y2="{:.2}" stroke="#999" stroke-dasharray="4 4"/>"##,
        x(0.0),
        y(0.0),
        x(1.0),
        y(1.0)
    );
}

/// At most this many points are drawn: a corpus of millions of distinct confidences would otherwise make a
/// plot of hundreds of megabytes.
const MAX_POINTS: usize = 2_000;

/// The ROC curve through `points` (false-positive rate, true-positive rate), thinned to whole pixels.
pub fn roc(points: &[(f64, f64)], title: &str) -> String {
    let mut out = String::new();
    frame(
        &mut out,
        title,
        "false-positive rate (wrong rows above the threshold)",
        "true-positive rate",
    );
    let path: Vec<String> = thin(points)
        .into_iter()
        .map(|(px, py)| format!("{px:.2},{py:.2}"))
        .collect();
    let _ = writeln!(
        out,
        r##"<polyline fill="none" stroke="#1f77b4" stroke-width="2" points="{}"/>"##,
        path.join(" ")
    );
    out.push_str("</svg>\n");
    out
}

/// Accuracy per confidence bin as bars over each bin's range, with each bin's mean confidence marked.
pub fn reliability(bins: &[ReliabilityBin], title: &str) -> String {
    let mut out = String::new();
    frame(&mut out, title, "confidence", "accuracy (correct-rate)");
    for bin in bins {
        let (left, right) = (x(bin.lo), x(bin.hi.max(bin.lo)));
        let _ = writeln!(
            out,
            r##"<rect x="{left:.2}" y="{:.2}" width="{:.2}" height="{:.2}" fill="#1f77b4" fill-opacity="0.6" stroke="#1f77b4"><title>[{}, {}]: n = {}, accuracy {:.3}, mean confidence {:.3}</title></rect>"##,
            y(bin.accuracy),
            (right - left).max(1.0),
            y(0.0) - y(bin.accuracy),
            bin.lo,
            bin.hi,
            bin.n,
            bin.accuracy,
            bin.mean_confidence
        );
        let _ = writeln!(
            out,
            r##"<circle cx="{:.2}" cy="{:.2}" r="3" fill="#d62728"/>"##,
            x(bin.mean_confidence),
            y(bin.accuracy)
        );
    }
    out.push_str("</svg>\n");
    out
}

/// The points in pixels, dropping every point within half a pixel of the last one kept (the first and last are
/// always kept), and at most [`MAX_POINTS`] of them.
fn thin(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let step = points.len().div_ceil(MAX_POINTS).max(1);
    let mut kept: Vec<(f64, f64)> = Vec::new();
    for (i, &(fpr, tpr)) in points.iter().enumerate() {
        let pixel = (x(fpr), y(tpr));
        let last = i + 1 == points.len();
        let far = kept
            .last()
            .is_none_or(|&(px, py)| (px - pixel.0).abs() >= 0.5 || (py - pixel.1).abs() >= 0.5);
        if last || (far && i % step == 0) {
            kept.push(pixel);
        }
    }
    kept
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roc_maps_the_unit_square_and_is_deterministic() {
        let svg = roc(&[(0.0, 0.0), (0.0, 0.5), (0.5, 1.0), (1.0, 1.0)], "ROC <AUC 0.875>");
        assert!(
            svg.contains(r#"points="48.00,368.00 48.00,208.00 208.00,48.00 368.00,48.00""#),
            "{svg}"
        );
        assert!(svg.contains("<title>ROC &lt;AUC 0.875&gt;</title>"));
        assert!(svg.starts_with("<svg ") && svg.ends_with("</svg>\n"));
        assert_eq!(
            svg,
            roc(&[(0.0, 0.0), (0.0, 0.5), (0.5, 1.0), (1.0, 1.0)], "ROC <AUC 0.875>")
        );
    }

    #[test]
    fn long_curves_are_thinned_but_keep_their_ends() {
        let points: Vec<(f64, f64)> = (0..=1_000_000)
            .map(|i| (f64::from(i) / 1e6, (f64::from(i) / 1e6).sqrt()))
            .collect();
        let svg = roc(&points, "big");
        let drawn = svg
            .split("points=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap()
            .split(' ')
            .count();
        assert!(drawn <= MAX_POINTS + 1, "{drawn} points drawn");
        assert!(svg.contains("points=\"48.00,368.00 "));
        assert!(svg.contains(" 368.00,48.00\""));
        assert!(svg.len() < 40_000, "{} bytes", svg.len());
    }

    #[test]
    fn reliability_draws_one_bar_and_marker_per_bin() {
        let bins = [
            ReliabilityBin {
                lo: 0.0,
                hi: 0.1,
                n: 3,
                mean_confidence: 0.05,
                accuracy: 0.0,
            },
            ReliabilityBin {
                lo: 0.9,
                hi: 1.0,
                n: 10,
                mean_confidence: 0.95,
                accuracy: 0.8,
            },
        ];
        let svg = reliability(&bins, "Reliability");
        assert_eq!(svg.matches("<circle").count(), 2);
        assert!(
            svg.contains(r#"<rect x="336.00" y="112.00" width="32.00" height="256.00""#),
            "{svg}"
        );
        assert!(svg.contains("<title>[0.9, 1]: n = 10, accuracy 0.800, mean confidence 0.950</title>"));
    }
}
