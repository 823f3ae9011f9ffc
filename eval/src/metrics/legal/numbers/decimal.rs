//! The part of Python's `decimal.Decimal` (default context: 28 digits, half-even rounding) that
//! chinese2digits uses: reading a number, multiplying, dividing, and `str()`.

use num_bigint::BigInt;
use num_traits::{Signed, Zero};

/// The default context's precision.
const PRECISION: usize = 28;

/// A finite decimal: `(-1)^negative × coefficient × 10^exponent`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Decimal {
    negative: bool,
    /// The coefficient's digits, without leading zeros ("0" for zero).
    digits: String,
    exponent: i64,
}

/// Why Python's `decimal` would raise.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum DecimalError {
    /// `Decimal(text)` of something that is not a number (`InvalidOperation`).
    #[error("invalid decimal literal {0:?}")]
    Invalid(String),
    /// Division by zero (`DivisionByZero`, or `InvalidOperation` for 0/0).
    #[error("division by zero")]
    DivisionByZero,
}

impl Decimal {
    /// `Decimal(text)` for the forms chinese2digits produces: a sign, digits with an optional
    /// point, an optional exponent.
    pub(crate) fn parse(text: &str) -> Result<Decimal, DecimalError> {
        let invalid = || DecimalError::Invalid(text.to_string());
        let (negative, rest) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text.strip_prefix('+').unwrap_or(text)),
        };
        let (mantissa, exp) = match rest.find(['e', 'E']) {
            Some(at) => {
                let exp: i64 = rest[at + 1..].parse().map_err(|_| invalid())?;
                (&rest[..at], exp)
            }
            None => (rest, 0),
        };
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if (int.is_empty() && frac.is_empty()) || !all_digits(int) || !all_digits(frac) {
            return Err(invalid());
        }
        let joined = format!("{int}{frac}");
        let trimmed = joined.trim_start_matches('0');
        let frac_len = i64::try_from(frac.len()).map_err(|_| invalid())?;
        Ok(Decimal {
            negative,
            digits: if trimmed.is_empty() { "0" } else { trimmed }.to_string(),
            exponent: exp - frac_len,
        })
    }

    fn coefficient(&self) -> BigInt {
        self.digits.parse().unwrap_or_default()
    }

    fn from_parts(negative: bool, coefficient: &BigInt, exponent: i64) -> Decimal {
        Decimal {
            negative,
            digits: coefficient.abs().to_string(),
            exponent,
        }
    }

    /// `self * other`, rounded to the context.
    pub(crate) fn mul(&self, other: &Decimal) -> Decimal {
        let product = self.coefficient() * other.coefficient();
        let negative = self.negative != other.negative;
        Decimal::from_parts(negative, &product, self.exponent + other.exponent).fix()
    }

    /// `self / other`, as `decimal` divides: exact results brought to the ideal exponent,
    /// others rounded half-even to 28 digits.
    pub(crate) fn div(&self, other: &Decimal) -> Result<Decimal, DecimalError> {
        if other.digits == "0" {
            return Err(DecimalError::DivisionByZero);
        }
        let negative = self.negative != other.negative;
        if self.digits == "0" {
            return Ok(Decimal::from_parts(
                negative,
                &BigInt::zero(),
                self.exponent - other.exponent,
            ));
        }
        let shift = other.digits.len() as i64 - self.digits.len() as i64 + PRECISION as i64 + 1;
        let mut exponent = self.exponent - other.exponent - shift;
        let ten = BigInt::from(10);
        let pow = |n: i64| num_traits::pow(ten.clone(), usize::try_from(n).unwrap_or(0));
        let (a, b) = if shift >= 0 {
            (self.coefficient() * pow(shift), other.coefficient())
        } else {
            (self.coefficient(), other.coefficient() * pow(-shift))
        };
        let mut coeff = &a / &b;
        let remainder = &a % &b;
        if !remainder.is_zero() {
            if (&coeff % 5u32).is_zero() {
                coeff += 1u32;
            }
        } else {
            let ideal = self.exponent - other.exponent;
            while exponent < ideal && (&coeff % 10u32).is_zero() {
                coeff /= 10u32;
                exponent += 1;
            }
        }
        Ok(Decimal::from_parts(negative, &coeff, exponent).fix())
    }

    /// `_fix`: the coefficient rounded half-even to the context's precision.
    fn fix(self) -> Decimal {
        if self.digits == "0" || self.digits.len() <= PRECISION {
            return self;
        }
        let bytes = self.digits.as_bytes();
        let rest_zero = bytes[PRECISION + 1..].iter().all(|&b| b == b'0');
        let first = bytes[PRECISION];
        let last_kept_even = matches!(bytes[PRECISION - 1], b'0' | b'2' | b'4' | b'6' | b'8');
        let up = if first == b'5' && rest_zero {
            !last_kept_even
        } else {
            first > b'5' || (first == b'5' && !rest_zero)
        };
        let mut exponent = self.exponent + (self.digits.len() - PRECISION) as i64;
        let mut kept: BigInt = self.digits[..PRECISION].parse().unwrap_or_default();
        if up {
            kept += 1u32;
            let text = kept.to_string();
            if text.len() > PRECISION {
                kept = text[..text.len() - 1].parse().unwrap_or_default();
                exponent += 1;
            }
        }
        Decimal::from_parts(self.negative, &kept, exponent)
    }
}

impl std::fmt::Display for Decimal {
    /// `str(Decimal)`: plain notation unless the exponent is positive or the number is tiny.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let len = self.digits.len() as i64;
        let left = self.exponent + len;
        let dot = if self.exponent <= 0 && left > -6 {
            left
        } else {
            1
        };
        let (int, frac) = if dot <= 0 {
            let zeros = "0".repeat(usize::try_from(-dot).unwrap_or(0));
            ("0".to_string(), format!(".{zeros}{}", self.digits))
        } else if dot >= len {
            let zeros = "0".repeat(usize::try_from(dot - len).unwrap_or(0));
            (format!("{}{zeros}", self.digits), String::new())
        } else {
            let at = usize::try_from(dot).unwrap_or(0);
            (
                self.digits[..at].to_string(),
                format!(".{}", &self.digits[at..]),
            )
        };
        let exp = if left == dot {
            String::new()
        } else {
            format!("E{:+}", left - dot)
        };
        let sign = if self.negative { "-" } else { "" };
        write!(f, "{sign}{int}{frac}{exp}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(text: &str) -> Decimal {
        Decimal::parse(text).unwrap()
    }

    #[test]
    fn prints_as_python() {
        // Each pair checked with Python 3.11's decimal.
        assert_eq!(d("1.5").mul(&d("10000")).to_string(), "15000.0");
        assert_eq!(d("0012.50").to_string(), "12.50");
        assert_eq!(d("0.0000001").to_string(), "1E-7");
        assert_eq!(d("-0.5").to_string(), "-0.5");
        assert_eq!(d("0.0").mul(&d("1")).to_string(), "0.0");
    }

    #[test]
    fn divides_as_python() {
        assert_eq!(d("5").div(&d("100")).unwrap().to_string(), "0.05");
        assert_eq!(
            d("1").div(&d("3")).unwrap().to_string(),
            "0.3333333333333333333333333333"
        );
        assert_eq!(
            d("2").div(&d("3")).unwrap().to_string(),
            "0.6666666666666666666666666667"
        );
        assert_eq!(d("100").div(&d("4")).unwrap().to_string(), "25");
        assert_eq!(d("-1.5").div(&d("10")).unwrap().to_string(), "-0.15");
        assert_eq!(d("0").div(&d("7")).unwrap().to_string(), "0");
        assert_eq!(d("1").div(&d("0")), Err(DecimalError::DivisionByZero));
    }

    #[test]
    fn rounds_half_even_to_28_digits() {
        let big = d("12345678901234567890123456785");
        assert_eq!(
            big.mul(&d("1")).to_string(),
            "1.234567890123456789012345678E+28"
        );
        let odd = d("12345678901234567890123456775");
        assert_eq!(
            odd.mul(&d("1")).to_string(),
            "1.234567890123456789012345678E+28"
        );
        assert!(Decimal::parse("").is_err() && Decimal::parse("1.2.3").is_err());
    }
}
