//! The engine's clock: wall time in Unix epoch milliseconds, driven by tokio time so that tests
//! with tokio's paused time (`tokio::time::advance`) move timestamps, deadlines and retention
//! together.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Wall-clock source for timestamps, deadlines and retention (ms since the Unix epoch).
#[derive(Debug, Clone)]
pub struct Clock(Kind);

#[derive(Debug, Clone)]
enum Kind {
    Tokio { wall_ms: i64, at: tokio::time::Instant },
    Manual(Arc<AtomicI64>),
}

impl Clock {
    /// The system time, advanced by tokio's clock from now on (so paused test time moves it).
    pub fn system() -> Self {
        let wall_ms = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0);
        Self::starting_at(wall_ms)
    }

    /// Starts at `unix_ms` and advances with tokio's clock (e.g. to reopen a store "25 hours
    /// later" in a test).
    pub fn starting_at(unix_ms: i64) -> Self {
        Clock(Kind::Tokio { wall_ms: unix_ms, at: tokio::time::Instant::now() })
    }

    /// A clock that moves only through [`Clock::advance`]. After advancing, call
    /// [`crate::companion::Engine::recheck_timers`] so that due deadlines fire.
    pub fn manual(unix_ms: i64) -> Self {
        Clock(Kind::Manual(Arc::new(AtomicI64::new(unix_ms))))
    }

    /// Moves a manual clock forward by `ms`. Returns false (and does nothing) for a tokio-driven
    /// clock: use `tokio::time::advance` there.
    pub fn advance(&self, ms: u64) -> bool {
        match &self.0 {
            Kind::Manual(t) => {
                t.fetch_add(i64::try_from(ms).unwrap_or(i64::MAX), Ordering::SeqCst);
                true
            }
            Kind::Tokio { .. } => false,
        }
    }

    /// Now, ms since the Unix epoch.
    pub fn now_ms(&self) -> i64 {
        match &self.0 {
            Kind::Tokio { wall_ms, at } => wall_ms.saturating_add(at.elapsed().as_millis() as i64),
            Kind::Manual(t) => t.load(Ordering::SeqCst),
        }
    }

    /// How long to sleep (in tokio time) until wall time `unix_ms`; zero if it has passed.
    pub(crate) fn until(&self, unix_ms: i64) -> Duration {
        Duration::from_millis(u64::try_from(unix_ms.saturating_sub(self.now_ms())).unwrap_or(0))
    }
}
