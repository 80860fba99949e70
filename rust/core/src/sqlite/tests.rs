//! The batch writer against a real database file (the system's libsqlite3, loaded the way
//! the binding loads the interpreter's).
use super::*;

fn api() -> &'static Api {
    ["libsqlite3.so.0", "libsqlite3.so", "libsqlite3.dylib"]
        .iter()
        .find_map(|lib| Api::load(Some(lib), false).ok())
        .expect("these tests need a system libsqlite3 (Debian: libsqlite3-0)")
}

const SCHEMA: &[&str] = &[
    "PRAGMA journal_mode = WAL",
    "CREATE TABLE cp (thread TEXT, ns TEXT, id TEXT, parent TEXT, body BLOB, \
     PRIMARY KEY (thread, ns, id)) WITHOUT ROWID",
    "CREATE TABLE blobs (thread TEXT, ch TEXT, v TEXT, body BLOB, PRIMARY KEY (thread, ch, v))",
    "CREATE TABLE writes (thread TEXT, id TEXT, idx INT, body BLOB, PRIMARY KEY (thread, id, idx))",
];

fn sql() -> Sql {
    Sql {
        head: "SELECT max(id) FROM cp WHERE thread = ? AND ns = ?".into(),
        checkpoint: "INSERT INTO cp VALUES (?, ?, ?, nullif(?, 0), ?) ON CONFLICT DO NOTHING"
            .into(),
        blob: "INSERT OR REPLACE INTO blobs VALUES (?, ?, ?, ?)".into(),
        write: "INSERT OR IGNORE INTO writes VALUES (?, ?, ?, ?)".into(),
        write_replace: "INSERT OR REPLACE INTO writes VALUES (?, ?, ?, ?)".into(),
    }
}

fn t(s: &str) -> Value {
    Value::Text(s.into())
}

struct Db {
    dir: std::path::PathBuf,
}

impl Db {
    fn new(name: &str) -> Db {
        let dir = std::env::temp_dir().join(format!("wg-batch-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let db = Db { dir };
        std::fs::File::create(db.path()).unwrap(); // (an empty file is a new database)
        let mut conn = db.open();
        for stmt in SCHEMA {
            conn.execute(stmt).unwrap();
        }
        db
    }
    fn path(&self) -> String {
        self.dir.join("db.sqlite").to_string_lossy().into_owned()
    }
    fn open(&self) -> Connection {
        let mut conn = Connection::open(api(), &self.path(), false).unwrap();
        conn.busy_timeout(5_000).unwrap();
        conn
    }
    fn writer(&self) -> BatchWriter {
        BatchWriter::new(self.open(), &sql()).unwrap()
    }
    fn count(&self, table: &str) -> Option<String> {
        let mut conn = self.open();
        let stmt = conn
            .prepare(&format!("SELECT CAST(count(*) AS TEXT) FROM {table}"))
            .unwrap();
        conn.query_text(stmt, &[]).unwrap()
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn put(seq: u64, id: &str, parent: Option<&str>, expected: Option<Option<&str>>) -> Op {
    Op {
        seq,
        expected_head: expected.map(|e| e.map(str::to_owned)),
        fence_key: None,
        checkpoint: Some(vec![
            t("t"),
            t(""),
            t(id),
            parent.map_or(Value::Int(0), t),
            Value::Blob(vec![1, 2, 3]),
        ]),
        rows: vec![(
            Table::Blob,
            vec![t("t"), t("ch"), t(id), Value::Blob(vec![])],
        )],
        depends_on: None,
    }
}

fn writes(seq: u64, id: &str) -> Op {
    Op {
        seq,
        rows: vec![
            (
                Table::Write,
                vec![t("t"), t(id), Value::Int(0), Value::Blob(b"a".to_vec())],
            ),
            (
                Table::Write,
                vec![t("t"), t(id), Value::Int(0), Value::Blob(b"dup".to_vec())],
            ),
            (
                Table::WriteReplace,
                vec![t("t"), t(id), Value::Int(-1), Value::Null],
            ),
        ],
        ..Op::default()
    }
}

#[test]
fn a_batch_commits_every_row_in_order() {
    let db = Db::new("order");
    let mut w = db.writer();
    let ops = [
        put(1, "a", None, Some(None)),
        writes(2, "a"),
        put(3, "b", Some("a"), Some(Some("a"))), // sees the batch's own insert
    ];
    w.commit(&ops).unwrap();
    assert_eq!(db.count("cp").as_deref(), Some("2"));
    assert_eq!(db.count("blobs").as_deref(), Some("2"));
    assert_eq!(db.count("writes").as_deref(), Some("2")); // the duplicate idx is ignored
    let mut conn = db.open();
    let q = conn
        .prepare("SELECT quote(parent) || quote(body) FROM cp WHERE id = ?")
        .unwrap();
    assert_eq!(
        conn.query_text(q, &[t("a")]).unwrap().as_deref(),
        Some("NULLX'010203'")
    );
    assert_eq!(
        conn.query_text(q, &[t("b")]).unwrap().as_deref(),
        Some("'a'X'010203'")
    );
    let q = conn
        .prepare("SELECT quote(body) FROM blobs WHERE v = 'a'")
        .unwrap();
    assert_eq!(conn.query_text(q, &[]).unwrap().as_deref(), Some("X''")); // empty, not NULL
}

#[test]
fn anything_unusual_rolls_the_whole_batch_back() {
    let db = Db::new("fallback");
    let mut w = db.writer();
    w.commit(&[put(1, "a", None, Some(None))]).unwrap();
    // a fence that does not hold
    let got = w.commit(&[writes(2, "a"), put(3, "b", Some("a"), Some(Some("x")))]);
    assert_eq!(got, Err(Fallback::Conflict(3)));
    // an id stored already
    let got = w.commit(&[put(4, "c", Some("a"), None), put(5, "a", None, None)]);
    assert_eq!(got, Err(Fallback::StoredAlready(5)));
    // an op encoded against a failed one
    w.mark_failed(3);
    let mut child = put(6, "d", Some("b"), None);
    child.depends_on = Some(3);
    assert_eq!(w.commit(&[child]), Err(Fallback::Dependency(6)));
    // an SQL error (a row of the wrong width)
    let mut bad = writes(7, "a");
    bad.rows[0].1.push(Value::Int(1));
    assert!(matches!(
        w.commit(&[put(8, "e", None, None), bad]),
        Err(Fallback::Sql(_))
    ));
    // nothing of the failed batches is stored, and the writer still works
    assert_eq!(db.count("cp").as_deref(), Some("1"));
    assert_eq!(db.count("writes").as_deref(), Some("0"));
    w.commit(&[put(9, "f", Some("a"), Some(Some("a")))])
        .unwrap();
    assert_eq!(db.count("cp").as_deref(), Some("2"));
}

/// `writes(seq, id)` fenced: the head of ("t", "") must be `expected`.
fn fenced_writes(seq: u64, id: &str, expected: Option<&str>) -> Op {
    Op {
        expected_head: Some(expected.map(str::to_owned)),
        fence_key: Some(vec![t("t"), t("")]),
        ..writes(seq, id)
    }
}

#[test]
fn writes_are_fenced_like_puts() {
    let db = Db::new("wfence");
    let mut w = db.writer();
    w.commit(&[
        put(1, "a", None, Some(None)),
        fenced_writes(2, "a", Some("a")),
    ])
    .unwrap();
    assert_eq!(db.count("writes").as_deref(), Some("2"));
    // a writes op after the batch's own put sees its head
    w.commit(&[
        put(3, "b", Some("a"), Some(Some("a"))),
        fenced_writes(4, "b", Some("b")),
    ])
    .unwrap();
    assert_eq!(db.count("writes").as_deref(), Some("4"));
    // the head moved on: a stale writes op rolls its batch back
    let got = w.commit(&[put(5, "c", None, None), fenced_writes(6, "b", Some("a"))]);
    assert_eq!(got, Err(Fallback::Conflict(6)));
    assert_eq!(db.count("cp").as_deref(), Some("2"));
    assert_eq!(db.count("writes").as_deref(), Some("4"));
    // a writes op without a key is not fenced (it has nothing to check against)
    let mut keyless = fenced_writes(7, "z", Some("nope"));
    keyless.fence_key = None;
    w.commit(&[keyless]).unwrap();
    assert_eq!(db.count("writes").as_deref(), Some("6"));
}

#[test]
fn a_locked_database_waits_then_reports_busy() {
    let db = Db::new("busy");
    let mut other = db.open();
    other.execute("BEGIN IMMEDIATE").unwrap();
    let mut w = db.writer();
    w.connection().busy_timeout(50).unwrap();
    match w.commit(&[put(1, "a", None, None)]) {
        Err(Fallback::Sql(e)) => assert_eq!(e.code & 0xff, 5, "{e}"), // SQLITE_BUSY
        got => panic!("expected SQLITE_BUSY, got {got:?}"),
    }
    other.execute("COMMIT").unwrap();
    w.commit(&[put(2, "a", None, None)]).unwrap();
    assert_eq!(db.count("cp").as_deref(), Some("1"));
}

#[test]
fn loading_a_library_that_is_not_there_is_an_error() {
    let err = Api::load(Some("/nonexistent/libsqlite3.so"), false)
        .err()
        .unwrap();
    assert!(err.contains("cannot open"), "{err}");
    // only_loaded (RTLD_NOLOAD) never loads anything new
    let err = Api::load(Some("libwarpgraph-not-loaded.so"), true)
        .err()
        .unwrap();
    assert!(err.contains("cannot open"), "{err}");
}

/// A writer counting the log's frames, after 20 commits; and those frames.
fn logged_writer(db: &Db) -> (BatchWriter, i32) {
    let mut w = db.writer();
    w.connection().track_wal();
    for i in 0..20u64 {
        w.commit(&[put(i, &format!("{i:04}"), None, None)]).unwrap();
    }
    let frames = w.connection().wal_frames();
    assert!(frames > 0, "the hook counted no frames");
    (w, frames)
}

#[test]
fn the_log_is_checkpointed_when_the_owner_says_so() {
    let db = Db::new("wal");
    let (mut w, frames) = logged_writer(&db);
    assert!(!w.checkpoint_wal(frames + 1).unwrap()); // below the threshold: nothing done
    assert!(w.checkpoint_wal(frames).unwrap());
    // the next commit starts the log again from its beginning
    w.commit(&[put(99, "zz", None, None)]).unwrap();
    assert!(
        w.connection().wal_frames() < frames,
        "{}",
        w.connection().wal_frames()
    );
    assert_eq!(db.count("cp").as_deref(), Some("21"));
}

#[test]
fn borrowed_bytes_bind_like_owned_ones() {
    let db = Db::new("borrowed");
    let mut w = db.writer();
    let (text, blob) = (String::from("b"), vec![9u8, 8]);
    let mut op = put(1, "b", None, None);
    // SAFETY: `text` and `blob` outlive the op and are not changed meanwhile
    op.checkpoint.as_mut().unwrap()[2] = unsafe { Value::borrowed(text.as_bytes(), true) };
    op.rows[0].1[3] = unsafe { Value::borrowed(&blob, false) };
    op.rows.push((
        Table::Blob,
        vec![t("t"), t("e"), t("b"), unsafe {
            Value::borrowed(&[], false)
        }],
    ));
    w.commit(&[op]).unwrap();
    let mut conn = db.open();
    let q = conn
        .prepare("SELECT group_concat(quote(body), ' ') FROM blobs")
        .unwrap();
    assert_eq!(
        conn.query_text(q, &[]).unwrap().as_deref(),
        Some("X'0908' X''")
    );
    let q = conn
        .prepare("SELECT typeof(id) || ':' || id FROM cp")
        .unwrap();
    assert_eq!(conn.query_text(q, &[]).unwrap().as_deref(), Some("text:b"));
}

#[test]
fn the_checkpointer_copies_the_log_beside_the_writer() {
    let db = Db::new("ckpt");
    let (mut w, frames) = logged_writer(&db);
    let mut ck = Checkpointer::start(db.open()).unwrap();
    ck.request();
    ck.request(); // (asked twice before it ran: one round, or two if it was quick)
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while ck.rounds() == 0 || ck.pending() {
        assert!(std::time::Instant::now() < deadline, "no round ran");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    // the writer keeps committing; its first commit after the round starts the log again
    w.commit(&[put(99, "zz", None, None)]).unwrap();
    assert!(
        w.connection().wal_frames() < frames,
        "{} frames after the round, {frames} before",
        w.connection().wal_frames()
    );
    let rounds = ck.rounds();
    assert!((1..=2).contains(&rounds), "{rounds} rounds");
    ck.request();
    ck.stop(); // runs the round asked for, then ends
    assert_eq!(ck.rounds(), rounds + 1);
    assert_eq!(db.count("cp").as_deref(), Some("21"));
}

/// A queued op for the group-commit thread (never reported unless rolled back).
type Queued1 = group::TestItem<Op>;

fn queued(op: Op) -> Queued1 {
    group::TestItem::op(op.seq, op, false)
}

fn queued_marker(seq: u64) -> Queued1 {
    group::TestItem::marker(seq)
}

#[test]
fn the_group_commits_into_the_database_and_reports_a_rollback() {
    use std::sync::{Arc, Mutex};
    use std::time::Duration;
    let db = Db::new("group");
    let mut writer = db.writer();
    // (with no checkpointer the thread checkpoints the log itself after each round: that
    // runs here, unobserved; the checkpoint tests above look at the log)
    writer.connection().track_wal();
    let store = SqliteStore {
        writer,
        checkpointer: None,
        wal_autocheckpoint: 1,
    };
    let timing = Timing {
        linger: Duration::from_secs(60),
        window: Duration::from_secs(60),
        max_batch: 100,
        wal_autocheckpoint: 1,
        spin: Duration::ZERO,
    };
    let rolled_back: Arc<Mutex<Vec<Vec<u64>>>> = Arc::default();
    let seen = Arc::clone(&rolled_back);
    let report = move |store: &mut SqliteStore, batch: Vec<Queued1>, rb: bool| {
        assert!(rb, "only a rolled-back batch is reported here");
        seen.lock()
            .unwrap()
            .push(batch.iter().map(|e| e.seq()).collect());
        // (the binding marks what its general path failed: ops depending on it fall back)
        store.writer.mark_failed(5);
    };
    let group = GroupCommit::start("test-sqlite-group", store, timing, report).unwrap();
    let limit = Some(Duration::from_secs(30));
    let ops = vec![
        queued(put(1, "a", None, Some(None))),
        queued(writes(2, "a")),
        queued_marker(3),
    ];
    group.push(ops).unwrap();
    assert!(group.wait(3, limit));
    assert_eq!(group.batches(), 1);
    assert_eq!(db.count("cp").as_deref(), Some("1"));
    assert_eq!(db.count("writes").as_deref(), Some("2"));
    // the same id again: the batch rolls back whole and is reported
    let ops = vec![
        queued(put(4, "b", Some("a"), Some(Some("a")))),
        queued(put(5, "a", None, None)),
        queued_marker(6),
    ];
    group.push(ops).unwrap();
    assert!(group.wait(6, limit));
    assert_eq!(group.batches(), 1);
    assert_eq!(db.count("cp").as_deref(), Some("1"));
    assert_eq!(*rolled_back.lock().unwrap(), [vec![4, 5, 6]]);
    // the group goes on after a rollback
    let ops = vec![queued(put(7, "c", None, None)), queued_marker(8)];
    group.push(ops).unwrap();
    assert!(group.wait(8, limit));
    assert_eq!(group.batches(), 2);
    assert_eq!(db.count("cp").as_deref(), Some("2"));
    // an op encoded against a failed one falls back too
    let mut dependent = put(9, "d", None, None);
    dependent.depends_on = Some(5);
    group
        .push(vec![queued(dependent), queued_marker(10)])
        .unwrap();
    assert!(group.wait(10, limit));
    assert_eq!(*rolled_back.lock().unwrap(), [vec![4, 5, 6], vec![9, 10]]);
    group.close();
    group.join();
    assert_eq!(db.count("cp").as_deref(), Some("2"));
    assert_eq!(group.push(vec![queued_marker(11)]), Err(Closed));
}
