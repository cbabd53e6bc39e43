//! Shared by the integration tests that build git fixtures.

use std::path::Path;
use std::process::Command;

/// `program` in `dir`, isolated from the machine's git configuration and environment: only PATH, a private HOME,
/// no system or global git config, C locale and UTC.
pub fn isolated(program: &str, dir: &Path, home: &Path) -> Command {
    let mut cmd = Command::new(program);
    cmd.current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("LC_ALL", "C")
        .env("TZ", "UTC");
    cmd
}
