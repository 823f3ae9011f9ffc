//! Exact top-`k` scans that read a quarter of the bytes: int8 codes with error bounds.
//!
//! An exact search below the graph threshold compares the query with every vector, and from
//! a few thousand vectors on that scan waits for memory, at 4 bytes per dimension (codes of one
//! byte per dimension scan several times faster: docs/history.md). So the slots
//! of a collection that is scanned also keep each vector as one signed byte per dimension,
//! scaled per vector (its largest magnitude maps to 127), with two numbers that bound what
//! the code loses: the length of the rounding error and the length of the code's vector.
//!
//! A scan then has two passes, and stays exact:
//! 1. Every live slot's similarity is estimated from its code, with a bound on the estimate's
//!    error (Cauchy–Schwarz over the vector's rounding error and the query's), giving an
//!    interval the exact similarity lies in. The `k`-th largest lower end is a floor: the `k`
//!    best exact similarities are all at least that high.
//! 2. Only the slots whose upper end reaches the floor are scored exactly, from their floats;
//!    the best `k` of those are the best `k` of all, ties included.
//!
//! The bounds also cover the rounding of the float dot product itself, so the answer is the
//! one a scan of the floats gives, to the bit.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::growth::make_room;
use super::kernel::ByteQuery;
use super::topk::TopK;
use crate::record::RecordId;

/// Slots from which a scan keeps codes: below, the floats fit in the core's cache and
/// the codes would cost memory for nothing.
pub(crate) const SCAN_CODES_MIN: usize = 1024;

/// Slots whose integer dot products a scan computes in one call of the kernel, into a buffer
/// on the stack.
const BLOCK: usize = 256;

/// The codes of a collection's slots, in slot order (holes included: their codes are stale
/// like their floats, and scans skip them alike).
pub(crate) struct ScanCodes {
    dim: usize,
    /// `dim` codes per slot.
    codes: Vec<i8>,
    meta: Vec<CodeMeta>,
}

/// What a slot's code is worth and how far it may be from the vector.
#[derive(Clone, Copy)]
struct CodeMeta {
    /// What one code step is worth.
    scale: f32,
    /// Length of the vector minus the code's vector (rounded up).
    residual: f32,
    /// Length of the code's vector (rounded up).
    norm: f32,
}

/// A query prepared for estimates: its values as signed bytes over a common unit, like the
/// codes, and what its error bound weighs a slot's two lengths by (see [`Query::bound`]).
///
/// Bytes rather than 16-bit integers: the query's rounding error widens every interval (the
/// `e c` term of the bound), but a scan of 5 000 random unit vectors still scores 14–20 slots
/// exactly for a top-10 either way, and the VNNI kernel does half the work per code.
struct Query {
    values: ByteQuery,
    /// What one unit of `values` is worth.
    unit: f64,
    /// Weight of a slot's residual in the bound.
    per_residual: f64,
    /// Weight of a slot's code length in the bound.
    per_norm: f64,
}

impl ScanCodes {
    /// Codes of `vectors` (each of `dim` floats), in slot order.
    pub(crate) fn encode<'a>(dim: usize, vectors: impl Iterator<Item = &'a [f32]>) -> ScanCodes {
        let slots = vectors.size_hint().0;
        let mut scan = ScanCodes {
            dim,
            codes: Vec::with_capacity(slots.saturating_mul(dim)),
            meta: Vec::with_capacity(slots),
        };
        for vector in vectors {
            scan.push(vector);
        }
        scan
    }

    /// Appends the code of a new last slot.
    pub(crate) fn push(&mut self, vector: &[f32]) {
        let slot = self.meta.len();
        make_room(&mut self.codes, self.dim);
        make_room(&mut self.meta, 1);
        self.codes.resize((slot + 1) * self.dim, 0);
        let meta = encode_into(vector, &mut self.codes[slot * self.dim..]);
        self.meta.push(meta);
    }

    /// Replaces the code of `slot`.
    pub(crate) fn set(&mut self, slot: usize, vector: &[f32]) {
        let code = &mut self.codes[slot * self.dim..(slot + 1) * self.dim];
        self.meta[slot] = encode_into(vector, code);
    }

    /// Moves the last slot's code into `slot` and drops the last, as the slots do on a
    /// removal.
    pub(crate) fn swap_remove(&mut self, slot: usize) {
        let last = self.meta.len() - 1;
        if slot != last {
            self.codes
                .copy_within(last * self.dim..(last + 1) * self.dim, slot * self.dim);
        }
        self.codes.truncate(last * self.dim);
        self.meta.swap_remove(slot);
    }

    /// Heap bytes of the codes.
    pub(crate) fn bytes(&self) -> usize {
        self.codes.capacity() + self.meta.capacity() * std::mem::size_of::<CodeMeta>()
    }

    /// The best `k` of the slots for which `live` holds, by the exact similarity `exact`
    /// gives (with the slot's record), best first: `exact` is called only for the slots
    /// whose estimate cannot rule them out.
    pub(crate) fn search(
        &self,
        query: &[f32],
        k: usize,
        live: impl Fn(usize) -> bool,
        exact: impl Fn(usize) -> (RecordId, f32),
    ) -> Vec<(RecordId, f32)> {
        let query = Query::new(query, self.dim);
        let mut floor = Floor::new(k);
        let mut candidates: Vec<(usize, f64)> = Vec::new();
        let mut dots = [0i64; BLOCK];
        let mut uppers = [0f64; BLOCK];
        let blocks = self
            .codes
            .chunks(BLOCK * self.dim)
            .zip(self.meta.chunks(BLOCK));
        for (block, (codes, metas)) in blocks.enumerate() {
            let dots = &mut dots[..metas.len()];
            query.values.dots(codes, dots);
            let uppers = &mut uppers[..metas.len()];
            query.upper_ends(dots, metas, uppers);
            // The floor changes only when a slot is offered: read once per offer, not per slot.
            let mut lowest = floor.value();
            for (i, &upper) in uppers.iter().enumerate() {
                // Most slots fall below the floor: the floor only rises, so they are out.
                if upper < lowest {
                    continue;
                }
                let slot = block * BLOCK + i;
                if !live(slot) {
                    continue;
                }
                let meta = &metas[i];
                floor.offer(query.estimate(dots[i], meta) - query.bound(meta));
                lowest = floor.value();
                if upper >= lowest {
                    candidates.push((slot, upper));
                }
            }
        }
        let floor = floor.value();
        let mut top = TopK::new(k);
        for (slot, high) in candidates {
            if high >= floor {
                let (id, score) = exact(slot);
                top.offer(id, score);
            }
        }
        top.into_sorted()
    }
}

/// Writes the code of `vector` into `codes` (as long); returns its scale and error bounds.
fn encode_into(vector: &[f32], codes: &mut [i8]) -> CodeMeta {
    let largest = vector.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    let scale = if largest > 0.0 { largest / 127.0 } else { 1.0 };
    let (mut residual, mut norm) = (0.0f64, 0.0f64);
    for (x, out) in vector.iter().zip(codes) {
        let code = (x / scale).round().clamp(-127.0, 127.0);
        *out = code as i8;
        let value = f64::from(code) * f64::from(scale);
        residual += (f64::from(*x) - value).powi(2);
        norm += value * value;
    }
    CodeMeta {
        scale,
        residual: round_up(residual.sqrt()),
        norm: round_up(norm.sqrt()),
    }
}

/// The smallest `f32` at least `x`.
fn round_up(x: f64) -> f32 {
    let y = x as f32;
    if f64::from(y) >= x {
        y
    } else {
        y.next_up()
    }
}

impl Query {
    /// `query` (of `dim` values) prepared for estimates.
    fn new(query: &[f32], dim: usize) -> Query {
        let largest = query.iter().fold(0.0f32, |m, x| m.max(x.abs()));
        let unit = if largest > 0.0 {
            f64::from(largest) / f64::from(i8::MAX)
        } else {
            1.0
        };
        let values: Vec<i8> = query
            .iter()
            .map(|x| (f64::from(*x) / unit).round().clamp(-127.0, 127.0) as i8)
            .collect();
        let residual = query
            .iter()
            .zip(&values)
            .map(|(x, v)| (f64::from(*x) - f64::from(*v) * unit).powi(2))
            .sum::<f64>()
            .sqrt();
        let norm = query
            .iter()
            .map(|x| f64::from(*x).powi(2))
            .sum::<f64>()
            .sqrt();
        // The bound of a slot with residual r and code length c is, with q the query's
        // length and e its own residual: the vector's rounding error seen by the query
        // (q r), the query's seen by the code's vector (e c), and the float dot product's own
        // rounding (at most `dim + 16` units in the last place of the products' sum, a
        // generous margin for its 16 lanes: f q (c + r)), widened by a part in 10⁵ for the
        // estimate's own arithmetic. Gathered per length once per query, not per slot.
        let float_dot = (dim + 16) as f64 * f64::from(f32::EPSILON) * norm;
        let widen = 1.0 + 1e-5;
        Query {
            values: ByteQuery::new(&values),
            unit,
            per_residual: (norm + float_dot) * widen,
            per_norm: (residual + float_dot) * widen,
        }
    }

    /// The similarity of the query to a slot's vector, estimated from the integer dot product
    /// of the query's values with the slot's code.
    #[inline(always)]
    fn estimate(&self, dot: i64, meta: &CodeMeta) -> f64 {
        self.unit * f64::from(meta.scale) * dot as f64
    }

    /// How far a slot's estimate may be from the float dot product of the query and its
    /// vector (see [`Query::new`]).
    #[inline(always)]
    fn bound(&self, meta: &CodeMeta) -> f64 {
        self.per_residual * f64::from(meta.residual) + self.per_norm * f64::from(meta.norm) + 1e-9
    }

    /// Writes into `out[i]` the upper end `estimate + bound` of the slot with integer dot
    /// product `dots[i]` and code `metas[i]`: the same arithmetic as one slot at a time, in
    /// AVX-512 registers where the CPU has them (eight slots an instruction). Exact top-10,
    /// three runs each alternating: 31.1–31.6 µs against 31.6–33.0 over 2 000 slots, 99–106
    /// against 106–111 over 10 000, no change over 5 000.
    fn upper_ends(&self, dots: &[i64], metas: &[CodeMeta], out: &mut [f64]) {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512dq") {
            // SAFETY: the CPU supports AVX-512 F and DQ, checked just above.
            return unsafe { self.upper_ends_avx512(dots, metas, out) };
        }
        self.upper_ends_portable(dots, metas, out);
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512dq")]
    fn upper_ends_avx512(&self, dots: &[i64], metas: &[CodeMeta], out: &mut [f64]) {
        self.upper_ends_portable(dots, metas, out);
    }

    #[inline(always)]
    fn upper_ends_portable(&self, dots: &[i64], metas: &[CodeMeta], out: &mut [f64]) {
        for ((out, dot), meta) in out.iter_mut().zip(dots).zip(metas) {
            *out = self.estimate(*dot, meta) + self.bound(meta);
        }
    }
}

/// The `k`-th largest lower end offered so far (minus infinity before `k` of them).
struct Floor {
    k: usize,
    /// The `k` largest lower ends, smallest on top.
    heap: BinaryHeap<Lowest>,
}

/// A lower end, ordered so that the heap's top is the smallest.
struct Lowest(f64);

impl PartialEq for Lowest {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Lowest {}
impl PartialOrd for Lowest {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Lowest {
    fn cmp(&self, other: &Self) -> Ordering {
        other.0.total_cmp(&self.0)
    }
}

impl Floor {
    fn new(k: usize) -> Floor {
        Floor {
            k,
            heap: BinaryHeap::with_capacity(k + 1),
        }
    }

    fn offer(&mut self, low: f64) {
        if self.heap.len() < self.k {
            self.heap.push(Lowest(low));
        } else if self.heap.peek().is_some_and(|top| low > top.0) {
            self.heap.pop();
            self.heap.push(Lowest(low));
        }
    }

    fn value(&self) -> f64 {
        match self.heap.peek() {
            Some(top) if self.heap.len() >= self.k => top.0,
            _ => f64::NEG_INFINITY,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vector::distance::dot;
    use crate::vector::kernel::dot_i16_i8;
    use crate::vector::seeded_unit;

    /// The best `k` of `vectors` (slots where `live` holds) by their floats.
    fn float_top(
        vectors: &[Vec<f32>],
        query: &[f32],
        k: usize,
        live: impl Fn(usize) -> bool,
    ) -> Vec<(RecordId, f32)> {
        let mut top = TopK::new(k);
        for (slot, v) in vectors.iter().enumerate().filter(|(s, _)| live(*s)) {
            top.offer(RecordId(slot as u64), dot(query, v));
        }
        top.into_sorted()
    }

    fn coded_top(
        vectors: &[Vec<f32>],
        query: &[f32],
        k: usize,
        live: impl Fn(usize) -> bool,
    ) -> Vec<(RecordId, f32)> {
        let dim = query.len();
        let scan = ScanCodes::encode(dim, vectors.iter().map(Vec::as_slice));
        scan.search(query, k, live, |slot| {
            (RecordId(slot as u64), dot(query, &vectors[slot]))
        })
    }

    /// `v` moved by `step` along a pseudo-random direction, made unit again.
    fn nudged(v: &[f32], seed: u64, step: f32) -> Vec<f32> {
        let direction = seeded_unit(seed, v.len());
        let moved: Vec<f32> = v
            .iter()
            .zip(&direction)
            .map(|(x, d)| x + step * d)
            .collect();
        let norm = moved.iter().map(|x| x * x).sum::<f32>().sqrt();
        moved.into_iter().map(|x| x / norm).collect()
    }

    #[test]
    fn answers_as_the_float_scan_on_spread_vectors() {
        for dim in [3usize, 17, 384] {
            let vectors: Vec<Vec<f32>> = (0..1500).map(|s| seeded_unit(s, dim)).collect();
            for q in 0..20 {
                let query = seeded_unit(10_000 + q, dim);
                for k in [1, 5, 10, 100] {
                    assert_eq!(
                        coded_top(&vectors, &query, k, |_| true),
                        float_top(&vectors, &query, k, |_| true),
                        "dim {dim}, query {q}, k {k}"
                    );
                }
            }
        }
    }

    #[test]
    fn answers_as_the_float_scan_among_near_and_exact_ties() {
        // Clusters of vectors closer to each other than a code step, and exact copies, whose
        // order only the floats (then the ids) decide.
        let dim = 64;
        let mut vectors = Vec::new();
        for centre in 0..40u64 {
            let c = seeded_unit(centre, dim);
            for j in 0..30u64 {
                let v = match j % 3 {
                    0 => c.clone(),
                    _ => nudged(&c, centre * 100 + j, 1e-4 * j as f32),
                };
                vectors.push(v);
            }
        }
        for q in 0..40u64 {
            // Queries at the centres themselves and near them.
            let query = nudged(&seeded_unit(q % 40, dim), 7_000 + q, 1e-3 * (q / 40) as f32);
            for k in [1, 3, 10, 31] {
                let live = |slot: usize| slot % 7 != 3;
                assert_eq!(
                    coded_top(&vectors, &query, k, live),
                    float_top(&vectors, &query, k, live),
                    "query {q}, k {k}"
                );
            }
        }
    }

    #[test]
    fn bounds_hold_for_every_vector() {
        let dim = 384;
        let vectors: Vec<Vec<f32>> = (0..300).map(|s| seeded_unit(s, dim)).collect();
        let scan = ScanCodes::encode(dim, vectors.iter().map(Vec::as_slice));
        for q in 0..10 {
            let floats = seeded_unit(50_000 + q, dim);
            let query = Query::new(&floats, dim);
            for (slot, v) in vectors.iter().enumerate() {
                let code = &scan.codes[slot * dim..(slot + 1) * dim];
                let meta = &scan.meta[slot];
                let estimate = query.estimate(dot_i16_i8(query.values.wide(), code), meta);
                let error = (estimate - f64::from(dot(&floats, v))).abs();
                let bound = query.bound(meta);
                assert!(error <= bound, "slot {slot}: off by {error}, bound {bound}");
                assert!(bound < 0.05, "a bound this loose would rescore everything");
            }
        }
    }

    #[test]
    fn changes_keep_codes_in_step_with_the_vectors() {
        let dim = 32;
        let mut vectors: Vec<Vec<f32>> = (0..200).map(|s| seeded_unit(s, dim)).collect();
        let mut scan = ScanCodes::encode(dim, vectors.iter().map(Vec::as_slice));
        for step in 0..100u64 {
            match step % 3 {
                0 => {
                    let slot = (step * 37 % vectors.len() as u64) as usize;
                    vectors.swap_remove(slot);
                    scan.swap_remove(slot);
                }
                1 => {
                    let slot = (step * 11 % vectors.len() as u64) as usize;
                    vectors[slot] = seeded_unit(1_000 + step, dim);
                    scan.set(slot, &vectors[slot]);
                }
                _ => {
                    vectors.push(seeded_unit(2_000 + step, dim));
                    scan.push(&vectors[vectors.len() - 1]);
                }
            }
            let query = seeded_unit(3_000 + step, dim);
            let coded = scan.search(
                &query,
                5,
                |_| true,
                |slot| (RecordId(slot as u64), dot(&query, &vectors[slot])),
            );
            assert_eq!(
                coded,
                float_top(&vectors, &query, 5, |_| true),
                "step {step}"
            );
        }
    }
}
