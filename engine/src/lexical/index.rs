//! The tantivy-backed lexical index with read-your-writes visibility.
//!
//! tantivy only shows documents after a commit (tens of milliseconds) and a reader reload.
//! Instead of committing on every write, documents written since the last commit are kept in
//! small in-memory *generations* and scored there with the very same BM25 weights. A search
//! combines the committed searcher with those generations, so every acknowledged write is
//! visible to the next search while commits happen in batches. Deletes and updates since the
//! last commit mask older copies of a document.
//!
//! A write only touches memory: its tantivy operations wait in the generation and reach the
//! tantivy writer in batches ([`FEED_BATCH`], and the rest at the next commit, which the
//! background committer makes). So a write never waits for tantivy's indexing thread or for a
//! commit in progress, and writers to different namespaces share no tantivy lock.
//!
//! The index is derived data: each commit stores the last applied sequence number as its
//! payload, and the engine replays the change log after it on open.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::{Mutex, MutexGuard, RwLock};
use tantivy::collector::TopDocs;
use tantivy::indexer::UserOperation;
use tantivy::query::{Bm25Weight, BooleanQuery, BoostQuery, Occur, Query, TermQuery};
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{Index, IndexReader, ReloadPolicy, Searcher, Term};

use super::analyzer::Term as AnalyzedTerm;
use super::document::{namespaced, schema, Fields, PreparedTokenizer, PREPARED_TOKENIZER};
use super::generation::Generation;
use super::scoring::Idf;
use super::stats::LexicalStats;
use super::writer::WriterSlot;
use crate::error::{Error, Result};
use crate::namespace::Analyzer;
use crate::record::RecordId;

/// Pending tantivy operations at which a write hands them to the tantivy writer (if no commit
/// holds it), so that the writer's indexing thread wakes once per batch, not once per document.
const FEED_BATCH: usize = 1024;

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
    /// [`View::uncommitted`] as the last change to the view left it, so that a writer asks
    /// whether to commit without taking the view's lock.
    uncommitted: AtomicUsize,
}

/// Result of opening the index directory.
pub(crate) struct OpenedLexical {
    pub index: LexicalIndex,
    /// Sequence number of the last commit, `None` for a new, empty index.
    pub committed_seq: Option<u64>,
}

/// What searches read: the committed searcher plus uncommitted generations.
struct View {
    searcher: Searcher,
    /// Generation being committed right now (not yet visible through `searcher`).
    committing: Option<Generation>,
    /// Generation receiving new writes.
    current: Generation,
}

impl View {
    /// Documents in memory only: the current generation and the one being committed.
    fn uncommitted(&self) -> usize {
        self.current.len + self.committing.as_ref().map_or(0, |g| g.len)
    }
}

/// Starts every commit payload: names the index layout (documents keyed by namespace and
/// record, padded to Whoosh's lengths), so that an index written by an older build is rebuilt
/// rather than misread.
const PAYLOAD_PREFIX: &str = "keyed-whoosh-lengths:";

/// A scored hit from the lexical index.
pub(crate) type LexicalHit = (RecordId, f32);

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
            super::segments::check_files(&index, dir)?;
            index
        } else {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
            Index::create_in_dir(dir, schema)?
        };
        index
            .tokenizers()
            .register(PREPARED_TOKENIZER, PreparedTokenizer);
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
                writer: Mutex::new(WriterSlot::new(
                    index.clone(),
                    writer_memory,
                    committed_seq.unwrap_or(0),
                )),
                view: RwLock::new(view),
                uncommitted: AtomicUsize::new(0),
            },
            committed_seq,
        })
    }

    /// Applies the changes of one logical write to memory. Writes to one namespace must come
    /// in sequence order; writes to different namespaces may come in any order.
    pub(crate) fn apply(&self, ops: &[LexicalOp]) {
        // The tantivy operations are built before any lock is taken.
        let mut pending = Vec::with_capacity(ops.len() + 1);
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
                        pending.push(UserOperation::Delete(self.fields.key_term(*ns, *id)));
                    }
                    let doc = self.fields.document(*ns, *id, *analyzer, terms);
                    pending.push(UserOperation::Add(doc));
                }
                LexicalOp::Delete { ns, id } => {
                    pending.push(UserOperation::Delete(self.fields.key_term(*ns, *id)));
                }
                LexicalOp::DropNamespace { ns } => {
                    pending.push(UserOperation::Delete(self.fields.namespace_term(*ns)));
                }
            }
        }
        let mut view = self.view.write();
        let current = &mut view.current;
        for op in ops {
            match op {
                LexicalOp::Upsert {
                    ns,
                    id,
                    terms,
                    replaces,
                    ..
                } => {
                    if *replaces {
                        current.masked.insert((*ns, *id));
                    }
                    current.insert(*ns, *id, terms);
                }
                LexicalOp::Delete { ns, id } => {
                    current.remove(*ns, *id);
                    current.masked.insert((*ns, *id));
                }
                LexicalOp::DropNamespace { ns } => current.drop_namespace(*ns),
            }
        }
        current.pending.append(&mut pending);
        current.applied = true;
        self.uncommitted
            .store(view.uncommitted(), Ordering::Relaxed);
        if view.current.pending.len() >= FEED_BATCH {
            // A commit holding the writer takes the pending operations itself.
            if let Some(mut slot) = self.writer.try_lock() {
                let batch = std::mem::take(&mut view.current.pending);
                drop(view);
                slot.feed(batch);
            }
        }
    }

    /// Removes every document (before a rebuild from the store).
    pub(crate) fn clear(&self) -> Result<()> {
        let mut slot = self.writer.lock();
        let mut view = self.view.write();
        slot.writer()?.delete_all_documents()?;
        view.current = Generation::default();
        self.uncommitted
            .store(view.uncommitted(), Ordering::Relaxed);
        // The rebuilt index holds what the store holds, whatever the old one named.
        slot.last_seq = 0;
        slot.dirty = true;
        Ok(())
    }

    /// Number of documents written since the last commit.
    pub(crate) fn uncommitted(&self) -> usize {
        self.uncommitted.load(Ordering::Relaxed)
    }

    /// Makes everything applied so far durable in tantivy. `finished_through` tells through
    /// which sequence number every write has been applied (read while no write can apply);
    /// the commit records it. Returns that number, or `None` when there was nothing to commit.
    pub(crate) fn commit(&self, finished_through: impl Fn() -> u64) -> Result<Option<u64>> {
        let mut slot = self.writer.lock();
        if slot.failed {
            return Err(Error::Background(
                "the lexical index writer failed; reopen the engine to catch the index up".into(),
            ));
        }
        let batch = {
            let mut view = self.view.write();
            // Every write numbered up to `through` applied itself before counting as done, so
            // it is in the generation sealed below.
            let through = finished_through();
            let nothing_applied = !view.current.applied;
            if nothing_applied && !slot.dirty && through <= slot.last_seq {
                return Ok(None);
            }
            slot.last_seq = slot.last_seq.max(through);
            if nothing_applied {
                // A failed commit left the writer dirty, or the writes done since the last
                // commit changed nothing here: commit what the writer holds.
                Vec::new()
            } else {
                // Searches keep reading the sealed generation while tantivy commits.
                let mut sealed = std::mem::take(&mut view.current);
                let batch = std::mem::take(&mut sealed.pending);
                view.committing = Some(sealed);
                batch
            }
        };
        slot.feed(batch);
        if slot.failed {
            return Err(Error::Background("the lexical index writer failed".into()));
        }
        self.commit_writer(slot)
    }

    /// Merges every committed segment into one and shows it to searches. A search runs
    /// block-max WAND per segment, each starting from a threshold of zero; one segment lets the
    /// threshold found early prune the whole index. Commits wait meanwhile (writes only when
    /// they call for one).
    pub(crate) fn merge_segments(&self) -> Result<()> {
        let mut slot = self.writer.lock();
        // A background merge (tantivy's merge policy) that takes listed segments first makes
        // this merge refuse them as an invalid argument: it is tried again, at most RETRIES times.
        const RETRIES: u32 = 10;
        let mut refused = 0;
        loop {
            let segments = slot.writer()?.index().searchable_segment_ids()?;
            if segments.len() < 2 {
                break;
            }
            match slot.writer()?.merge(&segments).wait() {
                Ok(_) => break,
                Err(tantivy::TantivyError::InvalidArgument(_)) if refused < RETRIES => {
                    refused += 1;
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                Err(e) => return Err(e.into()),
            }
        }
        // The merge recorded the last commit's payload again: recovery is unchanged.
        self.reader.reload()?;
        self.view.write().searcher = self.reader.searcher();
        Ok(())
    }

    /// Commits the writer and shows the result to searches (or, on failure, keeps serving the
    /// sealed generation from memory until a later commit succeeds).
    fn commit_writer(&self, mut slot: MutexGuard<'_, WriterSlot>) -> Result<Option<u64>> {
        let seq = slot.last_seq;
        let committed = (|| -> Result<()> {
            let mut prepared = slot.writer()?.prepare_commit()?;
            // Segments written, the commit not yet recorded.
            fail::fail_point!("engine::lexical::commit");
            prepared.set_payload(&format!("{PAYLOAD_PREFIX}{seq}"));
            prepared.commit()?;
            Ok(())
        })();
        let mut view = self.view.write();
        let outcome = committed.and_then(|()| Ok(self.reader.reload()?));
        let result = match outcome {
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
        };
        self.uncommitted
            .store(view.uncommitted(), Ordering::Relaxed);
        result
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
        let mut hits = self.matches(ns, analyzer, query_terms, stats, idf, k)?;
        hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        hits.truncate(k);
        Ok(hits)
    }

    /// The records of [`Self::search`]'s top `k`, and possibly more, in no order: every match
    /// when `k` is the query's document frequency. Whoosh scoring sums each term's matches into
    /// a map, so it needs no sorted list (sorting every match of every term was a tenth of its
    /// time).
    pub(crate) fn matches(
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
        // Each segment's record-id column is opened once, not once per hit.
        let mut columns = HashMap::new();
        for (score, address) in top {
            let rids = match columns.entry(address.segment_ord) {
                Entry::Occupied(column) => column.into_mut(),
                Entry::Vacant(slot) => slot.insert(
                    view.searcher
                        .segment_reader(address.segment_ord)
                        .fast_fields()
                        .u64("rid")?,
                ),
            };
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
}
