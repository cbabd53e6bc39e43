//! The link memo (issue 21, incremental scans): what linking a fix concluded, kept between runs by the fix's id
//! ([`crate::scan::remedy_cache`]), so that a rerun links again only the fixes whose window changed.
//!
//! A fix's link is a function of the fix, the candidates of its window (their diffs, their landings on the main
//! line) and the pre-registration, and of nothing else in the history, with two exceptions the analysis keeps out
//! of the memo: a first blame that gave lines to a mass change (the second blame skips every mass change whose
//! whole paths the run fetched, which depends on the other fixes' links), and a fix or failing change that a
//! SHA-named failure also names (the lines the classification of those reads reach both). The stamp is a hash of
//! the window as this run sees it: the fix, the candidates in order, and the commit through which each (the fix
//! included) reached the main line. An entry whose stamp differs is recomputed; the cache file's envelope ties the
//! whole file to phase0's version and the pre-registration.

use xxhash_rust::xxh3::Xxh3;

use super::{ClassRule, Evidence, History, LinkRule, NO_LANDING};
use crate::scan::cache_file::{self, put_id};
use crate::scan::commit_cache::Facts;
use crate::scan::commits::ObjectId;

/// What linking one fix concluded, with what the run around it needs to count and fetch as a full run would.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkMemo {
    /// [`window_stamp`] of the window it was concluded from.
    pub(super) stamp: u128,
    pub(super) link: LinkRule,
    pub(super) failing: Option<ObjectId>,
    pub(super) evidence: Evidence,
    pub(super) evidence_lines: Option<u32>,
    /// The failure's classification.
    pub(super) rule: ClassRule,
    /// The candidates the blame gave lines to, and the weak fallback: their whole paths are fetched (the mass
    /// changes counted in the report are found among them).
    pub(super) winners: Vec<ObjectId>,
    pub(super) fallback: Option<ObjectId>,
    /// The window's candidates that touched one of the fix's files: the line batch asks for theirs.
    pub(super) touching: Vec<ObjectId>,
    /// Whether the fix's own lines were asked for.
    pub(super) lined: bool,
}

const EVIDENCE: [Evidence; 6] = [
    Evidence::Sha,
    Evidence::Subject,
    Evidence::Lines,
    Evidence::Adjacent,
    Evidence::Files,
    Evidence::None,
];

fn index_of<T: PartialEq>(all: &[T], value: &T) -> u8 {
    all.iter().position(|v| v == value).expect("listed") as u8
}

fn from_index<T: Copy>(all: &[T], index: u8, what: &str) -> Result<T, String> {
    all.get(usize::from(index))
        .copied()
        .ok_or_else(|| format!("the link cache names an unknown {what} ({index})"))
}

fn put_ids(out: &mut Vec<u8>, ids: &[ObjectId]) {
    out.extend_from_slice(&(ids.len() as u32).to_le_bytes());
    for id in ids {
        put_id(out, id);
    }
}

fn ids(r: &mut cache_file::Reader<'_>) -> Result<Vec<ObjectId>, String> {
    (0..r.count(21)?).map(|_| r.id()).collect()
}

fn put_optional_id(out: &mut Vec<u8>, id: &Option<ObjectId>) {
    match id {
        None => out.push(0),
        Some(id) => {
            out.push(1);
            put_id(out, id);
        }
    }
}

fn optional_id(r: &mut cache_file::Reader<'_>) -> Result<Option<ObjectId>, String> {
    Ok(match r.u8()? {
        0 => None,
        _ => Some(r.id()?),
    })
}

impl Facts for LinkMemo {
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.stamp.to_le_bytes());
        out.push(index_of(&LinkRule::ALL, &self.link));
        put_optional_id(out, &self.failing);
        out.push(index_of(&EVIDENCE, &self.evidence));
        match self.evidence_lines {
            None => out.push(0),
            Some(lines) => {
                out.push(1);
                out.extend_from_slice(&lines.to_le_bytes());
            }
        }
        out.push(index_of(&ClassRule::ALL, &self.rule));
        put_ids(out, &self.winners);
        put_optional_id(out, &self.fallback);
        put_ids(out, &self.touching);
        out.push(u8::from(self.lined));
    }

    fn decode(r: &mut cache_file::Reader<'_>) -> Result<Self, String> {
        let stamp = u128::from_le_bytes(r.take(16)?.try_into().expect("16 bytes"));
        let link = from_index(&LinkRule::ALL, r.u8()?, "link rule")?;
        let failing = optional_id(r)?;
        let evidence = from_index(&EVIDENCE, r.u8()?, "evidence")?;
        let evidence_lines = match r.u8()? {
            0 => None,
            _ => Some(r.u32()?),
        };
        let rule = from_index(&ClassRule::ALL, r.u8()?, "rule")?;
        Ok(Self {
            stamp,
            link,
            failing,
            evidence,
            evidence_lines,
            rule,
            winners: ids(r)?,
            fallback: optional_id(r)?,
            touching: ids(r)?,
            lined: r.u8()? != 0,
        })
    }
}

/// The stamp of a fix's window as `history` has it: the fix, then each candidate of `window` in order, each with the
/// id of the commit through which it reached the main line.
pub(super) fn window_stamp(history: &History<'_>, remedy: usize, window: &[usize]) -> u128 {
    let mut hasher = Xxh3::new();
    let mut add = |pos: usize| {
        hasher.update(history.rows[pos].id.as_bytes());
        match history.landing[pos] {
            NO_LANDING => hasher.update(&[0]),
            landing => {
                hasher.update(&[1]);
                hasher.update(history.rows[landing].id.as_bytes());
            }
        }
    };
    add(remedy);
    for &candidate in window {
        add(candidate);
    }
    hasher.digest128()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_memo_comes_back_as_it_was_encoded() {
        let id = |n: u8| ObjectId::from_bytes_or_panic(&[n; 20]);
        for (link, evidence, rule, lines, failing) in [
            (
                LinkRule::FixLines,
                Evidence::Lines,
                ClassRule::SelfOtherLines,
                Some(7),
                Some(id(2)),
            ),
            (
                LinkRule::FixUnattributed,
                Evidence::None,
                ClassRule::AmbiguousUnattributedFix,
                None,
                None,
            ),
            (
                LinkRule::FixFiles,
                Evidence::Files,
                ClassRule::AmbiguousWeakLink,
                None,
                Some(id(9)),
            ),
        ] {
            let memo = LinkMemo {
                stamp: 0x0123_4567_89ab_cdef_0011_2233_4455_6677,
                link,
                failing,
                evidence,
                evidence_lines: lines,
                rule,
                winners: vec![id(2), id(3)],
                fallback: failing,
                touching: vec![id(4)],
                lined: lines.is_some(),
            };
            let mut bytes = Vec::new();
            memo.encode(&mut bytes);
            let mut r = cache_file::Reader::new(&bytes);
            assert_eq!(LinkMemo::decode(&mut r), Ok(memo));
            assert!(r.is_empty());
        }
        let mut r = cache_file::Reader::new(&[0; 16]);
        assert!(LinkMemo::decode(&mut r).is_err());
    }
}
