//! The one runtime that drives every object-store request of the process.
//!
//! The table API is synchronous; `object_store` is async. Each call is spawned onto a small,
//! process-wide multi-threaded runtime and the caller's thread waits for it. The runtime is never
//! the caller's own: blocking on it from a thread of another runtime (DataFusion's, a test's) is
//! sound, and remote stores do their network I/O on it (`SpawnedReqwestConnector`), so their
//! connection pool outlives any short-lived runtime of a caller.

use std::future::Future;
use std::sync::LazyLock;

use tokio::runtime::{Handle, Runtime};

static IO_RUNTIME: LazyLock<Runtime> = LazyLock::new(|| {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("geoberg-io")
        .enable_all()
        .build()
        // Only fails when the OS refuses threads or an event loop: nothing works then.
        .expect("geoberg: cannot start the I/O runtime")
});

/// A handle on the I/O runtime (for connectors and for spawning).
pub(crate) fn io_handle() -> Handle {
    IO_RUNTIME.handle().clone()
}

/// Runs `future` on the I/O runtime and waits for its output on this thread.
pub(crate) fn block_on<F>(future: F) -> F::Output
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let task = IO_RUNTIME.spawn(future);
    match futures::executor::block_on(task) {
        Ok(output) => output,
        // The task panicked: re-raise it here, where the caller can see it.
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        // A static runtime is never shut down, so its tasks are never cancelled.
        Err(e) => unreachable!("geoberg I/O task cancelled: {e}"),
    }
}

/// Enters the I/O runtime's context (what `WriteMultipart::write` needs to spawn part uploads).
pub(crate) fn enter() -> tokio::runtime::EnterGuard<'static> {
    IO_RUNTIME.enter()
}
