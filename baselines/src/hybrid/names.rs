//! Names and quoted phrases of a question as a boost: a unit holding the entities the
//! question names ("the LGBTQ support group", "Oscar", "\"Charlotte's Web\"") gains
//! `name_weight` times the share of them it holds, so that matching the entity outweighs
//! matching the question's common words.

/// The names a question holds, lowercased: its quoted phrases, and its capitalized words but
/// the first (which every sentence capitalizes) and `I`.
pub fn names(question: &str) -> Vec<String> {
    let mut out: Vec<String> = question
        .split('"')
        .skip(1)
        .step_by(2)
        .map(|phrase| phrase.trim().to_lowercase())
        .filter(|phrase| !phrase.is_empty())
        .collect();
    let words = question
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty());
    for word in words.skip(1) {
        let word = word.trim_end_matches("'s").trim_matches('\'');
        if word != "I" && word.chars().next().is_some_and(char::is_uppercase) {
            let lower = word.to_lowercase();
            if !out.contains(&lower) {
                out.push(lower);
            }
        }
    }
    out
}

/// The share of `names` that `text` holds as whole words (case ignored), 0 to 1.
pub fn share(names: &[String], text: &str) -> f32 {
    if names.is_empty() {
        return 0.0;
    }
    let text = text.to_lowercase();
    let held = names.iter().filter(|name| holds(&text, name)).count();
    held as f32 / names.len() as f32
}

/// Whether `name` occurs in `text` with no letter or digit right before or after it.
fn holds(text: &str, name: &str) -> bool {
    let bounded = |c: Option<char>| !c.is_some_and(char::is_alphanumeric);
    text.match_indices(name).any(|(at, _)| {
        bounded(text[..at].chars().next_back()) && bounded(text[at + name.len()..].chars().next())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_quoted_phrases_and_capitalized_words_past_the_first() {
        assert_eq!(
            names("When did Caroline go to the LGBTQ support group?"),
            ["caroline", "lgbtq"]
        );
        assert_eq!(
            names("What did Melanie's son read in \"Charlotte's Web\" and why?"),
            ["charlotte's web", "melanie", "charlotte", "web"]
        );
        assert!(names("What do I like?").is_empty());
        assert!(names("").is_empty());
    }

    #[test]
    fn a_unit_holds_a_name_as_a_whole_word() {
        let asked = vec!["oscar".to_string(), "lgbtq".to_string()];
        assert_eq!(share(&asked, "Oscar chased the ball"), 0.5);
        assert_eq!(share(&asked, "the LGBTQ group met Oscar."), 1.0);
        assert_eq!(share(&asked, "Oscars night"), 0.0);
        assert_eq!(share(&[], "Oscar"), 0.0);
    }
}
