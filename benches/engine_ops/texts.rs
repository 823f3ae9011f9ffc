//! The texts the engine benchmark stores and searches for.
//!
//! By default synthetic chat-like messages drawn from a Zipf-distributed vocabulary of 5 000
//! made-up words. Those words are never stop words, so the most frequent of them are in most
//! messages and every query reaches a large part of the store: a worst case for BM25's
//! pruning. `MB_BENCH_TEXT=dialsim` stores real conversation instead: each record joins two
//! turns drawn at random from DialSim's three transcripts (about 57 000 turns; English stop
//! words are dropped by the analyzer, as upstream's Whoosh analyzer drops them), and the queries
//! are LoCoMo's questions, both from `../shared/data`.

use std::path::Path;

use memorybench::datasets::corpus::parse_dialsim;
use rand::rngs::StdRng;
use rand::Rng;

/// Where the records' texts and the queries come from.
pub enum Texts {
    /// Made-up words with Zipf frequencies; a query is ten of them.
    Zipf {
        /// The vocabulary, most frequent first.
        words: Vec<String>,
        /// Running sums of the words' weights `1 / rank`, for drawing one.
        cumulative: Vec<f64>,
    },
    /// Real turns and real questions.
    Real {
        /// DialSim's turns, each as `speaker: text`.
        turns: Vec<String>,
        /// LoCoMo's questions.
        questions: Vec<String>,
    },
}

impl Texts {
    /// The texts `MB_BENCH_TEXT` names (`zipf`, the default, or `dialsim`); exits with one line
    /// when real data is asked for and absent.
    pub fn from_env() -> Texts {
        match std::env::var("MB_BENCH_TEXT").as_deref() {
            Ok("dialsim") => Texts::real().unwrap_or_else(|reason| {
                eprintln!("MB_BENCH_TEXT=dialsim: {reason}");
                std::process::exit(2)
            }),
            Ok("zipf") | Err(_) => Texts::zipf(),
            Ok(other) => {
                eprintln!("MB_BENCH_TEXT={other}: expected zipf or dialsim");
                std::process::exit(2)
            }
        }
    }

    fn zipf() -> Texts {
        let words: Vec<String> = (0..5000).map(|i| format!("w{i:x}q")).collect();
        let mut acc = 0.0;
        let cumulative = (1..=words.len())
            .map(|r| {
                acc += 1.0 / r as f64;
                acc
            })
            .collect();
        Texts::Zipf { words, cumulative }
    }

    fn real() -> Result<Texts, String> {
        let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data");
        let read = |path: &Path| {
            std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
        };
        let mut turns = Vec::new();
        for show in ["friends", "bigbang", "theoffice"] {
            let path = data.join(format!("dialsim/dialsim_corpus_{show}.txt"));
            let conversation = parse_dialsim(&read(&path)?);
            turns.extend(
                conversation
                    .sessions
                    .iter()
                    .flat_map(|s| &s.turns)
                    .map(|t| format!("{}: {}", t.speaker, t.text)),
            );
        }
        let path = data.join("locomo/locomo10-dev.json");
        let samples: serde_json::Value =
            serde_json::from_str(&read(&path)?).map_err(|e| format!("{}: {e}", path.display()))?;
        let questions: Vec<String> = samples
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|sample| sample["qa"].as_array().into_iter().flatten())
            .filter_map(|qa| qa["question"].as_str().map(str::to_string))
            .collect();
        if turns.is_empty() || questions.is_empty() {
            return Err(format!("no turns or no questions under {}", data.display()));
        }
        Ok(Texts::Real { turns, questions })
    }

    /// The name that tells the two apart in benchmark ids (empty for the default).
    pub fn suffix(&self) -> &'static str {
        match self {
            Texts::Zipf { .. } => "",
            Texts::Real { .. } => "-dialsim",
        }
    }

    /// A record's text: 8 to 30 words (about a LoCoMo turn), or two real turns.
    pub fn message(&self, rng: &mut StdRng) -> String {
        match self {
            Texts::Zipf { words, cumulative } => {
                let n = rng.random_range(8..30);
                (0..n)
                    .map(|_| zipf_word(words, cumulative, rng))
                    .collect::<Vec<_>>()
                    .join(" ")
            }
            Texts::Real { turns, .. } => {
                let first = &turns[rng.random_range(0..turns.len())];
                let second = &turns[rng.random_range(0..turns.len())];
                format!("{first} {second}")
            }
        }
    }

    /// A query: ten words of a message, or a real question.
    pub fn query(&self, rng: &mut StdRng) -> String {
        match self {
            Texts::Zipf { .. } => self
                .message(rng)
                .split(' ')
                .take(10)
                .collect::<Vec<_>>()
                .join(" "),
            Texts::Real { questions, .. } => {
                questions[rng.random_range(0..questions.len())].clone()
            }
        }
    }
}

/// A word of `words` drawn with the weights whose running sums are `cumulative`.
fn zipf_word<'a>(words: &'a [String], cumulative: &[f64], rng: &mut StdRng) -> &'a str {
    let total = cumulative.last().copied().unwrap_or(1.0);
    let x = rng.random_range(0.0..total);
    let i = cumulative.partition_point(|c| *c < x);
    &words[i.min(words.len() - 1)]
}
