//! The part of chinese2digits 6.0.2 that upstream's legal metrics call:
//! `takeNumberFromString(text)['digitsStringList']`, the numbers of a short text as digit
//! strings (Chinese numerals, Arabic digits and mixtures such as `1.5万`). Each step is
//! chinese2digits' own, quirks included: traditional numerals simplified, candidates found by
//! its regular expression, split fractions rejoined, trailing signs moved on, digits spelled
//! in Chinese, bare units dropped, abbreviations completed, then converted.

mod convert;
mod decimal;

use std::sync::OnceLock;

use regex::Regex;

use convert::{to_digits, UNITS};

/// Most characters of a text an error quotes.
pub(crate) const QUOTED: usize = 80;

/// Why chinese2digits raises on a text (it does not skip errors as upstream calls it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("chinese2digits fails on {text:?}: {reason}")]
pub struct NumberError {
    /// The numeral being converted (its first [`QUOTED`] characters).
    pub text: String,
    /// What Python raises.
    pub reason: String,
}

impl NumberError {
    fn new(text: &str, reason: impl Into<String>) -> NumberError {
        NumberError {
            text: mb_core::excerpt(text, QUOTED).into_owned(),
            reason: reason.into(),
        }
    }
}

/// `CHINESE_PURE_NUMBER_LIST`.
const PURE: [char; 13] = [
    '幺', '一', '二', '两', '三', '四', '五', '六', '七', '八', '九', '十', '零',
];

/// `takingChineseDigitsMixRERules`, with `re`'s Unicode `\d`.
const CANDIDATE: &str = concat!(
    r"(?:(?:分之)?(?:\+|-)?[正负]?)",
    r"(?:(?:(?:\d+(?:\.\d+)?[%‰‱]?|\.\d+[%‰‱]?)?",
    r"(?:(?:(?:[一二三四五六七八九十千万亿幺零百]+(?:点[一二三四五六七八九万亿幺零]+)?)|(?:点[一二三四五六七八九万亿幺零]+))))",
    r"|(?:(?:\d+(?:\.\d+)?[%‰‱]?|\.\d+[%‰‱]?)",
    r"(?:(?:(?:[一二三四五六七八九十千万亿幺零百]+(?:点[一二三四五六七八九万亿幺零]+)?)|(?:点[一二三四五六七八九万亿幺零]+)))?))",
);

fn candidate() -> Result<&'static Regex, NumberError> {
    static RE: OnceLock<Result<Regex, String>> = OnceLock::new();
    RE.get_or_init(|| Regex::new(CANDIDATE).map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| NumberError::new(CANDIDATE, e.clone()))
}

/// `takeNumberFromString(text)['digitsStringList']`: each number of `text` as a digit string.
pub fn take_numbers(text: &str) -> Result<Vec<String>, NumberError> {
    let converted = simplify(text);
    let found: Vec<String> = candidate()?
        .find_iter(&converted)
        .map(|m| m.as_str().to_string())
        .collect();
    let found = move_signs(rejoin_fractions(&found, &converted));
    let mut digits = Vec::new();
    for spelled in spell_digits(found) {
        if spelled.chars().any(|c| PURE.contains(&c)) {
            digits.push(to_digits(&complete(&spelled))?);
        }
    }
    Ok(digits)
}

/// `traditionalTextConvertFunc`: capital numerals simplified; capital units and 两/俩
/// simplified where a numeral (or a unit) stands beside them.
fn simplify(text: &str) -> String {
    let mut chars: Vec<char> = text
        .chars()
        .map(|c| match c {
            '壹' => '一',
            '贰' => '二',
            '叁' => '三',
            '肆' => '四',
            '伍' => '五',
            '陆' => '六',
            '柒' => '七',
            '捌' => '八',
            '玖' => '九',
            '〇' => '零',
            other => other,
        })
        .collect();
    let n = chars.len();
    if n > 1 {
        for at in 0..n {
            let beside = |chars: &[char], set: &[char]| {
                let before = at > 0 && set.contains(&chars[at - 1]);
                let after = at + 1 < n && set.contains(&chars[at + 1]);
                match at {
                    0 => after,
                    _ if at == n - 1 => before,
                    _ => before || after,
                }
            };
            let unit = match chars[at] {
                '拾' => Some('十'),
                '佰' => Some('百'),
                '仟' => Some('千'),
                '萬' => Some('万'),
                '億' => Some('亿'),
                _ => None,
            };
            if let Some(unit) = unit {
                if beside(&chars, &PURE) {
                    chars[at] = unit;
                }
            }
            if matches!(chars[at], '两' | '俩') && beside(&chars, &UNITS) {
                chars[at] = '二';
            }
        }
    }
    chars.into_iter().collect()
}

/// Whether chinese2digits takes `piece` for the second half of a fraction: its first two
/// characters are a substring of "分之".
fn starts_fraction(piece: &str) -> bool {
    let head: String = piece.chars().take(2).collect();
    "分之".contains(head.as_str())
}

fn drop_chars(piece: &str, count: usize) -> String {
    piece.chars().skip(count).collect()
}

/// `checkNumberSeg`: a piece starting with 分之 joined to the piece before it when the two
/// stand together in the text.
fn rejoin_fractions(pieces: &[String], text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let Some(first) = pieces.first() else {
        return out;
    };
    let mut previous_fraction = String::new();
    if starts_fraction(first) {
        previous_fraction = first.clone();
        out.push(drop_chars(first, 2));
    } else {
        out.push(first.clone());
    }
    for at in 1..pieces.len() {
        let piece = &pieces[at];
        if !starts_fraction(piece) {
            out.push(piece.clone());
            previous_fraction.clear();
            continue;
        }
        let mixed = format!("{}{piece}", pieces[at - 1]);
        if text.contains(&mixed) {
            if let Some(last_unit) = previous_fraction.chars().last() {
                if UNITS.contains(&last_unit) {
                    if let Some(last) = out.last_mut() {
                        last.pop();
                    }
                    out.push(format!("{last_unit}{piece}"));
                } else {
                    out.push(drop_chars(piece, 2));
                }
            } else if let Some(last) = out.last_mut() {
                *last = mixed;
            } else {
                out.push(mixed);
            }
        } else {
            out.push(drop_chars(piece, 2));
        }
        previous_fraction = piece.clone();
    }
    out
}

/// `checkSignSeg`: a sign ending a piece moved to the start of the next.
fn move_signs(pieces: Vec<String>) -> Vec<String> {
    let mut carried = String::new();
    pieces
        .into_iter()
        .map(|piece| {
            let mut piece = format!("{carried}{piece}");
            carried.clear();
            if let Some(last) = piece.chars().last() {
                if matches!(last, '负' | '正' | '-' | '+') {
                    carried.push(last);
                    piece.pop();
                }
            }
            piece
        })
        .collect()
}

/// `digitsToCHChars`: Arabic digits, the point and the per-mille signs spelled in Chinese,
/// a percentage's words moved to the front after each replacement.
fn spell_digits(pieces: Vec<String>) -> Vec<String> {
    const SPELLING: [(&str, &str); 14] = [
        ("0", "零"),
        ("1", "一"),
        ("2", "二"),
        ("3", "三"),
        ("4", "四"),
        ("5", "五"),
        ("6", "六"),
        ("7", "七"),
        ("8", "八"),
        ("9", "九"),
        ("%", "百分之"),
        ("‰", "千分之"),
        ("‱", "万分之"),
        (".", "点"),
    ];
    pieces
        .into_iter()
        .map(|piece| {
            let mut s = if piece.starts_with('.') {
                format!("0{piece}")
            } else {
                piece
            };
            for (key, spelled) in SPELLING {
                if s.contains(key) {
                    s = s.replace(key, spelled);
                    for per in ["百分之", "千分之", "万分之"] {
                        if s.contains(per) {
                            s = format!("{per}{}", s.replace(per, ""));
                        }
                    }
                }
            }
            s
        })
        .collect()
}

/// `standardChNumberConvert`: 一 put before a leading 十, the unit an abbreviation leaves out
/// appended (三千二 → 三千二百), and 万三-style per-unit numbers read as fractions.
fn complete(numeral: &str) -> String {
    let mut list: Vec<String> = numeral.chars().map(String::from).collect();
    let is_pure = |s: &str| s.chars().count() == 1 && s.chars().all(|c| PURE.contains(&c));
    if list.len() > 2 {
        if let Some(ten) = list.iter().position(|s| s == "十") {
            if ten == 0 || !is_pure(&list[ten - 1]) {
                list.insert(ten, "一".to_string());
            }
        }
        let second_last = &list[list.len() - 2];
        if let Some(unit) = UNITS.iter().position(|u| second_last == &u.to_string()) {
            if unit == 4 {
                list.push("千万".to_string());
            } else if unit >= 1 {
                list.push(UNITS[unit - 1].to_string());
            }
        }
    }
    let per_unit = list.len() > 1
        && ["千", "万", "百"].contains(&list[0].as_str())
        && list[1..].iter().all(|s| is_pure(s));
    if per_unit {
        list.splice(1..1, ["分".to_string(), "之".to_string()]);
    }
    list.concat()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn takes_numbers_as_chinese2digits() {
        // Each checked with chinese2digits 6.0.2's takeNumberFromString.
        for (text, digits) in [
            ("有期徒刑一年六个月", vec!["1", "6"]),
            ("有期徒刑3年", vec!["3"]),
            ("罚金人民币5000元", vec!["5000"]),
            ("罚金人民币1.5万元", vec!["15000"]),
            ("罚金人民币壹万贰仟元", vec!["12000"]),
            ("第二百六十四条", vec!["264"]),
            ("有期徒刑十年", vec!["10"]),
            // 两 is outside its pattern, so chinese2digits finds no number here.
            ("拘役两个月", vec![]),
            ("百分之五十", vec!["0.5"]),
            ("无期徒刑", vec![]),
        ] {
            assert_eq!(take_numbers(text).unwrap(), digits, "{text}");
        }
    }

    #[test]
    fn completes_abbreviations() {
        assert_eq!(complete("三千二"), "三千二百");
        assert_eq!(complete("四万三"), "四万三千");
        assert_eq!(complete("万三"), "万分之三");
        assert_eq!(complete("二十"), "二十");
        assert_eq!(complete("三亿二"), "三亿二千万");
    }
}
