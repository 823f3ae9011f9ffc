//! Where MemoryBench's rows are read from, chosen the same way by every front end (the
//! harness's `--data`, the Python package's `data=`): the place named, else
//! `$MEMORY_BENCH_PATH` (upstream's variable), else the built-in sample.

use std::path::{Path, PathBuf};

use crate::error::DataError;
use crate::import::LocomoWords;
use crate::sample::{sample_source, sample_source_in};
use crate::source::{DataSource, HfDirectory, DATA_ENV};

/// The data at `explicit`, else at `$MEMORY_BENCH_PATH`, else the built-in sample, whose
/// LoCoMo questions are in `words` when given (upstream's, read from its checkout; a
/// MemoryBench copy's rows already hold upstream's) and in the project's own words otherwise.
pub fn open_source(
    explicit: Option<&Path>,
    words: Option<&dyn LocomoWords>,
) -> Result<Box<dyn DataSource>, DataError> {
    let path = explicit
        .map(Path::to_path_buf)
        .or_else(|| std::env::var_os(DATA_ENV).map(PathBuf::from));
    Ok(match (path, words) {
        (Some(path), _) => Box::new(HfDirectory::open(path)?),
        (None, Some(words)) => Box::new(sample_source_in(words)?),
        (None, None) => Box::new(sample_source()?),
    })
}
