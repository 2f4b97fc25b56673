//! A timer set for one instant, or not set at all.
//!
//! Why not one `Sleep`, reset when the deadline moves: a `Sleep` stays in the runtime's
//! timer wheel until its instant passes, after the deadline it stood for is gone (the
//! reply came, the deferral ended). While it is there, every park of the runtime waits
//! with a timeout, and the kernel arms a timer for each wait: for the second after each
//! request, the connection task paid that per package (`docs/performance.md`). Cleared,
//! the alarm drops its `Sleep`, and the runtime parks without a timeout.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Instant;

use ::tokio::time::Sleep;

pub(super) struct Alarm {
    // Boxed once, so that setting the alarm does not allocate.
    sleep: Pin<Box<Option<Sleep>>>,
    at: Option<Instant>,
}

impl Alarm {
    /// A clear alarm.
    pub(super) fn new() -> Self {
        Alarm {
            sleep: Box::pin(None),
            at: None,
        }
    }

    /// Sets the alarm for `at`, or clears it (`None`); nothing when it is so already.
    pub(super) fn set(&mut self, at: Option<Instant>) {
        if self.at == at {
            return;
        }
        self.at = at;
        self.sleep
            .set(at.map(|at| ::tokio::time::sleep_until(::tokio::time::Instant::from_std(at))));
    }

    /// Ready once the instant it was set for has come, and clear from then on; pending
    /// while clear, with no wake-up to come from it.
    pub(super) fn poll(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let Some(sleep) = self.sleep.as_mut().as_pin_mut() else {
            return Poll::Pending;
        };
        ready!(sleep.poll(cx));
        self.set(None);
        Poll::Ready(())
    }
}

#[cfg(test)]
mod tests {
    use std::task::Poll;
    use std::time::{Duration, Instant};

    use super::Alarm;

    /// Polls the alarm once.
    async fn pending(alarm: &mut Alarm) -> bool {
        std::future::poll_fn(|cx| Poll::Ready(alarm.poll(cx).is_pending())).await
    }

    #[tokio::test(start_paused = true)]
    async fn rings_at_its_instant_and_not_once_cleared() {
        let mut alarm = Alarm::new();
        assert!(pending(&mut alarm).await, "a clear alarm is pending");

        alarm.set(Some(Instant::now() + Duration::from_millis(10)));
        assert!(pending(&mut alarm).await);
        std::future::poll_fn(|cx| alarm.poll(cx)).await;
        assert!(pending(&mut alarm).await, "rung, it is clear");

        alarm.set(Some(Instant::now() + Duration::from_millis(10)));
        alarm.set(None);
        tokio::time::advance(Duration::from_millis(20)).await;
        assert!(pending(&mut alarm).await, "cleared, it does not ring");
        assert!(alarm.sleep.is_none(), "cleared, it holds no timer");
    }
}
