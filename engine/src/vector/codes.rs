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
use super::kernel::dot_i16_i8;
use super::kernel_split::SplitQuery;
use super::mapped::Stored;

/// The codes of a set of `dim`-dimensional vectors, in point order.
pub(crate) struct Codes {
    dim: usize,
    /// What one code step is worth in each dimension.
    scales: Vec<f32>,
    /// `dim` codes per point.
    codes: Stored<i8>,
}

/// A query prepared for [`Codes::similarity`] and [`Codes::similarities`].
pub(crate) struct QueryCode {
    values: Vec<i16>,
    /// What one unit of the integer dot product is worth.
    unit: f32,
    /// The values split for the VNNI kernel, for a search's batches of comparisons (`None`
    /// on CPUs without it, and for a point's query, which compares a few points only).
    split: Option<SplitQuery>,
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

    /// `point` prepared as a query, to compare other points with it: the query of the vector
    /// its code stands for, made from the code directly.
    pub(crate) fn point_query(&self, point: u32) -> QueryCode {
        QueryCode::of_scaled(
            self.code(point)
                .iter()
                .zip(&self.scales)
                .map(|(c, s)| f32::from(*c) * s * s)
                .collect(),
        )
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

    /// Prepares `query` (of the codes' dimension) for comparisons, a search's many.
    pub(crate) fn query(&self, query: &[f32]) -> QueryCode {
        let mut prepared =
            QueryCode::of_scaled(query.iter().zip(&self.scales).map(|(y, s)| y * s).collect());
        prepared.split = SplitQuery::new(&prepared.values);
        prepared
    }

    /// The approximate similarity of the prepared query and `point`.
    #[inline]
    pub(crate) fn similarity(&self, query: &QueryCode, point: u32) -> f32 {
        query.unit * dot_i16_i8(&query.values, self.code(point)) as f32
    }

    /// The code of `point`.
    #[inline]
    fn code(&self, point: u32) -> &[i8] {
        let start = point as usize * self.dim;
        &self.codes[start..start + self.dim]
    }

    /// The approximate similarities of the prepared query and each of `points`, in `out`
    /// (cleared first): what [`Codes::similarity`] gives each, four at a time where the query
    /// is split for the VNNI kernel.
    pub(crate) fn similarities(&self, query: &QueryCode, points: &[u32], out: &mut Vec<f32>) {
        out.clear();
        let Some(split) = &query.split else {
            out.extend(points.iter().map(|&p| self.similarity(query, p)));
            return;
        };
        let code = |p: u32| self.code(p);
        let mut fours = points.chunks_exact(4);
        for four in &mut fours {
            let dots = split.dots4([code(four[0]), code(four[1]), code(four[2]), code(four[3])]);
            out.extend(dots.map(|dot| query.unit * dot as f32));
        }
        out.extend(
            fours
                .remainder()
                .iter()
                .map(|&p| query.unit * split.dot(code(p)) as f32),
        );
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

impl QueryCode {
    /// The query whose products with the scales are `scaled`, over a unit that maps the
    /// largest of them to the largest `i16`.
    fn of_scaled(scaled: Vec<f32>) -> QueryCode {
        let largest = scaled.iter().fold(0.0f32, |m, z| m.max(z.abs()));
        if largest == 0.0 {
            return QueryCode {
                values: vec![0; scaled.len()],
                unit: 0.0,
                split: None,
            };
        }
        let unit = largest / f32::from(i16::MAX);
        QueryCode {
            values: scaled
                .iter()
                .map(|z| quantize(z / unit, f32::from(i16::MAX)) as i16)
                .collect(),
            unit,
            split: None,
        }
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

/// `x` clamped to `±limit` and rounded (half away from zero). Written as a truncation, which
/// compiles to vector instructions, where `f32::round` is a call per value on x86-64's
/// baseline: preparing queries was two thirds of a graph build's time with it.
#[inline]
fn quantize(x: f32, limit: f32) -> i32 {
    let x = x.clamp(-limit, limit);
    (x + 0.5f32.copysign(x)) as i32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vector::distance::dot;
    use crate::vector::seeded_unit as unit;

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
    fn a_point_as_query_compares_as_its_vector_does() {
        let dim = 384;
        let points: Vec<Vec<f32>> = (0..50).map(|s| unit(s, dim)).collect();
        let codes = Codes::encode(&points.concat(), dim);
        for p in 0..50u32 {
            let prepared = codes.point_query(p);
            for (q, point) in points.iter().enumerate() {
                let exact = dot(&points[p as usize], point);
                let error = (codes.similarity(&prepared, q as u32) - exact).abs();
                assert!(error < 0.02, "point {p} against {q}: off by {error}");
            }
        }
    }

    #[test]
    fn quantizing_rounds_half_away_from_zero_within_the_limit() {
        let cases = [
            (0.4, 0),
            (0.5, 1),
            (-0.5, -1),
            (2.5, 3),
            (-2.49, -2),
            (126.6, 127),
            (1e9, 127),
            (-1e9, -127),
            (f32::NAN, 0),
        ];
        for (x, expected) in cases {
            assert_eq!(quantize(x, 127.0), expected, "{x}");
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
