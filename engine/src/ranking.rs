//! The rankings searches are made of: BM25 over plain text, cosine over a space's vectors, and
//! the hydration of ranked ids into hits. (Whoosh query syntax ranks in [`crate::syntax`].)

use std::sync::atomic::Ordering;

use crate::engine::{Inner, NamespaceState};
use crate::error::{Error, Result};
use crate::record::RecordId;
use crate::search::Hit;

impl Inner {
    /// Refuses lexical searches after the index missed a write.
    pub(crate) fn check_lexical(&self) -> Result<()> {
        if self.lexical_failed.load(Ordering::SeqCst) {
            return Err(Error::Background(
                "the lexical index missed a write; reopen the engine to catch it up".into(),
            ));
        }
        Ok(())
    }

    pub(crate) fn lexical_ranking(
        &self,
        ns: &NamespaceState,
        query: &str,
        k: usize,
    ) -> Result<Vec<(RecordId, f32)>> {
        self.check_lexical()?;
        let derived = self.derived(ns)?;
        let terms: Vec<String> = ns
            .info
            .analyzer
            .analyze(query)
            .into_iter()
            .map(|t| t.text)
            .collect();
        let stats = derived.lexical.read();
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
        ns: &NamespaceState,
        space: &str,
        query: &[f32],
        k: usize,
    ) -> Result<Vec<(RecordId, f32)>> {
        let space = self.space(space)?;
        let query = space.normalise(query)?;
        let derived = self.derived(ns)?;
        let collection = derived.vectors.read().get(&space.name).cloned();
        Ok(match collection {
            Some(c) => c.read().search(&query, k, &self.options.hnsw),
            None => Vec::new(),
        })
    }

    /// Loads the records of ranked ids, dropping any deleted since ranking.
    pub(crate) fn hydrate(
        &self,
        ns: &NamespaceState,
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
