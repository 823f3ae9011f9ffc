//! [`mb_text::Analyzer`] as the analyzer of query text: the engine's namespaces analyze both
//! their documents and their queries with it, so a parsed term is an indexed term.

use mb_text::Analyzer;

use super::QueryAnalyzer;

impl QueryAnalyzer for Analyzer {
    fn terms(&self, text: &str, tokenize: bool, remove_stops: bool) -> Vec<String> {
        if !tokenize {
            // Whoosh's tokenizers yield the whole text as one token when not tokenizing, and the
            // stop filter keeps it when not removing stops; only lowercasing applies.
            let lower = text.to_lowercase();
            return if remove_stops && !Analyzer::keeps_token(&lower) {
                Vec::new()
            } else {
                vec![self.normalize(lower)]
            };
        }
        if remove_stops {
            return self.analyze(text).into_iter().map(|t| t.text).collect();
        }
        Analyzer::lowercase_tokens(text)
            .into_iter()
            .map(|t| self.normalize(t))
            .collect()
    }
}
