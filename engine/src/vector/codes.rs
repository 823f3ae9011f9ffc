//! Int8 codes of a graph's vectors, for the many approximate comparisons of a beam search.
//!
//! A graph search compares the query with thousands of points to find a few dozen; over a
//! large collection those comparisons are bound by memory, at 4 bytes per dimension. Each
//! point is therefore also kept as one signed byte per dimension, scaled per dimension (the
//! largest magnitude of that dimension maps to 127), and the query as 16-bit integers of its
//! products with those scales: a comparison reads a quarter of the bytes and multiplies
//! integers. The beam ranks by these approximate similarities; the candidates it ends with are
//! scored again exactly, so every similarity a search returns is exact.

use super::distance::prefetch;
use super::mapped::Stored;

/// The codes of a set of `dim`-dimensional vectors, in point order.
pub(crate) struct Codes {
    dim: usize,
    /// What one code step is worth in each dimension.
    scales: Vec<f32>,
    /// `dim` codes per point.
    codes: Stored<i8>,
}

/// A query prepared for [`Codes::similarity`].
pub(crate) struct QueryCode {
    values: Vec<i16>,
    /// What one unit of the integer dot product is worth.
    unit: f32,
}

impl Codes {
    /// Encodes `vectors` (`dim` values per point, in point order).
    pub(crate) fn encode(vectors: &[f32], dim: usize) -> Codes {
        let mut scales = vec![0.0f32; dim];
        for vector in vectors.chunks_exact(dim) {
            for (scale, x) in scales.iter_mut().zip(vector) {
                *scale = scale.max(x.abs());
            }
        }
        for scale in &mut scales {
            *scale = if *scale > 0.0 { *scale / 127.0 } else { 1.0 };
        }
        let mut codes = Vec::with_capacity(vectors.len());
        push_codes(&mut codes, vectors, &scales);
        Codes {
            dim,
            scales,
            codes: Stored::Owned(codes),
        }
    }

    /// Codes as [`Codes::scales`] and [`Codes::codes`] gave them; `None` unless there is one
    /// scale per dimension and whole points of codes.
    pub(crate) fn from_parts(dim: usize, scales: Vec<f32>, codes: Stored<i8>) -> Option<Codes> {
        (dim > 0 && scales.len() == dim && codes.len().is_multiple_of(dim)).then_some(Codes {
            dim,
            scales,
            codes,
        })
    }

    /// These codes followed by those of `vectors` (unit vectors of the codes' dimension),
    /// encoded with these scales (a value beyond a scale's range takes its end), so that the
    /// old codes stay valid; encoded afresh when there is no point yet.
    pub(crate) fn extended(&self, vectors: &[f32]) -> Codes {
        if self.points() == 0 {
            return Codes::encode(vectors, self.dim);
        }
        let mut codes = Vec::with_capacity(self.codes.len() + vectors.len());
        codes.extend_from_slice(&self.codes);
        push_codes(&mut codes, vectors, &self.scales);
        Codes {
            dim: self.dim,
            scales: self.scales.clone(),
            codes: Stored::Owned(codes),
        }
    }

    /// The vector `point`'s code stands for, to compare other codes with it.
    pub(crate) fn decode(&self, point: u32) -> Vec<f32> {
        let start = point as usize * self.dim;
        self.codes[start..start + self.dim]
            .iter()
            .zip(&self.scales)
            .map(|(c, s)| f32::from(*c) * s)
            .collect()
    }

    /// What one code step is worth in each dimension.
    pub(crate) fn scales(&self) -> &[f32] {
        &self.scales
    }

    /// The codes, `dim` per point, in point order.
    pub(crate) fn codes(&self) -> &[i8] {
        &self.codes
    }

    /// Number of points.
    pub(crate) fn points(&self) -> usize {
        self.codes.len() / self.dim.max(1)
    }

    /// Prepares `query` (of the codes' dimension) for comparisons.
    pub(crate) fn query(&self, query: &[f32]) -> QueryCode {
        let scaled: Vec<f32> = query.iter().zip(&self.scales).map(|(y, s)| y * s).collect();
        let largest = scaled.iter().fold(0.0f32, |m, z| m.max(z.abs()));
        if largest == 0.0 {
            return QueryCode {
                values: vec![0; self.dim],
                unit: 0.0,
            };
        }
        let unit = largest / f32::from(i16::MAX);
        QueryCode {
            values: scaled
                .iter()
                .map(|z| quantize(z / unit, f32::from(i16::MAX)) as i16)
                .collect(),
            unit,
        }
    }

    /// The approximate similarity of the prepared query and `point`.
    #[inline]
    pub(crate) fn similarity(&self, query: &QueryCode, point: u32) -> f32 {
        let start = point as usize * self.dim;
        query.unit * dot_i16_i8(&query.values, &self.codes[start..start + self.dim]) as f32
    }

    /// Asks the CPU to start loading the codes of `point` (see [`prefetch`]).
    #[inline]
    pub(crate) fn prefetch(&self, point: u32) {
        let start = point as usize * self.dim;
        if let Some(codes) = self.codes.get(start..start + self.dim) {
            prefetch(codes);
        }
    }

    /// Bytes of the codes (in memory or mapped) and scales.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.codes.bytes() + self.scales.capacity() * 4
    }
}

/// Appends the codes of `vectors` (one value per scale each) under `scales`.
fn push_codes(codes: &mut Vec<i8>, vectors: &[f32], scales: &[f32]) {
    for vector in vectors.chunks_exact(scales.len()) {
        codes.extend(
            vector
                .iter()
                .zip(scales)
                .map(|(x, s)| quantize(x / s, 127.0) as i8),
        );
    }
}

/// `x` rounded and clamped to `±limit`.
fn quantize(x: f32, limit: f32) -> i32 {
    x.round().clamp(-limit, limit) as i32
}

/// Longest vectors the AVX2 kernel takes: each product is below 2^22, so an `i32` lane holds
/// 512 of them, and a lane sums one product in eight.
#[cfg(target_arch = "x86_64")]
const AVX2_MAX_LEN: usize = 8 * 512;

/// Integer dot product.
#[inline]
pub(super) fn dot_i16_i8(a: &[i16], b: &[i8]) -> i64 {
    #[cfg(target_arch = "x86_64")]
    {
        if a.len() <= AVX2_MAX_LEN && std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2, checked just above.
            return unsafe { dot_i16_i8_avx2(a, b) };
        }
    }
    dot_i16_i8_portable(a, b)
}

#[inline(always)]
fn dot_i16_i8_portable(a: &[i16], b: &[i8]) -> i64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| i64::from(i32::from(*x) * i32::from(*y)))
        .sum()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn dot_i16_i8_avx2(a: &[i16], b: &[i8]) -> i64 {
    use std::arch::x86_64::*;
    const LANES: usize = 16;
    let n = a.len().min(b.len());
    let whole = n / LANES * LANES;
    let mut acc = _mm256_setzero_si256();
    let mut i = 0;
    while i < whole {
        // SAFETY: `i + 16 <= n`, so both unaligned loads stay inside the slices.
        let (x, y) = unsafe {
            (
                _mm256_loadu_si256(a.as_ptr().add(i).cast()),
                _mm_loadu_si128(b.as_ptr().add(i).cast()),
            )
        };
        acc = _mm256_add_epi32(acc, _mm256_madd_epi16(x, _mm256_cvtepi8_epi16(y)));
        i += LANES;
    }
    let mut lanes = [0i32; 8];
    // SAFETY: `lanes` is 32 bytes, the size of the stored vector.
    unsafe { _mm256_storeu_si256(lanes.as_mut_ptr().cast(), acc) };
    lanes.iter().map(|l| i64::from(*l)).sum::<i64>()
        + dot_i16_i8_portable(&a[whole..n], &b[whole..n])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vector::distance::dot;
    use crate::vector::seeded_unit as unit;

    #[test]
    fn integer_kernels_agree_at_odd_lengths() {
        for n in [0usize, 1, 15, 16, 17, 384, 1000, 5000] {
            let a: Vec<i16> = (0..n)
                .map(|i| ((i * 397) % 32_000) as i16 - 16_000)
                .collect();
            let b: Vec<i8> = (0..n).map(|i| ((i * 37) % 255) as i8).collect();
            assert_eq!(dot_i16_i8(&a, &b), dot_i16_i8_portable(&a, &b), "n={n}");
        }
        // The largest magnitudes, at the longest length the vector kernel takes and beyond.
        for n in [4096usize, 4097] {
            let (a, b) = (vec![i16::MAX; n], vec![i8::MAX; n]);
            let expected = n as i64 * i64::from(i16::MAX) * i64::from(i8::MAX);
            assert_eq!(dot_i16_i8(&a, &b), expected, "n={n}");
        }
    }

    #[test]
    fn approximate_similarity_is_close_to_the_exact_one() {
        let dim = 384;
        let points: Vec<Vec<f32>> = (0..200).map(|s| unit(s, dim)).collect();
        let codes = Codes::encode(&points.concat(), dim);
        for q in 0..20 {
            let query = unit(1_000 + q, dim);
            let prepared = codes.query(&query);
            for (p, point) in points.iter().enumerate() {
                let error = (codes.similarity(&prepared, p as u32) - dot(&query, point)).abs();
                assert!(error < 0.01, "query {q}, point {p}: off by {error}");
            }
        }
    }

    #[test]
    fn zero_dimensions_and_queries_stay_finite() {
        let dim = 4;
        let codes = Codes::encode(&[0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0], dim);
        let prepared = codes.query(&[0.0, 0.0, 0.0, 1.0]);
        assert_eq!(codes.similarity(&prepared, 0), 0.0);
        let prepared = codes.query(&[0.0, 1.0, 0.0, 0.0]);
        assert!((codes.similarity(&prepared, 0) - 1.0).abs() < 1e-3);
        assert!(codes.similarity(&prepared, 1).abs() < 1e-3);
    }
}
