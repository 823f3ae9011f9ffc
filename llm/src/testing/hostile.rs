//! Hostile text for fuzz tests: random mixtures of the fragments parsers trip on (brackets,
//! quotes, escapes, fences, think tags, Python constants, huge numbers, deep nesting, odd
//! Unicode) and of well-formed replies, from a fixed seed so a failure reproduces.
//!
//! The number of cases a fuzz test runs is [`fuzz_cases`]: a bounded default in the test suite,
//! more with `MB_FUZZ_CASES`.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// The environment variable that sets how many cases each fuzz target runs.
pub const FUZZ_CASES_VAR: &str = "MB_FUZZ_CASES";

/// Cases per fuzz target: `MB_FUZZ_CASES`, else `default`.
pub fn fuzz_cases(default: usize) -> usize {
    std::env::var(FUZZ_CASES_VAR)
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(default)
}

const FRAGMENTS: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    "(",
    ")",
    "\"",
    "'",
    ",",
    ":",
    "\\",
    "\\\"",
    "\\u12",
    "\\ud800",
    "\n",
    " ",
    "\t",
    "```json\n",
    "```",
    "<think>",
    "</think>",
    "true",
    "false",
    "null",
    "True",
    "False",
    "None",
    "NaN",
    "-Infinity",
    "1e309",
    "-0",
    "18446744073709551616",
    "0x1F",
    "1.",
    ".5",
    "#",
    "//",
    "/*",
    "*/",
    "ADD",
    "UPDATE",
    "DELETE",
    "NONE",
    "id",
    "text",
    "event",
    "facts",
    "keywords",
    "topics",
    "theme",
    "content",
    "memory",
    "score",
    "###Score of the answer:",
    "Correct",
    "Wrong",
    "\u{0}",
    "\u{feff}",
    "\u{202e}",
    "é",
    "中文",
    "🦀",
    "\r\n",
    "'''",
    "r'",
    "b'",
    "...",
    "1 - ",
    "10",
    "5/5",
];

const SHAPES: &[&str] = &[
    r#"{"facts": ["likes tea", "has a cat"]}"#,
    r#"{"memory": [{"id": "0", "text": "likes tea", "event": "ADD"}]}"#,
    r#"[{"theme": "t", "keywords": ["a"], "content": "c"}]"#,
    r#"{"keywords": ["a", "b"], "context": "c", "tags": ["x"]}"#,
    r#"{"should_evolve": true, "actions": ["strengthen"], "suggested_connections": [0]}"#,
    r#"{"verdict": "like", "reply": "thanks"}"#,
    "['a', 'b', 'c',]",
    "true",
    "### Score of the answer: 4",
];

/// Random hostile text: seeded, so `hostile_texts(seed, n)` is the same every run.
pub struct HostileText {
    rng: StdRng,
}

impl HostileText {
    /// A generator from `seed`.
    pub fn new(seed: u64) -> HostileText {
        HostileText {
            rng: StdRng::seed_from_u64(seed),
        }
    }

    /// The next text.
    pub fn next_text(&mut self) -> String {
        match self.rng.random_range(0..10) {
            // Deep nesting, closed or not.
            0 => {
                let depth = self.rng.random_range(100..5_000);
                let (open, close) = if self.rng.random_bool(0.5) {
                    ("[", "]")
                } else {
                    ("{\"a\":", "}")
                };
                let closed = self.rng.random_range(0..=depth);
                format!("{}1{}", open.repeat(depth), close.repeat(closed))
            }
            // A well-formed reply, cut or edited.
            1..=3 => {
                let mut text = SHAPES[self.rng.random_range(0..SHAPES.len())].to_string();
                self.mutate(&mut text);
                text
            }
            // Fragments and random characters.
            _ => {
                let mut text = String::new();
                for _ in 0..self.rng.random_range(0..80) {
                    if self.rng.random_bool(0.8) {
                        text.push_str(FRAGMENTS[self.rng.random_range(0..FRAGMENTS.len())]);
                    } else if let Some(c) = char::from_u32(self.rng.random_range(0..0x11_0000)) {
                        text.push(c);
                    }
                }
                text
            }
        }
    }

    /// Cuts, duplicates or replaces a piece of `text` (on character boundaries).
    pub fn mutate(&mut self, text: &mut String) {
        let chars: Vec<char> = text.chars().collect();
        if chars.is_empty() {
            return;
        }
        let at = self.rng.random_range(0..chars.len());
        let end = self.rng.random_range(at..=chars.len());
        let piece: String = chars[at..end].iter().collect();
        let head: String = chars[..at].iter().collect();
        let tail: String = chars[end..].iter().collect();
        *text = match self.rng.random_range(0..4) {
            0 => head,
            1 => format!("{head}{piece}{piece}{tail}"),
            2 => format!(
                "{head}{}{tail}",
                FRAGMENTS[self.rng.random_range(0..FRAGMENTS.len())]
            ),
            _ => format!("{head}{tail}"),
        };
    }
}
