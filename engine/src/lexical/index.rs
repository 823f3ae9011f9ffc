//! The tantivy-backed lexical index with read-your-writes visibility.
//!
//! tantivy only shows documents after a commit (tens of milliseconds) and a reader reload.
//! Instead of committing on every write, documents written since the last commit are also kept
//! in small in-memory *generations* and scored there with the very same BM25 weights. A search
//! combines the committed searcher with those generations, so every acknowledged write is
//! visible to the next search while commits happen in batches. Deletes and updates since the
//! last commit mask older copies of a document.
//!
//! Every indexed term is prefixed with its namespace id (`"{ns:x}:{term}"`), so each namespace
//! has its own posting lists inside the one index: a query reads only its namespace's postings
//! and needs no filter. A document is identified by its namespace and record id together (a
//! namespace copy keeps its source's record ids).
//!
//! The index is derived data: each commit stores the last applied sequence number as its
//! payload, and the engine replays the change log after it on open.

use std::path::Path;

use parking_lot::{Mutex, RwLock};
use tantivy::collector::TopDocs;
use tantivy::query::{Bm25Weight, BooleanQuery, BoostQuery, Occur, Query, TermQuery};
use tantivy::schema::{
    BytesOptions, Field, IndexRecordOption, NumericOptions, Schema, TextFieldIndexing, TextOptions,
};
use tantivy::tokenizer::{PreTokenizedString, Token};
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, Searcher, TantivyDocument, Term};

use super::analyzer::{AnalyzerTokenizer, Term as AnalyzedTerm};
use super::generation::Generation;
use super::length::whoosh_length;
use super::scoring::Idf;
use super::stats::LexicalStats;
use crate::error::{Error, Result};
use crate::namespace::Analyzer;
use crate::record::RecordId;

/// One change to apply to the lexical index.
pub(crate) enum LexicalOp {
    /// Index a record's terms; `replaces` when an older version may be indexed.
    Upsert {
        ns: u32,
        id: RecordId,
        analyzer: Analyzer,
        terms: Vec<AnalyzedTerm>,
        replaces: bool,
    },
    /// Remove a record.
    Delete { ns: u32, id: RecordId },
    /// Remove every record of a namespace.
    DropNamespace { ns: u32 },
}

/// The shared lexical index of all namespaces.
pub(crate) struct LexicalIndex {
    fields: Fields,
    reader: IndexReader,
    writer: Mutex<WriterSlot>,
    view: RwLock<View>,
}

/// Result of opening the index directory.
pub(crate) struct OpenedLexical {
    pub index: LexicalIndex,
    /// Sequence number of the last commit, `None` for a new, empty index.
    pub committed_seq: Option<u64>,
}

#[derive(Clone, Copy)]
struct Fields {
    ns: Field,
    /// The document's identity: namespace id and record id (big-endian bytes).
    key: Field,
    rid: Field,
    standard: Field,
    cjk: Field,
    stemmed: Field,
}

impl Fields {
    fn text(&self, analyzer: Analyzer) -> Field {
        match analyzer {
            Analyzer::Standard => self.standard,
            Analyzer::Cjk => self.cjk,
            Analyzer::Stemmed => self.stemmed,
        }
    }
}

struct WriterSlot {
    writer: IndexWriter,
    last_seq: u64,
    dirty: bool,
}

/// What searches read: the committed searcher plus uncommitted generations.
struct View {
    searcher: Searcher,
    /// Generation being committed right now (not yet visible through `searcher`).
    committing: Option<Generation>,
    /// Generation receiving new writes.
    current: Generation,
}

/// The text of the tokens that pad a document to Whoosh's length: no analyzer produces it.
const PADDING: &str = "\u{0}";

/// Starts every commit payload: names the index layout (documents keyed by namespace and
/// record, padded to Whoosh's lengths), so that an index written by an older build is rebuilt
/// rather than misread.
const PAYLOAD_PREFIX: &str = "keyed-whoosh-lengths:";

/// The indexed form of `term` in namespace `ns`.
fn namespaced(ns: u32, term: &str) -> String {
    format!("{ns:x}:{term}")
}

/// The identity of the document of record `id` in namespace `ns`.
fn document_key(ns: u32, id: RecordId) -> [u8; 12] {
    let mut key = [0u8; 12];
    key[..4].copy_from_slice(&ns.to_be_bytes());
    key[4..].copy_from_slice(&id.0.to_be_bytes());
    key
}

/// A scored hit from the lexical index.
pub(crate) type LexicalHit = (RecordId, f32);

fn schema() -> (Schema, Fields) {
    let mut builder = Schema::builder();
    let ns = builder.add_u64_field("ns", NumericOptions::default().set_indexed());
    let key = builder.add_bytes_field("key", BytesOptions::default().set_indexed());
    let rid = builder.add_u64_field("rid", NumericOptions::default().set_fast());
    let text = |analyzer: Analyzer| {
        TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(super::analyzer::tokenizer_name(analyzer))
                .set_index_option(IndexRecordOption::WithFreqs),
        )
    };
    let standard = builder.add_text_field("text_standard", text(Analyzer::Standard));
    let cjk = builder.add_text_field("text_cjk", text(Analyzer::Cjk));
    let stemmed = builder.add_text_field("text_stemmed", text(Analyzer::Stemmed));
    let fields = Fields {
        ns,
        key,
        rid,
        standard,
        cjk,
        stemmed,
    };
    (builder.build(), fields)
}

impl LexicalIndex {
    /// Opens the index in `dir`, creating it if absent. A directory holding an index with
    /// another schema is an error (the caller rebuilds it).
    pub(crate) fn open(dir: &Path, writer_memory: usize) -> Result<OpenedLexical> {
        let (schema, fields) = schema();
        let exists = dir.join("meta.json").exists();
        let index = if exists {
            let index = Index::open_in_dir(dir)?;
            if index.schema() != schema {
                return Err(Error::Corrupt {
                    what: "lexical index",
                    detail: "schema differs from this build's".into(),
                });
            }
            index
        } else {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
            Index::create_in_dir(dir, schema)?
        };
        for analyzer in Analyzer::ALL {
            index.tokenizers().register(
                super::analyzer::tokenizer_name(analyzer),
                AnalyzerTokenizer(analyzer),
            );
        }
        let committed_seq = match index.load_metas()?.payload {
            Some(p) => Some(
                p.strip_prefix(PAYLOAD_PREFIX)
                    .and_then(|seq| seq.parse::<u64>().ok())
                    .ok_or_else(|| Error::Corrupt {
                        what: "lexical index",
                        detail: format!(
                            "commit payload {p:?} is not \"{PAYLOAD_PREFIX}<sequence number>\" \
                             (an index from an older build)"
                        ),
                    })?,
            ),
            None => None,
        };
        let writer = index.writer_with_num_threads(1, writer_memory)?;
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        let view = View {
            searcher: reader.searcher(),
            committing: None,
            current: Generation::default(),
        };
        Ok(OpenedLexical {
            index: LexicalIndex {
                fields,
                reader,
                writer: Mutex::new(WriterSlot {
                    writer,
                    last_seq: committed_seq.unwrap_or(0),
                    dirty: false,
                }),
                view: RwLock::new(view),
            },
            committed_seq,
        })
    }

    /// Applies the changes of one logical write. Calls must come in sequence order.
    pub(crate) fn apply(&self, seq: u64, ops: &[LexicalOp]) -> Result<()> {
        let mut slot = self.writer.lock();
        let mut view = self.view.write();
        for op in ops {
            match op {
                LexicalOp::Upsert {
                    ns,
                    id,
                    analyzer,
                    terms,
                    replaces,
                } => {
                    if *replaces {
                        slot.writer.delete_term(self.key_term(*ns, *id));
                        view.current.masked.insert((*ns, *id));
                    }
                    slot.writer
                        .add_document(self.document(*ns, *id, *analyzer, terms))?;
                    view.current.insert(*ns, *id, terms);
                }
                LexicalOp::Delete { ns, id } => {
                    slot.writer.delete_term(self.key_term(*ns, *id));
                    view.current.remove(*ns, *id);
                    view.current.masked.insert((*ns, *id));
                }
                LexicalOp::DropNamespace { ns } => {
                    slot.writer
                        .delete_term(Term::from_field_u64(self.fields.ns, u64::from(*ns)));
                    if let Some(docs) = view.current.docs.remove(ns) {
                        view.current.len -= docs.len();
                    }
                }
            }
        }
        slot.last_seq = seq;
        slot.dirty = true;
        Ok(())
    }

    /// Removes every document (before a rebuild from the store).
    pub(crate) fn clear(&self) -> Result<()> {
        let mut slot = self.writer.lock();
        let mut view = self.view.write();
        slot.writer.delete_all_documents()?;
        view.current = Generation::default();
        slot.dirty = true;
        Ok(())
    }

    /// Number of documents written since the last commit.
    pub(crate) fn uncommitted(&self) -> usize {
        let view = self.view.read();
        view.current.len + view.committing.as_ref().map_or(0, |g| g.len)
    }

    /// Makes everything applied so far durable in tantivy. Returns the committed sequence
    /// number, or `None` when there was nothing to commit.
    pub(crate) fn commit(&self) -> Result<Option<u64>> {
        let mut slot = self.writer.lock();
        if !slot.dirty {
            return Ok(None);
        }
        let seq = slot.last_seq;
        {
            let mut view = self.view.write();
            let sealed = std::mem::take(&mut view.current);
            view.committing = Some(sealed);
        }
        let committed = (|| -> Result<()> {
            let mut prepared = slot.writer.prepare_commit()?;
            // Segments written, the commit not yet recorded.
            fail::fail_point!("engine::lexical::commit");
            prepared.set_payload(&format!("{PAYLOAD_PREFIX}{seq}"));
            prepared.commit()?;
            Ok(())
        })();
        let mut view = self.view.write();
        let outcome = committed.and_then(|()| Ok(self.reader.reload()?));
        match outcome {
            Ok(()) => {
                view.searcher = self.reader.searcher();
                view.committing = None;
                slot.dirty = false;
                Ok(Some(seq))
            }
            Err(e) => {
                // Keep serving the uncommitted documents from memory and retry later.
                if let Some(mut sealed) = view.committing.take() {
                    let newer = std::mem::take(&mut view.current);
                    sealed.absorb(newer);
                    view.current = sealed;
                }
                Err(e)
            }
        }
    }

    /// Top `k` records of namespace `ns` for the analyzed query terms (duplicates count, as in
    /// an OR query), scored by BM25 with the namespace's own statistics and the `idf` formula.
    /// Ties rank the older record first.
    pub(crate) fn search(
        &self,
        ns: u32,
        analyzer: Analyzer,
        query_terms: &[String],
        stats: &LexicalStats,
        idf: Idf,
        k: usize,
    ) -> Result<Vec<LexicalHit>> {
        if k == 0 || query_terms.is_empty() || stats.num_docs() == 0 {
            return Ok(Vec::new());
        }
        let view = self.view.read();
        let field = self.fields.text(analyzer);
        let boosts: Vec<f32> = query_terms
            .iter()
            .map(|t| idf.boost(stats.doc_freq(t), stats.num_docs()))
            .collect();
        let weights: Vec<(&str, Bm25Weight)> = query_terms
            .iter()
            .zip(&boosts)
            .map(|(t, boost)| {
                let w = Bm25Weight::for_one_term_without_explain(
                    stats.doc_freq(t),
                    stats.num_docs(),
                    stats.average_length(),
                );
                (t.as_str(), w.boost_by(*boost))
            })
            .collect();

        let generations: Vec<&Generation> = view
            .committing
            .iter()
            .chain(std::iter::once(&view.current))
            .collect();
        let masked_in_memory: usize = generations.iter().map(|g| g.masked.len()).sum();
        let mut hits: Vec<LexicalHit> = Vec::new();

        // Committed documents.
        let query = self.query(ns, field, query_terms, &boosts);
        let collector = TopDocs::with_limit(k.saturating_add(masked_in_memory)).order_by_score();
        let top = view
            .searcher
            .search_with_statistics_provider(&query, &collector, stats)?;
        for (score, address) in top {
            let rids = view
                .searcher
                .segment_reader(address.segment_ord)
                .fast_fields()
                .u64("rid")?;
            let Some(rid) = rids.first(address.doc_id) else {
                continue;
            };
            let id = RecordId(rid);
            if !generations.iter().any(|g| g.masked.contains(&(ns, id))) {
                hits.push((id, score));
            }
        }

        // Uncommitted documents, each masked only by newer generations.
        for (i, generation) in generations.iter().enumerate() {
            let Some(docs) = generation.docs.get(&ns) else {
                continue;
            };
            let newer = &generations[i + 1..];
            for (id, doc) in docs {
                if newer.iter().any(|g| g.masked.contains(&(ns, *id))) {
                    continue;
                }
                let score: f32 = weights
                    .iter()
                    .filter_map(|(term, w)| {
                        doc.term_freqs
                            .get(*term)
                            .map(|tf| w.score(doc.fieldnorm_id, *tf))
                    })
                    .sum();
                if score > 0.0 {
                    hits.push((*id, score));
                }
            }
        }
        hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        hits.truncate(k);
        Ok(hits)
    }

    fn query(&self, ns: u32, field: Field, terms: &[String], boosts: &[f32]) -> BooleanQuery {
        let any_term: Vec<(Occur, Box<dyn Query>)> = terms
            .iter()
            .zip(boosts)
            .map(|(t, boost)| {
                let term: Box<dyn Query> = Box::new(TermQuery::new(
                    Term::from_field_text(field, &namespaced(ns, t)),
                    IndexRecordOption::WithFreqs,
                ));
                // A boost is folded into the term scorer, which keeps block-max WAND pruning;
                // a boost of 1 needs no wrapper at all.
                let q: Box<dyn Query> = if *boost == 1.0 {
                    term
                } else {
                    Box::new(BoostQuery::new(term, *boost))
                };
                (Occur::Should, q)
            })
            .collect();
        BooleanQuery::new(any_term)
    }

    fn key_term(&self, ns: u32, id: RecordId) -> Term {
        Term::from_field_bytes(self.fields.key, &document_key(ns, id))
    }

    fn document(
        &self,
        ns: u32,
        id: RecordId,
        analyzer: Analyzer,
        terms: &[AnalyzedTerm],
    ) -> TantivyDocument {
        let mut tokens: Vec<Token> = terms
            .iter()
            .enumerate()
            .map(|(position, t)| Token {
                offset_from: t.start,
                offset_to: t.end,
                position,
                text: namespaced(ns, &t.text),
                position_length: 1,
            })
            .collect();
        // Padding up to Whoosh's recorded length (see `length`): tantivy derives the length
        // norm from the number of tokens.
        let padded = whoosh_length(terms.len()) as usize;
        let end = terms.last().map_or(0, |t| t.end);
        for position in terms.len()..padded {
            tokens.push(Token {
                offset_from: end,
                offset_to: end,
                position,
                text: namespaced(ns, PADDING),
                position_length: 1,
            });
        }
        let mut doc = TantivyDocument::new();
        doc.add_u64(self.fields.ns, u64::from(ns));
        doc.add_bytes(self.fields.key, &document_key(ns, id));
        doc.add_u64(self.fields.rid, id.0);
        doc.add_pre_tokenized_text(
            self.fields.text(analyzer),
            PreTokenizedString {
                text: String::new(),
                tokens,
            },
        );
        doc
    }
}
