//! `hybrid`: the best memory this project builds on its engine, beyond upstream's baselines, and
//! the one `examples/agent_memory.rs` recommends. It follows what LongMemEval (Wu et al., ICLR
//! 2025) measured to retrieve better, and what the LoCoMo development conversations confirmed
//! (docs/memory-systems.md has the numbers):
//!
//! - values at round level: every turn with the reply to it ([`rounds`]; rounds overlap, so a
//!   turn is found with the context on either side), each carrying its date;
//! - keys expanded with facts: the facts the memory role extracts from a round
//!   ([`ops::KeyFacts`]; offline, its first-person statements in the third person)
//!   merged into the indexed text, with the speakers' names and the date;
//! - hybrid retrieval: BM25 over Porter stems (the question's interrogatives and auxiliaries
//!   left out) and embedding similarity (a round's vector is the normalized sum of its turns',
//!   so every turn is embedded once), fused by their normalized scores or by weighted
//!   reciprocal rank ([`fusion`]);
//! - time-aware queries: a time the question names (`last week`, `in May`) resolved against the
//!   memory's date ([`MemoryContext::date`]) favours the units dated then;
//! - repeated texts collapsed.
//!
//! Settings are [`HybridSettings`] (`[hybrid]` in `configs/memory/hybrid.toml`).

pub mod fusion;
pub mod ops;
pub mod rounds;
pub mod sessions;
mod settings;

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use futures::stream::{self, StreamExt, TryStreamExt};
use mb_core::dates::{referenced_days, Day};
use mb_core::Lang;
use mb_datasets::corpus::Conversation;
use mb_datasets::dataset::CorpusFormat;
use mb_embed::{Assets, Embedder, OnnxReranker};
use mb_engine::{Analyzer, Batch, Hit, NamespaceOptions, Record};
use ops::KeyFacts;

use crate::curation::{stamped, Metadata};
use crate::embedding::{embed_text, embed_texts, rerank_scores};
use crate::error::MemoryError;
use crate::store::{delete_units, open_embedding_memory, retrieved, stats, unit_record};
use crate::system::{
    CorpusMemory, CorpusUnit, MemoryContext, MemoryStats, MemorySystem, Retrieved, TrainingDialog,
};
use crate::units::Unit;
use rounds::{corpus_exchanges, dialog_exchanges, Exchange};
pub use settings::{Fusion, HybridFile, HybridSettings, UnitSize};

/// Key-fact operations of one write in flight at once.
const KEY_FACTS_IN_FLIGHT: usize = 32;

/// The attribute holding a unit's day (days since 1970-01-01).
const DAY: &str = "day";
/// The state key counting the memory role's operations.
const OPERATIONS: &str = "llm_operations";

/// The hybrid memory.
pub struct HybridMemory {
    context: MemoryContext,
    embedder: Arc<dyn Embedder>,
    /// The cross-encoder, when `rerank_candidates` asks for one.
    reranker: Option<Arc<OnnxReranker>>,
    settings: HybridSettings,
}

impl HybridMemory {
    /// A hybrid memory in the context's namespace; the context must carry an embedder.
    pub fn new(context: MemoryContext) -> Result<Self, MemoryError> {
        let settings = context.settings.own::<HybridFile>()?.hybrid;
        let analyzer = match context.lang {
            Lang::Zh => crate::store::analyzer(&context),
            Lang::En if settings.stemming => Analyzer::Stemmed,
            Lang::En => Analyzer::Standard,
        };
        let embedder = open_embedding_memory(&context, "hybrid", analyzer)?;
        if settings.uses_sessions() {
            context.engine.ensure_namespace(
                &sessions::namespace(&context.namespace),
                NamespaceOptions::default().with_analyzer(analyzer),
            )?;
        }
        // The engine builds a namespace's search state (BM25 statistics, vector collections)
        // on its first search, from the store, re-analyzing every text; writes keep it up to
        // date only once it is built. A search now, while a new namespace is empty, builds it
        // for nothing, so a memory written and then asked once (a LongMemEval haystack) does
        // not pay that rebuild in its first question.
        context.engine.search_text(&context.namespace, "", 1)?;
        if settings.uses_sessions() {
            context
                .engine
                .search_text(&sessions::namespace(&context.namespace), "", 1)?;
        }
        let reranker = match settings.rerank_candidates {
            0 => None,
            _ => Some(OnnxReranker::shared(&Assets::model_dir(
                &settings.rerank_model,
            )?)?),
        };
        Ok(HybridMemory {
            context,
            embedder,
            reranker,
            settings,
        })
    }

    /// Indexes `exchanges` in one engine write: key = date, transcript and facts; value = the
    /// dated transcript; vector = the transcript's embedding; with the caller's metadata.
    async fn write(
        &self,
        exchanges: &[Exchange],
        lang: Lang,
        metadata: Option<&Metadata>,
    ) -> Result<(), MemoryError> {
        // The facts of every exchange are asked for together (a model serves them as its
        // concurrency limits allow), at most KEY_FACTS_IN_FLIGHT at a time, kept in order.
        let operations: Vec<KeyFacts> = if self.settings.key_facts {
            exchanges
                .iter()
                .map(|e| KeyFacts::new(e.lines.clone(), e.date_text.clone()))
                .collect()
        } else {
            Vec::new()
        };
        let memory = &self.context.llm.memory;
        let calls: Vec<_> = operations.iter().map(|op| memory.run(op, lang)).collect();
        let facts: Vec<Vec<String>> = stream::iter(calls)
            .buffered(KEY_FACTS_IN_FLIGHT)
            .try_collect()
            .await?;
        let operations = facts.len() as u64;
        let mut keys = Vec::with_capacity(exchanges.len());
        for (i, exchange) in exchanges.iter().enumerate() {
            let mut key = match exchange.day {
                Some(day) => format!("{day}\n{}", exchange.transcript()),
                None => exchange.transcript(),
            };
            for fact in facts.get(i).into_iter().flatten() {
                key.push('\n');
                key.push_str(fact);
            }
            keys.push(key);
        }
        let vectors = self.vectors(exchanges).await?;
        let space = self.embedder.model_id();
        let mut batch = Batch::new();
        for ((exchange, key), vector) in exchanges.iter().zip(&keys).zip(&vectors) {
            let unit = Unit {
                doc_id: exchange.doc_id.clone(),
                index_text: key.clone(),
                content: exchange.value(),
                turns: exchange.turns.clone(),
            };
            let mut record = stamped(unit_record(&unit, Some((space, vector.clone()))), metadata)
                .with_attribute(sessions::SESSION, exchange.session.clone());
            if let Some(day) = exchange.day {
                record = record.with_attribute(DAY, day.0.to_string());
            }
            batch.put(record);
        }
        if self.settings.uses_sessions() && !exchanges.is_empty() {
            let units: Vec<(&Exchange, &str, &[f32])> = exchanges
                .iter()
                .zip(&keys)
                .zip(&vectors)
                .map(|((e, k), v)| (e, k.as_str(), v.as_slice()))
                .collect();
            let namespace = sessions::namespace(&self.context.namespace);
            let sessions = sessions::records(&units, space);
            self.context.engine.write(&namespace, sessions)?;
        }
        if operations > 0 {
            batch.put_state(OPERATIONS, &(self.operations()? + operations))?;
        }
        if !batch.is_empty() {
            self.context.engine.write(&self.context.namespace, batch)?;
        }
        Ok(())
    }

    /// One vector per exchange: the normalized sum of its lines' embeddings, each distinct
    /// line embedded once (overlapping windows share their lines, so a corpus costs one
    /// embedding per turn whatever the unit).
    async fn vectors(&self, exchanges: &[Exchange]) -> Result<Vec<Vec<f32>>, MemoryError> {
        let mut index: HashMap<String, usize> = HashMap::new();
        let mut texts = Vec::new();
        let slots: Vec<Vec<usize>> = exchanges
            .iter()
            .map(|e| {
                e.lines
                    .iter()
                    .map(|(speaker, text)| {
                        let line = format!("{speaker}: {text}");
                        *index.entry(line.clone()).or_insert_with(|| {
                            texts.push(line);
                            texts.len() - 1
                        })
                    })
                    .collect()
            })
            .collect();
        let lines = embed_texts(&self.embedder, texts).await?;
        Ok(slots
            .iter()
            .map(|slot| {
                let mut sum = vec![0.0f32; self.embedder.dim()];
                for &i in slot {
                    for (s, v) in sum.iter_mut().zip(&lines[i]) {
                        *s += v;
                    }
                }
                let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
                if norm > 0.0 {
                    sum.iter_mut().for_each(|x| *x /= norm);
                }
                sum
            })
            .collect())
    }

    fn operations(&self) -> Result<u64, MemoryError> {
        Ok(self
            .context
            .engine
            .get_state(&self.context.namespace, OPERATIONS)?
            .unwrap_or(0))
    }

    /// The fused, time-favoured, deduplicated candidates for `query`, best first.
    async fn rank(&self, query: &str, k: usize) -> Result<Vec<Hit>, MemoryError> {
        let s = &self.settings;
        let n = s.candidates.max(k);
        let ns = &self.context.namespace;
        let words = content_words(query);
        let space = self.embedder.model_id();
        let vector = if s.dense_weight > 0.0 {
            Some(embed_text(&self.embedder, query.to_string()).await?)
        } else {
            None
        };
        let query_vector = vector.as_deref().map(|v| (space, v));
        let engine = &self.context.engine;
        let mut hits = fusion::search(engine, ns, &words, query_vector, n, s)?;
        // A bonus of `weight` first-place shares.
        let share = |weight: f32| match s.fusion {
            Fusion::Rrf => weight / (s.rrf_k + 1.0),
            Fusion::Scores => weight,
        };
        if s.uses_sessions() {
            let prior = sessions::scores(engine, ns, &words, query_vector, s)?;
            let bonus = share(s.session_weight);
            fusion::boost(&mut hits, |hit| {
                let session = hit.record.attribute(sessions::SESSION);
                bonus
                    * session
                        .and_then(|key| prior.get(key))
                        .copied()
                        .unwrap_or(0.0)
            });
        }
        let today = Day::find(&self.context.date);
        if let Some(range) = today
            .filter(|_| s.time_weight > 0.0)
            .and_then(|today| referenced_days(query, today))
        {
            let bonus = share(s.time_weight);
            fusion::favour_days(&mut hits, range, bonus, |hit| {
                hit.record.attribute(DAY)?.parse().ok().map(Day)
            });
        }
        if s.dedupe {
            hits = fusion::dedupe(hits, |hit| transcript(hit.record.content()));
        }
        if let Some(reranker) = &self.reranker {
            let n = s.rerank_candidates.min(hits.len());
            let passages = hits[..n]
                .iter()
                .map(|hit| transcript(hit.record.content()).to_string())
                .collect();
            let scores = rerank_scores(reranker, query.to_string(), passages).await?;
            fusion::reorder_head(&mut hits, &scores, s.rerank_blend);
        }
        hits.truncate(k);
        Ok(hits)
    }
}

/// A unit's transcript, without the date in front.
fn transcript(value: &str) -> &str {
    match value.strip_prefix('[').and_then(|v| v.split_once("] ")) {
        Some((_, transcript)) => transcript,
        None => value,
    }
}

/// Words that shape a question rather than say what it is about (interrogatives and
/// auxiliaries): matching them finds other questions, not answers.
const QUESTION_WORDS: &[&str] = &[
    "what", "when", "where", "who", "whom", "whose", "which", "why", "how", "did", "does", "do",
    "was", "were", "has", "have", "had", "would", "could", "should", "is", "are", "been",
];

/// `question` without its [`QUESTION_WORDS`], for the lexical side.
fn content_words(question: &str) -> String {
    question
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty() && !QUESTION_WORDS.contains(&w.to_lowercase().as_str()))
        .collect::<Vec<_>>()
        .join(" ")
}

#[async_trait]
impl MemorySystem for HybridMemory {
    fn context(&self) -> &MemoryContext {
        &self.context
    }

    async fn memorize_dialog(&self, dialog: TrainingDialog<'_>) -> Result<(), MemoryError> {
        let exchanges = dialog_exchanges(dialog, self.settings.unit);
        self.write(&exchanges, dialog.lang, dialog.metadata).await
    }

    async fn memorize_corpus(
        &self,
        corpus: &Conversation,
        _format: CorpusFormat,
    ) -> Result<CorpusMemory, MemoryError> {
        let exchanges = corpus_exchanges(corpus, self.settings.unit);
        self.write(&exchanges, self.context.lang, None).await?;
        Ok(CorpusMemory {
            namespace: self.context.namespace.clone(),
            units: exchanges
                .into_iter()
                .map(|e| CorpusUnit {
                    doc_id: e.doc_id,
                    turns: e.turns,
                })
                .collect(),
        })
    }

    async fn retrieve(
        &self,
        query: &str,
        _lang: Lang,
        k: usize,
    ) -> Result<Vec<Retrieved>, MemoryError> {
        Ok(self
            .rank(query, k)
            .await?
            .into_iter()
            .map(retrieved)
            .collect())
    }

    fn delete_corpus(&self, corpus: &CorpusMemory) -> Result<(), MemoryError> {
        let ids = corpus.doc_ids();
        delete_units(&self.context.engine, &corpus.namespace, &ids)?;
        let namespace = sessions::namespace(&corpus.namespace);
        if self.context.engine.namespace(&namespace).is_ok() {
            let ids: Vec<String> = ids.iter().map(|id| sessions::doc_id(id)).collect();
            delete_units(&self.context.engine, &namespace, &ids)?;
        }
        Ok(())
    }

    fn stats(&self) -> Result<MemoryStats, MemoryError> {
        let mut stats = stats(&self.context.engine, &self.context.namespace)?;
        stats.llm_operations = self.operations()?;
        Ok(stats)
    }

    /// The edited unit's session record is rebuilt from the session's units as they are now
    /// (removed with the last of them), so the session prior never finds text the units no
    /// longer hold.
    fn record_edited(&self, before: &Record) -> Result<(), MemoryError> {
        let Some(session) = before.attribute(sessions::SESSION) else {
            return Ok(());
        };
        let engine = &self.context.engine;
        if engine
            .namespace(&sessions::namespace(&self.context.namespace))
            .is_err()
        {
            return Ok(());
        }
        sessions::rebuild(
            engine,
            &self.context.namespace,
            session,
            self.embedder.model_id(),
        )
    }
}
