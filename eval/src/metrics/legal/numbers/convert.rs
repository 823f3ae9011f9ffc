//! chinese2digits' conversion of one normalised numeral to digits (`chineseToDigits` and
//! `coreCHToDigits`, percentages converted): units multiplied as it multiplies them, digits
//! run together as it runs them, decimals through Python's `Decimal`.

use num_bigint::BigInt;
use num_traits::Zero;

use super::decimal::Decimal;
use super::NumberError;

/// `common_used_ch_numerals`: a numeral's value.
fn numeral(c: char) -> Option<u128> {
    Some(match c {
        '幺' | '一' => 1,
        '零' => 0,
        '二' | '两' => 2,
        '三' => 3,
        '四' => 4,
        '五' => 5,
        '六' => 6,
        '七' => 7,
        '八' => 8,
        '九' => 9,
        '十' => 10,
        '百' => 100,
        '千' => 1_000,
        '万' => 10_000,
        '亿' => 100_000_000,
        _ => return None,
    })
}

/// The counting units (`CHINESE_PURE_COUNTING_UNIT_LIST`).
pub(super) const UNITS: [char; 5] = ['十', '百', '千', '万', '亿'];

/// `coreCHToDigits`: Chinese numerals to a string of digits. A character that is no numeral
/// makes Python compare `None` with an int, which raises.
pub(super) fn core_to_digits(text: &str) -> Result<String, NumberError> {
    let chars: Vec<char> = text.chars().collect();
    let value = |c: char| {
        numeral(c).ok_or_else(|| NumberError::new(text, format!("{c:?} is not a numeral")))
    };
    let mut total = BigInt::zero();
    let mut joined = String::new();
    let mut unit: u128 = 1;
    let mut units_seen: Vec<u128> = vec![1];
    let times = |unit: u128, digits: &str| -> BigInt {
        BigInt::from(unit) * digits.parse::<BigInt>().unwrap_or_default()
    };
    for at in (0..chars.len()).rev() {
        let val = value(chars[at])?;
        if val >= 10 {
            units_seen.push(val);
            if val > unit {
                unit = val;
                if at == 0 {
                    total += val;
                }
            } else {
                unit = units_seen.iter().copied().max().unwrap_or(1) * val;
            }
        } else if at > 0 {
            if value(chars[at - 1])? < 10 {
                joined = format!("{val}{joined}");
            } else {
                total += times(unit, &format!("{val}{joined}"));
                joined.clear();
            }
        } else if unit == 1 {
            joined = format!("{val}{joined}");
        } else {
            total += times(unit, &format!("{val}{joined}"));
        }
    }
    Ok(if !total.is_zero() {
        total.to_string()
    } else if unit > 10 {
        unit.to_string()
    } else if !joined.is_empty() {
        joined
    } else {
        "0".to_string()
    })
}

/// The sign characters and what they stand for (`CHINESE_SIGN_DICT`).
fn sign_of(c: char) -> Option<&'static str> {
    match c {
        '负' | '-' => Some("-"),
        '正' | '+' => Some("+"),
        _ => None,
    }
}

/// `chineseToDigits(text, percentConvert=True)`.
pub(super) fn to_digits(text: &str) -> Result<String, NumberError> {
    let mut results = Vec::new();
    for part in text.split("分之") {
        let mut sign = "";
        let mut chars = part.to_string();
        for c in part.chars() {
            if let Some(s) = sign_of(c) {
                sign = s;
                chars = chars.replace(c, "");
            }
        }
        let mut pieces: Vec<String> = Vec::new();
        for separator in ['.', '点', '·'] {
            if chars.contains(separator) {
                pieces = chars.split(separator).map(String::from).collect();
            }
        }
        let mut result = if pieces.is_empty() {
            core_to_digits(&chars)?
        } else {
            decimal_part(text, &mut pieces)?
        };
        if result.is_empty() {
            result = "1".to_string();
        }
        results.push(format!("{sign}{result}"));
    }
    let decimal = |s: &str| Decimal::parse(s).map_err(|e| NumberError::new(text, e.to_string()));
    let mut total = match results.as_slice() {
        [denominator, numerator, ..] => decimal(numerator)?
            .div(&decimal(denominator)?)
            .map_err(|e| NumberError::new(text, e.to_string()))?
            .to_string(),
        [single] => single.clone(),
        [] => String::new(),
    };
    if total.contains('.') {
        total = total
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string();
    }
    Ok(total)
}

/// A numeral with a decimal point, split at it: the units after the decimals multiply it
/// (`2.55万`).
fn decimal_part(text: &str, pieces: &mut [String]) -> Result<String, NumberError> {
    let decimal = |s: &str| Decimal::parse(s).map_err(|e| NumberError::new(text, e.to_string()));
    let mut trailing_units = String::new();
    if let Some(last) = pieces.last_mut() {
        let chars: Vec<char> = last.chars().collect();
        for at in (0..chars.len()).rev() {
            if UNITS.contains(&chars[at]) {
                trailing_units.insert(0, chars[at]);
            } else {
                *last = chars[..=at].iter().collect();
                break;
            }
        }
    }
    let multiplier = if trailing_units.is_empty() {
        decimal("1")?
    } else {
        decimal(&core_to_digits(&trailing_units)?)?
    };
    let (first, second) = match pieces {
        [first, second, ..] => (first.as_str(), second.as_str()),
        _ => return Err(NumberError::new(text, "a point with nothing after it")),
    };
    let written = if first.is_empty() {
        format!("0.{}", core_to_digits(second)?)
    } else {
        format!("{}.{}", core_to_digits(first)?, core_to_digits(second)?)
    };
    Ok(decimal(&written)?.mul(&multiplier).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_as_chinese2digits() {
        // Each checked with chinese2digits 6.0.2's chineseToDigits.
        for (text, digits) in [
            ("一千二百三十四", "1234"),
            ("十五", "15"),
            ("零六", "06"),
            ("三零万", "300000"),
            ("一点五万", "15000"),
            ("二点五", "2.5"),
            ("百分之五", "0.05"),
            ("三分之一", "0.3333333333333333333333333333"),
            ("负五", "-5"),
            ("万", "10000"),
            ("一亿二千万", "120000000"),
        ] {
            assert_eq!(to_digits(text).unwrap(), digits, "{text}");
        }
        assert!(to_digits("一x").is_err());
        assert!(to_digits("分之五").is_err());
    }
}
