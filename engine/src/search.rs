//! Search: the engine's search entry points, and the rankings they are made of (BM25 over
//! plain text, cosine over a space's vectors, their fusion) with the hydration of ranked ids
//! into hits. Whoosh query syntax ranks in [`crate::syntax`].

use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::filter::Filter;
use crate::hits::{reciprocal_rank_fusion, Hit, HybridQuery};
use crate::record::RecordId;
use crate::state::{Inner, NamespaceState};
use crate::syntax::QuerySyntax;
use crate::vector::collection::VectorCollection;

/// Records of a filter's first condition a filtered vector search scores one by one rather
/// than widening a ranking, whatever the namespace's size (see `vector_among_matches`).
const FEW_MATCHES: usize = 1024;

impl Engine {
    /// The `k` best records for `query` by BM25, scored with this namespace's statistics only.
    /// The query is plain text: operators, quotes and `field:` prefixes have no meaning.
    pub fn search_text(&self, namespace: &str, query: &str, k: usize) -> Result<Vec<Hit>> {
        self.search_text_filtered(namespace, query, k, &Filter::new())
    }

    /// The top `k` records of `namespace` for `query` read in `syntax`: plain text (as
    /// [`search_text`](Self::search_text)) or Whoosh's query language, scored as Whoosh
    /// scores it (MemoryBench's BM25 baselines; see [`QuerySyntax::Whoosh`]).
    pub fn search_query(
        &self,
        namespace: &str,
        query: &str,
        syntax: QuerySyntax,
        k: usize,
    ) -> Result<Vec<Hit>> {
        let ns = self.inner.namespace(namespace)?;
        let k = ns.clamp_k(k);
        let ranked = match syntax {
            QuerySyntax::Plain => self.inner.lexical_ranking(&ns, query, k)?,
            QuerySyntax::Whoosh => self.inner.whoosh_ranking(&ns, query, k)?,
        };
        self.inner.hydrate(&ns, ranked)
    }

    /// The `k` records whose vector in `space` is most similar (cosine) to `query`.
    pub fn search_vector(
        &self,
        namespace: &str,
        space: &str,
        query: &[f32],
        k: usize,
    ) -> Result<Vec<Hit>> {
        self.search_vector_filtered(namespace, space, query, k, &Filter::new())
    }

    /// Sets the HNSW beam width of later vector searches ([`HnswParams::ef_search`]): a wider
    /// beam finds more of the true nearest neighbours in collections large enough for a graph,
    /// and takes longer. Lets a caller tune recall against latency without reopening the
    /// engine, which would rebuild every graph.
    ///
    /// [`HnswParams::ef_search`]: crate::HnswParams::ef_search
    pub fn set_ef_search(&self, ef: usize) {
        self.inner.ef_search.store(ef, Ordering::Relaxed);
    }

    /// Lexical and vector search fused by reciprocal rank fusion (see [`HybridQuery`]).
    pub fn search_hybrid(&self, namespace: &str, query: &HybridQuery) -> Result<Vec<Hit>> {
        let ns = self.inner.namespace(namespace)?;
        let candidates = ns.clamp_k(query.candidates());
        let fused = self
            .inner
            .fused_ranking(&ns, query, candidates, ns.clamp_k(query.k))?;
        self.inner.hydrate(&ns, fused)
    }
}

impl Engine {
    /// [`search_text`](Self::search_text) over the records that match `filter` only.
    pub fn search_text_filtered(
        &self,
        namespace: &str,
        query: &str,
        k: usize,
        filter: &Filter,
    ) -> Result<Vec<Hit>> {
        let ns = self.inner.namespace(namespace)?;
        let rank = |n| self.inner.lexical_ranking(&ns, query, n);
        self.inner.filtered(&ns, k, filter, rank, || Ok(None))
    }

    /// [`search_vector`](Self::search_vector) over the records that match `filter` only.
    pub fn search_vector_filtered(
        &self,
        namespace: &str,
        space: &str,
        query: &[f32],
        k: usize,
        filter: &Filter,
    ) -> Result<Vec<Hit>> {
        let ns = self.inner.namespace(namespace)?;
        let rank = |n| self.inner.vector_ranking(&ns, space, query, n);
        let rare = || {
            self.inner
                .vector_among_matches(&ns, space, query, k, filter)
        };
        self.inner.filtered(&ns, k, filter, rank, rare)
    }

    /// [`search_hybrid`](Self::search_hybrid) over the records that match `filter` only: each
    /// side contributes at least as many candidates as the fused list needs.
    pub fn search_hybrid_filtered(
        &self,
        namespace: &str,
        query: &HybridQuery,
        filter: &Filter,
    ) -> Result<Vec<Hit>> {
        let ns = self.inner.namespace(namespace)?;
        let rank = |n| {
            let candidates = ns.clamp_k(query.candidates().max(n));
            self.inner.fused_ranking(&ns, query, candidates, n)
        };
        self.inner.filtered(&ns, query.k, filter, rank, || Ok(None))
    }
}

impl NamespaceState {
    /// `k` capped at the namespace's record count: a search never returns more, and a huge `k`
    /// (say `usize::MAX` from a command line) must not size any allocation.
    fn clamp_k(&self, k: usize) -> usize {
        let count = usize::try_from(self.count.load(Ordering::SeqCst)).unwrap_or(usize::MAX);
        k.min(count)
    }
}

impl Inner {
    pub(crate) fn lexical_ranking(
        &self,
        ns: &Arc<NamespaceState>,
        query: &str,
        k: usize,
    ) -> Result<Vec<(RecordId, f32)>> {
        let derived = self.derived(ns)?;
        let terms: Vec<String> = ns
            .info
            .analyzer
            .analyze(query)
            .into_iter()
            .map(|t| t.text)
            .collect();
        let stats = self.stats(ns, &derived)?.read();
        self.lexical.search(
            ns.info.id,
            ns.info.analyzer,
            &terms,
            &stats,
            self.options.bm25_idf,
            k,
        )
    }

    pub(crate) fn vector_ranking(
        &self,
        ns: &Arc<NamespaceState>,
        space: &str,
        query: &[f32],
        k: usize,
    ) -> Result<Vec<(RecordId, f32)>> {
        let ef = self.ef_search.load(Ordering::Relaxed);
        let ranked = self.in_collection(ns, space, query, |c, query| c.search(query, k, ef))?;
        Ok(ranked.unwrap_or_default())
    }

    /// `run` on the namespace's collection in `space` and `query` made a unit vector of that
    /// space (an error if it is not one of its vectors); `None` when the namespace has no
    /// vector there.
    fn in_collection<T>(
        &self,
        ns: &Arc<NamespaceState>,
        space: &str,
        query: &[f32],
        run: impl FnOnce(&VectorCollection, &[f32]) -> Result<T>,
    ) -> Result<Option<T>> {
        let space = self.space(space)?;
        let query = space.normalize(query)?;
        let derived = self.derived(ns)?;
        let collection = derived.vectors.read().get(&space.name).cloned();
        collection.map(|c| run(&c.read(), &query)).transpose()
    }

    /// The `k` best hits that pass `filter` by exact similarity to `query`, from the records
    /// of the filter's first condition, scored one by one, when the attribute index has few
    /// of them (at most [`FEW_MATCHES`] or a sixteenth of the namespace): widening a ranking
    /// until enough of them come up would rank and read many more records (a filter nothing
    /// matches ranked and read all 100k records of a namespace: 0.8 s). `None` when they are
    /// more, or the filter is empty.
    fn vector_among_matches(
        &self,
        ns: &Arc<NamespaceState>,
        space: &str,
        query: &[f32],
        k: usize,
        filter: &Filter,
    ) -> Result<Option<Vec<Hit>>> {
        let Some((key, value)) = filter.conditions().next() else {
            return Ok(None);
        };
        let k = ns.clamp_k(k);
        if k == 0 {
            return Ok(Some(Vec::new()));
        }
        let limit = FEW_MATCHES.max(ns.clamp_k(usize::MAX) / 16);
        let Some(ids) = self
            .attributes
            .records_with(&self.store, ns.info.id, key, value, limit)?
        else {
            return Ok(None);
        };
        let scored = self
            .in_collection(ns, space, query, |c, query| c.score(query, &ids))?
            .unwrap_or_default();
        // The best first, read a chunk at a time until `k` pass the whole filter.
        let mut hits = Vec::with_capacity(k);
        for chunk in scored.chunks(k.max(32)) {
            let mut read = self.hydrate(ns, chunk.to_vec())?;
            read.retain(|hit| filter.matches(&hit.record));
            hits.extend(read);
            if hits.len() >= k {
                break;
            }
        }
        hits.truncate(k);
        Ok(Some(hits))
    }

    /// The `k` best hits that pass `filter`, from a ranking asked for ever more results:
    /// `rank(n)` gives the top `n`; a filtered search widens `n` fourfold until `k` hits pass
    /// or the whole namespace has been ranked, so it is exact, and costs one ranking when the
    /// filter is empty or matches often. When the first ranking falls short, the filter is
    /// rare, and `rare()` may answer instead (`None`: widen as above).
    fn filtered(
        &self,
        ns: &Arc<NamespaceState>,
        k: usize,
        filter: &Filter,
        mut rank: impl FnMut(usize) -> Result<Vec<(RecordId, f32)>>,
        rare: impl FnOnce() -> Result<Option<Vec<Hit>>>,
    ) -> Result<Vec<Hit>> {
        let k = ns.clamp_k(k);
        if filter.is_empty() {
            return self.hydrate(ns, rank(k)?);
        }
        let everything = ns.clamp_k(usize::MAX);
        let mut n = k.saturating_mul(4).max(32).min(everything);
        let mut rare = Some(rare);
        loop {
            let ranked = rank(n)?;
            let exhausted = n >= everything || ranked.len() < n;
            let mut hits = self.hydrate(ns, ranked)?;
            hits.retain(|hit| filter.matches(&hit.record));
            if hits.len() >= k || exhausted {
                hits.truncate(k);
                return Ok(hits);
            }
            if let Some(answer) = rare.take().map(|rare| rare()).transpose()?.flatten() {
                return Ok(answer);
            }
            n = n.saturating_mul(4).min(everything);
        }
    }

    /// The BM25 and vector rankings of `query`, `candidates` each, fused into the top `k`.
    fn fused_ranking(
        &self,
        ns: &Arc<NamespaceState>,
        query: &HybridQuery,
        candidates: usize,
        k: usize,
    ) -> Result<Vec<(RecordId, f32)>> {
        // 1 / (rrf_k + rank): NaN gives NaN scores, a negative constant divides by zero or
        // inverts the order, an infinite one scores everything 0.
        if !(query.rrf_k.is_finite() && query.rrf_k >= 0.0) {
            return Err(Error::InvalidQuery {
                field: "rrf_k",
                value: query.rrf_k.to_string(),
                reason: "the fusion constant must be a finite number at least 0 (60 by default)",
            });
        }
        let ids = |hits: Vec<(RecordId, f32)>| hits.into_iter().map(|h| h.0).collect::<Vec<_>>();
        let lexical = ids(self.lexical_ranking(ns, &query.text, candidates)?);
        let vector = ids(self.vector_ranking(ns, &query.space, &query.vector, candidates)?);
        Ok(reciprocal_rank_fusion(&[lexical, vector], query.rrf_k, k))
    }

    /// Loads the records of ranked ids, dropping any deleted since ranking.
    pub(crate) fn hydrate(
        &self,
        ns: &Arc<NamespaceState>,
        ranked: Vec<(RecordId, f32)>,
    ) -> Result<Vec<Hit>> {
        let ids: Vec<RecordId> = ranked.iter().map(|r| r.0).collect();
        let records = self.store.records_by_id(ns.info.id, &ids)?;
        Ok(ranked
            .into_iter()
            .zip(records)
            .filter_map(|((_, score), record)| {
                Some(Hit {
                    record: record?,
                    score,
                })
            })
            .collect())
    }
}
