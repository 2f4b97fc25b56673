//! The broker connection's side of a running bridge, whichever format it publishes: what
//! the MQTT event loop has seen, shared with the handle, and how a DISCONNECT is seen out.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rumqttc::EventLoop;
use tokio::sync::Notify;

use crate::error::BrokerError;
use crate::payload;
use crate::queue::RobotQueue;

/// What the broker side has seen, shared by the event loop and the handle.
#[derive(Debug, Default)]
pub(crate) struct BrokerState {
    pub(crate) connected: AtomicBool,
    pub(crate) connections: AtomicU64,
    /// QoS 1 publications sent since the connection was made, and acknowledged.
    pub(crate) sent: AtomicU64,
    pub(crate) acked: AtomicU64,
    /// Publications the MQTT client held unacknowledged when the broker came back
    /// without the session (so the client discarded them): lost, and counted.
    pub(crate) lost_with_session: AtomicU64,
    /// Each robot's queue by its data topic, so that a publication lost in flight is
    /// counted against its robot.
    pub(crate) data_topics: Mutex<HashMap<String, Arc<RobotQueue>>>,
    pub(crate) last_error: Mutex<Option<BrokerError>>,
    pub(crate) connack: Notify,
    pub(crate) disconnected: AtomicBool,
    /// Reconnections to a broker that had no session of ours: a broker that lost its
    /// state, whose retained statuses may be gone too. The bridge and every robot then
    /// announce theirs again.
    pub(crate) fresh_sessions: AtomicU64,
    pub(crate) fresh_session: Notify,
}

impl BrokerState {
    /// The connection failed: why, said before the state says so, so whoever sees it
    /// down reads this failure and not the one before.
    /// `publications` (topic and bytes) were lost with a broken connection: each counted,
    /// and the packages of each batch against its robot.
    pub(crate) fn lost_in_flight<'a>(
        &self,
        publications: impl Iterator<Item = (&'a str, &'a [u8])>,
    ) {
        let robots = self
            .data_topics
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        for (topic, bytes) in publications {
            self.lost_with_session.fetch_add(1, Ordering::Relaxed);
            // A status is published again; only a batch's packages are gone.
            if let (Some(queue), Ok(batch)) = (robots.get(topic), payload::decode(bytes)) {
                queue.lost_in_flight(batch.count() as u64);
            }
        }
    }

    pub(crate) fn failed(&self, why: BrokerError) {
        *self
            .last_error
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(why);
        self.connected.store(false, Ordering::Relaxed);
    }

    /// Waits for the next reconnection to a broker without our session, unless one came
    /// since `seen` (a count of them); the count now.
    pub(crate) async fn fresh_session_since(&self, seen: u64) -> u64 {
        let fresh = self.fresh_session.notified();
        tokio::pin!(fresh);
        // Registered before the count is read, so a reconnection between the two wakes it.
        fresh.as_mut().enable();
        let now = self.fresh_sessions.load(Ordering::Relaxed);
        if now != seen {
            return now;
        }
        fresh.await;
        self.fresh_sessions.load(Ordering::Relaxed)
    }
}

/// After the event loop sent DISCONNECT: polls on until the broker closes the
/// connection (a second at most), so the DISCONNECT and anything still buffered are
/// written.
pub(crate) async fn finish_disconnect(eventloop: &mut EventLoop) {
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        while eventloop.poll().await.is_ok() {}
    })
    .await;
}
