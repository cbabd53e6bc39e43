//! The build does not depend on the date: `just weekly` and reproducible runs set `SOURCE_DATE_EPOCH`, and a build
//! script that asks Cargo to rerun when it changes rebuilds its crate and relinks both binaries (fat LTO: about
//! three minutes on 2 cores) every day, for runs that take a second. cc ≥ 1.9 asks for it; pipeline/Cargo.toml
//! holds cc below 1.9.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The newest `output` of each package's build-script runs in this test's profile directory: older ones are left
/// behind by earlier dependency versions and no longer decide anything.
fn newest_build_outputs(build_dir: &Path) -> Vec<(String, PathBuf)> {
    let mut newest: std::collections::BTreeMap<String, (SystemTime, PathBuf)> = Default::default();
    for entry in fs::read_dir(build_dir)
        .expect("the profile's build directory")
        .flatten()
    {
        let output = entry.path().join("output");
        let Ok(meta) = fs::metadata(&output) else { continue };
        let name = entry.file_name().to_string_lossy().into_owned();
        // `<package>-<16 hex digits>`
        let package = name.rsplit_once('-').map_or(name.as_str(), |(p, _)| p).to_owned();
        let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
        if newest.get(&package).is_none_or(|(t, _)| modified > *t) {
            newest.insert(package, (modified, output));
        }
    }
    newest
        .into_iter()
        .map(|(package, (_, output))| (package, output))
        .collect()
}

#[test]
fn no_build_script_reruns_when_source_date_epoch_changes() {
    // <target>[/<triple>]/<profile>/deps/build_inputs-<hash>
    let exe = std::env::current_exe().unwrap();
    let build_dir = exe.parent().and_then(Path::parent).unwrap().join("build");
    let outputs = newest_build_outputs(&build_dir);
    assert!(
        outputs.iter().any(|(package, _)| package == "libdeflate-sys"),
        "libdeflate-sys' build script output not found under {}",
        build_dir.display()
    );
    let asking: Vec<&str> = outputs
        .iter()
        .filter(|(_, output)| {
            fs::read_to_string(output)
                .unwrap_or_default()
                .lines()
                .any(|l| l.ends_with("rerun-if-env-changed=SOURCE_DATE_EPOCH"))
        })
        .map(|(package, _)| package.as_str())
        .collect();
    assert!(
        asking.is_empty(),
        "build scripts that rerun when SOURCE_DATE_EPOCH changes: {asking:?}"
    );
}

#[test]
fn cc_stays_below_the_version_that_reruns_on_source_date_epoch() {
    let lock = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.lock")).unwrap();
    let version = lock
        .split("[[package]]")
        .find(|block| block.contains("\nname = \"cc\"\n"))
        .and_then(|block| block.lines().find_map(|l| l.strip_prefix("version = \"")))
        .map(|v| v.trim_end_matches('"').to_owned())
        .expect("cc in Cargo.lock");
    let minor: u32 = version.split('.').nth(1).unwrap().parse().unwrap();
    assert!(
        version.starts_with("1.") && minor < 9,
        "cc {version} reruns libdeflate's build on every new date"
    );
}
