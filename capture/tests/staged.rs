//! The cache-tree-pruned staged diff agrees with gix's full tree-index status on generated repositories.
//!
//! Each scenario commits a random tree, then stages random additions, modifications, deletions, mode changes,
//! file↔directory swaps and whole-directory removals with the `git` CLI (isolated from any user configuration),
//! and compares the two path sets. Scenarios are seeded, so a failure names its seed.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::AtomicBool;

use gix::bstr::BStr;

/// A tiny deterministic generator (SplitMix64): scenarios must be reproducible from their seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// `git ARGS` in `dir`, isolated ([`testenv::git`]); the scenario's work tree is its own HOME.
fn git(dir: &Path, args: &[&str]) {
    let output = testenv::git(dir, dir).args(args).output().expect("git runs");
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

const DIRS: [&str; 6] = ["", "a/", "a/b/", "a/b/c/", "d/", "d.e/"];
const NAMES: [&str; 6] = ["x", "y.rs", "a", "d", "z-1", "a.b"];

fn random_path(rng: &mut Rng) -> String {
    format!("{}{}", DIRS[rng.below(DIRS.len())], NAMES[rng.below(NAMES.len())])
}

fn write_file(root: &Path, path: &str, contents: &str) -> bool {
    let full = root.join(path);
    // Skip paths that collide with an existing file/directory of the other kind.
    if full.is_dir()
        || full
            .ancestors()
            .skip(1)
            .any(|a| a.starts_with(root) && a != root && a.is_file())
    {
        return false;
    }
    std::fs::create_dir_all(full.parent().unwrap()).unwrap();
    std::fs::write(full, contents).unwrap();
    true
}

fn scenario(seed: u64) {
    let mut rng = Rng(seed);
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    git(root, &["init", "--quiet", "--initial-branch=main"]);
    for i in 0..12 {
        let path = random_path(&mut rng);
        write_file(root, &path, &format!("v{i}\n"));
    }
    write_file(root, "keep/stable.txt", "stable\n");
    git(root, &["add", "--all"]);
    git(root, &["commit", "--quiet", "--allow-empty", "-m", "base"]);

    for step in 0..rng.below(6) + 1 {
        match rng.below(6) {
            0 | 1 => {
                let path = random_path(&mut rng);
                if write_file(root, &path, &format!("step {step} {}\n", rng.next())) {
                    git(root, &["add", "--", &path]);
                }
            }
            2 => {
                let tracked = tracked_files(root);
                if !tracked.is_empty() {
                    let victim = &tracked[rng.below(tracked.len())];
                    git(root, &["rm", "-f", "--quiet", "--cached", "--", victim]);
                }
            }
            3 => {
                let tracked = tracked_files(root);
                if !tracked.is_empty() {
                    let victim = &tracked[rng.below(tracked.len())];
                    git(root, &["update-index", "--chmod=+x", "--", victim]);
                }
            }
            4 => {
                let dir = ["a", "d", "a/b"][rng.below(3)];
                if root.join(dir).is_dir() {
                    git(
                        root,
                        &["rm", "-r", "-f", "--quiet", "--cached", "--ignore-unmatch", "--", dir],
                    );
                }
            }
            _ => {
                // Modify a tracked file in place and stage it.
                let tracked = tracked_files(root);
                if !tracked.is_empty() {
                    let victim = tracked[rng.below(tracked.len())].clone();
                    std::fs::write(root.join(&victim), format!("changed {}\n", rng.next())).unwrap();
                    git(root, &["add", "--", &victim]);
                }
            }
        }
    }

    let repo = gix::open_opts(root, gix::open::Options::isolated()).unwrap();
    let index = repo.index_or_empty().unwrap();
    let head_tree = repo.head_tree_id_or_empty().unwrap().detach();

    let mut pruned = BTreeSet::new();
    capture::surface::staged_changes(&repo, head_tree, &index, &AtomicBool::new(false), &mut |path: &BStr| {
        pruned.insert(path.to_string());
    })
    .unwrap();

    let mut reference = BTreeSet::new();
    repo.tree_index_status(
        &head_tree,
        &index,
        None,
        gix::status::tree_index::TrackRenames::Disabled,
        |change, _, _| {
            reference.insert(change.location().to_string());
            Ok(std::ops::ControlFlow::Continue(()))
        },
    )
    .unwrap();
    assert_eq!(pruned, reference, "seed {seed}");
}

fn tracked_files(root: &Path) -> Vec<String> {
    let output = testenv::git(root, root).args(["ls-files"]).output().unwrap();
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(String::from)
        .collect()
}

#[test]
fn pruned_staged_diff_matches_gix_tree_index_status() {
    for seed in 0..40 {
        scenario(seed);
    }
}

#[test]
fn nothing_staged_right_after_a_commit() {
    // After `git commit` the cache-tree is complete: the diff reads no tree at all and reports nothing.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    git(root, &["init", "--quiet", "--initial-branch=main"]);
    write_file(root, "a/b/c.txt", "c\n");
    write_file(root, "top.txt", "t\n");
    git(root, &["add", "--all"]);
    git(root, &["commit", "--quiet", "-m", "base"]);
    let repo = gix::open_opts(root, gix::open::Options::isolated()).unwrap();
    let index = repo.index_or_empty().unwrap();
    let head_tree = repo.head_tree_id_or_empty().unwrap().detach();
    let root_cache = index.tree().expect("git writes a cache-tree on commit");
    assert_eq!((root_cache.id, root_cache.num_entries), (head_tree, Some(2)));
    let mut found = Vec::new();
    capture::surface::staged_changes(&repo, head_tree, &index, &AtomicBool::new(false), &mut |path: &BStr| {
        found.push(path.to_string());
    })
    .unwrap();
    assert!(found.is_empty(), "{found:?}");
}
