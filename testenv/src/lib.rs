//! The environment every test runs `git` (and any program that may read git configuration) in, so that the
//! machine's git setup can never change a result: nothing inherited but `PATH`; `HOME` and `XDG_CONFIG_HOME` at a
//! directory the test owns; no system or global git configuration; the C locale; UTC. One copy, used by the tests of
//! `capture`, `pipeline` and the end-to-end tests (gitoxide's and onefetch's fixtures are isolated the same way).

use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;

/// `program` in `dir`, isolated as the crate documentation says, with `home` as its `HOME`.
pub fn isolated(program: impl AsRef<OsStr>, dir: &Path, home: &Path) -> Command {
    let mut command = Command::new(program);
    command
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("LC_ALL", "C")
        .env("TZ", "UTC");
    command
}

/// `git` in `dir`, [`isolated`], committing as the fixture author and committer (dates are the caller's).
pub fn git(dir: &Path, home: &Path) -> Command {
    let mut command = isolated("git", dir, home);
    with_fixture_identity(&mut command);
    command
}

/// Sets the fixture author and committer on `command` (for scripts that run `git commit` themselves).
pub fn with_fixture_identity(command: &mut Command) -> &mut Command {
    command
        .env("GIT_AUTHOR_NAME", "Fixture Author")
        .env("GIT_AUTHOR_EMAIL", "author@example.com")
        .env("GIT_COMMITTER_NAME", "Fixture Committer")
        .env("GIT_COMMITTER_EMAIL", "committer@example.com")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A global configuration the user might have (here: an alias and an identity in `$HOME/.gitconfig` of the
    /// parent environment) is not seen, and nothing but the listed variables is inherited.
    #[test]
    fn nothing_of_the_callers_environment_leaks() {
        let home = std::env::temp_dir();
        let output = isolated("env", &home, &home).output().expect("env runs");
        let mut names: Vec<String> = String::from_utf8(output.stdout)
            .expect("UTF-8")
            .lines()
            .filter_map(|line| line.split_once('=').map(|(name, _)| name.to_string()))
            .collect();
        names.sort();
        assert_eq!(
            names,
            [
                "GIT_CONFIG_GLOBAL",
                "GIT_CONFIG_NOSYSTEM",
                "HOME",
                "LC_ALL",
                "PATH",
                "TZ",
                "XDG_CONFIG_HOME"
            ]
        );
    }
}
