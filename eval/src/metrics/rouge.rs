//! LexEval's ROUGE-L: jieba tokens scored by the `rouge` PyPI package's (pltrdy) `rouge-l` F.
//!
//! Upstream normalizes both texts (lowercase; ASCII and Chinese punctuation and all whitespace
//! removed), segments them with jieba's precise mode, and scores with `Rouge().get_scores`.
//! That package's ROUGE-L counts **distinct** tokens: `m` and `n` are the numbers of distinct
//! reference and hypothesis tokens, and the LCS contributes the number of distinct tokens on
//! the one LCS its back-tracking reconstructs. Any exception scores 0.0: empty inputs, and the
//! `RecursionError` its recursive back-tracking raises once the path is longer than Python's
//! recursion limit allows — long outputs really do score 0 upstream, and here.

use std::collections::HashSet;

use jieba_rs::Jieba;

/// Back-tracking steps that fit under Python's default recursion limit of 1000 frames once the
/// frames of upstream's evaluation call chain are on the stack. The exact threshold upstream
/// depends on its caller's depth (a few frames either way); paths this long are rare outside
/// multi-hundred-token answers.
pub const PY_RECURSION_BUDGET: usize = 980;

/// LexEval's `rougel` of a response against the golden answer.
pub fn lexeval_rouge_l(jieba: &Jieba, response: &str, golden: &str) -> f64 {
    let hypothesis = segment(jieba, &normalize(response));
    let reference = segment(jieba, &normalize(golden));
    let hyp: Vec<&str> = hypothesis.iter().map(String::as_str).collect();
    let refs: Vec<&str> = reference.iter().map(String::as_str).collect();
    rouge_l(&hyp, &refs).unwrap_or(0.0)
}

/// Lowercase, drop ASCII punctuation and the full-width and CJK punctuation LexEval's scorer
/// drops, and every whitespace character. The set is upstream's, character for character: it
/// drops the closing title mark 》 but keeps the opening 《, and keeps ·, 〈 and 〉 (found by
/// the benchmark API's differential, py/tests/test_benchmark_upstream.py).
pub fn normalize(text: &str) -> String {
    const CHINESE_PUNCTUATION: &str = "！？｡。＂＃＄％＆＇（）＊＋，－／：；＜＝＞＠［＼］＾＿｀｛｜｝～｟｠｢｣､、〃》「」『』【】〔〕〖〗〘〙〚〛〜〝〞〟〰〾〿–—‘’‛“”„‟…‧﹏";
    text.to_lowercase()
        .chars()
        .filter(|c| !c.is_ascii_punctuation() && !CHINESE_PUNCTUATION.contains(*c))
        .filter(|c| !c.is_whitespace())
        .collect()
}

/// jieba precise mode (with HMM), as Python's `jieba.cut(text)`.
pub fn segment(jieba: &Jieba, text: &str) -> Vec<String> {
    jieba
        .cut(text, true)
        .into_iter()
        .map(|token| token.word.to_string())
        .collect()
}

/// The package's `rouge-l` F of one hypothesis against one reference, each a single sentence
/// of tokens; `None` where the package raises (empty input, recursion too deep).
pub fn rouge_l(hypothesis: &[&str], reference: &[&str]) -> Option<f64> {
    if hypothesis.is_empty() || reference.is_empty() {
        return None;
    }
    let lcs = lcs_tokens(reference, hypothesis)?;
    let m = reference.iter().collect::<HashSet<_>>().len() as f64;
    let n = hypothesis.iter().collect::<HashSet<_>>().len() as f64;
    let llcs = lcs.len() as f64;
    let recall = llcs / m;
    let precision = llcs / n;
    Some(2.0 * (precision * recall) / (precision + recall + 1e-8))
}

/// Distinct tokens on the LCS that the package's back-tracking reconstructs (`x` is the
/// reference, `y` the hypothesis), or `None` if that back-tracking would overflow Python's stack.
fn lcs_tokens<'a>(x: &[&'a str], y: &[&str]) -> Option<HashSet<&'a str>> {
    let (rows, cols) = (x.len() + 1, y.len() + 1);
    let mut table = vec![0u32; rows * cols];
    for i in 1..rows {
        for j in 1..cols {
            table[i * cols + j] = if x[i - 1] == y[j - 1] {
                table[(i - 1) * cols + j - 1] + 1
            } else {
                table[(i - 1) * cols + j].max(table[i * cols + j - 1])
            };
        }
    }
    let (mut i, mut j) = (x.len(), y.len());
    let mut tokens = HashSet::new();
    let mut depth = 1;
    while i > 0 && j > 0 {
        if x[i - 1] == y[j - 1] {
            tokens.insert(x[i - 1]);
            i -= 1;
            j -= 1;
        } else if table[(i - 1) * cols + j] > table[i * cols + j - 1] {
            i -= 1;
        } else {
            j -= 1;
        }
        depth += 1;
        if depth > PY_RECURSION_BUDGET {
            return None;
        }
    }
    Some(tokens)
}

/// ROUGE-L F1 as Hugging Face `evaluate`'s `rouge` (Google's `rouge_score`, no stemming)
/// computes it: both texts lower-cased, every run of characters other than ASCII letters and
/// digits a separator, the longest common subsequence of the tokens against each text's length;
/// 0 when either has no token.
pub fn rouge_l_f1(hypothesis: &str, reference: &str) -> f64 {
    let tokens = |text: &str| -> Vec<String> {
        text.to_lowercase()
            .split(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit()))
            .filter(|t| !t.is_empty())
            .map(str::to_string)
            .collect()
    };
    let (h, r) = (tokens(hypothesis), tokens(reference));
    if h.is_empty() || r.is_empty() {
        return 0.0;
    }
    // One row of the LCS table at a time: memory linear in the reference.
    let mut row = vec![0usize; r.len() + 1];
    for token in &h {
        let mut diagonal = 0;
        for (j, other) in r.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = if token == other {
                diagonal + 1
            } else {
                above.max(row[j])
            };
            diagonal = above;
        }
    }
    let lcs = row[r.len()] as f64;
    let (precision, recall) = (lcs / h.len() as f64, lcs / r.len() as f64);
    if lcs == 0.0 {
        0.0
    } else {
        2.0 * precision * recall / (precision + recall)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hugging_face_rouge_l_by_hand() {
        // Tokens: "the cat sat on the mat" / "the cat lay on the mat": LCS 5 of 6 and 6.
        let f = rouge_l_f1("The cat sat on the mat.", "the CAT lay on the mat");
        assert!((f - 5.0 / 6.0).abs() < 1e-12, "{f}");
        // Punctuation and non-ASCII letters separate tokens; no token: 0.
        assert_eq!(rouge_l_f1("a-b c", "a b c"), 1.0);
        assert_eq!(rouge_l_f1("…", "a"), 0.0);
        assert_eq!(rouge_l_f1("x y", "z"), 0.0);
        // P = 2/2, R = 2/4: F = 2/3.
        assert!((rouge_l_f1("a b", "a x b y") - 2.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn distinct_token_semantics_by_hand() {
        // LCS = x x → one distinct token; m = |{x, z}| = 2, n = |{x, y}| = 2: R = P = 1/2.
        let f = rouge_l(&["x", "x", "y"], &["x", "x", "z"]).unwrap();
        assert!((f - 0.5).abs() < 1e-7, "{f}");
        // Identical texts: F = 2·1·1/(2 + 1e-8).
        let same = rouge_l(&["a", "b"], &["a", "b"]).unwrap();
        assert!((same - 2.0 / (2.0 + 1e-8)).abs() < 1e-12);
        assert_eq!(rouge_l(&["a"], &["b"]), Some(0.0));
        assert_eq!(rouge_l(&[], &["b"]), None);
    }

    #[test]
    fn back_tracking_follows_the_package_tie_break() {
        // Two LCSs of length 1 ("a" or "b"); on a tie the package moves left (j − 1), which
        // reconstructs "b" here.
        let tokens = lcs_tokens(&["a", "b"], &["b", "a"]).unwrap();
        assert_eq!(tokens, HashSet::from(["b"]));
    }

    #[test]
    fn very_long_paths_score_zero_like_a_recursion_error() {
        // With no common token the back-tracking walks left across the whole hypothesis.
        let hyp: Vec<String> = (0..1000).map(|i| format!("h{i}")).collect();
        let hyp: Vec<&str> = hyp.iter().map(String::as_str).collect();
        let reference = ["r"; 10];
        assert_eq!(rouge_l(&hyp, &reference), None);
        assert_eq!(rouge_l(&hyp[..400], &reference), Some(0.0));
    }

    #[test]
    fn lexeval_normalizes_segments_and_scores() {
        let jieba = Jieba::new();
        assert_eq!(normalize("Hello, 世界！ A b。"), "hello世界ab");
        assert_eq!(normalize("《民法典》·〈一〉"), "《民法典·〈一〉");
        let reference = segment(&jieba, "我喜欢吃苹果");
        let hypothesis = segment(&jieba, "我爱吃苹果");
        assert_eq!(reference, ["我", "喜欢", "吃", "苹果"]);
        assert_eq!(hypothesis, ["我", "爱", "吃", "苹果"]);
        // LCS 我 吃 苹果: R = P = 3/4.
        let f = lexeval_rouge_l(&jieba, "我爱吃苹果。", "我喜欢吃 苹果");
        assert!((f - 0.75).abs() < 1e-7, "{f}");
        assert_eq!(lexeval_rouge_l(&jieba, "！！！", "我喜欢吃苹果"), 0.0);
    }
}
