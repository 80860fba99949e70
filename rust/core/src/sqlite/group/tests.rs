//! The thread's timing policy and reporting, over a store that records what it is asked.
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::*;

#[derive(Debug, Clone, PartialEq)]
enum Event {
    Begin,
    Insert(Vec<u64>),
    Finish,
    Rollback,
    /// (the batch's seqs, rolled back)
    Report(Vec<u64>, bool),
    AfterRound,
}

type Log = Arc<Mutex<Vec<Event>>>;

struct Recorder {
    log: Log,
    /// An insert holding this op fails (as a fence that did not hold).
    fail_on: Option<u64>,
}

impl Store for Recorder {
    type Op = u64;
    fn begin(&mut self) -> Result<(), Fallback> {
        self.log.lock().unwrap().push(Event::Begin);
        Ok(())
    }
    fn insert(&mut self, ops: &[u64]) -> Result<(), Fallback> {
        self.log.lock().unwrap().push(Event::Insert(ops.to_vec()));
        match self.fail_on {
            Some(bad) if ops.contains(&bad) => Err(Fallback::Conflict(bad)),
            _ => Ok(()),
        }
    }
    fn finish(&mut self) -> Result<(), Fallback> {
        self.log.lock().unwrap().push(Event::Finish);
        Ok(())
    }
    fn rollback(&mut self) {
        self.log.lock().unwrap().push(Event::Rollback);
    }
    fn after_round(&mut self) {
        self.log.lock().unwrap().push(Event::AfterRound);
    }
}

type Item = TestItem<u64>;

/// An operation (reported only when `report`).
fn op(seq: u64, report: bool) -> Item {
    TestItem::op(seq, seq, report)
}

fn marker(seq: u64) -> Item {
    TestItem::marker(seq)
}

fn timing(linger_ms: u64, window_ms: u64, max_batch: usize) -> Timing {
    Timing {
        linger: Duration::from_millis(linger_ms),
        window: Duration::from_millis(window_ms),
        max_batch,
        wal_autocheckpoint: 0,
        spin: Duration::ZERO,
    }
}

fn start(timing: Timing, fail_on: Option<u64>) -> (GroupCommit<Item>, Log) {
    let log: Log = Arc::default();
    let store = Recorder {
        log: Arc::clone(&log),
        fail_on,
    };
    let for_report = Arc::clone(&log);
    let group = GroupCommit::start("test-group", store, timing, move |_, batch, rolled_back| {
        let seqs = batch.iter().map(|e: &Item| e.seq).collect();
        for_report
            .lock()
            .unwrap()
            .push(Event::Report(seqs, rolled_back));
    })
    .unwrap();
    (group, log)
}

fn events(log: &Log) -> Vec<Event> {
    log.lock().unwrap().clone()
}

/// Closes the group, waits for its thread, and returns what the store and report saw.
fn stop(group: GroupCommit<Item>, log: &Log) -> Vec<Event> {
    group.close();
    group.join();
    events(log)
}

const LONG: u64 = 60_000;
const LIMIT: Option<Duration> = Some(Duration::from_secs(30));

#[test]
fn a_marker_commits_its_batch_at_once() {
    let (group, log) = start(timing(LONG, LONG, 100), None);
    let t0 = Instant::now();
    group
        .push(vec![op(1, true), op(2, false), marker(3)])
        .unwrap();
    assert!(group.wait(3, LIMIT));
    assert!(t0.elapsed() < Duration::from_secs(LONG / 2000));
    assert_eq!(group.committed(), 3);
    assert_eq!(group.batches(), 1);
    use Event::*;
    assert_eq!(
        stop(group, &log),
        [
            Begin,
            Insert(vec![1, 2]),
            Finish,
            Report(vec![1, 2, 3], false),
            AfterRound
        ]
    );
}

#[test]
fn a_batch_nobody_needs_reported_is_not() {
    let (group, log) = start(timing(LONG, LONG, 100), None);
    group.push(vec![op(1, false), marker(2)]).unwrap();
    assert!(group.wait(2, LIMIT));
    group.close();
    group.join();
    use Event::*;
    assert_eq!(events(&log), [Begin, Insert(vec![1]), Finish, AfterRound]);
}

#[test]
fn a_quiet_linger_commits() {
    let (group, _log) = start(timing(30, LONG, 100), None);
    let t0 = Instant::now();
    group.push(vec![op(1, false)]).unwrap();
    assert!(group.wait(1, LIMIT));
    let took = t0.elapsed();
    assert!(took >= Duration::from_millis(30), "{took:?}");
    assert!(took < Duration::from_secs(LONG / 2000), "{took:?}");
    assert_eq!(group.batches(), 1);
}

#[test]
fn the_window_bounds_an_open_transaction() {
    let (group, log) = start(timing(LONG, 40, 100), None);
    let t0 = Instant::now();
    group.push(vec![op(1, false)]).unwrap();
    // keep operations coming: the linger never runs out, the window does
    let mut seq = 1;
    while group.committed() < 1 && t0.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(5));
        seq += 1;
        group.push(vec![op(seq, false)]).unwrap();
    }
    let took = t0.elapsed();
    assert!(group.committed() >= 1);
    assert!(took >= Duration::from_millis(40), "{took:?}");
    assert!(took < Duration::from_secs(10), "{took:?}");
    group.close();
    group.join();
    // every operation is committed, and the first batch ended while more kept coming
    assert_eq!(group.committed(), seq);
    let finishes = events(&log).iter().filter(|e| **e == Event::Finish).count();
    assert!(finishes >= 2, "{:?}", events(&log));
}

#[test]
fn max_batch_splits_the_queue() {
    let (group, log) = start(timing(LONG, LONG, 2), None);
    let items = vec![
        op(1, false),
        op(2, false),
        op(3, false),
        op(4, false),
        op(5, false),
        marker(6),
    ];
    group.push(items).unwrap();
    assert!(group.wait(6, LIMIT));
    assert_eq!(group.batches(), 3);
    let inserts: Vec<Event> = events(&log)
        .into_iter()
        .filter(|e| matches!(e, Event::Insert(_)))
        .collect();
    use Event::Insert;
    assert_eq!(
        inserts,
        [Insert(vec![1, 2]), Insert(vec![3, 4]), Insert(vec![5])]
    );
}

#[test]
fn a_failed_batch_is_rolled_back_and_reported() {
    let (group, log) = start(timing(LONG, LONG, 100), Some(2));
    group
        .push(vec![op(1, false), op(2, false), marker(3)])
        .unwrap();
    assert!(group.wait(3, LIMIT));
    assert_eq!(group.batches(), 0); // (rolled back: not counted)
    use Event::*;
    assert_eq!(
        stop(group, &log),
        [
            Begin,
            Insert(vec![1, 2]),
            Rollback,
            Report(vec![1, 2, 3], true),
            AfterRound
        ]
    );
}

#[test]
fn only_markers_open_no_transaction() {
    let (group, log) = start(timing(LONG, LONG, 100), None);
    group.push(vec![marker(1)]).unwrap();
    assert!(group.wait(1, LIMIT));
    assert_eq!(group.batches(), 0);
    assert_eq!(stop(group, &log), [Event::AfterRound]);
}

#[test]
fn close_commits_what_is_queued_then_ends() {
    let (group, log) = start(timing(LONG, LONG, 100), None);
    group.push(vec![op(1, false), op(2, false)]).unwrap();
    group.close();
    assert!(group.closed());
    group.join();
    assert!(!group.alive());
    assert_eq!(group.committed(), 2);
    assert!(events(&log).contains(&Event::Finish));
    assert_eq!(group.push(vec![op(3, false)]), Err(Closed));
    // the thread ended: a wait for what never came returns at once, unsatisfied
    assert!(!group.wait(3, None));
}

#[test]
fn a_wait_times_out() {
    let (group, _log) = start(timing(LONG, LONG, 100), None);
    group.push(vec![op(1, false)]).unwrap();
    let t0 = Instant::now();
    assert!(!group.wait(1, Some(Duration::from_millis(20))));
    assert!(t0.elapsed() >= Duration::from_millis(20));
    assert_eq!(group.committed(), 0);
}

#[test]
fn spinning_waits_commit_as_sleeping_ones_do() {
    let mut t = timing(5, LONG, 100);
    t.spin = Duration::from_millis(2);
    let (group, log) = start(t, None);
    group.push(vec![op(1, true)]).unwrap();
    group.push(vec![op(2, false), marker(3)]).unwrap();
    assert!(group.wait(3, LIMIT));
    group.close();
    group.join();
    let reported: Vec<u64> = events(&log)
        .into_iter()
        .filter_map(|e| match e {
            Event::Report(seqs, false) => Some(seqs),
            _ => None,
        })
        .flatten()
        .collect();
    assert!(reported.contains(&1), "{:?}", events(&log));
}

#[test]
fn due_is_the_earlier_of_linger_and_window() {
    let t = timing(10, 100, 1);
    let opened = Instant::now();
    assert_eq!(t.due(opened, opened), opened + Duration::from_millis(10));
    let late = opened + Duration::from_millis(95);
    assert_eq!(t.due(opened, late), opened + Duration::from_millis(100));
}
