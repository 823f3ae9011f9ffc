//! The articles of the Criminal Law a judgment cites (`law_extraction.py`,
//! `get_penalcode_index_from_text`): citations of 《中华人民共和国刑法》 or 《刑法》 found in the
//! reasoning (else in the whole raw text), and in each every "第…条" with a Chinese numeral,
//! as its number in digits.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use regex::Regex;

use super::numbers::take_numbers;
use super::pytext::RE_SPACE;
use super::segment::Sections;
use super::LegalError;

struct Patterns {
    citations: Vec<Regex>,
    article: Regex,
}

fn patterns() -> Result<&'static Patterns, LegalError> {
    static PATTERNS: OnceLock<Result<Patterns, String>> = OnceLock::new();
    let built = PATTERNS.get_or_init(|| {
        let re = |p: &str| Regex::new(p).map_err(|e| e.to_string());
        Ok(Patterns {
            citations: vec![
                re("《中华人民共和国刑法》第.*?[。《判附规]")?,
                re("《刑法》第.*?[。《判附规]")?,
                re(&format!(
                    "《中华人民共和国刑法》{RE_SPACE}?[零一二三四五六七八九十第]+.*?[。《判附规]"
                ))?,
            ],
            article: re("第[一二三四五六七八九零十百]+条")?,
        })
    });
    built.as_ref().map_err(|e| LegalError::Pattern(e.clone()))
}

/// Every citation any pattern finds in `doc`, once each.
fn citations(doc: &str, p: &Patterns) -> BTreeSet<String> {
    p.citations
        .iter()
        .flat_map(|re| re.find_iter(doc).map(|m| m.as_str().to_string()))
        .collect()
}

/// The article numbers cited, in digits (a numeral chinese2digits fails on, or reads as
/// several numbers, is skipped as upstream skips it).
pub(crate) fn article_numbers(raw: &str, sections: &Sections) -> Result<Vec<String>, LegalError> {
    let p = patterns()?;
    let mut found = citations(&sections.reasoning, p);
    if found.is_empty() {
        found = citations(raw, p);
    }
    let mut numbers = BTreeSet::new();
    for citation in &found {
        for article in p.article.find_iter(citation) {
            if let Ok(digits) = take_numbers(article.as_str()) {
                if let [only] = digits.as_slice() {
                    numbers.insert(only.clone());
                }
            }
        }
    }
    Ok(numbers.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn articles_of_the_cited_law() {
        let s = Sections {
            reasoning: "依照《中华人民共和国刑法》第二百六十四条、第五十二条、第六十七条第三款之规定，判决如下".into(),
            judgment: String::new(),
        };
        assert_eq!(
            article_numbers("", &s).unwrap(),
            ["264", "52", "67"]
                .map(String::from)
                .iter()
                .cloned()
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect::<Vec<_>>()
        );
        let none = Sections::default();
        assert!(article_numbers("依照《刑事诉讼法》第十五条", &none)
            .unwrap()
            .is_empty());
        assert_eq!(
            article_numbers("依照《刑法》第十条。", &none).unwrap(),
            ["10"]
        );
    }
}
