//! The scores `calc_metrics` derives from the extracted fields: recall and precision of two
//! sets, and `calculate_percent_for_judge`'s closeness of two sentences or fines (Python's
//! exact integer division, correctly rounded, for any size of number).

use std::collections::BTreeSet;

use num_bigint::BigInt;
use num_traits::{Signed, ToPrimitive, Zero};

/// `calculate_recall_and_precision`: over the distinct items, 0 for an empty side.
pub(crate) fn recall_precision(expected: &[String], actual: &[String]) -> (f64, f64) {
    let expected: BTreeSet<&String> = expected.iter().collect();
    let actual: BTreeSet<&String> = actual.iter().collect();
    let hits = expected.intersection(&actual).count() as f64;
    let ratio = |n: usize| if n > 0 { hits / n as f64 } else { 0.0 };
    (ratio(expected.len()), ratio(actual.len()))
}

/// The score of a sentence or fine, `None` when neither side has one (both -1).
pub(crate) fn closeness(expected: &BigInt, actual: &BigInt) -> Option<f64> {
    if expected.is_negative() && actual.is_negative() {
        return None;
    }
    Some(percent_for_judge(expected, actual))
}

/// `calculate_percent_for_judge`. Upstream's `(exp_val >= 0 and act_val) < 0` is, by Python's
/// `and`, the same test as `exp_val >= 0 and act_val < 0`: opposite signs score 0, as does
/// one death sentence (over 10000) against none; otherwise 1 - |e - a| / max(e, a).
fn percent_for_judge(e: &BigInt, a: &BigInt) -> f64 {
    if e.is_zero() && a.is_zero() {
        return 1.0;
    }
    let zero = BigInt::zero();
    if (*e >= zero && *a < zero) || (*e < zero && *a >= zero) {
        return 0.0;
    }
    let death = BigInt::from(10000);
    if ((e - &death) * (a - &death)).is_negative() {
        return 0.0;
    }
    let larger = e.max(a);
    1.0 - true_div(&(e - a).abs(), larger)
}

/// Python's `n / d` for integers, `n >= 0`, `d > 0`: the quotient correctly rounded.
fn true_div(n: &BigInt, d: &BigInt) -> f64 {
    const EXACT: u64 = 1 << 53;
    if let (Some(a), Some(b)) = (n.to_u64(), d.to_u64()) {
        if a <= EXACT && b <= EXACT {
            return a as f64 / b as f64;
        }
    }
    // A quotient of 55 to 57 bits with a sticky bit for the remainder rounds once, correctly.
    let shift = 55 - (n.bits() as i64 - d.bits() as i64);
    let (num, den) = if shift >= 0 {
        (n << shift as usize, d.clone())
    } else {
        (n.clone(), d << (-shift) as usize)
    };
    let quotient = &num / &den;
    let sticky = !(&num % &den).is_zero();
    let bits = quotient.to_u64().unwrap_or(u64::MAX) | u64::from(sticky);
    bits as f64 * 2f64.powi(-(shift as i32))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(v: i64) -> BigInt {
        BigInt::from(v)
    }

    #[test]
    fn closeness_as_upstream() {
        assert_eq!(closeness(&n(-1), &n(-1)), None);
        assert_eq!(closeness(&n(0), &n(0)), Some(1.0));
        assert_eq!(closeness(&n(-1), &n(12)), Some(0.0));
        assert_eq!(closeness(&n(12), &n(-1)), Some(0.0));
        assert_eq!(closeness(&n(10001), &n(36)), Some(0.0));
        assert_eq!(closeness(&n(12), &n(18)), Some(1.0 - 6.0 / 18.0));
        assert_eq!(closeness(&n(10000), &n(36)), Some(1.0 - 9964.0 / 10000.0));
    }

    #[test]
    fn big_division_is_correctly_rounded() {
        // Python: (10**30 + 1) / (3 * 10**30) == 1 / 3 as doubles (checked), and the
        // quotient of two exactly representable halves.
        let big = BigInt::from(10).pow(30);
        let q = true_div(&(&big + 1), &(&big * 3));
        assert_eq!(q, (1.0_f64 / 3.0));
        assert_eq!(true_div(&(&big * 2), &(&big * 4)), 0.5);
        assert_eq!(true_div(&n(1), &n(3)), 1.0 / 3.0);
    }

    #[test]
    fn recall_and_precision_over_sets() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            recall_precision(&s(&["a", "b"]), &s(&["a", "a", "c"])),
            (0.5, 0.5)
        );
        assert_eq!(recall_precision(&s(&[]), &s(&["a"])), (0.0, 0.0));
    }
}
