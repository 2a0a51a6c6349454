//! Background workers kept running: one that panics is started again.

use tokio_util::sync::CancellationToken;

/// Runs a background worker until it returns (the server is stopping), and starts it again
/// if it panics, with the panic in the log as an error: a worker that ended silently would
/// stop its queue (mail, deliveries, renditions) for the life of the process, while
/// `/readyz` and `/metrics` went on as if nothing were wrong.
pub async fn supervised<W, F>(name: &'static str, stopping: CancellationToken, worker: W)
where
    W: Fn() -> F,
    F: std::future::Future<Output = ()>,
{
    use futures_util::FutureExt;
    loop {
        let Err(panic) = std::panic::AssertUnwindSafe(worker()).catch_unwind().await else {
            return;
        };
        let message = panic
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("(no message)");
        tracing::error!(
            worker = name,
            panic = message,
            "a background worker panicked: started again"
        );
        // A worker that panics at once must not spin.
        tokio::select! {
            () = stopping.cancelled() => return,
            () = tokio::time::sleep(std::time::Duration::from_secs(1)) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use tokio_util::sync::CancellationToken;

    use super::supervised;

    #[tokio::test]
    async fn a_worker_that_panics_is_started_again() {
        let runs = Arc::new(AtomicUsize::new(0));
        let counted = runs.clone();
        supervised("test", CancellationToken::new(), move || {
            let run = counted.fetch_add(1, Ordering::SeqCst);
            async move {
                assert!(run > 0, "the first run panics");
            }
        })
        .await;
        assert_eq!(runs.load(Ordering::SeqCst), 2, "once more after the panic");
    }

    #[tokio::test]
    async fn a_worker_that_panics_while_the_server_stops_is_not() {
        let stopping = CancellationToken::new();
        stopping.cancel();
        let runs = Arc::new(AtomicUsize::new(0));
        let counted = runs.clone();
        supervised("test", stopping, move || {
            counted.fetch_add(1, Ordering::SeqCst);
            async {
                if true {
                    panic!("always")
                }
            }
        })
        .await;
        assert_eq!(runs.load(Ordering::SeqCst), 1);
    }
}
