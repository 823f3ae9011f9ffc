//! Where a run's data comes from: a local MemoryBench copy (`--data DIR`, or
//! `MEMORY_BENCH_PATH`) or, by default, the built-in sample.

use std::path::PathBuf;

use clap::Args;
use mb_datasets::catalog::{Catalog, DatasetType};
use mb_datasets::{DataSource, Dataset};
use mb_upstream::Upstream;

use crate::error::HarnessError;

/// `--data`.
#[derive(Args, Debug, Clone, serde::Serialize)]
pub struct DataArgs {
    /// A local copy of THUIR/MemoryBench (dataset/ and corpus/); default: $MEMORY_BENCH_PATH,
    /// else the built-in sample (`--dataset-type domain --set-name Sample`).
    #[arg(long)]
    pub data: Option<PathBuf>,
}

impl DataArgs {
    /// The source the flags select; the built-in sample's LoCoMo questions in `upstream`'s
    /// words when a checkout is given (a MemoryBench copy's rows already hold upstream's).
    pub fn source(&self, upstream: Option<&Upstream>) -> Result<Box<dyn DataSource>, HarnessError> {
        let words = upstream.map(|u| u as &dyn mb_datasets::import::LocomoWords);
        Ok(mb_datasets::open_source(self.data.as_deref(), words)?)
    }

    /// The datasets of the set `kind`/`set_name` from [`DataArgs::source`], each cut to its
    /// first `limit` rows per split (`--limit`) when given.
    pub fn load_set(
        &self,
        upstream: Option<&Upstream>,
        kind: DatasetType,
        set_name: &str,
        limit: Option<u64>,
    ) -> Result<Vec<Dataset>, HarnessError> {
        let source = self.source(upstream)?;
        let mut datasets =
            mb_datasets::load(source.as_ref(), &Catalog::builtin()?, kind, set_name)?;
        if let Some(limit) = limit {
            let limit = usize::try_from(limit).unwrap_or(usize::MAX);
            datasets.iter_mut().for_each(|d| d.keep_first(limit));
        }
        Ok(datasets)
    }
}
