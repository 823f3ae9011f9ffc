//! The charges a judgment convicts of (`crime_extraction.py`, `get_crime`): every "犯…罪" of
//! the judgment section (else of the whole raw text), split by its numbered items or
//! sentences, each normalised to a charge of upstream's lexicon: the name itself, a charge a
//! keyword points at whose characters it contains in order, or the nearest name by
//! Levenshtein distance (under 0.4 of the longer length, for names under 30 characters).

use std::collections::BTreeSet;
use std::sync::OnceLock;

use mb_upstream::JudgeLexicon;
use regex::Regex;

use super::numbers::QUOTED;
use super::segment::Sections;
use super::LegalError;

struct Patterns {
    charge: Regex,
    items: Regex,
    sentences: Regex,
}

fn patterns() -> Result<&'static Patterns, LegalError> {
    static PATTERNS: OnceLock<Result<Patterns, String>> = OnceLock::new();
    let built = PATTERNS.get_or_init(|| {
        let re = |p: &str| Regex::new(p).map_err(|e| e.to_string());
        Ok(Patterns {
            charge: re("犯([^罪犯，。；《》（）]+?罪)")?,
            items: re("[一二三四五六七八九十]{1,3}、|（[一二三四五六七八九十]{1,3}）")?,
            sentences: re("[；。]")?,
        })
    });
    built.as_ref().map_err(|e| LegalError::Pattern(e.clone()))
}

/// `get_crime`: the charges of the judgment, or of the whole raw text when it has none.
pub(crate) fn charges(
    lexicon: &JudgeLexicon,
    raw: &str,
    sections: &Sections,
) -> Result<Vec<String>, LegalError> {
    let mut found = charges_in(lexicon, &sections.judgment)?;
    if found.is_empty() {
        found = charges_in(lexicon, raw)?;
    }
    Ok(found.into_iter().collect())
}

/// `get_crime_from_text`: the normalised charges of `text` (unrecognised ones dropped).
fn charges_in(lexicon: &JudgeLexicon, text: &str) -> Result<BTreeSet<String>, LegalError> {
    let p = patterns()?;
    let mut parts: Vec<&str> = p.items.split(text).collect();
    if parts.len() == 1 {
        parts = p.sentences.split(parts[0]).collect();
    }
    let mut raw = BTreeSet::new();
    for part in parts {
        let part = part.find("撤销").map_or(part, |at| &part[..at]);
        let part = part.replace("罪犯", "");
        for found in p.charge.captures_iter(&part) {
            if let Some(name) = found.get(1) {
                raw.insert(name.as_str().to_string());
            }
        }
    }
    let mut labels = BTreeSet::new();
    for name in &raw {
        let label = normalise(lexicon, name)?;
        if !label.is_empty() {
            labels.insert(label);
        }
    }
    Ok(labels)
}

/// `process_special_case`: `name` as a charge of the lexicon, or empty.
fn normalise(lexicon: &JudgeLexicon, name: &str) -> Result<String, LegalError> {
    let mut l = name.replace(' ', "");
    if let Some(open) = l.find('（') {
        let after = l.find('）').map_or(0, |close| close + '）'.len_utf8());
        l = format!("{}{}", &l[..open], &l[after..]);
    }
    match l.chars().next() {
        Some('有' | '的' | '了') => {
            l.remove(0);
        }
        Some(_) => {}
        None => {
            return Err(LegalError::EmptyCharge(
                mb_core::excerpt(name, QUOTED).into_owned(),
            ))
        }
    }
    if lexicon.charges.contains(&l) {
        return Ok(l);
    }
    for table in [&lexicon.keywords, &lexicon.rare_keywords] {
        for (keyword, names) in table {
            if l.contains(keyword.as_str()) {
                if let Some(hit) = names.iter().find(|n| in_order(&l, n)) {
                    return Ok(hit.clone());
                }
            }
        }
    }
    let length = l.chars().count();
    if length < 30 {
        let mut best = (1.0_f64, "");
        for candidate in &lexicon.charges {
            let longer = length.max(candidate.chars().count());
            let distance = levenshtein(&l, candidate) as f64 / longer as f64;
            if distance < best.0 {
                best = (distance, candidate);
            }
        }
        if best.0 < 0.4 {
            return Ok(best.1.to_string());
        }
    }
    Ok(String::new())
}

/// `match_sub_seq(a, b)`: whether `a`'s characters appear in `b` in order (upstream's loop
/// returns false once `b` is exhausted, even when `a` is too).
fn in_order(a: &str, b: &str) -> bool {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.is_empty() || b.is_empty() {
        return false;
    }
    let (mut i, mut j) = (0, 0);
    loop {
        if a[i] == b[j] {
            i += 1;
        }
        j += 1;
        if i == a.len() {
            return true;
        }
        if j == b.len() {
            return false;
        }
    }
}

/// The Levenshtein distance between `a` and `b` in code points.
fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitute = diagonal + usize::from(ca != cb);
            diagonal = row[j + 1];
            row[j + 1] = substitute.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lexicon() -> JudgeLexicon {
        let names = ["盗窃罪", "故意伤害罪", "窝藏、包庇罪", "抢劫罪"];
        JudgeLexicon {
            charges: names.map(String::from).to_vec(),
            keywords: vec![("包庇".into(), vec!["窝藏、包庇罪".into()])],
            rare_keywords: vec![],
        }
    }

    #[test]
    fn charges_are_normalised() {
        let lex = lexicon();
        assert_eq!(normalise(&lex, "盗窃罪").unwrap(), "盗窃罪");
        assert_eq!(normalise(&lex, "有故意伤害罪").unwrap(), "故意伤害罪");
        assert_eq!(normalise(&lex, "包庇罪").unwrap(), "窝藏、包庇罪");
        assert_eq!(normalise(&lex, "抢动罪").unwrap(), "抢劫罪");
        assert_eq!(normalise(&lex, "完全不同的东西罪").unwrap(), "");
    }

    #[test]
    fn items_then_sentences() {
        let lex = lexicon();
        let s = Sections {
            reasoning: String::new(),
            judgment:
                "一、被告人甲犯盗窃罪，判处…；二、被告人乙犯抢劫罪。三、撤销被告人丙犯故意伤害罪"
                    .into(),
        };
        assert_eq!(charges(&lex, "", &s).unwrap(), ["抢劫罪", "盗窃罪"]);
        assert!(charges(&lex, "无", &Sections::default())
            .unwrap()
            .is_empty());
    }

    #[test]
    fn distances_and_order() {
        assert_eq!(levenshtein("盗窃罪", "抢劫罪"), 2);
        assert_eq!(levenshtein("", "abc"), 3);
        assert!(in_order("包庇罪", "窝藏、包庇罪"));
        assert!(!in_order("包罪庇", "窝藏、包庇罪"));
    }
}
