//! P2's diff cache (issue 21, item 4): a rerun diffs only what it has not diffed before, the reports are the same
//! bytes with a cold cache, a warm one and none, and a damaged cache is ignored with a warning.

use std::path::Path;

mod common;

use pipeline::commands::p2::{P2Args, P2Outcome, run};

fn p2(repo: &Path, out: &Path, cache: Option<&Path>) -> P2Outcome {
    run(&P2Args {
        repo: repo.to_path_buf(),
        rev: Some("HEAD".into()),
        out: out.to_path_buf(),
        as_of: Some("2026-11-21".into()),
        cache: cache.map(Path::to_path_buf),
        ..P2Args::default()
    })
    .unwrap()
}

#[test]
fn a_rerun_diffs_only_what_is_new_and_writes_the_same_reports() {
    let dir = tempfile::tempdir().unwrap();
    let repo = common::p2_fixture(dir.path());
    let cache = dir.path().join("cache");

    let none = p2(&repo, &dir.path().join("none"), None);
    assert_eq!((none.cache, none.cache_line.as_str()), (None, ""));
    let cold = p2(&repo, &dir.path().join("cold"), Some(&cache));
    let (cold_hits, cold_computed) = cold.cache.unwrap();
    assert!(cold_computed > 0);
    let warm = p2(&repo, &dir.path().join("warm"), Some(&cache));
    // A warm rerun computes nothing; it takes every fix's link from the link cache, so it does not even ask for the
    // diffs of their windows.
    let (warm_hits, warm_computed) = warm.cache.unwrap();
    assert_eq!(warm_computed, 0, "a warm rerun computes nothing");
    assert!(warm_hits < cold_hits + cold_computed, "{warm_hits}");
    let (_, commits) = cold.commits_cached.unwrap();
    assert_eq!(cold.commits_cached, Some((0, commits)), "a cold run reads every commit");
    assert!(commits > 5, "{commits}");
    assert_eq!(warm.commits_cached, Some((commits, 0)), "a warm rerun reads none");
    let files: Vec<std::path::PathBuf> = std::fs::read_dir(&cache)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    let file = |extension: &str| {
        files
            .iter()
            .find(|path| path.extension().is_some_and(|e| e == extension))
            .unwrap()
            .display()
            .to_string()
    };
    let fixes = cold
        .cache_line
        .lines()
        .find_map(|line| line.strip_prefix("  link cache      0 of "))
        .and_then(|rest| rest.split(' ').next())
        .unwrap()
        .to_string();
    assert_eq!(fixes, "11", "{}", cold.cache_line);
    assert_eq!(
        warm.cache_line,
        format!(
            "  commit cache    {commits} of {commits} commits from {}, 0 read\n  link cache      {fixes} of {fixes} \
             fixes' links from {}, 0 linked\n  diff cache      {warm_hits} of {warm_hits} diffs from {}, 0 computed\n",
            file("p2commits"),
            file("p2links"),
            file("p2diffs"),
        )
    );
    assert_eq!(
        common::report_files(&dir.path().join("none")),
        common::report_files(&dir.path().join("cold"))
    );
    assert_eq!(
        common::report_files(&dir.path().join("none")),
        common::report_files(&dir.path().join("warm"))
    );
    // The stdout block is the same too; only the cache line after it differs.
    assert_eq!(none.summary, warm.summary);

    // One new commit, a fix of an earlier change: only the diffs that involve it are computed.
    std::fs::write(repo.join("src/limit_extra.c"), "extra line 1 (checked)\nextra line 2\n").unwrap();
    common::git_at(
        &repo,
        dir.path(),
        "2026-06-01T12:00:00Z",
        &["commit", "--quiet", "-am", "fix: limiter extra check"],
    );
    let grown = p2(&repo, &dir.path().join("grown"), Some(&cache));
    assert_eq!(grown.commits_cached, Some((commits, 1)), "only the new commit is read");
    let (_, computed) = grown.cache.unwrap();
    assert!(computed > 0 && computed <= 3, "computed {computed}");
    // The new fix is linked; every other fix's window is unchanged.
    assert!(
        grown
            .cache_line
            .contains(&format!("  link cache      {fixes} of 12 fixes' links from ")),
        "{}",
        grown.cache_line
    );
    let fresh = p2(&repo, &dir.path().join("fresh"), None);
    assert_eq!(
        common::report_files(&dir.path().join("fresh")),
        common::report_files(&dir.path().join("grown"))
    );
    assert_eq!(fresh.summary, grown.summary);
}

/// A commit that lands late but was written inside an earlier fix's window (a topic branch merged weeks later)
/// changes that window: the fix is linked again, and the reports are those of a run without a cache.
#[test]
fn a_commit_landing_in_an_old_window_links_that_fix_again() {
    let dir = tempfile::tempdir().unwrap();
    let repo = common::p2_fixture(dir.path());
    let cache = dir.path().join("cache");
    p2(&repo, &dir.path().join("cold"), Some(&cache));
    let git = |date: &str, args: &[&str]| common::git_at(&repo, dir.path(), date, args);
    let tip = String::from_utf8(
        std::process::Command::new("git")
            .args(["rev-parse", "--abbrev-ref", "HEAD"])
            .current_dir(&repo)
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    // "Add greeting" is day 60 (March 1st), "fix: typo in greeting" day 61: a commit of March 1st, evening, on a
    // branch from "Add greeting", merged in June. It touches another file: being in the window is what counts.
    git(
        "2026-03-01T18:00:00Z",
        &["checkout", "--quiet", "-b", "late", ":/^Add greeting"],
    );
    std::fs::write(repo.join("src/late.c"), "late line 1\nlate line 2\n").unwrap();
    git("2026-03-01T18:00:00Z", &["add", "src/late.c"]);
    git("2026-03-01T18:00:00Z", &["commit", "--quiet", "-m", "Add a late file"]);
    git("2026-06-02T12:00:00Z", &["checkout", "--quiet", tip.trim()]);
    git(
        "2026-06-02T12:00:00Z",
        &["merge", "--quiet", "--no-ff", "-m", "Merge branch 'late'", "late"],
    );
    let grown = p2(&repo, &dir.path().join("grown"), Some(&cache));
    let line = grown.cache_line.lines().find(|l| l.contains("link cache")).unwrap();
    assert!(line.ends_with(", 1 linked"), "{line}");
    let fresh = p2(&repo, &dir.path().join("fresh"), None);
    assert_eq!(
        common::report_files(&dir.path().join("fresh")),
        common::report_files(&dir.path().join("grown"))
    );
    assert_eq!(fresh.summary, grown.summary);
    // And a warm run after it takes all of them.
    let warm = p2(&repo, &dir.path().join("warm"), Some(&cache));
    let line = warm.cache_line.lines().find(|l| l.contains("link cache")).unwrap();
    assert!(line.ends_with(", 0 linked"), "{line}");
    assert_eq!(
        common::report_files(&dir.path().join("fresh")),
        common::report_files(&dir.path().join("warm"))
    );
}

#[test]
fn a_damaged_cache_is_ignored_with_a_warning_and_rewritten() {
    let dir = tempfile::tempdir().unwrap();
    let repo = common::p2_fixture(dir.path());
    let cache = dir.path().join("cache");
    p2(&repo, &dir.path().join("cold"), Some(&cache));
    let file = std::fs::read_dir(&cache)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|path| path.extension().is_some_and(|e| e == "p2diffs"))
        .unwrap();
    let mut bytes = std::fs::read(&file).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(&file, &bytes).unwrap();

    // The other caches as the damaged run finds them, for the comparison below.
    let copied = dir.path().join("without-diffs");
    std::fs::create_dir(&copied).unwrap();
    for entry in std::fs::read_dir(&cache).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e != "p2diffs") {
            std::fs::copy(&path, copied.join(path.file_name().unwrap())).unwrap();
        }
    }
    let damaged = p2(&repo, &dir.path().join("damaged"), Some(&cache));
    assert_eq!(
        damaged.warnings,
        [format!(
            "{}: the cache file's checksum does not match (damaged); the cache is ignored and rewritten",
            file.display()
        )]
    );
    // The damaged diff cache is not trusted: the run counts as one with no diff cache beside the same commit and link
    // caches (which spare it the windows of the fixes it links from there).
    assert_eq!(
        damaged.cache,
        Some(diffs_without_a_diff_cache(&repo, dir.path(), &copied))
    );
    assert!(damaged.cache.unwrap().1 > 0);
    assert_eq!(
        common::report_files(&dir.path().join("cold")),
        common::report_files(&dir.path().join("damaged"))
    );
    // Rewritten: the next run trusts it again.
    let next = p2(&repo, &dir.path().join("next"), Some(&cache));
    assert!(next.warnings.is_empty());
    assert_eq!(next.cache.unwrap().1, 0);
}

/// A cache that cannot be written (here `--cache` names a file, not a directory) is a warning for each file, never
/// an error: the reports are those of a run without a cache.
#[test]
fn caches_that_cannot_be_written_are_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let repo = common::p2_fixture(dir.path());
    let not_a_dir = dir.path().join("cache-file");
    std::fs::write(&not_a_dir, "not a directory").unwrap();
    let run = p2(&repo, &dir.path().join("blocked"), Some(&not_a_dir));
    p2(&repo, &dir.path().join("none"), None);
    assert_eq!(
        common::report_files(&dir.path().join("none")),
        common::report_files(&dir.path().join("blocked"))
    );
    for what in ["commit cache", "diff cache"] {
        assert!(
            run.warnings
                .iter()
                .any(|w| w.contains(&format!(": cannot write the {what} ("))),
            "{what}: {:?}",
            run.warnings
        );
    }
}

/// The diffs a run with the caches in `cache` and no diff cache answers from it (what it learned earlier in the same
/// run) and computes.
fn diffs_without_a_diff_cache(repo: &Path, dir: &Path, cache: &Path) -> (u64, u64) {
    p2(repo, &dir.join("another"), Some(cache)).cache.unwrap()
}

/// `phase0 weekly` twice in a row on a history that grew by one commit: the second week's P2 diffs only what the
/// new commit brings, and says so after its block (never in the week's files, which match a run without a cache).
#[test]
fn a_weekly_rerun_after_one_new_commit_reads_the_rest_from_the_cache() {
    use pipeline::commands::weekly::{WeeklyArgs, run as weekly};
    let dir = tempfile::tempdir().unwrap();
    let repo = common::p2_fixture(dir.path());
    let config = dir.path().join("weekly.toml");
    std::fs::write(&config, format!("[p2]\nrepo = {:?}\n", repo.display().to_string())).unwrap();
    let week = |out: &str, cache: Option<&Path>| {
        weekly(&WeeklyArgs {
            config: Some(config.clone()),
            out: dir.path().join(out),
            week: Some("2026-W47".into()),
            as_of: Some("2026-11-21".into()),
            cache: cache.map(Path::to_path_buf),
            ..WeeklyArgs::default()
        })
        .unwrap()
    };
    let cache = dir.path().join("cache");
    let first = week("first", Some(&cache));
    assert!(first.summary.contains(" computed\n"), "{}", first.summary);
    common::git_at(
        &repo,
        dir.path(),
        "2026-06-01T12:00:00Z",
        &["commit", "--quiet", "--allow-empty", "-m", "docs: nothing"],
    );
    let commit_cache = || {
        let file = std::fs::read_dir(&cache)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .find(|path| path.extension().is_some_and(|e| e == "p2commits"))
            .unwrap();
        std::fs::read(file).unwrap()
    };
    let before = commit_cache();
    let second = week("second", Some(&cache));
    let line = |cache: &str| second.summary.lines().find(|l| l.contains(cache)).unwrap().to_string();
    assert!(line("diff cache").ends_with(", 0 computed"), "{}", line("diff cache"));
    // Reads only the new commit: the rest of the history comes from the commit cache.
    assert!(line("commit cache").ends_with(", 1 read"), "{}", line("commit cache"));
    // Which is appended to the file, not written with the rest again; a third week reads it back.
    let after = commit_cache();
    assert!(after.len() > before.len() && after.starts_with(&before));
    let third = week("third", Some(&cache));
    let read = third.summary.lines().find(|l| l.contains("commit cache")).unwrap();
    assert!(read.ends_with(", 0 read"), "{read}");
    week("uncached", None);
    for file in [
        "week.md",
        "week.json",
        "p2/p2.json",
        "p2/p2.md",
        "p2/p2-failures.parquet",
    ] {
        assert_eq!(
            std::fs::read(dir.path().join("second/2026-W47").join(file)).unwrap(),
            std::fs::read(dir.path().join("uncached/2026-W47").join(file)).unwrap(),
            "{file}"
        );
    }
}
