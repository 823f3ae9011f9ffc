//! Two pieces of work at once: one on a scoped thread of its own, the other on the calling
//! thread (a delete's term count beside its write: [`beside`]), or one piece of work shared by
//! both, chunk by chunk (the records of a filtered read: [`in_chunks_beside`]).

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};

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

/// Runs `work` over `items`, `chunk` at a time, on this thread and on one named `name`, each
/// taking the next chunk as soon as it is done with its last, and returns the results in the
/// items' order, or the first error either thread met (the other then stops at its next
/// chunk). Halves fixed in advance waited on each other when chunks cost unequally: of a
/// filtered read's records, those still in RocksDB's memtable took four times as long to read
/// as those in its table files. If the other thread panics, the chunks it took are worked
/// again here.
pub(crate) fn in_chunks_beside<I: Sync, T: Send, E: Send>(
    name: &str,
    items: &[I],
    chunk: usize,
    work: impl Fn(&[I]) -> Result<Vec<T>, E> + Sync,
) -> Result<Vec<T>, E> {
    let chunks: Vec<&[I]> = items.chunks(chunk.max(1)).collect();
    let next = AtomicUsize::new(0);
    let take = || -> Result<Vec<(usize, Vec<T>)>, E> {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(items) = chunks.get(i) else {
                return Ok(done);
            };
            match work(items) {
                Ok(results) => done.push((i, results)),
                Err(e) => {
                    // The other thread takes no more chunks: the whole fails anyway.
                    next.store(chunks.len(), Ordering::Relaxed);
                    return Err(e);
                }
            }
        }
    };
    let (side, main) = beside(name, take, take);
    let mut done = main?;
    match side {
        Some(side) => done.extend(side?),
        None => {
            let worked: HashSet<usize> = done.iter().map(|(i, _)| *i).collect();
            for (i, items) in chunks.iter().enumerate() {
                if !worked.contains(&i) {
                    done.push((i, work(items)?));
                }
            }
        }
    }
    done.sort_unstable_by_key(|(i, _)| *i);
    Ok(done.into_iter().flat_map(|(_, results)| results).collect())
}

#[cfg(test)]
mod tests {
    use super::{beside, in_chunks_beside};

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

    #[test]
    fn chunks_shared_by_two_threads_come_back_in_order() {
        let items: Vec<u32> = (0..1000).collect();
        // Chunks of unequal cost, so that the threads take them in no fixed order.
        let squares = in_chunks_beside("test-chunks", &items, 7, |chunk| -> Result<_, ()> {
            if chunk[0] % 3 == 0 {
                std::thread::sleep(std::time::Duration::from_micros(200));
            }
            Ok(chunk.iter().map(|x| x * x).collect())
        });
        let expected: Vec<u32> = items.iter().map(|x| x * x).collect();
        assert_eq!(squares, Ok(expected));
        let none: Result<Vec<u32>, ()> =
            in_chunks_beside("test-empty", &[], 7, |_: &[u32]| Ok(vec![1]));
        assert_eq!(none, Ok(Vec::new()));
    }

    #[test]
    fn a_chunk_that_fails_fails_the_whole_and_a_panic_on_the_side_is_worked_again() {
        let items: Vec<u32> = (0..100).collect();
        let failed = in_chunks_beside("test-fail", &items, 10, |chunk| {
            if chunk.contains(&55) {
                Err(chunk[0])
            } else {
                Ok(chunk.to_vec())
            }
        });
        assert_eq!(failed, Err(50));
        // Every chunk the side thread takes panics there; this thread works it again.
        let survived = in_chunks_beside("test-side-panic", &items, 10, |chunk| -> Result<_, ()> {
            if std::thread::current().name() == Some("test-side-panic") {
                panic!("on purpose");
            }
            Ok(chunk.to_vec())
        });
        assert_eq!(survived, Ok(items));
    }
}
