//! The waits of a client that retries a busy or failing server.
//!
//! The LLM providers and the embeddings client both post to servers that answer 429 or 5xx
//! when busy, may send `Retry-After`, and are configured with timeouts and backoffs. The rules
//! are one set: which statuses are worth another try ([`is_transient`]), how long to wait
//! ([`Backoff`], bounded, optionally jittered, a server's `Retry-After` honoured up to the
//! same bound), which wait settings are sane ([`check_wait`]), and how much of an error body
//! a message quotes ([`excerpt`]). Both clients also run one loop, [`retry`] (and
//! [`retry_blocking`] for the blocking embeddings client), which applies those rules.

mod run;

use std::time::Duration;

pub use run::{retry, retry_blocking, Attempt, RetryPolicy, Transient};

use rand::Rng;

/// The longest timeout or backoff a setting may give, in seconds (a day): longer ones are
/// typos, and would overflow the clock arithmetic of timers.
pub const MAX_WAIT_SECS: f64 = 86_400.0;

/// A wait setting that is not a positive number of seconds up to [`MAX_WAIT_SECS`].
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[error("must be a positive number of seconds up to {MAX_WAIT_SECS}, got {0}")]
#[non_exhaustive]
pub struct InvalidWait(pub f64);

/// The wait `seconds` gives, if it is positive, finite and at most [`MAX_WAIT_SECS`].
pub fn check_wait(seconds: f64) -> Result<Duration, InvalidWait> {
    if seconds.is_finite() && seconds > 0.0 && seconds <= MAX_WAIT_SECS {
        Ok(Duration::from_secs_f64(seconds))
    } else {
        Err(InvalidWait(seconds))
    }
}

/// Whether an HTTP status says "try again later": 429 Too Many Requests or any 5xx.
pub fn is_transient(status: u16) -> bool {
    status == 429 || (500..600).contains(&status)
}

/// The wait a `Retry-After` header value asks for (seconds, possibly fractional), at most
/// `cap`: a server may ask for any wait, and a client's own longest backoff bounds it. HTTP
/// dates and garbage give `None`.
pub fn retry_after(value: &str, cap: Duration) -> Option<Duration> {
    let seconds = value.trim().parse::<f64>().ok()?;
    (seconds.is_finite() && seconds >= 0.0)
        .then(|| Duration::from_secs_f64(seconds.min(cap.as_secs_f64())))
}

/// Exponential backoff between attempts: the first wait, then twice as long each time, never
/// longer than a maximum; with jitter each wait is drawn uniformly from its upper half, so
/// clients that failed together do not retry together.
#[derive(Debug, Clone)]
pub struct Backoff {
    next: Duration,
    max: Duration,
    jitter: bool,
}

impl Backoff {
    /// Waits starting at `initial`, doubling up to `max` (the first wait is `initial` even if
    /// longer), without jitter.
    pub fn new(initial: Duration, max: Duration) -> Backoff {
        Backoff {
            next: initial,
            max,
            jitter: false,
        }
    }

    /// The same waits, each drawn from its upper half.
    pub fn with_jitter(mut self) -> Backoff {
        self.jitter = true;
        self
    }

    /// The wait before the next attempt: what the server asked for (`requested`, already
    /// bounded by [`retry_after`]) if anything, else the backoff's own. The backoff doubles
    /// either way.
    pub fn next_wait(&mut self, requested: Option<Duration>) -> Duration {
        let own = if self.jitter {
            self.next.mul_f64(rand::rng().random_range(0.5..=1.0))
        } else {
            self.next
        };
        self.next = self.next.saturating_mul(2).min(self.max);
        requested.unwrap_or(own)
    }
}

/// At most `limit` bytes of a response body (cut at a character boundary, `…` marking a cut),
/// on one line, for an error message.
pub fn excerpt(body: &str, limit: usize) -> String {
    let mut end = body.len().min(limit);
    while !body.is_char_boundary(end) {
        end -= 1;
    }
    let mut text = body[..end].trim().replace('\n', " ");
    if end < body.len() {
        text.push('…');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_double_up_to_the_maximum_and_honour_the_server() {
        let mut backoff = Backoff::new(Duration::from_secs(1), Duration::from_secs(5));
        let waits: Vec<u64> = (0..5).map(|_| backoff.next_wait(None).as_secs()).collect();
        assert_eq!(waits, [1, 2, 4, 5, 5]);
        let asked = Some(Duration::from_millis(1500));
        assert_eq!(backoff.next_wait(asked), Duration::from_millis(1500));
        let mut jittered =
            Backoff::new(Duration::from_secs(8), Duration::from_secs(60)).with_jitter();
        for bound in [8.0, 16.0, 32.0, 60.0] {
            let wait = jittered.next_wait(None).as_secs_f64();
            assert!(wait >= bound / 2.0 && wait <= bound, "{wait} for {bound}");
        }
    }

    #[test]
    fn retry_after_is_bounded_and_garbage_is_ignored() {
        let cap = Duration::from_secs(60);
        assert_eq!(retry_after(" 2 ", cap), Some(Duration::from_secs(2)));
        assert_eq!(retry_after("0.5", cap), Some(Duration::from_millis(500)));
        assert_eq!(retry_after("1e20", cap), Some(cap));
        for bad in ["-1", "NaN", "inf", "Wed, 21 Oct 2015 07:28:00 GMT", ""] {
            assert_eq!(retry_after(bad, cap), None, "{bad}");
        }
    }

    #[test]
    fn wait_settings_and_statuses() {
        assert_eq!(check_wait(1.5), Ok(Duration::from_millis(1500)));
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, MAX_WAIT_SECS * 2.0] {
            assert!(check_wait(bad).is_err(), "{bad}");
        }
        assert!(check_wait(0.0)
            .unwrap_err()
            .to_string()
            .contains("positive number of seconds up to 86400"));
        assert!(is_transient(429) && is_transient(503) && !is_transient(400) && !is_transient(200));
    }

    #[test]
    fn excerpts_are_short_single_lines() {
        assert_eq!(excerpt("a\nb", 10), "a b");
        assert_eq!(excerpt("héllo", 2), "h…");
        assert_eq!(excerpt(&"x".repeat(500), 400).chars().count(), 401);
    }
}
