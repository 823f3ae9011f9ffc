//! The engine's side of text analysis: [`mb_text::Analyzer`] as a tantivy tokenizer (its
//! analysis of Whoosh query syntax is `mb-whoosh-query`'s).

use tantivy::tokenizer::{Token, TokenStream, Tokenizer};

pub use mb_text::{Analyzer, Term};

/// An analyzer as a tantivy tokenizer: the engine indexes with it, and other tantivy indexes can
/// register it to analyze text exactly as the engine does.
#[derive(Clone)]
pub struct AnalyzerTokenizer(pub Analyzer);

/// Token stream over terms analyzed up front.
pub struct TermStream {
    terms: std::vec::IntoIter<Term>,
    token: Token,
    position: usize,
}

impl Tokenizer for AnalyzerTokenizer {
    type TokenStream<'a> = TermStream;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> TermStream {
        TermStream {
            terms: self.0.analyze(text).into_iter(),
            token: Token::default(),
            position: 0,
        }
    }
}

impl TokenStream for TermStream {
    fn advance(&mut self) -> bool {
        let Some(term) = self.terms.next() else {
            return false;
        };
        self.token = Token {
            offset_from: term.start,
            offset_to: term.end,
            position: self.position,
            text: term.text,
            position_length: 1,
        };
        self.position += 1;
        true
    }

    fn token(&self) -> &Token {
        &self.token
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.token
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn terms_are_no_longer_than_tantivy_accepts() {
        assert_eq!(mb_text::MAX_TOKEN_LEN, tantivy::tokenizer::MAX_TOKEN_LEN);
    }
}
