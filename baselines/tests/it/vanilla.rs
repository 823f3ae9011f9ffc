//! Vanilla: plain answers without a corpus; on a corpus, the largest number of sessions that
//! fits the model's context, found by binary search and shrunk per question.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use mb_core::Lang;
use mb_datasets::dataset::CorpusFormat;
use mb_llm::ops::{Backend, OutputHandling};
use mb_llm::{ChatProvider, ChatRequest, Completion, LlmError, LlmStack, Message};

use crate::common::{context, engine, offline, sample, system};

/// A model whose context holds `limit` characters; it answers with the prompt's length.
struct SmallContext {
    limit: usize,
    calls: Mutex<Vec<usize>>,
}

#[async_trait]
impl ChatProvider for SmallContext {
    fn name(&self) -> &str {
        "small"
    }

    fn model(&self) -> &str {
        "small-1"
    }

    async fn complete(&self, request: &ChatRequest) -> mb_llm::Result<Completion> {
        let length: usize = request.messages.iter().map(|m| m.content.len()).sum();
        self.calls.lock().unwrap().push(length);
        if length > self.limit {
            return Err(LlmError::ContextOverflow {
                url: "test://small".into(),
                detail: format!("{length} > {}", self.limit),
            });
        }
        Ok(Completion {
            text: format!("read {length} characters"),
            usage: None,
            finish_reason: None,
            retries: 0,
            replayed: false,
        })
    }
}

fn stack_with_answer(provider: Arc<SmallContext>) -> Arc<LlmStack> {
    let mut stack = Arc::try_unwrap(offline()).ok().unwrap();
    stack.answer = Backend::model(provider, OutputHandling::Tolerant, 0);
    Arc::new(stack)
}

#[tokio::test]
async fn corpus_answers_use_the_most_sessions_that_fit() {
    let (conversation, qa) = sample();
    let question = vec![Message::user(qa[0].0.clone())];
    let session_chars = |n: usize| mb_baselines::units::long_context(&conversation, n).len();
    // Room for exactly three sessions (plus the template and question).
    let limit = session_chars(3) + 400;
    assert!(session_chars(4) + 200 > limit);
    let provider = Arc::new(SmallContext {
        limit,
        calls: Mutex::default(),
    });

    let dir = tempfile::tempdir().unwrap();
    let engine = engine(dir.path());
    let vanilla = system(
        "wo_memory",
        context(engine, "v", stack_with_answer(provider.clone())),
    );
    vanilla
        .memorize_corpus(&conversation, CorpusFormat::Locomo)
        .await
        .unwrap();
    let answered = vanilla.answer(&question, Lang::En, 5).await.unwrap();
    let prompt = &answered.messages[0].content;
    assert!(prompt.contains(&mb_baselines::units::long_context(&conversation, 3)));
    assert!(!prompt.contains(&conversation.sessions[3].turns[0].text));
    assert!(answered.response.starts_with("read "));
    // A binary search over 0..=6 sessions, then the answer itself: a handful of calls.
    let calls = provider.calls.lock().unwrap().len();
    assert!((3..=5).contains(&calls), "{calls} calls");
    // Later questions reuse the fitted count: one call each.
    vanilla
        .answer(&[Message::user(qa[1].0.clone())], Lang::En, 5)
        .await
        .unwrap();
    assert_eq!(provider.calls.lock().unwrap().len(), calls + 1);
}

#[tokio::test]
async fn without_a_corpus_the_question_goes_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(dir.path());
    let vanilla = system("wo_memory", context(engine, "v", offline()));
    let messages = vec![
        Message::system("Be brief."),
        Message::user("What is a heron?"),
    ];
    let answered = vanilla.answer(&messages, Lang::En, 5).await.unwrap();
    assert_eq!(answered.messages, messages);
    assert!(answered.retrieved.is_empty());
    assert_eq!(vanilla.stats().unwrap().items, 0);
}
