//! Stopping live local servers when the process is interrupted (Ctrl-C) or terminated.
//!
//! `Drop` stops a server when a command ends or fails, but SIGINT and SIGTERM end the process
//! without running destructors. The handler installed here kills and reaps every registered
//! server, then lets the signal end the process as it would have. (The launcher also exits when
//! its parent dies, so even SIGKILL leaves no server behind; this makes the stop immediate.)
//!
//! The registry is a fixed array of atomics because a signal handler may only touch
//! async-signal-safe state.

use std::sync::atomic::{AtomicI32, AtomicPtr, Ordering};
use std::sync::Once;

/// Most servers one process tracks for the handler (more still stop on `Drop`).
const SLOTS: usize = 16;

static LIVE: [AtomicI32; SLOTS] = [const { AtomicI32::new(0) }; SLOTS];
static INSTALL: Once = Once::new();
/// What the handler writes to standard error before the signal ends the process (null: nothing).
static MESSAGE: AtomicPtr<&'static [u8]> = AtomicPtr::new(std::ptr::null_mut());

/// A server's place in the registry; dropping it unregisters the pid.
#[derive(Debug)]
pub(crate) struct Registration(Option<usize>);

/// Registers `pid` for the handler.
pub(crate) fn register(pid: u32) -> Registration {
    let Ok(pid) = i32::try_from(pid) else {
        return Registration(None);
    };
    let slot = LIVE.iter().position(|slot| {
        slot.compare_exchange(0, pid, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    });
    if slot.is_none() {
        tracing::warn!("more than {SLOTS} local servers: pid {pid} stops on drop only");
    }
    Registration(slot)
}

impl Drop for Registration {
    fn drop(&mut self) {
        if let Some(slot) = self.0 {
            LIVE[slot].store(0, Ordering::SeqCst);
        }
    }
}

/// Installs the SIGINT/SIGTERM handler (once per process). Called by binaries that start
/// servers; a program with its own handlers for these signals stops its servers by dropping
/// them instead.
pub fn stop_local_servers_on_signals() {
    INSTALL.call_once(|| {
        for signal in [libc::SIGINT, libc::SIGTERM] {
            // SAFETY: `on_signal` only calls async-signal-safe functions (kill, waitpid,
            // signal, raise) and reads atomics.
            let previous =
                unsafe { libc::signal(signal, on_signal as *const () as libc::sighandler_t) };
            if previous == libc::SIG_ERR {
                tracing::warn!("cannot install the handler of signal {signal}");
            }
        }
    });
}

/// Has SIGINT and SIGTERM print `message` on standard error before they end the process (a
/// run says how to continue it), and installs the handler. A later message replaces it; the
/// text is kept for the process's life (the handler may read it at any moment).
pub fn say_on_interrupt(message: &str) {
    let bytes: &'static [u8] = Box::leak(message.as_bytes().to_vec().into_boxed_slice());
    let slot: &'static mut &'static [u8] = Box::leak(Box::new(bytes));
    MESSAGE.store(slot, Ordering::SeqCst);
    stop_local_servers_on_signals();
}

extern "C" fn on_signal(signal: libc::c_int) {
    let message = MESSAGE.load(Ordering::SeqCst);
    if !message.is_null() {
        // SAFETY: the pointer is to a leaked, never freed slice (say_on_interrupt); write is
        // async-signal-safe.
        unsafe {
            let bytes: &[u8] = *message;
            libc::write(2, bytes.as_ptr().cast(), bytes.len());
        }
    }
    for slot in &LIVE {
        let pid = slot.swap(0, Ordering::SeqCst);
        if pid > 0 {
            // SAFETY: kill and waitpid are async-signal-safe; `pid` is our own child.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, std::ptr::null_mut(), 0);
            }
        }
    }
    // SAFETY: signal and raise are async-signal-safe; the default action ends the process
    // with this signal, as if no handler had been installed.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        libc::raise(signal);
    }
}
