//! Checkpointing the write-ahead log on a thread and connection of its own, so that the
//! writer's next transactions do not wait for it. PASSIVE checkpoints never block the
//! writer: frames it appends meanwhile are left for the next round, and the log starts
//! again from its beginning at the first transaction after a round that copied it all.
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

use super::conn::Connection;

#[derive(Default)]
struct Ask {
    pending: bool,
    closed: bool,
    rounds: u64,
}

struct Shared {
    ask: Mutex<Ask>,
    signal: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Ask> {
        self.ask.lock().unwrap_or_else(|e| e.into_inner())
    }
}

pub struct Checkpointer {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Checkpointer {
    /// Starts the thread, which checkpoints through `conn` (a connection of its own to
    /// the writer's database) each time it is asked.
    pub fn start(mut conn: Connection) -> std::io::Result<Checkpointer> {
        let shared = Arc::new(Shared {
            ask: Mutex::new(Ask::default()),
            signal: Condvar::new(),
        });
        let for_thread = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("warpgraph-sqlite-checkpointer".into())
            .spawn(move || loop {
                let mut ask = for_thread.lock();
                while !ask.pending && !ask.closed {
                    ask = for_thread
                        .signal
                        .wait(ask)
                        .unwrap_or_else(|e| e.into_inner());
                }
                if !ask.pending {
                    return; // closed, nothing asked
                }
                ask.pending = false;
                drop(ask);
                // (a failed round, e.g. busy, leaves the log as it is: the next one tries)
                let _ = conn.execute("PRAGMA wal_checkpoint(PASSIVE)");
                for_thread.lock().rounds += 1;
                for_thread.signal.notify_all();
            })?;
        Ok(Checkpointer {
            shared,
            thread: Some(thread),
        })
    }

    /// Asks for a round (several asks before it starts make one round).
    pub fn request(&self) {
        self.shared.lock().pending = true;
        self.shared.signal.notify_all();
    }

    /// Rounds run so far.
    pub fn rounds(&self) -> u64 {
        self.shared.lock().rounds
    }

    /// Whether a round is asked for and has not started yet.
    pub fn pending(&self) -> bool {
        self.shared.lock().pending
    }

    /// Runs the round asked for, if any, then stops the thread.
    pub fn stop(&mut self) {
        self.shared.lock().closed = true;
        self.shared.signal.notify_all();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        self.stop();
    }
}
