//! Waiting by spinning, for the short waits of the group-commit writer: a thread that
//! sleeps on a condition variable takes tens of microseconds to wake on a small virtual
//! machine (measured: ~45 µs from a push to the writer's pickup, and as much again from
//! its commit to the waiting run), a large part of what a run's end waits for. Spinning
//! sees the change within a microsecond, at the cost of the spinning core; so each wait
//! is bounded, and yields the core to other runnable threads now and then.
use std::time::{Duration, Instant};

/// Spins until `done()` holds (true) or `limit` has passed (false).
pub fn spin_until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    let mut round: u32 = 0;
    loop {
        if done() {
            return true;
        }
        if start.elapsed() >= limit {
            return false;
        }
        for _ in 0..32 {
            std::hint::spin_loop();
        }
        round = round.wrapping_add(1);
        if round.is_multiple_of(16) {
            std::thread::yield_now();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    #[test]
    fn returns_once_done_or_at_the_limit() {
        assert!(spin_until(Duration::ZERO, || true));
        let start = Instant::now();
        assert!(!spin_until(Duration::from_millis(2), || false));
        assert!(start.elapsed() >= Duration::from_millis(2));
    }

    #[test]
    fn sees_another_threads_change() {
        let flag = Arc::new(AtomicBool::new(false));
        let setter = {
            let flag = Arc::clone(&flag);
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(1));
                flag.store(true, Ordering::Release);
            })
        };
        assert!(spin_until(Duration::from_secs(10), || flag.load(Ordering::Acquire)));
        setter.join().unwrap();
    }
}
