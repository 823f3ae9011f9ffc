//! The record cache (record, replay, resume across reopen) and the accounting ledger.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use mb_engine::{Engine, EngineOptions};
use mb_llm::{
    usage_of, AnswerStore, CacheMode, ChatProvider, ChatRequest, Completion, EngineAnswers, Ledger,
    LlmError, Message, MeteredProvider, ModelUsage, RecordedProvider, TokenCounter, Usage,
};

/// Answers with the reversed last message; counts calls; fails on "fail"; reports usage
/// unless built without it.
struct Echo {
    calls: Arc<AtomicUsize>,
    usage: bool,
}

#[async_trait]
impl ChatProvider for Echo {
    fn name(&self) -> &str {
        "echo"
    }

    fn model(&self) -> &str {
        "echo-1"
    }

    async fn complete(&self, request: &ChatRequest) -> mb_llm::Result<Completion> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        // Let concurrent callers interleave, as network calls do.
        tokio::task::yield_now().await;
        let last = &request.messages.last().unwrap().content;
        if last == "fail" {
            return Err(LlmError::Exhausted {
                url: "echo://".into(),
                attempts: 3,
                detail: "always fails".into(),
            });
        }
        Ok(Completion {
            text: last.chars().rev().collect(),
            usage: self.usage.then_some(Usage {
                input_tokens: 10,
                output_tokens: 2,
            }),
            finish_reason: Some("stop".into()),
            retries: 1,
            replayed: false,
        })
    }
}

fn echo(usage: bool) -> (Echo, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    (
        Echo {
            calls: calls.clone(),
            usage,
        },
        calls,
    )
}

fn ask(text: &str, operation: &str) -> ChatRequest {
    ChatRequest::new(vec![Message::user(text)]).with_operation(operation)
}

#[tokio::test]
async fn record_then_replay_across_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("engine");
    {
        let engine = Arc::new(Engine::open(&path, EngineOptions::default()).unwrap());
        let (inner, calls) = echo(true);
        let recorded = RecordedProvider::new(inner, CacheMode::Record, answers(&engine));
        let first = recorded.complete(&ask("hello", "answer")).await.unwrap();
        assert_eq!(first.text, "olleh");
        assert!(!first.replayed);
        // Same content under another operation label: answered from the cache.
        let again = recorded.complete(&ask("hello", "judge")).await.unwrap();
        assert!(again.replayed);
        assert_eq!(again.text, "olleh");
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        // Different sampling is a different request.
        let mut hotter = ask("hello", "answer");
        hotter.sampling.temperature = 0.9;
        recorded.complete(&hotter).await.unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 2);
        drop(recorded);
        Arc::try_unwrap(engine).ok().unwrap().close().unwrap();
    }

    let engine = Arc::new(Engine::open(&path, EngineOptions::default()).unwrap());
    let (inner, calls) = echo(true);
    let replay = RecordedProvider::new(inner, CacheMode::Replay, answers(&engine));
    let replayed = replay.complete(&ask("hello", "answer")).await.unwrap();
    assert_eq!(replayed.text, "olleh");
    assert!(replayed.replayed);
    match replay.complete(&ask("never asked", "extract_facts")).await {
        Err(LlmError::ReplayMiss { operation, .. }) => assert_eq!(operation, "extract_facts"),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        calls.load(Ordering::SeqCst),
        0,
        "replay never calls the model"
    );

    let (inner, calls) = echo(true);
    let off = RecordedProvider::new(inner, CacheMode::Off, answers(&engine));
    assert!(
        !off.complete(&ask("hello", "answer"))
            .await
            .unwrap()
            .replayed
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn failures_are_not_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Arc::new(Engine::open(dir.path().join("e"), EngineOptions::default()).unwrap());
    let (inner, calls) = echo(true);
    let recorded = RecordedProvider::new(inner, CacheMode::Record, answers(&engine));
    assert!(recorded.complete(&ask("fail", "answer")).await.is_err());
    assert!(recorded.complete(&ask("fail", "answer")).await.is_err());
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn the_ledger_counts_per_role_and_operation() {
    let ledger = Ledger::new();
    let (served, _) = echo(true);
    let (bare, _) = echo(false);
    let memory = MeteredProvider::new(served, "memory", ledger.clone(), TokenCounter::Heuristic);
    let answer = MeteredProvider::new(bare, "answer", ledger.clone(), TokenCounter::Heuristic);

    for _ in 0..3 {
        memory
            .complete(&ask("some dialog", "extract_facts"))
            .await
            .unwrap();
    }
    assert!(memory
        .complete(&ask("fail", "extract_facts"))
        .await
        .is_err());
    answer
        .complete(&ask("twelve chars", "answer"))
        .await
        .unwrap();

    let stats = ledger.snapshot();
    assert_eq!(stats.len(), 2);
    let (a, m) = (&stats[0], &stats[1]);
    assert_eq!(
        (a.role.as_str(), a.operation.as_str()),
        ("answer", "answer")
    );
    assert_eq!(
        (m.role.as_str(), m.operation.as_str()),
        ("memory", "extract_facts")
    );
    assert_eq!((m.calls, m.failures, m.retries), (4, 1, 3 + 2));
    assert_eq!(
        (m.input_tokens, m.output_tokens, m.estimated_token_calls),
        (30, 6, 0)
    );
    // No usage from the server: 12 characters ≈ 3 tokens each way.
    assert_eq!(
        (a.input_tokens, a.output_tokens, a.estimated_token_calls),
        (3, 3, 1)
    );
    assert!(m.latency_p95_ms >= m.latency_p50_ms && m.latency_sum_ms >= m.latency_p95_ms);

    assert_eq!(ledger.take().len(), 2);
    assert!(ledger.snapshot().is_empty(), "take starts a fresh tally");
}

#[tokio::test]
async fn usage_scopes_attribute_calls_to_the_work_that_made_them() {
    let ledger = Ledger::new();
    let (served, _) = echo(true);
    let provider = MeteredProvider::new(served, "answer", ledger.clone(), TokenCounter::Heuristic);
    let case = |calls: usize| {
        let provider = &provider;
        usage_of(async move {
            for _ in 0..calls {
                provider.complete(&ask("question", "answer")).await.unwrap();
            }
        })
    };
    // Two cases in flight at once on one task, inside an outer scope, and a nested scope.
    let ((((), first), ((), second)), outer) =
        usage_of(async { futures::join!(case(2), case(3)) }).await;
    assert_eq!(
        first,
        ModelUsage {
            calls: 2,
            input_tokens: 20,
            output_tokens: 4,
            ..ModelUsage::default()
        }
    );
    assert_eq!(second.calls, 3);
    assert_eq!(
        outer.calls, 5,
        "an outer scope sees its nested scopes' calls"
    );
    assert_eq!((outer.input_tokens, outer.output_tokens), (50, 10));
    // A failed call counts as a call without tokens; calls outside any scope are not charged.
    let ((), failed) = usage_of(async {
        assert!(provider.complete(&ask("fail", "answer")).await.is_err());
    })
    .await;
    assert_eq!(
        failed,
        ModelUsage {
            calls: 1,
            input_tokens: 0,
            output_tokens: 0,
            ..ModelUsage::default()
        }
    );
    provider.complete(&ask("unscoped", "answer")).await.unwrap();
    assert_eq!(ledger.snapshot()[0].calls, 7);
}

/// The record cache's store in `engine`.
fn answers(engine: &Arc<Engine>) -> Arc<dyn AnswerStore> {
    Arc::new(EngineAnswers::open(engine.clone()).unwrap())
}
