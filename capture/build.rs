//! Compiles the risk floor's pattern tables (`src/risk_patterns.rs`) into one dense DFA per surface, serialised
//! for the target's endianness, so the hook deserialises them instead of compiling ~200 regexes on every run.

use std::path::PathBuf;

use regex_automata::dfa::{StartKind, dense};
use regex_automata::nfa::thompson;
use regex_automata::util::syntax;

/// The surfaces as the tables name them (the real type lives in `src/reflection.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(dead_code)]
pub enum Surface {
    Auth,
    Data,
    Infra,
    Build,
    Ui,
    Test,
    Docs,
    None,
}

include!("src/risk_patterns.rs");

fn main() {
    println!("cargo::rerun-if-changed=src/risk_patterns.rs");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let big_endian = std::env::var("CARGO_CFG_TARGET_ENDIAN").as_deref() == Ok("big");
    let surfaces = [
        (Surface::Auth, "auth"),
        (Surface::Data, "data"),
        (Surface::Infra, "infra"),
        (Surface::Build, "build"),
        (Surface::Ui, "ui"),
        (Surface::Test, "test"),
        (Surface::Docs, "docs"),
    ];
    for (surface, name) in surfaces {
        let patterns = surface_patterns(surface);
        assert!(!patterns.is_empty(), "surface {name} has no patterns");
        let dfa = dense::Builder::new()
            .configure(dense::Config::new().start_kind(StartKind::Unanchored).minimize(true))
            .syntax(syntax::Config::new().unicode(false).utf8(false))
            .thompson(thompson::Config::new().utf8(false))
            .build_many(&patterns)
            .unwrap_or_else(|error| panic!("the {name} patterns do not compile to a DFA: {error}"));
        let (bytes, padding) = if big_endian {
            dfa.to_bytes_big_endian()
        } else {
            dfa.to_bytes_little_endian()
        };
        std::fs::write(out.join(format!("risk-{name}.dfa")), &bytes[padding..]).expect("OUT_DIR is writable");
    }
}
