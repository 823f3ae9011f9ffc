//! The sentence and the fine of a judgment (`judge_extraction.py`): `calc_time_sum`, the
//! months of prison, detention or control it imposes (240 for life, 10001 for death, so that a
//! death sentence shows as more than 10000), and `calc_amt_sum`, the yuan of its fines; -1 when
//! none is found. Both look in the judgment section first, then in the whole raw text.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use num_bigint::BigInt;
use regex::Regex;

use super::numbers::{take_numbers, QUOTED};
use super::pytext::remove_while_iterating;
use super::segment::Sections;
use super::LegalError;

struct Patterns {
    /// `管制`, `拘役`, `有期徒刑`, each followed by 1 to 7 characters and 年 or 月.
    terms: Vec<Regex>,
    /// Where a term's text is cut (punctuation, 以, 缓, 至).
    term_end: Regex,
    /// `罚金` followed by 1 to 15 characters and 元.
    fine: Regex,
    /// Where a fine's text is cut.
    fine_end: Regex,
}

/// The penalties counted by their name alone (upstream's `judge_list[4:]`).
const NAMED: [&str; 6] = [
    "无期徒刑",
    "死刑",
    "无罪",
    "免予刑事处罚",
    "免于刑事处罚",
    "免予刑事处分",
];

fn patterns() -> Result<&'static Patterns, LegalError> {
    static PATTERNS: OnceLock<Result<Patterns, String>> = OnceLock::new();
    let built = PATTERNS.get_or_init(|| {
        let re = |p: &str| Regex::new(p).map_err(|e| e.to_string());
        Ok(Patterns {
            terms: ["管制", "拘役", "有期徒刑"]
                .iter()
                .map(|name| re(&format!("{name}.{{1,7}}[年月]")))
                .collect::<Result<_, _>>()?,
            term_end: re("[,;，。！？、；：（以缓至]")?,
            fine: re("罚金.{1,15}元")?,
            fine_end: re("[，。！？、；：以已至（]")?,
        })
    });
    built.as_ref().map_err(|e| LegalError::Pattern(e.clone()))
}

/// `text` up to the first match of `end`, if any.
fn cut(text: &str, end: &Regex) -> String {
    match end.find(text) {
        Some(found) => text[..found.start()].to_string(),
        None => text.to_string(),
    }
}

/// `get_time_string_from_text`: every term's text, then every named penalty.
fn term_texts(doc: &str, p: &Patterns) -> Vec<String> {
    let mut found = Vec::new();
    for term in &p.terms {
        found.extend(term.find_iter(doc).map(|m| cut(m.as_str(), &p.term_end)));
    }
    for name in NAMED {
        found.extend(doc.matches(name).map(String::from));
    }
    found
}

/// `get_amt_string_from_text`: every fine's text, cut, those without 元 removed as upstream's
/// loop removes them, commas dropped.
fn fine_texts(doc: &str, p: &Patterns) -> Vec<String> {
    let mut found: Vec<String> = p
        .fine
        .find_iter(doc)
        .map(|m| cut(m.as_str(), &p.fine_end))
        .collect();
    remove_while_iterating(&mut found, |text| !text.contains('元'));
    found
        .into_iter()
        .map(|text| text.replace(',', ""))
        .collect()
}

/// The distinct texts `extract` finds in the judgment, or else in the whole raw text.
fn distinct(
    raw: &str,
    sections: &Sections,
    extract: impl Fn(&str) -> Vec<String>,
) -> BTreeSet<String> {
    let mut found = extract(&sections.judgment);
    if found.is_empty() {
        found = extract(raw);
    }
    found.into_iter().collect()
}

/// Python's `int(text)` of a digit string, or why it raises.
fn python_int(text: &str) -> Result<BigInt, LegalError> {
    let digits = text.strip_prefix('+').unwrap_or(text);
    let body = digits.strip_prefix('-').unwrap_or(digits);
    if body.is_empty() || !body.bytes().all(|b| b.is_ascii_digit()) {
        return Err(LegalError::Int(mb_core::excerpt(text, QUOTED).into_owned()));
    }
    digits
        .parse()
        .map_err(|_| LegalError::Int(mb_core::excerpt(text, QUOTED).into_owned()))
}

/// `calc_time_sum`: the months of the sentence, or -1 when no penalty is named.
pub(crate) fn time_sum(raw: &str, sections: &Sections) -> Result<BigInt, LegalError> {
    let p = patterns()?;
    let texts = distinct(raw, sections, |doc| term_texts(doc, p));
    if texts.is_empty() {
        return Ok(BigInt::from(-1));
    }
    let mut sum = BigInt::from(0);
    for text in &texts {
        let numbers = take_numbers(text)?;
        let (years, months) = (text.contains('年'), text.contains('月'));
        sum += match numbers.as_slice() {
            [first, second] if years && months => python_int(first)? * 12 + python_int(second)?,
            [first, _] => python_int(first)?,
            [only] if years => python_int(only)? * 12,
            [only] if months => python_int(only)?,
            [] if text.contains("无期徒刑") => BigInt::from(240),
            [] if text.contains("死刑") => BigInt::from(10001),
            _ => BigInt::from(0),
        };
    }
    Ok(sum)
}

/// `calc_amt_sum`: the yuan of the fines (each text with one number; a text with a point
/// counts that number's whole part), or -1 when no fine is found.
pub(crate) fn amount_sum(raw: &str, sections: &Sections) -> Result<BigInt, LegalError> {
    let p = patterns()?;
    let texts = distinct(raw, sections, |doc| fine_texts(doc, p));
    if texts.is_empty() {
        return Ok(BigInt::from(-1));
    }
    let mut sum = BigInt::from(0);
    for text in &texts {
        if let [only] = take_numbers(text)?.as_slice() {
            let whole = if text.contains('.') {
                only.split('.').next().unwrap_or_default()
            } else {
                only.as_str()
            };
            sum += python_int(whole)?;
        }
    }
    Ok(sum)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judged(judgment: &str) -> Sections {
        Sections {
            reasoning: String::new(),
            judgment: judgment.to_string(),
        }
    }

    #[test]
    fn months_of_each_distinct_term() {
        let s = judged(
            "被告人甲犯盗窃罪，判处有期徒刑一年六个月，缓刑二年；被告人乙判处有期徒刑一年六个月。",
        );
        assert_eq!(time_sum("", &s).unwrap(), BigInt::from(18));
        let s = judged("判处拘役三个月，并处罚金。被告人乙判处管制一年");
        assert_eq!(time_sum("", &s).unwrap(), BigInt::from(15));
        let s = judged("判处死刑，剥夺政治权利终身");
        assert_eq!(time_sum("", &s).unwrap(), BigInt::from(10001));
        assert_eq!(time_sum("", &judged("无")).unwrap(), BigInt::from(-1));
        // The whole raw text when the judgment names none.
        assert_eq!(
            time_sum("判处无期徒刑", &judged("")).unwrap(),
            BigInt::from(240)
        );
    }

    #[test]
    fn yuan_of_each_distinct_fine() {
        let s = judged("并处罚金人民币5,000元；并处罚金人民币1.5万元。");
        assert_eq!(amount_sum("", &s).unwrap(), BigInt::from(20000));
        let s = judged("并处罚金人民币二千元");
        assert_eq!(amount_sum("", &s).unwrap(), BigInt::from(2000));
        assert_eq!(
            amount_sum("", &judged("并处罚金")).unwrap(),
            BigInt::from(-1)
        );
    }

    #[test]
    fn int_is_pythons() {
        assert_eq!(python_int("+07").unwrap(), BigInt::from(7));
        assert_eq!(python_int("-3").unwrap(), BigInt::from(-3));
        assert!(python_int("0.5").is_err() && python_int("").is_err());
    }
}
