//! RAPTOR's leaves: the memory's text cut into chunks of at most 100 tokens, as the vendored
//! `split_text` cuts it (`raptor/utils.py`), each chunk knowing which documents it came from.
//!
//! The text is split at `.`, `!`, `?` and newlines (the delimiters dropped, each piece kept
//! with its spaces), each piece counted as `" " + piece`, and pieces packed into chunks joined
//! by a space. A piece over the limit is split again at `,`, `;` and `:` (parts trimmed) and
//! packed alone, its chunks put out before the chunk being filled (upstream's order).

use crate::tokens::TokenCounter;

/// One leaf's text and the documents it holds part of (indices into the documents).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// The text.
    pub text: String,
    /// The documents, ascending.
    pub documents: Vec<usize>,
}

/// A sentence of the joined text and the document it starts in.
struct Piece<'a> {
    text: &'a str,
    document: usize,
}

/// The chunks of `documents` joined by blank lines, of at most `max_tokens` tokens each.
pub fn split_documents(
    documents: &[String],
    max_tokens: usize,
    tokens: &TokenCounter,
) -> Vec<Chunk> {
    let joined = documents.join("\n\n");
    // Where each document starts in the joined text.
    let mut starts = Vec::with_capacity(documents.len());
    let mut at = 0;
    for document in documents {
        starts.push(at);
        at += document.len() + 2;
    }
    let document_at = |offset: usize| starts.partition_point(|&s| s <= offset).saturating_sub(1);
    let mut pieces = Vec::new();
    let mut start = 0;
    for (i, c) in joined.char_indices() {
        if matches!(c, '.' | '!' | '?' | '\n') {
            pieces.push(Piece {
                text: &joined[start..i],
                document: document_at(start),
            });
            start = i + c.len_utf8();
        }
    }
    pieces.push(Piece {
        text: &joined[start..],
        document: document_at(start),
    });
    pack(&pieces, max_tokens, tokens)
}

/// Packs the pieces into chunks (upstream's loop, with no overlap).
fn pack(pieces: &[Piece<'_>], max_tokens: usize, tokens: &TokenCounter) -> Vec<Chunk> {
    let mut chunks = Vec::new();
    let mut current: Vec<&Piece<'_>> = Vec::new();
    let mut length = 0;
    for piece in pieces {
        if piece.text.trim().is_empty() {
            continue;
        }
        let count = tokens.count(&format!(" {}", piece.text));
        if count > max_tokens {
            let parts: Vec<&str> = piece
                .text
                .split([',', ';', ':'])
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .collect();
            let mut part_chunk: Vec<&str> = Vec::new();
            let mut part_length = 0;
            for part in parts {
                let part_count = tokens.count(&format!(" {part}"));
                if part_length + part_count > max_tokens && !part_chunk.is_empty() {
                    chunks.push(Chunk {
                        text: part_chunk.join(" "),
                        documents: vec![piece.document],
                    });
                    part_chunk.clear();
                    part_length = 0;
                }
                part_chunk.push(part);
                part_length += part_count;
            }
            if !part_chunk.is_empty() {
                chunks.push(Chunk {
                    text: part_chunk.join(" "),
                    documents: vec![piece.document],
                });
            }
        } else if length + count > max_tokens {
            chunks.push(chunk_of(&current));
            current.clear();
            current.push(piece);
            length = count;
        } else {
            current.push(piece);
            length += count;
        }
    }
    if !current.is_empty() {
        chunks.push(chunk_of(&current));
    }
    chunks
}

fn chunk_of(pieces: &[&Piece<'_>]) -> Chunk {
    let mut documents: Vec<usize> = pieces.iter().map(|p| p.document).collect();
    documents.dedup();
    Chunk {
        text: pieces.iter().map(|p| p.text).collect::<Vec<_>>().join(" "),
        documents,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_are_packed_under_the_limit_and_know_their_documents() {
        let tokens = TokenCounter::new().unwrap();
        let documents = vec![
            "Conversation 1_0:\nSpeaker user says: I keep bees. They are calm.".to_string(),
            "Conversation 1_1:\nSpeaker assistant says: Bees are wonderful!".to_string(),
        ];
        let chunks = split_documents(&documents, 100, &tokens);
        assert_eq!(chunks.len(), 1);
        // Delimiters dropped, pieces joined by a space (leading spaces kept, as upstream).
        assert_eq!(
            chunks[0].text,
            "Conversation 1_0: Speaker user says: I keep bees  They are calm Conversation 1_1: \
             Speaker assistant says: Bees are wonderful"
        );
        assert_eq!(chunks[0].documents, vec![0, 1]);
        let small = split_documents(&documents, 8, &tokens);
        assert!(small.len() > 2, "{small:?}");
        assert!(small.iter().all(|c| !c.text.is_empty()));
        assert_eq!(small.last().unwrap().documents, vec![1]);
    }

    #[test]
    fn a_long_sentence_is_split_at_commas_before_the_chunk_in_progress() {
        let tokens = TokenCounter::new().unwrap();
        let long = (0..40)
            .map(|i| format!("item {i}"))
            .collect::<Vec<_>>()
            .join(", ");
        let documents = vec![format!("Short one. {long}")];
        let chunks = split_documents(&documents, 20, &tokens);
        // The long sentence's parts come first; "Short one" is put out at the end.
        assert_eq!(chunks.last().unwrap().text, "Short one");
        assert!(chunks[0].text.starts_with("item 0 item 1"), "{chunks:?}");
        assert!(chunks.iter().all(|c| tokens.count(&c.text) <= 21));
    }
}
