//! One upper layer of an HNSW graph (layer 1, 2, …): the few points that reach it and their
//! neighbours there, looked up by point.
//!
//! Two forms of one thing:
//! - [`UpperLayer::Flat`]: as a vector file stores it, the points ascending and their links in
//!   compressed rows, left in the file's pages. Reading a layer is then a check that its points
//!   ascend, where building a map took an allocation and a hash insertion per point on the way
//!   to a reopened namespace's first vector answer (`docs/history.md`);
//! - [`UpperLayer::Map`]: a map from point to neighbours, which insertions change. A flat layer
//!   becomes one when an insertion first changes it (a graph's growth works on its own copy).

use rustc_hash::FxHashMap;

use super::mapped::Stored;

/// One upper layer's points and their links on it.
#[derive(Clone)]
pub(crate) enum UpperLayer {
    /// `points` ascending; the links of `points[i]` are `links[offsets[i]..offsets[i + 1]]`.
    Flat {
        points: Stored<u32>,
        offsets: Stored<u32>,
        links: Stored<u32>,
    },
    /// The links of each point.
    Map(FxHashMap<u32, Vec<u32>>),
}

impl Default for UpperLayer {
    fn default() -> Self {
        UpperLayer::Map(FxHashMap::default())
    }
}

impl UpperLayer {
    /// The layer of `points` whose links are `links[offsets[i]..offsets[i + 1]]`, as read from
    /// a file whose offsets were checked to rise from 0 to the number of links: flat if the
    /// points ascend (as every file this engine writes has them), else a map. `None` if a
    /// point is there twice or the offsets do not fit the points.
    pub(crate) fn read(
        points: Stored<u32>,
        offsets: Stored<u32>,
        links: Stored<u32>,
    ) -> Option<UpperLayer> {
        if offsets.len() != points.len() + 1 {
            return None;
        }
        // Folded rather than `all`, which stops early and so compares one pair at a time.
        let ascending = points.windows(2).fold(true, |up, w| up & (w[0] < w[1]));
        if ascending {
            return Some(UpperLayer::Flat {
                points,
                offsets,
                links,
            });
        }
        let mut map = FxHashMap::default();
        map.reserve(points.len());
        for (i, point) in points.iter().enumerate() {
            let linked = row(&offsets, &links, i).to_vec();
            if map.insert(*point, linked).is_some() {
                return None;
            }
        }
        Some(UpperLayer::Map(map))
    }

    /// The neighbours of `point` on this layer (none if it does not reach it).
    pub(crate) fn get(&self, point: u32) -> &[u32] {
        match self {
            UpperLayer::Flat {
                points,
                offsets,
                links,
            } => match points.binary_search(&point) {
                Ok(i) => row(offsets, links, i),
                Err(_) => &[],
            },
            UpperLayer::Map(map) => map.get(&point).map_or(&[], Vec::as_slice),
        }
    }

    /// Sets the neighbours of `point` on this layer.
    pub(crate) fn insert(&mut self, point: u32, linked: Vec<u32>) {
        if let UpperLayer::Flat { .. } = self {
            let map = self.rows().map(|(p, l)| (p, l.to_vec())).collect();
            *self = UpperLayer::Map(map);
        }
        if let UpperLayer::Map(map) = self {
            map.insert(point, linked);
        }
    }

    /// Every point on the layer with its neighbours (in no particular order).
    pub(crate) fn rows(&self) -> Box<dyn Iterator<Item = (u32, &[u32])> + '_> {
        match self {
            UpperLayer::Flat {
                points,
                offsets,
                links,
            } => Box::new(
                points
                    .iter()
                    .enumerate()
                    .map(|(i, p)| (*p, row(offsets, links, i))),
            ),
            UpperLayer::Map(map) => Box::new(map.iter().map(|(p, l)| (*p, l.as_slice()))),
        }
    }

    /// Bytes held: the file's pages a flat layer uses, or the map's.
    pub(crate) fn heap_bytes(&self) -> usize {
        match self {
            UpperLayer::Flat {
                points,
                offsets,
                links,
            } => points.bytes() + offsets.bytes() + links.bytes(),
            UpperLayer::Map(map) => map.values().map(|l| 32 + l.capacity() * 4).sum(),
        }
    }
}

/// The `i`th row of compressed rows (empty if the offsets do not hold it).
fn row<'a>(offsets: &[u32], links: &'a [u32], i: usize) -> &'a [u32] {
    match offsets.get(i..i + 2) {
        Some(&[from, to]) => links.get(from as usize..to as usize).unwrap_or(&[]),
        _ => &[],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layer(points: &[u32], rows: &[&[u32]]) -> Option<UpperLayer> {
        let mut offsets = vec![0u32];
        let mut links = Vec::new();
        for r in rows {
            links.extend_from_slice(r);
            offsets.push(links.len() as u32);
        }
        UpperLayer::read(
            Stored::Owned(points.to_vec()),
            Stored::Owned(offsets),
            Stored::Owned(links),
        )
    }

    fn sorted_rows(layer: &UpperLayer) -> Vec<(u32, Vec<u32>)> {
        let mut rows: Vec<_> = layer.rows().map(|(p, l)| (p, l.to_vec())).collect();
        rows.sort();
        rows
    }

    #[test]
    fn both_forms_answer_alike_and_a_flat_layer_changes_as_a_map() {
        let rows: [&[u32]; 3] = [&[7, 9], &[], &[3]];
        let flat = layer(&[3, 7, 9], &rows).unwrap();
        let map = layer(&[9, 3, 7], &[&[3], &[7, 9], &[]]).unwrap();
        assert!(matches!(flat, UpperLayer::Flat { .. }));
        assert!(matches!(map, UpperLayer::Map(_)));
        for layer in [&flat, &map] {
            assert_eq!(layer.get(3), [7, 9]);
            assert_eq!(layer.get(7), [] as [u32; 0]);
            assert_eq!(layer.get(9), [3]);
            assert_eq!(layer.get(4), [] as [u32; 0], "not on the layer");
        }
        assert_eq!(sorted_rows(&flat), sorted_rows(&map));

        let mut grown = flat.clone();
        grown.insert(5, vec![3, 9]);
        grown.insert(9, vec![5]);
        assert_eq!(grown.get(5), [3, 9]);
        assert_eq!(grown.get(9), [5]);
        assert_eq!(grown.get(3), [7, 9]);
        assert_eq!(flat.get(9), [3], "the original is unchanged");
    }

    #[test]
    fn a_repeated_point_or_offsets_of_another_count_are_refused() {
        assert!(layer(&[3, 5, 3], &[&[5], &[3], &[5]]).is_none());
        assert!(UpperLayer::read(
            Stored::Owned(vec![1, 2]),
            Stored::Owned(vec![0, 0]),
            Stored::Owned(Vec::new()),
        )
        .is_none());
    }
}
