//! The Stop / SubagentStop payload Claude Code writes to the hook's stdin.
//!
//! Every field is optional and unknown fields are ignored: fields were added over many Claude Code versions, and a
//! payload we cannot read must still produce a sidecar (with `session_id = "unknown"`), never an error.

use std::io::Read;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

/// The most stdin the hook reads; payloads are a few KiB, anything larger is not a payload.
pub const MAX_PAYLOAD_BYTES: u64 = 4 * 1024 * 1024;

/// The `type` of Codex's notify payload after a turn.
pub const CODEX_TURN_COMPLETE: &str = "agent-turn-complete";

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Payload {
    pub session_id: Option<String>,
    pub cwd: Option<PathBuf>,
    pub hook_event_name: Option<String>,
    pub agent_id: Option<String>,
    pub agent_type: Option<String>,
    /// The text of the turn's final message (Claude Code 2.1.47+, Codex notify), where the self-report block is.
    pub last_assistant_message: Option<String>,
}

impl Payload {
    /// Reads the fields we use from a JSON object; anything else (not JSON, not an object, wrong field types)
    /// yields an empty payload.
    pub fn parse(bytes: &[u8]) -> Self {
        let Ok(serde_json::Value::Object(object)) = serde_json::from_slice::<serde_json::Value>(bytes) else {
            return Self::default();
        };
        let raw = |key: &str| object.get(key).and_then(serde_json::Value::as_str).map(String::from);
        let text = |key: &str| {
            object
                .get(key)
                .and_then(serde_json::Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(String::from)
        };
        // OpenAI Codex CLI's `notify` payload (its docs/config.md, "notify"): {"type": "agent-turn-complete",
        // "thread-id", "turn-id", "cwd", "input-messages": [...], "last-assistant-message"}.
        if text("type").as_deref() == Some(CODEX_TURN_COMPLETE) {
            return Self {
                session_id: text("thread-id"),
                cwd: text("cwd").map(PathBuf::from),
                hook_event_name: Some(CODEX_TURN_COMPLETE.into()),
                agent_id: None,
                agent_type: Some("codex".into()),
                last_assistant_message: raw("last-assistant-message"),
            };
        }
        Self {
            last_assistant_message: raw("last_assistant_message"),
            session_id: text("session_id"),
            cwd: text("cwd").map(PathBuf::from),
            hook_event_name: text("hook_event_name"),
            agent_id: text("agent_id"),
            agent_type: text("agent_type"),
        }
    }

    /// True for a SubagentStop event that names its subagent.
    pub fn is_subagent(&self) -> bool {
        self.hook_event_name.as_deref() == Some("SubagentStop") && self.agent_id.is_some()
    }
}

/// Why no payload could be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PayloadProblem {
    TimedOut,
    TooLarge,
    Unreadable,
}

/// Reads at most [`MAX_PAYLOAD_BYTES`] from `input` on a helper thread, giving up after `timeout` so that a stdin
/// that never closes cannot hold the hook (the thread dies with the process).
pub fn read_bounded(input: impl Read + Send + 'static, timeout: Duration) -> Result<Vec<u8>, PayloadProblem> {
    let (tx, rx) = mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("reflect-hook-stdin".into())
        .spawn(move || {
            let mut bytes = Vec::new();
            let result = input.take(MAX_PAYLOAD_BYTES + 1).read_to_end(&mut bytes).map(|_| bytes);
            let _ = tx.send(result);
        });
    if spawned.is_err() {
        return Err(PayloadProblem::Unreadable);
    }
    match rx.recv_timeout(timeout) {
        Ok(Ok(bytes)) if bytes.len() as u64 > MAX_PAYLOAD_BYTES => Err(PayloadProblem::TooLarge),
        Ok(Ok(bytes)) => Ok(bytes),
        Ok(Err(_)) | Err(mpsc::RecvTimeoutError::Disconnected) => Err(PayloadProblem::Unreadable),
        Err(mpsc::RecvTimeoutError::Timeout) => Err(PayloadProblem::TimedOut),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_known_fields_and_ignores_the_rest() {
        let payload = Payload::parse(
            br#"{"session_id":"abc123","cwd":"/home/u/repo","hook_event_name":"Stop","stop_hook_active":false,
                "background_tasks":[],"new_field":{"x":1}}"#,
        );
        assert_eq!(payload.session_id.as_deref(), Some("abc123"));
        assert_eq!(payload.cwd, Some(PathBuf::from("/home/u/repo")));
        assert!(!payload.is_subagent());
    }

    #[test]
    fn reads_the_last_message_and_codex_notify() {
        let claude = Payload::parse(br#"{"session_id":"s","last_assistant_message":"  Done.\n"}"#);
        assert_eq!(claude.last_assistant_message.as_deref(), Some("  Done.\n"));
        let codex = Payload::parse(
            br#"{"type":"agent-turn-complete","thread-id":"t-1","turn-id":"12","cwd":"/r",
                "input-messages":["fix it"],"last-assistant-message":"Fixed."}"#,
        );
        assert_eq!(codex.session_id.as_deref(), Some("t-1"));
        assert_eq!(codex.cwd, Some(PathBuf::from("/r")));
        assert_eq!(codex.agent_type.as_deref(), Some("codex"));
        assert_eq!(codex.last_assistant_message.as_deref(), Some("Fixed."));
        assert!(!codex.is_subagent());
    }

    #[test]
    fn junk_yields_an_empty_payload() {
        for junk in [&b""[..], b"not json", b"[1,2,3]", b"{\"session_id\": 42}", b"\xff\xfe"] {
            assert_eq!(Payload::parse(junk), Payload::default(), "{junk:?}");
        }
    }

    #[test]
    fn subagent_needs_event_and_agent_id() {
        let payload = Payload::parse(
            br#"{"session_id":"s","hook_event_name":"SubagentStop","agent_id":"a1","agent_type":"Explore"}"#,
        );
        assert!(payload.is_subagent());
        assert_eq!(payload.agent_type.as_deref(), Some("Explore"));
    }

    #[test]
    fn oversized_input_is_refused() {
        let big = std::io::repeat(b'x').take(MAX_PAYLOAD_BYTES + 10);
        assert_eq!(read_bounded(big, Duration::from_secs(5)), Err(PayloadProblem::TooLarge));
        assert_eq!(read_bounded(&b"{}"[..], Duration::from_secs(5)), Ok(b"{}".to_vec()));
    }

    #[test]
    fn a_stdin_that_never_closes_times_out() {
        struct Forever;
        impl Read for Forever {
            fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
                std::thread::sleep(Duration::from_secs(3600));
                Ok(0)
            }
        }
        assert_eq!(
            read_bounded(Forever, Duration::from_millis(20)),
            Err(PayloadProblem::TimedOut)
        );
    }
}
