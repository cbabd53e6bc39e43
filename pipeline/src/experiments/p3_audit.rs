//! The P3 audit loop: a seeded sample of the eligible tasks whose outcome the rules decided, written as a sheet for
//! a reader ([`sample`], [`write_sheet`]), and the filled sheet read back ([`read_sheet`], [`evaluate`]) into the
//! base rate corrected for what the reader found ([`decide_on_corrected`]).
//!
//! # Strata
//!
//! The rules decide two things about an eligible task: that it carries a signal (`counted`: the `k` tasks of the
//! base rate), or that every would-be signal it had within its window was an artifact (`set-aside`: the `m` tasks of
//! [`Counts::set_aside_only`](super::p3::Counts)). A reader who judges a sample of each measures how often each
//! decision is right. Tasks with no would-be signal at all are not sampled: the task files hold nothing about them to
//! read, so what the rules could not see is not measured here.
//!
//! # The sheet (CSV, one row per sampled task)
//!
//! [`COLUMNS`] in order. `title` is the task's title as its input last gave it (empty when the input has none),
//! so a reader knows which work to look for; `signals` lists the stratum's signals of the task (`signal at commit
//! detail`, `; ` between them) and `set_aside_by` the rules that set them aside (empty for `counted`; hide the
//! column from a reader who should judge blind). The reader fills `genuine`: `yes` when at least one listed signal
//! shows the completed work was wrong (or, for a `right.*` signal, checked), `no` when none does, `unclear`, or
//! nothing (not read); and `note`. `unclear` and empty rows are not audited: counted, never guessed.
//!
//! # The corrected base rate
//!
//! With `n` eligible tasks, `k` counted, `m` set aside, and in the sheet `t_c` of `a_c` audited counted tasks and
//! `t_s` of `a_s` audited set-aside ones genuine, the corrected rate is `(k·t_c/a_c + m·t_s/a_s) / n`. A stratum
//! with no audited row keeps the rules' decision (ratio 1 for counted, 0 for set-aside) and is named unaudited.
//! Its interval is the `alpha/2` and `1 − alpha/2` quantiles of draws in two steps. First the genuine tasks among
//! those not read, per stratum: `t + Binomial(N − a, p)` with `p ~ Beta(t+½, a−t+½)` (Jeffreys), so that a stratum
//! read whole (a census) gives its count and a reading that finds none genuine (0 of 8, the usual outcome for
//! set-aside tasks) still leaves room for some; an unread stratum gives the rules' decision. Then the rate given `G`
//! genuine tasks of `n`: `Beta(G+½, n−G+½)`, the Jeffreys interval of the raw rate when nothing is corrected. Where
//! the quantiles leave out the point estimate (a rate of 0 when nothing read is genuine), the interval is widened to
//! it. Draw `r` uses ChaCha8 seeded with `[audit] seed` on stream `r`. The test `corrected_rate_interval_coverage`
//! checks its coverage against a simulation with known truth. A sheet with no row read decides nothing: the verdict
//! stays the rules'.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Beta, Binomial, Distribution};
use rayon::prelude::*;
use serde::Serialize;

use super::p2_audit::SheetError;
use super::p3::{P3Analysis, Verdict};
pub use crate::prereg::p3::P3AuditSpec as AuditSpec;
use crate::scan::board::Board;
use crate::stats::{self, Interval};

/// The sheet's columns, in order.
pub const COLUMNS: [&str; 10] = [
    "input",
    "task",
    "title",
    "stratum",
    "stratum_size",
    "completed",
    "signals",
    "set_aside_by",
    "genuine",
    "note",
];

/// What the rules decided about an eligible task (module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stratum {
    Counted,
    SetAside,
}

impl Stratum {
    pub const ALL: [Stratum; 2] = [Stratum::Counted, Stratum::SetAside];

    pub fn id(self) -> &'static str {
        match self {
            Stratum::Counted => "counted",
            Stratum::SetAside => "set-aside",
        }
    }

    fn of(id: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.id() == id)
    }
}

/// One sampled task, as the sheet shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SheetRow {
    pub input: String,
    pub task: String,
    pub title: String,
    pub stratum: Stratum,
    pub stratum_size: u64,
    pub completed: String,
    pub signals: String,
    pub set_aside_by: String,
}

/// Every eligible task the rules decided about, by (input path, task id): its stratum, completion and the evidence
/// of that stratum (counted signals, or the set-aside ones).
fn strata(analysis: &P3Analysis) -> BTreeMap<(String, String), (Stratum, String, Vec<&super::p3::SignalRow>)> {
    let path = |input: usize| analysis.inputs.get(input).map_or_else(String::new, |i| i.path.clone());
    let mut evidence: BTreeMap<(usize, &str), Vec<&super::p3::SignalRow>> = BTreeMap::new();
    for row in &analysis.evidence {
        evidence.entry((row.input, row.task.as_str())).or_default().push(row);
    }
    let mut out = BTreeMap::new();
    for task in analysis.tasks.iter().filter(|t| !t.censored) {
        let rows = evidence.get(&(task.input, task.id.as_str()));
        let stratum = if !task.signals.is_empty() {
            Stratum::Counted
        } else if rows.is_some_and(|r| r.iter().any(|e| e.excluded_by.is_some())) {
            Stratum::SetAside
        } else {
            continue;
        };
        let shown = rows
            .map(|r| {
                r.iter()
                    .filter(|e| e.excluded_by.is_some() == (stratum == Stratum::SetAside))
                    .copied()
                    .collect()
            })
            .unwrap_or_default();
        out.insert(
            (path(task.input), task.id.clone()),
            (stratum, task.completed.clone(), shown),
        );
    }
    out
}

/// The eligible tasks of each stratum, as the run counts them (an export that repeats an id counts it twice; the
/// sheet names it once).
fn populations(analysis: &P3Analysis) -> BTreeMap<Stratum, u64> {
    BTreeMap::from([
        (Stratum::Counted, analysis.counts.with_signal),
        (Stratum::SetAside, analysis.counts.set_aside_only),
    ])
}

/// The tasks to put on a sheet: per stratum, the first `per_stratum` by sha256(seed:input:task), in that order.
/// `boards` are the run's inputs, in the analysis's order; they give each sampled task its title. `subjects` is
/// asked once, with the commits the sampled rows' signals name, for the subjects it knows (a repository's; nothing
/// without one): a signal whose detail is not already its commit's subject shows it.
pub fn sample(
    analysis: &P3Analysis,
    boards: &[Board],
    spec: &AuditSpec,
    subjects: impl FnOnce(&[&str]) -> BTreeMap<String, String>,
) -> Vec<SheetRow> {
    let all = strata(analysis);
    let sizes = populations(analysis);
    let mut keyed: Vec<(Stratum, String, &(String, String))> = all
        .iter()
        .map(|(id @ (input, task), (stratum, ..))| {
            let key = crate::prereg::sha256_hex(format!("{}:{input}:{task}", spec.seed).as_bytes());
            (*stratum, key, id)
        })
        .collect();
    keyed.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    let mut taken: BTreeMap<Stratum, usize> = BTreeMap::new();
    let chosen: Vec<&(String, String)> = keyed
        .into_iter()
        .filter(|(stratum, _, _)| {
            let n = taken.entry(*stratum).or_default();
            *n += 1;
            *n <= spec.per_stratum
        })
        .map(|(_, _, id)| id)
        .collect();

    let commits: BTreeSet<&str> = chosen
        .iter()
        .flat_map(|id| all[*id].2.iter().map(|e| e.commit.as_str()))
        .filter(|commit| !commit.is_empty())
        .collect();
    let subjects = subjects(&commits.into_iter().collect::<Vec<_>>());
    let titles = titles(analysis, boards, &chosen);
    chosen
        .into_iter()
        .map(|id @ (input, task)| {
            let (stratum, completed, evidence) = &all[id];
            let signals = evidence
                .iter()
                .map(|e| {
                    let mut text = format!("{} {}", e.signal, e.at);
                    for part in [e.commit.as_str(), e.detail.as_str()] {
                        if !part.is_empty() {
                            text.push(' ');
                            text.push_str(part);
                        }
                    }
                    if let Some(subject) = subjects.get(&e.commit).filter(|s| **s != e.detail) {
                        text.push_str(&format!(" (subject: {subject})"));
                    }
                    text
                })
                .collect::<Vec<_>>()
                .join("; ");
            let rules: BTreeSet<&str> = evidence.iter().filter_map(|e| e.excluded_by).collect();
            SheetRow {
                input: input.clone(),
                task: task.clone(),
                title: titles.get(id).cloned().unwrap_or_default(),
                stratum: *stratum,
                stratum_size: sizes[stratum],
                completed: completed.clone(),
                signals,
                set_aside_by: rules.into_iter().collect::<Vec<_>>().join(", "),
            }
        })
        .collect()
}

/// The titles of the tasks `chosen` names, in one pass over the inputs; the first task of an id gives it (a sheet
/// names an id once).
fn titles(analysis: &P3Analysis, boards: &[Board], chosen: &[&(String, String)]) -> BTreeMap<(String, String), String> {
    let path = |input: usize| analysis.inputs.get(input).map_or("", |i| i.path.as_str());
    let wanted: BTreeSet<(&str, &str)> = chosen
        .iter()
        .map(|(input, task)| (input.as_str(), task.as_str()))
        .collect();
    let mut titles = BTreeMap::new();
    for (index, board) in boards.iter().enumerate() {
        for task in &board.tasks {
            let id = (path(index), task.id.as_str());
            if wanted.contains(&id) {
                titles
                    .entry((id.0.to_owned(), id.1.to_owned()))
                    .or_insert_with(|| task.title.clone());
            }
        }
    }
    titles
}

/// The sheet as CSV bytes, the reader's columns empty.
pub fn write_sheet(rows: &[SheetRow]) -> Result<Vec<u8>, csv::Error> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record(COLUMNS)?;
    for r in rows {
        let size = r.stratum_size.to_string();
        writer.write_record([
            r.input.as_str(),
            &r.task,
            &r.title,
            r.stratum.id(),
            &size,
            &r.completed,
            &r.signals,
            &r.set_aside_by,
            "",
            "",
        ])?;
    }
    writer.into_inner().map_err(|e| csv::Error::from(e.into_error()))
}

/// What the reader said about one task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Judgement {
    /// `genuine` empty: not read.
    Unaudited,
    Unclear,
    Genuine(bool),
}

/// One row read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadRow {
    pub line: u64,
    pub input: String,
    pub task: String,
    pub stratum: Stratum,
    pub judgement: Judgement,
}

/// Reads a filled sheet (`file` names it in errors): a missing column, an unknown stratum or `genuine` value, or a
/// task given twice is an error naming its line.
pub fn read_sheet(file: &str, bytes: &[u8]) -> Result<Vec<ReadRow>, SheetError> {
    let error = |line: u64, message: String| SheetError {
        file: file.to_string(),
        line,
        message,
    };
    let (index, records) = super::p2_audit::sheet_records(file, bytes, &["input", "task", "stratum", "genuine"])?;
    let mut rows = Vec::new();
    let mut seen: BTreeMap<(String, String), u64> = BTreeMap::new();
    for record in records {
        let (line, record) = record?;
        let get = |column: &str| record.get(index[column]).unwrap_or_default().trim();
        let stratum = Stratum::of(get("stratum")).ok_or_else(|| {
            error(
                line,
                format!("stratum {:?} is not counted or set-aside", get("stratum")),
            )
        })?;
        let judgement = match get("genuine") {
            "" => Judgement::Unaudited,
            "unclear" => Judgement::Unclear,
            "yes" => Judgement::Genuine(true),
            "no" => Judgement::Genuine(false),
            other => {
                return Err(error(
                    line,
                    format!("genuine {other:?} is not yes, no, unclear or empty"),
                ));
            }
        };
        let key = (get("input").to_string(), get("task").to_string());
        if key.1.is_empty() {
            return Err(error(line, "the task is empty".into()));
        }
        if let Some(first) = seen.insert(key.clone(), line) {
            return Err(error(line, format!("the same input and task as line {first}")));
        }
        rows.push(ReadRow {
            line,
            input: key.0,
            task: key.1,
            stratum,
            judgement,
        });
    }
    Ok(rows)
}

/// Reads the sheet at `path`.
pub fn read_sheet_file(path: &Path) -> Result<Vec<ReadRow>, SheetError> {
    let (file, bytes) = super::p2_audit::sheet_bytes(path)?;
    read_sheet(&file, &bytes)
}

/// One stratum of the audit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StratumAudit {
    pub stratum: Stratum,
    /// Eligible tasks of the stratum in this run.
    pub population: u64,
    /// Rows of the sheet matched to it, audited (yes or no), genuine, unclear.
    pub rows: u64,
    pub audited: u64,
    pub genuine: u64,
    pub unclear: u64,
    /// Genuine of audited, Wilson.
    pub precision: Option<Interval>,
}

/// The base rate corrected for what the reader found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CorrectedRate {
    pub method: &'static str,
    /// `None` without eligible tasks.
    pub rate: Option<Interval>,
    pub draws: u32,
    pub seed: u64,
}

/// What a filled sheet measured (the `audit` object of `p3.json`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct P3Audit {
    pub sheet: String,
    pub rows: u64,
    /// Rows whose task is not in this run's stratum of that name (another run's sheet, or edited): left out.
    pub unmatched: u64,
    /// The first few of them, `line task`.
    pub unmatched_examples: Vec<String>,
    pub strata: Vec<StratumAudit>,
    /// Strata with no audited row: they keep the rules' decision.
    pub unaudited_strata: Vec<Stratum>,
    pub corrected: CorrectedRate,
    /// The verdict on the raw base rate, before the audit decided it.
    pub raw_verdict: Verdict,
}

pub const CORRECTED_METHOD: &str = "jeffreys-posterior-draws";
const UNMATCHED_EXAMPLES: usize = 5;

/// The corrected rate's point and draws (module documentation): `shares` is ((k, t_c, a_c), (m, t_s, a_s)).
fn corrected_rate(n: u64, shares: [(u64, u64, u64); 2], spec: &AuditSpec, alpha: f64) -> CorrectedRate {
    let [(k, t_c, a_c), (m, t_s, a_s)] = shares;
    let ratio = |t: u64, a: u64, unaudited: f64| if a == 0 { unaudited } else { t as f64 / a as f64 };
    let rate = (n > 0).then(|| {
        let estimate = (k as f64 * ratio(t_c, a_c, 1.0) + m as f64 * ratio(t_s, a_s, 0.0)) / n as f64;
        let half = 0.5;
        // Per stratum: the genuine tasks among those not read, given the reading (none read: the rules' decision).
        let stratum = |population: u64, t: u64, a: u64, unaudited: bool| {
            let unread = population.saturating_sub(a);
            let share = (a > 0).then(|| Beta::new(t as f64 + half, (a - t) as f64 + half).expect("positive"));
            move |rng: &mut ChaCha8Rng| match &share {
                None if unaudited => population,
                None => 0,
                // All read: the count itself (and no draw, so a census gives the same interval as the rules).
                Some(_) if unread == 0 => t,
                Some(share) => {
                    let p: f64 = share.sample(rng);
                    t + Binomial::new(unread, p.clamp(0.0, 1.0)).map_or(0, |b| b.sample(rng))
                }
            }
        };
        let (counted, set_aside) = (stratum(k, t_c, a_c, true), stratum(m, t_s, a_s, false));
        let mut values: Vec<f64> = (0..spec.replicates)
            .into_par_iter()
            .map(|r| {
                let mut rng = ChaCha8Rng::seed_from_u64(spec.seed);
                rng.set_stream(u64::from(r));
                let genuine = (counted(&mut rng) + set_aside(&mut rng)).min(n);
                Beta::new(genuine as f64 + half, (n - genuine) as f64 + half)
                    .expect("positive")
                    .sample(&mut rng)
            })
            .collect();
        let (lo, hi) = stats::bootstrap::percentile_interval(&mut values, alpha).unwrap_or((estimate, estimate));
        Interval {
            estimate,
            lo: lo.min(estimate),
            hi: hi.max(estimate),
        }
    });
    CorrectedRate {
        method: CORRECTED_METHOD,
        rate,
        draws: spec.replicates,
        seed: spec.seed,
    }
}

/// What the read rows measured against this run (rows of tasks the run puts in another stratum, or not at all, are
/// left out and counted), and the corrected rate.
pub fn evaluate(sheet: String, rows: &[ReadRow], analysis: &P3Analysis, spec: &AuditSpec, alpha: f64) -> P3Audit {
    let z = stats::z_two_sided(alpha).unwrap_or(1.959_963_984_540_054);
    let run = strata(analysis);
    let population = populations(analysis);
    let mut tallies: BTreeMap<Stratum, (u64, u64, u64, u64)> = BTreeMap::new();
    let mut unmatched_examples = Vec::new();
    let mut unmatched = 0;
    for row in rows {
        let here = run.get(&(row.input.clone(), row.task.clone())).map(|(s, _, _)| *s);
        if here != Some(row.stratum) {
            unmatched += 1;
            if unmatched_examples.len() < UNMATCHED_EXAMPLES {
                unmatched_examples.push(format!("line {} {}", row.line, row.task));
            }
            continue;
        }
        let tally = tallies.entry(row.stratum).or_default();
        tally.0 += 1;
        match row.judgement {
            Judgement::Unaudited => {}
            Judgement::Unclear => tally.3 += 1,
            Judgement::Genuine(genuine) => {
                tally.1 += 1;
                tally.2 += u64::from(genuine);
            }
        }
    }
    let strata: Vec<StratumAudit> = Stratum::ALL
        .into_iter()
        .map(|stratum| {
            let (rows, audited, genuine, unclear) = tallies.get(&stratum).copied().unwrap_or_default();
            StratumAudit {
                stratum,
                population: population[&stratum],
                rows,
                audited,
                genuine,
                unclear,
                precision: stats::wilson(genuine, audited, z).ok().flatten(),
            }
        })
        .collect();
    let shares = [0, 1].map(|i| (strata[i].population, strata[i].genuine, strata[i].audited));
    P3Audit {
        sheet,
        rows: rows.len() as u64,
        unmatched,
        unmatched_examples,
        unaudited_strata: strata
            .iter()
            .filter(|s| s.audited == 0 && s.population > 0)
            .map(|s| s.stratum)
            .collect(),
        corrected: corrected_rate(analysis.counts.eligible, shares, spec, alpha),
        strata,
        raw_verdict: analysis.verdict.clone(),
    }
}

/// The verdict decided on the corrected rate's interval instead of the raw one's ([`super::decide_on_corrected`]).
/// A sheet with no audited row decides nothing: the verdict stays the rules', and says so.
pub fn decide_on_corrected(audit: &P3Audit, threshold: f64) -> Verdict {
    if audit.strata.iter().all(|s| s.audited == 0) {
        let mut verdict = audit.raw_verdict.clone();
        verdict
            .reasons
            .push("the audit sheet has no row read (genuine yes or no), so it decides nothing".into());
        return verdict;
    }
    super::decide_on_corrected(
        &audit.raw_verdict,
        audit.corrected.rate,
        "detectable-outcome base rate",
        "the audit gives no corrected rate",
        threshold,
    )
}

#[cfg(test)]
mod tests;
