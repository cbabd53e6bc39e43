//! The change surface of a repository: every path an agent's work touched and that has not reached the upstream.
//!
//! It is the union of
//! 1. the commits on the current branch that are not on its base (so work the agent already committed still counts),
//! 2. staged changes (`HEAD` tree vs index),
//! 3. unstaged changes (index vs work tree), and
//! 4. untracked files that are not ignored, each file listed (like `git status -uall`),
//!
//! as sorted, de-duplicated, `/`-separated repo-relative paths, without the hook's own `.mosaic/` scratch. Renames
//! are not tracked, so a moved file contributes both its old and its new path (both are part of the surface).
//!
//! The base of (1) is, in order: an explicit revision (`REFLECTION_BASE` in the hook), the upstream of the current
//! branch, the remote's default branch (`refs/remotes/origin/HEAD`, `origin/main`, `origin/master`), and a local
//! `main`/`master` other than the current branch. The committed part is the tree diff between the merge base of
//! `HEAD` and that base and `HEAD` itself. On a default branch without an upstream there is nothing to compare
//! against, so only uncommitted work counts: that is the documented limit of a purely local repository.
//!
//! Everything is read with gix; no `git` process is spawned.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, PoisonError};

use gix::bstr::{BStr, ByteSlice};

mod staged;
pub use staged::staged_changes;

/// The hook's scratch directory, never part of the surface.
pub const SCRATCH_DIR: &str = ".mosaic";

/// Paths collected so far, shared with a caller that may stop waiting before the scan is complete.
#[derive(Debug, Clone, Default)]
pub struct SharedPaths(Arc<Mutex<BTreeSet<String>>>);

impl SharedPaths {
    pub fn snapshot(&self) -> Vec<String> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .cloned()
            .collect()
    }

    fn insert(&self, path: String) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).insert(path);
    }
}

/// What to scan and what to leave out.
#[derive(Debug, Clone, Default)]
pub struct SurfaceOptions {
    /// A revision to compare committed work against instead of the automatic base.
    pub base: Option<String>,
    /// Repo-relative paths (files or directories) to leave out besides `.mosaic/`.
    pub exclude: Vec<String>,
    /// Set to stop the scan early (the hook's time budget).
    pub interrupt: Arc<AtomicBool>,
}

#[derive(Debug, thiserror::Error)]
pub enum SurfaceError {
    #[error("{path}: not a git work tree")]
    NoWorkTree { path: PathBuf },
    #[error("{path}: {message}")]
    Git { path: PathBuf, message: String },
}

/// Where the committed part of the surface was measured from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommittedBase {
    /// The reference or revision the base came from (`refs/remotes/origin/main`, `REFLECTION_BASE=…`).
    pub source: String,
    /// The merge base of `HEAD` and that reference.
    pub merge_base: gix::ObjectId,
}

/// The outcome of a complete scan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeSurface {
    pub files: Vec<String>,
    pub base: Option<CommittedBase>,
}

/// Opens the work tree that contains `dir`, the way `git` would find it (trusting the user's configuration, so
/// global excludes apply as in `git status`). Bare repositories have no work tree and are refused.
pub fn discover_work_tree(dir: &Path) -> Result<gix::Repository, SurfaceError> {
    // Read the index as git on Linux does, which is what the hook is measured against:
    // - without verifying its trailing checksum (git verifies it only in `git fsck`); hashing the whole index
    //   with collision-detecting SHA-1 was a quarter of the scan on a checkout of git.git;
    // - with nanosecond timestamps in the racy-entry check (git is built with USE_NSEC); gix's default of whole
    //   seconds re-hashes every file written in the same second as the index, e.g. all of a fresh checkout.
    // Nothing here writes the index, so these overrides only affect reading.
    let mut trust = gix::sec::trust::Mapping::<gix::open::Options>::default();
    for options in [&mut trust.full, &mut trust.reduced] {
        options.modify(|options| options.config_overrides(["index.skipHash=true", "gitoxide.core.useNsec=true"]));
    }
    let repo = gix::ThreadSafeRepository::discover_opts(dir, Default::default(), trust)
        .map(gix::Repository::from)
        .map_err(|_| SurfaceError::NoWorkTree {
            path: dir.to_path_buf(),
        })?;
    if repo.workdir().is_none() {
        return Err(SurfaceError::NoWorkTree {
            path: dir.to_path_buf(),
        });
    }
    Ok(repo)
}

/// Scans the whole change surface of `repo`.
pub fn change_surface(repo: &gix::Repository, options: &SurfaceOptions) -> Result<ChangeSurface, SurfaceError> {
    let paths = SharedPaths::default();
    let base = collect_change_surface(repo, options, &paths)?;
    Ok(ChangeSurface {
        files: paths.snapshot(),
        base,
    })
}

/// Scans the change surface of `repo` into `out`, path by path, so that a caller with a deadline can take what was
/// found so far. Returns the base the committed part was measured from, if any.
pub fn collect_change_surface(
    repo: &gix::Repository,
    options: &SurfaceOptions,
    out: &SharedPaths,
) -> Result<Option<CommittedBase>, SurfaceError> {
    let workdir = repo.workdir().ok_or_else(|| SurfaceError::NoWorkTree {
        path: repo.git_dir().to_path_buf(),
    })?;
    let git_error = |message: String| SurfaceError::Git {
        path: workdir.to_path_buf(),
        message,
    };
    let filter = PathFilter::new(&options.exclude);
    let add = |path: &BStr| {
        if let Some(path) = filter.keep(path) {
            out.insert(path);
        }
    };

    let index = repo.index_or_empty().map_err(|e| git_error(e.to_string()))?;
    let history_repo = repo.clone().into_sync();

    std::thread::scope(|scope| {
        // Everything that needs objects (the committed part and the staged part, which first load the pack index)
        // runs on a second thread while this one compares the index with the work tree, which needs none.
        let history = {
            let index = &index;
            let add = &add;
            scope.spawn(move || -> Result<Option<CommittedBase>, String> {
                let repo = history_repo.to_thread_local();
                let base = committed_base(&repo, options.base.as_deref()).map_err(|e| e.to_string())?;
                if let Some(base) = &base {
                    committed_changes(&repo, base.merge_base, &mut |path| add(path)).map_err(|e| e.to_string())?;
                }
                let head_tree = repo.head_tree_id_or_empty().map_err(|e| e.to_string())?.detach();
                // Nothing is staged when the index's cache-tree is valid at the root and names HEAD's tree: the
                // common case, and then the staged diff is skipped altogether.
                let nothing_staged = index
                    .tree()
                    .is_some_and(|root| root.num_entries.is_some() && root.id == head_tree);
                if nothing_staged {
                    return Ok(base);
                }
                if index.is_sparse() {
                    tree_index_via_gix(&repo, head_tree, index, &mut |path| add(path))?;
                } else {
                    staged::staged_changes(&repo, head_tree, index, &options.interrupt, &mut |path| add(path))
                        .map_err(|e| e.to_string())?;
                }
                Ok(base)
            })
        };

        let status = repo
            .status(gix::progress::Discard)
            .map_err(|e| git_error(e.to_string()))?
            .index(gix::worktree::IndexPersistedOrInMemory::Persisted(index.clone()))
            .untracked_files(gix::status::UntrackedFiles::Files)
            .index_worktree_submodules(gix::status::Submodule::Given {
                ignore: gix::submodule::config::Ignore::Dirty,
                check_dirty: false,
            })
            .index_worktree_rewrites(None)
            // The directory walk for untracked files has a thread of its own: leave it a core (on this 2-core
            // machine one stat thread beside the walk beat two, 8.9 ms against 10.5 ms on git.git).
            .index_worktree_options_mut(|options| {
                let cores = std::thread::available_parallelism().map_or(1, usize::from);
                options.thread_limit = Some(cores.saturating_sub(1).max(1));
            })
            .should_interrupt_owned(options.interrupt.clone());
        let items = status
            .into_index_worktree_iter(Vec::new())
            .map_err(|e| git_error(e.to_string()))?;
        for item in items {
            let item = item.map_err(|e| git_error(e.to_string()))?;
            // Stat-only updates and tracked or ignored dirwalk entries carry no summary: they are not changes.
            if item.summary().is_some() {
                add(item.rela_path());
            }
        }
        history
            .join()
            .map_err(|_| git_error("the committed and staged scan panicked".into()))?
            .map_err(git_error)
    })
}

/// gix's own tree-index status, for the sparse indexes the pruned diff does not handle.
fn tree_index_via_gix(
    repo: &gix::Repository,
    head_tree: gix::ObjectId,
    index: &gix::index::State,
    add: &mut dyn FnMut(&BStr),
) -> Result<(), String> {
    repo.tree_index_status(
        &head_tree,
        index,
        None,
        gix::status::tree_index::TrackRenames::Disabled,
        |change, _, _| {
            add(change.location());
            Ok(std::ops::ControlFlow::Continue(()))
        },
    )
    .map(|_| ())
    .map_err(|e| e.to_string())
}

fn committed_base(repo: &gix::Repository, explicit: Option<&str>) -> gix::Result<Option<CommittedBase>> {
    let Some(head) = repo.head_id().ok().map(|id| id.detach()) else {
        return Ok(None); // unborn branch: nothing committed yet
    };
    let tip = match explicit {
        Some(spec) => Some((format!("REFLECTION_BASE={spec}"), repo.rev_parse_single(spec)?.detach())),
        None => automatic_base_tip(repo),
    };
    let Some((source, tip)) = tip else { return Ok(None) };
    let Some(merge_base) = repo.merge_base(head, tip)? else {
        return Ok(None);
    };
    Ok(Some(CommittedBase {
        source,
        merge_base: merge_base.detach(),
    }))
}

/// The upstream of the current branch, else the remote default branch, else a local default branch.
fn automatic_base_tip(repo: &gix::Repository) -> Option<(String, gix::ObjectId)> {
    let head_name = repo.head_name().ok().flatten();
    let resolve = |name: &str| -> Option<(String, gix::ObjectId)> {
        let mut reference = repo.try_find_reference(name).ok()??;
        let id = reference.peel_to_id().ok()?.detach();
        Some((reference.name().as_bstr().to_string(), id))
    };
    if let Some(head_name) = &head_name
        && let Some(Ok(upstream)) =
            repo.branch_remote_tracking_ref_name(head_name.as_ref(), gix::remote::Direction::Fetch)
        && let Some(found) = resolve(&upstream.as_bstr().to_string())
    {
        return Some(found);
    }
    let current = head_name.as_ref().map(|name| name.as_bstr().to_string());
    [
        "refs/remotes/origin/HEAD",
        "refs/remotes/origin/main",
        "refs/remotes/origin/master",
        "refs/heads/main",
        "refs/heads/master",
    ]
    .into_iter()
    .filter(|candidate| current.as_deref() != Some(*candidate))
    .find_map(resolve)
}

fn committed_changes(repo: &gix::Repository, merge_base: gix::ObjectId, add: &mut dyn FnMut(&BStr)) -> gix::Result<()> {
    let head_tree = repo.head_tree()?;
    let base_tree = repo.find_commit(merge_base)?.tree()?;
    if base_tree.id == head_tree.id {
        return Ok(());
    }
    let changes = repo.diff_tree_to_tree(&base_tree, &head_tree, gix::diff::Options::default())?;
    for change in &changes {
        if !change.entry_mode().is_tree() {
            add(change.location());
        }
    }
    Ok(())
}

/// Leaves out the scratch directory and the caller's exclusions, and turns paths into `String`s.
struct PathFilter {
    excluded: Vec<String>,
}

impl PathFilter {
    fn new(extra: &[String]) -> Self {
        let mut excluded = vec![SCRATCH_DIR.to_string()];
        excluded.extend(
            extra
                .iter()
                .map(|path| path.trim_matches('/').to_string())
                .filter(|path| !path.is_empty()),
        );
        Self { excluded }
    }

    fn keep(&self, path: &BStr) -> Option<String> {
        let path = path.to_str_lossy();
        let path = path.trim_end_matches('/');
        let is_excluded = self.excluded.iter().any(|excluded| {
            path == excluded
                || (path.starts_with(excluded.as_str()) && path.as_bytes().get(excluded.len()) == Some(&b'/'))
        });
        (!is_excluded && !path.is_empty()).then(|| path.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_leaves_out_scratch_and_exclusions_by_component() {
        let filter = PathFilter::new(&["notes/reflections/".to_string()]);
        assert_eq!(filter.keep(".mosaic/reflections/a.json".into()), None);
        assert_eq!(filter.keep(".mosaic".into()), None);
        assert_eq!(filter.keep(".mosaicx/a".into()), Some(".mosaicx/a".to_string()));
        assert_eq!(filter.keep("notes/reflections/x.json".into()), None);
        assert_eq!(filter.keep("notes/other.md".into()), Some("notes/other.md".to_string()));
        assert_eq!(filter.keep("src/lib.rs".into()), Some("src/lib.rs".to_string()));
    }
}
