//! One group-commit transaction: the rows of queued saver operations, already encoded by
//! the caller, inserted in order between BEGIN IMMEDIATE and COMMIT.
//!
//! Only the usual case is handled here: every fence holds, every checkpoint id is new and
//! SQLite reports no error. Anything else rolls the transaction back and returns why; the
//! caller then runs the same operations through its general path (one savepoint per
//! operation, re-encoding a checkpoint stored again), which decides each one's outcome.
use std::collections::HashSet;

use super::conn::{Connection, SqlError, Stmt, Value};

/// The statements of a saver's tables (SQL text supplied by the saver, single source).
#[derive(Debug, Clone)]
pub struct Sql {
    /// `max(checkpoint_id)` of a (thread, ns): params (thread, ns).
    pub head: String,
    /// Inserts a checkpoint row unless its key exists (then it changes no row).
    pub checkpoint: String,
    pub blob: String,
    pub write: String,
    pub write_replace: String,
}

/// Which table a row goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    Blob,
    Write,
    WriteReplace,
}

/// One queued operation's rows.
#[derive(Debug, Clone, Default)]
pub struct Op {
    /// Submission number (unique, increasing).
    pub seq: u64,
    /// A put's checkpoint row (it must insert a row: an existing id needs the general path);
    /// its first two values are the (thread, ns) the checkpoint belongs to.
    pub checkpoint: Option<Vec<Value>>,
    /// A fenced op's condition (a put's, or a writes op's): the head of its (thread, ns)
    /// must be this checkpoint id (None: no checkpoint yet); no condition when absent.
    pub expected_head: Option<Option<String>>,
    /// The (thread, ns) a writes op's fence checks (a put's are its row's first two values).
    pub fence_key: Option<Vec<Value>>,
    pub rows: Vec<(Table, Vec<Value>)>,
    /// The operation whose not yet committed result this one was encoded against: when
    /// that one failed, this one needs the general path too.
    pub depends_on: Option<u64>,
}

impl Op {
    /// The (thread, ns) its fence checks: `fence_key`, else the first two values of its
    /// checkpoint row (None: a writes op without a key is not fenced).
    fn fence_key(&self) -> Option<&[Value]> {
        match (&self.fence_key, &self.checkpoint) {
            (Some(key), _) => Some(key),
            (None, Some(row)) => row.get(..2),
            (None, None) => None,
        }
    }
}

/// Why a batch was rolled back.
#[derive(Debug, Clone, PartialEq)]
pub enum Fallback {
    /// A fence did not hold (op seq).
    Conflict(u64),
    /// A checkpoint id was stored already (op seq).
    StoredAlready(u64),
    /// An op depends on one that failed (op seq).
    Dependency(u64),
    Sql(SqlError),
}

impl From<SqlError> for Fallback {
    fn from(e: SqlError) -> Self {
        Fallback::Sql(e)
    }
}

/// A connection with the saver's statements prepared, and the operations that failed.
pub struct BatchWriter {
    conn: Connection,
    head: Stmt,
    checkpoint: Stmt,
    tables: [Stmt; 3],
    failed: HashSet<u64>,
}

impl BatchWriter {
    pub fn new(mut conn: Connection, sql: &Sql) -> Result<BatchWriter, SqlError> {
        Ok(BatchWriter {
            head: conn.prepare(&sql.head)?,
            checkpoint: conn.prepare(&sql.checkpoint)?,
            tables: [
                conn.prepare(&sql.blob)?,
                conn.prepare(&sql.write)?,
                conn.prepare(&sql.write_replace)?,
            ],
            conn,
            failed: HashSet::new(),
        })
    }

    pub fn connection(&mut self) -> &mut Connection {
        &mut self.conn
    }

    /// Checkpoints the write-ahead log when it holds at least `frames` frames (PASSIVE:
    /// waits for nobody; what readers still use stays for later). Needs `track_wal`.
    pub fn checkpoint_wal(&mut self, frames: i32) -> Result<bool, SqlError> {
        if frames <= 0 || self.conn.wal_frames() < frames {
            return Ok(false);
        }
        self.conn.execute("PRAGMA wal_checkpoint(PASSIVE)")?;
        Ok(true)
    }

    /// Records that operation `seq` failed (in the caller's general path).
    pub fn mark_failed(&mut self, seq: u64) {
        self.failed.insert(seq);
    }

    /// Commits `ops` in one transaction, or rolls back and says why.
    pub fn commit(&mut self, ops: &[Op]) -> Result<(), Fallback> {
        self.begin()?;
        let out = self.insert(ops).and_then(|()| self.finish());
        if out.is_err() {
            self.rollback();
        }
        out
    }

    /// Starts a write transaction (waits for the write lock up to the busy timeout).
    pub fn begin(&mut self) -> Result<(), Fallback> {
        Ok(self.conn.execute("BEGIN IMMEDIATE")?)
    }

    /// Commits the open transaction; on an error the caller rolls back.
    pub fn finish(&mut self) -> Result<(), Fallback> {
        Ok(self.conn.execute("COMMIT")?)
    }

    /// Rolls back the open transaction, if any (a failed COMMIT may have ended it).
    pub fn rollback(&mut self) {
        let _ = self.conn.execute("ROLLBACK");
    }

    /// Inserts `ops`' rows in the open transaction; on an error the caller rolls back.
    pub fn insert(&mut self, ops: &[Op]) -> Result<(), Fallback> {
        for op in ops {
            if op.depends_on.is_some_and(|d| self.failed.contains(&d)) {
                return Err(Fallback::Dependency(op.seq));
            }
            if let (Some(expected), Some(key)) = (&op.expected_head, op.fence_key()) {
                // read inside the transaction: sees this batch's own inserts
                if self.conn.query_text(self.head, key)? != *expected {
                    return Err(Fallback::Conflict(op.seq));
                }
            }
            if let Some(row) = &op.checkpoint {
                if self.conn.run(self.checkpoint, row)? != 1 {
                    return Err(Fallback::StoredAlready(op.seq));
                }
            }
            for (table, row) in &op.rows {
                self.conn.run(self.tables[*table as usize], row)?;
            }
        }
        Ok(())
    }
}
