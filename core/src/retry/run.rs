//! The one retry loop of the workspace's HTTP clients.
//!
//! The async LLM endpoint (`mb-llm`) and the blocking embeddings client (`mb-embed`) both send a
//! request until it succeeds, fails for good, or its retries run out, waiting as [`Backoff`]
//! says between attempts. The loop lives here, in the crate both depend on, rather than in
//! either of them: it needs no HTTP library and no async runtime, because the caller supplies
//! the attempt (its own HTTP client) and the wait (`tokio::time::sleep` or
//! `std::thread::sleep`). Blocking callers run the same loop through [`retry_blocking`].

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use super::Backoff;

/// How often to retry and how long to wait: a client's settings, turned into a policy.
#[derive(Debug, Clone)]
pub struct RetryPolicy {
    /// The waits between attempts.
    pub backoff: Backoff,
    /// Retries after transient failures before giving up (so at most `max_retries + 1`
    /// attempts).
    pub max_retries: u32,
}

/// A failure worth another attempt (a busy or unreachable server), with what the caller needs
/// to report it.
#[derive(Debug, Clone)]
pub struct Transient<X> {
    /// What went wrong, for logs and the final error.
    pub detail: String,
    /// The wait the server asked for (`Retry-After`, already bounded), if any.
    pub retry_after: Option<Duration>,
    /// The caller's own facts about the attempt (e.g. the URL it went to).
    pub context: X,
}

/// How one attempt ended.
#[derive(Debug)]
pub enum Attempt<T, E, X> {
    /// Success.
    Done(T),
    /// A failure another attempt would not mend (a rejected request): returned at once.
    Fatal(E),
    /// A failure another attempt may mend.
    Transient(Transient<X>),
}

/// Runs `attempt` until it is done or fails for good, or `policy`'s retries are spent.
///
/// `attempt` is given the previous transient failure (none on the first attempt). After a
/// transient failure with retries left, `wait` is awaited with the wait [`Backoff`] chose, the
/// number of the retry about to be made (1 for the first) and the failure; it is where the
/// caller logs and sleeps. When the retries are spent, `gave_up` turns the last failure and the
/// number of attempts made into the caller's error. Success gives the value and the number of
/// retries it took.
pub async fn retry<T, E, X, A, AF, W, WF>(
    policy: RetryPolicy,
    mut attempt: A,
    mut wait: W,
    gave_up: impl FnOnce(Transient<X>, u32) -> E,
) -> Result<(T, u32), E>
where
    A: FnMut(Option<&Transient<X>>) -> AF,
    AF: Future<Output = Attempt<T, E, X>>,
    W: FnMut(Duration, u32, &Transient<X>) -> WF,
    WF: Future<Output = ()>,
{
    let RetryPolicy {
        mut backoff,
        max_retries,
    } = policy;
    let mut retries = 0;
    let mut previous: Option<Transient<X>> = None;
    loop {
        let failure = match attempt(previous.as_ref()).await {
            Attempt::Done(value) => return Ok((value, retries)),
            Attempt::Fatal(error) => return Err(error),
            Attempt::Transient(failure) => failure,
        };
        if retries >= max_retries {
            return Err(gave_up(failure, retries.saturating_add(1)));
        }
        retries += 1;
        wait(backoff.next_wait(failure.retry_after), retries, &failure).await;
        previous = Some(failure);
    }
}

/// [`retry`] for a blocking client: `attempt` and `wait` block the calling thread
/// (`wait` sleeping, e.g. with `std::thread::sleep`).
pub fn retry_blocking<T, E, X>(
    policy: RetryPolicy,
    mut attempt: impl FnMut(Option<&Transient<X>>) -> Attempt<T, E, X>,
    mut wait: impl FnMut(Duration, u32, &Transient<X>),
    gave_up: impl FnOnce(Transient<X>, u32) -> E,
) -> Result<(T, u32), E> {
    let looped = retry(
        policy,
        |previous| std::future::ready(attempt(previous)),
        |duration, retries, failure| {
            wait(duration, retries, failure);
            std::future::ready(())
        },
        gave_up,
    );
    // Every future the loop awaits is ready at once, so the first poll completes it; the loop
    // only guards that invariant without spinning a core.
    let mut looped = pin!(looped);
    let mut context = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(result) = looped.as_mut().poll(&mut context) {
            return result;
        }
        std::thread::yield_now();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(max_retries: u32) -> RetryPolicy {
        RetryPolicy {
            backoff: Backoff::new(Duration::from_millis(1), Duration::from_millis(4)),
            max_retries,
        }
    }

    fn transient(n: u32) -> Transient<u32> {
        Transient {
            detail: format!("busy {n}"),
            retry_after: None,
            context: n,
        }
    }

    #[test]
    fn retries_until_done_and_counts_them() {
        let mut calls = 0;
        let mut waits = Vec::new();
        let result: Result<(&str, u32), String> = retry_blocking(
            policy(5),
            |previous| {
                calls += 1;
                assert_eq!(previous.map(|p| p.context), (calls > 1).then(|| calls - 1));
                if calls < 3 {
                    Attempt::Transient(transient(calls))
                } else {
                    Attempt::Done("ok")
                }
            },
            |wait, retry, _| waits.push((wait.as_millis(), retry)),
            |_, _| unreachable!(),
        );
        assert_eq!(result, Ok(("ok", 2)));
        assert_eq!(waits, [(1, 1), (2, 2)]);
    }

    #[test]
    fn gives_up_after_the_last_retry_and_stops_at_a_fatal_failure() {
        let result: Result<((), u32), String> = retry_blocking(
            policy(2),
            |_| Attempt::Transient(transient(7)),
            |_, _, _| {},
            |last, attempts| format!("{} after {attempts}", last.detail),
        );
        assert_eq!(result, Err("busy 7 after 3".to_string()));
        let mut calls = 0;
        let result: Result<((), u32), &str> = retry_blocking(
            policy(2),
            |_| {
                calls += 1;
                Attempt::<(), &str, ()>::Fatal("rejected")
            },
            |_, _, _| {},
            |_, _| "gave up",
        );
        assert_eq!((result, calls), (Err("rejected"), 1));
    }
}
