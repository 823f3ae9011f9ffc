//! A space's HNSW graph inside its vector file ([`super::file`]), after the space's vectors.
//!
//! Rebuilding the graph of a reopened namespace takes both cores for about a minute per
//! 100,000 vectors, and until it is done every search scans every vector. The graph's layout
//! (codes and links) is therefore kept in the file and read back ([`Graph::restored`]):
//! searched at once from the file's pages, and grown like any graph. All little-endian, each
//! array padded with zeros to a multiple of 8 bytes:
//! - 0 (no graph) or 1, then for a graph:
//! - the number of points, the record id of each;
//! - the number of tombstones, their points;
//! - the entry point;
//! - the codes' scales (one float per dimension), the codes (one byte per dimension and point,
//!   under a checksum of their own: [`super::codes_check`]);
//! - layer 0: offsets (one more than points), the number of links, the links;
//! - the number of upper layers; per layer, the number of points on it, those points, their
//!   offsets (one more), the number of links, the links.
//!
//! Every count is checked against the bytes left before anything is allocated, and every
//! link, tombstone and entry against the number of points ([`Layout::check`]), so a damaged
//! file is refused rather than searched out of bounds.

use std::io::Write;

use super::codes::Codes;
use super::graph::Graph;
use super::io::{Checksummed, Cursor};
use super::layout::{Layout, UpperLayers};
use super::mapped::Stored;
use super::upper::UpperLayer;
use crate::record::RecordId;

/// Writes `graph` (or that there is none).
pub(super) fn write<W: Write>(
    out: &mut Checksummed<W>,
    graph: Option<&Graph>,
) -> std::io::Result<()> {
    let Some(graph) = graph else {
        return out.u64(0);
    };
    let layout = graph.layout();
    out.u64(1)?;
    out.u64(graph.point_rid().len() as u64)?;
    for id in graph.point_rid() {
        out.u64(id.0)?;
    }
    let dead = graph.dead_points();
    out.u64(dead.len() as u64)?;
    out.values(&dead)?;
    out.pad()?;
    out.u64(u64::from(layout.entry))?;
    out.values(layout.codes.scales())?;
    out.pad()?;
    out.codes(layout.codes.codes())?;
    write_links(out, &layout.offsets, &layout.links)?;
    out.u64(layout.upper.len() as u64)?;
    for layer in &layout.upper {
        // Ascending, so that the layer reads back flat (`UpperLayer::read`).
        let mut rows: Vec<(u32, &[u32])> = layer.rows().collect();
        rows.sort_unstable_by_key(|(p, _)| *p);
        let points: Vec<u32> = rows.iter().map(|(p, _)| *p).collect();
        out.u64(points.len() as u64)?;
        out.values(&points)?;
        out.pad()?;
        let mut offsets = Vec::with_capacity(points.len() + 1);
        let mut links = Vec::new();
        offsets.push(0u32);
        for (_, linked) in &rows {
            links.extend_from_slice(linked);
            offsets.push(links.len() as u32);
        }
        write_links(out, &offsets, &links)?;
    }
    Ok(())
}

/// Offsets (one per point and one more), the number of links, the links.
fn write_links<W: Write>(
    out: &mut Checksummed<W>,
    offsets: &[u32],
    links: &[u32],
) -> std::io::Result<()> {
    out.values(offsets)?;
    out.pad()?;
    out.u64(links.len() as u64)?;
    out.values(links)?;
    out.pad()
}

/// Reads the graph of a space of `dim`-dimensional vectors, if it has one, beside the records
/// `fresh` whose vectors the file keeps; an error says what is wrong.
pub(super) fn read(
    input: &mut Cursor<'_>,
    dim: usize,
    fresh: impl Iterator<Item = RecordId>,
) -> Result<Option<Graph>, String> {
    let short = || "cut short".to_string();
    match input.u64().ok_or_else(short)? {
        0 => return Ok(None),
        1 => {}
        other => return Err(format!("graph marker {other}")),
    }
    let points = count(input, 8)?;
    // Read as one run of numbers, not one number at a time: 100k of them in 0.12–0.52 ms
    // instead of 0.30–1.02 (nine reopens each), on the way to a reopen's first answer.
    let point_rid = input.values::<u64>(points).ok_or_else(short)?;
    let point_rid: Vec<RecordId> = point_rid.iter().map(|&id| RecordId(id)).collect();
    let dead_count = count(input, 4)?;
    let dead = input.values::<u32>(dead_count).ok_or_else(short)?;
    let entry = input.u64().ok_or_else(short)?;
    let entry = u32::try_from(entry).map_err(|_| format!("entry point {entry}"))?;
    let scales = input.values::<f32>(dim).ok_or_else(short)?.to_vec();
    let codes = points
        .checked_mul(dim)
        .and_then(|n| input.codes(n))
        .ok_or_else(short)?;
    let codes = Codes::from_parts(dim, scales, codes).ok_or("codes of another dimension")?;
    let (offsets, links) = read_links(input, points)?;
    let layers = count(input, 8)?;
    let mut upper: UpperLayers = Vec::with_capacity(layers);
    for _ in 0..layers {
        let on_layer = count(input, 4)?;
        let layer_points = input.values::<u32>(on_layer).ok_or_else(short)?;
        let (offsets, links) = read_links(input, on_layer)?;
        let layer = UpperLayer::read(layer_points, offsets, links)
            .ok_or("an upper-layer point repeated")?;
        upper.push(layer);
    }
    let layout = Layout {
        codes,
        offsets,
        links,
        upper,
        entry,
    };
    Graph::restored(layout, point_rid, &dead, fresh).map(Some)
}

/// A count of items of `size` bytes each that fits in the bytes left.
fn count(input: &mut Cursor<'_>, size: u64) -> Result<usize, String> {
    let n = input.u64().ok_or("cut short")?;
    if !input.fits(n, size) {
        return Err(format!("{n} items of {size} bytes"));
    }
    usize::try_from(n).map_err(|_| format!("{n} items"))
}

/// The offsets of `points` points (one more than them) and the links they index, checked to
/// rise from 0 to the number of links.
fn read_links(input: &mut Cursor<'_>, points: usize) -> Result<(Stored<u32>, Stored<u32>), String> {
    let offsets = input
        .values::<u32>(points.checked_add(1).ok_or("too many points")?)
        .ok_or("cut short")?;
    let n = count(input, 4)?;
    let links = input.values::<u32>(n).ok_or("cut short")?;
    let rising = offsets.first() == Some(&0)
        && offsets.windows(2).all(|w| w[0] <= w[1])
        && offsets.last().map(|l| *l as usize) == Some(n);
    if !rising {
        return Err("link offsets out of order".into());
    }
    Ok((offsets, links))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use parking_lot::RwLock;

    use crate::record::RecordId;
    use crate::vector::collection::{
        schedule_graph_build, wait_for_graph_build, SharedCollection, VectorCollection,
    };
    use crate::vector::file::{code_ranges, read, resealed, write};
    use crate::vector::seeded_unit;
    use crate::vector::source::{MemorySource, VectorSource};
    use crate::vector::HnswParams;

    const DIM: usize = 8;

    /// Builds (or grows) the graph of `shared`, which gets one from 100 vectors on.
    fn build_graph(shared: &SharedCollection) {
        let params = HnswParams {
            threshold: 100,
            ..HnswParams::default()
        };
        schedule_graph_build(shared, params);
        wait_for_graph_build(shared);
    }

    /// A collection of 600 vectors with a graph, then 60 of them removed (tombstones), 20
    /// changed and 30 added (fresh records).
    fn with_graph() -> SharedCollection {
        let shared: SharedCollection = Arc::new(RwLock::new(VectorCollection::new(DIM)));
        for i in 0..600u64 {
            shared.write().upsert(RecordId(i), &seeded_unit(i, DIM));
        }
        build_graph(&shared);
        let mut c = shared.write();
        for i in 0..60u64 {
            c.remove(RecordId(i * 10));
        }
        for i in 0..20u64 {
            c.upsert(RecordId(i * 10 + 1), &seeded_unit(5000 + i, DIM));
        }
        for i in 600..630u64 {
            c.upsert(RecordId(i), &seeded_unit(i, DIM));
        }
        drop(c);
        shared
    }

    /// The collection of `path` (written at 3), whose graph's points are read from `store`.
    fn read_back(path: &std::path::Path, store: Arc<MemorySource>) -> VectorCollection {
        let source_of = move |_: &str| -> Arc<dyn VectorSource> { store.clone() };
        read(path, 3, &source_of)
            .unwrap()
            .unwrap()
            .remove("a")
            .unwrap()
    }

    /// (points, tombstones, fresh records) of a collection's graph.
    fn shape(c: &VectorCollection) -> Option<(usize, usize, usize)> {
        c.graph().map(|g| (g.points(), g.dead(), g.fresh_count()))
    }

    #[test]
    fn a_graph_comes_back_and_answers_as_before() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("1.vec");
        let live = with_graph();
        let live = live.read();
        assert_eq!(shape(&live), Some((600, 80, 50)));
        write(&path, 3, &[("a", &live)]).unwrap();
        let back = &read_back(&path, MemorySource::of(&live));
        assert_eq!(shape(back), shape(&live));
        assert_eq!(
            back.kept().count(),
            50,
            "the file keeps the fresh records' vectors only"
        );
        assert_eq!(back.len(), live.len());
        for q in 0..30u64 {
            let query = seeded_unit(9000 + q, DIM);
            // A narrow beam, so that the graph's answers are its own, not the exact ones;
            // the points' vectors come from the store.
            assert_eq!(
                back.search(&query, 10, 12).unwrap(),
                live.search(&query, 10, 12).unwrap()
            );
        }
        // Written again from the graph read back: the same bytes.
        let again = dir.path().join("2.vec");
        write(&again, 3, &[("a", back)]).unwrap();
        assert_eq!(
            std::fs::read(&again).unwrap(),
            std::fs::read(&path).unwrap()
        );
    }

    #[test]
    fn a_graph_read_back_grows_with_its_fresh_records() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("1.vec");
        let live = with_graph();
        write(&path, 3, &[("a", &live.read())]).unwrap();
        let back = read_back(&path, MemorySource::of(&live.read()));
        let shared: SharedCollection = Arc::new(RwLock::new(back));
        // 90 fresh records are more than the grow fraction of 600 points.
        for i in 700..740u64 {
            shared.write().upsert(RecordId(i), &seeded_unit(i, DIM));
        }
        build_graph(&shared);
        let c = shared.read();
        assert_eq!(
            shape(&c),
            Some((690, 80, 0)),
            "grown: the tombstones stay, the fresh records are points"
        );
        // Every fresh record is found through the graph alone.
        let graph = c.graph().unwrap();
        for i in (600..630u64).chain(700..740) {
            let candidates = graph.candidates(&seeded_unit(i, DIM), 10, 32);
            assert!(candidates.contains(&RecordId(i)), "record {i} not found");
        }
    }

    #[test]
    fn the_points_vectors_load_in_the_background_without_undoing_writes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("1.vec");
        let live = with_graph();
        write(&path, 3, &[("a", &live.read())]).unwrap();
        // The store as at the close: written to below, it keeps the old vectors, as a
        // load that read a record before a write would hand it over after the write.
        let store = MemorySource::of(&live.read());
        let shared: SharedCollection = Arc::new(RwLock::new(read_back(&path, store)));
        // Records 2 and 3 are live points, pending until loaded.
        for c in [&mut *shared.write(), &mut *live.write()] {
            c.upsert(RecordId(2), &seeded_unit(7002, DIM));
            assert!(c.remove(RecordId(3)));
            assert!(!c.remove(RecordId(3)));
            c.upsert(RecordId(900), &seeded_unit(900, DIM));
        }
        assert_eq!(shared.read().len(), live.read().len());
        assert!(shared.read().kept().count() < live.read().len(), "pending");
        build_graph(&shared);
        let (back, live) = (shared.read(), live.read());
        assert_eq!(
            back.by_id(),
            live.by_id(),
            "every vector in memory, as written"
        );
        for q in 0..10u64 {
            let query = seeded_unit(9500 + q, DIM);
            assert_eq!(back.exact_search(&query, 10), live.exact_search(&query, 10));
        }
    }

    #[test]
    fn damaged_codes_are_found_once_loaded_and_the_graph_built_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("1.vec");
        let live = with_graph();
        write(&path, 3, &[("a", &live.read())]).unwrap();
        let good = std::fs::read(&path).unwrap();
        let codes = code_ranges(&path);
        assert_eq!(codes.len(), 1);
        assert_eq!(codes[0].len(), 600 * DIM, "a code per dimension and point");
        let mut damaged = good.clone();
        damaged[codes[0].start + 5 * DIM + 3] ^= 0x40;
        for (bytes, sound) in [(good, true), (damaged, false)] {
            std::fs::write(&path, &bytes).unwrap();
            let back = read_back(&path, MemorySource::of(&live.read()));
            // Used at once either way: the codes are checked by the load.
            assert_eq!(shape(&back), Some((600, 80, 50)));
            let shared: SharedCollection = Arc::new(RwLock::new(back));
            build_graph(&shared);
            let c = shared.read();
            // Sound: grown with its fresh records, its tombstones kept. Damaged: built again
            // from every live record, to be written at close.
            let expected = if sound { (650, 80, 0) } else { (570, 0, 0) };
            assert_eq!(shape(&c), Some(expected), "codes sound: {sound}");
            assert!(c.graph_unsaved());
            assert_eq!(c.by_id(), live.read().by_id());
        }
    }

    #[test]
    fn a_damaged_graph_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("1.vec");
        let live = with_graph();
        let live = live.read();
        write(&path, 3, &[("a", &live)]).unwrap();
        let good = std::fs::read(&path).unwrap();
        // Where the graph's parts start: header, name ("a", padded), dim, count, ids,
        // vectors (padded), marker, points, their ids, tombstone count, tombstones (padded).
        // The file keeps the vectors of the 50 fresh records.
        let (n, points, dead) = (50usize, 600usize, 80usize);
        let marker = 24 + 16 + 16 + 8 * n + (4 * n * DIM).next_multiple_of(8);
        let tombstones = marker + 16 + 8 * points + 8;
        let entry = tombstones + (4 * dead).next_multiple_of(8);
        // After the entry: scales, codes, layer-0 offsets, the link count, the links.
        let offsets =
            entry + 8 + (4 * DIM).next_multiple_of(8) + (points * DIM).next_multiple_of(8);
        let links = offsets + (4 * (points + 1)).next_multiple_of(8);
        let last_offset = &good[offsets + 4 * points..offsets + 4 * points + 4];
        assert_eq!(
            good[links..links + 4],
            *last_offset,
            "the link count follows the offsets"
        );
        let links = links + 8;
        let link_count = u32::from_le_bytes(last_offset.try_into().unwrap()) as usize;
        let last_link = links + 4 * (link_count - 1);
        assert_eq!(good[marker..marker + 8], 1u64.to_le_bytes());
        let with = |at: usize, value: &[u8]| {
            let mut bytes = good.clone();
            bytes[at..at + value.len()].copy_from_slice(value);
            resealed(&path, bytes)
        };
        for (what, bytes) in [
            ("marker 2", with(marker, &2u64.to_le_bytes())),
            (
                "huge point count",
                with(marker + 8, &u64::MAX.to_le_bytes()),
            ),
            (
                "tombstone past the points",
                with(tombstones, &600u32.to_le_bytes()),
            ),
            (
                "tombstone repeated",
                with(tombstones + 4, &good[tombstones..tombstones + 4]),
            ),
            ("entry past the points", with(entry, &600u64.to_le_bytes())),
            ("a link past the points", with(links, &600u32.to_le_bytes())),
            (
                "the last link past the points",
                with(last_link, &u32::MAX.to_le_bytes()),
            ),
            // Points 2 and 3 hold live records (0 and 1 were removed and changed).
            (
                "a live record twice",
                with(marker + 32, &good[marker + 40..marker + 48]),
            ),
            // The first record kept made the record of point 2, a live point.
            (
                "a kept record at a live point",
                with(56, &good[marker + 32..marker + 40]),
            ),
        ] {
            std::fs::write(&path, &bytes).unwrap();
            let read = read(&path, 3, &MemorySource::none);
            assert!(read.is_err(), "{what} was accepted");
        }
        std::fs::write(&path, &good).unwrap();
        assert!(read(&path, 3, &MemorySource::none).is_ok());
    }
}
