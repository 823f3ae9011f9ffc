//! Which mid-term sessions a topic joins and which a question reads, chosen as upstream's
//! `insert_pages_into_session` and `search_sessions` choose them: only the five sessions whose
//! summaries are nearest by cosine are considered, each scored by its cosine plus the Jaccard
//! similarity of its summary keywords (case-sensitive) with the topic's or question's.

use std::borrow::Borrow;

use super::tiers::{cosine, jaccard, Session, SESSION_MATCH};
use super::top_by;

/// Sessions a topic or question is compared with (upstream's `top_k_sessions`).
pub const NEAREST_SESSIONS: usize = 5;
/// Relevance a session needs for a question to read it (`segment_similarity_threshold`).
pub const SESSION_RELEVANCE: f32 = 0.1;

/// The nearest sessions by summary cosine, nearest first, with their relevance
/// (cosine + keyword Jaccard).
fn nearest<S: Borrow<Session>>(
    sessions: &[S],
    vector: &[f32],
    keywords: &[String],
) -> Vec<(usize, f32)> {
    top_by(sessions, NEAREST_SESSIONS, |s| {
        cosine(vector, &s.borrow().vector)
    })
    .into_iter()
    .map(|(i, similarity)| {
        let session: &Session = sessions[i].borrow();
        (i, similarity + jaccard(keywords, &session.keywords))
    })
    .collect()
}

/// The session a topic's pages join: the most relevant of the nearest (the nearer one on a
/// tie), when its relevance reaches [`SESSION_MATCH`]; `None` opens a new session.
pub fn session_to_join<S: Borrow<Session>>(
    sessions: &[S],
    vector: &[f32],
    keywords: &[String],
) -> Option<usize> {
    let mut best: Option<(usize, f32)> = None;
    for (index, relevance) in nearest(sessions, vector, keywords) {
        if best.is_none_or(|(_, top)| relevance > top) {
            best = Some((index, relevance));
        }
    }
    best.filter(|(_, relevance)| *relevance >= SESSION_MATCH)
        .map(|(index, _)| index)
}

/// The sessions a question reads, most relevant first: those of the nearest whose relevance
/// reaches [`SESSION_RELEVANCE`].
pub fn sessions_to_read<S: Borrow<Session>>(
    sessions: &[S],
    vector: &[f32],
    keywords: &[String],
) -> Vec<(usize, f32)> {
    let mut read: Vec<(usize, f32)> = nearest(sessions, vector, keywords)
        .into_iter()
        .filter(|(_, relevance)| *relevance >= SESSION_RELEVANCE)
        .collect();
    read.sort_by(|a, b| b.1.total_cmp(&a.1));
    read
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|s| s.to_string()).collect()
    }

    /// A session whose summary vector has cosine `similarity` with `[1, 0]`.
    fn session(similarity: f32, keywords: &[&str]) -> Session {
        Session {
            keywords: words(keywords),
            vector: vec![similarity, (1.0 - similarity * similarity).sqrt()],
            ..Session::empty(format!("session_{similarity}"))
        }
    }

    #[test]
    fn a_question_reads_only_the_five_nearest_sessions_above_the_threshold() {
        let query = [1.0, 0.0];
        let keywords = words(&["garden", "tomato"]);
        let sessions = vec![
            session(0.30, &[]),
            session(0.25, &[]),
            // Sixth nearest, but sharing every keyword: upstream never looks at it.
            session(0.06, &["garden", "tomato"]),
            session(0.20, &[]),
            session(0.08, &[]),
            // Below the threshold by cosine, above it with half its keywords shared
            // (case-sensitive: "Garden" is not "garden").
            session(0.07, &["tomato", "Garden"]),
        ];
        let read = sessions_to_read(&sessions, &query, &keywords);
        let ids: Vec<usize> = read.iter().map(|(i, _)| *i).collect();
        assert_eq!(ids, vec![5, 0, 1, 3]);
        assert!((read[0].1 - (0.07 + 1.0 / 3.0)).abs() < 1e-5, "{read:?}");
    }

    #[test]
    fn a_topic_joins_the_best_of_the_five_nearest_when_it_matches() {
        let topic = [1.0, 0.0];
        let sessions = vec![
            session(0.50, &["Dog"]),
            session(0.45, &["dog", "walk"]),
            session(0.40, &[]),
            session(0.35, &[]),
            session(0.30, &[]),
            // Outside the five nearest: its perfect keyword match does not count.
            session(0.29, &["dog", "park"]),
        ];
        // 0.45 + 1/3 (case-sensitive: "Dog" shares nothing with "dog").
        assert_eq!(
            session_to_join(&sessions, &topic, &words(&["dog", "park"])),
            Some(1)
        );
        assert_eq!(session_to_join(&sessions, &topic, &words(&["cat"])), None);
        assert_eq!(
            session_to_join::<Session>(&[], &topic, &words(&["cat"])),
            None
        );
    }
}
