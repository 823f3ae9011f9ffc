//! Handing heap memory that the engine's work has freed back to the operating system.
//!
//! glibc's allocator keeps freed memory for reuse instead of returning it, and once a large
//! block has been freed it serves blocks of that size from its heap rather than from maps of
//! their own (its dynamic mmap threshold), where freeing them returns nothing. A bulk load
//! frees a great deal this way: write batches, memtables flushed to disk, lexical buffers.
//! At 100k records through the Python package the process held about 115 MiB free after the
//! bulk write, and then built the vector collection and its graph on top of it (the stores
//! benchmark's peak RSS; docs/stores.md).
//!
//! So the engine asks the allocator to return what is free ([`release_freed_heap`]) at two
//! moments: before the derived search state of a namespace of at least
//! [`LARGE_LOAD_RECORDS`] records is built from the store (its largest allocation, usually
//! right after a bulk of writes) and when a background job has built a
//! whole graph or loaded a collection's vectors (its working memory freed). Only free memory
//! is returned; nothing the host holds is touched. The call holds each of the allocator's
//! arenas in turn: 16 ms in a 2 GB Python process right after a bulk load (most of it handing
//! back 75 MiB of pages), 0.2–1 ms when little is free. So graph growths, which run often and
//! free little, do not call it. Elsewhere than on glibc it does nothing.

/// Records from which building a namespace's derived state is first preceded by a release: a
/// smaller load allocates a few MiB (15 MiB of 384-d vectors at this size), too little to be
/// worth holding the allocator's arenas on a namespace's first search, which a service with
/// many small namespaces, each reloaded after eviction, makes often.
pub(crate) const LARGE_LOAD_RECORDS: usize = 10_000;

/// Returns the allocator's free memory to the operating system (glibc: `malloc_trim(0)`).
pub(crate) fn release_freed_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `malloc_trim` only releases memory the allocator holds free, under its own
    // locks; it is safe to call from any thread at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(all(test, target_os = "linux", target_env = "gnu"))]
mod tests {
    use super::release_freed_heap;

    /// Blocks below glibc's smallest mmap threshold (128 KiB), so that they come from the
    /// heap, where freeing them returns nothing by itself.
    const BLOCK: usize = 64 * 1024;
    /// 128 MiB: twice the largest heap of a thread's arena, whose last heap glibc may shrink
    /// or unmap by itself when the blocks at its end are freed.
    const BLOCKS: usize = 2048;
    const PAGE: usize = 4096;

    /// The share of the pages inside `blocks` (their first page left out: a free chunk's
    /// header is written there) that are resident. A block no longer mapped at all (glibc
    /// gave it back by itself) counts as not resident.
    fn resident_share(blocks: &[usize]) -> f64 {
        let (mut resident, mut total) = (0usize, 0usize);
        for &start in blocks {
            let first = (start / PAGE + 1) * PAGE;
            let pages = (start + BLOCK - first) / PAGE;
            let mut flags = vec![0u8; pages];
            // SAFETY: mincore only reports which pages of the range are resident; a range
            // with unmapped pages is refused (ENOMEM) and nothing is written.
            let rc = unsafe {
                libc::mincore(first as *mut libc::c_void, pages * PAGE, flags.as_mut_ptr())
            };
            if rc == 0 {
                resident += flags.iter().filter(|f| **f & 1 == 1).count();
            } else {
                let error = std::io::Error::last_os_error();
                assert_eq!(error.raw_os_error(), Some(libc::ENOMEM), "mincore: {error}");
            }
            total += pages;
        }
        resident as f64 / total as f64
    }

    /// The check itself, in a process of its own: the other tests of this binary build graphs,
    /// whose jobs release the heap from their own threads at any moment, before the check has
    /// seen the freed blocks resident.
    #[test]
    fn freed_heap_blocks_leave_memory_once_released() {
        let name = "heap_release::tests::freed_blocks_in_a_process_of_its_own";
        let exe = std::env::current_exe().expect("the test binary");
        let output = std::process::Command::new(exe)
            .args([
                "--exact",
                name,
                "--ignored",
                "--test-threads=1",
                "--nocapture",
            ])
            .output()
            .expect("the test binary runs");
        let printed = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(output.status.success(), "{printed}");
        assert!(
            printed.contains("1 passed"),
            "the check did not run: {printed}"
        );
    }

    #[test]
    #[ignore = "run alone by freed_heap_blocks_leave_memory_once_released"]
    fn freed_blocks_in_a_process_of_its_own() {
        let blocks: Vec<Vec<u8>> = (0..BLOCKS).map(|i| vec![i as u8 | 1; BLOCK]).collect();
        // Allocated last and kept, so that the freed blocks are less likely to be the heap's
        // top, which glibc returns on its own.
        let guard = vec![1u8; 1024];
        let addresses: Vec<usize> = blocks.iter().map(|b| b.as_ptr() as usize).collect();
        drop(blocks);
        let before = resident_share(&addresses);
        release_freed_heap();
        let after = resident_share(&addresses);
        assert!(
            before > 0.4,
            "freed blocks were already returned ({before:.2} resident)"
        );
        assert!(after < 0.2, "{after:.2} of the freed blocks still resident");
        drop(guard);
    }
}
