//! Removing reasoning blocks from model output.
//!
//! Reasoning models (Qwen3, DeepSeek-R1) put their chain of thought in `<think>…</think>`
//! before the answer; some servers strip the opening tag and leave only the closing one.
//! Memory operations and answers only want what follows.

const OPEN: &str = "<think>";
const CLOSE: &str = "</think>";

/// The text without its `<think>` blocks, trimmed.
///
/// Every `<think>…</think>` block is removed; text before a lone `</think>` (an opening tag the
/// server already stripped) is reasoning too; an unclosed `<think>` runs to the end (the model
/// was cut off while thinking, so there is no answer).
pub fn strip_think(text: &str) -> String {
    let mut rest = text;
    if let (Some(close), open) = (rest.find(CLOSE), rest.find(OPEN)) {
        if open.is_none_or(|open| close < open) {
            rest = &rest[close + CLOSE.len()..];
        }
    }
    let mut out = String::with_capacity(rest.len());
    while let Some(open) = rest.find(OPEN) {
        out.push_str(&rest[..open]);
        let after = &rest[open + OPEN.len()..];
        match after.find(CLOSE) {
            Some(close) => rest = &after[close + CLOSE.len()..],
            None => {
                rest = "";
                break;
            }
        }
    }
    out.push_str(rest);
    out.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::strip_think;

    #[test]
    fn removes_blocks_and_keeps_the_answer() {
        assert_eq!(strip_think("<think>\nhmm, 2+2\n</think>\n\n4"), "4");
        assert_eq!(
            strip_think("a <think>x</think> b <think>y</think> c"),
            "a  b  c"
        );
        assert_eq!(strip_think("plain answer"), "plain answer");
    }

    #[test]
    fn handles_stripped_opening_and_unclosed_blocks() {
        assert_eq!(strip_think("reasoning only</think>answer"), "answer");
        assert_eq!(strip_think("answer <think>cut off mid-thought"), "answer");
        assert_eq!(strip_think("<think>never finished"), "");
    }
}
