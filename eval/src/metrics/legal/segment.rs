//! Upstream's segmenter of a criminal judgment (`xingshi.py`, `DataSegmentXingshi` with
//! `punctuation_replace=True`): the text normalised, then cut from the front into heading,
//! facts, reasoning, judgment and appendix, each part removed from what is left before the next
//! is looked for. The legal metrics use the reasoning and the judgment.
//!
//! Upstream searches with `.*?(?=P)` (everything before the first place `P` matches) or
//! `.*?(P)` (up to the end of that match) under DOTALL; both are the leftmost match of `P`,
//! which is what Rust's `find` returns. Its `$` (end of text, or before a final newline) is
//! written out by hand.

use std::sync::OnceLock;

use regex::Regex;

use super::html::soup_text;
use super::LegalError;
use mb_upstream::python::strip as python_strip;

/// The parts of a judgment upstream's metrics read.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Sections {
    /// `reason`: from the court's opinion to "判决如下" (or all that is left when absent).
    pub reasoning: String,
    /// `judgment`: the sentence itself, up to the appeal notice, the judges' names or the
    /// appended statutes.
    pub judgment: String,
}

/// How a search pattern's match bounds a part.
#[derive(Clone, Copy)]
enum Bound {
    /// The part ends where the match starts (`.*?(?=P)`).
    Before,
    /// The part ends where the match ends (`.*?(P)`).
    Through,
}

struct Patterns {
    heading: Vec<Regex>,
    heading_fallback: Regex,
    fact: Regex,
    reason: Vec<Regex>,
    judgment: Vec<Regex>,
    lone_comma_digit: Regex,
}

const CJK: &str = r"[\x{4e00}-\x{9fa5}]";

fn compile(pattern: &str) -> Result<Regex, String> {
    Regex::new(&pattern.replace("{CJK}", CJK)).map_err(|e| e.to_string())
}

fn patterns() -> Result<&'static Patterns, LegalError> {
    static PATTERNS: OnceLock<Result<Patterns, String>> = OnceLock::new();
    let built = PATTERNS.get_or_init(|| {
        let all = |list: &[&str]| {
            list.iter()
                .map(|p| compile(p))
                .collect::<Result<Vec<_>, _>>()
        };
        Ok(Patterns {
            heading: all(&["审理终结{CJK}{0,10}。", "公开开庭审理{CJK}{0,10}。"])?,
            heading_fallback: compile(
                r"{CJK}{0,10}(公诉|抗诉)机关[\x{4e00}-\x{9fa5}，、]{0,30}(认为|指控)",
            )?,
            fact: compile("本院认为")?,
            reason: all(&["判决如下[:：,，\n]", "判决如下", "裁定(如下)?[:：\n]"])?,
            judgment: all(&[
                "如{CJK}{0,3}不服本判决",
                r"\n\s*本判决为终审判决",
                "如{CJK}{0,5}未按本判决指定的期间{CJK}{0,5}给付金钱义务",
                r"\n\s*(代理)?审[\s]{0,3}判[\s]{0,3}长",
                r"\n\s*(代理)?审[\s]{0,3}判[\s]{0,3}员",
                "附录",
                "附：",
                "附{CJK}{0,10}法律{CJK}{0,10}",
                "附{CJK}{0,10}：",
                r"\n\s*本案[^\n]{0,10}法律",
                "\n《",
            ])?,
            lone_comma_digit: compile(r"^\d$")?,
        })
    });
    built.as_ref().map_err(|e| LegalError::Pattern(e.clone()))
}

/// The reasoning and judgment of `text`, as upstream's segmenter cuts them.
pub fn sections(text: &str) -> Result<Sections, LegalError> {
    let p = patterns()?;
    let mut rest = normalise(text, p)?;
    let mut heading = first_part(&p.heading, &rest, Bound::Through);
    if heading.chars().all(char::is_whitespace) {
        heading = first_part(
            std::slice::from_ref(&p.heading_fallback),
            &rest,
            Bound::Before,
        );
    }
    remove(&mut rest, &heading);
    let fact = first_part(std::slice::from_ref(&p.fact), &rest, Bound::Before);
    remove(&mut rest, &fact);
    let mut reasoning = first_part(&p.reason, &rest, Bound::Through);
    if reasoning.is_empty() {
        reasoning = rest.clone();
    }
    remove(&mut rest, &reasoning);
    let mut judgment = first_part(&p.judgment, &rest, Bound::Before);
    if judgment.is_empty() && !p.judgment.iter().any(|re| re.is_match(&rest)) {
        // The last pattern, `$`: the end of the text, or just before a final newline.
        judgment = rest.strip_suffix('\n').unwrap_or(&rest).to_string();
    }
    if judgment.is_empty() {
        judgment = rest;
    }
    Ok(Sections {
        reasoning,
        judgment,
    })
}

/// The prefix of `content` the first pattern (in list order) that matches anywhere bounds, or
/// empty when none matches.
fn first_part(list: &[Regex], content: &str, bound: Bound) -> String {
    for re in list {
        if let Some(found) = re.find(content) {
            let end = match bound {
                Bound::Before => found.start(),
                Bound::Through => found.end(),
            };
            return content[..end].to_string();
        }
    }
    String::new()
}

/// `del_fun`: every occurrence of a part that is not blank removed from what is left.
fn remove(rest: &mut String, part: &str) {
    if !python_strip(part).is_empty() {
        *rest = rest.replace(part, "");
    }
}

/// `punctuation_replace_fun`: ASCII punctuation to full-width, spaces and a few HTML leftovers
/// dropped, a comma not between digits made full-width, then BeautifulSoup's text.
fn normalise(text: &str, p: &Patterns) -> Result<String, LegalError> {
    let data = text
        .replace(':', "：")
        .replace(' ', "")
        .replace('(', "（")
        .replace(')', "）")
        .replace(['\u{3000}', '\u{a0}'], " ")
        .replace("<p>", "")
        .replace("</p>", "")
        .replace("<br>", "")
        .replace("&#xD;", "")
        .replace('\u{fffd}', "");
    let is_digit = |c: Option<char>| {
        c.is_some_and(|c| p.lone_comma_digit.is_match(c.encode_utf8(&mut [0; 4])))
    };
    let chars: Vec<char> = data.chars().collect();
    let mut out = String::with_capacity(data.len());
    for (at, &c) in chars.iter().enumerate() {
        let before = at.checked_sub(1).map(|b| chars[b]);
        let after = chars.get(at + 1).copied();
        if c == ',' && !is_digit(before) && !is_digit(after) {
            out.push('，');
        } else {
            out.push(c);
        }
    }
    soup_text(&out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_reasoning_and_judgment() {
        let text = "某某人民法院\n刑事判决书\n公诉机关某某检察院。\n经审理查明，被告人甲盗窃。\n\
                    本院认为，被告人甲构成盗窃罪。依照法律，判决如下：\n被告人甲犯盗窃罪，判处有期徒刑一年。\n\
                    如不服本判决，可上诉。\n审判长 乙";
        let s = sections(text).unwrap();
        assert_eq!(
            s.reasoning,
            "本院认为，被告人甲构成盗窃罪。依照法律，判决如下："
        );
        assert_eq!(s.judgment, "\n被告人甲犯盗窃罪，判处有期徒刑一年。\n");
    }

    #[test]
    fn without_sections_everything_is_reasoning() {
        let s = sections("  被告人甲犯盗窃罪,判处拘役三个月\n").unwrap();
        assert_eq!(s.reasoning, "被告人甲犯盗窃罪，判处拘役三个月");
        assert_eq!(s.judgment, "");
        assert_eq!(sections("").unwrap(), Sections::default());
    }

    #[test]
    fn commas_between_digits_stay() {
        let p = patterns().unwrap();
        assert_eq!(
            normalise("罚金1,000元,a,1 b,2", p).unwrap(),
            "罚金1,000元，a,1b,2"
        );
    }
}
