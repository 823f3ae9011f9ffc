//! Conversation corpora (LoCoMo, DialSim) in one shape, and the memory documents upstream cuts
//! them into.
//!
//! LoCoMo ships its conversations as JSON; DialSim as transcripts with `[Date: …, Session #n]`
//! headers, which upstream converts to LoCoMo's shape with a regular expression whose quirks
//! (a malformed header swallows the next session into its date) are reproduced here.

use regex::Regex;
use serde_json::Value;

/// One utterance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Turn {
    /// Who speaks.
    pub speaker: String,
    /// `D<session>:<line>`.
    pub dia_id: String,
    /// What was said.
    pub text: String,
}

/// One dated session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// LoCoMo's `session_k_date_time` (DialSim: `"<date>, Session #<n>"`).
    pub date_time: String,
    /// Its turns in order.
    pub turns: Vec<Turn>,
}

/// A multi-session conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conversation {
    /// LoCoMo's first speaker (absent for DialSim).
    pub speaker_a: Option<String>,
    /// LoCoMo's second speaker (absent for DialSim).
    pub speaker_b: Option<String>,
    /// Sessions in order.
    pub sessions: Vec<Session>,
}

/// A LoCoMo `conversation` object that lacks a field it needs.
#[derive(Debug, thiserror::Error)]
#[error("LoCoMo conversation: {0}")]
pub struct CorpusError(String);

/// Upstream's DialSim conversion: sessions from `[Date: <date>, Session #<n>]\n\n` headers,
/// each body running to the next `[Date:`; turns from `speaker: text` lines (a line without a
/// colon is dropped but still counts for the `D<n>:<line>` ids).
///
/// Line endings are first normalized to `\n`, as Python's text mode does when upstream reads
/// the files (they ship with `\r\n`).
pub fn parse_dialsim(text: &str) -> Conversation {
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    let text = text.as_str();
    let header = Regex::new(r"(?s)\[Date: (.*?), Session #(\d+)\]\n\n")
        .unwrap_or_else(|_| unreachable!("the header pattern is a valid regular expression"));
    let turn = Regex::new(r"^(.*?):\s*(.*)$")
        .unwrap_or_else(|_| unreachable!("the turn pattern is a valid regular expression"));
    let mut sessions = Vec::new();
    let mut at = 0;
    while let Some(found) = header.captures_at(text, at) {
        let (Some(whole), Some(date), Some(number)) = (found.get(0), found.get(1), found.get(2))
        else {
            break;
        };
        let body_start = whole.end();
        let body_end = text[body_start..]
            .find("[Date:")
            .map_or(text.len(), |offset| body_start + offset);
        let number = number.as_str();
        let turns = text[body_start..body_end]
            .trim()
            .split('\n')
            .enumerate()
            .filter_map(|(index, line)| {
                let parts = turn.captures(line)?;
                Some(Turn {
                    speaker: parts.get(1)?.as_str().trim().to_string(),
                    dia_id: format!("D{number}:{}", index + 1),
                    text: parts.get(2)?.as_str().trim().to_string(),
                })
            })
            .collect();
        sessions.push(Session {
            date_time: format!("{}, Session #{number}", date.as_str()),
            turns,
        });
        at = body_end.max(whole.end());
    }
    Conversation {
        speaker_a: None,
        speaker_b: None,
        sessions,
    }
}

/// A LoCoMo sample's `conversation` object.
pub fn locomo_conversation(conversation: &Value) -> Result<Conversation, CorpusError> {
    let field = |name: &str| -> Result<String, CorpusError> {
        conversation[name]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| CorpusError(format!("missing {name}")))
    };
    let mut sessions = Vec::new();
    for k in 1.. {
        let Some(turns) = conversation
            .get(format!("session_{k}"))
            .and_then(Value::as_array)
        else {
            break;
        };
        let turns = turns
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let text = |name: &str| {
                    t[name]
                        .as_str()
                        .map(str::to_string)
                        .ok_or_else(|| CorpusError(format!("session_{k} turn {i}: missing {name}")))
                };
                Ok(Turn {
                    speaker: text("speaker")?,
                    dia_id: text("dia_id")?,
                    text: text("text")?,
                })
            })
            .collect::<Result<Vec<_>, CorpusError>>()?;
        sessions.push(Session {
            date_time: field(&format!("session_{k}_date_time"))?,
            turns,
        });
    }
    Ok(Conversation {
        speaker_a: Some(field("speaker_a")?),
        speaker_b: Some(field("speaker_b")?),
        sessions,
    })
}

impl Conversation {
    /// Number of turns across sessions.
    pub fn turn_count(&self) -> usize {
        self.sessions.iter().map(|s| s.turns.len()).sum()
    }

    /// The conversation in LoCoMo's `conversation` form, the form upstream's dataset objects
    /// and solvers hand a corpus in (for DialSim's too): `speaker_a`/`speaker_b` when known,
    /// then per session `session_<n>_date_time` and `session_<n>` (its turns' `speaker`,
    /// `dia_id` and `text`), sessions numbered from 1 without gaps.
    pub fn to_locomo_value(&self) -> serde_json::Value {
        use serde_json::{json, Map, Value};
        let mut object = Map::new();
        if let Some(a) = &self.speaker_a {
            object.insert("speaker_a".into(), json!(a));
        }
        if let Some(b) = &self.speaker_b {
            object.insert("speaker_b".into(), json!(b));
        }
        for (n, session) in self.sessions.iter().enumerate() {
            let n = n + 1;
            object.insert(format!("session_{n}_date_time"), json!(session.date_time));
            let turns: Vec<Value> = session
                .turns
                .iter()
                .map(|t| json!({"speaker": t.speaker, "dia_id": t.dia_id, "text": t.text}))
                .collect();
            object.insert(format!("session_{n}"), Value::Array(turns));
        }
        Value::Object(object)
    }

    /// Upstream's message-level memory documents (BM25-M, Emb-M): `(doc_id, content)` per turn,
    /// `doc_id` = `"<session date_time> Turn <n>"`, content = doc_id, a newline, and the turn line.
    pub fn turn_documents(&self) -> Vec<(String, String)> {
        self.sessions
            .iter()
            .flat_map(|session| {
                session.turns.iter().map(move |turn| {
                    let line_no = turn.dia_id.split_once(':').map_or("", |(_, n)| n);
                    let doc_id = format!("{} Turn {line_no}", session.date_time);
                    let content = format!("{doc_id}\n{}", turn_line(turn));
                    (doc_id, content)
                })
            })
            .collect()
    }

    /// Upstream's session-level memory documents (BM25-S, Emb-S): `(doc_id, content)` per
    /// session, `doc_id` = its date_time, content = a `Coversation [<date_time>]:` header (the
    /// typo is upstream's) and one turn line per turn.
    pub fn session_documents(&self) -> Vec<(String, String)> {
        self.sessions
            .iter()
            .map(|session| {
                let mut content = format!("Coversation [{}]:\n", session.date_time);
                for turn in &session.turns {
                    content.push_str(&turn_line(turn));
                    content.push('\n');
                }
                (session.date_time.clone(), content)
            })
            .collect()
    }
}

/// Upstream's turn line, `Speaker <name>says : <text>` (no space before "says", as upstream).
pub fn turn_line(turn: &Turn) -> String {
    format!("Speaker {}says : {}", turn.speaker, turn.text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dialsim_headers_turns_and_ids() {
        let text = "[Date: June 1, 1995, Session #1]\n\nRoss: Hi.\n(scene change)\nRachel:  Hello there \n\n[Date: June 2, 1995, Session #2]\n\nJoey: How you doin'?\n";
        let conversation = parse_dialsim(text);
        assert_eq!(conversation.sessions.len(), 2);
        let first = &conversation.sessions[0];
        assert_eq!(first.date_time, "June 1, 1995, Session #1");
        assert_eq!(
            first.turns,
            vec![
                Turn {
                    speaker: "Ross".into(),
                    dia_id: "D1:1".into(),
                    text: "Hi.".into()
                },
                Turn {
                    speaker: "Rachel".into(),
                    dia_id: "D1:3".into(),
                    text: "Hello there".into()
                },
            ]
        );
        assert_eq!(conversation.sessions[1].turns[0].dia_id, "D2:1");
        assert_eq!(conversation.turn_count(), 3);
    }

    #[test]
    fn a_malformed_header_swallows_the_next_session_like_upstream() {
        let text = "[Date: May 1, Session #1]\nRoss: no blank line\n[Date: May 2, Session #2]\n\nJoey: hi\n";
        let conversation = parse_dialsim(text);
        assert_eq!(conversation.sessions.len(), 1);
        assert_eq!(
            conversation.sessions[0].date_time,
            "May 1, Session #1]\nRoss: no blank line\n[Date: May 2, Session #2"
        );
        assert_eq!(conversation.sessions[0].turns[0].dia_id, "D2:1");
    }

    #[test]
    fn documents_follow_upstream_formats() {
        let conversation = parse_dialsim("[Date: May 1, Session #3]\n\nRoss: Hi\nJoey: Yo\n");
        let turns = conversation.turn_documents();
        assert_eq!(turns[1].0, "May 1, Session #3 Turn 2");
        assert_eq!(
            turns[1].1,
            "May 1, Session #3 Turn 2\nSpeaker Joeysays : Yo"
        );
        let sessions = conversation.session_documents();
        assert_eq!(
            sessions[0].1,
            "Coversation [May 1, Session #3]:\nSpeaker Rosssays : Hi\nSpeaker Joeysays : Yo\n"
        );
    }
}
