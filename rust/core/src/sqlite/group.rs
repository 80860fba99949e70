//! The group-commit thread and its timing policy, free of the interpreter: operations are
//! queued by any thread (`GroupCommit::push`), and one thread of its own inserts them into
//! a transaction that stays open while more keep coming (see `Timing`), commits, then
//! reports the batch through a callback (the binding's, which resolves Python futures, or
//! runs a rolled-back batch through the saver's general path), and looks after the
//! write-ahead log (`Store::after_round`).
//!
//! What an operation is (`Queued`) and where its rows go (`Store`) are the caller's: the
//! SQLite saver queues entries holding `batch::Op`s into a `SqliteStore`.
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::{JoinHandle, ThreadId};
use std::time::{Duration, Instant};

use super::batch::{BatchWriter, Fallback, Op};
use super::checkpointer::Checkpointer;
use super::spin::spin_until;

/// A queued operation, as the thread sees it.
pub trait Queued: Send + 'static {
    /// What the store inserts.
    type Op;
    /// Its submission number (unique, increasing).
    fn seq(&self) -> u64;
    /// Takes the rows to insert (None: a marker, or taken already).
    fn take_op(&mut self) -> Option<Self::Op>;
    /// A marker: somebody waits for everything queued before it, so its batch commits at
    /// once (and a push holding one wakes the thread).
    fn is_marker(&self) -> bool;
    /// Whether a committed batch holding it must be reported (a future to resolve); a
    /// rolled-back batch is always reported.
    fn wants_report(&self) -> bool;
}

/// Where the thread's transactions go.
pub trait Store: Send + 'static {
    type Op;
    fn begin(&mut self) -> Result<(), Fallback>;
    fn insert(&mut self, ops: &[Self::Op]) -> Result<(), Fallback>;
    /// Commits the open transaction; on an error the thread rolls back.
    fn finish(&mut self) -> Result<(), Fallback>;
    fn rollback(&mut self);
    /// Runs after each round's report (the SQLite store checkpoints its log here).
    fn after_round(&mut self) {}
}

/// When the thread commits, and checkpoints: a transaction stays open while operations
/// keep arriving, at most `window` after its first one; it commits once none came for
/// `linger`, at once for a marker (somebody waits) or on close, and after `max_batch`
/// operations.
#[derive(Debug, Clone)]
pub struct Timing {
    pub linger: Duration,
    pub window: Duration,
    pub max_batch: usize,
    /// Checkpoint the write-ahead log once it holds this many frames (0: never): on the
    /// checkpointer's thread, beside the writer (the writer itself copies what is left
    /// at twice as many, or all of it when there is no checkpointer), never inside a
    /// commit that a run waits for (see `SqliteStore`).
    pub wal_autocheckpoint: i32,
    /// How long a waiter (`wait`) spins before it sleeps; when not zero, the thread also
    /// spins while a transaction is open (until it is due, at most `linger` after its last
    /// operation) instead of sleeping between looks: see `spin_until`.
    pub spin: Duration,
}

impl Timing {
    /// When an open transaction (opened at `opened`, its last operation inserted at
    /// `last`) commits if nothing urgent comes first.
    pub fn due(&self, opened: Instant, last: Instant) -> Instant {
        (last + self.linger).min(opened + self.window)
    }
}

/// How often the thread looks for operations while a transaction is open (at most the
/// linger time): inserting them soon after they come keeps the end of a run short.
const POLL: Duration = Duration::from_micros(50);

/// The SQLite saver's store: the batch writer, and the log's checkpointing after rounds.
pub struct SqliteStore {
    pub writer: BatchWriter,
    /// The thread that checkpoints the log beside the writer (None: the writer does).
    pub checkpointer: Option<Checkpointer>,
    /// `Timing::wal_autocheckpoint`.
    pub wal_autocheckpoint: i32,
}

impl Store for SqliteStore {
    type Op = Op;
    fn begin(&mut self) -> Result<(), Fallback> {
        self.writer.begin()
    }
    fn insert(&mut self, ops: &[Op]) -> Result<(), Fallback> {
        self.writer.insert(ops)
    }
    fn finish(&mut self) -> Result<(), Fallback> {
        self.writer.finish()
    }
    fn rollback(&mut self) {
        self.writer.rollback()
    }
    fn after_round(&mut self) {
        let limit = self.wal_autocheckpoint;
        match &self.checkpointer {
            // The checkpointer copies the log while the writer goes on; but the log can
            // start again from its beginning only when a round copied all of it, which
            // the writer's appends keep preventing. So once it holds twice the limit,
            // the writer copies the rest itself (little: the rounds copied the bulk).
            Some(ck) if limit > 0 => {
                let frames = self.writer.connection().wal_frames();
                if frames >= limit.saturating_mul(2) {
                    let _ = self.writer.checkpoint_wal(limit);
                } else if frames >= limit && !ck.pending() {
                    ck.request();
                }
            }
            // (a failed checkpoint leaves the log as it is: the next one tries again)
            _ => {
                let _ = self.writer.checkpoint_wal(limit);
            }
        }
    }
}

struct State<Q> {
    queue: VecDeque<Q>,
    closed: bool,
    /// The thread has ended (nothing queued will be committed any more).
    ended: bool,
    batches: u64,
    /// The thread waits for work with no transaction open: a push must wake it (with one
    /// open, it spins on `Shared::changes`, or looks again every `POLL` without spinning;
    /// only a marker wakes it earlier).
    idle: bool,
}

struct Shared<Q> {
    state: Mutex<State<Q>>,
    /// Signals the thread: work queued (see `State::idle`) or closed.
    work: Condvar,
    /// Signals waiters (`wait`): `committed` moved, or the thread ended.
    done: Condvar,
    /// Bumped after each push and on close, outside the lock: what the thread spins on
    /// while a transaction is open (see `Timing::spin`).
    changes: AtomicU64,
    /// Every operation with a smaller or equal seq has its outcome. Stored under the
    /// state's lock (a waiter checks it there before sleeping on `done`), read without it
    /// by a waiter spinning before it sleeps.
    committed: AtomicU64,
}

impl<Q> Shared<Q> {
    fn lock(&self) -> MutexGuard<'_, State<Q>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Marks the writer closed and tells the thread.
    fn close(&self) {
        self.lock().closed = true;
        self.changes.fetch_add(1, Ordering::Release);
        self.work.notify_all();
    }
}

/// Waits on `signal` while `cond` holds, at most `limit` (None: no limit).
fn wait_while<'a, Q>(
    signal: &Condvar,
    state: MutexGuard<'a, State<Q>>,
    limit: Option<Duration>,
    cond: impl FnMut(&mut State<Q>) -> bool,
) -> MutexGuard<'a, State<Q>> {
    match limit {
        None => signal
            .wait_while(state, cond)
            .unwrap_or_else(|e| e.into_inner()),
        Some(d) => {
            let got = signal.wait_timeout_while(state, d, cond);
            got.unwrap_or_else(|e| e.into_inner()).0
        }
    }
}

/// `push` on a closed writer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Closed;

/// The queue and its thread.
pub struct GroupCommit<Q: Queued> {
    shared: Arc<Shared<Q>>,
    /// How long `wait` spins before it sleeps (`Timing::spin`).
    spin: Duration,
    thread: Mutex<Option<JoinHandle<()>>>,
    thread_id: ThreadId,
}

impl<Q: Queued> GroupCommit<Q> {
    /// Starts the thread (named `name`), which commits into `store` by `timing` and hands
    /// each batch to `report(store, batch, rolled_back)`: a rolled-back batch before the
    /// batch counts as committed (its outcomes are known once the report ran), a
    /// committed one after, and only when one of its operations `wants_report`.
    pub fn start<S, R>(name: &str, store: S, timing: Timing, report: R) -> std::io::Result<Self>
    where
        S: Store<Op = Q::Op>,
        R: FnMut(&mut S, Vec<Q>, bool) + Send + 'static,
    {
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                queue: VecDeque::new(),
                closed: false,
                ended: false,
                batches: 0,
                idle: false,
            }),
            work: Condvar::new(),
            done: Condvar::new(),
            changes: AtomicU64::new(0),
            committed: AtomicU64::new(0),
        });
        let spin = timing.spin;
        let for_thread = Arc::clone(&shared);
        let handle = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                run(&for_thread, store, &timing, report);
                for_thread.lock().ended = true;
                for_thread.done.notify_all();
            })?;
        Ok(GroupCommit {
            shared,
            spin,
            thread_id: handle.thread().id(),
            thread: Mutex::new(Some(handle)),
        })
    }

    /// Queues `entries`, in order (an error when closed).
    pub fn push(&self, entries: Vec<Q>) -> Result<(), Closed> {
        let mut state = self.shared.lock();
        if state.closed {
            return Err(Closed);
        }
        let wake = state.idle || entries.iter().any(Q::is_marker);
        state.queue.extend(entries);
        drop(state);
        self.shared.changes.fetch_add(1, Ordering::Release);
        if wake {
            self.shared.work.notify_one();
        }
        Ok(())
    }

    /// Waits until every operation up to `seq` has its outcome; false on timeout (None: no
    /// limit) or when the thread ended before. Spins first, for at most the writer's `spin`
    /// (within the timeout), then sleeps.
    pub fn wait(&self, seq: u64, limit: Option<Duration>) -> bool {
        let shared = &self.shared;
        let spin = limit.map_or(self.spin, |l| l.min(self.spin));
        spin_until(spin, || shared.committed.load(Ordering::Acquire) >= seq);
        let committed = || shared.committed.load(Ordering::Acquire);
        let pending = |s: &mut State<Q>| committed() < seq && !s.ended;
        drop(wait_while(&shared.done, shared.lock(), limit, pending));
        committed() >= seq
    }

    /// The largest seq up to which every operation has its outcome.
    pub fn committed(&self) -> u64 {
        self.shared.committed.load(Ordering::Acquire)
    }

    /// Transactions committed so far.
    pub fn batches(&self) -> u64 {
        self.shared.lock().batches
    }

    /// Whether the thread still runs.
    pub fn alive(&self) -> bool {
        let handle = self.thread.lock().unwrap_or_else(|e| e.into_inner());
        handle.as_ref().is_some_and(|h| !h.is_finished())
    }

    pub fn closed(&self) -> bool {
        self.shared.lock().closed
    }

    /// Whether the caller runs on the thread itself (e.g. in a report).
    pub fn on_thread(&self) -> bool {
        std::thread::current().id() == self.thread_id
    }

    /// Lets the thread commit what is queued, then stop (without waiting for it).
    pub fn close(&self) {
        self.shared.close();
    }

    /// Waits for the thread to end (after `close`); at once on the thread itself.
    pub fn join(&self) {
        if self.on_thread() {
            return;
        }
        let handle = self.thread.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(handle) = handle {
            let _ = handle.join();
        }
    }
}

impl<Q: Queued> Drop for GroupCommit<Q> {
    fn drop(&mut self) {
        // (not joined: the thread finishes what is queued on its own)
        self.shared.close();
    }
}

/// The thread: one transaction per round (see `Timing`), then its report; until closed.
fn run<Q, S, R>(shared: &Shared<Q>, mut store: S, timing: &Timing, mut report: R)
where
    Q: Queued,
    S: Store<Op = Q::Op>,
    R: FnMut(&mut S, Vec<Q>, bool),
{
    loop {
        let mut batch: Vec<Q> = Vec::new();
        let mut n_ops = 0;
        let mut failure = None;
        let mut started: Option<Instant> = None;
        let mut last_op = Instant::now();
        loop {
            let (taken, urgent) = {
                let mut state = shared.lock();
                if state.queue.is_empty() && !state.closed {
                    let empty = |s: &mut State<Q>| s.queue.is_empty() && !s.closed;
                    match started {
                        // nothing open: wait for work
                        None => {
                            state.idle = true;
                            state = wait_while(&shared.work, state, None, empty);
                            state.idle = false;
                        }
                        // one open: spin (or look again every `POLL`) until it is due,
                        // inserting operations soon after they come (what a run's end
                        // waits for then holds little left to insert)
                        Some(t) => {
                            let left = timing
                                .due(t, last_op)
                                .saturating_duration_since(Instant::now());
                            if !left.is_zero() && timing.spin.is_zero() {
                                let wait = Some(left.min(POLL));
                                state = wait_while(&shared.work, state, wait, empty);
                            } else if !left.is_zero() {
                                // (a push after this load bumps `changes` after it queued)
                                let seen = shared.changes.load(Ordering::Acquire);
                                drop(state);
                                spin_until(left, || shared.changes.load(Ordering::Acquire) != seen);
                                state = shared.lock();
                            }
                        }
                    }
                }
                let n = state
                    .queue
                    .len()
                    .min(timing.max_batch.saturating_sub(batch.len()).max(1));
                let taken: Vec<Q> = state.queue.drain(..n).collect();
                let urgent = state.closed || taken.iter().any(Q::is_marker);
                (taken, urgent)
            };
            if taken.is_empty() {
                match started {
                    Some(t) if !urgent && Instant::now() < timing.due(t, last_op) => continue,
                    _ => break, // lingered (or closed) with nothing new
                }
            }
            last_op = Instant::now();
            let mut taken = taken;
            let new_ops: Vec<Q::Op> = taken.iter_mut().filter_map(Q::take_op).collect();
            if failure.is_none() && !new_ops.is_empty() {
                if started.is_none() {
                    failure = store.begin().err();
                    started = Some(Instant::now());
                }
                if failure.is_none() {
                    failure = store.insert(&new_ops).err();
                }
            }
            n_ops += new_ops.len();
            batch.extend(taken);
            let expired = started.is_some_and(|t| t.elapsed() >= timing.window);
            if failure.is_some() || urgent || expired || n_ops >= timing.max_batch {
                break;
            }
        }
        if batch.is_empty() {
            break; // closed, nothing left
        }
        let last = batch.last().map_or(0, Q::seq);
        let rolled_back = if started.is_none() {
            false // only markers
        } else if failure.is_some() || store.finish().is_err() {
            store.rollback();
            true
        } else {
            false
        };
        let finish = |shared: &Shared<Q>| {
            let mut state = shared.lock();
            shared.committed.store(last, Ordering::Release);
            if started.is_some() && !rolled_back {
                state.batches += 1;
            }
            drop(state);
            shared.done.notify_all();
        };
        if rolled_back {
            // the outcomes are known once the report ran (the binding's runs the batch
            // through the saver's general path, which also drops the batch's
            // not-yet-committed version states that `committed` would let the saver keep)
            report(&mut store, batch, true);
            finish(shared);
        } else {
            finish(shared);
            if batch.iter().any(Q::wants_report) {
                report(&mut store, batch, false);
            } // else: the batch is dropped here
        }
        store.after_round();
    }
}

/// A queued item of the tests (the thread's own and the SQLite writer's): an op, reported
/// when committed if `report`, or a marker (no op).
#[cfg(test)]
pub(crate) struct TestItem<O> {
    seq: u64,
    op: Option<O>,
    marker: bool,
    report: bool,
}

#[cfg(test)]
impl<O> TestItem<O> {
    pub(crate) fn op(seq: u64, op: O, report: bool) -> Self {
        TestItem {
            seq,
            op: Some(op),
            marker: false,
            report,
        }
    }

    /// A marker nobody needs reported (its waiter uses `wait`).
    pub(crate) fn marker(seq: u64) -> Self {
        TestItem {
            seq,
            op: None,
            marker: true,
            report: false,
        }
    }
}

#[cfg(test)]
impl<O: Send + 'static> Queued for TestItem<O> {
    type Op = O;
    fn seq(&self) -> u64 {
        self.seq
    }
    fn take_op(&mut self) -> Option<O> {
        self.op.take()
    }
    fn is_marker(&self) -> bool {
        self.marker
    }
    fn wants_report(&self) -> bool {
        self.report
    }
}

#[cfg(test)]
mod tests;
