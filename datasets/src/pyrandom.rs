//! Python's `random.Random`, bit for bit, for the operations MemoryBench uses.
//!
//! CPython's generator is MT19937 seeded through `init_by_array` with the seed's 32-bit words;
//! integers below `n` come from `_randbelow` (draw `n.bit_length()` random bits until the value
//! is below `n`), and `sample` switches between a partial Fisher–Yates on a pool and rejection
//! into a set depending on the sizes. Every branch is reproduced so that splits and shuffles
//! match upstream exactly.

const N: usize = 624;
const M: usize = 397;
const MATRIX_A: u32 = 0x9908_b0df;
const UPPER_MASK: u32 = 0x8000_0000;
const LOWER_MASK: u32 = 0x7fff_ffff;

/// A generator equal to CPython's `random.Random(seed)` for non-negative integer seeds.
#[derive(Clone)]
pub struct PyRandom {
    state: [u32; N],
    index: usize,
}

impl PyRandom {
    /// `random.Random(seed)`.
    pub fn new(seed: u64) -> PyRandom {
        // CPython splits abs(seed) into 32-bit words, least significant first; 0 gives [0].
        let key: Vec<u32> = if seed >> 32 == 0 {
            vec![seed as u32]
        } else {
            vec![seed as u32, (seed >> 32) as u32]
        };
        let mut generator = PyRandom {
            state: [0; N],
            index: N,
        };
        generator.init_by_array(&key);
        generator
    }

    /// numpy's `np.random.RandomState(seed)`: the same Mersenne Twister seeded with
    /// `init_genrand` (numpy's legacy seeding of an integer); its `random_sample()` is
    /// [`PyRandom::random`] (scikit-learn draws its k-means++ centres so).
    pub fn numpy_legacy(seed: u32) -> PyRandom {
        let mut generator = PyRandom {
            state: [0; N],
            index: N,
        };
        generator.init_genrand(seed);
        generator
    }

    fn init_genrand(&mut self, seed: u32) {
        self.state[0] = seed;
        for i in 1..N {
            let previous = self.state[i - 1];
            self.state[i] = 1_812_433_253u32
                .wrapping_mul(previous ^ (previous >> 30))
                .wrapping_add(i as u32);
        }
        self.index = N;
    }

    fn init_by_array(&mut self, key: &[u32]) {
        self.init_genrand(19_650_218);
        let (mut i, mut j) = (1usize, 0usize);
        for _ in 0..N.max(key.len()) {
            let previous = self.state[i - 1];
            self.state[i] = (self.state[i] ^ (previous ^ (previous >> 30)).wrapping_mul(1_664_525))
                .wrapping_add(key[j])
                .wrapping_add(j as u32);
            i += 1;
            j += 1;
            if i >= N {
                self.state[0] = self.state[N - 1];
                i = 1;
            }
            if j >= key.len() {
                j = 0;
            }
        }
        for _ in 0..N - 1 {
            let previous = self.state[i - 1];
            self.state[i] = (self.state[i]
                ^ (previous ^ (previous >> 30)).wrapping_mul(1_566_083_941))
            .wrapping_sub(i as u32);
            i += 1;
            if i >= N {
                self.state[0] = self.state[N - 1];
                i = 1;
            }
        }
        self.state[0] = 0x8000_0000;
    }

    /// The next raw 32-bit output (`genrand_uint32`).
    pub fn next_u32(&mut self) -> u32 {
        if self.index >= N {
            self.twist();
        }
        let mut y = self.state[self.index];
        self.index += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^ (y >> 18)
    }

    fn twist(&mut self) {
        for k in 0..N {
            let y = (self.state[k] & UPPER_MASK) | (self.state[(k + 1) % N] & LOWER_MASK);
            let mut next = self.state[(k + M) % N] ^ (y >> 1);
            if y & 1 != 0 {
                next ^= MATRIX_A;
            }
            self.state[k] = next;
        }
        self.index = 0;
    }

    /// `random()`: a float in [0, 1) with 53 random bits.
    pub fn random(&mut self) -> f64 {
        let a = self.next_u32() >> 5;
        let b = self.next_u32() >> 6;
        (f64::from(a) * 67_108_864.0 + f64::from(b)) * (1.0 / 9_007_199_254_740_992.0)
    }

    /// `getrandbits(k)` for `k` ≤ 64.
    pub fn getrandbits(&mut self, k: u32) -> u64 {
        match k {
            0 => 0,
            1..=32 => u64::from(self.next_u32() >> (32 - k)),
            _ => {
                // CPython fills 32-bit words from the least significant one, the last (most
                // significant) word keeping only its top bits.
                let low = u64::from(self.next_u32());
                let high = u64::from(self.next_u32() >> (64 - k));
                (high << 32) | low
            }
        }
    }

    /// `_randbelow(n)`: uniform in `0..n` (0 when `n` is 0, as CPython's `randbelow(0)` is
    /// never reached by the callers here).
    pub fn randbelow(&mut self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        let bits = 64 - n.leading_zeros();
        loop {
            let r = self.getrandbits(bits);
            if r < n {
                return r;
            }
        }
    }

    /// `shuffle(items)` in place.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.randbelow(i as u64 + 1) as usize;
            items.swap(i, j);
        }
    }

    /// `sample(population, k)`: `k` distinct elements in selection order; `None` when `k`
    /// exceeds the population (Python raises `ValueError`).
    pub fn sample<T: Clone>(&mut self, population: &[T], k: usize) -> Option<Vec<T>> {
        let n = population.len();
        if k > n {
            return None;
        }
        let mut setsize = 21usize;
        if k > 5 {
            // 4 ** ceil(log(3k, 4)), computed in floating point as CPython does.
            let exponent = ((k * 3) as f64).ln() / 4f64.ln();
            setsize += 4usize.pow(exponent.ceil() as u32);
        }
        let mut result = Vec::with_capacity(k);
        if n <= setsize {
            let mut pool: Vec<T> = population.to_vec();
            for i in 0..k {
                let j = self.randbelow((n - i) as u64) as usize;
                result.push(pool[j].clone());
                pool[j] = pool[n - i - 1].clone();
            }
        } else {
            let mut selected = std::collections::HashSet::with_capacity(k);
            for _ in 0..k {
                let mut j = self.randbelow(n as u64) as usize;
                while !selected.insert(j) {
                    j = self.randbelow(n as u64) as usize;
                }
                result.push(population[j].clone());
            }
        }
        Some(result)
    }
}

#[cfg(test)]
mod tests {
    use super::PyRandom;

    #[test]
    fn numpy_legacy_seeding_matches_numpy() {
        // np.random.RandomState(224).random_sample(3), numpy 2.4.6.
        let mut r = PyRandom::numpy_legacy(224);
        let drawn: Vec<f64> = (0..3).map(|_| r.random()).collect();
        assert_eq!(
            drawn,
            [
                0.48143503408945976,
                0.43704830427361274,
                0.02407991488808836
            ]
        );
        assert_eq!(PyRandom::numpy_legacy(0).random(), 0.5488135039273248);
    }

    #[test]
    fn first_outputs_of_seed_42_match_cpython() {
        // python3 -c "import random; r=random.Random(42); print([r.getrandbits(32) for _ in range(3)])"
        let mut r = PyRandom::new(42);
        assert_eq!(
            [r.next_u32(), r.next_u32(), r.next_u32()],
            [2746317213, 478163327, 107420369]
        );
        // python3 -c "import random; print(random.Random(42).random())"
        assert_eq!(PyRandom::new(42).random(), 0.6394267984578837);
    }
}
