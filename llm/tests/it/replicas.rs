//! Several servers behind one role (`replicas`): requests spread by least in flight, each
//! server's own limit kept, a failing server's requests retried on another.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use mb_llm::{ChatProvider, OpenAiProvider};

use crate::providers::{config, openai_reply, request, serve, Reply};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn requests_spread_over_replicas_within_each_limit() {
    let slow = || Reply::After(Duration::from_millis(80), Box::new(openai_reply("done")));
    let (first, seen_first) = serve(move |_, _| slow());
    let (second, seen_second) = serve(move |_, _| slow());
    let mut settings = config(&first);
    settings.replicas = vec![second];
    settings.max_concurrency = 2;
    let provider = Arc::new(OpenAiProvider::new(settings).unwrap());
    let tasks: Vec<_> = (0..12)
        .map(|_| {
            let provider = provider.clone();
            tokio::spawn(async move { provider.complete(&request()).await })
        })
        .collect();
    for task in tasks {
        assert_eq!(task.await.unwrap().unwrap().text, "done");
    }
    let served = |seen: &crate::providers::Seen| seen.bodies.lock().unwrap().len();
    assert_eq!(served(&seen_first) + served(&seen_second), 12);
    // Least in flight: both servers work, neither gets more than two at once.
    assert_eq!(served(&seen_first), 6);
    assert_eq!(served(&seen_second), 6);
    assert_eq!(seen_first.max_in_flight.load(Ordering::SeqCst), 2);
    assert_eq!(seen_second.max_in_flight.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_failing_replica_is_retried_on_another() {
    let (broken, seen_broken) = serve(|_, _| Reply::Status(503, "overloaded".into(), None));
    let (healthy, seen_healthy) = serve(|_, _| openai_reply("fine"));
    let mut settings = config(&broken);
    settings.replicas = vec![healthy];
    let provider = OpenAiProvider::new(settings).unwrap();
    for _ in 0..3 {
        assert_eq!(provider.complete(&request()).await.unwrap().text, "fine");
    }
    assert_eq!(seen_healthy.bodies.lock().unwrap().len(), 3);
    // Each first attempt went to the primary (nothing in flight anywhere), each retry elsewhere.
    assert_eq!(seen_broken.bodies.lock().unwrap().len(), 3);
}
