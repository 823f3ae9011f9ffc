//! The store's catalog: the counters, namespaces and spaces the meta family holds.

use super::{Store, StoreBatch};
use crate::codec;
use crate::error::{Error, Result};
use crate::keys::*;
use crate::namespace::NamespaceInfo;
use crate::space::Space;

/// Counters persisted in the meta family with every write.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Counters {
    pub seq: u64,
    pub next_record: u64,
    pub next_namespace: u32,
}

impl Store {
    pub(crate) fn counters(&self) -> Result<Counters> {
        let u64_at = |key: &[u8]| -> Result<u64> {
            match self.get(Family::Meta, key)? {
                None => Ok(0),
                Some(b) => decode_u64(&b).ok_or_else(|| Error::Corrupt {
                    what: "counter",
                    detail: String::from_utf8_lossy(key).into_owned(),
                }),
            }
        };
        Ok(Counters {
            seq: u64_at(META_SEQ)?,
            next_record: u64_at(META_NEXT_RECORD)?.max(1),
            next_namespace: u32::try_from(u64_at(META_NEXT_NAMESPACE)?).map_err(|_| {
                Error::Corrupt {
                    what: "counter",
                    detail: "namespace counter overflow".into(),
                }
            })?,
        })
    }

    /// Adds the counters to a batch. They are merged by maximum, so batches of concurrent
    /// writers may land in any order and the stored counters still cover every number used.
    pub(crate) fn put_counters(&self, batch: &mut StoreBatch, c: &Counters) -> Result<()> {
        let meta = self.cf(Family::Meta)?;
        batch.merge(meta, META_SEQ, encode_u64(c.seq));
        batch.merge(meta, META_NEXT_RECORD, encode_u64(c.next_record));
        batch.merge(
            meta,
            META_NEXT_NAMESPACE,
            encode_u64(u64::from(c.next_namespace)),
        );
        Ok(())
    }

    /// Every namespace with its record count.
    pub(crate) fn namespaces(&self) -> Result<Vec<(NamespaceInfo, u64)>> {
        let mut out = Vec::new();
        for (_, value) in self.scan(
            Family::Meta,
            META_NAMESPACE_PREFIX,
            &prefix_end(META_NAMESPACE_PREFIX),
        )? {
            let info: NamespaceInfo = codec::decode("namespace", &value)?;
            let count = match self.get(Family::Meta, &count_key(info.id))? {
                Some(b) => decode_u64(&b).ok_or_else(|| Error::Corrupt {
                    what: "namespace count",
                    detail: info.name.clone(),
                })?,
                None => 0,
            };
            out.push((info, count));
        }
        Ok(out)
    }

    /// Every embedding space.
    pub(crate) fn spaces(&self) -> Result<Vec<Space>> {
        self.scan(
            Family::Meta,
            META_SPACE_PREFIX,
            &prefix_end(META_SPACE_PREFIX),
        )?
        .into_iter()
        .map(|(_, v)| codec::decode("space", &v))
        .collect()
    }
}
