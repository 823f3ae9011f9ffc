//! Eigenvectors of a dense symmetric matrix for its smallest eigenvalues: Householder
//! tridiagonalisation, bisection on Sturm counts for the eigenvalues, inverse iteration for
//! their vectors (LAPACK's `dsytrd`, `dstebz` and `dstein` in outline).

use super::Rng;

/// Seed of the inverse iteration's start vectors: fixed, as umap-learn's ARPACK start vector
/// (all ones) is, so the spectral layout does not depend on the reduction's seed.
const START_SEED: u64 = 0x5EED;
/// Inverse iteration steps per eigenvector: the eigenvalue is exact to the last bit, so each
/// step multiplies the wanted component by about 1/ε against the others.
const INVERSE_ITERATIONS: usize = 3;

/// Unit eigenvectors of the symmetric `n × n` matrix `matrix` (row-major) for its `count`
/// smallest eigenvalues, in increasing order; `None` if `count > n`, the matrix holds a
/// non-finite value or the solve breaks down.
pub(super) fn smallest_eigenvectors(
    mut matrix: Vec<f64>,
    n: usize,
    count: usize,
) -> Option<Vec<Vec<f64>>> {
    if count > n || matrix.len() != n * n || !matrix.iter().all(|x| x.is_finite()) {
        return None;
    }
    let (diagonal, off_diagonal) = tridiagonalize(&mut matrix, n);
    let mut start = Rng::new(START_SEED);
    let mut vectors: Vec<Vec<f64>> = Vec::with_capacity(count);
    for index in 0..count {
        let eigenvalue = kth_eigenvalue(&diagonal, &off_diagonal, index);
        let vector = inverse_iteration(&diagonal, &off_diagonal, eigenvalue, &vectors, &mut start)?;
        vectors.push(vector);
    }
    for vector in &mut vectors {
        back_transform(&matrix, n, vector);
    }
    Some(vectors)
}

/// Reduces the symmetric matrix (its lower triangle is read) to tridiagonal form `T = Qᵀ·A·Q` by
/// Householder reflections, returning T's diagonal and off-diagonal; reflection k's unit vector
/// is left in row k right of the diagonal, for [`back_transform`]. Each step's update
/// `S −= 2(v·qᵀ + q·vᵀ)`, where `q = S·v − (vᵀS·v)·v`, is fused with the next step's `S·v`,
/// so that every step reads the matrix once.
fn tridiagonalize(a: &mut [f64], n: usize) -> (Vec<f64>, Vec<f64>) {
    let mut diagonal = vec![0.0; n];
    let mut off_diagonal = vec![0.0; n.saturating_sub(1)];
    if n < 2 {
        diagonal.iter_mut().zip(a.iter()).for_each(|(d, &x)| *d = x);
        return (diagonal, off_diagonal);
    }
    diagonal[0] = a[0];
    let (mut v, mut w, mut next_v, mut next_w) =
        (vec![0.0; n], vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    off_diagonal[0] = reflect(a, n, 0, &mut v);
    for i in 1..n {
        let row = &a[i * n + 1..i * n + i];
        row.iter()
            .zip(&mut w[1..i])
            .for_each(|(s, wj)| *wj += s * v[i]);
        w[i] += dot(row, &v[1..i]) + a[i * n + i] * v[i];
    }
    for k in 0..n - 1 {
        let c = dot(&w[k + 1..], &v[k + 1..]);
        w[k + 1..]
            .iter_mut()
            .zip(&v[k + 1..])
            .for_each(|(q, &x)| *q -= c * x);
        let (vk, qk) = (v[k + 1], w[k + 1]);
        for ((row, &vi), &qi) in a[(k + 1) * n..]
            .chunks_mut(n)
            .zip(&v[k + 1..])
            .zip(&w[k + 1..])
        {
            row[k + 1] -= 2.0 * (vi * qk + qi * vk);
        }
        diagonal[k + 1] = a[(k + 1) * n + k + 1];
        if k + 2 == n {
            break;
        }
        off_diagonal[k + 1] = reflect(a, n, k + 1, &mut next_v);
        next_w.fill(0.0);
        let first = k + 2;
        for i in first..n {
            let (vi, qi, ui) = (v[i], w[i], next_v[i]);
            let (row, rest) = a[i * n + first..=i * n + i].split_at_mut(i - first);
            let others = v[first..i]
                .iter()
                .zip(&w[first..i])
                .zip(&mut next_w[first..i]);
            for (s, ((&vj, &qj), wj)) in row.iter_mut().zip(others) {
                *s -= 2.0 * (vi * qj + qi * vj);
                *wj += *s * ui;
            }
            rest[0] -= 4.0 * vi * qi;
            next_w[i] += dot(row, &next_v[first..i]) + rest[0] * ui;
        }
        std::mem::swap(&mut v, &mut next_v);
        std::mem::swap(&mut w, &mut next_w);
    }
    (diagonal, off_diagonal)
}

/// The Householder reflection taking column k below the diagonal to a multiple of its first
/// unit vector: writes its unit vector into `v` (indices past k) and into row k right of the
/// diagonal, and returns the multiple (T's off-diagonal entry); a zero column reflects nothing.
fn reflect(a: &mut [f64], n: usize, k: usize, v: &mut [f64]) -> f64 {
    let v = &mut v[k + 1..];
    v.iter_mut()
        .zip(a[(k + 1) * n..].chunks(n))
        .for_each(|(x, row)| *x = row[k]);
    let norm = dot(v, v).sqrt();
    let alpha = if v[0] > 0.0 { -norm } else { norm };
    if norm > 0.0 {
        v[0] -= alpha;
        let length = dot(v, v).sqrt();
        v.iter_mut().for_each(|x| *x /= length);
    }
    a[k * n + k + 1..(k + 1) * n].copy_from_slice(v);
    alpha
}

/// Turns an eigenvector of T into one of A: applies the reflections in reverse order.
fn back_transform(reflections: &[f64], n: usize, vector: &mut [f64]) {
    for k in (0..n.saturating_sub(1)).rev() {
        let v = &reflections[k * n + k + 1..(k + 1) * n];
        let tail = &mut vector[k + 1..];
        let s = 2.0 * dot(v, tail);
        tail.iter_mut().zip(v).for_each(|(x, &r)| *x -= s * r);
    }
}

/// The `index`-th smallest eigenvalue (from 0) of the tridiagonal matrix, by bisection on Sturm
/// counts within the Gershgorin bounds, to the last bit.
fn kth_eigenvalue(diagonal: &[f64], off: &[f64], index: usize) -> f64 {
    let radius = |i: usize| {
        let left = if i > 0 { off[i - 1].abs() } else { 0.0 };
        left + off.get(i).map_or(0.0, |e| e.abs())
    };
    let mut lo = (0..diagonal.len())
        .map(|i| diagonal[i] - radius(i))
        .fold(f64::INFINITY, f64::min);
    let mut hi = (0..diagonal.len())
        .map(|i| diagonal[i] + radius(i))
        .fold(f64::NEG_INFINITY, f64::max);
    loop {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            return mid;
        }
        if count_below(diagonal, off, mid) > index {
            hi = mid;
        } else {
            lo = mid;
        }
    }
}

/// How many eigenvalues of the tridiagonal matrix are below `x` (negative pivots of T − xI).
fn count_below(diagonal: &[f64], off: &[f64], x: f64) -> usize {
    let largest = off.iter().fold(1.0, |m: f64, e| m.max(e * e));
    let pivot_min = f64::MIN_POSITIVE * largest;
    let squares = std::iter::once(0.0).chain(off.iter().map(|e| e * e));
    let mut pivot = 1.0;
    let mut count = 0;
    for (&d, e2) in diagonal.iter().zip(squares) {
        pivot = d - x - e2 / pivot;
        if pivot.abs() < pivot_min {
            pivot = -pivot_min;
        }
        count += usize::from(pivot < 0.0);
    }
    count
}

/// The unit eigenvector of the tridiagonal matrix for `eigenvalue`, orthogonal to `previous`
/// (how eigenvectors of equal or close eigenvalues come out distinct), by inverse iteration.
fn inverse_iteration(
    diagonal: &[f64],
    off: &[f64],
    eigenvalue: f64,
    previous: &[Vec<f64>],
    start: &mut Rng,
) -> Option<Vec<f64>> {
    let lu = TridiagonalLu::new(diagonal, off, eigenvalue);
    let mut vector: Vec<f64> = (0..diagonal.len())
        .map(|_| start.uniform(-1.0, 1.0))
        .collect();
    for _ in 0..INVERSE_ITERATIONS {
        orthonormalize(&mut vector, previous)?;
        lu.solve(&mut vector);
    }
    orthonormalize(&mut vector, previous)?;
    Some(vector)
}

/// Removes the vector's components along `previous` (orthonormal) and scales it to unit length;
/// `None` if nothing finite is left.
fn orthonormalize(vector: &mut [f64], previous: &[Vec<f64>]) -> Option<()> {
    for p in previous {
        let along = dot(vector, p);
        vector.iter_mut().zip(p).for_each(|(x, &y)| *x -= along * y);
    }
    let norm = dot(vector, vector).sqrt();
    if !(norm > 0.0 && norm.is_finite()) {
        return None;
    }
    vector.iter_mut().for_each(|x| *x /= norm);
    Some(())
}

/// LU factors with partial pivoting of a shifted tridiagonal matrix T − λI (LAPACK's `dgttrf`),
/// tiny pivots raised to ε·‖T‖ so that the nearly singular systems of inverse iteration solve.
struct TridiagonalLu {
    /// U's diagonal, first and second super-diagonals.
    u: (Vec<f64>, Vec<f64>, Vec<f64>),
    /// L's multipliers.
    multipliers: Vec<f64>,
    /// Whether rows i and i + 1 were swapped at step i.
    swapped: Vec<bool>,
}

impl TridiagonalLu {
    fn new(diagonal: &[f64], off: &[f64], shift: f64) -> Self {
        let n = diagonal.len();
        let mut u0: Vec<f64> = diagonal.iter().map(|d| d - shift).collect();
        let (mut u1, mut multipliers) = (off.to_vec(), off.to_vec());
        let mut u2 = vec![0.0; n.saturating_sub(2)];
        let mut swapped = vec![false; n.saturating_sub(1)];
        for i in 0..n.saturating_sub(1) {
            if u0[i].abs() >= multipliers[i].abs() {
                if u0[i] != 0.0 {
                    multipliers[i] /= u0[i];
                    u0[i + 1] -= multipliers[i] * u1[i];
                }
            } else {
                let factor = u0[i] / multipliers[i];
                u0[i] = multipliers[i];
                multipliers[i] = factor;
                let above = u1[i];
                u1[i] = u0[i + 1];
                u0[i + 1] = above - factor * u0[i + 1];
                if i + 2 < n {
                    u2[i] = u1[i + 1];
                    u1[i + 1] *= -factor;
                }
                swapped[i] = true;
            }
        }
        let norm = (diagonal.iter().chain(off)).fold(0.0, |m: f64, x| m.max(x.abs()));
        let tiny = f64::EPSILON * norm.max(f64::MIN_POSITIVE);
        for pivot in &mut u0 {
            if pivot.abs() < tiny {
                *pivot = if *pivot < 0.0 { -tiny } else { tiny };
            }
        }
        Self {
            u: (u0, u1, u2),
            multipliers,
            swapped,
        }
    }

    /// Overwrites `b` with the solution x of (T − λI)·x = b.
    fn solve(&self, b: &mut [f64]) {
        let n = b.len();
        for (i, (&m, &swapped)) in self.multipliers.iter().zip(&self.swapped).enumerate() {
            if swapped {
                let upper = b[i];
                b[i] = b[i + 1];
                b[i + 1] = upper - m * b[i];
            } else {
                b[i + 1] -= m * b[i];
            }
        }
        let (u0, u1, u2) = &self.u;
        for i in (0..n).rev() {
            let second = if i + 2 < n { u2[i] * b[i + 2] } else { 0.0 };
            let first = if i + 1 < n { u1[i] * b[i + 1] } else { 0.0 };
            b[i] = (b[i] - first - second) / u0[i];
        }
    }
}

/// Dot product with four partial sums (so that it vectorises).
pub(super) fn dot(x: &[f64], y: &[f64]) -> f64 {
    let (xs, ys) = (x.chunks_exact(4), y.chunks_exact(4));
    let tail: f64 = xs
        .remainder()
        .iter()
        .zip(ys.remainder())
        .map(|(a, b)| a * b)
        .sum();
    let mut sums = [0.0; 4];
    for (xc, yc) in xs.zip(ys) {
        for ((s, a), b) in sums.iter_mut().zip(xc).zip(yc) {
            *s += a * b;
        }
    }
    sums.iter().sum::<f64>() + tail
}
