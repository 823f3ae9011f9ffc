//! Checking a lexical index's committed segments on open: tantivy opens a segment whose
//! positions file is gone and fails only when a search reads it (issue 76, D9), so the opener
//! checks that every file a segment is written with is there, and the engine rebuilds an
//! index that lacks one from the store.

use std::path::Path;

use tantivy::Index;

use crate::error::{Error, Result};

/// Fails when a file of a committed segment is missing: tantivy opens a segment without its
/// positions file and fails only at search time (issue 76, D9), so the opener checks every
/// file a segment is written with, and the caller rebuilds the index from the store.
pub(crate) fn check_files(index: &Index, dir: &Path) -> Result<()> {
    use tantivy::index::SegmentComponent as Component;
    let always = [
        Component::Postings,
        Component::Positions,
        Component::Terms,
        Component::Store,
        Component::FastFields,
        Component::FieldNorms,
    ];
    for segment in index.searchable_segment_metas()? {
        let deletes = segment.has_deletes().then_some(Component::Delete);
        for component in always.iter().cloned().chain(deletes) {
            let path = dir.join(segment.relative_path(component));
            if !path.exists() {
                return Err(Error::Corrupt {
                    what: "lexical index",
                    detail: format!("segment file {} is missing", path.display()),
                });
            }
        }
    }
    Ok(())
}
