//! Two pieces of work at once: one on a scoped thread of its own, the other on the calling
//! thread (the two halves of a filtered read, a delete's term count beside its write).

/// Runs `side` on a thread named `name` while this thread runs `main`, and returns both
/// results, `side`'s first; `side`'s is `None` when it panicked. When no thread can be
/// started, `side` runs here after `main`.
pub(crate) fn beside<S: Send, M>(
    name: &str,
    side: impl Fn() -> S + Sync,
    main: impl FnOnce() -> M,
) -> (Option<S>, M) {
    std::thread::scope(|scope| {
        let spawned = std::thread::Builder::new()
            .name(name.into())
            .spawn_scoped(scope, &side);
        let main = main();
        let side = match spawned {
            Ok(handle) => handle.join().ok(),
            Err(_) => Some(side()),
        };
        (side, main)
    })
}

#[cfg(test)]
mod tests {
    use super::beside;

    #[test]
    fn both_results_come_back_and_a_panic_on_the_side_is_none() {
        let data: Vec<u64> = (1..=1000).collect();
        let (sum, max) = beside(
            "test-sum",
            || data.iter().sum::<u64>(),
            || data.iter().max(),
        );
        assert_eq!((sum, max), (Some(500_500), Some(&1000)));
        let (side, main) = beside("test-panic", || -> u8 { panic!("on purpose") }, || 7);
        assert_eq!((side, main), (None, 7));
    }
}
