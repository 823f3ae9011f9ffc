//! The deterministic parts of upstream's judge-based metrics: exact-match shortcuts and the
//! parsing of judges' replies.

/// DialSim's shortcut before its LLM judge: the answer equals the gold answer (or the gold
/// answer with a full stop) after lowercasing and trimming.
pub fn dialsim_exact_match(response: &str, golden: &str) -> bool {
    let response = response.trim().to_lowercase();
    let golden = golden.trim().to_lowercase();
    response == golden || response == format!("{golden}.")
}

/// Whether a DialSim judge's reply is one upstream accepts, and if so whether it says correct.
pub fn dialsim_verdict(reply: &str) -> Option<bool> {
    match reply.trim().to_lowercase().as_str() {
        "correct" | "correct." => Some(true),
        "wrong" | "wrong." => Some(false),
        _ => None,
    }
}

/// The first standalone integer from 1 to 10 in `text`, as Python's `\b([1-9]|10)\b` finds it.
pub fn first_score_1_to_10(text: &str) -> Option<u8> {
    let chars: Vec<char> = text.chars().collect();
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let boundary_after = |i: usize| chars.get(i).is_none_or(|c| !is_word(*c));
    for i in 0..chars.len() {
        if i > 0 && is_word(chars[i - 1]) {
            continue;
        }
        match chars[i] {
            '1'..='9' if boundary_after(i + 1) => return chars[i].to_digit(10).map(|d| d as u8),
            '1' if chars.get(i + 1) == Some(&'0') && boundary_after(i + 2) => return Some(10),
            _ => {}
        }
    }
    None
}

/// NFCats' judge score: the first 1–10 integer after the last `###Score of the answer:` marker
/// (or in the whole reply when the marker is missing).
pub fn nfcats_score(reply: &str) -> Option<u8> {
    const MARKER: &str = "###Score of the answer:";
    let tail = reply
        .rfind(MARKER)
        .map_or(reply, |at| &reply[at + MARKER.len()..]);
    first_score_1_to_10(tail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dialsim_shortcuts() {
        assert!(dialsim_exact_match(" Ross ", "ross"));
        assert!(dialsim_exact_match("Ross.", "Ross"));
        assert!(!dialsim_exact_match("It was Ross", "Ross"));
        assert_eq!(dialsim_verdict(" Correct. "), Some(true));
        assert_eq!(dialsim_verdict("wrong"), Some(false));
        assert_eq!(dialsim_verdict("Correct, because"), None);
    }

    #[test]
    fn scores_follow_python_word_boundaries() {
        assert_eq!(first_score_1_to_10("Score: 10/10"), Some(10));
        assert_eq!(first_score_1_to_10("rated 100, then 7"), Some(7));
        assert_eq!(first_score_1_to_10("0 and 15 and x5 and 3"), Some(3));
        assert_eq!(first_score_1_to_10("4.5 points"), Some(4));
        assert_eq!(first_score_1_to_10("第5分"), None);
        assert_eq!(first_score_1_to_10("none"), None);
        assert_eq!(
            nfcats_score("###Score of the answer: 2 (draft)\n###Score of the answer: 4"),
            Some(4)
        );
        assert_eq!(nfcats_score("I give it 5"), Some(5));
    }
}
