//! `phase0 synth p1 --rows N --seed S`: a realistic labeled corpus, generated deterministically (ChaCha8 seeded
//! with `S`), for the sample in `data/` and the benchmark corpora.
//!
//! The model: each row is a turn by one of three agents on one change surface. The chance the work is right
//! depends on the surface (auth and data changes fail more often) and the agent; the agent's reported confidence
//! tracks that chance with agent-specific bias and noise, rounded to 0.05 as agents tend to report, so the
//! corpus has ties, an overconfident agent, and a real but imperfect signal.

use std::io::Write;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

struct Agent {
    name: &'static str,
    skill: f64,
    /// Added to the true chance before reporting (overconfidence when positive).
    bias: f64,
    /// Spread of the report around the biased chance.
    noise: f64,
}

const AGENTS: [Agent; 3] = [
    Agent {
        name: "claude-code",
        skill: 0.05,
        bias: 0.05,
        noise: 0.12,
    },
    Agent {
        name: "codex",
        skill: 0.0,
        bias: 0.15,
        noise: 0.18,
    },
    Agent {
        name: "aider",
        skill: -0.05,
        bias: 0.0,
        noise: 0.25,
    },
];

/// Surfaces with their share of turns and base chance of being right.
const SURFACES: [(&str, f64, f64); 8] = [
    ("auth", 0.06, 0.62),
    ("data", 0.08, 0.66),
    ("infra", 0.06, 0.70),
    ("build", 0.10, 0.78),
    ("ui", 0.20, 0.82),
    ("test", 0.15, 0.88),
    ("docs", 0.10, 0.93),
    ("none", 0.25, 0.80),
];

/// Which fields a synthetic row carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fields {
    /// `confidence, correct, task_ref, agent, surface, session_id` (~120 bytes a row).
    Full,
    /// `confidence, correct, agent` (~50 bytes a row, the shape of the benchmark corpora).
    Minimal,
}

/// Writes `rows` JSONL rows generated from `seed` to `out`.
pub fn p1_corpus(rows: u64, seed: u64, out: &mut impl Write) -> std::io::Result<()> {
    p1_corpus_with(rows, seed, Fields::Full, out)
}

/// Writes `rows` JSONL rows with `fields` generated from `seed` to `out`; the same seed draws the same rows
/// whatever the fields.
pub fn p1_corpus_with(rows: u64, seed: u64, fields: Fields, out: &mut impl Write) -> std::io::Result<()> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut line = String::with_capacity(160);
    for row in 0..rows {
        let agent = &AGENTS[rng.random_range(0..AGENTS.len())];
        let pick: f64 = rng.random();
        let mut acc = 0.0;
        let (surface, _, base) = SURFACES
            .iter()
            .find(|(_, share, _)| {
                acc += share;
                pick < acc
            })
            .copied()
            .unwrap_or(SURFACES[SURFACES.len() - 1]);
        let chance = (base + agent.skill + (rng.random::<f64>() - 0.5) * 0.3).clamp(0.02, 0.98);
        let correct = rng.random::<f64>() < chance;
        // Box–Muller for the report's noise.
        let (u1, u2): (f64, f64) = (rng.random::<f64>().max(f64::MIN_POSITIVE), rng.random());
        let gaussian = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
        let reported = (chance + agent.bias + agent.noise * gaussian).clamp(0.0, 1.0);
        let confidence = (reported * 20.0).round() / 20.0;
        let session = row / 4;
        line.clear();
        if fields == Fields::Minimal {
            let row = serde_json::json!({"confidence": confidence, "correct": correct, "agent": agent.name});
            line.push_str(&row.to_string());
            line.push('\n');
            out.write_all(line.as_bytes())?;
            continue;
        }
        line.push_str(
            &serde_json::json!({
                "confidence": confidence,
                "correct": correct,
                "task_ref": format!("PRJ-{}", 1000 + session / 3),
                "agent": agent.name,
                "surface": surface,
                "session_id": format!("s{seed:x}-{session:06}"),
            })
            .to_string(),
        );
        line.push('\n');
        out.write_all(line.as_bytes())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minimal_rows_are_the_full_rows_without_the_extra_fields() {
        let (mut full, mut minimal) = (Vec::new(), Vec::new());
        p1_corpus_with(50, 3, Fields::Full, &mut full).unwrap();
        p1_corpus_with(50, 3, Fields::Minimal, &mut minimal).unwrap();
        for (full, minimal) in String::from_utf8(full)
            .unwrap()
            .lines()
            .zip(String::from_utf8(minimal).unwrap().lines())
        {
            let mut full: serde_json::Value = serde_json::from_str(full).unwrap();
            for key in ["task_ref", "surface", "session_id"] {
                full.as_object_mut().unwrap().remove(key);
            }
            assert_eq!(full, serde_json::from_str::<serde_json::Value>(minimal).unwrap());
        }
    }

    #[test]
    fn same_seed_same_bytes_and_rows_are_valid() {
        let mut first = Vec::new();
        p1_corpus(500, 7, &mut first).unwrap();
        let mut second = Vec::new();
        p1_corpus(500, 7, &mut second).unwrap();
        assert_eq!(first, second);
        let mut other = Vec::new();
        p1_corpus(500, 8, &mut other).unwrap();
        assert_ne!(first, other);
        let corpus =
            crate::scan::corpus::parse_corpus("synth", &first, crate::scan::corpus::InvalidPolicy::Fail).unwrap();
        assert_eq!(corpus.stats.rows, 500);
        assert_eq!(corpus.agent.dict().len(), 3);
        let correct_rate = corpus.correct.iter().filter(|&&c| c).count() as f64 / 500.0;
        assert!((0.6..0.95).contains(&correct_rate), "{correct_rate}");
    }
}
