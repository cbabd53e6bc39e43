//! Status names to [`StatusCategory`] by keywords.

use super::StatusCategory;

/// The words of a name: lowercase ASCII letter and digit runs, apostrophes dropped (`Won't do` → `wont do`).
fn words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    for c in name.chars() {
        if c.is_alphanumeric() {
            word.extend(c.to_lowercase());
        } else if matches!(c, '\'' | '\u{2019}') {
            // dropped: "won't" is one word
        } else if !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

fn has_phrase(words: &[String], phrases: &[&[&str]]) -> bool {
    phrases.iter().any(|phrase| {
        words
            .windows(phrase.len())
            .any(|window| window.iter().zip(phrase.iter()).all(|(w, p)| w == p))
    })
}

/// Names that would otherwise match an In progress word.
const TODO_FIRST: &[&[&str]] = &[
    &["selected", "for", "development"],
    &["ready", "for", "development"],
    &["ready", "for", "dev"],
];

const CANCELLED: &[&[&str]] = &[
    &["cancelled"],
    &["canceled"],
    &["cancel"],
    &["wont", "do"],
    &["wont", "fix"],
    &["wontfix"],
    &["wontdo"],
    &["rejected"],
    &["declined"],
    &["abandoned"],
    &["obsolete"],
    &["invalid"],
    &["duplicate"],
    &["duplicated"],
    &["not", "planned"],
    &["discarded"],
    &["dropped"],
];

const DONE: &[&[&str]] = &[
    &["done"],
    &["closed"],
    &["complete"],
    &["completed"],
    &["resolved"],
    &["fixed"],
    &["shipped"],
    &["released"],
    &["deployed"],
    &["finished"],
    &["merged"],
    &["live"],
    &["delivered"],
    &["verified"],
];

const IN_PROGRESS: &[&[&str]] = &[
    &["in", "progress"],
    &["progress"],
    &["inprogress"],
    &["doing"],
    &["started"],
    &["wip"],
    &["review"],
    &["reviewing"],
    &["testing"],
    &["test"],
    &["qa"],
    &["dev"],
    &["development"],
    &["blocked"],
    &["active"],
    &["ongoing"],
    &["working"],
];

const TODO: &[&[&str]] = &[
    &["to", "do"],
    &["todo"],
    &["backlog"],
    &["open"],
    &["new"],
    &["reopened"],
    &["triage"],
    &["planned"],
    &["ready"],
    &["next"],
    &["icebox"],
    &["inbox"],
    &["ideas"],
    &["pending"],
    &["deferred"],
    &["unstarted"],
    &["selected"],
];

/// The category of a status name by keywords (whole words, case-insensitive, apostrophes dropped, `_` and `-`
/// separating words), checked in the order Cancelled, Done, In progress, To do; [`StatusCategory::Unknown`] when
/// no keyword matches. See the module documentation of [`crate::scan::board`] for the lists.
pub fn category_of_status(name: &str) -> StatusCategory {
    let words = words(name);
    if has_phrase(&words, TODO_FIRST) {
        StatusCategory::Todo
    } else if has_phrase(&words, CANCELLED) {
        StatusCategory::Cancelled
    } else if has_phrase(&words, DONE) {
        StatusCategory::Done
    } else if has_phrase(&words, IN_PROGRESS) {
        StatusCategory::InProgress
    } else if has_phrase(&words, TODO) {
        StatusCategory::Todo
    } else {
        StatusCategory::Unknown
    }
}

/// Phrases of a resolution that cancels, besides the Cancelled keywords.
const CANCELLING_RESOLUTIONS: &[&[&str]] = &[
    &["cannot", "reproduce"],
    &["cant", "reproduce"],
    &["incomplete"],
    &["not", "a", "bug"],
    &["works", "as", "designed"],
    &["works", "as", "intended"],
    &["working", "as", "intended"],
];

/// Whether a resolution (Jira `Resolution`) says the task was closed without being done: the Cancelled keywords,
/// and cannot/can't reproduce, incomplete, not a bug, works as designed/intended.
pub(super) fn resolution_cancels(resolution: &str) -> bool {
    let words = words(resolution);
    has_phrase(&words, CANCELLED) || has_phrase(&words, CANCELLING_RESOLUTIONS)
}

/// Whether a free-text close reason (beads `close_reason`) starts by saying the task was closed without being
/// done: it begins with a phrase of [`resolution_cancels`], possibly after `closed as`, `closing as` or `marked
/// as` (`Duplicate of bd-12`, `Won't do: out of scope`, `Closed as not planned`; not `Fixed invalid input`).
pub(super) fn reason_cancels(reason: &str) -> bool {
    let words = words(reason);
    let lead = match words.as_slice() {
        [first, second, rest @ ..] if matches!(first.as_str(), "closed" | "closing" | "marked") && second == "as" => {
            rest
        }
        all => all,
    };
    CANCELLED
        .iter()
        .chain(CANCELLING_RESOLUTIONS)
        .any(|phrase| lead.len() >= phrase.len() && lead.iter().zip(phrase.iter()).all(|(w, p)| w == p))
}

/// Whether a status or resolution names a reopen (`Reopened`, `REOPENED`, `re-opened`).
pub(super) fn mentions_reopen(name: &str) -> bool {
    let words = words(name);
    words.iter().any(|w| w.starts_with("reopen")) || has_phrase(&words, &[&["re", "opened"]])
}

/// Jira's status category (CSV `Status Category` name or REST `statusCategory.key`/`name`).
pub(super) fn jira_category(value: &str) -> Option<StatusCategory> {
    match value.trim().to_ascii_lowercase().as_str() {
        "new" | "to do" | "todo" => Some(StatusCategory::Todo),
        "indeterminate" | "in progress" => Some(StatusCategory::InProgress),
        "done" | "complete" => Some(StatusCategory::Done),
        _ => None,
    }
}

/// The category of a Jira status: the status category when given (Done turning Cancelled when the status name
/// or the resolution cancels), else the keywords of the name.
pub(super) fn jira_status(name: &str, category: Option<&str>, resolution: Option<&str>) -> StatusCategory {
    let by_name = category_of_status(name);
    match category.and_then(jira_category) {
        Some(StatusCategory::Done) | None if by_name == StatusCategory::Cancelled => StatusCategory::Cancelled,
        Some(StatusCategory::Done) if resolution.is_some_and(resolution_cancels) => StatusCategory::Cancelled,
        Some(category) => category,
        None if by_name == StatusCategory::Done && resolution.is_some_and(resolution_cancels) => {
            StatusCategory::Cancelled
        }
        None => by_name,
    }
}
