//! What the plots of P3 draw, taken from its report: counting only, no statistics beyond the Wilson interval.
//! (P1's, P2's and the weekly plots take their numbers straight from their reports, in their own modules.)

use crate::experiments::p3::{Counts, P3Analysis, SignalRow, TaskRow};
use crate::stats::Interval;

/// Day `d` for `d` in `0..=window`: the share of the eligible tasks whose first counted signal came within `d`
/// whole days of their first completion (a signal recorded before the completion, which a reopen without a
/// history may be, counts on day 0), with its Wilson interval at `z`. The share on the last day is the report's
/// base rate. Empty when no task is eligible.
///
/// Censored tasks (still inside their window) are not in it: the share is over the tasks whose whole window was
/// observed, so every day has the same denominator.
pub fn detection_by_day(tasks: &[TaskRow], evidence: &[SignalRow], window_days: u32, z: f64) -> Vec<Interval> {
    let eligible: Vec<(usize, &str)> = tasks
        .iter()
        .filter(|t| !t.censored)
        .map(|t| (t.input, t.id.as_str()))
        .collect();
    if eligible.is_empty() {
        return Vec::new();
    }
    let window = i64::from(window_days);
    // Hashed, not ordered: a million-task export looks up every eligible task.
    let mut first: foldhash::HashMap<(usize, &str), i64> = foldhash::HashMap::default();
    for row in evidence.iter().filter(|row| row.excluded_by.is_none()) {
        let (Ok(at), Ok(done)) = (
            row.at.parse::<jiff::Timestamp>(),
            row.completed.parse::<jiff::Timestamp>(),
        ) else {
            continue;
        };
        let day = (at.as_second() - done.as_second()).div_euclid(86_400).clamp(0, window);
        first
            .entry((row.input, row.task.as_str()))
            .and_modify(|d| *d = (*d).min(day))
            .or_insert(day);
    }
    let mut new_on_day = vec![0u64; window as usize + 1];
    for key in &eligible {
        if let Some(&day) = first.get(key) {
            new_on_day[day as usize] += 1;
        }
    }
    let n = eligible.len() as u64;
    let mut detected = 0u64;
    new_on_day
        .iter()
        .map(|&k| {
            detected += k;
            super::p1::wilson_or_point(detected, n, z)
        })
        .collect()
}

/// The P3 detection plot of `analysis` ([`detection_svg_of`]).
pub fn p3_detection_svg(analysis: &P3Analysis, alpha: f64) -> String {
    detection_svg_of(
        &analysis.tasks,
        &analysis.evidence,
        &analysis.counts,
        analysis.window_days,
        analysis.threshold,
        alpha,
    )
}

/// The share of eligible tasks with a signal by day since completion ([`detection_by_day`]) with its pointwise
/// Wilson band at `alpha`, the kill `threshold`, and what was left out (`counts`: censored, removed).
pub fn detection_svg_of(
    tasks: &[TaskRow],
    evidence: &[SignalRow],
    c: &Counts,
    window_days: u32,
    threshold: f64,
    alpha: f64,
) -> String {
    let z = crate::stats::z_two_sided(alpha).unwrap_or(1.959_963_984_540_054);
    let level = super::p1::level(alpha);
    let by_day = detection_by_day(tasks, evidence, window_days, z);
    let mut notes = vec![format!(
        "{} (completed, their {}-day window elapsed): the denominator of every day.",
        super::count(c.eligible, "eligible task", "eligible tasks"),
        window_days
    )];
    notes.push(format!(
        "Censored: {} still inside their window, left out (not all their days are observed).",
        super::count(c.censored, "task", "tasks")
    ));
    if c.removed_before_window > 0 {
        notes.push(format!(
            "Also left out: {} removed from the task file before their window elapsed.",
            super::count(c.removed_before_window, "task", "tasks")
        ));
    }
    if by_day.is_empty() {
        notes.push("No eligible task: nothing to draw.".to_string());
    }
    super::svg::detection(&super::svg::DetectionPlot {
        title: "P3 detection by day since completion",
        by_day: &by_day,
        threshold: Some((
            threshold,
            format!(
                "kill threshold on the share at day {}: {:.1}%",
                window_days,
                threshold * 100.0
            ),
        )),
        curve_label: "share of eligible tasks with a signal within d days (steps)".to_string(),
        band_label: format!("pointwise Wilson {level} interval of that share, day by day"),
        notes,
    })
}
