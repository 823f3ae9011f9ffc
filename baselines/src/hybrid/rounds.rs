//! Cutting conversations into the hybrid memory's units: a turn with the reply to it (or single
//! turns), each with its speakers' lines, the corpus turns it covers and its date.

use mb_core::dates::Day;
use mb_datasets::corpus::Conversation;

use super::settings::UnitSize;
use crate::system::TrainingDialog;

/// One unit before indexing.
#[derive(Debug, Clone, PartialEq)]
pub struct Exchange {
    /// Its id.
    pub doc_id: String,
    /// `(speaker, text)` lines, in order.
    pub lines: Vec<(String, String)>,
    /// Corpus turns covered (LoCoMo `dia_id`s).
    pub turns: Vec<String>,
    /// The date as the corpus writes it (empty when unknown).
    pub date_text: String,
    /// The day it happened, when the date names one.
    pub day: Option<Day>,
    /// Its session's key: the id of the session's first unit.
    pub session: String,
}

impl Exchange {
    /// The lines as `speaker: text`, one per line: what is embedded.
    pub fn transcript(&self) -> String {
        self.lines
            .iter()
            .map(|(speaker, text)| format!("{speaker}: {text}"))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// What a question gets back: the date, then the transcript.
    pub fn value(&self) -> String {
        match self.day {
            Some(day) => format!("[{day}] {}", self.transcript()),
            None if !self.date_text.is_empty() => {
                format!("[{}] {}", self.date_text, self.transcript())
            }
            None => self.transcript(),
        }
    }
}

/// Groups items into units, as index ranges: an item followed by one from another speaker
/// makes a round with it (every item starts one with [`UnitSize::Round`], the item after a
/// round with [`UnitSize::DisjointRound`]); with [`UnitSize::Turn`] every item stands alone.
fn group(speakers: &[&str], size: UnitSize) -> Vec<std::ops::Range<usize>> {
    let mut ranges = Vec::new();
    let mut i = 0;
    while i < speakers.len() {
        let pair =
            size != UnitSize::Turn && speakers.get(i + 1).is_some_and(|next| *next != speakers[i]);
        let end = if pair { i + 2 } else { i + 1 };
        ranges.push(i..end);
        i = if size == UnitSize::Round { i + 1 } else { end };
    }
    ranges
}

/// The units of a corpus conversation, session by session.
pub fn corpus_exchanges(conversation: &Conversation, size: UnitSize) -> Vec<Exchange> {
    let mut out = Vec::new();
    for session in &conversation.sessions {
        let day = Day::find(&session.date_time);
        let speakers: Vec<&str> = session.turns.iter().map(|t| t.speaker.as_str()).collect();
        let mut key = None;
        for range in group(&speakers, size) {
            let turns = &session.turns[range];
            let ids: Vec<String> = turns.iter().map(|t| t.dia_id.clone()).collect();
            let doc_id = format!("{} {}", session.date_time, ids.join("+"));
            let key = key.get_or_insert_with(|| doc_id.clone()).clone();
            out.push(Exchange {
                doc_id,
                session: key,
                lines: turns
                    .iter()
                    .map(|t| (t.speaker.clone(), t.text.clone()))
                    .collect(),
                turns: ids,
                date_text: session.date_time.clone(),
                day,
            });
        }
    }
    out
}

/// The units of a training dialog (a user message with the assistant's reply), ids
/// `conv_<test_idx>_<first message>`; system messages are left out, and so is a unit without a
/// user message (the assistant's greeting before the user speaks, its last reply standing
/// alone): what the assistant says is remembered beside what the user said, never as a memory
/// of its own.
pub fn dialog_exchanges(dialog: TrainingDialog<'_>, size: UnitSize) -> Vec<Exchange> {
    let messages: Vec<(usize, &mb_core::Message)> = dialog
        .messages
        .iter()
        .enumerate()
        .filter(|(_, m)| m.role != mb_llm::Role::System)
        .collect();
    let speakers: Vec<&str> = messages.iter().map(|(_, m)| m.role.as_str()).collect();
    let key = format!(
        "conv_{}_{}",
        dialog.test_idx,
        messages.first().map_or(0, |(i, _)| *i)
    );
    group(&speakers, size)
        .into_iter()
        .map(|range| &messages[range])
        .filter(|part| part.iter().any(|(_, m)| m.role == mb_llm::Role::User))
        .map(|part| Exchange {
            doc_id: format!("conv_{}_{}", dialog.test_idx, part[0].0),
            lines: part
                .iter()
                .map(|(_, m)| (m.role.as_str().to_string(), m.content.clone()))
                .collect(),
            turns: Vec::new(),
            date_text: String::new(),
            day: None,
            session: key.clone(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_pair_a_turn_with_the_reply() {
        let speakers = ["A", "B", "A", "A", "B", "B"];
        assert_eq!(
            group(&speakers, UnitSize::DisjointRound),
            vec![0..2, 2..3, 3..5, 5..6]
        );
        assert_eq!(
            group(&speakers, UnitSize::Round),
            vec![0..2, 1..3, 2..3, 3..5, 4..5, 5..6]
        );
        assert_eq!(group(&speakers, UnitSize::Turn).len(), 6);
        assert!(group(&[], UnitSize::Round).is_empty());
    }

    #[test]
    fn the_assistant_alone_is_never_a_unit_of_a_dialog() {
        let message = |role: mb_llm::Role, content: &str| mb_core::Message {
            role,
            content: content.to_string(),
        };
        use mb_llm::Role::{Assistant, User};
        let messages = [
            message(Assistant, "Welcome!"),
            message(User, "I moved to Lisbon last spring."),
            message(Assistant, "Lovely city."),
        ];
        let dialog = |messages| TrainingDialog {
            test_idx: 7,
            dataset: "d",
            lang: mb_core::Lang::En,
            messages,
            metadata: None,
        };
        for size in [UnitSize::Round, UnitSize::DisjointRound, UnitSize::Turn] {
            let units = dialog_exchanges(dialog(&messages), size);
            assert!(!units.is_empty());
            for unit in &units {
                assert!(
                    unit.lines.iter().any(|(role, _)| role == "user"),
                    "{size:?}: {unit:?}"
                );
            }
        }
        let rounds = dialog_exchanges(dialog(&messages), UnitSize::Round);
        let transcripts: Vec<String> = rounds.iter().map(Exchange::transcript).collect();
        assert_eq!(
            transcripts,
            [
                "assistant: Welcome!\nuser: I moved to Lisbon last spring.",
                "user: I moved to Lisbon last spring.\nassistant: Lovely city.",
            ]
        );
        assert!(dialog_exchanges(dialog(&messages[..1]), UnitSize::Round).is_empty());
    }

    #[test]
    fn corpus_rounds_carry_turns_and_dates() {
        let conversation = mb_datasets::corpus::parse_dialsim(
            "[Date: June 1, 1995, Session #1]\n\nRoss: Hi.\nRachel: Hello.\nRoss: Coffee?\n",
        );
        let rounds = corpus_exchanges(&conversation, UnitSize::DisjointRound);
        assert_eq!(rounds.len(), 2);
        assert_eq!(rounds[0].turns, ["D1:1", "D1:2"]);
        assert_eq!(rounds[0].day, Day::from_ymd(1995, 6, 1));
        assert_eq!(rounds[0].value(), "[1 June 1995] Ross: Hi.\nRachel: Hello.");
        assert_eq!(rounds[1].transcript(), "Ross: Coffee?");
        assert_ne!(rounds[0].doc_id, rounds[1].doc_id);
        // One session: both rounds carry the key of its first.
        assert_eq!(rounds[1].session, rounds[0].doc_id);
    }
}
