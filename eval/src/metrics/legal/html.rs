//! What upstream's segmenter gets back from BeautifulSoup (`html.parser`) after its punctuation
//! pass: `' '.join(soup.stripped_strings)` with `style` and `script` removed. For text without
//! markup that is the text stripped as Python strips it. Text that `html.parser` would read as
//! markup (a tag, a comment, a declaration or an entity) is refused rather than guessed at.

use super::LegalError;
use mb_upstream::python::strip as python_strip;

/// The text BeautifulSoup's stripped strings give for `text`, or [`LegalError::Markup`] when
/// `text` holds something `html.parser` would parse as markup.
pub(crate) fn soup_text(text: &str) -> Result<String, LegalError> {
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let next = chars.peek().copied();
        let markup = match (c, next) {
            ('<', Some(n)) => n.is_ascii_alphabetic() || matches!(n, '/' | '!' | '?'),
            ('&', Some(n)) => n.is_ascii_alphabetic() || n == '#',
            _ => false,
        };
        if markup {
            let at: String = [Some(c), next].iter().flatten().collect();
            return Err(LegalError::Markup(at));
        }
    }
    Ok(python_strip(text).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_stripped_as_python_strips() {
        assert_eq!(soup_text("\u{1c} 判决\r\n如下 \n").unwrap(), "判决\r\n如下");
        assert_eq!(
            soup_text("1 < 2 & 3 <<中> a&").unwrap(),
            "1 < 2 & 3 <<中> a&"
        );
    }

    #[test]
    fn markup_is_refused() {
        for text in ["a<b>c", "x</p>", "<!-- c -->", "a&amp;b", "&#65;", "<?x>"] {
            assert!(
                matches!(soup_text(text), Err(LegalError::Markup(_))),
                "{text}"
            );
        }
    }
}
