//! `phase0 weekly`: the three experiments on the inputs a config names, into `reports/<ISO week>/`, then
//! `reports/index.md` + `index.json` rebuilt from every week present, with what changed since the week before.
//!
//! A week is built whole in a staging directory beside it and swapped in with two renames (the old week aside,
//! the new one into place), so a reader never sees a half-written week; a failed experiment leaves nothing of
//! itself behind. An experiment whose input is missing (or that fails) is reported as such in `week.json`,
//! `week.md` and the index, the others still run, and the run is `partial` (exit 3).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::p1::P1Args;
use super::p2::P2Args;
use super::p3::P3Args;
use super::suite::{self, Experiment, Plan, Planned, RunStatus};
use super::{CommandError, write_report_set};
use crate::report::envelope;
use crate::report::weekly::{self as render, ConfigRef, WeekStatus, WeekSummary};

/// `experiments/weekly.toml` as shipped: this repository's own inputs.
pub const DEFAULT_CONFIG: &str = include_str!("../../../experiments/weekly.toml");
const DEFAULT_CONFIG_NAME: &str = "experiments/weekly.toml (embedded)";

/// The inputs of each experiment. Relative paths are relative to the working directory `phase0 weekly` runs in.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WeeklyConfig {
    pub p1: Option<P1Config>,
    pub p2: Option<P2Config>,
    pub p3: Option<P3Config>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct P1Config {
    /// A labeled corpus (JSONL).
    pub corpus: Option<PathBuf>,
    /// A directory of `reflection.v1` sidecars, labeled from `repo`'s history (`phase0 corpus`'s join).
    pub reflections: Option<PathBuf>,
    /// The repository whose history labels the sidecars.
    pub repo: Option<PathBuf>,
    #[serde(default)]
    pub skip_invalid: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct P2Config {
    pub repo: PathBuf,
    pub rev: Option<String>,
    pub since: Option<String>,
    pub until: Option<String>,
    #[serde(default)]
    pub first_parent: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct P3Config {
    /// Board exports (a GitHub timeline file right after its issue list).
    #[serde(default)]
    pub inputs: Vec<PathBuf>,
    pub format: Option<String>,
    pub tz: Option<String>,
    /// Revert and fix commits naming tasks; without inputs, the repository whose task files are read.
    pub repo: Option<PathBuf>,
    pub data_dir: Option<String>,
}

/// A config and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedConfig {
    pub config: WeeklyConfig,
    /// The path given, or `experiments/weekly.toml (embedded)`.
    pub source: String,
    pub sha256: String,
}

/// Reads and checks the config at `path` (the embedded default without one). Errors name the file and line.
pub fn load_config(path: Option<&Path>) -> Result<LoadedConfig, CommandError> {
    let (text, source) = match path {
        None => (DEFAULT_CONFIG.to_string(), DEFAULT_CONFIG_NAME.to_string()),
        Some(path) => (
            crate::scan::input::read_text(path).map_err(|error| {
                CommandError::Input(format!("{}: cannot read the weekly config: {error}", path.display()))
            })?,
            path.display().to_string(),
        ),
    };
    let config: WeeklyConfig = toml::from_str(&text).map_err(|error| {
        let line = error.span().map_or(1, |span| crate::prereg::line_of(&text, span.start));
        CommandError::Input(format!("{source}:{line}: {}", error.message().trim_end()))
    })?;
    // Checks that need the whole section; toml has no span for them, so they name the section.
    let invalid = |section: &str, message: &str| CommandError::Input(format!("{source}: [{section}] {message}"));
    if let Some(p1) = &config.p1 {
        match (&p1.corpus, &p1.reflections) {
            (None, None) => return Err(invalid("p1", "needs `corpus` (or `reflections` with `repo`)")),
            (Some(_), Some(_)) => return Err(invalid("p1", "has both `corpus` and `reflections`; give one")),
            (Some(_), None) if p1.repo.is_some() => {
                return Err(invalid("p1", "`repo` goes with `reflections`, not with `corpus`"));
            }
            (None, Some(_)) if p1.repo.is_none() => {
                return Err(invalid(
                    "p1",
                    "`reflections` needs `repo` (the repository that labels them)",
                ));
            }
            _ => {}
        }
    }
    if let Some(p3) = &config.p3 {
        if p3.inputs.is_empty() && p3.repo.is_none() {
            return Err(invalid(
                "p3",
                "needs `inputs` (board exports) or `repo` (task files kept in git)",
            ));
        }
        if p3.data_dir.is_some() && p3.repo.is_none() {
            return Err(invalid("p3", "`data_dir` needs `repo`"));
        }
    }
    Ok(LoadedConfig {
        config,
        sha256: crate::prereg::sha256_hex(text.as_bytes()),
        source,
    })
}

/// `2026-W47` (or `2026-w47`) as the canonical week name, checked against the calendar (week 53 exists only in
/// long years).
pub fn parse_week(value: &str) -> Result<String, String> {
    let bad = || format!("--week {value:?} is not an ISO week (YYYY-Www, e.g. 2026-W47)");
    let (year, week) = value.trim().split_once(['W', 'w']).ok_or_else(bad)?;
    let year = year.strip_suffix('-').ok_or_else(bad)?;
    if year.len() != 4 || week.len() != 2 || !(year.bytes().chain(week.bytes())).all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let (year, week) = (
        year.parse::<i16>().map_err(|_| bad())?,
        week.parse::<i8>().map_err(|_| bad())?,
    );
    let date = jiff::civil::ISOWeekDate::new(year, week, jiff::civil::Weekday::Monday)
        .map_err(|_| format!("--week {value:?}: {year} has no week {week}"))?;
    Ok(week_name(date.date()))
}

/// The ISO week `date` falls in: `2026-W47`.
pub fn week_name(date: jiff::civil::Date) -> String {
    let iso = date.iso_week_date();
    format!("{:04}-W{:02}", iso.year(), iso.week())
}

/// The options of `phase0 weekly` (clap derives its command line from them, [`crate::cli`]).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct WeeklyArgs {
    /// The inputs of each experiment; default the embedded experiments/weekly.toml. Relative paths in it are
    /// relative to the working directory.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// The reports directory: weeks go to `OUT/<week>/`, the index to `OUT/index.{md,json}`.
    #[arg(long, default_value = "reports")]
    pub out: PathBuf,
    /// The ISO week to write (e.g. 2026-W47); default the week of --as-of, else of SOURCE_DATE_EPOCH, else of
    /// today (UTC).
    #[arg(long)]
    pub week: Option<String>,
    /// The as-of date of every report (YYYY-MM-DD or RFC 3339); default SOURCE_DATE_EPOCH, else each
    /// experiment's own default.
    #[arg(long)]
    pub as_of: Option<String>,
    /// `SOURCE_DATE_EPOCH` (Unix seconds), read by clap from the environment.
    #[arg(long = "source-date-epoch", env = "SOURCE_DATE_EPOCH", hide = true)]
    pub source_date_epoch: Option<String>,
    /// Today's UTC date, read from the clock by the caller: it only names the week, it never lands in a report.
    #[arg(skip)]
    pub today: Option<jiff::civil::Date>,
    /// A directory whose weekly-index.md.j2, weekly-week.md.j2, p1.md.j2, p2.md.j2, p3.md.j2 (any that exist)
    /// replace the embedded templates.
    #[arg(long)]
    pub templates: Option<PathBuf>,
    /// Show P2's spinner on stderr (the caller decides: only when stderr is a terminal).
    #[arg(skip)]
    pub progress: bool,
    /// P2's diff cache (phase0 p2 --cache) [default: $XDG_CACHE_HOME/phase0/p2, else ~/.cache/phase0/p2]: a
    /// week's rerun on a history that grew diffs only the new commits; the reports are the same without it.
    #[arg(long, value_name = "DIR", help_heading = "Cache")]
    pub cache: Option<PathBuf>,
    /// Neither read nor write P2's diff cache.
    #[arg(long, help_heading = "Cache", conflicts_with = "cache")]
    pub no_cache: bool,
}

#[derive(Debug)]
pub struct WeeklyOutcome {
    /// The block for stdout.
    pub summary: String,
    pub week: WeekSummary,
    /// `out/<week>`.
    pub dir: PathBuf,
    /// `out/index.json`, `out/index.md`.
    pub index: Vec<PathBuf>,
}

impl WeeklyOutcome {
    /// Some experiment did not run: exit 3 (`exit::PARTIAL`).
    pub fn partial(&self) -> bool {
        self.week.status == WeekStatus::Partial
    }
}

/// The week to write: `--week`, else the week of `--as-of`, of `SOURCE_DATE_EPOCH`, of today.
fn choose_week(args: &WeeklyArgs) -> Result<String, CommandError> {
    if let Some(week) = &args.week {
        return parse_week(week).map_err(CommandError::Input);
    }
    // The report date (`--as-of`, else SOURCE_DATE_EPOCH), parsed as every report parses it.
    let as_of = envelope::generated_at(args.as_of.as_deref(), args.source_date_epoch.as_deref(), None)
        .map_err(|error| CommandError::Input(error.to_string()))?;
    let instant = as_of
        .and_then(|as_of| envelope::parse_as_of(&as_of))
        .map(|(instant, _)| instant);
    let date = match (instant, args.today) {
        (Some(instant), _) => instant.to_zoned(jiff::tz::TimeZone::UTC).date(),
        (None, Some(today)) => today,
        (None, None) => return Err(CommandError::Input("no week: give --week or --as-of".into())),
    };
    Ok(week_name(date))
}

/// `DIR/name` when `--templates DIR` holds it, else the embedded template.
fn optional_template(dir: Option<&Path>, name: &str, embedded: &str) -> Result<String, CommandError> {
    match dir {
        Some(dir) if dir.join(name).exists() => super::template(Some(dir), name, embedded),
        _ => Ok(embedded.to_string()),
    }
}

/// What each experiment runs on, from the config (their `out` is set by the suite).
fn plan(config: &LoadedConfig, args: &WeeklyArgs) -> Plan {
    let templates = |name: &str| args.templates.as_ref().filter(|dir| dir.join(name).exists()).cloned();
    fn not_configured<A>(config: &LoadedConfig, id: &str) -> Planned<A> {
        Planned::missing(format!("not configured: {} has no [{id}] section", config.source))
    }
    let p1 = match &config.config.p1 {
        None => not_configured(config, "p1"),
        Some(P1Config {
            corpus: Some(corpus),
            skip_invalid,
            ..
        }) => Planned::Run(P1Args {
            corpus: Some(corpus.clone()),
            out: PathBuf::new(),
            as_of: args.as_of.clone(),
            source_date_epoch: args.source_date_epoch.clone(),
            skip_invalid: *skip_invalid,
            templates: templates("p1.md.j2"),
            ..Default::default()
        }),
        Some(P1Config {
            reflections,
            repo,
            skip_invalid,
            ..
        }) => Planned::Run(P1Args {
            reflections: reflections.clone(),
            repo: repo.clone(),
            out: PathBuf::new(),
            as_of: args.as_of.clone(),
            source_date_epoch: args.source_date_epoch.clone(),
            skip_invalid: *skip_invalid,
            templates: templates("p1.md.j2"),
            ..Default::default()
        }),
    };
    let p2 = match &config.config.p2 {
        None => not_configured(config, "p2"),
        Some(p2) => Planned::Run(P2Args {
            repo: p2.repo.clone(),
            rev: Some(p2.rev.clone().unwrap_or_else(|| "HEAD".to_string())),
            first_parent: p2.first_parent,
            since: p2.since.clone(),
            until: p2.until.clone(),
            out: PathBuf::new(),
            as_of: args.as_of.clone(),
            source_date_epoch: args.source_date_epoch.clone(),
            templates: templates("p2.md.j2"),
            progress: args.progress,
            cache: args.cache.clone(),
            ..Default::default()
        }),
    };
    let p3 = match &config.config.p3 {
        None => not_configured(config, "p3"),
        Some(p3) => Planned::Run(P3Args {
            inputs: p3.inputs.clone(),
            format: p3.format.clone().unwrap_or_else(|| "auto".to_string()),
            tz: p3.tz.clone(),
            repo: p3.repo.clone(),
            data_dir: p3.data_dir.clone(),
            out: PathBuf::new(),
            as_of: args.as_of.clone(),
            source_date_epoch: args.source_date_epoch.clone(),
            templates: templates("p3.md.j2"),
            ..Default::default()
        }),
    };
    Plan { p1, p2, p3 }
}

fn write_error(path: &Path) -> impl FnOnce(std::io::Error) -> CommandError + '_ {
    move |source| CommandError::Write {
        path: path.to_path_buf(),
        source,
    }
}

/// Moves the finished `staged` directory to `target`, replacing what is there: the old week is renamed aside
/// (into a temporary directory beside it), the staged one renamed into place, then the old one removed. Each
/// rename is atomic, so a reader sees the old week or the new one, never a mix; if the second rename fails the
/// old week is put back.
fn swap_into_place(staged: tempfile::TempDir, target: &Path, parent: &Path, week: &str) -> Result<(), CommandError> {
    let aside = if target.exists() {
        let holder = tempfile::Builder::new()
            .prefix(&format!(".old-{week}-"))
            .tempdir_in(parent)
            .map_err(write_error(parent))?;
        let old = holder.path().join(week);
        std::fs::rename(target, &old).map_err(write_error(target))?;
        super::out_dir::failpoint("weekly-old-week-aside");
        Some((holder, old))
    } else {
        None
    };
    if let Err(error) = std::fs::rename(staged.path(), target) {
        if let Some((_, old)) = &aside {
            let _ = std::fs::rename(old, target);
        }
        return Err(write_error(target)(error));
    }
    // The staged directory is the week now; dropping `aside` removes the old one.
    let _ = staged.keep();
    super::out_dir::failpoint("weekly-new-week-placed");
    drop(aside);
    Ok(())
}

/// Every `out/<ISO week>/week.json`, parsed. Other directories (`demo/`, `example/`, staging) are ignored.
pub fn read_weeks(out: &Path) -> Result<Vec<WeekSummary>, CommandError> {
    let mut weeks = Vec::new();
    let entries = std::fs::read_dir(out)
        .map_err(|error| CommandError::Input(format!("{}: cannot list the reports: {error}", out.display())))?;
    for entry in entries {
        let entry = entry
            .map_err(|error| CommandError::Input(format!("{}: cannot list the reports: {error}", out.display())))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if parse_week(&name).ok().as_deref() != Some(name.as_str()) {
            continue;
        }
        let path = entry.path().join("week.json");
        if !path.is_file() {
            continue;
        }
        let bytes = crate::scan::input::read_capped(&path, crate::scan::input::TEXT_CAP)
            .map_err(|error| CommandError::Input(format!("{}: cannot read: {error}", path.display())))?;
        let week: WeekSummary = serde_json::from_slice(&bytes).map_err(|error| {
            CommandError::Input(format!(
                "{}:{}: not a phase0 week summary: {error}",
                path.display(),
                error.line()
            ))
        })?;
        if week.week != name {
            return Err(CommandError::Input(format!(
                "{}: describes week {} but lies in {name}/",
                path.display(),
                week.week
            )));
        }
        weeks.push(week);
    }
    Ok(weeks)
}

pub fn run(args: &WeeklyArgs) -> Result<WeeklyOutcome, CommandError> {
    let input = |error: &dyn std::fmt::Display| CommandError::Input(error.to_string());
    // Everything that can be wrong with the arguments is found before anything runs or is written.
    let config = load_config(args.config.as_deref())?;
    let week = choose_week(args)?;
    let as_of = envelope::generated_at(args.as_of.as_deref(), args.source_date_epoch.as_deref(), None)
        .map_err(|e| input(&e))?;
    let templates = args.templates.as_deref();
    let index_template = optional_template(templates, "weekly-index.md.j2", render::INDEX_TEMPLATE)?;
    let week_template = optional_template(templates, "weekly-week.md.j2", render::WEEK_TEMPLATE)?;
    crate::report::check_template("weekly-index.md.j2", &index_template).map_err(|e| input(&e))?;
    crate::report::check_template("weekly-week.md.j2", &week_template).map_err(|e| input(&e))?;
    // The other weeks must be readable for the index; a broken one is named now, not after the run (and nothing,
    // not even the lock file, is written for a bad invocation).
    if args.out.is_dir() {
        read_weeks(&args.out)?;
    }
    // One run at a time writes into `out`; what a killed run left there is repaired first (out_dir.rs). A week put
    // back is read again below, with the others, for the index.
    let lock = super::out_dir::lock(&args.out)?;
    let recovered = super::out_dir::recover(&args.out, &lock)?;
    for week in &recovered.restored {
        eprintln!("phase0: {week}/ put back: an earlier run was interrupted while replacing it");
    }
    if !recovered.restored.is_empty() {
        read_weeks(&args.out)?;
    }
    let plan = plan(&config, args);

    let prefix = format!(".tmp-{week}-");
    let mut staging = tempfile::Builder::new();
    staging.prefix(&prefix);
    // A temporary directory is private (0700); a week is for reading, like the reports in it.
    #[cfg(unix)]
    staging.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o755));
    let staging = staging.tempdir_in(&args.out).map_err(write_error(&args.out))?;

    let runs = suite::run(&plan, staging.path());
    let experiments = runs
        .iter()
        .map(render::experiment_week)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| input(&e))?;
    let summary = WeekSummary {
        schema: render::WEEK_SCHEMA.to_string(),
        week: week.clone(),
        as_of,
        config: ConfigRef {
            path: config.source.clone(),
            sha256: config.sha256.clone(),
        },
        status: if runs.iter().all(|r| r.status == RunStatus::Ok) {
            WeekStatus::Ok
        } else {
            WeekStatus::Partial
        },
        experiments,
    };
    let blocks: BTreeMap<Experiment, String> = runs
        .iter()
        .filter_map(|r| r.ran.as_ref().map(|ran| (r.experiment, ran.summary.clone())))
        .collect();
    let week_md = render::week_markdown(&week_template, &summary, &blocks).map_err(|e| input(&e))?;
    write_report_set(
        staging.path(),
        &[
            (
                "week.json".to_string(),
                summary.to_json().map_err(CommandError::serialise("week.json"))?,
            ),
            ("week.md".to_string(), week_md.into_bytes()),
        ],
    )?;

    let dir = args.out.join(&week);
    swap_into_place(staging, &dir, &args.out, &week)?;

    let index = render::index(read_weeks(&args.out)?);
    let index_md = render::index_markdown(&index_template, &index).map_err(|e| input(&e))?;
    let index_files = write_report_set(
        &args.out,
        &[
            (
                "index.json".to_string(),
                index.to_json().map_err(CommandError::serialise("index.json"))?,
            ),
            ("index.md".to_string(), index_md.into_bytes()),
            (render::TREND_SVG.to_string(), render::trend_svg(&index).into_bytes()),
        ],
    )?;

    let mut text = format!("phase0 weekly {week}: config {}\n", config.source);
    for run in &runs {
        text.push('\n');
        text.push_str(&run.block());
    }
    text.push('\n');
    text.push_str(&format!("  week            {}\n", dir.display()));
    let changes = match &index.trend {
        None => "only one week, nothing to compare yet".to_string(),
        Some(trend) => {
            let changed: Vec<String> = trend
                .experiments
                .iter()
                .filter(|e| e.verdict_changed)
                .map(|e| {
                    format!(
                        "{} {} → {}",
                        e.experiment.id().to_uppercase(),
                        e.verdict_then,
                        e.verdict_now
                    )
                })
                .collect();
            format!(
                "since {}: {}",
                trend.previous,
                if changed.is_empty() {
                    "no verdict changed".to_string()
                } else {
                    changed.join(", ")
                }
            )
        }
    };
    text.push_str(&format!(
        "  index           {} ({} week{}; {changes})\n",
        args.out.join("index.md").display(),
        index.weeks.len(),
        if index.weeks.len() == 1 { "" } else { "s" }
    ));
    let not_run: Vec<String> = runs
        .iter()
        .filter(|r| r.status != RunStatus::Ok)
        .map(|r| format!("{} {}", r.experiment.id().to_uppercase(), r.status.word()))
        .collect();
    if !not_run.is_empty() {
        text.push_str(&format!("  run             partial: {}\n", not_run.join(", ")));
    }
    Ok(WeeklyOutcome {
        summary: text,
        week: summary,
        dir,
        index: index_files,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_weeks_parse_canonically_and_follow_the_calendar() {
        assert_eq!(parse_week("2026-W47").unwrap(), "2026-W47");
        assert_eq!(parse_week(" 2026-w03 ").unwrap(), "2026-W03");
        // 2026 starts on a Thursday: it has 53 weeks; 2027 does not.
        assert_eq!(parse_week("2026-W53").unwrap(), "2026-W53");
        assert_eq!(
            parse_week("2027-W53").unwrap_err(),
            "--week \"2027-W53\": 2027 has no week 53"
        );
        for bad in ["2026-47", "2026W47", "2026-W7", "26-W47", "2026-W4x", "2026-W00", ""] {
            assert!(parse_week(bad).is_err(), "{bad}");
        }
        assert_eq!(
            parse_week("2026-47").unwrap_err(),
            "--week \"2026-47\" is not an ISO week (YYYY-Www, e.g. 2026-W47)"
        );
    }

    #[test]
    fn dates_fall_in_their_iso_week() {
        let date = |y, m, d| jiff::civil::date(y, m, d);
        assert_eq!(week_name(date(2026, 11, 21)), "2026-W47");
        assert_eq!(week_name(date(2026, 11, 16)), "2026-W47");
        assert_eq!(week_name(date(2026, 11, 15)), "2026-W46");
        // Early January can belong to the previous ISO year, late December to the next.
        assert_eq!(week_name(date(2027, 1, 1)), "2026-W53");
        assert_eq!(week_name(date(2025, 12, 29)), "2026-W01");
    }

    #[test]
    fn the_week_comes_from_week_as_of_epoch_then_today() {
        let args = |week: Option<&str>, as_of: Option<&str>, epoch: Option<&str>| WeeklyArgs {
            week: week.map(String::from),
            as_of: as_of.map(String::from),
            source_date_epoch: epoch.map(String::from),
            today: Some(jiff::civil::date(2026, 1, 7)),
            ..Default::default()
        };
        let week = |a: &WeeklyArgs| choose_week(a).map_err(|e| e.to_string());
        assert_eq!(
            week(&args(Some("2026-W40"), Some("2026-11-21"), None)).unwrap(),
            "2026-W40"
        );
        assert_eq!(
            week(&args(None, Some("2026-11-15T23:30:00-02:00"), Some("0"))).unwrap(),
            "2026-W47"
        );
        assert_eq!(week(&args(None, None, Some("1795219200"))).unwrap(), "2026-W47");
        assert_eq!(week(&args(None, None, None)).unwrap(), "2026-W02");
        assert_eq!(
            week(&args(None, Some("soon"), None)).unwrap_err(),
            "--as-of \"soon\" is not a date (YYYY-MM-DD) or an RFC 3339 timestamp"
        );
        let no_clock = WeeklyArgs::default();
        assert_eq!(week(&no_clock).unwrap_err(), "no week: give --week or --as-of");
    }

    fn config(text: &str) -> Result<LoadedConfig, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("weekly.toml");
        std::fs::write(&path, text).unwrap();
        load_config(Some(&path)).map_err(|e| e.to_string().replace(&path.display().to_string(), "weekly.toml"))
    }

    #[test]
    fn the_embedded_config_names_this_repositorys_samples() {
        let loaded = load_config(None).unwrap();
        assert_eq!(loaded.source, "experiments/weekly.toml (embedded)");
        let config = loaded.config;
        assert_eq!(config.p1.unwrap().corpus, Some(PathBuf::from("data/p1-corpus.jsonl")));
        assert_eq!(config.p2.unwrap().repo, PathBuf::from("."));
        assert_eq!(config.p3.unwrap().inputs, [PathBuf::from("data/p3/jira.json")]);
    }

    #[test]
    fn bad_configs_name_the_file_the_line_and_the_key() {
        assert_eq!(
            config("[p1]\ncorpus = \"c.jsonl\"\n\n[p2]\nrepo = \".\"\nbranch = \"main\"\n").unwrap_err(),
            "weekly.toml:6: unknown field `branch`, expected one of `repo`, `rev`, `since`, `until`, `first_parent`"
        );
        assert_eq!(
            config("[p4]\nx = 1\n").unwrap_err(),
            "weekly.toml:1: unknown field `p4`, expected one of `p1`, `p2`, `p3`"
        );
        assert_eq!(
            config("[p2]\nrev = \"main\"\n").unwrap_err(),
            "weekly.toml:1: missing field `repo`"
        );
        assert_eq!(
            config("[p3]\ninputs = \"a.json\"\n").unwrap_err(),
            "weekly.toml:2: invalid type: string \"a.json\", expected a sequence"
        );
        assert_eq!(
            config("[p1]\ncorpus = \"c\"\nreflections = \"r\"\n").unwrap_err(),
            "weekly.toml: [p1] has both `corpus` and `reflections`; give one"
        );
        assert_eq!(
            config("[p3]\nformat = \"jira-csv\"\n").unwrap_err(),
            "weekly.toml: [p3] needs `inputs` (board exports) or `repo` (task files kept in git)"
        );
        // Sections may be left out: that experiment is reported as missing.
        assert_eq!(config("[p2]\nrepo = \"..\"\n").unwrap().config.p1, None);
    }

    #[test]
    fn sidecar_directories_run_p1_through_the_join() {
        let loaded = config("[p1]\nreflections = \".mosaic/reflections\"\nrepo = \".\"\n").unwrap();
        let plan = plan(&loaded, &WeeklyArgs::default());
        match plan.p1 {
            Planned::Run(args) => {
                assert_eq!(args.reflections.as_deref(), Some(Path::new(".mosaic/reflections")));
                assert_eq!(args.repo.as_deref(), Some(Path::new(".")));
                assert_eq!(args.corpus, None);
            }
            Planned::Skip { reason, .. } => panic!("p1 must run on the sidecars: {reason}"),
        }
        match plan.p2 {
            Planned::Skip { status, reason } => {
                assert_eq!(status, RunStatus::Missing);
                assert!(reason.ends_with("weekly.toml has no [p2] section"), "{reason}");
            }
            Planned::Run(_) => panic!("p2 is not configured"),
        }
        assert_eq!(
            config("[p1]\nreflections = \"r\"\n").unwrap_err(),
            "weekly.toml: [p1] `reflections` needs `repo` (the repository that labels them)"
        );
    }

    #[test]
    fn a_week_replaces_the_old_one_whole() {
        let out = tempfile::tempdir().unwrap();
        let target = out.path().join("2026-W47");
        std::fs::create_dir_all(target.join("p1")).unwrap();
        std::fs::write(target.join("p1/old.json"), "old").unwrap();
        let staged = tempfile::Builder::new().prefix(".tmp-").tempdir_in(out.path()).unwrap();
        std::fs::write(staged.path().join("week.json"), "new").unwrap();
        swap_into_place(staged, &target, out.path(), "2026-W47").unwrap();
        assert_eq!(std::fs::read_to_string(target.join("week.json")).unwrap(), "new");
        assert!(
            !target.join("p1").exists(),
            "nothing of the old week is left in the new one"
        );
        let names: Vec<String> = std::fs::read_dir(out.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["2026-W47"], "no staging or old copy left behind");
    }
}
